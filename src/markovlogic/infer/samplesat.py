"""SampleSAT and the sampler state shared by MC-SAT and Gibbs sampling.

The clause arrays are the normalised ones of :mod:`.kernels_state` (every atom
at most once per clause, tautologies and zero weights dropped). On top of
them the kernels keep, per chain:

- ``count[c]``: true literals of clause ``c`` (always up to date);
- ``sel[c]``: what clause ``c`` demands of the current slice: 0 nothing,
  1 "at least one literal true" (hard clauses, selected positive clauses),
  2 "every literal false" (selected negative clauses: Alchemy's unit clauses
  of the negated literals);
- the set of *violated* constraints (``sel == 1`` and ``count == 0``, or
  ``sel == 2`` and ``count > 0``), as a list with positions, so that a random
  violated constraint is drawn in O(1);
- ``fst[0]``: the score of the world (sum of the weights of the satisfied
  soft clauses that normalisation kept).

Variables are the free atoms that occur in some clause and the exactly-one
blocks of two or more atoms of which some atom occurs in a clause; a block is
one variable whose value is the position of its true atom, so every move
keeps every block exactly-one. Atoms outside all clauses (and blocks none of
whose atoms occur in a clause) are not sampled: their marginals are exact
(1/2, or 1/size for a block) and :func:`fill_inactive` writes them.

SampleSAT as an exact Markov kernel
-----------------------------------
MC-SAT is correct only if each SampleSAT call leaves the *uniform*
distribution over the satisfying worlds of the selected constraints
invariant. Wei, Erenrich and Selman's SampleSAT (WalkSAT moves mixed with
simulated annealing, run for a step budget) is only near-uniform. Here the
same moves are used as the *proposal* of a Metropolis-Hastings step, which
makes the kernel exact while keeping their ability to cross the barriers
that determinism puts between solutions.

One SampleSAT call makes ``steps`` or ``steps + 1`` proposals (at random: a
fixed count can make the chain periodic, e.g. one unconstrained variable that
every proposal flips). A proposal starts at the current world ``x`` (which
satisfies every constraint) and walks:

1. a simulated-annealing move: change a random variable (flip a free atom,
   or move a block's true value to another random atom of the block) and
   keep the change with probability ``min(1, exp(-delta / T))``, ``delta``
   being the change in the number of violated constraints;
2. while some constraint is violated: with probability ``walksat_prob`` a
   WalkSAT move (pick a violated constraint at random, then one of the
   literals that would fix it at random, and change that atom's value), else
   a simulated-annealing move as in 1.

The walk stops at the first world ``y`` that satisfies every constraint (at
most ``max_path`` moves; a longer walk is abandoned). ``y`` is accepted with
probability ``min(1, P(reverse walk) / P(forward walk))``, where each factor
is the probability of one move under the mixture above (both move kinds
counted, whichever one was drawn), evaluated in the state it starts from.
Pairing every walk ``x -> y`` with its reversal ``y -> x`` shows that the
kernel is symmetric on the satisfying worlds, so the uniform distribution on
them is invariant, for any ``walksat_prob``, temperature and step budget. The
greedy "best atom" WalkSAT move is not used: its probability cannot be
evaluated for the reverse walk without a full scan, and without that
correction it biases the sample. A walk of one move that stays satisfying is
always accepted, so in weakly constrained regions this is plain random-walk
Metropolis on the slice.

With ``use_score`` the same walks sample exp(score) instead of the uniform
distribution (the ratio also gets ``exp(score(y) - score(x))``): MC-SAT uses
this with the hard clauses as the only constraints, as a Metropolis-Hastings
step on the model itself (see :mod:`.mcsat`).

Cost: the commonest proposal, a free-atom flip from a satisfying world, is
decided by a read-only scan of the atom's clauses that stops as soon as the
flip has broken as many constraints as the annealing test allows (the test's
uniform number is drawn first); in a tight slice most proposals end after a
few clauses. Per-atom scans read ``occ_clause`` / ``occ_positive`` (clause
and sign of each occurrence, contiguous per atom).

The start world satisfying the hard clauses comes from :func:`feasible_state`
(WalkSAT restricted to the hard clauses, noise plus greedy moves: there it
only has to find a solution, not sample one).

Kernels are compiled without numba's reference-counting runtime (see
``KERNEL``) and helpers are never ``inline="always"`` (numba-level inlining
copies array arguments into new variables). numba's on-disk cache does not notice
edits in *other* modules: after changing a kernel here, delete
``infer/__pycache__/{samplesat,mcsat,gibbs,mh}.*.nb?``.
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from ..errors import InferenceError
from ..ground.network import GroundNetwork
from .kernels_state import SatArrays, init_counts, normalise_clauses, sat_arrays

# numba options of every sampler kernel. The kernels never allocate, so they
# are compiled without numba's reference-counting runtime (``_nrt=False``,
# an underscore option numba has had for years): with it, every call from one
# kernel into another paid atomic increments and decrements for each array
# argument, which tripled the cost of a SampleSAT proposal.
KERNEL = dict(cache=True, _nrt=False, nogil=True)   # nogil: chains and parts run on threads (parallel/)

# int64 statistics slots of the SampleSAT kernel
(ST_PROPOSALS, ST_ONE_STEP, ST_EXCURSIONS, ST_EXC_ACCEPTED, ST_CAPPED, ST_MOVES, ST_MH_PROPOSALS,
 ST_MH_ACCEPTED) = range(8)
N_STATS = 8

SEL_NONE, SEL_SAT, SEL_FALSE = 0, 1, 2


# ---------------------------------------------------------------- random numbers (xorshift64*)

@nb.njit(**KERNEL)
def rand_u64(rs):
    x = rs[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rs[0] = x
    return x * np.uint64(0x2545F4914F6CDD1D)


@nb.njit(**KERNEL)
def rand_below(rs, n):
    """Uniform integer in [0, n), 0 < n < 2**32."""
    return np.int64(((rand_u64(rs) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@nb.njit(**KERNEL)
def rand_unit(rs):
    """Uniform float in [0, 1)."""
    return np.float64(rand_u64(rs) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


def new_rng_state(rng: np.random.Generator) -> np.ndarray:
    """A fresh xorshift state (uint64[1], never 0) drawn from a numpy generator."""
    return np.array([int(rng.integers(1, 2**63 - 1))], dtype=np.uint64)


# ---------------------------------------------------------------- prepared network

class Prepared(NamedTuple):
    """A network in the form the samplers read."""

    sat: SatArrays
    occ_clause: np.ndarray   # int32[n_lits]: clause of each occurrence, grouped by atom
    occ_positive: np.ndarray  # bool[n_lits]: sign of each occurrence, grouped by atom
    var: np.ndarray          # int32[n_vars]: atom id (>= 0) or -(block + 1)
    soft: np.ndarray         # int32: ids of the soft clauses
    thresh: np.ndarray       # float64[n_clauses]: 1 - exp(-|w|) (selection probability)
    active: np.ndarray       # bool[n_atoms]: atoms whose marginal is sampled
    n_hard: int

    @property
    def n_vars(self) -> int:
        return len(self.var)

    @property
    def arrays(self) -> tuple:
        """The tuple of network arrays every kernel takes (see :func:`_unpack`)."""
        s = self.sat
        return (s.clause_start, s.lit_atom, s.lit_positive, s.atom_lit_start, self.occ_clause,
                self.occ_positive, s.weight, s.block_start, s.block_atoms, s.atom_block, self.var)


def prepare(net: GroundNetwork, hard_weight: float | None = None, lean: bool = False) -> Prepared:
    """Normalise the clauses and list the variables to sample. With
    ``hard_weight``, hard clauses become soft clauses of that weight
    (Alchemy's treatment; exactly-one blocks stay exact). ``lean``: the
    caller never reads ``sat.lit_clause``, ``sat.atom_lit`` or
    ``sat.orig_clause``, which may then come back empty (see
    :func:`normalise_clauses`)."""
    if not np.all(np.isfinite(net.weight)):
        raise InferenceError("a clause weight is not finite; use a hard clause instead of an infinite weight")
    if hard_weight is None:
        sat = sat_arrays(net, lean=lean)
    else:
        sat = normalise_clauses(
            net.n_atoms, net.clause_start, net.lit_atom, net.lit_positive,
            np.where(net.is_hard, float(hard_weight), net.weight), np.zeros(net.n_clauses, dtype=bool),
            net.block_start, net.block_atoms,
        )
    if sat.n_empty_hard:
        raise InferenceError(
            f"{sat.n_empty_hard} hard clause(s) have no literal left after evidence: "
            "the hard clauses cannot all be satisfied"
        )
    _check_hard_units(net, sat)
    occurs = np.diff(sat.atom_lit_start) > 0
    bsize = np.diff(sat.block_start)
    if sat.n_blocks:
        block_occurs = np.add.reduceat(occurs[sat.block_atoms].astype(np.int64), sat.block_start[:-1]) > 0
        block_occurs &= bsize > 0
    else:
        block_occurs = np.zeros(0, dtype=bool)
    live_block = block_occurs & (bsize >= 2)
    free = (sat.atom_block < 0) & occurs
    var = np.concatenate([
        np.flatnonzero(free).astype(np.int32),
        (-(np.flatnonzero(live_block) + 1)).astype(np.int32),
    ])
    active = free.copy()
    if sat.n_blocks:
        active[sat.block_atoms] = np.repeat(live_block, bsize)
    soft = np.flatnonzero(~sat.is_hard).astype(np.int32)
    thresh = np.abs(sat.weight)                 # -expm1(-|w|), in place: one clause array, not three
    np.negative(thresh, out=thresh)
    np.expm1(thresh, out=thresh)
    np.negative(thresh, out=thresh)
    return Prepared(
        sat=sat,
        # the normalised arrays' own (``lit_clause[atom_lit]``, ``lit_positive[atom_lit]``; the network's
        # reverse index when it is shared), not new copies: 9 bytes a literal less
        occ_clause=sat.occ_clause,
        occ_positive=sat.occ_positive,
        var=var, soft=soft, thresh=thresh, active=active, n_hard=int(sat.is_hard.sum()),
    )


def _check_hard_units(net: GroundNetwork, sat: SatArrays) -> None:
    """Hard unit clauses ``x`` and ``!x`` on the same atom: no world exists."""
    unit = sat.is_hard & (np.diff(sat.clause_start) == 1)
    first = sat.clause_start[:-1][unit]
    atoms, signs = sat.lit_atom[first], sat.lit_positive[first]
    both = np.intersect1d(atoms[signs], atoms[~signs])
    if len(both):
        more = f" (and {len(both) - 1} more atoms)" if len(both) > 1 else ""
        raise InferenceError(
            f"the hard clauses contradict each other: {net.atom_name(int(both[0]))} must be both true and "
            f"false{more}. The marginals are then undefined; hard_weight=W treats hard clauses as soft "
            "clauses of weight W (Alchemy's behaviour)"
        )


def fill_inactive(prep: Prepared, prob: np.ndarray) -> np.ndarray:
    """Exact marginals of atoms that no clause touches: 1/2 for a free atom,
    1/size for each atom of a block (1 for a block of one)."""
    sat = prep.sat
    prob = np.asarray(prob, dtype=np.float64)
    inactive = ~prep.active
    prob[inactive & (sat.atom_block < 0)] = 0.5
    if sat.n_blocks:
        bsize = np.diff(sat.block_start)
        per_atom = np.repeat(1.0 / np.maximum(bsize, 1), bsize)
        mask = inactive[sat.block_atoms]
        prob[sat.block_atoms[mask]] = per_atom[mask]
    return prob


def random_inactive(prep: Prepared, worlds: np.ndarray, rng: np.random.Generator) -> None:
    """Redraw, in each sampled world (rows of ``worlds``), the atoms that no
    clause touches from their exact (independent) distribution."""
    sat = prep.sat
    k = len(worlds)
    free = np.flatnonzero(~prep.active & (sat.atom_block < 0))
    if len(free):
        worlds[:, free] = rng.random((k, len(free))) < 0.5
    if sat.n_blocks:
        bsize = np.diff(sat.block_start)
        nonempty = np.flatnonzero(bsize > 0)
        inactive = nonempty[~prep.active[sat.block_atoms[sat.block_start[nonempty]]]]
        for b in inactive:  # one numpy op per inactive block, not per atom
            members = sat.block_atoms[sat.block_start[b]:sat.block_start[b + 1]]
            worlds[:, members] = False
            worlds[np.arange(k), members[rng.integers(0, len(members), size=k)]] = True


def start_world(prep: Prepared, rng: np.random.Generator, init: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """A world (``init`` or random) with exactly one true atom per block (the
    true atom of ``init`` if it has exactly one, else a random member), and
    the true atom of each block."""
    sat = prep.sat
    n = sat.n_atoms
    if init is None:
        world = rng.random(n) < 0.5
    else:
        world = np.array(init, dtype=bool).reshape(-1)
        if len(world) != n:
            raise InferenceError(f"initial world has {len(world)} atoms, the network has {n}")
    block_true = np.zeros(sat.n_blocks, dtype=np.int32)
    if sat.n_blocks:
        bsize = np.diff(sat.block_start)
        vals = world[sat.block_atoms]
        owner = np.repeat(np.arange(sat.n_blocks), bsize)
        ntrue = np.bincount(owner, weights=vals, minlength=sat.n_blocks)
        pos_in_block = np.arange(len(vals)) - np.repeat(sat.block_start[:-1], bsize)
        only = np.zeros(sat.n_blocks, dtype=np.int64)
        only[owner[vals]] = pos_in_block[vals]      # the true atom where there is exactly one
        choice = np.where(ntrue == 1, only, rng.integers(0, np.maximum(bsize, 1)))
        world[sat.block_atoms] = False
        nonempty = bsize > 0
        true_atoms = sat.block_atoms[sat.block_start[:-1][nonempty] + choice[nonempty]]
        world[true_atoms] = True
        block_true[nonempty] = true_atoms
    return world, block_true


# ---------------------------------------------------------------- state kernels
#
# Entry points take two tuples: g = Prepared.arrays = (clause_start, lit_atom,
# lit_positive, atom_lit_start, occ_clause, occ_positive, weight, block_start,
# block_atoms, atom_block, var) and s = SamplerState.arrays = (world, count,
# sel, vlist, vpos, ist, fst, block_true, rs). They unpack them once; the
# helpers take plain arrays (indexing a tuple of arrays in a hot loop costs
# two atomic reference-count updates per access).

@nb.njit(**KERNEL)
def _vadd(c, vlist, vpos, ist):
    vpos[c] = ist[0]
    vlist[ist[0]] = c
    ist[0] += 1


@nb.njit(**KERNEL)
def _vremove(c, vlist, vpos, ist):
    p = vpos[c]
    last = vlist[ist[0] - 1]
    vlist[p] = last
    vpos[last] = p
    vpos[c] = -1
    ist[0] -= 1


@nb.njit(**KERNEL)
def rebuild_violated(sel, count, vlist, vpos, ist):
    """Recompute the violated-constraint set from ``sel`` and ``count``."""
    ist[0] = 0
    for c in range(len(sel)):
        vpos[c] = -1
        sc = sel[c]
        if (sc == SEL_SAT and count[c] == 0) or (sc == SEL_FALSE and count[c] > 0):
            _vadd(c, vlist, vpos, ist)


@nb.njit(**KERNEL)
def flip(a, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight):
    """Flip atom ``a``; update ``count``, the violated set and the score
    ``fst[0]`` (``weight`` is 0 for hard clauses)."""
    new = not world[a]
    world[a] = new
    for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
        c = occ_clause[k]
        if occ_positive[k] == new:
            count[c] += 1
            if count[c] == 1:
                fst[0] += weight[c]
                sc = sel[c]
                if sc == SEL_SAT:
                    _vremove(c, vlist, vpos, ist)
                elif sc == SEL_FALSE:
                    _vadd(c, vlist, vpos, ist)
        else:
            count[c] -= 1
            if count[c] == 0:
                fst[0] -= weight[c]
                sc = sel[c]
                if sc == SEL_SAT:
                    _vadd(c, vlist, vpos, ist)
                elif sc == SEL_FALSE:
                    _vremove(c, vlist, vpos, ist)


@nb.njit(**KERNEL)
def _apply(a1, a2, world, count, sel, vlist, vpos, ist, fst, block_true, atom_block,
           atom_lit_start, occ_clause, occ_positive, weight):
    """A move: flip ``a1`` alone (``a2 < 0``), or move a block's true value
    from ``a1`` to ``a2``."""
    flip(a1, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
    if a2 >= 0:
        flip(a2, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
        block_true[atom_block[a2]] = a2


@nb.njit(**KERNEL)
def _undo(a1, a2, world, count, sel, vlist, vpos, ist, fst, block_true, atom_block,
          atom_lit_start, occ_clause, occ_positive, weight):
    if a2 >= 0:
        flip(a2, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
        block_true[atom_block[a1]] = a1
    flip(a1, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)


@nb.njit(**KERNEL)
def _other_in_block(rs, b, t, block_start, block_atoms):
    """A uniformly random atom of block ``b`` other than ``t`` (size >= 2)."""
    st = block_start[b]
    m = block_start[b + 1] - st
    j = block_atoms[st + rand_below(rs, m - 1)]
    if j == t:
        j = block_atoms[st + m - 1]
    return j


@nb.njit(**KERNEL)
def _random_move(rs, var, block_true, block_start, block_atoms):
    v = var[rand_below(rs, len(var))]
    if v >= 0:
        return v, -1
    b = -v - 1
    t = block_true[b]
    return t, _other_in_block(rs, b, t, block_start, block_atoms)


@nb.njit(**KERNEL)
def _fixing_move(rs, a, world, block_true, block_start, block_atoms, atom_block):
    """The move that changes atom ``a``'s value (-1, -1 if it cannot change:
    the only atom of a block)."""
    b = atom_block[a]
    if b < 0:
        return a, -1
    if block_start[b + 1] - block_start[b] < 2:
        return -1, -1
    if world[a]:
        return a, _other_in_block(rs, b, a, block_start, block_atoms)
    return block_true[b], a


@nb.njit(**KERNEL)
def _pick_violated_literal(rs, world, count, sel, vlist, ist, clause_start, lit_atom, lit_positive):
    """A WalkSAT choice: a random violated constraint, then a random literal
    of it whose atom's change would fix it; returns that atom."""
    c = vlist[rand_below(rs, ist[0])]
    st = clause_start[c]
    if sel[c] == SEL_SAT:
        return lit_atom[st + rand_below(rs, clause_start[c + 1] - st)]
    k = rand_below(rs, count[c])  # the k-th true literal
    for i in range(st, clause_start[c + 1]):
        if world[lit_atom[i]] == lit_positive[i]:
            if k == 0:
                return lit_atom[i]
            k -= 1
    return lit_atom[st]  # unreachable: count[c] true literals exist


