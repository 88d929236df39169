"""The inference the learners need, behind two small interfaces.

* An expectation engine gives, for a parameter vector, the moments of the
  feature counts under P_w(y | evidence): E[n], Var[n_i], products Cov[n] @ d
  (for the step sizes of diagonal Newton and scaled conjugate gradient) and the
  atoms' marginals. ``ExactEngine`` enumerates each connected component (the
  test oracle, and exact learning on small problems); ``SampledEngine`` uses
  MC-SAT samples, warm-started from the last sample of the previous call.
* ``SplitEngine`` (what ``inference="mcsat"`` builds when the network has
  them): the atoms that are a connected component on their own, touched by
  unit clauses only, are independent of everything else and of each other;
  their moments are exact (a logistic function of their clauses' weights,
  vectorised), and MC-SAT samples only the rest. A model with a prior on
  every pair of citations (``SameBib(c1,c2)``) has millions of them, which
  sampling would visit at every step for nothing.
* A MAP engine gives the most likely world for a parameter vector (the
  perceptron and MIRA): ``ExactEngine`` again, or ``SolverMapEngine`` that
  calls ``infer.map.solve_map`` (ILP, MaxWalkSAT, ...).

Learners take factories ``make(net, seed) -> engine`` so that switching the
inference algorithm is one argument (``inference="exact" | "mcsat"``,
``map_method="ilp" | "maxwalksat" | "exact"``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Protocol

import numpy as np

from ..errors import LearningError, OptionError
from ..ground.network import GroundNetwork
from ..infer.exact import DEFAULT_MAX_ATOMS, _component_tables
from .counts import FeatureCounter, Reweighter, expand_ranges, world_counts


# ---------------------------------------------------------------- moments


@dataclass
class _CovPart:
    ids: np.ndarray        # parameter ids (columns of ``centered``)
    centered: np.ndarray   # float64[n_worlds, len(ids)]: counts minus their mean
    prob: np.ndarray       # float64[n_worlds]: probability of each world (sums to 1)
    mult: float = 1.0      # multiplicity (identical components)


@dataclass
class Moments:
    """Moments of the feature counts under the model's conditional distribution."""

    mean: np.ndarray                       # E[n]
    var: np.ndarray                        # Var[n_i]
    marginals: list[np.ndarray]            # P(atom true), one array per network
    log_partition: float | None = None     # exact engines only
    samples: int = 0                       # sampled engines: worlds drawn for this call
    parts: list[_CovPart] = field(default_factory=list, repr=False)

    def cov_dot(self, d: np.ndarray) -> np.ndarray:
        """Cov[n] @ d."""
        out = np.zeros_like(self.mean)
        for p in self.parts:
            proj = p.centered @ d[p.ids]
            np.add.at(out, p.ids, p.mult * (p.centered.T @ (p.prob * proj)))
        return out

    def quad(self, d: np.ndarray) -> float:
        """d^T Cov[n] d = Var[d . n]."""
        total = 0.0
        for p in self.parts:
            proj = p.centered @ d[p.ids]
            total += p.mult * float(p.prob @ (proj * proj))
        return total

    @staticmethod
    def combine(items: list["Moments"]) -> "Moments":
        """Moments of the sum of independent count vectors (several databases)."""
        logz = [m.log_partition for m in items]
        return Moments(
            mean=np.sum([m.mean for m in items], axis=0),
            var=np.sum([m.var for m in items], axis=0),
            marginals=[a for m in items for a in m.marginals],
            log_partition=None if any(z is None for z in logz) else float(sum(logz)),
            samples=sum(m.samples for m in items),
            parts=[p for m in items for p in m.parts],
        )


class ExpectationEngine(Protocol):
    def moments(self, params: np.ndarray) -> Moments: ...


class MapEngine(Protocol):
    def map_world(self, params: np.ndarray) -> np.ndarray: ...


# ---------------------------------------------------------------- exact


@dataclass
class _ComponentClass:
    """Components with identical local structure: enumerated once."""

    n: int
    lit_local: np.ndarray
    lit_positive: np.ndarray
    starts: np.ndarray          # clause starts (non-empty clauses) into the local literal arrays
    nonempty: np.ndarray        # bool[n_clauses_local]
    hard: np.ndarray            # bool[n_clauses_local]
    pmat: np.ndarray            # float64[n_clauses_local, len(ids)]
    ids: np.ndarray             # parameter ids touched
    blocks: list[np.ndarray]    # local atom ids of each block
    members: list[np.ndarray] = field(default_factory=list)   # global atom ids, one array per component


