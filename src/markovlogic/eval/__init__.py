"""Evaluation: scores of predictions against the truth.

- :mod:`.binary`: precision/recall/F1, AUC-PR and conditional log-likelihood
  of ordinary query atoms;
- :mod:`.coref`: coreference metrics of clusterings (pairwise, B-cubed, MUC,
  CEAF-e, cluster recall) and clusters from pair atoms;
- :mod:`.resultfile`, :mod:`.clusterfile`: reading result files (Alchemy's
  formats) and reading/writing the clusters file;
- :mod:`.compare`: a result file against a truth ``.db`` (``mln eval``).

This package imports no grounding or inference code.
"""

from .binary import PRF, auc_pr, average_cll, precision_recall_f1
from .clusterfile import clusters_from_labels, read_clusters, write_clusters
from .compare import evaluate
from .coref import (Pairs, b_cubed, ceaf_e, cluster_precision, cluster_recall, clusters_from_pairs,
                    coreference_scores, muc, pairwise)
from .resultfile import ResultFile, read_result

__all__ = [
    "PRF", "Pairs", "ResultFile", "auc_pr", "average_cll", "b_cubed", "ceaf_e", "cluster_precision", "cluster_recall",
    "clusters_from_labels",
    "clusters_from_pairs", "coreference_scores", "evaluate", "muc", "pairwise", "precision_recall_f1",
    "read_clusters", "read_result", "write_clusters",
]
