"""Sparse Generalized Max-Product (Culotta's thesis, section 9.2, Algorithm 5):
MAP by message passing between clusters of clauses, each cluster solved by a
WalkSAT restricted to it.

Clusters
    The clauses (factors) are split into disjoint clusters; a cluster's
    variables are the atoms of its clauses, so neighbouring clusters share
    the atoms of the clauses that link them (the *separator* ``X^ij``). The
    split comes from a partition of the atoms: ``"predicates"`` puts each
    predicate's atoms in a group of its own; ``"graph"`` partitions the
    atom-clause graph (:mod:`.graph_partition`: connected components, then
    recursive leading-eigenvector modularity bisection while a split cuts
    at most a fifth of a part's clauses, and no split at all if the parts
    would leave most atoms on separators); ``"auto"`` (the default, also
    ``None``) is ``"predicates"`` unless that is degenerate (one predicate
    has all the atoms, or one holds more than half of them), then
    ``"graph"``. A list of lists of predicate names groups them as the user
    says, and an integer array gives a group per atom; the user's partition
    is always used as given. A clause goes to the group holding
    most of its atoms (ties: the lowest group), an exactly-one block to the
    group of its first atom. Every predicate that has atoms in the network
    must be in exactly one group (:class:`~markovlogic.errors.OptionError`
    otherwise).

Messages (``messages``), in the log domain (scores add), each normalised to a
maximum of 0:

- ``"full"``: a table over every assignment of the separator (at most
  ``max_full_atoms`` atoms: 2^s entries);
- ``"n-best"``: the ``n_best`` best rows of that table; an assignment the
  list leaves out scores the list's lowest entry (the bound a truncated
  n-best list gives);
- ``"univariate"``: one max-marginal pair per separator atom, the message
  being their sum.

``m_i->j(x^ij) = max over the beliefs of i agreeing with x^ij of
s_i(x^i) + sum over k != j of m_k->i(x^ik)`` (equation 9.4), ``s_i`` the
score of cluster i's own clauses (a violated hard clause costs one more than
the sum of all soft weights).

Beliefs
    A cluster's belief is a set of candidate assignments of its atoms (the
    n-best belief of the chapter), each scored by equation 9.5. Candidates
    come from *constrained* WalkSAT searches over the cluster
    (ComputeConstrainedBelief): the compiled MaxWalkSAT of :mod:`.maxwalksat`
    on the cluster's clauses, plus the incoming messages written as weighted
    clauses (a univariate message is one unit clause per atom weighted
    ``u(1) - u(0)``; a table row ``q`` of value ``v`` is the clause "the
    separator is not ``q``" with weight ``-(v - floor)``, which rewards
    exactly that assignment: up to a constant the search maximises
    ``s_i + sum_k m_k->i``), plus one unit clause per separator atom whose
    weight fixes the atom (more than all other weights together) or leaves it
    free. For each neighbour ``j`` and each assignment ``x^ij`` the incoming
    message from ``j`` lists (full: every assignment; univariate: each atom
    at each value) one search runs with ``X^ij`` fixed (Algorithm 5, lines
    11-15), started from the cluster's best candidate; a search is not run
    again while the other incoming messages are unchanged (the chapter's
    "look up a compatible solution"). Each visit also runs one search with
    nothing fixed. After a visit the belief keeps the ``n_best`` best
    candidates and the best one for each entry of each outgoing message.

Schedule
    ``"tree"``: the clusters in breadth-first order of the cluster graph,
    then in reverse, alternately (on a tree-structured cluster graph with
    full messages and exact cluster searches, two sweeps give exact
    max-marginals, as max-product does on a tree); ``"random"``: a random
    order per sweep. A run of sweeps stops after ``iterations``, when no
    message changed in a sweep (the messages settled), when the decoded
    worlds did not improve in ``patience`` sweeps, or at ``max_seconds``.

The best world found
    After each sweep the clusters are decoded in breadth-first order: each
    takes its best candidate that agrees with the atoms already set (a
    constrained search if none does; the chapter's decimation by clusters).
    A run's best decoded world is polished by MaxWalkSAT's greedy descent
    on the whole network (``polish``).

Restarts
    After a run, while time is left (``max_seconds``) or restarts remain
    (``restarts``: None is "until ``max_seconds``", and none without a time
    limit, as before) and the best world is not proven optimal (cost 0, no
    hard clause violated: SGMP then stops early and says ``optimal``), SGMP
    restarts: ``restart="walksat"`` (the default) runs one WalkSAT try over
    the whole network from the best world so far (``10 *`` the atoms flips,
    then greedy descent), then message passing again from flat messages
    with each belief seeded by that try's world; ``"fresh"`` restarts from
    flat messages and empty beliefs (new random searches); ``"alternate"``
    alternates the two. The best world over all runs is returned (never
    worse than the first run's: the first run is the run without
    restarts). Stats: ``restarts``, ``best_restart`` (0: the first run),
    ``best_from`` (``"sgmp"`` or ``"walksat"``: which produced the answer),
    ``restart_costs`` (each run's cost, at most 50), ``partition``
    (``"predicates"``, ``"graph"`` or ``"user"``) and ``partition_seconds``.
    On clustered 3-SAT (bench/workloads/sgmp.py) ``"walksat"`` beat
    ``"fresh"`` and ``"alternate"`` at 300 variables, 2 clusters, 2 s, 3
    seeds: mean cost 0.196 against 0.230 and 0.292. Atoms no clause touches
    are false.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field, fields, replace

import numpy as np

from ..errors import OptionError
from ..ground.network import GroundNetwork
from .kernels_state import SatArrays, _csr_gather, normalise_clauses, sat_arrays
from .maxwalksat import Search, start_world
from .results import MapResult

MESSAGE_TYPES = ("full", "n-best", "univariate")
SCHEDULES = ("tree", "random")
RESTARTS = ("walksat", "fresh", "alternate")
PARTITIONS = ("auto", "graph", "predicates")


@dataclass
class SGMPOptions:
    """Options of Sparse Generalized Max-Product (``method="sgmp"``).

    ``messages``: ``"full"``, ``"n-best"`` or ``"univariate"``; ``n_best``:
    entries of an n-best message and candidates a belief keeps.
    ``iterations``: message-passing sweeps at most. ``flips``: WalkSAT
    steps per cluster search (default ``10 *`` the cluster's atoms, at least
    1,000). ``noise``: WalkSAT's random-walk probability. ``schedule``:
    ``"tree"`` or ``"random"``. ``max_full_atoms``: the largest separator a
    full message may have. ``polish``: a greedy descent on the whole network
    from each run's best decoded world. ``max_seconds``: a time limit (the
    best world so far is returned; restarts use all of it unless the world
    is proven optimal). ``restarts``: runs after the first (None: until
    ``max_seconds``, none without it); ``restart``: ``"walksat"``,
    ``"fresh"`` or ``"alternate"`` (see the module docstring);
    ``patience``: a run ends after this many sweeps without a better
    decoded world (None: only when messages settle or ``iterations``).
    ``partition``: ``"auto"`` (default), ``"graph"``, ``"predicates"``, a
    list of lists of predicate names, or an int array (a group per atom).
    """

    partition: object = "auto"
    messages: str = "n-best"
    n_best: int = 50
    iterations: int = 10
    flips: int | None = None
    noise: float = 0.5
    schedule: str = "tree"
    seed: int = 0
    max_seconds: float | None = None
    max_full_atoms: int = 12
    polish: bool = True
    restarts: int | None = None
    restart: str = "walksat"
    patience: int | None = 3

    def check(self) -> "SGMPOptions":
        if self.messages not in MESSAGE_TYPES:
            raise OptionError(f"messages must be one of {', '.join(MESSAGE_TYPES)}, got {self.messages!r}")
        if not _is_int(self.n_best) or self.n_best < 1:
            raise OptionError(f"the n-best size (n_best) must be an integer >= 1, got {self.n_best!r}")
        if not _is_int(self.iterations) or self.iterations < 1:
            raise OptionError(f"iterations must be an integer >= 1, got {self.iterations!r}")
        if self.flips is not None and (not _is_int(self.flips) or self.flips < 1):
            raise OptionError(f"flips must be an integer >= 1, got {self.flips!r}")
        if not _is_real(self.noise) or not 0.0 <= float(self.noise) <= 1.0:
            raise OptionError(f"noise must be a probability in [0, 1], got {self.noise!r}")
        if self.schedule not in SCHEDULES:
            raise OptionError(f"schedule must be one of {', '.join(SCHEDULES)}, got {self.schedule!r}")
        if not _is_int(self.seed) or self.seed < 0:
            raise OptionError(f"seed must be an integer >= 0, got {self.seed!r}")
        if self.max_seconds is not None and (not _is_real(self.max_seconds) or not self.max_seconds > 0
                                             or not math.isfinite(self.max_seconds)):
            raise OptionError(f"max_seconds must be a positive number, got {self.max_seconds!r}")
        if not _is_int(self.max_full_atoms) or not 1 <= self.max_full_atoms <= 20:
            raise OptionError(f"max_full_atoms must be an integer in [1, 20], got {self.max_full_atoms!r}")
        if not isinstance(self.polish, (bool, np.bool_)):
            raise OptionError(f"polish must be True or False, got {self.polish!r}")
        if self.restarts is not None and (not _is_int(self.restarts) or self.restarts < 0):
            raise OptionError(f"restarts must be an integer >= 0 (or None: until max_seconds), got {self.restarts!r}")
        if self.patience is not None and (not _is_int(self.patience) or self.patience < 1):
            raise OptionError(f"patience must be an integer >= 1 (or None), got {self.patience!r}")
        if self.restart not in RESTARTS:
            raise OptionError(f"restart must be one of {', '.join(RESTARTS)}, got {self.restart!r}")
        return self


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_real(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def make_options(options: SGMPOptions | None, kw: dict) -> SGMPOptions:
    if options is not None:
        if kw:
            raise OptionError("give either an SGMPOptions or keyword options, not both")
        return replace(options).check()
    names = {f.name for f in fields(SGMPOptions)}
    unknown = sorted(set(kw) - names)
    if unknown:
        raise OptionError(f"MAP method 'sgmp' does not take option(s) {', '.join(unknown)}; "
                          f"it takes {', '.join(sorted(names))}")
    return SGMPOptions(**kw).check()


# ---------------------------------------------------------------- partition

def predicates_degenerate(net: GroundNetwork) -> bool:
    """Whether a cluster per predicate is no partition to speak of: one
    predicate has the atoms, or one holds more than half of them."""
    if net.n_atoms == 0:
        return False
    counts = np.bincount(net.atom_pred)
    return int((counts > 0).sum()) <= 1 or int(counts.max()) > net.n_atoms // 2


def structure_groups(net: GroundNetwork, sat: SatArrays | None = None, seed: int = 0) -> np.ndarray:
    """A group per atom from the atom-clause graph (:mod:`.graph_partition`)."""
    from .graph_partition import graph_partition, incidence

    sat = sat_arrays(net) if sat is None else sat
    H = incidence(net.n_atoms, sat.clause_start, sat.lit_atom, sat.block_start, sat.block_atoms)
    return graph_partition(H, seed=seed)


def resolve_partition(net: GroundNetwork, partition, sat: SatArrays | None = None,
                      seed: int = 0) -> tuple[np.ndarray, str]:
    """SGMP's atom groups and how they were chosen (``"predicates"``,
    ``"graph"`` or ``"user"``): ``"auto"`` (or None) is a cluster per predicate
    unless :func:`predicates_degenerate`, then the graph partition."""
    if partition is None or (isinstance(partition, str) and partition == "auto"):
        if predicates_degenerate(net):
            return structure_groups(net, sat, seed), "graph"
        return atom_groups(net, "predicates"), "predicates"
    if isinstance(partition, str) and partition == "graph":
        return structure_groups(net, sat, seed), "graph"
    if isinstance(partition, str) and partition == "predicates":
        return atom_groups(net, partition), "predicates"
    return atom_groups(net, partition), "user"


def atom_groups(net: GroundNetwork, partition) -> np.ndarray:
    """The group of each atom (int64[n_atoms]) from ``partition`` (see
    :class:`SGMPOptions`; ``None`` is ``"predicates"`` here, as multi-task MH
    uses it); an :class:`OptionError` if it does not cover the network."""
    present = np.unique(net.atom_pred) if net.n_atoms else np.zeros(0, np.int64)
    if partition is None or (isinstance(partition, str) and partition == "predicates"):
        _, group = np.unique(net.atom_pred, return_inverse=True)
        return group.astype(np.int64)
    if isinstance(partition, str) and partition in PARTITIONS:
        return structure_groups(net) if partition == "graph" else resolve_partition(net, partition)[0]
    if isinstance(partition, str):
        raise OptionError(f"partition must be 'auto', 'graph', 'predicates', a list of lists of predicate names "
                          f"or an array of one group per atom, got {partition!r}")
    if isinstance(partition, np.ndarray) and partition.dtype != object:
        if partition.shape != (net.n_atoms,) or not np.issubdtype(partition.dtype, np.integer):
            raise OptionError(f"a partition array must hold one integer group per atom ({net.n_atoms}), "
                              f"got shape {partition.shape} and type {partition.dtype}")
        if net.n_atoms and partition.min() < 0:
            missing = int((partition < 0).sum())
            raise OptionError(f"the partition does not cover the network: {missing} atom(s) have no group "
                              f"(e.g. {net.atom_name(int(np.flatnonzero(partition < 0)[0]))})")
        return partition.astype(np.int64)
    try:
        groups = [[p] if isinstance(p, str) else list(p) for p in partition]
    except TypeError:
        raise OptionError(f"partition must be a list of lists of predicate names, got {partition!r}") from None
    index = {name: i for i, name in enumerate(net.predicates)}
    pred_group = np.full(len(net.predicates), -1, dtype=np.int64)
    for g, names in enumerate(groups):
        if not names:
            raise OptionError(f"group {g + 1} of the partition is empty")
        for name in names:
            if not isinstance(name, str) or name not in index:
                raise OptionError(f"the partition names {name!r}, which is not a predicate of the network "
                                  f"(predicates: {', '.join(net.predicates[i] for i in present)})")
            if pred_group[index[name]] >= 0:
                raise OptionError(f"predicate {name} is in two groups of the partition")
            pred_group[index[name]] = g
    uncovered = [net.predicates[i] for i in present if pred_group[i] < 0]
    if uncovered:
        raise OptionError(f"the partition does not cover the network: predicate(s) {', '.join(uncovered)} "
                          "have atoms but are in no group (every predicate with unknown atoms must be in "
                          "exactly one group)")
    return pred_group[net.atom_pred]


# ---------------------------------------------------------------- messages

@dataclass
class Message:
    """A message over a separator (global atom ids ``sep``): a table of
    listed assignments (``patterns``, ``values``; unlisted ones score
    ``floor``) or, if ``uni`` is set, one pair of scores per atom."""

    sep: np.ndarray
    patterns: np.ndarray = None          # bool[r, s]
    values: np.ndarray = None            # float64[r]
    floor: float = 0.0
    uni: np.ndarray | None = None        # float64[s, 2]
    index: dict = field(default_factory=dict)

    @classmethod
    def flat(cls, sep: np.ndarray, univariate: bool) -> "Message":
        s = len(sep)
        if univariate:
            return cls(sep=sep, uni=np.zeros((s, 2)))
        return cls(sep=sep, patterns=np.zeros((0, s), bool), values=np.zeros(0))

    @classmethod
    def table(cls, sep, patterns, values, floor) -> "Message":
        top = float(values.max()) if len(values) else 0.0
        m = cls(sep=sep, patterns=patterns, values=values - top, floor=floor - top)
        m.index = {k: i for i, k in enumerate(_keys(patterns))}
        return m

    def evaluate(self, Y: np.ndarray) -> np.ndarray:
        """The message's value for each row of ``Y`` (bool[m, s])."""
        if self.uni is not None:
            return self.uni[np.arange(Y.shape[1])[None, :], Y.astype(np.int64)].sum(axis=1)
        if not self.index:
            return np.full(len(Y), self.floor)
        rows = np.array([self.index.get(k, -1) for k in _keys(Y)], dtype=np.int64)
        return np.where(rows >= 0, self.values[rows], self.floor)

    def same(self, other: "Message", tol: float) -> bool:
        if self.uni is not None:
            return other.uni is not None and bool(np.allclose(self.uni, other.uni, atol=tol, rtol=0))
        if other.uni is not None or set(self.index) != set(other.index):
            return False
        if not self.index:
            return True
        order = np.array([other.index[k] for k in self.index], dtype=np.int64)
        return bool(np.allclose(self.values, other.values[order], atol=tol, rtol=0)
                    and abs(self.floor - other.floor) <= tol)

    @property
    def size(self) -> int:
        return 2 * len(self.sep) if self.uni is not None else len(self.values)


