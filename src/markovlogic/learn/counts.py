"""Feature counts: n_i(world) = sum of ``param_coef`` over the satisfied soft
clauses that carry parameter i (d score / d params).

One compiled kernel counts many worlds at once (the samples of MC-SAT, the MAP
worlds of the perceptron); a sparse clause x parameter matrix serves the
vectorised computations of pseudo-likelihood.
"""

from __future__ import annotations

import weakref
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
    """``net.with_params(params)`` for repeated calls: the clause weights by
    the network's compiled per-clause sum (:func:`markovlogic.ground.kernels.clause_weights`),
    with no clause x parameter matrix kept (on UW-CSE's 6 M clauses that
    matrix was 100 MB for the life of learning)."""

    def __init__(self, net: GroundNetwork) -> None:
        self.net = net

    def __call__(self, params: np.ndarray) -> GroundNetwork:
        return self.net.with_params(params)


@njit(cache=True)
def _clause_violated(world, c, clause_start, lit_atom, lit_positive):
    for i in range(clause_start[c], clause_start[c + 1]):
        if world[lit_atom[i]] == lit_positive[i]:
            return False
    return True


@njit(cache=True)
def _sparse_counts(worlds, anchor_start, anchor_clause, positive_only, counted, clause_start, lit_atom,
                   lit_positive, param_start, param_index, param_coef, total, out):
    """Feature counts of each world (row of ``out``).

    Sparse worlds: start from every counted clause satisfied (``total``) and
    subtract the clauses the world violates. A clause with a negative literal
    is violated only when that literal's atom is true, so each such clause is
    checked from its anchor (the atom of its first negative literal), in the
    worlds where the anchor is true; clauses of positive literals only are
    checked in every world. Dense worlds (the anchored work would exceed a
    quarter of the clauses): a sequential scan of all clauses, which reads
    memory in order and is faster there."""
    n_atoms = worlds.shape[1]
    n_clauses = len(clause_start) - 1
    for s in range(worlds.shape[0]):
        world = worlds[s]
        work = 0
        for a in range(n_atoms):
            if world[a]:
                work += anchor_start[a + 1] - anchor_start[a]
        if 4 * work > n_clauses:
            for c in range(n_clauses):
                if counted[c] and not _clause_violated(world, c, clause_start, lit_atom, lit_positive):
                    for j in range(param_start[c], param_start[c + 1]):
                        out[s, param_index[j]] += param_coef[j]
            continue
        for j in range(len(total)):
            out[s, j] = total[j]
        for a in range(n_atoms):
            if not world[a]:
                continue
            for k in range(anchor_start[a], anchor_start[a + 1]):
                c = anchor_clause[k]
                if _clause_violated(world, c, clause_start, lit_atom, lit_positive):
                    for j in range(param_start[c], param_start[c + 1]):
                        out[s, param_index[j]] -= param_coef[j]
        for k in range(len(positive_only)):
            c = positive_only[k]
            if _clause_violated(world, c, clause_start, lit_atom, lit_positive):
                for j in range(param_start[c], param_start[c + 1]):
                    out[s, param_index[j]] -= param_coef[j]


@njit(cache=True)
def _anchor_index(n_atoms, n_params, clause_start, lit_atom, lit_positive, is_hard, param_start, param_index,
                  param_coef):
    """The arrays of ``FeatureCounter`` in two passes over the clauses."""
    n_clauses = len(clause_start) - 1
    counted = np.zeros(n_clauses, dtype=np.bool_)
    anchor = np.full(n_clauses, -1, dtype=np.int32)       # clause ids fit int32, as the network's reverse index
    total = np.zeros(n_params)
    start = np.zeros(n_atoms + 1, dtype=np.int64)
    n_positive = 0
    for c in range(n_clauses):
        if is_hard[c] or param_start[c] == param_start[c + 1] or clause_start[c] == clause_start[c + 1]:
            continue
        counted[c] = True
        for j in range(param_start[c], param_start[c + 1]):
            total[param_index[j]] += param_coef[j]
        for i in range(clause_start[c], clause_start[c + 1]):
            if not lit_positive[i]:
                anchor[c] = lit_atom[i]
                break
        if anchor[c] >= 0:
            start[anchor[c] + 1] += 1
        else:
            n_positive += 1
    for a in range(n_atoms):
        start[a + 1] += start[a]
    fill = start[:-1].copy()
    anchored = np.empty(start[n_atoms], dtype=np.int32)
    positive = np.empty(n_positive, dtype=np.int32)
    k = 0
    for c in range(n_clauses):
        if not counted[c]:
            continue
        if anchor[c] >= 0:
            anchored[fill[anchor[c]]] = c
            fill[anchor[c]] += 1
        else:
            positive[k] = c
            k += 1
    return counted, start, anchored, positive, total


