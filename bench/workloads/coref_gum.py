"""Coreference on GUM (issue 26): Poon & Domingos' unsupervised MLNs, Culotta's
supervised first-order model, the pairwise baseline and the data README's two
baselines, on ``../shared/data/gum_coref`` (gold mentions).

    python -m bench.workloads.coref_gum [--json OUT.json] [--iterations N] [--quick]
                                        [--systems full,rule_han,...] [--dev-only]

``--systems`` runs only the named systems (those not named are neither learned nor scored);
``--dev-only`` scores dev alone, for a development loop that never touches test (learned MLN +
RULE-HAN on dev: ``--systems rule_han,full --dev-only``, 159 s wall, 92 s CPU, shared machine).

Protocol. Evidence is derived from the CoNLL-U trees by ``mln derive
--conllu`` (gold mention spans; no gold entity or type is read), with heads by
the tree's head rules, and for the RULE and MLN-1 rows by the rightmost word.
Every choice is made on ``train`` / ``dev``: the unsupervised MLNs learn
their weights on the 84 training documents without labels, and the strength
of their head mixture at MAP (the head scale, below) is chosen on dev; the pairwise
baseline is fitted on train and its decoder and threshold chosen on dev; the
first-order model is learned on train by SampleRank over agglomerative merges,
its merge threshold and the scale of its set-level weights chosen on dev. Then every system is
scored on dev, and only at the end, once per system, on test. Figures with
singletons and without them (``markovlogic.eval.coref.coref_report``: MUC,
B-cubed, CEAF-e, CoNLL F1, pairwise, cluster-count MAE per document).

Systems (JSON keys per split): ``head_match``, ``head_match_pronoun`` (the
data README's (a) and (b), on its mention table), ``rule``, ``rule_han``
(Poon's rule-based MLNs), ``base``, ``full`` (Poon's learned MLNs, MLN-H and
MLN-HAN), ``pairwise`` (logistic model over the first-order model's pair
features + the decoder chosen on dev), ``first_order`` (Culotta; its dev choices
and the learner's training figures under ``choices.first_order``). Table 4.1's
ablation: ``ablation`` rows MLN-1 (base, rightmost heads), MLN-H (base),
MLN-HA (+ apposition), MLN-HAN (+ predicate nominals, = full).

Seconds are wall and CPU (user + system of this process, all threads) for
learning and for inference on each split; ``peak_rss_mb`` is the process's
peak resident memory after the system ran (monotone over the run).

Measured 2026-11-27, 21:02-21:07 UTC for the README baselines, RULE, RULE-HAN and the learned MLNs
(``python -m bench.workloads.coref_gum --systems
head_match,head_match_pronoun,rule,rule_han,base,full,mln_1,mln_ha --json OUT.json``, 10 learning
iterations, 3 sweeps; the machine shared with the lead's and another helper's jobs, load 2.8-3.6):
338 s wall, 321 s CPU (319.9 user + 1.3 system), peak 662 MB; the pairwise and first-order rows
are from the whole-bench run of 16:10-16:27 UTC (1026 s wall, 483 s CPU, peak 2.33 GB for the whole
run: the first-order model's 3.4 million merge examples), their code unchanged since. The README
baselines, RULE and RULE-HAN are identical in both runs. F1 in %, gold mentions, singletons
included (CoNLL F1 without singletons last):

    test                 MUC    B3     CEAF-e CoNLL  pair   MAE  | CoNLL w/o  learn s (cpu)  test s
    head_match           49.52  74.87  65.75  63.38  24.11  28.0 | 46.99        -              0.1
    head_match_pronoun   51.96  69.46  69.24  63.55  25.42  24.9 | 47.43        -              0.0
    rule  (RULE)         48.12  64.05  59.16  57.11  28.37  43.5 | 43.09        -              2.6
    rule_han (RULE-HAN)  62.22  74.34  73.59  70.05  37.99  20.2 | 55.34        -              3.3
    base  (MLN-H)        58.44  73.48  72.81  68.24  36.53  15.4 | 51.46      51 (40)          4.7
    full  (MLN-HAN)      63.59  75.60  74.25  71.15  41.45  15.2 | 56.26      36 (37)          4.7
    pairwise             67.45  80.20  80.18  75.94  42.29  24.2 | 57.89       6 (3)          0.0
    first_order          67.62  80.30  80.41  76.11  43.68  23.0 | 58.19     360 (178)        2.7
    (first_order re-run 18:53-19:21 UTC with the learner's own set-level choice, below: identical,
    learning 932 s wall / 468 CPU s at load 5, peak 2.27 GB)
    ablation MLN-1 (base, rightmost heads) 56.85, MLN-H 68.24, MLN-HA 69.66, MLN-HAN 71.15 (CoNLL)
    (the whole bench in one run, 2026-11-27 21:28-21:40 UTC, ``python -m bench.workloads.coref_gum
    --json OUT.json``, load 3-4.5: every row above identical, dev and test; 714 s wall, 842 s CPU
    (830 user + 12 system), peak 2.33 GB; first_order learning 441 s wall / 429 s CPU)

    dev: rule_han 71.37, base 70.46, full 72.11, pairwise 76.36, first_order 76.78 (CoNLL);
    ablation 58.65 -> 70.46 -> 70.91 -> 72.11

MUC precision / recall on test: full 60.39 / 67.14, RULE-HAN 57.92 / 67.22 (dev 64.98 / 69.37
against 63.20 / 69.73).

The learned MLNs' one dev choice (``choices.<system>.head_scale``): the strength of the head
mixture at MAP (``cluster/inclust.py``, ``with_head_scale``; the learned weights are unchanged),
chosen per learned MLN on dev by CoNLL F1 from 1, 3, 10, 30, 100, 1000. The profile likelihood of
the per-cluster head weights (scale 1) lets clusters with different heads merge where the pronoun
and distance terms pay for it (a pronoun in a predicate-nominal block finds an antecedent; plural
pronoun chains join clusters of different plural heads); the thesis's per-cluster weights,
learned from the head clusters and held fixed, charge a non-pronoun put into another head's
cluster its whole learned weight, so its base model "only clusters mentions with the same head"
(4.3.1), and RULE's weight-100 head rule forbids it outright. Dev CoNLL F1 by scale, full: 1 ->
68.20, 3 -> 68.53, 10 -> 69.28, 30 -> 69.87, 100 -> 71.01, 1000 -> 72.11; base 67.03 ... 70.46;
MLN-HA 67.24 ... 70.91; MLN-1 54.77 ... 58.65: every row chose 1000 (different heads share a
cluster only through the hard apposition and predicate-nominal blocks). Robustness on dev, full at
1000 (weights learned with other seeds / iterations): seed 1 71.51, seed 2 71.50, 30 iterations
71.80 (seed 0, the bench's: 72.11); with every learned weight at 0 71.71; learning at scale 1000
too (not used) 71.33. So the margin over RULE-HAN on dev (71.37) is 0.1-0.7 CoNLL and comes mostly
from the head term; the learned pronoun preferences add little (without named-entity types in
GUM).

With the chosen scale the full unsupervised MLN beats RULE-HAN on test: MUC 63.59 against 62.22
(+1.37, by precision: 60.39 against 57.92 at the same recall), CoNLL 71.15 against 70.05 (+1.10),
B3 +1.26, CEAF-e +0.66, CoNLL without singletons 56.26 against 55.34; and both README baselines
(MUC 49.52 / 51.96, CoNLL 63.38 / 63.55). Before (scale 1, the profile likelihood alone) it did not:
test MUC 56.76, CoNLL 66.64 (dev 68.20). MLN-1 (rightmost heads) stays below RULE on test (56.85
against 57.11 CoNLL; above it on dev, 58.65 against 58.00). For context (train's gold, not used by
any choice): in GUM only 46% of the entities with two or more non-pronoun mentions have one head
lemma (73% of those mentions carry their entity's most frequent head), and 49% of same-head
non-pronoun pairs corefer; keeping different heads apart is the better of the two errors for a
model with nothing else to tell them apart.

The supervised first-order model (``examples/coref/first-order.mln``: a
logistic pair layer, max/mean/sum/min linkage over its scores, Culotta's
set-level features and a per-cluster constant; learned on train by merge
ranking, ``learn/merge_rank.py``, update logistic, max linkage) beats the
unsupervised one and matches the pairwise logistic baseline: test CoNLL
76.11 against 75.94 (+0.17; MUC 67.62 / 67.45, B3 80.30 / 80.20, CEAF-e
80.41 / 80.18), dev 76.78 against 76.36. It matches it **by becoming it**:
the two choices made on dev by CoNLL F1, as the baseline's decoder and
threshold are (the scale of the set-level weights in {0, 0.5, 1} and the
merge threshold's shift in -2..3), picked scale 0, i.e. max linkage alone
= the pair layer's logistic model + transitive closure (at p >= 0.40,
against the baseline's 0.3 over scikit-learn's fit). Dev CoNLL by scale,
each at its best threshold: 0 -> 76.78, 0.5 -> 76.40, 1 -> 75.73; the
learner's own model (scale 1, its threshold calibrated on train by
pairwise F1) 74.22. So on GUM the set-level features, as learned, cost
about one CoNLL point on dev and are switched off; the first-order model
does not beat the pairwise baseline by its first-order features. What
made the earlier runs lose (dev 73.1 / 74.05 against 76.36), measured on
dev: (1) the learner's merge threshold, calibrated on train by pairwise F1,
is too permissive for CoNLL (MIRA: MUC recall 70.2 > precision 67.8); the
higher threshold chosen on dev is worth +0.9 (MIRA) to +1.5 (logistic); (2) held-out halves of the single training world's
gold clusters are an easier problem than whole documents (training
pairwise F1 0.42-0.46 on them, 0.33-0.38 on the whole train split with
the same weights), so that calibration is too permissive
(``held_out='components'`` halves by documents instead, but one MIRA
setting did not finish in 20 min against 5 min: not used here); (3) the
MIRA update ranks worse than the logistic one (dev 74.17 against 75.73 at
their best thresholds); (4) the set-level weights (above). The pair layer
itself is as good as the baseline's fit (dev 76.78 against 76.36 at their
best closure thresholds). The learner's figures for the returned weights
(before the dev choices) are in ``choices.first_order``:
``final_train_pairwise_f1`` 0.3774 (``final_train_loss`` 0.6226) on the
whole train split under agglomerative MAP, ``train_f1`` 0.4611 on the
cross-fitted halves it calibrated on. Anchors (other corpora, shapes
only): Poon's MLN-HAN MUC F1 79.2 on MUC-6 (RULE-HAN 76.7, 2.5 below it);
Culotta's first-order B3 79.3 on ACE-2004, pairwise 62.4.

Since the second run (2026-11-27 19:21 UTC) the learner makes the switch
itself, on training data: ``MergeRankOptions.set_features`` ("on"/"off",
chosen on held-out halves of train's gold clusters after the linkage)
scored held-out pairwise F1 0.4432 with the set-level features on and
0.5533 off, and returned the model without them (``choices.first_order
.set_features`` "off"); dev then has nothing left to scale (76.78 at every
scale) and picks only the threshold shift (+0.50; the learner's own
calibration 73.50). Test figures are unchanged; the choice costs 2.6x the
learning time (two options trained on two halves each).
"""

