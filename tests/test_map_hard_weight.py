"""MAP with hard clauses softened (``hard_weight``), as Alchemy and Tuffy do
when hard formulas contradict the evidence."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from networks import random_network  # noqa: E402

from markovlogic import MLN, Database  # noqa: E402
from markovlogic.cli import main  # noqa: E402
from markovlogic.errors import InferenceError, OptionError  # noqa: E402
from markovlogic.infer.exact import exact_map  # noqa: E402

CONTRADICTION = "t = {A, B}\nP(t)\nQ(t)\nP(x) => Q(x).\nP(x) => !Q(x).\n1.5 Q(x)\n"


@pytest.mark.parametrize("seed", range(20))
def test_softened_network_scores_hard_clauses_at_the_given_weight(seed):
    rng = np.random.default_rng(seed)
    net = random_network(rng, n_atoms=8, n_clauses=14, p_hard=0.4, n_blocks=int(rng.integers(0, 2)))
    soft = net.softened(7.5)
    assert not soft.is_hard.any()
    assert np.allclose(soft.clause_weights(soft.params), soft.weight)
    world = rng.random(net.n_atoms) < 0.5
    broken = int((net.is_hard & ~net.satisfied(world)).sum())
    assert soft.score(world) == pytest.approx(net.score(world) + 7.5 * (int(net.is_hard.sum()) - broken))
    assert soft.param_info[-1].fixed


def test_contradicting_hard_formulas_raise_unless_softened():
    mln = MLN.from_string(CONTRADICTION)
    db = Database.from_string("P(A)\n", mln=mln)
    with pytest.raises(InferenceError):
        mln.map(db, queries="Q")
    for method in ("ilp", "exact", "maxwalksat"):
        answer = mln.map(db, queries="Q", method=method, hard_weight=10.0)
        # P(A): one of the two hard clauses breaks whatever Q(A) is (the soft
        # unit 1.5 Q(A) is absorbed by the hard unit Q(A) when grounding, as in
        # Alchemy); Q(B) is free to follow its weight
        assert answer.hard_violated == 1
        assert "Q(B)" in answer.atoms
        assert answer.cost == pytest.approx(10.0)
        assert answer.network.is_hard.any()           # the model as written
    assert mln.map(db, queries="Q", method="ilp", hard_weight=10.0).optimal


def test_softened_ilp_matches_enumeration():
    mln = MLN.from_string(CONTRADICTION)
    db = Database.from_string("P(A)\nP(B)\n", mln=mln)
    net = mln.ground(db, queries="Q").softened(3.0)
    assert exact_map(net).score == pytest.approx(mln.map(db, queries="Q", hard_weight=3.0).score)


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "cpi", "hard_weight": 5.0}, "not supported with cpi"),
    ({"hard_weight": -1.0}, "positive"),
    ({"hard_weight": float("inf")}, "positive"),
])
def test_bad_hard_weight(kwargs, message):
    mln = MLN.from_string(CONTRADICTION)
    db = Database.from_string("P(A)\n", mln=mln)
    with pytest.raises(OptionError, match=message):
        mln.map(db, queries="Q", **kwargs)


def test_cli_map_with_hard_weight(tmp_path):
    model, evidence, out = tmp_path / "m.mln", tmp_path / "e.db", tmp_path / "out.result"
    model.write_text(CONTRADICTION)
    evidence.write_text("P(A)\n")
    stats = tmp_path / "stats.json"
    args = ["infer", "-i", str(model), "-e", str(evidence), "-q", "Q", "--map", "-r", str(out)]
    assert main(args) == 2 and not out.exists()
    for method in ("ilp", "maxwalksat"):
        assert main([*args, "--hard-weight", "10", "--method", method, "--stats-json", str(stats)]) == 0
        assert "Q(B)" in out.read_text().split()
        assert json.loads(stats.read_text())["hard_violated"] == 1
