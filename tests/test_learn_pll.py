"""Weighted pseudo-log-likelihood: value and gradient against brute force,
weight recovery from data sampled exactly from a known model."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from markovlogic.errors import LearningError
from markovlogic.ground.network import GroundNetwork, WeightParam
from markovlogic.learn.data import prepare
from markovlogic.learn.pll import learn_pll, pll_terms, pll_value_grad, pseudo_log_likelihood
from markovlogic.learn.synthetic import replicate, sample_exact


def brute_force_pll(net: GroundNetwork, world: np.ndarray) -> float:
    """Weighted PLL by enumerating each group's alternatives (blocks jointly)."""
    groups: list[list[int]] = [[a] for a in range(net.n_atoms) if net.atom_block[a] < 0 and net.is_query[a]]
    for b in range(net.n_blocks):
        atoms = net.block_atoms[net.block_start[b]:net.block_start[b + 1]].tolist()
        if net.is_query[atoms[0]]:
            groups.append(atoms)
    per_pred: dict[int, int] = {}
    for g in groups:
        per_pred[int(net.atom_pred[g[0]])] = per_pred.get(int(net.atom_pred[g[0]]), 0) + 1
    total = 0.0
    for g in groups:
        alternatives = []
        if len(g) == 1 and net.atom_block[g[0]] < 0:
            for v in (False, True):
                w = world.copy()
                w[g[0]] = v
                alternatives.append(w)
        else:
            for j in g:
                w = world.copy()
                w[g] = False
                w[j] = True
                alternatives.append(w)
        scores = np.array([net.score(w) if net.is_feasible(w) else -np.inf for w in alternatives])
        total += (net.score(world) - np.logaddexp.reduce(scores)) / per_pred[int(net.atom_pred[g[0]])]
    return total


@st.composite
def small_networks(draw):
    n = draw(st.integers(2, 7))
    n_clauses = draw(st.integers(1, 8))
    clauses = []
    for k in range(n_clauses):
        size = draw(st.integers(1, min(3, n)))
        atoms = draw(st.lists(st.integers(0, n - 1), min_size=size, max_size=size, unique=True))
        signs = draw(st.lists(st.booleans(), min_size=size, max_size=size))
        hard = draw(st.booleans()) and k == n_clauses - 1
        weight = None if hard else draw(st.floats(-2, 2))
        clauses.append((weight, list(zip(atoms, signs))))
    blocks = None
    if n >= 4 and draw(st.booleans()):
        blocks = [[n - 3, n - 2, n - 1]]
    preds = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=np.int32)
    if blocks:
        preds[n - 3:] = preds[n - 3]
    query = np.ones(n, dtype=bool)
    if draw(st.booleans()):
        query[0] = False
        if blocks and n - 3 == 0:
            query[0] = True
    return n, clauses, blocks, preds, query


@settings(max_examples=60, deadline=None)
@given(small_networks(), st.integers(0, 2**31 - 1))
def test_pll_value_and_gradient_match_brute_force(spec, seed):
    n, clauses, blocks, preds, query = spec
    base = GroundNetwork.from_clauses(n, clauses, blocks=blocks, atom_pred=preds, predicates=("p", "q"), is_query=query)
    worlds = [np.array(b, dtype=bool) for b in itertools.product([False, True], repeat=n)]
    feasible = [w for w in worlds if base.is_feasible(w)]
    if not feasible:
        return
    rng = np.random.default_rng(seed)
    world = feasible[rng.integers(len(feasible))]
    net = GroundNetwork.from_clauses(n, clauses, blocks=blocks, atom_pred=preds, predicates=("p", "q"),
                                     is_query=query, truth=world.astype(np.int8))
    terms = pll_terms(prepare([net]))
    params = rng.normal(size=net.n_params)
    value, grad = pll_value_grad(terms, params)
    assert value == pytest.approx(brute_force_pll(net.with_params(params), world), abs=1e-9)
    eps = 1e-6
    for i in range(net.n_params):
        e = np.zeros(net.n_params)
        e[i] = eps
        numeric = (pll_value_grad(terms, params + e)[0] - pll_value_grad(terms, params - e)[0]) / (2 * eps)
        assert grad[i] == pytest.approx(numeric, abs=1e-5)


TRUE_WEIGHTS = np.array([0.8, 1.5, -1.0, 0.6])


def chain_template() -> GroundNetwork:
    return GroundNetwork.from_clauses(3, [
        (TRUE_WEIGHTS[0], [(0, True)]),
        (TRUE_WEIGHTS[1], [(0, False), (1, True)]),
        (TRUE_WEIGHTS[2], [(1, True), (2, True)]),
        (TRUE_WEIGHTS[3], [(2, False), (0, False)]),
    ])


def test_pll_recovers_weights():
    """3000 independent worlds drawn exactly from the model: PLL's estimate is
    consistent; with this sample size each weight lands within 0.2."""
    template = chain_template()
    worlds = sample_exact(template, 3000, np.random.default_rng(0))
    train = replicate(template.with_params(np.zeros(4)), 3000, worlds)
    result = learn_pll([train])
    assert result.converged
    assert np.max(np.abs(result.params - TRUE_WEIGHTS)) < 0.2
    # the objective increased along the way and the trace ends at the result
    objectives = [r.objective for r in result.trace]
    assert objectives[-1] >= objectives[0]
    assert np.allclose(result.trace[-1].params, result.params)


