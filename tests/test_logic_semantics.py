"""Property tests: the clause templates of a formula mean what the formula means.

Random formulas (every connective, quantifiers, equality) are compiled and the
templates are evaluated on random worlds over a small domain, by brute force,
against a direct evaluation of the formula:

* hard formulas (and soft ones that are split): the conjunction of all
  groundings of all clauses holds exactly when every grounding of the formula
  holds, and the weight scales of a split formula sum to 1;
* soft formulas kept as one negated clause (Alchemy's conjunction rule): for
  every binding of the formula's variables, the clause holds exactly when the
  formula does not, so ``sum(weight * [clause])`` is ``w * #true groundings``
  minus a constant.
"""

from __future__ import annotations

import itertools
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markovlogic.errors import MLNSemanticError
from markovlogic.lang.ast import (
    And,
    Atom,
    Compare,
    Const,
    Exists,
    Forall,
    FormulaDecl,
    Iff,
    Implies,
    Not,
    Or,
    PredicateDecl,
    Var,
)
from markovlogic.logic.clauses import ClauseTemplate, Comparison, ExistsGroup, Literal
from markovlogic.logic.cnf import compile_formula
from markovlogic.logic.nnf import expand_star
from markovlogic.model import MLN

DOMAIN = ("A", "B")
DOMAINS = {"obj": DOMAIN}
VARS = ("x", "y", "z")


def _mln() -> MLN:
    return MLN(
        types={"obj": DOMAIN},
        predicates={
            "P": PredicateDecl("P", ("obj",), (False,)),
            "Q": PredicateDecl("Q", ("obj",), (False,)),
            "R": PredicateDecl("R", ("obj", "obj"), (False, False)),
            "S": PredicateDecl("S", (), ()),
            "T": PredicateDecl("T", (), ()),
        },
    )


MLN_FO = _mln()
GROUND_ATOMS = (
    [("P", (c,)) for c in DOMAIN]
    + [("Q", (c,)) for c in DOMAIN]
    + [("R", (a, b)) for a in DOMAIN for b in DOMAIN]
    + [("S", ()), ("T", ())]
)


# ---------------------------------------------------------------- evaluation


def term_value(t, env: dict[str, str]) -> str:
    if isinstance(t, Var):
        return env[t.name]
    assert isinstance(t, Const)
    return t.name


def eval_formula(f, world: set, env: dict[str, str]) -> bool:
    if isinstance(f, Atom):
        return (f.predicate, tuple(term_value(a, env) for a in f.args)) in world
    if isinstance(f, Compare):
        assert f.op == "="
        return term_value(f.left, env) == term_value(f.right, env)
    if isinstance(f, Not):
        return not eval_formula(f.body, world, env)
    if isinstance(f, And):
        return eval_formula(f.left, world, env) and eval_formula(f.right, world, env)
    if isinstance(f, Or):
        return eval_formula(f.left, world, env) or eval_formula(f.right, world, env)
    if isinstance(f, Implies):
        return (not eval_formula(f.left, world, env)) or eval_formula(f.right, world, env)
    if isinstance(f, Iff):
        return eval_formula(f.left, world, env) == eval_formula(f.right, world, env)
    if isinstance(f, (Forall, Exists)):
        quant = all if isinstance(f, Forall) else any
        return quant(
            eval_formula(f.body, world, {**env, **dict(zip(f.variables, combo))})
            for combo in itertools.product(DOMAIN, repeat=len(f.variables))
        )
    raise TypeError(f)


def free_formula_vars(f, bound=frozenset()) -> set[str]:
    if isinstance(f, Atom):
        return {a.name for a in f.args if isinstance(a, Var)} - bound
    if isinstance(f, Compare):
        return {a.name for a in (f.left, f.right) if isinstance(a, Var)} - bound
    if isinstance(f, Not):
        return free_formula_vars(f.body, bound)
    if isinstance(f, (Forall, Exists)):
        return free_formula_vars(f.body, bound | set(f.variables))
    return free_formula_vars(f.left, bound) | free_formula_vars(f.right, bound)


def eval_leaf(d: Literal | Comparison, world: set, env: dict[str, str]) -> bool:
    if isinstance(d, Literal):
        v = (d.atom.predicate, tuple(term_value(a, env) for a in d.atom.args)) in world
    else:
        assert d.op == "="
        v = term_value(d.left, env) == term_value(d.right, env)
    return v == d.positive


