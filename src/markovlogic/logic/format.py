"""Clause templates back to Alchemy syntax (learning output, ``--dump``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..lang.ast import ARITHMETIC_OPERATORS, Atom, Const, Func, Term, Var
from .clauses import ClauseTemplate, Comparison, ExistsGroup, Literal


def format_term(t: Term, plus_vars: frozenset[str] | set[str] = frozenset(), nested: bool = False) -> str:
    """A term as written in Alchemy: ``x``, ``+x``, ``Alice``, ``motherOf(x)``,
    ``t + 1`` (infix arithmetic, parenthesised when nested)."""
    if isinstance(t, Var):
        return ("+" if (t.plus or t.name in plus_vars) else "") + t.name
    if isinstance(t, Const):
        return t.name
    if isinstance(t, Func):
        if t.name in ARITHMETIC_OPERATORS and len(t.args) == 2:
            text = f"{format_term(t.args[0], plus_vars, True)} {t.name} {format_term(t.args[1], plus_vars, True)}"
            return f"({text})" if nested else text
        return f"{t.name}({','.join(format_term(a, plus_vars) for a in t.args)})"
    raise TypeError(f"not a term: {t!r}")


def format_atom(a: Atom, plus_vars: frozenset[str] | set[str] = frozenset()) -> str:
    if not a.args:
        return a.predicate
    return f"{a.predicate}({','.join(format_term(x, plus_vars) for x in a.args)})"


def format_leaf(d: Literal | Comparison, plus_vars: frozenset[str] | set[str] = frozenset()) -> str:
    """``!P(x)``, ``x = y``, ``!(x = y)``."""
    if isinstance(d, Literal):
        return ("" if d.positive else "!") + format_atom(d.atom, plus_vars)
    if d.op.isidentifier():   # internal predicate, e.g. substr(a,b)
        text = f"{d.op}({format_term(d.left, plus_vars)},{format_term(d.right, plus_vars)})"
        return text if d.positive else f"!{text}"
    text = f"{format_term(d.left, plus_vars)} {d.op} {format_term(d.right, plus_vars)}"
    return text if d.positive else f"!({text})"


def format_exists(g: ExistsGroup, plus_vars: frozenset[str] | set[str] = frozenset()) -> str:
    """``EXIST y P(x,y)`` or ``EXIST y,z (P(x,y) ^ Q(y,z))``."""
    body = " ^ ".join(format_leaf(c, plus_vars) for c in g.conjuncts)
    if len(g.conjuncts) > 1:
        body = f"({body})"
    return f"EXIST {','.join(g.variables)} {body}"


def _bind_term(t: Term, binding: Mapping[str, str]) -> Term:
    if isinstance(t, Var):
        return Const(binding[t.name]) if t.name in binding else t
    if isinstance(t, Func):
        return Func(t.name, tuple(_bind_term(a, binding) for a in t.args))
    return t


def _bind_leaf(d: Literal | Comparison, binding: Mapping[str, str]) -> Literal | Comparison:
    if isinstance(d, Literal):
        return Literal(Atom(d.atom.predicate, tuple(_bind_term(a, binding) for a in d.atom.args)), d.positive)
    return Comparison(d.op, _bind_term(d.left, binding), _bind_term(d.right, binding), d.positive)


def bind_template(t: ClauseTemplate, binding: Mapping[str, str]) -> ClauseTemplate:
    """``t`` with variables replaced by constants (``{"y": "Faculty"}``), e.g. to
    print one weight of a ``+`` clause as ``hasPosition(x,Faculty)``. Bound
    variables leave ``var_types`` and ``plus_vars``. Existential variables are
    not substituted."""
    group_vars = {v for g in t.exists for v in g.variables}
    b = {k: v for k, v in binding.items() if k not in group_vars}
    return replace(
        t,
        literals=tuple(_bind_leaf(d, b) for d in t.literals),  # type: ignore[misc]
        comparisons=tuple(_bind_leaf(d, b) for d in t.comparisons),  # type: ignore[misc]
        exists=tuple(
            ExistsGroup(g.variables, tuple(_bind_leaf(c, b) for c in g.conjuncts)) for g in t.exists
        ),
        var_types=tuple((v, ty) for v, ty in t.var_types if v not in b),
        plus_vars=tuple(v for v in t.plus_vars if v not in b),
    )


def format_clause(t: ClauseTemplate, binding: Mapping[str, str] | None = None) -> str:
    """The clause in Alchemy syntax, e.g. ``!Smokes(x) v Cancer(x)``: literals,
    then comparisons, then existential groups; ``+`` variables keep their ``+``.
    With ``binding`` (variable -> constant name), those variables are printed as
    the constants (see :func:`bind_template`)."""
    if binding:
        t = bind_template(t, binding)
    plus = frozenset(t.plus_vars)
    parts = [format_leaf(d, plus) for d in t.literals]
    parts += [format_leaf(d, plus) for d in t.comparisons]
    parts += [format_exists(g, plus) for g in t.exists]
    return " v ".join(parts)


def format_template(t: ClauseTemplate, binding: Mapping[str, str] | None = None) -> str:
    """A line of an .mln file: ``1.5  !Smokes(x) v Cancer(x)``, hard clauses with
    a trailing period, unweighted ones bare."""
    body = format_clause(t, binding)
    if t.hard:
        return f"{body}."
    if t.weight is None:
        return body
    return f"{t.weight:.6g}  {body}"
