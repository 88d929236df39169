"""Discriminative learners (diagonal Newton, scaled conjugate gradient, voted
perceptron) and MIRA, with exact expectations and exact MAP, against data
drawn exactly from known models."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest

from markovlogic.errors import LearningError, OptionError
from markovlogic.ground.network import GroundNetwork, WeightParam
from markovlogic.learn import learn_dn, learn_mira, learn_perceptron, learn_pll, learn_scg
from markovlogic.learn.counts import world_counts
from markovlogic.learn.data import align_params, prepare
from markovlogic.learn.engines import ExactEngine, SampledEngine
from markovlogic.learn.synthetic import replicate, sample_exact, world_distribution

TRUE_WEIGHTS = np.array([0.8, 1.5, -1.0, 0.6])
COPIES = 3000


def chain_template(weights=TRUE_WEIGHTS) -> GroundNetwork:
    return GroundNetwork.from_clauses(3, [
        (weights[0], [(0, True)]),
        (weights[1], [(0, False), (1, True)]),
        (weights[2], [(1, True), (2, True)]),
        (weights[3], [(2, False), (0, False)]),
    ])


@pytest.fixture(scope="module")
def data():
    template = chain_template()
    zero = template.with_params(np.zeros(4))
    train = replicate(zero, COPIES, sample_exact(template, COPIES, np.random.default_rng(0)))
    test = replicate(zero, COPIES, sample_exact(template, COPIES, np.random.default_rng(1)))
    return train, test


def heldout_cll(test: GroundNetwork, params: np.ndarray) -> float:
    """Exact log P(test world) per copy."""
    return ExactEngine(test).log_likelihood(params, test.truth.astype(bool)) / COPIES


# ---------------------------------------------------------------- the exact engine


def test_exact_moments_match_enumeration():
    """Mean, variance, Cov @ d and marginals of the feature counts against a
    direct enumeration of the whole network (two components, one with a
    block and a hard clause, plus a repeated copy)."""
    net = GroundNetwork.from_clauses(7, [
        (0.5, [(0, True), (1, False)]),
        (-1.2, [(1, True), (2, True)]),
        (0.3, [(3, True)]),
        (None, [(3, False), (4, False)]),
        (0.9, [(4, True), (5, True)]),
        (0.4, [(6, True)]),
    ], blocks=[[4, 5, 6]])
    params = np.array([0.5, -1.2, 0.3, 0.9, 0.4])
    bits, prob = world_distribution(net)
    counts = world_counts(net, bits)
    mean = prob @ counts
    cov = (counts - mean).T @ (prob[:, None] * (counts - mean))
    moments = ExactEngine(net).moments(params)
    assert np.allclose(moments.mean, mean)
    assert np.allclose(moments.var, np.diag(cov))
    d = np.array([0.3, -1.0, 2.0, 0.5, -0.7])
    assert np.allclose(moments.cov_dot(d), cov @ d)
    assert moments.quad(d) == pytest.approx(d @ cov @ d)
    assert np.allclose(moments.marginals[0], prob @ bits)
    # replicated: identical components are enumerated once, counted 5 times
    big = ExactEngine(replicate(net, 5))
    assert len(big.classes) == 2
    m5 = big.moments(params)
    assert np.allclose(m5.mean, 5 * mean)
    assert np.allclose(m5.cov_dot(d), 5 * cov @ d)
    assert m5.log_partition == pytest.approx(5 * moments.log_partition)


def test_exact_map_world():
    net = chain_template()
    bits, prob = world_distribution(net)
    assert np.array_equal(ExactEngine(net).map_world(net.params), bits[np.argmax(prob)])


# ---------------------------------------------------------------- weight recovery


@pytest.mark.parametrize("learner", [learn_dn, learn_scg])
def test_second_order_recovers_weights(data, learner):
    """Maximum likelihood from 3000 exact samples: each weight within 0.2 of
    the truth (without a prior, exact expectations)."""
    train, _ = data
    result = learner([train], inference="exact", prior_stddev=None, iterations=200, tolerance=1e-8, init="model")
    assert result.converged
    assert np.max(np.abs(result.params - TRUE_WEIGHTS)) < 0.2
    # dn and scg reach the same optimum, from zero or from the PLL optimum
    other = (learn_scg if learner is learn_dn else learn_dn)([train], inference="exact", prior_stddev=None,
                                                             iterations=200, tolerance=1e-8, init="pll")
    assert np.allclose(result.params, other.params, atol=1e-3)
    with pytest.raises(OptionError, match="unknown init"):
        learner([train], inference="exact", init="zero")


def test_second_order_matches_generative_optimum(data):
    """Without evidence, CLL is the likelihood: its optimum's gradient vanishes."""
    train, _ = data
    result = learn_scg([train], inference="exact", prior_stddev=None, iterations=200, tolerance=1e-10)
    moments = ExactEngine(train).moments(result.params)
    n_data = world_counts(train, train.truth.astype(bool))
    assert np.max(np.abs(n_data - moments.mean)) / COPIES < 1e-3


