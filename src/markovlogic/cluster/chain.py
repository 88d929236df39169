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

The step loop is not here: clusterings are a state kind of
:mod:`markovlogic.onestate` (``CLUSTERINGS``: propose / accept / reject and,
for SampleRank (:mod:`..learn.samplerank`), the loss, feature and score
changes of a move), and ``run`` is the generic Metropolis-Hastings loop bound
to it.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..onestate import StateKind, bind
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


# ---------------------------------------------------------------- the state kind
#
# Clusterings as a state kind of markovlogic.onestate: S = (md, st, sc, probs,
# cum, track, learn) with track = (score, best_score, best_labels), the
# current score and the best clustering seen (MAP; best_score = +inf: not
# kept), and learn = (ints, gold, gsize, counts, stash, cnt, mbuf, q_param,
# q_coef, sf_param) for SampleRank (empty arrays when not learning): ints =
# [loss kind, truth quantity], counts (float64[5]) = TP, predicted and gold
# ordered pairs, B-cubed precision and recall sums of the current state, stash
# (float64[4]) their change by the pending move. The diff is ``prop``
# (int64[5], see propose); propose evaluates read-only (sc holds the
# summaries), accept applies.

GREEDY_MIN = float(np.nextafter(1e-12, 1.0))      # at T = 0 only improving moves (delta > 1e-12)


@nb.njit(cache=True)
def kind_propose(S, diff):
    return propose(S[0], S[1], S[2], S[3], S[4], diff)


@nb.njit(cache=True)
def kind_accept(S, diff, d, track):
    md, st, sc = S[0], S[1], S[2]
    apply_proposal(md, st, sc, diff)
    score, best, best_labels = S[5]
    score[0] += d
    if score[0] > best[0] + 1e-12:
        best[0] = score[0]
        for i in range(md.n):
            best_labels[i] = st.label[i]
    counts, stash = S[6][3], S[6][4]
    if len(counts) > 0:
        counts[0] += stash[0]
        counts[1] += stash[1]
        counts[3] += stash[2]
        counts[4] += stash[3]


@nb.njit(cache=True)
def kind_reject(S, diff):
    pass


@nb.njit(cache=True)
def kind_unit(S):
    return np.random.random()


@nb.njit(cache=True)
def kind_loss_delta(S, diff):
    md, st, sc = S[0], S[1], S[2]
    ints, gold, gsize, counts, stash, cnt, mbuf = S[6][0], S[6][1], S[6][2], S[6][3], S[6][4], S[6][5], S[6][6]
    loss_kind = ints[0]
    dtp = sc.dphi[ints[1]]
    dpp = _pairs_change(st, sc, diff)
    db3p = 0.0
    db3r = 0.0
    if loss_kind == 2:
        db3p, db3r = _b3_change(st, diff, gold, gsize, cnt, mbuf)
    n = md.n
    old = _loss(loss_kind, counts[0], counts[1], counts[2], counts[3], counts[4], n)
    new = _loss(loss_kind, counts[0] + dtp, counts[1] + dpp, counts[2], counts[3] + db3p, counts[4] + db3r, n)
    stash[0] = dtp
    stash[1] = dpp
    stash[2] = db3p
    stash[3] = db3r
    return new - old


@nb.njit(cache=True)
def kind_features(S, diff, dphi):
    lrn = S[6]
    _to_theta(S[0], S[2].dphi, lrn[7], lrn[8], lrn[9], dphi)


@nb.njit(cache=True)
def kind_set_weights(S, theta):
    lrn = S[6]
    _set_weights(S[0], theta, lrn[7], lrn[8], lrn[9])


@nb.njit(cache=True)
def kind_score_delta(S, diff):
    md, sc = S[0], S[2]
    d = 0.0
    for q in range(md.n_q):
        d += md.w_q[q] * sc.dphi[q]
    for j in range(len(md.sf_kind)):
        d += md.w_sf[j] * sc.dphi[md.n_q + j]
    return d


@nb.njit(cache=True)
def kind_loss(S):
    counts = S[6][3]
    return _loss(S[6][0][0], counts[0], counts[1], counts[2], counts[3], counts[4], S[0].n)


@nb.njit(cache=True)
def no_learning():
    """The ``learn`` part of a state that does not learn."""
    e = np.zeros(0, np.int64)
    f = np.zeros(0)
    return (np.zeros(2, np.int64), e, f, f, f, e, e, e, f, e)


CLUSTERINGS = StateKind("clusterings", kind_propose, kind_accept, kind_reject, kind_unit,
                        loss_delta=kind_loss_delta, features=kind_features, set_weights=kind_set_weights,
                        score_delta=kind_score_delta, loss=kind_loss, jit=dict(_nrt=False))
LOOPS = bind(CLUSTERINGS)
_mh = LOOPS.mh


@nb.njit(cache=True)
def run(md, st, sc, n_steps, probs, t_start, t_end, score, best_score, best_labels, stats):
    """``n_steps`` proposals at a temperature going geometrically from
    ``t_start`` to ``t_end`` (equal: fixed): the generic loop of
    :mod:`markovlogic.onestate` over clusterings. ``score`` (float64[1]) is
    the current score, updated; ``best_labels`` takes the best clustering seen
    when it beats ``best_score[0]``; ``stats[k]``: proposals and accepted ones
    of move kind ``k``. Returns the number of accepted moves."""
    cum = np.cumsum(probs)
    prop = np.zeros(5, np.int64)
    ratio = 1.0
    if n_steps > 1 and t_start > 0.0 and t_end > 0.0 and t_end != t_start:
        ratio = (t_end / t_start) ** (1.0 / (n_steps - 1))
    S = (md, st, sc, probs, cum, (score, best_score, best_labels), no_learning())
    before = 0
    for k in range(stats.shape[0]):
        before += stats[k, 1]
    _mh(S, prop, n_steps, t_start, ratio, GREEDY_MIN, True, stats)
    after = 0
    for k in range(stats.shape[0]):
        after += stats[k, 1]
    return after - before


