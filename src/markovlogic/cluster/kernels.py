"""numba kernels over a clustering: cluster statistics, score deltas of
merge / split / move, and their application.

The model (``ModelArrays``) describes pair *quantities* ``q`` (a pair
feature's count, or the indicator of a pair relation used by a set-level
feature) over unordered pairs of distinct mentions:

* a symmetric sparse part in CSR form: ``vals[k, c]`` is the value of column
  ``c`` for the pair (row, ``indices[k]``); column ``c`` adds into quantity
  ``col_q[c]``;
* low-rank terms ``coef * (u[a] v[b] + u[b] v[a])`` adding into ``lr_q[r]``;
* numeric quantities ``m`` (a similarity) with a value column ``num_col[m]``
  whose maximum and minimum over a cluster's listed pairs are tracked
  (unlisted pairs have the value 0);
* set-level features ``j`` of kind ``sf_kind[j]`` over a quantity, a numeric
  quantity or an attribute (see ``setfeatures.py`` for the kinds).

The score of a clustering is ``sum_q w_q * sum_C within_q(C) + sum_j wsf_j *
sum_C phi_j(C)``. The state (``StateArrays``) keeps, per cluster, what makes
deltas cheap: size, member lists, low-rank sums, within sums of the sparse
part, the numeric maxima/minima and the distinct counts of attributes.
Cluster ids are recycled through a free list; ``active`` and ``multi`` list
the live clusters and those with two members or more, for O(1) sampling.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

# set-level feature kinds
SF_ALL, SF_SOME, SF_MOST, SF_MOST_NOT, SF_MAX, SF_MIN, SF_SIZE, SF_DISTINCT, SF_COUNT = range(9)
# comparison operators of thresholded features (OP_NONE: the value itself)
OP_NONE, OP_EQ, OP_LT, OP_GT, OP_LE, OP_GE, OP_NE = range(7)
# linkage features: aggregates over the cross pairs of a merge (see setfeatures.py)
LK_SUM, LK_MAX, LK_MIN, LK_MEAN, LK_FRAC, LK_COUNT = range(6)


class ModelArrays(NamedTuple):
    n: int
    indptr: np.ndarray       # int64[n+1]
    indices: np.ndarray      # int32[nnz]
    vals: np.ndarray         # float64[nnz, S]
    col_q: np.ndarray        # int64[S]
    lr_q: np.ndarray         # int64[R]
    lr_coef: np.ndarray      # float64[R]
    lr_u: np.ndarray         # float64[R, n]
    lr_v: np.ndarray         # float64[R, n]
    n_q: int
    w_q: np.ndarray          # float64[Q]
    num_col: np.ndarray      # int64[M]: value column of numeric quantity m
    num_listed_q: np.ndarray  # int64[M]: quantity counting the listed pairs of m
    sf_kind: np.ndarray      # int64[J]
    sf_arg: np.ndarray       # int64[J]: quantity, numeric quantity or attribute
    sf_op: np.ndarray        # int64[J]
    sf_thr: np.ndarray       # float64[J]
    w_sf: np.ndarray         # float64[J]
    attr_indptr: np.ndarray  # int64[A, n+1]: offsets into attr_vals
    attr_vals: np.ndarray    # int64[...]: value ids
    attr_nval: np.ndarray    # int64[A]
    hard_cannot_q: int       # quantity counting co-clustered cannot-link pairs (-1: none)
    hard_must_q: int         # quantity counting co-clustered must-link pairs (-1: none)
    must_total: float        # number of must-link pairs
    lk_kind: np.ndarray      # int64[K]: linkage feature kinds (LK_*)
    lk_col: np.ndarray       # int64[K]: value column of the aggregated term (-1: 1 per candidate pair; -2: 0)
    lk_neg: np.ndarray       # int64[K]: 1 when fraction/count take the condition's complement
    w_lk: np.ndarray         # float64[K]
    cand_col: int            # indicator column of the candidate pairs (-1: every linked pair is one)


class StateArrays(NamedTuple):
    label: np.ndarray        # int64[n]
    nxt: np.ndarray          # int64[n]: next member (-1 at the end)
    prv: np.ndarray          # int64[n]
    head: np.ndarray         # int64[n]: first member of cluster id (-1: free)
    size: np.ndarray         # int64[n]
    active: np.ndarray       # int64[n]: live cluster ids (first n_active)
    active_pos: np.ndarray   # int64[n]
    multi: np.ndarray        # int64[n]: cluster ids with size >= 2 (first n_multi)
    multi_pos: np.ndarray    # int64[n] (-1: not listed)
    free: np.ndarray         # int64[n]: free cluster ids (first n_free)
    counts: np.ndarray       # int64[3]: n_active, n_multi, n_free
    su: np.ndarray           # float64[R, n]
    sv: np.ndarray           # float64[R, n]
    suv: np.ndarray          # float64[R, n]
    w: np.ndarray            # float64[Q, n]: within sums of the sparse part
    mx: np.ndarray           # float64[M, n]: max over listed within pairs (-inf: none)
    mn: np.ndarray           # float64[M, n]: min over listed within pairs (+inf: none)
    dist: np.ndarray         # float64[A, n]: distinct attribute values per cluster
    marker: np.ndarray       # int64[max_nval]: scratch stamps for distinct counts
    stamp: np.ndarray        # int64[1]
    side: np.ndarray         # int64[n]: scratch for splits
    buf: np.ndarray          # int64[n]: scratch member list


# ---------------------------------------------------------------- small helpers

@nb.njit(cache=True, inline="always")
def _compare(op, a, b):
    if op == OP_EQ:
        return 1.0 if a == b else 0.0
    if op == OP_LT:
        return 1.0 if a < b else 0.0
    if op == OP_GT:
        return 1.0 if a > b else 0.0
    if op == OP_LE:
        return 1.0 if a <= b else 0.0
    if op == OP_GE:
        return 1.0 if a >= b else 0.0
    if op == OP_NE:
        return 1.0 if a != b else 0.0
    return a


@nb.njit(cache=True)
def phi(md, j, size, wq, mx, mn, dist):
    """Value of set-level feature ``j`` on a cluster with the given summary:
    ``wq`` total within sums per quantity, ``mx``/``mn`` per numeric quantity
    (over listed pairs), ``dist`` distinct counts per attribute."""
    kind = md.sf_kind[j]
    arg = md.sf_arg[j]
    if kind == SF_SIZE:
        return _compare(md.sf_op[j], float(size), md.sf_thr[j])
    if kind == SF_DISTINCT:
        return _compare(md.sf_op[j], dist[arg], md.sf_thr[j])
    if size < 2:
        return 0.0
    total = float(size) * float(size - 1)   # ordered pairs
    if kind == SF_ALL:
        return 1.0 if wq[arg] >= total - 1e-9 else 0.0
    if kind == SF_SOME:
        return 1.0 if wq[arg] > 1e-9 else 0.0
    if kind == SF_MOST:
        return 1.0 if wq[arg] > 0.5 * total + 1e-9 else 0.0
    if kind == SF_MOST_NOT:
        return 1.0 if wq[arg] < 0.5 * total - 1e-9 else 0.0
    if kind == SF_COUNT:
        return _compare(md.sf_op[j], wq[arg], md.sf_thr[j])
    listed = wq[md.num_listed_q[arg]]
    unlisted = listed < total - 1e-9      # listed counts ordered pairs (2 per listed pair)
    if kind == SF_MAX:
        v = mx[arg]
        if unlisted and not v >= 0.0:
            v = 0.0
        elif unlisted:
            v = max(v, 0.0)
        return _compare(md.sf_op[j], v, md.sf_thr[j])
    if kind == SF_MIN:
        v = mn[arg]
        if unlisted:
            v = min(v, 0.0) if v < np.inf else 0.0
        return _compare(md.sf_op[j], v, md.sf_thr[j])
    return 0.0


@nb.njit(cache=True, inline="always", no_cpython_wrapper=True)
def cluster_within(md, st, c, wq):
    """Within sums per quantity of cluster ``c`` over its ordered pairs of
    distinct members: the sparse part kept in the state plus the low-rank
    terms ``coef * (sum u * sum v - sum u*v)``."""
    for q in range(md.n_q):
        wq[q] = st.w[q, c]
    for r in range(len(md.lr_q)):
        wq[md.lr_q[r]] += md.lr_coef[r] * (st.su[r, c] * st.sv[r, c] - st.suv[r, c])


@nb.njit(cache=True, no_cpython_wrapper=True)
def cluster_phi_sum(md, st, c, wq):
    """sum_j w_sf[j] * phi_j(c)."""
    if len(md.sf_kind) == 0:
        return 0.0
    cluster_within(md, st, c, wq)
    s = 0.0
    for j in range(len(md.sf_kind)):
        s += md.w_sf[j] * phi(md, j, st.size[c], wq, st.mx[:, c], st.mn[:, c], st.dist[:, c])
    return s


# ---------------------------------------------------------------- membership

@nb.njit(cache=True, inline="always", no_cpython_wrapper=True)
def _list_add(arr, pos, k, c):
    pos[c] = k
    arr[k] = c


@nb.njit(cache=True, inline="always", no_cpython_wrapper=True)
def _list_remove(arr, pos, counts, which, c):
    k = pos[c]
    last = counts[which] - 1
    moved = arr[last]
    arr[k] = moved
    pos[moved] = k
    pos[c] = -1
    counts[which] = last


@nb.njit(cache=True, inline="always", no_cpython_wrapper=True)
def _set_multi(st, c):
    """Keep ``multi`` in step with the size of cluster ``c``."""
    listed = st.multi_pos[c] >= 0
    if st.size[c] >= 2 and not listed:
        _list_add(st.multi, st.multi_pos, st.counts[1], c)
        st.counts[1] += 1
    elif st.size[c] < 2 and listed:
        _list_remove(st.multi, st.multi_pos, st.counts, 1, c)


@nb.njit(cache=True, inline="always", no_cpython_wrapper=True)
def _new_cluster(st):
    st.counts[2] -= 1
    c = st.free[st.counts[2]]
    _list_add(st.active, st.active_pos, st.counts[0], c)
    st.counts[0] += 1
    st.head[c] = -1
    st.size[c] = 0
    return c


@nb.njit(cache=True, inline="always", no_cpython_wrapper=True)
def _free_cluster(st, c):
    _list_remove(st.active, st.active_pos, st.counts, 0, c)
    if st.multi_pos[c] >= 0:
        _list_remove(st.multi, st.multi_pos, st.counts, 1, c)
    st.head[c] = -1
    st.size[c] = 0
    st.free[st.counts[2]] = c
    st.counts[2] += 1


@nb.njit(cache=True, inline="always", no_cpython_wrapper=True)
def _link(st, i, c):
    st.label[i] = c
    h = st.head[c]
    st.nxt[i] = h
    st.prv[i] = -1
    if h >= 0:
        st.prv[h] = i
    st.head[c] = i
    st.size[c] += 1


@nb.njit(cache=True, inline="always", no_cpython_wrapper=True)
def _unlink(st, i):
    c = st.label[i]
    p = st.prv[i]
    q = st.nxt[i]
    if p >= 0:
        st.nxt[p] = q
    else:
        st.head[c] = q
    if q >= 0:
        st.prv[q] = p
    st.size[c] -= 1


@nb.njit(cache=True, inline="always")
def members(st, c, out):
    """Write the members of cluster ``c`` to ``out``; return their number."""
    k = 0
    i = st.head[c]
    while i >= 0:
        out[k] = i
        k += 1
        i = st.nxt[i]
    return k


# ---------------------------------------------------------------- statistics from scratch

@nb.njit(cache=True, inline="always", no_cpython_wrapper=True)
def _distinct(md, st, a, mem, k):
    """Distinct values of attribute ``a`` over mentions ``mem[:k]``."""
    st.stamp[0] += 1
    s = st.stamp[0]
    d = 0
    for t in range(k):
        i = mem[t]
        for p in range(md.attr_indptr[a, i], md.attr_indptr[a, i + 1]):
            v = md.attr_vals[p]
            if st.marker[v] != s:
                st.marker[v] = s
                d += 1
    return float(d)


@nb.njit(cache=True, no_cpython_wrapper=True)
def recompute_cluster(md, st, c):
    """Rebuild every statistic of cluster ``c`` from its members."""
    k = members(st, c, st.buf)
    R = len(md.lr_q)
    for r in range(R):
        a = 0.0
        b = 0.0
        ab = 0.0
        for t in range(k):
            i = st.buf[t]
            a += md.lr_u[r, i]
            b += md.lr_v[r, i]
            ab += md.lr_u[r, i] * md.lr_v[r, i]
        st.su[r, c] = a
        st.sv[r, c] = b
        st.suv[r, c] = ab
    for q in range(md.n_q):
        st.w[q, c] = 0.0
    for m in range(len(md.num_col)):
        st.mx[m, c] = -np.inf
        st.mn[m, c] = np.inf
    S = md.vals.shape[1]
    for t in range(k):
        i = st.buf[t]
        for p in range(md.indptr[i], md.indptr[i + 1]):
            j = md.indices[p]
            if j <= i or st.label[j] != c:
                continue
            for col in range(S):
                st.w[md.col_q[col], c] += md.vals[p, col]
            for m in range(len(md.num_col)):
                v = md.vals[p, md.num_col[m]]
                if v > st.mx[m, c]:
                    st.mx[m, c] = v
                if v < st.mn[m, c]:
                    st.mn[m, c] = v
    for a in range(len(md.attr_nval)):
        st.dist[a, c] = _distinct(md, st, a, st.buf, k)


@nb.njit(cache=True)
def init_state(md, st, labels):
    """Set the state to the clustering ``labels`` (any non-negative ints)."""
    n = md.n
    for c in range(n):
        st.head[c] = -1
        st.size[c] = 0
        st.multi_pos[c] = -1
        st.active_pos[c] = -1
        st.free[c] = n - 1 - c
    st.counts[0] = 0
    st.counts[1] = 0
    st.counts[2] = n
    remap = np.full(max(n, labels.max() + 1 if n > 0 else 1), -1, np.int64)
    for i in range(n):
        l = labels[i]
        if remap[l] < 0:
            remap[l] = _new_cluster(st)
        _link(st, i, remap[l])
    for t in range(st.counts[0]):
        c = st.active[t]
        _set_multi(st, c)
        recompute_cluster(md, st, c)


@nb.njit(cache=True)
def total_score(md, st, wq):
    s = 0.0
    for t in range(st.counts[0]):
        c = st.active[t]
        cluster_within(md, st, c, wq)
        for q in range(md.n_q):
            s += md.w_q[q] * wq[q]
        for j in range(len(md.sf_kind)):
            s += md.w_sf[j] * phi(md, j, st.size[c], wq, st.mx[:, c], st.mn[:, c], st.dist[:, c])
    return s


@nb.njit(cache=True)
def feature_vector(md, st, wq, out):
    """Feature values: ``out[:Q]`` the within sums of each quantity (over
    ordered pairs of co-clustered mentions), ``out[Q:]`` the sums over clusters
    of each set-level feature."""
    for k in range(len(out)):
        out[k] = 0.0
    Q = md.n_q
    for t in range(st.counts[0]):
        c = st.active[t]
        cluster_within(md, st, c, wq)
        for q in range(Q):
            out[q] += wq[q]
        for j in range(len(md.sf_kind)):
            out[Q + j] += phi(md, j, st.size[c], wq, st.mx[:, c], st.mn[:, c], st.dist[:, c])


# ---------------------------------------------------------------- deltas
#
# A proposal's effect is computed into a scratch ``Summary`` of up to three
# clusters (slot 0 and 1: the clusters after the move, slot 2: spare), then
# applied when accepted. Sparse within sums ``w`` exclude the low-rank part,
# which is rebuilt from ``su/sv/suv``.

class Scratch(NamedTuple):
    size: np.ndarray     # int64[3]
    su: np.ndarray       # float64[R, 3]
    sv: np.ndarray
    suv: np.ndarray
    w: np.ndarray        # float64[Q, 3]
    mx: np.ndarray       # float64[M, 3]
    mn: np.ndarray
    dist: np.ndarray     # float64[A, 3]
    cs: np.ndarray       # float64[Q]: sparse cross sums
    cq: np.ndarray       # float64[Q]: total cross sums (sparse + low-rank)
    cmx: np.ndarray      # float64[M]
    cmn: np.ndarray
    wq: np.ndarray       # float64[Q]: work array for within sums
    out: np.ndarray      # float64[4]: edge weights etc.
    dphi: np.ndarray     # float64[Q + J + K]: feature change of the last proposal evaluated
    lk: np.ndarray       # float64[K, 2, 3]: per linkage feature and cross-pair set: sum, max, min
    lkn: np.ndarray      # float64[2]: candidate cross pairs of each set


def make_scratch(md: ModelArrays) -> Scratch:
    R, Q, M, A = len(md.lr_q), md.n_q, len(md.num_col), len(md.attr_nval)
    K = len(md.lk_kind)
    return Scratch(
        np.zeros(3, np.int64), np.zeros((R, 3)), np.zeros((R, 3)), np.zeros((R, 3)),
        np.zeros((Q, 3)), np.full((M, 3), -np.inf), np.full((M, 3), np.inf), np.zeros((A, 3)),
        np.zeros(Q), np.zeros(Q), np.full(M, -np.inf), np.full(M, np.inf), np.zeros(Q), np.zeros(4),
        np.zeros(Q + len(md.sf_kind) + K), np.zeros((K, 2, 3)), np.zeros(2),
    )


# ---------------------------------------------------------------- linkage features
#
# A linkage feature scores a merge by an aggregate over the *cross pairs* of
# the two clusters it joins (the pairs with one member in each): the sum, max,
# min or mean of a pair term (the pair layer's score, a similarity) over the
# candidate cross pairs, or the fraction / number of cross pairs satisfying a
# condition. A split scores minus the merge of its two parts; a move of ``i``
# from ``A`` to ``B`` scores the merge of ``{i}`` with ``B`` minus that of
# ``{i}`` with ``A \ {i}``. They are features of the change, not of a
# clustering (Factorie's templates score diffs): merge-based search and its
# learner use them; a clustering's probability does not.


@nb.njit(cache=True, inline="always")
def _lk_reset(md, sc, slot):
    for k in range(len(md.lk_kind)):
        sc.lk[k, slot, 0] = 0.0
        sc.lk[k, slot, 1] = -np.inf
        sc.lk[k, slot, 2] = np.inf
    sc.lkn[slot] = 0.0


@nb.njit(cache=True, inline="always")
def _lk_add(md, sc, slot, p):
    """Add the linked pair at CSR entry ``p`` to cross-pair set ``slot``."""
    if md.cand_col >= 0 and md.vals[p, md.cand_col] <= 0.0:
        return
    sc.lkn[slot] += 1.0
    for k in range(len(md.lk_kind)):
        c = md.lk_col[k]
        v = 1.0 if c == -1 else (md.vals[p, c] if c >= 0 else 0.0)
        sc.lk[k, slot, 0] += v
        if v > sc.lk[k, slot, 1]:
            sc.lk[k, slot, 1] = v
        if v < sc.lk[k, slot, 2]:
            sc.lk[k, slot, 2] = v


@nb.njit(cache=True, no_cpython_wrapper=True)
def lk_value(md, sc, slot, k, ncross):
    """Value of linkage feature ``k`` on cross-pair set ``slot`` of ``ncross`` pairs."""
    kind = md.lk_kind[k]
    cnt = sc.lkn[slot]
    total = sc.lk[k, slot, 0]
    if kind == LK_SUM:
        return total
    if kind == LK_MAX:
        return sc.lk[k, slot, 1] if cnt > 0 else 0.0
    if kind == LK_MIN:
        return sc.lk[k, slot, 2] if cnt > 0 else 0.0
    if kind == LK_MEAN:
        return total / cnt if cnt > 0 else 0.0
    if kind == LK_FRAC:
        if ncross <= 0:
            return 0.0
        v = total / ncross
        return 1.0 - v if md.lk_neg[k] else v
    if md.lk_neg[k]:
        return ncross - total
    return total


@nb.njit(cache=True, inline="always")
def _lk_into(md, sc, slot, sign, ncross):
    base = md.n_q + len(md.sf_kind)
    for k in range(len(md.lk_kind)):
        sc.dphi[base + k] += sign * lk_value(md, sc, slot, k, ncross)


@nb.njit(cache=True, no_cpython_wrapper=True)
def _slot_phi_into(md, sc, slot, sign):
    """Add ``sign * phi_j`` of the cluster summarised in ``slot`` to
    ``sc.dphi[Q + j]``."""
    if len(md.sf_kind) == 0 or sc.size[slot] == 0:
        return
    for q in range(md.n_q):
        sc.wq[q] = sc.w[q, slot]
    for r in range(len(md.lr_q)):
        sc.wq[md.lr_q[r]] += md.lr_coef[r] * (sc.su[r, slot] * sc.sv[r, slot] - sc.suv[r, slot])
    Q = md.n_q
    for j in range(len(md.sf_kind)):
        sc.dphi[Q + j] += sign * phi(md, j, sc.size[slot], sc.wq, sc.mx[:, slot], sc.mn[:, slot], sc.dist[:, slot])


@nb.njit(cache=True, no_cpython_wrapper=True)
def _state_phi_into(md, st, sc, c, sign):
    if len(md.sf_kind) == 0:
        return
    cluster_within(md, st, c, sc.wq)
    Q = md.n_q
    for j in range(len(md.sf_kind)):
        sc.dphi[Q + j] += sign * phi(md, j, st.size[c], sc.wq, st.mx[:, c], st.mn[:, c], st.dist[:, c])


@nb.njit(cache=True, no_cpython_wrapper=True)
def _dphi_pairs(md, sc, sign):
    """``sc.dphi[:Q] = sign * sc.cq``; the set-level and linkage parts zeroed."""
    Q = md.n_q
    for q in range(Q):
        sc.dphi[q] = sign * sc.cq[q]
    for j in range(len(md.sf_kind) + len(md.lk_kind)):
        sc.dphi[Q + j] = 0.0


@nb.njit(cache=True, no_cpython_wrapper=True)
def _weighted(md, sc):
    """``w . dphi``: the score change of the proposal just evaluated."""
    Q = md.n_q
    d = 0.0
    for q in range(Q):
        d += md.w_q[q] * sc.dphi[q]
    J = len(md.sf_kind)
    for j in range(J):
        d += md.w_sf[j] * sc.dphi[Q + j]
    for k in range(len(md.lk_kind)):
        d += md.w_lk[k] * sc.dphi[Q + J + k]
    return d


@nb.njit(cache=True, no_cpython_wrapper=True)
def _copy_to_slot(md, st, sc, c, slot):
    sc.size[slot] = st.size[c]
    for r in range(len(md.lr_q)):
        sc.su[r, slot] = st.su[r, c]
        sc.sv[r, slot] = st.sv[r, c]
        sc.suv[r, slot] = st.suv[r, c]
    for q in range(md.n_q):
        sc.w[q, slot] = st.w[q, c]
    for m in range(len(md.num_col)):
        sc.mx[m, slot] = st.mx[m, c]
        sc.mn[m, slot] = st.mn[m, c]
    for a in range(len(md.attr_nval)):
        sc.dist[a, slot] = st.dist[a, c]


@nb.njit(cache=True, no_cpython_wrapper=True)
def _write_slot(md, st, sc, slot, c):
    for r in range(len(md.lr_q)):
        st.su[r, c] = sc.su[r, slot]
        st.sv[r, c] = sc.sv[r, slot]
        st.suv[r, c] = sc.suv[r, slot]
    for q in range(md.n_q):
        st.w[q, c] = sc.w[q, slot]
    for m in range(len(md.num_col)):
        st.mx[m, c] = sc.mx[m, slot]
        st.mn[m, c] = sc.mn[m, slot]
    for a in range(len(md.attr_nval)):
        st.dist[a, c] = sc.dist[a, slot]


@nb.njit(cache=True, inline="always", no_cpython_wrapper=True)
def _inv_deg(md, i):
    d = md.indptr[i + 1] - md.indptr[i]
    return 1.0 / d if d > 0 else 0.0


@nb.njit(cache=True, no_cpython_wrapper=True)
def cross_clusters(md, st, sc, A, B):
    """Cross sums between clusters ``A`` and ``B`` into ``sc.cs`` (sparse),
    ``sc.cq`` (total), ``sc.cmx``/``sc.cmn``; returns the edge weight
    ``sum over linked cross pairs (a, b) of 1/deg(a) + 1/deg(b)``."""
    for q in range(md.n_q):
        sc.cs[q] = 0.0
    for m in range(len(md.num_col)):
        sc.cmx[m] = -np.inf
        sc.cmn[m] = np.inf
    X, Y = A, B
    if st.size[B] < st.size[A]:
        X, Y = B, A
    S = md.vals.shape[1]
    ew = 0.0
    K = len(md.lk_kind)
    if K > 0:
        _lk_reset(md, sc, 0)
    i = st.head[X]
    while i >= 0:
        di = _inv_deg(md, i)
        for p in range(md.indptr[i], md.indptr[i + 1]):
            j = md.indices[p]
            if st.label[j] != Y:
                continue
            ew += di + _inv_deg(md, j)
            if K > 0:
                _lk_add(md, sc, 0, p)
            for col in range(S):
                sc.cs[md.col_q[col]] += md.vals[p, col]
            for m in range(len(md.num_col)):
                v = md.vals[p, md.num_col[m]]
                if v > sc.cmx[m]:
                    sc.cmx[m] = v
                if v < sc.cmn[m]:
                    sc.cmn[m] = v
        i = st.nxt[i]
    for q in range(md.n_q):
        sc.cq[q] = sc.cs[q]
    for r in range(len(md.lr_q)):
        sc.cq[md.lr_q[r]] += md.lr_coef[r] * (st.su[r, A] * st.sv[r, B] + st.su[r, B] * st.sv[r, A])
    return ew


@nb.njit(cache=True, inline="always", no_cpython_wrapper=True)
def _hard_ok(md, sign, cq):
    """A move adding ``sign * cq`` to the co-clustered sums keeps the hard
    must-link / cannot-link constraints."""
    if md.hard_cannot_q >= 0 and sign * cq[md.hard_cannot_q] > 1e-9:
        return False
    if md.hard_must_q >= 0 and sign * cq[md.hard_must_q] < -1e-9:
        return False
    return True


@nb.njit(cache=True)
def merge_delta(md, st, sc, A, B):
    """Score change of merging ``A`` and ``B``; the merged summary is left in
    slot 0 and the edge weight in ``sc.out[0]``. ``-inf`` if a hard
    constraint forbids it."""
    ew = cross_clusters(md, st, sc, A, B)
    sc.out[0] = ew
    if not _hard_ok(md, 1.0, sc.cq):
        return -np.inf
    _dphi_pairs(md, sc, 1.0)
    sc.size[0] = st.size[A] + st.size[B]
    for r in range(len(md.lr_q)):
        sc.su[r, 0] = st.su[r, A] + st.su[r, B]
        sc.sv[r, 0] = st.sv[r, A] + st.sv[r, B]
        sc.suv[r, 0] = st.suv[r, A] + st.suv[r, B]
    for q in range(md.n_q):
        sc.w[q, 0] = st.w[q, A] + st.w[q, B] + sc.cs[q]
    for m in range(len(md.num_col)):
        sc.mx[m, 0] = max(max(st.mx[m, A], st.mx[m, B]), sc.cmx[m])
        sc.mn[m, 0] = min(min(st.mn[m, A], st.mn[m, B]), sc.cmn[m])
    if len(md.attr_nval) > 0:
        k = members(st, A, st.buf)
        k += members(st, B, st.buf[k:])
        for a in range(len(md.attr_nval)):
            sc.dist[a, 0] = _distinct(md, st, a, st.buf, k)
    if len(md.sf_kind) > 0:
        _slot_phi_into(md, sc, 0, 1.0)
        _state_phi_into(md, st, sc, A, -1.0)
        _state_phi_into(md, st, sc, B, -1.0)
    if len(md.lk_kind) > 0:
        _lk_into(md, sc, 0, 1.0, float(st.size[A]) * float(st.size[B]))
    return _weighted(md, sc)


@nb.njit(cache=True)
def apply_merge(md, st, sc, A, B):
    """Merge ``B`` into ``A`` (or ``A`` into ``B``: the larger keeps its id)
    with the summary in slot 0; returns the surviving id."""
    keep, gone = A, B
    if st.size[B] > st.size[A]:
        keep, gone = B, A
    i = st.head[gone]
    while i >= 0:
        nx = st.nxt[i]
        _link(st, i, keep)
        i = nx
    _free_cluster(st, gone)
    _write_slot(md, st, sc, 0, keep)
    _set_multi(st, keep)
    return keep


@nb.njit(cache=True, no_cpython_wrapper=True)
def _side_summaries(md, st, sc, c, k):
    """Summaries of the two sides (``st.side`` 0/1 of ``st.buf[:k]``, members of
    ``c``) into slots 0 and 1, and their sparse cross sums into ``sc.cs``
    (total into ``sc.cq``), the edge weight of the cross pairs into
    ``sc.out[0]``."""
    R = len(md.lr_q)
    M = len(md.num_col)
    S = md.vals.shape[1]
    for s in range(2):
        sc.size[s] = 0
        for r in range(R):
            sc.su[r, s] = 0.0
            sc.sv[r, s] = 0.0
            sc.suv[r, s] = 0.0
        for q in range(md.n_q):
            sc.w[q, s] = 0.0
        for m in range(M):
            sc.mx[m, s] = -np.inf
            sc.mn[m, s] = np.inf
    for q in range(md.n_q):
        sc.cs[q] = 0.0
    ew = 0.0
    K = len(md.lk_kind)
    if K > 0:
        _lk_reset(md, sc, 0)
    for t in range(k):
        i = st.buf[t]
        s = st.side[i]
        sc.size[s] += 1
        for r in range(R):
            sc.su[r, s] += md.lr_u[r, i]
            sc.sv[r, s] += md.lr_v[r, i]
            sc.suv[r, s] += md.lr_u[r, i] * md.lr_v[r, i]
        for p in range(md.indptr[i], md.indptr[i + 1]):
            j = md.indices[p]
            if j <= i or st.label[j] != c:
                continue
            if st.side[j] == s:
                for col in range(S):
                    sc.w[md.col_q[col], s] += md.vals[p, col]
                for m in range(M):
                    v = md.vals[p, md.num_col[m]]
                    if v > sc.mx[m, s]:
                        sc.mx[m, s] = v
                    if v < sc.mn[m, s]:
                        sc.mn[m, s] = v
            else:
                ew += _inv_deg(md, i) + _inv_deg(md, j)
                for col in range(S):
                    sc.cs[md.col_q[col]] += md.vals[p, col]
                if K > 0:
                    _lk_add(md, sc, 0, p)
    sc.out[0] = ew
    for q in range(md.n_q):
        sc.cq[q] = sc.cs[q]
    for r in range(R):
        sc.cq[md.lr_q[r]] += md.lr_coef[r] * (sc.su[r, 0] * sc.sv[r, 1] + sc.su[r, 1] * sc.sv[r, 0])
    if len(md.attr_nval) > 0:
        # members of each side, contiguous: side 0 first
        k0 = 0
        for t in range(k):
            if st.side[st.buf[t]] == 0:
                tmp = st.buf[k0]
                st.buf[k0] = st.buf[t]
                st.buf[t] = tmp
                k0 += 1
        for a in range(len(md.attr_nval)):
            sc.dist[a, 0] = _distinct(md, st, a, st.buf, k0)
            sc.dist[a, 1] = _distinct(md, st, a, st.buf[k0:], k - k0)


@nb.njit(cache=True)
def split_delta(md, st, sc, c, k):
    """Score change of splitting ``c`` by ``st.side`` over ``st.buf[:k]``."""
    _side_summaries(md, st, sc, c, k)
    if not _hard_ok(md, -1.0, sc.cq):
        return -np.inf
    _dphi_pairs(md, sc, -1.0)
    if len(md.sf_kind) > 0:
        _slot_phi_into(md, sc, 0, 1.0)
        _slot_phi_into(md, sc, 1, 1.0)
        _state_phi_into(md, st, sc, c, -1.0)
    if len(md.lk_kind) > 0:
        _lk_into(md, sc, 0, -1.0, float(sc.size[0]) * float(sc.size[1]))
    return _weighted(md, sc)


@nb.njit(cache=True)
def apply_split(md, st, sc, c, k):
    """Move the side-1 members of ``c`` to a new cluster; summaries from slots
    0 and 1. Returns the new cluster's id."""
    b = _new_cluster(st)
    for t in range(k):
        i = st.buf[t]
        if st.side[i] == 1:
            _unlink(st, i)
            _link(st, i, b)
    _write_slot(md, st, sc, 0, c)
    _write_slot(md, st, sc, 1, b)
    _set_multi(st, c)
    _set_multi(st, b)
    return b