def eval_group(g: ExistsGroup, world: set, env: dict[str, str]) -> bool:
    return any(
        all(eval_leaf(c, world, {**env, **dict(zip(g.variables, combo))}) for c in g.conjuncts)
        for combo in itertools.product(DOMAIN, repeat=len(g.variables))
    )


def clause_vars(t: ClauseTemplate) -> list[str]:
    group_vars = {v for g in t.exists for v in g.variables}
    return [v for v, _ in t.var_types if v not in group_vars]


def eval_clause(t: ClauseTemplate, world: set, env: dict[str, str]) -> bool:
    return (
        any(eval_leaf(d, world, env) for d in t.literals)
        or any(eval_leaf(d, world, env) for d in t.comparisons)
        or any(eval_group(g, world, env) for g in t.exists)
    )


def bindings(names: list[str]):
    for combo in itertools.product(DOMAIN, repeat=len(names)):
        yield dict(zip(names, combo))


def formula_holds(f, world) -> bool:
    names = sorted(free_formula_vars(f))
    return all(eval_formula(f, world, env) for env in bindings(names))


def templates_hold(templates: list[ClauseTemplate], world) -> bool:
    return all(
        eval_clause(t, world, env) for t in templates for env in bindings(clause_vars(t))
    )


# ---------------------------------------------------------------- strategies


TERMS = st.one_of(
    st.sampled_from([Var(v) for v in VARS]), st.sampled_from([Const(c) for c in DOMAIN])
)

FO_LEAVES = st.one_of(
    st.builds(lambda t: Atom("P", (t,)), TERMS),
    st.builds(lambda t: Atom("Q", (t,)), TERMS),
    st.builds(lambda a, b: Atom("R", (a, b)), TERMS, TERMS),
    st.just(Atom("S", ())),
    st.builds(lambda a, b: Compare("=", a, b), TERMS, TERMS),
)


def _extend(children):
    binary = st.sampled_from([And, Or, Implies, Iff])
    quant = st.sampled_from([Forall, Exists])
    return st.one_of(
        st.builds(Not, children),
        st.builds(lambda c, a, b: c(a, b), binary, children, children),
        st.builds(
            lambda q, vs, b: q(tuple(vs), b),
            quant,
            st.lists(st.sampled_from(VARS), min_size=1, max_size=2, unique=True),
            children,
        ),
    )


FO_FORMULAS = st.recursive(FO_LEAVES, _extend, max_leaves=9)

PROP_ATOMS = [Atom(p, ()) for p in ("S", "T")] + [Atom("P", (Const("A"),)), Atom("Q", (Const("B"),))]
PROP_FORMULAS = st.recursive(
    st.sampled_from(PROP_ATOMS),
    lambda ch: st.one_of(
        st.builds(Not, ch),
        st.builds(lambda c, a, b: c(a, b), st.sampled_from([And, Or, Implies, Iff]), ch, ch),
    ),
    max_leaves=8,
)


def _typeable(f) -> bool:
    """Every variable (by scope) must reach a predicate argument, directly or
    through ``=`` with one that does (else compile raises, tested elsewhere)."""
    typed: set = set()
    used: set = set()
    pairs: list = []
    counter = itertools.count()

    def ident(t, env):
        return env.get(t.name, t.name) if isinstance(t, Var) else None

    def walk(g, env):
        if isinstance(g, Atom):
            for a in g.args:
                if isinstance(a, Var):
                    typed.add(ident(a, env))
                    used.add(ident(a, env))
        elif isinstance(g, Compare):
            ids = [ident(t, env) for t in (g.left, g.right)]
            used.update(i for i in ids if i is not None)
            pairs.append(ids)
        elif isinstance(g, Not):
            walk(g.body, env)
        elif isinstance(g, (Forall, Exists)):
            walk(g.body, {**env, **{v: next(counter) for v in g.variables}})
        else:
            walk(g.left, env)
            walk(g.right, env)

    walk(f, {})
    changed = True
    while changed:
        changed = False
        for a, b in pairs:
            if a is not None and b is not None and (a in typed) != (b in typed):
                typed.update((a, b))
                changed = True
    return used <= typed


