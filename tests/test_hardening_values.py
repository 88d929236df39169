"""Issue 16, items 9-10: weights out of range are refused with their place
(no numpy warning leaks); evidence constants outside a declared type's list
join the type with one warning."""

from __future__ import annotations

import warnings

import pytest

from markovlogic import MLN, Database
from markovlogic.cli import main
from markovlogic.errors import DomainExtendedWarning, MLNSemanticError


@pytest.mark.parametrize("weight", ["1e308", "-1e300", "1e13"])
def test_huge_weights_are_refused_with_their_place(weight):
    with pytest.raises(MLNSemanticError, match=r"m.mln:3:1: the weight .* out of range"):
        MLN.from_string(f"P(t)\nQ(t)\n{weight} P(x) => Q(x)\n", filename="m.mln")


def test_huge_weights_on_the_command_line(tmp_path, capsys):
    (tmp_path / "m.mln").write_text("P(t)\nQ(t)\n1e308 P(x) => Q(x)\n1e308 Q(x) => P(x)\n")
    (tmp_path / "e.db").write_text("P(A)\nP(B)\n")
    assert main(["infer", "-i", str(tmp_path / "m.mln"), "-e", str(tmp_path / "e.db"), "-q", "Q"]) == 2
    err = capsys.readouterr().err
    assert "out of range" in err and "RuntimeWarning" not in err and "overflow" not in err


def test_weights_built_in_python_are_checked_too():
    from dataclasses import replace

    mln = MLN.from_string("P(t)\n1 P(x)\n")
    mln.formulas[0] = replace(mln.formulas[0], weight=float("inf"))
    with pytest.raises(MLNSemanticError, match="out of range"):
        mln.ground(Database.from_string("P(A)\n", mln=mln))


def test_evidence_extends_a_declared_type_with_one_warning():
    mln = MLN.from_string("dom = {A, B}\nP(dom)\n1 P(x)\n")
    db = Database.from_string("P(A)\nP(C)\nP(D)\n", filename="e.db", mln=mln)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        marginals = mln.infer(db, "P", method="exact")
    extended = [w for w in caught if issubclass(w.category, DomainExtendedWarning)]
    assert len(extended) == 1
    assert "adds 2 constants to type 'dom'" in str(extended[0].message) and "C at e.db:2" in str(extended[0].message)
    assert set(marginals.as_dict()) == {"P(B)"}        # A, C, D are evidence; B is the one query atom


def test_no_warning_without_a_declared_list():
    mln = MLN.from_string("P(dom)\n1 P(x)\n")
    db = Database.from_string("P(A)\nP(C)\n", mln=mln)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DomainExtendedWarning)
        mln.ground(db)
