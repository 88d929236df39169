"""solve_marginals: the three methods agree; bad options fail before any work."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic.errors import OptionError
from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.exact import exact_marginals
from markovlogic.infer.marginals import METHODS, solve_marginals
from markovlogic.infer.mcsat import sample_worlds
from networks import infeasible_network, random_network


def _net() -> GroundNetwork:
    return random_network(np.random.default_rng(1), 8, 14, p_hard=0.0, n_blocks=1)


def test_methods_agree():
    net = _net()
    exact = exact_marginals(net).probabilities
    for method in METHODS:
        if method == "multitask-mh":      # needs two or more tasks: tests/test_multitask_mh.py
            continue
        r = solve_marginals(net, method=method, **({} if method == "exact" else {"samples": 2000, "seed": 1}))
        assert r.method == method
        assert np.abs(r.probabilities - exact).max() <= 0.03


def test_default_method_is_mcsat():
    assert solve_marginals(_net(), samples=50).method == "mcsat"


def test_exact_ignores_sampler_only_settings_the_cli_always_passes():
    r = solve_marginals(_net(), method="exact", seed=3, max_seconds=10.0, progress=lambda n: None)
    assert np.allclose(r.probabilities, exact_marginals(_net()).probabilities)


# An infeasible network: running any method on it raises InferenceError, so an
# OptionError proves the options were checked before any work.
BAD = [
    ("bogus", {}, "unknown marginal method"),
    ("mcsat", {"samples": 0}, "samples must be an integer >= 1"),
    ("mcsat", {"samples": -5}, "samples"),
    ("mcsat", {"samples": 2.5}, "samples"),
    ("mcsat", {"samples": True}, "samples"),
    ("mcsat", {"burn_in": -1}, "burn-in must be an integer >= 0"),
    ("mcsat", {"seed": "x"}, "seed"),
    ("mcsat", {"max_seconds": 0}, "max-seconds"),
    ("mcsat", {"max_seconds": -1.0}, "max-seconds"),
    ("mcsat", {"walksat_prob": 1.5}, "walksat-prob"),
    ("mcsat", {"temperature": -0.1}, "temperature"),
    ("mcsat", {"max_steps": 0}, "max-steps"),
    ("mcsat", {"metropolis_steps": -1}, "metropolis-steps"),
    ("mcsat", {"chains": 2}, "do not apply to mcsat"),
    ("mcsat", {"progress": 3}, "progress"),
    ("mcsat", {"hard_weight": 0.0}, "hard-weight"),
    ("gibbs", {"hard_weight": -1.0}, "hard-weight"),
    ("gibbs", {"samples": 0}, "samples"),
    ("gibbs", {"burn_in": -2}, "burn-in"),
    ("gibbs", {"chains": 0}, "chains must be an integer >= 1"),
    ("gibbs", {"temperature": 0.5}, "do not apply to gibbs"),
    ("exact", {"samples": 100}, "do not apply to exact"),
    ("exact", {"max_atoms": 0}, "max-atoms"),
]


@pytest.mark.parametrize("method, options, message", BAD)
def test_bad_options_fail_before_any_work(method, options, message):
    net = infeasible_network(np.random.default_rng(0))
    with pytest.raises(OptionError, match=message):
        solve_marginals(net, method=method, **options)


def test_sample_worlds_checks_options():
    with pytest.raises(OptionError, match="samples"):
        sample_worlds(_net(), 0)
    with pytest.raises(OptionError, match="burn-in"):
        sample_worlds(_net(), 10, burn_in=-1)
