"""MC-SAT (Poon and Domingos 2006; Algorithm 1 of Poon's thesis), compiled,
with Metropolis-Hastings steps and Rao-Blackwellised estimates.

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
   for the uniform distribution on the slice);
3. Metropolis-Hastings steps on the model itself (``metropolis_steps``
   proposals; 0 for plain MC-SAT), accepted with ``exp(score(y) - score(x))``
   times the proposal ratio: SampleSAT walks that repair the hard clauses
   (:func:`.samplesat.samplesat` with ``use_score``) and, when the network
   has strong soft clauses of two or more literals (``|w| >= guide_weight``),
   pair moves: flip two atoms of a random strong clause together (up to half
   of the proposals, at most four per strong clause).

Why step 3: MC-SAT alone mixes slowly when strong soft clauses hold a mode in
place. To leave it, every clause that pins it must be left out of the slice
in the same step (probability ``exp(-sum of their weights)``), while a direct
move to the other mode may be likely. On small random networks plain MC-SAT
was off by up to 0.14 after 5000 samples; with step 3 every atom was within
0.03. On tuffy/cse, pairs of atoms tied by a clause of weight 48
(``advisedBy(x,y) v advisedBy(y,x)``) stayed in whichever mode they started
in: one flip alone costs e^-48, in the slice and in the walks alike; the pair
move swaps them in one step. Each of the three steps leaves the distribution
invariant, so their composition does.

Estimates (``rao_blackwell=True``): an atom's marginal is the average over
the post-burn-in samples of its conditional probability given the rest of
the sampled world (:func:`.gibbs.rao_blackwell_tally`), which has the same
expectation as the fraction of samples in which it is true (Alchemy's
estimate, ``rao_blackwell=False``) and a smaller variance (the error halved
on small networks). The chain is one for the whole network: independent
components are sampled as separate chains would sample them (see
:mod:`.marginals`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import numba as nb
import numpy as np

from ..errors import InferenceError
from ..ground.network import GroundNetwork
from .gibbs import rao_blackwell_tally
from .sampling import ChunkRunner, check_int, check_real, check_sampling
from .results import MarginalResult
from .samplesat import (
    KERNEL, N_STATS, SEL_FALSE, SEL_NONE, SEL_SAT, ST_CAPPED, ST_EXC_ACCEPTED, ST_EXCURSIONS,
    ST_MH_ACCEPTED, ST_MH_PROPOSALS, ST_MOVES, ST_ONE_STEP, ST_PROPOSALS, feasible_state, fill_inactive,
    flip, prepare, rand_below, rand_unit, random_inactive, samplesat,
)

DEFAULT_MAX_PATH = 100
DEFAULT_GUIDE_WEIGHT = 3.0
ST_PAIR_PROPOSALS, ST_PAIR_ACCEPTED = N_STATS, N_STATS + 1   # extra statistics slots of this module


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
def _pair_moves(n_moves, strong, g, s, stats):
    """Metropolis-Hastings pair moves: pick a random strong clause and two of
    its free atoms at random, flip both; keep the change with probability
    ``min(1, exp(score change))`` if no hard clause breaks (``sel`` must
    select exactly the hard clauses). The choice does not depend on the
    world, so the proposal is symmetric."""
    clause_start, lit_atom, atom_lit_start, occ_clause, occ_positive = g[0], g[1], g[3], g[4], g[5]
    weight, atom_block = g[6], g[9]
    world, count, sel, vlist, vpos, ist, fst, rs = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[8]
    for _ in range(n_moves):
        c = strong[rand_below(rs, len(strong))]
        st = clause_start[c]
        m = clause_start[c + 1] - st
        if m < 2:
            continue
        i = rand_below(rs, m)
        j = rand_below(rs, m - 1)
        if j >= i:
            j += 1
        a = lit_atom[st + i]
        b = lit_atom[st + j]
        if atom_block[a] >= 0 or atom_block[b] >= 0:
            continue
        stats[ST_PAIR_PROPOSALS] += 1
        score0 = fst[0]
        flip(a, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
        flip(b, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
        d = fst[0] - score0
        if ist[0] == 0 and (d >= 0.0 or rand_unit(rs) < np.exp(d)):
            stats[ST_PAIR_ACCEPTED] += 1
        else:
            flip(b, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
            flip(a, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)


@nb.njit(**KERNEL)
def _mcsat_run(n_samples, tally, store, rb, n_steps, n_mh, max_path, p_ws, temp, soft, strong, thresh,
               is_hard, g, s, path, prob, stats):
    """``n_samples`` MC-SAT steps (with their Metropolis steps). After each:
    if ``tally`` has one entry per atom, adds to it each atom's conditional
    probability given the rest of the world (``rb``) or its truth value; if
    ``store`` has rows, writes the world to row ``i``."""
    world, count, sel, block_true, rs = s[0], s[1], s[2], s[7], s[8]
    weight = g[6]
    n = len(world)
    do_tally = len(tally) == n
    do_store = store.shape[0] > 0
    n_pairs = min(n_mh // 2, 4 * len(strong))
    n_walks = n_mh - n_pairs
    for i in range(n_samples):
        _select(soft, weight, thresh, count, sel, rs)
        samplesat(n_steps, max_path, p_ws, temp, False, g, s, path, stats)
        if n_mh > 0:
            for k in range(len(soft)):
                sel[soft[k]] = SEL_NONE
            samplesat(n_walks, max_path, p_ws, temp, True, g, s, path, stats)
            if n_pairs > 0:
                _pair_moves(n_pairs, strong, g, s, stats)
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


class MCSATChain:
    """One MC-SAT chain over a network whose clause weights may change
    between calls (weight learning keeps one per training database).

    The clauses are normalised once, with every soft clause kept whatever its
    weight (normalisation would drop the zero-weight ones, and learning starts
    at zero): a zero weight is never selected by the slice and adds nothing
    to the score, so it samples the same distribution. :meth:`set_weights`
    writes new weights into the normalised arrays, with the slice
    probabilities ``1 - exp(-|w|)``, the strong clauses of the pair moves and
    the world's score, without re-normalising or finding a new start world.

    ``init``: the first world (made to satisfy the hard clauses and blocks by
    WalkSAT if it does not; random if None); the other options are those of
    :func:`mcsat`. :meth:`sample` draws successive worlds, continuing from
    where the last call stopped; :attr:`state` is the current world."""

    def __init__(
        self,
        net: GroundNetwork,
        *,
        seed: int = 0,
        init: np.ndarray | None = None,
        walksat_prob: float = 0.5,
        temperature: float = 0.5,
        max_steps: int | None = None,
        metropolis_steps: int | None = None,
        guide_weight: float = DEFAULT_GUIDE_WEIGHT,
        max_path: int = DEFAULT_MAX_PATH,
        hard_weight: float | None = None,
        rao_blackwell: bool = True,
    ) -> None:
        check_sampling(1, 0, seed, None, None)
        self.p_ws = check_real("walksat_prob", walksat_prob, 0.0, 1.0)
        self.temp = check_real("temperature", temperature, 0.0)
        if max_steps is not None:
            check_int("max_steps", max_steps, 1)
        if metropolis_steps is not None:
            check_int("metropolis_steps", metropolis_steps, 0)
        self.max_path = check_int("max_path", max_path, 1)
        self.guide_weight = check_real("guide_weight", guide_weight, 0.0, low_open=True)
        if hard_weight is not None:
            check_real("hard_weight", hard_weight, 0.0, low_open=True)
        self.hard_weight = hard_weight
        self.rao_blackwell = bool(rao_blackwell)
        self.n_clauses = net.n_clauses
        self.n_atoms = net.n_atoms
        # every soft clause kept: normalise with placeholder weights, then write the real ones
        placeholder = replace(net, weight=np.where(net.is_hard, 0.0, 1.0))
        self.prep = prepare(placeholder, hard_weight)
        sat = self.prep.sat
        self._orig_hard = np.flatnonzero(net.is_hard[sat.orig_clause])
        self._size2 = np.diff(sat.clause_start)[self.prep.soft] >= 2
        self._abs = np.empty(sat.n_clauses, dtype=np.float64)
        self.rng = np.random.default_rng(seed)
        self.n_steps = default_steps(self.prep.n_vars) if max_steps is None else int(max_steps)
        self.n_mh = self.n_steps if metropolis_steps is None else int(metropolis_steps)
        self.path = np.zeros(2 * self.max_path, dtype=np.int32)
        self.stats = np.zeros(N_STATS + 2, dtype=np.int64)
        self.prob = np.zeros(2 * (int(np.diff(sat.block_start).max()) if sat.n_blocks else 1), dtype=np.float64)
        self._no_tally = np.zeros(0, dtype=np.float64)
        self._no_store = np.zeros((0, sat.n_atoms), dtype=bool)
        self._write_weights(np.asarray(net.weight, dtype=np.float64))
        self._state, self.init_flips = feasible_state(self.prep, self.rng, init)
        self._state.fst[0] = self._score()

    # ---------------------------------------------------------------- weights

    def set_weights(self, weights: np.ndarray) -> None:
        """New clause weights (float64[n_clauses] of the network the chain was
        built from; the entries of hard clauses are ignored). The chain goes
        on from its current world, now sampling the new distribution."""
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (self.n_clauses,):
            raise InferenceError(f"set_weights: expected {self.n_clauses} clause weights, got shape {w.shape}")
        self._write_weights(w)
        self._state.fst[0] = self._score()

    def _write_weights(self, w: np.ndarray) -> None:
        sat, prep = self.prep.sat, self.prep
        np.take(w, sat.orig_clause, out=sat.weight)
        sat.weight[self._orig_hard] = 0.0 if self.hard_weight is None else float(self.hard_weight)
        if not np.all(np.isfinite(sat.weight)):
            raise InferenceError("a clause weight is not finite; use a hard clause instead of an infinite weight")
        np.abs(sat.weight, out=self._abs)
        np.negative(self._abs, out=self._abs)
        np.expm1(self._abs, out=prep.thresh)
        np.negative(prep.thresh, out=prep.thresh)
        soft = prep.soft
        self.strong = soft[(np.abs(sat.weight[soft]) >= self.guide_weight) & self._size2].astype(np.int32)

    def _score(self) -> float:
        """The score the kernels keep up to date by differences (soft clauses only)."""
        return float(self.prep.sat.weight @ (self._state.count > 0))

    # ---------------------------------------------------------------- state

    @property
    def state(self) -> np.ndarray:
        """A copy of the current world (bool[n_atoms]; atoms that no clause
        touches hold arbitrary values: :meth:`sample` redraws them)."""
        return self._state.world.copy()

    @state.setter
    def state(self, world: np.ndarray) -> None:
        """Move the chain to ``world`` (repaired by WalkSAT on the hard
        clauses and blocks if it violates them)."""
        self.reset(world)

    def reset(self, init: np.ndarray | None = None) -> None:
        """Restart the chain from ``init`` (or a random world)."""
        self._state, flips = feasible_state(self.prep, self.rng, init)
        self.init_flips += flips
        self._state.fst[0] = self._score()

    @property
    def variables(self) -> int:
        return self.prep.n_vars

    # ---------------------------------------------------------------- sampling

    def run(self, k: int, tally: np.ndarray | None = None, store: np.ndarray | None = None) -> None:
        """``k`` MC-SAT steps; after each, add to ``tally`` (float64[n_atoms])
        each atom's conditional probability (Rao-Blackwell) or truth value,
        and/or write the world to row ``i`` of ``store`` (bool[k, n_atoms])."""
        _mcsat_run(
            k, self._no_tally if tally is None else tally, self._no_store if store is None else store,
            self.rao_blackwell, self.n_steps, self.n_mh, self.max_path, self.p_ws, self.temp, self.prep.soft,
            self.strong, self.prep.thresh, self.prep.sat.is_hard, self.prep.arrays, self._state.arrays,
            self.path, self.prob, self.stats,
        )

    def sample(self, n: int, *, burn_in: int = 0) -> np.ndarray:
        """``n`` successive worlds (bool[n, n_atoms]) after ``burn_in`` steps.
        Atoms that no clause touches are drawn from their exact distribution
        in each world."""
        check_int("n", n, 1)
        check_int("burn_in", burn_in, 0)
        if burn_in:
            self.run(burn_in)
        worlds = np.zeros((n, self.n_atoms), dtype=bool)
        self.run(n, store=worlds)
        random_inactive(self.prep, worlds, self.rng)
        return worlds

    def marginals(self, tally: np.ndarray, n: int) -> np.ndarray:
        """Marginals from a tally of ``n`` samples (exact ones for the atoms
        that no clause touches)."""
        return fill_inactive(self.prep, tally / float(n))

    def stats_dict(self) -> dict:
        s = self.stats
        proposals = int(s[ST_PROPOSALS])
        excursions = int(s[ST_EXCURSIONS])
        mh = int(s[ST_MH_PROPOSALS])
        return {
            "samplesat_steps": self.n_steps,
            "samplesat_proposals": proposals,
            "samplesat_moves": int(s[ST_MOVES]),
            "samplesat_accept_rate": (int(s[ST_ONE_STEP]) + int(s[ST_EXC_ACCEPTED])) / proposals if proposals else 0.0,
            "samplesat_excursions": excursions,
            "samplesat_excursion_accept_rate": int(s[ST_EXC_ACCEPTED]) / excursions if excursions else 0.0,
            "samplesat_excursions_capped": int(s[ST_CAPPED]),
            "metropolis_steps": self.n_mh,
            "metropolis_proposals": mh,
            "metropolis_accept_rate": int(s[ST_MH_ACCEPTED]) / mh if mh else 0.0,
            "strong_clauses": len(self.strong),
            "pair_proposals": int(s[ST_PAIR_PROPOSALS]),
            "pair_accept_rate": int(s[ST_PAIR_ACCEPTED]) / int(s[ST_PAIR_PROPOSALS]) if s[ST_PAIR_PROPOSALS] else 0.0,
        }


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
    guide_weight: float = DEFAULT_GUIDE_WEIGHT,
    max_path: int = DEFAULT_MAX_PATH,
    rao_blackwell: bool = True,
    hard_weight: float | None = None,
    init: np.ndarray | None = None,
    progress: Callable[[int], None] | None = None,
) -> MarginalResult:
    """Marginals by MC-SAT (see the module docstring).

    ``samples`` post-burn-in MC-SAT steps are averaged after ``burn_in`` steps.
    SampleSAT settings: ``walksat_prob`` (probability of a WalkSAT move while
    some constraint is violated), ``temperature`` (simulated annealing: a move
    that violates ``d`` more constraints is kept with probability
    ``exp(-d / temperature)``; 0 never leaves the slice), ``max_steps``
    (proposals per sample; default ``max(50, variables / 2)``) and
    ``max_path`` (longest walk outside the slice). ``metropolis_steps``:
    Metropolis-Hastings proposals per sample (default: as many as
    ``max_steps``; 0 for plain MC-SAT); ``guide_weight``: soft clauses at
    least this heavy are "strong" and propose the pair moves. ``rao_blackwell``: average
    conditional probabilities (default) or truth values. ``hard_weight``:
    treat hard clauses as soft clauses of this weight (Alchemy's behaviour;
    needed when they contradict each other, as in tuffy/rc1000; default:
    they are constraints). ``init``: start world (made to satisfy the hard
    clauses by WalkSAT if it does not).
    ``max_seconds`` stops burn-in and sampling early (at least one sample is
    drawn; the result reports how many). ``progress(n)`` is called with the
    number of samples drawn so far."""
    check_sampling(samples, burn_in, seed, max_seconds, progress)
    runner = ChunkRunner(max_seconds)
    chain = MCSATChain(net, seed=seed, init=init, walksat_prob=walksat_prob, temperature=temperature,
                       max_steps=max_steps, metropolis_steps=metropolis_steps, guide_weight=guide_weight,
                       max_path=max_path, hard_weight=hard_weight, rao_blackwell=rao_blackwell)
    init_flips = chain.init_flips
    setup_seconds = runner.elapsed()
    burned = runner.run(lambda k: chain.run(k), burn_in)
    t_sample = time.perf_counter()
    tally = np.zeros(net.n_atoms, dtype=np.float64)
    drawn = runner.run(lambda k: chain.run(k, tally=tally), samples, progress, at_least_one=True)
    sample_seconds = time.perf_counter() - t_sample
    prob = chain.marginals(tally, drawn)
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
        "variables": chain.variables,
        "walksat_prob": chain.p_ws,
        "temperature": chain.temp,
        "rao_blackwell": chain.rao_blackwell,
        "hard_weight": hard_weight,
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
    guide_weight: float = DEFAULT_GUIDE_WEIGHT,
    max_path: int = DEFAULT_MAX_PATH,
    hard_weight: float | None = None,
) -> np.ndarray:
    """``n_samples`` successive MC-SAT worlds (bool[n_samples, n_atoms]) after
    ``burn_in`` steps from ``init`` (for learning: expected counts are means
    over these worlds). Atoms that no clause touches are drawn from their
    exact distribution in each world."""
    check_sampling(n_samples, burn_in, seed, None, None)
    chain = MCSATChain(net, seed=seed, init=init, walksat_prob=walksat_prob, temperature=temperature,
                       max_steps=max_steps, metropolis_steps=metropolis_steps, guide_weight=guide_weight,
                       max_path=max_path, hard_weight=hard_weight)
    return chain.sample(n_samples, burn_in=burn_in)
