"""Weighted formulas to clause templates, with Alchemy's semantics.

Pipeline for one ``FormulaDecl`` (``compile_formula``):

1. ``*`` atoms: one formula per sign combination (:func:`nnf.expand_star`);
   each is a *variant* with the formula's weight (Alchemy learns one weight
   per variant; ``ClauseTemplate.variant`` tells them apart).
2. NNF (:func:`nnf.to_nnf`), then quantified variables are renamed apart
   from each other and from the free variables, and every variable's type is
   inferred (:func:`types.infer_variable_types`).
3. Quantifiers. After NNF every ``FORALL`` is in positive position: its
   variables become clause variables (prenex form; renaming made that safe).
   Free variables are universal too. An ``EXIST`` in positive position
   (written ``EXIST`` or a negated ``FORALL``) becomes, per disjunct of its
   body's DNF, an ``ExistsGroup`` (the body's existential variables and a
   conjunction of literals/comparisons), which the grounder expands into a
   disjunction over the variables' constants. Since ``EXIST v (A v B)`` is
   ``EXIST v A v EXIST v B``, any quantifier-free body (and nested
   existentials) is supported this way. A body that contains a universal
   (``EXIST y FORALL z ...``) is expanded over the constants of the
   existential variables' types when ``domains`` is given, Alchemy's way,
   and is an ``MLNSemanticError`` otherwise. Conjuncts not mentioning any
   existential variable stay in the group (valid for every non-empty domain).
4. CNF by distribution. Clauses that are tautologies (``P v !P`` with equal
   arguments, complementary comparisons, or a comparison true by syntax such as
   ``x = x``) are dropped; literals false by syntax (``x != x``) and duplicate
   literals are removed; identical clauses are merged.
5. Weights (soft formula with weight ``w`` and ``k`` clauses left after step
   4): each clause gets ``w/k`` (``weight_scale = 1/k``; a clause that occurs
   twice gets ``2/k``). Alchemy's exception: when ``k >= 2`` and every clause
   is a single literal or comparison (a conjunction of literals such as
   ``P(x) ^ Q(x)``), the formula becomes ONE clause, the disjunction of the
   negated literals, with weight ``-w`` (``weight_scale = -1``): for every
   world its score differs from ``w * [P ^ Q]`` by the constant ``-w``.
   The rule applies only when the literals mention no variable of a
   universal quantifier written inside the formula (``P(x) ^ FORALL y Q(y)``
   is split instead), since only then is it exact per grounding.
   Hard formulas give hard clauses (``weight None``), one per CNF clause.
   Formulas without a weight give ``weight None`` and ``hard False`` (see
   :func:`needs_weight`).

``+`` variables: every clause of the formula lists all of the formula's ``+``
variables in ``plus_vars`` (and their types in ``var_types``), even a clause
that does not mention one: Alchemy expands ``+`` into one formula per constant
combination before CNF, so such a clause occurs once per combination, each with
that combination's weight. Other universal variables appear in ``var_types``
only where the clause (or one of its groups) mentions them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Iterable

from ..errors import MLNSemanticError
from ..lang.ast import Const, FormulaDecl, Term, Var
from ..model import MLN
from .clauses import ClauseTemplate, Comparison, ExistsGroup, Literal
from ..lang.checks import check_weight
from .limits import LIMITS, check_formula_size
from .nnf import (
    NNF,
    TRUE,
    BoolConst,
    NAnd,
    NExists,
    NForall,
    NOr,
    expand_star,
    fold_constants,
    free_vars,
    all_names,
    make_and,
    make_or,
    map_term_vars,
    rename_apart,
    rewrite_internal_predicates,
    substitute,
    term_vars,
    to_nnf,
)
from .types import infer_variable_types, plus_variables, semantic_error

# A CNF clause as produced by distribution: its disjuncts.
Disjunct = Literal | Comparison | ExistsGroup

MAX_CNF_CLAUSES = 100_000


# ---------------------------------------------------------------- keys and simplification


def _comparison_key(c: Comparison) -> tuple:
    """A canonical key: equal keys mean logically equivalent comparisons
    (``x = y`` ~ ``y = x``, ``x > y`` ~ ``y < x``, ``!(x < y)`` ~ ``y <= x``,
    assuming a total order for ``<``)."""
    op, left, right, positive = c.op, c.left, c.right, c.positive
    if op == ">":
        op, left, right = "<", right, left
    elif op == ">=":
        op, left, right = "<=", right, left
    if not positive and op in ("<", "<="):
        op, left, right, positive = ("<=" if op == "<" else "<"), right, left, True
    if op == "=":
        a, b = sorted((left, right), key=repr)
        return ("=", a, b, positive)
    return (op, left, right, positive)


def _key(d: Disjunct) -> tuple:
    if isinstance(d, Literal):
        return ("L", d.atom.predicate, d.atom.args, d.positive)
    if isinstance(d, Comparison):
        return ("C",) + _comparison_key(d)
    return ("E", frozenset(d.variables), frozenset(_key(c) for c in d.conjuncts))


def _complement_key(d: Literal | Comparison) -> tuple:
    return _key(d.negated())


def simplify_clause(disjuncts: Iterable[Disjunct]) -> tuple[Disjunct, ...] | None:
    """Remove duplicate disjuncts; ``None`` if the clause is a tautology.

    Comparisons decided by syntax were already folded by NNF construction.
    """
    out: list[Disjunct] = []
    keys: set[tuple] = set()
    for d in disjuncts:
        k = _key(d)
        if k in keys:
            continue
        if isinstance(d, ExistsGroup):
            # EXIST y P(y) v EXIST y !P(y) (one conjunct each, same variables)
            if len(d.conjuncts) == 1 and (
                ("E", frozenset(d.variables), frozenset([_complement_key(d.conjuncts[0])])) in keys
            ):
                return None
        elif _complement_key(d) in keys:
            return None
        keys.add(k)
        out.append(d)
    return tuple(out)


def _simplify_conjunction(leaves: Iterable[Literal | Comparison]) -> tuple[Literal | Comparison, ...] | None:
    """Dual of :func:`simplify_clause`: ``None`` if the conjunction is a contradiction."""
    out: list[Literal | Comparison] = []
    keys: set[tuple] = set()
    for d in leaves:
        k = _key(d)
        if k in keys:
            continue
        if _complement_key(d) in keys:
            return None
        keys.add(k)
        out.append(d)
    return tuple(out)


# ---------------------------------------------------------------- quantifiers


def _contains_forall(f: NNF) -> bool:
    if isinstance(f, NForall):
        return True
    if isinstance(f, (NAnd, NOr)):
        return any(_contains_forall(c) for c in f.children)
    if isinstance(f, NExists):
        return _contains_forall(f.body)
    return False


def _dnf(f: NNF) -> list[tuple[tuple[str, ...], tuple[Literal | Comparison, ...]]]:
    """DNF of a quantifier-free-but-existential NNF: a list of
    (existential variables, conjunction of leaves)."""
    if isinstance(f, (Literal, Comparison)):
        return [((), (f,))]
    if isinstance(f, BoolConst):
        return [((), ())] if f.value else []
    if isinstance(f, NOr):
        return [d for c in f.children for d in _dnf(c)]
    if isinstance(f, NAnd):
        out: list[tuple[tuple[str, ...], tuple[Literal | Comparison, ...]]] = [((), ())]
        for c in f.children:
            parts = _dnf(c)
            out = [(v1 + v2, c1 + c2) for (v1, c1) in out for (v2, c2) in parts]
            if len(out) > LIMITS.max_cnf_clauses:
                raise MLNSemanticError("existential body too large to put in disjunctive normal form")
        return out
    if isinstance(f, NExists):
        return [(f.variables + v, c) for v, c in _dnf(f.body)]
    raise TypeError(f"unexpected node in existential body: {f!r}")


def _exists_to_groups(variables: tuple[str, ...], body: NNF) -> NNF:
    """``EXIST variables body`` (no universal inside) as a disjunction of groups."""
    disjuncts: list[NNF] = []
    for evars, conj in _dnf(NExists(variables, body)):
        simple = _simplify_conjunction(conj)
        if simple is None:
            continue                       # contradictory conjunction: false
        if not simple:
            return TRUE                    # empty conjunction: true (non-empty domains)
        mentioned = free_vars(make_and(list(simple)))
        keep = tuple(dict.fromkeys(v for v in evars if v in mentioned))
        if keep:
            disjuncts.append(ExistsGroup(keep, simple))
        else:
            disjuncts.append(make_and(list(simple)))
    return make_or(disjuncts)


@dataclass
class _Context:
    mln: MLN
    decl: FormulaDecl
    types: dict[str, str]
    origin: dict[str, str]
    taken: set[str]
    domains: dict[str, tuple[str, ...]] | None


def _expand_exists(ctx: _Context, variables: tuple[str, ...], body: NNF) -> NNF:
    """Alchemy's expansion of ``EXIST variables body`` over the domain constants."""
    if ctx.domains is None:
        shown = ", ".join(ctx.origin.get(v, v) for v in variables)
        raise semantic_error(
            f"existential quantifier over {shown} has a universal quantifier in its scope; "
            "this is only supported when the domains of the types are known "
            "(compile_mln(..., domains=...))",
            ctx.decl.pos,
        )
    pools = []
    for v in variables:
        typ = ctx.types[v]
        pools.append(ctx.domains.get(typ, ()))
    copies: list[NNF] = []
    for combo in itertools.product(*pools):
        g = substitute(body, {v: Const(c) for v, c in zip(variables, combo)})
        g, origin = rename_apart(g, ctx.taken, used=set(ctx.taken))
        for new, old in origin.items():
            ctx.types[new] = ctx.types[old]
            ctx.origin[new] = ctx.origin.get(old, old)
        copies.append(_quantifiers(ctx, g))
    return make_or(copies)


