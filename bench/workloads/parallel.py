"""Both cores and Ray (issue 15 parts 3-4): the same work with 1 and 2 threads,
and on a local Ray cluster with 1 and 2 workers, in the same process, in the
same run.

Commands (each run is a fresh process; medians over the runs)::

    nice -n 5 .venv/bin/python -m bench parallel-tuffy parallel-classlike-30k parallel-classlike-100k -n 3
    nice -n 5 .venv/bin/python -m bench ray-classlike-30k -n 3

``parallel-*``: the network is ground once; then each method runs with
``threads=1`` and ``threads=2`` (order alternating between methods), timed
by wall clock and by the process's CPU time (all its threads). MaxWalkSAT
(20 tries of 50,000 flips) deals its tries to the threads; MC-SAT (1,000
samples) splits a network of many components into two parts sampled
concurrently (class, class-like) or runs two pooled chains (cse, one
component); the ILP solves two parts of whole components concurrently.
``speedup_*`` is wall(1 thread) / wall(2 threads); ``cpu_over_wall_*`` with
2 threads is the cores actually used.

``ray-classlike-30k``: ``mln infer`` on Ray as a user runs it (grounding
partitioned by template into Parquet parts, components solved on the
workers), on a local cluster started once by the workload with 2 CPUs:
``ray_workers=1`` (one grounding task, one solving task) against
``ray_workers=2``; wall time of the whole call (grounding included), and
the threads path's for comparison.

Measured 2026-11-26 on this 2-core machine, quiet (load average 1.0-1.2:
nothing else running), commit e002152, ``-n 3`` (medians) for tuffy and
class-like 30k, ``-n 1`` for 100k and Ray:

| workload / method | wall 1 thread | wall 2 threads | CPU/wall, 2 threads | speed-up | split | result |
|---|---|---|---|---|---|---|
| tuffy class MaxWalkSAT | 0.224 s | 0.133 s | 1.83 | 1.69 | tries | cost 361.6 both |
| tuffy class ILP | 0.049 s | 0.068 s | 1.15 | 0.71 | 2 parts | optimum 361.6 both |
| tuffy class MC-SAT | 2.50 s | 1.18 s | 1.97 | 2.12 | components | |
| tuffy cse MaxWalkSAT | 0.655 s | 0.358 s | 1.87 | 1.78 | tries | cost 2,791 both |
| tuffy cse ILP | 0.287 s | 0.297 s | 1.00 | 0.97 | one component: serial | optimum 2,791 both |
| tuffy cse MC-SAT | 3.27 s | 1.90 s | 1.96 | 1.73 | 2 pooled chains | |
| class-like 30k MaxWalkSAT | 4.19 s | 2.52 s | 1.86 | 1.66 | tries | cost 92,560 / 92,610 |
| class-like 30k MC-SAT | 57.6 s | 33.0 s | 1.97 | 1.74 | 2 pooled chains | |
| class-like 100k MaxWalkSAT | 15.4 s | 9.66 s | 1.86 | 1.59 | tries | cost 307,700 both |
| class-like 100k MC-SAT | 254 s | 154 s | 1.96 | 1.65 | 2 pooled chains | |

``ray-classlike-30k`` (commit a81351b, local cluster of 2 CPUs, the whole ``map_inference``
/ ``marginal_inference`` call timed, grounding on the workers included;
the network is one dominant component, solved as one replica per worker,
see ``distributed/infer.py``), against the threads path in the same run:

| class-like 30k | 1 worker | 2 workers | speed-up | threads 1 / 2 | speed-up |
|---|---|---|---|---|---|
| MaxWalkSAT (cost 92,556 / 92,482) | 5.98 s | 4.55 s | 1.32 | 5.29 s / 3.34 s | 1.58 |
| MC-SAT, 1,000 samples | 59.5 s | 38.3 s | 1.56 | 56.5 s / 34.8 s | 1.62 |

Before the replicas (components only), 2 workers were no faster than one
on this workload (0.98, 0.96): its one large component went to one worker.

Both cores are used wherever the work splits (CPU/wall 1.8-2.0 with two
threads), and wall time falls by 1.7-2.1 times; MC-SAT on tuffy class
gains more than two (its two halves of components each fit the cache
better). The ILP gains nothing on these networks: HiGHS solves them in
50-300 ms, less than the cost of splitting. The serial parts that bound
the speed-up: grounding's Python side (parsing, the registry, the merge),
``sat_arrays`` and the per-component combination (numpy, one thread), a
second chain's burn-in (pooled chains), and on Ray the start of the
cluster and the workers' imports.

An earlier run (same day, load average 7: seven runnable processes for two
cores) showed no speed-up at all (CPU/wall 0.4 whichever path ran): the
threads only help where a core is idle.
"""

from __future__ import annotations

import time

from bench.harness import Skip, data_dir, workload

MWS = dict(seed=0)
MCSAT = dict(seed=0, samples=1000)