@pytest.mark.parametrize("name", ["pll", "dn", "scg", "perceptron", "mira"])
def test_every_method_improves_heldout_cll(data, name):
    train, test = data
    if name == "pll":
        result = learn_pll([train])
    elif name in ("dn", "scg"):
        learner = learn_dn if name == "dn" else learn_scg
        result = learner([train], inference="exact", iterations=50)
    elif name == "perceptron":
        result = learn_perceptron([train], map_method="exact", iterations=50)
    else:
        result = learn_mira([train], map_method="exact", iterations=20)
    assert heldout_cll(test, result.params) > heldout_cll(test, np.zeros(4)) + 0.01


def test_sampled_engine_with_exact_sampler(data):
    """The sampled-moments path (warm start, covariance from samples) with a
    sampler that draws exactly: dn lands near the exact optimum."""
    train, _ = data
    template = chain_template()

    def exact_sampler(net, n, init, seed, burn_in):
        rng = np.random.default_rng(seed)
        bits, prob = world_distribution(template.with_params(net.params))
        idx = rng.choice(len(prob), size=(n, COPIES), p=prob)
        return bits[idx].reshape(n, -1)

    result = learn_dn([train], inference=lambda net, seed: SampledEngine(net, exact_sampler, samples=20, seed=seed),
                      prior_stddev=None, iterations=40)
    exact = learn_dn([train], inference="exact", prior_stddev=None, iterations=200, tolerance=1e-8)
    assert np.max(np.abs(result.params - exact.params)) < 0.15


# ---------------------------------------------------------------- fixed, hard, errors


def _with_fixed(net: GroundNetwork, index: int) -> GroundNetwork:
    info = list(net.param_info)
    info[index] = WeightParam(info[index].name, info[index].formula_index, fixed=True)
    return replace(net, param_info=tuple(info))


@pytest.mark.parametrize("name", ["dn", "scg", "perceptron", "mira"])
def test_fixed_weights_and_hard_clauses_stay(name):
    template = GroundNetwork.from_clauses(3, [
        (0.8, [(0, True)]),
        (1.5, [(0, False), (1, True)]),
        (None, [(1, False), (2, True)]),
        (-0.4, [(2, True)]),
    ])
    worlds = sample_exact(template, 500, np.random.default_rng(6))
    net = _with_fixed(replicate(template.with_params(np.array([0.0, 0.0, 2.0])), 500, worlds), 2)
    if name in ("dn", "scg"):
        result = (learn_dn if name == "dn" else learn_scg)([net], inference="exact", iterations=30)
    elif name == "perceptron":
        result = learn_perceptron([net], map_method="exact", iterations=20)
    else:
        result = learn_mira([net], map_method="exact", iterations=10)
    assert result.params[2] == 2.0
    assert np.any(result.params[:2] != 0.0)
    assert len(result.params) == 3   # the hard clause carries no parameter


