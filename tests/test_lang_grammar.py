"""The MLN language, feature by feature: each test parses a small program and
checks the exact model (AST) it produces."""

from __future__ import annotations

from pathlib import Path

import pytest

from markovlogic import MLN, Database
from markovlogic.lang.ast import (
    And,
    Atom,
    Compare,
    Const,
    EvidenceAtom,
    Exists,
    Forall,
    FormulaDecl,
    Func,
    FunctionDecl,
    FunctionValue,
    GroundAtom,
    Iff,
    Implies,
    Not,
    Or,
    PredicateDecl,
    Query,
    Var,
)
from markovlogic.lang.checks import evidence_domains, infer_variable_types
from markovlogic.lang.parser import parse_db_text, parse_mln_files, parse_queries

HEADER = "t = {A, B}\nP(t)\nQ(t)\nR(t, t)\n"


def formula(text: str, header: str = HEADER):
    """The single formula of ``header + text``."""
    mln = MLN.from_string(header + text)
    assert len(mln.formulas) == 1, mln.formulas
    return mln.formulas[0]


def f(text: str, header: str = HEADER):
    return formula(text, header).formula


x, y, z = Var("x"), Var("y"), Var("z")


def P(t=x):
    return Atom("P", (t,))


def Q(t=x):
    return Atom("Q", (t,))


def R(a=x, b=y):
    return Atom("R", (a, b))


# ------------------------------------------------------------------ declarations


def test_type_declaration_and_predicates():
    mln = MLN.from_string("person = {Anna, Bob}\nFriends(person, person)\nSmokes(person)\n")
    assert mln.types == {"person": ("Anna", "Bob")}
    assert mln.predicates["Friends"] == PredicateDecl("Friends", ("person", "person"), (False, False))
    assert mln.predicates["Smokes"].arity == 1
    assert mln.formulas == []


def test_type_range_and_line_breaks_inside_braces():
    mln = MLN.from_string("age = {18, ..., 22}\nname = {\n  Anna,\n  Bob\n}\nsize = {1,...,3}\n")
    assert mln.types["age"] == ("18", "19", "20", "21", "22")
    assert mln.types["name"] == ("Anna", "Bob")
    assert mln.types["size"] == ("1", "2", "3")


def test_keywords_are_names_inside_type_braces():
    assert MLN.from_string("letter = {u, v, w, forall}\n").types["letter"] == ("u", "v", "w", "forall")


def test_type_with_integers_and_strings():
    mln = MLN.from_string('dom = {0, 1, 2}\nword = {"hello world", Foo}\n')
    assert mln.types["dom"] == ("0", "1", "2")
    assert mln.types["word"] == ('"hello world"', "Foo")


def test_same_type_declared_twice_with_same_constants_is_fine():
    mln = MLN.from_string("t = {A, B}\nt = {B, A}\n")
    assert mln.types["t"] == ("A", "B")


def test_implicit_types_from_predicate_declarations():
    mln = MLN.from_string("Friends(person, person)\n")
    assert mln.types == {"person": ()}


def test_mutex_markers():
    mln = MLN.from_string("hasPosition(person, position!)\nInField(bib!, field, position!)\n")
    assert mln.predicates["hasPosition"].mutex == (False, True)
    assert mln.predicates["hasPosition"].has_block
    assert mln.predicates["InField"].mutex == (True, False, True)


def test_tuffy_closed_world_star():
    mln = MLN.from_string("*Friends(person, person)\nSmokes(person)\n")
    assert mln.predicates["Friends"].closed
    assert not mln.predicates["Smokes"].closed


def test_function_declaration():
    mln = MLN.from_string("person motherOf(person)\nint plus2(int, int)\n")
    assert mln.functions["motherOf"] == FunctionDecl("motherOf", "person", ("person",))
    assert mln.functions["plus2"].arity == 2
    assert set(mln.types) == {"person", "int"}


def test_declaration_versus_unit_formula():
    # ie_base.mln: SameBib(c,c) after SameBib(bib,bib) is an unweighted unit formula
    mln = MLN.from_string("SameBib(bib, bib)\nSameBib(c, c)\nSameBib(c1, c2)\n")
    assert list(mln.predicates) == ["SameBib"]
    assert [d.formula for d in mln.formulas] == [
        Atom("SameBib", (Var("c"), Var("c"))),
        Atom("SameBib", (Var("c1"), Var("c2"))),
    ]
    assert all(d.weight is None and not d.hard for d in mln.formulas)