@nb.njit(**KERNEL)
def _fix_weight(a, world, count, sel, clause_start, atom_lit_start, occ_clause, occ_positive):
    """Sum over the violated constraints containing ``a`` of the probability
    that a WalkSAT move, having drawn that constraint, picks ``a``."""
    w = 0.0
    for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
        c = occ_clause[k]
        sc = sel[c]
        if sc == SEL_SAT:
            if count[c] == 0:
                w += 1.0 / (clause_start[c + 1] - clause_start[c])
        elif sc == SEL_FALSE:
            if count[c] > 0 and world[a] == occ_positive[k]:
                w += 1.0 / count[c]
    return w


@nb.njit(**KERNEL)
def _breaks_below(a, bound, world, count, sel, atom_lit_start, occ_clause, occ_positive):
    """From a world violating no constraint: the number of constraints that
    flipping free atom ``a`` would violate, or -1 as soon as it reaches
    ``bound``."""
    cur = world[a]
    breaks = 0
    for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
        c = occ_clause[k]
        sc = sel[c]
        if sc == SEL_NONE:
            continue
        if sc == SEL_SAT:
            if count[c] != 1 or occ_positive[k] != cur:
                continue
        breaks += 1
        if breaks >= bound:
            return -1
    return breaks


@nb.njit(**KERNEL)
def _flip_effect(a, world, count, sel, atom_lit_start, occ_clause, occ_positive, weight):
    """From a world violating no constraint: the number of constraints that
    flipping free atom ``a`` would violate, and the change of the score."""
    cur = world[a]
    breaks = 0
    dscore = 0.0
    for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
        c = occ_clause[k]
        if occ_positive[k] == cur:      # a true literal becomes false
            if count[c] == 1:
                dscore -= weight[c]
                if sel[c] == SEL_SAT:
                    breaks += 1
        else:                           # a false literal becomes true
            if count[c] == 0:
                dscore += weight[c]
            if sel[c] == SEL_FALSE:
                breaks += 1
    return breaks, dscore