def test_unknown_truth_rejected():
    net = GroundNetwork.from_clauses(2, [(1.0, [(0, True), (1, True)])], truth=np.array([1, -1], dtype=np.int8))
    for learner in (learn_dn, learn_scg):
        with pytest.raises(LearningError, match=r"1 atom\(s\) unknown .*A1"):
            learner([net], inference="exact")
    with pytest.raises(LearningError, match="unknown"):
        learn_perceptron([net], map_method="exact")
    with pytest.raises(LearningError, match="unknown"):
        learn_mira([net], map_method="exact")
    with pytest.raises(LearningError, match="no training truth"):
        learn_dn([GroundNetwork.from_clauses(1, [(1.0, [(0, True)])])], inference="exact")


def test_training_world_violating_hard_clause_rejected():
    net = GroundNetwork.from_clauses(2, [(None, [(0, True), (1, True)]), (1.0, [(0, True)])],
                                     truth=np.array([0, 0], dtype=np.int8))
    with pytest.raises(LearningError, match="violates 1 ground hard clause"):
        learn_dn([net], inference="exact")
    blocked = GroundNetwork.from_clauses(3, [(1.0, [(0, True)])], blocks=[[0, 1, 2]],
                                         truth=np.array([1, 1, 0], dtype=np.int8))
    with pytest.raises(LearningError, match="2 true atom"):
        learn_pll([blocked])


def test_multiple_databases_add_up(data):
    """Independent databases: learning on two networks equals learning on one
    network holding both worlds (exact expectations are deterministic)."""
    template = chain_template()
    worlds = sample_exact(template, 300, np.random.default_rng(7))
    zero = template.with_params(np.zeros(4))
    joint = learn_scg([replicate(zero, 300, worlds)], inference="exact", iterations=100, tolerance=1e-9)
    split = learn_scg([replicate(zero, 100, worlds[:100]), replicate(zero, 200, worlds[100:])],
                      inference="exact", iterations=100, tolerance=1e-9)
    assert np.allclose(joint.params, split.params, atol=1e-4)


def test_align_params_unions_tables():
    """Networks with different parameter tables ('+' constants seen in one
    database only) are aligned by parameter name."""
    a = GroundNetwork.from_clauses(1, [(0.5, [(0, True)])], truth=np.array([1], dtype=np.int8))
    b = GroundNetwork.from_clauses(2, [(0.1, [(0, True)]), (0.7, [(1, False)])], truth=np.array([1, 0], dtype=np.int8))
    b = replace(b, param_info=(WeightParam("p(B)", 0), WeightParam("p(A)", 0)))
    a = replace(a, param_info=(WeightParam("p(A)", 0),))
    aligned = align_params([a, b])
    assert [p.name for p in aligned[0].param_info] == ["p(A)", "p(B)"]
    assert aligned[1].param_index.tolist() == [1, 0]
    assert aligned[0].params.tolist() == [0.5, 0.1]
    ts = prepare([a, b])
    assert ts.data_counts.tolist() == [2.0, 1.0]   # p(A) true in both worlds, p(B) in b


def test_callback_stops_learning(data):
    train, _ = data
    seen = []
    result = learn_dn([train], inference="exact", iterations=50, callback=lambda row: seen.append(row) or len(seen) >= 3)
    assert len(result.trace) == 3 and len(seen) == 3


def test_metrics():
    from markovlogic.learn.metrics import auc_pr, average_cll

    assert auc_pr(np.array([0.9, 0.8, 0.3, 0.1]), np.array([1, 1, 0, 0])) == 1.0
    # ranks: + - + -> precision 1 at the first positive, 2/3 at the second
    assert auc_pr(np.array([0.9, 0.8, 0.7, 0.1]), np.array([1, 0, 1, 0])) == pytest.approx((1 + 2 / 3) / 2)
    # a tie between a positive and a negative counts as one threshold
    assert auc_pr(np.array([0.5, 0.5]), np.array([1, 0])) == pytest.approx(0.5)
    assert auc_pr(np.array([0.5]), np.array([0])) == 0.0
    assert average_cll(np.array([1.0, 0.25]), np.array([1, 0])) == pytest.approx((np.log(1 - 1e-4) + np.log(0.75)) / 2)


