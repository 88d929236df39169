"""Unsupervised entity resolution on Cora (issue 14): a Markov logic model
learned with no SameBib label at all.

    python -m bench.workloads.cora_unsupervised [--folds 1-5]

The model is Fellegi and Sunter's record-linkage mixture written as an MLN
(``MODEL`` below) and learned by soft EM over a hidden predicate
(``learn/hidden.py``): each candidate pair of citations ``p`` has a hidden
``Same(p)`` and three observed similarity levels ``TitleSim(p, b!)``,
``AuthorSim(p, b!)``, ``VenueSim(p, b!)`` (the word Jaccard of each field in
five fixed bins, 0-.2-.4-.6-.8-1). Formulas: a fixed prior ``@-2 Same(p)``
(as Poon's priors against opening a cluster: it ties the hidden predicate
down, without it true and false are interchangeable), the marginal of each
level (``TitleSim(p, +b)``) and each level given a match (``Same(p) ^
TitleSim(p, Bk)``, one formula per level, started at -1 ... +1 so that EM
begins from "similar means same" rather than the symmetric saddle point).
The similarity levels are *observed query atoms*, not evidence: the model
generates them, which is what gives the hidden ``Same`` a likelihood to
explain.

Per fold, with no label read: candidate pairs are the training citations'
pairs whose title-word Jaccard is at least 0.2 (blocking; 145,318 on fold
1, holding 12,300 of the 12,352 true pairs), of which a random 20,000 are
the training data (the pairs are exchangeable in this model); the MLN is
learned by ``mln learn --hidden Same --em soft --inference exact`` semantics
(each pair's network is small, so the expectations are exact); on the test
fold the same blocking, the marginal P(Same(p)) from the learned MLN
(``method="exact"``), and greedy correlation clustering of the pair
log-odds (non-candidates never merge): clusters scored by
``markovlogic.eval.evaluate`` against test-truth.db.

The label-free trivial baseline: title-word Jaccard at least 0.5 (fixed a
priori, no labels: the middle of the scale), then transitive closure. The
supervised figures beside (pairwise CPI model, LR + CC, learned with
labels) are those of ``bench.workloads.cora_baselines`` on the same folds.

Measured 2026-11-24 (``python -m bench.workloads.cora_unsupervised --folds
1-5``; load 2-3 from other work; the model, blocking, bins and prior were
written down before the first run and not changed after):

    method                           F1 f1 F1 f2 F1 f3 F1 f4 F1 f5  pair P  pair R  pair F1  B3 F1  MUC F1  learn s
    title jaccard >= 0.5 (a priori)  0.447 0.908 0.950 0.679 0.933  0.690   0.988   0.783    0.887  0.981     0.0
    unsupervised MLN (soft EM)       0.961 0.980 0.978 0.987 0.921  0.961   0.970   0.965    0.967  0.984    11.4

    with labels (cora_baselines / cora_er, same folds and scoring):
    cora-pairwise.mln (CPI)                                         .974    .790    .870
    title jaccard, t chosen on training labels                                      .960     .960
    LR + greedy CC                                                                  .968     .967
    set-level MLN (SampleRank)                                      .971    .970    .970     .969

With no label the model is 9.5 points above the supervised pairwise MLN
(the issue's target was within 10 points *below* it) and level with the
supervised title threshold and LR + CC; the set-level model learned with
labels stays ahead by .005. Fold 5 is its weak fold (F1 .921: recall .928),
where the a-priori threshold is close (.933). Learning: 50 soft-EM rounds
over 20,000 pairs, exact expectations (each pair's network has 250 worlds),
11 s per fold.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bench.harness import RESULTS_DIR, Skip, data_dir, workload

OUT_DIR = RESULTS_DIR / "cora_unsupervised"
BLOCK = 0.2                      # candidate pairs: title-word Jaccard at least this
EDGES = np.array([0.2, 0.4, 0.6, 0.8])   # bin k: the number of edges <= jaccard
FIELDS = {"TitleSim": "title_jaccard", "AuthorSim": "author_jaccard", "VenueSim": "venue_jaccard"}
A_PRIORI = 0.5                   # the label-free baseline's threshold
TRAIN_PAIRS = 20_000             # candidate pairs EM learns from (a random subset: pairs are exchangeable)


def model_text() -> str:
    lines = ["Same(pair)"] + [f"{p}(pair, bin!)" for p in FIELDS] + ["", "@-2 Same(p)"]
    for p in FIELDS:
        lines.append(f"0 {p}(p, +b)")
        for k, w in enumerate((-1.0, -0.5, 0.0, 0.5, 1.0)):
            lines.append(f"{w} Same(p) ^ {p}(p, B{k})")
    return "\n".join(lines) + "\n"


MODEL = model_text()


def _bins(x: np.ndarray) -> np.ndarray:
    return np.searchsorted(EDGES, x, side="right")


def _db_text(frame, keep: np.ndarray) -> str:
    rows = np.flatnonzero(keep)
    out = []
    for pred, col in FIELDS.items():
        b = _bins(frame[col].to_numpy()[rows])
        out.extend(f"{pred}(P{r}, B{k})" for r, k in zip(rows, b))
    return "\n".join(out) + "\n"


def _split(fold: int, which: str):
    from bench.cora_features import read_atoms
    from bench.workloads.cora_baselines import TASKS, Split

    folder = data_dir() / "cora" / f"fold{fold}"
    for name in ("train.db", "test-evidence.db", "test-truth.db"):
        if not (folder / name).is_file():
            raise Skip(f"missing {folder / name}")
    task = TASKS[("cora", "SameBib")]
    if which == "train":
        # the training truth is read by Split for its pair labels; nothing here uses them
        return Split(read_atoms(folder / "train.db"), task), folder
    return Split(read_atoms(folder / "test-evidence.db"), task, truth_atoms=read_atoms(folder / "test-truth.db")), folder


def learn(train) -> tuple[object, float, object]:
    """The MLN learned by soft EM on the training fold's candidate pairs (no labels)."""
    from markovlogic import MLN, Database
    from markovlogic.learn.api import learn_model

    mln = MLN.from_string(MODEL, filename="cora-unsupervised.mln")
    keep = train.frame["title_jaccard"].to_numpy() >= BLOCK
    rows = np.flatnonzero(keep)
    if len(rows) > TRAIN_PAIRS:
        sub = np.zeros(len(keep), dtype=bool)
        sub[np.random.default_rng(0).choice(rows, TRAIN_PAIRS, replace=False)] = True
        keep = sub
    db = Database.from_string(_db_text(train.frame, keep), mln=mln)
    start = time.perf_counter()
    model = learn_model(mln, [db], query_predicates=["Same", *FIELDS], method="dn", hidden=["Same"], em="soft",
                        inference="exact", iterations=50, prior_stddev=None, init="model")
    return model, time.perf_counter() - start, keep