def _block_worlds(n: int, blocks: list[np.ndarray]) -> np.ndarray:
    """The worlds of ``n`` atoms (``bool[m, n]``) in which each block has
    exactly one true atom: the free atoms' 2^f assignments times one choice
    per block (a component of one hidden atom and three 5-valued blocks has
    250 such worlds instead of 2^16)."""
    in_block = np.zeros(n, dtype=bool)
    for b in blocks:
        in_block[b] = True
    free = np.flatnonzero(~in_block)
    sizes = [len(b) for b in blocks]
    total = (1 << len(free)) * int(np.prod(sizes, dtype=np.int64)) if sizes else 1 << len(free)
    codes = np.arange(total, dtype=np.int64)
    bits = np.zeros((total, n), dtype=bool)
    bits[:, free] = ((codes[:, None] >> np.arange(len(free))[None, :]) & 1).astype(bool)
    rest = codes >> len(free)
    for b, size in zip(blocks, sizes):
        bits[np.arange(total), np.asarray(b)[rest % size]] = True
        rest //= size
    return bits


class ExactEngine:
    """Exact moments, marginals and MAP by enumerating each connected
    component (at most ``max_atoms`` atoms each). Components with the same
    local structure (the same clauses over their atoms in the same order, the
    same parameters) are enumerated once and counted with their multiplicity,
    so a network made of many copies of a small one costs one enumeration."""

    def __init__(self, net: GroundNetwork, max_atoms: int = DEFAULT_MAX_ATOMS) -> None:
        self.net = net
        self.max_atoms = max_atoms
        classes: dict[bytes, _ComponentClass] = {}
        local = np.full(net.n_atoms, -1, dtype=np.int64)
        for atoms, clauses, blocks in _component_tables(net):
            n = len(atoms)
            if n > max_atoms:
                raise LearningError(
                    f"exact inference: a connected component of the ground network has {n} atoms "
                    f"(limit {max_atoms}); use MC-SAT (inference='mcsat')"
                )
            local[atoms] = np.arange(n)
            sizes = np.diff(net.clause_start)[clauses]
            lits, _ = expand_ranges(net.clause_start[clauses], net.clause_start[clauses + 1])
            lit_local = local[net.lit_atom[lits]]
            lit_pos = net.lit_positive[lits]
            pcounts = np.diff(net.param_start)[clauses]
            entries, _ = expand_ranges(net.param_start[clauses], net.param_start[clauses + 1])
            pidx = net.param_index[entries]
            pcoef = net.param_coef[entries]
            hard = net.is_hard[clauses]
            block_list = [local[net.block_atoms[net.block_start[b]:net.block_start[b + 1]]] for b in blocks]
            key = b"|".join([
                np.int64(n).tobytes(), sizes.astype(np.int64).tobytes(), lit_local.astype(np.int64).tobytes(),
                lit_pos.tobytes(), hard.tobytes(), pcounts.astype(np.int64).tobytes(),
                pidx.astype(np.int64).tobytes(), pcoef.tobytes(),
                b";".join(bl.astype(np.int64).tobytes() for bl in block_list),
            ])
            cls = classes.get(key)
            if cls is None:
                ids, inverse = np.unique(pidx, return_inverse=True) if len(pidx) else (np.zeros(0, np.int64), np.zeros(0, np.int64))
                pmat = np.zeros((len(clauses), len(ids)))
                rows = np.repeat(np.arange(len(clauses)), pcounts)
                np.add.at(pmat, (rows, inverse), pcoef)
                pmat[hard] = 0.0
                nonempty = sizes > 0
                starts = (np.cumsum(sizes) - sizes)[nonempty]
                cls = _ComponentClass(n, lit_local, lit_pos, starts, nonempty, hard, pmat, ids.astype(np.int64), block_list)
                classes[key] = cls
            cls.members.append(np.asarray(atoms, dtype=np.int64))
            local[atoms] = -1
        self.classes = list(classes.values())
        self._member_arrays = [np.stack(c.members) for c in self.classes]

    def _enumerate(self, cls: _ComponentClass, params: np.ndarray):
        n = cls.n
        bits = _block_worlds(n, cls.blocks)
        sat = np.zeros((len(bits), len(cls.hard)), dtype=bool)
        if len(cls.lit_local):
            lit_true = bits[:, cls.lit_local] == cls.lit_positive[None, :]
            sat[:, cls.nonempty] = np.logical_or.reduceat(lit_true, cls.starts, axis=1)
        satf = sat.astype(np.float64)
        counts = satf @ cls.pmat                              # [2^n, len(ids)]
        logw = counts @ params[cls.ids] if len(cls.ids) else np.zeros(len(bits))
        feasible = sat[:, cls.hard].all(axis=1)
        for block in cls.blocks:
            feasible &= bits[:, block].sum(axis=1) == 1
        logw = np.where(feasible, logw, -np.inf)
        return bits, counts, logw

    def moments(self, params: np.ndarray) -> Moments:
        params = np.asarray(params, dtype=np.float64)
        mean = np.zeros(len(params))
        var = np.zeros(len(params))
        marg = np.full(self.net.n_atoms, 0.5)
        parts: list[_CovPart] = []
        log_z = 0.0
        for cls, members in zip(self.classes, self._member_arrays):
            bits, counts, logw = self._enumerate(cls, params)
            top = logw.max()
            if not np.isfinite(top):
                raise LearningError("the hard clauses and blocks of the ground network cannot all be satisfied")
            p = np.exp(logw - top)
            z = p.sum()
            p /= z
            m = len(members)
            log_z += m * (top + np.log(z))
            mu = p @ counts
            centered = counts - mu
            np.add.at(mean, cls.ids, m * mu)
            np.add.at(var, cls.ids, m * (p @ (centered * centered)))
            marg[members] = (p @ bits)[None, :]
            if len(cls.ids):
                parts.append(_CovPart(cls.ids, centered, p, float(m)))
        return Moments(mean=mean, var=var, marginals=[marg], log_partition=log_z, parts=parts)

    def map_world(self, params: np.ndarray) -> np.ndarray:
        params = np.asarray(params, dtype=np.float64)
        world = np.zeros(self.net.n_atoms, dtype=bool)
        for cls, members in zip(self.classes, self._member_arrays):
            bits, _, logw = self._enumerate(cls, params)
            if not np.isfinite(logw.max()):
                raise LearningError("the hard clauses and blocks of the ground network cannot all be satisfied")
            world[members] = bits[int(np.argmax(logw))][None, :]
        return world

    def log_likelihood(self, params: np.ndarray, world: np.ndarray) -> float:
        """log P_w(world | evidence), exactly."""
        params = np.asarray(params, dtype=np.float64)
        m = self.moments(params)
        return float(world_counts(self.net, world) @ params - m.log_partition)