@nb.njit(cache=True, no_cpython_wrapper=True)
def _recompute_slot(md, st, sc, c, skip, slot):
    """Numeric maxima/minima and distinct counts of cluster ``c`` without
    member ``skip`` into ``slot`` (other fields untouched)."""
    M = len(md.num_col)
    if M > 0:
        for m in range(M):
            sc.mx[m, slot] = -np.inf
            sc.mn[m, slot] = np.inf
        i = st.head[c]
        while i >= 0:
            if i != skip:
                for p in range(md.indptr[i], md.indptr[i + 1]):
                    j = md.indices[p]
                    if j <= i or j == skip or st.label[j] != c:
                        continue
                    for m in range(M):
                        v = md.vals[p, md.num_col[m]]
                        if v > sc.mx[m, slot]:
                            sc.mx[m, slot] = v
                        if v < sc.mn[m, slot]:
                            sc.mn[m, slot] = v
            i = st.nxt[i]
    if len(md.attr_nval) > 0:
        k = 0
        i = st.head[c]
        while i >= 0:
            if i != skip:
                st.buf[k] = i
                k += 1
            i = st.nxt[i]
        for a in range(len(md.attr_nval)):
            sc.dist[a, slot] = _distinct(md, st, a, st.buf, k)


@nb.njit(cache=True)
def move_delta(md, st, sc, i, B):
    """Score change of moving mention ``i`` to cluster ``B`` (-1: a new
    singleton). Slot 0: its old cluster without it; slot 1: the target with
    it. ``sc.out[1]``, ``sc.out[2]``: neighbours of ``i`` in the target and in
    its old cluster."""
    A = st.label[i]
    R = len(md.lr_q)
    M = len(md.num_col)
    S = md.vals.shape[1]
    # sparse sums of i with A\i (into wq) and with B (into cs)
    for q in range(md.n_q):
        sc.cs[q] = 0.0
        sc.wq[q] = 0.0
    for m in range(M):
        sc.cmx[m] = -np.inf
        sc.cmn[m] = np.inf
    nb_b = 0.0
    nb_a = 0.0
    K = len(md.lk_kind)
    if K > 0:
        _lk_reset(md, sc, 0)
        _lk_reset(md, sc, 1)
    for p in range(md.indptr[i], md.indptr[i + 1]):
        j = md.indices[p]
        l = st.label[j]
        if l == A:
            nb_a += 1.0
            if K > 0:
                _lk_add(md, sc, 0, p)
            for col in range(S):
                sc.wq[md.col_q[col]] += md.vals[p, col]
        elif l == B and B >= 0:
            nb_b += 1.0
            if K > 0:
                _lk_add(md, sc, 1, p)
            for col in range(S):
                sc.cs[md.col_q[col]] += md.vals[p, col]
            for m in range(M):
                v = md.vals[p, md.num_col[m]]
                if v > sc.cmx[m]:
                    sc.cmx[m] = v
                if v < sc.cmn[m]:
                    sc.cmn[m] = v
    sc.out[1] = nb_b
    sc.out[2] = nb_a
    # slot 0: A without i
    sc.size[0] = st.size[A] - 1
    for r in range(R):
        sc.su[r, 0] = st.su[r, A] - md.lr_u[r, i]
        sc.sv[r, 0] = st.sv[r, A] - md.lr_v[r, i]
        sc.suv[r, 0] = st.suv[r, A] - md.lr_u[r, i] * md.lr_v[r, i]
    for q in range(md.n_q):
        sc.w[q, 0] = st.w[q, A] - sc.wq[q]
    # slot 1: B with i
    if B >= 0:
        sc.size[1] = st.size[B] + 1
        for r in range(R):
            sc.su[r, 1] = st.su[r, B] + md.lr_u[r, i]
            sc.sv[r, 1] = st.sv[r, B] + md.lr_v[r, i]
            sc.suv[r, 1] = st.suv[r, B] + md.lr_u[r, i] * md.lr_v[r, i]
        for q in range(md.n_q):
            sc.w[q, 1] = st.w[q, B] + sc.cs[q]
        for m in range(M):
            sc.mx[m, 1] = max(st.mx[m, B], sc.cmx[m])
            sc.mn[m, 1] = min(st.mn[m, B], sc.cmn[m])
    else:
        sc.size[1] = 1
        for r in range(R):
            sc.su[r, 1] = md.lr_u[r, i]
            sc.sv[r, 1] = md.lr_v[r, i]
            sc.suv[r, 1] = md.lr_u[r, i] * md.lr_v[r, i]
        for q in range(md.n_q):
            sc.w[q, 1] = 0.0
        for m in range(M):
            sc.mx[m, 1] = -np.inf
            sc.mn[m, 1] = np.inf
    # delta of the pair quantities: (i with B) - (i with A\i)
    for q in range(md.n_q):
        sc.cq[q] = sc.cs[q] - sc.wq[q]
    for r in range(R):
        ui = md.lr_u[r, i]
        vi = md.lr_v[r, i]
        out_a = ui * (st.sv[r, A] - vi) + (st.su[r, A] - ui) * vi
        into_b = 0.0
        if B >= 0:
            into_b = ui * st.sv[r, B] + st.su[r, B] * vi
        sc.cq[md.lr_q[r]] += md.lr_coef[r] * (into_b - out_a)
    if not _hard_ok(md, 1.0, sc.cq):
        return -np.inf
    _dphi_pairs(md, sc, 1.0)
    if M > 0 or len(md.attr_nval) > 0:
        _recompute_slot(md, st, sc, A, i, 0)
    if len(md.attr_nval) > 0:
        k = 0
        if B >= 0:
            k = members(st, B, st.buf)
        st.buf[k] = i
        for a in range(len(md.attr_nval)):
            sc.dist[a, 1] = _distinct(md, st, a, st.buf, k + 1)
    if len(md.sf_kind) > 0:
        _slot_phi_into(md, sc, 0, 1.0)
        _slot_phi_into(md, sc, 1, 1.0)
        _state_phi_into(md, st, sc, A, -1.0)
        if B >= 0:
            _state_phi_into(md, st, sc, B, -1.0)
    if K > 0:
        _lk_into(md, sc, 0, -1.0, float(st.size[A] - 1))
        if B >= 0:
            _lk_into(md, sc, 1, 1.0, float(st.size[B]))
    return _weighted(md, sc)


