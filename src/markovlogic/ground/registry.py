"""Registries that give ground atoms and weight parameters stable integer ids.

Ids only grow: an atom or parameter keeps its id across calls, which is what
cutting-plane inference needs (each separation round returns clauses over
the same atom-id space). Lookups are vectorised: an atom's arguments are
encoded as one int64 key (mixed radix over the positions of the constants in
their types' domains), kept sorted per predicate and searched with
``np.searchsorted``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import MarkovLogicError
from ..lang.ast import And, Atom, Compare, Const, Exists, Forall, Func, Iff, Implies, Not, Or, Term, Var
from ..logic.clauses import ClauseTemplate
from ..model import MLN
from ..store.store import EvidenceStore
from .network import WeightParam

KEY_LIMIT = 2**62


DENSE_LIMIT = 1 << 24


class _KeyTable:
    """int64 keys -> ids, growing: a dense array when the key space is small,
    else sorted keys searched with ``np.searchsorted``."""

    def __init__(self, space: int) -> None:
        self.dense = np.full(space, -1, dtype=np.int32) if space <= DENSE_LIMIT else None
        self.keys = np.zeros(0, dtype=np.int64)
        self.ids = np.zeros(0, dtype=np.int32)

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Ids of ``keys`` (-1 where absent)."""
        if self.dense is not None:
            return self.dense[keys]
        if len(self.keys) == 0:
            return np.full(len(keys), -1, dtype=np.int32)
        pos = np.searchsorted(self.keys, keys)
        pos_c = np.minimum(pos, len(self.keys) - 1)
        hit = self.keys[pos_c] == keys
        return np.where(hit, self.ids[pos_c], -1).astype(np.int32)

    def add(self, new_keys: np.ndarray, first_id: int) -> np.ndarray:
        """Insert sorted unique ``new_keys`` (absent so far) with consecutive ids."""
        ids = np.arange(first_id, first_id + len(new_keys), dtype=np.int32)
        if self.dense is not None:
            self.dense[new_keys] = ids
            return ids
        keys = np.concatenate([self.keys, new_keys])
        all_ids = np.concatenate([self.ids, ids])
        order = np.argsort(keys, kind="stable")
        self.keys = keys[order]
        self.ids = all_ids[order]
        return ids


