"""A partition of a ground network's atoms from its structure (SGMP's
automatic partition, :mod:`.sgmp`).

The graph
    Atoms are nodes; each ground clause and each exactly-one block of two or
    more distinct atoms is a hyperedge, read as a clique whose pairs weigh
    ``1 / (size - 1)`` (so that every hyperedge adds 1 to the degree of each
    of its atoms, whatever its size). Weights are ignored: the partition is
    of the structure. The adjacency matrix ``A = H W H^T - diag`` (``H`` the
    atom-by-hyperedge incidence matrix) is never formed: products with it
    are two sparse products, so a block of 1,000 atoms costs 1,000 entries,
    not a million.

Splitting
    1. Connected components (``scipy.sparse.csgraph``). Components of fewer
       than ``min_size`` atoms go into one group (they do not interact, so
       grouping them costs nothing and saves clusters).
    2. Each larger component is split by recursive bisection with the
       leading eigenvector of the generalised modularity matrix (Newman,
       "Modularity and community structure in networks", PNAS 2006): the
       eigenvector of ``B^(g)`` for the largest eigenvalue (``eigsh`` on a
       linear operator) gives the two sides by sign; a few vectorised rounds
       of moves then refine the split (each round moves the atoms whose move
       raises the modularity most, a quarter of the improving atoms at
       most, and is undone if the modularity fell). A part is split only if
       both sides keep ``min_size`` atoms, the modularity rises and at most
       ``max_cut`` of the hyperedges inside the part cross the split (a
       random, unstructured network always has some positive-modularity
       split; the cut bound keeps such networks whole, one cluster, where
       SGMP is a restarted WalkSAT).
    3. If the parts leave more than ``max_separator`` (0.6) of the atoms
       in hyperedges that span parts, the splits of step 2 are dropped (one
       group per large component): such parts are not weakly linked, and
       message passing over separators holding most atoms loses to WalkSAT
       on the whole. On tuffy/cse (4,624 advisedBy atoms) step 2 gives 68
       parts (one per person) with 99 % of the atoms in spanning clauses
       and a complete cluster graph: SGMP reached cost 2,813-2,816 in 10 s
       against 2,793 with one cluster and MaxWalkSAT's 2,791 (seed 0, one
       run each). The planted clusters of bench/workloads/sgmp.py leave
       21-49 % of the atoms in spanning clauses (6 seeds; 45-49 % at 300
       variables and 6 clusters). The threshold sits between these two
       measured cases; it is a heuristic, not a derived bound.

The result is an int64 group per atom, numbered from 0; atoms in no
hyperedge join the group of small components.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

MIN_SIZE = 8
MAX_CUT = 0.2
MAX_SEPARATOR = 0.6


def incidence(n_atoms: int, start: np.ndarray, members: np.ndarray,
              bstart: np.ndarray | None = None, bmembers: np.ndarray | None = None) -> sp.csr_matrix:
    """The atom-by-hyperedge incidence matrix (0/1, one column per clause or
    block of two or more distinct atoms) from CSR hyperedge lists."""
    cols, rows = [], []
    for st, mem in ((start, members), (bstart, bmembers)):
        if st is None or len(st) < 2:
            continue
        sizes = np.diff(st)
        edge = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
        offset = sum(len(c) and int(c.max()) + 1 for c in cols)
        cols.append(edge + offset)
        rows.append(np.asarray(mem, dtype=np.int64))
    if not cols:
        return sp.csr_matrix((n_atoms, 0))
    col = np.concatenate(cols)
    row = np.concatenate(rows)
    n_edges = int(col.max()) + 1 if len(col) else 0
    H = sp.csr_matrix((np.ones(len(col)), (row, col)), shape=(n_atoms, n_edges))
    H.data[:] = 1.0                      # an atom twice in a clause counts once
    H = H.tocsc()
    keep = np.flatnonzero(np.diff(H.indptr) >= 2)
    return H[:, keep].tocsr()


class _Graph:
    """Products with the clique expansion of ``H`` and its modularity
    matrix."""

    def __init__(self, H: sp.csr_matrix) -> None:
        self.H = H
        size = np.asarray(H.sum(axis=0)).ravel()
        self.w = 1.0 / np.maximum(size - 1.0, 1.0)
        self.k = np.asarray(H.sum(axis=1)).ravel()            # degree: hyperedges per atom
        self.two_m = float(self.k.sum())
        self.self_loop = H @ self.w                              # the diagonal of H W H^T

    @staticmethod
    def adj(Hg: sp.csr_matrix, wg: np.ndarray, sl: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``A_gg x`` for the rows ``Hg`` of ``H`` restricted to the
        hyperedges they touch (weights ``wg``; ``sl``: their diagonal)."""
        return Hg @ (wg * (Hg.T @ x)) - sl * x


