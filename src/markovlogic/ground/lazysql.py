"""Grounding queries with a condition on each literal (lazy inference's SQL).

:class:`~.sqlgen.TemplateCompiler` grounds a template against the evidence
(``mode="ground"``) or against the evidence plus a world (``"violated"``).
Lazy inference (``ground/activation.py``) asks narrower questions: "the
groundings whose negative literals are all on active atoms, one of them on an
atom activated in this batch", "the ground unit clauses of these atoms", "the
groundings in which every literal but one is false in this world". Each is a
conjunction of one condition per literal, which :class:`LiteralCompiler`
turns into the same two-level query (inner joins that bind the variables,
then left joins for the truth of the remaining literals):

``Dropped()``
    the literal is false by evidence (its atom is known): it is dropped from
    the ground clause. A negative literal is an inner join with the true rows.
``FalseIn(world, same, allow_same)``
    the literal is false when the unknown atoms listed in ``world`` (a table
    or ``UNION`` of tables with columns ``a0..``) are true and every other
    unknown atom is false: a negative literal joins with the evidence's true
    rows and ``world``; a positive literal is not true by evidence and its
    atom is not in ``world``. Unknown atoms stay literals of the clause.
    With ``same=i``: the literal's atom is not that of literal ``i``, or,
    with ``allow_same``, it is false in the world *or* on literal ``i``'s
    atom (a flip of that atom then changes both).
``In(table)``
    the literal's atom is one of the (unknown) atoms listed in ``table``: an
    inner join, so a small table drives the query (a batch of newly active
    atoms, say, against a formula with a billion groundings).
``Any(exclude)``
    the literal is not true by evidence (as in plain grounding), and its atom
    is in none of the ``exclude`` tables.
``Unknown(exclude)``
    as ``Any``, and the atom is unknown (the literal stays in the clause).
``DroppedOrSame(i)``
    ``Dropped``, or the literal is on the same atom as literal ``i`` (of the
    same sign): the ground clause then has one literal less. Unit clauses
    that a grounding with a repeated atom produces (``!R(x, y) v !R(y, x)``
    at ``x = y``) are found this way.

``min_unknown``/``max_unknown`` bound the number of literals left in the
ground clause (unit clauses are fetched by their own query, so the others
ask for at least two). A literal excluded by a condition that cannot hold
(an ``In`` over a closed predicate's false atoms, ``Dropped`` on a
predicate with no evidence) makes the query empty rather than wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..logic.clauses import ClauseTemplate, Literal
from ..store.store import EvidenceStore, PredicateInfo
from .sqlgen import OutLiteral, TemplateCompiler, TemplateQuery


@dataclass(frozen=True)
class Dropped:
    pass


@dataclass(frozen=True)
class FalseIn:
    world: str | None = None        # SQL of a table of atoms (a0..), or None: only the evidence
    same: int | None = None         # a literal (of this predicate) whose atom this one ...
    allow_same: bool = False        # ... may repeat instead of being false (True), or must not repeat


@dataclass(frozen=True)
class In:
    table: str


@dataclass(frozen=True)
class Any:
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unknown:
    exclude: tuple[str, ...] = ()


@dataclass(frozen=True)
class DroppedOrSame:
    literal: int                    # the template literal whose atom this one may repeat


Condition = Dropped | FalseIn | In | Any | Unknown | DroppedOrSame


@dataclass
class LiteralQuery(TemplateQuery):
    """A compiled query; ``statuses`` are the output status columns of the
    literals that may stay (``None`` for a literal that always stays)."""

    statuses: list[str | None] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)     # template literal of each output literal


class LiteralCompiler(TemplateCompiler):
    """The grounding query of ``template`` under one condition per literal
    (``conditions[i]`` for ``template.literals[i]``; see the module docstring)."""

    def __init__(self, store: EvidenceStore, template: ClauseTemplate, conditions: list[Condition], *,
                 export_vars: list[str] | None = None, min_unknown: int = 0,
                 max_unknown: int | None = None) -> None:
        super().__init__(store, template, mode="lazy", export_vars=export_vars)
        if len(conditions) != len(template.literals):
            raise ValueError("one condition per literal")
        self.conditions = list(conditions)
        self.min_unknown = int(min_unknown)
        self.max_unknown = max_unknown
        self._index = {id(lit): i for i, lit in enumerate(template.literals)}

    # ------------------------------------------------------------ planning
    @staticmethod
    def _cols(info: PredicateInfo) -> str:
        return ", ".join(f"a{j}" for j in range(info.arity))

    def _true_rows(self, info: PredicateInfo, status: int) -> str | None:
        """SELECT of the predicate's true evidence rows with a status column."""
        if not info.n_true or info.labels:
            return None
        cols = self._cols(info)
        return f"SELECT {cols}{',' if cols else ''} {status} AS t FROM {info.table} WHERE t = 1"

    def _binding(self, lit: Literal, info: PredicateInfo) -> str | None:
        cond = self.conditions[self._index[id(lit)]]
        cols = self._cols(info)
        sep = "," if cols else ""
        if isinstance(cond, In):
            if info.closed and not info.n_unknown:
                return "EMPTY"                        # a closed predicate with no unknown atom
            return f"(SELECT {cols}{sep} -1 AS t FROM {cond.table})"
        if lit.positive or isinstance(cond, DroppedOrSame) or (isinstance(cond, FalseIn) and cond.allow_same):
            return None
        if isinstance(cond, Dropped):
            rows = self._true_rows(info, 1)
            return "EMPTY" if rows is None else f"({rows})"
        if isinstance(cond, FalseIn):
            parts = [p for p in [self._true_rows(info, 1)] if p is not None]
            if cond.world is not None:
                parts.append(f"SELECT {cols}{sep} -1 AS t FROM {cond.world}")
            return "EMPTY" if not parts else "(" + " UNION ALL ".join(parts) + ")"
        # Any / Unknown: as plain grounding (a closed predicate's negative literal
        # joins with its true and unknown rows; an open one is a left join)
        if info.closed:
            if info.n_true + info.n_unknown == 0:
                return "EMPTY"                        # literal true everywhere
            return info.table
        return None

    def build(self) -> LiteralQuery:
        for lit, cond, info in zip(self.t.literals, self.conditions, self.preds):
            if isinstance(cond, (In, Unknown)) and info.labels is False and info.closed and not info.n_unknown:
                return LiteralQuery(sql="", empty=True)     # no unknown atom to be had
        self._kept: list[int] = []
        q = super().build()
        out = LiteralQuery(sql=q.sql, literals=q.literals, var_cols=q.var_cols, empty=q.empty)
        if q.empty:
            return out
        out.kept = list(self._kept)
        assert len(out.kept) == len(q.literals)
        out.statuses = [lit.status_col for lit in q.literals]
        terms = [f"(CASE WHEN q.{s} = -1 THEN 1 ELSE 0 END)" if s is not None else "1" for s in out.statuses]
        count = " + ".join(terms) or "0"
        conds = []
        if self.min_unknown > 0:
            conds.append(f"({count}) >= {self.min_unknown}")
        if self.max_unknown is not None:
            conds.append(f"({count}) <= {self.max_unknown}")
        if conds:
            out.sql = f"SELECT * FROM ({q.sql}) AS q WHERE {' AND '.join(conds)}"
        return out

    def _plan_bound(self, i, lit, info, alias, base, base_cols, out_cols):
        """A literal that is an inner join in the base query: an ``In`` (always
        unknown, stays), or a negative literal joined with rows whose ``t`` is
        its status (-1: unknown, stays; 1: true atom, literal false, dropped)."""
        cond = self.conditions[i]
        if isinstance(cond, (Any, Unknown)):
            if isinstance(cond, Unknown):
                base.conds.append(f"{alias}.t = -1")
            exprs = [base.id_expr(arg, info.arg_types[j]) for j, arg in enumerate(lit.atom.args)]
            for table in cond.exclude:
                match = " AND ".join(f"x.a{j} = {e}" for j, e in enumerate(exprs)) or "TRUE"
                base.conds.append(f"NOT EXISTS (SELECT 1 FROM {table} AS x WHERE {match})")
            if info.n_unknown == 0:
                return None                           # joined with true rows only: false, dropped
        elif isinstance(cond, Dropped) or (isinstance(cond, FalseIn) and cond.world is None):
            return None                               # joined with true rows only: false, dropped
        if isinstance(cond, FalseIn) and cond.same is not None:
            base.conds.append(f"NOT ({self._same_expr(lit, info, cond.same, base)})")
        cols = self._arg_columns(i, lit, info, base, base_cols)
        self._emit(out_cols, cols)
        self._kept.append(i)
        if isinstance(cond, In):
            return OutLiteral(info.index, lit.positive, cols, None)
        base_cols.append(f"{alias}.t AS s{i}")
        out_cols.append(f"g.s{i} AS s{i}")
        return OutLiteral(info.index, lit.positive, cols, f"s{i}")

    def _plan_free(self, i, lit, info, base, base_cols, out_cols, outer_joins, outer_conds):
        """A literal whose truth comes from a left join with its evidence rows
        (or its predicate's default)."""
        cond = self.conditions[i]
        sat = 1 if lit.positive else 0          # evidence truth that satisfies the literal
        listed = 0 if info.labels else info.n_rows
        cols = self._arg_columns(i, lit, info, base, base_cols)
        # the literal's truth by evidence alone: 1 satisfied, 0 false, -1 unknown
        if listed:
            match = " AND ".join(f"l{i}.a{j} = g.{c}" for j, c in enumerate(cols)) or "TRUE"
            outer_joins.append(f" LEFT JOIN {info.table} AS l{i} ON {match}")
            status = f"COALESCE(l{i}.t, {info.default})"
        else:
            status = str(info.default)
        if info.closed and not listed:
            status = "0"
        # an atom with status 0/1 is known; its literal is satisfied when status == sat
        if status in ("0", "1", "-1"):
            value = int(status)
            if value == sat:
                return False                         # satisfied by evidence everywhere: no grounding
            if isinstance(cond, (Unknown, In)) and value != -1:
                return False
            if isinstance(cond, Dropped) and value == -1:
                return False
        else:
            outer_conds.append(f"{status} <> {sat}")
            if isinstance(cond, Unknown):
                outer_conds.append(f"{status} = -1")
            elif isinstance(cond, Dropped):
                outer_conds.append(f"{status} <> -1")
        if isinstance(cond, DroppedOrSame):
            return self._plan_same(i, lit, info, cond, status, cols, base, base_cols, out_cols, outer_conds)
        if isinstance(cond, FalseIn):
            # false in the world: a positive literal's atom is not in it (and not
            # true by evidence, above); a negative (free) literal's atom is true
            # by evidence or in it
            wmatch = " AND ".join(f"w.a{j} = g.{c}" for j, c in enumerate(cols)) or "TRUE"
            in_world = f"EXISTS (SELECT 1 FROM {cond.world} AS w WHERE {wmatch})" if cond.world else "FALSE"
            false = f"NOT {in_world}" if lit.positive else f"({status} = 1 OR {in_world})"
            if cond.same is not None:
                base_cols.append(f"({self._same_expr(lit, info, cond.same, base)}) AS e{i}")
                false = f"({false} OR g.e{i})" if cond.allow_same else f"({false} AND NOT g.e{i})"
            if false != "NOT FALSE":
                outer_conds.append(false)
        if isinstance(cond, (Any, Unknown)):
            for table in cond.exclude:
                wmatch = " AND ".join(f"w.a{j} = g.{c}" for j, c in enumerate(cols)) or "TRUE"
                outer_conds.append(f"NOT EXISTS (SELECT 1 FROM {table} AS w WHERE {wmatch})")
        if isinstance(cond, Dropped) or status in ("0", "1"):
            return None                              # known and false: dropped
        status_col = None
        if status != "-1":
            status_col = f"s{i}"
            out_cols.append(f"{status} AS {status_col}")
        self._emit(out_cols, cols)
        self._kept.append(i)
        return OutLiteral(info.index, lit.positive, cols, status_col)

    def _same_expr(self, lit, info, other: int, base) -> str:
        """SQL: ``lit``'s atom is that of template literal ``other``."""
        that = self.t.literals[other]
        mine = [base.id_expr(arg, info.arg_types[j]) for j, arg in enumerate(lit.atom.args)]
        theirs = [base.id_expr(arg, info.arg_types[j]) for j, arg in enumerate(that.atom.args)]
        return " AND ".join(f"({a}) = ({b})" for a, b in zip(mine, theirs)) or "TRUE"

    def _plan_same(self, i, lit, info, cond, status, cols, base, base_cols, out_cols, outer_conds):
        """``DroppedOrSame``: false by evidence (dropped), or the same atom as
        literal ``cond.literal`` (kept; canonicalisation merges the two)."""
        other = self.t.literals[cond.literal]
        mine = [base.id_expr(arg, info.arg_types[j]) for j, arg in enumerate(lit.atom.args)]
        theirs = [base.id_expr(arg, info.arg_types[j]) for j, arg in enumerate(other.atom.args)]
        same = " AND ".join(f"({a}) = ({b})" for a, b in zip(mine, theirs)) or "TRUE"
        drop = 0 if lit.positive else 1           # evidence truth that makes the literal false
        if status in ("0", "1", "-1"):
            if int(status) == drop:
                return None                          # always dropped
            base.conds.append(same)                  # unknown: must be the same atom
            self._emit(out_cols, cols)
            self._kept.append(i)
            return OutLiteral(info.index, lit.positive, cols, None)
        base_cols.append(f"({same}) AS e{i}")
        outer_conds.append(f"({status} = {drop} OR ({status} = -1 AND g.e{i}))")
        out_cols.append(f"{status} AS s{i}")
        self._emit(out_cols, cols)
        self._kept.append(i)
        return OutLiteral(info.index, lit.positive, cols, f"s{i}")
