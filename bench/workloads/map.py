"""MAP workloads: MaxWalkSAT and the ILP on a random cse-shaped network and on
the tuffy workloads (grounded first; the grounding time is reported apart).

The run's wall time is the whole workload; the figures say how it splits.
"""

from __future__ import annotations

import sys
import time

from bench.harness import REPO_ROOT, ground_tuffy, workload


def _mws(net, flips: int = 1_000_000) -> dict:
    """The kernel's speed (one try of ``flips`` flips, as Alchemy's 1M-flip
    figure) and the default search's result (20 tries x 50k flips)."""
    from markovlogic.infer.maxwalksat import maxwalksat

    maxwalksat(net, max_flips=1_000, max_tries=1, seed=0)   # compile / load the kernels
    c0 = time.process_time()
    res = maxwalksat(net, max_flips=flips, max_tries=1, seed=0, target_cost=-1.0)
    cpu = time.process_time() - c0
    default = maxwalksat(net, seed=0)
    return {
        "mws_seconds": round(res.seconds, 3),
        "mws_flips_per_s": round(res.stats["flips_per_second"]),
        "mws_flips_per_cpu_s": round(res.stats["flips"] / cpu) if cpu > 0 else None,
        "mws_cost": round(res.cost, 3),
        "mws_hard_violated": res.hard_violated,
        "mws_default_seconds": round(default.seconds, 3),
        "mws_default_cost": round(default.cost, 3),
    }


def _ilp(net, max_seconds: float) -> dict:
    from markovlogic.errors import InferenceError
    from markovlogic.infer.ilp import ilp_map

    start = time.perf_counter()
    try:
        res = ilp_map(net, max_seconds=max_seconds)
    except InferenceError as exc:
        return {"ilp_seconds": round(time.perf_counter() - start, 3), "ilp": f"infeasible: {str(exc)[:120]}"}
    return {
        "ilp_seconds": round(time.perf_counter() - start, 3),
        "ilp_cost": round(res.cost, 3),
        "ilp_bound_cost": round(res.cost - (res.bound - res.score), 3),
        "ilp_optimal": res.optimal,
    }


@workload("map-random", "MaxWalkSAT (1M flips in one try; default search) + ILP (30 s cap) on a random 5k-atom/150k-clause network")
def map_random() -> dict:
    sys.path.insert(0, str(REPO_ROOT / "tests"))
    from networks import tuffy_like

    net = tuffy_like()
    return {**_mws(net), **_ilp(net, 30.0)}


@workload("map-cse", "tuffy/cse: ground, MaxWalkSAT (1M flips in one try; default search), ILP (60 s cap)", peers="cse-map")
def map_cse() -> dict:
    net, figures = ground_tuffy("cse")
    return {**figures, **_mws(net), **_ilp(net, 60.0)}


@workload("map-class", "tuffy/class: ground, MaxWalkSAT (1M flips in one try; default search), ILP", peers="class-map")
def map_class() -> dict:
    net, figures = ground_tuffy("class")
    return {**figures, **_mws(net), **_ilp(net, 60.0)}


@workload("map-rc1000", "tuffy/rc1000: ground, MaxWalkSAT (1M flips in one try; default search), ILP (infeasible hard rules)",
          peers="rc1000-map")
def map_rc1000() -> dict:
    net, figures = ground_tuffy("rc1000")
    return {**figures, **_mws(net), **_ilp(net, 60.0)}


def _ilp_variant(net, max_seconds: float, **options) -> dict:
    from markovlogic.infer.ilp import ilp_map

    start = time.perf_counter()
    res = ilp_map(net, max_seconds=max_seconds, **options)
    return {
        "seconds": round(time.perf_counter() - start, 3),
        "cost": round(res.cost, 3),
        "bound_cost": round(res.cost - (res.bound - res.score), 3),
        "optimal": res.optimal,
    }


def _variants(name: str, max_seconds: float) -> dict:
    """The exact solvers on one network with the presolve and the clique
    encoding on and off (each variant capped at ``max_seconds``): the
    before/after of each in one run."""
    from markovlogic.infer.ilp import ilp_map

    net, figures = ground_tuffy(name)
    ilp_map(net, max_seconds=max_seconds)                  # load kernels and HiGHS once
    out = dict(figures)
    for label, opts in (("ilp_plain", dict(presolve=False, cliques=False)),
                        ("ilp_presolve", dict(presolve=True, cliques=False)),
                        ("ilp_cliques", dict(presolve=False, cliques=True)),
                        ("ilp_both", dict(presolve=True, cliques=True))):
        for k, v in _ilp_variant(net, max_seconds, **opts).items():
            out[f"{label}_{k}"] = v
    try:
        from markovlogic.infer.cpsat import cpsat_map
    except ImportError:                                    # pragma: no cover
        return out
    start = time.perf_counter()
    res = cpsat_map(net, max_seconds=max_seconds)
    out.update(cpsat_seconds=round(time.perf_counter() - start, 3), cpsat_cost=round(res.cost, 3),
               cpsat_optimal=res.optimal)
    return out


@workload("map-cse-variants", "tuffy/cse: ILP with presolve/cliques off and on (30 s cap each), CP-SAT",
          peers="cse-map")
def map_cse_variants() -> dict:
    return _variants("cse", 30.0)


@workload("map-class-variants", "tuffy/class: ILP with presolve/cliques off and on (30 s cap each), CP-SAT",
          peers="class-map")
def map_class_variants() -> dict:
    return _variants("class", 30.0)
