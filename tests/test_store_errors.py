"""Bad input fails before any grounding work, with file and line."""

from __future__ import annotations

import pytest

from markovlogic.errors import EvidenceError, MLNSemanticError, OptionError, QueryError
from markovlogic.ground import Grounder, ground
from markovlogic.lang.ast import Const, EvidenceAtom, FunctionValue, GroundAtom, Pos, Query, Var
from markovlogic.lang.parser import parse_queries
from markovlogic.model import MLN, Database

MODEL = """
person = {Anna, Bob, Chris}
person motherOf(person)
Smokes(person)
Cancer(person)
Friends(person, person)
*Knows(person, person)
1.5 Smokes(x) => Cancer(x)
1.1 Friends(x, y) ^ Smokes(x) => Smokes(y)
"""


@pytest.fixture()
def mln() -> MLN:
    return MLN.from_string(MODEL, "model.mln")


def test_undeclared_evidence_predicate_names_file_and_line(mln):
    db = Database.from_string("Smokes(Anna)\n\nDrinks(Bob)\n", "ev.db")
    with pytest.raises(EvidenceError) as e:
        ground(mln, db, parse_queries("Cancer", mln))
    assert e.value.file == "ev.db" and e.value.line == 3
    assert "Drinks" in str(e.value)


def test_wrong_arity_names_file_and_line(mln):
    db = Database(atoms=[
        EvidenceAtom(GroundAtom("Smokes", ("Anna",)), True, Pos("ev.db", 1, 1)),
        EvidenceAtom(GroundAtom("Friends", ("Anna",)), True, Pos("ev.db", 2, 1)),
    ])
    with pytest.raises(EvidenceError) as e:
        ground(mln, db, parse_queries("Cancer", mln))
    assert (e.value.file, e.value.line) == ("ev.db", 2)
    assert "declared with 2" in str(e.value)


def test_function_value_given_twice(mln):
    db = Database(function_values=[
        FunctionValue("motherOf", ("Bob",), "Anna", Pos("ev.db", 1, 1)),
        FunctionValue("motherOf", ("Bob",), "Chris", Pos("ev.db", 4, 1)),
    ])
    with pytest.raises(EvidenceError) as e:
        ground(mln, db, parse_queries("Cancer", mln))
    assert (e.value.file, e.value.line) == ("ev.db", 4)
    assert "given twice" in str(e.value)


def test_contradicting_evidence(mln):
    db = Database.from_string("Smokes(Anna)\n!Smokes(Anna)\n", "ev.db")  # parsed without the model: the store checks
    with pytest.raises(EvidenceError) as e:
        ground(mln, db, parse_queries("Cancer", mln))
    assert e.value.line == 2


def test_unknown_query_predicate(mln):
    with pytest.raises(QueryError) as e:
        ground(mln, Database(), [Query("Drinks", None, Pos("<query>", 1, 1))])
    assert "Drinks" in str(e.value)


def test_query_constant_outside_domain(mln):
    with pytest.raises(QueryError, match="not in the domain"):
        ground(mln, Database(), [Query("Friends", (Var("x"), Const("Zed")))])


@pytest.mark.parametrize(
    "closed, open_, queries, message",
    [
        (["Smokes"], ["Smokes"], "Cancer", "both closed-world"),
        (["Cancer"], [], "Cancer", "query predicate"),
        ([], [], "Knows", "closed-world evidence"),
        ([], ["Knows"], "Cancer", "closed-world evidence"),
        (["Drinks"], [], "Cancer", "not declared"),
    ],
)
def test_contradictory_options(mln, closed, open_, queries, message):
    with pytest.raises(OptionError, match=message):
        ground(mln, Database(), parse_queries(queries, mln), closed=closed, open_=open_)


def test_errors_come_before_grounding(mln, monkeypatch):
    """The store is never built when options are wrong."""
    import markovlogic.store.store as store_mod

    def boom(*a, **k):  # pragma: no cover - must not run
        raise AssertionError("grounding started")

    monkeypatch.setattr(store_mod.EvidenceStore, "_build_constant_tables", boom)
    with pytest.raises(OptionError):
        Grounder(mln, Database(), parse_queries("Cancer", mln), closed=["Cancer"])
    with pytest.raises(EvidenceError):
        Grounder(mln, Database.from_string("Drinks(Bob)\n", "ev.db"), parse_queries("Cancer", mln))


def test_unweighted_formula_rejected_with_position():
    mln = MLN.from_string("P(t)\nQ(t)\nP(x) => Q(x)\n", "u.mln")
    db = Database.from_string("P(A)\n", "u.db", mln=mln)
    with pytest.raises(MLNSemanticError) as e:
        ground(mln, db, parse_queries("Q", mln))
    assert (e.value.file, e.value.line) == ("u.mln", 3)
    net = ground(mln, db, parse_queries("Q", mln), allow_unweighted=True)
    assert net.n_clauses == 1 and net.params.tolist() == [0.0]


def test_two_true_values_in_a_block():
    mln = MLN.from_string("Has(person, pos!)\nQ(person)\n1 Has(x, y) => Q(x)\n", "b.mln")
    db = Database.from_string("Has(A, P1)\nHas(A, P2)\n", "b.db")
    with pytest.raises(EvidenceError) as e:
        ground(mln, db, parse_queries("Q", mln), open_=["Has"])
    assert e.value.line == 2
