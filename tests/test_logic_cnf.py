"""Formulas to clause templates: the rules one by one, on hand-built ASTs."""

from __future__ import annotations

import pytest

from markovlogic.errors import MLNSemanticError
from markovlogic.lang.ast import (
    And,
    Atom,
    Compare,
    Const,
    Exists,
    Forall,
    FormulaDecl,
    FunctionDecl,
    Func,
    Iff,
    Implies,
    Not,
    Or,
    Pos,
    PredicateDecl,
    Var,
)
from markovlogic.logic import (
    block_clauses,
    compile_formula,
    compile_mln,
    expand_star,
    format_clause,
    format_template,
    infer_variable_types,
    needs_weight,
)
from markovlogic.logic.clauses import ClauseTemplate, Comparison, ExistsGroup, Literal
from markovlogic.model import MLN

x, y, z = Var("x"), Var("y"), Var("z")
POS = Pos("prog.mln", 7, 3)


def mln() -> MLN:
    preds = [
        PredicateDecl("Smokes", ("person",), (False,)),
        PredicateDecl("Cancer", ("person",), (False,)),
        PredicateDecl("Friends", ("person", "person"), (False, False)),
        PredicateDecl("Lives", ("person", "city"), (False, True)),
        PredicateDecl("Big", ("city",), (False,)),
        PredicateDecl("Next", ("time", "time"), (False, False)),
        PredicateDecl("At", ("person", "time"), (False, False)),
    ]
    return MLN(
        types={"person": ("Anna", "Bob"), "city": ("Rome",), "time": ("1", "2")},
        predicates={p.name: p for p in preds},
        functions={"motherOf": FunctionDecl("motherOf", "person", ("person",))},
    )


M = mln()


def S(t):
    return Atom("Smokes", (t,))


def C(t):
    return Atom("Cancer", (t,))


def F(a, b):
    return Atom("Friends", (a, b))


def compile1(formula, weight=1.0, hard=False, domains=None, m=M):
    return compile_formula(FormulaDecl(formula, weight=weight, hard=hard, pos=POS), m, formula_index=3, domains=domains)


def clauses(formula, **kw) -> list[str]:
    return [format_clause(t) for t in compile1(formula, **kw).templates]


# ---------------------------------------------------------------- connectives and weights


def test_implication_is_one_clause():
    fc = compile1(Implies(And(F(x, y), S(x)), S(y)), weight=1.1)
    [t] = fc.templates
    assert format_clause(t) == "!Friends(x,y) v !Smokes(x) v Smokes(y)"
    assert t.weight == 1.1 and t.weight_scale == 1.0 and not t.hard
    assert t.var_types == (("x", "person"), ("y", "person"))
    assert t.formula_index == 3 and t.clause_index == 0 and t.variant == 0


def test_iff_splits_weight_equally():
    fc = compile1(Iff(S(x), C(x)), weight=3.0)
    assert [format_clause(t) for t in fc.templates] == ["!Smokes(x) v Cancer(x)", "Smokes(x) v !Cancer(x)"]
    assert [t.weight for t in fc.templates] == [1.5, 1.5]
    assert [t.weight_scale for t in fc.templates] == [0.5, 0.5]
    assert [t.clause_index for t in fc.templates] == [0, 1]


def test_split_into_three():
    # (S v C) ^ (S v F) ^ !C(y)  is not a conjunction of single literals
    f = And(Or(S(x), C(x)), And(Or(S(x), F(x, y)), Not(C(y))))
    fc = compile1(f, weight=-0.9)
    assert len(fc.templates) == 3
    assert all(abs(t.weight - -0.3) < 1e-12 for t in fc.templates)


def test_soft_conjunction_of_literals_is_negated():
    fc = compile1(And(S(x), Not(C(x))), weight=2.0)
    [t] = fc.templates
    assert format_clause(t) == "!Smokes(x) v Cancer(x)"
    assert t.weight == -2.0 and t.weight_scale == -1.0


def test_negative_weight_conjunction():
    [t] = compile1(And(S(x), C(x)), weight=-1.5).templates
    assert format_clause(t) == "!Smokes(x) v !Cancer(x)"
    assert t.weight == 1.5