# ---------------------------------------------------------------- sampled

# sampler(net, n_samples, init_world or None, seed, burn_in) -> bool[n_samples, n_atoms]
Sampler = Callable[[GroundNetwork, int, "np.ndarray | None", int, int], np.ndarray]


class Chain(Protocol):
    """A Markov chain over the worlds of one network whose weights may change
    between calls: ``sample(net, n, burn_in)`` continues from where the last
    call stopped (``net`` is the network with the current weights)."""

    def sample(self, net: GroundNetwork, n: int, burn_in: int) -> np.ndarray: ...


def chain_world(chain) -> "np.ndarray | None":
    """The world a chain is in (None if it has not started), for
    :meth:`SampledEngine.save`."""
    if isinstance(chain, PersistentMCSAT):
        return chain.chain.state
    state = getattr(chain, "state", None)
    return None if state is None else np.array(state, dtype=bool, copy=True)


def move_chain(chain, world: "np.ndarray | None") -> None:
    """Put a chain back in ``world`` (see :meth:`SampledEngine.restore`)."""
    if world is None:
        return
    if isinstance(chain, PersistentMCSAT):
        chain.chain.reset(world)
    elif hasattr(chain, "state"):
        chain.state = np.array(world, dtype=bool, copy=True)


class FunctionChain:
    """A chain from a sampling function: each call starts from the last
    world of the previous one."""

    def __init__(self, sampler: Sampler, seed: int = 0) -> None:
        self.sampler = sampler
        self.seed = seed
        self.state: np.ndarray | None = None
        self.calls = 0

    def sample(self, net: GroundNetwork, n: int, burn_in: int) -> np.ndarray:
        worlds = np.asarray(self.sampler(net, n, self.state, self.seed + 7919 * self.calls, burn_in), dtype=bool)
        self.calls += 1
        self.state = worlds[-1].copy()
        return worlds