def test_repeated_identical_mutex_declaration_is_accepted():
    mln = MLN.from_string("P(t, u!)\nP(t, u!)\n")
    assert len(mln.predicates) == 1 and mln.formulas == []


def test_repeated_declaration_is_not_a_unit_formula_and_may_refine():
    # a schema file, then a Tuffy program repeating the declarations with '*' and '!'
    mln = MLN.from_string("P(t, u)\nQ(t)\n*P(t, u!)\nQ(t)\n1 Q(x)\n")
    assert mln.predicates["P"] == PredicateDecl("P", ("t", "u"), (False, True), closed=True)
    assert mln.predicates["Q"] == PredicateDecl("Q", ("t",), (False,))
    assert len(mln.formulas) == 1


# ------------------------------------------------------------------ connectives and precedence


def test_connectives():
    assert f("1 !P(x)") == Not(P())
    assert f("1 P(x) ^ Q(x)") == And(P(), Q())
    assert f("1 P(x) v Q(x)") == Or(P(), Q())
    assert f("1 P(x) => Q(x)") == Implies(P(), Q())
    assert f("1 P(x) <=> Q(x)") == Iff(P(), Q())


def test_precedence_not_and_or_implies_iff():
    assert f("1 !P(x) ^ Q(x)") == And(Not(P()), Q())
    assert f("1 P(x) ^ Q(x) v R(x,y)") == Or(And(P(), Q()), R())
    assert f("1 P(x) v Q(x) ^ R(x,y)") == Or(P(), And(Q(), R()))
    assert f("1 P(x) v Q(x) => R(x,y)") == Implies(Or(P(), Q()), R())
    assert f("1 P(x) => Q(x) <=> R(x,y)") == Iff(Implies(P(), Q()), R())
    assert f("1 P(x) <=> Q(x) => R(x,y)") == Iff(P(), Implies(Q(), R()))


def test_left_to_right_within_a_level():
    assert f("1 P(x) => Q(x) => P(y)") == Implies(Implies(P(), Q()), P(y))
    assert f("1 P(x) ^ Q(x) ^ P(y)") == And(And(P(), Q()), P(y))
    assert f("1 P(x) <=> Q(x) <=> P(y)") == Iff(Iff(P(), Q()), P(y))


def test_parentheses():
    assert f("1 P(x) ^ (Q(x) v P(y))") == And(P(), Or(Q(), P(y)))
    assert f("1 !(P(x) ^ Q(x))") == Not(And(P(), Q()))
    assert f("1 ((P(x)))") == P()


def test_quantifiers_all_spellings():
    for word in ("FORALL", "forall", "Forall"):
        assert f(f"1 {word} x P(x)") == Forall(("x",), P())
    for word in ("EXIST", "exist", "Exist"):
        assert f(f"1 {word} x P(x)") == Exists(("x",), P())


def test_quantifier_over_several_variables():
    assert f("1 EXIST x,y R(x,y)") == Exists(("x", "y"), R())
    assert f("1 FORALL x, y R(x,y)") == Forall(("x", "y"), R())


def test_quantifier_scope_extends_to_the_right():
    # quantifiers have the lowest precedence
    assert f("1 EXIST y R(x,y) ^ Q(y)") == Exists(("y",), And(R(), Q(y)))
    assert f("1 P(x) ^ EXIST y R(x,y) v Q(y)") == And(P(), Exists(("y",), Or(R(), Q(y))))
    assert f("1 P(x) ^ (EXIST y R(x,y)) v Q(x)") == Or(And(P(), Exists(("y",), R())), Q())
    assert f("1 forall x exist y R(x,y) => P(x)") == Forall(("x",), Exists(("y",), Implies(R(), P())))
    assert f("1 !EXIST y R(x,y) ^ P(x)") == Not(Exists(("y",), And(R(), P())))


def test_exist_inside_negated_parentheses_as_in_ie_erseg():
    header = "Next(position, position)\nJnt(bib, position, bib)\nSame(bib, bib)\nIn(bib, position)\n"
    got = f("Next(j,i) ^ !(Exist c2 Jnt(c,i,c2) ^ Same(c,c2)) => In(c,j)", header)
    c, i, j, c2 = Var("c"), Var("i"), Var("j"), Var("c2")
    assert got == Implies(
        And(Atom("Next", (j, i)), Not(Exists(("c2",), And(Atom("Jnt", (c, i, c2)), Atom("Same", (c, c2)))))),
        Atom("In", (c, j)),
    )


# ------------------------------------------------------------------ line continuation