@nb.njit(**KERNEL)
def _anneal(delta, temp):
    """Probability that a simulated-annealing move of ``delta`` is kept."""
    if delta <= 0:
        return 1.0
    if temp <= 0.0:
        return 0.0
    return np.exp(-delta / temp)


@nb.njit(**KERNEL)
def samplesat(n_steps, max_path, p_ws, temp, use_score, g, s, path, stats):
    """``n_steps`` (or ``n_steps + 1``) SampleSAT proposals (see module
    docstring) from a world satisfying every selected constraint
    (``ist[0] == 0``); the world stays satisfying. With ``use_score`` the
    target is exp(score) on the satisfying worlds instead of the uniform
    distribution. ``path`` is scratch space (int32[2 * max_path])."""
    clause_start, lit_atom, lit_positive, atom_lit_start, occ_clause, occ_positive = g[0], g[1], g[2], g[3], g[4], g[5]
    weight, block_start, block_atoms, atom_block, var = g[6], g[7], g[8], g[9], g[10]
    world, count, sel, vlist, vpos, ist, fst, block_true, rs = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]
    n_vars = len(var)
    if n_vars == 0:
        return
    inv_vars = 1.0 / n_vars
    for _ in range(n_steps + rand_below(rs, 2)):
        if use_score:
            stats[ST_MH_PROPOSALS] += 1
        else:
            stats[ST_PROPOSALS] += 1
        n_path = 0       # moves made (self-loops included)
        n_log = 0        # moves kept, for undo
        log_ratio = 0.0
        left = False     # the walk left the satisfying worlds
        capped = False
        score0 = fst[0]
        while True:
            nv0 = ist[0]
            use_ws = nv0 > 0 and rand_unit(rs) < p_ws
            if use_ws:
                a = _pick_violated_literal(rs, world, count, sel, vlist, ist, clause_start, lit_atom, lit_positive)
                a1, a2 = _fixing_move(rs, a, world, block_true, block_start, block_atoms, atom_block)
            else:
                a1, a2 = _random_move(rs, var, block_true, block_start, block_atoms)
            n_path += 1
            kept = False  # the annealing test is already passed
            if a1 >= 0 and nv0 == 0 and a2 < 0:
                if not use_score:
                    # fast path, same rule: the flip is kept iff breaks < -T ln u.
                    # Breaks are integers and 0 breaks always pass, so a bound
                    # below 1 can be raised to 0.5 (which also covers T = 0).
                    bound = 0.5
                    if temp > 0.0:
                        u = rand_unit(rs)
                        bound = np.inf if u <= 0.0 else max(0.5, -temp * np.log(u))
                    if _breaks_below(a1, bound, world, count, sel, atom_lit_start, occ_clause, occ_positive) < 0:
                        a1 = -1  # rejected: a self-loop at x, which ends the walk
                    else:
                        kept = True
                else:
                    # fast path of the score mode: a flip that keeps every
                    # constraint is a one-move walk, accepted with min(1, e^dscore)
                    breaks, dscore = _flip_effect(a1, world, count, sel, atom_lit_start, occ_clause,
                                                  occ_positive, weight)
                    if breaks == 0:
                        if dscore >= 0.0 or rand_unit(rs) < np.exp(dscore):
                            flip(a1, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause,
                                 occ_positive, weight)
                            stats[ST_MOVES] += 1
                            stats[ST_MH_ACCEPTED] += 1
                        break
            if a1 >= 0:
                s1 = 0.0
                s2 = 0.0
                if nv0 > 0:
                    s1 = _fix_weight(a1, world, count, sel, clause_start, atom_lit_start, occ_clause, occ_positive)
                    if a2 >= 0:
                        s2 = _fix_weight(a2, world, count, sel, clause_start, atom_lit_start, occ_clause, occ_positive)
                _apply(a1, a2, world, count, sel, vlist, vpos, ist, fst, block_true, atom_block,
                       atom_lit_start, occ_clause, occ_positive, weight)
                nv1 = ist[0]
                delta = nv1 - nv0
                if (not use_ws) and (not kept) and delta > 0 and rand_unit(rs) >= _anneal(delta, temp):
                    _undo(a1, a2, world, count, sel, vlist, vpos, ist, fst, block_true, atom_block,
                          atom_lit_start, occ_clause, occ_positive, weight)
                else:
                    path[2 * n_log] = a1
                    path[2 * n_log + 1] = a2
                    n_log += 1
                    stats[ST_MOVES] += 1
                    if nv0 > 0 or nv1 > 0:
                        left = True
                        q_rand = inv_vars
                        mm1 = 1.0
                        if a2 >= 0:
                            b = atom_block[a2]
                            mm1 = block_start[b + 1] - block_start[b] - 1.0
                            q_rand = inv_vars / mm1
                        if nv0 > 0:
                            ws = (s1 / mm1 + s2) if a2 >= 0 else s1
                            fwd = p_ws * ws / nv0 + (1.0 - p_ws) * q_rand * _anneal(delta, temp)
                        else:
                            fwd = q_rand * _anneal(delta, temp)
                        if nv1 > 0:
                            ws = _fix_weight(a1, world, count, sel, clause_start, atom_lit_start, occ_clause, occ_positive)
                            if a2 >= 0:
                                ws += _fix_weight(a2, world, count, sel, clause_start, atom_lit_start, occ_clause,
                                                  occ_positive) / mm1
                            rev = p_ws * ws / nv1 + (1.0 - p_ws) * q_rand * _anneal(-delta, temp)
                        else:
                            rev = q_rand * _anneal(-delta, temp)
                        if rev <= 0.0:
                            log_ratio = -np.inf
                        else:
                            log_ratio += np.log(rev) - np.log(fwd)
            if ist[0] == 0:
                break
            if n_path >= max_path:
                capped = True
                break
        if n_log == 0:
            continue
        if use_score:
            log_ratio += fst[0] - score0
        elif left:
            stats[ST_EXCURSIONS] += 1
        else:
            stats[ST_ONE_STEP] += 1
        if capped:
            stats[ST_CAPPED] += 1
        accept = not capped and (log_ratio >= 0.0 or rand_unit(rs) < np.exp(log_ratio))
        if accept:
            if use_score:
                stats[ST_MH_ACCEPTED] += 1
            elif left:
                stats[ST_EXC_ACCEPTED] += 1
        else:
            for k in range(n_log - 1, -1, -1):
                _undo(path[2 * k], path[2 * k + 1], world, count, sel, vlist, vpos, ist, fst, block_true,
                      atom_block, atom_lit_start, occ_clause, occ_positive, weight)


