"""OntoUSP (Poon's thesis, chapter 6): an ISA hierarchy over the lambda-form
clusters that USP-Learn found, with hierarchical smoothing of their argument
types.

An *abstract cluster* has concrete clusters as ISA children and one
*abstract property* (abstract argument type) for each group of aligned
argument types of its children ("agent", "patient"). An argument type with
an abstract parent property is smoothed by m-estimation (§6.4): for each of
its three multinomials (argument forms, argument clusters, argument numbers
including zero) ``P'(v|t) = (m q_v + n_tv) / (m + n_t)``, where ``q`` is the
property's distribution: its children's pooled counts, keeping only values of
probability at least ``t_p`` (the thesis's cut-off for abstract clusters),
renormalised. The objective is the smoothed log-likelihood
``sum_t sum_v n_tv log P'(v|t)`` plus ``alpha`` per parameter *slot*: a value
of a type's multinomial costs a slot unless its parent property holds it
(the child inherits it); every slot of an abstract property costs one.

Operators (scored by the exact change of that objective, best first, above
``threshold``):

* ABSTRACT(c1, c2): a new abstract cluster over two clusters without a
  parent; their argument types are aligned greedily (largest first), each
  pair under a new abstract property when that improves the objective.
* ADDCHILD(a, c): cluster ``c`` becomes a child of abstract cluster ``a``;
  each of its types joins the property it improves most, if any.

Deviations from the thesis: the hierarchy has two levels (abstract clusters
over concrete ones; no abstract cluster over abstract ones, no MERGE of an
abstract cluster with a concrete one); it is learned after USP-Learn
converged rather than in the same agenda; aligned types are always tied by an
abstract property (the thesis may instead merge them into one concrete
property, with the prior gamma); core forms are not smoothed (the clusters'
core forms are disjoint). ``Ontology.role`` (the top of a type's property
chain) is the generic semantic role the thesis describes: the answer to
"which argument is this" across the clusters of one abstract concept.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass
from math import log
from typing import Callable

from ..errors import OptionError
from .model import Ontology, USPModel
from .state import g


@dataclass
class OntoOptions:
    m: float = 5.0                 # m-estimate weight of the parent distribution
    tp: float = 0.02               # cut-off: an abstract property keeps values of probability >= tp
    alpha: float = -5.0            # log prior per parameter slot
    threshold: float = 10.0
    min_parts: int = 5             # clusters smaller than this take no part
    max_children: int = 10         # children of one abstract cluster
    max_types: int = 15            # a cluster's largest argument types take part in alignments
    max_ops: int = 0
    time_limit: float = 0.0

    def check(self) -> None:
        if self.m <= 0:
            raise OptionError("--onto-m must be > 0")
        if not 0 < self.tp < 1:
            raise OptionError("--onto-tp must be in (0, 1)")
        if self.alpha > 0:
            raise OptionError("alpha is a log prior: it must be <= 0")


def _mle(d: dict) -> float:
    tot = sum(d.values())
    return sum(g(v) for v in d.values()) - g(tot)


def _smoothed(d: dict, q: dict, m: float) -> float:
    tot = sum(d.values())
    den = m + tot
    return sum(v * log((m * q.get(k, 0.0) + v) / den) for k, v in d.items())


def _dist(pooled: dict, tp: float) -> dict:
    tot = sum(pooled.values())
    if not tot:
        return {}
    keep = {k: v for k, v in pooled.items() if v >= tp * tot}
    z = sum(keep.values())
    return {k: v / z for k, v in keep.items()}


def _pool(dicts) -> dict:
    out: dict = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


class OntoState:
    """The hierarchy and the smoothed objective over a USP model's types."""

    def __init__(self, model: USPModel, options: OntoOptions) -> None:
        self.m = model
        self.o = options
        self.parent: dict[int, int] = {}            # concrete cluster -> abstract cluster
        self.children: dict[int, list[int]] = {}    # abstract cluster -> concrete clusters
        self.props: dict[int, list[int]] = {}       # abstract cluster -> its properties
        self.tparent: dict[int, int] = {}           # type -> property
        self.pchildren: dict[int, list[int]] = {}   # property -> types
        self.pdist: dict[int, tuple[dict, dict, dict]] = {}
        self.next_id = -10                          # abstract ids are negative
        self._data: dict[int, tuple[dict, dict, dict]] = {}
        self._keys: dict[int, tuple[set, set, set]] = {}
        self._base: dict[int, float] = {}
        self._group: dict[int, float] = {}            # property -> its current group score

    # ---------------------------------------------------------------- pieces
    def data(self, t: int) -> tuple[dict, dict, dict]:
        """(argument forms, argument clusters, numbers with zero) of type t."""
        hit = self._data.get(t)
        if hit is None:
            m = self.m
            an = dict(m.AN[t])
            z = m.n[m.owner[t]] - m.P[t]
            if z > 0:
                an[0] = z
            hit = (m.AF[t], m.AC[t], an)
            self._data[t] = hit
        return hit

    def keys(self, t: int) -> tuple[set, set, set]:
        hit = self._keys.get(t)
        if hit is None:
            af, ac, an = self.data(t)
            hit = (set(af), set(ac), {k for k in an if k})
            self._keys[t] = hit
        return hit

    def shared(self, ta: int, tb: int) -> int:
        """Values both types hold (numbers: k >= 1). Smoothing never raises a
        child's own likelihood and a parent slot pays for itself only when two
        children hold the value, so |alpha| times this bounds the gain of
        putting the two under one new property."""
        ka, kb = self.keys(ta), self.keys(tb)
        return len(ka[0] & kb[0]) + len(ka[1] & kb[1]) + len(ka[2] & kb[2])

    @staticmethod
    def _slots(d: dict, held: dict, numbers: bool) -> int:
        return sum(1 for k in d if k not in held and not (numbers and k == 0))

    def base(self, t: int) -> float:
        hit = self._base.get(t)
        if hit is None:
            hit = self._base[t] = self.type_score(t, None)
        return hit

    def top_types(self, c: int) -> list[int]:
        return sorted(self.m.types.get(c, []), key=lambda t: (-self.m.T[t], t))[: self.o.max_types]

    def type_score(self, t: int, dist: tuple[dict, dict, dict] | None) -> float:
        """Smoothed log-likelihood of type t under a parent distribution (or
        its maximum-likelihood one without a parent) plus its slot prior."""
        a = self.o.alpha
        s = 0.0
        for i, d in enumerate(self.data(t)):
            if dist is None:
                s += _mle(d) + a * self._slots(d, {}, i == 2)
            else:
                s += _smoothed(d, dist[i], self.o.m) + a * self._slots(d, dist[i], i == 2)
        return s

    def prop_slots(self, dist: tuple[dict, dict, dict]) -> int:
        return len(dist[0]) + len(dist[1]) + sum(1 for k in dist[2] if k != 0)

    def prop_dist(self, types: list[int]) -> tuple[dict, dict, dict]:
        datas = [self.data(t) for t in types]
        return tuple(_dist(_pool(d[i] for d in datas), self.o.tp) for i in range(3))

    def group_score(self, types: list[int]) -> float:
        """Objective of a property with these child types (its slots and the
        children's smoothed scores)."""
        dist = self.prop_dist(types)
        return self.o.alpha * self.prop_slots(dist) + sum(self.type_score(t, dist) for t in types)

    def objective(self) -> float:
        """The ontology's part of the objective: every type of every cluster
        (smoothed if it has a property) and the properties' slots."""
        s = 0.0
        for t in self.m.owner:
            p = self.tparent.get(t)
            s += self.type_score(t, self.pdist[p] if p is not None else None)
        for p, dist in self.pdist.items():
            s += self.o.alpha * self.prop_slots(dist)
        return s

    # -------------------------------------------------------------- ABSTRACT
    def score_abstract(self, c1: int, c2: int) -> tuple[float, list] | None:
        if c1 == c2 or c1 in self.parent or c2 in self.parent or c1 < 0 or c2 < 0:
            return None
        t1s, t2s = self.top_types(c1), self.top_types(c2)
        if not t1s or not t2s:
            return None
        base = {t: self.base(t) for t in t1s + t2s}
        used: set[int] = set()
        pairs = []
        total = 0.0
        for tb in sorted(t2s, key=lambda t: -self.m.T[t]):
            best, best_a = 0.0, None
            for ta in t1s:
                if ta in used or -self.o.alpha * self.shared(ta, tb) <= best:
                    continue                    # the bound: it cannot beat the best so far
                gain = self.group_score([ta, tb]) - base[ta] - base[tb]
                if gain > best:
                    best, best_a = gain, ta
            if best_a is not None:
                used.add(best_a)
                pairs.append((best_a, tb))
                total += best
        return total, pairs

    def apply_abstract(self, c1: int, c2: int, pairs: list) -> int:
        a = self.next_id
        self.next_id -= 1
        self.parent[c1] = self.parent[c2] = a
        self.children[a] = [c1, c2]
        self.props[a] = []
        for ta, tb in pairs:
            p = self.next_id
            self.next_id -= 1
            self.props[a].append(p)
            self.pchildren[p] = [ta, tb]
            self.tparent[ta] = self.tparent[tb] = p
            self.pdist[p] = self.prop_dist([ta, tb])
            self._group[p] = self.group_score([ta, tb])
        return a

    # -------------------------------------------------------------- ADDCHILD
    def score_addchild(self, a: int, c: int) -> tuple[float, list] | None:
        if a not in self.children or c in self.parent or c < 0 or len(self.children[a]) >= self.o.max_children:
            return None
        ts = self.top_types(c)
        if not ts:
            return None
        used: set[int] = set()
        links = []
        total = 0.0
        for t in ts:
            base_t = self.base(t)
            kt = self.keys(t)
            best, best_p = 0.0, None
            for p in self.props[a]:
                if p in used:
                    continue
                dist = self.pdist[p]
                if not (kt[0] & dist[0].keys() or kt[1] & dist[1].keys()):
                    continue                     # nothing in common with the property: skip
                kids = self.pchildren[p]
                old = self._group[p]
                new = self.group_score(kids + [t])
                gain = new - old - base_t
                if gain > best:
                    best, best_p = gain, p
            if best_p is not None:
                used.add(best_p)
                links.append((t, best_p))
                total += best
        return total, links

    def apply_addchild(self, a: int, c: int, links: list) -> None:
        self.parent[c] = a
        self.children[a].append(c)
        for t, p in links:
            self.pchildren[p].append(t)
            self.tparent[t] = p
            self.pdist[p] = self.prop_dist(self.pchildren[p])
            self._group[p] = self.group_score(self.pchildren[p])

    def ontology(self) -> Ontology:
        return Ontology(parent=dict(self.parent), tparent=dict(self.tparent),
                        abstract={a: list(ps) for a, ps in self.props.items()},
                        prop_children={p: list(ts) for p, ts in self.pchildren.items()}, m=self.o.m,
                        dist={p: [list(map(list, d.items())) for d in dist] for p, dist in self.pdist.items()})


