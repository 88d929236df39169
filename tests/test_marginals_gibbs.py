"""Gibbs sampling against exact enumeration; where Gibbs is stuck and MC-SAT is not."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.exact import exact_marginals
from markovlogic.infer.gibbs import HARD_WARNING, gelman_rubin, gibbs
from markovlogic.infer.mcsat import mcsat
from networks import random_components, random_network

TOL = 0.03


def test_gibbs_matches_exact_on_200_random_networks_without_hard_clauses():
    rng = np.random.default_rng(77)
    for i in range(200):
        n = int(rng.integers(1, 13))
        net = random_network(rng, n, int(rng.integers(1, 2 * n + 4)), p_hard=0.0, p_negative=0.25,
                             n_blocks=int(rng.integers(0, 3)), repeats=bool(rng.random() < 0.2))
        exact = exact_marginals(net).probabilities
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # no hard clauses: no warning
            r = gibbs(net, samples=1000, chains=4, seed=i)
        err = float(np.abs(r.probabilities - exact).max())
        assert err <= TOL, f"network {i}: max error {err:.4f}\ngibbs {r.probabilities.round(3)}\nexact {exact.round(3)}"


def test_gibbs_on_many_components():
    rng = np.random.default_rng(12)
    net = random_components(rng, [int(k) for k in rng.integers(2, 9, size=40)], p_hard=0.0, n_blocks=1)
    exact = exact_marginals(net).probabilities
    r = gibbs(net, samples=1000, seed=1)
    assert np.abs(r.probabilities - exact).max() <= TOL
    assert r.stats["rhat_max"] < 1.1


def _tied_pair() -> GroundNetwork:
    """a <=> b as two hard clauses; unit weights favour a = b = true
    (P = e^2.5 / (1 + e^2.5) = 0.924)."""
    return GroundNetwork.from_clauses(2, [
        (None, [(0, True), (1, False)]), (None, [(0, False), (1, True)]),
        (1.5, [(0, True)]), (1.0, [(1, True)]),
    ])


def test_gibbs_is_stuck_where_mcsat_is_right():
    net = _tied_pair()
    exact = exact_marginals(net).probabilities
    assert np.allclose(exact, 1 / (1 + np.exp(-2.5)))
    wrong_mode = np.zeros(2, dtype=bool)
    with pytest.warns(UserWarning, match="hard clauses"):
        g = gibbs(net, samples=2000, chains=1, seed=0, init=wrong_mode)
    assert np.all(g.probabilities == 0.0)        # never left a = b = false
    assert g.stats["warning"] == HARD_WARNING
    m = mcsat(net, samples=4000, seed=0, init=wrong_mode)
    assert np.abs(m.probabilities - exact).max() <= TOL


def test_rhat_flags_chains_that_disagree():
    # a soft but near-deterministic equivalence: valid for Gibbs, but each
    # chain stays in the mode it starts in
    net = GroundNetwork.from_clauses(2, [(15.0, [(0, True), (1, False)]), (15.0, [(0, False), (1, True)])])
    r = gibbs(net, samples=500, chains=8, seed=3)
    assert r.stats["rhat_max"] > 1.5
    ok = gibbs(GroundNetwork.from_clauses(2, [(0.5, [(0, True), (1, False)])]), samples=500, chains=8, seed=3)
    assert ok.stats["rhat_max"] < 1.1


def test_gelman_rubin():
    # identical chains -> within 1; constant chains at different values -> inf;
    # constant chains at one value -> 1
    n = 100
    same = np.array([[50, 0, 100], [50, 100, 100]])
    r = gelman_rubin(same, n)
    assert abs(r[0] - np.sqrt((n - 1) / n)) < 1e-12
    assert r[1] == np.inf and r[2] == 1.0
    assert np.isnan(gelman_rubin(np.array([[3, 4]]), n)).all()


def test_blocks_are_multivalued_variables():
    # a block of 3 whose members have different unit weights: P proportional to e^w
    net = GroundNetwork.from_clauses(3, [(1.0, [(0, True)]), (2.0, [(1, True)])], blocks=[[0, 1, 2]])
    r = gibbs(net, samples=3000, seed=0)
    w = np.exp([1.0, 2.0, 0.0])
    assert np.abs(r.probabilities - w / w.sum()).max() <= 0.02


def test_stats_and_samples():
    net = GroundNetwork.from_clauses(2, [(1.0, [(0, True), (1, True)])])
    seen = []
    r = gibbs(net, samples=300, burn_in=20, chains=3, seed=0, progress=seen.append)
    assert r.method == "gibbs" and r.samples == 900
    assert r.stats["sweeps_per_chain"] == 300 and r.stats["chains"] == 3 and r.stats["burn_in"] == 20
    assert seen[-1] == 300
    assert "warning" not in r.stats
    same = gibbs(net, samples=300, burn_in=20, chains=3, seed=0)
    assert np.array_equal(r.probabilities, same.probabilities)


def test_hard_weight_makes_hard_clauses_soft_and_silences_the_warning():
    net = _tied_pair()
    soft = GroundNetwork.from_clauses(2, [
        (3.0, [(0, True), (1, False)]), (3.0, [(0, False), (1, True)]), (1.5, [(0, True)]), (1.0, [(1, True)]),
    ])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = gibbs(net, samples=3000, seed=0, hard_weight=3.0)
    assert np.abs(r.probabilities - exact_marginals(soft).probabilities).max() <= TOL
