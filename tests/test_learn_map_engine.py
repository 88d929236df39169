"""The MAP engine of the perceptron and MIRA (``WarmMaxWalkSAT``): one
normalisation and one search kept across calls, weights rewritten in place;
every call must still find the optimum of the *current* weights."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic.errors import OptionError
from markovlogic.infer.exact import exact_map
from markovlogic.learn.engines import WarmMaxWalkSAT, map_factory

from networks import random_network


def _weight_sequence(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    """Parameter vectors as a learner produces them: all zero first, then
    changing values, some weights exactly zero, some changing sign."""
    out = [np.zeros(n)]
    w = rng.normal(0.0, 1.5, n)
    for _ in range(5):
        w = w + rng.normal(0.0, 1.0, n)
        v = np.round(w, 2)
        v[rng.random(n) < 0.2] = 0.0
        out.append(v)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_warm_maxwalksat_finds_optimum_as_weights_change(seed):
    rng = np.random.default_rng(seed)
    net = random_network(rng, n_atoms=int(rng.integers(4, 11)), n_clauses=int(rng.integers(4, 16)),
                         p_hard=0.15, p_negative=0.3, n_blocks=int(rng.integers(0, 3)))
    engine = WarmMaxWalkSAT(net, seed, max_flips=3000)
    for params in _weight_sequence(rng, net.n_params):
        world = engine.map_world(params)
        reweighted = net.with_params(params)
        best = exact_map(reweighted)
        assert reweighted.hard_violated(world) == 0
        assert engine.hard_violated == 0
        assert reweighted.score(world) == pytest.approx(best.score, abs=1e-9)
    assert engine.calls == 6


def test_warm_maxwalksat_starts_from_init_and_reports_violations():
    from markovlogic.ground.network import GroundNetwork

    # the hard clauses contradict each other: one stays violated whatever the world
    net = GroundNetwork.from_clauses(2, [(None, [(0, True)]), (None, [(0, False)]), (1.0, [(1, True)])])
    engine = WarmMaxWalkSAT(net, 0, max_flips=100, init=np.array([True, False]))
    world = engine.map_world(np.array([1.0]))
    assert world[1]
    assert engine.hard_violated == 1


def test_warm_maxwalksat_options():
    from markovlogic.ground.network import GroundNetwork

    net = GroundNetwork.from_clauses(1, [(1.0, [(0, True)])])
    with pytest.raises(OptionError):
        WarmMaxWalkSAT(net, max_flips=-1)
    with pytest.raises(OptionError):
        WarmMaxWalkSAT(net, noise=1.5)
    assert isinstance(map_factory("maxwalksat")(net, 0), WarmMaxWalkSAT)
