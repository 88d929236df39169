"""Entity resolution on the five benchmarks of ``../shared/data/er`` and on
Cora: the Markov logic recipe of ``examples/er`` against the baselines of
the data's protocol, per fold, scored by the same code.

    python -m bench.workloads.er [--root DIR] [--datasets A,B] [--folds 1-3] [--systems ...] [--json OUT.json]

Protocol (``../shared/data/er/README.md``): per dataset and test fold N,
train on the other two folds, test on fold N; every threshold, offset or
hyperparameter is chosen on the training folds only (each training fold is
blocked and scored as a test fold would be; learned scores on a training
fold come from a model fit on the other training fold), maximising pooled
pairwise F1. Candidate pairs (all systems): records sharing a word of the
blocking fields with document frequency at most max(30, 1 %) among the
fold's records; clean-clean sets: across sources only.

Systems: ``lr_closure`` (logistic regression on the protocol's pair
features, probability threshold, transitive closure), ``lr_cc`` (the same
log-odds plus an offset, greedy correlation clustering, non-candidate pairs
-5), ``splink`` (Splink 5, unsupervised, where installed), ``mln`` (the
recipe).

Last run (2026-11-28 12:11-13:02 UTC, about 50 minutes wall two datasets at a
time: the five ``er/`` datasets on folds 1-3, Cora's three
on all five folds with ``--folds 1-5``, the pair layer the mean of its
cross-fitted fits, the linkage chosen by its held-out F1 ("best"), and,
for Cora's four training folds, held-out choices leaving one fold out; the
table, and how each change was decided, are in ``examples/er/README.md``):
the recipe wins on abt_buy (.920 against .891), dblp_acm (.998 / .995),
imdb_tmdb (.964 / .954) and cora_tokens (.991 / .984), each with its 90 %
interval above zero; inside the noise it is ahead on cddb (.915 / .908) and
behind on restaurants (.925 / .936), Cora SameBib (.981 / .983) and Cora
SameAuthor (.981 / .990, interval -.027 to .000). That is again the
recipe's code: change 9 (a per-pair prior in the template's cluster layer)
was run on the eight at 14:45-15:40 (SameBib .973, SameAuthor .980, both
then below LR + closure outside the noise) and reverted on three fresh
development seeds (``bench/er_members.py``; ``examples/er/README.md``,
"Change 9").
``--world-splits one-out|halves`` and ``--linkage-rule best|one-se`` pass the
learner's options (default: the learner's); ``--threads N`` the threads of
the recipe's learning
(its held-out splits run in parallel) and inference (default 1: the figures
are measured two datasets at a time on this 2-core machine).
``vs_best_baseline`` in the JSON: the recipe's mean-over-folds difference to
the best baseline and its 90 % interval from resampling each test fold's
gold clusters.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from bench import er_data as E
from bench.harness import REPO_ROOT, RESULTS_DIR

DEFAULT_ROOT = REPO_ROOT.parent / "shared" / "data" / "er"
THRESHOLDS = np.round(np.arange(0.05, 0.951, 0.05), 2)
OFFSETS = np.arange(-2.0, 4.01, 0.5)
BASELINES = ("lr_closure", "lr_cc", "splink")


# ---------------------------------------------------------------- folds


class FoldData:
    """Records of one fold: positions, candidate pairs, features, labels."""

    def __init__(self, ds: E.Dataset, fold: int):
        self.fold = fold
        self.members = np.flatnonzero(ds.fold == fold)
        self.n = len(self.members)
        self.i, self.j = E.candidates(ds, self.members)
        self.x = E.baseline_features(ds, self.members, self.i, self.j)
        self.gold = ds.cluster[self.members]
        self.y = (self.gold[self.i] == self.gold[self.j]).astype(np.int64)

    def blocking_recall(self) -> float:
        tp, _, gp = E.pair_counts(self.gold, self.gold)
        return float(self.y.sum()) / gp if gp else 1.0


def _fit_lr(folds: list[FoldData]):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x = np.vstack([f.x for f in folds])
    y = np.concatenate([f.y for f in folds])
    model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))
    model.fit(x, y)
    return model


def _logodds(model, f: FoldData) -> np.ndarray:
    if len(f.i) == 0:
        return np.zeros(0)
    return model.decision_function(f.x)


def _closure_labels(f: FoldData, z: np.ndarray, p: float) -> np.ndarray:
    return E.closure(f.n, f.i, f.j, z >= np.log(p / (1 - p)))


def _cc_labels(f: FoldData, z: np.ndarray, offset: float) -> np.ndarray:
    return E.greedy_cc(f.n, f.i, f.j, z + offset)


def _pooled_f1(parts) -> float:
    tp = pp = gp = 0
    for labels, gold in parts:
        a, b, c = E.pair_counts(labels, gold)
        tp, pp, gp = tp + a, pp + b, gp + c
    return E.prf(tp, pp, gp)[2]


def run_baselines(ds: E.Dataset, test: int, cache: dict) -> list[dict]:
    """lr_closure and lr_cc on one test fold."""
    def fold(k):
        if k not in cache:
            cache[k] = FoldData(ds, k)
        return cache[k]

    train = [k for k in ds.folds() if k != test]
    t0 = time.process_time()
    # scores on each training fold from a model fit on the other training fold(s)
    inner = []
    for k in train:
        others = [fold(o) for o in train if o != k]
        m = _fit_lr(others)
        inner.append((fold(k), _logodds(m, fold(k))))
    best_p = max(THRESHOLDS, key=lambda p: (_pooled_f1([(_closure_labels(f, z, p), f.gold) for f, z in inner]), -p))
    best_o = max(OFFSETS, key=lambda o: (_pooled_f1([(_cc_labels(f, z, o), f.gold) for f, z in inner]), -o))
    model = _fit_lr([fold(k) for k in train])
    tf = fold(test)
    z = _logodds(model, tf)
    choose_s = time.process_time() - t0
    rows = []
    for system, labels, hp in (("lr_closure", _closure_labels(tf, z, best_p), {"threshold": float(best_p)}),
                               ("lr_cc", _cc_labels(tf, z, best_o), {"offset": float(best_o)})):
        r = {"dataset": ds.name, "fold": test, "system": system, **E.scores(labels, tf.gold),
             "hyperparameters": hp, "blocking_recall": tf.blocking_recall(), "cpu_s": choose_s}
        rows.append(r)
    return rows


# ---------------------------------------------------------------- driver


def summarise(rows: list[dict]) -> dict:
    out: dict = {}
    for r in rows:
        d = out.setdefault(r["dataset"], {}).setdefault(r["system"], {"folds": {}})
        d["folds"][str(r["fold"])] = {k: r[k] for k in ("pairwise_f1", "pairwise_precision", "pairwise_recall",
                                                          "b3_f1", "hyperparameters", "blocking_recall", "cpu_s",
                                                          "wall_s", "learn_s", "learn_cpu_s", "infer_s", "infer_cpu_s",
                                                          "peak_mb", "candidate_pairs", "train_pairwise_f1",
                                                          "per_gold_cluster")
                                      if k in r}
    for ds, systems in out.items():
        for name, d in systems.items():
            fs = list(d["folds"].values())
            for k in ("pairwise_f1", "pairwise_precision", "pairwise_recall", "b3_f1"):
                d[k] = float(np.mean([f[k] for f in fs]))
        # the recipe against the best baseline, with a 90 % interval from resampling test gold clusters
        base = [b for b in BASELINES if b in systems]
        if "mln" in systems and base:
            best = max(base, key=lambda b: systems[b]["pairwise_f1"])
            folds = [k for k in systems["mln"]["folds"] if k in systems[best]["folds"]
                     and "per_gold_cluster" in systems["mln"]["folds"][k]]
            if folds:
                systems["mln"]["vs_best_baseline"] = {"baseline": best, **E.bootstrap_difference(
                    [systems["mln"]["folds"][k]["per_gold_cluster"] for k in folds],
                    [systems[best]["folds"][k]["per_gold_cluster"] for k in folds])}
    return out


def table(summary: dict) -> str:
    lines = ["| dataset | system | pair P | pair R | pair F1 | B3 F1 | F1 per fold |", "|---|---|---|---|---|---|---|"]
    for ds, systems in summary.items():
        for name, d in systems.items():
            per = " ".join(f"{d['folds'][k]['pairwise_f1']:.3f}" for k in sorted(d["folds"]))
            lines.append(f"| {ds} | {name} | {d['pairwise_precision']:.3f} | {d['pairwise_recall']:.3f} | "
                         f"{d['pairwise_f1']:.3f} | {d['b3_f1']:.3f} | {per} |")
    for ds, systems in summary.items():
        v = systems.get("mln", {}).get("vs_best_baseline")
        if v:
            lines.append(f"{ds}: mln - {v['baseline']} = {v['difference']:+.3f} pairwise F1, 90 % interval "
                         f"[{v['ci90'][0]:+.3f}, {v['ci90'][1]:+.3f}] (test gold clusters resampled)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.workloads.er", description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(DEFAULT_ROOT))
    ap.add_argument("--datasets", default=None)
    ap.add_argument("--folds", default="1-3")
    ap.add_argument("--systems", default="lr_closure,lr_cc,splink,mln")
    ap.add_argument("--json", default=None)
    ap.add_argument("--verbose", action="store_true", help="print the learner's progress")
    ap.add_argument("--world-splits", choices=("one-out", "halves"), default=None,
                    help="the learner's held-out splits of its training folds (default: the learner's)")
    ap.add_argument("--linkage-rule", choices=("one-se", "best"), default=None,
                    help="how the learner chooses the linkage on held-out training data (default: the learner's)")
    ap.add_argument("--threads", type=int, default=1,
                    help="threads of the recipe's learning and inference (default 1: the figures are measured two "
                         "datasets at a time on a 2-core machine)")
    args = ap.parse_args(argv)
    if args.threads < 1:
        ap.error(f"--threads must be a positive integer, got {args.threads}")
    global VERBOSE, WORLD_SPLITS, LINKAGE_RULE, THREADS
    VERBOSE = args.verbose
    WORLD_SPLITS = args.world_splits
    LINKAGE_RULE = args.linkage_rule
    THREADS = args.threads
    root = Path(args.root)
    names = args.datasets.split(",") if args.datasets else sorted(p.name for p in root.iterdir()
                                                                  if (p / "records.csv").exists())
    roots = {name: root for name in names}
    if args.root == str(DEFAULT_ROOT) and (args.datasets is None or any(n.startswith("cora_") for n in names)):
        # Cora's two tasks, written in this layout once (bench/er_cora.py)
        from bench.er_cora import make

        for d in make(RESULTS_DIR / "er_cora"):
            roots[d.name] = d.parent
            if args.datasets is None:
                names.append(d.name)
    rows = []
    for name in names:
        ds = E.load(roots.get(name, root) / name, name)
        cache: dict = {}
        systems = args.systems.split(",")
        for k in E.parse_folds(args.folds):
            t = time.perf_counter()
            out = []
            if "lr_closure" in systems or "lr_cc" in systems:
                out += [r for r in run_baselines(ds, k, cache) if r["system"] in systems]
            if "splink" in systems:
                from bench.er_splink import run_splink

                out.append(run_splink(ds, k, cache))
            if "mln" in systems:
                out.append(run_mln(ds, k))
            for r in out:
                rows.append(r)
                print(f"{name} fold {k} {r['system']:10s} P {r['pairwise_precision']:.3f} R {r['pairwise_recall']:.3f} "
                      f"F1 {r['pairwise_f1']:.3f} B3 {r['b3_f1']:.3f} {r['hyperparameters']} "
                      f"({time.perf_counter() - t:.1f} s)", flush=True)
    summary = summarise(rows)
    print(table(summary))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1))


# ---------------------------------------------------------------- the recipe (mln)

TEMPLATE = REPO_ROOT / "examples" / "er" / "template.mln"
META_COLUMNS = ("id", "source", "orig_id")
VERBOSE = False      # the er layout's own columns, not fields
WORLD_SPLITS = None  # the learner's held-out splits of the training folds (None: its default)
LINKAGE_RULE = None  # the learner's linkage rule (None: its default)
THREADS = 1          # threads of the recipe's learning and inference


def recipe_fields(ds: E.Dataset, members: np.ndarray):
    """The recipe's fields: every column of records.csv but the layout's own,
    kinds read from the given records (training records only)."""
    from markovlogic.derive.records import infer_kinds

    frame = ds.records.iloc[members]
    cols = [c for c in ds.records.columns if c not in META_COLUMNS]
    cols = [c for c in cols if (frame[c].astype(str).str.strip() != "").any()]
    return infer_kinds(frame, cols)


def _block_columns(ds: E.Dataset) -> list[str]:
    return [ds.columns[f] for f in ds.block if f in ds.columns]


def fold_evidence(ds: E.Dataset, fold: int, fields, truth: bool) -> str:
    """Evidence of one fold's records (derived on those records alone: their
    document frequencies), with its true Same atoms when ``truth``."""
    from markovlogic.derive.records import records_to_db_text

    members = np.flatnonzero(ds.fold == fold)
    frame = ds.records.iloc[members]
    text, _, decls = records_to_db_text(frame, "id", fields, source="source" if ds.clean_clean else None,
                                        block=_block_columns(ds), max_df=E.df_limit(ds, len(members)))
    if truth:
        gold = ds.cluster[members]
        ids = ds.ids[members]
        order = np.argsort(gold, kind="stable")
        lines = []
        g_sorted = gold[order]
        bounds = np.flatnonzero(np.diff(g_sorted)) + 1
        for part in np.split(order, bounds):
            if len(part) > 1:
                names = sorted(ids[part])
                for a in range(len(names)):
                    for b in range(a + 1, len(names)):
                        lines.append(f"Same({names[a]},{names[b]})")
        text += "\n".join(lines) + ("\n" if lines else "")
    return text, decls


def recipe_inputs(ds: E.Dataset, test: int):
    """The recipe for test fold ``test``: the template filled with the
    training records' fields, one training world per other fold (with its
    true Same atoms), and every fold's evidence text."""
    from markovlogic import MLN, Database
    from markovlogic.derive.records import fill_template

    train = [k for k in ds.folds() if k != test]
    train_members = np.flatnonzero(np.isin(ds.fold, train))
    fields = recipe_fields(ds, train_members)
    texts = {}
    decls = None
    for k in ds.folds():
        texts[k], d = fold_evidence(ds, k, fields, truth=(k != test))
        decls = decls or d
    model_text = fill_template(TEMPLATE.read_text(), fields, source=ds.clean_clean,
                               declarations=decls, frame=ds.records.iloc[train_members])
    mln = MLN.from_string(model_text)
    dbs = [Database.from_string(texts[k], mln=mln) for k in train]
    return mln, dbs, texts