@dataclass
class OntoStats:
    abstracts: int = 0
    addchildren: int = 0
    scored: int = 0
    seconds: float = 0.0
    objective_start: float = 0.0
    objective_end: float = 0.0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def learn_ontology(model: USPModel, candidates, options: OntoOptions | None = None,
                   progress: Callable[[str], None] | None = None) -> tuple[OntoState, OntoStats]:
    """OntoUSP's ISA search over a learned USP model: ABSTRACT for the
    candidate pairs of clusters, ADDCHILD of a new child's partners to its
    abstract cluster, best first. ``candidates`` is a list of pairs, or a
    list of such lists searched one after the other (phases: the clusters
    that the first phase links stay linked). Sets ``model.ontology``."""
    o = options or OntoOptions()
    o.check()
    phases = candidates if candidates and isinstance(candidates[0], list) else [candidates]
    st = OntoState(model, o)
    stats = OntoStats(objective_start=st.objective())
    t0 = time.perf_counter()
    big = {c for c, k in model.n.items() if k >= o.min_parts and model.types.get(c)}
    done = 0
    for phase in phases:
        partners: dict[int, set[int]] = {}
        for a, b in phase:
            if a in big and b in big and a != b:
                partners.setdefault(a, set()).add(b)
                partners.setdefault(b, set()).add(a)
        done = _search(st, o, partners, stats, t0, done, progress)
    stats.seconds = time.perf_counter() - t0
    stats.objective_end = st.objective()
    model.ontology = st.ontology()
    if progress is not None:
        progress(f"ontology: {stats.abstracts} abstract clusters, {stats.addchildren} children added")
    return st, stats