from __future__ import annotations

import argparse
import csv
import json
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench.harness import RESULTS_DIR, Skip, data_dir

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "coref"
SPLITS = ("train", "dev", "test")
KEYS = ("muc_f1", "b3_f1", "ceafe_f1", "conll_f1", "pairwise_f1", "cluster_count_mae")
DETAIL = ("muc_precision", "muc_recall", "b3_precision", "b3_recall", "ceafe_precision", "ceafe_recall",
          "pairwise_precision", "pairwise_recall", "gold_clusters_per_doc", "predicted_clusters")


def _gum() -> Path:
    d = data_dir() / "gum_coref"
    if not (d / "train" / "conllu").is_dir():
        raise Skip(f"data not found: {d}")
    return d


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class Clock:
    def __enter__(self):
        self.w = time.perf_counter()
        self.c = time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall = time.perf_counter() - self.w
        self.cpu = time.process_time() - self.c


# ------------------------------------------------------------------ data

class Split:
    """One split: derived documents, evidence files, gold clustering."""

    def __init__(self, gum: Path, split: str, folder: Path):
        from markovlogic.derive.coref import CorefDeriveOptions, derive_coref, write_evidence, write_truth

        conllu = [gum / split / "conllu"]
        self.name = split
        self.docs = derive_coref(conllu, CorefDeriveOptions(truth=True))
        self.evidence = folder / f"{split}-evidence.db"
        self.evidence_right = folder / f"{split}-evidence-rightmost.db"
        self.truth = folder / f"{split}-truth.db"
        write_evidence(self.docs, self.evidence)
        write_truth(self.docs, self.truth)
        write_evidence(derive_coref(conllu, CorefDeriveOptions(heads="rightmost")), self.evidence_right)
        self.mentions = [m.name for d in self.docs for m in d.mentions]
        self.index = {m: i for i, m in enumerate(self.mentions)}
        self.doc_of = np.array([d.name for d in self.docs for _ in d.mentions], dtype=object)
        gold = [f"{d.name}/{m.entity}" for d in self.docs for m in d.mentions]
        self.gold = np.unique(np.array(gold, dtype=object), return_inverse=True)[1]
        # the data README's mention table (for its two baselines)
        with open(gum / split / "mentions.tsv", encoding="utf-8", newline="") as fh:
            self.table = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))

    def labels(self, clusters) -> np.ndarray:
        """Labels of the split's mentions from clusters (lists of mention names)."""
        n = len(self.mentions)
        lab = np.arange(n, dtype=np.int64) + n
        for k, c in enumerate(clusters):
            for m in c:
                lab[self.index[m]] = k
        return lab

    def score(self, labels: np.ndarray) -> dict:
        from markovlogic.eval.coref import coref_report

        out = {}
        for tag, single in (("", True), ("no_singletons_", False)):
            r = coref_report(labels, self.gold, self.doc_of, singletons=single)
            for k in KEYS + DETAIL:
                if k in r:
                    v = r[k]
                    out[tag + k] = round(100 * v, 2) if k.endswith(("f1", "precision", "recall")) else round(v, 2)
        return out


