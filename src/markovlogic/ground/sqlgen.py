"""One clause template -> one SQL query (bottom-up grounding).

The query has two levels. The inner SELECT (``base``) binds every clause
variable: a negative literal of a closed-world predicate is an inner join
with its true (and unknown) rows, the literal being true elsewhere; a variable
no such literal binds ranges over its type's domain table; repeated
variables, constants and function terms become join conditions; comparisons
are filters (a grounding survives only where every comparison disjunct is
false). The outer SELECT left-joins the remaining literals with their
predicates' listed atoms to get each atom's truth under the evidence, drops
the groundings that some literal satisfies, and returns, per grounding, the
arguments and the status of every literal that can still be unknown
(``-1``: unknown, the literal stays; anything else: false, it is dropped).

The same machinery answers cutting-plane inference's separation query
(``mode="violated"``): with the atoms that are true in the current world in
``w_<k>`` tables, a grounding is violated when every literal is false under
evidence plus world — negative literals join with the true atoms, positive
ones anti-join with them — and the result lists the unknown literals of
each violated grounding.

Lazy inference (ground only the clauses that a set of active atoms can
reach) puts one condition on each literal -- its atom among this batch of
active atoms, false in a world, dropped by evidence... -- and takes one
literal position per query, so that a small table of atoms drives the joins:
``lazysql.LiteralCompiler`` is :class:`TemplateCompiler` with those
conditions, ``activation`` asks the questions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..lang.ast import Const, Func, Var
from ..logic.clauses import ClauseTemplate, Comparison, ExistsGroup, Literal
from ..store.store import EvidenceStore, PredicateInfo
from .terms import Scope


@dataclass
class OutLiteral:
    """A literal of the query's output: its atom's arguments and status."""

    pred: int                      # predicate index (store order)
    positive: bool
    arg_cols: list[str]            # output columns with the argument ids
    status_col: str | None         # output column: -1 keep, else dropped; None: always kept


@dataclass
class TemplateQuery:
    sql: str
    literals: list[OutLiteral] = field(default_factory=list)
    var_cols: dict[str, str] = field(default_factory=dict)   # clause variable -> output column
    empty: bool = False            # the template has no grounding left at all


def _arithmetic_operands(term, out: list) -> None:
    """The operands of integer arithmetic (``+ - * / %``, ``succ``) in ``term``."""
    from .terms import ALIASES, ARITH

    if isinstance(term, Func):
        name = ALIASES.get(term.name, term.name)
        if name in ARITH or name == "succ":
            out.extend(a for a in term.args if not isinstance(a, Func))
        for a in term.args:
            _arithmetic_operands(a, out)


def check_arithmetic(store: EvidenceStore, t: ClauseTemplate) -> None:
    """Arithmetic works on integer constants. A constant that is no integer
    (``Y1999``), or a variable whose type holds constants of which none is an
    integer, would make every grounding undefined and silently match nothing:
    refused, naming the formula, the operand and a constant. (A type holding
    some integers and some other names keeps the documented rule: groundings
    with a non-integer operand do not exist.)"""
    if not t.comparisons and not any(isinstance(a, Func) for lit in t.literals for a in lit.atom.args):
        return
    operands: list = []
    for c in t.comparisons:
        for side in (c.left, c.right):
            _arithmetic_operands(side, operands)
    for lit in t.literals:
        for a in lit.atom.args:
            _arithmetic_operands(a, operands)
    if not operands:
        return
    from ..errors import MLNSemanticError
    from ..store.constants import constant_integer, constant_value

    types = t.variable_types
    for op in operands:
        example = None
        if isinstance(op, Const):
            if constant_integer(constant_value(op.name)) is None:
                example, what = op.name, f"the constant {op.name}"
        elif isinstance(op, Var) and op.name in types:
            type_name = types[op.name]
            cache = store.__dict__.setdefault("_integer_domains", {})
            if type_name not in cache:
                table = store.domain_table(type_name)
                n, n_int, name = store.con.execute(
                    f"SELECT count(*), count(c.inum), min(c.name) FILTER (WHERE c.inum IS NULL) "
                    f"FROM {table} AS d JOIN consts AS c ON c.id = d.cid").fetchall()[0]
                cache[type_name] = (int(n), int(n_int), name)
            n, n_int, name = cache[type_name]
            if n and not n_int:
                example, what = name, f"variable {op.name} of type {type_name}, none of whose {n:,} constants is an integer"
        if example is None:
            continue
        decl = store.mln.formulas[t.formula_index] if 0 <= t.formula_index < len(store.mln.formulas) else None
        pos = getattr(decl, "pos", None)
        where = dict(file=pos.file, line=pos.line, column=pos.column) if pos is not None else {}
        raise MLNSemanticError(
            f"arithmetic on {what} (e.g. {example}): arithmetic (+ - * / %, succ) works on integer constants, so "
            f"this formula would match nothing. Write the values as integers in the evidence (1999, not Y1999), "
            f"or compare them as names (=, <, >)", **where)


def clause_variables(t: ClauseTemplate) -> list[str]:
    """The template's universally quantified variables (not those of groups)."""
    group_vars = {v for g in t.exists for v in g.variables}
    return [v for v, _ in t.var_types if v not in group_vars]


