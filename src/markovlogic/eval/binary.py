"""Scores of ordinary (non-equivalence) query atoms against the truth:
precision, recall and F1 of a set of predicted atoms, the area under the
precision-recall curve and the average conditional log-likelihood of
marginal probabilities.

Every function takes numpy arrays aligned on the same atoms (one entry per
atom of the evaluated universe) and is vectorised. Undefined ratios (no
predicted atom, no true atom) are reported as 0, as scikit-learn's
``zero_division=0`` does.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

PROB_FLOOR = 1e-4
THRESHOLD = 0.5          # a marginal at or above this predicts the atom true


class PRF(NamedTuple):
    """Precision, recall and F1 (each in [0, 1])."""

    precision: float
    recall: float
    f1: float


def ratio(num: float, den: float) -> float:
    """``num / den``, 0 when ``den`` is 0."""
    return float(num) / float(den) if den else 0.0


def prf_from_counts(tp: float, predicted: float, true: float) -> PRF:
    """Precision ``tp/predicted``, recall ``tp/true`` and their harmonic mean."""
    p, r = ratio(tp, predicted), ratio(tp, true)
    return PRF(p, r, ratio(2.0 * p * r, p + r))


def f1_of(precision: float, recall: float) -> float:
    return ratio(2.0 * precision * recall, precision + recall)


def precision_recall_f1(predicted: np.ndarray, truth: np.ndarray) -> PRF:
    """Scores of boolean predictions against boolean truth values."""
    pred = np.asarray(predicted, dtype=bool)
    y = np.asarray(truth, dtype=bool)
    if pred.shape != y.shape:
        raise ValueError(f"predicted and truth differ in shape: {pred.shape} and {y.shape}")
    return prf_from_counts(int(np.count_nonzero(pred & y)), int(np.count_nonzero(pred)), int(np.count_nonzero(y)))


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