# ------------------------------------------------------------------ the README baselines

def readme_baselines(split: Split) -> dict[str, np.ndarray]:
    """(a) head-lemma match; (b) (a) + nearest agreeing preceding mention for
    each pronoun, at most 3 sentences back (the data README's definitions)."""
    rows = split.table
    groups: dict = {}
    a_cl: list[list[str]] = []
    cluster_of: dict[str, int] = {}
    for r in rows:
        if r["mtype"] != "PRO":
            key = (r["doc"], r["head_lemma"])
            if key not in groups:
                groups[key] = len(a_cl)
                a_cl.append([])
            k = groups[key]
        else:
            k = len(a_cl)
            a_cl.append([])
        a_cl[k].append(r["mention"])
        cluster_of[r["mention"]] = k
    out = {"head_match": split.labels(a_cl)}
    # (b): union-find over (a)'s clusters
    parent = list(range(len(a_cl)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def agree(x, y):
        return all(x[f] == y[f] or "unknown" in (x[f], y[f]) for f in ("number", "gender"))

    by_doc = defaultdict(list)
    for r in rows:
        by_doc[r["doc"]].append(r)
    for doc_rows in by_doc.values():
        for r in doc_rows:
            if r["mtype"] != "PRO":
                continue
            s, st = int(r["sent"]), int(r["start"])
            best = None
            for c in doc_rows:
                cs, ce = int(c["sent"]), int(c["end"])
                if c is r or not (cs < s or (cs == s and ce < st)) or s - cs > 3 or not agree(r, c):
                    continue
                key = (cs, int(c["start"]), ce)
                if best is None or key > best[0]:
                    best = (key, c)
            if best is not None:
                parent[find(cluster_of[r["mention"]])] = find(cluster_of[best[1]["mention"]])
    b_cl = defaultdict(list)
    for m, k in cluster_of.items():
        b_cl[find(k)].append(m)
    out["head_match_pronoun"] = split.labels(list(b_cl.values()))
    return out


# ------------------------------------------------------------------ Poon's MLNs

def _model_text(name: str, drop: tuple[str, ...] = ()) -> str:
    text = (EXAMPLES / name).read_text()
    return "\n".join(line for line in text.splitlines() if not any(line.startswith(d) for d in drop)) + "\n"


def inclust_model(name: str, drop: tuple[str, ...] = ()):
    from markovlogic import MLN
    from markovlogic.cluster.inclust import compile_inclust

    return compile_inclust(MLN.from_string(_model_text(name, drop), filename=str(EXAMPLES / name)))


def inclust_docs(spec, path: Path):
    from markovlogic import Database
    from markovlogic.cluster.inclust import read_documents

    return read_documents(spec, Database.from_file(path))


# ------------------------------------------------------------------ pair features (shared)

PAIR_FEATURES = ("head", "text", "name_head", "head_number_conflict", "apposition", "prednom", "nested",
                 "near_d0", "near_d1", "near_d2", "near_d3", "near_both_pronouns", "near_same_form",
                 "near_number_conflict", "near_gender_conflict", "near_type_conflict", "near_first_name",
                 "near_first_nominal")


def pair_features(split: Split):
    """(i, j, features) over candidate pairs of each document (global mention
    indices, i < j): the pair formulas of first-order.mln, as indicators."""
    from markovlogic.derive.coref import _PUNCT, near_pairs

    I, J, F = [], [], []
    base = 0
    for d in split.docs:
        ms = d.mentions
        feats: dict[tuple[int, int], np.ndarray] = {}

        def f(i, j):
            key = (min(i, j), max(i, j))
            if key not in feats:
                feats[key] = np.zeros(len(PAIR_FEATURES), np.float32)
            return feats[key]

        text = ["_".join(w for w in m.words if not _PUNCT.match(w)) for m in ms]
        by_head = defaultdict(list)
        by_text = defaultdict(list)
        for i, m in enumerate(ms):
            if not m.is_prn:
                by_head[m.head_lemma].append(i)
                by_text[text[i]].append(i)
        for group in by_head.values():
            for a in range(len(group)):
                for b in range(a + 1, len(group)):
                    i, j = group[a], group[b]
                    v = f(i, j)
                    v[0] = 1
                    if ms[i].mtype == "NAM" and ms[j].mtype == "NAM":
                        v[2] = 1
                    if ms[i].number and ms[j].number and ms[i].number != ms[j].number:
                        v[3] = 1
        for group in by_text.values():
            for a in range(len(group)):
                for b in range(a + 1, len(group)):
                    f(group[a], group[b])[1] = 1
        for kind, i, j in d.relations:
            f(i, j)[4 if kind == "appos" else 5] = 1
        for i, a in enumerate(ms):
            for j, b in enumerate(ms):
                if i != j and a.sent == b.sent and a.start <= b.start and b.end <= a.end:
                    f(i, j)[6] = 1
        for i, j, k in near_pairs(d):
            v = f(i, j)
            a, b = ms[i], ms[j]
            v[7 + k] = 1
            v[11] = float(a.is_prn and b.is_prn)
            v[12] = float(a.head_form == b.head_form)
            v[13] = float(bool(a.number and b.number and a.number != b.number))
            v[14] = float(bool(a.gender and b.gender and a.gender != b.gender))
            v[15] = float(bool(a.type and b.type and a.type != b.type))
            v[16] = float(a.mtype == "NAM")
            v[17] = float(a.mtype == "NOM")
        for (i, j), v in sorted(feats.items()):
            I.append(base + i)
            J.append(base + j)
            F.append(v)
        base += len(ms)
    return np.array(I, np.int64), np.array(J, np.int64), np.array(F)


def decode(n: int, I: np.ndarray, J: np.ndarray, p: np.ndarray, method: str, threshold: float) -> np.ndarray:
    """Clusters from pair probabilities: ``closest`` (each mention linked to
    its closest preceding candidate at or above the threshold, Soon et al.),
    ``best`` (to the most probable one) or ``closure`` (every pair at or above
    it, transitively closed)."""
    from markovlogic.eval.coref import clusters_from_pairs

    keep = p >= threshold
    I, J, p = I[keep], J[keep], p[keep]
    if method == "closure":
        return clusters_from_pairs(n, I, J)
    order = np.lexsort((-(I if method == "closest" else p), J))    # per anaphor j: closest i (or best p) first
    first = np.ones(len(order), bool)
    first[1:] = J[order][1:] != J[order][:-1]
    sel = order[first]
    return clusters_from_pairs(n, I[sel], J[sel])


def fit_pairwise(train: Split, feats):
    from sklearn.linear_model import LogisticRegression

    I, J, X = feats
    y = train.gold[I] == train.gold[J]
    return LogisticRegression(C=1.0, max_iter=2000).fit(X, y), y


# ------------------------------------------------------------------ Culotta's first-order model

FO_STATS = ("update", "epochs", "C", "l2", "linkage", "held_out", "pair_layer_l2", "pair_layer_features", "set_features", "calibration_shift", "train_f1",
            "final_train_pairwise_f1", "final_train_loss", "steps", "errors", "merges", "walks", "examples")
FO_SHIFTS = tuple(round(float(x), 2) for x in np.arange(-2.0, 3.01, 0.25))
FO_SCALES = (0.0, 0.5, 1.0)


def _fo_options(quick: bool):
    """The merge-ranking learner's settings for first-order.mln, fixed (not
    searched: one setting costs ~5 min here): the logistic (DAgger) update,
    which scored dev CoNLL F1 75.7 against MIRA's 74.2 at their best dev
    thresholds (2026-11-27, 2 single runs), and max linkage, with which the
    set-level features at scale 0 make the model exactly the pair layer's
    logistic model + transitive closure. The one choice the learner makes
    on held-out training data (halves of train's gold clusters) is whether
    the set-level features are on at all (``set_features``). The pair layer
    is one fit on all of train (``pair_layer='refit'``, the learner's default
    until 2026-11-28): the bench's threshold shift, chosen on dev, was
    measured with it."""
    from markovlogic.learn.merge_rank import MergeRankOptions

    return MergeRankOptions(update="logistic", epochs=1 if quick else 3, l2=1.0, linkage="max",
                            set_features=("on", "off"), held_out="clusters", pair_layer="refit")


def first_order_models(mln, sp: Split):
    """The learned first-order model's clustering model on a split's evidence."""
    from markovlogic import Database
    from markovlogic.cluster.model import build_cluster_model

    return build_cluster_model(mln, Database.from_file(sp.evidence, mln=mln), "SameEntity")


def first_order_labels(model, sp: Split, shift: float = 0.0, scale: float = 1.0) -> np.ndarray:
    """Greedy agglomerative MAP of the first-order model with its merge
    threshold raised by ``shift`` (the per-cluster constant's weight
    ``size(SameEntity) > 0``: every merge changes it by -1) and its other
    set-level features' weights multiplied by ``scale`` (0: max linkage
    alone, i.e. the pair layer's logistic model + transitive closure at a
    threshold)."""
    from dataclasses import replace

    from markovlogic.cluster.agglomerative import agglomerative_map

    j = next(k for k, f in enumerate(model.set_features)
             if f.spec.kind == "size" and f.spec.op == ">" and f.spec.threshold == 0)
    w = model.arrays.w_sf * scale
    w[j] = model.arrays.w_sf[j] + shift
    m = replace(model, arrays=model.arrays._replace(w_sf=w))
    return sp.labels(m.clusters(agglomerative_map(m).labels))


# ------------------------------------------------------------------ the run

SYSTEMS = ("head_match", "head_match_pronoun", "rule", "rule_han", "base", "full", "pairwise", "first_order",
           "mln_1", "mln_ha")
# the strength of the head mixture at MAP (cluster/inclust.py, with_head_scale), chosen on dev per learned MLN
HEAD_SCALES = (1.0, 3.0, 10.0, 30.0, 100.0, 1000.0)


def run(iterations: int = 10, samples: int = 3, quick: bool = False, log=print,
        systems: tuple[str, ...] = SYSTEMS, splits_to_score: tuple[str, ...] = ("dev", "test")) -> dict:
    from markovlogic.cluster.inclust import (
        InClustOptions, learn_inclust, map_inclust, with_head_scale, with_weights,
    )

    gum = _gum()
    folder = RESULTS_DIR / "coref_gum"
    folder.mkdir(parents=True, exist_ok=True)
    with Clock() as c:
        splits = {s: Split(gum, s, folder) for s in SPLITS}
    log(f"derived the evidence of {sum(len(s.docs) for s in splits.values())} documents in {c.wall:.1f} s")
    out: dict = {"protocol": "learned / fitted on train; choices on dev; test scored once per system at the end "
                             "(gold mentions; no gold entity or type read by any system)",
                 "dev": {}, "test": {}, "timing": {}, "ablation": {"dev": {}, "test": {}}, "choices": {}}
    predictors: dict = {}          # system -> function(split) -> labels

    # -- the README baselines
    for name in ("head_match", "head_match_pronoun"):
        predictors[name] = (lambda nm: (lambda sp: readme_baselines(sp)[nm]))(name)
        out["timing"][name] = {"learn_seconds": 0.0}

    # -- Poon's rule-based MLNs (no learning)
    for name, model, heads in (("rule", "rule.mln", "rightmost"), ("rule_han", "rule-han.mln", "tree")):
        spec = inclust_model(model)

        def pred(sp, spec=spec, heads=heads):
            docs = inclust_docs(spec, sp.evidence if heads == "tree" else sp.evidence_right)
            ans = map_inclust(spec, docs)
            return sp.labels(ans.clusters())
        predictors[name] = pred
        out["timing"][name] = {"learn_seconds": 0.0}

    # -- Poon's learned MLNs: the ablation of Table 4.1, the last two rows are base and full
    opt = InClustOptions(iterations=iterations if not quick else 3, samples=samples if not quick else 2,
                         init_iterations=min(5, max(1, iterations // 6)))
    ablation = (("mln_1", "base.mln", (), "rightmost"), ("mln_h", "base.mln", (), "tree"),
                ("mln_ha", "full.mln", ("PredNom(x, y) =>",), "tree"), ("mln_han", "full.mln", (), "tree"))
    for row, model, drop, heads in ablation:
        key = {"mln_h": "base", "mln_han": "full"}.get(row, row)
        if key not in systems:
            continue
        spec = inclust_model(model, drop)
        train = splits["train"]
        with Clock() as c:
            docs = inclust_docs(spec, train.evidence if heads == "tree" else train.evidence_right)
            res = learn_inclust(spec, docs, opt)
        learned = with_weights(spec, res.params, res.theta)
        log(f"{row}: learned {len(res.theta)} weights on {len(docs)} documents in {c.wall:.1f} s "
            f"(cpu {c.cpu:.1f} s)")

        def pred(sp, spec=learned, heads=heads, scale=1.0):
            docs = inclust_docs(spec, sp.evidence if heads == "tree" else sp.evidence_right)
            return sp.labels(map_inclust(with_head_scale(spec, scale), docs).clusters())
        # the head mixture's strength at MAP, chosen on dev by CoNLL F1 (the learned weights unchanged)
        table = {sc: splits["dev"].score(pred(splits["dev"], scale=sc))["conll_f1"] for sc in HEAD_SCALES}
        scale = max(table, key=lambda k: (table[k], -k))
        out["choices"][key] = {"head_scale": scale, "dev_conll_f1": table[scale],
                               "dev_conll_f1_by_head_scale": {f"{k:g}": v for k, v in table.items()}}
        log(f"{row}: head scale {scale:g} chosen on dev (CoNLL F1 {table[scale]}; by scale "
            + ", ".join(f"{k:g}: {v}" for k, v in table.items()) + ")")
        predictors[key] = (lambda p, sc: (lambda sp: p(sp, scale=sc)))(pred, scale)
        out["timing"][key] = {"learn_seconds": round(c.wall, 1), "learn_cpu_seconds": round(c.cpu, 1),
                              "learn_documents": len(docs), "learn_iterations": opt.iterations,
                              "peak_rss_mb": round(_peak_mb())}

    # -- the pairwise baseline: logistic regression over the pair features, decoder chosen on dev
    if "pairwise" not in systems and "first_order" not in systems:
        return _score_all(out, predictors, splits, systems, splits_to_score, log)
    with Clock() as c:
        feats = {s: pair_features(splits[s]) for s in SPLITS}
        lr, y = fit_pairwise(splits["train"], feats["train"])
    out["timing"]["pairwise"] = {"learn_seconds": round(c.wall, 1), "learn_cpu_seconds": round(c.cpu, 1),
                                 "train_pairs": int(len(y)), "train_positive_pairs": int(y.sum())}
    dev = splits["dev"]
    dI, dJ, dX = feats["dev"]
    dp = lr.predict_proba(dX)[:, 1]
    best = None
    for method in ("closest", "best", "closure"):
        for thr in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7):
            s = dev.score(decode(len(dev.mentions), dI, dJ, dp, method, thr))["conll_f1"]
            if best is None or s > best[0]:
                best = (s, method, thr)
    out["choices"]["pairwise"] = {"decoder": best[1], "threshold": best[2], "dev_conll_f1": best[0],
                                  "coefficients": dict(zip(PAIR_FEATURES, np.round(lr.coef_[0], 3).tolist()))}
    log(f"pairwise: decoder {best[1]}, threshold {best[2]} (dev CoNLL F1 {best[0]})")

    def pairwise_pred(sp, method=best[1], thr=best[2]):
        i, j, x = feats[sp.name]
        return decode(len(sp.mentions), i, j, lr.predict_proba(x)[:, 1], method, thr)
    predictors["pairwise"] = pairwise_pred

    # -- Culotta's first-order model: SampleRank on train, agglomerative MAP
    if "first_order" not in systems:
        return _score_all(out, predictors, splits, systems, splits_to_score, log)
    from markovlogic import MLN, Database
    from markovlogic.learn.merge_rank import learn_merge_rank_model

    fo = MLN.from_file(EXAMPLES / "first-order.mln")
    with Clock() as c:
        tdb = Database.from_file([splits["train"].evidence, splits["train"].truth], mln=fo)
        learned_fo = learn_merge_rank_model(fo, [tdb], query_predicates=["SameEntity"], seed=0,
                                            options=_fo_options(quick), log=log)
    st = learned_fo.result.stats
    out["timing"]["first_order"] = {
        "learn_seconds": round(c.wall, 1), "learn_cpu_seconds": round(c.cpu, 1),
        "samplerank_steps": int(learned_fo.result.iterations),
        "method": "SampleRank over the merges of greedy agglomerative search (learn/merge_rank.py), pair layer "
                  "by logistic regression, update logistic (DAgger), max linkage",
        "peak_rss_mb": round(_peak_mb())}
    # the learner's figures for the returned weights, on the whole training split, under agglomerative MAP
    out["choices"]["first_order"] = {k: st[k] for k in FO_STATS if k in st}
    out["choices"]["first_order"]["selection"] = learned_fo.result.selection
    (folder / "first-order.learned.mln").write_text(learned_fo.text)
    log(f"first_order: learned in {c.wall:.1f} s (cpu {c.cpu:.1f} s): update {st.get('update')}, linkage "
        f"{st.get('linkage')}, training pairwise F1 {st.get('final_train_pairwise_f1', float('nan')):.4f}")
    # the merge threshold (the per-cluster constant's weight) and the scale of the set-level features chosen on
    # dev by CoNLL F1, as the pairwise baseline's decoder and threshold are; the learner's own model (calibrated on
    # train by pairwise F1) is shift 0, scale 1; scale 0 is the pair layer + transitive closure
    fo_dev = first_order_models(learned_fo.mln, splits["dev"])
    table = {(sc, t): splits["dev"].score(first_order_labels(fo_dev, splits["dev"], t, sc))["conll_f1"]
             for sc in FO_SCALES for t in FO_SHIFTS}
    scale, shift = max(table, key=lambda k: (table[k], k[0], -abs(k[1])))
    out["choices"]["first_order"].update(
        dev_threshold_shift=shift, dev_set_feature_scale=scale, dev_conll_f1=table[(scale, shift)],
        dev_conll_f1_learned=table[(1.0, 0.0)],
        dev_conll_f1_by_scale={str(sc): max(v for (a, _), v in table.items() if a == sc) for sc in FO_SCALES},
        dev_conll_f1_table={f"{a} {b:+.2f}": v for (a, b), v in table.items()})
    log(f"first_order: set-level scale {scale}, merge threshold shift {shift:+.2f} chosen on dev (CoNLL F1 "
        f"{table[(scale, shift)]}; the learner's own: {table[(1.0, 0.0)]})")

    def fo_pred(sp, shift=shift, scale=scale):
        return first_order_labels(first_order_models(learned_fo.mln, sp), sp, shift, scale)
    predictors["first_order"] = fo_pred
    return _score_all(out, predictors, splits, systems, splits_to_score, log)


def _score_all(out, predictors, splits, systems, splits_to_score, log) -> dict:
    """Dev for every system, then test once per system (``splits_to_score``
    ``("dev",)`` for a dev-only loop)."""
    for split in splits_to_score:
        sp = splits[split]
        for name in SYSTEMS:
            if name not in systems or name not in predictors:
                continue
            with Clock() as c:
                labels = predictors[name](sp)
            figs = sp.score(labels)
            figs.update(infer_seconds=round(c.wall, 2), infer_cpu_seconds=round(c.cpu, 2),
                        peak_rss_mb=round(_peak_mb()))
            if name in ("mln_1", "mln_ha"):
                out["ablation"][split][name] = figs
            else:
                out[split][name] = figs
                if name in ("base", "full"):
                    out["ablation"][split]["mln_h" if name == "base" else "mln_han"] = figs
            log(f"{split:5s} {name:20s} " + "  ".join(f"{k} {figs[k]}" for k in KEYS))
    out["test_scored_once"] = "test" in splits_to_score
    out["systems"] = [s for s in SYSTEMS if s in systems]
    return out


def print_table(res: dict) -> None:
    for split in ("dev", "test"):
        if not res[split] and not res["ablation"][split]:
            continue
        print(f"\n{split} (gold mentions; F1 in %; with singletons | without)")
        print(f"  {'system':22s} {'MUC':>6s} {'B3':>6s} {'CEAF-e':>6s} {'CoNLL':>6s} {'pair':>6s} {'MAE':>5s}"
              f" | {'B3':>6s} {'CEAF-e':>6s} {'CoNLL':>6s}  infer s")
        rows = list(res[split].items()) + [(f"ablation {k}", v) for k, v in res["ablation"][split].items()]
        for name, f in rows:
            print(f"  {name:22s} {f['muc_f1']:6.2f} {f['b3_f1']:6.2f} {f['ceafe_f1']:6.2f} {f['conll_f1']:6.2f} "
                  f"{f['pairwise_f1']:6.2f} {f['cluster_count_mae']:5.1f} | {f['no_singletons_b3_f1']:6.2f} "
                  f"{f['no_singletons_ceafe_f1']:6.2f} {f['no_singletons_conll_f1']:6.2f}  {f['infer_seconds']:.1f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", type=Path, help="write the figures as JSON")
    ap.add_argument("--iterations", type=int, default=10, help="learning iterations of the unsupervised MLNs (the thesis: 30)")
    ap.add_argument("--samples", type=int, default=3, help="Gibbs sweeps per chain and document per iteration")
    ap.add_argument("--quick", action="store_true", help="few iterations and epochs (a smoke run, not a result)")
    ap.add_argument("--systems", default=",".join(SYSTEMS),
                    help="comma-separated systems to run (default all: " + ",".join(SYSTEMS) + ")")
    ap.add_argument("--dev-only", action="store_true", help="score dev only (a development loop; test untouched)")
    args = ap.parse_args(argv)
    systems = tuple(s.strip() for s in args.systems.split(",") if s.strip())
    bad = [s for s in systems if s not in SYSTEMS]
    if bad or not systems:
        ap.error(f"--systems: unknown system {bad[0] if bad else '(none)'}; choose from {', '.join(SYSTEMS)}")
    try:
        res = run(args.iterations, args.samples, args.quick, log=lambda s: print(s, file=sys.stderr, flush=True),
                  systems=systems, splits_to_score=("dev",) if args.dev_only else ("dev", "test"))
    except Skip as exc:
        print(f"skipped: {exc}")
        return
    print_table(res)
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
