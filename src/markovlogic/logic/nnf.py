"""Negation normal form, ``*`` expansion and renaming of bound variables.

The NNF tree uses the clause-level leaves of ``logic.clauses`` (``Literal`` and
``Comparison``) plus n-ary ``NAnd``/``NOr``, the quantifiers ``NForall`` and
``NExists`` and the constants ``TRUE``/``FALSE``. ``=>`` and ``<=>`` are gone,
negations sit only on leaves, nested conjunctions/disjunctions are flattened,
and comparisons that are decided by their syntax alone (``x = x``, ``A = B``,
``1 < 2``) are folded into constants.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Callable, Container, Iterator, Union

from ..lang import ast as _ast
from ..lang.checks import subformulas

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
    Term,
    Var,
)
from .clauses import Comparison, ExistsGroup, Literal


@dataclass(frozen=True)
class BoolConst:
    value: bool


TRUE = BoolConst(True)
FALSE = BoolConst(False)


@dataclass(frozen=True)
class NAnd:
    children: tuple["NNF", ...]


@dataclass(frozen=True)
class NOr:
    children: tuple["NNF", ...]


@dataclass(frozen=True)
class NForall:
    variables: tuple[str, ...]
    body: "NNF"


@dataclass(frozen=True)
class NExists:
    variables: tuple[str, ...]
    body: "NNF"


NNF = Union[Literal, Comparison, ExistsGroup, BoolConst, NAnd, NOr, NForall, NExists]


# ---------------------------------------------------------------- terms


def map_term_vars(term: Term, fn: Callable[[Var], Term]) -> Term:
    """Rebuild ``term`` with every variable replaced by ``fn(var)``."""
    if isinstance(term, Var):
        return fn(term)
    if isinstance(term, Func):
        return replace(term, args=tuple(map_term_vars(a, fn) for a in term.args))
    return term


def term_vars(term: Term) -> Iterator[Var]:
    if isinstance(term, Var):
        yield term
    elif isinstance(term, Func):
        for a in term.args:
            yield from term_vars(a)


def _as_int(name: str) -> int | None:
    try:
        return int(name)
    except ValueError:
        return None


def _unquote(name: str) -> str:
    if len(name) >= 2 and name[0] == '"' and name[-1] == '"':
        return name[1:-1]
    return name


def evaluate_comparison(c: Comparison) -> bool | None:
    """The truth value of a comparison decided by syntax alone, else None.

    Identical terms are equal (functions are deterministic); distinct constants
    are distinct (unique names); integer constants compare numerically.
    """
    if c.left == c.right:
        value = c.op in ("=", "<=", ">=", "substr")
    elif c.op == "substr":
        if not (isinstance(c.left, Const) and isinstance(c.right, Const)):
            return None
        value = _unquote(c.left.name) in _unquote(c.right.name)
    elif isinstance(c.left, Const) and isinstance(c.right, Const):
        a, b = _as_int(c.left.name), _as_int(c.right.name)
        if a is not None and b is not None:
            value = {"=": a == b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[c.op]
        elif c.op == "=":
            value = _unquote(c.left.name) == _unquote(c.right.name)
        else:
            return None
    else:
        return None
    return value if c.positive else not value


# Alchemy's internal predicates written as atoms (``substr(a, b)``: ``a`` is a
# substring of ``b``). Unless the MLN declares a predicate of that name they
# are built-in literals: ``Comparison`` with the predicate name as ``op``.
INTERNAL_PREDICATES = frozenset(getattr(_ast, "INTERNAL_PREDICATES", {"substr"}))


def rebuild(formula: Formula, leaf: Callable[[Formula], Formula]) -> Formula:
    """``formula`` with every atom and comparison replaced by ``leaf(it)``;
    subtrees that do not change are kept. Iterative, so any depth works."""
    out: list[Formula] = []
    stack: list[tuple[Formula, bool]] = [(formula, False)]
    while stack:
        f, done = stack.pop()
        kind = type(f)
        if kind is Atom or kind is Compare:
            out.append(leaf(f))
            continue
        unary = kind is Not or kind is Forall or kind is Exists
        if not done:
            stack.append((f, True))
            if unary:
                stack.append((f.body, False))
            else:
                stack.append((f.right, False))
                stack.append((f.left, False))
            continue
        if unary:
            body = out.pop()
            out.append(f if body is f.body else replace(f, body=body))
        else:
            right = out.pop()
            left = out.pop()
            out.append(f if (left is f.left and right is f.right) else replace(f, left=left, right=right))
    return out[0]


def rewrite_internal_predicates(formula: Formula, declared: Container[str]) -> Formula:
    """Turn atoms of undeclared internal predicates into ``Compare`` nodes."""
    def leaf(f: Formula) -> Formula:
        if isinstance(f, Atom) and f.predicate in INTERNAL_PREDICATES and f.predicate not in declared \
                and len(f.args) == 2:
            return Compare(f.predicate, f.args[0], f.args[1], pos=f.pos)
        return f

    return rebuild(formula, leaf)


# ---------------------------------------------------------------- constructors


def _nary(cls: type, children, identity: BoolConst, absorbing: BoolConst) -> "NNF":
    """``cls`` (NAnd or NOr) over ``children``: nested ``cls`` nodes flattened,
    ``identity`` dropped, ``absorbing`` absorbing everything."""
    out: list[NNF] = []
    for c in children:
        if isinstance(c, cls):
            out.extend(c.children)
        elif c == identity:
            continue
        elif c == absorbing:
            return absorbing
        else:
            out.append(c)
    if not out:
        return identity
    if len(out) == 1:
        return out[0]
    return cls(tuple(out))


def make_and(children: list["NNF"] | tuple["NNF", ...]) -> "NNF":
    """An n-ary conjunction, flattened and simplified with constants."""
    return _nary(NAnd, children, TRUE, FALSE)


def make_or(children: list["NNF"] | tuple["NNF", ...]) -> "NNF":
    """An n-ary disjunction, flattened and simplified with constants."""
    return _nary(NOr, children, FALSE, TRUE)


def _quant(cls: type, variables: tuple[str, ...], body: "NNF") -> "NNF":
    if isinstance(body, BoolConst) or not variables:
        return body
    if isinstance(body, cls):  # merge directly nested quantifiers of one kind
        return cls(tuple(variables) + body.variables, body.body)
    return cls(tuple(variables), body)


def comparison_leaf(c: Comparison) -> "NNF":
    v = evaluate_comparison(c)
    if v is None:
        return c
    return TRUE if v else FALSE


# ---------------------------------------------------------------- NNF


def to_nnf(formula: Formula, positive: bool = True, *, fold: bool = True) -> NNF:
    """Eliminate ``=>``/``<=>`` and push negations down to the leaves.

    ``positive=False`` gives the NNF of ``!formula``. Starred atoms must have
    been expanded (:func:`expand_star`) first. ``fold=False`` keeps comparisons
    decided by syntax (``x = x``) as leaves, so that type inference still sees
    every variable; :func:`fold_constants` folds them later.
    """
    if not fold:
        return _to_nnf(formula, positive, lambda c: c)
    return _to_nnf(formula, positive, comparison_leaf)


def fold_constants(f: NNF) -> NNF:
    """Fold comparisons decided by syntax into ``TRUE``/``FALSE`` and simplify."""
    if isinstance(f, Comparison):
        return comparison_leaf(f)
    if isinstance(f, NAnd):
        return make_and([fold_constants(c) for c in f.children])
    if isinstance(f, NOr):
        return make_or([fold_constants(c) for c in f.children])
    if isinstance(f, (NForall, NExists)):
        return _quant(type(f), f.variables, fold_constants(f.body))
    return f


def _operands(f: Formula, kind: type) -> list[Formula]:
    """The operands of a chain of one binary connective (``a v b v c``), in order."""
    out: list[Formula] = []
    stack = [f]
    while stack:
        g = stack.pop()
        if type(g) is kind:
            stack.append(g.right)
            stack.append(g.left)
        else:
            out.append(g)
    return out


def _to_nnf(formula: Formula, positive: bool, leaf: Callable[[Comparison], "NNF"]) -> NNF:
    """Iterative: chains of one connective become one n-ary node, negations are
    pushed down, and the recursion depth of Python is never used."""
    out: list[NNF] = []
    # work items: ("visit", formula, positive) | ("and"/"or", n) | ("quant", cls, variables)
    stack: list[tuple] = [("visit", formula, positive)]
    while stack:
        item = stack.pop()
        tag = item[0]
        if tag == "and" or tag == "or":
            n = item[1]
            kids = out[len(out) - n:]
            del out[len(out) - n:]
            out.append(make_and(kids) if tag == "and" else make_or(kids))
            continue
        if tag == "quant":
            out.append(_quant(item[1], item[2], out.pop()))
            continue
        f, pos = item[1], item[2]
        kind = type(f)
        while kind is Not:
            f, pos = f.body, not pos
            kind = type(f)
        if kind is Atom:
            if f.star:
                raise ValueError("to_nnf: expand '*' atoms first (expand_star)")
            out.append(Literal(f, pos))
        elif kind is Compare:
            out.append(leaf(Comparison(f.op, f.left, f.right, pos)))
        elif kind is And or kind is Or:
            kids = _operands(f, kind)
            stack.append(("and" if (kind is And) == pos else "or", len(kids)))
            for k in reversed(kids):
                stack.append(("visit", k, pos))
        elif kind is Implies:
            # positive: !a v b ; negative: a ^ !b
            stack.append(("or" if pos else "and", 2))
            stack.append(("visit", f.right, pos))
            stack.append(("visit", f.left, not pos))
        elif kind is Iff:
            a, b = f.left, f.right
            if pos:      # (!a v b) ^ (a v !b)
                stack.append(("and", 2))
                stack.append(("or", 2))
                stack.append(("visit", b, False))
                stack.append(("visit", a, True))
                stack.append(("or", 2))
                stack.append(("visit", b, True))
                stack.append(("visit", a, False))
            else:        # (a ^ !b) v (!a ^ b)
                stack.append(("or", 2))
                stack.append(("and", 2))
                stack.append(("visit", b, True))
                stack.append(("visit", a, False))
                stack.append(("and", 2))
                stack.append(("visit", b, False))
                stack.append(("visit", a, True))
        elif kind is Forall:
            stack.append(("quant", NForall if pos else NExists, tuple(f.variables)))
            stack.append(("visit", f.body, pos))
        elif kind is Exists:
            stack.append(("quant", NExists if pos else NForall, tuple(f.variables)))
            stack.append(("visit", f.body, pos))
        else:
            raise TypeError(f"not a formula: {f!r}")
    return out[0]


# ---------------------------------------------------------------- '*' expansion


def starred_atoms(formula: Formula) -> list[Atom]:
    """The distinct starred atoms of ``formula`` (by predicate and arguments), in order."""
    seen: dict[tuple, Atom] = {}
    for f in subformulas(formula):
        if isinstance(f, Atom) and f.star:
            seen.setdefault((f.predicate, f.args), f)
    return list(seen.values())


def expand_star(formula: Formula) -> list[Formula]:
    """Alchemy's ``*``: one formula per sign combination of the starred atoms.

    With k distinct starred atoms (identical occurrences count once and always
    get the same sign) the result has 2^k formulas; combination ``i`` gives the
    j-th starred atom a negation when bit ``k-1-j`` of ``i`` is set (so the
    first formula has every starred atom positive). Without stars: ``[formula]``.
    """
    stars = starred_atoms(formula)
    if not stars:
        return [formula]
    keys = [(a.predicate, a.args) for a in stars]
    out: list[Formula] = []
    for signs in itertools.product((True, False), repeat=len(stars)):
        sign_of = dict(zip(keys, signs))

        def sub(f: Formula) -> Formula:
            if isinstance(f, Atom) and f.star:
                plain = replace(f, star=False)
                return plain if sign_of[(f.predicate, f.args)] else Not(plain, pos=f.pos)
            return f

        out.append(rebuild(formula, sub))
    return out


# ---------------------------------------------------------------- variables


def leaf_terms(leaf: Literal | Comparison) -> tuple[Term, ...]:
    if isinstance(leaf, Literal):
        return leaf.atom.args
    return (leaf.left, leaf.right)


def nnf_vars(f: NNF) -> Iterator[Var]:
    """Every variable occurrence in ``f`` (bound or free)."""
    if isinstance(f, (Literal, Comparison)):
        for t in leaf_terms(f):
            yield from term_vars(t)
    elif isinstance(f, ExistsGroup):
        for c in f.conjuncts:
            yield from nnf_vars(c)
    elif isinstance(f, (NAnd, NOr)):
        for c in f.children:
            yield from nnf_vars(c)
    elif isinstance(f, (NForall, NExists)):
        yield from nnf_vars(f.body)


def free_vars(f: NNF) -> set[str]:
    if isinstance(f, (Literal, Comparison)):
        return {v.name for t in leaf_terms(f) for v in term_vars(t)}
    if isinstance(f, ExistsGroup):
        return set().union(*(free_vars(c) for c in f.conjuncts)) - set(f.variables)
    if isinstance(f, (NAnd, NOr)):
        return set().union(*(free_vars(c) for c in f.children)) if f.children else set()
    if isinstance(f, (NForall, NExists)):
        return free_vars(f.body) - set(f.variables)
    return set()


def all_names(f: NNF) -> set[str]:
    """Every variable name in ``f``, including quantifier lists."""
    names = {v.name for v in nnf_vars(f)}

    def walk(g: NNF) -> None:
        if isinstance(g, (NForall, NExists)):
            names.update(g.variables)
            walk(g.body)
        elif isinstance(g, (NAnd, NOr)):
            for c in g.children:
                walk(c)
        elif isinstance(g, ExistsGroup):
            names.update(g.variables)

    walk(f)
    return names


def substitute(f: NNF, mapping: dict[str, Term]) -> NNF:
    """Replace free variables by terms (quantifiers shadow their variables)."""
    if not mapping:
        return f

    def tv(v: Var) -> Term:
        t = mapping.get(v.name)
        if t is None:
            return v
        if isinstance(t, Var):
            return replace(v, name=t.name)   # keep the occurrence's '+' flag and position
        return t

    if isinstance(f, Literal):
        atom = f.atom
        return Literal(replace(atom, args=tuple(map_term_vars(a, tv) for a in atom.args)), f.positive)
    if isinstance(f, Comparison):
        return comparison_leaf(replace(f, left=map_term_vars(f.left, tv), right=map_term_vars(f.right, tv)))
    if isinstance(f, NAnd):
        return make_and([substitute(c, mapping) for c in f.children])
    if isinstance(f, NOr):
        return make_or([substitute(c, mapping) for c in f.children])
    if isinstance(f, (NForall, NExists)):
        inner = {k: v for k, v in mapping.items() if k not in f.variables}
        return _quant(type(f), f.variables, substitute(f.body, inner))
    if isinstance(f, ExistsGroup):
        inner = {k: v for k, v in mapping.items() if k not in f.variables}
        return ExistsGroup(f.variables, tuple(substitute(c, inner) for c in f.conjuncts))  # type: ignore[misc]
    return f


def fresh_name(base: str, taken: set[str]) -> str:
    i = 1
    while f"{base}{i}" in taken:
        i += 1
    name = f"{base}{i}"
    taken.add(name)
    return name


def rename_apart(
    f: NNF, taken: set[str] | None = None, used: set[str] | None = None
) -> tuple[NNF, dict[str, str]]:
    """Give every quantifier variables no other quantifier and no free variable uses.

    Returns the renamed formula and ``origin``: new name -> the name it was
    renamed from (only for renamed variables). ``taken`` (updated in place)
    holds names that must not be reused; by default every name in ``f``.
    ``used`` (default: the free variables of ``f``) holds names a quantifier
    may not keep: pass every name in use to rename every bound variable.
    Quantified variables that do not occur in their body are dropped.
    """
    taken = set(all_names(f)) if taken is None else taken
    taken |= all_names(f)
    used = set(free_vars(f)) if used is None else used | free_vars(f)
    origin: dict[str, str] = {}

    def walk(g: NNF) -> NNF:
        if isinstance(g, (NAnd, NOr)):
            kids = [walk(c) for c in g.children]
            return make_and(kids) if isinstance(g, NAnd) else make_or(kids)
        if isinstance(g, (NForall, NExists)):
            occurring = free_vars(g.body)
            mapping: dict[str, Term] = {}
            names: list[str] = []
            for v in g.variables:
                if v not in occurring or v in names:
                    continue
                if v in used:
                    new = fresh_name(v, taken)
                    origin[new] = origin.get(v, v)
                    mapping[v] = Var(new)
                    names.append(new)
                    used.add(new)
                else:
                    used.add(v)
                    names.append(v)
            body = walk(substitute(g.body, mapping))
            return _quant(type(g), tuple(names), body)
        return g

    return walk(f), origin
