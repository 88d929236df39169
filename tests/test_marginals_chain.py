"""The public MC-SAT chain (``infer.mcsat.MCSATChain``): new weights change
the distribution it samples, checked against exact marginals."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from markovlogic.errors import InferenceError, OptionError
from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.exact import exact_marginals
from markovlogic.infer.mcsat import MCSATChain, mcsat
from networks import random_network

TOL = 0.04


def _reweighted(net: GroundNetwork, rng: np.random.Generator, scale: float, p_zero: float = 0.2) -> np.ndarray:
    """New soft weights: fresh magnitudes, signs flipped at random, some zero."""
    w = rng.uniform(-scale, scale, size=net.n_clauses).round(2)
    w[rng.random(net.n_clauses) < p_zero] = 0.0
    w[net.is_hard] = 0.0
    return w


def _score_is_current(chain: MCSATChain) -> bool:
    sat = chain.prep.sat
    st = chain._state
    return bool(np.isclose(st.fst[0], float(sat.weight @ (st.count > 0))))


@pytest.mark.parametrize("metropolis_steps, scale", [(None, 3.0), (0, 1.0)])
def test_set_weights_moves_the_stationary_distribution(metropolis_steps, scale):
    """Built with one set of weights (all zero: normalisation would drop every
    soft clause), then given two others in turn: each time the samples match
    the exact marginals of the network with the new weights. Plain MC-SAT
    (no Metropolis steps, as in learning) mixes slowly under strong weights
    whatever the start (a fresh chain is off by 0.10 on these networks with
    weights up to 3), hence the weaker weights there."""
    rng = np.random.default_rng(7)
    worst = 0.0
    for i in range(25):
        n = int(rng.integers(2, 11))
        net = random_network(rng, n, int(rng.integers(2, 2 * n + 3)), p_hard=0.15, p_negative=0.3,
                             n_blocks=int(rng.integers(0, 3)), repeats=bool(rng.random() < 0.2))
        start = replace(net, weight=np.zeros(net.n_clauses))
        chain = MCSATChain(start, seed=i, metropolis_steps=metropolis_steps)
        for _ in range(2):
            w = _reweighted(net, rng, scale)
            target = replace(net, weight=w)
            chain.set_weights(target.weight)
            assert _score_is_current(chain)
            worlds = chain.sample(4000, burn_in=50)
            assert _score_is_current(chain)
            exact = exact_marginals(target).probabilities
            worst = max(worst, float(np.max(np.abs(worlds.mean(axis=0) - exact))))
    assert worst < TOL, worst


def test_set_weights_with_hard_weight_keeps_hard_clauses_soft():
    """With ``hard_weight`` the hard clauses keep that weight whatever
    ``set_weights`` says about their entries."""
    net = GroundNetwork.from_clauses(3, [
        (1.0, [(0, True)]),
        (None, [(0, False), (1, True)]),
        (-0.5, [(2, True), (1, False)]),
    ])
    chain = MCSATChain(net, seed=1, hard_weight=2.0)
    new = np.array([-1.0, 123.0, 1.5])
    chain.set_weights(new)
    target = GroundNetwork.from_clauses(3, [
        (-1.0, [(0, True)]),
        (2.0, [(0, False), (1, True)]),
        (1.5, [(2, True), (1, False)]),
    ])
    worlds = chain.sample(6000, burn_in=50)
    assert np.allclose(worlds.mean(axis=0), exact_marginals(target).probabilities, atol=TOL)


def test_set_weights_checks_its_argument():
    net = GroundNetwork.from_clauses(2, [(1.0, [(0, True), (1, True)])])
    chain = MCSATChain(net)
    with pytest.raises(InferenceError, match="expected 1 clause weights"):
        chain.set_weights(np.zeros(2))
    with pytest.raises(InferenceError, match="not finite"):
        chain.set_weights(np.array([np.inf]))
    with pytest.raises(OptionError):
        chain.sample(0)
    with pytest.raises(OptionError):
        MCSATChain(net, walksat_prob=2.0)


def test_state_and_reset_respect_hard_clauses():
    """The chain starts at ``init`` when it is feasible, is repaired by
    WalkSAT when not, and every sampled world satisfies the hard clauses."""
    net = GroundNetwork.from_clauses(3, [
        (None, [(0, False), (1, False)]),
        (0.7, [(2, True)]),
        (0.2, [(0, True)]),
    ], blocks=[[1, 2]])
    chain = MCSATChain(net, seed=3, init=np.array([True, False, True]))
    assert chain.state.tolist() == [True, False, True]
    chain.state = np.array([True, True, False])           # violates the hard clause
    world = chain.state
    assert not (world[0] and world[1]) and world[1] + world[2] == 1
    chain.reset(np.array([False, True, False]))
    assert chain.state.tolist() == [False, True, False]
    worlds = chain.sample(500)
    assert not (worlds[:, 0] & worlds[:, 1]).any()
    assert (worlds[:, 1] ^ worlds[:, 2]).all()
    assert np.array_equal(chain.state, worlds[-1])


def test_chain_continues_between_calls():
    """Two calls of n samples are the same draws as one call of 2n."""
    rng = np.random.default_rng(3)
    net = random_network(rng, 8, 14, p_hard=0.1, n_blocks=1)
    a = MCSATChain(net, seed=4)
    b = MCSATChain(net, seed=4)
    first = np.concatenate([a.sample(30), a.sample(30)])
    second = b.sample(60)
    active = a.prep.active
    assert np.array_equal(first[:, active], second[:, active])


def test_mcsat_is_the_chain():
    """``mcsat()`` runs the public chain: same seed, same estimate."""
    rng = np.random.default_rng(5)
    net = random_network(rng, 9, 16, p_hard=0.1, n_blocks=1)
    got = mcsat(net, samples=300, burn_in=20, seed=9).probabilities
    chain = MCSATChain(net, seed=9)
    chain.run(20)
    tally = np.zeros(net.n_atoms)
    chain.run(300, tally=tally)
    assert np.allclose(got, chain.marginals(tally, 300))
