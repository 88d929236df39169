"""Terms and comparisons as SQL over the evidence store.

A ``Scope`` collects the FROM items and WHERE conditions of one query. Terms
compile to SQL expressions:

* ``id``: the constant id of a term (a variable's home column, a constant's
  id, a user function's value from its table, or the constant an internal
  function's result names, looked up in ``cval``);
* values for internal functions and comparisons: ``inum`` (integer), ``num``
  (number), ``sval`` (string: the name without quotes).

Semantics shared with the test oracle (``tests/reference_grounder.py``):

* ``a = b``: equal integers when both are integers, else equal strings;
* ``a < b`` (``>``, ``<=``, ``>=``): numeric when both are numbers, else
  string order;
* ``substr(a, b)``: ``a`` is a substring of ``b``;
* ``+ - * / %`` and ``succ`` work on integers (``/`` and ``%`` truncate toward
  zero, as in C; division by zero is undefined); ``concat`` joins strings;
* a term whose value is undefined (a user function with no value, arithmetic
  on a non-integer, a result that names no constant of the argument's type)
  makes the grounding nonexistent: it is skipped.
"""

from __future__ import annotations

from ..errors import MLNSemanticError
from ..lang.ast import Const, Func, Term, Var
from ..store.constants import constant_integer, constant_number, constant_value
from ..store.store import EvidenceStore
from .similarity import SIMILARITY_FUNCTIONS, parse_similarity, tables_of

ARITH = {"+": "+", "-": "-", "*": "*", "/": "//", "%": "%"}
ALIASES = {"plus": "+", "minus": "-", "times": "*", "dividedBy": "/", "mod": "%"}
COMPARE_OPS = {"=", "<", ">", "<=", ">=", "substr"}