def run_mln(ds: E.Dataset, test: int, log=print) -> dict:
    """The recipe on one test fold: fill the template with the fields of the
    training records, learn on the training folds (one world each), cluster the
    test fold by agglomerative MAP, score with the baselines' code."""
    import resource

    from markovlogic import Database
    from markovlogic.learn.api import learn_model

    t0 = time.perf_counter()
    c0 = time.process_time()
    mln, dbs, texts = recipe_inputs(ds, test)
    learned = learn_model(mln, dbs, query_predicates=["Same"], method="samplerank", multiple_databases=True,
                          log=log if VERBOSE else None,
                          threads=THREADS, **{k: v for k, v in (("world_splits", WORLD_SPLITS),
                                                                 ("linkage_rule", LINKAGE_RULE)) if v})
    learn_s = time.perf_counter() - t0
    learn_cpu = time.process_time() - c0
    t1 = time.perf_counter()
    c1 = time.process_time()
    test_db = Database.from_string(texts[test], mln=learned.mln)
    answer = learned.mln.map(test_db, queries="Same", method="agglomerative", threads=THREADS)
    infer_s = time.perf_counter() - t1
    infer_cpu = time.process_time() - c1
    part = answer.parts[0]
    members, pos, labels = fold_labels(ds, test, part)
    stats = learned.result.stats
    r = {"dataset": ds.name, "fold": test, "system": "mln", **E.scores(labels, ds.cluster[members]),
         "hyperparameters": {k: stats.get(k) for k in ("update", "epochs", "C", "l2", "linkage", "linkage_rule",
                                                        "linkage_held_out_best", "set_features",
                                                        "calibration_shift", "pair_layer_features",
                                                        "pair_layer_l2", "pair_layer", "world_splits",
                                                        "held_out_splits")},
         "train_pairwise_f1": stats.get("final_train_pairwise_f1"), "learn_s": learn_s, "learn_cpu_s": learn_cpu,
         "threads": THREADS,
         "infer_s": infer_s, "infer_cpu_s": infer_cpu,
         "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
         "blocking_recall": _model_blocking_recall(part.model, ds.cluster[members][[pos[nm] for nm in
                                                                                   part.model.mention_names]]),
         "candidate_pairs": int(part.model.stats.get("candidate_pairs", -1))}
    return r