def predict(model, test) -> np.ndarray:
    """Greedy correlation clustering of the learned pair log-odds on the test fold."""
    from markovlogic import Database
    from bench.workloads.cora_baselines import greedy_correlation_clustering, score_matrix

    keep = test.frame["title_jaccard"].to_numpy() >= BLOCK
    db = Database.from_string(_db_text(test.frame, keep), mln=model.mln)
    answer = model.mln.infer(db, queries=["Same"], method="exact")
    frame = answer.frame
    prob = dict(zip(frame["atom"], frame["probability"]))
    rows = np.flatnonzero(keep)
    p = np.array([prob.get(f"Same(P{r})", 0.0) for r in rows])
    p = np.clip(p, 1e-9, 1 - 1e-9)
    z = np.full(len(test.i), -50.0)
    z[rows] = np.log(p / (1 - p))
    return greedy_correlation_clustering(score_matrix(test.n, test.i, test.j, z))


def run_fold(fold: int) -> list[dict]:
    from markovlogic.eval import clusters_from_labels, evaluate, write_clusters
    from bench.workloads.cora_baselines import _row, closure

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    train, folder = _split(fold, "train")
    test, _ = _split(fold, "test")
    rows = []

    def score(method: str, labels: np.ndarray, **extra) -> None:
        slug = method.split()[0].lower()
        path = OUT_DIR / f"cora.SameBib.{slug}.fold{fold}.clusters"
        write_clusters(path, {"SameBib": clusters_from_labels(list(test.mentions.names), labels)})
        figures = evaluate(path, folder / "test-truth.db", ["SameBib"], equivalence=["SameBib"])
        rows.append(_row(fold, "cora", "SameBib", method, figures, **extra))

    score("title jaccard >= 0.5 (a priori)",
          closure(test.n, test.i, test.j, test.frame["title_jaccard"].to_numpy() >= A_PRIORI))
    model, seconds, keep = learn(train)
    start = time.perf_counter()
    labels = predict(model, test)
    score("unsupervised MLN (soft EM)", labels, learn_s=round(seconds, 1),
          infer_s=round(time.perf_counter() - start, 1), candidate_pairs=int(keep.sum()),
          em_iterations=model.result.iterations)
    return rows


def table(rows: list[dict]) -> str:
    methods = list(dict.fromkeys(r["method"] for r in rows))
    folds = sorted({r["fold"] for r in rows})
    lines = [f"{'method':34s} " + " ".join(f"F1 f{k}" for k in folds)
             + "   pair P  pair R  pair F1  B3 F1   MUC F1  learn s"]
    for m in methods:
        mine = [r for r in rows if r["method"] == m]
        cells = " ".join(f"{next(r['pairwise_f1'] for r in mine if r['fold'] == k):.3f}" for k in folds)
        mean = {k: np.mean([r[k] for r in mine]) for k in ("pairwise_precision", "pairwise_recall", "pairwise_f1",
                                                             "b3_f1", "muc_f1")}
        learn_s = np.mean([r.get("learn_s", 0.0) for r in mine])
        lines.append(f"{m:34s} {cells}   {mean['pairwise_precision']:.3f}   {mean['pairwise_recall']:.3f}   "
                     f"{mean['pairwise_f1']:.3f}    {mean['b3_f1']:.3f}   {mean['muc_f1']:.3f}   {learn_s:6.1f}")
    return "\n".join(lines)


@workload("cora-unsupervised", "Cora fold 1: unsupervised MLN entity resolution (soft EM, no labels)")
def fold1() -> dict:
    rows = run_fold(1)
    return {r["method"]: r["pairwise_f1"] for r in rows}


def main(argv: list[str] | None = None) -> None:
    from bench.workloads.learn_uwcse import _numbers

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folds", default="1")
    args = parser.parse_args(argv)
    rows = []
    for fold in _numbers(args.folds):
        for r in run_fold(fold):
            rows.append(r)
            print(f"fold{fold} {r['method']}: P {r['pairwise_precision']:.3f} R {r['pairwise_recall']:.3f} "
                  f"F1 {r['pairwise_f1']:.3f} B3 {r['b3_f1']:.3f} MUC {r['muc_f1']:.3f} "
                  + " ".join(f"{k}={r[k]}" for k in ("learn_s", "infer_s", "candidate_pairs", "em_iterations")
                             if k in r), flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
