"""Formulas to clauses through the parser (``MLN.from_string``) and on the
shared workloads."""

from __future__ import annotations

from pathlib import Path

import pytest

from markovlogic.errors import MarkovLogicError, MLNSemanticError
from markovlogic.logic import compile_mln, compile_mln_detailed, format_clause, format_template
from markovlogic.model import MLN

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

PROGRAM = """
person = {Anna, Bob, Chris}
Smokes(person)
Cancer(person)
Friends(person, person)
Pos(person, pos!)

1.5 Smokes(x) => Cancer(x)
2 Smokes(x) ^ Cancer(x)
Friends(x,y) ^ Smokes(x) => Smokes(y).
0.5 *Smokes(x) ^ *Cancer(x)
1 Pos(x,+p) => Smokes(x)
1 EXIST y Friends(x,y)
1 !(EXIST y (Friends(x,y) ^ Smokes(y)))
3 Smokes(x) <=> Cancer(x)
1 Friends(x,y) ^ !(x = y) => Friends(y,x)
Smokes(x) v Cancer(x)
1 Smokes(x) v !Smokes(x)
"""


def test_program_through_parser():
    mln = MLN.from_string(PROGRAM, filename="prog.mln")
    fcs = compile_mln_detailed(mln)
    lines = [[format_template(t) for t in fc.templates] for fc in fcs]
    assert lines == [
        ["1.5  !Smokes(x) v Cancer(x)"],
        ["-2  !Smokes(x) v !Cancer(x)"],
        ["!Friends(x,y) v !Smokes(x) v Smokes(y)."],
        [
            "-0.5  !Smokes(x) v !Cancer(x)",
            "-0.5  !Smokes(x) v Cancer(x)",
            "-0.5  Smokes(x) v !Cancer(x)",
            "-0.5  Smokes(x) v Cancer(x)",
        ],
        ["1  !Pos(x,+p) v Smokes(x)"],
        ["1  EXIST y Friends(x,y)"],
        ["1  !Friends(x,y) v !Smokes(y)"],
        ["1.5  !Smokes(x) v Cancer(x)", "1.5  Smokes(x) v !Cancer(x)"],
        ["1  !Friends(x,y) v Friends(y,x) v x = y"],
        ["Smokes(x) v Cancer(x)"],
        [],
    ]
    assert fcs[-1].tautology
    ts = compile_mln(mln)
    assert [t.variant for t in ts if t.formula_index == 3] == [0, 1, 2, 3]
    plus = [t for t in ts if t.plus_vars]
    assert len(plus) == 1 and dict(plus[0].var_types) == {"x": "person", "p": "pos"}


def test_printed_clauses_parse_back_to_the_same_templates():
    """format_clause output is Alchemy syntax: parsing it and compiling again
    gives the same clause (up to literal order)."""
    mln = MLN.from_string(PROGRAM, filename="prog.mln")
    decls = "\n".join(PROGRAM.strip().splitlines()[:5])
    for t in compile_mln(mln):
        text = f"{decls}\n{format_template(t)}\n"
        again = compile_mln(MLN.from_string(text))
        assert len(again) == 1
        a = again[0]
        assert set(a.literals) == set(t.literals)
        assert set(a.comparisons) == set(t.comparisons)
        assert len(a.exists) == len(t.exists)
        assert a.hard == t.hard and a.plus_vars == t.plus_vars
        if t.weight is not None:
            # a printed negated conjunction is a plain clause of weight -w
            assert a.weight == pytest.approx(t.weight, rel=1e-5)


def test_type_error_position_from_parsed_file():
    text = "Lives(person, city)\nBig(city)\n1 Lives(x, c) => Big(x)\n"
    with pytest.raises(MarkovLogicError) as e:
        compile_mln(MLN.from_string(text, filename="t.mln"))
    assert e.value.file == "t.mln" and e.value.line == 3


def test_existential_with_universal_needs_domains_from_parsed_file():
    text = "person = {A, B}\nFriends(person, person)\n1 EXIST y (FORALL z Friends(y, z))\n"
    mln = MLN.from_string(text, filename="q.mln")
    with pytest.raises(MLNSemanticError, match="domains") as e:
        compile_mln(mln)
    assert e.value.file == "q.mln" and e.value.line == 3
    [t] = compile_mln(mln, domains=dict(mln.types))
    assert format_clause(t).startswith("Friends(A,") and " v Friends(B," in format_clause(t)


# ---------------------------------------------------------------- shared workloads


def _mln_files() -> list[Path]:
    if not DATA.is_dir():
        return []
    return sorted(DATA.rglob("*.mln"))


@pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data not found at {DATA}")
@pytest.mark.parametrize("path", _mln_files(), ids=lambda p: str(p.relative_to(DATA)))
def test_shared_programs_compile(path: Path):
    try:
        mln = MLN.from_file(path)
    except MarkovLogicError as e:  # the parser's business, tested in test_lang_*
        pytest.skip(f"parser rejects {path.name}: {e}")
    fcs = compile_mln_detailed(mln)
    for i, fc in enumerate(fcs):
        decl = mln.formulas[i]
        assert fc.templates or fc.tautology or fc.constant_false
        for t in fc.templates:
            assert t.formula_index == i and t.hard == decl.hard
            assert {v for v, _ in t.var_types} >= set(t.plus_vars)
            format_template(t)


@pytest.mark.skipif(not (DATA / "tuffy" / "cse").is_dir(), reason=f"tuffy/cse not found under {DATA}")
def test_tuffy_cse_existentials_become_groups():
    mln = MLN.from_file(DATA / "tuffy" / "cse" / "prog.mln")
    texts = [format_clause(t) for t in compile_mln(mln) if t.exists]
    assert "!student(x) v EXIST y advisedBy(x,y) v EXIST y tempAdvisedBy(x,y)" in texts
    assert "!professor(x) v EXIST y hasPosition(x,y)" in texts


@pytest.mark.skipif(not (DATA / "thebeast").is_dir(), reason=f"thebeast not found under {DATA}")
def test_ie_base_plus_variables():
    mln = MLN.from_file(DATA / "thebeast" / "ie_base.mln")
    ts = compile_mln(mln)
    texts = {format_clause(t): t for t in ts}
    t = texts["!Token(+w,i,c) v IsDate(+w) v IsDigit(+w) v InField(c,+f,i)"]
    assert t.plus_vars == ("w", "f")
