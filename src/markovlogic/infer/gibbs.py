"""Gibbs sampling, compiled; and the atoms' conditional probabilities, which
MC-SAT also uses for its Rao-Blackwellised estimates.

Each sweep resamples every variable, in a fixed order, from its conditional
given the rest of the world (its Markov blanket), computed from the clause
arrays and the per-clause true-literal counts in O(occurrences of the atom):

- a free atom: ``P(a | rest) = sigmoid(score(a true) - score(a false))``, where
  only the clauses whose other literals are all false contribute;
- an exactly-one block: one multi-valued variable; ``P(true atom = j | rest)``
  is proportional to ``exp(score)`` of the world with ``j`` true (computed
  from the world with the block's true atom turned off).

Hard clauses are infinite weights: a value that violates more hard clauses
than the other values gets probability 0, so chains that start from a world
satisfying the hard clauses (WalkSAT, as in MC-SAT) stay among such worlds.
That is the exact Gibbs sampler of the model, but determinism cuts the
feasible worlds into regions that single-variable moves cannot connect (two
atoms tied by a hard equivalence never change): with hard clauses the chains
may be stuck, and :func:`gibbs` warns about it. Use MC-SAT there.

Estimates are Rao-Blackwellised: each atom's marginal is the average, over
the post-burn-in sweeps of all chains, of its conditional probability at the
moment it is resampled (unbiased at stationarity, and of lower variance than
the fraction of sweeps in which the atom is true). Convergence is checked
with the Gelman-Rubin statistic (R-hat) of each atom's indicator between
chains, reported as ``rhat_max`` and ``rhat_mean`` (values near 1: the chains
agree; above ~1.1: sample more). Atoms that no clause touches get their exact
marginal.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable

import numba as nb
import numpy as np

from ..ground.network import GroundNetwork
from .sampling import ChunkRunner, check_int, check_real, check_sampling
from .results import MarginalResult
from .samplesat import KERNEL, fill_inactive, feasible_state, new_rng_state, prepare, rand_unit, start_world
from .kernels_state import init_counts

HARD_WARNING = (
    "Gibbs sampling on a network with hard clauses: single-atom moves cannot cross between the "
    "regions that the hard clauses separate, so the chains may be stuck and the marginals wrong. "
    "Use MC-SAT (method='mcsat') for models with determinism."
)


# ---------------------------------------------------------------- conditionals
#
# Entry points take g = Prepared.arrays = (clause_start, lit_atom, lit_positive,
# atom_lit_start, occ_clause, occ_positive, weight, block_start, block_atoms,
# atom_block, var) and unpack it once; helpers take plain arrays (see
# samplesat.py on reference counting).

@nb.njit(**KERNEL)
def flip_count(a, world, count, atom_lit_start, occ_clause, occ_positive, is_hard):
    """Flip atom ``a`` updating only ``count``; returns the change in the
    number of violated hard clauses."""
    new = not world[a]
    world[a] = new
    dh = 0
    for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
        c = occ_clause[k]
        if occ_positive[k] == new:
            count[c] += 1
            if count[c] == 1 and is_hard[c]:
                dh -= 1
        else:
            count[c] -= 1
            if count[c] == 0 and is_hard[c]:
                dh += 1
    return dh


@nb.njit(**KERNEL)
def free_conditional(a, world, count, is_hard, atom_lit_start, occ_clause, occ_positive, weight):
    """P(atom ``a`` true | the rest of ``world``), hard clauses as infinite weights."""
    cur = world[a]
    d = 0.0   # score(a true) - score(a false)
    h = 0     # hard clauses violated with a true minus with a false
    for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
        c = occ_clause[k]
        pos = occ_positive[k]
        others = count[c] - (1 if pos == cur else 0)
        if others == 0:   # the clause holds iff this literal is true
            if is_hard[c]:
                h += -1 if pos else 1
            elif pos:
                d += weight[c]
            else:
                d -= weight[c]
    if h > 0:
        return 0.0
    if h < 0:
        return 1.0
    if d >= 0.0:
        return 1.0 / (1.0 + math.exp(-d))
    e = math.exp(d)
    return e / (1.0 + e)


@nb.njit(**KERNEL)
def block_conditional(b, t, world, count, is_hard, prob, atom_lit_start, occ_clause, occ_positive, weight,
                      block_start, block_atoms):
    """P(the true atom of block ``b`` is member ``i`` | rest) into
    ``prob[:size]``; ``t`` is its current true atom. ``world``/``count`` are
    left as they were."""
    s0 = block_start[b]
    m = block_start[b + 1] - s0
    base_h = flip_count(t, world, count, atom_lit_start, occ_clause, occ_positive, is_hard)
    best_h = 1 << 62
    for i in range(m):
        j = block_atoms[s0 + i]
        d = 0.0
        h = base_h
        for k in range(atom_lit_start[j], atom_lit_start[j + 1]):
            c = occ_clause[k]
            if count[c] == (0 if occ_positive[k] else 1):   # j's literal decides the clause
                # j false now: a positive literal becomes true (clause gained),
                # a negative one becomes false (clause lost)
                if is_hard[c]:
                    h += -1 if occ_positive[k] else 1
                elif occ_positive[k]:
                    d += weight[c]
                else:
                    d -= weight[c]
        prob[i] = d
        if h < best_h:
            best_h = h
        prob[m + i] = h
    flip_count(t, world, count, atom_lit_start, occ_clause, occ_positive, is_hard)
    top = -np.inf
    for i in range(m):
        if prob[m + i] == best_h and prob[i] > top:
            top = prob[i]
    z = 0.0
    for i in range(m):
        if prob[m + i] == best_h:
            prob[i] = math.exp(prob[i] - top)
            z += prob[i]
        else:
            prob[i] = 0.0
    for i in range(m):
        prob[i] /= z


@nb.njit(**KERNEL)
def rao_blackwell_tally(g, world, count, is_hard, block_true, prob, tally):
    """Add each sampled atom's conditional probability given the rest of
    ``world`` to ``tally`` (``prob``: scratch, 2 * largest block)."""
    atom_lit_start, occ_clause, occ_positive, weight = g[3], g[4], g[5], g[6]
    block_start, block_atoms, var = g[7], g[8], g[10]
    for v in var:
        if v >= 0:
            tally[v] += free_conditional(v, world, count, is_hard, atom_lit_start, occ_clause, occ_positive, weight)
        else:
            b = -v - 1
            block_conditional(b, block_true[b], world, count, is_hard, prob, atom_lit_start, occ_clause,
                              occ_positive, weight, block_start, block_atoms)
            s0 = block_start[b]
            for i in range(block_start[b + 1] - s0):
                tally[block_atoms[s0 + i]] += prob[i]


# ---------------------------------------------------------------- Gibbs kernel

@nb.njit(**KERNEL)
def _gibbs_run(n_sweeps, collect, g, is_hard, worlds, counts, block_trues, rss, prob, tally, ind_sum):
    """``n_sweeps`` sweeps of every chain (row ``ch`` of ``worlds``,
    ``counts``, ``block_trues``, ``rss``). With ``collect``: adds the
    conditionals to ``tally[ch]`` and the indicators to ``ind_sum[ch]`` (one
    row per chain: the sums' order does not depend on how the sweeps are
    chunked, so a seed gives the same marginals bit for bit)."""
    atom_lit_start, occ_clause, occ_positive, weight = g[3], g[4], g[5], g[6]
    block_start, block_atoms, var = g[7], g[8], g[10]
    n_chains, n = worlds.shape
    for ch in range(n_chains):
        world = worlds[ch]
        count = counts[ch]
        block_true = block_trues[ch]
        rs = rss[ch]
        for _ in range(n_sweeps):
            for v in var:
                if v >= 0:
                    p = free_conditional(v, world, count, is_hard, atom_lit_start, occ_clause, occ_positive, weight)
                    if collect:
                        tally[ch, v] += p
                    if (rand_unit(rs) < p) != world[v]:
                        flip_count(v, world, count, atom_lit_start, occ_clause, occ_positive, is_hard)
                else:
                    b = -v - 1
                    t = block_true[b]
                    block_conditional(b, t, world, count, is_hard, prob, atom_lit_start, occ_clause, occ_positive,
                                      weight, block_start, block_atoms)
                    s0 = block_start[b]
                    m = block_start[b + 1] - s0
                    u = rand_unit(rs)
                    pick = -1
                    last = 0
                    acc = 0.0
                    for i in range(m):
                        if collect:
                            tally[ch, block_atoms[s0 + i]] += prob[i]
                        if prob[i] > 0.0:
                            last = i
                            acc += prob[i]
                            if pick < 0 and u < acc:
                                pick = i
                    if pick < 0:   # rounding: u beyond the cumulative sum
                        pick = last
                    j = block_atoms[s0 + pick]
                    if j != t:
                        flip_count(t, world, count, atom_lit_start, occ_clause, occ_positive, is_hard)
                        flip_count(j, world, count, atom_lit_start, occ_clause, occ_positive, is_hard)
                        block_true[b] = j
            if collect:
                for a in range(n):
                    if world[a]:
                        ind_sum[ch, a] += 1


def gelman_rubin(ind_sum: np.ndarray, n: int) -> np.ndarray:
    """R-hat of each atom's indicator from per-chain counts of true samples
    (``ind_sum[chain, atom]``, ``n`` samples per chain). 1 where every chain
    is constant at the same value, inf where chains are constant at
    different values; nan with fewer than 2 chains or 2 samples."""
    m = ind_sum.shape[0]
    if m < 2 or n < 2:
        return np.full(ind_sum.shape[1], np.nan)
    p = ind_sum / n
    w = (p * (1.0 - p) * n / (n - 1)).mean(axis=0)          # within-chain variance
    b = n * p.var(axis=0, ddof=1)                            # between-chain variance
    var_plus = (n - 1) / n * w + b / n
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.sqrt(var_plus / w)
    r[(w == 0) & (b == 0)] = 1.0
    r[(w == 0) & (b > 0)] = np.inf
    return r


def gibbs(
    net: GroundNetwork,
    *,
    samples: int = 1000,
    burn_in: int = 100,
    chains: int = 4,
    seed: int = 0,
    max_seconds: float | None = None,
    init: np.ndarray | None = None,
    hard_weight: float | None = None,
    progress: Callable[[int], None] | None = None,
) -> MarginalResult:
    """Marginals by Gibbs sampling: ``chains`` chains, each ``burn_in`` then
    ``samples`` sweeps (the result counts ``chains * samples`` samples).
    ``init``: start world of every chain (the others start at random; with
    hard clauses WalkSAT first makes each start satisfy them). Warns (and says
    so in ``stats["warning"]``) when the network has hard clauses, unless
    ``hard_weight`` makes them soft clauses of that weight.
    ``progress(n)`` is called with the sweeps done per chain;
    ``max_seconds`` stops early (at least one sweep is drawn)."""
    check_sampling(samples, burn_in, seed, max_seconds, progress)
    chains = check_int("chains", chains, 1)
    if hard_weight is not None:
        check_real("hard_weight", hard_weight, 0.0, low_open=True)
    runner = ChunkRunner(max_seconds)
    prep = prepare(net, hard_weight)
    sat = prep.sat
    rng = np.random.default_rng(seed)
    n, nc = sat.n_atoms, sat.n_clauses
    stats: dict = {}
    if prep.n_hard:
        warnings.warn(HARD_WARNING, stacklevel=2)
        stats["warning"] = HARD_WARNING
    worlds = np.zeros((chains, n), dtype=bool)
    counts = np.zeros((chains, nc), dtype=np.int32)
    block_trues = np.zeros((chains, sat.n_blocks), dtype=np.int32)
    rss = np.zeros((chains, 1), dtype=np.uint64)
    txor = np.zeros(nc, dtype=np.int32)
    init_flips = 0
    for ch in range(chains):
        start = init if ch == 0 else None
        if prep.n_hard:
            state, flips = feasible_state(prep, rng, start)
            world, block_true = state.world, state.block_true
            init_flips += flips
        else:
            world, block_true = start_world(prep, rng, start)
        worlds[ch] = world
        block_trues[ch] = block_true
        init_counts(worlds[ch], sat.clause_start, sat.lit_atom, sat.lit_positive, counts[ch], txor)
        rss[ch] = new_rng_state(rng)
    max_block = int(np.diff(sat.block_start).max()) if sat.n_blocks else 1
    prob = np.zeros(2 * max_block, dtype=np.float64)
    tally = np.zeros((chains, n), dtype=np.float64)
    ind_sum = np.zeros((chains, n), dtype=np.int64)
    g = prep.arrays
    is_hard = sat.is_hard

    def step(k: int, collect: bool) -> None:
        _gibbs_run(k, collect, g, is_hard, worlds, counts, block_trues, rss, prob, tally, ind_sum)

    setup_seconds = runner.elapsed()
    burned = runner.run(lambda k: step(k, False), burn_in)
    t_sample = time.perf_counter()
    drawn = runner.run(lambda k: step(k, True), samples, progress, at_least_one=True)
    sample_seconds = time.perf_counter() - t_sample
    prob_out = fill_inactive(prep, tally.sum(axis=0) / float(drawn * chains))
    rhat = gelman_rubin(ind_sum[:, prep.active], drawn)
    finite = rhat[np.isfinite(rhat)] if len(rhat) else rhat
    seconds = runner.elapsed()
    total = drawn * chains
    stats.update({
        "samples": total,
        "sweeps_per_chain": drawn,
        "chains": chains,
        "burn_in": burned,
        "seconds": seconds,
        "setup_seconds": setup_seconds,
        "sampling_seconds": sample_seconds,
        "samples_per_second": total / sample_seconds if sample_seconds > 0 else float("inf"),
        "stopped_early": runner.stopped_early,
        "init_flips": init_flips,
        "variables": prep.n_vars,
        "rhat_max": float(np.max(rhat)) if len(rhat) and not np.all(np.isnan(rhat)) else None,
        "rhat_mean": float(np.mean(finite)) if len(finite) else None,
    })
    return MarginalResult(probabilities=prob_out, method="gibbs", samples=total, seconds=seconds, stats=stats)