def _quantifiers(ctx: _Context, f: NNF) -> NNF:
    """Drop universals (prenex), turn existentials into groups or expansions."""
    if isinstance(f, NForall):
        return _quantifiers(ctx, f.body)
    if isinstance(f, NExists):
        if _contains_forall(f.body):
            return _expand_exists(ctx, f.variables, f.body)
        return _exists_to_groups(f.variables, f.body)
    if isinstance(f, NAnd):
        return make_and([_quantifiers(ctx, c) for c in f.children])
    if isinstance(f, NOr):
        return make_or([_quantifiers(ctx, c) for c in f.children])
    return f


# ---------------------------------------------------------------- CNF


def to_cnf(f: NNF) -> list[tuple[Disjunct, ...]]:
    """CNF of a quantifier-free NNF (``ExistsGroup``s are opaque disjuncts) by
    distribution, with tautologies dropped and duplicate disjuncts removed on
    the way. ``[]`` is true; a ``()`` clause is false."""
    if isinstance(f, BoolConst):
        return [] if f.value else [()]
    if isinstance(f, (Literal, Comparison, ExistsGroup)):
        return [(f,)]
    if isinstance(f, NAnd):
        return [c for child in f.children for c in to_cnf(child)]
    if isinstance(f, NOr):
        # children that are one clause are joined first (one simplification:
        # a long disjunction of literals stays linear), then distributed
        single: list[Disjunct] = []
        several: list[list[tuple[Disjunct, ...]]] = []
        for child in f.children:
            parts = to_cnf(child)
            if not parts:
                return []                          # a true disjunct
            if len(parts) == 1:
                single.extend(parts[0])
            else:
                several.append(parts)
        base = simplify_clause(single)
        if base is None:
            return []
        out: list[tuple[Disjunct, ...]] = [base]
        for parts in several:
            nxt: list[tuple[Disjunct, ...]] = []
            for a in out:
                for b in parts:
                    s = simplify_clause(a + b)
                    if s is not None:
                        nxt.append(s)
            out = nxt
            if len(out) > LIMITS.max_cnf_clauses:
                raise MLNSemanticError(f"formula has more than {LIMITS.max_cnf_clauses:,} CNF clauses "
                                       "(raise the bound with --max-cnf-clauses)")
        return out
    raise TypeError(f"to_cnf: quantifiers must be removed first: {f!r}")