class TemplateCompiler:
    """Build the grounding query of a template.

    ``mode``: ``"ground"`` (groundings not satisfied by the evidence) or
    ``"violated"`` (groundings whose literals are all false under evidence and
    the world given by ``world``: predicate index -> table of true atoms).
    ``export_vars``: clause variables whose ids the output must carry (``+``
    variables, variables of existential groups).
    """

    def __init__(
        self,
        store: EvidenceStore,
        template: ClauseTemplate,
        *,
        mode: str = "ground",
        world: dict[int, str] | None = None,
        export_vars: list[str] | None = None,
    ) -> None:
        self.store = store
        self.t = template
        self.mode = mode
        self.world = world or {}
        self.types = template.variable_types
        self.export_vars = list(export_vars or [])
        self.preds = [store.preds[lit.atom.predicate] for lit in template.literals]

    # ------------------------------------------------------------ planning
    def _binding(self, lit: Literal, info: PredicateInfo) -> str | None:
        """The table a literal is inner-joined with, if it binds variables."""
        if self.mode == "ground":
            if info.closed and not lit.positive:
                return info.table
            return None
        # violated: a negative literal needs its atom true (evidence or world)
        if lit.positive:
            return None
        cols = ", ".join(f"a{j}" for j in range(info.arity))
        parts = []
        if info.n_true and not info.labels:
            parts.append(f"SELECT {cols}{',' if cols else ''} 0 AS u FROM {info.table} WHERE t = 1")
        w = self.world.get(info.index)
        if w is not None:
            parts.append(f"SELECT {cols}{',' if cols else ''} 1 AS u FROM {w}")
        if not parts:
            return "EMPTY"
        return "(" + " UNION ALL ".join(parts) + ")"

    def build(self) -> TemplateQuery:
        t = self.t
        store = self.store
        check_arithmetic(store, t)
        base = Scope(store, prefix="")
        cvars = clause_variables(t)
        # 1. binding literals: inner joins that give variables their homes
        bind_alias: dict[int, str] = {}
        for i, (lit, info) in enumerate(zip(t.literals, self.preds)):
            table = self._binding(lit, info)
            if table is None:
                continue
            if table == "EMPTY":
                return TemplateQuery(sql="", empty=True)
            if self.mode == "ground" and info.n_true + info.n_unknown == 0:
                return TemplateQuery(sql="", empty=True)   # literal true everywhere
            alias = base.add_from(table, "b")
            bind_alias[i] = alias
            for j, arg in enumerate(lit.atom.args):
                if isinstance(arg, Var) and arg.name not in base.homes:
                    base.homes[arg.name] = f"{alias}.a{j}"
        # 2. every other clause variable ranges over its type
        for v in cvars:
            if v not in base.homes:
                base.home_in_domain(v, self.types[v])
        # 3. binding literals' remaining argument conditions
        for i, alias in bind_alias.items():
            lit, info = t.literals[i], self.preds[i]
            for j, arg in enumerate(lit.atom.args):
                expr = base.id_expr(arg, info.arg_types[j])
                if expr != f"{alias}.a{j}":
                    base.conds.append(f"{alias}.a{j} = {expr}")
        # 4. comparisons: keep groundings where every comparison disjunct is false
        for c in t.comparisons:
            truth = base.compare_expr(c.op, c.left, c.right)
            base.conds.append(f"NOT {truth}" if c.positive else truth)

        # 5. outputs
        base_cols: list[str] = []
        out_cols: list[str] = []
        outer_joins: list[str] = []
        outer_conds: list[str] = []
        result = TemplateQuery(sql="")
        self._vcols: dict[str, str] = {}
        for v in self.export_vars:
            col = self._var_column(v, base, base_cols)
            self._emit(out_cols, [col])
            result.var_cols[v] = col
        for i, (lit, info) in enumerate(zip(t.literals, self.preds)):
            if i in bind_alias:
                plan = self._plan_bound(i, lit, info, bind_alias[i], base, base_cols, out_cols)
            else:
                plan = self._plan_free(i, lit, info, base, base_cols, out_cols, outer_joins, outer_conds)
            if plan is False:
                return TemplateQuery(sql="", empty=True)
            if plan is not None:
                result.literals.append(plan)
        base_sql = base.select_sql(base_cols)
        where = (" WHERE " + " AND ".join(outer_conds)) if outer_conds else ""
        select = ", ".join(out_cols) if out_cols else "1 AS one"
        result.sql = f"SELECT {select} FROM ({base_sql}) AS g{''.join(outer_joins)}{where}"
        return result

    # ------------------------------------------------------------ literals
    def _var_column(self, v: str, base: Scope, base_cols: list[str]) -> str:
        """The base column of a clause variable (one per variable)."""
        col = self._vcols.get(v)
        if col is None:
            col = f"v{len(self._vcols)}"
            self._vcols[v] = col
            base_cols.append(f"{base.homes[v]} AS {col}")
        return col

    def _arg_columns(self, i: int, lit: Literal, info: PredicateInfo, base: Scope, base_cols: list[str]) -> list[str]:
        cols = []
        for j, arg in enumerate(lit.atom.args):
            if isinstance(arg, Var):
                cols.append(self._var_column(arg.name, base, base_cols))
                continue
            col = f"x{i}_{j}"
            base_cols.append(f"{base.id_expr(arg, info.arg_types[j])} AS {col}")
            cols.append(col)
        return cols

    @staticmethod
    def _emit(out_cols: list[str], cols) -> None:
        for c in cols:
            item = f"g.{c} AS {c}"
            if item not in out_cols:
                out_cols.append(item)

    def _plan_bound(self, i, lit, info, alias, base, base_cols, out_cols):
        """A literal that is an inner join in ``base``."""
        if self.mode == "ground":
            if info.n_unknown == 0:
                return None            # joined with true rows: always false, dropped
            status = f"{alias}.t"
        else:
            if self.world.get(info.index) is None:
                return None            # true by evidence only: dropped
            status = f"(CASE WHEN {alias}.u = 1 THEN -1 ELSE 1 END)"
        cols = self._arg_columns(i, lit, info, base, base_cols)
        base_cols.append(f"{status} AS s{i}")
        self._emit(out_cols, cols)
        out_cols.append(f"g.s{i} AS s{i}")
        return OutLiteral(info.index, lit.positive, cols, f"s{i}")

    def _plan_free(self, i, lit, info, base, base_cols, out_cols, outer_joins, outer_conds):
        """A literal whose atom's truth comes from a left join (or its default)."""
        sat = 1 if lit.positive else 0          # evidence truth that satisfies the literal
        listed = 0 if info.labels else info.n_rows
        # arguments first: an undefined function term means no grounding at all
        cols = self._arg_columns(i, lit, info, base, base_cols)
        if info.closed and info.n_true + info.n_unknown == 0 and self.mode == "ground":
            return None if lit.positive else False   # always false (dropped) / always true
        match = " AND ".join(f"l{i}.a{j} = g.{c}" for j, c in enumerate(cols)) or "TRUE"
        status_col = None
        if listed:
            outer_joins.append(f" LEFT JOIN {info.table} AS l{i} ON {match}")
            status = f"COALESCE(l{i}.t, {info.default})"
            outer_conds.append(f"{status} <> {sat}")
            if self.mode == "ground" and info.closed and info.n_unknown == 0:
                # every atom known: the rows left are those where the literal is
                # false, dropped (as a bound literal of such a predicate is); a
                # template of such literals only is then counted in SQL, its rows
                # never fetched (the transitivity of an observed relation: 100 M
                # rows at social N=1M)
                return None
            if info.closed or (info.n_false if lit.positive else info.n_true):
                status_col = f"s{i}"
                out_cols.append(f"{status} AS {status_col}")
        elif info.closed:
            return None                          # not listed anywhere: false, dropped
        if self.mode == "violated":
            w = self.world.get(info.index)
            if w is not None and lit.positive:
                wmatch = " AND ".join(f"w.a{j} = g.{c}" for j, c in enumerate(cols)) or "TRUE"
                outer_conds.append(f"NOT EXISTS (SELECT 1 FROM {w} AS w WHERE {wmatch})")
            elif not lit.positive:
                raise AssertionError("negative literals are bound in violated mode")
        if status_col is None and info.closed:
            return None
        self._emit(out_cols, cols)
        return OutLiteral(info.index, lit.positive, cols, status_col)


