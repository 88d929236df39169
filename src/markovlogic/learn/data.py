"""Training data for the learners: one ground network per training database.

``prepare`` checks that the training worlds are complete and consistent,
aligns the parameter tables of the networks (``+`` formulas can give
different constant combinations in different databases) and computes the
data's feature counts n(y), summed over the databases (independent worlds).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import LearningError
from ..ground.network import GroundNetwork, WeightParam
from .counts import FeatureCounter, violated_hard

_EXAMPLES = 5


@dataclass
class TrainingSet:
    nets: list[GroundNetwork]          # parameter tables aligned to ``param_info``
    worlds: list[np.ndarray]           # bool[n_atoms] training world of each network
    param_info: tuple[WeightParam, ...]
    init: np.ndarray                   # float64[n_params]: the weights in the model (prior means)
    learnable: np.ndarray              # bool[n_params]: not fixed
    data_counts: np.ndarray            # n(y), summed over the networks
    counters: list = field(default_factory=list, repr=False)   # FeatureCounter per network

    @property
    def n_params(self) -> int:
        return len(self.param_info)

    def n_query_atoms(self) -> int:
        return int(sum(int(net.is_query.sum()) for net in self.nets))


def _key(p: WeightParam) -> tuple:
    return (p.name, p.formula_index, p.clause_index)


def align_params(nets: list[GroundNetwork]) -> list[GroundNetwork]:
    """Give every network the same parameter table (the union, in order of
    first appearance), remapping ``param_index``; a no-op when they agree."""
    if all(n.param_info == nets[0].param_info for n in nets[1:]):
        return list(nets)
    index: dict[tuple, int] = {}
    info: list[WeightParam] = []
    values: list[float] = []
    for net in nets:
        for p, v in zip(net.param_info, net.params.tolist()):
            if _key(p) not in index:
                index[_key(p)] = len(info)
                info.append(p)
                values.append(v)
    params = np.array(values, dtype=np.float64)
    out = []
    for net in nets:
        remap = np.array([index[_key(p)] for p in net.param_info], dtype=np.int32)
        new_index = remap[net.param_index] if len(net.param_index) else net.param_index
        aligned = replace(net, param_index=new_index.astype(np.int32), params=params.copy(), param_info=tuple(info))
        out.append(aligned.with_params(params))
    return out


def training_world(net: GroundNetwork, which: int = 0) -> np.ndarray:
    """The training world of a network; LearningError if any atom's truth is unknown."""
    where = f" in training database {which + 1}" if which else ""
    if net.truth is None:
        raise LearningError(f"the ground network{where} carries no training truth values")
    unknown = np.flatnonzero(net.truth < 0)
    if len(unknown):
        names = ", ".join(net.atom_name(int(a)) for a in unknown[:_EXAMPLES])
        more = f" and {len(unknown) - _EXAMPLES} more" if len(unknown) > _EXAMPLES else ""
        raise LearningError(
            f"the training data{where} leaves {len(unknown)} atom(s) unknown ({names}{more}): "
            "this learner needs the truth value of every non-evidence atom ('?' atoms of query predicates are "
            "learned by --method dn or scg, or --em hard|soft); remove the '?' atoms "
            "or make their predicates closed-world"
        )
    return net.truth.astype(bool)


def _check_feasible(net: GroundNetwork, world: np.ndarray, which: int) -> None:
    where = f" of training database {which + 1}" if which else ""
    bad = violated_hard(net, world)
    if len(bad):
        c = int(bad[0])
        lits = " v ".join(("" if pos else "!") + net.atom_name(a) for a, pos in net.clause_literals(c))
        raise LearningError(
            f"the training world{where} violates {len(bad)} ground hard clause(s), e.g. {lits}: "
            "its probability is zero under the model; make the formula soft (give it a weight) "
            "or correct the data"
        )
    if net.n_blocks:
        sizes = np.diff(net.block_start)
        nonempty = sizes > 0
        per_block = np.zeros(net.n_blocks, dtype=np.int64)
        per_block[nonempty] = np.add.reduceat(world[net.block_atoms].astype(np.int64), net.block_start[:-1][nonempty])
        bad_blocks = np.flatnonzero(per_block != 1)
        if len(bad_blocks):
            b = int(bad_blocks[0])
            atoms = net.block_atoms[net.block_start[b]:net.block_start[b + 1]]
            names = ", ".join(net.atom_name(int(a)) for a in atoms[:_EXAMPLES])
            raise LearningError(
                f"the training world{where} has {per_block[b]} true atom(s) in the mutually exclusive "
                f"block {{{names}{', ...' if len(atoms) > _EXAMPLES else ''}}} (exactly one must be true), "
                f"and {len(bad_blocks)} such block(s) in all"
            )


def prepare(nets: list[GroundNetwork]) -> TrainingSet:
    """Check and align the training networks (see module docstring)."""
    if not nets:
        raise LearningError("no training data: give at least one training database")
    nets = align_params(list(nets))
    worlds = []
    for k, net in enumerate(nets):
        world = training_world(net, k)
        _check_feasible(net, world, k)
        worlds.append(world)
    info = nets[0].param_info
    data_counts = np.zeros(len(info), dtype=np.float64)
    counters = [FeatureCounter.of(net) for net in nets]
    for counter, world in zip(counters, worlds):
        data_counts += counter(world)
    learnable = np.array([not p.fixed for p in info], dtype=bool)
    return TrainingSet(
        nets=nets,
        worlds=worlds,
        param_info=info,
        init=nets[0].params.copy(),
        learnable=learnable,
        data_counts=data_counts,
        counters=counters,
    )


def prior_terms(params: np.ndarray, mean: np.ndarray, stddev: float | None, learnable: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Log Gaussian prior (up to a constant) over the learnable weights, its
    gradient and the diagonal of its negative Hessian (1/sigma^2)."""
    n = len(params)
    if stddev is None or not np.isfinite(stddev):
        return 0.0, np.zeros(n), np.zeros(n)
    if stddev <= 0:
        raise LearningError(f"the prior standard deviation must be positive, got {stddev}")
    inv = np.where(learnable, 1.0 / stddev ** 2, 0.0)
    diff = params - mean
    return float(-0.5 * np.sum(inv * diff * diff)), -inv * diff, inv
