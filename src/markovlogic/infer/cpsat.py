"""Exact MAP with OR-Tools CP-SAT (optional dependency ``ortools``).

The same encoding as :mod:`.ilp` with Boolean variables: ``x_a`` per atom,
``z_c`` per soft clause of two or more literals (positive weight:
``z_c -> OR(literals)``; negative weight: ``literal -> z_c`` for each
literal), hard clauses as ``OR(literals)``, blocks as ``exactly_one``, unit
soft clauses straight into the objective.

CP-SAT needs integer objective coefficients: weights are multiplied by
``scale`` (by default the smallest power of ten from 1e6 to 1e12 that
represents the weights exactly, less if the sum of weights would overflow) and
rounded. The world's score is recomputed exactly with ``net.score``; the bound
is CP-SAT's proven bound divided by ``scale`` plus the total rounding error, so
it stays a valid bound on the true score. Weights with at most 6 decimals (as
in .mln files) are represented exactly and then the answer is exactly optimal.

Model building loops over clauses in Python (the CP-SAT API has no bulk
constructor), so it is slower to set up than the ILP on large networks.

As for the ILP, the network is presolved first (:mod:`.presolve`) and
cliques of equal-weight pairwise clauses are aggregated
(:class:`.ilp.Cliques`): one integer variable ``p`` (violated pairs) per
clique, ``p >= j F - j (j + 1) / 2`` with ``F`` the clique's false literals.
Its weight's rounding error counts once per unit of ``p``'s range.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import InferenceError, OptionError
from ..ground.network import GroundNetwork
from .ilp import (
    better_world,
    check_common_options,
    encode,
    fallback_world,
    infeasibility_error,
    reduced_problem,
    solved_map_result,
    time_share,
    trivial_bound,
)
from .kernels_state import SatArrays, sat_arrays
from .components import DEFAULT_GROUP_ATOMS, component_groups
from .results import MapResult


def _import_cp_model():
    try:
        from ortools.sat.python import cp_model
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise OptionError(
            "method 'cpsat' needs OR-Tools: pip install 'markovlogic[cpsat]' (or pip install ortools)"
        ) from exc
    return cp_model


def _build(cp_model, sat: SatArrays, scale: float, cliques: bool = True):
    """The CP-SAT model of ``sat``, its atom variables, and the objective's
    constant, scale and rounding error."""
    enc = encode(sat, cliques=cliques)
    model = cp_model.CpModel()
    n = sat.n_atoms
    x = [model.new_bool_var(f"x{i}") for i in range(n)]
    lits = [[x[a] if p else ~x[a] for a, p in zip(sat.lit_atom[s:e].tolist(), sat.lit_positive[s:e].tolist())]
            for s, e in zip(sat.clause_start[:-1].tolist(), sat.clause_start[1:].tolist())]
    for c in enc.hard.tolist():
        model.add_bool_or(lits[c])
    for b in range(sat.n_blocks):
        model.add_exactly_one([x[a] for a in sat.block_atoms[sat.block_start[b]:sat.block_start[b + 1]].tolist()])
    obj_vars, obj_w, span = [], [], []
    for a in np.flatnonzero(enc.atom_obj).tolist():
        obj_vars.append(x[a])
        obj_w.append(float(enc.atom_obj[a]))
        span.append(1)
    for c, w in zip(enc.z_clause.tolist(), enc.z_weight.tolist()):
        z = model.new_bool_var(f"z{c}")
        if w > 0:
            model.add_bool_or([~z] + lits[c])
        else:
            for lit in lits[c]:
                model.add_implication(lit, z)
        obj_vars.append(z)
        obj_w.append(w)
        span.append(1)
    cl = enc.cliques
    for k in range(0 if cl is None else cl.n_cliques):
        # F = number of false literals of the clique; p >= j F - j (j + 1) / 2 for j = 1..n-1
        members = range(int(cl.start[k]), int(cl.start[k + 1]))
        false_lits = [~x[cl.lit_atom[i]] if cl.lit_positive[i] else x[cl.lit_atom[i]] for i in members]
        size = len(false_lits)
        p = model.new_int_var(0, size * (size - 1) // 2, f"p{k}")
        f = cp_model.LinearExpr.sum(false_lits)
        for j in range(1, size):
            model.add(p >= j * f - j * (j + 1) // 2)
        obj_vars.append(p)
        obj_w.append(-float(cl.weight[k]))
        span.append(size * (size - 1) // 2)
    w = np.asarray(obj_w, dtype=np.float64)
    scaled = np.round(w * scale)
    # a variable's rounding error counts once per unit of its range
    error = float((np.abs(scaled / scale - w) * np.asarray(span, dtype=np.float64)).sum())
    if obj_vars:
        model.maximize(cp_model.LinearExpr.weighted_sum(obj_vars, scaled.astype(np.int64).tolist()))
    return model, n, enc.offset, error


def exact_scale(weights: np.ndarray) -> float:
    """The smallest of 1e6 .. 1e12 at which every weight is an integer multiple
    of 1/scale (each scaled weight within 1e-3 of an integer: float noise);
    1e12 when none is."""
    w = np.asarray(weights, dtype=np.float64)
    for k in range(6, 13):
        scale = 10.0 ** k
        scaled = w * scale
        if len(w) == 0 or float(np.abs(scaled - np.round(scaled)).max()) <= 1e-3:
            return scale
    return 1e12


def cpsat_map(
    net: GroundNetwork,
    *,
    max_seconds: float | None = None,
    workers: int = 1,
    group_atoms: int = DEFAULT_GROUP_ATOMS,
    scale: float | None = None,
    presolve: bool = True,
    cliques: bool = True,
) -> MapResult:
    """Exact MAP with CP-SAT (see module docstring); components are solved in
    groups as for the ILP, scores and bounds add up. ``presolve`` and
    ``cliques`` as for :func:`.ilp.ilp_map`."""
    start = time.perf_counter()
    check_common_options(max_seconds, group_atoms)
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise OptionError(f"workers must be a positive integer, got {workers!r}")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0):
        raise OptionError(f"scale must be positive, got {scale!r}")
    cp_model = _import_cp_model()
    deadline = None if max_seconds is None else start + float(max_seconds)

    sat = sat_arrays(net)
    if sat.n_empty_hard:
        raise infeasibility_error(net, sat)
    work, component, bound, pre = reduced_problem(net, sat, presolve)
    total_abs = float(np.abs(work.weight).sum())
    # keep every scaled sum well inside int64 (CP-SAT checks overflow on bounds)
    if scale is None:
        scale = exact_scale(work.weight)
    scale = float(min(scale, 2.0**50 / max(1.0, total_abs)))
    groups = component_groups(work, component, group_atoms)
    world = np.zeros(work.n_atoms, dtype=bool)
    all_optimal = True
    stats = {"groups": len(groups), "scale": scale, "rounding_error": 0.0,
             "fallback_groups": 0, "timed_out_groups": 0}
    if pre is not None:
        stats["presolve"] = pre.stats
    remaining = sum(len(g.atoms) for g in groups)
    for gi, g in enumerate(groups):
        budget = time_share(deadline, len(g.atoms), remaining)
        remaining -= len(g.atoms)
        model, n, offset, error = _build(cp_model, g.sat, scale, cliques)
        stats["rounding_error"] += error
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = int(workers)
        solver.parameters.random_seed = 0
        # the LP relaxation with cuts (and the clique rows) is what proves
        # optimality on MLN networks: tuffy/cse 0.3 s at level 2, not in 40 s at 1
        solver.parameters.linearization_level = 2
        if budget is not None:
            left = deadline - time.perf_counter()
            solver.parameters.max_time_in_seconds = max(0.01, min(0.8 * budget, left))
        status = solver.solve(model)
        if status == cp_model.INFEASIBLE:
            raise infeasibility_error(net, sat, None if pre is not None else g)
        if status == cp_model.MODEL_INVALID:
            raise InferenceError(f"CP-SAT rejected the model: {model.validate()}")
        trivial = trivial_bound(g.sat)
        local = None
        group_bound = trivial
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            values = np.fromiter(solver.response_proto.solution, dtype=np.int64)[:n]
            local = values > 0
            group_bound = solver.best_objective_bound / scale + error + offset
        if status != cp_model.OPTIMAL:
            # stopped by the time limit: try MaxWalkSAT too, keep the better world
            left = 1.0 if deadline is None else max(0.05, deadline - time.perf_counter())
            local, used = better_world(g.sat, local, fallback_world(g.sat, left, seed=gi))
            stats["fallback_groups"] += int(used)
        if status != cp_model.OPTIMAL:
            all_optimal = False
            stats["timed_out_groups"] += 1
        world[g.atoms] = local
        bound += min(group_bound, trivial)

    if pre is not None:
        world = pre.expand(world)
    # proven optimal for the scaled weights; for the true weights only if rounding is exact
    exact_weights = stats["rounding_error"] <= 1e-9 * max(1.0, total_abs)
    return solved_map_result(net, world, bound, all_optimal and exact_weights, "cpsat", start, stats)
