"""Lazy MC-SAT (after Poon, Domingos & Sumner, *A general method for reducing
the complexity of relational inference and its application to MCMC*, AAAI
2008; Poon's thesis, section 2.4): MC-SAT over the active atoms, every other
atom held at its default value (false).

What it computes, exactly
-------------------------
Let ``A`` be the active atoms and ``B`` the others. The held clauses
(``ground/activation.py``: ``M(A)`` and unit clauses) contain every ground
clause whose state depends on the atoms of ``A`` when the atoms of ``B`` are
false. Setting the atoms of ``B`` to false in them (a positive literal on
``B`` is removed, a clause with a negative literal on ``B`` is true and
dropped) gives the network of the conditional distribution
``P(x_A | x_B = false)``: every clause left out is constant given
``x_B = false``. The eager MC-SAT chain (:class:`..mcsat.MCSATChain`, its
kernels unchanged) runs on that network, so **for a fixed ``A`` the samples
are exact MC-SAT samples of ``P(x_A | x_B = false)``** and the
Rao-Blackwellised estimate of an active atom is its conditional probability
given the rest of the sampled world.

Why not exactly the eager chain
-------------------------------
An exact lazy version of *this* MC-SAT cannot keep ``B`` small: its
SampleSAT proposes moves of a variable drawn uniformly from all of them
(and the uniform distribution on the slice leaves any atom whose clauses
were not selected free to become true), so nearly every atom is touched
within one sample. Poon et al.'s lazy MC-SAT keeps an atom at its default
until SampleSAT flips it; the approximation here is the same in kind (atoms
that nothing pushes away from false are held false) and is made explicit
and checked:

Which atoms are active
----------------------
``A`` starts as the atoms of the clauses that are not as wanted in the
default world (LazySAT's start) and of exactly-one blocks, and grows in
rounds. After each stretch of sampling the current world ``x`` is checked
(``LazyOptions.checks`` times per round):

* **single atoms**: for every atom ``b`` of ``B`` that the database knows in
  some clause, its probability of being true given ``x`` and everything else
  at its value, ``P(b | x)``, from the change of score its flip would bring
  over *every* ground clause of the full network whose state it changes
  (:meth:`~markovlogic.ground.activation.Activation.flip_gains`, SQL over all
  groundings, not only the held ones). ``b`` is activated when ``P(b | x)``
  exceeds ``LazyOptions.threshold`` (an atom that no clause pins has 1/2);
* **groups through hard clauses**: an atom ``b`` of ``B`` whose flip breaks
  hard clauses has ``P(b | x) = 0``, but if each of them has a literal on
  another unknown atom (false in ``x``, as all the clause's literals: a
  positive one on a held or active atom, a negative one on a true, hence
  active, atom), flipping ``b`` together with those atoms keeps them: ``b``
  is activated when its own soft part
  (``sigmoid`` of the score change over its soft clauses, 1 if it
  satisfies a hard clause) exceeds the threshold -- an upper bound on its
  probability in such a world, the others' soft parts left out. Without
  it, a set of atoms that hard clauses make true together or not at all
  (the equivalence ``P(x) <=> P(y).``: two worlds, every marginal 1/2) is
  never entered from the all-false start, since no single flip leaves it;
  the hard frontier below then activates the partners;
* **pairs through a clause**: holding ``b`` false also changes what the
  active atoms can do: a clause ``!a v b`` that only ``b`` could satisfy
  after ``a`` becomes true. For every active atom ``a``, its conditional
  probability with such clauses counted as satisfiable is compared with the
  one the chain uses; when they differ by more than the threshold, the
  ``B`` atoms of those clauses are activated. Hard clauses with an atom of
  ``B`` that could satisfy them are activated at once (the chain could never
  visit the worlds that need them, so no check would see it).

A round that activates atoms restarts the chain's burn-in and its tallies
on the grown network (from the same world); the result is the last round's,
in which every check passed. So, in the final network, every atom held
false had ``P(b | x) <= threshold`` in every checked world, and no active
atom's conditional moved by more than the threshold because of a held atom.
The marginal reported for a held query atom is the mean of ``P(b | x)``
over the final round's checks.

Where it approximates: (1) the single-site, group and pair checks bound the
effect of a held atom on its own, with the partners a hard clause needs,
and on one neighbour, not of several held atoms together through soft
clauses (a configuration with two held atoms true, each unlikely alone but
likely together through a soft clause among held atoms only, is never
sampled);
(2) checks look at a few worlds per round, not every sample (a checked
world is the chain's, with its free atoms -- in no clause of the clamped
network, which the chain never moves -- drawn at random: a held atom that
only such an atom's value lets become true was otherwise never seen);
(3) an atom that appears in no clause that the checks' SQL returns for
the checked worlds is unknown to the algorithm and stays false, whatever
its probability (atoms of query predicates are always known). With
``threshold=0`` only (1)-(3) remain; MC-SAT's own error is the eager
chain's. The tests compare against exact marginals on small networks.

Memory: a check needs, for every held atom, the ground clauses its flip
would change -- on a friends network of N people with ``Friends`` unknown,
every unknown pair times the friends of one of them (8 million rows at
N = 2,000). Where every soft template has one weight (no ``+``
variables), DuckDB sums them per atom and returns only the atoms that can
pass a check, those of query predicates and those already registered
(:meth:`~markovlogic.ground.activation.Activation.held_gains`); otherwise
the rows come back one per clause
(:meth:`~markovlogic.ground.activation.Activation.flip_gains`). Either way
what a check reads is capped by what the memory budget leaves
(``FLIP_ROW_BYTES`` a row): past it the run stops with a
:class:`ResourceError` that says so, instead of reading them all.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from ...errors import InferenceError
from ...ground.network import GroundNetwork, WeightParam
from ..marginals import check_sampling
from ..mcsat import DEFAULT_GUIDE_WEIGHT, DEFAULT_MAX_PATH, MCSATChain
from ..results import MarginalResult
from .network import WORK_FACTOR, start_held
from .options import LazyOptions


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=np.float64)))


class _LazyChain:
    """Held clauses, the active atoms in chain order, the chain on the
    clamped network and the checks."""

    def __init__(self, grounder, options: LazyOptions, chain_options: dict) -> None:
        self.g = grounder
        self.opt = options
        self.chain_options = chain_options
        self.act, self.net, self.blocks = start_held(grounder)
        self.order = np.zeros(0, dtype=np.int64)      # active registry atoms in chain order
        self._sync_order()
        # LazySAT's start: the atoms of the clauses not as wanted in the default
        # world, then the checks in the all-false world
        self.activate(self._default_bad_atoms())
        self.activate(self.check(np.zeros(len(self.order), dtype=bool))[0])
        self.chain: MCSATChain | None = None
        self.clamped: GroundNetwork | None = None
        self.rebuilds = 0

    # ------------------------------------------------------------ bookkeeping
    def _sync_order(self) -> None:
        self.act._grow()
        active = np.flatnonzero(self.act.active)
        new = np.setdiff1d(active, self.order, assume_unique=True)
        if len(new):
            self.order = np.concatenate([self.order, new])

    def activate(self, ids: np.ndarray) -> int:
        """Activate registry atoms (and, to a fixed point, the atoms of ``B``
        that could satisfy a held hard clause); returns how many were new."""
        self.act._grow()
        ids = np.unique(np.asarray(ids, dtype=np.int64))
        ids = ids[~self.act.active[ids]] if len(ids) else ids
        total = 0
        while len(ids):
            total += len(ids)
            self.net.add(self.act.activate(ids))
            self.net.add_atoms(ids)
            ids = self._hard_frontier()
        self._sync_order()
        return total

    def _hard_frontier(self) -> np.ndarray:
        """Atoms of ``B`` that are positive literals of a held hard clause that
        has no negative literal on ``B`` (its only ways out go through ``B``)."""
        gc = self.net.clauses()
        if gc.n_clauses == 0 or not gc.is_hard.any():
            return np.zeros(0, np.int64)
        self.act._grow()
        inactive = ~self.act.active[gc.lit_atom]
        owner = np.repeat(np.arange(gc.n_clauses), np.diff(gc.clause_start))
        blocked = np.zeros(gc.n_clauses, dtype=bool)
        np.logical_or.at(blocked, owner, inactive & ~gc.lit_positive)
        pick = gc.is_hard[owner] & ~blocked[owner] & inactive & gc.lit_positive
        return np.unique(gc.lit_atom[pick]).astype(np.int64)

    def _default_bad_atoms(self) -> np.ndarray:
        """Atoms of held clauses that are not as wanted when every atom is false."""
        gc = self.net.clauses()
        if gc.n_clauses == 0:
            return np.zeros(0, np.int64)
        w = self.net.weights(gc)
        owner = np.repeat(np.arange(gc.n_clauses), np.diff(gc.clause_start))
        has_neg = np.zeros(gc.n_clauses, dtype=bool)
        np.logical_or.at(has_neg, owner, ~gc.lit_positive)
        bad = np.where(gc.is_hard | (w > 0), ~has_neg, has_neg & (w < 0))
        return np.unique(gc.lit_atom[bad[owner]]).astype(np.int64)

    # ------------------------------------------------------------ the clamped network
    def clamp(self) -> GroundNetwork:
        """The held clauses with every atom of ``B`` false, over the active atoms
        in chain order (``self.order``)."""
        gc = self.net.clauses()
        n_reg = self.g.registry.n_atoms
        pos = np.full(n_reg, -1, dtype=np.int64)
        pos[self.order] = np.arange(len(self.order))
        w = self.net.weights(gc)
        owner = np.repeat(np.arange(gc.n_clauses), np.diff(gc.clause_start))
        lit_pos = pos[gc.lit_atom]
        inside = lit_pos >= 0
        true_outside = np.zeros(gc.n_clauses, dtype=bool)
        np.logical_or.at(true_outside, owner, ~inside & ~gc.lit_positive)
        keep_lit = inside & ~true_outside[owner]
        sizes = np.bincount(owner[keep_lit], minlength=gc.n_clauses)
        live = ~true_outside & (sizes > 0) & (gc.is_hard | (w != 0))
        empty_hard = gc.is_hard & ~true_outside & (sizes == 0)
        if empty_hard.any():
            raise InferenceError("internal: a held hard clause is false once the inactive atoms are false")
        keep_lit &= live[owner]
        start = np.zeros(int(live.sum()) + 1, dtype=np.int64)
        np.cumsum(sizes[live], out=start[1:])
        soft = ~gc.is_hard[live]
        param_start = np.zeros(len(soft) + 1, dtype=np.int64)
        np.cumsum(soft, out=param_start[1:])
        weights = w[live][soft]
        bs, ba = self.blocks
        return GroundNetwork.from_arrays(
            n_atoms=len(self.order), clause_start=start, lit_atom=lit_pos[keep_lit].astype(np.int32),
            lit_positive=gc.lit_positive[keep_lit], is_hard=gc.is_hard[live], param_start=param_start,
            param_index=np.arange(len(weights), dtype=np.int32), param_coef=np.ones(len(weights)),
            params=weights, param_info=tuple(WeightParam(f"c{k}", -1) for k in range(len(weights))),
            block_start=bs, block_atoms=pos[ba].astype(np.int32) if len(ba) else ba,
        )

    def build(self, world: np.ndarray | None, seed: int) -> MCSATChain:
        """A chain on the clamped network from ``world`` (chain order; new
        atoms false)."""
        self.clamped = self.clamp()
        init = None
        if world is not None:
            init = np.zeros(len(self.order), dtype=bool)
            init[: len(world)] = world[: len(self.order)]
        self.chain = MCSATChain(self.clamped, seed=seed, init=init, **self.chain_options)
        self.rebuilds += 1
        return self.chain

    # ------------------------------------------------------------ checks
    def sampled_world(self, state: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The chain's world with its free atoms (in no clause of the clamped
        network) drawn uniformly: the chain never moves them (their marginal
        is 1/2 without sampling), so its state holds their start value, and a
        check would see only that one."""
        world = np.array(state, dtype=bool)
        if self.clamped is not None and len(world):
            free = np.flatnonzero(np.diff(self.clamped.atom_clause_start)[: len(world)] == 0)
            world[free] = rng.random(len(free)) < 0.5
        return world

    def check(self, world: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The checks of the module docstring in chain world ``world``:
        ``(atoms to activate, held query atoms, their P(b | x))``."""
        threshold = self.opt.threshold
        true_reg = self.order[np.flatnonzero(world)]
        g = self.g
        room = g.memory_limit - g.bytes_used - WORK_FACTOR * self.net.nbytes()
        if threshold > 0 and self.act.summable:
            # summed per atom in SQL, only the atoms that can pass (and the registered ones)
            self.act._grow()
            registered = np.setdiff1d(np.flatnonzero(~self.act.active), self.g.query_atoms)
            above = float(np.log(threshold / (1.0 - threshold)))
            atoms, soft, fixed, broken, rescuable = self.act.held_gains(true_reg, above, registered, max_bytes=room)
        else:
            atoms, soft, fixed, broken, rescuable = self.act.flip_gains(true_reg, max_bytes=room)
        self.act._grow()
        n_reg = self.g.registry.n_atoms
        p = np.full(n_reg, 0.5)
        p_soft = np.where(fixed > 0, 1.0, _sigmoid(soft))
        p[atoms] = np.where(broken > 0, 0.0, p_soft)
        # groups: every hard clause the flip breaks has another unknown atom whose flip
        # satisfies it again; the group's probability is bounded by the flip's own
        # soft part (the others' soft parts left out)
        group = np.zeros(n_reg, dtype=bool)
        group[atoms] = (broken > 0) & (rescuable >= broken) & (p_soft > threshold)
        outside = ~self.act.active
        single = np.flatnonzero(outside & ((p > threshold) | group))
        held_query = np.intersect1d(np.flatnonzero(outside), self.g.query_atoms)
        pairs = self._pair_check(world, threshold)
        return np.union1d(single, pairs).astype(np.int64), held_query, p[held_query]

    def _pair_check(self, world: np.ndarray, threshold: float) -> np.ndarray:
        """Atoms of ``B`` in held clauses that, in ``world``, only the flipped
        active atom satisfies among the active ones and that an atom of ``B``
        could satisfy instead, where counting them as satisfiable moves the
        active atom's conditional probability by more than ``threshold``."""
        gc = self.net.clauses()
        if gc.n_clauses == 0:
            return np.zeros(0, np.int64)
        n_reg = self.g.registry.n_atoms
        x = np.zeros(n_reg, dtype=bool)
        x[self.order[np.flatnonzero(world)]] = True
        self.act._grow()
        active = self.act.active
        w = self.net.weights(gc)
        owner = np.repeat(np.arange(gc.n_clauses), np.diff(gc.clause_start))
        inside = active[gc.lit_atom]
        lit_true = (x[gc.lit_atom] == gc.lit_positive) & inside
        satisfied_outside = np.zeros(gc.n_clauses, dtype=bool)
        np.logical_or.at(satisfied_outside, owner, ~inside & ~gc.lit_positive)
        rescuer = np.zeros(gc.n_clauses, dtype=bool)
        np.logical_or.at(rescuer, owner, ~inside & gc.lit_positive)
        count = np.bincount(owner, weights=lit_true, minlength=gc.n_clauses).astype(np.int64)
        live = ~satisfied_outside & (gc.is_hard | (w != 0))
        # gain of flipping each active atom over the clamped clauses (score change;
        # hard clauses counted apart)
        soft_w = np.where(gc.is_hard, 0.0, w)
        gain = np.zeros(n_reg)
        hard_break = np.zeros(n_reg, dtype=np.int64)
        lit_live = live[owner] & inside
        zero = lit_live & (count[owner] == 0)
        np.add.at(gain, gc.lit_atom[zero], soft_w[owner[zero]])
        crit = lit_live & (count[owner] == 1) & lit_true
        np.add.at(gain, gc.lit_atom[crit], -soft_w[owner[crit]])
        np.add.at(hard_break, gc.lit_atom[crit & gc.is_hard[owner]], 1)
        # the same with the clauses that a held atom could rescue not counted as broken
        resc = crit & rescuer[owner]
        relief = np.zeros(n_reg)
        np.add.at(relief, gc.lit_atom[resc], soft_w[owner[resc]])
        hard_relief = np.zeros(n_reg, dtype=np.int64)
        np.add.at(hard_relief, gc.lit_atom[resc & gc.is_hard[owner]], 1)
        # probability that the atom takes its other value, from its gain
        p_now = np.where(hard_break > 0, 0.0, _sigmoid(gain))
        p_relaxed = np.where(hard_break - hard_relief > 0, 0.0, _sigmoid(gain + relief))
        moved = np.flatnonzero(np.abs(p_relaxed - p_now) > threshold)
        if len(moved) == 0:
            return np.zeros(0, np.int64)
        mark = np.zeros(n_reg, dtype=bool)
        mark[moved] = True
        clauses = np.unique(owner[resc & mark[gc.lit_atom]])
        pick = np.isin(owner, clauses) & ~inside & gc.lit_positive
        return np.unique(gc.lit_atom[pick]).astype(np.int64)


def _accumulate(total: np.ndarray, ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    if len(ids) and ids.max() >= len(total):
        total = np.concatenate([total, np.zeros(int(ids.max()) + 1 - len(total))])
    np.add.at(total, ids, values)
    return total


def lazy_mcsat(
    grounder,
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
    progress: Callable[[int], None] | None = None,
    options: LazyOptions | None = None,
):
    """Lazy MC-SAT over a :class:`~markovlogic.ground.Grounder` (module
    docstring); the MC-SAT options are :func:`..mcsat.mcsat`'s. Returns
    ``(MarginalResult over registry atom ids, held network over the registry
    atoms)``."""
    check_sampling(samples, burn_in, seed, max_seconds, progress)
    opt = (options or LazyOptions()).check()
    start = time.perf_counter()
    deadline = None if max_seconds is None else start + float(max_seconds)
    chain_options = dict(walksat_prob=walksat_prob, temperature=temperature, max_steps=max_steps,
                         metropolis_steps=metropolis_steps, guide_weight=guide_weight, max_path=max_path,
                         hard_weight=hard_weight, rao_blackwell=rao_blackwell)
    lz = _LazyChain(grounder, opt, chain_options)
    rng = np.random.default_rng(seed)
    chain = lz.build(None, int(rng.integers(0, 2**31 - 1)))
    rounds = 0
    frozen = False
    stopped_early = False
    drawn = 0
    checks_done = 0
    per_check = max(1, -(-int(samples) // int(opt.checks)))
    while True:
        chain.run(int(burn_in))
        tally = np.zeros(len(lz.order))
        held_sum = np.zeros(0)               # per registry atom: sum of P(b | x) over this round's checks
        held_ids = np.zeros(0, dtype=np.int64)
        held_checks = 0
        drawn = 0
        grew = False
        while drawn < samples:
            k = min(per_check, samples - drawn)
            chain.run(k, tally=tally)
            drawn += k
            if progress is not None:
                progress(drawn)
            if deadline is not None and time.perf_counter() >= deadline:
                stopped_early = True
                break
            if frozen:
                continue
            new, held_q, held_p = lz.check(lz.sampled_world(chain.state, rng))
            checks_done += 1
            if len(new) and lz.activate(new):
                grew = True
                break
            held_sum = _accumulate(held_sum, held_q, held_p)
            held_ids = held_q
            held_checks += 1
        if not grew or stopped_early:
            break
        rounds += 1
        if rounds >= opt.max_rounds:
            frozen = True
        chain = lz.build(chain.state, int(rng.integers(0, 2**31 - 1)))
    seconds = time.perf_counter() - start
    n_reg = grounder.registry.n_atoms
    prob = np.zeros(n_reg)
    prob[lz.order] = chain.marginals(tally, max(drawn, 1))
    if held_checks == 0:
        _, held_ids, held_p = lz.check(lz.sampled_world(chain.state, rng))
        held_sum = _accumulate(np.zeros(0), held_ids, held_p)
        held_checks = 1
    n_reg = grounder.registry.n_atoms        # the checks may have registered atoms
    if len(prob) < n_reg:
        prob = np.concatenate([prob, np.zeros(n_reg - len(prob))])
    prob[held_ids] = held_sum[held_ids] / held_checks
    held = grounder.assemble(lz.net.clauses())
    stats = {
        "samples": drawn,
        "burn_in": burn_in,
        "seconds": seconds,
        "samples_per_second": drawn / seconds if seconds > 0 else 0.0,
        "stopped_early": stopped_early,
        "lazy": True,
        "threshold": opt.threshold,
        "active_atoms": int(len(lz.order)),
        "held_atoms": int(lz.net.n_atoms),
        "active_clauses": int(held.n_clauses),
        "active_rows": int(lz.act.rows),
        "clamped_clauses": int(lz.clamped.n_clauses),
        "activation_rounds": int(lz.act.rounds),
        "sampling_rounds": rounds + 1,
        "converged": not frozen,
        "checks": checks_done,
        "activation_queries": int(lz.act.queries),
        "sql_seconds": round(lz.act.seconds, 4),
        "held_bytes": lz.net.nbytes(),
        "held_query_atoms": int(len(held_ids)),
    }
    stats.update(chain.stats_dict())
    if opt.count_total:
        stats["total_rows"] = lz.act.count_total(opt.count_seconds)
    lz.act.close()
    result = MarginalResult(probabilities=prob, method="mcsat", samples=drawn, seconds=seconds, stats=stats)
    return result, held
