"""The ground Markov network: flat numpy arrays that every algorithm reads.

Atoms are the unknown (non-evidence) ground atoms that matter for the query.
Clauses are stored in CSR form over those atoms, after evidence simplification
and merging of duplicates. A world is a ``bool`` array of length ``n_atoms``.

Semantics
    score(world) = sum of ``weight[c]`` over soft clauses ``c`` satisfied by the
    world. A clause is satisfied when at least one literal is true (literal i of
    clause c is ``world[lit_atom[i]] == lit_positive[i]``). Hard clauses and
    exactly-one blocks must hold. P(world) is proportional to exp(score) on worlds
    where they hold, and zero elsewhere.

    cost(world) = sum of |weight| over soft clauses not satisfied "as their sign
    wants": positive weight and violated, or negative weight and satisfied.

Weights are indexed, not copied: each clause's weight is the sum of
``param_coef * params[param_index]`` over its entries in the ``param_*`` CSR
arrays (several first-order clauses may merge into one ground clause; a
formula's weight is split among its CNF clauses; ``+`` variables give one
parameter per constant combination). ``weight`` caches that sum for the
current ``params``; :meth:`with_params` recomputes it for learning.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np


@dataclass(frozen=True)
class WeightParam:
    """One learnable weight: a first-order clause, or one constant combination of
    a ``+`` clause."""

    name: str                 # e.g. "hasPosition(x,Faculty) v !professor(x)" with + vars bound
    formula_index: int        # index of the FormulaDecl in MLN.formulas (-1 if none)
    clause_index: int = 0     # index of the CNF clause within the formula
    fixed: bool = False       # Tuffy's @: not learned


@dataclass(frozen=True, eq=False)
class GroundNetwork:
    # ---- atoms
    n_atoms: int
    atom_pred: np.ndarray          # int32[n_atoms]: index into ``predicates``
    atom_args: np.ndarray          # int32[n_atoms, max_arity], -1 padded: index into ``constants``
    predicates: tuple[str, ...]    # predicate names
    constants: tuple[str, ...]     # constant names by id
    is_query: np.ndarray           # bool[n_atoms]
    # ---- clauses (CSR)
    clause_start: np.ndarray       # int32 or int64[n_clauses + 1] (int32 while offsets fit)
    lit_atom: np.ndarray           # int32[n_lits]
    lit_positive: np.ndarray       # bool[n_lits]
    weight: np.ndarray             # float64[n_clauses] (0 for hard clauses)
    is_hard: np.ndarray            # bool[n_clauses]
    template_id: np.ndarray        # int32[n_clauses]: first first-order clause it came from (-1: block/other)
    # ---- weight table (CSR per clause)
    param_start: np.ndarray        # int32 or int64[n_clauses + 1] (int32 while offsets fit)
    param_index: np.ndarray        # int32[n_entries]
    param_coef: np.ndarray         # float64[n_entries]
    params: np.ndarray             # float64[n_params]
    param_info: tuple[WeightParam, ...]
    # ---- exactly-one blocks (CSR); atom_block[a] = block of atom a or -1
    block_start: np.ndarray        # int64[n_blocks + 1]
    block_atoms: np.ndarray        # int32[n_block_atoms]
    atom_block: np.ndarray         # int32[n_atoms]
    # ---- derived: reverse index and components
    atom_clause_start: np.ndarray  # int64[n_atoms + 1]
    atom_clause: np.ndarray        # int32[n_lits]: clause ids, per atom
    component: np.ndarray          # int32[n_atoms]
    n_components: int
    # ---- bookkeeping
    constant_score: float = 0.0    # weight of ground clauses fixed true by evidence (dropped)
    truth: np.ndarray | None = None  # int8[n_atoms]: known truth (training data), -1 unknown
    stats: dict = field(default_factory=dict)

    # ------------------------------------------------------------ sizes
    @property
    def n_clauses(self) -> int:
        return len(self.clause_start) - 1

    @property
    def n_blocks(self) -> int:
        return len(self.block_start) - 1

    @property
    def n_params(self) -> int:
        return len(self.params)

    def nbytes(self) -> int:
        return sum(
            v.nbytes for v in vars(self).values() if isinstance(v, np.ndarray)
        )

    # ------------------------------------------------------------ naming
    def atom_name(self, i: int) -> str:
        args = ",".join(self.constants[c] for c in self.atom_args[i] if c >= 0)
        return f"{self.predicates[self.atom_pred[i]]}({args})"

    def atom_names(self) -> list[str]:
        return [self.atom_name(i) for i in range(self.n_atoms)]

    def clause_literals(self, c: int) -> list[tuple[int, bool]]:
        s, e = self.clause_start[c], self.clause_start[c + 1]
        return list(zip(self.lit_atom[s:e].tolist(), self.lit_positive[s:e].tolist()))

    # ------------------------------------------------------------ evaluation
    def clause_true_counts(self, world: np.ndarray) -> np.ndarray:
        """Number of true literals of each clause in ``world`` (int64[n_clauses])."""
        from .kernels import true_counts

        return true_counts(self.clause_start, self.lit_atom, self.lit_positive, self._world(world))

    def satisfied(self, world: np.ndarray) -> np.ndarray:
        """bool[n_clauses]: whether each clause has a true literal (one compiled
        pass, one byte per clause and no per-literal temporaries)."""
        from .kernels import satisfied

        return satisfied(self.clause_start, self.lit_atom, self.lit_positive, self._world(world))

    def _world(self, world: np.ndarray) -> np.ndarray:
        world = np.ascontiguousarray(world, dtype=bool)
        if world.ndim != 1 or len(world) < self.n_atoms:
            raise IndexError(f"a world of this network is a bool array of length {self.n_atoms}, "
                             f"got shape {world.shape}")
        return world

    def score(self, world: np.ndarray) -> float:
        sat = self.satisfied(world)
        soft = ~self.is_hard
        return float(self.weight[soft & sat].sum())

    def cost(self, world: np.ndarray) -> float:
        sat = self.satisfied(world)
        soft = ~self.is_hard
        w = self.weight
        return float(np.abs(w[soft & (((w > 0) & ~sat) | ((w < 0) & sat))]).sum())

    def hard_violated(self, world: np.ndarray) -> int:
        """Violated hard clauses plus violated exactly-one blocks."""
        sat = self.satisfied(world)
        n = int((self.is_hard & ~sat).sum())
        if self.n_blocks:
            w = np.asarray(world, dtype=np.int64)
            per_block = np.add.reduceat(w[self.block_atoms], self.block_start[:-1]) if len(self.block_atoms) else np.zeros(0)
            n += int((per_block != 1).sum())
        return n

    def is_feasible(self, world: np.ndarray) -> bool:
        return self.hard_violated(world) == 0

    # ------------------------------------------------------------ weights
    def clause_weights(self, params: np.ndarray) -> np.ndarray:
        """Per-clause weights for a parameter vector (hard clauses get 0)."""
        from .kernels import clause_weights

        return clause_weights(self.param_start, self.param_index, self.param_coef, params, self.is_hard)

    def with_params(self, params: np.ndarray) -> "GroundNetwork":
        params = np.asarray(params, dtype=np.float64).copy()
        return replace(self, params=params, weight=self.clause_weights(params))

    def softened(self, hard_weight: float) -> "GroundNetwork":
        """The same network with every hard clause a soft clause of weight
        ``hard_weight`` (one new fixed parameter), as Alchemy treats hard
        formulas when they cannot all hold. Exactly-one blocks stay exact."""
        if not self.is_hard.any():
            return self
        hard = self.is_hard
        sizes = np.diff(self.param_start).astype(np.int64)
        entry_clause = np.repeat(np.arange(self.n_clauses), sizes)
        keep = ~hard[entry_clause]
        new_sizes = np.where(hard, 1, sizes)
        param_start = np.zeros(self.n_clauses + 1, dtype=np.int64)
        np.cumsum(new_sizes, out=param_start[1:])
        n_entries = int(param_start[-1])
        param_index = np.empty(n_entries, dtype=np.int32)
        param_coef = np.empty(n_entries, dtype=np.float64)
        # soft clauses keep their entries in place; each hard clause gets one entry
        slot = param_start[:-1][entry_clause[keep]] + (np.flatnonzero(keep) - self.param_start[:-1][entry_clause[keep]])
        param_index[slot] = self.param_index[keep]
        param_coef[slot] = self.param_coef[keep]
        hard_param = self.n_params
        param_index[param_start[:-1][hard]] = hard_param
        param_coef[param_start[:-1][hard]] = 1.0
        if n_entries < 2**31 - 1:
            param_start = param_start.astype(np.int32)
        params = np.append(self.params, float(hard_weight))
        info = self.param_info + (WeightParam(name="hard clauses (softened)", formula_index=-1, fixed=True),)
        weight = np.where(hard, float(hard_weight), self.weight)
        return replace(self, is_hard=np.zeros(self.n_clauses, dtype=bool), weight=weight,
                       param_start=param_start, param_index=param_index, param_coef=param_coef,
                       params=params, param_info=info)

    def feature_counts(self, world: np.ndarray) -> np.ndarray:
        """Sufficient statistics: d score / d params, for a world (float64[n_params])."""
        sat = self.satisfied(world).astype(np.float64)
        clause_of_entry = np.repeat(np.arange(self.n_clauses), np.diff(self.param_start))
        out = np.zeros(self.n_params, dtype=np.float64)
        np.add.at(out, self.param_index, self.param_coef * sat[clause_of_entry])
        return out

    # ------------------------------------------------------------ building
    @classmethod
    def from_arrays(
        cls,
        n_atoms: int,
        clause_start: np.ndarray,
        lit_atom: np.ndarray,
        lit_positive: np.ndarray,
        is_hard: np.ndarray,
        param_start: np.ndarray,
        param_index: np.ndarray,
        param_coef: np.ndarray,
        params: np.ndarray,
        param_info: tuple[WeightParam, ...],
        block_start: np.ndarray | None = None,
        block_atoms: np.ndarray | None = None,
        template_id: np.ndarray | None = None,
        atom_pred: np.ndarray | None = None,
        atom_args: np.ndarray | None = None,
        predicates: tuple[str, ...] = ("a",),
        constants: tuple[str, ...] = (),
        is_query: np.ndarray | None = None,
        constant_score: float = 0.0,
        truth: np.ndarray | None = None,
        stats: dict | None = None,
        components: tuple[np.ndarray, int] | None = None,
        reverse_index: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> "GroundNetwork":
        """Assemble a network, deriving weights, the reverse index and components.

        ``components`` (labels, count) and ``reverse_index`` (atom_clause_start,
        atom_clause) may be passed when the caller has them already (the
        grounder computes them with compiled kernels for large networks)."""
        clause_start = _offsets(clause_start)
        n_clauses = len(clause_start) - 1
        lit_atom = np.asarray(lit_atom, dtype=np.int32)
        lit_positive = np.asarray(lit_positive, dtype=bool)
        is_hard = np.asarray(is_hard, dtype=bool)
        if block_start is None:
            block_start = np.zeros(1, dtype=np.int64)
            block_atoms = np.zeros(0, dtype=np.int32)
        block_start = np.asarray(block_start, dtype=np.int64)
        block_atoms = np.asarray(block_atoms, dtype=np.int32)
        atom_block = np.full(n_atoms, -1, dtype=np.int32)
        n_blocks = len(block_start) - 1
        atom_block[block_atoms] = np.repeat(np.arange(n_blocks, dtype=np.int32), np.diff(block_start))
        if template_id is None:
            template_id = np.full(n_clauses, -1, dtype=np.int32)
        if atom_pred is None:
            atom_pred = np.zeros(n_atoms, dtype=np.int32)
        if atom_args is None:
            atom_args = np.arange(n_atoms, dtype=np.int32).reshape(-1, 1)
            constants = tuple(f"A{i}" for i in range(n_atoms))
        if is_query is None:
            is_query = np.ones(n_atoms, dtype=bool)

        # reverse index: atom -> clauses, CSR, stable by clause id
        if reverse_index is None:
            clause_of_lit = np.repeat(np.arange(n_clauses, dtype=np.int32), np.diff(clause_start))
            order = np.argsort(lit_atom, kind="stable")
            atom_clause = clause_of_lit[order].astype(np.int32)
            atom_clause_start = np.zeros(n_atoms + 1, dtype=np.int64)
            np.cumsum(np.bincount(lit_atom, minlength=n_atoms), out=atom_clause_start[1:])
        else:
            atom_clause_start, atom_clause = reverse_index

        if components is None:
            component, n_components = _components(n_atoms, clause_start, lit_atom, block_start, block_atoms)
        else:
            component, n_components = components

        net = cls(
            n_atoms=int(n_atoms),
            atom_pred=np.asarray(atom_pred, dtype=np.int32),
            atom_args=np.asarray(atom_args, dtype=np.int32),
            predicates=tuple(predicates),
            constants=tuple(constants),
            is_query=np.asarray(is_query, dtype=bool),
            clause_start=clause_start,
            lit_atom=lit_atom,
            lit_positive=lit_positive,
            weight=np.zeros(n_clauses, dtype=np.float64),
            is_hard=is_hard,
            template_id=np.asarray(template_id, dtype=np.int32),
            param_start=_offsets(param_start),
            param_index=np.asarray(param_index, dtype=np.int32),
            param_coef=np.asarray(param_coef, dtype=np.float64),
            params=np.asarray(params, dtype=np.float64),
            param_info=tuple(param_info),
            block_start=block_start,
            block_atoms=block_atoms,
            atom_block=atom_block,
            atom_clause_start=atom_clause_start,
            atom_clause=atom_clause,
            component=component,
            n_components=n_components,
            constant_score=float(constant_score),
            truth=None if truth is None else np.asarray(truth, dtype=np.int8),
            stats=dict(stats or {}),
        )
        object.__setattr__(net, "weight", net.clause_weights(net.params))
        return net

    @classmethod
    def from_clauses(
        cls,
        n_atoms: int,
        clauses: list[tuple[float | None, list[tuple[int, bool]]]],
        blocks: list[list[int]] | None = None,
        **kwargs,
    ) -> "GroundNetwork":
        """Small networks for tests and examples: ``clauses`` is a list of
        ``(weight, [(atom, positive), ...])`` with weight ``None`` for a hard
        clause. Each soft clause gets its own parameter."""
        sizes = [len(lits) for _, lits in clauses]
        clause_start = np.zeros(len(clauses) + 1, dtype=np.int64)
        np.cumsum(sizes, out=clause_start[1:])
        lit_atom = [a for _, lits in clauses for a, _ in lits]
        lit_positive = [p for _, lits in clauses for _, p in lits]
        is_hard = [w is None for w, _ in clauses]
        soft = [i for i, (w, _) in enumerate(clauses) if w is not None]
        has_param = np.array([0 if w is None else 1 for w, _ in clauses], dtype=np.int64)
        param_start = np.zeros(len(clauses) + 1, dtype=np.int64)
        np.cumsum(has_param, out=param_start[1:])
        params = [clauses[i][0] for i in soft]
        info = tuple(WeightParam(name=f"clause {i}", formula_index=i) for i in soft)
        blocks = blocks or []
        block_start = np.zeros(len(blocks) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in blocks], out=block_start[1:])
        block_atoms = np.array([a for b in blocks for a in b], dtype=np.int32)
        return cls.from_arrays(
            n_atoms=n_atoms,
            clause_start=clause_start,
            lit_atom=np.array(lit_atom, dtype=np.int32),
            lit_positive=np.array(lit_positive, dtype=bool),
            is_hard=np.array(is_hard, dtype=bool),
            param_start=param_start,
            param_index=np.arange(len(soft), dtype=np.int32),
            param_coef=np.ones(len(soft)),
            params=np.array(params, dtype=np.float64),
            param_info=info,
            block_start=block_start,
            block_atoms=block_atoms,
            template_id=np.arange(len(clauses), dtype=np.int32),
            **kwargs,
        )

    # ------------------------------------------------------------ subnetworks
    def component_atoms(self, k: int) -> np.ndarray:
        return np.flatnonzero(self.component == k).astype(np.int32)


def _offsets(start) -> np.ndarray:
    """CSR offsets as int32 while they fit (4 bytes per clause saved on each
    of the two offset arrays), int64 beyond 2^31 entries."""
    start = np.asarray(start)
    if len(start) and int(start[-1]) < np.iinfo(np.int32).max:
        return start.astype(np.int32, copy=False)
    return start.astype(np.int64, copy=False)


def _components(
    n_atoms: int,
    clause_start: np.ndarray,
    lit_atom: np.ndarray,
    block_start: np.ndarray,
    block_atoms: np.ndarray,
) -> tuple[np.ndarray, int]:
    """Connected components of the atom graph (clauses and blocks link their atoms)."""
    import scipy.sparse as sp        # not at import: scipy costs a small run 0.2 s
    from scipy.sparse.csgraph import connected_components

    if n_atoms == 0:
        return np.zeros(0, dtype=np.int32), 0
    # link each literal's atom to the first atom of its clause (a star per clause)
    sizes = np.diff(clause_start)
    first = np.repeat(lit_atom[clause_start[:-1][sizes > 0]], sizes[sizes > 0])
    bsizes = np.diff(block_start)
    bfirst = np.repeat(block_atoms[block_start[:-1][bsizes > 0]], bsizes[bsizes > 0]) if len(block_atoms) else np.zeros(0, np.int32)
    rows = np.concatenate([first, bfirst]).astype(np.int64)
    cols = np.concatenate([lit_atom, block_atoms]).astype(np.int64)
    graph = sp.coo_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(n_atoms, n_atoms)).tocsr()
    n, labels = connected_components(graph, directed=False)
    return labels.astype(np.int32), int(n)
