"""USP-Learn (Poon's thesis, Algorithm 3): greedy search over semantic parses
with an agenda of MERGE and COMPOSE operations scored by the exact change of
the regularised log-likelihood (:mod:`.state`), best first.

Candidates, as in Poon's code: MERGE(c1, c2) for clusters that share at
least ``min_shared`` neighbouring clusters (clusters their parts take as
arguments, or are arguments of); COMPOSE(cr, ca) for a parent and an argument
cluster seen together at least ``min_compose`` times; and, as Poon's code
also does (``scoreMergeArgs``), the merge of two argument types of one
cluster. An operation is executed when its score is above ``threshold``
(10 in the thesis). Scores go stale when other operations change the
statistics: every operation is scored again when it reaches the top of the
agenda and executed only if it is still the best and above the threshold.
When the agenda is empty, candidates are generated again from the current
parses (a *round*); learning ends when a round executes nothing.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp

from ..errors import OptionError
from .qlf import QLFCorpus
from .state import Priors, USPState
from .vectors import nearest_pairs, ppmi


@dataclass
class USPOptions:
    """Options of USP-Learn (defaults: the thesis's alpha = -5, beta = -10,
    threshold 10; Poon's code's 10 shared neighbours and 50 co-occurrences)."""

    alpha: float = -5.0            # log prior per parameter
    beta: float = -10.0            # log prior per conj edge whose two parts share a cluster
    threshold: float = 10.0        # an operation must improve the objective by more than this
    min_shared: int = 10           # MERGE candidates: clusters sharing at least this many neighbour clusters
    max_partners: int = 20         # ... of which the most similar (cosine) per cluster
    min_merge_parts: int = 0       # MERGE candidates: only clusters of at least this many parts (0: all; not Poon's)
    merge_candidates: str = "clusters"  # "clusters": shared neighbour clusters (Poon); "words": shared (relation, argument word)
    min_compose: int = 50          # COMPOSE candidates: parent/argument cluster pairs seen this often
    compose: bool = True
    merge_roles: bool = True
    max_role_types: int = 40       # argument-type merges: among a cluster's largest types
    max_rounds: int = 20
    max_ops: int = 0               # 0: no limit
    time_limit: float = 0.0        # seconds, 0: no limit

    def check(self) -> None:
        if self.alpha > 0 or self.beta > 0:
            raise OptionError("--alpha and --beta are log priors: they must be <= 0")
        for name in ("min_shared", "max_partners", "min_compose", "max_rounds", "max_ops", "max_role_types",
                     "min_merge_parts"):
            if getattr(self, name) < 0:
                raise OptionError(f"{name.replace('_', '-')} must be >= 0")
        if self.threshold < 0:
            raise OptionError("--threshold must be >= 0")
        if self.merge_candidates not in ("clusters", "words"):
            raise OptionError(f"--merge-candidates must be clusters or words, not {self.merge_candidates!r}")


@dataclass
class LearnStats:
    rounds: int = 0
    merges: int = 0
    composes: int = 0
    role_merges: int = 0
    scored: int = 0
    seconds: float = 0.0
    objective_start: float = 0.0
    objective_end: float = 0.0
    clusters_start: int = 0
    clusters_end: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


Progress = Callable[[str, LearnStats], None]


def neighbour_pairs(clust: np.ndarray, ppart: np.ndarray, n_clusters: int, min_shared: int,
                    max_partners: int, eligible: np.ndarray | None = None) -> list[tuple[int, int]]:
    """Pairs of clusters that share at least ``min_shared`` neighbouring
    clusters (clusters their parts are arguments of, or take as arguments;
    Poon's code: ``minMCCnt``), each cluster's ``max_partners`` most similar
    (cosine over the neighbours) kept: the MERGE (and ABSTRACT) candidates.
    ``clust`` and ``ppart`` are the parse arrays (cluster and parent part of
    each part root). ``eligible`` (boolean per cluster id): only these
    clusters are paired (their neighbours may be any cluster)."""
    u = np.nonzero(ppart >= 0)[0]
    if len(u) == 0:
        return []
    child = clust[u]
    parent = clust[ppart[u]]
    nc = int(n_clusters)
    rows = np.concatenate([child, parent])
    feats = np.concatenate([parent * 2, child * 2 + 1])          # "is an argument of X", "takes X as argument"
    pairs = np.unique(rows * (2 * nc + 2) + feats)
    rows, feats = pairs // (2 * nc + 2), pairs % (2 * nc + 2)
    deg = np.bincount(rows, minlength=nc)
    keep = deg[rows] >= min_shared
    if eligible is not None:
        keep &= np.asarray(eligible, dtype=bool)[rows]
    rows, feats = rows[keep], feats[keep]
    if len(rows) == 0:
        return []
    rid, r_index = np.unique(rows, return_inverse=True)
    fid, f_index = np.unique(feats, return_inverse=True)
    B = sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (r_index, f_index)), shape=(len(rid), len(fid)))
    d = np.asarray(B.sum(axis=1)).ravel()
    Bt = B.T.tocsr()

    def scores(lo: int, hi: int) -> np.ndarray:
        S = (B[lo:hi] @ Bt).toarray()
        S[np.arange(hi - lo), np.arange(lo, hi)] = 0
        cos = S / np.sqrt(np.outer(d[lo:hi], d))
        cos[S < min_shared] = 0
        return cos

    return nearest_pairs(rid, scores, max_partners)


def argument_word_pairs(clust: np.ndarray, ppart: np.ndarray, aform: np.ndarray, form: np.ndarray, n_clusters: int,
                        min_shared: int, max_partners: int, eligible: np.ndarray | None = None
                        ) -> list[tuple[int, int]]:
    """MERGE candidates by distributional similarity over argument words:
    each cluster is the PPMI-weighted vector of the (argument form, argument
    word) pairs of its parts' arguments (``aform`` and the word's ``form`` of
    each argument part root), and each cluster is paired with its
    ``max_partners`` nearest (cosine) among the clusters it shares at least
    ``min_shared`` such pairs with (both with positive PPMI). Unlike
    :func:`neighbour_pairs`, two verbs whose arguments are merely pronouns
    and common nouns of any role share little: the pairs must be the same
    words in the same argument role."""
    u = np.nonzero(ppart >= 0)[0]
    if len(u) == 0:
        return []
    rows = np.asarray(clust, dtype=np.int64)[np.asarray(ppart, dtype=np.int64)[u]]
    nf = int(np.max(form)) + 2
    feats = np.asarray(aform, dtype=np.int64)[u] * nf + (np.asarray(form, dtype=np.int64)[u] + 1)
    if eligible is not None:
        keep = np.asarray(eligible, dtype=bool)[rows]
        rows, feats = rows[keep], feats[keep]
    if len(rows) == 0:
        return []
    rid, r_index = np.unique(rows, return_inverse=True)
    fid, f_index = np.unique(feats, return_inverse=True)
    P = ppmi(sp.csr_matrix((np.ones(len(rows)), (r_index, f_index)), shape=(len(rid), len(fid))))
    live = np.nonzero(np.diff(P.indptr) >= max(min_shared, 1))[0]
    if len(live) < 2:
        return []
    P = P[live]
    rid = rid[live]
    B = P.copy()
    B.data[:] = 1.0
    Pt, Bt = P.T.tocsr(), B.T.tocsr()

    def scores(lo: int, hi: int) -> np.ndarray:
        cos = (P[lo:hi] @ Pt).toarray()
        shared = (B[lo:hi] @ Bt).toarray()
        cos[np.arange(hi - lo), np.arange(lo, hi)] = 0
        cos[shared < min_shared] = 0
        return cos

    return nearest_pairs(rid, scores, max_partners)


class Learner:
    def __init__(self, state: USPState, options: USPOptions, progress: Progress | None = None) -> None:
        self.s = state
        self.o = options
        self.progress = progress
        self.stats = LearnStats()
        self.alias: dict[int, int] = {}       # merged cluster -> the cluster it went into
        self.talias: dict[int, int] = {}      # merged type -> the type it went into
        self.heap: list = []
        self.cache: dict[tuple, tuple[tuple, float]] = {}     # op -> (stamps, score) of its last scoring
        self.seq = 0
        self.executed = 0

    # -------------------------------------------------------------- aliases
    def _c(self, c: int) -> int:
        while c in self.alias:
            c = self.alias[c]
        return c

    def _t(self, t: int) -> int:
        while t in self.talias:
            t = self.talias[t]
        return t

    # ------------------------------------------------------------ candidates
    def merge_candidates(self) -> list[tuple[int, int]]:
        s = self.s
        eligible = None
        if self.o.min_merge_parts > 0:                # rare clusters take part in no MERGE
            eligible = np.zeros(int(s.next_clust) + 1, dtype=bool)
            big = [c for c, k in s.n.items() if k >= self.o.min_merge_parts]
            eligible[np.asarray(big, dtype=np.int64)] = True
        if self.o.merge_candidates == "words":
            return argument_word_pairs(s.clust, s.ppart, s.aform, s.qlf.form, int(s.next_clust), self.o.min_shared,
                                       self.o.max_partners, eligible)
        return neighbour_pairs(s.clust, s.ppart, int(s.next_clust), self.o.min_shared, self.o.max_partners, eligible)

    def compose_candidates(self) -> list[tuple[int, int]]:
        s = self.s
        u = np.nonzero(s.ppart >= 0)[0]
        if len(u) == 0 or self.o.min_compose <= 0:
            return []
        nc = int(s.next_clust) + 1
        key, cnt = np.unique(s.clust[s.ppart[u]] * nc + s.clust[u], return_counts=True)
        sel = cnt >= self.o.min_compose
        out = []
        for k in key[sel].tolist():
            cr, ca = divmod(k, nc)
            if cr != ca:
                out.append((cr, ca))
        return out

    def role_candidates(self, clusters=None) -> list[tuple[int, int, int]]:
        s = self.s
        out = []
        for c in (clusters if clusters is not None else list(s.n)):
            ts = s.types.get(c)
            if not ts or len(ts) < 2:
                continue
            ts = sorted(ts, key=lambda t: -s.T[t])[: self.o.max_role_types]
            for i in range(len(ts)):
                for j in range(i + 1, len(ts)):
                    out.append((c, ts[i], ts[j]))
        return out

    # ------------------------------------------------------------- scoring
    def _resolve(self, op: tuple) -> tuple | None:
        kind = op[0]
        if kind == "M":
            a, b = self._c(op[1]), self._c(op[2])
            if a == b or a not in self.s.n or b not in self.s.n:
                return None
            return ("M", min(a, b), max(a, b))
        if kind == "C":
            a, b = self._c(op[1]), self._c(op[2])
            if a == b or a not in self.s.n or b not in self.s.n:
                return None
            return ("C", a, b)
        c, ta, tb = self._c(op[1]), self._t(op[2]), self._t(op[3])
        if ta == tb or self.s.owner.get(ta) != c or self.s.owner.get(tb) != c:
            return None
        return ("R", c, ta, tb)

    def _score(self, op: tuple):
        self.stats.scored += 1
        if op[0] == "M":
            return self.s.score_merge(op[1], op[2])
        if op[0] == "C":
            return self.s.score_compose(op[1], op[2])
        return self.s.score_merge_role(op[1], op[2], op[3])

    def _push(self, op: tuple, score: float) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (-score, self.seq, op))

    def _execute(self, op: tuple, plan) -> None:
        s = self.s
        if op[0] == "M":
            c1, c2, mapping = plan
            s.apply_merge(plan)
            self.alias[c2] = c1
            for tb, ta in mapping.items():
                self.talias[tb] = ta
            self.stats.merges += 1
            if self.o.merge_roles:
                for cand in self.role_candidates([c1]):
                    self._consider(("R",) + cand)
        elif op[0] == "C":
            c_new = s.apply_compose(plan)
            self.stats.composes += 1
            if self.o.merge_roles:
                for cand in self.role_candidates([c_new]):
                    self._consider(("R",) + cand)
        else:
            s.apply_merge_role(plan)
            self.talias[op[3]] = op[2]
            self.stats.role_merges += 1
        self.executed += 1

    def _stamps(self, op: tuple) -> tuple:
        return self.s.stamp(*op[1:3]) if op[0] != "R" else self.s.stamp(op[1])

    def _consider(self, op: tuple) -> None:
        op = self._resolve(op)
        if op is None:
            return
        stamps = self._stamps(op)
        hit = self.cache.get(op)
        if hit is not None and hit[0] == stamps:
            score = hit[1]                       # nothing it reads has changed since
        else:
            r = self._score(op)
            score = r[0] if r is not None else float("-inf")
            self.cache[op] = (stamps, score)
        if score > self.o.threshold:
            self._push(op, score)

    def _stop(self, t0: float) -> bool:
        if self.o.max_ops and self.executed >= self.o.max_ops:
            return True
        return bool(self.o.time_limit) and time.perf_counter() - t0 > self.o.time_limit

    # ---------------------------------------------------------------- loop
    def run(self) -> LearnStats:
        t0 = time.perf_counter()
        st = self.stats
        st.objective_start = self.s.objective()
        st.clusters_start = len(self.s.n)
        last_report = 0.0
        for rnd in range(self.o.max_rounds):
            st.rounds = rnd + 1
            before = self.executed
            cands: list[tuple] = [("M", a, b) for a, b in self.merge_candidates()]
            if self.o.compose:
                cands += [("C", a, b) for a, b in self.compose_candidates()]
            if self.o.merge_roles:
                cands += [("R",) + x for x in self.role_candidates()]
            self._report(f"round {rnd + 1}: scoring {len(cands):,} candidate operations")
            for op in cands:
                self._consider(op)
            while self.heap and not self._stop(t0):
                negs, _, op = heapq.heappop(self.heap)
                op = self._resolve(op)
                if op is None:
                    continue
                r = self._score(op)
                if r is None or r[0] <= self.o.threshold:
                    continue
                if self.heap and r[0] < -self.heap[0][0] - 1e-9:
                    self._push(op, r[0])           # stale: it goes back at its true score
                    continue
                self._execute(op, r[1])
                now = time.perf_counter()
                if now - last_report > 2.0:
                    last_report = now
                    self._report(f"round {rnd + 1}: {self.executed:,} operations, {len(self.s.n):,} clusters")
            self.heap.clear()
            if self.executed == before or self._stop(t0):
                break
        st.seconds = time.perf_counter() - t0
        st.objective_end = self.s.objective()
        st.clusters_end = len(self.s.n)
        self._report("done")
        return st

    def _report(self, msg: str) -> None:
        if self.progress is not None:
            self.progress(msg, self.stats)


def learn_usp(qlf: QLFCorpus, options: USPOptions | None = None, progress: Progress | None = None
              ) -> tuple[USPState, LearnStats]:
    """USP-Learn on a corpus of QLFs: the final semantic parses (a
    :class:`USPState`, whose statistics are the learned MLN's weights) and
    what the search did."""
    options = options or USPOptions()
    options.check()
    state = USPState(qlf, Priors(options.alpha, options.beta))
    stats = Learner(state, options, progress).run()
    return state, stats
