"""The USP model's state: semantic parses of a corpus, the lambda-form
clusters and argument types they define, and the closed-form log-likelihood
(Poon's thesis, §5.3.3 and §5.4).

A *part* is a connected piece of a QLF, named by its root node; every node
belongs to one part (``root``). A part has a core form (``pform``, the
canonical string of its atoms), a cluster (``clust``), and, unless it is a
sentence's root, an argument type (``atype``) and argument form (``aform``:
the lambda form of the edge to its parent part, ``label`` for an edge from the
parent part's root, ``path/label`` from deeper inside it) in its parent
part's cluster.

The four formulas of the USP MLN with their local normalisation give the
completion log-likelihood in closed form (weights are the log relative
frequencies). With ``g(x) = x log x``:

* core forms given the cluster:   sum_c [ sum_f g(n_cf) - g(n_c) ]
* argument forms given the type:  sum_t [ sum_f g(n_tf) - g(T_t) ]
* argument clusters given the type: sum_t [ sum_c g(n_tc) - g(T_t) ]
* argument numbers given the type (over all parts of the type's cluster,
  zero included): sum_t [ sum_k g(m_tk) - g(n_c(t)) ]
* plus, as Poon's code does, the clusters of sentence roots:
  sum_c g(r_c) - g(R).

The priors: ``alpha`` times the number of parameters (non-zero counts of all
these multinomials; as in Poon's code, the count of parts with no argument
of a type is implied by the others and is not a parameter) and ``beta`` times the number of ``conj`` edges whose two
parts are in one cluster. :meth:`USPState.objective` computes the whole;
the ``score_*`` methods give the exact change an operator makes, from
sufficient statistics kept up to date, and the ``apply_*`` methods make it.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from math import log

import numpy as np

from .qlf import QLFCorpus


def g(x: float) -> float:
    return x * log(x) if x > 0 else 0.0


def mix(x: float, y: float) -> float:
    """g(x + y) - g(x) - g(y): the log-likelihood lost when two counts of one
    multinomial are normalised together (or gained when two values merge)."""
    return g(x + y) - g(x) - g(y)


def _add(d: dict, k, v) -> None:
    x = d.get(k, 0) + v
    if x:
        d[k] = x
    else:
        d.pop(k, None)


@dataclass
class Priors:
    alpha: float = -5.0     # log prior per parameter (non-zero count)
    beta: float = -10.0     # log prior per conj edge inside one cluster


class USPState:
    """Semantic parses of a corpus and the statistics of the USP MLN.

    Per node (numpy arrays): ``root``, ``path`` (id of the label path from
    the part's root to the node), and at part roots ``clust``, ``pform``,
    ``atype``, ``aform``, ``ppart`` (root of the parent part, -1 for a
    sentence root). Per cluster and type (dicts of counts): see the module
    text. Initial parses (§5.4): every node its own part, one cluster per core
    form (atomic forms with the same lemma and POS are merged), one argument
    type per argument form in each cluster.
    """

    def __init__(self, qlf: QLFCorpus, priors: Priors | None = None) -> None:
        self.qlf = qlf
        self.priors = priors or Priors()
        n = qlf.n_nodes
        self.head = qlf.head.astype(np.int64)
        self.label = qlf.label
        self.root = np.arange(n, dtype=np.int64)
        self.path = np.zeros(n, dtype=np.int32)
        self.paths: list[str] = [""]
        self._path_id: dict[str, int] = {"": 0}
        self.core_forms: list[str] = list(qlf.vocab.forms)
        self.core_size: dict[int, int] = {}         # number of atoms of each composite core form
        self._core_id = {f: i for i, f in enumerate(self.core_forms)}
        self.arg_forms: list[str] = list(qlf.vocab.labels)
        self._arg_id = {f: i for i, f in enumerate(self.arg_forms)}
        self.conj_label = np.array([x.startswith("conj") for x in qlf.vocab.labels] + [False], dtype=bool)
        self.clust = qlf.form.astype(np.int64).copy()
        self.pform = qlf.form.astype(np.int64).copy()
        self.ppart = self.head.copy()
        self.atype = np.full(n, -1, dtype=np.int64)
        self.aform = np.where(self.head >= 0, qlf.label, -1).astype(np.int64)
        self.next_clust = len(self.core_forms)
        self.version: dict[int, int] = {}
        self._args_cache: dict[int, tuple] = {}
        self._init_stats()

    # ------------------------------------------------------------------ setup
    def _init_stats(self) -> None:
        n_forms = len(self.core_forms)
        counts = np.bincount(self.clust, minlength=n_forms)
        present = np.nonzero(counts)[0]
        self.n: dict[int, int] = {int(c): int(counts[c]) for c in present}
        self.F: dict[int, dict[int, int]] = {c: {c: k} for c, k in self.n.items()}
        self.form_clust: dict[int, set[int]] = {c: {c} for c in self.n}
        roots = np.nonzero(self.head < 0)[0]
        rc = np.bincount(self.clust[roots], minlength=n_forms)
        self.ROOT: dict[int, int] = {int(c): int(rc[c]) for c in np.nonzero(rc)[0]}
        self.R = int(len(roots))
        self.types: dict[int, set[int]] = {c: set() for c in self.n}
        self.owner: dict[int, int] = {}
        self.AF: dict[int, dict[int, int]] = {}
        self.AC: dict[int, dict[int, int]] = {}
        self.AN: dict[int, dict[int, int]] = {}
        self.T: dict[int, int] = {}
        self.P: dict[int, int] = {}
        self.parents: dict[int, dict[int, int]] = {c: {} for c in self.n}
        self.conj: dict[int, dict[int, int]] = {c: {} for c in self.n}
        edges = np.nonzero(self.head >= 0)[0]
        self.next_type = 0
        if len(edges):
            pc = self.clust[self.head[edges]]
            lab = self.aform[edges]
            key = pc * (len(self.arg_forms) + 1) + lab
            uniq, tid = np.unique(key, return_inverse=True)
            self.atype[edges] = tid
            self.next_type = len(uniq)
            for t, k in enumerate(uniq.tolist()):
                c, f = divmod(k, len(self.arg_forms) + 1)
                self.owner[t] = c
                self.types[c].add(t)
                self.AF[t] = {f: 0}
                self.AC[t] = {}
                self.AN[t] = {}
            tc = np.bincount(tid, minlength=len(uniq))
            for t in range(len(uniq)):
                f = next(iter(self.AF[t]))
                self.AF[t][f] = int(tc[t])
                self.T[t] = int(tc[t])
            self._fill_ac_an(edges)
            cj = edges[self.conj_label[self.label[edges]]]
            if len(cj):
                a, b = self.clust[self.head[cj]], self.clust[cj]
                pairs, cnt = np.unique(np.stack([np.minimum(a, b), np.maximum(a, b)]), axis=1, return_counts=True)
                for (x, y), k in zip(pairs.T.tolist(), cnt.tolist()):
                    _add(self.conj[x], y, k)
                    if x != y:
                        _add(self.conj[y], x, k)

    def _fill_ac_an(self, edges: np.ndarray) -> None:
        t = self.atype[edges]
        ch = self.clust[edges]
        ntc = int(max(self.next_clust, ch.max() + 1))
        pairs, cnt = np.unique(t * ntc + ch, return_counts=True)
        for k, m in zip(pairs.tolist(), cnt.tolist()):
            tt, cc = divmod(k, ntc)
            self.AC[tt][cc] = m
            _add(self.parents[cc], tt, m)
        part = self.ppart[edges]
        nn = len(self.head) + 1
        tp, k = np.unique(t * nn + part, return_counts=True)
        tt = tp // nn
        key2, cnt2 = np.unique(tt * (k.max() + 1) + k, return_counts=True)
        for kk, m in zip(key2.tolist(), cnt2.tolist()):
            ty, num = divmod(kk, int(k.max()) + 1)
            self.AN[ty][num] = m
            self.P[ty] = self.P.get(ty, 0) + m

    # -------------------------------------------------------------- objective
    def type_ll(self, t: int) -> float:
        return self._type_ll(self.AF[t], self.AC[t], self.AN[t], self.P[t], self.n[self.owner[t]], self.T[t])

    def _type_ll(self, af: dict, ac: dict, an: dict, p: int, n: int, tot: int) -> float:
        if tot == 0:
            return 0.0
        s = sum(g(v) for v in af.values()) + sum(g(v) for v in ac.values()) - 2 * g(tot)
        s += sum(g(v) for v in an.values()) + g(n - p) - g(n)
        return s + self.priors.alpha * (len(af) + len(ac) + len(an))

    def clust_ll(self, c: int) -> float:
        f = self.F[c]
        return sum(g(v) for v in f.values()) - g(self.n[c]) + self.priors.alpha * len(f)

    def root_ll(self) -> float:
        return sum(g(v) for v in self.ROOT.values()) - g(self.R) + self.priors.alpha * len(self.ROOT)

    def conj_same(self) -> int:
        return sum(d.get(c, 0) for c, d in self.conj.items())

    def objective(self) -> float:
        """The regularised completion log-likelihood of the current parses,
        from the statistics (log-likelihood plus the alpha and beta priors)."""
        s = sum(self.clust_ll(c) for c in self.n) + self.root_ll()
        s += sum(self.type_ll(t) for t in self.owner)
        return s + self.priors.beta * self.conj_same()

    def objective_from_parses(self) -> float:
        """The same objective recounted from the per-node parse arrays alone
        (no statistics): the oracle the operator tests compare against."""
        a = self.priors.alpha
        roots = np.nonzero(self.root == np.arange(len(self.root)))[0]

        def mult(keys: np.ndarray, groups: np.ndarray) -> float:
            if len(keys) == 0:
                return 0.0
            _, cnt = np.unique(np.stack([groups, keys]), axis=1, return_counts=True)
            _, gc = np.unique(groups, return_counts=True)
            return float(sum(g(x) for x in cnt.tolist()) - sum(g(x) for x in gc.tolist()) + a * len(cnt))

        s = mult(self.pform[roots], self.clust[roots])
        top = roots[self.ppart[roots] < 0]
        s += mult(self.clust[top], np.zeros(len(top), dtype=np.int64))
        args = roots[self.ppart[roots] >= 0]
        s += mult(self.aform[args], self.atype[args]) + mult(self.clust[args], self.atype[args])
        # numbers: for each type, every part of its owner cluster
        owner_of_part = self.clust[roots]
        part_index = {int(r): i for i, r in enumerate(roots.tolist())}
        count: dict[tuple[int, int], int] = {}
        for u, t in zip(args.tolist(), self.atype[args].tolist()):
            key = (part_index[int(self.ppart[u])], t)
            count[key] = count.get(key, 0) + 1
        types_of: dict[int, set[int]] = {}
        for (pi, t) in count:
            types_of.setdefault(int(owner_of_part[pi]), set()).add(t)
        hist: dict[int, dict[int, int]] = {}
        for (pi, t), k in count.items():
            _add(hist.setdefault(t, {}), k, 1)
        csize = {}
        for c in owner_of_part.tolist():
            csize[c] = csize.get(c, 0) + 1
        for c, ts in types_of.items():
            for t in ts:
                h = hist[t]
                nz = csize[c] - sum(h.values())
                s += sum(g(v) for v in h.values()) + g(nz) - g(csize[c]) + a * len(h)
        cj = args[self.conj_label[self.label[args]]]
        s += self.priors.beta * int(np.sum(self.clust[cj] == self.clust[self.ppart[cj]]))
        return s

    # ------------------------------------------------------------- utilities
    def _bump(self, *clusters: int) -> None:
        for c in clusters:
            self.version[c] = self.version.get(c, 0) + 1
            self._args_cache.pop(c, None)

    def _touch_types(self, types) -> None:
        """Bump the clusters whose operator scores read these types: their
        owners and every cluster they take as an argument cluster."""
        for t in types:
            c = self.owner.get(t)
            if c is not None:
                self._bump(c)
                for x in self.AC[t]:
                    self.version[x] = self.version.get(x, 0) + 1

    def stamp(self, *clusters: int) -> tuple:
        """Versions of ``clusters``: an operator's score is unchanged while
        the stamps of the clusters it names are."""
        return tuple(self.version.get(c, 0) for c in clusters)

    def cluster_args(self, c: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The argument edges of cluster ``c``'s parts: (child part roots,
        their types, their parent part roots), cached until ``c`` changes."""
        hit = self._args_cache.get(c)
        if hit is not None:
            return hit
        has = self.ppart >= 0
        u = np.nonzero(has & (self.clust[np.where(has, self.ppart, 0)] == c))[0]
        out = (u, self.atype[u], self.ppart[u])
        if len(self._args_cache) > 4096:
            self._args_cache.clear()
        self._args_cache[c] = out
        return out

    def _intern(self, table: list, index: dict, s: str) -> int:
        i = index.get(s)
        if i is None:
            i = len(table)
            table.append(s)
            index[s] = i
        return i

    def core_form_id(self, s: str) -> int:
        return self._intern(self.core_forms, self._core_id, s)

    def arg_form_id(self, s: str) -> int:
        return self._intern(self.arg_forms, self._arg_id, s)

    def path_id(self, s: str) -> int:
        return self._intern(self.paths, self._path_id, s)

    # ----------------------------------------------------------------- MERGE
    def score_merge(self, c1: int, c2: int) -> tuple[float, tuple] | None:
        """Exact change of the objective by MERGE(c1, c2), and the plan
        (which cluster survives, how c2's argument types map onto c1's)."""
        if c1 == c2 or c1 not in self.n or c2 not in self.n:
            return None
        if len(self.types[c2]) > len(self.types[c1]) or (
                len(self.types[c2]) == len(self.types[c1]) and self.n[c2] > self.n[c1]):
            c1, c2 = c2, c1
        a = self.priors.alpha
        n1, n2 = self.n[c1], self.n[c2]
        N = n1 + n2
        d = self._dict_merge(self.F[c1], self.F[c2], n1, n2)
        r1, r2 = self.ROOT.get(c1, 0), self.ROOT.get(c2, 0)
        if r1 and r2:
            d += mix(r1, r2) - a
        p1, p2 = self.parents[c1], self.parents[c2]
        if len(p1) > len(p2):
            p1, p2 = p2, p1
        for t, x in p1.items():
            y = p2.get(t)
            if y is not None and self.owner[t] != c1 and self.owner[t] != c2:
                d += mix(x, y) - a
        d += self.priors.beta * self.conj[c1].get(c2, 0)
        dt, mapping = self._align(c1, c2, n1, n2)
        return d + dt, (c1, c2, mapping)

    def _dict_merge(self, d1: dict, d2: dict, t1: int, t2: int) -> float:
        if len(d1) > len(d2):
            d1, d2 = d2, d1
        s = -mix(t1, t2)
        shared = 0
        for k, x in d1.items():
            y = d2.get(k)
            if y is not None:
                s += mix(x, y)
                shared += 1
        return s - self.priors.alpha * shared

    def _renamed(self, d: dict, c1: int, c2: int) -> dict:
        if c2 not in d:
            return d
        out = dict(d)
        out[c1] = out.get(c1, 0) + out.pop(c2)
        return out

    def _num_sep(self, an: dict, p: int, n_old: int, N: int) -> float:
        return g(N - p) - g(N) - g(n_old - p) + g(n_old)

    def _pair_gain(self, A: tuple, B: tuple, N: int) -> float:
        """Change from merging type A (of c1) and type B (of c2) in the merged
        cluster of N parts, relative to keeping both."""
        a = self.priors.alpha
        _, afA, acA, anA, pA, tA = A
        _, afB, acB, anB, pB, tB = B
        s = self._dict_merge(afA, afB, tA, tB) + self._dict_merge(acA, acB, tA, tB)
        # numbers count over disjoint sets of parts (c1's and c2's): the histograms add
        x, y = (anA, anB) if len(anA) <= len(anB) else (anB, anA)
        shared = 0
        for k, v in x.items():
            w = y.get(k)
            if w is not None:
                s += mix(v, w)
                shared += 1
        s += g(N - pA - pB) - g(N - pA) - g(N - pB) + g(N)
        s += a * (-shared)
        return s

    def _align(self, c1: int, c2: int, n1: int, n2: int) -> tuple[float, dict]:
        a = self.priors.alpha
        N = n1 + n2
        total = 0.0
        A_list = []
        for t in self.types[c1]:
            ac = self.AC[t]
            if c1 in ac and c2 in ac:
                total += mix(ac[c1], ac[c2]) - a
            A_list.append((t, self.AF[t], self._renamed(ac, c1, c2), self.AN[t], self.P[t], self.T[t]))
            total += self._num_sep(self.AN[t], self.P[t], n1, N)
        B_list = []
        for t in self.types[c2]:
            ac = self.AC[t]
            if c1 in ac and c2 in ac:
                total += mix(ac[c1], ac[c2]) - a
            B_list.append((t, self.AF[t], self._renamed(ac, c1, c2), self.AN[t], self.P[t], self.T[t]))
            total += self._num_sep(self.AN[t], self.P[t], n2, N)
        B_list.sort(key=lambda x: (-x[5], x[0]))
        A_list.sort(key=lambda x: (-x[5], x[0]))
        used: set[int] = set()
        mapping: dict[int, int] = {}
        for B in B_list:
            best, best_a = 0.0, None
            for A in A_list:
                if A[0] in used:
                    continue
                gain = self._pair_gain(A, B, N)
                if gain > best:
                    best, best_a = gain, A[0]
            if best_a is not None:
                used.add(best_a)
                mapping[B[0]] = best_a
                total += best
        return total, mapping

    def apply_merge(self, plan: tuple) -> int:
        c1, c2, mapping = plan
        self._touch_types([t for t in self.parents[c2]] + list(self.types[c1]) + list(self.types[c2]))
        self._bump(*self.conj[c2])
        # 1. c2 -> c1 as a value of every type's argument clusters
        for t, x in list(self.parents[c2].items()):
            ac = self.AC[t]
            del ac[c2]
            _add(ac, c1, x)
            _add(self.parents[c1], t, x)
        del self.parents[c2]
        # 2. types of c2: merged into the mapped type of c1, or moved to c1
        remap = {}
        for tb in list(self.types[c2]):
            ta = mapping.get(tb)
            if ta is None:
                self.owner[tb] = c1
                self.types[c1].add(tb)
                continue
            remap[tb] = ta
            for f, x in self.AF[tb].items():
                _add(self.AF[ta], f, x)
            for c, x in self.AC[tb].items():
                _add(self.AC[ta], c, x)
                _add(self.parents[c], ta, x)
                _add(self.parents[c], tb, -x)
            for k, x in self.AN[tb].items():
                _add(self.AN[ta], k, x)
            self.P[ta] += self.P[tb]
            self.T[ta] += self.T[tb]
            self._drop_type(tb)
        del self.types[c2]
        # 3. core forms, roots, conj counts
        for f, x in self.F[c2].items():
            _add(self.F[c1], f, x)
            fc = self.form_clust[f]
            fc.discard(c2)
            fc.add(c1)
        self.n[c1] += self.n.pop(c2)
        del self.F[c2]
        r2 = self.ROOT.pop(c2, 0)
        if r2:
            _add(self.ROOT, c1, r2)
        same = self.conj[c2].get(c2, 0) + self.conj[c1].get(c2, 0)
        for z, x in self.conj[c2].items():
            if z in (c1, c2):
                continue
            _add(self.conj[c1], z, x)
            _add(self.conj[z], c1, x)
            self.conj[z].pop(c2, None)
        self.conj[c1].pop(c2, None)
        if same:
            _add(self.conj[c1], c1, same)
        del self.conj[c2]
        # 4. the parse arrays
        self.clust[self.clust == c2] = c1
        if remap:
            src = np.fromiter(remap.keys(), dtype=np.int64)
            dst = np.fromiter(remap.values(), dtype=np.int64)
            lut = np.arange(self.next_type + 1, dtype=np.int64)
            lut[src] = dst
            self.atype = np.where(self.atype >= 0, lut[np.maximum(self.atype, 0)], -1)
        self._touch_types(list(self.types[c1]))
        self._bump(c1, c2)
        return c1

    def _drop_type(self, t: int) -> None:
        c = self.owner.pop(t)
        self.types[c].discard(t)
        for x in (self.AF, self.AC, self.AN, self.T, self.P):
            x.pop(t, None)

    # ------------------------------------------------------------ MERGE_ROLE
    def score_merge_role(self, c: int, ta: int, tb: int) -> tuple[float, tuple] | None:
        """Exact change by merging argument types ``ta`` and ``tb`` of one
        cluster (Poon's code: ``scoreMergeArgs``); the number histogram of the
        merged type is recounted from the parts that have both."""
        if ta == tb or self.owner.get(ta) != c or self.owner.get(tb) != c:
            return None
        a = self.priors.alpha
        n = self.n[c]
        tA, tB = self.T[ta], self.T[tb]
        s = self._dict_merge(self.AF[ta], self.AF[tb], tA, tB) + self._dict_merge(self.AC[ta], self.AC[tb], tA, tB)
        u, t, part = self.cluster_args(c)
        sel = (t == ta) | (t == tb)
        _, k = np.unique(part[sel], return_counts=True)
        hist: dict[int, int] = {}
        if len(k):
            kk, m = np.unique(k, return_counts=True)
            hist = dict(zip(kk.tolist(), m.tolist()))
        p_new = int(len(k))
        old = 0.0
        for x in (ta, tb):
            an, p = self.AN[x], self.P[x]
            old += sum(g(v) for v in an.values()) + g(n - p) - g(n) + a * len(an)
        new = sum(g(v) for v in hist.values()) + g(n - p_new) - g(n) + a * len(hist)
        return s + new - old, (c, ta, tb, hist, p_new)

    def apply_merge_role(self, plan: tuple) -> None:
        c, ta, tb, hist, p_new = plan
        self._touch_types([ta, tb])
        for f, x in self.AF[tb].items():
            _add(self.AF[ta], f, x)
        for z, x in self.AC[tb].items():
            _add(self.AC[ta], z, x)
            _add(self.parents[z], ta, x)
            _add(self.parents[z], tb, -x)
        self.AN[ta] = dict(hist)
        self.P[ta] = p_new
        self.T[ta] += self.T[tb]
        self._drop_type(tb)
        self.atype[self.atype == tb] = ta
        self._touch_types([ta])
        self._bump(c)

    # --------------------------------------------------------------- COMPOSE
    NEW = -7        # the cluster COMPOSE creates, before it has an id

    def compose_instances(self, cr: int, ca: int) -> tuple[np.ndarray, np.ndarray]:
        """(argument part roots in ``ca``, their parent part roots in ``cr``)."""
        u, _, part = self.cluster_args(cr)
        sel = self.clust[u] == ca
        return u[sel], part[sel]

    def score_compose(self, cr: int, ca: int) -> tuple[float, dict] | None:
        """Exact change by COMPOSE(cr, ca): every part of ``ca`` that is an
        argument of a part of ``cr`` is lambda-reduced into it; the composed
        parts form a new cluster whose argument types are those of ``cr`` and
        ``ca`` (one new type for each old type their arguments had)."""
        if cr == ca or cr not in self.n or ca not in self.n:
            return None
        A, _ = self.compose_instances(cr, ca)
        if len(A) == 0:
            return None
        plan = self._compose_plan(cr, ca, A)
        return plan["delta"], plan

    def _compose_plan(self, cr: int, ca: int, A: np.ndarray) -> dict:
        a = self.priors.alpha
        NEW = self.NEW
        labels = self.qlf.vocab.labels
        R = np.unique(self.ppart[A])
        Aset, Rset = set(A.tolist()), set(R.tolist())
        # nodes of the affected parts, their new part roots and label paths
        in_parts = np.nonzero(np.isin(self.root, np.concatenate([R, A])))[0]
        old_root = self.root[in_parts]
        new_root = np.where(np.isin(old_root, A), self.ppart[np.maximum(old_root, 0)], old_root)
        prefix = {}
        for x in A.tolist():
            hp = self.paths[self.path[self.head[x]]]
            prefix[x] = (hp + "/" if hp else "") + labels[self.label[x]]
        node_path: dict[int, str] = {}
        for v, r0 in zip(in_parts.tolist(), old_root.tolist()):
            old = self.paths[self.path[v]]
            node_path[v] = prefix[r0] + ("/" + old if old else "") if r0 in Aset else old
        # canonical core forms of the new parts
        kids: dict[int, list[int]] = {}
        for v, r in zip(in_parts.tolist(), new_root.tolist()):
            if v != r:
                kids.setdefault(int(self.head[v]), []).append(v)
        forms = self.qlf.vocab.forms

        def canon(v: int) -> str:
            ks = kids.get(v)
            atom = forms[self.qlf.form[v]]
            if not ks:
                return atom
            return atom + "(" + " ".join(sorted(labels[self.label[k]] + " " + canon(k) for k in ks)) + ")"

        new_form = {r: self.core_form_id(canon(r)) for r in R.tolist()}
        size: dict[int, int] = {}
        for r in new_root.tolist():
            size[r] = size.get(r, 0) + 1
        for r, f in new_form.items():
            self.core_size[f] = size[r]

        def clust_after(x: int) -> int:
            return NEW if x in Rset else int(self.clust[x])

        # argument edges whose statistics change (keyed by the child part root)
        before = []          # (child, type, aform, child cluster, parent cluster)
        after = []           # (child, type or new-type key, aform, child cluster after, parent part after, parent cluster after)
        uR, tR, pR = self.cluster_args(cr)
        sel = np.isin(pR, R)
        for u, t, p in zip(uR[sel].tolist(), tR[sel].tolist(), pR[sel].tolist()):        # E1
            before.append((u, t, int(self.aform[u]), int(self.clust[u]), cr))
            if u not in Aset:
                after.append((u, ("r", t), int(self.aform[u]), clust_after(u), p, NEW))
        uA, tA, pA = self.cluster_args(ca)
        sel = np.isin(pA, A)
        for u, t, p in zip(uA[sel].tolist(), tA[sel].tolist(), pA[sel].tolist()):        # E2
            before.append((u, t, int(self.aform[u]), int(self.clust[u]), ca))
            hp = node_path[int(self.head[u])]
            lab = labels[self.label[u]]
            af = self.arg_form_id(hp + "/" + lab if hp else lab)
            after.append((u, ("a", t), af, clust_after(u), int(self.ppart[p]), NEW))
        e3 = [r for r in R.tolist() if self.ppart[r] >= 0 and int(self.ppart[r]) not in Rset
              and int(self.ppart[r]) not in Aset]
        for r in e3:                                                                      # E3
            pc = int(self.clust[self.ppart[r]])
            before.append((r, int(self.atype[r]), int(self.aform[r]), cr, pc))
            after.append((r, int(self.atype[r]), int(self.aform[r]), NEW, int(self.ppart[r]), pc))
        # new statistics of every affected type
        stats: dict = {}
        for t in set(self.types[cr]) | set(self.types[ca]) | {e[1] for e in before}:
            stats[t] = [dict(self.AF[t]), dict(self.AC[t]), dict(self.AN[t]), self.P[t], self.T[t]]
        for u, t, f, c, _ in before:
            st = stats[t]
            _add(st[0], f, -1)
            _add(st[1], c, -1)
            st[4] -= 1
        for u, tk, f, c, _, _ in after:
            st = stats.setdefault(tk, [{}, {}, {}, 0, 0])
            _add(st[0], f, 1)
            _add(st[1], c, 1)
            st[4] += 1
        # numbers: the affected parts' histograms out (old types), the new parts' in
        e3set = set(e3)
        cnt: dict = {}
        for e in before:
            if e[0] not in e3set:
                key = (int(self.ppart[e[0]]), e[1])
                cnt[key] = cnt.get(key, 0) + 1
        for (_, t), k in cnt.items():
            _add(stats[t][2], k, -1)
            stats[t][3] -= 1
        cnt = {}
        for e in after:
            if e[0] not in e3set:
                key = (e[4], e[1])
                cnt[key] = cnt.get(key, 0) + 1
        for (_, tk), k in cnt.items():
            _add(stats[tk][2], k, 1)
            stats[tk][3] += 1
        n_after = {cr: self.n[cr] - len(R), ca: self.n[ca] - len(A), NEW: len(R)}
        delta = 0.0
        for t, (af, ac, an, p, tot) in stats.items():
            if isinstance(t, tuple):
                own = NEW
            else:
                delta -= self.type_ll(t)
                own = self.owner[t]
            delta += self._type_ll(af, ac, an, p, n_after.get(own, self.n.get(own, 0)), tot)
        # core forms
        fr, fa = dict(self.F[cr]), dict(self.F[ca])
        for r in R.tolist():
            _add(fr, int(self.pform[r]), -1)
        for x in A.tolist():
            _add(fa, int(self.pform[x]), -1)
        fc: dict[int, int] = {}
        for r in R.tolist():
            _add(fc, new_form[r], 1)

        def fll(d: dict, n: int) -> float:
            return sum(g(v) for v in d.values()) - g(n) + a * len(d)

        delta += fll(fr, n_after[cr]) + fll(fa, n_after[ca]) + fll(fc, n_after[NEW])
        delta -= self.clust_ll(cr) + self.clust_ll(ca)
        # sentence roots
        n_top = int(np.sum(self.ppart[R] < 0))
        if n_top:
            r_old = self.ROOT[cr]
            delta += g(r_old - n_top) + g(n_top) - g(r_old) + a * (r_old - n_top > 0)
        # conj edges in one cluster
        conj_before = [(c, pc) for u, t, f, c, pc in before if self.conj_label[self.label[u]]]
        conj_after = [(c, pc) for u, tk, f, c, p, pc in after if self.conj_label[self.label[u]]]
        delta += self.priors.beta * (sum(c == pc for c, pc in conj_after) - sum(c == pc for c, pc in conj_before))
        return {"delta": delta, "cr": cr, "ca": ca, "R": R, "A": A, "new_form": new_form, "stats": stats,
                "after": after, "in_parts": in_parts, "new_root": new_root, "node_path": node_path,
                "fr": fr, "fa": fa, "fc": fc, "n_top": n_top, "conj": (conj_before, conj_after)}

    def apply_compose(self, plan: dict) -> int:
        NEW = self.NEW
        C = self.next_clust
        self.next_clust += 1
        cr, ca, R, A = plan["cr"], plan["ca"], plan["R"], plan["A"]
        self._touch_types([t for t in plan["stats"] if not isinstance(t, tuple)])

        def real(c: int) -> int:
            return C if c == NEW else c

        self.n[C] = 0
        self.types[C] = set()
        self.parents[C] = {}
        self.conj[C] = {}
        # types
        tid: dict = {}
        for t, (af, ac, an, p, tot) in plan["stats"].items():
            ac = {real(c): x for c, x in ac.items()}
            if isinstance(t, tuple):
                if tot == 0:
                    continue
                nt = self.next_type
                self.next_type += 1
                tid[t] = nt
                self.owner[nt] = C
                self.types[C].add(nt)
                old_ac: dict = {}
                t = nt
            else:
                old_ac = self.AC[t]
            for c, x in old_ac.items():
                _add(self.parents[c], t, -x)
            if tot == 0:
                self._drop_type(t)
                continue
            for c, x in ac.items():
                _add(self.parents[c], t, x)
            self.AF[t], self.AC[t], self.AN[t], self.P[t], self.T[t] = af, ac, an, p, tot
        # arrays
        in_parts, new_root = plan["in_parts"], plan["new_root"]
        self.root[in_parts] = new_root
        self.path[in_parts] = [self.path_id(plan["node_path"][v]) for v in in_parts.tolist()]
        self.clust[R] = C
        self.pform[R] = [plan["new_form"][r] for r in R.tolist()]
        self.ppart[A] = -1
        self.atype[A] = -1
        self.aform[A] = -1
        for u, tk, f, c, p, pc in plan["after"]:
            self.atype[u] = tid[tk] if isinstance(tk, tuple) else tk
            self.aform[u] = f
            self.ppart[u] = p
        # clusters
        for c, d in ((cr, plan["fr"]), (ca, plan["fa"])):
            for f in self.F[c]:
                if f not in d:
                    self.form_clust[f].discard(c)
            self.F[c] = d
        self.F[C] = plan["fc"]
        for f in plan["fc"]:
            self.form_clust.setdefault(f, set()).add(C)
        self.n[cr] -= len(R)
        self.n[ca] -= len(A)
        self.n[C] = len(R)
        if plan["n_top"]:
            _add(self.ROOT, cr, -plan["n_top"])
            _add(self.ROOT, C, plan["n_top"])
        conj_before, conj_after = plan["conj"]
        for c, pc in conj_before:
            self._conj_add(c, pc, -1)
        for c, pc in conj_after:
            self._conj_add(real(c), real(pc), 1)
        for c, pc in conj_before + conj_after:
            self._bump(real(c), real(pc))
        self._touch_types(tid.values())
        for c in (cr, ca):
            if self.n[c] == 0:
                assert not self.types[c], "an emptied cluster kept argument types"
                for d in (self.n, self.F, self.types, self.parents):
                    d.pop(c, None)
                assert not self.conj.get(c)
                self.conj.pop(c, None)
        self._bump(cr, ca, C)
        return C

    def _conj_add(self, x: int, y: int, k: int) -> None:
        _add(self.conj[x], y, k)
        if x != y:
            _add(self.conj[y], x, k)
