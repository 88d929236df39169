"""Coreference metrics: pairwise precision/recall/F1, B-cubed, MUC and CEAF-e.

Clusterings are label arrays over one universe of mentions (``gold[i]`` and
``pred[i]``: the cluster of mention ``i``); singletons count. Pairwise
metrics may also compare sets of unordered pairs directly (Cora's truth
files are not transitively closed: its pairs are compared as given).

* **pairwise**: over unordered pairs of distinct mentions put together;
* **B-cubed** (Bagga & Baldwin 1998): per mention, the share of its
  predicted cluster that is in its gold cluster (precision) and the share of
  its gold cluster in its predicted one (recall), averaged over mentions;
* **MUC** (Vilain et al. 1995): recall is the sum over gold clusters of
  ``|G| - |parts of G in the prediction|`` over the sum of ``|G| - 1``
  (the links needed), precision the same with the roles swapped;
* **CEAF-e** (Luo 2005, entity-based with phi4): the best one-to-one
  alignment of gold and predicted clusters under
  ``phi4(G, P) = 2 |G & P| / (|G| + |P|)``; precision is the aligned
  similarity over the number of predicted clusters, recall over the number
  of gold clusters. The alignment is solved by ``linear_sum_assignment``
  separately on each connected group of overlapping clusters, so it stays
  small on large problems.

Every function is vectorised (numpy, scipy), and F1 of precision ``p`` and
recall ``r`` is ``2pr/(p+r)`` (0 when both are 0).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.sparse.csgraph import connected_components


def f1(p: float, r: float) -> float:
    return 2.0 * p * r / (p + r) if p + r > 0 else 0.0


def _prf(p: float, r: float) -> dict:
    return {"precision": float(p), "recall": float(r), "f1": float(f1(p, r))}


def _dense(labels) -> np.ndarray:
    _, inv = np.unique(np.asarray(labels), return_inverse=True)
    return inv.astype(np.int64)


def _contingency(gold, pred) -> sp.csr_matrix:
    """Counts of mentions per (gold cluster, predicted cluster)."""
    g, p = _dense(gold), _dense(pred)
    return sp.coo_matrix((np.ones(len(g)), (g, p)), shape=(g.max() + 1 if len(g) else 0,
                                                          p.max() + 1 if len(p) else 0)).tocsr()


def labels_from_pairs(n: int, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Clusters (connected components) of ``n`` mentions linked by the pairs."""
    g = sp.coo_matrix((np.ones(len(rows)), (np.asarray(rows), np.asarray(cols))), shape=(n, n))
    return connected_components(g, directed=False)[1].astype(np.int64)


def pairwise(gold, pred) -> dict:
    """Pairwise precision/recall/F1 of two clusterings."""
    c = _contingency(gold, pred)
    both = float((c.data * (c.data - 1) / 2).sum())
    gs = np.asarray(c.sum(axis=1)).ravel()
    ps = np.asarray(c.sum(axis=0)).ravel()
    gold_pairs = float((gs * (gs - 1) / 2).sum())
    pred_pairs = float((ps * (ps - 1) / 2).sum())
    p = both / pred_pairs if pred_pairs else (1.0 if not gold_pairs else 0.0)
    r = both / gold_pairs if gold_pairs else 1.0
    out = _prf(p, r)
    out.update(predicted_pairs=int(pred_pairs), true_pairs=int(gold_pairs))
    return out


def pairwise_sets(gold_pairs: set, pred_pairs: set) -> dict:
    """Pairwise precision/recall/F1 of two sets of unordered pairs as given."""
    tp = len(gold_pairs & pred_pairs)
    p = tp / len(pred_pairs) if pred_pairs else (1.0 if not gold_pairs else 0.0)
    r = tp / len(gold_pairs) if gold_pairs else 1.0
    out = _prf(p, r)
    out.update(predicted_pairs=len(pred_pairs), true_pairs=len(gold_pairs))
    return out


def b_cubed(gold, pred) -> dict:
    c = _contingency(gold, pred).tocoo()
    n = c.data.sum()
    if n == 0:
        return _prf(1.0, 1.0)
    gs = np.asarray(c.tocsr().sum(axis=1)).ravel()
    ps = np.asarray(c.tocsr().sum(axis=0)).ravel()
    sq = c.data ** 2
    p = float((sq / ps[c.col]).sum() / n)
    r = float((sq / gs[c.row]).sum() / n)
    return _prf(p, r)


def muc(gold, pred) -> dict:
    c = _contingency(gold, pred)

    def recall(m: sp.csr_matrix) -> float:
        sizes = np.asarray(m.sum(axis=1)).ravel()
        parts = np.diff(m.indptr)              # predicted clusters each gold cluster touches
        need = float((sizes - 1).sum())
        return float((sizes - parts).sum()) / need if need else 1.0

    r = recall(c)
    p = recall(c.T.tocsr())
    return _prf(p, r)


def ceaf_e(gold, pred) -> dict:
    c = _contingency(gold, pred).tocoo()
    ng, npred = c.shape
    if ng == 0 or npred == 0:
        return _prf(1.0, 1.0)
    gs = np.asarray(c.tocsr().sum(axis=1)).ravel()
    ps = np.asarray(c.tocsr().sum(axis=0)).ravel()
    phi = 2.0 * c.data / (gs[c.row] + ps[c.col])
    # connected groups of overlapping clusters: nodes gold 0..ng-1, pred ng..ng+np-1
    graph = sp.coo_matrix((np.ones(len(c.data)), (c.row, c.col + ng)), shape=(ng + npred, ng + npred))
    _, comp = connected_components(graph, directed=False)
    total = 0.0
    edge_comp = comp[c.row]
    order = np.argsort(edge_comp, kind="stable")
    bounds = np.flatnonzero(np.diff(edge_comp[order])) + 1
    for part in np.split(order, bounds):
        if len(part) == 0:
            continue
        rows, ri = np.unique(c.row[part], return_inverse=True)
        cols, ci = np.unique(c.col[part], return_inverse=True)
        m = np.zeros((len(rows), len(cols)))
        m[ri, ci] = phi[part]
        a, b = linear_sum_assignment(m, maximize=True)
        total += float(m[a, b].sum())
    return _prf(total / npred, total / ng)


def coreference_scores(gold, pred) -> dict:
    """Every cluster metric, flat: ``pairwise_f1``, ``b3_f1``, ``muc_f1``,
    ``ceafe_f1`` and their precisions and recalls."""
    out: dict = {}
    for name, fn in (("pairwise", pairwise), ("b3", b_cubed), ("muc", muc), ("ceafe", ceaf_e)):
        s = fn(gold, pred)
        out[f"{name}_precision"] = s["precision"]
        out[f"{name}_recall"] = s["recall"]
        out[f"{name}_f1"] = s["f1"]
    out["gold_clusters"] = int(len(np.unique(gold)))
    out["predicted_clusters"] = int(len(np.unique(pred)))
    return out
