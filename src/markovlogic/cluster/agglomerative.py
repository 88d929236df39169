"""Greedy agglomerative MAP over clusterings (Culotta & McCallum 2006,
Algorithm 1): start from singletons (must-linked mentions together) and
repeatedly apply the merge that raises the score most, set-level features
included, until no merge raises it.

Candidate merges come from *canopies*: two clusters are compared only when
some pair of their mentions is linked in the sparse pair graph (the pairs
the evidence relates: a shared word, an identical title, a similarity above
a threshold). A merge changes only the merged cluster's candidates, so a
priority queue with versioned entries keeps the best merge at hand; stale
entries are skipped when popped.

Greedy merging can stop in a local optimum; ``polish_steps`` continues with
greedy Metropolis-Hastings moves (split, move, merge; ``T = 0``).
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass

import numba as nb
import numpy as np

from ..errors import OptionError
from .chain import run, seed_rng
from .kernels import apply_merge, members, merge_delta, total_score
from .mh import ClusterAnswer, _initial_labels
from .model import ClusterModel


@dataclass
class AgglomerativeOptions:
    """Options of greedy agglomerative MAP (``mln infer --map --method
    agglomerative``): ``polish_steps`` greedy MH proposals after the merges
    (default ``20 * n``; none for a model with linkage features, whose
    weights were trained for the merges alone), ``seed`` for them,
    ``max_seconds``."""

    polish_steps: int | None = None
    seed: int = 0
    max_seconds: float | None = None
    init: object = "singletons"

    def check(self) -> "AgglomerativeOptions":
        v = self.polish_steps
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0):
            raise OptionError(f"polish_steps must be a non-negative integer, got {v!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise OptionError(f"seed must be a non-negative integer, got {self.seed!r}")
        if self.max_seconds is not None and not (self.max_seconds > 0):
            raise OptionError(f"max_seconds must be positive, got {self.max_seconds!r}")
        return self


@nb.njit(cache=True)
def _push_neighbours(md, st, sc, K, version, seen, stamp, heap, threshold, larger_only):
    """Push every merge of cluster ``K`` with a linked cluster scoring above
    ``threshold`` (``larger_only``: only clusters ``L > K``, when every
    cluster is visited in turn, to halve the work)."""
    i = st.head[K]
    while i >= 0:
        for p in range(md.indptr[i], md.indptr[i + 1]):
            L = st.label[md.indices[p]]
            if L == K or seen[L] == stamp or (larger_only and L < K):
                continue
            seen[L] = stamp
            d = merge_delta(md, st, sc, K, L)
            if d > threshold:
                a, b = (K, L) if K < L else (L, K)
                heapq.heappush(heap, (-d, a, b, version[a], version[b]))
        i = st.nxt[i]


@nb.njit(cache=True)
def _seed_heap(md, st, sc, version, seen, heap, threshold):
    """Every merge of two linked clusters scoring above ``threshold``;
    returns the last stamp used in ``seen``."""
    stamp = 0
    for t in range(st.counts[0]):
        K = st.active[t]
        stamp += 1
        seen[K] = stamp
        _push_neighbours(md, st, sc, K, version, seen, stamp, heap, threshold, True)
    return stamp


@nb.njit(cache=True, nogil=True)
def agglomerate(md, st, sc, max_merges):
    """Greedy merges until none raises the score (or ``max_merges``); returns
    (merges, total gain)."""
    n = md.n
    version = np.zeros(n, np.int64)
    seen = np.full(n, -1, np.int64)
    heap = [(0.0, np.int64(0), np.int64(0), np.int64(0), np.int64(0))]
    heap.pop()
    stamp = _seed_heap(md, st, sc, version, seen, heap, 1e-12)
    merges = 0
    gain = 0.0
    while len(heap) > 0 and merges < max_merges:
        negd, a, b, va, vb = heapq.heappop(heap)
        if version[a] != va or version[b] != vb or st.size[a] == 0 or st.size[b] == 0:
            continue
        d = merge_delta(md, st, sc, a, b)       # refresh the summary in slot 0
        K = apply_merge(md, st, sc, a, b)
        gone = b if K == a else a
        version[K] += 1
        version[gone] += 1
        merges += 1
        gain += d
        stamp += 1
        seen[K] = stamp
        _push_neighbours(md, st, sc, K, version, seen, stamp, heap, 1e-12, False)
    return merges, gain


def agglomerative_map(model: ClusterModel, options: AgglomerativeOptions | None = None) -> ClusterAnswer:
    opt = (options or AgglomerativeOptions()).check()
    md = model.arrays
    start = time.perf_counter()
    st, sc = model.new_state(_initial_labels(model, opt.init))
    merges, gain = agglomerate(md, st, sc, model.n)
    merge_seconds = time.perf_counter() - start
    score = np.array([total_score(md, st, sc.wq)])
    best = score.copy()
    best_labels = st.label.copy()
    # a model with linkage features scores merges: its search is the merges alone (what it was trained for)
    default_polish = 0 if getattr(model, "link_features", None) else 20 * max(model.n, 1)
    polish = opt.polish_steps if opt.polish_steps is not None else default_polish
    stats = np.zeros((5, 2), np.int64)
    if polish and (opt.max_seconds is None or merge_seconds < opt.max_seconds):
        seed_rng(int(opt.seed))
        probs = np.array([0.1, 0.1, 0.3, 0.2, 0.3])
        run(md, st, sc, polish, probs, 0.0, 0.0, score, best, best_labels, stats)
    st2, sc2 = model.new_state(best_labels)
    exact = float(total_score(md, st2, sc2.wq))
    if getattr(model, "link_features", None) and not polish:
        exact = float(gain)     # linkage features score merges: the clustering's score is its merges' sum
    info = {"merges": int(merges), "merge_gain": float(gain), "merge_seconds": merge_seconds,
            "polish_steps": int(polish), "polish_accepted": int(stats[:, 1].sum()),
            "seconds": time.perf_counter() - start, "clusters": int(st2.counts[0])}
    return ClusterAnswer(model, best_labels, exact, info)


@nb.njit(cache=True)
def _gain_pairs(st, A, B, gold, cnt, buf):
    """(co-referent cross pairs, cross pairs) of merging clusters ``A`` and ``B``."""
    ka = members(st, A, buf)
    for t in range(ka):
        cnt[gold[buf[t]]] += 1
    kb = members(st, B, buf[ka:])
    tp = 0.0
    for t in range(kb):
        tp += cnt[gold[buf[ka + t]]]
    for t in range(ka):
        cnt[gold[buf[t]]] = 0
    return tp, float(ka) * float(kb)


@nb.njit(cache=True, nogil=True)
def merge_sequence(md, st, sc, gold, n_gold, deltas, tps, pps, tp0, pp0, gp):
    """Greedy agglomerative search run to the end: the best merge is taken
    whatever its score (hard constraints still hold), and each step's score,
    co-referent pairs joined and pairs joined are recorded. Greedy MAP with
    every merge's score shifted by ``s`` takes exactly the prefix before the
    first step whose score is at most ``-s``: one run scores every shift of
    the per-cluster constant. The run stops early once no longer prefix
    can matter: when even a perfect recall could not lift the pairwise F1
    (``2 gp / (pp + gp)``, with ``pp`` the pairs joined so far and ``gp`` the
    truth's, starting from ``tp0``, ``pp0``) to half the best F1 of a prefix
    so far. Returns the number of merges."""
    n = md.n
    version = np.zeros(n, np.int64)
    seen = np.full(n, -1, np.int64)
    cnt = np.zeros(max(n_gold, 1), np.int64)
    buf = np.zeros(n + 1, np.int64)
    heap = [(0.0, np.int64(0), np.int64(0), np.int64(0), np.int64(0))]
    heap.pop()
    stamp = _seed_heap(md, st, sc, version, seen, heap, -np.inf)
    k = 0
    tp_all = tp0
    pp_all = pp0
    best = 2.0 * tp_all / (pp_all + gp) if pp_all + gp > 0 else 1.0
    while len(heap) > 0:
        negd, a, b, va, vb = heapq.heappop(heap)
        if version[a] != va or version[b] != vb or st.size[a] == 0 or st.size[b] == 0:
            continue
        d = merge_delta(md, st, sc, a, b)
        tp, pp = _gain_pairs(st, a, b, gold, cnt, buf)
        deltas[k] = d
        tps[k] = tp
        pps[k] = pp
        k += 1
        tp_all += tp
        pp_all += pp
        if pp_all + gp > 0:
            f = 2.0 * tp_all / (pp_all + gp)
            if f > best:
                best = f
            if 2.0 * gp / (pp_all + gp) < 0.5 * best:
                break
        K = apply_merge(md, st, sc, a, b)
        gone = b if K == a else a
        version[K] += 1
        version[gone] += 1
        stamp += 1
        seen[K] = stamp
        _push_neighbours(md, st, sc, K, version, seen, stamp, heap, -np.inf, False)
    return k