def _search(st: OntoState, o: OntoOptions, partners: dict, stats: OntoStats, t0: float, done: int,
            progress) -> int:
    heap: list = []
    seq = 0

    def push(op, score):
        nonlocal seq
        seq += 1
        heapq.heappush(heap, (-score, seq, op))

    def score(op):
        stats.scored += 1
        if op[0] == "A":
            return st.score_abstract(op[1], op[2])
        return st.score_addchild(op[1], op[2])

    for x, ys in sorted(partners.items()):
        if x in st.parent:                        # linked by an earlier phase: its partners may join
            for y in sorted(ys):
                if y not in st.parent:
                    r = score(("D", st.parent[x], y))
                    if r is not None and r[0] > o.threshold:
                        push(("D", st.parent[x], y), r[0])
    for a, b in sorted({(min(x, y), max(x, y)) for x, ys in partners.items() for y in ys}):
        r = score(("A", a, b))
        if r is not None and r[0] > o.threshold:
            push(("A", a, b), r[0])
    last = 0.0
    while heap:
        if (o.max_ops and done >= o.max_ops) or (o.time_limit and time.perf_counter() - t0 > o.time_limit):
            break
        _, _, op = heapq.heappop(heap)
        r = score(op)
        if r is None or r[0] <= o.threshold:
            continue
        if heap and r[0] < -heap[0][0] - 1e-9:
            push(op, r[0])
            continue
        if op[0] == "A":
            a = st.apply_abstract(op[1], op[2], r[1])
            stats.abstracts += 1
            added = [op[1], op[2]]
        else:
            st.apply_addchild(op[1], op[2], r[1])
            stats.addchildren += 1
            a = op[1]
            added = [op[2]]
        done += 1
        for child in added:                       # the new children's partners may join the abstract cluster
            for y in partners.get(child, ()):
                if y not in st.parent:
                    r2 = score(("D", a, y))
                    if r2 is not None and r2[0] > o.threshold:
                        push(("D", a, y), r2[0])
        now = time.perf_counter()
        if progress is not None and now - last > 2.0:
            last = now
            progress(f"ontology: {stats.abstracts} abstract clusters, {stats.addchildren} children added")
    return done