def merge_clauses(clauses: list[tuple[Disjunct, ...]]) -> list[tuple[tuple[Disjunct, ...], int]]:
    """Simplify, drop tautologies and merge clauses equal up to disjunct order:
    ``(clause, multiplicity)`` in order of first appearance."""
    out: dict[frozenset, list] = {}
    for c in clauses:
        s = simplify_clause(c)
        if s is None:
            continue
        k = frozenset(_key(d) for d in s)
        if k in out:
            out[k][1] += 1
        else:
            out[k] = [s, 1]
    return [(c, n) for c, n in out.values()]


# ---------------------------------------------------------------- templates


def _strip_plus(t: Term) -> Term:
    return map_term_vars(t, lambda v: replace(v, plus=False) if v.plus else v)


def _strip_leaf(d: Literal | Comparison) -> Literal | Comparison:
    if isinstance(d, Literal):
        return Literal(replace(d.atom, args=tuple(_strip_plus(a) for a in d.atom.args), star=False), d.positive)
    return replace(d, left=_strip_plus(d.left), right=_strip_plus(d.right))


def _strip(d: Disjunct) -> Disjunct:
    if isinstance(d, ExistsGroup):
        return ExistsGroup(d.variables, tuple(_strip_leaf(c) for c in d.conjuncts))
    return _strip_leaf(d)