class PersistentMCSAT:
    """One MC-SAT chain kept across learning iterations, through the public
    :class:`markovlogic.infer.mcsat.MCSATChain`: the clauses are normalised
    and a start world found once, and each call only writes the new weights
    (``set_weights``) and samples, continuing from the last world.

    ``init``: the chain's first world (learning starts it at the training
    world, see :func:`training_start`); ``restart``: go back to ``init`` at
    every call (contrastive divergence) instead of continuing;
    ``metropolis_steps``: the sampler's Metropolis-Hastings steps per sample
    (None: its default, which learning uses; 0 is plain MC-SAT as in
    Alchemy). Learning needs them: as the weights grow, strong clauses
    freeze plain MC-SAT's chain (see :mod:`markovlogic.infer.mcsat`), the
    expected counts are then those of the frozen world, and the learner
    pushes the weights further. On UW-CSE fold 1 from all-zero weights,
    diagonal Newton with plain MC-SAT ran to weights summing to 360 in
    absolute value (test AUC-PR 0.085, CLL -0.30); with the Metropolis
    steps it converged to 38 (AUC-PR 0.408, CLL -0.024, 60 iterations in
    56 s), and from the pseudo-likelihood start it gave 0.420 instead of
    0.415. They cost about a third more per sample. Other ``options`` are
    those of :class:`markovlogic.infer.mcsat.MCSATOptions` (e.g.
    ``group_mutex``, ``joint_moves``)."""

    def __init__(self, net: GroundNetwork, seed: int = 0, metropolis_steps: int | None = None,
                 init: np.ndarray | None = None, restart: bool = False, **options) -> None:
        from ..infer.mcsat import MCSATChain

        self.init = None if init is None else np.asarray(init, dtype=bool)
        self.restart = restart and self.init is not None
        self.chain = MCSATChain(net, seed=seed, init=self.init, metropolis_steps=metropolis_steps, **options)

    def sample(self, net: GroundNetwork, n: int, burn_in: int) -> np.ndarray:
        self.chain.set_weights(net.weight)
        if self.restart:
            self.chain.reset(self.init)
        return self.chain.sample(n, burn_in=burn_in)

    def sample_chunks(self, net: GroundNetwork, params: np.ndarray, n: int, burn_in: int, chunk: int):
        """:meth:`sample` at ``net.with_params(params)`` as successive arrays of
        at most ``chunk`` worlds (the same chain, continued), the clause weights
        written straight into the chain's (no reweighted copy of the network)."""
        self.chain.set_weights_from_params(net, params)
        if self.restart:
            self.chain.reset(self.init)
        done = 0
        while done < n:
            k = min(chunk, n - done)
            yield self.chain.sample(k, burn_in=burn_in if done == 0 else 0)
            done += k


SAMPLE_CHUNK = 64      # worlds per chain call when moments are computed chunk by chunk


