"""A bound on the MAP score from the LP relaxation's dual, by coordinate ascent.

MAP as weighted MAX-SAT relaxes to a linear program over ``x`` in [0, 1]
(one per atom; one-hot per exactly-one block). Writing ``t(l)`` for the value
of a literal (``x`` or ``1 - x``) and ``s_c = sum_l t(l)``, the relaxed cost
of a world is

    sum over positive soft clauses  w_c * max(0, 1 - s_c)
  + sum over negative soft clauses |w_c| * max_l t(l)

subject to ``s_c >= 1`` for hard clauses. Its Lagrangian dual is a function
of one multiplier per clause, ``lam_c`` in [0, w_c] for a positive soft
clause (``[0, inf)`` for a hard one), and of ``mu_c`` on the simplex scaled
by ``|w_c|`` for a negative one:

    g(lam, mu) = sum_c lam_c (1 - n_neg(c)) + sum over negative literals of mu
               + sum over free atoms  min(0, r_a)
               + sum over blocks      min over the block's atoms of r_a

where ``r_a`` (the reduced cost of atom ``a``) is the coefficient of ``x_a``
in the Lagrangian: ``-lam_c`` for each positive literal of ``a`` in a
lam-clause and ``+lam_c`` for each negative one, ``+mu`` / ``-mu`` likewise.
Unit clauses are linear in ``x`` and enter ``r`` with their full weight.
For *every* multiplier vector in its box, ``g`` is a lower bound of the LP's
optimal cost and so of the MAP cost (weak duality): the bound reported is
``g`` evaluated exactly (float64) at whatever multipliers the ascent
reached, so it is valid whether or not the ascent has converged.

The ascent (compiled, Gauss-Seidel, forward and backward sweeps) maximises
``g`` over one clause's multiplier at a time, with the others fixed. For a
clause of two literals the maximiser is the balance point
``lam = -(a_1 r_1 + a_2 r_2) / 2`` (``a = -1`` for a positive literal, +1
for a negative one; ``r`` without the clause's own term), clipped to the
box: it is the same for the entropy-smoothed dual at every temperature,
so on networks of one- and two-literal clauses over free atoms the sweeps
converge to the LP optimum (the coordinate-wise optimum of a smooth concave
function is its optimum). Longer clauses take the middle of the interval
of maximisers of the piecewise-linear ``g`` along their coordinate. An atom
of an exactly-one block enters as a free atom whose reduced cost is its
own less the least of the block's other atoms (exact for a clause with one
atom of the block). Negative clauses of several literals fill each
literal's slope-1 capacity and split the rest evenly.

A world is read off the multipliers: a free atom is true when its reduced
cost is negative, a block takes its atom of least reduced cost. On networks
whose LP is tight (implications and units, as the friends-and-smokers
model: a minimum cut) that world is near the optimum; the default MAP path
(:mod:`.plan`) polishes it by MaxWalkSAT.

Memory: one float64 multiplier per clause (8 bytes), one reduced cost per
atom, one float64 per literal only when the network has negative clauses
of several literals (a negative unit's multiplier is its weight, read from
``weight``). The clause arrays are the network's own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba as nb
import numpy as np

from ..errors import OptionError

_HARD_MARGIN = 1.0      # a hard unit's multiplier goes this far past the point where its atom is indifferent


@dataclass
class DualResult:
    """What the ascent reached."""

    cost_bound: float          # lower bound on the MAP cost (the network's own cost units)
    score_bound: float         # upper bound on the MAP score: positive soft weight less cost_bound
    world: np.ndarray          # bool[n_atoms]: the world read off the reduced costs
    sweeps: int
    seconds: float
    converged: bool
    history: list = field(default_factory=list)   # (seconds, cost bound) after each pair of sweeps


@nb.njit(cache=True, nogil=True)
def _init_reduced(clause_start, lit_atom, lit_positive, weight, is_hard, lam, mu, r):
    """Reduced costs and the constant of ``g`` for the current multipliers.
    Unit soft clauses enter with their full weight (their multiplier is
    fixed); ``lam[c]`` is written for them too."""
    const = 0.0
    r[:] = 0.0
    for c in range(len(clause_start) - 1):
        s = clause_start[c]
        e = clause_start[c + 1]
        w = weight[c]
        h = is_hard[c]
        if not h and w < 0.0:
            unit = e - s == 1       # a negative unit's multiplier is its weight (no ``mu`` slot needed)
            for i in range(s, e):
                m = -w if unit else mu[i]
                if lit_positive[i]:
                    r[lit_atom[i]] += m
                else:
                    r[lit_atom[i]] -= m
                    const += m
            continue
        if not h and e - s <= 1:
            lam[c] = w             # a unit is linear in x; an empty clause costs w
        lc = lam[c]
        nneg = 0
        for i in range(s, e):
            if lit_positive[i]:
                r[lit_atom[i]] -= lc
            else:
                r[lit_atom[i]] += lc
                nneg += 1
        const += lc * (1 - nneg)
    return const


@nb.njit(cache=True, inline="always")
def _eff(a, r, atom_block, block_start, block_atoms):
    """Reduced cost of atom ``a`` as a free atom: ``r[a]`` less the least
    reduced cost of the other atoms of its block (if it has one)."""
    b = atom_block[a]
    if b < 0:
        return r[a]
    m = np.inf
    for j in range(block_start[b], block_start[b + 1]):
        u = block_atoms[j]
        if u != a and r[u] < m:
            m = r[u]
    if m == np.inf:
        return -np.inf          # a block of one atom: it is true
    return r[a] - m


@nb.njit(cache=True, nogil=True)
def _sweep(order_dir, clause_start, lit_atom, lit_positive, weight, is_hard, lam, mu, r,
           atom_block, block_start, block_atoms, bp, has_blocks):
    """One Gauss-Seidel sweep over the clauses (forward if ``order_dir`` > 0).
    Returns the largest change of a multiplier."""
    n = len(clause_start) - 1
    biggest = 0.0
    for k in range(n):
        c = k if order_dir > 0 else n - 1 - k
        s = clause_start[c]
        e = clause_start[c + 1]
        size = e - s
        w = weight[c]
        h = is_hard[c]
        if not h and w < 0.0:
            if size == 1:
                continue
            # mu on |w| * simplex: take the contribution out, fill capacities
            tot = -w
            cap_sum = 0.0
            for i in range(s, e):
                a = lit_atom[i]
                m = mu[i]
                if lit_positive[i]:
                    r[a] -= m
                else:
                    r[a] += m
                r0 = _eff(a, r, atom_block, block_start, block_atoms) if has_blocks else r[a]
                cap = -r0 if lit_positive[i] else r0
                if cap < 0.0:
                    cap = 0.0
                bp[i - s] = cap
                cap_sum += cap
            if cap_sum >= tot:
                scale = tot / cap_sum
                rest = 0.0
            else:
                scale = 1.0
                rest = (tot - cap_sum) / size
            for i in range(s, e):
                m = bp[i - s] * scale + rest
                d = abs(m - mu[i])
                if d > biggest:
                    biggest = d
                mu[i] = m
                a = lit_atom[i]
                if lit_positive[i]:
                    r[a] += m
                else:
                    r[a] -= m
            continue
        if size == 0 or (size == 1 and not h):
            continue               # a unit's multiplier is its weight (an empty clause's too)
        hi = np.inf if h else w
        old = lam[c]
        # remove the clause's own term
        for i in range(s, e):
            if lit_positive[i]:
                r[lit_atom[i]] += old
            else:
                r[lit_atom[i]] -= old
        if size == 1:
            a = lit_atom[s]
            r0 = _eff(a, r, atom_block, block_start, block_atoms) if has_blocks else r[a]
            if lit_positive[s]:
                new = max(0.0, r0) + _HARD_MARGIN
            else:
                new = max(0.0, -r0) + _HARD_MARGIN
        elif size == 2:
            a0 = lit_atom[s]
            a1 = lit_atom[s + 1]
            r0 = _eff(a0, r, atom_block, block_start, block_atoms) if has_blocks else r[a0]
            r1 = _eff(a1, r, atom_block, block_start, block_atoms) if has_blocks else r[a1]
            # lam = -(a_0 r_0 + a_1 r_1) / 2 with a = -1 (positive literal), +1 (negative)
            t0 = r0 if lit_positive[s] else -r0
            t1 = r1 if lit_positive[s + 1] else -r1
            new = 0.5 * (t0 + t1)
        else:
            # breakpoints: a positive literal stops helping past r0, a negative one before -r0
            # slope(lam) = (1 - n_neg) + #{neg: lam < -r0} - #{pos: lam > r0}
            nneg = 0
            for i in range(s, e):
                a = lit_atom[i]
                r0 = _eff(a, r, atom_block, block_start, block_atoms) if has_blocks else r[a]
                if lit_positive[i]:
                    bp[i - s] = r0
                else:
                    bp[i - s] = -r0
                    nneg += 1
            pts = np.sort(bp[:size])
            lo = np.inf        # left end of the first interval of slope <= 0
            hi_m = np.inf      # left end of the first interval of slope < 0
            for j in range(size + 1):
                if j == 0:
                    probe = pts[0] - 1.0
                elif j == size:
                    probe = pts[size - 1] + 1.0
                else:
                    probe = 0.5 * (pts[j - 1] + pts[j])
                sl = 1 - nneg
                for i in range(s, e):
                    v = bp[i - s]
                    if lit_positive[i]:
                        if probe > v:
                            sl -= 1
                    elif probe < v:
                        sl += 1
                left = -np.inf if j == 0 else pts[j - 1]
                if sl <= 0 and lo == np.inf:
                    lo = left
                if sl < 0:
                    hi_m = left
                    break
            if lo == -np.inf and hi_m == np.inf:
                new = old
            elif lo == -np.inf:
                new = hi_m
            elif hi_m == np.inf:
                new = lo
            else:
                new = 0.5 * (lo + hi_m)
        if new < 0.0:
            new = 0.0
        if new > hi:
            new = hi
        if not (new == new):
            new = old
        d = abs(new - old)
        if d > biggest:
            biggest = d
        lam[c] = new
        for i in range(s, e):
            if lit_positive[i]:
                r[lit_atom[i]] -= new
            else:
                r[lit_atom[i]] += new
    return biggest


@nb.njit(cache=True, nogil=True)
def _dual_value(clause_start, lit_positive, weight, is_hard, lam, mu, r, atom_block, block_start, block_atoms,
                has_atom):
    """``g`` at the current multipliers (the reduced costs ``r`` must match them)."""
    g = 0.0
    for c in range(len(clause_start) - 1):
        s = clause_start[c]
        e = clause_start[c + 1]
        if not is_hard[c] and weight[c] < 0.0:
            for i in range(s, e):
                if not lit_positive[i]:
                    g += -weight[c] if e - s == 1 else mu[i]
            continue
        nneg = 0
        for i in range(s, e):
            if not lit_positive[i]:
                nneg += 1
        g += lam[c] * (1 - nneg)
    for a in range(len(r)):
        if atom_block[a] < 0 and has_atom[a] and r[a] < 0.0:
            g += r[a]
    for b in range(len(block_start) - 1):
        m = np.inf
        for j in range(block_start[b], block_start[b + 1]):
            v = r[block_atoms[j]]
            if v < m:
                m = v
        if m < np.inf:
            g += m
    return g


@nb.njit(cache=True, nogil=True)
def _round(r, atom_block, block_start, block_atoms, world):
    for a in range(len(r)):
        if atom_block[a] < 0:
            world[a] = r[a] < 0.0
    for b in range(len(block_start) - 1):
        best = -1
        m = np.inf
        for j in range(block_start[b], block_start[b + 1]):
            u = block_atoms[j]
            world[u] = False
            if r[u] < m:
                m = r[u]
                best = u
        if best >= 0:
            world[best] = True


def lp_dual(
    n_atoms: int,
    clause_start: np.ndarray,
    lit_atom: np.ndarray,
    lit_positive: np.ndarray,
    weight: np.ndarray,
    is_hard: np.ndarray,
    block_start: np.ndarray,
    block_atoms: np.ndarray,
    *,
    max_seconds: float | None = 10.0,
    max_sweeps: int = 1000,
    tol: float = 1e-7,
    deadline: float | None = None,
    world_cost=None,
    check_every: int = 4,
) -> DualResult:
    """Coordinate ascent on the LP dual of MAP over the given clause arrays
    (see the module docstring): the cost bound, the score bound and the
    world read off the reduced costs, after at most ``max_sweeps`` sweeps or
    ``max_seconds`` (whichever comes first; ``deadline`` is an absolute
    ``time.perf_counter()`` that ends it too). ``world_cost``: a function
    giving a world's cost (``inf`` if it breaks a hard clause or a block);
    every ``check_every`` sweeps the world read off is costed, and the ascent
    stops when it reaches the bound (the world is then optimal:
    ``DualResult.converged``)."""
    if isinstance(max_sweeps, bool) or not isinstance(max_sweeps, (int, np.integer)) or max_sweeps < 0:
        raise OptionError(f"max_sweeps must be a non-negative integer, got {max_sweeps!r}")
    start = time.perf_counter()
    if max_seconds is not None:
        end = start + float(max_seconds)
        deadline = end if deadline is None else min(deadline, end)
    n_clauses = len(clause_start) - 1
    clause_start = np.asarray(clause_start)
    weight = np.asarray(weight, dtype=np.float64)
    is_hard = np.asarray(is_hard, dtype=bool)
    block_start = np.asarray(block_start, dtype=np.int64)
    block_atoms = np.asarray(block_atoms, dtype=np.int32)
    atom_block = np.full(n_atoms, -1, dtype=np.int32)
    if len(block_atoms):
        atom_block[block_atoms] = np.repeat(np.arange(len(block_start) - 1, dtype=np.int32), np.diff(block_start))
    lam = np.zeros(n_clauses, dtype=np.float64)
    soft = ~is_hard
    multi_negative = bool(np.any(soft & (weight < 0) & (np.diff(clause_start) > 1)))
    # one multiplier per literal only for negative clauses of several literals (a negative unit's is its
    # weight): on social N=1M, whose negative clauses are units, that was 14.6 bytes per clause for nothing
    mu = np.zeros(len(lit_atom) if multi_negative else 1, dtype=np.float64)
    if multi_negative:
        _even_split(clause_start, weight, is_hard, mu)
    r = np.zeros(n_atoms, dtype=np.float64)
    _init_reduced(clause_start, lit_atom, lit_positive, weight, is_hard, lam, mu, r)
    has_atom = np.zeros(n_atoms, dtype=bool)
    has_atom[lit_atom] = True
    widest = int(np.diff(clause_start).max()) if n_clauses else 0
    bp = np.zeros(max(widest, 1), dtype=np.float64)
    has_blocks = len(block_start) > 1
    args_b = (atom_block, block_start, block_atoms)
    positive_weight = float(weight[soft & (weight > 0)].sum())
    scale = 1.0 + float(np.abs(weight[soft]).sum())
    # converged when no multiplier moved by more than tol of the largest weight (not of their sum: that
    # grows with the network and stopped the ascent after two sweeps on 10.9 M clauses)
    step_scale = 1.0 + (float(np.abs(weight[soft]).max()) if soft.any() else 0.0)

    def value() -> float:
        return float(_dual_value(clause_start, lit_positive, weight, is_hard, lam, mu, r, *args_b, has_atom))

    best = value()
    history = [(0.0, best)]
    sweeps = 0
    converged = False
    while sweeps < max_sweeps:
        if deadline is not None and time.perf_counter() >= deadline:
            break
        change = _sweep(1 if sweeps % 2 == 0 else -1, clause_start, lit_atom, lit_positive, weight, is_hard,
                        lam, mu, r, *args_b, bp, has_blocks)
        sweeps += 1
        if sweeps % 2 == 0 or sweeps == max_sweeps:
            g = value()
            history.append((time.perf_counter() - start, g))
            if g > best:
                best = g
            if change <= tol * step_scale:
                converged = True
                break
        if world_cost is not None and sweeps % check_every == 0:
            _init_reduced(clause_start, lit_atom, lit_positive, weight, is_hard, lam, mu, r)
            g = value() - 1e-9 * (scale + float(np.abs(lam).sum()))
            probe = np.zeros(n_atoms, dtype=bool)
            _round(r, *args_b, probe)
            if world_cost(probe) <= g + 1e-7 * max(1.0, abs(g)):
                converged = True
                break
    # the reduced costs drift by rounding over many sweeps: recompute them from
    # the multipliers before the final value and the world
    _init_reduced(clause_start, lit_atom, lit_positive, weight, is_hard, lam, mu, r)
    final = value()
    # float64 rounding of g, a sum of terms as large as the multipliers: a margin keeps the bound valid
    margin = 1e-9 * (scale + float(np.abs(lam).sum()))
    cost_bound = max(0.0, final - margin)
    world = np.zeros(n_atoms, dtype=bool)
    _round(r, *args_b, world)
    return DualResult(cost_bound=cost_bound, score_bound=positive_weight - cost_bound, world=world, sweeps=sweeps,
                      seconds=time.perf_counter() - start, converged=converged, history=history)


@nb.njit(cache=True)
def _even_split(clause_start, weight, is_hard, mu):
    for c in range(len(clause_start) - 1):
        if is_hard[c] or weight[c] >= 0.0:
            continue
        s = clause_start[c]
        e = clause_start[c + 1]
        for i in range(s, e):
            mu[i] = -weight[c] / (e - s)


def network_dual(net, **options) -> DualResult:
    """:func:`lp_dual` over a :class:`~markovlogic.ground.network.GroundNetwork`'s own arrays."""
    return lp_dual(net.n_atoms, net.clause_start, net.lit_atom, net.lit_positive, net.weight, net.is_hard,
                   net.block_start, net.block_atoms, **options)


__all__ = ["DualResult", "lp_dual", "network_dual"]
