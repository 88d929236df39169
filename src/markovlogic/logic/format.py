"""Clause templates back to Alchemy syntax (learning output, ``--dump``)."""

from __future__ import annotations

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


def format_clause(t: ClauseTemplate) -> str:
    """The clause in Alchemy syntax, e.g. ``!Smokes(x) v Cancer(x)``: literals,
    then comparisons, then existential groups; ``+`` variables keep their ``+``."""
    plus = frozenset(t.plus_vars)
    parts = [format_leaf(d, plus) for d in t.literals]
    parts += [format_leaf(d, plus) for d in t.comparisons]
    parts += [format_exists(g, plus) for g in t.exists]
    return " v ".join(parts)


def format_template(t: ClauseTemplate) -> str:
    """A line of an .mln file: ``1.5  !Smokes(x) v Cancer(x)``, hard clauses with
    a trailing period, unweighted ones bare."""
    body = format_clause(t)
    if t.hard:
        return f"{body}."
    if t.weight is None:
        return body
    return f"{t.weight:.6g}  {body}"
