"""The split expectation engine: independent atoms touched only by unit
clauses get exact moments (vectorised), the rest is sampled. Checked against
enumeration of the whole network, and through dn learning."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic.errors import LearningError
from markovlogic.ground.network import GroundNetwork
from markovlogic.learn import learn_dn
from markovlogic.learn.counts import world_counts
from markovlogic.learn.engines import (ExactEngine, SampledEngine, SplitEngine, UnitAtomsEngine, expectation_factory,
                                       restrict, unit_atoms)
from markovlogic.learn.synthetic import replicate, sample_exact, world_distribution


def mixed_net(truth=None) -> GroundNetwork:
    """A 3-atom chain with a block-free component, and independent atoms 3..7:
    two soft units on one atom (opposite signs), a shared parameter, a hard
    unit, a unit clause with a repeated literal."""
    net = GroundNetwork.from_clauses(8, [
        (0.7, [(0, True), (1, False)]),
        (-0.4, [(1, True), (2, True)]),
        (1.1, [(3, True)]),
        (0.6, [(3, False)]),
        (-0.8, [(4, True)]),
        (None, [(5, True)]),
        (0.5, [(6, False), (6, False)]),
        (None, [(7, False)]),
        (0.2, [(7, True)]),
    ], truth=truth)
    # the unit on atom 4 shares the first parameter (as a pair prior shares one weight)
    index = net.param_index.copy()
    index[4] = 0                      # (parameter 4 is then unused)
    return GroundNetwork.from_arrays(
        n_atoms=8, clause_start=net.clause_start, lit_atom=net.lit_atom, lit_positive=net.lit_positive,
        is_hard=net.is_hard, param_start=net.param_start, param_index=index, param_coef=net.param_coef,
        params=net.params, param_info=net.param_info, truth=truth)


def test_unit_atoms_found():
    net = mixed_net()
    assert unit_atoms(net).tolist() == [3, 4, 5, 6, 7]
    blocked = GroundNetwork.from_clauses(2, [(0.3, [(0, True)])], blocks=[[0, 1]])
    assert unit_atoms(blocked).tolist() == []


def test_split_moments_equal_enumeration():
    net = mixed_net()
    params = np.array([0.7, -0.4, 1.1, 0.6, 0.0, 0.5, 0.2])
    bits, prob = world_distribution(net.with_params(params))
    counts = world_counts(net, bits)
    mean = prob @ counts
    cov = (counts - mean).T @ (prob[:, None] * (counts - mean))
    split = SplitEngine(net, unit_atoms(net), lambda sub: ExactEngine(sub))
    m = split.moments(params)
    assert np.allclose(m.mean, mean)
    assert np.allclose(m.var, np.diag(cov))
    rng = np.random.default_rng(3)
    for _ in range(3):
        d = rng.normal(size=net.n_params)
        assert np.allclose(m.cov_dot(d), cov @ d)
        assert m.quad(d) == pytest.approx(d @ cov @ d)
    assert np.allclose(m.marginals[0], prob @ bits)
    assert m.marginals[0][5] == 1.0 and m.marginals[0][7] == 0.0       # fixed by hard units


def test_restrict_keeps_components_and_params():
    net = mixed_net(truth=np.array([1, 0, 1, 1, 0, 1, 0, 0], dtype=np.int8))
    sub = restrict(net, np.array([0, 1, 2]))
    assert sub.n_atoms == 3 and sub.n_clauses == 2 and sub.n_params == net.n_params
    assert sub.truth.tolist() == [1, 0, 1] and sub.n_components == 1
    world = np.array([True, False, True, True, False, True, False, False])
    assert np.allclose(world_counts(sub, world[:3]) + world_counts(restrict(net, np.arange(3, 8)), world[3:]),
                       world_counts(net, world))


def test_contradictory_hard_units():
    net = GroundNetwork.from_clauses(2, [(None, [(0, True)]), (None, [(0, False)]), (1.0, [(1, True)])])
    with pytest.raises(LearningError, match="contradict"):
        UnitAtomsEngine(net, np.array([0]))


def test_mcsat_factory_splits_and_learns():
    """dn with MC-SAT on many copies of a model with a chain and independent
    unit atoms: the factory splits the network; the learned weights are those
    of exact expectations, within sampling noise."""
    template = mixed_net()
    true = np.array([0.7, -0.4, 1.1, 0.6, 0.0, 0.5, 0.2])
    template = template.with_params(true)
    copies = 400
    zero = template.with_params(np.zeros(template.n_params))
    train = replicate(zero, copies, sample_exact(template, copies, np.random.default_rng(0)))
    engine = expectation_factory("mcsat", samples=5, burn_in=5)(train, 0)
    assert isinstance(engine, SplitEngine) and isinstance(engine.rest, SampledEngine)
    assert engine.rest.net.n_atoms == 3 * copies
    engine.samples = 7
    assert engine.rest.samples == 7
    exact = learn_dn([train], inference="exact", iterations=60)
    sampled = learn_dn([train], inference="mcsat", iterations=60, seed=1, average=True)
    assert np.max(np.abs(exact.params - sampled.params)) < 0.35
    # the parameters that only unit atoms touch (2, 3: atom 3; 5: atom 6; 6: atom 7 is fixed) come out
    # the same, their moments being exact in both
    assert exact.params[2] - exact.params[3] == pytest.approx(sampled.params[2] - sampled.params[3], abs=0.05)
    assert exact.params[5] == pytest.approx(sampled.params[5], abs=0.05)
