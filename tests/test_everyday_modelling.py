"""Issue 29, item 5: modelling rough edges a first day finds: arithmetic on
constants that are no numbers, and the reserved word ``v``."""

from __future__ import annotations

import pytest

from markovlogic import MLN, Database
from markovlogic.errors import MLNSemanticError, MLNSyntaxError

YEARS = "Year(bib, year)\nSame(bib, bib)\n1 Year(x, a) ^ Year(y, c) ^ a - c > 5 => !Same(x, y)\n"


def _map(model: str, evidence: str):
    mln = MLN.from_string(model, "y.mln")
    return mln.map(Database.from_string(evidence, mln=mln), queries="Same", method="exact")


def test_arithmetic_on_names_is_refused_with_the_formula_and_a_constant():
    with pytest.raises(MLNSemanticError, match=r"variable a of type year.*Y1999") as info:
        _map(YEARS, "Year(B1, Y1999)\nYear(B2, Y2010)\n")
    assert (info.value.file, info.value.line) == ("y.mln", 3)


def test_arithmetic_on_a_constant_that_is_no_number_is_refused():
    model = "Year(bib, year)\nSame(bib, bib)\n1 Year(x, a) ^ a > Y1000 + 5 => Same(x, x)\n"
    with pytest.raises(MLNSemanticError, match="the constant Y1000"):
        _map(model, "Year(B1, 1999)\n")


LATER = YEARS.replace("=> !Same", "=> Same")


def test_arithmetic_on_integers_works():
    assert _map(LATER, "Year(B1, 1999)\nYear(B2, 2010)\n").atoms == {"Same(B2,B1)"}


def test_a_type_with_some_integers_keeps_the_documented_rule():
    # groundings whose operand is not an integer do not exist; the others do
    assert _map(LATER, "Year(B1, 1999)\nYear(B2, 2010)\nYear(B3, Unknown)\n").atoms == {"Same(B2,B1)"}


@pytest.mark.parametrize("text, column", [
    ("Venue(bib, venue)\nSame(bib, bib)\n1 Venue(x, v) ^ Venue(y, v) => Same(x, y)\n", 12),
    ("equivalence Same(bib, bib)\nVenue(bib, venue)\n-0.4 distinct(v; x in Same: Venue(x, v)) >= 3\n", 15),
    ("equivalence Same(bib, bib)\nVenue(bib, venue)\n0.4 all(x, v in Same: Venue(x, c) ^ Venue(v, c))\n", 12),
])
def test_v_as_a_name_says_it_is_the_disjunction_and_how_to_rename(text, column):
    with pytest.raises(MLNSyntaxError, match="'v' is the disjunction") as info:
        MLN.from_string(text, "v.mln")
    assert "rename" in str(info.value) and (info.value.line, info.value.column) == (3, column)


def test_the_readme_distinct_example_parses():
    mln = MLN.from_string("equivalence SameBib(bib, bib)\nVenue(bib, venue)\n"
                          "-0.4 distinct(u; x in SameBib: Venue(x, u)) >= 3\n")
    assert mln.set_features[0].value_var == "u"