def _timed(fn) -> tuple[object, float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def _compare(net, tag: str, methods: list[str]) -> dict:
    from markovlogic.parallel.map import solve_map_parallel
    from markovlogic.parallel.marginals import solve_marginals_parallel
    from markovlogic.parallel.options import ParallelOptions

    one, two = ParallelOptions(threads=1), ParallelOptions(threads=2)
    # compile / load every kernel first (numba caches), outside the timings
    from markovlogic.infer.maxwalksat import maxwalksat
    from markovlogic.infer.mcsat import mcsat

    maxwalksat(net, max_flips=100, max_tries=1)
    mcsat(net, samples=2, burn_in=1)
    out: dict = {f"{tag}_clauses": net.n_clauses, f"{tag}_components": net.n_components}
    for i, method in enumerate(methods):
        order = [(1, one), (2, two)] if i % 2 == 0 else [(2, two), (1, one)]
        for t, options in order:
            if method == "mcsat":
                res, wall, cpu = _timed(lambda: solve_marginals_parallel(net, "mcsat", dict(MCSAT), options))
                out[f"{tag}_mcsat_split_t{t}"] = res.stats.get("split", "serial")
            elif method == "maxwalksat":
                res, wall, cpu = _timed(lambda: solve_map_parallel(net, "maxwalksat", dict(MWS), options))
                out[f"{tag}_mws_cost_t{t}"] = round(res.cost, 3)
            else:
                res, wall, cpu = _timed(lambda: solve_map_parallel(net, "ilp", {"max_seconds": 120.0}, options))
                out[f"{tag}_ilp_cost_t{t}"] = round(res.cost, 3)
                out[f"{tag}_ilp_optimal_t{t}"] = bool(res.optimal)
            key = "mws" if method == "maxwalksat" else method
            out[f"{tag}_{key}_wall_t{t}"] = round(wall, 3)
            out[f"{tag}_{key}_cpu_t{t}"] = round(cpu, 3)
        key = "mws" if method == "maxwalksat" else method
        out[f"{tag}_{key}_speedup"] = round(out[f"{tag}_{key}_wall_t1"] / max(out[f"{tag}_{key}_wall_t2"], 1e-9), 3)
        out[f"{tag}_{key}_cpu_over_wall_t2"] = round(out[f"{tag}_{key}_cpu_t2"] / max(out[f"{tag}_{key}_wall_t2"], 1e-9), 3)
    return out


def _ground_files(model, evidence, queries=None, query_file=None):
    from markovlogic.api import ground_model
    from markovlogic.commands.common import load_inputs

    mln, dbs, q = load_inputs(str(model), str(evidence), queries, query_file)
    return ground_model(mln, dbs, q)


@workload("parallel-tuffy", "tuffy class and cse: MaxWalkSAT, ILP, MC-SAT with 1 and 2 threads")
def parallel_tuffy() -> dict:
    out: dict = {}
    for name in ("class", "cse"):
        folder = data_dir() / "tuffy" / name
        if not folder.is_dir():
            raise Skip(f"data folder not found: {folder}")
        net = _ground_files(folder / "prog.mln", folder / "evidence.db", query_file=str(folder / "query.db"))
        out.update(_compare(net, name, ["maxwalksat", "ilp", "mcsat"]))
    return out


def _classlike(n: int) -> dict:
    from bench.synthetic import write

    model, evidence, queries = write("classlike", n)
    net = _ground_files(model, evidence, queries)
    return _compare(net, f"classlike{n // 1000}k", ["maxwalksat", "mcsat"])


@workload("parallel-classlike-30k", "class-like N=30k: MaxWalkSAT and MC-SAT with 1 and 2 threads")
def parallel_classlike_30k() -> dict:
    return _classlike(30_000)


@workload("parallel-classlike-100k", "class-like N=100k: MaxWalkSAT and MC-SAT with 1 and 2 threads")
def parallel_classlike_100k() -> dict:
    return _classlike(100_000)


@workload("ray-classlike-30k", "class-like N=30k on a local Ray cluster: 1 worker against 2, and threads")
def ray_classlike_30k() -> dict:
    try:
        import ray
    except ImportError:
        raise Skip("ray is not installed (pip install 'markovlogic[ray]')") from None
    from bench.synthetic import write
    from markovlogic import api
    from markovlogic.commands.common import load_inputs

    model, evidence, queries = write("classlike", 30_000)
    mln, dbs, q = load_inputs(str(model), str(evidence), queries, None)
    t0 = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    out: dict = {"ray_start_seconds": round(time.perf_counter() - t0, 3)}
    try:
        # warm the workers (imports, numba caches) outside the timings
        api.map_inference(mln, dbs, q, method="maxwalksat", ray_address="auto", max_flips=1000, max_tries=1)
        for i, method in enumerate(["maxwalksat", "mcsat"]):
            order = [1, 2] if i % 2 == 0 else [2, 1]
            for w in order:
                if method == "maxwalksat":
                    res, wall, _ = _timed(lambda: api.map_inference(mln, dbs, q, method="maxwalksat", seed=0,
                                                                    ray_address="auto", ray_workers=w))
                    out[f"ray_mws_cost_w{w}"] = round(res.cost, 3)
                else:
                    res, wall, _ = _timed(lambda: api.marginal_inference(mln, dbs, q, method="mcsat", seed=0,
                                                                         ray_address="auto", ray_workers=w))
                key = "mws" if method == "maxwalksat" else "mcsat"
                out[f"ray_{key}_wall_w{w}"] = round(wall, 3)
                out[f"ray_{key}_ground_w{w}"] = round(res.ground_seconds, 3)
                out[f"ray_{key}_solve_w{w}"] = round(res.infer_seconds, 3)
            out[f"ray_{key}_speedup"] = round(out[f"ray_{key}_wall_w1"] / max(out[f"ray_{key}_wall_w2"], 1e-9), 3)
    finally:
        ray.shutdown()
    for method in ("maxwalksat", "mcsat"):
        key = "mws" if method == "maxwalksat" else "mcsat"
        for t in (1, 2):
            if method == "maxwalksat":
                res, wall, _ = _timed(lambda: api.map_inference(mln, dbs, q, method="maxwalksat", seed=0, threads=t))
            else:
                res, wall, _ = _timed(lambda: api.marginal_inference(mln, dbs, q, method="mcsat", seed=0, threads=t))
            out[f"threads_{key}_wall_t{t}"] = round(wall, 3)
    return out
