"""Exact MAP with OR-Tools CP-SAT (optional dependency ``ortools``).

The same encoding as :mod:`.ilp` with Boolean variables: ``x_a`` per atom,
``z_c`` per soft clause of two or more literals (positive weight:
``z_c -> OR(literals)``; negative weight: ``literal -> z_c`` for each
literal), hard clauses as ``OR(literals)``, blocks as ``exactly_one``, unit
soft clauses straight into the objective.

CP-SAT needs integer objective coefficients: weights are multiplied by
``scale`` (1e6 by default, less if the sum of weights would overflow) and
rounded. The world's score is recomputed exactly with ``net.score``; the bound
is CP-SAT's proven bound divided by ``scale`` plus the total rounding error, so
it stays a valid bound on the true score. Weights with at most 6 decimals (as
in .mln files) are represented exactly and then the answer is exactly optimal.

Model building loops over clauses in Python (the CP-SAT API has no bulk
constructor), so it is slower to set up than the ILP on large networks.
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
    solved_map_result,
    time_share,
    trivial_bound,
)
from .kernels_state import SatArrays, sat_arrays
from .map import DEFAULT_GROUP_ATOMS, component_groups
from .results import MapResult


def _import_cp_model():
    try:
        from ortools.sat.python import cp_model
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise OptionError(
            "method 'cpsat' needs OR-Tools: pip install 'markovlogic[cpsat]' (or pip install ortools)"
        ) from exc
    return cp_model


def _build(cp_model, sat: SatArrays, scale: float):
    """The CP-SAT model of ``sat``, its atom variables, and the objective's
    constant, scale and rounding error."""
    enc = encode(sat)
    model = cp_model.CpModel()
    n = sat.n_atoms
    x = [model.new_bool_var(f"x{i}") for i in range(n)]
    lits = [[x[a] if p else ~x[a] for a, p in zip(sat.lit_atom[s:e].tolist(), sat.lit_positive[s:e].tolist())]
            for s, e in zip(sat.clause_start[:-1].tolist(), sat.clause_start[1:].tolist())]
    for c in enc.hard.tolist():
        model.add_bool_or(lits[c])
    for b in range(sat.n_blocks):
        model.add_exactly_one([x[a] for a in sat.block_atoms[sat.block_start[b]:sat.block_start[b + 1]].tolist()])
    obj_vars, obj_w = [], []
    for a in np.flatnonzero(enc.atom_obj).tolist():
        obj_vars.append(x[a])
        obj_w.append(float(enc.atom_obj[a]))
    for c, w in zip(enc.z_clause.tolist(), enc.z_weight.tolist()):
        z = model.new_bool_var(f"z{c}")
        if w > 0:
            model.add_bool_or([~z] + lits[c])
        else:
            for lit in lits[c]:
                model.add_implication(lit, z)
        obj_vars.append(z)
        obj_w.append(w)
    w = np.asarray(obj_w, dtype=np.float64)
    scaled = np.round(w * scale)
    error = float(np.abs(scaled / scale - w).sum())
    if obj_vars:
        model.maximize(cp_model.LinearExpr.weighted_sum(obj_vars, scaled.astype(np.int64).tolist()))
    return model, n, enc.offset, error


def cpsat_map(
    net: GroundNetwork,
    *,
    max_seconds: float | None = None,
    workers: int = 1,
    group_atoms: int = DEFAULT_GROUP_ATOMS,
    scale: float = 1e6,
) -> MapResult:
    """Exact MAP with CP-SAT (see module docstring); components are solved in
    groups as for the ILP, scores and bounds add up."""
    start = time.perf_counter()
    check_common_options(max_seconds, group_atoms)
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise OptionError(f"workers must be a positive integer, got {workers!r}")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale > 0:
        raise OptionError(f"scale must be positive, got {scale!r}")
    cp_model = _import_cp_model()
    deadline = None if max_seconds is None else start + float(max_seconds)

    sat = sat_arrays(net)
    if sat.n_empty_hard:
        raise infeasibility_error(net, sat)
    total_abs = float(np.abs(sat.weight).sum())
    # keep every scaled sum well inside int64 (CP-SAT checks overflow on bounds)
    scale = float(min(scale, 2.0**50 / max(1.0, total_abs)))
    groups = component_groups(sat, net.component, group_atoms)
    world = np.zeros(net.n_atoms, dtype=bool)
    bound = sat.const_score
    all_optimal = True
    stats = {"groups": len(groups), "scale": scale, "rounding_error": 0.0,
             "fallback_groups": 0, "timed_out_groups": 0}
    remaining = sum(len(g.atoms) for g in groups)
    for gi, g in enumerate(groups):
        budget = time_share(deadline, len(g.atoms), remaining)
        remaining -= len(g.atoms)
        model, n, offset, error = _build(cp_model, g.sat, scale)
        stats["rounding_error"] += error
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = int(workers)
        solver.parameters.random_seed = 0
        if budget is not None:
            left = deadline - time.perf_counter()
            solver.parameters.max_time_in_seconds = max(0.01, min(0.8 * budget, left))
        status = solver.solve(model)
        if status == cp_model.INFEASIBLE:
            raise infeasibility_error(net, sat, g)
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

    # proven optimal for the scaled weights; for the true weights only if rounding is exact
    exact_weights = stats["rounding_error"] <= 1e-9 * max(1.0, total_abs)
    return solved_map_result(net, world, bound, all_optimal and exact_weights, "cpsat", start, stats)