# ---------------------------------------------------------------- WalkSAT on the hard clauses

@nb.njit(**KERNEL)
def _walksat_hard(max_flips, noise, g, s):
    """WalkSAT on the constraints with ``sel == 1`` (the hard clauses) until
    none is violated or ``max_flips`` moves; returns the moves made."""
    clause_start, lit_atom, atom_lit_start, occ_clause, occ_positive = g[0], g[1], g[3], g[4], g[5]
    weight, block_start, block_atoms, atom_block = g[6], g[7], g[8], g[9]
    world, count, sel, vlist, vpos, ist, fst, block_true, rs = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]
    flips = 0
    while ist[0] > 0 and flips < max_flips:
        c = vlist[rand_below(rs, ist[0])]
        st = clause_start[c]
        e = clause_start[c + 1]
        if rand_unit(rs) < noise:
            b1, b2 = _fixing_move(rs, lit_atom[st + rand_below(rs, e - st)], world, block_true, block_start,
                                  block_atoms, atom_block)
        else:
            b1 = -1
            b2 = -1
            best = 1 << 62
            ties = 0
            for i in range(st, e):
                m1, m2 = _fixing_move(rs, lit_atom[i], world, block_true, block_start, block_atoms, atom_block)
                if m1 < 0:
                    continue
                _apply(m1, m2, world, count, sel, vlist, vpos, ist, fst, block_true, atom_block,
                       atom_lit_start, occ_clause, occ_positive, weight)
                v = ist[0]
                _undo(m1, m2, world, count, sel, vlist, vpos, ist, fst, block_true, atom_block,
                      atom_lit_start, occ_clause, occ_positive, weight)
                if v < best:
                    best = v
                    b1 = m1
                    b2 = m2
                    ties = 1
                elif v == best:
                    ties += 1
                    if rand_below(rs, ties) == 0:
                        b1 = m1
                        b2 = m2
        flips += 1
        if b1 >= 0:
            _apply(b1, b2, world, count, sel, vlist, vpos, ist, fst, block_true, atom_block,
                   atom_lit_start, occ_clause, occ_positive, weight)
    return flips


