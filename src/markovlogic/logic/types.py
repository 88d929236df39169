"""Type inference for the variables of a formula.

A variable's type comes from the argument positions it fills: predicate
arguments (``PredicateDecl.arg_types``) and user-function arguments
(``FunctionDecl.arg_types``) fix it, and two such positions of different types
are an error. A variable that fills no such position takes, by propagation, the
type of what it is compared with (``x = y`` with ``y`` typed; ``x = motherOf(y)``
takes the function's return type) or of the slot an internal function term
fills (``Next(t, t + 1)``: ``t`` gets ``Next``'s second argument type). A
variable left without a type is an error.
"""

from __future__ import annotations

from typing import Iterator

from ..errors import MLNSemanticError
from ..lang.ast import (
    And,
    Atom,
    Compare,
    Const,
    Exists,
    Forall,
    Formula,
    Func,
    Iff,
    Implies,
    Not,
    Or,
    Pos,
    Term,
    Var,
)
from ..lang.checks import subformulas
from ..model import MLN
from .clauses import Comparison, ExistsGroup, Literal
from .nnf import NAnd, NExists, NForall, NOr, rewrite_internal_predicates


def semantic_error(message: str, *positions: Pos | None) -> MLNSemanticError:
    """An ``MLNSemanticError`` located at the first known position."""
    for p in positions:
        if p is not None:
            return MLNSemanticError(message, file=p.file, line=p.line, column=p.column)
    return MLNSemanticError(message)


def _leaves(node) -> Iterator[Atom | tuple[Term, Term, str, Pos | None]]:
    """Atoms and comparisons (as ``(left, right, op, pos)``) of an AST or NNF formula."""
    if isinstance(node, Atom):
        yield node
    elif isinstance(node, Literal):
        yield node.atom
    elif isinstance(node, Compare):
        yield (node.left, node.right, node.op, node.pos)
    elif isinstance(node, Comparison):
        yield (node.left, node.right, node.op, None)
    elif isinstance(node, (Not, Forall, Exists, NForall, NExists)):
        yield from _leaves(node.body)
    elif isinstance(node, (And, Or, Implies, Iff)):
        yield from _leaves(node.left)
        yield from _leaves(node.right)
    elif isinstance(node, (NAnd, NOr)):
        for c in node.children:
            yield from _leaves(c)
    elif isinstance(node, ExistsGroup):
        for c in node.conjuncts:
            yield from _leaves(c)


def _show_term(t: Term, shown) -> str:
    if isinstance(t, Var):
        return shown(t.name)
    if isinstance(t, Func):
        return f"{t.name}(...)"
    return t.name


def check_atom(atom: Atom, mln: MLN, formula_pos: Pos | None = None) -> None:
    """Declared predicate with the right arity; declared user functions with the right arity."""
    decl = mln.predicates.get(atom.predicate)
    if decl is None:
        raise semantic_error(f"undeclared predicate {atom.predicate}", atom.pos, formula_pos)
    if decl.arity != len(atom.args):
        raise semantic_error(
            f"predicate {atom.predicate} takes {decl.arity} argument(s), got {len(atom.args)}",
            atom.pos, formula_pos,
        )