def test_pll_blocks_recover_weights():
    """A 3-valued variable (exactly-one block) and a binary one: the block is
    conditioned on jointly."""
    true = np.array([1.0, -0.5, 1.2, 0.7])
    template = GroundNetwork.from_clauses(4, [
        (true[0], [(0, True)]),
        (true[1], [(1, True)]),
        (true[2], [(0, False), (3, True)]),
        (true[3], [(2, False), (3, False)]),
    ], blocks=[[0, 1, 2]], atom_pred=np.array([0, 0, 0, 1], dtype=np.int32), predicates=("color", "big"))
    worlds = sample_exact(template, 4000, np.random.default_rng(1))
    train = replicate(template.with_params(np.zeros(4)), 4000, worlds)
    result = learn_pll([train])
    assert np.max(np.abs(result.params - true)) < 0.2


def test_pll_multiple_databases_add_up():
    """Two databases are independent worlds: learning on both equals learning
    on one network holding both."""
    template = chain_template()
    worlds = sample_exact(template, 400, np.random.default_rng(2))
    zero = template.with_params(np.zeros(4))
    joint = learn_pll([replicate(zero, 400, worlds)])
    split = learn_pll([replicate(zero, 150, worlds[:150]), replicate(zero, 250, worlds[150:])])
    assert np.allclose(joint.params, split.params, atol=1e-5)


def test_pll_prior_pulls_toward_model_weights():
    template = chain_template()
    worlds = sample_exact(template, 50, np.random.default_rng(3))
    train = replicate(template.with_params(np.zeros(4)), 50, worlds)
    loose = learn_pll([train], prior_stddev=100.0)
    tight = learn_pll([train], prior_stddev=0.01)
    assert np.max(np.abs(tight.params)) < 0.01 < np.max(np.abs(loose.params))
    # a prior mean: the weight in the model
    means = np.array([3.0, 0.0, 0.0, 0.0])
    centred = learn_pll([replicate(template.with_params(means), 50, worlds)], prior_stddev=0.01)
    assert centred.params[0] == pytest.approx(3.0, abs=0.02)


def test_pll_fixed_weights_stay():
    template = chain_template()
    worlds = sample_exact(template, 500, np.random.default_rng(4))
    net = replicate(template.with_params(np.array([0.0, 2.5, 0.0, 0.0])), 500, worlds)
    info = list(net.param_info)
    info[1] = WeightParam(info[1].name, info[1].formula_index, fixed=True)
    from dataclasses import replace

    net = replace(net, param_info=tuple(info))
    result = learn_pll([net])
    assert result.params[1] == 2.5
    assert result.params[0] != 0.0


def test_pll_equal_predicate_weighting():
    """Each predicate's term is divided by its number of groups."""
    net = GroundNetwork.from_clauses(3, [(0.7, [(0, True)]), (0.7, [(1, True)]), (0.7, [(2, True)])],
                                     atom_pred=np.array([0, 1, 1], dtype=np.int32), predicates=("a", "b"),
                                     truth=np.array([1, 1, 0], dtype=np.int8))
    lp = lambda v: -np.log1p(np.exp(-v))  # noqa: E731  log sigmoid
    expected = lp(0.7) + (lp(0.7) + lp(-0.7)) / 2
    assert pseudo_log_likelihood([net]) == pytest.approx(expected)


def test_pll_rejects_unknown_truth():
    net = GroundNetwork.from_clauses(2, [(1.0, [(0, True), (1, True)])], truth=np.array([1, -1], dtype=np.int8))
    with pytest.raises(LearningError, match="unknown"):
        learn_pll([net])


def test_pll_callback_stops_and_traces():
    template = chain_template()
    worlds = sample_exact(template, 300, np.random.default_rng(8))
    train = replicate(template.with_params(np.zeros(4)), 300, worlds)
    result = learn_pll([train], callback=lambda row: row.iteration >= 2)
    assert len(result.trace) == 2 and not result.converged
    assert result.trace[1].objective > result.trace[0].objective


def test_pll_with_an_atom_twice_in_a_clause_matches_brute_force():
    """Flipping an atom that occurs twice in a clause (same or opposite signs) changes
    the clause once, by both literals (the compiled events visit the clause once)."""
    clauses = [(0.7, [(0, True), (0, True), (1, False)]), (-1.1, [(1, True), (1, False)]),
               (0.4, [(2, False), (0, True), (2, False)]), (1.3, [(0, False), (2, True)])]
    for bits in itertools.product([False, True], repeat=3):
        world = np.array(bits)
        net = GroundNetwork.from_clauses(3, clauses, truth=world.astype(np.int8))
        params = np.array([0.9, -0.4, 0.3, 1.7])
        value, _ = pll_value_grad(pll_terms(prepare([net])), params)
        assert value == pytest.approx(brute_force_pll(net.with_params(params), world), abs=1e-9)