def test_conjunction_with_comparison_is_negated():
    [t] = compile1(And(F(x, y), Not(Compare("=", x, y))), weight=1.0).templates
    assert format_clause(t) == "!Friends(x,y) v x = y"
    assert t.weight == -1.0


def test_unweighted_conjunction_keeps_negative_scale():
    [t] = compile1(And(S(x), C(x)), weight=None).templates
    assert t.weight is None and t.weight_scale == -1.0 and not t.hard


def test_hard_conjunction_becomes_unit_clauses():
    fc = compile1(And(S(x), C(x)), hard=True)
    assert [format_clause(t) for t in fc.templates] == ["Smokes(x)", "Cancer(x)"]
    assert all(t.hard and t.weight is None for t in fc.templates)


def test_conjunction_with_inner_universal_is_split_not_negated():
    # P(x) ^ FORALL y F(x,y): negating per grounding would change the meaning
    fc = compile1(And(S(x), Forall(("y",), F(x, y))), weight=2.0)
    assert [format_clause(t) for t in fc.templates] == ["Smokes(x)", "Friends(x,y)"]
    assert [t.weight for t in fc.templates] == [1.0, 1.0]


def test_single_literal_keeps_weight():
    [t] = compile1(S(x), weight=0.7).templates
    assert format_clause(t) == "Smokes(x)" and t.weight == 0.7
    [t] = compile1(Not(S(x)), weight=0.7).templates
    assert format_clause(t) == "!Smokes(x)" and t.weight == 0.7


def test_hard_and_fixed_flags():
    fc = compile_formula(FormulaDecl(Implies(S(x), C(x)), weight=2.0, fixed=True), M, formula_index=0)
    assert fc.templates[0].fixed
    fc = compile1(Implies(S(x), C(x)), hard=True)
    assert fc.templates[0].hard and fc.templates[0].weight is None


def test_double_negation_and_de_morgan():
    assert clauses(Not(Not(Or(S(x), C(x))))) == ["Smokes(x) v Cancer(x)"]
    assert clauses(Not(And(S(x), C(x)))) == ["!Smokes(x) v !Cancer(x)"]


def test_negated_iff():
    fc = compile1(Not(Iff(S(x), C(x))), hard=True)
    assert {frozenset(format_clause(t).split(" v ")) for t in fc.templates} == {
        frozenset({"!Smokes(x)", "!Cancer(x)"}),
        frozenset({"Smokes(x)", "Cancer(x)"}),
    }


# ---------------------------------------------------------------- tautologies and duplicates


def test_tautology_removed():
    fc = compile1(Or(S(x), Not(S(x))))
    assert fc.templates == [] and fc.tautology
    fc = compile1(Implies(F(x, y), F(x, y)))
    assert fc.templates == [] and fc.tautology


def test_same_predicate_different_arguments_is_not_a_tautology():
    assert clauses(Or(F(x, y), Not(F(y, x)))) == ["Friends(x,y) v !Friends(y,x)"]


def test_tautological_clause_dropped_from_split():
    # (S v !S) ^ (C v F): one clause left, full weight
    fc = compile1(And(Or(S(x), Not(S(x))), Or(C(x), F(x, y))), weight=2.0)
    [t] = fc.templates
    assert format_clause(t) == "Cancer(x) v Friends(x,y)" and t.weight == 2.0


def test_duplicate_literals_removed():
    assert clauses(Or(S(x), Or(C(x), S(x)))) == ["Smokes(x) v Cancer(x)"]


def test_duplicate_clauses_merged_with_summed_scale():
    f = And(Or(S(x), C(x)), And(Or(C(x), S(x)), Or(F(x, y), S(y))))
    fc = compile1(f, weight=3.0)
    assert [format_clause(t) for t in fc.templates] == ["Smokes(x) v Cancer(x)", "Friends(x,y) v Smokes(y)"]
    assert [t.weight for t in fc.templates] == [2.0, 1.0]


