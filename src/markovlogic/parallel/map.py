"""MAP on both cores (or on a Ray cluster): what is split, and how.

``solve_map_parallel(net, method, options, parallel)`` is :func:`.infer.map.solve_map`
with the work spread over ``parallel.threads`` threads (or Ray workers):

- ``maxwalksat`` on threads: the tries are dealt to the threads (thread ``t``
  runs tries ``t, t + T, ...`` from its own seed, :func:`.split.seed_for`),
  each on the whole network, and the best world is kept *per connected
  component* over all tries, exactly as the serial search combines its tries
  (:mod:`markovlogic.infer.maxwalksat`). Each try is a random start and a
  walk, so a try on a thread is distributed as a serial try; the same flips
  are spent in all. On Ray, where no worker should hold the whole network,
  the components are split instead (below), each part getting the flips of
  its share of the network.
- ``ilp``, ``cpsat``, ``exact`` (and ``maxwalksat`` on Ray): whole connected
  components are packed into parts of about equal size (:func:`.split.partition`)
  and the parts are solved concurrently, each with the full time limit;
  worlds are joined, scores and bounds added. HiGHS releases the GIL
  (checked: a Python thread kept running within 50 ms during an 8 s solve),
  so threads suffice; CP-SAT on a network of one component gets the threads
  as its own workers instead.
- other methods (mh, sgmp, multitask-mh) run serially.

Networks smaller than ``parallel.min_clauses`` ground clauses, or of one
component for the component-split methods, are solved serially. With one
thread everything is the serial path, bit for bit.
"""

from __future__ import annotations

import time

import numpy as np

from ..ground.network import GroundNetwork
from ..infer.map import solve_map
from ..infer.results import MapResult
from .executor import ThreadExecutor, executor_for
from .options import ParallelOptions
from .split import Part, largest_share, partition, seed_for

COMPONENT_METHODS = ("ilp", "cpsat", "exact", "maxwalksat")


def solve_map_parallel(net: GroundNetwork, method: str, options: dict, parallel: ParallelOptions) -> MapResult:
    """The MAP world of ``net`` by ``method`` with ``options`` (those of
    :func:`.infer.map.solve_map`), split as the module docstring says."""
    workers = parallel.n_threads if not parallel.on_ray else _ray_parts(parallel)
    if workers <= 1 or net.n_clauses < parallel.min_clauses or method not in COMPONENT_METHODS:
        return solve_map(net, method=method, **options)
    if method == "maxwalksat" and not parallel.on_ray:
        return maxwalksat_tries(net, workers, **options)
    if net.n_components < 2 or largest_share(net) > 0.9:
        if method == "cpsat" and "workers" not in options and not parallel.on_ray:
            return solve_map(net, method=method, **{**options, "workers": workers})
        return solve_map(net, method=method, **options)
    parts = partition(net, workers)
    if len(parts) < 2:
        return solve_map(net, method=method, **options)
    return solve_parts(net, parts, method, options, executor_for(parallel))


def _ray_parts(parallel: ParallelOptions) -> int:
    from ..distributed.cluster import cluster_cpus

    return parallel.ray_workers or cluster_cpus(parallel)


def part_options(method: str, options: dict, part: Part, net: GroundNetwork, index: int) -> dict:
    """A part's options: its own seed; MaxWalkSAT's flips scaled to the part's
    share of the literals (at least 1,000), so the parts together spend the
    serial search's flips."""
    opts = dict(options)
    if "seed" in opts or method == "maxwalksat":
        opts["seed"] = seed_for(int(opts.get("seed", 0)), index)
    if method == "maxwalksat":
        from ..infer.maxwalksat import DEFAULT_FLIPS

        share = len(part.net.lit_atom) / max(1, len(net.lit_atom))
        opts["max_flips"] = max(1_000, int(round(int(opts.get("max_flips", DEFAULT_FLIPS)) * share)))
    return opts


def _solve_part(part_net: GroundNetwork, method: str, options: dict) -> MapResult:
    return solve_map(part_net, method=method, **options)


def solve_parts(net: GroundNetwork, parts: list[Part], method: str, options: dict, executor) -> MapResult:
    """Solve each part (whole components) on the executor; join the worlds."""
    start = time.perf_counter()
    args = [(p.net, method, part_options(method, options, p, net, i)) for i, p in enumerate(parts)]
    results = executor.map(_solve_part, args)
    return join_results(net, parts, results, method, start, getattr(executor, "workers", len(parts)))


def join_results(net: GroundNetwork, parts: list[Part], results: list[MapResult], method: str,
                 start: float, workers: int) -> MapResult:
    world = np.zeros(net.n_atoms, dtype=bool)
    for p, r in zip(parts, results):
        world[p.atoms] = r.world
    bounds = [r.bound for r in results]
    bound = None if any(b is None for b in bounds) else float(sum(bounds))
    score = net.score(world)
    optimal = all(r.optimal for r in results)
    if bound is not None and optimal:
        bound = max(bound, score)
    hard_violated = net.hard_violated(world)
    stats: dict = {"parts": len(parts), "workers": int(workers),
                   "part_seconds_max": max((r.seconds for r in results), default=0.0),
                   "part_seconds_sum": float(sum(r.seconds for r in results))}
    for r in results:
        for k, v in r.stats.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool) and not k.endswith("per_second"):
                stats[k] = stats.get(k, 0) + v
            elif isinstance(v, bool):
                stats[k] = stats.get(k, False) or v
    stats["hard_violated"] = hard_violated
    return MapResult(
        world=world, score=score, cost=net.cost(world), hard_violated=hard_violated, method=method,
        seconds=time.perf_counter() - start, optimal=optimal and hard_violated == 0, bound=bound,
        gap=None if bound is None else max(0.0, bound - score) / max(1.0, abs(score)), stats=stats,
    )


