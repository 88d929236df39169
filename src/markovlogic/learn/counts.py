"""Feature counts: n_i(world) = sum of ``param_coef`` over the satisfied soft
clauses that carry parameter i (d score / d params).

One compiled kernel counts many worlds at once (the samples of MC-SAT, the MAP
worlds of the perceptron); a sparse clause x parameter matrix serves the
vectorised computations of pseudo-likelihood.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp
from numba import njit

from ..ground.network import GroundNetwork


def param_matrix(net: GroundNetwork, n_params: int | None = None) -> sp.csr_matrix:
    """Sparse ``[n_clauses, n_params]``: entry (c, i) is the coefficient of
    parameter i in clause c's weight; hard clauses' rows are zero (their
    weight never changes and they carry no feature)."""
    n_params = net.n_params if n_params is None else n_params
    counts = np.diff(net.param_start)
    rows = np.repeat(np.arange(net.n_clauses, dtype=np.int64), counts)
    coef = np.where(net.is_hard[rows], 0.0, net.param_coef) if len(rows) else net.param_coef
    mat = sp.csr_matrix((coef, (rows, net.param_index.astype(np.int64))), shape=(net.n_clauses, n_params))
    mat.eliminate_zeros()
    return mat


class Reweighter:
    """``net.with_params(params)`` for repeated calls: the clause weights as
    one sparse mat-vec (``GroundNetwork.clause_weights`` scatters with
    ``np.add.at``, slow on millions of clauses)."""

    def __init__(self, net: GroundNetwork) -> None:
        self.net = net
        self.matrix = param_matrix(net)

    def __call__(self, params: np.ndarray) -> GroundNetwork:
        params = np.asarray(params, dtype=np.float64).copy()
        return replace(self.net, params=params, weight=np.asarray(self.matrix @ params, dtype=np.float64))


@njit(cache=True)
def _world_counts(worlds, clause_start, lit_atom, lit_positive, is_hard, param_start, param_index, param_coef, n_params):
    n_worlds = worlds.shape[0]
    n_clauses = len(clause_start) - 1
    out = np.zeros((n_worlds, n_params))
    for s in range(n_worlds):
        for c in range(n_clauses):
            if is_hard[c] or param_start[c] == param_start[c + 1]:
                continue
            sat = False
            for i in range(clause_start[c], clause_start[c + 1]):
                if worlds[s, lit_atom[i]] == lit_positive[i]:
                    sat = True
                    break
            if sat:
                for j in range(param_start[c], param_start[c + 1]):
                    out[s, param_index[j]] += param_coef[j]
    return out


def world_counts(net: GroundNetwork, worlds: np.ndarray) -> np.ndarray:
    """Feature counts of each world: ``float64[n_worlds, n_params]`` for a
    ``bool[n_worlds, n_atoms]`` array (or ``float64[n_params]`` for one world)."""
    worlds = np.asarray(worlds, dtype=np.bool_)
    single = worlds.ndim == 1
    w2 = np.ascontiguousarray(worlds.reshape(1, -1) if single else worlds)
    out = _world_counts(
        w2, net.clause_start, net.lit_atom, net.lit_positive, net.is_hard,
        net.param_start, net.param_index, net.param_coef, net.n_params,
    )
    return out[0] if single else out


def literal_order(net: GroundNetwork) -> tuple[np.ndarray, np.ndarray]:
    """Literal ids grouped by atom (CSR): ``(atom_lit_start[n_atoms+1], atom_lits)``."""
    atom_lits = np.argsort(net.lit_atom, kind="stable").astype(np.int64)
    start = np.zeros(net.n_atoms + 1, dtype=np.int64)
    np.cumsum(np.bincount(net.lit_atom, minlength=net.n_atoms), out=start[1:])
    return start, atom_lits


def expand_ranges(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate ``range(starts[k], ends[k])`` for all k without a Python loop.

    Returns ``(values, owner)`` where ``owner[j]`` is the k whose range holds
    ``values[j]``."""
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(ends, dtype=np.int64) - starts
    total = int(lengths.sum())
    owner = np.repeat(np.arange(len(starts), dtype=np.int64), lengths)
    if total == 0:
        return np.zeros(0, dtype=np.int64), owner
    offsets = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return starts[owner] + offsets, owner