def _keys(Y: np.ndarray) -> list[bytes]:
    packed = np.packbits(np.asarray(Y, dtype=bool), axis=1)
    return [r.tobytes() for r in packed]


# ---------------------------------------------------------------- clusters

class _Cluster:
    """One cluster: its atoms, its own clauses (local atom ids), its
    separators and its belief (candidate assignments)."""

    def __init__(self, cid: int, atoms: np.ndarray, sat: SatArrays, clauses: np.ndarray,
                 blocks: np.ndarray) -> None:
        self.id = cid
        self.atoms = atoms                                  # global ids, sorted
        self.n = len(atoms)
        start, idx = _csr_gather(sat.clause_start, clauses)
        self.start = start
        self.lit = np.searchsorted(atoms, sat.lit_atom[idx]).astype(np.int32)
        self.pos = sat.lit_positive[idx]
        self.weight = sat.weight[clauses]
        self.hard = sat.is_hard[clauses]
        bstart, bidx = _csr_gather(sat.block_start, blocks)
        self.bstart = bstart
        self.batoms = np.searchsorted(atoms, sat.block_atoms[bidx]).astype(np.int32)
        self.n_clauses = len(clauses)
        self.nbrs: list[int] = []
        self.sep_cols: dict[int, np.ndarray] = {}           # neighbour -> local columns of the separator
        self.cand = np.zeros((0, self.n), dtype=bool)
        self.score = np.zeros(0)
        self.cand_keys: dict[bytes, int] = {}
        self.search: Search | None = None
        self.base_w: np.ndarray | None = None
        self.unit_of: np.ndarray | None = None              # local column -> its fixing unit clause (-1)
        self.big = 1.0
        self.solved: dict = {}

    def local_scores(self, X: np.ndarray, penalty: float) -> np.ndarray:
        """``s_i`` of each row of ``X`` (bool[m, n])."""
        if self.n_clauses == 0:
            return np.zeros(len(X))
        holds = X[:, self.lit] == self.pos[None, :]
        sat = np.logical_or.reduceat(holds, self.start[:-1], axis=1)
        soft = ~self.hard
        return sat[:, soft].astype(np.float64) @ self.weight[soft] - penalty * (~sat[:, self.hard]).sum(axis=1)

    def add(self, x: np.ndarray, penalty: float) -> int:
        key = np.packbits(x).tobytes()
        row = self.cand_keys.get(key)
        if row is not None:
            return row
        self.cand = np.vstack([self.cand, x[None, :]])
        self.score = np.append(self.score, self.local_scores(x[None, :], penalty))
        self.cand_keys[key] = len(self.score) - 1
        return len(self.score) - 1

    def keep(self, rows: np.ndarray) -> None:
        rows = np.unique(rows)
        self.cand = self.cand[rows]
        self.score = self.score[rows]
        self.cand_keys = {k: i for i, k in enumerate(_keys(self.cand))} if len(rows) else {}