def _clause_vars(clause: tuple[Disjunct, ...]) -> list[str]:
    names: dict[str, None] = {}

    def leaf(d: Literal | Comparison) -> None:
        terms = d.atom.args if isinstance(d, Literal) else (d.left, d.right)
        for t in terms:
            for v in term_vars(t):
                names.setdefault(v.name)

    for d in clause:
        if isinstance(d, ExistsGroup):
            for c in d.conjuncts:
                leaf(c)
        else:
            leaf(d)
    return list(names)


@dataclass
class FormulaCompilation:
    """What one formula compiled to.

    ``templates`` in clause order. ``tautology`` is True when a variant's CNF
    was empty (always true: it contributes a constant and has no template).
    ``constant_false`` counts soft clauses that were empty (always false,
    dropped).
    """

    formula_index: int
    templates: list[ClauseTemplate] = field(default_factory=list)
    tautology: bool = False
    constant_false: int = 0


def compile_formula(
    decl: FormulaDecl,
    mln: MLN,
    *,
    formula_index: int = -1,
    domains: dict[str, tuple[str, ...]] | None = None,
) -> FormulaCompilation:
    """Compile one weighted formula into clause templates (see module docstring).

    A formula whose CNF would exceed ``logic.limits`` is refused before it is
    converted; one nested too deeply for the remaining recursive steps gets
    an error at its place rather than a ``RecursionError``."""
    check_weight(decl.weight, decl.pos)
    check_formula_size(decl.formula, decl.pos)
    try:
        return _compile_formula(decl, mln, formula_index=formula_index, domains=domains)
    except RecursionError:
        raise semantic_error("formula nested too deeply to convert (simplify its nesting of "
                             "'^', 'v' and quantifiers)", decl.pos) from None


