"""Scores of marginal predictions against the truth, as reported for learned
models: area under the precision-recall curve and average conditional
log-likelihood. They live in :mod:`markovlogic.eval.binary` (shared with
``mln eval`` and the benchmarks); this module keeps the learners' imports."""

from __future__ import annotations

from ..eval.binary import PROB_FLOOR, auc_pr, average_cll

__all__ = ["PROB_FLOOR", "auc_pr", "average_cll"]
