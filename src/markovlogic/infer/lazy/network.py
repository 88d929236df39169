"""The clauses a lazy algorithm holds, as arrays its compiled kernels read.

:class:`ActiveNetwork` accumulates the merged clause batches that
:class:`~markovlogic.ground.activation.Activation` returns (over the
grounder's registry atom ids) and numbers the atoms they mention *locally*,
in order of appearance: local ids only grow, so a world array is carried
from one build of the kernels' arrays to the next by appending ``False`` for
the new atoms. :meth:`ActiveNetwork.sat_arrays` builds the normalised
:class:`~markovlogic.infer.kernels_state.SatArrays` of everything held (a
rebuild is one pass of numpy over the held clauses; the lazy algorithms
rebuild after each activation round, never per atom).

A batch whose clauses have the same literals as clauses already held (a
positive and a negative template's groundings, fetched at different times)
is merged with them again, so that the held clauses are always those of the
full grounding restricted to what is held (``ground/activation.py``).
"""

from __future__ import annotations

import numpy as np

from ...ground.activation import Activation, remerge
from ...ground.assemble import GroundClauses
from ..kernels_state import SatArrays, normalise_clauses


def _mix(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def literal_keys(gc: GroundClauses) -> np.ndarray:
    """A 64-bit key of each clause's set of literals (order-free)."""
    n = gc.n_clauses
    with np.errstate(over="ignore"):
        code = 2 * gc.lit_atom.astype(np.uint64) + (~gc.lit_positive).astype(np.uint64)
        keys = np.zeros(n, dtype=np.uint64)
        np.add.at(keys, np.repeat(np.arange(n), np.diff(gc.clause_start)), _mix(code))
        return _mix(keys)


class ActiveNetwork:
    """Held clauses, local atom ids and the active (complete) atoms."""

    def __init__(self, activation: Activation) -> None:
        self.act = activation
        self.grounder = activation.g
        self.parts: list[GroundClauses] = []
        self._keys = np.zeros(0, dtype=np.uint64)
        self.local = np.full(0, -1, dtype=np.int64)      # registry id -> local id
        self.atoms = np.zeros(0, dtype=np.int64)          # local id -> registry id
        self.remerged = 0
        self._cache: GroundClauses | None = None

    # ------------------------------------------------------------ atoms
    @property
    def n_atoms(self) -> int:
        return len(self.atoms)

    def add_atoms(self, registry_ids: np.ndarray) -> np.ndarray:
        """Give local ids to registry atoms that have none; return their local ids."""
        ids = np.asarray(registry_ids, dtype=np.int64)
        n = self.grounder.registry.n_atoms
        if len(self.local) < n:
            self.local = np.concatenate([self.local, np.full(n - len(self.local), -1, np.int64)])
        if len(ids):
            new = np.unique(ids[self.local[ids] < 0])
            if len(new):
                self.local[new] = np.arange(len(self.atoms), len(self.atoms) + len(new))
                self.atoms = np.concatenate([self.atoms, new])
        return self.local[ids]

    def complete(self) -> np.ndarray:
        """Per local atom: active (every clause it can break is held)."""
        self.act._grow()
        return self.act.active[self.atoms]

    # ------------------------------------------------------------ clauses
    def add(self, gc: GroundClauses) -> None:
        if gc.n_clauses == 0:
            return
        keys = literal_keys(gc)
        self._cache = None
        if len(self._keys) and np.isin(keys, self._keys).any():
            # same literals as held clauses: merge everything again
            merged = remerge(self.parts + [gc], self.grounder.params.arrays()[0])
            self.parts = [merged]
            self._keys = np.sort(literal_keys(merged))
            self.remerged += 1
        else:
            self.parts.append(gc)
            self._keys = np.union1d(self._keys, keys)
        self.add_atoms(gc.lit_atom)

    @property
    def n_clauses(self) -> int:
        return int(sum(p.n_clauses for p in self.parts))

    def clauses(self) -> GroundClauses:
        """Everything held, as one clause set over registry ids."""
        if self._cache is None:
            from ...ground.activation import concat

            self._cache = concat(self.parts)
        return self._cache

    def weights(self, gc: GroundClauses) -> np.ndarray:
        values = np.asarray(self.grounder.params.arrays()[0], dtype=np.float64)
        entries = gc.param_coef * values[gc.param_index]
        owner = np.repeat(np.arange(gc.n_clauses), np.diff(gc.param_start))
        return np.bincount(owner, weights=entries, minlength=gc.n_clauses)

    def sat_arrays(self, blocks: tuple[np.ndarray, np.ndarray]) -> SatArrays:
        """The normalised arrays of every held clause over local ids, with the
        exactly-one ``blocks`` (registry ids; their atoms must have local ids)."""
        gc = self.clauses()
        lit_atom = self.local[gc.lit_atom] if len(gc.lit_atom) else np.zeros(0, np.int64)
        block_start, block_atoms = blocks
        return normalise_clauses(
            self.n_atoms, gc.clause_start, lit_atom.astype(np.int32), gc.lit_positive, self.weights(gc),
            gc.is_hard, block_start, self.local[block_atoms].astype(np.int32) if len(block_atoms) else block_atoms,
        )

    def nbytes(self) -> int:
        arrays = [self.local, self.atoms, self._keys]
        for p in self.parts:
            arrays += [p.clause_start, p.lit_atom, p.lit_positive, p.is_hard, p.template_id, p.param_start,
                       p.param_index, p.param_coef]
        return int(sum(a.nbytes for a in arrays))
