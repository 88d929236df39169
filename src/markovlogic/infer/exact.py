"""Exact MAP and marginals by enumeration, one connected component at a time.

Each component with at most ``max_atoms`` atoms is enumerated in full (2^n
worlds, vectorised over worlds); a network of many small components is
therefore exact too. This is the oracle the tests hold every other algorithm
to, and a method users can pick for small problems.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import InferenceError
from ..ground.network import GroundNetwork
from .results import MapResult, MarginalResult

DEFAULT_MAX_ATOMS = 22


def _component_tables(net: GroundNetwork):
    """Atoms, clauses and blocks of each component."""
    sizes = np.diff(net.clause_start)
    clause_comp = np.full(net.n_clauses, -1, dtype=np.int64)
    nonempty = sizes > 0
    clause_comp[nonempty] = net.component[net.lit_atom[net.clause_start[:-1][nonempty]]]
    block_comp = (
        net.component[net.block_atoms[net.block_start[:-1]]]
        if net.n_blocks
        else np.zeros(0, dtype=np.int32)
    )
    order = np.argsort(net.component, kind="stable")
    bounds = np.searchsorted(net.component[order], np.arange(net.n_components + 1))
    # clauses and blocks grouped by component once (not a scan per component)
    corder = np.argsort(clause_comp, kind="stable")
    cbounds = np.searchsorted(clause_comp[corder], np.arange(net.n_components + 1))
    border = np.argsort(block_comp, kind="stable")
    bbounds = np.searchsorted(block_comp[border], np.arange(net.n_components + 1))
    for k in range(net.n_components):
        atoms = order[bounds[k]:bounds[k + 1]]
        yield atoms, corder[cbounds[k]:cbounds[k + 1]], border[bbounds[k]:bbounds[k + 1]]


def _enumerate_component(net: GroundNetwork, atoms: np.ndarray, clauses: np.ndarray, blocks: np.ndarray, max_atoms: int):
    """Log-weights (score, -inf if infeasible) of every world of a component,
    and the world bit matrix (bool[2^n, n])."""
    n = len(atoms)
    if n > max_atoms:
        raise InferenceError(
            f"exact enumeration: a connected component has {n} atoms (limit {max_atoms}); "
            "use another method"
        )
    local = np.full(net.n_atoms, -1, dtype=np.int64)
    local[atoms] = np.arange(n)
    codes = np.arange(1 << n, dtype=np.int64)
    bits = ((codes[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)
    score = np.zeros(1 << n, dtype=np.float64)
    feasible = np.ones(1 << n, dtype=bool)
    for c in clauses:
        s, e = net.clause_start[c], net.clause_start[c + 1]
        cols = local[net.lit_atom[s:e]]
        sat = (bits[:, cols] == net.lit_positive[s:e][None, :]).any(axis=1)
        if net.is_hard[c]:
            feasible &= sat
        else:
            score += net.weight[c] * sat
    for b in blocks:
        cols = local[net.block_atoms[net.block_start[b]:net.block_start[b + 1]]]
        feasible &= bits[:, cols].sum(axis=1) == 1
    return np.where(feasible, score, -np.inf), bits


def exact_map(net: GroundNetwork, max_atoms: int = DEFAULT_MAX_ATOMS) -> MapResult:
    """The optimal world by enumeration (proven optimal: bound == score)."""
    start = time.perf_counter()
    world = np.zeros(net.n_atoms, dtype=bool)
    for atoms, clauses, blocks in _component_tables(net):
        logw, bits = _enumerate_component(net, atoms, clauses, blocks, max_atoms)
        if not np.isfinite(logw.max()):
            raise InferenceError("the hard clauses and blocks cannot all be satisfied")
        world[atoms] = bits[int(np.argmax(logw))]
    score = net.score(world)
    return MapResult(
        world=world,
        score=score,
        cost=net.cost(world),
        hard_violated=net.hard_violated(world),
        method="exact",
        seconds=time.perf_counter() - start,
        optimal=True,
        bound=score,
        gap=0.0,
    )


def exact_marginals(net: GroundNetwork, max_atoms: int = DEFAULT_MAX_ATOMS) -> MarginalResult:
    """P(atom = true) for every atom, by enumeration per component."""
    start = time.perf_counter()
    prob = np.full(net.n_atoms, 0.5, dtype=np.float64)
    log_z = 0.0
    for atoms, clauses, blocks in _component_tables(net):
        logw, bits = _enumerate_component(net, atoms, clauses, blocks, max_atoms)
        top = logw.max()
        if not np.isfinite(top):
            raise InferenceError("the hard clauses and blocks cannot all be satisfied")
        p = np.exp(logw - top)
        z = p.sum()
        prob[atoms] = (p[:, None] * bits).sum(axis=0) / z
        log_z += top + np.log(z)
    return MarginalResult(
        probabilities=prob,
        method="exact",
        samples=0,
        seconds=time.perf_counter() - start,
        stats={"log_partition": log_z},
    )