class SampledEngine:
    """Moments from samples of P_w(y | evidence) drawn by a chain that
    persists across calls (warm start: the weights change little between
    iterations), so only the first call burns in.

    :meth:`save` and :meth:`restore` give the learner's trust region a real
    step back: when a step is rejected, the chain returns to the world it
    was in at the accepted point. Without that, the chain stays where the
    rejected weights drove it (on UW-CSE from zero weights: a far denser
    world), the few samples of the next, smaller steps still come from
    there, their gradients disagree with the saved ones however small the
    step, and every later step is rejected too (lambda grew to 2e8)."""

    def __init__(self, net: GroundNetwork, chain: Chain | Sampler, samples: int = 20,
                 burn_in: int = 20, seed: int = 0) -> None:
        if samples < 2:
            raise OptionError(f"learning needs at least 2 samples per iteration, got {samples}")
        self.net = net
        self.chain = chain if hasattr(chain, "sample") else FunctionChain(chain, seed)
        self.samples = samples
        self.burn_in = burn_in
        self.calls = 0
        self.drawn = 0          # worlds drawn over all calls (``samples`` may change between calls)
        self.reweight = Reweighter(net)
        self.counter = FeatureCounter.of(net)

    def moments(self, params: np.ndarray) -> Moments:
        params = np.asarray(params, dtype=np.float64)
        burn = self.burn_in if self.calls == 0 else 0
        if hasattr(self.chain, "sample_chunks"):
            # the worlds a chunk at a time: their counts and the atoms' true counts kept, not the worlds
            # (500 worlds of UW-CSE's 52,441 atoms are 26 MB)
            counts = np.empty((self.samples, len(params)))
            true = np.zeros(self.net.n_atoms, dtype=np.int64)
            n = 0
            for worlds in self.chain.sample_chunks(self.net, params, self.samples, burn, SAMPLE_CHUNK):
                counts[n:n + len(worlds)] = self.counter(worlds)
                true += worlds.sum(axis=0)
                n += len(worlds)
            counts = counts[:n]
            marginals = true / n
        else:
            worlds = self.chain.sample(self.reweight(params), self.samples, burn)
            n = len(worlds)
            counts = self.counter(worlds)
            marginals = worlds.mean(axis=0)
        self.calls += 1
        self.drawn += n
        mu = counts.mean(axis=0)
        centered = counts - mu
        prob = np.full(n, 1.0 / n)
        ids = np.arange(len(params))
        return Moments(
            mean=mu,
            var=(centered * centered).mean(axis=0),
            marginals=[marginals],
            samples=n,
            parts=[_CovPart(ids, centered, prob)],
        )

    def save(self) -> "np.ndarray | None":
        """The chain's current world."""
        return chain_world(self.chain)

    def restore(self, world: "np.ndarray | None") -> None:
        """Continue the chain from ``world`` (from :meth:`save`)."""
        move_chain(self.chain, world)


# ---------------------------------------------------------------- independent unit atoms + the rest


def unit_atoms(net: GroundNetwork) -> np.ndarray:
    """Atoms that form a connected component on their own and are in no block:
    only clauses over that atom alone touch them."""
    sizes = np.bincount(net.component, minlength=net.n_components)
    return np.flatnonzero((sizes[net.component] == 1) & (net.atom_block < 0))


def restrict(net: GroundNetwork, atoms: np.ndarray) -> GroundNetwork:
    """The network over ``atoms`` (a union of connected components), renumbered
    in that order, with the clauses and blocks over them; parameters unchanged."""
    atoms = np.asarray(atoms, dtype=np.int64)
    local = np.full(net.n_atoms, -1, dtype=np.int64)
    local[atoms] = np.arange(len(atoms))
    sizes = np.diff(net.clause_start)
    first = np.full(net.n_clauses, -1, dtype=np.int64)
    first[sizes > 0] = net.lit_atom[net.clause_start[:-1][sizes > 0]]
    clauses = np.flatnonzero((first >= 0) & (local[np.maximum(first, 0)] >= 0))
    lits, _ = expand_ranges(net.clause_start[clauses], net.clause_start[clauses + 1])
    entries, _ = expand_ranges(net.param_start[clauses], net.param_start[clauses + 1])
    cstart = np.zeros(len(clauses) + 1, dtype=np.int64)
    np.cumsum(sizes[clauses], out=cstart[1:])
    pstart = np.zeros(len(clauses) + 1, dtype=np.int64)
    np.cumsum(np.diff(net.param_start)[clauses], out=pstart[1:])
    bsizes = np.diff(net.block_start)
    bfirst = net.block_atoms[net.block_start[:-1]] if len(bsizes) else np.zeros(0, np.int64)
    blocks = np.flatnonzero((bsizes > 0) & (local[bfirst] >= 0)) if len(bsizes) else np.zeros(0, np.int64)
    bidx, _ = expand_ranges(net.block_start[blocks], net.block_start[blocks + 1])
    bstart = np.zeros(len(blocks) + 1, dtype=np.int64)
    np.cumsum(bsizes[blocks], out=bstart[1:])
    comp = net.component[atoms]
    _, comp = np.unique(comp, return_inverse=True)
    return GroundNetwork.from_arrays(
        n_atoms=len(atoms), clause_start=cstart, lit_atom=local[net.lit_atom[lits]].astype(np.int32),
        lit_positive=net.lit_positive[lits], is_hard=net.is_hard[clauses], param_start=pstart,
        param_index=net.param_index[entries], param_coef=net.param_coef[entries], params=net.params,
        param_info=net.param_info, block_start=bstart, block_atoms=local[net.block_atoms[bidx]].astype(np.int32),
        template_id=net.template_id[clauses], atom_pred=net.atom_pred[atoms], atom_args=net.atom_args[atoms],
        predicates=net.predicates, constants=net.constants, is_query=net.is_query[atoms],
        truth=None if net.truth is None else net.truth[atoms],
        components=(comp.astype(np.int32).reshape(-1), int(comp.max(initial=-1)) + 1),
    )