def _modularity_matvec(graph: _Graph, Hg, wg, sl, kg, rowsum):
    two_m = graph.two_m

    def mv(x):
        x = np.asarray(x).reshape(-1)
        # (a * b).sum(), not a @ b: a BLAS dot per product spun threads on a loaded machine (7x slower)
        return graph.adj(Hg, wg, sl, x) - kg * ((kg * x).sum() / two_m) - rowsum * x
    return mv


def _bisect(graph: _Graph, nodes: np.ndarray, min_size: int, max_cut: float, rng) -> np.ndarray | None:
    """A split of ``nodes`` (bool side per node) or None if it should stay
    whole."""
    n = len(nodes)
    if n < 2 * min_size:
        return None
    Hg = graph.H[nodes]
    # only the hyperedges the part touches (a matvec then costs the part's size, not the network's)
    touched = np.unique(Hg.indices)
    Hg = Hg[:, touched]
    wg = graph.w[touched]
    # hyperedges inside the part: at least two of its atoms in it
    inside = np.asarray(Hg.sum(axis=0)).ravel() >= 2
    n_inside = int(inside.sum())
    if n_inside == 0:
        return None
    sl = graph.self_loop[nodes]
    kg = graph.k[nodes]
    rowsum = graph.adj(Hg, wg, sl, np.ones(n)) - kg * kg.sum() / graph.two_m
    mv = _modularity_matvec(graph, Hg, wg, sl, kg, rowsum)
    if n <= 60:
        B = np.column_stack([mv(e) for e in np.eye(n)])
        vals, vecs = np.linalg.eigh((B + B.T) / 2)
        lead = vecs[:, -1]
        top = vals[-1]
    else:
        op = LinearOperator((n, n), matvec=mv, dtype=np.float64)
        try:
            vals, vecs = eigsh(op, k=1, which="LA", tol=1e-4, maxiter=20 * n,
                               v0=rng.standard_normal(n))
        except ArpackNoConvergence as e:
            if len(e.eigenvalues) == 0:
                return None
            vals, vecs = e.eigenvalues, e.eigenvectors
        lead = vecs[:, 0]
        top = vals[0]
    if top <= 1e-9:
        return None
    s = np.where(lead >= 0, 1.0, -1.0)
    q = float((s * mv(s)).sum())
    # refine: move the atoms that raise s^T B s the most (a vectorised Kernighan-Lin)
    diag = -rowsum - kg * kg / graph.two_m                # B_ii (A has no self loops)
    for _ in range(30):
        Bs = mv(s)
        gain = -4.0 * s * Bs + 4.0 * diag                # change of s^T B s when atom i moves alone
        order = np.argsort(-gain)
        pos = int((gain > 1e-12).sum())
        if pos == 0:
            break
        take = order[: max(1, pos // 4)]
        s2 = s.copy()
        s2[take] = -s2[take]
        q2 = float((s2 * mv(s2)).sum())
        if q2 <= q + 1e-12:
            take = order[:1]
            s2 = s.copy()
            s2[take] = -s2[take]
            q2 = float((s2 * mv(s2)).sum())
            if q2 <= q + 1e-12:
                break
        s, q = s2, q2
    side = s > 0
    if q <= 1e-9 or min(int(side.sum()), int((~side).sum())) < min_size:
        return None
    # the cut: hyperedges inside the part with atoms on both sides
    a = np.asarray(Hg[side].sum(axis=0)).ravel()
    b = np.asarray(Hg[~side].sum(axis=0)).ravel()
    cut = int((inside & (a > 0) & (b > 0)).sum())
    if cut > max_cut * n_inside:
        return None
    return side


def blas_single_thread():
    """A context that keeps BLAS to one thread (``threadpoolctl``): ARPACK's
    level-1/2 calls on vectors of the part's size are too small to share, and
    a threaded BLAS's workers spin on a loaded machine — measured in
    ``bench/graph_partition_threads.py``. A no-op without threadpoolctl."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:             # pragma: no cover - a dependency, but never required for correctness
        from contextlib import nullcontext

        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def graph_partition(H: sp.csr_matrix, min_size: int = MIN_SIZE, max_cut: float = MAX_CUT,
                    seed: int = 0, max_separator: float = MAX_SEPARATOR, blas_threads: int | None = 1) -> np.ndarray:
    """A group per atom (int64, from 0) from the incidence matrix ``H`` (see
    the module docstring); ``blas_threads`` 1 keeps BLAS to one thread while
    it runs (None: leave BLAS as it is)."""
    if blas_threads == 1:
        with blas_single_thread():
            return _graph_partition(H, min_size, max_cut, seed, max_separator)
    return _graph_partition(H, min_size, max_cut, seed, max_separator)


def _graph_partition(H, min_size, max_cut, seed, max_separator) -> np.ndarray:
    n = H.shape[0]
    group = np.zeros(n, np.int64)
    if n == 0:
        return group
    rng = np.random.default_rng(seed)
    graph = _Graph(H)
    # components of the bipartite atom-hyperedge graph (H H^T could be quadratic in a long clause or block)
    e = H.shape[1]
    G = sp.bmat([[None, H], [H.T, None]], format="csr") if e else sp.csr_matrix((n, n))
    _, comp = connected_components(G, directed=False)
    comp = comp[:n]
    _, comp = np.unique(comp, return_inverse=True)
    sizes = np.bincount(comp)
    big = np.flatnonzero(sizes >= min_size)
    parts = []
    small = ~np.isin(comp, big)
    if small.any():
        parts.append(np.flatnonzero(small))
    order = np.argsort(comp, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    todo = [order[bounds[c]:bounds[c + 1]] for c in big]
    while todo:
        nodes = todo.pop()
        side = _bisect(graph, nodes, min_size, max_cut, rng)
        if side is None:
            parts.append(nodes)
        else:
            todo.append(nodes[side])
            todo.append(nodes[~side])
    parts.sort(key=lambda p: int(p.min()))
    for g, p in enumerate(parts):
        group[p] = g
    if separator_share(H, group) > max_separator:
        # most atoms would sit on a separator: no weakly linked clusters, one group per component
        group = np.where(small, 0, np.searchsorted(big, comp) + int(small.any())).astype(np.int64)
    return group


def separator_share(H: sp.csr_matrix, group: np.ndarray) -> float:
    """The fraction of atoms in a hyperedge whose atoms are in more than one
    group (the atoms SGMP's separators hold)."""
    if H.shape[0] == 0 or H.shape[1] == 0:
        return 0.0
    C = H.tocsc()
    g = group[C.indices].astype(np.float64)
    lo = np.minimum.reduceat(g, C.indptr[:-1])
    hi = np.maximum.reduceat(g, C.indptr[:-1])
    spans = (hi > lo).astype(np.float64)
    return float(((H @ spans) > 0).mean())
