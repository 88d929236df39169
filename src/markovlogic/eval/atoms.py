"""Scores of ordinary query atoms: precision/recall/F1 of a set of true atoms
(MAP), area under the precision-recall curve and average conditional
log-likelihood of marginals."""

from __future__ import annotations

import numpy as np

PROB_FLOOR = 1e-4


def prf_sets(truth: set, predicted: set) -> dict:
    tp = len(truth & predicted)
    p = tp / len(predicted) if predicted else (1.0 if not truth else 0.0)
    r = tp / len(truth) if truth else 1.0
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return {"precision": float(p), "recall": float(r), "f1": float(f),
            "predicted_true": len(predicted), "true": len(truth)}


def auc_pr(probabilities: np.ndarray, truth: np.ndarray) -> float:
    """Area under the precision-recall curve, as average precision: the mean of
    the precision at each recall step, atoms ranked by decreasing probability,
    tied probabilities taken as one threshold (their precision is that of the
    whole tied group). 0 when there is no positive atom."""
    p = np.asarray(probabilities, dtype=np.float64)
    y = np.asarray(truth, dtype=bool)
    positives = int(y.sum())
    if positives == 0:
        return 0.0
    order = np.argsort(-p, kind="stable")
    p, y = p[order], y[order]
    # end of each group of tied probabilities
    last = np.r_[np.flatnonzero(np.diff(p) != 0), len(p) - 1]
    tp = np.cumsum(y)[last]
    precision = tp / (last + 1.0)
    new_tp = np.diff(np.r_[0, tp])
    return float(np.sum(precision * new_tp) / positives)


def average_cll(probabilities: np.ndarray, truth: np.ndarray, floor: float = PROB_FLOOR) -> float:
    """Mean of log P(atom = its true value), probabilities clipped to
    [floor, 1 - floor] (a sampler's 0 and 1 would give -inf)."""
    p = np.clip(np.asarray(probabilities, dtype=np.float64), floor, 1.0 - floor)
    y = np.asarray(truth, dtype=bool)
    if len(p) == 0:
        return 0.0
    return float(np.mean(np.where(y, np.log(p), np.log1p(-p))))