def _compile_formula(
    decl: FormulaDecl,
    mln: MLN,
    *,
    formula_index: int = -1,
    domains: dict[str, tuple[str, ...]] | None = None,
) -> FormulaCompilation:
    result = FormulaCompilation(formula_index)
    plus = plus_variables(decl.formula, decl.pos)
    clause_index = 0
    source = rewrite_internal_predicates(decl.formula, mln.predicates)
    for variant, formula in enumerate(expand_star(source)):
        nnf, origin = rename_apart(to_nnf(formula, fold=False))
        types = infer_variable_types(nnf, mln, formula_pos=decl.pos, display=origin)
        nnf = fold_constants(nnf)
        ctx = _Context(mln, decl, types, origin, all_names(nnf), domains)
        qf = _quantifiers(ctx, nnf)
        clauses = merge_clauses(to_cnf(qf))
        widest = max((len(c) for c, _ in clauses), default=0)
        if widest > LIMITS.max_clause_literals:
            raise semantic_error(
                f"a clause of this formula has {widest:,} literals; the grounder joins one table per literal "
                f"and takes at most {LIMITS.max_clause_literals:,} (markovlogic.logic.limits.set_limits "
                "raises the bound)", decl.pos)

        nonempty = [(c, n) for c, n in clauses if c]
        if any(not c for c, _ in clauses):
            if decl.hard:
                raise semantic_error("hard formula can never be satisfied (it simplifies to false)", decl.pos)
            result.constant_false += sum(n for c, n in clauses if not c)
        if not nonempty:
            if not clauses:
                result.tautology = True
            continue

        total = sum(n for _, n in clauses)
        negate = (
            not decl.hard
            and len(nonempty) >= 2
            and all(len(c) == 1 and not isinstance(c[0], ExistsGroup) for c, _ in nonempty)
            and set(_clause_vars(tuple(c[0] for c, _ in nonempty))) <= free_vars(nnf)
        )
        if negate:
            neg = simplify_clause([c[0].negated() for c, _ in nonempty])  # type: ignore[union-attr]
            if neg is None:  # P ^ !P: always false, a constant
                result.constant_false += 1
                continue
            shaped: list[tuple[tuple[Disjunct, ...], float]] = [(neg, -1.0)]
        else:
            shaped = [(c, n / total) for c, n in nonempty]

        for clause, scale in shaped:
            clause = tuple(_strip(d) for d in clause)
            names = _clause_vars(clause)
            for p in plus:
                if p not in names:
                    names.append(p)
            if any(v not in types for v in names):
                # a + variable that simplification removed (``Exist i (P(+x) ^ i < i)``):
                # its type comes from the formula as written
                types = {**infer_variable_types(formula, mln, formula_pos=decl.pos), **types}
            var_types = tuple(sorted((v, types[v]) for v in names))
            weight = None if (decl.hard or decl.weight is None) else decl.weight * scale
            result.templates.append(
                ClauseTemplate(
                    literals=tuple(d for d in clause if isinstance(d, Literal)),
                    comparisons=tuple(d for d in clause if isinstance(d, Comparison)),
                    exists=tuple(d for d in clause if isinstance(d, ExistsGroup)),
                    var_types=var_types,
                    plus_vars=plus,
                    weight=weight,
                    hard=decl.hard,
                    fixed=decl.fixed,
                    formula_index=formula_index,
                    clause_index=clause_index,
                    weight_scale=scale,
                    variant=variant,
                )
            )
            clause_index += 1
    return result


def compile_mln_detailed(
    mln: MLN, *, domains: dict[str, tuple[str, ...]] | None = None
) -> list[FormulaCompilation]:
    """:func:`compile_mln`, with one :class:`FormulaCompilation` per formula."""
    return [
        compile_formula(decl, mln, formula_index=i, domains=domains)
        for i, decl in enumerate(mln.formulas)
    ]


def compile_mln(
    mln: MLN, *, domains: dict[str, tuple[str, ...]] | None = None
) -> list[ClauseTemplate]:
    """Every formula of ``mln`` as clause templates, in formula order.

    ``domains`` (type -> constants) is only needed for existentials whose
    scope holds a universal quantifier (they are expanded over constants).
    """
    templates = [t for fc in compile_mln_detailed(mln, domains=domains) for t in fc.templates]
    return templates + equivalence_axioms(mln)


def equivalence_axioms(mln: MLN) -> list[ClauseTemplate]:
    """Hard reflexivity, symmetry and transitivity of every predicate declared
    ``equivalence P(t, t)``, as generated templates (formula index -1)."""
    from ..lang.ast import Atom, FormulaDecl, Implies, And

    out: list[ClauseTemplate] = []
    for name, decl in mln.predicates.items():
        if not getattr(decl, "equivalence", False):
            continue
        x, y, z = Var("x"), Var("y"), Var("z")
        axioms = (
            Atom(name, (x, x)),
            Implies(Atom(name, (x, y)), Atom(name, (y, x))),
            Implies(And(Atom(name, (x, y)), Atom(name, (y, z))), Atom(name, (x, z))),
        )
        for f in axioms:
            out.extend(compile_formula(FormulaDecl(f, hard=True, pos=decl.pos), mln, formula_index=-1).templates)
    return out


def needs_weight(t: ClauseTemplate, mln: MLN) -> bool:
    """True if ``t`` came from a formula without a weight and cannot be used for
    inference as it is: it is soft, unweighted, and not a unit clause of a
    predicate with a ``!`` (mutual exclusion) declaration."""
    if t.hard or t.weight is not None:
        return False
    if len(t.literals) == 1 and not t.comparisons and not t.exists:
        decl = mln.predicates.get(t.literals[0].atom.predicate)
        if decl is not None and decl.has_block:
            return False
    return True