def test_trivial_comparisons():
    # x = x is true: the clause is a tautology
    assert compile1(Or(S(x), Compare("=", x, x))).tautology
    # x != x is false: dropped from the clause
    assert clauses(Or(S(x), Not(Compare("=", x, x)))) == ["Smokes(x)"]
    # distinct constants are distinct; integers compare as numbers
    assert clauses(Or(S(x), Compare("=", Const("Anna"), Const("Bob")))) == ["Smokes(x)"]
    assert compile1(Or(S(x), Compare("<", Const("2"), Const("10")))).tautology
    # complementary comparisons
    assert compile1(Or(S(x), Or(Compare("=", x, y), Not(Compare("=", y, x))))).tautology
    assert compile1(Or(S(x), Or(Compare("<", x, y), Compare(">=", x, y)))).tautology


def test_constant_false_soft_formula_dropped_and_hard_refused():
    fc = compile1(And(S(x), Not(S(x))), weight=1.0)
    assert fc.templates == [] and fc.constant_false == 1
    with pytest.raises(MLNSemanticError, match="never be satisfied") as e:
        compile1(Or(Compare("=", Const("Anna"), Const("Bob")), Not(Compare("=", Const("1"), Const("1")))), hard=True)
    assert e.value.line == 7 and e.value.file == "prog.mln"


# ---------------------------------------------------------------- comparisons and functions


def test_comparisons_become_comparison_disjuncts():
    [t] = compile1(Implies(And(F(x, y), Not(Compare("=", x, y))), S(y))).templates
    assert t.comparisons == (Comparison("=", x, y, positive=True),)
    assert format_clause(t) == "!Friends(x,y) v Smokes(y) v x = y"
    [t] = compile1(Or(S(x), Not(Compare("<", x, y))), hard=True).templates
    assert t.comparisons == (Comparison("<", x, y, positive=False),)
    assert format_clause(t) == "Smokes(x) v !(x < y)"


def test_functions_stay_terms():
    t_ = Var("t")
    succ = Func("+", (t_, Const("1")))
    [tpl] = compile1(Implies(At(x, t_), At(x, succ))).templates
    assert tpl.literals[1].atom.args[1] == succ
    assert dict(tpl.var_types) == {"x": "person", "t": "time"}
    assert format_clause(tpl) == "!At(x,t) v At(x,t + 1)"
    [tpl] = compile1(Implies(S(Func("motherOf", (x,))), S(x))).templates
    assert format_clause(tpl) == "!Smokes(motherOf(x)) v Smokes(x)"


def At(a, b):
    return Atom("At", (a, b))


# ---------------------------------------------------------------- types


def test_type_inference_from_predicates_and_comparisons():
    f = Implies(And(Lives(x, Var("c")), Compare("=", Var("d"), Var("c"))), Big(Var("d")))
    assert infer_variable_types(f, M) == {"x": "person", "c": "city", "d": "city"}
    # type through a comparison only
    f = Or(Big(Var("c")), Compare("=", Var("e"), Var("c")))
    assert infer_variable_types(f, M)["e"] == "city"
    # through a user function's return type
    f = Or(S(x), Compare("=", Var("m"), Func("motherOf", (x,))))
    assert infer_variable_types(f, M)["m"] == "person"


def Lives(a, b):
    return Atom("Lives", (a, b))


def Big(a):
    return Atom("Big", (a,))


def test_conflicting_types_error_with_position():
    bad_y = Var("y", pos=Pos("prog.mln", 7, 20))
    with pytest.raises(MLNSemanticError) as e:
        compile1(Implies(Lives(x, y), S(bad_y)))
    msg = str(e.value)
    assert "variable y" in msg and "city" in msg and "person" in msg
    assert (e.value.file, e.value.line, e.value.column) == ("prog.mln", 7, 20)


def test_untypeable_variable_error():
    with pytest.raises(MLNSemanticError, match="cannot infer the type of variable w") as e:
        compile1(Or(S(x), Compare("=", Var("w"), Const("Anna"))))
    assert e.value.line == 7


def test_undeclared_predicate_and_arity_errors():
    with pytest.raises(MLNSemanticError, match="undeclared predicate Foo"):
        compile1(Atom("Foo", (x,)))
    with pytest.raises(MLNSemanticError, match="takes 2 argument"):
        compile1(Atom("Friends", (x,)))
    with pytest.raises(MLNSemanticError, match="undeclared function fatherOf"):
        compile1(S(Func("fatherOf", (x,))))
    with pytest.raises(MLNSemanticError, match="returns person"):
        compile1(Big(Func("motherOf", (x,))))


