"""The Metropolis-Hastings chain over clusterings (numba).

Five proposals, mixed with probabilities ``probs``:

0. *merge*: two clusters chosen uniformly;
1. *split*: a cluster of two or more chosen uniformly, cut into two
   non-empty parts uniformly over its ``2^(m-1) - 1`` bipartitions;
2. *move*: a mention chosen uniformly goes to one of the other clusters or,
   unless it is alone, to a new cluster, uniformly;
3. *edge merge*: a mention and one of its linked mentions (the sparse pair
   graph: pairs the evidence relates) chosen uniformly; their clusters merge;
4. *edge move*: a mention moves to the cluster of one of its linked mentions.

Every move keeps the clustering a partition, so transitivity is never
grounded. The acceptance ratio uses the exact density of the *mixture*
(Culotta's thesis, section 4.5.1: the densities keep biased proposals from
biasing the samples): for a merge, ``q = p_merge * 2/(c(c-1)) + p_edge_merge
* e(A, B)/n`` with ``e(A, B)`` the sum of ``1/deg(a) + 1/deg(b)`` over linked
cross pairs; its reverse is the split back into exactly ``A`` and ``B``, and so
on. At temperature ``T > 0`` the chain targets ``p^(1/T)``; at ``T = 0`` it
accepts only improving moves (greedy). ``run`` tracks the best clustering
seen.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from .kernels import (
    apply_merge,
    apply_move,
    apply_split,
    merge_delta,
    members,
    move_delta,
    split_delta,
)

MERGE, SPLIT, MOVE, EDGE_MERGE, EDGE_MOVE = range(5)
KIND_NAMES = ("merge", "split", "move", "edge_merge", "edge_move")


@nb.njit(cache=True)
def seed_rng(seed):
    np.random.seed(seed)


@nb.njit(cache=True)
def log_bipartitions(m):
    """log(2^(m-1) - 1): the number of ways to cut m >= 2 items into two
    non-empty unordered parts."""
    return (m - 1) * math.log(2.0) + math.log1p(-(0.5 ** (m - 1)))


@nb.njit(cache=True)
def _merge_density(probs, n, c, ew):
    """Mixture density of merging two given clusters out of ``c``."""
    q = 0.0
    if c >= 2:
        q += probs[MERGE] * 2.0 / (c * (c - 1.0))
    q += probs[EDGE_MERGE] * ew / n
    return q


@nb.njit(cache=True)
def _split_logdensity(probs, s, m):
    """log density of cutting a given cluster of size ``m`` into given parts,
    with ``s`` clusters of size >= 2."""
    if probs[SPLIT] <= 0.0 or s <= 0:
        return -np.inf
    return math.log(probs[SPLIT]) - math.log(s) - log_bipartitions(m)


@nb.njit(cache=True)
def _move_density(probs, n, c_other, alone, to_new, nb_target, deg):
    """Mixture density of moving a given mention to a given target:
    ``c_other`` other clusters, ``alone`` whether it is a singleton now."""
    targets = c_other + (0 if alone else 1)
    q = 0.0
    if targets > 0:
        q += probs[MOVE] / (n * targets)
    if not to_new and deg > 0:
        q += probs[EDGE_MOVE] * nb_target / (n * deg)
    return q


@nb.njit(cache=True)
def _accept(delta, logq_ratio, temp):
    if delta == -np.inf:
        return False
    if temp <= 0.0:
        return delta > 1e-12
    a = delta / temp + logq_ratio
    if a >= 0.0:
        return True
    return np.random.random() < math.exp(a)


@nb.njit(cache=True)
def _random_neighbor(md, i):
    d = md.indptr[i + 1] - md.indptr[i]
    if d == 0:
        return -1
    return md.indices[md.indptr[i] + np.random.randint(d)]


@nb.njit(cache=True)
def propose(md, st, sc, probs, cum, prop):
    """Draw a proposal and evaluate it without applying it. ``prop`` (int64[5])
    receives ``kind, A, B, i, k``: the clusters merged (``A``, ``B``), the
    cluster split (``A``, with ``k`` members in ``st.buf`` sided by
    ``st.side``) or the mention moved (``i``, to ``B``; -1: a new cluster).
    Returns ``(delta, log q_backward - log q_forward)``; ``delta`` is ``nan``
    for a null proposal and ``-inf`` for one a hard constraint forbids.
    ``sc.dphi`` holds the feature change."""
    n = md.n
    r = np.random.random()
    kind = 0
    while kind < 4 and r >= cum[kind]:
        kind += 1
    prop[0] = kind
    c = st.counts[0]
    if kind == MERGE or kind == EDGE_MERGE:
        if kind == MERGE:
            if c < 2:
                return np.nan, 0.0
            a = np.random.randint(c)
            b = np.random.randint(c - 1)
            if b >= a:
                b += 1
            A = st.active[a]
            B = st.active[b]
        else:
            i = np.random.randint(n)
            j = _random_neighbor(md, i)
            if j < 0:
                return np.nan, 0.0
            A = st.label[i]
            B = st.label[j]
            if A == B:
                return np.nan, 0.0
        prop[1] = A
        prop[2] = B
        d = merge_delta(md, st, sc, A, B)
        if d == -np.inf:
            return d, 0.0
        m = st.size[A] + st.size[B]
        s_after = st.counts[1] - (1 if st.size[A] >= 2 else 0) - (1 if st.size[B] >= 2 else 0) + 1
        logq_f = math.log(_merge_density(probs, n, c, sc.out[0]))
        logq_b = _split_logdensity(probs, s_after, m)
        return d, logq_b - logq_f
    if kind == SPLIT:
        s = st.counts[1]
        if s == 0:
            return np.nan, 0.0
        C = st.multi[np.random.randint(s)]
        k = members(st, C, st.buf)
        while True:
            ones = 0
            for t in range(k):
                bit = np.random.randint(2)
                st.side[st.buf[t]] = bit
                ones += bit
            if 0 < ones < k:
                break
        prop[1] = C
        prop[4] = k
        d = split_delta(md, st, sc, C, k)
        if d == -np.inf:
            return d, 0.0
        logq_f = _split_logdensity(probs, s, k)
        logq_b = math.log(_merge_density(probs, n, c + 1, sc.out[0]))
        return d, logq_b - logq_f
    # moves
    i = np.random.randint(n)
    A = st.label[i]
    alone = st.size[A] == 1
    if kind == MOVE:
        targets = (c - 1) + (0 if alone else 1)
        if targets == 0:
            return np.nan, 0.0
        t = np.random.randint(targets)
        if t >= c - 1:
            B = -1
        else:
            pa = st.active_pos[A]
            B = st.active[t if t < pa else t + 1]
    else:
        j = _random_neighbor(md, i)
        if j < 0:
            return np.nan, 0.0
        B = st.label[j]
        if B == A:
            return np.nan, 0.0
    prop[1] = A
    prop[2] = B
    prop[3] = i
    d = move_delta(md, st, sc, i, B)
    if d == -np.inf:
        return d, 0.0
    deg = md.indptr[i + 1] - md.indptr[i]
    q_f = _move_density(probs, n, c - 1, alone, B < 0, sc.out[1], deg)
    # the reverse move, in the state after the move
    c_after = c + (1 if B < 0 else 0) - (1 if alone else 0)
    size_b_after = 1 if B < 0 else st.size[B] + 1
    q_b = _move_density(probs, n, c_after - 1, size_b_after == 1, alone, sc.out[2], deg)
    return d, math.log(q_b) - math.log(q_f)


@nb.njit(cache=True)
def apply_proposal(md, st, sc, prop):
    """Apply the proposal ``propose`` evaluated last (its summaries are in
    ``sc``)."""
    kind = prop[0]
    if kind == MERGE or kind == EDGE_MERGE:
        apply_merge(md, st, sc, prop[1], prop[2])
    elif kind == SPLIT:
        apply_split(md, st, sc, prop[1], prop[4])
    else:
        apply_move(md, st, sc, prop[3], prop[2])


@nb.njit(cache=True)
def step(md, st, sc, probs, cum, temp, stats, prop):
    """One proposal; returns the score change applied (0.0 if rejected)."""
    d, logq = propose(md, st, sc, probs, cum, prop)
    stats[prop[0], 0] += 1
    if np.isnan(d) or d == -np.inf:
        return 0.0
    if _accept(d, logq, temp):
        apply_proposal(md, st, sc, prop)
        stats[prop[0], 1] += 1
        return d
    return 0.0


@nb.njit(cache=True)
def run(md, st, sc, n_steps, probs, t_start, t_end, score, best_score, best_labels, stats):
    """``n_steps`` proposals at a temperature going geometrically from
    ``t_start`` to ``t_end`` (equal: fixed). ``score`` (float64[1]) is the
    current score, updated; ``best_labels`` takes the best clustering seen
    when it beats ``best_score[0]``. Returns the number of accepted moves."""
    cum = np.cumsum(probs)
    prop = np.zeros(5, np.int64)
    accepted = 0
    ratio = 1.0
    if n_steps > 1 and t_start > 0.0 and t_end > 0.0 and t_end != t_start:
        ratio = (t_end / t_start) ** (1.0 / (n_steps - 1))
    temp = t_start
    for it in range(n_steps):
        d = step(md, st, sc, probs, cum, temp, stats, prop)
        if d != 0.0:
            accepted += 1
            score[0] += d
            if score[0] > best_score[0] + 1e-12:
                best_score[0] = score[0]
                for i in range(md.n):
                    best_labels[i] = st.label[i]
        temp *= ratio
    return accepted


@nb.njit(cache=True)
def accumulate_pairs(st, acc):
    """Add 1 to ``acc[i, j]`` for every ordered pair of co-clustered mentions
    (dense accumulator, for the marginals of small problems)."""
    for t in range(st.counts[0]):
        c = st.active[t]
        if st.size[c] < 2:
            continue
        k = members(st, c, st.buf)
        for x in range(k):
            for y in range(k):
                if x != y:
                    acc[st.buf[x], st.buf[y]] += 1.0


@nb.njit(cache=True)
def accumulate_edges(md, st, acc):
    """Add 1 to ``acc[p]`` for every linked pair (CSR entry ``p``) whose two
    mentions share a cluster (sparse accumulator for large problems)."""
    for i in range(md.n):
        li = st.label[i]
        for p in range(md.indptr[i], md.indptr[i + 1]):
            if st.label[md.indices[p]] == li:
                acc[p] += 1.0