def build_clusters(net: GroundNetwork, sat: SatArrays, group: np.ndarray) -> list[_Cluster]:
    """Clusters of the clauses of ``sat`` from the atom groups ``group``."""
    n_groups = int(group.max()) + 1 if len(group) else 0
    nc = sat.n_clauses
    if nc:
        clause_of_lit = np.repeat(np.arange(nc, dtype=np.int64), np.diff(sat.clause_start))
        votes = np.bincount(clause_of_lit * n_groups + group[sat.lit_atom], minlength=nc * n_groups)
        clause_group = votes.reshape(nc, n_groups).argmax(axis=1)
    else:
        clause_group = np.zeros(0, np.int64)
    block_group = group[sat.block_atoms[sat.block_start[:-1]]] if sat.n_blocks else np.zeros(0, np.int64)
    clusters = []
    for g in range(n_groups):
        clauses = np.flatnonzero(clause_group == g)
        blocks = np.flatnonzero(block_group == g)
        if len(clauses) == 0 and len(blocks) == 0:
            continue
        _, lidx = _csr_gather(sat.clause_start, clauses)
        _, bidx = _csr_gather(sat.block_start, blocks)
        atoms = np.unique(np.concatenate([sat.lit_atom[lidx], sat.block_atoms[bidx]]).astype(np.int64))
        clusters.append(_Cluster(len(clusters), atoms, sat, clauses, blocks))
    # separators: the atoms two clusters share
    for a in clusters:
        for b in clusters[a.id + 1:]:
            shared = np.intersect1d(a.atoms, b.atoms, assume_unique=True)
            if len(shared):
                a.nbrs.append(b.id)
                b.nbrs.append(a.id)
                a.sep_cols[b.id] = np.searchsorted(a.atoms, shared)
                b.sep_cols[a.id] = np.searchsorted(b.atoms, shared)
    return clusters