def test_quantified_variable_renamed_has_own_type():
    # the bound c is a city; the free c a person
    f = Or(S(Var("c")), Exists(("c",), Big(Var("c"))))
    [t] = compile1(f).templates
    types = dict(t.var_types)
    assert types["c"] == "person"
    [g] = t.exists
    assert g.variables != ("c",) and types[g.variables[0]] == "city"


# ---------------------------------------------------------------- '*'


def test_star_expansion():
    f = Or(Atom("Smokes", (x,), star=True), Atom("Cancer", (x,), star=True))
    assert len(expand_star(f)) == 4
    fc = compile1(f, weight=0.5)
    assert [format_clause(t) for t in fc.templates] == [
        "Smokes(x) v Cancer(x)",
        "Smokes(x) v !Cancer(x)",
        "!Smokes(x) v Cancer(x)",
        "!Smokes(x) v !Cancer(x)",
    ]
    assert [t.variant for t in fc.templates] == [0, 1, 2, 3]
    assert all(t.weight == 0.5 for t in fc.templates)


def test_star_identical_atoms_share_sign_and_stars_before_cnf():
    # *S(x) => *S(x) is a tautology in every variant
    f = Implies(Atom("Smokes", (x,), star=True), Atom("Smokes", (x,), star=True))
    assert len(expand_star(f)) == 2
    assert compile1(f).templates == []
    # *S(x) ^ C(x): each variant is a conjunction, negated by Alchemy's rule
    fc = compile1(And(Atom("Smokes", (x,), star=True), C(x)), weight=1.0)
    assert [format_clause(t) for t in fc.templates] == ["!Smokes(x) v !Cancer(x)", "Smokes(x) v !Cancer(x)"]
    assert [t.variant for t in fc.templates] == [0, 1]


# ---------------------------------------------------------------- '+'


def test_plus_variables():
    c = Var("c", plus=True)
    [t] = compile1(Implies(Lives(x, c), S(x)), weight=1.0).templates
    assert t.plus_vars == ("c",)
    assert all(not v.plus for lit in t.literals for v in lit.atom.args if isinstance(v, Var))
    assert format_clause(t) == "!Lives(x,+c) v Smokes(x)"


def test_plus_variable_on_every_clause_of_a_split():
    c = Var("c", plus=True)
    fc = compile1(And(Or(Big(c), S(x)), Or(S(x), C(y))), weight=1.0)
    assert [t.plus_vars for t in fc.templates] == [("c",), ("c",)]
    assert dict(fc.templates[1].var_types) == {"x": "person", "y": "person", "c": "city"}


def test_plus_inconsistent_is_an_error():
    with pytest.raises(MLNSemanticError, match=r"'\+'"):
        compile1(Implies(Lives(x, Var("c", plus=True)), Big(Var("c"))))


def test_plus_bound_by_quantifier_is_an_error():
    with pytest.raises(MLNSemanticError, match="bound by a quantifier"):
        compile1(Exists(("c",), Lives(x, Var("c", plus=True))))


# ---------------------------------------------------------------- existentials


def test_positive_existential_becomes_group():
    [t] = compile1(Exists(("y",), And(F(x, y), S(y)))).templates
    assert t.literals == ()
    assert t.exists == (ExistsGroup(("y",), (Literal(F(x, y), True), Literal(S(y), True))),)
    assert t.var_types == (("x", "person"), ("y", "person"))
    assert format_clause(t) == "EXIST y (Friends(x,y) ^ Smokes(y))"


def test_negated_existential_becomes_universal():
    [t] = compile1(Not(Exists(("y",), And(F(x, y), S(y))))).templates
    assert format_clause(t) == "!Friends(x,y) v !Smokes(y)" and t.exists == ()