def fold_labels(ds: E.Dataset, test: int, part):
    """The test fold's records (positions in ``ds``), each record id's index
    among them, and their cluster labels from the recipe's answer ``part``
    (a record the model has no mention of stays a singleton)."""
    members = np.flatnonzero(ds.fold == test)
    pos = {r: i for i, r in enumerate(ds.ids[members])}
    labels = np.arange(len(members))
    for i, name in enumerate(part.model.mention_names):
        labels[pos[name]] = len(members) + int(part.labels[i])
    return members, pos, labels


def _model_blocking_recall(model, gold: np.ndarray) -> float:
    """The share of the test fold's true pairs that the model's declared
    candidates (its ``candidates(...)`` rule) contain; ``gold``: the gold
    cluster of each of the model's mentions, in its order."""
    md = model.arrays
    rows = np.repeat(np.arange(md.n), np.diff(md.indptr))
    keep = rows < md.indices
    if md.cand_col >= 0:
        keep &= md.vals[:, md.cand_col] != 0
    hit = int(np.sum(gold[rows[keep]] == gold[md.indices[keep]]))
    _, counts = np.unique(gold, return_counts=True)
    total = int(np.sum(counts * (counts - 1) // 2))
    return hit / total if total else 1.0


if __name__ == "__main__":
    main(sys.argv[1:])