def bfs_order(clusters: list[_Cluster]) -> list[int]:
    """Breadth-first order of the cluster graph, each connected part from
    its largest cluster."""
    seen = np.zeros(len(clusters), bool)
    order: list[int] = []
    for root in sorted(range(len(clusters)), key=lambda i: -clusters[i].n):
        if seen[root]:
            continue
        seen[root] = True
        queue = deque([root])
        while queue:
            i = queue.popleft()
            order.append(i)
            for j in clusters[i].nbrs:
                if not seen[j]:
                    seen[j] = True
                    queue.append(j)
    return order


# ---------------------------------------------------------------- the algorithm

class SGMP:
    """State of one run (see the module docstring)."""

    def __init__(self, net: GroundNetwork, opt: SGMPOptions, start: float | None = None) -> None:
        start = time.perf_counter() if start is None else start
        self.net = net
        self.opt = opt
        self.sat = sat_arrays(net)
        self.rng = np.random.default_rng(opt.seed)
        self.penalty = 1.0 + float(np.abs(self.sat.weight).sum())
        t0 = time.perf_counter()
        group, self.partition_kind = resolve_partition(net, opt.partition, self.sat, opt.seed)
        self.partition_seconds = time.perf_counter() - t0
        self.clusters = build_clusters(net, self.sat, group)
        self.univariate = opt.messages == "univariate"
        if opt.messages == "full":
            for cl in self.clusters:
                for j, cols in cl.sep_cols.items():
                    if len(cols) > opt.max_full_atoms:
                        raise OptionError(
                            f"full messages: clusters share a separator of {len(cols)} atoms (2^{len(cols)} "
                            f"entries; max_full_atoms is {opt.max_full_atoms}); use messages='n-best' or "
                            "'univariate', or a partition whose clusters share fewer atoms")
        self.msgs: dict[tuple[int, int], Message] = {}
        self.version: dict[tuple[int, int], int] = {}
        self.clear()
        self.order = bfs_order(self.clusters)
        self.searches = 0
        self.flips = 0
        self.whole: Search | None = None
        self.deadline = None if opt.max_seconds is None else start + float(opt.max_seconds)

    def clear(self, seed_world: np.ndarray | None = None) -> None:
        """Flat messages and empty beliefs (a restart); with ``seed_world``
        each belief starts from that world's assignment of its atoms."""
        for cl in self.clusters:
            for j in cl.nbrs:
                key = (cl.id, j)
                self.msgs[key] = Message.flat(cl.atoms[cl.sep_cols[j]], self.univariate)
                self.version[key] = self.version.get(key, -1) + 1
            cl.cand = np.zeros((0, cl.n), dtype=bool)
            cl.score = np.zeros(0)
            cl.cand_keys = {}
            cl.solved = {}
            cl.search = None
            if seed_world is not None:
                cl.add(seed_world[cl.atoms].copy(), self.penalty)

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline

    # ------------------------------------------------------------ beliefs
    def beliefs(self, cl: _Cluster) -> np.ndarray:
        b = cl.score.copy()
        for k in cl.nbrs:
            b += self.msgs[(k, cl.id)].evaluate(cl.cand[:, cl.sep_cols[k]])
        return b

    def prepare_search(self, cl: _Cluster) -> None:
        """The cluster's WalkSAT problem: its clauses, the incoming messages
        as clauses, one fixing unit clause per separator atom."""
        lits, poss = [cl.lit], [cl.pos]
        sizes: list[np.ndarray] = []
        msg_w: list[np.ndarray] = []
        for k in cl.nbrs:
            m = self.msgs[(k, cl.id)]
            cols = cl.sep_cols[k]
            if m.uni is not None:
                lits.append(cols.astype(np.int32))
                poss.append(np.ones(len(cols), bool))
                sizes.append(np.ones(len(cols), np.int64))
                msg_w.append(m.uni[:, 1] - m.uni[:, 0])
            elif len(m.values):
                r, s = m.patterns.shape
                lits.append(np.tile(cols, r).astype(np.int32))
                poss.append(~m.patterns.reshape(-1))
                sizes.append(np.full(r, s, np.int64))
                msg_w.append(-(m.values - m.floor))
        boundary = np.unique(np.concatenate([c for c in cl.sep_cols.values()] + [np.zeros(0, np.int64)]))
        lits.append(boundary.astype(np.int32))
        poss.append(np.ones(len(boundary), bool))
        sizes.append(np.ones(len(boundary), np.int64))
        mw = np.concatenate(msg_w) if msg_w else np.zeros(0)
        n_msg = len(mw)
        size_all = np.concatenate([np.diff(cl.start).astype(np.int64)] + sizes)
        start = np.zeros(len(size_all) + 1, np.int64)
        np.cumsum(size_all, out=start[1:])
        n_own = cl.n_clauses
        init_w = np.concatenate([cl.weight, np.ones(n_msg + len(boundary))])
        hard = np.concatenate([cl.hard, np.zeros(n_msg + len(boundary), bool)])
        sat = normalise_clauses(cl.n, start, np.concatenate(lits), np.concatenate(poss), init_w, hard,
                                cl.bstart, cl.batoms)
        assert sat.n_clauses == len(size_all)
        cl.search = Search(sat, int(self.rng.integers(0, 2**31 - 1)))
        cl.base_w = np.concatenate([cl.weight, mw, np.zeros(len(boundary))])
        cl.unit_of = np.full(cl.n, -1, np.int64)
        cl.unit_of[boundary] = n_own + n_msg + np.arange(len(boundary))
        cl.big = 1.0 + 2.0 * (float(np.abs(cl.weight).sum()) + float(np.abs(mw).sum()))

    def solve(self, cl: _Cluster, cols: np.ndarray, vals: np.ndarray) -> int:
        """A constrained search of ``cl`` with local atoms ``cols`` fixed to
        ``vals``; the result joins the belief. Returns its row."""
        search = cl.search
        w = cl.base_w.copy()
        w[cl.unit_of[cols]] = np.where(vals, cl.big, -cl.big)
        search.set_weights(w)
        if len(cl.score):
            init = cl.cand[int(np.argmax(self.beliefs(cl)))].copy()
        else:
            init = self.rng.random(cl.n) < 0.5
        init[cols] = vals
        flips = self.opt.flips if self.opt.flips is not None else max(1_000, 10 * cl.n)
        search.reset(start_world(search.sat, search.rng, init), 0.0)
        search.steps(flips, float(self.opt.noise))
        self.flips += search.flips
        search.reset(search.best_world, 0.0)
        search.descend()
        self.searches += 1
        return cl.add(search.best_world.copy(), self.penalty)

    def entries(self, cl: _Cluster, j: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """The constrained problems of ``cl`` for neighbour ``j``: the
        assignments of the separator the incoming message covers."""
        cols = cl.sep_cols[j]
        if self.opt.messages == "full":
            s = len(cols)
            codes = np.arange(1 << s, dtype=np.int64)
            bits = ((codes[:, None] >> np.arange(s)[None, :]) & 1).astype(bool)
            return [(cols, row) for row in bits]
        if self.univariate:
            return [(cols[v:v + 1], np.array([b])) for v in range(len(cols)) for b in (False, True)]
        m = self.msgs[(j, cl.id)]
        return [(cols, row) for row in m.patterns]

    def visit(self, cl: _Cluster) -> bool:
        """Update the belief of ``cl`` and its outgoing messages; True if a
        message changed."""
        self.prepare_search(cl)
        self.solve(cl, np.zeros(0, np.int64), np.zeros(0, bool))
        for j in cl.nbrs:
            others = tuple(self.version[(k, cl.id)] for k in cl.nbrs if k != j)
            for cols, vals in self.entries(cl, j):
                if self.out_of_time():
                    break
                key = (j, cols.tobytes(), np.packbits(vals).tobytes())
                if cl.solved.get(key) == others:
                    continue
                self.solve(cl, cols, vals)
                cl.solved[key] = others
        return self.send(cl)

    def send(self, cl: _Cluster) -> bool:
        """Outgoing messages from the belief (equation 9.4), then compress
        the belief."""
        b = self.beliefs(cl)
        keep = [np.argsort(-b, kind="stable")[: self.opt.n_best]]
        changed = False
        for j in cl.nbrs:
            cols = cl.sep_cols[j]
            Y = cl.cand[:, cols]
            v = b - self.msgs[(j, cl.id)].evaluate(Y)
            if self.univariate:
                uni = np.empty((len(cols), 2))
                unreached = float(v.min()) - self.penalty
                for val in (0, 1):
                    mask = Y == bool(val)
                    scored = np.where(mask, v[:, None], -np.inf)
                    best = scored.max(axis=0)
                    uni[:, val] = np.where(np.isfinite(best), best, unreached)
                    rows = scored.argmax(axis=0)
                    keep.append(rows[np.isfinite(best)])
                uni -= uni.max(axis=1, keepdims=True)
                new = Message(sep=cl.atoms[cols], uni=uni)
            else:
                packed = np.packbits(Y, axis=1)
                _, first, inverse = np.unique(packed, axis=0, return_index=True, return_inverse=True)
                inverse = inverse.reshape(-1)
                best = np.full(len(first), -np.inf)
                np.maximum.at(best, inverse, v)
                # the row of the best candidate of each assignment
                is_best = v >= best[inverse]
                rows = np.full(len(first), -1, np.int64)
                rows[inverse[is_best]] = np.flatnonzero(is_best)
                top = np.argsort(-best, kind="stable")
                if self.opt.messages == "n-best":
                    top = top[: self.opt.n_best]
                keep.append(rows[top])
                new = Message.table(cl.atoms[cols], Y[rows[top]], best[top], float(best[top].min()))
            old = self.msgs[(cl.id, j)]
            if not new.same(old, 1e-9 * self.penalty):
                self.msgs[(cl.id, j)] = new
                self.version[(cl.id, j)] += 1
                changed = True
        cl.keep(np.concatenate(keep))
        return changed

    # ------------------------------------------------------------ decoding
    def decode(self) -> np.ndarray:
        world = np.zeros(self.net.n_atoms, bool)
        assigned = np.zeros(self.net.n_atoms, bool)
        for i in self.order:
            cl = self.clusters[i]
            fixed = assigned[cl.atoms]
            cols = np.flatnonzero(fixed)
            vals = world[cl.atoms[cols]]
            ok = (cl.cand[:, cols] == vals[None, :]).all(axis=1) if len(cl.score) else np.zeros(0, bool)
            if not ok.any() and self.out_of_time() and len(cl.score):
                ok = np.ones(len(cl.score), bool)      # no time to search: the best candidate, fixed atoms kept
            elif not ok.any():
                if cl.search is None:
                    self.prepare_search(cl)
                row = self.solve(cl, cols, vals)
                ok = np.zeros(len(cl.score), bool)
                ok[row] = True
            b = np.where(ok, self.beliefs(cl), -np.inf)
            x = cl.cand[int(np.argmax(b))]
            world[cl.atoms[~fixed]] = x[~fixed]
            assigned[cl.atoms] = True
        return world

    def sweeps(self) -> tuple[np.ndarray, list, int, bool]:
        """Message passing from the current messages and beliefs until they
        settle, ``iterations`` sweeps or the time limit: the best decoded
        world, the decoded costs, the sweeps and whether messages settled."""
        net = self.net
        best, best_key = None, None
        history = []
        sweeps = 0
        converged = False
        for t in range(self.opt.iterations):
            if self.opt.schedule == "random":
                order = [int(i) for i in self.rng.permutation(len(self.clusters))]
            else:
                order = self.order if t % 2 == 0 else self.order[::-1]
            changed = False
            for i in order:
                if self.out_of_time() and best is not None:
                    break
                changed |= self.visit(self.clusters[i])
            sweeps += 1
            world = self.decode()
            key = (net.hard_violated(world), net.cost(world))
            history.append(round(key[1], 6))
            if best is None or key < best_key:
                best, best_key = world, key
            if not changed and t > 0:
                converged = True
                break
            if self.out_of_time():
                break
            if (self.opt.patience is not None and len(history) > self.opt.patience
                    and min(history[-self.opt.patience:]) >= min(history[:-self.opt.patience]) - 1e-12):
                break                                      # the decoded worlds stopped improving
        return best, history, sweeps, converged

    def whole_search(self) -> Search:
        if self.whole is None:
            self.whole = Search(self.sat, int(self.rng.integers(0, 2**31 - 1)))
        return self.whole

    def polish(self, world: np.ndarray) -> np.ndarray:
        """MaxWalkSAT's greedy descent on the whole network from ``world``
        (kept only if not worse)."""
        if not self.opt.polish or not self.net.n_clauses:
            return world
        search = self.whole_search()
        search.reset(start_world(self.sat, search.rng, world), 0.0)
        search.descend(deadline=self.deadline)
        polished = search.best_world.copy()
        return polished if self.key(polished) <= self.key(world) else world

    def walksat(self, world: np.ndarray) -> np.ndarray:
        """A WalkSAT try over the whole network from ``world`` (``10 *`` the
        atoms flips, at least 1,000, as a MaxWalkSAT try in the bench; chunks of 1,000
        under the time limit), then its greedy descent: the try's best world."""
        search = self.whole_search()
        search.reset(start_world(self.sat, search.rng, world), 0.0)
        remaining = max(1_000, 10 * self.net.n_atoms)
        while remaining > 0 and not search.done:
            step = min(remaining, 1_000 if self.deadline is not None else remaining)
            search.steps(step, float(self.opt.noise))
            remaining -= step
            if self.out_of_time():
                break
        self.flips += search.flips
        search.reset(search.best_world, 0.0)
        search.descend(deadline=self.deadline)
        return search.best_world.copy()

    def key(self, world: np.ndarray) -> tuple[int, float]:
        return self.net.hard_violated(world), self.net.cost(world)

    def run(self) -> tuple[np.ndarray, dict]:
        """Message passing, then restarts while time (or ``restarts``) is
        left and the best world is not proven optimal (cost 0, no hard
        clause violated); the best world over all runs."""
        opt = self.opt
        limit = opt.restarts if opt.restarts is not None else (0 if self.deadline is None else None)
        best, best_key, best_restart, best_from = None, None, 0, "sgmp"
        runs = []
        restarts = 0
        sweeps_total = 0
        converged_first = False
        history_first: list = []
        while True:
            if restarts > 0 and (opt.restart == "walksat" or (opt.restart == "alternate" and restarts % 2 == 1)):
                # a WalkSAT try over the whole network from the best world, then message passing from it
                tried = self.walksat(best)
                key = self.key(tried)
                runs.append({"restart": restarts, "from": "walksat", "cost": round(key[1], 6), "hard": key[0]})
                if key < best_key:
                    best, best_key, best_restart, best_from = tried, key, restarts, "walksat"
                self.clear(seed_world=tried)
            elif restarts > 0:
                self.clear()
            if not (restarts > 0 and self.out_of_time()):
                world, history, sweeps, converged = self.sweeps()
                sweeps_total += sweeps
                if restarts == 0:
                    converged_first, history_first = converged, history
                world = self.polish(world)
                key = self.key(world)
                runs.append({"restart": restarts, "from": "sgmp", "cost": round(key[1], 6), "hard": key[0],
                             "sweeps": sweeps, "settled": converged})
                if best is None or key < best_key:
                    best, best_key, best_restart, best_from = world, key, restarts, "sgmp"
            if best_key[0] == 0 and best_key[1] <= 1e-12:
                break                                      # cost 0: no world is better
            if self.out_of_time() or (limit is not None and restarts >= limit):
                break
            restarts += 1
        stats = {
            "clusters": len(self.clusters), "partition": self.partition_kind,
            "partition_seconds": round(self.partition_seconds, 4),
            "sweeps": sweeps_total, "converged": converged_first, "searches": self.searches,
            "flips": self.flips, "messages": self.opt.messages, "n_best": self.opt.n_best,
            "separator_atoms": int(sum(len(c) for cl in self.clusters for c in cl.sep_cols.values()) // 2),
            "cluster_graph_edges": sum(len(cl.nbrs) for cl in self.clusters) // 2,
            "decoded_costs": history_first,
            "restarts": restarts, "restart": opt.restart, "best_restart": best_restart, "best_from": best_from,
            "restart_costs": runs[:50],
        }
        return best if best is not None else np.zeros(self.net.n_atoms, bool), stats


def sgmp_map(net: GroundNetwork, options: SGMPOptions | None = None, **kw) -> MapResult:
    """MAP by Sparse Generalized Max-Product (see the module docstring and
    :class:`SGMPOptions`). Never claimed optimal."""
    opt = make_options(options, kw)
    start = time.perf_counter()
    run = SGMP(net, opt, start)
    world, stats = run.run()
    free = (np.diff(run.sat.atom_lit_start) == 0) & (run.sat.atom_block < 0)
    world[free] = False
    hard = net.hard_violated(world)
    stats["hard_violated"] = hard
    stats["seconds"] = time.perf_counter() - start
    cost = net.cost(world)
    stats["proven_optimal"] = bool(hard == 0 and cost <= 1e-12)
    return MapResult(world=world, score=net.score(world), cost=cost, hard_violated=hard,
                     method="sgmp", seconds=time.perf_counter() - start, optimal=stats["proven_optimal"],
                     stats=stats)
