"""Scores of marginal predictions against the truth, as reported for learned
models (the code lives in ``markovlogic.eval``, which ``mln eval`` and the
bench use too)."""

from ..eval.atoms import PROB_FLOOR, auc_pr, average_cll

__all__ = ["PROB_FLOOR", "auc_pr", "average_cll"]
