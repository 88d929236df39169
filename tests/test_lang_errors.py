"""Every mistake a user can make in .mln, .db and query text: the error class,
the message, the line and the column."""

from __future__ import annotations

from pathlib import Path

import pytest

from markovlogic import MLN, Database
from markovlogic.errors import (
    EvidenceError,
    MarkovLogicError,
    MLNSemanticError,
    MLNSyntaxError,
    OptionError,
    QueryError,
)
from markovlogic.lang.checks import require_weights, unweighted_formulas
from markovlogic.lang.parser import parse_db_files, parse_queries

HEADER = "t = {A, B}\nP(t)\nQ(t)\nR(t, t)\nu = {C}\nS(u)\n"  # 6 lines


def mln_error(text: str, header: str = HEADER) -> MarkovLogicError:
    with pytest.raises(MarkovLogicError) as info:
        MLN.from_string(header + text, "m.mln")
    return info.value


def check(err: MarkovLogicError, cls, message: str, line: int, column: int, file: str = "m.mln") -> None:
    """The error's class, message, place, source line and caret under the column."""
    assert type(err) is cls, (type(err), str(err))
    assert message in err.message, err.message
    assert (err.file, err.line, err.column) == (file, line, column), str(err)
    assert err.source_line is not None
    assert err.render().splitlines()[-1] == "    " + " " * (column - 1) + "^"


# ------------------------------------------------------------------ syntax


@pytest.mark.parametrize(
    "text, message, line, column",
    [
        ("1 P(x", "this '(' is never closed", 7, 4),
        ("1 (P(x) ^ Q(x)\n2 P(x)", "this '(' is never closed", 7, 3),
        ("1 P(x)) ^ Q(x)", "')' without a matching opening one", 7, 7),
        ("x = {A, B)", "')' does not match the '{' at line 7, column 5", 7, 10),
        ("x = {A, B\nP(x)", "this '{' is never closed", 7, 5),
        ("1 P(x) Q(x)", "unexpected name 'Q'; expected a connective", 7, 8),
        ("1 P(x) ^", "unexpected end of input", 7, 8),
        ("1 P(x) & Q(x)", "unexpected character '&'", 7, 8),
        ('1 P(x) ^ x = "abc', "unterminated string", 7, 14),
        ("1 P(x) /* no end", "unterminated comment", 7, 8),
        ("@ P(x)", "expected a weight", 7, 3),
        ("1 EXIST Y P(Y)", "quantified variable 'Y' must start with a lower-case letter", 7, 9),
        ("1 P(-x)", "unary minus is not supported", 7, 5),
        ("1 P(+A)", "'+' applies to variables only", 7, 5),
        ("1 R(v, x)", "'v' is the disjunction", 7, 5),
        ("#define X", "unexpected '#'", 7, 1),
    ],
)
def test_syntax_errors(text, message, line, column):
    check(mln_error(text), MLNSyntaxError, message, line, column)


# ------------------------------------------------------------------ semantics


