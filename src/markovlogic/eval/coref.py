"""Coreference metrics: how well a predicted clustering of mentions matches
the true one.

Mentions are the integers ``0 .. n-1``. A clustering is an integer label
array of length ``n`` (equal labels = same cluster; any integers); a
:class:`Pairs` object is a set of unordered pairs of distinct mentions, the
form in which pair atoms such as ``SameBib(a, b)`` come (not necessarily
transitively closed). Clusters are built from pairs by connected components
(:func:`clusters_from_pairs`).

Metrics (each returns a :class:`~markovlogic.eval.binary.PRF`; undefined
ratios are 0):

- :func:`pairwise`: precision and recall of the set of unordered pairs put
  together. Each side is either a :class:`Pairs` (compared as given) or a
  clustering (all pairs inside its clusters, never materialised: counted from
  the cluster sizes, so a cluster of 10^5 mentions costs nothing).
- :func:`b_cubed` (Bagga and Baldwin 1998): per mention, the share of its
  predicted cluster that is in its true cluster (precision) and the share of
  its true cluster in its predicted cluster (recall), averaged over mentions.
  Singletons count.
- :func:`muc` (Vilain et al. 1995): links. Recall is the sum over true
  clusters K of ``|K| - |p(K)|`` over the sum of ``|K| - 1``, ``p(K)`` the
  parts into which the predicted clusters cut K; precision swaps the roles.
  Singletons contribute nothing; a side of singletons only gives 0/0 = 0.
- :func:`ceaf_e` (Luo 2005, entity-based CEAF): the one-to-one alignment of
  true and predicted clusters maximising the sum of
  ``phi4(K, R) = 2 |K & R| / (|K| + |R|)``; precision is that sum over the
  number of predicted clusters, recall over the number of true clusters.
  The alignment splits into the connected components of the overlap graph;
  each is solved by ``scipy.optimize.linear_sum_assignment`` (a component too
  large for a dense matrix by the sparse
  ``scipy.sparse.csgraph.min_weight_full_bipartite_matching``).
- :func:`cluster_recall` (the measure of Poon & Domingos 2007 and of the
  CiteSeer citation-matching papers before them): the fraction of true
  clusters that the predicted clustering contains exactly (same members,
  nothing more), singletons included; with pairs, after transitive closure
  (connected components). :func:`cluster_precision` swaps the roles.

Everything runs on the contingency table of the two clusterings (its
non-zero cells, at most ``n``), with numpy; 10^5 mentions take milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import connected_components, min_weight_full_bipartite_matching

from .binary import PRF, f1_of, prf_from_counts, ratio

# largest dense similarity matrix (cells) built for one component of the CEAF alignment
CEAF_DENSE_LIMIT = 4_000_000


# ------------------------------------------------------------------ representations


@dataclass(frozen=True)
class Pairs:
    """Unordered pairs of distinct mentions out of ``n``, stored canonically:
    ``i < j``, sorted by ``(i, j)``, no duplicates. Build with :meth:`from_arrays`."""

    n: int
    i: np.ndarray
    j: np.ndarray

    @classmethod
    def from_arrays(cls, n: int, a, b) -> "Pairs":
        """Pairs ``{a[k], b[k]}``; pairs of a mention with itself are dropped,
        orientation and repetition ignored."""
        a = np.asarray(a, dtype=np.int64).ravel()
        b = np.asarray(b, dtype=np.int64).ravel()
        if a.shape != b.shape:
            raise ValueError("pair arrays differ in length")
        if a.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n):
            raise ValueError(f"mention ids must lie in 0..{n - 1}")
        keep = a != b
        lo, hi = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
        keys = np.unique(lo * np.int64(n) + hi)
        return cls(int(n), keys // n, keys % n)

    @property
    def keys(self) -> np.ndarray:
        """``i * n + j``, sorted and unique."""
        return self.i * np.int64(self.n) + self.j

    def __len__(self) -> int:
        return len(self.i)

    def clusters(self) -> np.ndarray:
        """Cluster labels: the connected components of the pairs."""
        return clusters_from_pairs(self.n, self.i, self.j)


def clusters_from_pairs(n: int, a, b) -> np.ndarray:
    """Labels ``0..k-1`` of the connected components of the graph on ``n``
    mentions whose edges are the pairs ``(a[k], b[k])``; a mention in no pair
    is a singleton."""
    a = np.asarray(a, dtype=np.int64).ravel()
    b = np.asarray(b, dtype=np.int64).ravel()
    graph = coo_matrix((np.ones(len(a), dtype=np.int8), (a, b)), shape=(n, n))
    return connected_components(graph, directed=False)[1].astype(np.int64)


def compact_labels(labels) -> np.ndarray:
    """The same clustering with labels renumbered ``0..k-1``."""
    labels = np.asarray(labels).ravel()
    return np.unique(labels, return_inverse=True)[1].astype(np.int64).ravel()


def cluster_sizes(labels) -> np.ndarray:
    return np.bincount(compact_labels(labels))


def n_cluster_pairs(labels) -> int:
    """Number of unordered pairs of mentions inside the same cluster."""
    s = cluster_sizes(labels).astype(np.int64)
    return int(np.sum(s * (s - 1) // 2))


@dataclass(frozen=True)
class Contingency:
    """Non-zero cells of the table true cluster x predicted cluster."""

    n: int
    true_of_cell: np.ndarray     # true cluster of each cell
    pred_of_cell: np.ndarray     # predicted cluster of each cell
    count: np.ndarray            # mentions in the cell
    true_size: np.ndarray        # size of each true cluster
    pred_size: np.ndarray        # size of each predicted cluster


def contingency(predicted, truth) -> Contingency:
    """The contingency table of two clusterings of the same mentions."""
    p = compact_labels(predicted)
    t = compact_labels(truth)
    if p.shape != t.shape:
        raise ValueError(f"the clusterings cover {len(p)} and {len(t)} mentions")
    n_pred = int(p.max()) + 1 if p.size else 0
    cells, count = np.unique(t * np.int64(max(n_pred, 1)) + p, return_counts=True)
    return Contingency(
        n=len(p),
        true_of_cell=cells // max(n_pred, 1),
        pred_of_cell=cells % max(n_pred, 1),
        count=count.astype(np.int64),
        true_size=np.bincount(t).astype(np.int64),
        pred_size=np.bincount(p).astype(np.int64),
    )


# ------------------------------------------------------------------ pairwise


def _pair_total(x) -> int:
    return len(x) if isinstance(x, Pairs) else n_cluster_pairs(x)


def _size(x) -> int:
    return x.n if isinstance(x, Pairs) else len(np.asarray(x).ravel())


def _common_pairs(a, b) -> int:
    if isinstance(a, Pairs) and isinstance(b, Pairs):
        return int(np.intersect1d(a.keys, b.keys, assume_unique=True).size)
    if isinstance(a, Pairs) or isinstance(b, Pairs):
        pairs, labels = (a, b) if isinstance(a, Pairs) else (b, a)
        labels = np.asarray(labels).ravel()
        return int(np.count_nonzero(labels[pairs.i] == labels[pairs.j]))
    c = contingency(a, b)
    return int(np.sum(c.count * (c.count - 1) // 2))


def pair_counts(predicted, truth) -> tuple[int, int, int]:
    """``(common, predicted, true)`` numbers of unordered pairs; each side a
    :class:`Pairs` or a clustering (label array) of the same ``n`` mentions."""
    if _size(predicted) != _size(truth):
        raise ValueError(f"the two sides cover {_size(predicted)} and {_size(truth)} mentions")
    return _common_pairs(predicted, truth), _pair_total(predicted), _pair_total(truth)


def cluster_contributions(labels, gold) -> np.ndarray:
    """(3, gold clusters) array, clusters in ``np.unique(gold)`` order: each
    gold cluster's share of TP, predicted pairs and gold pairs (a predicted
    pair counted half for each of its two records' gold clusters), so that
    the columns sum to :func:`pair_counts` and resampling gold clusters
    resamples pairwise F1 (the ER bench's intervals, the merge-ranking
    learner's one-standard-error rule)."""
    gold = np.asarray(gold)
    labels = np.asarray(labels)
    g_codes, g = np.unique(gold, return_inverse=True)
    _, lab = np.unique(labels, return_inverse=True)
    key = lab.astype(np.int64) * len(g_codes) + g
    _, kinv, kcnt = np.unique(key, return_inverse=True, return_counts=True)
    first = np.zeros(len(kcnt), np.int64)
    first[kinv] = g                       # the gold cluster of each (predicted, gold) cell
    tp = np.bincount(first, weights=kcnt * (kcnt - 1) / 2.0, minlength=len(g_codes))
    psize = np.bincount(lab)[lab].astype(np.float64)
    pp = np.bincount(g, weights=(psize - 1.0) / 2.0, minlength=len(g_codes))
    gsize = np.bincount(g, minlength=len(g_codes)).astype(np.float64)
    return np.vstack([tp, pp, gsize * (gsize - 1.0) / 2.0])


def pairwise(predicted, truth) -> PRF:
    """Pairwise precision, recall and F1 (see :func:`pair_counts`)."""
    return prf_from_counts(*pair_counts(predicted, truth))


# ------------------------------------------------------------------ cluster metrics


def b_cubed(predicted, truth) -> PRF:
    """B-cubed precision, recall and F1 of two clusterings (label arrays)."""
    c = contingency(predicted, truth)
    if c.n == 0:
        return PRF(0.0, 0.0, 0.0)
    sq = c.count.astype(np.float64) ** 2
    p = float(np.sum(sq / c.pred_size[c.pred_of_cell])) / c.n
    r = float(np.sum(sq / c.true_size[c.true_of_cell])) / c.n
    return PRF(p, r, f1_of(p, r))


def muc(predicted, truth) -> PRF:
    """MUC link-based precision, recall and F1 of two clusterings."""
    c = contingency(predicted, truth)
    common = c.n - len(c.count)        # sum over clusters of |K| - |p(K)|, either way round
    p = ratio(common, c.n - len(c.pred_size))
    r = ratio(common, c.n - len(c.true_size))
    return PRF(p, r, f1_of(p, r))


def ceaf_e(predicted, truth, dense_limit: int = CEAF_DENSE_LIMIT) -> PRF:
    """Entity-based CEAF (phi4 similarity, optimal one-to-one alignment)."""
    c = contingency(predicted, truth)
    if c.n == 0:
        return PRF(0.0, 0.0, 0.0)
    total = _ceaf_alignment(c, dense_limit)
    p = total / len(c.pred_size)
    r = total / len(c.true_size)
    return PRF(p, r, f1_of(p, r))


def _ceaf_alignment(c: Contingency, dense_limit: int) -> float:
    """Largest total phi4 over one-to-one alignments of true and predicted clusters."""
    phi = 2.0 * c.count / (c.true_size[c.true_of_cell] + c.pred_size[c.pred_of_cell])
    n_true = len(c.true_size)
    # the overlap graph: true clusters 0..T-1, predicted T..T+P-1, one edge per cell
    graph = coo_matrix(
        (np.ones(len(phi), dtype=np.int8), (c.true_of_cell, n_true + c.pred_of_cell)),
        shape=(n_true + len(c.pred_size),) * 2,
    )
    n_comp, comp = connected_components(graph, directed=False)
    cell_comp = comp[c.true_of_cell]
    # a component with one cluster on either side (a star, e.g. one true
    # cluster cut into pieces) matches that cluster to its most similar partner
    star = (np.bincount(comp[:n_true], minlength=n_comp) == 1) | (np.bincount(comp[n_true:], minlength=n_comp) == 1)
    in_star = star[cell_comp]
    best = np.zeros(n_comp)
    np.maximum.at(best, cell_comp[in_star], phi[in_star])
    total = float(best.sum())
    rest = np.flatnonzero(~in_star)
    if rest.size == 0:
        return total
    order = rest[np.argsort(cell_comp[rest], kind="stable")]
    bounds = np.flatnonzero(np.diff(cell_comp[order])) + 1
    for cells in np.split(order, bounds):
        rows, ri = np.unique(c.true_of_cell[cells], return_inverse=True)
        cols, ci = np.unique(c.pred_of_cell[cells], return_inverse=True)
        total += _best_alignment(ri.ravel(), ci.ravel(), phi[cells], len(rows), len(cols), dense_limit)
    return total


def _best_alignment(ri: np.ndarray, ci: np.ndarray, phi: np.ndarray, n_rows: int, n_cols: int,
                    dense_limit: int) -> float:
    """Largest sum of ``phi`` over a matching of the bipartite graph given by
    its edges ``(ri, ci)``; unmatched nodes add 0."""
    if n_rows * n_cols <= dense_limit:
        sim = np.zeros((n_rows, n_cols))
        sim[ri, ci] = phi
        r, k = linear_sum_assignment(sim, maximize=True)
        return float(sim[r, k].sum())
    # sparse: every row may instead take a private dummy column at cost 2;
    # a real edge costs 2 - phi in [1, 2), so minimal cost = maximal sum of phi
    rows = np.r_[ri, np.arange(n_rows)]
    cols = np.r_[ci, n_cols + np.arange(n_rows)]
    cost = np.r_[2.0 - phi, np.full(n_rows, 2.0)]
    matrix = csr_matrix((cost, (rows, cols)), shape=(n_rows, n_cols + n_rows))
    r, k = min_weight_full_bipartite_matching(matrix)
    real = k < n_cols
    return float(np.sum(2.0 - np.asarray(matrix[r[real], k[real]]).ravel()))


def exact_clusters(predicted, truth) -> int:
    """Number of true clusters that are also predicted clusters (same members)."""
    c = contingency(predicted, truth)
    exact = (c.count == c.true_size[c.true_of_cell]) & (c.count == c.pred_size[c.pred_of_cell])
    return int(np.count_nonzero(exact))


def cluster_recall(predicted, truth) -> float:
    """Fraction of the true clusters output exactly (see the module docstring)."""
    n_true = len(np.unique(np.asarray(truth).ravel()))
    return ratio(exact_clusters(predicted, truth), n_true)


def cluster_precision(predicted, truth) -> float:
    """Fraction of the predicted clusters that are true clusters."""
    n_pred = len(np.unique(np.asarray(predicted).ravel()))
    return ratio(exact_clusters(predicted, truth), n_pred)


def coreference_scores(predicted, truth, predicted_pairs: Pairs | None = None,
                       true_pairs: Pairs | None = None) -> dict[str, float]:
    """Every metric of this module as a flat dict (``pairwise_precision``, ...,
    ``b3_f1``, ``muc_*``, ``ceafe_*``, ``cluster_recall``, ``cluster_precision``).
    ``predicted`` and ``truth`` are clusterings; the pairwise figures compare
    ``predicted_pairs`` / ``true_pairs`` when given (pair sets as given), else
    the clusterings; ``closure_pairwise_*`` always compare the clusterings
    (the pairs after transitive closure)."""
    out: dict[str, float] = {}
    common, n_pred, n_true = pair_counts(predicted if predicted_pairs is None else predicted_pairs,
                                         truth if true_pairs is None else true_pairs)
    figures = {
        "pairwise": prf_from_counts(common, n_pred, n_true),
        "b3": b_cubed(predicted, truth),
        "muc": muc(predicted, truth),
        "ceafe": ceaf_e(predicted, truth),
    }
    if predicted_pairs is None and true_pairs is None:
        figures["closure_pairwise"] = figures["pairwise"]
    else:
        figures["closure_pairwise"] = pairwise(predicted, truth)
    for name, prf in figures.items():
        out[f"{name}_precision"], out[f"{name}_recall"], out[f"{name}_f1"] = prf
    exact = exact_clusters(predicted, truth)
    n_true_clusters = len(np.unique(np.asarray(truth).ravel()))
    n_pred_clusters = len(np.unique(np.asarray(predicted).ravel()))
    out.update(pairs_common=common, pairs_predicted=n_pred, pairs_true=n_true,
               cluster_recall=ratio(exact, n_true_clusters), cluster_precision=ratio(exact, n_pred_clusters),
               clusters_exact=exact)
    return out


# ------------------------------------------------------------------ coreference reports


def _drop_singletons(labels: np.ndarray) -> np.ndarray:
    """The labels with every cluster of one mention replaced by -1 (absent)."""
    lab = compact_labels(labels)
    sizes = np.bincount(lab)
    out = lab.copy()
    out[sizes[lab] == 1] = -1
    return out


def _partial_scores(pred: np.ndarray, key: np.ndarray) -> dict[str, PRF]:
    """MUC, B-cubed and CEAF-e when some mentions are absent from a side
    (label -1): a mention missing on one side scores 0 there (the CoNLL
    scorer's convention with singletons removed)."""
    in_p, in_k = pred >= 0, key >= 0
    p_lab = compact_labels(pred[in_p]) if in_p.any() else np.zeros(0, np.int64)
    k_lab = compact_labels(key[in_k]) if in_k.any() else np.zeros(0, np.int64)
    p_size = np.bincount(p_lab).astype(np.int64)
    k_size = np.bincount(k_lab).astype(np.int64)
    pfull = np.full(len(pred), -1, np.int64)
    kfull = np.full(len(key), -1, np.int64)
    pfull[in_p] = p_lab
    kfull[in_k] = k_lab
    both = in_p & in_k
    cells, count = np.unique(kfull[both] * np.int64(max(len(p_size), 1)) + pfull[both], return_counts=True)
    t_of = cells // max(len(p_size), 1)
    p_of = cells % max(len(p_size), 1)
    # B-cubed
    sq = count.astype(np.float64) ** 2
    bp = ratio(float(np.sum(sq / p_size[p_of])), int(in_p.sum()))
    br = ratio(float(np.sum(sq / k_size[t_of])), int(in_k.sum()))
    # MUC: per key cluster, |K| - parts (a mention absent from the response is a part of its own)
    k_parts = np.bincount(t_of, minlength=len(k_size)) + (k_size - np.bincount(t_of, weights=count,
                                                                             minlength=len(k_size)).astype(np.int64))
    p_parts = np.bincount(p_of, minlength=len(p_size)) + (p_size - np.bincount(p_of, weights=count,
                                                                             minlength=len(p_size)).astype(np.int64))
    mr = ratio(int(np.sum(k_size - k_parts)), int(np.sum(k_size - 1)))
    mp = ratio(int(np.sum(p_size - p_parts)), int(np.sum(p_size - 1)))
    # CEAF-e
    if len(cells):
        c = Contingency(n=int(both.sum()), true_of_cell=t_of, pred_of_cell=p_of, count=count.astype(np.int64),
                        true_size=k_size, pred_size=p_size)
        total = _ceaf_alignment(c, CEAF_DENSE_LIMIT)
    else:
        total = 0.0
    cp = ratio(total, len(p_size))
    cr = ratio(total, len(k_size))
    return {"muc": PRF(mp, mr, f1_of(mp, mr)), "b3": PRF(bp, br, f1_of(bp, br)),
            "ceafe": PRF(cp, cr, f1_of(cp, cr))}


def coref_report(predicted, truth, documents=None, singletons: bool = True) -> dict[str, float]:
    """The figures of a coreference evaluation as a flat dict: ``muc_*``,
    ``b3_*``, ``ceafe_*`` (precision, recall, f1), ``conll_f1`` (the mean of
    the three F1), ``pairwise_*`` and, with ``documents`` (the document of
    each mention, any labels), ``cluster_count_mae``: the mean over
    documents of the absolute difference between the numbers of predicted
    and true clusters (Poon's Table 4.6), with ``gold_clusters_per_doc``.
    ``singletons=False`` drops the clusters of one mention from each side
    separately first (MUC is unchanged; B-cubed and CEAF-e then compare
    different mention sets)."""
    pred = compact_labels(predicted)
    key = compact_labels(truth)
    if len(pred) != len(key):
        raise ValueError(f"the clusterings cover {len(pred)} and {len(key)} mentions")
    if singletons:
        figs = {"muc": muc(pred, key), "b3": b_cubed(pred, key), "ceafe": ceaf_e(pred, key)}
    else:
        figs = _partial_scores(_drop_singletons(pred), _drop_singletons(key))
    figs["pairwise"] = pairwise(pred, key)
    out: dict[str, float] = {}
    for name, prf in figs.items():
        out[f"{name}_precision"], out[f"{name}_recall"], out[f"{name}_f1"] = (float(x) for x in prf)
    out["conll_f1"] = (out["muc_f1"] + out["b3_f1"] + out["ceafe_f1"]) / 3.0
    out["mentions"] = int(len(pred))
    out["true_clusters"] = int(len(np.unique(key)))
    out["predicted_clusters"] = int(len(np.unique(pred)))
    if documents is not None:
        docs = compact_labels(np.asarray(documents))
        if len(docs) != len(pred):
            raise ValueError("one document per mention is needed")
        n_docs = int(docs.max()) + 1 if len(docs) else 0
        pc = np.bincount(docs[np.unique(pred, return_index=True)[1]], minlength=n_docs)
        kc = np.bincount(docs[np.unique(key, return_index=True)[1]], minlength=n_docs)
        out["cluster_count_mae"] = float(np.mean(np.abs(pc - kc))) if n_docs else 0.0
        out["gold_clusters_per_doc"] = float(np.mean(kc)) if n_docs else 0.0
        out["documents"] = n_docs
    return out
