"""Workload ``eval-coref-100k``: the coreference metrics on 100,000 mentions.

A synthetic truth of 20,000 clusters (sizes 1-9, mean 5) and a prediction
that moves 10% of the mentions to random clusters (and splits some); every
metric of ``markovlogic.eval.coref`` on the pair (clusterings) plus pairwise
against the truth's pairs as an explicit pair set, as ``mln eval`` does.
Figures: seconds per metric (one call each), pairs, clusters.

Measured 2026-11-24 (``python -m bench eval-coref-100k -n 3``, shared 2-core
machine, medians): B-cubed 0.030 s, MUC 0.024 s, CEAF-e 0.17 s (20,013 true
and 21,176 predicted clusters), pairwise against 266,759 true pairs 0.017 s;
peak memory 149 MB for the whole run (data generation included).
"""

from __future__ import annotations

import time

import numpy as np

from bench.harness import workload


def data(n: int = 100_000, seed: int = 0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 10, n)                       # cluster sizes 1..9
    truth = np.repeat(np.arange(n), sizes)[:n]
    pred = truth.copy()
    moved = rng.random(n) < 0.10
    pred[moved] = rng.integers(0, int(truth.max() * 1.2), int(moved.sum()))
    return truth, pred


@workload("eval-coref-100k", "coreference metrics (pairwise, B3, MUC, CEAF-e) on 100,000 mentions")
def eval_coref_100k() -> dict:
    from markovlogic.eval.coref import Pairs, b_cubed, ceaf_e, muc, pairwise

    truth, pred = data()
    n = len(truth)
    # the truth as an explicit pair set (each cluster's pairs)
    order = np.argsort(truth, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(truth[order])) + 1]
    i, j = [], []
    for s, e in zip(starts, np.r_[starts[1:], n]):     # setup only, not timed
        members = order[s:e]
        a, b = np.triu_indices(len(members), 1)
        i.append(members[a])
        j.append(members[b])
    true_pairs = Pairs.from_arrays(n, np.concatenate(i), np.concatenate(j))
    figures = {"mentions": n, "true_clusters": int(len(np.unique(truth))),
               "predicted_clusters": int(len(np.unique(pred))), "true_pairs": len(true_pairs)}
    for name, fn in (("b3", lambda: b_cubed(pred, truth)), ("muc", lambda: muc(pred, truth)),
                     ("ceafe", lambda: ceaf_e(pred, truth)), ("pairwise", lambda: pairwise(pred, true_pairs))):
        start = time.perf_counter()
        prf = fn()
        figures[f"{name}_s"] = round(time.perf_counter() - start, 4)
        figures[f"{name}_f1"] = round(prf.f1, 4)
    return figures
