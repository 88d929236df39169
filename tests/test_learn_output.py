"""Learned weights back into .mln text, as Alchemy writes it."""

from __future__ import annotations

import numpy as np

from markovlogic.ground.network import WeightParam
from markovlogic.learn.output import learned_mln_text
from markovlogic.model import MLN

MODEL = """
person = {Anna, Bob}
Smokes(person)
Cancer(person)
Friends(person, person)
1.5 Smokes(x) => Cancer(x)
Smokes(x) <=> Cancer(x)
2 Smokes(x) ^ Cancer(x)
Friends(x,y) ^ Smokes(x) => Smokes(y).
0.5 Smokes(+x)
@1.0 Friends(x,y) => Friends(y,x)
3 Cancer(x) => Smokes(x)
"""


def test_learned_text_layout_and_round_trip():
    mln = MLN.from_string(MODEL)
    info = (
        WeightParam("!Smokes(x) v Cancer(x)", 0, 0),
        WeightParam("!Smokes(x) v Cancer(x)", 1, 0),
        WeightParam("Smokes(x) v !Cancer(x)", 1, 1),
        WeightParam("!Smokes(x) v !Cancer(x)", 2, 0),
        WeightParam("Smokes(Anna)", 4, 0),
        WeightParam("Smokes(Bob)", 4, 0),
        WeightParam("!Friends(x,y) v Friends(y,x)", 5, 0, fixed=True),
    )
    params = np.array([0.7, 0.1, 0.2, -0.3, 1.1, -1.2, 1.0])
    text = learned_mln_text(mln, info, params)
    lines = text.splitlines()
    # a formula with one clause keeps its text and takes the learned weight
    assert "0.7 Smokes(x) => Cancer(x)" in lines
    # a formula with several CNF clauses: commented, then each clause with its weight
    i = lines.index("// Smokes(x) <=> Cancer(x)")
    assert lines[i + 1:i + 3] == ["0.1  !Smokes(x) v Cancer(x)", "0.2  Smokes(x) v !Cancer(x)"]
    # a conjunction is stored negated (clause weight -w): the formula gets -(-0.3)
    assert "0.3 Smokes(x) ^ Cancer(x)" in lines
    # hard formulas unchanged; '+' formulas: one line per constant
    assert "Friends(x, y) ^ Smokes(x) => Smokes(y)." in lines
    i = lines.index("// 0.5 Smokes(+x)")
    assert lines[i + 1:i + 3] == ["1.1  Smokes(Anna)", "-1.2  Smokes(Bob)"]
    # fixed keeps its '@'; a formula without parameter (no grounding) keeps its weight
    assert "@1.0 Friends(x, y) => Friends(y, x)" in lines
    assert "3.0 Cancer(x) => Smokes(x)" in lines
    learned = MLN.from_string(text)
    assert learned.predicates == mln.predicates
    weights = [f.weight for f in learned.formulas]
    assert weights == [0.7, 0.1, 0.2, 0.3, None, 1.1, -1.2, 1.0, 3.0]