class GroupCompiler:
    """Query for one existential group of a template, given the template's
    groundings in table ``rows`` (columns ``rid`` and ``v*`` for the clause
    variables the group uses).

    Output: one row per binding of the group's variables whose conjunction is
    not false by evidence: ``rid``, and per conjunct literal its arguments and
    status (-1 unknown, 1 true). A binding with no unknown conjunct makes the
    clause true.
    """

    def __init__(self, store: EvidenceStore, template: ClauseTemplate, group: ExistsGroup,
                 rows_table: str, var_cols: dict[str, str]) -> None:
        self.store = store
        self.t = template
        self.g = group
        self.rows_table = rows_table
        self.var_cols = var_cols
        self.types = template.variable_types

    def build(self) -> TemplateQuery:
        store = self.store
        base = Scope(store, prefix="q")
        r = base.add_from(self.rows_table, "r")
        for v, col in self.var_cols.items():
            base.homes[v] = f"{r}.{col}"
        lits = [c for c in self.g.conjuncts if isinstance(c, Literal)]
        comps = [c for c in self.g.conjuncts if isinstance(c, Comparison)]
        preds = [store.preds[lit.atom.predicate] for lit in lits]
        # a positive conjunct of a closed-world predicate must be true or unknown: inner join
        bind_alias: dict[int, str] = {}
        for i, (lit, info) in enumerate(zip(lits, preds)):
            if info.closed and lit.positive:
                if info.n_true + info.n_unknown == 0:
                    return TemplateQuery(sql="", empty=True)
                alias = base.add_from(info.table, "b")
                bind_alias[i] = alias
                for j, arg in enumerate(lit.atom.args):
                    if isinstance(arg, Var) and arg.name not in base.homes:
                        base.homes[arg.name] = f"{alias}.a{j}"
        for v in self.g.variables:
            if v not in base.homes:
                base.home_in_domain(v, self.types[v])
        for i, alias in bind_alias.items():
            lit, info = lits[i], preds[i]
            for j, arg in enumerate(lit.atom.args):
                expr = base.id_expr(arg, info.arg_types[j])
                if expr != f"{alias}.a{j}":
                    base.conds.append(f"{alias}.a{j} = {expr}")
        for c in comps:    # every comparison conjunct must hold
            truth = base.compare_expr(c.op, c.left, c.right)
            base.conds.append(truth if c.positive else f"NOT {truth}")
        base_cols = [f"{r}.rid AS rid"]
        out_cols = ["g.rid AS rid"]
        outer_joins: list[str] = []
        outer_conds: list[str] = []
        result = TemplateQuery(sql="")
        for i, (lit, info) in enumerate(zip(lits, preds)):
            if i in bind_alias:
                if info.n_unknown == 0:
                    continue                 # true by evidence
                cols = []
                for j, arg in enumerate(lit.atom.args):
                    col = f"x{i}_{j}"
                    base_cols.append(f"{base.id_expr(arg, info.arg_types[j])} AS {col}")
                    cols.append(col)
                base_cols.append(f"{bind_alias[i]}.t AS s{i}")
                out_cols.extend(f"g.{c} AS {c}" for c in cols)
                out_cols.append(f"g.s{i} AS s{i}")
                result.literals.append(OutLiteral(info.index, lit.positive, cols, f"s{i}"))
                continue
            falsify = 0 if lit.positive else 1     # evidence truth that makes the conjunct false
            listed = 0 if info.labels else info.n_rows
            cols = []                            # (an undefined term: no such binding)
            for j, arg in enumerate(lit.atom.args):
                col = f"x{i}_{j}"
                base_cols.append(f"{base.id_expr(arg, info.arg_types[j])} AS {col}")
                cols.append(col)
            if info.closed and not lit.positive and info.n_true + info.n_unknown == 0:
                continue                         # !P with P false everywhere: true, dropped
            status_col = None
            if listed:
                match = " AND ".join(f"l{i}.a{j} = g.{c}" for j, c in enumerate(cols)) or "TRUE"
                outer_joins.append(f" LEFT JOIN {info.table} AS l{i} ON {match}")
                status = f"COALESCE(l{i}.t, {info.default})"
                outer_conds.append(f"{status} <> {falsify}")
                status_col = f"s{i}"
                out_cols.append(f"{status} AS {status_col}")
            elif info.closed:
                continue                         # not listed, closed: false atom, negative conjunct true
            out_cols.extend(f"g.{c} AS {c}" for c in cols)
            result.literals.append(OutLiteral(info.index, lit.positive, cols, status_col))
        base_sql = base.select_sql(base_cols)
        where = (" WHERE " + " AND ".join(outer_conds)) if outer_conds else ""
        result.sql = f"SELECT {', '.join(out_cols)} FROM ({base_sql}) AS g{''.join(outer_joins)}{where}"
        return result
