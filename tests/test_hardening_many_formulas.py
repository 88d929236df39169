"""Issue 16, item 15: templates grounded in batches (one UNION ALL query per
batch) give exactly the network of one query per template."""

from __future__ import annotations

import numpy as np

from markovlogic import MLN, Database
from markovlogic.ground import ground, grounder
from markovlogic.lang.ast import Query

SHAPES = ("{w} P(x) ^ Q(x,{c}) => R(x)", "{w} Q({c},y) => S(y)", "{w} R(x) v S({c})", "{w} P({c}) => !S(x)",
          "{w} P(x) ^ Q(x,y) => EXIST z Q(y,z) ^ R(z)", "{w} R(+x)", "{w} Ev(x, {c})", "{w} Ev(x, y) => R(y)")


def _model(n: int) -> MLN:
    lines = ["P(t)", "Q(t,t)", "R(t)", "S(t)", "*Ev(t,t)", ""]
    lines += [SHAPES[i % len(SHAPES)].format(w=round(((i * 37) % 40) / 10 - 2, 1), c=f"C{i % 13}") for i in range(n)]
    lines.append("Q(x,y) => !S(x).")
    return MLN.from_string("\n".join(lines) + "\n")


def _network(mln, db, prefetch, monkeypatch):
    monkeypatch.setattr(grounder, "PREFETCH", prefetch)
    return ground(mln, [db], [Query(p) for p in ("R", "S") if p in mln.predicates])


def test_batched_templates_give_the_same_network(monkeypatch):
    mln = _model(600)
    db = Database.from_string("\n".join([f"P(C{i})" for i in range(0, 13, 3)]
                                        + [f"Q(C{i},C{(i * 5) % 13})" for i in range(13)]
                                        + [f"Ev(C{i},C{(i * 3) % 13})" for i in range(0, 13, 2)]) + "\n", mln=mln)
    one = _network(mln, db, 1, monkeypatch)
    batched = _network(mln, db, 128, monkeypatch)
    assert one.n_clauses == batched.n_clauses > 0
    for name in ("clause_start", "lit_atom", "lit_positive", "is_hard", "param_index", "param_coef", "weight",
                 "atom_pred", "atom_args"):
        assert np.array_equal(getattr(one, name), getattr(batched, name)), name
    assert one.constant_score == batched.constant_score


def test_a_template_with_no_output_column_is_counted(monkeypatch):
    """A template whose query returns only a row count (every literal decided
    by evidence) must not be lost in a batch (found by the reference test)."""
    mln = MLN.from_string("t = {A, B, C}\nn = {1, 2, 3}\n*M(t, n)\nR(t, n)\n"
                          "M(x, i).\n-1.5 i = j + 1 v (R(+x, i) ^ R(+x, j))\n")
    db = Database.from_string("", mln=mln)
    one = _network(mln, db, 1, monkeypatch)
    batched = _network(mln, db, 128, monkeypatch)
    for name in ("clause_start", "lit_atom", "lit_positive", "is_hard", "weight"):
        assert np.array_equal(getattr(one, name), getattr(batched, name)), name
    assert one.stats.get("hard_violated_by_evidence") == batched.stats.get("hard_violated_by_evidence")