def _decoder(store: EvidenceStore, types: list[str]):
    """The inverse of :func:`_encoder`'s function: keys -> argument rows."""
    domains = [store.domain(t) for t in types]
    sizes = [max(len(d), 1) for d in domains]
    strides = np.ones(len(sizes), dtype=np.int64)
    for j in range(len(sizes) - 2, -1, -1):
        strides[j] = strides[j + 1] * sizes[j + 1]

    def decode(keys: np.ndarray) -> np.ndarray:
        keys = np.asarray(keys, dtype=np.int64)
        out = np.empty((len(keys), len(domains)), dtype=np.int32)
        for j, dom in enumerate(domains):
            out[:, j] = dom[(keys // strides[j]) % sizes[j]]
        return out

    return decode


def _encoder(store: EvidenceStore, types: list[str], what: str):
    """A function mapping argument rows (constant ids) to int64 keys (mixed
    radix over the constants' positions in their types), and the key space."""
    maps = [store.positions(t) for t in types]
    sizes = [max(len(store.domain(t)), 1) for t in types]
    total = 1
    for s in sizes:
        total *= s
    if total >= KEY_LIMIT:
        raise MarkovLogicError(f"{what}: too many possible groundings to index ({total:.3g})")
    strides = np.ones(len(sizes), dtype=np.int64)
    for j in range(len(sizes) - 2, -1, -1):
        strides[j] = strides[j + 1] * sizes[j + 1]

    def encode(args: np.ndarray) -> np.ndarray:
        key = np.zeros(len(args), dtype=np.int64)
        for j, pmap in enumerate(maps):
            pos = pmap[args[:, j]]
            if len(args) and pos.min(initial=0) < 0:
                raise MarkovLogicError(f"{what}: argument {j + 1} is a constant outside its type")
            if strides[j] == 1:
                key += pos
            else:
                key += pos.astype(np.int64) * strides[j]
        return key

    return encode, total


class AtomRegistry:
    """(predicate, constant ids) <-> atom id."""

    def __init__(self, store: EvidenceStore) -> None:
        self.store = store
        self.n_preds = len(store.preds)
        self.max_arity = max([p.arity for p in store.preds.values()] + [1])
        self._tables: dict[int, _KeyTable] = {}
        self._encoders: dict[int, object] = {}
        self._decoders: dict[int, object] = {}
        self._pred_chunks: list[np.ndarray] = []
        self._args_chunks: list[np.ndarray] = []
        self._cache: tuple[np.ndarray, np.ndarray] | None = None
        self.n_atoms = 0
        self._infos = list(store.preds.values())

    def _encode(self, k: int, args: np.ndarray) -> np.ndarray:
        enc = self._encoders.get(k)
        if enc is None:
            info = self._infos[k]
            enc = _encoder(self.store, list(info.arg_types), f"predicate {info.name}")
            self._encoders[k] = enc
        return enc[0](args)

    def keys(self, k: int, args: np.ndarray) -> np.ndarray:
        """The int64 keys of argument rows (int32[R, arity]) of predicate ``k``
        (int32 when the predicate's key space fits: half the memory)."""
        keys = self._encode(k, np.asarray(args, dtype=np.int32).reshape(len(args), self._infos[k].arity))
        return keys.astype(np.int32) if self._encoders[k][1] < 2**31 - 1 else keys

    def register_keys(self, k: int, keys: np.ndarray) -> None:
        """Register the atoms of sorted unique ``keys`` of predicate ``k`` that
        are new, in key order (as :meth:`ids` does with the rows it is given)."""
        if len(keys) == 0:
            return
        self._encode(k, np.zeros((0, self._infos[k].arity), np.int32))     # the encoder, for the key space
        table = self._tables.get(k)
        if table is None:
            table = self._tables[k] = _KeyTable(self._encoders[k][1])
        keys = np.asarray(keys, dtype=np.int64)
        new = keys[table.find(keys) < 0]
        if len(new):
            dec = self._decoders.get(k)
            if dec is None:
                dec = self._decoders[k] = _decoder(self.store, list(self._infos[k].arg_types))
            table.add(new, self.n_atoms)
            self._append(k, dec(new))

    def find_keys(self, k: int, keys: np.ndarray) -> np.ndarray:
        """Atom ids (int32) of registered keys of predicate ``k`` (-1 if absent)."""
        table = self._tables.get(k)
        if table is None:
            return np.full(len(keys), -1, dtype=np.int32)
        return table.find(keys)

    def ids(self, k: int, args: np.ndarray, add: bool = True) -> np.ndarray:
        """Atom ids of the rows of ``args`` (int32[R, arity]) of predicate ``k``;
        new atoms are registered when ``add`` (else -1)."""
        args = np.asarray(args, dtype=np.int32)
        if args.ndim != 2:
            args = args.reshape(len(args), self._infos[k].arity)
        keys = self._encode(k, args)
        table = self._tables.get(k)
        if table is None:
            table = self._tables[k] = _KeyTable(self._encoders[k][1])
        out = table.find(keys)
        if add:
            missing = out < 0
            if missing.any():
                new_keys, first = np.unique(keys[missing], return_index=True)
                new_args = args[np.flatnonzero(missing)[first]]
                table.add(new_keys, self.n_atoms)
                self._append(k, new_args)
                out[missing] = table.find(keys[missing])
        return out

    def _append(self, k: int, args: np.ndarray) -> None:
        padded = np.full((len(args), self.max_arity), -1, dtype=np.int32)
        padded[:, : args.shape[1]] = args
        self._pred_chunks.append(np.full(len(args), k, dtype=np.int32))
        self._args_chunks.append(padded)
        self.n_atoms += len(args)
        self._cache = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(atom_pred int32[n], atom_args int32[n, max_arity]) of every atom so far."""
        if self._cache is None or len(self._cache[0]) != self.n_atoms:
            if self._pred_chunks:
                pred = np.concatenate(self._pred_chunks)
                args = np.concatenate(self._args_chunks)
                self._pred_chunks, self._args_chunks = [pred], [args]
            else:
                pred = np.zeros(0, np.int32)
                args = np.zeros((0, self.max_arity), np.int32)
            self._cache = (pred, args)
        return self._cache


# ---------------------------------------------------------------- parameters


def _bind_term(t: Term, binding: dict[str, str]) -> Term:
    if isinstance(t, Var) and t.name in binding:
        return Const(binding[t.name])
    if isinstance(t, Func):
        return replace(t, args=tuple(_bind_term(a, binding) for a in t.args))
    return t


def bind_formula(f, binding: dict[str, str]):
    """A formula with some variables replaced by constants (for names of ``+``
    parameters)."""
    if isinstance(f, Atom):
        return replace(f, args=tuple(_bind_term(a, binding) for a in f.args))
    if isinstance(f, Compare):
        return replace(f, left=_bind_term(f.left, binding), right=_bind_term(f.right, binding))
    if isinstance(f, Not):
        return replace(f, body=bind_formula(f.body, binding))
    if isinstance(f, (And, Or, Implies, Iff)):
        return replace(f, left=bind_formula(f.left, binding), right=bind_formula(f.right, binding))
    if isinstance(f, (Forall, Exists)):
        inner = {k: v for k, v in binding.items() if k not in f.variables}
        return replace(f, body=bind_formula(f.body, inner))
    return f


class ParamRegistry:
    """Weight parameters: one per (formula, ``*`` variant) and per binding of
    its ``+`` variables; a generated template (``formula_index`` -1) has its own.

    A parameter's initial value is its formula's weight (0 for a formula
    without one); a clause refers to it with coefficient ``weight_scale``
    (Alchemy's split of a formula's weight among its CNF clauses).
    """

    def __init__(self, store: EvidenceStore, mln: MLN, templates: list[ClauseTemplate]) -> None:
        self.store = store
        self.mln = mln
        self.templates = templates
        self.values: list[float] = []
        self.info: list[WeightParam] = []
        self._tables: dict[tuple, _KeyTable] = {}
        self._encoders: dict[tuple, object] = {}
        self._count_per_group: dict[tuple, int] = {}
        self._templates_per_group: dict[tuple, int] = {}
        for t in templates:
            g = self.group(t, 0)
            self._templates_per_group[g] = self._templates_per_group.get(g, 0) + 1

    def group(self, t: ClauseTemplate, index: int) -> tuple:
        if t.formula_index >= 0:
            return ("f", t.formula_index, getattr(t, "variant", 0))
        return ("t", index)

    def initial_value(self, t: ClauseTemplate) -> float:
        if t.formula_index >= 0 and t.formula_index < len(self.mln.formulas):
            w = self.mln.formulas[t.formula_index].weight
            return 0.0 if w is None else float(w)
        return 0.0 if t.weight is None else float(t.weight)

    def coefficient(self, t: ClauseTemplate) -> float:
        if t.formula_index >= 0:
            return float(t.weight_scale)
        return 1.0

    def ids(self, index: int, t: ClauseTemplate, binding: np.ndarray | None) -> np.ndarray:
        """Parameter ids for rows whose ``+`` variables take the constant ids in
        ``binding`` (int32[R, n_plus]; None or zero columns: one parameter)."""
        g = self.group(t, index)
        n = 1 if binding is None else len(binding)
        if binding is None or binding.shape[1] == 0:
            binding = np.zeros((n, 0), dtype=np.int32)
        enc = self._encoders.get(g)
        if enc is None:
            types = t.variable_types
            enc = _encoder(self.store, [types[v] for v in t.plus_vars], "+ variables")
            self._encoders[g] = enc
        table = self._tables.get(g)
        if table is None:
            table = self._tables[g] = _KeyTable(enc[1])
        keys = enc[0](binding) if binding.shape[1] else np.zeros(n, dtype=np.int64)
        out = table.find(keys)
        missing = out < 0
        if missing.any():
            new_keys, first = np.unique(keys[missing], return_index=True)
            new_rows = binding[np.flatnonzero(missing)[first]]
            table.add(new_keys, len(self.values))
            self._new_params(t, index, new_rows)
            out[missing] = table.find(keys[missing])
        return out

    def ensure(self, index: int, t: ClauseTemplate) -> None:
        """Register the parameter of a template without ``+`` variables (so every
        weighted formula has one even if it has no ground clause)."""
        if not t.plus_vars and not t.hard:
            self.ids(index, t, None)

    def _new_params(self, t: ClauseTemplate, index: int, rows: np.ndarray) -> None:
        names = self.store.constants.names
        value = self.initial_value(t)
        single = self._templates_per_group.get(self.group(t, index), 1) == 1
        decl = self.mln.formulas[t.formula_index] if 0 <= t.formula_index < len(self.mln.formulas) else None
        for row in rows:
            binding = {v: names[c] for v, c in zip(t.plus_vars, row)}
            self.values.append(value)
            self.info.append(
                WeightParam(
                    name=self._name(t, decl, binding, single),
                    formula_index=t.formula_index,
                    clause_index=t.clause_index if single else 0,
                    fixed=bool(t.fixed),
                )
            )

    def _name(self, t: ClauseTemplate, decl, binding: dict[str, str], single: bool) -> str:
        """The clause (one-clause formulas), the formula, or for a '*' variant
        the conjunction of its clauses, with '+' variables bound."""
        from ..logic.format import format_clause
        from ..logic.nnf import starred_atoms

        if single or decl is None:
            return format_clause(t, binding) if binding else format_clause(t)
        if starred_atoms(decl.formula):
            g = self.group(t, 0)
            parts = [format_clause(u, binding) for u in self.templates if self.group(u, 0) == g]
            return " ^ ".join(f"({p})" for p in parts)
        from ..lang.printer import format_formula

        return format_formula(bind_formula(decl.formula, binding))

    def arrays(self) -> tuple[np.ndarray, tuple[WeightParam, ...]]:
        return np.array(self.values, dtype=np.float64), tuple(self.info)