class UnitAtomsEngine:
    """Exact moments of independent atoms touched by unit clauses only (see
    :func:`unit_atoms`): atom ``a`` is true with probability
    ``sigmoid(delta_a . params)``, ``delta_a`` the change of its clauses'
    feature counts from ``a`` false to ``a`` true (a hard unit clause fixes
    it). Counts are ``base + sum_a x_a delta_a``, so
    ``E[n] = base + delta^T p`` and ``Cov[n] = delta^T diag(p (1 - p)) delta``,
    held as one sparse covariance part. Vectorised over the atoms."""

    def __init__(self, net: GroundNetwork, atoms: np.ndarray) -> None:
        from scipy.sparse import csr_matrix

        self.net = net
        self.atoms = np.asarray(atoms, dtype=np.int64)
        local = np.full(net.n_atoms, -1, dtype=np.int64)
        local[self.atoms] = np.arange(len(self.atoms))
        sizes = np.diff(net.clause_start)
        first = np.full(net.n_clauses, -1, dtype=np.int64)
        first[sizes > 0] = net.lit_atom[net.clause_start[:-1][sizes > 0]]
        clauses = np.flatnonzero((first >= 0) & (local[np.maximum(first, 0)] >= 0))
        owner = local[first[clauses]]
        lits, lit_clause = expand_ranges(net.clause_start[clauses], net.clause_start[clauses + 1])
        pos = net.lit_positive[lits]
        # a clause over one atom: satisfied with the atom true if it has a positive literal, false if a negative one
        sat_true = np.zeros(len(clauses), bool)
        sat_false = np.zeros(len(clauses), bool)
        np.logical_or.at(sat_true, lit_clause, pos)
        np.logical_or.at(sat_false, lit_clause, ~pos)
        hard = net.is_hard[clauses]
        n = len(self.atoms)
        self.fixed = np.full(n, -1, dtype=np.int8)               # -1 free, 0 false, 1 true
        must_false = np.zeros(n, bool)
        must_true = np.zeros(n, bool)
        must_false[owner[hard & ~sat_true]] = True
        must_true[owner[hard & ~sat_false]] = True
        if (must_false & must_true).any():
            a = self.atoms[np.flatnonzero(must_false & must_true)[0]]
            raise LearningError(f"hard unit clauses contradict each other on {net.atom_name(int(a))}")
        self.fixed[must_false] = 0
        self.fixed[must_true] = 1
        soft = ~hard
        entries, entry_clause = expand_ranges(net.param_start[clauses[soft]], net.param_start[clauses[soft] + 1])
        rows = owner[soft][entry_clause]
        cols = net.param_index[entries]
        coef = net.param_coef[entries]
        st, sf = sat_true[soft][entry_clause], sat_false[soft][entry_clause]
        shape = (n, net.n_params)
        self.delta = csr_matrix((coef * (st.astype(float) - sf), (rows, cols)), shape=shape)
        self.delta.sum_duplicates()
        self.base = np.asarray(csr_matrix((coef * sf, (rows, cols)), shape=shape).sum(axis=0)).ravel()
        self.delta_sq = self.delta.multiply(self.delta).tocsr()

    def probabilities(self, params: np.ndarray) -> np.ndarray:
        z = np.asarray(self.delta @ params, dtype=np.float64)
        p = 0.5 * (1.0 + np.tanh(0.5 * z))                      # sigmoid, without overflow
        p[self.fixed == 0] = 0.0
        p[self.fixed == 1] = 1.0
        return p

    def moments(self, params: np.ndarray) -> Moments:
        params = np.asarray(params, dtype=np.float64)
        p = self.probabilities(params)
        q = p * (1.0 - p)
        marg = np.zeros(self.net.n_atoms)
        marg[self.atoms] = p
        return Moments(
            mean=self.base + np.asarray(self.delta.T @ p).ravel(),
            var=np.asarray(self.delta_sq.T @ q).ravel(),
            marginals=[marg],
            parts=[_CovPart(np.arange(self.net.n_params), self.delta, q)],
        )


