"""Session 3 additions to discriminative learning: the growing sample schedule
of dn/scg, the perceptron with sampled (or exact) expectations instead of the
MAP world, and ``learn_model(networks=...)``; checked against exact
enumeration on small networks."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic.errors import OptionError
from markovlogic.ground.network import GroundNetwork
from markovlogic.learn import learn_dn, learn_perceptron, learn_scg
from markovlogic.learn.api import learn_model
from markovlogic.learn.counts import world_counts
from markovlogic.learn.discriminative import sample_schedule
from markovlogic.learn.engines import ExactEngine
from markovlogic.learn.synthetic import replicate, sample_exact, world_distribution
from markovlogic.model import MLN, Database

WEIGHTS = np.array([0.8, 1.5, -1.0, 0.6])


def template(weights=WEIGHTS) -> GroundNetwork:
    return GroundNetwork.from_clauses(3, [
        (weights[0], [(0, True)]),
        (weights[1], [(0, False), (1, True)]),
        (weights[2], [(1, True), (2, True)]),
        (weights[3], [(2, False), (0, False)]),
    ])


def training(copies: int, seed: int) -> GroundNetwork:
    t = template()
    return replicate(t.with_params(np.zeros(4)), copies, sample_exact(t, copies, np.random.default_rng(seed)))


def exact_gradient(net: GroundNetwork, params: np.ndarray, prior_stddev: float | None) -> tuple[np.ndarray, np.ndarray]:
    """n(y) - E_w[n] - (w - 0)/sigma^2 by enumerating one copy's worlds, and E_w[n]."""
    one = template(params)
    bits, prob = world_distribution(one)
    copies = net.n_atoms // one.n_atoms
    expected = copies * (prob @ world_counts(one, bits))
    data = world_counts(net, net.truth.astype(bool))
    prior = 0.0 if prior_stddev is None else params / prior_stddev ** 2
    return data - expected - prior, expected


# ---------------------------------------------------------------- sample schedule


def test_sample_schedule():
    assert sample_schedule(5, None, 4).tolist() == [5, 5, 5, 5]
    grown = sample_schedule(5, 20, 16)
    assert grown[0] == 5 and grown[-1] == 20 and np.all(np.diff(grown) >= 0) and len(grown) == 16
    assert sample_schedule(5, 20, 1).tolist() == [5]
    for bad in (4, 2.5, True):
        with pytest.raises(OptionError, match="final_samples"):
            sample_schedule(5, bad, 10)


class _Recording:
    """An exact engine that records the ``samples`` the learner asks for."""

    def __init__(self, net: GroundNetwork) -> None:
        self.exact = ExactEngine(net)
        self.samples = 0
        self.asked: list[int] = []

    def moments(self, params):
        self.asked.append(self.samples)
        return self.exact.moments(params)


@pytest.mark.parametrize("learner", [learn_dn, learn_scg])
def test_second_order_follows_the_schedule(learner):
    net = training(200, 0)
    engines: list[_Recording] = []

    def factory(n, seed):
        engines.append(_Recording(n))
        return engines[-1]

    learner([net], inference=factory, iterations=7, samples=4, final_samples=16, tolerance=0.0, init="model")
    asked = engines[0].asked
    assert asked == sample_schedule(4, 16, 7)[: len(asked)].tolist()
    assert len(asked) >= 3
    with pytest.raises(OptionError, match="final_samples"):
        learner([net], inference="exact", iterations=3, samples=5, final_samples=3)


def test_mcsat_schedule_counts_samples_drawn():
    net = training(100, 1)
    result = learn_dn([net], inference="mcsat", iterations=4, samples=3, final_samples=9, tolerance=0.0, seed=2)
    drawn = sum(sample_schedule(3, 9, 4)[: len(result.trace)])
    assert result.stats["samples"] == drawn


# ---------------------------------------------------------------- perceptron with expectations


@pytest.mark.parametrize("per_weight", [False, True])
def test_perceptron_exact_expectations_step(per_weight):
    """One iteration from the model's (zero) weights is one gradient step on
    the conditional log-likelihood, n(y) - E[n] - w/sigma^2, with E[n] by
    enumeration; the per-weight rate divides by max(1, |n(y)|, |E[n]|)."""
    net = training(300, 2)
    w0 = np.zeros(4)
    grad, expected = exact_gradient(net, w0, 2.0)
    result = learn_perceptron([net], expectations="exact", iterations=1, init="model", learning_rate=0.05,
                              per_weight=per_weight, prior_stddev=2.0)
    rate = 0.05
    if per_weight:
        data = world_counts(net, net.truth.astype(bool))
        rate = rate / np.maximum(1.0, np.maximum(np.abs(data), np.abs(expected)))
    assert np.allclose(result.params, w0 + rate * grad)
    assert result.objective_name == "train CLL per query atom"
    assert result.trace[0].objective < 0


def test_perceptron_exact_expectations_reach_the_cll_optimum():
    """Averaged stochastic-free gradient steps from the PLL optimum end near
    the exact CLL optimum (dn with exact expectations) and its held-out
    likelihood."""
    net = training(2000, 3)
    test = training(2000, 4)
    optimum = learn_dn([net], inference="exact", iterations=200, tolerance=1e-9).params
    result = learn_perceptron([net], expectations="exact", iterations=60, learning_rate=0.5)
    assert np.max(np.abs(result.params - optimum)) < 0.1
    held = ExactEngine(test)
    truth = test.truth.astype(bool)
    assert held.log_likelihood(result.params, truth) > held.log_likelihood(optimum, truth) - 0.002 * 2000


