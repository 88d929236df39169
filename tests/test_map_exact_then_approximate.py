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