class FeatureCounter:
    """Feature counts of many worlds, fast when the worlds are sparse (few true
    atoms, as relational data is): n(world) = n(all satisfied) minus the
    features of the violated clauses, found from the true atoms (see
    ``_unsat_counts``). Built once per network with numpy."""

    def __init__(self, net: GroundNetwork) -> None:
        # the arrays, not the network: the cache below holds counters weakly
        # by network, and a counter referring to its network would keep it
        # (and its millions of clauses) alive for the life of the process
        self._arrays = (net.clause_start, net.lit_atom, net.lit_positive, net.param_start, net.param_index,
                        net.param_coef)
        (self.counted, self.anchor_start, self.anchor_clause, self.positive_only,
         self.total) = _anchor_index(net.n_atoms, net.n_params, net.clause_start, net.lit_atom, net.lit_positive,
                                     net.is_hard, net.param_start, net.param_index, net.param_coef)

    @classmethod
    def of(cls, net: GroundNetwork) -> "FeatureCounter":
        """The counter of ``net``, built once per network object."""
        counter = _COUNTERS.get(net)
        if counter is None:
            counter = _COUNTERS[net] = cls(net)
        return counter

    def __call__(self, worlds: np.ndarray) -> np.ndarray:
        worlds = np.asarray(worlds, dtype=np.bool_)
        single = worlds.ndim == 1
        w2 = np.ascontiguousarray(worlds.reshape(1, -1) if single else worlds)
        out = np.zeros((len(w2), len(self.total)))
        clause_start, lit_atom, lit_positive, param_start, param_index, param_coef = self._arrays
        _sparse_counts(w2, self.anchor_start, self.anchor_clause, self.positive_only, self.counted,
                       clause_start, lit_atom, lit_positive, param_start, param_index, param_coef, self.total, out)
        return out[0] if single else out


_COUNTERS: "weakref.WeakKeyDictionary[GroundNetwork, FeatureCounter]" = weakref.WeakKeyDictionary()


def world_counts(net: GroundNetwork, worlds: np.ndarray) -> np.ndarray:
    """Feature counts of each world: ``float64[n_worlds, n_params]`` for a
    ``bool[n_worlds, n_atoms]`` array (or ``float64[n_params]`` for one world)."""
    return FeatureCounter.of(net)(worlds)


@njit(cache=True)
def _violated_hard(world, clause_start, lit_atom, lit_positive, is_hard):
    out = []
    for c in range(len(clause_start) - 1):
        if is_hard[c]:
            violated = True
            for i in range(clause_start[c], clause_start[c + 1]):
                if world[lit_atom[i]] == lit_positive[i]:
                    violated = False
                    break
            if violated:
                out.append(c)
    return np.array(out, dtype=np.int64)


def violated_hard(net: GroundNetwork, world: np.ndarray) -> np.ndarray:
    """Ids of the hard clauses ``world`` violates."""
    if not net.is_hard.any():
        return np.zeros(0, dtype=np.int64)
    return _violated_hard(np.asarray(world, dtype=np.bool_), net.clause_start, net.lit_atom, net.lit_positive,
                          net.is_hard)


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