def neighbour_pairs_of(model: USPModel, min_shared: int = 10, max_partners: int = 20) -> list[tuple[int, int]]:
    """USP's MERGE candidates (shared neighbours) from a learned model's parses."""
    from .learn import neighbour_pairs

    kb = model.kb
    return neighbour_pairs(kb["clust"], kb["ppart"], int(max(model.n, default=0)) + 1, min_shared, max_partners)


def head_pairs(model: USPModel, min_parts: int = 5) -> list[tuple[int, int]]:
    """Pairs of clusters whose parts have the same head word (lemma and POS
    of the part's root), e.g. ``use`` and ``use(aux:pass be)``: the other
    source of ABSTRACT candidates beside USP's shared-neighbour pairs."""
    import numpy as np

    kb, q = model.kb, model.qlf
    r = np.nonzero(kb["root"] == np.arange(len(kb["root"])))[0]
    key = np.unique(np.stack([q.form[r].astype(np.int64), kb["clust"][r]]), axis=1)
    out = set()
    by_form: dict[int, list[int]] = {}
    for f, c in key.T.tolist():
        if model.n.get(c, 0) >= min_parts:
            by_form.setdefault(f, []).append(c)
    for cs in by_form.values():
        if 1 < len(cs) <= 20:
            for i in range(len(cs)):
                for j in range(i + 1, len(cs)):
                    out.add((min(cs[i], cs[j]), max(cs[i], cs[j])))
    return sorted(out)
