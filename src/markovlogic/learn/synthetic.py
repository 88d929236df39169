"""Training data drawn exactly from a known model, for testing learners.

``sample_exact`` enumerates a small network's distribution and draws
independent worlds from it; ``replicate`` lays ``copies`` disjoint copies of a
network side by side with shared parameters (as grounding a first-order model
over more constants would), each copy with its own training world.
"""

from __future__ import annotations

import numpy as np

from ..errors import LearningError
from ..ground.network import GroundNetwork

MAX_ENUMERATED_ATOMS = 20


def world_distribution(net: GroundNetwork) -> tuple[np.ndarray, np.ndarray]:
    """All worlds of a small network (``bool[2^n, n]``) and their probabilities."""
    n = net.n_atoms
    if n > MAX_ENUMERATED_ATOMS:
        raise LearningError(f"cannot enumerate a network of {n} atoms (limit {MAX_ENUMERATED_ATOMS})")
    codes = np.arange(1 << n, dtype=np.int64)
    bits = ((codes[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)
    lit_true = bits[:, net.lit_atom] == net.lit_positive[None, :]
    sizes = np.diff(net.clause_start)
    sat = np.zeros((len(bits), net.n_clauses), dtype=bool)
    nonempty = sizes > 0
    if len(net.lit_atom):
        sat[:, nonempty] = np.logical_or.reduceat(lit_true, net.clause_start[:-1][nonempty], axis=1)
    logw = sat[:, ~net.is_hard].astype(np.float64) @ net.weight[~net.is_hard]
    feasible = sat[:, net.is_hard].all(axis=1)
    for b in range(net.n_blocks):
        atoms = net.block_atoms[net.block_start[b]:net.block_start[b + 1]]
        feasible &= bits[:, atoms].sum(axis=1) == 1
    logw = np.where(feasible, logw, -np.inf)
    p = np.exp(logw - logw.max())
    return bits, p / p.sum()


def sample_exact(net: GroundNetwork, n_worlds: int, rng: np.random.Generator) -> np.ndarray:
    """``n_worlds`` independent worlds drawn exactly from P_w (``bool[n_worlds, n_atoms]``)."""
    bits, p = world_distribution(net)
    return bits[rng.choice(len(p), size=n_worlds, p=p)]


def replicate(net: GroundNetwork, copies: int, truth: np.ndarray | None = None) -> GroundNetwork:
    """``copies`` disjoint copies of ``net`` sharing its parameters. ``truth``
    (``[copies, n_atoms]``) gives each copy's training world."""
    n, c, L = net.n_atoms, net.n_clauses, len(net.lit_atom)
    E = len(net.param_index)
    k = np.arange(copies, dtype=np.int64)
    clause_start = (net.clause_start[:-1][None, :] + L * k[:, None]).ravel()
    clause_start = np.append(clause_start, L * copies)
    param_start = (net.param_start[:-1][None, :] + E * k[:, None]).ravel()
    param_start = np.append(param_start, E * copies)
    block_start = (net.block_start[:-1][None, :] + len(net.block_atoms) * k[:, None]).ravel()
    block_start = np.append(block_start, len(net.block_atoms) * copies)
    return GroundNetwork.from_arrays(
        n_atoms=n * copies,
        clause_start=clause_start,
        lit_atom=(net.lit_atom[None, :] + n * k[:, None]).ravel(),
        lit_positive=np.tile(net.lit_positive, copies),
        is_hard=np.tile(net.is_hard, copies),
        param_start=param_start,
        param_index=np.tile(net.param_index, copies),
        param_coef=np.tile(net.param_coef, copies),
        params=net.params.copy(),
        param_info=net.param_info,
        block_start=block_start,
        block_atoms=(net.block_atoms[None, :] + n * k[:, None]).ravel(),
        template_id=np.tile(net.template_id, copies),
        atom_pred=np.tile(net.atom_pred, copies),
        atom_args=np.concatenate([net.atom_args] * copies) if n else net.atom_args,
        predicates=net.predicates,
        constants=net.constants,
        is_query=np.tile(net.is_query, copies),
        truth=None if truth is None else np.asarray(truth, dtype=np.int8).reshape(copies * n),
    )