def test_perceptron_mcsat_expectations_run():
    """MC-SAT expectations: the learner runs on a sampled engine, reports the
    training CLL, and moves the weights towards the exact optimum."""
    net = training(500, 5)
    optimum = learn_dn([net], inference="exact", iterations=200, tolerance=1e-9).params
    start = np.zeros(4)
    result = learn_perceptron([net], expectations="mcsat", samples=10, iterations=60, learning_rate=1.0,
                              init=start, seed=1)
    assert all(-1.0 < r.objective < 0 for r in result.trace)
    assert np.abs(result.params - optimum).max() < 0.5 * np.abs(start - optimum).max()
    with pytest.raises(OptionError, match="unknown inference"):
        learn_perceptron([net], expectations="gibbs", iterations=1)


def test_perceptron_expectation_options_through_learn_model():
    mln = MLN.from_string("Smokes(person)\nCancer(person)\nSmokes(x) => Cancer(x)\n")
    db = Database.from_string("Smokes(A)\nCancer(A)\n!Smokes(B)\nSmokes(C)\n", mln=mln)
    out = learn_model(mln, [db], query_predicates=["Cancer"], method="perceptron", expectations="exact",
                      iterations=3)
    assert out.result.objective_name == "train CLL per query atom"
    with pytest.raises(OptionError, match="final-samples"):
        learn_model(mln, [db], query_predicates=["Cancer"], method="perceptron", final_samples=10)


# ---------------------------------------------------------------- networks reused


def test_learn_model_reuses_networks():
    mln = MLN.from_string("Smokes(person)\nCancer(person)\nSmokes(x) => Cancer(x)\nCancer(x)\n")
    db = Database.from_string("Smokes(A)\nCancer(A)\n!Smokes(B)\nSmokes(C)\nCancer(D)\n", mln=mln)
    first = learn_model(mln, [db], query_predicates=["Cancer"], method="dn", inference="exact", iterations=30)
    again = learn_model(mln, [db], query_predicates=["Cancer"], method="dn", inference="exact", iterations=30,
                        networks=first.networks)
    assert again.networks[0] is first.networks[0]
    assert again.ground_seconds < first.ground_seconds
    assert np.allclose(again.result.params, first.result.params)
    assert again.text == first.text


def test_cli_perceptron_expectations_and_final_samples(tmp_path, capsys):
    from markovlogic.cli import main

    prog = tmp_path / "prog.mln"
    prog.write_text("Smokes(person)\nCancer(person)\nSmokes(x) => Cancer(x)\nCancer(x)\n")
    train = tmp_path / "train.db"
    train.write_text("Smokes(A)\nCancer(A)\n!Smokes(B)\nSmokes(C)\nCancer(D)\n")
    out = tmp_path / "learned.mln"
    assert main(["learn", "-i", str(prog), "-t", str(train), "-o", str(out), "--ne", "Cancer",
                 "--method", "perceptron", "--expectations", "mcsat", "--samples", "4", "--iterations", "3"]) == 0
    assert len(MLN.from_file(out).formulas) == 2
    assert main(["learn", "-i", str(prog), "-t", str(train), "-o", str(out), "--ne", "Cancer",
                 "--method", "dn", "--samples", "3", "--final-samples", "6", "--iterations", "3"]) == 0
    assert main(["learn", "-i", str(prog), "-t", str(train), "-o", str(out), "--ne", "Cancer",
                 "--method", "dn", "--expectations", "mcsat"]) == 2
    assert "expectations" in capsys.readouterr().err
    # --average: the mean of the second half's weights (dn, scg, samplerank); refused elsewhere
    assert main(["learn", "-i", str(prog), "-t", str(train), "-o", str(out), "--ne", "Cancer",
                 "--method", "dn", "--samples", "3", "--iterations", "4", "--average"]) == 0
    assert main(["learn", "-i", str(prog), "-t", str(train), "-o", str(out), "--ne", "Cancer",
                 "--method", "perceptron", "--average"]) == 2
    assert "average" in capsys.readouterr().err


def test_chain_weights_from_parameters_equal_the_reweighted_networks():
    """``MCSATChain.set_weights_from_params`` writes what ``set_weights(net.clause_weights(p))``
    writes, and the two chains then draw the same worlds."""
    from markovlogic.infer.mcsat import MCSATChain

    net = training(40, 1)
    params = np.array([0.3, -0.7, 1.2, 0.4])
    a, b = MCSATChain(net, seed=5), MCSATChain(net, seed=5)
    a.set_weights(net.clause_weights(params))
    b.set_weights_from_params(net, params)
    assert np.array_equal(a.prep.sat.weight, b.prep.sat.weight)
    assert np.array_equal(a.prep.thresh, b.prep.thresh)
    assert np.array_equal(a.sample(30), b.sample(30))


def test_moments_drawn_a_chunk_at_a_time_equal_moments_drawn_at_once(monkeypatch):
    """The sampled engine's moments from chunks of worlds (counts and true counts kept,
    not the worlds) equal those of one call drawing every world."""
    from markovlogic.learn import engines

    net = training(40, 2)
    params = np.array([0.5, 1.0, -0.5, 0.2])

    def moments(chunk):
        monkeypatch.setattr(engines, "SAMPLE_CHUNK", chunk)
        eng = engines.SampledEngine(net, engines.PersistentMCSAT(net, 3), samples=50, burn_in=5)
        return [eng.moments(params), eng.moments(params * 0.5)]

    for x, y in zip(moments(7), moments(1000)):
        assert np.array_equal(x.mean, y.mean) and np.array_equal(x.var, y.var)
        assert np.array_equal(x.marginals[0], y.marginals[0]) and x.samples == y.samples == 50