class SamplerState(NamedTuple):
    """Mutable state of one chain (numpy arrays the kernels update in place)."""

    world: np.ndarray        # bool[n_atoms]
    count: np.ndarray        # int32[n_clauses]
    sel: np.ndarray          # int8[n_clauses]
    vlist: np.ndarray        # int32[n_clauses]
    vpos: np.ndarray         # int32[n_clauses]
    ist: np.ndarray          # int64[1]: number of violated constraints
    fst: np.ndarray          # float64[1]: score of the world (soft clauses kept by normalisation)
    block_true: np.ndarray   # int32[n_blocks]
    rs: np.ndarray           # uint64[1]: random state

    @property
    def arrays(self) -> tuple:
        return tuple(self)


@nb.njit(**KERNEL)
def satisfied_weight(weight, count):
    """Sum of the weights of the clauses with a true literal (``count > 0``),
    in clause order (no per-clause temporary)."""
    total = 0.0
    for c in range(len(weight)):
        if count[c] > 0:
            total += weight[c]
    return total


def feasible_state(
    prep: Prepared,
    rng: np.random.Generator,
    init: np.ndarray | None = None,
    max_flips: int | None = None,
    max_tries: int = 3,
    noise: float = 0.5,
    reuse: SamplerState | None = None,
) -> tuple[SamplerState, int]:
    """A chain state whose world satisfies every hard clause and block, found
    by WalkSAT on the hard clauses from ``init`` (or a random world), with
    ``sel`` set to "hard clauses only". Returns the state and the WalkSAT
    moves made. Raises :class:`InferenceError` if no such world is found.

    ``reuse``: a state of the same sampler whose per-clause arrays are
    overwritten instead of allocating new ones (a chain's restart then needs
    no second copy of its state; the old state is invalid afterwards)."""
    sat = prep.sat
    nc = sat.n_clauses
    if max_flips is None:
        max_flips = max(100_000, 100 * sat.n_atoms)
    rs = new_rng_state(rng)
    if reuse is not None and len(reuse.count) == nc:
        sel, vlist, vpos, count = reuse.sel, reuse.vlist, reuse.vpos, reuse.count
        sel.fill(SEL_NONE)
        sel[sat.is_hard] = SEL_SAT
        vlist.fill(0)
        ist, fst = reuse.ist, reuse.fst
        ist[0], fst[0] = 0, 0.0
    else:
        sel = np.where(sat.is_hard, SEL_SAT, SEL_NONE).astype(np.int8)
        vlist = np.zeros(nc, dtype=np.int32)
        vpos = np.full(nc, -1, dtype=np.int32)
        ist = np.zeros(1, dtype=np.int64)
        fst = np.zeros(1, dtype=np.float64)
        count = np.zeros(nc, dtype=np.int32)
    total = 0
    for attempt in range(max_tries):
        world, block_true = start_world(prep, rng, init if attempt == 0 else None)
        # the XOR of true atoms is not kept here: ``vpos`` is its scratch (rebuild_violated rewrites it whole)
        init_counts(world, sat.clause_start, sat.lit_atom, sat.lit_positive, count, vpos)
        rebuild_violated(sel, count, vlist, vpos, ist)
        state = SamplerState(world, count, sel, vlist, vpos, ist, fst, block_true, rs)
        if ist[0] > 0:
            total += int(_walksat_hard(max_flips, noise, prep.arrays, state.arrays))
        if ist[0] == 0:
            fst[0] = float(satisfied_weight(sat.weight, count))
            return state, total
    raise InferenceError(
        f"no world satisfies the hard clauses and blocks (WalkSAT: {max_tries} tries of "
        f"{max_flips} flips; {int(ist[0])} hard clauses still violated): they may contradict each other. "
        "The marginals are then undefined; hard_weight=W treats hard clauses as soft clauses of weight W "
        "(Alchemy's behaviour)"
    )
