"""Evaluation: coreference metrics (pairwise, B-cubed, MUC, CEAF-e), atom
metrics (precision/recall/F1, AUC-PR, CLL), and ``mln eval``'s comparison of
a result file with a truth database. Imports no inference code."""

from .atoms import auc_pr, average_cll, prf_sets
from .clusters import b_cubed, ceaf_e, coreference_scores, labels_from_pairs, muc, pairwise, pairwise_sets

__all__ = ["auc_pr", "average_cll", "prf_sets", "b_cubed", "ceaf_e", "coreference_scores", "labels_from_pairs",
           "muc", "pairwise", "pairwise_sets"]
