"""Mutual-exclusion groups found in the ground network, made into blocks.

Models often say "at most one of these" with hard pair clauses instead of a
``!`` declaration: the citation models of Poon and Domingos (2007) write

    !InField(c, Fauthor, i) v !InField(c, Ftitle, i).
    !InField(c, Fauthor, i) v !InField(c, Fvenue, i).
    !InField(c, Fvenue, i) v !InField(c, Ftitle, i).

and a token may also be in no field. Grounded, every position of every
citation has three hard pair clauses that a local search must respect one
flip at a time: to move a token from author to title, MaxWalkSAT or SampleSAT
first makes it no field (breaking the soft clauses that hold the author
label), then title. Poon and Domingos treat each such set of mutually
exclusive (and, when a clause says so, exhaustive) rules as one factor
(*Joint inference in information extraction*, AAAI 2007; Poon's thesis,
section 3.4): a move then changes the token's field in one step.

This module does that at network level, for every algorithm that reads
exactly-one blocks (SampleSAT, MC-SAT, Gibbs, MaxWalkSAT, the ILP):

:func:`find_mutex_groups`
    The graph whose edges are the hard clauses ``!a v !b`` (two distinct
    atoms, neither in a ``!`` block nor fixed by a hard unit clause) is partitioned greedily into
    cliques (compiled; atoms by decreasing degree, each clique grown with the
    neighbours adjacent to all its members). A clique of two or more atoms
    is a group: at most one of its atoms is true. A group is *exhaustive*
    (exactly one is true) when a hard clause ``a1 v ... v ak`` has exactly
    the group's atoms. Edges between groups stay hard clauses. Finding a
    minimum clique cover is NP-hard; the greedy partition finds every group
    that is a whole connected component of the graph (as in the citation
    models), which is the common case.

:func:`group_mutex`
    The equivalent network: each exhaustive group becomes an exactly-one
    block; each other group becomes a block of its atoms plus one new
    "none" atom (true when no atom of the group is), which occurs in no
    clause. The pair clauses inside groups and the covering clauses are
    dropped (the blocks imply them; they are hard, so the score does not
    change). Worlds of the new network that satisfy its blocks and hard
    clauses correspond one to one to the feasible worlds of the old one, with
    the same score, so MAP and marginals of the original atoms (ids
    ``0..n-1``, unchanged) are the same. :class:`Grouped` maps worlds,
    weights and marginals between the two.

Why blocks and not a new kind of variable: every kernel of the house already
moves blocks (a move from the true atom to another keeps exactly-one), and
the "none" atom turns at-most-one into exactly-one without any change to
them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numba as nb
import numpy as np

from ..ground.network import GroundNetwork
from .kernels_state import _csr_gather

NONE_PREDICATE = "_none_of_group"


@dataclass(frozen=True)
class MutexGroups:
    """Groups of atoms of which at most one (exactly one if ``exhaustive``) is true."""

    start: np.ndarray        # int64[n_groups + 1]: CSR over ``atoms``
    atoms: np.ndarray        # int32: atom ids, grouped
    exhaustive: np.ndarray   # bool[n_groups]
    pair_clauses: np.ndarray  # int64: hard pair clauses inside a group (implied by the group)
    cover_clauses: np.ndarray  # int64: hard "at least one" clauses of exhaustive groups

    @property
    def n_groups(self) -> int:
        return len(self.start) - 1

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.start)

    def summary(self) -> dict:
        """Figures for ``--stats-json``."""
        sizes = self.sizes
        return {
            "mutex_groups": self.n_groups,
            "mutex_exhaustive": int(self.exhaustive.sum()),
            "mutex_atoms": int(sizes.sum()),
            "mutex_largest": int(sizes.max()) if len(sizes) else 0,
            "mutex_clauses_replaced": int(len(self.pair_clauses) + len(self.cover_clauses)),
        }


def _empty_groups() -> MutexGroups:
    e = np.zeros(0, np.int64)
    return MutexGroups(np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, bool), e, e)


@nb.njit(cache=True)
def _greedy_cliques(order, adj_start, adj, n_atoms):
    """Partition the vertices in ``order`` greedily into cliques; returns the
    clique of each vertex (-1: alone) and the number of cliques of >= 2."""
    group = np.full(n_atoms, -1, np.int32)
    cnt = np.zeros(n_atoms, np.int32)
    stamp = np.full(n_atoms, -1, np.int64)
    members = np.empty(max(n_atoms, 1), np.int32)
    n_groups = 0
    for cur in range(len(order)):
        a = order[cur]
        if group[a] >= 0:
            continue
        k = 1
        members[0] = a
        for e in range(adj_start[a], adj_start[a + 1]):
            x = adj[e]
            if stamp[x] != cur:
                stamp[x] = cur
                cnt[x] = 0
            cnt[x] += 1
        for e in range(adj_start[a], adj_start[a + 1]):
            b = adj[e]
            if group[b] >= 0 or stamp[b] != cur or cnt[b] != k:
                continue
            # b is adjacent to every member (members themselves have cnt == k - 1)
            members[k] = b
            k += 1
            for f in range(adj_start[b], adj_start[b + 1]):
                x = adj[f]
                if stamp[x] != cur:
                    stamp[x] = cur
                    cnt[x] = 0
                cnt[x] += 1
        if k >= 2:
            for m in range(k):
                group[members[m]] = n_groups
            n_groups += 1
    return group, n_groups


def find_mutex_groups(net: GroundNetwork, min_size: int = 2) -> MutexGroups:
    """The at-most-one / exactly-one groups of ``net`` (see module docstring)."""
    n = net.n_atoms
    start = np.asarray(net.clause_start, dtype=np.int64)
    sizes = np.diff(start)
    if net.n_clauses == 0 or n == 0:
        return _empty_groups()
    cand = np.flatnonzero(net.is_hard & (sizes == 2))
    first = start[:-1][cand]
    a = net.lit_atom[first].astype(np.int64)
    b = net.lit_atom[first + 1].astype(np.int64)
    free = net.atom_block < 0
    # an atom fixed by a hard unit clause (evidence inside a group, usually) is left out
    unit = net.is_hard & (sizes == 1)
    free[net.lit_atom[start[:-1][unit]]] = False
    ok = ~net.lit_positive[first] & ~net.lit_positive[first + 1] & (a != b) & free[a] & free[b]
    cand, a, b = cand[ok], a[ok], b[ok]
    if len(cand) == 0:
        return _empty_groups()
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    key = np.unique(lo * n + hi)
    u, v = key // n, key % n
    # CSR adjacency, neighbours by atom id
    src = np.concatenate([u, v])
    dst = np.concatenate([v, u])
    order = np.lexsort((dst, src))
    src, dst = src[order], dst[order]
    deg = np.bincount(src, minlength=n)
    adj_start = np.zeros(n + 1, np.int64)
    np.cumsum(deg, out=adj_start[1:])
    verts = np.flatnonzero(deg > 0)
    verts = verts[np.argsort(-deg[verts], kind="stable")]
    group, n_groups = _greedy_cliques(verts.astype(np.int64), adj_start, dst.astype(np.int64), n)
    if n_groups == 0:
        return _empty_groups()
    gsize = np.bincount(group[group >= 0], minlength=n_groups)
    if min_size > 2:
        keep = gsize >= min_size
        renum = np.full(n_groups, -1, np.int32)
        renum[keep] = np.arange(int(keep.sum()), dtype=np.int32)
        group = np.where(group >= 0, renum[np.maximum(group, 0)], -1).astype(np.int32)
        gsize = gsize[keep]
        n_groups = int(keep.sum())
        if n_groups == 0:
            return _empty_groups()
    in_group = np.flatnonzero(group >= 0)
    atoms = in_group[np.argsort(group[in_group], kind="stable")].astype(np.int32)
    gstart = np.zeros(n_groups + 1, np.int64)
    np.cumsum(gsize, out=gstart[1:])
    # pair clauses inside one group
    ga, gb = group[a], group[b]
    pair = cand[(ga >= 0) & (ga == gb)]
    # exhaustive: a hard clause whose literals are all positive and are exactly the group's atoms
    exhaustive = np.zeros(n_groups, bool)
    cover = np.zeros(0, np.int64)
    hard_multi = np.flatnonzero(net.is_hard & (sizes >= 2))
    if len(hard_multi):
        cs, idx = _csr_gather(start, hard_multi)
        pos = net.lit_positive[idx]
        lg = group[net.lit_atom[idx]]
        st = cs[:-1]
        all_pos = np.logical_and.reduceat(pos, st)
        gmin = np.minimum.reduceat(lg, st)
        gmax = np.maximum.reduceat(lg, st)
        maybe = all_pos & (gmin >= 0) & (gmin == gmax)
        if maybe.any():
            # distinct atoms per clause must equal the group's size
            owner = np.repeat(np.arange(len(hard_multi)), np.diff(cs))
            sel = maybe[owner]
            pairs = np.unique(owner[sel] * np.int64(n) + net.lit_atom[idx][sel])
            distinct = np.bincount(pairs // n, minlength=len(hard_multi))
            hit = maybe & (distinct == gsize[np.maximum(gmin, 0)])
            cover = hard_multi[hit].astype(np.int64)
            exhaustive[gmin[hit]] = True
    return MutexGroups(start=gstart, atoms=atoms, exhaustive=exhaustive,
                       pair_clauses=np.sort(pair).astype(np.int64), cover_clauses=np.sort(cover))


@dataclass(frozen=True)
class Grouped:
    """A network with its mutex groups as blocks (see :func:`group_mutex`).

    Atoms ``0..n_original-1`` are the original atoms; the atoms after them
    are the "none" states of the at-most-one groups. ``clause_map[k]`` is the
    original id of clause ``k`` of ``net``."""

    net: GroundNetwork
    original: GroundNetwork
    groups: MutexGroups
    clause_map: np.ndarray     # int64[net.n_clauses]
    none_group: np.ndarray     # int64[n_none]: the group of each "none" atom

    @property
    def n_original(self) -> int:
        return self.original.n_atoms

    def lift(self, world: np.ndarray) -> np.ndarray:
        """A world of the original network as a world of :attr:`net` (each
        "none" atom true when its group has no true atom)."""
        world = np.asarray(world, dtype=bool).reshape(-1)
        out = np.zeros(self.net.n_atoms, dtype=bool)
        out[: len(world)] = world
        if len(self.none_group) and len(world) == self.n_original:
            g = self.groups
            true_per_group = np.add.reduceat(world[g.atoms].astype(np.int64), g.start[:-1])
            out[self.n_original:] = true_per_group[self.none_group] == 0
        return out

    def project(self, values: np.ndarray) -> np.ndarray:
        """Worlds or marginals of :attr:`net` restricted to the original atoms
        (the last axis is the atom axis)."""
        return np.ascontiguousarray(np.asarray(values)[..., : self.n_original])

    def weights(self, weight: np.ndarray) -> np.ndarray:
        """Clause weights of the original network for the clauses of :attr:`net`."""
        return np.asarray(weight, dtype=np.float64)[self.clause_map]


def group_mutex(net: GroundNetwork, groups: MutexGroups | None = None) -> Grouped:
    """``net`` with its mutex groups (found by :func:`find_mutex_groups` if
    not given) turned into exactly-one blocks (see module docstring)."""
    if groups is None:
        groups = find_mutex_groups(net)
    n = net.n_atoms
    if groups.n_groups == 0:
        return Grouped(net=net, original=net, groups=groups, clause_map=np.arange(net.n_clauses, dtype=np.int64),
                       none_group=np.zeros(0, np.int64))
    none_group = np.flatnonzero(~groups.exhaustive).astype(np.int64)
    n_none = len(none_group)
    n_new = n + n_none
    # clauses: all but the replaced ones, in their order
    keep = np.ones(net.n_clauses, dtype=bool)
    keep[groups.pair_clauses] = False
    keep[groups.cover_clauses] = False
    clause_map = np.flatnonzero(keep).astype(np.int64)
    cstart, lidx = _csr_gather(np.asarray(net.clause_start, dtype=np.int64), clause_map)
    pstart, pidx = _csr_gather(np.asarray(net.param_start, dtype=np.int64), clause_map)
    # blocks: the old ones, then one per group (its atoms, then its "none" atom if any)
    gsize = groups.sizes
    extra = (~groups.exhaustive).astype(np.int64)
    new_size = gsize + extra
    gblock_start = np.zeros(groups.n_groups + 1, np.int64)
    np.cumsum(new_size, out=gblock_start[1:])
    gblock_atoms = np.empty(int(gblock_start[-1]), np.int32)
    member_pos = np.repeat(gblock_start[:-1], gsize) + (np.arange(len(groups.atoms)) - np.repeat(groups.start[:-1], gsize))
    gblock_atoms[member_pos] = groups.atoms
    gblock_atoms[gblock_start[1:][none_group] - 1] = n + np.arange(n_none, dtype=np.int32)
    old_bstart = np.asarray(net.block_start, dtype=np.int64)
    block_start = np.concatenate([old_bstart, old_bstart[-1] + gblock_start[1:]])
    block_atoms = np.concatenate([np.asarray(net.block_atoms, dtype=np.int32), gblock_atoms])
    # atoms: the "none" atoms get a predicate of their own and no arguments
    predicates = tuple(net.predicates) + (NONE_PREDICATE,)
    atom_pred = np.concatenate([net.atom_pred, np.full(n_none, len(net.predicates), np.int32)])
    atom_args = np.concatenate([net.atom_args, np.full((n_none, net.atom_args.shape[1]), -1, np.int32)])
    is_query = np.concatenate([net.is_query, np.zeros(n_none, bool)])
    truth = None
    if net.truth is not None:
        t = np.asarray(net.truth, dtype=np.int8)
        g = groups
        known = np.logical_and.reduceat(t[g.atoms] >= 0, g.start[:-1])
        any_true = np.logical_or.reduceat(t[g.atoms] == 1, g.start[:-1])
        none_truth = np.where(any_true, 0, np.where(known, 1, -1)).astype(np.int8)[none_group]
        truth = np.concatenate([t, none_truth])
    stats = dict(net.stats)
    stats.update(groups.summary())
    grouped = GroundNetwork.from_arrays(
        n_atoms=n_new,
        clause_start=cstart,
        lit_atom=net.lit_atom[lidx],
        lit_positive=net.lit_positive[lidx],
        is_hard=net.is_hard[clause_map],
        param_start=pstart,
        param_index=net.param_index[pidx],
        param_coef=net.param_coef[pidx],
        params=net.params,
        param_info=net.param_info,
        block_start=block_start,
        block_atoms=block_atoms,
        template_id=net.template_id[clause_map],
        atom_pred=atom_pred,
        atom_args=atom_args,
        predicates=predicates,
        constants=net.constants,
        is_query=is_query,
        constant_score=net.constant_score,
        truth=truth,
        stats=stats,
    )
    # keep the weights exactly as they were (not recomputed from the parameters)
    grouped = replace(grouped, weight=np.asarray(net.weight, dtype=np.float64)[clause_map])
    return Grouped(net=grouped, original=net, groups=groups, clause_map=clause_map, none_group=none_group)