# ---------------------------------------------------------------- MaxWalkSAT: tries on threads

def component_keys(sat, comp: np.ndarray, n_comp: int, world: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per component of ``sat``: (violated hard clauses and blocks, cost) of ``world``."""
    cs = np.asarray(sat.clause_start, dtype=np.int64)
    sizes = np.diff(cs)
    lit_true = (world[sat.lit_atom] == sat.lit_positive).astype(np.int8)
    holds = np.zeros(sat.n_clauses, dtype=bool)
    nonempty = sizes > 0
    if nonempty.any():
        holds[nonempty] = np.maximum.reduceat(lit_true, cs[:-1][nonempty]) > 0 if len(lit_true) else False
    clause_comp = np.zeros(sat.n_clauses, dtype=np.int64)
    clause_comp[nonempty] = comp[sat.lit_atom[cs[:-1][nonempty]]]
    w = sat.weight
    soft = ~sat.is_hard
    bad_soft = soft & nonempty & (((w > 0) & ~holds) | ((w < 0) & holds))
    cost = np.bincount(clause_comp[bad_soft], weights=np.abs(w[bad_soft]), minlength=n_comp)
    bad_hard = sat.is_hard & nonempty & ~holds
    hard = np.bincount(clause_comp[bad_hard], minlength=n_comp).astype(np.int64)
    if sat.n_blocks:
        bs = np.asarray(sat.block_start, dtype=np.int64)
        bsz = np.diff(bs)
        ok = bsz > 0
        per_block = np.add.reduceat(world[sat.block_atoms].astype(np.int64), bs[:-1][ok]) if len(sat.block_atoms) else np.zeros(0)
        wrong = np.flatnonzero(ok)[per_block != 1]
        hard += np.bincount(comp[sat.block_atoms[bs[:-1][wrong]]], minlength=n_comp).astype(np.int64)
    return hard, cost


def _tries(sat, tries: int, max_flips: int, noise: float, seed: int, deadline, init, target_cost):
    from ..infer.maxwalksat import run_maxwalksat

    return run_maxwalksat(sat, max_flips=max_flips, max_tries=tries, noise=noise, seed=seed,
                          deadline=deadline, init=init, target_cost=target_cost)


def maxwalksat_tries(
    net: GroundNetwork,
    threads: int,
    *,
    max_flips: int | None = None,
    max_tries: int | None = None,
    noise: float = 0.5,
    seed: int = 0,
    max_seconds: float | None = None,
    init: np.ndarray | None = None,
    target_cost: float = 0.0,
) -> MapResult:
    """MaxWalkSAT with its tries dealt to ``threads`` threads, the best state
    kept per component over all of them (see the module docstring). Options
    and result are those of :func:`.infer.maxwalksat.maxwalksat`."""
    from ..infer.kernels_state import atom_components, sat_arrays
    from ..infer.maxwalksat import DEFAULT_FLIPS, DEFAULT_TRIES, _check_options
    from ..errors import OptionError

    start = time.perf_counter()
    max_flips = DEFAULT_FLIPS if max_flips is None else max_flips
    max_tries = DEFAULT_TRIES if max_tries is None else max_tries
    _check_options(max_flips, max_tries, noise, max_seconds, target_cost)
    if init is not None:
        init = np.asarray(init)
        if init.shape != (net.n_atoms,):
            raise OptionError(f"init must be a boolean array of length {net.n_atoms}, got shape {init.shape}")
    threads = min(int(threads), int(max_tries))
    if threads <= 1:
        from ..infer.maxwalksat import maxwalksat

        return maxwalksat(net, max_flips=max_flips, max_tries=max_tries, noise=noise, seed=seed,
                          max_seconds=max_seconds, init=init, target_cost=target_cost)
    deadline = None if max_seconds is None else start + float(max_seconds)
    sat = sat_arrays(net)
    target = float(target_cost) - sat.const_cost
    share = [max_tries // threads + (1 if t < max_tries % threads else 0) for t in range(threads)]
    args = [(sat, share[t], int(max_flips), float(noise), seed_for(int(seed), t), deadline,
             init if t == 0 else None, target) for t in range(threads)]
    outs = ThreadExecutor(threads).map(_tries, args)
    comp, n_comp = atom_components(sat)
    comp = np.asarray(comp, dtype=np.int64)
    best = outs[0][0].copy()
    best_h, best_c = component_keys(sat, comp, n_comp, best)
    for world, _ in outs[1:]:
        h, c = component_keys(sat, comp, n_comp, world)
        won = (h < best_h) | ((h == best_h) & (c < best_c - 1e-12 * (1.0 + np.abs(best_c))))
        if won.any():
            take = won[comp]
            best[take] = world[take]
            best_h[won], best_c[won] = h[won], c[won]
    free = (np.diff(sat.atom_lit_start) == 0) & (sat.atom_block < 0)
    best[free] = False
    stats: dict = {"threads": threads}
    for _, s in outs:
        for k in ("flips", "tries", "polish_moves"):
            stats[k] = stats.get(k, 0) + int(s.get(k, 0))
        for k in ("reached_target", "timed_out"):
            stats[k] = stats.get(k, False) or bool(s.get(k, False))
    seconds = time.perf_counter() - start
    stats["search_seconds"] = max(float(s.get("search_seconds", 0.0)) for _, s in outs)
    stats["flips_per_second"] = stats["flips"] / seconds if seconds > 0 else 0.0
    hard_violated = net.hard_violated(best)
    stats["hard_violated"] = hard_violated
    return MapResult(world=best, score=net.score(best), cost=net.cost(best), hard_violated=hard_violated,
                     method="maxwalksat", seconds=seconds, optimal=False, stats=stats)