class SplitEngine:
    """Exact moments for the independent unit atoms (:class:`UnitAtomsEngine`),
    an expectation engine built by ``make_rest(subnetwork)`` for the other
    atoms; the two are independent, so their moments add. ``samples``,
    ``drawn``, :meth:`save` and :meth:`restore` are the rest's."""

    def __init__(self, net: GroundNetwork, units: np.ndarray, make_rest: Callable[[GroundNetwork], object]) -> None:
        self.net = net
        self.units = UnitAtomsEngine(net, units)
        keep = np.ones(net.n_atoms, bool)
        keep[units] = False
        self.rest_atoms = np.flatnonzero(keep)
        self.rest = make_rest(restrict(net, self.rest_atoms))

    @property
    def samples(self) -> int:
        return self.rest.samples

    @samples.setter
    def samples(self, n: int) -> None:
        self.rest.samples = n

    @property
    def drawn(self) -> int:
        return getattr(self.rest, "drawn", 0)

    def moments(self, params: np.ndarray) -> Moments:
        a = self.units.moments(params)
        b = self.rest.moments(params)
        marg = a.marginals[0]
        marg[self.rest_atoms] = b.marginals[0]
        return Moments(mean=a.mean + b.mean, var=a.var + b.var, marginals=[marg], samples=b.samples,
                       parts=a.parts + b.parts)

    def save(self):
        return self.rest.save() if hasattr(self.rest, "save") else None

    def restore(self, state) -> None:
        if hasattr(self.rest, "restore"):
            self.rest.restore(state)


def sampled_engine(net: GroundNetwork, seed: int, samples: int, burn_in: int):
    """MC-SAT moments (a chain kept across calls, started at the training
    world), with the independent unit atoms split off and computed exactly
    when the network has any (:class:`SplitEngine`)."""
    def make(sub: GroundNetwork) -> SampledEngine:
        return SampledEngine(sub, PersistentMCSAT(sub, seed, init=training_start(sub)),
                             samples=samples, burn_in=burn_in, seed=seed)

    units = unit_atoms(net)
    if len(units) == 0:
        return make(net)
    return SplitEngine(net, units, make)


def training_start(net: GroundNetwork) -> np.ndarray | None:
    """Where learning's chains start: the training world. A chain started from
    a random world needs many steps to reach the sparse worlds relational
    data live in (on UW-CSE, half of 52,000 advisedBy atoms true at first,
    still a third after 60 MC-SAT steps), and meanwhile the expected counts
    of clauses such as ``EXIST y advisedBy(x,y)`` cannot move whatever the
    weights: the learner drives their weights to the prior's limit."""
    if net.truth is None or (net.truth < 0).any():
        return None
    return net.truth.astype(bool)


# ---------------------------------------------------------------- MAP


class SolverMapEngine:
    """MAP worlds from ``infer.map.solve_map`` (ILP, CP-SAT, ...): the
    solver builds its model from the reweighted network at every call."""

    def __init__(self, net: GroundNetwork, method: str = "ilp", seed: int = 0, **options) -> None:
        from ..infer.map import solve_map

        self.net = net
        self.method = method
        self.seed = seed
        self.options = options
        self._solve = solve_map
        self.calls = 0
        self.hard_violated = 0
        self.reweight = Reweighter(net)

    def map_world(self, params: np.ndarray) -> np.ndarray:
        net = self.reweight(params)
        self.calls += 1
        result = self._solve(net, method=self.method, **self.options)
        self.hard_violated = int(result.hard_violated)
        return np.asarray(result.world, dtype=bool)