@pytest.mark.parametrize(
    "text",
    [
        "1 P(x) =>\n  Q(x)",
        "1 P(x)\n  => Q(x)",
        "1 P(x) =>\n\n  // a comment\n  Q(x)",
    ],
)
def test_continuation_after_and_before_implies(text):
    assert f(text) == Implies(P(), Q())


def test_continuation_after_each_connective_and_inside_parentheses():
    assert f("1 P(x) ^\n Q(x) v\n R(x,y)") == Or(And(P(), Q()), R())
    assert f("1 P(x) <=>\n Q(x)") == Iff(P(), Q())
    assert f("1 (P(x)\n ^ Q(x)\n )") == And(P(), Q())
    assert f("1 R(x,\n y)") == R()


def test_statements_end_at_line_breaks():
    mln = MLN.from_string(HEADER + "1 P(x)\n2 Q(x)\n\n\n3 R(x,y)\n")
    assert [d.weight for d in mln.formulas] == [1.0, 2.0, 3.0]


def test_crlf_line_endings():
    mln = MLN.from_string("t = {A}\r\nP(t)\r\n1 P(x) =>\r\n P(x)\r\n2 P(A)\r\n")
    assert [d.weight for d in mln.formulas] == [1.0, 2.0]


# ------------------------------------------------------------------ terms


def test_equality_and_comparisons():
    assert f("1 P(x) ^ P(y) ^ x = y") == And(And(P(), P(y)), Compare("=", x, y))
    for op in ("<", ">", "<=", ">="):
        assert f(f"1 R(x,y) ^ x {op} y") == And(R(), Compare(op, x, y))
    assert f("1 !(x = y) v R(x,y)") == Or(Not(Compare("=", x, y)), R())


def test_named_internal_predicates_become_comparisons():
    assert f("1 R(x,y) ^ greaterThan(x, y)") == And(R(), Compare(">", x, y))
    assert f("1 R(x,y) ^ lessThanEq(x, y)") == And(R(), Compare("<=", x, y))


def test_internal_functions_infix_with_precedence():
    got = f("1 R(x,y) ^ y = x + 2 * 3 - 1")
    assert got == And(R(), Compare("=", y, Func("-", (Func("+", (x, Func("*", (Const("2"), Const("3"))))), Const("1")))))
    got = f("1 R(x,y) ^ y = (x + 2) % 3")
    assert got.right == Compare("=", y, Func("%", (Func("+", (x, Const("2"))), Const("3"))))
    got = f("1 R(x,y) ^ y = x / 2")
    assert got.right.right == Func("/", (x, Const("2")))


def test_internal_functions_by_name():
    assert f("1 R(x,y) ^ y = succ(x)").right == Compare("=", y, Func("succ", (x,)))
    assert f("1 R(x,y) ^ y = concat(x, x)").right == Compare("=", y, Func("concat", (x, x)))
    assert f("1 R(x,y) ^ y = plus(x, 1)").right == Compare("=", y, Func("+", (x, Const("1"))))
    assert f("1 R(x,y) ^ y = mod(x, 2)").right == Compare("=", y, Func("%", (x, Const("2"))))


def test_substr_internal_predicate():
    got = f("1 substr(x, y) ^ R(x, y)")
    assert got == And(Atom("substr", (x, y)), R())


def test_user_function_terms():
    header = "person = {Anna}\nperson motherOf(person)\nSmokes(person)\n"
    got = f("1 Smokes(x) => Smokes(motherOf(x))", header)
    assert got == Implies(Atom("Smokes", (x,)), Atom("Smokes", (Func("motherOf", (x,)),)))
    got = f("1 Smokes(x) ^ y = motherOf(x) => Smokes(y)", header)
    assert got.left.right == Compare("=", y, Func("motherOf", (x,)))


def test_plus_variables_and_star_atoms():
    assert f("1 R(+x, y)") == Atom("R", (Var("x", plus=True), y))
    assert f("1 *P(x) ^ !*Q(x)") == And(Atom("P", (x,), star=True), Not(Atom("Q", (x,), star=True)))
    assert f("1 *R(+x, y)") == Atom("R", (Var("x", plus=True), y), star=True)


def test_constants_variables_and_identifiers():
    got = f('1 R(x, Anna) ^ P(7) ^ P("a string") ^ P(D_-B_Weissman) ^ P(it\'s-x_1)')
    assert got.left.left.left.left == R(x, Const("Anna"))
    assert got.left.left.left.right == P(Const("7"))
    assert got.left.left.right == P(Const('"a string"'))
    assert got.left.right == P(Const("D_-B_Weissman"))
    assert got.right == P(Var("it's-x_1"))