@pytest.mark.parametrize("learner", [learn_dn, learn_scg])
def test_learning_through_mcsat(learner):
    """Expectations from MC-SAT samples (20 per iteration, warm-started): the
    weights land within 0.2 of the exact-expectation optimum on the same data
    (zero weights are 1.5 away)."""
    template = chain_template()
    copies = 1000
    train = replicate(template.with_params(np.zeros(4)), copies,
                      sample_exact(template, copies, np.random.default_rng(11)))
    exact = learn_dn([train], inference="exact", prior_stddev=None, iterations=200, tolerance=1e-8)
    sampled = learner([train], inference="mcsat", prior_stddev=None, iterations=60, samples=20, seed=3)
    assert np.max(np.abs(sampled.params - exact.params)) < 0.2


def test_persistent_mcsat_chain_follows_weight_changes():
    """The MC-SAT chain kept across iterations samples the distribution of
    the current weights after they change."""
    from markovlogic.infer.exact import exact_marginals
    from markovlogic.learn.engines import PersistentMCSAT

    net = GroundNetwork.from_clauses(4, [
        (0.0, [(0, True), (1, False)]),
        (0.0, [(1, True), (2, True)]),
        (0.0, [(3, True)]),
        (None, [(0, False), (3, False)]),
    ])
    chain = PersistentMCSAT(net, seed=5)
    for params in (np.array([1.5, -0.7, 0.9]), np.array([-1.0, 2.0, 0.0])):
        current = net.with_params(params)
        worlds = chain.sample(current, 3000, 50)
        assert np.allclose(worlds.mean(axis=0), exact_marginals(current).probabilities, atol=0.04)


@pytest.mark.parametrize("kind", ["mcsat", "function"])
def test_sampled_engine_restores_chain_world(kind):
    """A rejected step is taken back in the chain too: after ``restore`` the
    next samples continue from the saved world, not from where the rejected
    weights drove the chain."""
    from markovlogic.learn.engines import FunctionChain, PersistentMCSAT

    net = GroundNetwork.from_clauses(6, [(0.0, [(a, True)]) for a in range(6)])
    init = np.zeros(6, dtype=bool)
    if kind == "mcsat":
        chain = PersistentMCSAT(net, seed=2, metropolis_steps=0, init=init)
    else:
        starts = []

        def sampler(n, k, start, seed, burn_in):
            starts.append(None if start is None else start.copy())
            return np.ones((k, n.n_atoms), dtype=bool) if seed % 2 == 0 else np.zeros((k, n.n_atoms), dtype=bool)

        chain = FunctionChain(sampler, seed=0)
    engine = SampledEngine(net, chain, samples=2, burn_in=0)
    engine.moments(np.zeros(6))
    saved = engine.save()
    engine.moments(np.full(6, 8.0))          # drives the chain to all-true
    engine.restore(saved)
    assert np.array_equal(engine.save(), saved)
    if kind == "function":
        engine.moments(np.zeros(6))
        assert np.array_equal(starts[-1], saved)


def test_feature_counter_cache_lets_networks_go():
    """The per-network counter cache must not keep its networks alive (the
    UW-CSE benchmark grew to 7 GB over folds when it did)."""
    import gc
    import weakref

    from markovlogic.learn.counts import _COUNTERS, FeatureCounter

    net = chain_template()
    FeatureCounter.of(net)(np.zeros(3, dtype=bool))
    ref = weakref.ref(net)
    del net
    gc.collect()
    assert ref() is None
    assert all(k is not None for k in _COUNTERS.keys())