def infer_variable_types(
    formula: Formula | object,
    mln: MLN,
    *,
    formula_pos: Pos | None = None,
    display: dict[str, str] | None = None,
) -> dict[str, str]:
    """Map every variable name of ``formula`` (AST or NNF) to its type.

    Variables are identified by name (rename quantified variables apart first
    if one name is bound twice with different meanings). ``display`` maps
    internal names to the names the user wrote, for messages. Raises
    ``MLNSemanticError`` (at the variable's, else the formula's, position) when
    a variable gets two types, an atom names an undeclared predicate or
    function or has the wrong arity, or a variable's type cannot be found.
    """
    display = display or {}
    if isinstance(formula, (Atom, Compare, Not, And, Or, Implies, Iff, Forall, Exists)):
        formula = rewrite_internal_predicates(formula, mln.predicates)
    types: dict[str, str] = {}
    where: dict[str, str] = {}
    seen: dict[str, Pos | None] = {}
    compares: list[tuple[Term, Term]] = []
    compare_nodes: list[tuple[Term, Term, tuple[str, Pos | None]]] = []
    weak: list[tuple[Term, str]] = []   # (internal-function argument, slot type)

    def shown(name: str) -> str:
        return display.get(name, name)

    def strong(t: Term, typ: str, context: str) -> None:
        if isinstance(t, Var):
            seen.setdefault(t.name, t.pos)
            old = types.get(t.name)
            if old is None:
                types[t.name] = typ
                where[t.name] = context
            elif old != typ:
                raise semantic_error(
                    f"variable {shown(t.name)} has type {old} (as {where[t.name]}) "
                    f"and type {typ} (as {context})",
                    t.pos, formula_pos,
                )
        elif isinstance(t, Func):
            if t.is_internal:
                for a in t.args:
                    weak.append((a, typ))
                    _collect(a)
                return
            fdecl = mln.functions.get(t.name)
            if fdecl is None:
                raise semantic_error(f"undeclared function {t.name}", t.pos, formula_pos)
            if fdecl.arity != len(t.args):
                raise semantic_error(
                    f"function {t.name} takes {fdecl.arity} argument(s), got {len(t.args)}",
                    t.pos, formula_pos,
                )
            if fdecl.return_type != typ:
                raise semantic_error(
                    f"function {t.name} returns {fdecl.return_type} where {context} expects {typ}",
                    t.pos, formula_pos,
                )
            for i, (a, at) in enumerate(zip(t.args, fdecl.arg_types)):
                strong(a, at, f"argument {i + 1} of {t.name}")

    def _collect(t: Term) -> None:
        """Register the variables of a term whose type is not fixed here."""
        if isinstance(t, Var):
            seen.setdefault(t.name, t.pos)
        elif isinstance(t, Func):
            if t.is_internal:
                for a in t.args:
                    _collect(a)
            else:
                fdecl = mln.functions.get(t.name)
                if fdecl is None:
                    raise semantic_error(f"undeclared function {t.name}", t.pos, formula_pos)
                strong(t, fdecl.return_type, f"a term of type {fdecl.return_type}")

    for leaf in _leaves(formula):
        if isinstance(leaf, Atom):
            check_atom(leaf, mln, formula_pos)
            decl = mln.predicates[leaf.predicate]
            for i, (a, at) in enumerate(zip(leaf.args, decl.arg_types)):
                strong(a, at, f"argument {i + 1} of {leaf.predicate}")
        else:
            left, right, op, cpos = leaf
            _collect(left)
            _collect(right)
            compares.append((left, right))
            compare_nodes.append((left, right, (op, cpos)))

    def term_type(t: Term) -> str | None:
        if isinstance(t, Var):
            return types.get(t.name)
        if isinstance(t, Func):
            if not t.is_internal:
                return mln.functions[t.name].return_type
            for a in t.args:
                tt = term_type(a)
                if tt is not None:
                    return tt
        return None

    def _fixed_type(t: Term) -> str | None:
        """The type of a variable or user-function term (not of arithmetic)."""
        if isinstance(t, Var):
            return types.get(t.name)
        if isinstance(t, Func) and not t.is_internal:
            return mln.functions[t.name].return_type
        return None

    def propose(t: Term, typ: str) -> bool:
        if isinstance(t, Var):
            if t.name not in types:
                types[t.name] = typ
                where[t.name] = "a comparison"
                return True
            return False
        if isinstance(t, Func) and t.is_internal:
            return any([propose(a, typ) for a in t.args])
        return False

    changed = True
    while changed:
        changed = False
        for t, typ in weak:
            changed |= propose(t, typ)
        for left, right in compares:
            lt, rt = term_type(left), term_type(right)
            if lt is not None:
                changed |= propose(right, lt)
            if rt is not None:
                changed |= propose(left, rt)
        if not changed:
            # variables of one internal-function term share its type (x = y + z)
            for left, right in compares:
                for side in (left, right):
                    if isinstance(side, Func) and side.is_internal:
                        st = term_type(side)
                        if st is not None:
                            changed |= propose(side, st)

    for left, right, pos in compare_nodes:
        if pos[0] != "=":
            continue
        lt, rt = _fixed_type(left), _fixed_type(right)
        if lt is not None and rt is not None and lt != rt:
            raise semantic_error(
                f"'=' compares a {lt} ({_show_term(left, shown)}) with a {rt} ({_show_term(right, shown)})",
                pos[1], getattr(left, "pos", None), getattr(right, "pos", None), formula_pos,
            )

    for name, p in seen.items():
        if name not in types:
            raise semantic_error(
                f"cannot infer the type of variable {shown(name)}: it is not an argument "
                "of any predicate or function, nor compared with a typed term",
                p, formula_pos,
            )
    return types


def plus_variables(formula: Formula, formula_pos: Pos | None = None) -> tuple[str, ...]:
    """The ``+`` variables of ``formula`` in order of first appearance.

    A variable written with ``+`` must carry it at every occurrence, and may
    not be bound by a quantifier; both are ``MLNSemanticError``s.
    """
    marks: dict[str, tuple[bool, Pos | None]] = {}
    order: list[str] = []
    bound: set[str] = set()

    def visit_term(t: Term) -> None:
        if isinstance(t, Var):
            if t.name in marks:
                plus0, pos0 = marks[t.name]
                if plus0 != t.plus:
                    raise semantic_error(
                        f"variable {t.name} is written with '+' at one occurrence and without "
                        "at another; mark every occurrence or none",
                        t.pos, pos0, formula_pos,
                    )
            else:
                marks[t.name] = (t.plus, t.pos)
                if t.plus:
                    order.append(t.name)
        elif isinstance(t, Func):
            for a in t.args:
                visit_term(a)

    for f in subformulas(formula):
        if isinstance(f, Atom):
            for a in f.args:
                visit_term(a)
        elif isinstance(f, Compare):
            visit_term(f.left)
            visit_term(f.right)
        elif isinstance(f, (Forall, Exists)):
            bound.update(f.variables)
    for name in order:
        if name in bound:
            raise semantic_error(
                f"'+' variable {name} is bound by a quantifier", marks[name][1], formula_pos
            )
    return tuple(order)
