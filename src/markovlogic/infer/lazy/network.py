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

from ...errors import ResourceError
from ...ground.activation import Activation, remerge
from ...ground.assemble import GroundClauses
from ..kernels_state import SatArrays, _csr_gather, counting_reverse

# working memory per byte of held clauses: the kernels' arrays (normalised
# clauses, reverse index, clause records, per-atom values) and, during a
# rebuild, the previous ones (measured on tuffy/cse and Cora: 4-5x; rounded up)
WORK_FACTOR = 6


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
        if len(self._keys):
            pos = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
            collide = bool((self._keys[pos] == keys).any())
        else:
            collide = False
        if collide:
            # same literals as held clauses: merge everything again
            merged = remerge(self.parts + [gc], self.grounder.params.arrays()[0])
            self.parts = [merged]
            self._keys = np.sort(literal_keys(merged))
            self.remerged += 1
        else:
            self.parts.append(gc)
            self._keys = np.sort(np.concatenate([self._keys, keys]), kind="stable")
        self.add_atoms(gc.lit_atom)
        self.check_budget()

    def check_budget(self) -> None:
        """Stop before the active part outgrows the memory budget."""
        from ...resources import format_bytes

        g = self.grounder
        need = WORK_FACTOR * self.nbytes()
        if need > g.memory_limit - g.bytes_used:
            raise ResourceError(
                f"lazy inference: the active part of the network grew to {self.n_clauses:,} clauses over "
                f"{self.n_atoms:,} atoms ({int(self.act.active.sum()):,} active), about {format_bytes(need)} "
                f"with the search's arrays; the memory budget is {format_bytes(g.memory_limit)}. Ways out: "
                "a larger --memory-limit, fewer flips or samples (--max-flips, --samples), more evidence, or "
                "--method cpi (cutting planes) for MAP.")

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
        lit_atom = (self.local[gc.lit_atom] if len(gc.lit_atom) else np.zeros(0, np.int64)).astype(np.int32)
        block_start, block_atoms = blocks
        block_atoms = self.local[block_atoms].astype(np.int32) if len(block_atoms) else block_atoms
        return canonical_sat_arrays(self.n_atoms, gc.clause_start, lit_atom, gc.lit_positive, self.weights(gc),
                                    gc.is_hard, block_start, block_atoms)

    def nbytes(self) -> int:
        arrays = [self.local, self.atoms, self._keys]
        for p in self.parts:
            arrays += [p.clause_start, p.lit_atom, p.lit_positive, p.is_hard, p.template_id, p.param_start,
                       p.param_index, p.param_coef]
        return int(sum(a.nbytes for a in arrays))


def start_held(grounder) -> tuple[Activation, ActiveNetwork, tuple[np.ndarray, np.ndarray]]:
    """The start of lazy MaxWalkSAT and lazy MC-SAT: an activation over the
    grounder, the held network with the atoms of the ``!`` blocks and the
    initial clauses, and the blocks ``(block_start, block_atoms)``."""
    act = Activation(grounder)
    net = ActiveNetwork(act)
    bs, ba, _ = grounder.blocks()
    net.add_atoms(ba)
    net.add(act.initial(active=ba))
    return act, net, (bs, ba)


def canonical_sat_arrays(n_atoms: int, clause_start, lit_atom, lit_positive, weight, is_hard,
                         block_start, block_atoms) -> SatArrays:
    """:func:`..kernels_state.normalise_clauses` for clauses that are already
    canonical (merged by ``ground.assemble.merge``: no repeated atom, no
    tautology, no empty clause): only zero-weight soft clauses are dropped,
    so a rebuild skips the duplicate and tautology passes."""
    clause_start = np.asarray(clause_start, dtype=np.int64)
    weight = np.asarray(weight, dtype=np.float64)
    is_hard = np.asarray(is_hard, dtype=bool)
    keep = is_hard | (weight != 0.0)
    kept = np.flatnonzero(keep)
    if len(kept) < len(keep):
        clause_start, idx = _csr_gather(clause_start, kept)
        lit_atom, lit_positive = lit_atom[idx], lit_positive[idx]
    lit_atom = np.ascontiguousarray(lit_atom, dtype=np.int32)
    lit_positive = np.ascontiguousarray(lit_positive, dtype=bool)
    n_clauses = len(kept)
    lit_clause = np.repeat(np.arange(n_clauses, dtype=np.int32), np.diff(clause_start))
    atom_lit_start, atom_lit = counting_reverse(n_atoms, lit_atom)
    block_start = np.asarray(block_start, dtype=np.int64)
    block_atoms = np.asarray(block_atoms, dtype=np.int32)
    atom_block = np.full(n_atoms, -1, dtype=np.int32)
    atom_block[block_atoms] = np.repeat(np.arange(len(block_start) - 1, dtype=np.int32), np.diff(block_start))
    return SatArrays(
        n_atoms=int(n_atoms), clause_start=clause_start, lit_atom=lit_atom, lit_positive=lit_positive,
        lit_clause=lit_clause, weight=np.where(is_hard, 0.0, weight)[kept], is_hard=is_hard[kept],
        orig_clause=kept.astype(np.int64), atom_lit_start=atom_lit_start, atom_lit=atom_lit,
        occ_clause=lit_clause[atom_lit], occ_positive=lit_positive[atom_lit], block_start=block_start,
        block_atoms=block_atoms, atom_block=atom_block, const_score=0.0, const_cost=0.0, n_empty_hard=0,
    )
