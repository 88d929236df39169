"""The evidence store: types, constants and evidence as DuckDB tables.

Tables (names use indices, so predicate names never need quoting):

``consts(id, name, sval, num, inum)``
    every constant; ``sval`` is the name without quotes, ``num``/``inum`` its
    numeric value (NULL when not a number).
``cval(kind, inum, sval, id)``
    value -> constant, for the results of internal functions.
``d_<k>(cid)``
    the domain of type k.
``p_<k>(a0, ..., t)``
    the listed atoms of predicate k with their truth ``t``: 1 true, 0 false,
    -1 unknown. Closed-world predicates keep only true and unknown rows (false
    is their default); query predicates whose listed atoms are training labels
    (``query_truth``) have an empty table (their atoms are all unknown) and
    the labels in ``labels_<k>``.
``f_<k>(a0, ..., v)``
    the values of user function k.

Exactly-one predicates (``!`` in the declaration) are completed here: when
evidence makes one value of a block true, the other values become false
evidence. Every check of the input happens before any table is built, so
bad input fails fast with file and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import duckdb
import numpy as np

from ..errors import EvidenceError, QueryError
from ..lang.ast import Const, FunctionValue, Query, Var
from ..lang.dbcolumns import EvidenceColumns, PredRows, first_appearance
from ..model import MLN, Database
from .constants import ConstantTable
from .dedupe import scan_duplicates
from .world import WorldSpec, resolve_world

TRUE, FALSE, UNKNOWN = 1, 0, -1


@dataclass(frozen=True)
class PredicateInfo:
    index: int
    name: str
    arg_types: tuple[str, ...]
    mutex: tuple[bool, ...]
    closed: bool            # an atom not listed is false (else unknown)
    query: bool             # named by a query
    labels: bool            # listed atoms are training labels, not evidence
    table: str
    n_true: int = 0
    n_false: int = 0
    n_unknown: int = 0

    @property
    def arity(self) -> int:
        return len(self.arg_types)

    @property
    def default(self) -> int:
        """Truth of an atom that is not listed."""
        return FALSE if self.closed else UNKNOWN

    @property
    def n_rows(self) -> int:
        return self.n_true + self.n_false + self.n_unknown

    @property
    def has_block(self) -> bool:
        return any(self.mutex)


@dataclass(frozen=True)
class FunctionInfo:
    index: int
    name: str
    arg_types: tuple[str, ...]
    return_type: str
    table: str
    n_values: int = 0


def open_database(db_path: str | None, config: dict):
    """A DuckDB connection: in memory, or the store file ``db_path`` (created
    if missing). A file that is not a DuckDB store is never touched (an
    evidence ``.db`` file passed by mistake); a store another process holds
    is a clear error."""
    import re
    from pathlib import Path

    from ..errors import OptionError

    if not db_path:
        return duckdb.connect(":memory:", config=config)
    path = Path(db_path)
    if path.is_dir():
        raise OptionError(f"--db-file {path} is a directory, not a store file")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise OptionError(f"--db-file {path}: the folder {folder} does not exist")
    if path.exists() and path.stat().st_size > 0:
        try:
            with open(path, "rb") as handle:
                head = handle.read(12)
        except OSError as exc:
            raise OptionError(f"--db-file {path}: cannot read it ({exc.strerror or exc})") from None
        if head[8:12] != b"DUCK":
            raise OptionError(
                f"--db-file {path} exists and is not a DuckDB store; refusing to touch it (is it an evidence "
                ".db file? name the store differently, e.g. evidence.duckdb)")
    try:
        return duckdb.connect(str(path), config=config)
    except duckdb.IOException as exc:
        text = str(exc)
        if "lock" in text.lower():
            pid = re.search(r"PID (\d+)", text)
            who = f" (PID {pid.group(1)})" if pid else ""
            raise OptionError(f"the store {path} is in use by another process{who}; wait for it to finish "
                              "or give another --db-file") from None
        raise OptionError(f"cannot open the store {path}: {text}") from None
    except duckdb.Error as exc:
        raise OptionError(f"cannot open the store {path}: {exc}") from None


def _where(pos) -> dict:
    if pos is None:
        return {}
    return dict(file=pos.file, line=pos.line, column=pos.column)


def _source_line(pos) -> str | None:
    if pos is None or not pos.file or pos.file.startswith("<"):
        return None
    try:
        with open(pos.file, encoding="utf-8", errors="replace") as handle:
            for i, line in enumerate(handle, start=1):
                if i == pos.line:
                    return line.rstrip("\n")
    except OSError:
        return None
    return None


def evidence_error(message: str, pos) -> EvidenceError:
    return EvidenceError(message, source_line=_source_line(pos), **_where(pos))


def _intern_rows(consts: ConstantTable, arg_types: Sequence[str], arg_rows: list) -> np.ndarray:
    """Add the constants of ``arg_rows`` (tuples of names) to their argument
    types and return their ids as an ``(len(arg_rows), len(arg_types))`` array."""
    cols = []
    for j, tname in enumerate(arg_types):
        column = [r[j] for r in arg_rows]
        consts.add_many(tname, column)
        ids = consts.ids
        cols.append(np.fromiter((ids[c] for c in column), dtype=np.int32, count=len(column)))
    return np.stack(cols, axis=1) if cols else np.zeros((len(arg_rows), 0), np.int32)


def row_keys(rows: np.ndarray) -> np.ndarray:
    """One int64 per row of a non-negative int32 matrix, equal exactly when the
    rows are equal (packed when the columns fit in 63 bits, else ranks of
    ``np.unique(axis=0)``)."""
    rows = np.asarray(rows)
    n, k = rows.shape
    if k == 0:
        return np.zeros(n, dtype=np.int64)
    if k == 1:
        return rows[:, 0].astype(np.int64)
    bits = [max(1, int(rows[:, j].max(initial=0)).bit_length()) for j in range(k)]
    if sum(bits) <= 63 and rows.min(initial=0) >= 0:
        key = rows[:, 0].astype(np.int64)
        for j in range(1, k):
            key <<= bits[j]
            key |= rows[:, j]
        return key
    _, inverse = np.unique(rows, axis=0, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64)


class _PredEvidence:
    """The evidence rows of one predicate over several databases (columns)."""

    def __init__(self) -> None:
        self.parts: list[tuple[EvidenceColumns, PredRows]] = []

    def __len__(self) -> int:
        return sum(len(r) for _, r in self.parts)

    def truth(self) -> np.ndarray:
        if not self.parts:
            return np.zeros(0, np.int8)
        ts = [r.truth for _, r in self.parts]
        return ts[0].copy() if len(ts) == 1 else np.concatenate(ts)

    def pos(self, i: int):
        for cols, rows in self.parts:
            if i < len(rows):
                return cols.pos(rows, i)
            i -= len(rows)
        return None


def intern_evidence(consts: ConstantTable, preds: Sequence[tuple[_PredEvidence, Sequence[str]]]) -> list[np.ndarray]:
    """Add the constants of the evidence rows of several predicates (in this
    order; per predicate column by column, per column part by part in row
    order: the order that fixes new constants' ids) to their argument types;
    their ids as one int32 matrix per predicate.

    In bulk, on the readers' own codes: each part's codes map to one global
    code space (a name the table already knows gets its id; a reader's
    other names get codes of their own, a name shared by two readers one
    code), then the columns' first appearances give the new ids. Only
    names the table knew before and, with several readers, the readers'
    names are looked up by name (a C-level pass, no Python step per name)."""
    from itertools import repeat

    known = len(consts)
    spaces: dict[int, tuple[int, np.ndarray | None]] = {}      # id(cols) -> (base, map to global or None)
    pool: list[list[str]] = []                                   # names of global codes >= known, per reader
    index: dict[str, int] | None = None                          # name -> global code, with several readers
    total = known
    for rows_of, _ in preds:
        for cols, _rows in rows_of.parts:
            if id(cols) in spaces:
                continue
            names = cols.consts
            base = total
            if not spaces:
                lookup = consts.ids if known else None        # the table's names: few (declarations, formulas)
            else:
                if index is None:                              # several readers: the first one's names by name
                    index = dict(consts.ids)
                    (b0, g0), = [(b, g) for b, g in spaces.values()]
                    first_names = pool[0]
                    index.update(zip(first_names, g0.tolist() if g0 is not None
                                     else range(b0, b0 + len(first_names))))
                lookup = index
            if lookup:
                g = np.fromiter(map(lookup.get, names, repeat(-1)), dtype=np.int64, count=len(names))
                miss = g < 0
                g[miss] = base + np.flatnonzero(miss)
                g = g.astype(np.int32)
            else:
                g = None                                       # global code = base + reader code
            if index is not None:
                index.update(zip(names, g.tolist() if g is not None else range(base, base + len(names))))
            spaces[id(cols)] = (base, g)
            pool.append(names)
            total += len(names)

    def global_codes(cols, codes: np.ndarray) -> np.ndarray:
        base, g = spaces[id(cols)]
        return g[codes] if g is not None else codes + np.int32(base)

    sid = np.full(total, -1, dtype=np.int32)                  # global code -> table id
    sid[:known] = np.arange(known, dtype=np.int32)
    bases = np.array([b for b, _ in spaces.values()], dtype=np.int64)
    out_all = []
    for rows_of, arg_types in preds:
        out = np.zeros((len(rows_of), len(arg_types)), dtype=np.int32)
        for j, tname in enumerate(arg_types):
            at = 0
            for cols, rows in rows_of.parts:
                gc = global_codes(cols, rows.args[:, j])
                u = first_appearance(gc, total)
                new = u[sid[u] < 0]
                if len(new):
                    start = len(consts)
                    sid[new] = np.arange(start, start + len(new), dtype=np.int32)
                    consts.extend_new(_pool_names(pool, bases, new))
                consts.add_ids(tname, sid[u])
                out[at:at + len(rows), j] = sid[gc]
                at += len(rows)
        out_all.append(out)
    return out_all


def _pool_names(pool: list[list[str]], bases: np.ndarray, codes: np.ndarray) -> list[str]:
    """The names of global codes (all >= the first base), in their order."""
    if len(pool) == 1:
        names = pool[0]
        local = (codes - bases[0]).tolist()
        return list(map(names.__getitem__, local))
    which = np.searchsorted(bases, codes, side="right") - 1
    out: list[str] = []
    # runs of one reader keep C-level maps
    cut = np.flatnonzero(np.diff(which)) + 1
    for lo, hi in zip(np.r_[0, cut].tolist(), np.r_[cut, len(codes)].tolist()):
        k = int(which[lo])
        names = pool[k]
        out.extend(map(names.__getitem__, (codes[lo:hi] - bases[k]).tolist()))
    return out


class EvidenceStore:
    """Types, constants and evidence of one grounding problem, in DuckDB.

    ``formula_constants``: (type or None, constant name) pairs that appear in
    the formulas; with a type they join its domain (Alchemy), without one
    (e.g. in a comparison) they only get an id.
    """

    def __init__(
        self,
        mln: MLN,
        db: Database | Sequence[Database] | None = None,
        queries: Sequence[Query] | None = None,
        *,
        closed: Sequence[str] = (),
        open_: Sequence[str] = (),
        db_path: str | None = None,
        query_truth: bool = False,
        formula_constants: Iterable[tuple[str | None, str]] = (),
        threads: int | None = None,
        memory_limit: str | None = None,
    ) -> None:
        self.mln = mln
        dbs = [] if db is None else ([db] if isinstance(db, Database) else list(db))
        fvalues: list[FunctionValue] = [v for d in dbs for v in d.function_values]
        self.queries = list(queries or [])

        # ---- 1. check everything before building anything
        by_pred = self._group_atoms(dbs)
        by_func = self._group_function_values(fvalues)
        listed = {name for name, rows in by_pred.items() if len(rows)}
        self.world: WorldSpec = resolve_world(mln, listed, self.queries, closed, open_, query_truth)
        self.query_truth = query_truth

        # ---- 2. constants and domains: declarations, formulas, evidence
        consts = ConstantTable()
        self.constants = consts
        for tname, names in mln.types.items():
            consts.add_many(tname, names)
        for decl in mln.predicates.values():
            for t in decl.arg_types:
                consts.add_type(t)
        for decl in mln.functions.values():
            consts.add_type(decl.return_type)
            for t in decl.arg_types:
                consts.add_type(t)
        for tname, name in formula_constants:
            if tname is None:
                consts.intern(name)
            else:
                consts.add(tname, name)
        pred_args: dict[str, np.ndarray] = dict(zip(by_pred, intern_evidence(
            consts, [(rows, mln.predicates[name].arg_types) for name, rows in by_pred.items()])))
        func_args: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for name, (arg_rows, values, _) in by_func.items():
            decl = mln.functions[name]
            args = _intern_rows(consts, decl.arg_types, arg_rows)
            consts.add_many(decl.return_type, values)
            vals = np.array([consts.ids[v] for v in values], dtype=np.int32)
            func_args[name] = (args, vals)
        self._check_query_constants()
        self._warn_extended_types(by_pred, pred_args)

        # ---- 3. evidence rows: duplicates, contradictions, blocks
        truths: dict[str, np.ndarray] = {}
        for name, rows in by_pred.items():
            args = pred_args[name]
            truth = rows.truth()
            args, truth, kept = self._dedupe(name, args, truth, rows.pos)
            decl = mln.predicates[name]
            if decl.has_block:
                pos = rows.pos if kept is None else (lambda i, kept=kept, rows=rows: rows.pos(int(kept[i])))
                self._check_block_evidence(name, args, truth, pos)
            pred_args[name] = args
            truths[name] = truth
        self._check_function_values(by_func, func_args)

        # ---- 4. DuckDB
        # DuckDB's allocator returns freed memory to the system soon (in the
        # background) instead of keeping its peak: the network is built after
        # the queries, in the same process (social N=300k: -25 % resident
        # memory after grounding, -5 % at the peak)
        config = {"preserve_insertion_order": False, "allocator_background_threads": True,
                  "allocator_flush_threshold": "16MB"}
        if threads:
            config["threads"] = int(threads)
        if memory_limit:
            config["memory_limit"] = memory_limit
        # joins beyond DuckDB's memory limit spill here (not to ./.tmp, DuckDB's default)
        import os
        import tempfile

        self._temp_dir = os.path.join(tempfile.gettempdir(), f"markovlogic-duckdb-{os.getpid()}-{id(self):x}")
        self._temp_owner = os.getpid()        # a copy of the store in another process leaves it alone
        config["temp_directory"] = self._temp_dir
        self.con = open_database(db_path, config)
        _safe_optimizers(self.con)
        self._build_constant_tables()
        self.type_index: dict[str, int] = {t: i for i, t in enumerate(consts.type_names())}
        self._domains: dict[str, np.ndarray] = {}
        for tname, k in self.type_index.items():
            self._load(f"d_{k}", {"cid": self.domain(tname)}, "cid INTEGER")
        self.preds: dict[str, PredicateInfo] = {}
        self.labels: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for k, (name, decl) in enumerate(mln.predicates.items()):
            self._build_predicate(k, name, decl, pred_args.get(name), truths.get(name))
        self.functions: dict[str, FunctionInfo] = {}
        for k, (name, decl) in enumerate(mln.functions.items()):
            args, vals = func_args.get(name, (np.zeros((0, decl.arity), np.int32), np.zeros(0, np.int32)))
            cols = {f"a{j}": args[:, j] for j in range(decl.arity)}
            cols["v"] = vals
            schema = ", ".join([f"a{j} INTEGER" for j in range(decl.arity)] + ["v INTEGER"])
            self._load(f"f_{k}", cols, schema)
            self.functions[name] = FunctionInfo(k, name, decl.arg_types, decl.return_type, f"f_{k}", len(vals))
        self.pred_names: tuple[str, ...] = tuple(self.preds)
        self.n_evidence_atoms = sum(len(r) for r in by_pred.values())

    # ------------------------------------------------------------ checks
    def _warn_extended_types(self, by_pred, pred_args) -> None:
        """Evidence constants outside a declared type's list join the type (as in
        Alchemy); say so once per type, with the first such atom."""
        import warnings

        from ..errors import DomainExtendedWarning

        declared = getattr(self.mln, "declared_types", ())
        for tname in declared:
            listed = self.mln.types.get(tname, ())
            if not listed:
                continue
            id_of = self.constants.id_of
            known = np.array(sorted(i for i in map(id_of, listed) if i is not None), dtype=np.int64)
            members = self.constants.domain(tname).astype(np.int64)
            new = np.setdiff1d(members, known)
            if len(new) == 0:
                continue
            first = None
            for name, rows in by_pred.items():
                decl = self.mln.predicates[name]
                for j, t in enumerate(decl.arg_types):
                    if t != tname or name not in pred_args or not len(pred_args[name]):
                        continue
                    hit = np.flatnonzero(np.isin(pred_args[name][:, j], new))
                    if len(hit):
                        pos = rows.pos(int(hit[0]))
                        if first is None or (pos is not None and first[0] is not None
                                             and (pos.file, pos.line) < (first[0].file, first[0].line)):
                            first = (pos, self.constants.names[int(pred_args[name][hit[0], j])])
            where = ""
            if first is not None:
                pos, const = first
                where = f" (first {const}" + (f" at {pos.file}:{pos.line}" if pos is not None else "") + ")"
            warnings.warn(DomainExtendedWarning(
                f"the evidence adds {len(new):,} constant{'s' if len(new) != 1 else ''} to type '{tname}', "
                f"whose declared list has {len(listed):,}{where}; they join the type, as in Alchemy"),
                stacklevel=2)

    def _group_atoms(self, dbs: Sequence[Database]) -> dict[str, "_PredEvidence"]:
        """Per declared predicate (in declaration order), its evidence rows from
        every database in order; checks declaration and arity (the first wrong
        row in the input's order is reported)."""
        preds = self.mln.predicates
        by_pred = {name: _PredEvidence() for name in preds}
        bad = None
        for d, db in enumerate(dbs):
            cols = db.columns if getattr(db, "columns", None) is not None else EvidenceColumns.from_atoms(db.atoms)
            for (name, arity), rows in cols.preds.items():
                if not len(rows):
                    continue
                decl = preds.get(name)
                if decl is None or decl.arity != arity:
                    key = (d, int(rows.order_keys()[0]))
                    if bad is None or key < bad[0]:
                        bad = (key, cols, rows, name, arity, decl)
                    continue
                by_pred[name].parts.append((cols, rows))
            if bad is not None:
                break
        if bad is not None:
            _, cols, rows, name, arity, decl = bad
            pos = cols.pos(rows, 0)
            if decl is None:
                raise evidence_error(f"predicate {name!r} is not declared", pos)
            raise evidence_error(f"{name} has {arity} argument(s) here but is declared with {decl.arity}", pos)
        return by_pred

    def _group_function_values(self, values: list[FunctionValue]):
        funcs = self.mln.functions
        by_func: dict[str, tuple[list, list, list]] = {}
        for fv in values:
            decl = funcs.get(fv.function)
            if decl is None:
                raise evidence_error(f"function {fv.function!r} is not declared", fv.pos)
            if len(fv.args) != decl.arity:
                raise evidence_error(
                    f"function {fv.function} has {len(fv.args)} argument(s) here but is declared with {decl.arity}",
                    fv.pos,
                )
            rows = by_func.setdefault(fv.function, ([], [], []))
            rows[0].append(fv.args)
            rows[1].append(fv.value)
            rows[2].append(fv.pos)
        return by_func

    def _check_function_values(self, by_func, func_args) -> None:
        for name, (args, vals) in func_args.items():
            if len(vals) < 2:
                continue
            _, first, inverse = np.unique(args, axis=0, return_index=True, return_inverse=True)
            inverse = inverse.reshape(-1)
            conflict = vals != vals[first[inverse]]
            if conflict.any():
                i = int(np.flatnonzero(conflict)[0])
                j = int(first[inverse[i]])
                pos_i, pos_j = by_func[name][2][i], by_func[name][2][j]
                where = f" (first given at line {pos_j.line})" if pos_j is not None else ""
                raise evidence_error(
                    f"function value {name}({','.join(by_func[name][0][i])}) given twice with different values{where}",
                    pos_i,
                )

    def _dedupe(self, name: str, args: np.ndarray, truth: np.ndarray, pos):
        """Remove repeated atoms; an atom listed with two truth values is an error.
        Returns (args, truth, kept row indices or None when nothing was removed);
        ``pos(i)`` is the position of row ``i``."""
        keep, i, j = scan_duplicates(args, truth)
        if i >= 0:
            atom_text = f"{name}({','.join(self.constants.names[c] for c in args[i])})"
            pj = pos(j)
            where = f" (line {pj.line})" if pj is not None else ""
            raise evidence_error(f"{atom_text} contradicts an earlier evidence line{where}", pos(i))
        if keep is None:
            return args, truth, None
        return args[keep], truth[keep], keep

    def _check_block_evidence(self, name: str, args: np.ndarray, truth: np.ndarray, pos) -> None:
        decl = self.mln.predicates[name]
        key_cols = [j for j, m in enumerate(decl.mutex) if not m]
        true_rows = np.flatnonzero(truth == TRUE)
        if len(true_rows) < 2:
            return
        keys = args[true_rows][:, key_cols] if key_cols else np.zeros((len(true_rows), 0), np.int32)
        if keys.shape[1] == 0:
            i = int(true_rows[1])
            raise evidence_error(f"{name} is exactly-one (!) but two of its atoms are true", pos(i))
        _, first, inverse = np.unique(row_keys(keys), return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        dup = np.flatnonzero(first[inverse] != np.arange(len(true_rows)))
        if len(dup):
            i = int(true_rows[dup[0]])
            j = int(true_rows[first[inverse[dup[0]]]])
            names = self.constants.names
            raise evidence_error(
                f"{name}({','.join(names[c] for c in args[i])}) and "
                f"{name}({','.join(names[c] for c in args[j])}) are both true, "
                f"but {name} declares exactly one true value (!)",
                pos(i),
            )

    def _check_query_constants(self) -> None:
        for q in self.queries:
            if q.args is None:
                continue
            decl = self.mln.predicates[q.predicate]
            for t, tname in zip(q.args, decl.arg_types):
                if isinstance(t, Const):
                    cid = self.constants.id_of(t.name)
                    if cid is None or not self.constants.is_member(tname, cid):
                        raise QueryError(
                            f"query atom {q.predicate}: constant {t.name} is not in the domain of type {tname}",
                            **_where(q.pos or t.pos),
                        )

    # ------------------------------------------------------------ building
    def _load(self, table: str, columns: dict[str, np.ndarray], schema: str) -> None:
        """Create a table from numpy columns (replacing an existing one)."""
        n = len(next(iter(columns.values()))) if columns else 0
        if n == 0:
            self.con.execute(f"CREATE OR REPLACE TABLE {table} ({schema})")
            return
        frame = dict(columns)  # DuckDB scans a dict of numpy arrays directly (no pandas import)
        casts = ", ".join(
            f"{name}::{kind} AS {name}" for name, kind in (c.strip().split() for c in schema.split(","))
        )
        self.con.register("_load_frame", frame)
        try:
            self.con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT {casts} FROM _load_frame")
        finally:
            self.con.unregister("_load_frame")

    def _build_constant_tables(self) -> None:
        cols = self.constants.value_columns()
        self.con.register("_consts_frame", cols)
        try:
            self.con.execute(
                "CREATE OR REPLACE TABLE consts AS SELECT id::INTEGER AS id, name::VARCHAR AS name, "
                "sval::VARCHAR AS sval, CASE WHEN isnan(num) THEN NULL ELSE num END AS num, "
                "CASE WHEN has_inum THEN inum ELSE NULL END AS inum FROM _consts_frame"
            )
        finally:
            self.con.unregister("_consts_frame")
        # value -> constant, for results of internal functions (integers by value)
        self.con.execute(
            "CREATE OR REPLACE TABLE cval AS "
            "SELECT 'i' AS kind, inum, NULL::VARCHAR AS sval, min(id) AS id FROM consts "
            "WHERE inum IS NOT NULL GROUP BY inum "
            "UNION ALL SELECT 's', NULL::BIGINT, sval, min(id) FROM consts GROUP BY sval"
        )
        # distinct constants with equal values ("1" and "01", A and "A")?
        n_values, n = self.con.execute(
            "SELECT count(DISTINCT CASE WHEN inum IS NOT NULL THEN 'i' || inum::VARCHAR "
            "ELSE 's' || sval END), count(*) FROM consts"
        ).fetchall()[0]
        self.has_value_twins = n_values != n

    def _build_predicate(self, k: int, name: str, decl, args, truth) -> None:
        world = self.world
        query = name in world.query_predicates
        closed = name in world.closed
        labels = query and self.query_truth
        table = f"p_{k}"
        arity = decl.arity
        schema = ", ".join([f"a{j} INTEGER" for j in range(arity)] + ["t TINYINT"])
        if args is None:
            args = np.zeros((0, arity), np.int32)
            truth = np.zeros(0, np.int8)
        if labels:
            self.labels[name] = (args, truth)
            args, truth = args[:0], truth[:0]
        elif closed:
            keep = truth != FALSE
            args, truth = args[keep], truth[keep]
        cols = {f"a{j}": args[:, j] for j in range(arity)}
        cols["t"] = truth
        self._load(table, cols, schema)
        if decl.has_block and not labels and len(truth):
            self._complete_block(table, decl, closed)
        counts = dict(self.con.execute(f"SELECT t, count(*) FROM {table} GROUP BY t").fetchall())
        self.preds[name] = PredicateInfo(
            index=k,
            name=name,
            arg_types=decl.arg_types,
            mutex=decl.mutex,
            closed=closed,
            query=query,
            labels=labels,
            table=table,
            n_true=int(counts.get(TRUE, 0)),
            n_false=int(counts.get(FALSE, 0)),
            n_unknown=int(counts.get(UNKNOWN, 0)),
        )

    def _complete_block(self, table: str, decl, closed: bool) -> None:
        """A true value of an exactly-one block makes the other values false."""
        key = [j for j, m in enumerate(decl.mutex) if not m]
        mut = [j for j, m in enumerate(decl.mutex) if m]
        key_eq = " AND ".join(f"x.a{j} = k.a{j}" for j in key) or "TRUE"
        keys_sql = f"SELECT DISTINCT {', '.join(f'a{j}' for j in key) or '1 AS one'} FROM {table} WHERE t = 1"
        if closed:
            self.con.execute(
                f"DELETE FROM {table} x WHERE x.t = -1 AND EXISTS "
                f"(SELECT 1 FROM ({keys_sql}) k WHERE {key_eq})"
            )
            return
        self.con.execute(
            f"UPDATE {table} x SET t = 0 WHERE x.t = -1 AND EXISTS "
            f"(SELECT 1 FROM ({keys_sql}) k WHERE {key_eq})"
        )
        select = []
        froms = [f"({keys_sql}) k"]
        for j in range(decl.arity):
            if j in mut:
                froms.append(f"{self.domain_table(decl.arg_types[j])} m{j}")
                select.append(f"m{j}.cid")
            else:
                select.append(f"k.a{j}")
        match = " AND ".join(f"y.a{j} = {select[j]}" for j in range(decl.arity))
        self.con.execute(
            f"INSERT INTO {table} SELECT {', '.join(select)}, 0 FROM {', '.join(froms)} "
            f"WHERE NOT EXISTS (SELECT 1 FROM {table} y WHERE {match})"
        )

    # ------------------------------------------------------------ lookups
    def domain(self, type_name: str) -> np.ndarray:
        """Sorted int32 constant ids of a type (empty for an unknown type)."""
        d = getattr(self, "_domains", {}).get(type_name)
        if d is None:
            d = self.constants.domain(type_name)
            if hasattr(self, "_domains"):
                self._domains[type_name] = d
        return d

    def positions(self, type_name: str) -> np.ndarray:
        """Dense map constant id -> position in the type's sorted domain (-1: not
        a member), for vectorised key encoding."""
        cache = self.__dict__.setdefault("_positions", {})
        pm = cache.get(type_name)
        if pm is None:
            dom = self.domain(type_name)
            pm = np.full(len(self.constants) + 1, -1, dtype=np.int32)
            pm[dom] = np.arange(len(dom), dtype=np.int32)
            cache[type_name] = pm
        return pm

    def domain_table(self, type_name: str) -> str:
        k = self.type_index.get(type_name)
        if k is None:
            # a type no predicate or declaration knows: an empty domain
            k = len(self.type_index)
            self.type_index[type_name] = k
            self.constants.add_type(type_name)
            self.con.execute(f"CREATE OR REPLACE TABLE d_{k} (cid INTEGER)")
        return f"d_{k}"

    def const_id(self, name: str) -> int | None:
        return self.constants.id_of(name)

    def constant_names(self) -> tuple[str, ...]:
        return tuple(self.constants.names)

    def close(self) -> None:
        import shutil

        import os

        self.con.close()
        if getattr(self, "_temp_dir", None) and getattr(self, "_temp_owner", None) == os.getpid():
            shutil.rmtree(self._temp_dir, ignore_errors=True)

    # ------------------------------------------------------------ query atoms
    def unknown_atoms_sql(self, name: str, pattern: tuple | None = None) -> str:
        """SQL selecting ``a0..`` of every unknown atom of a predicate that
        matches a query pattern (a tuple of Var/Const terms, or None)."""
        info = self.preds[name]
        conds: list[str] = []
        if info.closed:
            cols = [f"x.a{j}" for j in range(info.arity)]
            src = f"{info.table} x"
            conds.append("x.t = -1")
        else:
            cols = [f"d{j}.cid" for j in range(info.arity)]
            src = ", ".join(f"{self.domain_table(t)} d{j}" for j, t in enumerate(info.arg_types)) or "(SELECT 1) one"
            if info.n_true + info.n_false:
                match = " AND ".join([f"y.a{j} = d{j}.cid" for j in range(info.arity)] + ["y.t <> -1"])
                conds.append(f"NOT EXISTS (SELECT 1 FROM {info.table} y WHERE {match})")
        if pattern is not None:
            seen: dict[str, str] = {}
            for j, term in enumerate(pattern):
                if isinstance(term, Const):
                    cid = self.constants.id_of(term.name)
                    if cid is None:
                        raise KeyError(term.name)
                    conds.append(f"{cols[j]} = {cid}")
                elif isinstance(term, Var):
                    if term.name in seen:
                        conds.append(f"{cols[j]} = {seen[term.name]}")
                    else:
                        seen[term.name] = cols[j]
        select = ", ".join(f"{c} AS a{j}" for j, c in enumerate(cols)) or "1 AS one"
        where = (" WHERE " + " AND ".join(conds)) if conds else ""
        return f"SELECT {select} FROM {src}{where}"


def _safe_optimizers(con) -> None:
    """Turn off DuckDB's ``common_subplan`` optimizer (DuckDB 2.0): it merges
    subplans that differ only in the columns they project, so a ``UNION ALL``
    of two groundings of one formula (the same joins and filters, ``d1.cid``
    against ``d2.cid`` projected) returned the first one's rows twice
    (``tests/test_hardening_many_formulas.py``). Older versions have no such
    optimizer; nothing to do there."""
    import duckdb

    try:
        names = {r[0] for r in con.execute("SELECT name FROM duckdb_optimizers()").fetchall()}
    except duckdb.Error:
        return
    if "common_subplan" in names:
        con.execute("SET disabled_optimizers = 'common_subplan'")
