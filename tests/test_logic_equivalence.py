"""logic.equivalence: predicates whose hard reflexivity, symmetry and
transitivity rules are all in the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from markovlogic import MLN
from markovlogic.logic.equivalence import equivalence_predicates, equivalence_rules

ROOT = Path(__file__).resolve().parents[1]
DECLS = "Same(m, m)\nOther(m, m)\nLink(m, n)\nP(m)\n"
REFL = "Same(x, x).\n"
SYM = "Same(x, y) => Same(y, x).\n"
TRANS = "Same(x, y) ^ Same(y, z) => Same(x, z).\n"


def preds(text: str) -> set[str]:
    return equivalence_predicates(MLN.from_string(DECLS + text))


def test_the_three_rules():
    assert preds(REFL + SYM + TRANS) == {"Same"}
    assert equivalence_rules(MLN.from_string(DECLS + REFL + SYM))["Same"] == {"reflexive", "symmetric"}


@pytest.mark.parametrize("missing", [REFL, SYM, TRANS])
def test_one_rule_missing(missing):
    assert preds("".join(r for r in (REFL, SYM, TRANS) if r != missing)) == set()


@pytest.mark.parametrize("sym, trans", [
    ("Same(a, b) <=> Same(b, a).\n", "Same(a, b) ^ Same(b, c) => Same(a, c).\n"),
    ("!Same(u, w) v Same(w, u).\n", "!Same(x, y) v !Same(y, z) v Same(x, z).\n"),
    (SYM, "Same(x, y) ^ Same(z, y) => Same(x, z).\n"),           # another orientation (symmetry holds)
    (SYM, "Same(y, x) ^ Same(y, z) => Same(z, x).\n"),
    (SYM, "Same(x, y) ^ Same(y, z) ^ !(x = z) => Same(x, z).\n"),   # exempting x = z: reflexivity covers it
])
def test_other_spellings(sym, trans):
    assert preds(REFL + sym + trans) == {"Same"}


@pytest.mark.parametrize("text", [
    # soft rules are not constraints
    "1.0 Same(x, x)\n" + SYM + TRANS,
    REFL + "2 Same(x, y) => Same(y, x)\n" + TRANS,
    # not transitivity: the conclusion links the shared variable
    REFL + SYM + "Same(x, y) ^ Same(y, z) => Same(x, y).\n",
    REFL + SYM + "Same(x, y) ^ Same(y, z) => Same(y, z).\n",
    # rules of two different predicates
    REFL + SYM + "Other(x, y) ^ Other(y, z) => Other(x, z).\n",
    # a rule with other literals is weaker
    REFL + SYM + "Same(x, y) ^ Same(y, z) ^ P(x) => Same(x, z).\n",
    # a constant argument
    "Same(x, x).\nSame(x, A) => Same(A, x).\n" + TRANS,
])
def test_not_equivalences(text):
    assert preds(text) == set()


def test_arguments_of_two_types():
    text = "Link(x, x).\nLink(x, y) => Link(y, x).\nLink(x, y) ^ Link(y, z) => Link(x, z).\n"
    with pytest.raises(Exception):       # the model itself is ill-typed: x is both m and n
        preds(text)


def test_two_predicates_and_the_cora_example():
    other = REFL.replace("Same", "Other") + SYM.replace("Same", "Other") + TRANS.replace("Same", "Other")
    assert preds(REFL + SYM + TRANS + other) == {"Same", "Other"}
    assert equivalence_predicates(MLN.from_file(ROOT / "examples" / "cora-er" / "cora-pairwise.mln")) == {"SameBib"}
    assert equivalence_predicates(MLN.from_file(ROOT / "examples" / "cora-er" / "cora-er.mln")) >= {"SameBib"}
