"""The default MAP method on a large model under a time limit (infer/plan.py):
the exact ILP for part of the limit, then the approximate path when the ILP
proves nothing; the better world with the better proven bound."""

from __future__ import annotations

import numpy as np

from markovlogic.infer import plan
from markovlogic.infer.exact import exact_map
from markovlogic.infer.results import MapResult

from networks import random_network


def _unproven(net, world) -> MapResult:
    score = net.score(world)
    return MapResult(world=world, score=score, cost=net.cost(world), hard_violated=net.hard_violated(world),
                     method="ilp", seconds=0.0, optimal=False, bound=score + 1e6,
                     gap=1e6 / max(1.0, abs(score)), stats={"path": "ilp"})


def test_an_unproven_exact_answer_is_followed_by_the_approximate_path():
    net = random_network(np.random.default_rng(3), 12, 30, p_hard=0.0)
    exact = exact_map(net)
    limits = []

    def poor(limit):
        limits.append(limit)
        world = ~exact.world            # a poor world with a useless bound
        return _unproven(net, world)

    res = plan.exact_then_approximate(net, 4.0, poor)
    assert limits == [plan.EXACT_SHARE * 4.0]
    assert res.stats["path"].startswith("ilp+lp")
    assert res.stats["exact_cost"] == net.cost(~exact.world)
    assert res.cost <= net.cost(~exact.world)
    assert np.isclose(res.cost, net.cost(res.world))
    # the bound is the better (smaller) of the two and still a bound of the optimum
    assert res.bound is not None and res.bound >= exact.score - 1e-9 and res.bound < net.score(~exact.world) + 1e6
    assert res.gap == max(0.0, res.bound - res.score) / max(1.0, abs(res.score))


def test_a_proven_exact_answer_is_returned_as_it_is():
    net = random_network(np.random.default_rng(5), 10, 25, p_hard=0.0)
    exact = exact_map(net)

    def proven(limit):
        return MapResult(world=exact.world, score=exact.score, cost=exact.cost, hard_violated=0, method="ilp",
                         seconds=0.0, optimal=True, bound=exact.score, gap=0.0, stats={})

    res = plan.exact_then_approximate(net, 20.0, proven)
    assert res.optimal and res.stats["path"] == "ilp" and res.cost == exact.cost


def test_only_large_models_share_the_limit():
    net = random_network(np.random.default_rng(5), 10, 25, p_hard=0.0)
    assert plan.exact_share(net, None) is None
    assert plan.exact_share(net, 60.0) is None          # setup estimate far below a tenth of the limit
    tiny_limit = plan.exact_setup_seconds(net) / plan.EXACT_FULL_SHARE / 2
    assert plan.exact_share(net, tiny_limit) == plan.EXACT_SHARE


def test_the_default_method_takes_the_shared_limit_path_on_a_large_model(monkeypatch):
    """Through the public API: a model counted as large (monkeypatched share) gets the
    exact ILP for half the limit; an unproven answer is followed by the approximate path."""
    from markovlogic.model import MLN, Database

    mln = MLN.from_string("Smokes(person)\nCancer(person)\n1.5 Smokes(x) => Cancer(x)\n0.8 Smokes(x)\n")
    db = Database.from_string("!Cancer(Ann)\n", mln=mln)
    monkeypatch.setattr(plan, "EXACT_FULL_SHARE", 0.0)
    limits = []
    real = plan.exact_then_approximate

    def spy(net, seconds, solve_exact, seed=0, parallel=None):
        def unproven(limit):
            limits.append(limit)
            res = solve_exact(limit)
            res.optimal, res.bound, res.gap = False, res.score + 100.0, 100.0 / max(1.0, abs(res.score))
            return res
        return real(net, seconds, unproven, seed, parallel)

    monkeypatch.setattr(plan, "exact_then_approximate", spy)
    answer = mln.map(db, max_seconds=8.0)
    assert len(limits) == 1 and 0 < limits[0] <= plan.EXACT_SHARE * 8.0
    assert answer.stats["path"].startswith("ilp+lp")
    assert answer.optimal            # the LP's bound proves the world the two paths agree on
