"""Metropolis-Hastings over the possible worlds of a ground network: MAP by
the best sample (greedy at ``T = 0``, a fixed temperature, or simulated
annealing) and marginals from the samples.

The state is the sampler state of :mod:`.samplesat` (the world, the true
literals of each clause, the violated hard clauses, the score), started from
a world that satisfies the hard clauses and the exactly-one blocks (WalkSAT
on the hard clauses, as MC-SAT starts: :func:`.samplesat.feasible_state`).
Two built-in proposals, both symmetric:

- *flip*: a free atom (one that occurs in a clause and in no exactly-one
  block) chosen uniformly changes its value;
- *block move*: an exactly-one block (of two or more atoms, one of which
  occurs in a clause) chosen uniformly moves its true value to another of
  its atoms, chosen uniformly.

A step is a block move with probability ``block_prob`` (default: the share
of blocks among the variables, so that a variable is chosen uniformly), else
a flip. Both proposals are symmetric, so at temperature ``T`` a move is
accepted with probability ``min(1, exp(delta / T))``: the chain targets
``p(x)^(1/T)``. At ``T = 0`` a move is accepted when it does not lower the
score (sideways moves cross plateaus). A move that would break a hard clause
is refused, so the chain stays among the worlds that satisfy them. Score
changes come from the compiled kernels of :mod:`.samplesat`: a flip is
scored by a read-only scan of the atom's clauses (``_flip_effect``), a block
move by applying it and undoing it if it is rejected (``flip``).

Hard clauses: single-variable moves cannot cross between regions of worlds
that the hard clauses separate (two atoms tied by a hard equivalence never
change; see :mod:`.gibbs`). So a flip that would break a hard clause becomes
a *tie move* (``tie_max`` >= 2, the default): the atoms the hard clauses tie
to it are found by propagation and flip with it, accepted with the exact
Metropolis-Hastings ratio (see the comment above :func:`_propagate`). Tie
moves connect what hard implications and equivalences separate; they do not
move exactly-one blocks, and propagation picks one repair per violated
clause, so regions separated in other ways stay apart. A chain that still
cannot move says so: after sampling, the atoms whose value never changed, that
no move can change in the final world and that unit propagation over the hard
clauses does not prove fixed are counted in ``stats["frozen_atoms"]`` (names
in ``frozen_examples``) and :func:`mh_marginals` warns. With ``tie_max=1``
(single flips only) it also warns up front, unless user proposals are
registered (a proposal that flips tied atoms together, :mod:`.proposals`).
MC-SAT handles determinism by itself.

Marginals (:func:`mh_marginals`): ``samples`` states ``thin`` proposals
apart after ``burn_in`` proposals at ``T = 1``, Rao-Blackwellised by
default (each sampled atom's conditional probability given the rest of the
sampled world, :func:`.gibbs.rao_blackwell_tally`), else the fraction of
samples in which the atom is true. Atoms that no clause touches get their
exact marginal. MAP (:func:`mh_map`): the best world seen in ``restarts``
runs of ``steps`` proposals; the best world is kept up to date from a log of
the moves since the last best (amortised O(1) per accepted move).

User proposals (``user_proposals``, see :mod:`.proposals`) return atoms to
flip with their forward and backward densities; with them the built-in steps
run in compiled stretches between user steps made from Python.

The step loop is not here: possible worlds are a state kind of
:mod:`markovlogic.onestate` (``WORLDS``: ``world_propose`` draws a flip, a
block move or a tie move and scores it, ``world_accept`` / ``world_reject``
commit or drop it), and :func:`_mh_steps` is the generic Metropolis-Hastings
loop bound to it.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Sequence

import numba as nb
import numpy as np

from ..errors import InferenceError, OptionError
from ..ground.network import GroundNetwork
from ..onestate import StateKind, bind
from .gibbs import rao_blackwell_tally
from .sampling import ChunkRunner
from .proposals import AtomView, Flip, UserMix, check_user_proposals, log_ratio
from .results import MapResult, MarginalResult
from .samplesat import (
    KERNEL, _apply, _flip_effect, _other_in_block, _undo, feasible_state, fill_inactive, flip, prepare,
    rand_below, rand_unit,
)

HARD_WARNING = (
    "Metropolis-Hastings with single-variable moves on a network with hard clauses: the moves cannot "
    "cross between the regions of worlds that the hard clauses separate, so the chain may be stuck and "
    "the marginals wrong. Register a proposal that changes tied atoms together (user_proposals), or use "
    "MC-SAT (method='mcsat')."
)
GREEDY_EPS = 1e-9          # at T = 0 a move is kept when delta >= -GREEDY_EPS

# statistics slots
(ST_FLIP_PROPOSED, ST_FLIP_ACCEPTED, ST_BLOCK_PROPOSED, ST_BLOCK_ACCEPTED, ST_HARD_REFUSED,
 ST_TIE_PROPOSED, ST_TIE_ACCEPTED, ST_TIE_FAILED, ST_TIE_ATOMS) = range(9)
N_STATS = 9
TIE_MAX = 32               # default: the largest set of atoms a tie move flips
FROZEN_PROBES = 200        # constant atoms checked for being held by the hard clauses


@dataclass
class AtomMHOptions:
    """Options of Metropolis-Hastings over possible worlds (``method="mh"`` on
    a network without equivalence predicates).

    MAP: ``steps`` proposals per run (default ``200 *`` variables) at
    ``temperature`` (0: greedy), or with ``anneal`` (a start temperature)
    geometrically down to ``temperature`` (or ``anneal / 100`` if that is 0);
    ``restarts`` runs, each from a new random world but the first (which
    starts from ``init``), the best world kept.
    Marginals: ``samples`` states ``thin`` proposals apart (default: the
    number of variables) after ``burn_in`` proposals (default ``50 *``
    variables), Rao-Blackwellised unless ``rao_blackwell=False``.
    ``block_prob``: probability that a step is a block move (default: the
    share of blocks among the variables). ``init``: a start world (repaired
    by WalkSAT if it breaks a hard clause or a block; default random).
    ``hard_weight``: treat hard clauses as soft clauses of this weight.
    ``user_proposals``: see :mod:`.proposals`. ``max_seconds``: a time
    limit (the best world so far, or the samples so far, are returned).
    ``tie_max``: the largest set of atoms a tie move flips (a flip that
    breaks a hard clause propagates along the hard clauses; 1: single flips
    only, refused when they break a hard clause).
    """

    steps: int | None = None
    temperature: float = 0.0
    anneal: float | None = None
    restarts: int = 1
    samples: int = 1000
    burn_in: int | None = None
    thin: int | None = None
    seed: int = 0
    max_seconds: float | None = None
    init: np.ndarray | None = None
    block_prob: float | None = None
    rao_blackwell: bool = True
    hard_weight: float | None = None
    user_proposals: Sequence = ()
    tie_max: int = TIE_MAX

    def check(self) -> "AtomMHOptions":
        # steps 0 would return the start world as the MAP world
        _check_int("steps", self.steps, 1, optional=True)
        _check_int("burn_in", self.burn_in, 0, optional=True)
        _check_int("thin", self.thin, 1, optional=True)
        _check_int("samples", self.samples, 1)
        _check_int("restarts", self.restarts, 1)
        _check_int("seed", self.seed, 0)
        _check_int("tie_max", self.tie_max, 1)
        if not _real(self.temperature) or not math.isfinite(self.temperature) or self.temperature < 0:
            raise OptionError(f"temperature must be a number >= 0, got {self.temperature!r}")
        if self.anneal is not None and (not _real(self.anneal) or not math.isfinite(self.anneal) or self.anneal <= 0):
            raise OptionError(f"anneal (the start temperature) must be a number > 0, got {self.anneal!r}")
        if self.max_seconds is not None and (not _real(self.max_seconds) or not self.max_seconds > 0):
            raise OptionError(f"max_seconds must be a positive number, got {self.max_seconds!r}")
        if self.block_prob is not None and (not _real(self.block_prob) or not 0.0 <= self.block_prob <= 1.0):
            raise OptionError(f"block_prob must be a number in [0, 1], got {self.block_prob!r}")
        if self.hard_weight is not None and (not _real(self.hard_weight) or not math.isfinite(self.hard_weight)
                                             or self.hard_weight <= 0):
            raise OptionError(f"hard_weight must be a positive number, got {self.hard_weight!r}")
        if not isinstance(self.rao_blackwell, (bool, np.bool_)):
            raise OptionError(f"rao_blackwell must be True or False, got {self.rao_blackwell!r}")
        if self.init is not None and np.asarray(self.init).ndim != 1:
            raise OptionError("init must be a world: a one-dimensional array of truth values")
        self.user_proposals = check_user_proposals(self.user_proposals)
        return self


def _real(v) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float, np.integer, np.floating))


def _check_int(name: str, v, minimum: int, optional: bool = False) -> None:
    if v is None and optional:
        return
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
        raise OptionError(f"{name} must be an integer >= {minimum}, got {v!r}")


def make_options(options: AtomMHOptions | None, kw: dict) -> AtomMHOptions:
    """``options``, or an :class:`AtomMHOptions` from keyword arguments (an
    :class:`OptionError` names unknown ones), checked."""
    if options is not None:
        if kw:
            raise OptionError("give either an AtomMHOptions or keyword options, not both")
        return dataclasses.replace(options).check()
    names = {f.name for f in dataclasses.fields(AtomMHOptions)}
    unknown = sorted(set(kw) - names)
    if unknown:
        raise OptionError(f"method mh does not take option(s) {', '.join(unknown)}; "
                          f"it takes {', '.join(sorted(names))}")
    return AtomMHOptions(**kw).check()


# ---------------------------------------------------------------- kernels

@nb.njit(**KERNEL)
def _accept(d, temp, rs):
    """Metropolis test of a symmetric move of score change ``d`` at ``temp``."""
    if temp <= 0.0:
        return d >= -GREEDY_EPS
    if d >= 0.0:
        return True
    return rand_unit(rs) < math.exp(d / temp)


@nb.njit(**KERNEL)
def _record(a, log, lst):
    """Log an atom changed since the best world was copied (``lst[0]``
    entries; ``lst[1] = 1`` once the log overflows: a full copy is due)."""
    if lst[1] == 0:
        if lst[0] >= len(log):
            lst[1] = 1
        else:
            log[lst[0]] = a
            lst[0] += 1


@nb.njit(**KERNEL)
def _update_best(world, fst, best, best_world, log, lst):
    """Make ``best_world`` the current world if its score beats ``best[0]``."""
    if fst[0] > best[0] + GREEDY_EPS:
        if lst[1] != 0:
            for a in range(len(world)):
                best_world[a] = world[a]
        else:
            for k in range(lst[0]):
                a = log[k]
                best_world[a] = not best_world[a]
        lst[0] = 0
        lst[1] = 0
        best[0] = fst[0]


# ---------------------------------------------------------------- tie moves
#
# A tie move flips a set of free atoms that the hard clauses tie together.
# From a feasible world x and a free atom a, propagation flips a, then, while
# a hard clause is violated (the last one in the violated list), flips the
# first free atom of that clause not flipped yet; it fails (the move is
# refused) when a violated clause has no such atom or the set would exceed
# ``tie_max`` atoms. Propagation is a deterministic function S(x, a) of the
# world and the start atom. The proposal draws a uniformly among the free
# atoms and moves to x' = x with S(x, a) flipped, so
#
#     q(x -> x') = #{b in S : S(x, b) = S} / n_free
#     q(x' -> x) = #{b in S : S(x', b) = S} / n_free
#
# (a start atom outside S cannot give S, which contains its start). The
# move is accepted with probability min(1, exp(delta / T) q(x' -> x) /
# q(x -> x')): a Metropolis-Hastings kernel for p^(1/T) on the feasible
# worlds. When flipping a alone breaks no hard clause, S = {a} and the move is
# the single flip (both counts 1). Cost: |S| + 1 propagations per tie move.
# ``tie`` = (mark, smark, tokc, buf, buf2): stamps of the atoms flipped by the
# current propagation and of S, tokc = [stamp counter, tie_max], and the
# flipped atoms of S and of a counting propagation.

@nb.njit(**KERNEL)
def _propagate(a, g, s, mark, tokc, buf):
    """Propagation from the current feasible world and start atom ``a``
    (see above). Returns ``n`` > 0 with the atoms flipped in ``buf[:n]`` (the
    world keeps them), or 0 if it fails (the world is restored)."""
    clause_start, lit_atom = g[0], g[1]
    atom_lit_start, occ_clause, occ_positive, weight, atom_block = g[3], g[4], g[5], g[6], g[9]
    world, count, sel, vlist, vpos, ist, fst = s[0], s[1], s[2], s[3], s[4], s[5], s[6]
    cap = tokc[1]
    tokc[0] += 1
    tok = tokc[0]
    mark[a] = tok
    buf[0] = a
    n = 1
    flip(a, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
    ok = True
    while ist[0] > 0:
        c = vlist[ist[0] - 1]
        pick = -1
        for i in range(clause_start[c], clause_start[c + 1]):
            b = lit_atom[i]
            if mark[b] != tok and atom_block[b] < 0:
                pick = b
                break
        if pick < 0 or n >= cap:
            ok = False
            break
        mark[pick] = tok
        buf[n] = pick
        n += 1
        flip(pick, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
    if ok:
        return n
    for k in range(n - 1, -1, -1):
        flip(buf[k], world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
    return 0


@nb.njit(**KERNEL)
def _flip_list(atoms, n, g, s):
    atom_lit_start, occ_clause, occ_positive, weight = g[3], g[4], g[5], g[6]
    world, count, sel, vlist, vpos, ist, fst = s[0], s[1], s[2], s[3], s[4], s[5], s[6]
    for k in range(n - 1, -1, -1):
        flip(atoms[k], world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)


@nb.njit(**KERNEL)
def _generators(n, g, s, tie):
    """How many atoms of S (``buf[:n]``, stamped in ``smark``) give S by
    propagation from the current world (which is left as it was)."""
    mark, smark, tokc, buf, buf2 = tie[0], tie[1], tie[2], tie[3], tie[4]
    sid = smark[buf[0]]
    hits = 0
    for k in range(n):
        m = _propagate(buf[k], g, s, mark, tokc, buf2)
        if m > 0:
            same = m == n
            if same:
                for j in range(m):
                    if smark[buf2[j]] != sid:
                        same = False
                        break
            _flip_list(buf2, m, g, s)
            if same:
                hits += 1
    return hits


@nb.njit(**KERNEL)
def _tie_propose(a, g, s, tie, stats):
    """Propose the tie move from free atom ``a`` (see above). Returns ``(n,
    delta, logq)``: ``n = 0`` the propagation failed (the world is as it
    was); ``n = 1``: flipping ``a`` alone breaks no hard clause, the world
    holds the flip (``delta`` its score change); ``n > 1``: the atoms of S in
    ``tie[3][:n]``, the world as it was, ``logq = log(q(x' -> x) / q(x ->
    x'))`` (``-inf`` when no atom of S gives S back: never accepted)."""
    mark, smark, tokc, buf = tie[0], tie[1], tie[2], tie[3]
    fst = s[6]
    s0 = fst[0]
    n = _propagate(a, g, s, mark, tokc, buf)
    if n == 0:
        stats[ST_TIE_FAILED] += 1
        return 0, 0.0, 0.0
    d = fst[0] - s0
    if n == 1:
        return 1, d, 0.0
    stats[ST_TIE_PROPOSED] += 1
    stats[ST_TIE_ATOMS] += n
    tokc[0] += 1
    sid = tokc[0]
    for k in range(n):
        smark[buf[k]] = sid
    back = _generators(n, g, s, tie)            # at x'
    _flip_list(buf, n, g, s)                    # back to x
    fwd = _generators(n, g, s, tie)             # >= 1: a gives S
    if back == 0:
        return n, d, -np.inf
    return n, d, math.log(back / fwd)


@nb.njit(**KERNEL)
def _tie_commit(n, track, g, s, tie, best, best_world, log, lst, stats):
    """Make the tie move proposed last (``n > 1`` atoms in ``tie[3]``)."""
    buf = tie[3]
    atom_lit_start, occ_clause, occ_positive, weight = g[3], g[4], g[5], g[6]
    world, count, sel, vlist, vpos, ist, fst = s[0], s[1], s[2], s[3], s[4], s[5], s[6]
    for k in range(n):
        flip(buf[k], world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
        if track:
            _record(buf[k], log, lst)
    stats[ST_TIE_ACCEPTED] += 1
    if track:
        _update_best(world, fst, best, best_world, log, lst)


@nb.njit(**KERNEL)
def _tie_move(a, temp, track, g, s, tie, best, best_world, log, lst, stats):
    """The tie move from free atom ``a`` as a kernel of its own (multi-task
    MH mixes it in). Returns 0 if the propagation fails (refused), 1
    rejected, 2 accepted."""
    world, fst, rs = s[0], s[6], s[8]
    n, d, logq = _tie_propose(a, g, s, tie, stats)
    if n == 0:
        return 0
    if n == 1:
        if _accept(d, temp, rs):
            if track:
                _record(a, log, lst)
                _update_best(world, fst, best, best_world, log, lst)
            return 2
        _flip_list(tie[3], 1, g, s)
        return 1
    if logq == -np.inf:
        return 1
    if temp <= 0.0:
        acc = d >= -GREEDY_EPS
    else:
        x = d / temp + logq
        acc = x >= 0.0 or rand_unit(rs) < math.exp(x)
    if not acc:
        return 1
    _tie_commit(n, track, g, s, tie, best, best_world, log, lst, stats)
    return 2


@nb.njit(**KERNEL)
def _unit_propagate(tail, clause_start, lit_atom, lit_positive, is_hard, atom_lit_start, occ_clause, assign, queue):
    """Unit propagation over the hard clauses from the atoms ``queue[:tail]``
    (already set in ``assign``: 1 true, 0 false, -1 unknown). Returns True on
    a contradiction (a hard clause with every literal false)."""
    head = 0
    while head < tail:
        u = queue[head]
        head += 1
        for k in range(atom_lit_start[u], atom_lit_start[u + 1]):
            c = occ_clause[k]
            if not is_hard[c]:
                continue
            unknown = 0
            last = -1
            sat = False
            for i in range(clause_start[c], clause_start[c + 1]):
                v = assign[lit_atom[i]]
                if v < 0:
                    unknown += 1
                    last = i
                elif (v == 1) == lit_positive[i]:
                    sat = True
                    break
            if sat:
                continue
            if unknown == 0:
                return True
            if unknown == 1:
                b = lit_atom[last]
                assign[b] = 1 if lit_positive[last] else 0
                queue[tail] = b
                tail += 1
    return False


@nb.njit(**KERNEL)
def _hard_backbone(clause_start, lit_atom, lit_positive, is_hard, atom_lit_start, occ_clause, block_start,
                   block_atoms, assign, queue):
    """``assign``: the values unit propagation derives from the hard unit
    clauses and the blocks of one atom (-1 where it derives none)."""
    for k in range(len(assign)):
        assign[k] = -1
    tail = 0
    for c in range(len(clause_start) - 1):
        if is_hard[c] and clause_start[c + 1] - clause_start[c] == 1:
            i = clause_start[c]
            if assign[lit_atom[i]] < 0:
                assign[lit_atom[i]] = 1 if lit_positive[i] else 0
                queue[tail] = lit_atom[i]
                tail += 1
    for b in range(len(block_start) - 1):
        if block_start[b + 1] - block_start[b] == 1:
            u = block_atoms[block_start[b]]
            if assign[u] < 0:
                assign[u] = 1
                queue[tail] = u
                tail += 1
    _unit_propagate(tail, clause_start, lit_atom, lit_positive, is_hard, atom_lit_start, occ_clause, assign, queue)


@nb.njit(**KERNEL)
def _forced_by_hard(a, value, base, clause_start, lit_atom, lit_positive, is_hard, atom_lit_start, occ_clause,
                    assign, queue):
    """Whether ``a`` cannot take ``value`` in a feasible world by unit
    propagation: the backbone ``base`` already sets it, or propagation over
    the hard clauses from ``base`` and ``a = value`` reaches a contradiction
    (a failed literal)."""
    if base[a] >= 0:
        return True
    for k in range(len(assign)):
        assign[k] = base[k]
    assign[a] = 1 if value else 0
    queue[0] = a
    return _unit_propagate(1, clause_start, lit_atom, lit_positive, is_hard, atom_lit_start, occ_clause, assign,
                           queue)


@nb.njit(**KERNEL)
def _pinned(cand, g, s, tie, is_hard, base, assign, queue, out):
    """``out[k]``: candidate atom ``cand[k]`` cannot be moved from the
    current world (a single flip breaks a hard clause and, with tie moves,
    the propagation from it fails) and is not a failed literal."""
    clause_start, lit_atom, lit_positive, atom_lit_start, occ_clause, occ_positive, weight = (
        g[0], g[1], g[2], g[3], g[4], g[5], g[6])
    world, count, sel = s[0], s[1], s[2]
    mark, tokc, buf2 = tie[0], tie[2], tie[4]
    for k in range(len(cand)):
        a = cand[k]
        breaks, d = _flip_effect(a, world, count, sel, atom_lit_start, occ_clause, occ_positive, weight)
        if breaks == 0:
            continue
        if tokc[1] >= 2:
            m = _propagate(a, g, s, mark, tokc, buf2)
            if m > 0:
                _flip_list(buf2, m, g, s)
                continue
        if _forced_by_hard(a, not world[a], base, clause_start, lit_atom, lit_positive, is_hard, atom_lit_start,
                           occ_clause, assign, queue):
            continue
        out[k] = True


# ---------------------------------------------------------------- the state kind
#
# Possible worlds as a state kind of markovlogic.onestate: S = (g, s, free,
# blocks, p_block, tie, track, stats) with g, s the sampler's network and
# state arrays (.samplesat), track = (best, best_world, log, lst) the best
# world kept from the log of moves, stats the slots ST_* above. The diff:
# [move, a1, a2 or n]: a flip of a1 (evaluated read-only), a block move from
# a1 to a2 (applied by propose, undone by reject), a tie move of the n atoms in
# tie[3] (evaluated by propagation, the world as it was), or the flip of a1
# that a propagation left applied (undone by reject).

MV_FLIP, MV_BLOCK, MV_TIE, MV_FLIPPED = range(4)


@nb.njit(**KERNEL)
def world_propose(S, diff):
    g, s, free, blocks, p_block, tie, stats = S[0], S[1], S[2], S[3], S[4], S[5], S[7]
    atom_lit_start, occ_clause, occ_positive, weight = g[3], g[4], g[5], g[6]
    block_start, block_atoms, atom_block = g[7], g[8], g[9]
    world, count, sel, vlist, vpos, ist, fst, block_true, rs = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]
    nf = len(free)
    nbk = len(blocks)
    if nbk > 0 and (nf == 0 or rand_unit(rs) < p_block):
        b = blocks[rand_below(rs, nbk)]
        t = block_true[b]
        j = _other_in_block(rs, b, t, block_start, block_atoms)
        stats[ST_BLOCK_PROPOSED] += 1
        diff[0] = MV_BLOCK
        diff[1] = t
        diff[2] = j
        s0 = fst[0]
        _apply(t, j, world, count, sel, vlist, vpos, ist, fst, block_true, atom_block,
               atom_lit_start, occ_clause, occ_positive, weight)
        if ist[0] > 0:
            stats[ST_HARD_REFUSED] += 1
            _undo(t, j, world, count, sel, vlist, vpos, ist, fst, block_true, atom_block,
                  atom_lit_start, occ_clause, occ_positive, weight)
            return -np.inf, 0.0
        return fst[0] - s0, 0.0
    a = free[rand_below(rs, nf)]
    stats[ST_FLIP_PROPOSED] += 1
    diff[0] = MV_FLIP
    diff[1] = a
    breaks, d = _flip_effect(a, world, count, sel, atom_lit_start, occ_clause, occ_positive, weight)
    if breaks == 0:
        return d, 0.0
    if tie[2][1] < 2:
        stats[ST_HARD_REFUSED] += 1
        return -np.inf, 0.0
    n, d, logq = _tie_propose(a, g, s, tie, stats)
    if n == 0:
        stats[ST_HARD_REFUSED] += 1
        return -np.inf, 0.0
    if n == 1:
        diff[0] = MV_FLIPPED
        return d, 0.0
    diff[0] = MV_TIE
    diff[2] = n
    if logq == -np.inf:
        return -np.inf, 0.0         # no atom of S gives S back: the move is never made
    return d, logq


@nb.njit(**KERNEL)
def world_accept(S, diff, d, track):
    g, s, tie, stats = S[0], S[1], S[5], S[7]
    best, best_world, log, lst = S[6]
    world, fst = s[0], s[6]
    mv = diff[0]
    if mv == MV_TIE:
        _tie_commit(diff[2], track, g, s, tie, best, best_world, log, lst, stats)
        return
    a = diff[1]
    if mv == MV_FLIP:
        flip(a, world, s[1], s[2], s[3], s[4], s[5], fst, g[3], g[4], g[5], g[6])
        stats[ST_FLIP_ACCEPTED] += 1
    elif mv == MV_BLOCK:
        stats[ST_BLOCK_ACCEPTED] += 1
    if track:
        _record(a, log, lst)
        if mv == MV_BLOCK:
            _record(diff[2], log, lst)
        _update_best(world, fst, best, best_world, log, lst)


@nb.njit(**KERNEL)
def world_reject(S, diff):
    g, s = S[0], S[1]
    mv = diff[0]
    if mv == MV_BLOCK:
        _undo(diff[1], diff[2], s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], g[9], g[3], g[4], g[5], g[6])
    elif mv == MV_FLIPPED:
        _flip_list(S[5][3], 1, g, s)


@nb.njit(**KERNEL)
def world_unit(S):
    return rand_unit(S[1][8])


WORLDS = StateKind("worlds", world_propose, world_accept, world_reject, world_unit, jit=KERNEL)
LOOPS = bind(WORLDS)
_mh_loop = LOOPS.mh


@nb.njit(**KERNEL)
def _mh_steps(n_steps, temp, ratio, p_block, free, blocks, track, g, s, best, best_world, log, lst, stats, tie,
              work):
    """``n_steps`` built-in proposals from a world satisfying the hard clauses
    and blocks, the temperature multiplied by ``ratio`` after each; with
    ``track``, the best world is kept in ``best_world``. Returns the
    temperature reached. The generic loop of :mod:`markovlogic.onestate`
    over worlds; ``work`` = (diff int64[3], move counts int64[4, 2])."""
    if len(free) + len(blocks) == 0:
        return temp
    S = (g, s, free, blocks, p_block, tie, (best, best_world, log, lst), stats)
    return _mh_loop(S, work[0], n_steps, temp, ratio, -GREEDY_EPS, track, work[1])


@nb.njit(**KERNEL)
def _collect(i, rb, is_hard, g, s, prob, tally, store, seen):
    """Add the current world to ``tally`` (conditionals with ``rb``, else
    truth values; if it has one entry per atom) and/or to row ``i`` of
    ``store`` (if it has rows); ``seen[a]`` (if one entry per atom) gets bit
    1 when atom ``a`` is true, bit 2 when false."""
    world, count, block_true = s[0], s[1], s[7]
    n = len(world)
    if len(seen) == n:
        for a in range(n):
            seen[a] |= 1 if world[a] else 2
    if len(tally) == n:
        if rb:
            rao_blackwell_tally(g, world, count, is_hard, block_true, prob, tally)
        else:
            for a in range(n):
                if world[a]:
                    tally[a] += 1.0
    if store.shape[0] > 0:
        for a in range(n):
            store[i, a] = world[a]


@nb.njit(**KERNEL)
def _mh_sample(n_samples, thin, p_block, free, blocks, rb, is_hard, g, s, prob, tally, store,
               best, best_world, log, lst, stats, tie, seen, work):
    """``n_samples`` samples, each after ``thin`` proposals at ``T = 1`` (or
    ``thin + 1``, by a fair coin, when ``thin > 1``: a chain of period two,
    e.g. a tie move that is always accepted, is then sampled in both of its
    phases)."""
    rs = s[8]
    for i in range(n_samples):
        k = thin + 1 if thin > 1 and rand_unit(rs) < 0.5 else thin
        _mh_steps(k, 1.0, 1.0, p_block, free, blocks, False, g, s, best, best_world, log, lst, stats, tie, work)
        _collect(i, rb, is_hard, g, s, prob, tally, store, seen)


@nb.njit(**KERNEL)
def _user_flip(atoms, lr, temp, track, g, s, best, best_world, log, lst):
    """Flip ``atoms`` together and accept with ``min(1, exp(delta / temp +
    lr))`` (``temp = 0``: iff delta >= 0); a move that breaks a hard clause
    or an exactly-one block is refused. Returns 0 refused, 1 rejected, 2
    accepted (the world then keeps the change)."""
    atom_lit_start, occ_clause, occ_positive, weight = g[3], g[4], g[5], g[6]
    block_start, block_atoms, atom_block = g[7], g[8], g[9]
    world, count, sel, vlist, vpos, ist, fst, block_true, rs = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]
    s0 = fst[0]
    for a in atoms:
        flip(a, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
    ok = ist[0] == 0
    if ok:
        for a in atoms:
            b = atom_block[a]
            if b >= 0:
                n_true = 0
                for k in range(block_start[b], block_start[b + 1]):
                    if world[block_atoms[k]]:
                        n_true += 1
                if n_true != 1:
                    ok = False
                    break
    result = 0
    if ok:
        d = fst[0] - s0
        if temp <= 0.0:
            acc = d >= -GREEDY_EPS
        else:
            x = d / temp + lr
            acc = x >= 0.0 or rand_unit(rs) < math.exp(x)
        result = 2 if acc else 1
    if result == 2:
        for a in atoms:
            b = atom_block[a]
            if b >= 0 and world[a]:
                block_true[b] = a
            if track:
                _record(a, log, lst)
        if track:
            _update_best(world, fst, best, best_world, log, lst)
        return 2
    for k in range(len(atoms) - 1, -1, -1):
        flip(atoms[k], world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
    return result


# ---------------------------------------------------------------- the chain

class AtomChain:
    """One Metropolis-Hastings chain over the worlds of ``net`` (see the
    module docstring). :meth:`advance` makes proposals at a temperature
    schedule, tracking the best world; :meth:`sample` draws thinned samples
    at ``T = 1``; :meth:`reset` restarts from a new world."""

    def __init__(self, net: GroundNetwork, options: AtomMHOptions) -> None:
        opt = options
        if opt.hard_weight is not None:
            net = net.softened(float(opt.hard_weight))
        self.net = net
        self.prep = prepare(net)
        sat = self.prep.sat
        self.rng = np.random.default_rng(opt.seed)
        init = None if opt.init is None else np.asarray(opt.init, dtype=bool)
        if init is not None and len(init) != net.n_atoms:
            raise OptionError(f"init has {len(init)} truth values, the network has {net.n_atoms} atoms")
        self.state, self.init_flips = feasible_state(self.prep, self.rng, init)
        var = self.prep.var
        self.free = var[var >= 0].astype(np.int32)
        self.blocks = (-var[var < 0] - 1).astype(np.int32)
        if opt.block_prob is not None:
            self.p_block = float(opt.block_prob)
        else:
            self.p_block = len(self.blocks) / max(len(var), 1)
        self.rb = bool(opt.rao_blackwell)
        n = net.n_atoms
        self.best = np.array([self.state.fst[0]])
        self.best_world = self.state.world.copy()
        self.log = np.zeros(max(n, 2), np.int32)
        self.lst = np.zeros(2, np.int64)
        self.stats = np.zeros(N_STATS, np.int64)
        cap = int(opt.tie_max)
        self.tie = (np.zeros(n, np.int64), np.zeros(n, np.int64), np.array([0, cap], np.int64),
                    np.zeros(max(cap, 1), np.int32), np.zeros(max(cap, 1), np.int32))
        self.work = (np.zeros(3, np.int64), np.zeros((4, 2), np.int64))     # the generic loop's diff, counts
        self.seen = np.zeros(n, np.int8)        # bit 1: sampled true, bit 2: sampled false
        max_block = int(np.diff(sat.block_start).max()) if sat.n_blocks else 1
        self.prob = np.zeros(2 * max_block, np.float64)
        self._no_tally = np.zeros(0, np.float64)
        self._no_store = np.zeros((0, n), dtype=bool)
        self.user = check_user_proposals(opt.user_proposals)
        self.mix = UserMix(self.user, np.random.default_rng([int(opt.seed), 1])) if self.user else None
        self.view = AtomView(net, self.state.world, self.state.block_true, self.free, self.blocks,
                             sat.block_start, sat.block_atoms, sat.atom_block, self.state.fst)

    @property
    def variables(self) -> int:
        return self.prep.n_vars

    @property
    def world(self) -> np.ndarray:
        """A copy of the current world."""
        return self.state.world.copy()

    @property
    def score(self) -> float:
        return float(self.state.fst[0])

    def reset(self, init: np.ndarray | None = None) -> None:
        """Restart from ``init`` (or a random world), made feasible; the best
        world found so far is kept."""
        state, flips = feasible_state(self.prep, self.rng, init, reuse=self.state)
        self.init_flips += flips
        # the kernels update these arrays in place: copy the new state into them (the per-clause ones are
        # already the same arrays)
        for old, new in zip(self.state, state):
            if isinstance(old, np.ndarray):
                old[...] = new
        self.lst[1] = 1             # the log no longer leads from the best world to this one
        _update_best(self.state.world, self.state.fst, self.best, self.best_world, self.log, self.lst)

    # ------------------------------------------------------------ moves
    def _builtin(self, k: int, temp: float, ratio: float, track: bool) -> float:
        return _mh_steps(k, temp, ratio, self.p_block, self.free, self.blocks, track, self.prep.arrays,
                         self.state.arrays, self.best, self.best_world, self.log, self.lst, self.stats, self.tie,
                         self.work)

    def advance(self, k: int, temp: float, ratio: float = 1.0, track: bool = True) -> float:
        """``k`` proposals, the temperature going from ``temp`` and multiplied
        by ``ratio`` after each; returns the temperature reached."""
        if self.mix is None:
            return self._builtin(k, temp, ratio, track)
        mix = self.mix
        left = k
        while left > 0:
            m = min(mix.builtin_run(), left)
            if m > 0:
                temp = self._builtin(m, temp, ratio, track)
                mix.took_builtin(m)
                left -= m
                continue
            self._user_step(mix.pick(), temp, track)
            temp *= ratio
            left -= 1
        return temp

    def _user_step(self, j: int, temp: float, track: bool) -> None:
        up = self.user[j]
        counts = self.mix.counts[j]
        counts[0] += 1
        move = up.proposal(self.view, self.mix.rng)
        if move is None:
            counts[1] += 1
            return
        if not isinstance(move, Flip):
            raise InferenceError(f"user proposal {up.name!r} returned {type(move).__name__}; over possible "
                                 "worlds a proposal returns a Flip (or None)")
        atoms = np.asarray(move.atoms)
        n = self.net.n_atoms
        if atoms.ndim != 1 or (len(atoms) and not np.issubdtype(atoms.dtype, np.integer)):
            raise InferenceError(f"user proposal {up.name!r}: Flip.atoms must be a list of atom ids")
        if len(atoms) == 0:
            counts[1] += 1
            return
        if atoms.min() < 0 or atoms.max() >= n:
            raise InferenceError(f"user proposal {up.name!r}: atom id out of range [0, {n}) in {atoms.tolist()}")
        if len(np.unique(atoms)) != len(atoms):
            raise InferenceError(f"user proposal {up.name!r}: Flip.atoms lists an atom twice: {atoms.tolist()}")
        lr = log_ratio(move, up.name)
        if lr == -math.inf and temp > 0.0:
            return                 # irreversible: always rejected
        res = _user_flip(atoms.astype(np.int32), lr, temp, track, self.prep.arrays, self.state.arrays,
                         self.best, self.best_world, self.log, self.lst)
        if res == 0:
            counts[2] += 1
        elif res == 2:
            counts[3] += 1

    # ------------------------------------------------------------ samples
    def sample(self, n: int, thin: int, tally: np.ndarray | None = None, store: np.ndarray | None = None) -> None:
        """``n`` samples ``thin`` proposals apart at ``T = 1``: each added to
        ``tally`` (float64[n_atoms]: conditionals or truth values) and/or
        written to row ``i`` of ``store`` (bool[n, n_atoms])."""
        tally = self._no_tally if tally is None else tally
        store = self._no_store if store is None else store
        if self.mix is None:
            _mh_sample(n, thin, self.p_block, self.free, self.blocks, self.rb, self.prep.sat.is_hard,
                       self.prep.arrays, self.state.arrays, self.prob, tally, store, self.best, self.best_world,
                       self.log, self.lst, self.stats, self.tie, self.seen, self.work)
            return
        for i in range(n):
            self.advance(thin, 1.0, 1.0, track=False)
            _collect(i, self.rb, self.prep.sat.is_hard, self.prep.arrays, self.state.arrays, self.prob, tally, store,
                     self.seen)

    def frozen_atoms(self) -> np.ndarray:
        """Free atoms that the chain cannot move: their value never changed
        over the samples drawn (``seen``), in the current world flipping one
        breaks a hard clause and no tie move from it exists, and unit
        propagation over the hard clauses does not prove the value forced (a
        failed literal). At most ``FROZEN_PROBES`` atoms are probed."""
        n = self.net.n_atoms
        constant = np.zeros(n, dtype=bool)
        constant[self.free] = (self.seen[self.free] == 1) | (self.seen[self.free] == 2)
        cand = np.flatnonzero(constant)[:FROZEN_PROBES].astype(np.int32)
        if not len(cand):
            return cand
        sat = self.prep.sat
        out = np.zeros(len(cand), dtype=bool)
        g = self.prep.arrays
        base = np.zeros(n, np.int8)
        queue = np.zeros(n, np.int32)
        _hard_backbone(g[0], g[1], g[2], sat.is_hard, g[3], g[4], sat.block_start, sat.block_atoms, base, queue)
        _pinned(cand, g, self.state.arrays, self.tie, sat.is_hard, base, np.zeros(n, np.int8), queue, out)
        return cand[out]

    def stats_dict(self) -> dict:
        s = self.stats.tolist()
        out = {
            "flips_proposed": s[ST_FLIP_PROPOSED], "flips_accepted": s[ST_FLIP_ACCEPTED],
            "block_moves_proposed": s[ST_BLOCK_PROPOSED], "block_moves_accepted": s[ST_BLOCK_ACCEPTED],
            "hard_refused": s[ST_HARD_REFUSED], "block_prob": self.p_block, "variables": self.variables,
            "init_flips": self.init_flips,
            "tie_moves_proposed": s[ST_TIE_PROPOSED], "tie_moves_accepted": s[ST_TIE_ACCEPTED],
            "tie_moves_failed": s[ST_TIE_FAILED],
            "tie_move_atoms": s[ST_TIE_ATOMS] / s[ST_TIE_PROPOSED] if s[ST_TIE_PROPOSED] else 0.0,
        }
        proposed = s[ST_FLIP_PROPOSED] + s[ST_BLOCK_PROPOSED]
        accepted = s[ST_FLIP_ACCEPTED] + s[ST_BLOCK_ACCEPTED]
        if self.mix is not None:
            out.update(self.mix.stats())
            proposed += int(self.mix.counts[:, 0].sum())
            accepted += int(self.mix.counts[:, 3].sum())
        out["proposals"] = proposed
        out["accepted"] = accepted
        out["accept_rate"] = accepted / proposed if proposed else 0.0
        return out


# ---------------------------------------------------------------- entry points

def _schedule(opt: AtomMHOptions, steps: int) -> tuple[float, float]:
    """Start temperature and per-step ratio of the MAP runs."""
    if opt.anneal is None:
        return float(opt.temperature), 1.0
    t_hi = float(opt.anneal)
    t_lo = float(opt.temperature) if opt.temperature > 0 else 0.01 * t_hi
    if steps <= 1 or t_lo == t_hi:
        return t_hi, 1.0
    return t_hi, (t_lo / t_hi) ** (1.0 / (steps - 1))


def mh_map(net: GroundNetwork, options: AtomMHOptions | None = None, *,
           progress: Callable[[int], None] | None = None, **kw) -> MapResult:
    """The best world seen by Metropolis-Hastings (greedy, a fixed
    temperature or simulated annealing; see :class:`AtomMHOptions`).
    ``progress(n)`` is called with the proposals made so far."""
    opt = make_options(options, kw)
    start = time.perf_counter()
    chain = AtomChain(net, opt)
    net = chain.net
    steps = opt.steps if opt.steps is not None else 200 * max(chain.variables, 1)
    t0, ratio = _schedule(opt, steps)
    runner = ChunkRunner(opt.max_seconds)
    done = 0
    runs = 0
    for r in range(opt.restarts):
        if r > 0:
            chain.reset(None)
        temp = [t0]

        def step(k: int) -> None:
            temp[0] = chain.advance(k, temp[0], ratio, track=True)

        base = done
        made = runner.run(step, steps, None if progress is None else (lambda d: progress(base + d)))
        done += made
        runs += 1
        if runner.stopped_early:
            break
    seconds = runner.elapsed()
    world = chain.best_world.copy()
    prep = chain.prep
    world[~prep.active & (prep.sat.atom_block < 0)] = False     # atoms no clause touches
    stats = chain.stats_dict()
    stats.update({"steps": steps, "restarts": runs, "temperature": float(opt.temperature),
                  "anneal": opt.anneal, "seconds": seconds, "stopped_early": runner.stopped_early,
                  "proposals_per_second": done / seconds if seconds > 0 else float("inf"),
                  "score_drift": abs(float(chain.best[0]) - float(prep.sat.weight[_counts(prep, world) > 0].sum()))})
    return MapResult(world=world, score=net.score(world), cost=net.cost(world),
                     hard_violated=net.hard_violated(world), method="mh",
                     seconds=time.perf_counter() - start, stats=stats)


def frozen_stats(chain: AtomChain, samples: int, method: str, stats: dict, stacklevel: int = 3) -> None:
    """Put ``frozen_atoms`` (how many atoms the chain could not move, see
    :meth:`AtomChain.frozen_atoms`) and ``frozen_examples`` (up to five of
    their names) in ``stats``; if there are any, warn and put the warning in
    ``stats["warning"]``: their marginals are the start world's, not the
    model's."""
    if not chain.prep.n_hard:
        stats["frozen_atoms"] = 0
        return
    frozen = chain.frozen_atoms()
    stats["frozen_atoms"] = int(len(frozen))
    if not len(frozen):
        return
    names = [chain.net.atom_name(int(a)) for a in frozen[:5]]
    stats["frozen_examples"] = ", ".join(names)
    more = f" and {len(frozen) - len(names)} more" if len(frozen) > len(names) else ""
    msg = (f"{method}: the chain could not move {len(frozen)} atom(s) held by hard clauses ({', '.join(names)}"
           f"{more}): they kept one value in all {samples} samples and every move of them breaks a hard "
           "clause, so their marginals may be wrong. Use MC-SAT (method='mcsat'), which moves tied atoms "
           "together.")
    warnings.warn(msg, stacklevel=stacklevel)
    stats["warning"] = msg if "warning" not in stats else stats["warning"] + " " + msg


def _counts(prep, world: np.ndarray) -> np.ndarray:
    sat = prep.sat
    lit_true = world[sat.lit_atom] == sat.lit_positive
    return np.add.reduceat(lit_true.astype(np.int64), sat.clause_start[:-1]) if sat.n_clauses else np.zeros(0)


def mh_marginals(net: GroundNetwork, options: AtomMHOptions | None = None, *,
                 progress: Callable[[int], None] | None = None, **kw) -> MarginalResult:
    """P(atom = true) from Metropolis-Hastings samples (see
    :class:`AtomMHOptions`). ``progress(n)`` is called with the samples drawn
    so far. Warns (and says so in ``stats["warning"]``) when the network has
    hard clauses and no user proposal is registered."""
    opt = make_options(options, kw)
    start = time.perf_counter()
    chain = AtomChain(net, opt)
    stats: dict = {}
    if chain.prep.n_hard and not chain.user and opt.tie_max < 2:
        warnings.warn(HARD_WARNING, stacklevel=2)
        stats["warning"] = HARD_WARNING
    nv = max(chain.variables, 1)
    thin = opt.thin if opt.thin is not None else nv
    burn = opt.burn_in if opt.burn_in is not None else 50 * nv
    burner = ChunkRunner(opt.max_seconds)
    burned = burner.run(lambda k: chain.advance(k, 1.0, 1.0, track=False), burn)
    left = None if opt.max_seconds is None else max(opt.max_seconds - burner.elapsed(), 1e-9)
    sampler = ChunkRunner(left)
    tally = np.zeros(chain.net.n_atoms, np.float64)
    t_sample = time.perf_counter()
    drawn = sampler.run(lambda k: chain.sample(k, thin, tally), opt.samples, progress, at_least_one=True)
    sample_seconds = time.perf_counter() - t_sample
    prob = fill_inactive(chain.prep, tally / float(drawn))
    frozen_stats(chain, drawn, "mh", stats)
    seconds = time.perf_counter() - start
    stats.update(chain.stats_dict())
    stats.update({
        "samples": drawn, "burn_in": burned, "thin": thin, "seconds": seconds,
        "sampling_seconds": sample_seconds, "rao_blackwell": chain.rb,
        "stopped_early": burner.stopped_early or sampler.stopped_early,
        "proposals_per_second": (drawn * thin) / sample_seconds if sample_seconds > 0 else float("inf"),
    })
    return MarginalResult(probabilities=prob, method="mh", samples=drawn, seconds=seconds, stats=stats)