@nb.njit(cache=True)
def apply_move(md, st, sc, i, B):
    """Move ``i`` to ``B`` (-1: a new cluster) with slots 0 and 1 from
    ``move_delta``; returns the target id."""
    A = st.label[i]
    if B < 0:
        B = _new_cluster(st)
    _unlink(st, i)
    _link(st, i, B)
    _write_slot(md, st, sc, 1, B)
    _set_multi(st, B)
    if st.size[A] == 0:
        _free_cluster(st, A)
    else:
        _write_slot(md, st, sc, 0, A)
        _set_multi(st, A)
    return B


@nb.njit(cache=True)
def pair_scores(indptr, indices, vals, pvals, pcol_q, plr_q, plr_coef, plr_u, plr_v, pw, score_col):
    """Write the pair layer's score of every linked pair into column
    ``score_col`` of ``vals``: ``sum_q pw[q] * (N_q(a, b) + N_q(b, a))`` over
    the pair formulas' quantities, sparse (``pvals``, one column per
    ``pcol_q``) and low-rank parts."""
    n = len(indptr) - 1
    S = pvals.shape[1]
    for i in range(n):
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            s = 0.0
            for col in range(S):
                s += pw[pcol_q[col]] * pvals[p, col]
            for r in range(len(plr_q)):
                s += pw[plr_q[r]] * plr_coef[r] * (plr_u[r, i] * plr_v[r, j] + plr_u[r, j] * plr_v[r, i])
            vals[p, score_col] = s