# ---------------------------------------------------------------- losses (SampleRank)

@nb.njit(cache=True)
def _b3_part(st, mem, k, gold, gsize, cnt):
    """(precision sum, recall sum) of B-cubed over the mentions ``mem[:k]``
    forming one cluster."""
    if k == 0:
        return 0.0, 0.0
    for t in range(k):
        cnt[gold[mem[t]]] += 1
    p = 0.0
    r = 0.0
    for t in range(k):
        g = gold[mem[t]]
        p += cnt[g] / k
        r += cnt[g] / gsize[g]
    for t in range(k):
        cnt[gold[mem[t]]] = 0
    return p, r


@nb.njit(cache=True)
def _b3_change(st, prop, gold, gsize, cnt, mbuf):
    """Change of the B-cubed precision and recall sums by the evaluated
    proposal ``prop`` (before it is applied)."""
    kind = prop[0]
    dp = 0.0
    dr = 0.0
    if kind == 0 or kind == 3:                      # merge A, B
        A = prop[1]
        B = prop[2]
        ka = members(st, A, mbuf)
        p, r = _b3_part(st, mbuf, ka, gold, gsize, cnt)
        dp -= p
        dr -= r
        kb = members(st, B, mbuf[ka:])
        p, r = _b3_part(st, mbuf[ka:], kb, gold, gsize, cnt)
        dp -= p
        dr -= r
        p, r = _b3_part(st, mbuf, ka + kb, gold, gsize, cnt)
        dp += p
        dr += r
    elif kind == 1:                                 # split C by st.side
        C = prop[1]
        k = members(st, C, mbuf)
        p, r = _b3_part(st, mbuf, k, gold, gsize, cnt)
        dp -= p
        dr -= r
        k0 = 0
        for t in range(k):
            if st.side[mbuf[t]] == 0:
                tmp = mbuf[k0]
                mbuf[k0] = mbuf[t]
                mbuf[t] = tmp
                k0 += 1
        p, r = _b3_part(st, mbuf, k0, gold, gsize, cnt)
        dp += p
        dr += r
        p, r = _b3_part(st, mbuf[k0:], k - k0, gold, gsize, cnt)
        dp += p
        dr += r
    else:                                           # move i to B
        i = prop[3]
        A = prop[1]
        B = prop[2]
        ka = members(st, A, mbuf)
        p, r = _b3_part(st, mbuf, ka, gold, gsize, cnt)
        dp -= p
        dr -= r
        k2 = 0
        for t in range(ka):
            if mbuf[t] != i:
                mbuf[k2] = mbuf[t]
                k2 += 1
        p, r = _b3_part(st, mbuf, k2, gold, gsize, cnt)
        dp += p
        dr += r
        kb = 0
        if B >= 0:
            kb = members(st, B, mbuf)
            p, r = _b3_part(st, mbuf, kb, gold, gsize, cnt)
            dp -= p
            dr -= r
        mbuf[kb] = i
        p, r = _b3_part(st, mbuf, kb + 1, gold, gsize, cnt)
        dp += p
        dr += r
    return dp, dr


@nb.njit(cache=True)
def _pairs_change(st, sc, prop):
    """Change of the number of ordered co-clustered pairs."""
    kind = prop[0]
    if kind == 0 or kind == 3:
        return 2.0 * st.size[prop[1]] * st.size[prop[2]]
    if kind == 1:
        return -2.0 * sc.size[0] * sc.size[1]
    A = prop[1]
    B = prop[2]
    sb = 0.0 if B < 0 else float(st.size[B])
    return 2.0 * (sb - (st.size[A] - 1.0))


@nb.njit(cache=True)
def _loss(kind, tp, pp, gp, b3p, b3r, n):
    if kind == 0:
        return pp + gp - 2.0 * tp
    if kind == 1:
        if pp + gp <= 0.0:
            return 0.0
        return 1.0 - 2.0 * tp / (pp + gp)
    P = b3p / n
    R = b3r / n
    if P + R <= 0.0:
        return 1.0
    return 1.0 - 2.0 * P * R / (P + R)


@nb.njit(cache=True)
def _to_theta(md, dphi, q_param, q_coef, sf_param, out):
    for k in range(len(out)):
        out[k] = 0.0
    Q = md.n_q
    for q in range(Q):
        k = q_param[q]
        if k >= 0:
            out[k] += q_coef[q] * dphi[q]
    for j in range(len(md.sf_kind)):
        k = sf_param[j]
        if k >= 0:
            out[k] += dphi[Q + j]


@nb.njit(cache=True)
def _set_weights(md, theta, q_param, q_coef, sf_param):
    for q in range(md.n_q):
        k = q_param[q]
        if k >= 0:
            md.w_q[q] = theta[k] * q_coef[q]
    for j in range(len(md.sf_kind)):
        k = sf_param[j]
        if k >= 0:
            md.w_sf[j] = theta[k]


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
