"""Time limits that hold (issue 16, item 5): large ILP models are solved by
HiGHS in a child process killed at the deadline while MaxWalkSAT runs in the
parent; the limit covers grounding too."""

from __future__ import annotations

import time

import numpy as np
import pytest

from markovlogic.infer import highs_process, ilp
from markovlogic.infer.exact import exact_map
from markovlogic.infer.ilp import ilp_map

from networks import random_network


def test_child_process_path_gives_the_exact_answer(monkeypatch):
    monkeypatch.setattr(highs_process, "SUBPROCESS_COLUMNS", 1)
    rng = np.random.default_rng(7)
    net = random_network(rng, 10, 25, max_len=3, n_blocks=1)
    best = exact_map(net)
    res = ilp_map(net, max_seconds=30, presolve=False, cliques=False)
    assert res.optimal
    assert res.hard_violated == 0
    assert res.score == pytest.approx(best.score, abs=1e-6)
    assert not res.stats.get("killed_groups")


def test_child_killed_at_the_deadline():
    rng = np.random.default_rng(3)
    net = random_network(rng, 10, 25, max_len=3)
    sat = ilp.sat_arrays(net)
    model = ilp.build_model(sat, ilp.encode(sat))
    child = highs_process.start(model, 30.0, ilp.highs_options(0.0, 1))
    child.deadline = time.perf_counter()          # already past: a spawned child has not answered yet
    t = time.perf_counter()
    assert child.result() is None
    assert time.perf_counter() - t < 10
    assert not child.process.is_alive()


def test_killed_child_leaves_a_world_from_maxwalksat(monkeypatch):
    """When the child never answers, the world comes from MaxWalkSAT, hard
    clauses hold, and the result says it is not proven optimal."""
    monkeypatch.setattr(highs_process, "SUBPROCESS_COLUMNS", 1)

    class Never:
        def result(self):
            return None

    monkeypatch.setattr(highs_process, "start", lambda model, seconds, options: Never())
    rng = np.random.default_rng(11)
    net = random_network(rng, 12, 30, max_len=3, p_hard=0.2)
    res = ilp_map(net, max_seconds=2, presolve=False)
    assert res.stats["killed_groups"] >= 1
    assert not res.optimal
    assert res.score == pytest.approx(net.score(res.world), abs=1e-9)
