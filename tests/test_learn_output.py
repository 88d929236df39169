"""From the model to the learned formulas and back to .mln text, as Alchemy writes it."""

from __future__ import annotations

import numpy as np

from markovlogic.ground.network import WeightParam
from markovlogic.learn.output import learned_mln_text, split_clauses
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
4 Smokes(x) ^ (Cancer(x) v Friends(x,x))
"""


def test_split_clauses():
    mln = MLN.from_string(MODEL)
    clausal = split_clauses(mln)
    # '<=>' (two clauses) and the last formula (two clauses) are split; the rest stay whole
    assert clausal.origin == [(0, -1), (1, 0), (1, 1), (2, -1), (3, -1), (4, -1), (5, -1), (6, -1), (7, 0), (7, 1)]
    pieces = [f for f, (i, k) in zip(clausal.mln.formulas, clausal.origin) if k >= 0]
    # each clause is a formula of its own, prior mean = its share of the weight
    assert [f.weight for f in pieces] == [None, None, 2.0, 2.0]
    assert clausal.mln.formulas[3] == mln.formulas[2]


def test_learned_text_layout_and_round_trip():
    mln = MLN.from_string(MODEL)
    clausal = split_clauses(mln)
    # parameters as the grounder gives them for the clausal model (one per
    # formula, one per '+' constant), and learned values
    info = (
        WeightParam("!Smokes(x) v Cancer(x)", 0),
        WeightParam("!Smokes(x) v Cancer(x)", 1),
        WeightParam("Smokes(x) v !Cancer(x)", 2),
        WeightParam("!Smokes(x) v !Cancer(x)", 3),
        WeightParam("Smokes(Anna)", 5),
        WeightParam("Smokes(Bob)", 5),
        WeightParam("!Friends(x,y) v Friends(y,x)", 6, fixed=True),
        WeightParam("Smokes(x)", 8),
        WeightParam("Cancer(x) v Friends(x,x)", 9),
    )
    params = np.array([0.7, 0.1, 0.2, 0.3, 1.1, -1.2, 1.0, 0.4, 0.6])
    text = learned_mln_text(clausal, info, params)
    lines = text.splitlines()
    # a formula learned as one weight keeps its text and takes the weight
    assert "0.7 Smokes(x) => Cancer(x)" in lines
    assert "0.3 Smokes(x) ^ Cancer(x)" in lines
    # a formula with several CNF clauses: commented, then each clause with its weight
    i = lines.index("// Smokes(x) <=> Cancer(x)")
    assert lines[i + 1:i + 3] == ["0.1  !Smokes(x) v Cancer(x)", "0.2  Smokes(x) v !Cancer(x)"]
    i = lines.index("// 4.0 Smokes(x) ^ (Cancer(x) v Friends(x, x))")
    assert lines[i + 1:i + 3] == ["0.4  Smokes(x)", "0.6  Cancer(x) v Friends(x,x)"]
    # hard formulas unchanged; '+' formulas: one line per constant
    assert "Friends(x, y) ^ Smokes(x) => Smokes(y)." in lines
    i = lines.index("// 0.5 Smokes(+x)")
    assert lines[i + 1:i + 3] == ["1.1  Smokes(Anna)", "-1.2  Smokes(Bob)"]
    # fixed keeps its '@'; a formula without parameter (no grounding) keeps its weight
    assert "@1.0 Friends(x, y) => Friends(y, x)" in lines
    assert "3.0 Cancer(x) => Smokes(x)" in lines
    learned = MLN.from_string(text)
    assert learned.predicates == mln.predicates
    assert [f.weight for f in learned.formulas] == [0.7, 0.1, 0.2, 0.3, None, 1.1, -1.2, 1.0, 3.0, 0.4, 0.6]
