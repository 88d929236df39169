"""Issue 16, items 1-2: deep and long formulas get an answer or a clear error
with their place (never a RecursionError), and a formula whose CNF would
explode is refused before it is expanded."""

from __future__ import annotations

import time

import pytest

from markovlogic import MLN, Database
from markovlogic.cli import main
from markovlogic.errors import MLNSemanticError
from markovlogic.logic.cnf import compile_mln
from markovlogic.logic.limits import LIMITS, cnf_size, set_limits


def test_ten_thousand_nested_negations_compile_and_print():
    mln = MLN.from_string("P(t)\n1 " + "!" * 10_000 + "P(x)\n")
    (t,) = compile_mln(mln)
    assert len(t.literals) == 1 and t.literals[0].positive       # an even number of negations
    assert mln.to_string().count("!") == 10_000


def test_a_long_disjunction_compiles_in_linear_time():
    n = 100
    mln = MLN.from_string("P(t)\n1 " + " v ".join(f"P(x{i})" for i in range(n)) + "\n")
    start = time.perf_counter()
    (t,) = compile_mln(mln)
    assert len(t.literals) == n
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize("n, what", [(20_000, "variables"), (5_000, "constants")])
def test_a_clause_too_wide_to_ground_is_refused_with_its_place(n, what):
    atoms = " v ".join((f"P(x{i})" if what == "variables" else f"P(A{i})") for i in range(n))
    mln = MLN.from_string("P(t)\n1 " + atoms + "\n", filename="wide.mln")
    with pytest.raises(MLNSemanticError, match=rf"wide.mln:2:1: .*{n:,} literals.*at most 128"):
        compile_mln(mln)


def test_an_iff_chain_is_refused_before_it_is_expanded(tmp_path, capsys):
    chain = " <=> ".join(f"P(x{i})" for i in range(25))
    (tmp_path / "m.mln").write_text("P(t)\n1 " + chain + "\n")
    (tmp_path / "e.db").write_text("P(A)\n")
    start = time.perf_counter()
    code = main(["ground", "-i", str(tmp_path / "m.mln"), "-e", str(tmp_path / "e.db")])
    assert code == 2
    assert time.perf_counter() - start < 30
    err = capsys.readouterr().err
    assert "m.mln:2:1" in err and "CNF clauses" in err and "--max-cnf-clauses" in err


def test_cnf_size_bounds_distribution():
    mln = MLN.from_string("P(t)\nQ(t)\n1 (P(x) ^ Q(x)) v (P(y) ^ Q(y)) v (P(z) ^ Q(z))\n")
    leaves, clauses = cnf_size(mln.formulas[0].formula)
    assert (leaves, clauses) == (6, 8)
    assert len(compile_mln(mln)) <= 8


def test_the_cnf_bound_can_be_raised():
    chain = " <=> ".join(f"P(x{i})" for i in range(4))
    mln = MLN.from_string("P(t)\n1 " + chain + "\n")
    old = LIMITS.max_cnf_clauses
    try:
        set_limits(max_cnf_clauses=4)
        with pytest.raises(MLNSemanticError, match="at most 4"):
            compile_mln(mln)
        set_limits(max_cnf_clauses=1000)
        assert compile_mln(mln)
    finally:
        set_limits(max_cnf_clauses=old)
