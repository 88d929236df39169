"""Marginal-inference workloads: MC-SAT (1000 samples, 100 burn-in) and Gibbs
(4 chains x 250 sweeps) on the tuffy workloads, grounded first (grounding time
reported apart), and on a random cse-shaped network. On smoke the marginals
are compared with exact enumeration.

The run's wall time is the whole workload; the figures say how it splits.
"""

from __future__ import annotations

import sys
import time

from bench.harness import REPO_ROOT, ground_tuffy, workload


def _marginals(net, exact: bool = False) -> dict:
    import warnings

    import numpy as np

    from markovlogic.errors import InferenceError
    from markovlogic.infer.gibbs import gibbs
    from markovlogic.infer.mcsat import mcsat

    opts: dict = {}
    c0 = time.process_time()
    try:
        m = mcsat(net, samples=1000, burn_in=100, seed=0)
    except InferenceError:
        # contradicting hard clauses (tuffy/rc1000): soften them as Alchemy does
        opts["hard_weight"] = float(np.abs(net.weight[~net.is_hard]).sum()) + 10.0
        c0 = time.process_time()
        m = mcsat(net, samples=1000, burn_in=100, seed=0, **opts)
    mcsat_cpu = time.process_time() - c0
    c0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = gibbs(net, samples=250, burn_in=25, chains=4, seed=0, **opts)
    gibbs_cpu = time.process_time() - c0
    out = {
        "hard_weight": opts.get("hard_weight"),
        "mcsat_seconds": round(m.seconds, 3),
        "mcsat_cpu_seconds": round(mcsat_cpu, 3),
        "mcsat_samples_per_s": round(m.stats["samples_per_second"], 1),
        "gibbs_seconds": round(g.seconds, 3),
        "gibbs_cpu_seconds": round(gibbs_cpu, 3),
        "gibbs_sweeps_per_s": round(g.stats["samples_per_second"], 1),
        "gibbs_rhat_max": g.stats["rhat_max"],
    }
    if exact:
        from markovlogic.infer.exact import exact_marginals

        ex = exact_marginals(net).probabilities
        out["mcsat_max_error_vs_exact"] = round(float(np.abs(m.probabilities - ex).max()), 4)
        out["gibbs_max_error_vs_exact"] = round(float(np.abs(g.probabilities - ex).max()), 4)
    return out


@workload("marginals-random", "MC-SAT 1000 samples + Gibbs 4x250 on a random 5k-atom/150k-clause network")
def marginals_random() -> dict:
    sys.path.insert(0, str(REPO_ROOT / "tests"))
    from networks import tuffy_like

    return _marginals(tuffy_like())


@workload("marginals-smoke", "tuffy/smoke: ground, MC-SAT, Gibbs, exact comparison", peers="smoke")
def marginals_smoke() -> dict:
    net, figures = ground_tuffy("smoke")
    return {**figures, **_marginals(net, exact=True)}


@workload("marginals-cse", "tuffy/cse: ground, MC-SAT 1000 samples, Gibbs 4x250", peers="cse-mcsat")
def marginals_cse() -> dict:
    net, figures = ground_tuffy("cse")
    return {**figures, **_marginals(net)}


@workload("marginals-rc1000", "tuffy/rc1000: ground, MC-SAT 1000 samples, Gibbs 4x250", peers="rc1000-mcsat")
def marginals_rc1000() -> dict:
    net, figures = ground_tuffy("rc1000")
    return {**figures, **_marginals(net)}


@workload("marginals-class", "tuffy/class: ground, MC-SAT 1000 samples, Gibbs 4x250", peers="class-mcsat")
def marginals_class() -> dict:
    net, figures = ground_tuffy("class")
    return {**figures, **_marginals(net)}