class WarmMaxWalkSAT:
    """MAP worlds by MaxWalkSAT for a network whose weights change between
    calls (the perceptron and MIRA call it once per iteration).

    ``solve_map(net, "maxwalksat")`` normalises the clauses and builds the
    search's arrays at every call: on UW-CSE's 6-million-clause training
    network that is about 4 s of setup for 100,000 flips. Here the clauses are
    normalised once, with every soft clause kept (placeholder weights, as
    :class:`markovlogic.infer.mcsat.MCSATChain` does), and one
    :class:`markovlogic.infer.maxwalksat.Search` is kept: a call writes the new
    weights in (``Search.set_weights``: weights may be 0 or change sign) and
    runs one try from the previous MAP world (the first from ``init``,
    default all false), followed by the greedy descent, as ``maxwalksat``
    does.
    ``max_flips`` per call: Alchemy's ``-mwsMaxSteps`` inside learning is
    100,000."""

    def __init__(self, net: GroundNetwork, seed: int = 0, *, max_flips: int = 100_000, noise: float = 0.5,
                 init: np.ndarray | None = None) -> None:
        from ..infer.kernels_state import sat_arrays

        if not isinstance(max_flips, (int, np.integer)) or isinstance(max_flips, bool) or max_flips < 0:
            raise OptionError(f"max_flips must be a non-negative integer, got {max_flips!r}")
        if not isinstance(noise, (int, float)) or not 0.0 <= float(noise) <= 1.0:
            raise OptionError(f"noise must be a probability in [0, 1], got {noise!r}")
        self.net = net
        self.seed = int(seed)
        self.max_flips = int(max_flips)
        self.noise = float(noise)
        self.reweight = Reweighter(net)
        placeholder = replace(net, weight=np.where(net.is_hard, 0.0, 1.0))
        self.sat = sat_arrays(placeholder)
        self._free = (np.diff(self.sat.atom_lit_start) == 0) & (self.sat.atom_block < 0)
        self._search = None
        self._rng = np.random.default_rng(seed)
        self._last = None if init is None else np.asarray(init, dtype=bool).copy()
        self.calls = 0
        self.hard_violated = 0

    def _search_for(self, net_weight: np.ndarray):
        """The search over the normalised clauses, with the network's clause
        weights ``net_weight`` written in (built on the first call)."""
        from ..infer.kernels_state import local_clause_order
        from ..infer.maxwalksat import Search

        if self._search is None:
            sat = self.sat
            if np.count_nonzero(np.diff(sat.clause_start) > 2) > 0.1 * sat.n_clauses:
                sat = local_clause_order(sat)   # as run_maxwalksat does, once
            self._search = Search(sat, self.seed)
        self._search.set_weights(net_weight[self._search.sat.orig_clause])
        return self._search

    def map_world(self, params: np.ndarray) -> np.ndarray:
        from ..infer.maxwalksat import start_world

        net = self.reweight(params)
        search = self._search_for(net.weight)
        start = np.zeros(self.sat.n_atoms, dtype=bool) if self._last is None else self._last
        search.reset(start_world(self.sat, self._rng, start), 0.0)   # blocks repaired if needed
        if self.max_flips:
            search.steps(self.max_flips, self.noise)
        search.reset(search.best_world, 0.0)
        search.descend()
        world = np.asarray(search.best_world, dtype=bool).copy()
        world[self._free] = False
        self.calls += 1
        # blocks hold at every step; free atoms are in no clause
        self.hard_violated = search.best_key[0] + self.sat.n_empty_hard
        self._last = world
        return world.copy()


# ---------------------------------------------------------------- factories

EngineFactory = Callable[[GroundNetwork, int], ExpectationEngine]
MapFactory = Callable[[GroundNetwork, int], MapEngine]


def expectation_factory(inference: str | EngineFactory, *, samples: int = 5, burn_in: int = 5,
                        max_atoms: int = DEFAULT_MAX_ATOMS) -> EngineFactory:
    if callable(inference):
        return inference
    if inference == "exact":
        return lambda net, seed: ExactEngine(net, max_atoms=max_atoms)
    if inference == "mcsat":
        return lambda net, seed: sampled_engine(net, seed, samples, burn_in)
    raise OptionError(f"unknown inference {inference!r} for learning; choose exact or mcsat")


def map_factory(method: str | MapFactory, **options) -> MapFactory:
    """``(net, seed) -> MAP engine``: "maxwalksat" (:class:`WarmMaxWalkSAT`;
    its first search starts from the all-false world, not the training
    world: at the perceptron's all-zero start every world is a MAP world, and
    one started at the truth gives a zero update forever), "exact", or a
    ``solve_map`` method."""
    if callable(method):
        return method
    if method == "exact":
        return lambda net, seed: ExactEngine(net)
    if method == "maxwalksat":
        return lambda net, seed: WarmMaxWalkSAT(net, seed, **options)
    return lambda net, seed: SolverMapEngine(net, method=method, seed=seed, **options)