@pytest.mark.parametrize(
    "text, message, line, column",
    [
        ("1 P(x) ^ Foo(x)", "undeclared predicate 'Foo'", 7, 10),
        ("Foo(Bar)", "undeclared predicate 'Foo'", 7, 1),
        ("1 P(x, y)", "predicate 'P' takes 1 argument (t), not 2", 7, 3),
        ("1 R(x)", "predicate 'R' takes 2 arguments (t, t), not 1", 7, 3),
        ("1 P(g(x))", "undeclared function 'g'", 7, 5),
        ("t f(t)\n1 P(f(x, y))", "function 'f' takes 1 argument (t), not 2", 8, 5),
        ("t g(u)\n1 S(g(x))", "function 'g' returns type 't' where type 'u' is expected", 8, 5),
        ("1 P(x) ^ S(x)", "variable 'x' is used here as type 'u' but as type 't' at line 7, column 5", 7, 12),
        ("1 P(x) ^ S(y) ^ x = y", "'x = y' compares variables of different types ('t' and 'u')", 7, 17),
        ("2 x = A", "cannot infer the type of variable 'x'", 7, 3),
        ("1 P(x) ^ y > x", "cannot infer the type of variable 'y'", 7, 10),
        ("1 EXIST y P(x)", "quantified variable 'y' does not occur in its formula", 7, 3),
        ("1 P(x).", "either a weight (soft) or a final period (hard), not both", 7, 7),
        ("@1 P(x).", "not both", 7, 8),
        ("t = {A, C}", "type 't' is declared again with different constants (first declared at line 1, column 1)", 7, 1),
        ("x = {5, ..., 1}", "empty integer range {5, ..., 1}", 7, 6),
        ("x = {1, ..., B}", "an integer range is written {first, ..., last}", 7, 9),
        ("1 P(x!)", "'!' after an argument marks a mutually exclusive argument", 7, 5),
        ("P(u!)", "predicate 'P' is already declared (at line 2, column 1)", 7, 1),
        ("Z(t, u!)\nZ(t!, u)", "predicate 'Z' is declared again with different '!' arguments", 8, 1),
        ("Smokes(Person)", "undeclared predicate 'Smokes' (to declare it, write its argument types in lower case: Smokes(person))", 7, 1),
        ("Z(t, u!)\nZ(t, t!)", "predicate 'Z' is already declared (at line 7, column 1)", 8, 1),
        ("t f(t)\nt f(u)", "function 'f' is declared again differently", 8, 3),
        ("t P(t)", "'P' is already declared as a predicate", 7, 3),
        ("t g(t)\ng(t)", "'g' is already declared as a function", 8, 1),
        ("1 P(x) ^ substr(x)", "internal predicate 'substr' takes 2 arguments, not 1", 7, 10),
        ("1 R(x, y) ^ y = succ(x, x)", "internal function 'succ' takes 1 argument, not 2", 7, 17),
        ('#include "nowhere.mln"', 'cannot include "nowhere.mln": file not found', 7, 10),
    ],
)
def test_semantic_errors(text, message, line, column):
    check(mln_error(text), MLNSemanticError, message, line, column)


def test_univ_style_undeclared_predicate_points_at_its_use():
    text = "person = {A}\nprofessor(person)\n\n0.0053 publication(t,p) ^ professor(p)\n"
    err = mln_error(text, header="")
    check(err, MLNSemanticError, "undeclared predicate 'publication'", 4, 8)


def test_include_cycle(tmp_path: Path):
    (tmp_path / "a.mln").write_text('P(t)\n#include "b.mln"\n')
    (tmp_path / "b.mln").write_text('\n\n  #include "a.mln"\n')
    with pytest.raises(MLNSemanticError) as info:
        MLN.from_file(tmp_path / "a.mln")
    err = info.value
    assert "include cycle: a.mln -> b.mln -> a.mln" in err.message
    assert (Path(err.file).name, err.line, err.column) == ("b.mln", 3, 12)  # the included name
    assert err.source_line == '  #include "a.mln"'


def test_error_inside_included_file_names_that_file(tmp_path: Path):
    (tmp_path / "inc.mln").write_text("P(t)\n1 P(x) ^ Nope(x)\n")
    (tmp_path / "main.mln").write_text('#include "inc.mln"\n')
    with pytest.raises(MLNSemanticError) as info:
        MLN.from_file(tmp_path / "main.mln")
    assert Path(info.value.file).name == "inc.mln"
    assert (info.value.line, info.value.column) == (2, 10)


def test_missing_file_is_an_option_error(tmp_path: Path):
    with pytest.raises(OptionError, match="file not found"):
        MLN.from_file(tmp_path / "absent.mln")
    with pytest.raises(OptionError, match="file not found"):
        Database.from_file(tmp_path / "absent.db")


def test_weight_required_for_inference():
    mln = MLN.from_string(HEADER + "1 P(x)\nQ(x) => P(x)\nP(A).\n", "m.mln")
    assert unweighted_formulas(mln) == [1]
    with pytest.raises(MLNSemanticError) as info:
        require_weights(mln)
    assert "formula has no weight" in info.value.message
    assert (info.value.line, info.value.column) == (8, 1)


# ------------------------------------------------------------------ evidence

MODEL = MLN.from_string(
    "person = {Anna, Bob}\nSmokes(person)\nFriends(person, person)\nhasPos(person, pos!)\nperson motherOf(person)\n"
)


