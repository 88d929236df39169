"""Pooled chains that settle in different modes (issue 30): the stats say how
far the chains' marginals are apart (``chains_disagree``) and a warning
names the atoms they disagree on; chains in one mode stay quiet."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.exact import exact_marginals
from markovlogic.parallel.marginals import DISAGREE_SPREAD, chain_disagreement, solve_marginals_parallel
from markovlogic.parallel.options import ParallelOptions

TWO = ParallelOptions(threads=2, min_clauses=0)


def test_disagreement_of_given_chain_marginals():
    net = GroundNetwork.from_clauses(4, [(1.0, [(a, True)]) for a in range(4)])
    agree = [np.array([0.20, 0.50, 0.90, 0.01]), np.array([0.22, 0.47, 0.91, 0.02])]
    d = chain_disagreement(net, agree, np.array([1000, 1000]))
    assert d["atoms"] == 0 and d["spread"] == pytest.approx(0.03) and d["examples"] == ""
    modes = [np.array([0.02, 0.50, 0.95, 0.01]), np.array([0.95, 0.52, 0.03, 0.01])]
    d = chain_disagreement(net, modes, np.array([500, 500]))
    assert d["atoms"] == 2 and d["spread"] == pytest.approx(0.93)
    assert d["examples"].startswith(f"{net.atom_name(0)} 0.02/0.95, {net.atom_name(2)} 0.03/0.95")
    # a spread within the noise of few samples is not a disagreement
    d = chain_disagreement(net, [np.array([0.3] * 4), np.array([0.55] * 4)], np.array([20, 20]))
    assert d["atoms"] == 0 and d["spread"] > DISAGREE_SPREAD
    assert chain_disagreement(net, agree[:1], np.array([10]))["atoms"] == 0


def _ferromagnet(n: int = 10, w: float = 3.0, field: float = 0.2) -> GroundNetwork:
    """Every pair tied by soft equivalences: two modes, all true (favoured by
    ``field``) and all false."""
    clauses = [(field, [(a, True)]) for a in range(n)]
    for a in range(n):
        for b in range(a + 1, n):
            clauses += [(w, [(a, False), (b, True)]), (w, [(a, True), (b, False)])]
    return GroundNetwork.from_clauses(n, clauses)


@pytest.mark.parametrize("seed", [0, 1])
def test_chains_in_different_modes_say_so(seed):
    """Without cluster moves MC-SAT's chains stay in their mode; chain 0
    starts in the unfavoured one, chain 1 from a random world: the pooled .5
    is an average of modes, and the stats and a warning name the atoms."""
    net = _ferromagnet()
    exact = exact_marginals(net).probabilities
    opts = {"seed": seed, "samples": 400, "init": np.zeros(net.n_atoms, dtype=bool), "cluster_moves": False}
    with pytest.warns(UserWarning, match="pooled chains disagree on 10 atom") as caught:
        r = solve_marginals_parallel(net, "mcsat", opts, TWO)
    assert np.abs(r.probabilities - exact).max() > 0.3          # the average of two modes
    d = r.stats["chains_disagree"]
    assert d["atoms"] == 10 and d["spread"] > 0.99
    assert d["examples"].startswith(f"{net.atom_name(0)} 0.00/1.00")
    assert net.atom_name(0) in str(caught[0].message) and r.stats["warning"] == str(caught[0].message)


@pytest.mark.parametrize("seed", [0, 2])
def test_chains_that_mix_are_right_and_quiet(seed):
    """With cluster moves (the default) the chains cross between the modes."""
    net = _ferromagnet()
    exact = exact_marginals(net).probabilities
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = solve_marginals_parallel(net, "mcsat", {"seed": seed, "samples": 400,
                                                    "init": np.zeros(net.n_atoms, dtype=bool)}, TWO)
    assert np.abs(r.probabilities - exact).max() <= 0.05
    assert r.stats["chains_disagree"]["atoms"] == 0


def test_independent_atoms_do_not_disagree():
    rng = np.random.default_rng(3)
    net = GroundNetwork.from_clauses(30, [(float(rng.uniform(-2, 2)), [(a, True)]) for a in range(30)]
                                     + [(0.01, [(a, True), (a + 1, True)]) for a in range(29)])   # one component
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = solve_marginals_parallel(net, "mcsat", {"seed": 0, "samples": 500}, TWO)
    assert r.stats["chains_disagree"]["atoms"] == 0 and r.stats["split"] == "chains"
