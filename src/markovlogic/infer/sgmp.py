"""Sparse generalized max-product (Culotta's thesis, chapter 9): MAP by
message passing between clusters of factors.

The atoms are partitioned into clusters (by predicate: ``partition`` maps
predicate names to cluster ids; by default each predicate is a cluster).
Each ground clause belongs to the cluster of its first atom, and each
cluster ``c`` is one big factor ``F_c`` over the atoms ``V_c`` its clauses
and owned atoms touch. Two clusters are neighbours when they share atoms
(``S_cd = V_c & V_d``). Max-product on this cluster graph:

    m_{c->d}(x_S) = max over V_c with x_{S_cd} = x_S of
                    F_c(x_{V_c}) + sum over e != d of m_{e->c}(x_{S_ec})

(log space, up to constants), and each cluster's belief is ``F_c`` plus all
its incoming messages. The maximisations are *constrained local searches*:
the cluster's clauses, the incoming messages written as clauses, and the
clamped separator as hard unit clauses, solved by enumeration when the
cluster has at most ``exact_atoms`` atoms and by the compiled MaxWalkSAT
otherwise. Messages (``messages``):

* ``"univariate"``: one max-marginal per separator atom (two constrained
  searches per atom); the message is their sum (a product of univariate
  tables);
* ``"full"``: the exact table over the separator's ``2^|S|`` assignments
  (``|S| <= max_separator``);
* ``"nbest"``: the full table's ``n_best`` best entries, every other
  assignment at the worst kept value (a sparse table).

A table over ``x_S`` enters a local search as one clause per assignment
``s``: the disjunction of the literals that differ from ``s``, weighted
``-m(s)`` (it is false exactly at ``s``), so the score changes by ``m(s)``
there, up to a constant.

The schedule visits the clusters in order, ``iterations`` times or until no
message changes. After each round every cluster decodes its belief and the
owned atoms of each cluster form a world; the best world seen (scored on
the whole network) is the answer. On a tree-structured cluster graph with
exact local searches and full (or, with one-atom separators, univariate)
messages, max-product is exact: the answer is the optimum.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import OptionError
from ..ground.network import GroundNetwork
from .results import MapResult

MESSAGES = ("univariate", "full", "nbest")


@dataclass
class SGMPOptions:
    """Options of SGMP (``mln infer --map --method sgmp``)."""

    partition: dict | None = None       # predicate name -> cluster id; None: one cluster per predicate
    messages: str = "univariate"
    n_best: int = 4
    iterations: int = 10
    exact_atoms: int = 14               # local searches by enumeration up to this many atoms
    max_separator: int = 8              # full / n-best tables up to 2^max_separator entries
    max_flips: int = 20_000             # MaxWalkSAT steps per local search
    seed: int = 0
    max_seconds: float | None = None
    extra: dict = field(default_factory=dict)

    def check(self) -> None:
        if self.messages not in MESSAGES:
            raise OptionError(f"unknown message type {self.messages!r}; choose one of {', '.join(MESSAGES)}")
        for name in ("n_best", "iterations", "exact_atoms", "max_separator", "max_flips"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise OptionError(f"{name.replace('_', '-')} must be an integer of at least 1, got {v!r}")
        if self.max_seconds is not None and not (self.max_seconds > 0):
            raise OptionError(f"max-seconds must be positive, got {self.max_seconds!r}")
        if self.partition is not None and not isinstance(self.partition, dict):
            raise OptionError("partition must map predicate names to cluster ids")


def parse_partition(text: str) -> dict:
    """``"A,B;C"`` -> {A: 0, B: 0, C: 1} (clusters separated by ';')."""
    out = {}
    for k, part in enumerate(text.split(";")):
        for name in part.split(","):
            name = name.strip()
            if name:
                if name in out:
                    raise OptionError(f"--partition names {name} twice")
                out[name] = k
    if not out:
        raise OptionError("--partition is empty; write clusters of predicates as A,B;C")
    return out


# ---------------------------------------------------------------- structure


@dataclass
class _Cluster:
    atoms: np.ndarray          # V_c: network atom ids (sorted)
    owned: np.ndarray          # the atoms whose value this cluster decides
    clauses: list              # (weight or None, [(local atom, positive), ...])
    blocks: list               # [[local atoms]]


def _owners(net: GroundNetwork, partition: dict | None) -> np.ndarray:
    names = net.predicates
    if partition is None:
        return np.asarray(net.atom_pred, dtype=np.int64).copy()
    unknown = sorted(set(partition) - set(names))
    if unknown:
        raise OptionError(f"the partition names unknown predicate(s) {', '.join(unknown)}")
    missing = sorted({names[p] for p in np.unique(net.atom_pred)} - set(partition))
    if missing:
        raise OptionError(f"the partition does not cover the network: no cluster for {', '.join(missing)}")
    ids = {}
    table = np.array([ids.setdefault(partition[n], len(ids)) if n in partition else -1 for n in names],
                     dtype=np.int64)
    return table[net.atom_pred]


def build_clusters(net: GroundNetwork, partition: dict | None) -> tuple[list[_Cluster], np.ndarray]:
    owner = _owners(net, partition)
    labels = np.unique(owner)
    remap = {int(v): k for k, v in enumerate(labels)}
    owner = np.array([remap[int(v)] for v in owner], dtype=np.int64)
    K = len(labels)
    cl_atoms: list[set] = [set(np.flatnonzero(owner == k).tolist()) for k in range(K)]
    cl_clauses: list[list] = [[] for _ in range(K)]
    for c in range(net.n_clauses):
        lits = net.clause_literals(c)
        if not lits:
            continue
        k = int(owner[lits[0][0]])
        cl_clauses[k].append((None if net.is_hard[c] else float(net.weight[c]), lits))
        cl_atoms[k].update(a for a, _ in lits)
    cl_blocks: list[list] = [[] for _ in range(K)]
    for b in range(net.n_blocks):
        atoms = net.block_atoms[net.block_start[b]:net.block_start[b + 1]].tolist()
        k = int(owner[atoms[0]])
        cl_blocks[k].append(atoms)
        cl_atoms[k].update(atoms)
    clusters = []
    for k in range(K):
        atoms = np.array(sorted(cl_atoms[k]), dtype=np.int64)
        local = {int(a): i for i, a in enumerate(atoms)}
        clauses = [(w, [(local[a], p) for a, p in lits]) for w, lits in cl_clauses[k]]
        blocks = [[local[a] for a in blk] for blk in cl_blocks[k]]
        clusters.append(_Cluster(atoms, np.flatnonzero(owner == k), clauses, blocks))
    return clusters, owner


# ---------------------------------------------------------------- local search


class _Local:
    """Constrained local searches of one cluster."""

    def __init__(self, cl: _Cluster, opt: SGMPOptions, rng: np.random.Generator):
        self.cl = cl
        self.opt = opt
        self.rng = rng
        self.index = {int(a): i for i, a in enumerate(cl.atoms)}
        self.calls = 0

    def best(self, tables: list, clamp: dict) -> tuple[float, np.ndarray]:
        """max of F_c + tables with the atoms of ``clamp`` (network id -> bool)
        fixed: (score, local world). ``tables``: (network atom ids, dict
        assignment tuple -> value, default)."""
        from .exact import exact_map
        from .maxwalksat import maxwalksat

        self.calls += 1
        clauses = list(self.cl.clauses)
        for atoms, entries, default in tables:
            loc = [self.index[int(a)] for a in atoms]
            for s, value in _table_items(len(loc), entries, default):
                lits = [(loc[i], not bool(s[i])) for i in range(len(loc))]
                clauses.append((-float(value), lits))
        for a, v in clamp.items():
            clauses.append((None, [(self.index[int(a)], bool(v))]))
        n = len(self.cl.atoms)
        net = GroundNetwork.from_clauses(n, clauses, blocks=self.cl.blocks)
        if n <= self.opt.exact_atoms:
            res = exact_map(net)
        else:
            res = maxwalksat(net, max_flips=self.opt.max_flips, max_tries=1, seed=int(self.rng.integers(2**31)))
        if res.hard_violated:
            return -np.inf, res.world
        return float(net.score(res.world)), res.world


def _table_items(k: int, entries: dict, default: float):
    """Every assignment of a k-atom table with its value (entries, else default)."""
    for code in range(1 << k):
        s = tuple((code >> i) & 1 for i in range(k))
        yield s, entries.get(s, default)


# ---------------------------------------------------------------- messages


def _message(local: _Local, sep: np.ndarray, incoming: list, opt: SGMPOptions):
    """The message of a cluster over its separator ``sep`` with a neighbour,
    given the other incoming tables: (atoms, entries, default)."""
    k = len(sep)
    if opt.messages == "univariate" or k > opt.max_separator:
        entries_sum = np.zeros(k)
        for i, a in enumerate(sep):
            hi, _ = local.best(incoming, {int(a): True})
            lo, _ = local.best(incoming, {int(a): False})
            if not np.isfinite(hi) and not np.isfinite(lo):
                entries_sum[i] = 0.0
            elif not np.isfinite(hi):
                entries_sum[i] = -1e6
            elif not np.isfinite(lo):
                entries_sum[i] = 1e6
            else:
                entries_sum[i] = hi - lo
        # a product of univariate tables: one one-atom table per separator atom
        return [(np.array([a]), {(1,): float(entries_sum[i])}, 0.0) for i, a in enumerate(sep)]
    values = {}
    for s, _ in _table_items(k, {}, 0.0):
        score, _ = local.best(incoming, {int(a): bool(v) for a, v in zip(sep, s)})
        values[s] = score
    finite = [v for v in values.values() if np.isfinite(v)]
    top = max(finite) if finite else 0.0
    values = {s: (v - top if np.isfinite(v) else -1e6) for s, v in values.items()}
    if opt.messages == "nbest" and len(values) > opt.n_best:
        kept = sorted(values.items(), key=lambda kv: -kv[1])[:opt.n_best]
        default = kept[-1][1]
        return [(sep, dict(kept), default)]
    return [(sep, values, 0.0)]


def _changed(old: list, new: list) -> float:
    if old is None:
        return np.inf
    diff = 0.0
    for (a1, e1, d1), (a2, e2, d2) in zip(old, new):
        keys = set(e1) | set(e2)
        diff = max(diff, abs(d1 - d2), *(abs(e1.get(s, d1) - e2.get(s, d2)) for s in keys))
    return diff


def sgmp_map(net: GroundNetwork, options: SGMPOptions | None = None, **kw) -> MapResult:
    """MAP by sparse generalized max-product (module docstring)."""
    opt = options or SGMPOptions(**kw)
    opt.check()
    start = time.perf_counter()
    rng = np.random.default_rng(opt.seed)
    clusters, owner = build_clusters(net, opt.partition)
    K = len(clusters)
    locals_ = [_Local(c, opt, rng) for c in clusters]
    sep = {}
    for c in range(K):
        for d in range(K):
            if c != d:
                s = np.intersect1d(clusters[c].atoms, clusters[d].atoms)
                if len(s):
                    sep[(c, d)] = s
    msgs: dict = {key: None for key in sep}
    best_world = np.zeros(net.n_atoms, dtype=bool)
    best_score = -np.inf
    best_violated = None
    rounds = 0
    converged = False
    for it in range(opt.iterations):
        rounds += 1
        change = 0.0
        for c in range(K):
            for d in range(K):
                if (c, d) not in sep:
                    continue
                incoming = [t for (e, c2), m in msgs.items() if c2 == c and e != d and m is not None for t in m]
                new = _message(locals_[c], sep[(c, d)], incoming, opt)
                change = max(change, _changed(msgs[(c, d)], new))
                msgs[(c, d)] = new
        # decode: each cluster's belief, its owned atoms
        world = np.zeros(net.n_atoms, dtype=bool)
        for c in range(K):
            incoming = [t for (e, c2), m in msgs.items() if c2 == c and m is not None for t in m]
            _, local_world = locals_[c].best(incoming, {})
            pos = np.searchsorted(clusters[c].atoms, clusters[c].owned)
            world[clusters[c].owned] = local_world[pos]
        violated = net.hard_violated(world)
        score = net.score(world)
        if (best_violated is None or violated < best_violated
                or (violated == best_violated and score > best_score)):
            best_world, best_score, best_violated = world, score, violated
        if change < 1e-9:
            converged = True
            break
        if opt.max_seconds is not None and time.perf_counter() - start > opt.max_seconds:
            break
    if K == 0:
        best_violated = net.hard_violated(best_world)
        best_score = net.score(best_world)
    return MapResult(world=best_world, score=float(best_score), cost=float(net.cost(best_world)),
                     hard_violated=int(best_violated), method="sgmp", seconds=time.perf_counter() - start,
                     stats={"clusters": K, "separators": len(sep) // 1, "rounds": rounds, "converged": converged,
                            "local_searches": sum(lc.calls for lc in locals_), "messages": opt.messages})