def _check(formula, hard: bool, weight: float | None, worlds) -> None:
    decl = FormulaDecl(formula, weight=weight, hard=hard)
    try:
        fc = compile_formula(decl, MLN_FO, formula_index=0, domains=DOMAINS)
    except MLNSemanticError as e:
        # only a hard formula that is false in every world is refused
        assert hard and "never be satisfied" in str(e)
        assert not any(formula_holds(formula, w) for w in worlds)
        return
    templates = fc.templates
    negated = len(templates) == 1 and templates[0].weight_scale < 0
    if negated:
        assert not hard
        t = templates[0]
        assert t.weight_scale == -1.0
        names = sorted(free_formula_vars(formula))
        assert set(clause_vars(t)) <= set(names)
        for world in worlds:
            for env in bindings(names):
                assert eval_clause(t, world, env) != eval_formula(formula, world, env)
    elif not templates and not hard:
        # a tautology, or a contradiction (a constant score either way)
        assert fc.tautology or fc.constant_false
        for world in worlds:
            assert formula_holds(formula, world) == fc.tautology
    else:
        for world in worlds:
            assert templates_hold(templates, world) == formula_holds(formula, world)
        if templates:
            assert abs(sum(t.weight_scale for t in templates) - 1.0) < 1e-9
            assert not fc.tautology
    for t in templates:
        assert t.hard == hard
        assert t.formula_index == 0
        if hard or weight is None:
            assert t.weight is None
        else:
            assert abs(t.weight - weight * t.weight_scale) < 1e-12
        for lit in t.literals:
            assert not lit.atom.star


def _random_worlds(seed: int, n: int) -> list[set]:
    rng = random.Random(seed)
    return [{a for a in GROUND_ATOMS if rng.random() < 0.5} for _ in range(n)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(PROP_FORMULAS, st.booleans())
def test_propositional_cnf_truth_table(formula, hard):
    prop_atoms = [("S", ()), ("T", ()), ("P", ("A",)), ("Q", ("B",))]
    worlds = [
        {a for a, bit in zip(prop_atoms, bits) if bit}
        for bits in itertools.product((False, True), repeat=len(prop_atoms))
    ]
    _check(formula, hard, None if hard else 1.7, worlds)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(FO_FORMULAS, st.booleans(), st.integers(0, 10_000))
def test_first_order_cnf_semantics(formula, hard, seed):
    if not _typeable(formula):
        return
    worlds = _random_worlds(seed, 24)
    worlds.append(set())
    worlds.append(set(GROUND_ATOMS))
    _check(formula, hard, None if hard else -0.8, worlds)


def test_soft_conjunction_score_differs_by_constant():
    """Score of the negated clause = w * [P(x) ^ R(x,y)] - w for every grounding."""
    x, y = Var("x"), Var("y")
    formula = And(Atom("P", (x,)), Not(Atom("R", (x, y))))
    w = 2.5
    fc = compile_formula(FormulaDecl(formula, weight=w), MLN_FO, formula_index=0)
    assert len(fc.templates) == 1
    t = fc.templates[0]
    diffs = set()
    for world in _random_worlds(7, 30):
        clause_score = sum(t.weight for env in bindings(clause_vars(t)) if eval_clause(t, world, env))
        formula_score = sum(w for env in bindings(["x", "y"]) if eval_formula(formula, world, env))
        diffs.add(round(clause_score - formula_score, 9))
    assert diffs == {round(-w * len(DOMAIN) ** 2, 9)}


def _star_some(f, pick):
    """Mark the atoms whose running index is in ``pick`` with ``*``."""
    counter = itertools.count()

    def walk(g):
        if isinstance(g, Atom):
            return Atom(g.predicate, g.args, star=next(counter) in pick)
        if isinstance(g, Compare):
            return g
        if isinstance(g, Not):
            return Not(walk(g.body))
        if isinstance(g, (Forall, Exists)):
            return type(g)(g.variables, walk(g.body))
        return type(g)(walk(g.left), walk(g.right))

    return walk(f)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(FO_FORMULAS, st.sets(st.integers(0, 8), max_size=3), st.integers(0, 10_000))
def test_star_variants_mean_their_expansions(formula, pick, seed):
    """Each '*' variant's clauses (hard) are equivalent to its expanded formula."""
    if not _typeable(formula):
        return
    starred = _star_some(formula, pick)
    variants = expand_star(starred)
    try:
        fc = compile_formula(FormulaDecl(starred, hard=True), MLN_FO, formula_index=0, domains=DOMAINS)
    except MLNSemanticError as e:
        assert "never be satisfied" in str(e)
        return
    worlds = _random_worlds(seed, 10)
    for i, variant in enumerate(variants):
        templates = [t for t in fc.templates if t.variant == i]
        for world in worlds:
            assert templates_hold(templates, world) == formula_holds(variant, world)