def test_existential_over_disjunction_gives_several_groups():
    # Tuffy's "EXIST y !student(x) v advisedBy(x,y) v tempAdvisedBy(x,y)"
    f = Exists(("y",), Or(Not(S(x)), Or(F(x, y), Lives(x, Var("y")))))
    with pytest.raises(MLNSemanticError):  # y cannot be person and city
        compile1(f)
    f = Exists(("y",), Or(Not(S(x)), Or(F(x, y), F(y, x))))
    [t] = compile1(f, weight=-2.4).templates
    assert format_clause(t) == "!Smokes(x) v EXIST y Friends(x,y) v EXIST y Friends(y,x)"
    assert t.weight == -2.4


def test_existential_inside_implication():
    # S(x) => EXIST y (F(x,y) ^ S(y))  and  (EXIST y F(x,y)) => S(x)
    [t] = compile1(Implies(S(x), Exists(("y",), And(F(x, y), S(y))))).templates
    assert format_clause(t) == "!Smokes(x) v EXIST y (Friends(x,y) ^ Smokes(y))"
    [t] = compile1(Implies(Exists(("y",), F(x, y)), S(x))).templates
    assert format_clause(t) == "!Friends(x,y) v Smokes(x)"


def test_existential_distributed_over_cnf():
    # (S(x) ^ C(x)) v EXIST y F(x,y)  ->  (S v G) ^ (C v G)
    f = Or(And(S(x), C(x)), Exists(("y",), F(x, y)))
    assert clauses(f, hard=True) == ["Smokes(x) v EXIST y Friends(x,y)", "Cancer(x) v EXIST y Friends(x,y)"]


def test_nested_existentials_merge():
    f = Exists(("y",), And(S(y), Exists(("z",), F(y, z))))
    [t] = compile1(f).templates
    [g] = t.exists
    assert g.variables == ("y", "z")
    assert format_clause(t) == "EXIST y,z (Smokes(y) ^ Friends(y,z))"


def test_existential_with_unused_variable_is_plain():
    assert clauses(Exists(("y",), S(x))) == ["Smokes(x)"]
    assert clauses(Exists(("y",), And(S(x), C(x))), hard=True) == ["Smokes(x)", "Cancer(x)"]


def test_existential_with_universal_inside_needs_domains():
    f = Exists(("y",), Forall(("z",), F(y, z)))
    with pytest.raises(MLNSemanticError, match="domains") as e:
        compile1(f)
    assert (e.value.file, e.value.line, e.value.column) == ("prog.mln", 7, 3)
    [t] = compile1(f, domains={"person": ("Anna", "Bob")}).templates
    assert t.exists == ()
    lits = [format_clause(ClauseTemplate(literals=(lit,))) for lit in t.literals]
    assert lits[0].startswith("Friends(Anna,") and lits[1].startswith("Friends(Bob,")
    zs = {lit.atom.args[1].name for lit in t.literals}
    assert len(zs) == 2  # each copy has its own universal variable
    assert all(dict(t.var_types)[v] == "person" for v in zs)


def test_existential_body_contradiction_and_tautology():
    assert compile1(Or(S(x), Exists(("y",), And(F(x, y), Not(F(x, y)))))).templates[0].exists == ()
    assert compile1(Or(S(x), Exists(("y",), Or(F(x, y), Not(F(x, y)))))).tautology


# ---------------------------------------------------------------- compile_mln, helpers


def test_compile_mln_indexes_and_needs_weight():
    m = mln()
    m.formulas = [
        FormulaDecl(Implies(S(x), C(x)), weight=1.0),
        FormulaDecl(Iff(S(x), C(x)), weight=None),
        FormulaDecl(Lives(x, Var("c")), weight=None),
        FormulaDecl(Or(S(x), Not(S(x))), weight=1.0),
    ]
    ts = compile_mln(m)
    assert [(t.formula_index, t.clause_index) for t in ts] == [(0, 0), (1, 0), (1, 1), (2, 0)]
    assert [needs_weight(t, m) for t in ts] == [False, True, True, False]


def test_format_template():
    [t] = compile1(Implies(S(x), C(x)), weight=1.5).templates
    assert format_template(t) == "1.5  !Smokes(x) v Cancer(x)"
    [t] = compile1(Implies(S(x), C(x)), hard=True).templates
    assert format_template(t) == "!Smokes(x) v Cancer(x)."