def db_error(text: str) -> MarkovLogicError:
    with pytest.raises(MarkovLogicError) as info:
        Database.from_string(text, "e.db", mln=MODEL)
    return info.value


@pytest.mark.parametrize(
    "text, message, line, column",
    [
        ("Smokes(Anna)\n\n  Cancer(Anna)", "undeclared predicate 'Cancer'", 3, 3),
        ("Smokes(Anna)\nFriends(Anna)", "predicate 'Friends' takes 2 arguments (person, person), not 1", 2, 1),
        ("Smokes(Anna)\n!Smokes(Anna)", "contradictory evidence: Smokes(Anna) is given as false here and as true at line 1", 2, 1),
        ("Smokes(Anna)\n?Smokes(Anna)", "given as unknown here", 2, 1),
        ("hasPos(Anna, Prof)\nhasPos(Anna, Student)", "allows one true value per block", 2, 1),
        ("Anna = motherOf(Bob)\nCarol = motherOf(Bob)", "function value motherOf(Bob) given twice", 2, 1),
        ("Anna = fatherOf(Bob)", "undeclared function 'fatherOf'", 1, 1),
        ("Anna = motherOf(Bob, Carl)", "function 'motherOf' takes 1 argument", 1, 1),
        ("motherOf(Bob)", "undeclared predicate 'motherOf' (it is a function", 1, 1),
        ("Smokes(Anna)\nSmokes()", "predicate 'Smokes' takes 1 argument (person), not 0", 2, 1),
    ],
)
def test_evidence_errors(text, message, line, column):
    check(db_error(text), EvidenceError, message, line, column, file="e.db")


@pytest.mark.parametrize(
    "text, message, line, column",
    [
        ("Smokes(Anna)\nSmokes(Anna", "this '(' is never closed", 2, 7),
        ("Smokes(Anna)\nSmokes(Anna) x", "unexpected end of input in evidence; expected one of '(', '='", 2, 14),
        ("Smokes(Anna)\nSmokes(x y)", "unexpected name 'y'; expected ',' or ')'", 2, 10),
        ("Smokes(Anna)\n\nSmokes(Anna) & Smokes(Bob)", "unexpected character '&'", 3, 14),
    ],
)
def test_evidence_syntax_errors(text, message, line, column):
    check(db_error(text), MLNSyntaxError, message, line, column, file="e.db")


def test_same_evidence_twice_is_fine_and_new_constants_are_fine():
    db = Database.from_string("Smokes(Anna)\nSmokes(Anna)\nSmokes(Zoe)\nAnna = motherOf(Bob)\nAnna = motherOf(Bob)\n", mln=MODEL)
    assert len(db.atoms) == 3


def test_evidence_error_in_second_file_names_it(tmp_path: Path):
    (tmp_path / "a.db").write_text("Smokes(Anna)\n")
    (tmp_path / "b.db").write_text("Smokes(Bob)\n!Smokes(Anna)\n")
    with pytest.raises(EvidenceError) as info:
        parse_db_files([tmp_path / "a.db", tmp_path / "b.db"], mln=MODEL)
    assert Path(info.value.file).name == "b.db" and info.value.line == 2
    assert info.value.source_line == "!Smokes(Anna)"


# ------------------------------------------------------------------ queries


@pytest.mark.parametrize(
    "text, cls, message, column",
    [
        ("Smokes,Cancer", QueryError, "unknown query predicate 'Cancer'", 8),
        ("Smokes,Friends(x)", QueryError, "predicate 'Friends' takes 2 arguments", 8),
        ("Smokes,Friends(x", MLNSyntaxError, "this '(' is never closed", 15),
        ("Smokes(", MLNSyntaxError, "never closed", 7),
        ("Smokes()", QueryError, "has no arguments", 1),
        ("!Smokes", MLNSyntaxError, "unexpected '!'", 1),
    ],
)
def test_query_errors(text, cls, message, column):
    with pytest.raises(MarkovLogicError) as info:
        parse_queries(text, MODEL)
    check(info.value, cls, message, 1, column, file="<query>")
