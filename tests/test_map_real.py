"""MAP on the real tuffy workloads (skipped when ../shared/data is missing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from markovlogic.errors import InferenceError
from markovlogic.infer.map import solve_map

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _ground(name: str):
    folder = DATA / "tuffy" / name
    if not folder.is_dir():
        pytest.skip(f"shared data not found: {folder}")
    from markovlogic import MLN, Database
    from markovlogic.api import ground_model

    mln = MLN.from_file([folder / "prog.mln"])
    db = Database.from_file([folder / "evidence.db"], mln=mln)
    return ground_model(mln, db, (folder / "query.db").read_text().split())


@pytest.fixture(scope="module")
def class_net():
    return _ground("class")


def test_class_ilp_is_optimal_and_matches_tuffy(class_net):
    res = solve_map(class_net, "ilp")
    assert res.optimal and res.hard_violated == 0
    assert res.cost == pytest.approx(361.56, abs=1e-6)      # Tuffy's MAP cost on class
    assert res.bound == pytest.approx(res.score, abs=1e-5)


def test_class_maxwalksat_is_close_to_the_optimum(class_net):
    res = solve_map(class_net, "maxwalksat", max_flips=1_000_000, seed=0)
    assert res.hard_violated == 0
    assert res.cost <= 361.56 * 1.03


def test_rc1000_contradiction_is_named():
    net = _ground("rc1000")
    with pytest.raises(InferenceError, match="conflict"):
        solve_map(net, "ilp")
    res = solve_map(net, "maxwalksat", max_flips=20_000, seed=0)
    assert res.hard_violated > 0