def sql_string(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def func_name(f: Func) -> str:
    return ALIASES.get(f.name, f.name)


def is_internal(f: Func, store: EvidenceStore) -> bool:
    name = func_name(f)
    return name not in store.functions and (name in ARITH or name in ("succ", "concat", "substr")
                                            or name in SIMILARITY_FUNCTIONS)


class Scope:
    """FROM items, WHERE conditions and variable homes of one SELECT."""

    def __init__(self, store: EvidenceStore, prefix: str = "") -> None:
        self.store = store
        self.froms: list[str] = []
        self.conds: list[str] = []
        self.homes: dict[str, str] = {}
        self.prefix = prefix
        self._n = 0
        self._value_alias: dict[str, str] = {}

    def alias(self, stem: str) -> str:
        self._n += 1
        return f"{self.prefix}{stem}{self._n}"

    def add_from(self, table: str, stem: str) -> str:
        a = self.alias(stem)
        self.froms.append(f"{table} AS {a}")
        return a

    def home_in_domain(self, var: str, type_name: str) -> str:
        a = self.add_from(self.store.domain_table(type_name), "d")
        self.homes[var] = f"{a}.cid"
        return self.homes[var]

    # ------------------------------------------------------------ terms
    def id_expr(self, term: Term, type_name: str | None = None) -> str:
        """SQL for the constant id of ``term``; with ``type_name``, the constant
        must belong to that type (else the grounding does not exist)."""
        if isinstance(term, Var):
            return self.homes[term.name]
        if isinstance(term, Const):
            cid = self.store.const_id(term.name)
            if cid is None:
                return "NULL"
            return str(cid)
        if isinstance(term, Func):
            name = func_name(term)
            info = self.store.functions.get(name)
            if info is not None:
                if len(term.args) != len(info.arg_types):
                    raise MLNSemanticError(f"function {name} takes {len(info.arg_types)} argument(s)")
                a = self.add_from(info.table, "f")
                for j, (arg, t) in enumerate(zip(term.args, info.arg_types)):
                    self.conds.append(f"{a}.a{j} = {self.id_expr(arg, t)}")
                return f"{a}.v"
            if not is_internal(term, self.store):
                raise MLNSemanticError(f"function {term.name!r} is not declared")
            kind, expr = self.value_expr(term)
            a = self.add_from("cval", "r")
            if kind == "int":
                self.conds.append(f"{a}.inum = {expr}")
            else:
                self.conds.append(f"{a}.sval = {expr}")
            self.conds.append(f"{a}.kind = '{'i' if kind == 'int' else 's'}'")
            if type_name is not None:
                m = self.add_from(self.store.domain_table(type_name), "m")
                self.conds.append(f"{m}.cid = {a}.id")
            return f"{a}.id"
        raise TypeError(f"not a term: {term!r}")

    def _const_values(self, name: str) -> tuple[str, str, str]:
        s = constant_value(name)
        i = constant_integer(s)
        f = constant_number(s)
        return (
            "NULL" if i is None else f"{i}::BIGINT",
            "NULL" if f is None else f"{f!r}::DOUBLE",
            sql_string(s),
        )

    def _values_of_id(self, id_sql: str) -> tuple[str, str, str]:
        a = self._value_alias.get(id_sql)
        if a is None:
            a = self.add_from("consts", "c")
            self.conds.append(f"{a}.id = {id_sql}")
            self._value_alias[id_sql] = a
        return f"{a}.inum", f"{a}.num", f"{a}.sval"

    def values(self, term: Term) -> tuple[str, str, str]:
        """(inum, num, sval) SQL expressions of a term's value."""
        if isinstance(term, Const):
            return self._const_values(term.name)
        if isinstance(term, Func) and is_internal(term, self.store):
            kind, expr = self.value_expr(term)
            if kind == "int":
                return expr, f"CAST({expr} AS DOUBLE)", f"CAST({expr} AS VARCHAR)"
            if kind == "num":
                return "NULL::BIGINT", expr, f"CAST({expr} AS VARCHAR)"
            return "NULL::BIGINT", "NULL::DOUBLE", expr
        return self._values_of_id(self.id_expr(term))

    def value_expr(self, f: Func) -> tuple[str, str]:
        """('int', BIGINT expr), ('num', DOUBLE expr) or ('str', VARCHAR expr) of an
        internal function."""
        name = func_name(f)
        if name in ARITH:
            if len(f.args) != 2:
                raise MLNSemanticError(f"internal function {name} takes 2 arguments")
            a = self.values(f.args[0])[0]
            b = self.values(f.args[1])[0]
            if name in ("/", "%"):
                return "int", f"(CASE WHEN {b} = 0 THEN NULL ELSE ({a}) {ARITH[name]} ({b}) END)"
            return "int", f"(({a}) {ARITH[name]} ({b}))"
        if name == "succ":
            if len(f.args) != 1:
                raise MLNSemanticError("succ takes 1 argument")
            return "int", f"(({self.values(f.args[0])[0]}) + 1)"
        if name == "concat":
            if len(f.args) != 2:
                raise MLNSemanticError("concat takes 2 arguments")
            return "str", f"({self.values(f.args[0])[2]} || {self.values(f.args[1])[2]})"
        if name == "substr":
            if len(f.args) != 3:
                raise MLNSemanticError("substr as a function takes 3 arguments (string, start, length)")
            s = self.values(f.args[0])[2]
            i = self.values(f.args[1])[0]
            n = self.values(f.args[2])[0]
            return "str", f"substr({s}, ({i}) + 1, {n})"
        if name in SIMILARITY_FUNCTIONS:
            call = parse_similarity(f, self.store.mln.predicates)
            table = tables_of(self.store).pair_table(call.path, call.family)
            a = self.id_expr(call.left)
            b = self.id_expr(call.right)
            return "num", (f"coalesce((SELECT s.{call.column} FROM {table} AS s WHERE s.a = {a} AND s.b = {b}), "
                           f"{call.absent!r}::DOUBLE)")
        raise MLNSemanticError(f"unknown internal function {f.name!r}")

    # ------------------------------------------------------------ comparisons
    def compare_expr(self, op: str, left: Term, right: Term) -> str:
        """SQL truth of ``left op right`` (the atom, not the literal)."""
        if op not in COMPARE_OPS:
            raise MLNSemanticError(f"unknown comparison {op!r}")
        if op == "=" and self._is_id_term(left) and self._is_id_term(right) and not self.store.has_value_twins:
            return f"({self.id_expr(left)} = {self.id_expr(right)})"
        li, ln, ls = self.values(left)
        ri, rn, rs = self.values(right)
        if op == "=":
            return f"(CASE WHEN {li} IS NOT NULL AND {ri} IS NOT NULL THEN {li} = {ri} ELSE {ls} = {rs} END)"
        if op == "substr":
            return f"contains({rs}, {ls})"
        return f"(CASE WHEN {ln} IS NOT NULL AND {rn} IS NOT NULL THEN {ln} {op} {rn} ELSE {ls} {op} {rs} END)"

    def _is_id_term(self, t: Term) -> bool:
        return isinstance(t, (Var, Const)) or (isinstance(t, Func) and not is_internal(t, self.store))

    def select_sql(self, columns: list[str]) -> str:
        cols = ", ".join(columns) if columns else "1 AS one"
        froms = ", ".join(self.froms) if self.froms else "(SELECT 1) AS one_row"
        where = (" WHERE " + " AND ".join(self.conds)) if self.conds else ""
        return f"SELECT {cols} FROM {froms}{where}"
