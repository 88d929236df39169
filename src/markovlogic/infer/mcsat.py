"""MC-SAT (Poon and Domingos 2006; Algorithm 1 of Poon's thesis), compiled.

Start from a world satisfying the hard clauses and the exactly-one blocks
(WalkSAT on the hard clauses, :func:`.samplesat.feasible_state`). Each step:

1. the slice: every hard clause, plus each soft clause that the current world
   satisfies *as its sign wants*, with probability ``1 - exp(-|w|)``: a
   positive-weight clause that is satisfied must stay satisfied; a
   negative-weight clause whose literals are all false must keep them all
   false (Alchemy's unit clauses of the negated literals);
2. the next world: SampleSAT from the current one over the worlds that meet
   every selected constraint (:func:`.samplesat.samplesat`: WalkSAT and
   simulated-annealing moves inside a Metropolis-Hastings correction, exact
   for the uniform distribution on the slice).

The marginal of an atom is the fraction of the post-burn-in samples in which
it is true. The chain is one for the whole network (independent components
are sampled as separate chains would sample them; see
:mod:`.marginals`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numba as nb
import numpy as np

from ..ground.network import GroundNetwork
from .marginals import ChunkRunner, check_int, check_real, check_sampling
from .gibbs import rao_blackwell_tally
from .results import MarginalResult
from .samplesat import (
    KERNEL,
    N_STATS, SEL_FALSE, SEL_NONE, SEL_SAT, ST_CAPPED, ST_EXC_ACCEPTED, ST_EXCURSIONS, ST_MOVES,
    ST_MH_ACCEPTED, ST_MH_PROPOSALS, ST_ONE_STEP, ST_PROPOSALS, Prepared, SamplerState, feasible_state, fill_inactive, prepare,
    rand_unit, random_inactive, samplesat,
)

DEFAULT_MAX_PATH = 100


def default_steps(n_vars: int) -> int:
    """SampleSAT proposals per MC-SAT sample when ``max_steps`` is not given."""
    return max(50, n_vars // 2)


@nb.njit(**KERNEL)
def _select(soft, weight, thresh, count, sel, rs):
    """Step 1 of MC-SAT for the soft clauses (hard clauses stay selected)."""
    for k in range(len(soft)):
        c = soft[k]
        if weight[c] > 0.0:
            if count[c] > 0 and rand_unit(rs) < thresh[c]:
                sel[c] = SEL_SAT
            else:
                sel[c] = SEL_NONE
        else:
            if count[c] == 0 and rand_unit(rs) < thresh[c]:
                sel[c] = SEL_FALSE
            else:
                sel[c] = SEL_NONE


@nb.njit(**KERNEL)
def _mcsat_run(n_samples, tally, store, rb, n_steps, n_mh, max_path, p_ws, temp, soft, thresh, is_hard,
               g, s, path, prob, stats):
    """``n_samples`` MC-SAT steps. After each: if ``tally`` has one entry per
    atom, adds to it each atom's conditional probability given the rest of
    the world (``rb``) or its truth value; if ``store`` has rows, writes the
    world to row ``i``."""
    world, count, sel, block_true, rs = s[0], s[1], s[2], s[7], s[8]
    weight = g[6]
    n = len(world)
    do_tally = len(tally) == n
    do_store = store.shape[0] > 0
    for i in range(n_samples):
        _select(soft, weight, thresh, count, sel, rs)
        samplesat(n_steps, max_path, p_ws, temp, False, g, s, path, stats)
        if n_mh > 0:
            # Metropolis-Hastings on exp(score) over the worlds meeting the hard clauses
            for k in range(len(soft)):
                sel[soft[k]] = SEL_NONE
            samplesat(n_mh, max_path, p_ws, temp, True, g, s, path, stats)
        if do_tally:
            if rb:
                rao_blackwell_tally(g, world, count, is_hard, block_true, prob, tally)
            else:
                for a in range(n):
                    if world[a]:
                        tally[a] += 1.0
        if do_store:
            for a in range(n):
                store[i, a] = world[a]


class _Chain:
    """One MC-SAT chain: the prepared network, its state and the settings."""

    def __init__(self, prep: Prepared, state: SamplerState, n_steps: int, n_mh: int, max_path: int,
                 walksat_prob: float, temperature: float) -> None:
        self.prep = prep
        self.state = state
        self.n_steps = n_steps
        self.n_mh = n_mh
        self.max_path = max_path
        self.p_ws = walksat_prob
        self.temp = temperature
        self.path = np.zeros(2 * max_path, dtype=np.int32)
        self.stats = np.zeros(N_STATS, dtype=np.int64)
        n = prep.sat.n_atoms
        self._no_tally = np.zeros(0, dtype=np.float64)
        self.rao_blackwell = True
        sat = prep.sat
        self.prob = np.zeros(2 * (int(np.diff(sat.block_start).max()) if sat.n_blocks else 1), dtype=np.float64)
        self._no_store = np.zeros((0, n), dtype=bool)

    def run(self, k: int, tally: np.ndarray | None = None, store: np.ndarray | None = None) -> None:
        _mcsat_run(
            k, self._no_tally if tally is None else tally, self._no_store if store is None else store,
            self.rao_blackwell, self.n_steps, self.n_mh, self.max_path, self.p_ws, self.temp, self.prep.soft,
            self.prep.thresh, self.prep.sat.is_hard, self.prep.arrays, self.state.arrays, self.path, self.prob,
            self.stats,
        )

    def stats_dict(self) -> dict:
        s = self.stats
        proposals = int(s[ST_PROPOSALS])
        excursions = int(s[ST_EXCURSIONS])
        return {
            "samplesat_steps": self.n_steps,
            "samplesat_proposals": proposals,
            "samplesat_moves": int(s[ST_MOVES]),
            "samplesat_accept_rate": (int(s[ST_ONE_STEP]) + int(s[ST_EXC_ACCEPTED])) / proposals if proposals else 0.0,
            "samplesat_excursions": excursions,
            "samplesat_excursion_accept_rate": int(s[ST_EXC_ACCEPTED]) / excursions if excursions else 0.0,
            "samplesat_excursions_capped": int(s[ST_CAPPED]),
            "metropolis_steps": self.n_mh,
            "metropolis_proposals": int(s[ST_MH_PROPOSALS]),
            "metropolis_accept_rate": int(s[ST_MH_ACCEPTED]) / int(s[ST_MH_PROPOSALS]) if s[ST_MH_PROPOSALS] else 0.0,
        }


def _setup(net: GroundNetwork, seed: int, init: np.ndarray | None, walksat_prob, temperature, max_steps,
           metropolis_steps, max_path) -> tuple[_Chain, np.random.Generator, int]:
    p_ws = check_real("walksat_prob", walksat_prob, 0.0, 1.0)
    temp = check_real("temperature", temperature, 0.0)
    if max_steps is not None:
        check_int("max_steps", max_steps, 1)
    if metropolis_steps is not None:
        check_int("metropolis_steps", metropolis_steps, 0)
    max_path = check_int("max_path", max_path, 1)
    prep = prepare(net)
    rng = np.random.default_rng(seed)
    state, init_flips = feasible_state(prep, rng, init)
    n_steps = default_steps(prep.n_vars) if max_steps is None else int(max_steps)
    n_mh = n_steps if metropolis_steps is None else int(metropolis_steps)
    return _Chain(prep, state, n_steps, n_mh, max_path, p_ws, temp), rng, init_flips


def mcsat(
    net: GroundNetwork,
    *,
    samples: int = 1000,
    burn_in: int = 100,
    seed: int = 0,
    max_seconds: float | None = None,
    walksat_prob: float = 0.5,
    temperature: float = 0.5,
    max_steps: int | None = None,
    metropolis_steps: int | None = None,
    max_path: int = DEFAULT_MAX_PATH,
    rao_blackwell: bool = True,
    init: np.ndarray | None = None,
    progress: Callable[[int], None] | None = None,
) -> MarginalResult:
    """Marginals by MC-SAT.

    ``samples`` post-burn-in MC-SAT steps are averaged after ``burn_in`` steps.
    SampleSAT settings: ``walksat_prob`` (probability of a WalkSAT move while
    some constraint is violated), ``temperature`` (simulated annealing: a move
    that violates ``d`` more constraints is kept with probability
    ``exp(-d / temperature)``; 0 never leaves the slice), ``max_steps``
    (proposals per sample; default ``max(50, variables / 2)``) and
    ``max_path`` (longest walk outside the slice). ``init``: start world (made
    to satisfy the hard clauses by WalkSAT if it does not). ``max_seconds``
    stops burn-in and sampling early (at least one sample is drawn; the
    result reports how many). ``progress(n)`` is called with the number of
    samples drawn so far."""
    check_sampling(samples, burn_in, seed, max_seconds, progress)
    runner = ChunkRunner(max_seconds)
    chain, _, init_flips = _setup(net, seed, init, walksat_prob, temperature, max_steps, metropolis_steps, max_path)
    n = net.n_atoms
    setup_seconds = runner.elapsed()
    burned = runner.run(lambda k: chain.run(k), burn_in)
    t_sample = time.perf_counter()
    chain.rao_blackwell = bool(rao_blackwell)
    tally = np.zeros(n, dtype=np.float64)
    drawn = runner.run(lambda k: chain.run(k, tally=tally), samples, progress, at_least_one=True)
    sample_seconds = time.perf_counter() - t_sample
    prob = fill_inactive(chain.prep, tally / float(drawn))
    seconds = runner.elapsed()
    stats = {
        "samples": drawn,
        "burn_in": burned,
        "seconds": seconds,
        "setup_seconds": setup_seconds,
        "sampling_seconds": sample_seconds,
        "samples_per_second": drawn / sample_seconds if sample_seconds > 0 else float("inf"),
        "stopped_early": runner.stopped_early,
        "init_flips": init_flips,
        "variables": chain.prep.n_vars,
        "walksat_prob": chain.p_ws,
        "temperature": chain.temp,
        "rao_blackwell": chain.rao_blackwell,
    }
    stats.update(chain.stats_dict())
    return MarginalResult(probabilities=prob, method="mcsat", samples=drawn, seconds=seconds, stats=stats)


def sample_worlds(
    net: GroundNetwork,
    n_samples: int,
    *,
    init: np.ndarray | None = None,
    seed: int = 0,
    burn_in: int = 100,
    walksat_prob: float = 0.5,
    temperature: float = 0.5,
    max_steps: int | None = None,
    metropolis_steps: int | None = None,
    max_path: int = DEFAULT_MAX_PATH,
) -> np.ndarray:
    """``n_samples`` successive MC-SAT worlds (bool[n_samples, n_atoms]) after
    ``burn_in`` steps from ``init`` (for learning: expected counts are means
    over these worlds). Atoms that no clause touches are drawn from their
    exact distribution in each world."""
    check_sampling(n_samples, burn_in, seed, None, None)
    chain, rng, _ = _setup(net, seed, init, walksat_prob, temperature, max_steps, metropolis_steps, max_path)
    if burn_in:
        chain.run(burn_in)
    worlds = np.zeros((n_samples, net.n_atoms), dtype=bool)
    chain.run(n_samples, store=worlds)
    random_inactive(chain.prep, worlds, rng)
    return worlds