def test_v_is_or_but_may_start_a_name():
    header = "venue = {V1}\nVenue(venue)\n"
    assert f("1 Venue(v1) v Venue(v2)", header) == Or(Atom("Venue", (Var("v1"),)), Atom("Venue", (Var("v2"),)))


# ------------------------------------------------------------------ weights


def test_weights():
    assert formula("1.5 P(x)").weight == 1.5
    assert formula("-2 P(x)").weight == -2.0
    assert formula("1.5e-3 P(x)").weight == pytest.approx(1.5e-3)
    assert formula("-1E2 P(x)").weight == -100.0
    assert formula("+3 P(x)").weight == 3.0
    assert formula("0 P(x)").weight == 0.0


def test_hard_and_unweighted_and_fixed():
    hard = formula("P(x) => Q(x).")
    assert hard.hard and hard.weight is None and hard.has_weight
    none = formula("P(x) => Q(x)")
    assert not none.hard and none.weight is None and not none.has_weight
    fixed = formula("@5 P(x)")
    assert fixed.fixed and fixed.weight == 5.0
    assert formula("@-1.5 P(x)").weight == -1.5
    assert not formula("5 P(x)").fixed


def test_formula_positions():
    mln = MLN.from_string(HEADER + "\n  1.5 P(x) ^ Q(x)\n", "m.mln")
    decl = mln.formulas[0]
    assert (decl.pos.file, decl.pos.line, decl.pos.column) == ("m.mln", 6, 3)
    assert (decl.formula.right.pos.line, decl.formula.right.pos.column) == (6, 14)


# ------------------------------------------------------------------ comments and includes


def test_comments():
    text = HEADER + "// a line comment\n1 P(x) // trailing\n/* a block\n   comment */\n2 Q(x) /* inline */ ^ P(x)\n"
    mln = MLN.from_string(text)
    assert [d.formula for d in mln.formulas] == [P(), And(Q(), P())]


def test_include_relative_to_including_file(tmp_path: Path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "types.mln").write_text("t = {A, B}\n")
    (tmp_path / "sub" / "preds.mln").write_text('#include "types.mln"\nP(t)\n')
    (tmp_path / "main.mln").write_text('#include "sub/preds.mln"\n1 P(x)\n')
    mln = MLN.from_file(tmp_path / "main.mln")
    assert mln.types == {"t": ("A", "B")} and list(mln.predicates) == ["P"]
    assert mln.formulas[0].weight == 1.0


def test_diamond_include_reads_file_once(tmp_path: Path):
    (tmp_path / "base.mln").write_text("P(t)\n")
    (tmp_path / "a.mln").write_text('#include "base.mln"\n')
    (tmp_path / "b.mln").write_text('#include "base.mln"\n')
    (tmp_path / "main.mln").write_text('#include "a.mln"\n#include "b.mln"\n1 P(x)\n')
    mln = MLN.from_file(tmp_path / "main.mln")
    assert len(mln.formulas) == 1


def test_several_files_read_as_one_program(tmp_path: Path):
    (tmp_path / "schema.mln").write_text("P(t)\nQ(t)\n")
    (tmp_path / "rules.mln").write_text("1 P(x) => Q(x)\n")
    mln = parse_mln_files([tmp_path / "schema.mln", tmp_path / "rules.mln"])
    assert len(mln.predicates) == 2 and len(mln.formulas) == 1
    assert MLN.from_file([tmp_path / "schema.mln", tmp_path / "rules.mln"]) == mln


# ------------------------------------------------------------------ types of variables and constants


def test_constants_in_formulas_join_their_argument_type():
    mln = MLN.from_string("cat = {A}\ncategory(paper, cat)\n1 category(p, Networking)\n2 category(p, c) ^ c = Databases\n")
    assert mln.types["cat"] == ("A", "Networking", "Databases")
    assert mln.types["paper"] == ()


def test_variable_types_inferred():
    mln = MLN.from_string("advisedBy(person, person)\ninPhase(person, phase)\n1 advisedBy(s, p) ^ inPhase(s, ph) ^ q = p\n")
    assert infer_variable_types(mln.formulas[0].formula, mln) == {"s": "person", "p": "person", "ph": "phase", "q": "person"}