def test_block_clauses():
    assert block_clauses(M.predicates["Smokes"]) == []
    at_least, at_most = block_clauses(M.predicates["Lives"])
    assert format_clause(at_least) == "EXIST v2 Lives(k1,v2)"
    assert format_clause(at_most) == "!Lives(k1,v2) v !Lives(k1,w2) v v2 = w2"
    assert at_least.hard and at_most.hard and at_least.formula_index == -1
    assert at_most.var_types == (("k1", "person"), ("v2", "city"), ("w2", "city"))
    two = PredicateDecl("Pos", ("a", "b", "c"), (True, False, True))
    ts = block_clauses(two)
    assert [format_clause(t) for t in ts] == [
        "EXIST v1,v3 Pos(v1,k2,v3)",
        "!Pos(v1,k2,v3) v !Pos(w1,k2,w3) v v1 = w1",
        "!Pos(v1,k2,v3) v !Pos(w1,k2,w3) v v3 = w3",
    ]


def test_internal_predicate_substr_is_a_comparison():
    m = mln()
    m.predicates["Name"] = PredicateDecl("Name", ("person", "str"), (False, False))
    n1, n2 = Var("n1"), Var("n2")
    f = Implies(
        And(Atom("Name", (x, n1)), And(Atom("Name", (y, n2)), Atom("substr", (n1, n2)))), F(x, y)
    )
    [t] = compile_formula(FormulaDecl(f, weight=1.0), m).templates
    assert t.comparisons == (Comparison("substr", n1, n2, positive=False),)
    assert format_clause(t) == "!Name(x,n1) v !Name(y,n2) v Friends(x,y) v !substr(n1,n2)"
    assert dict(t.var_types)["n1"] == "str"
    # decided by syntax on constants
    g = Or(S(x), Atom("substr", (Const('"ab"'), Const('"xaby"'))))
    assert compile_formula(FormulaDecl(g, weight=1.0), m).tautology
    # a declared predicate named substr takes precedence
    m.predicates["substr"] = PredicateDecl("substr", ("str", "str"), (False, False))
    [t] = compile_formula(FormulaDecl(Atom("substr", (n1, n2)), weight=1.0), m).templates
    assert t.literals and not t.comparisons


def test_equality_across_types_is_an_error():
    c = Var("c", pos=Pos("prog.mln", 7, 30))
    with pytest.raises(MLNSemanticError, match="'=' compares a person") as e:
        compile1(Or(Lives(x, Var("c")), Compare("=", x, c)))
    assert e.value.column == 30
    with pytest.raises(MLNSemanticError, match="'=' compares"):
        compile1(Or(Big(Var("c")), Compare("=", Func("motherOf", (x,)), Var("c"))))


def test_format_with_binding_for_plus_weights():
    c = Var("c", plus=True)
    [t] = compile1(Implies(Lives(x, c), Exists(("y",), And(F(x, y), Lives(y, c)))), weight=1.0).templates
    assert format_clause(t) == "!Lives(x,+c) v EXIST y (Friends(x,y) ^ Lives(y,+c))"
    assert format_clause(t, {"c": "Rome"}) == "!Lives(x,Rome) v EXIST y (Friends(x,y) ^ Lives(y,Rome))"
    assert format_template(t, {"c": "Rome", "y": "Anna"}).endswith("EXIST y (Friends(x,y) ^ Lives(y,Rome))")


def test_plus_variable_removed_by_simplification_keeps_its_type():
    """``Exist i (P(+x) ^ i < i)`` simplifies to false and takes ``x`` with
    it; the per-constant templates still range over x's type (was an
    internal KeyError, found by test_lazy_infer's property test)."""
    from markovlogic import MLN
    from markovlogic.logic.cnf import compile_mln

    mln = MLN.from_string("t = {A, B}\nn = {1, 2, 3}\nP(t)\nS(n)\n1.5 S(i) => Exist i (P(+x) ^ i < i)\n", "t.mln")
    templates = compile_mln(mln)
    assert templates and all(dict(t.var_types).get("x") == "t" for t in templates)