def test_variable_type_through_functions():
    header = "person motherOf(person)\nage ageOf(person)\nOld(age)\n"
    mln = MLN.from_string(header + "1 Old(ageOf(motherOf(x)))\n")
    assert infer_variable_types(mln.formulas[0].formula, mln) == {"x": "person"}


# ------------------------------------------------------------------ evidence


def test_evidence_truth_values_and_function_values():
    db = Database.from_string("Smokes(Anna)\n!Smokes(Bob)\n?Cancer(Anna)\nAnna = motherOf(Bob)\n")
    assert db.atoms == [
        EvidenceAtom(GroundAtom("Smokes", ("Anna",)), True),
        EvidenceAtom(GroundAtom("Smokes", ("Bob",)), False),
        EvidenceAtom(GroundAtom("Cancer", ("Anna",)), None),
    ]
    assert db.function_values == [FunctionValue("motherOf", ("Bob",), "Anna")]


def test_evidence_several_atoms_per_line_comments_spaces():
    text = "// comment\nFriends(Anna, Bob) Friends(Bob, Anna)   // trailing\n\n  !Smokes( Bob )\n/* block\nSmokes(Hidden)\n*/\nSmokes(Anna), Smokes(Chris)\n"
    db = Database.from_string(text)
    assert [str(a.atom) for a in db.atoms] == [
        "Friends(Anna,Bob)", "Friends(Bob,Anna)", "Smokes(Bob)", "Smokes(Anna)", "Smokes(Chris)",
    ]
    assert [a.truth for a in db.atoms] == [True, True, False, True, True]
    assert [a.pos.line for a in db.atoms] == [2, 2, 4, 8, 8]
    assert [a.pos.column for a in db.atoms] == [1, 20, 3, 1, 15]


def test_evidence_constants_tuffy_style():
    db = Database.from_string('wrote(D_-B_Weissman, Paper25981)\nP(lowercase, 12, "quoted str", 1.5)\n')
    assert db.atoms[0].atom.args == ("D_-B_Weissman", "Paper25981")
    assert db.atoms[1].atom.args == ("lowercase", "12", '"quoted str"', "1.5")


def test_fast_and_slow_evidence_paths_agree():
    lines = ["P(A,B)", "!Q(C)", "?R(1)", "P( A , B )", "  !P(X,Y)  "]
    fast = Database.from_string("\n".join(lines))
    slow = Database.from_string(" ".join(lines))  # one line: the lark path
    assert fast.atoms == slow.atoms


def test_evidence_positions_after_slow_lines():
    db = Database.from_string("A = f(B)\n\nP(A) Q(B)\nP(C)\n", "e.db")
    assert [(a.pos.line, a.pos.column) for a in db.atoms] == [(3, 1), (3, 6), (4, 1)]
    assert db.function_values[0].pos.line == 1


def test_constants_first_seen_in_evidence_join_types():
    mln = MLN.from_string("person = {Anna}\nSmokes(person)\nperson motherOf(person)\n")
    db = parse_db_text("Smokes(Bob)\nSmokes(Anna)\nCarol = motherOf(Dan)\n", mln=mln)
    assert evidence_domains(mln, db) == {"person": ("Anna", "Bob", "Carol", "Dan")}


# ------------------------------------------------------------------ queries


def test_queries_command_line():
    qs = parse_queries("Smokes,Cancer,advisedBy(x,Ida)")
    assert qs == [Query("Smokes"), Query("Cancer"), Query("advisedBy", (Var("x"), Const("Ida")))]


def test_queries_file_lines():
    qs = parse_queries("Cancer(x)\n//Smokes\n\nadvisedBy(x, y) Friends\n", filename="query.db")
    assert qs == [Query("Cancer", (x,)), Query("advisedBy", (x, y)), Query("Friends")]
    assert qs[1].pos.line == 4


def test_queries_checked_against_model():
    mln = MLN.from_string("Smokes(person)\n")
    assert parse_queries("Smokes(Anna)", mln) == [Query("Smokes", (Const("Anna"),))]


def test_fast_evidence_objects_are_ordinary_objects():
    atom = Database.from_string("!Smokes(Anna, Bob)\n", "e.db").atoms[0]
    built = EvidenceAtom(GroundAtom("Smokes", ("Anna", "Bob")), False)
    assert atom == built and hash(atom) == hash(built) and repr(atom) == repr(built)
    assert vars(atom.atom) == vars(built.atom)
    assert (atom.pos.file, atom.pos.line, atom.pos.column) == ("e.db", 1, 1)
    with pytest.raises(AttributeError):
        atom.truth = True  # still frozen
