"""Cutting-plane inference (Riedel 2008, Algorithm 1).

Start with no ground clauses and the all-false world. Repeat: ask the
database for every ground clause that the current world does not maximally
satisfy (hard or positive weight and violated; negative weight and
satisfied) — the separation step is SQL over the current world, see
``Grounder.violated_groundings`` — add those to the partial network, solve
the partial network with the base solver, until separation finds nothing new.

Why it is exact with an exact base solver: every ground clause left out is
maximally satisfied by the final world y*, so for any world y the full score
is at most score_G(y*) + (the left-out clauses' best contribution), which y*
attains. In cost terms (sum of |w| of clauses not satisfied as their sign
wants) the left-out clauses cost nothing at y*: cost_full(y*) = cost_G(y*),
and cost_G's optimum is a lower bound on cost_full's. The reported ``cost``
is therefore the cost on the full network; ``score`` and ``bound`` are over
the instantiated part (``stats['clauses']``), whose optimum the solver proves.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from ..errors import OptionError
from ..ground.network import GroundNetwork
from .results import MapResult

BASE_SOLVERS = ("ilp", "maxwalksat", "cpsat", "exact")


def cpi_solve(
    grounder,
    *,
    base: str = "ilp",
    max_iterations: int = 100,
    max_seconds: float | None = None,
    **solver_options,
) -> tuple[MapResult, GroundNetwork]:
    """Run cutting-plane inference over a ``Grounder``; return the result and
    the final partial network (atom ids = the grounder's registry ids)."""
    from .map import solve_map

    if base not in BASE_SOLVERS:
        raise OptionError(f"unknown CPI base solver {base!r}; choose one of {', '.join(BASE_SOLVERS)}")
    if max_iterations < 1:
        raise OptionError(f"max-iterations must be >= 1, got {max_iterations}")
    start = time.perf_counter()
    deadline = None if max_seconds is None else start + max_seconds
    world = np.zeros(grounder.registry.n_atoms, dtype=bool)
    parts = []
    history: list[dict] = []
    result: MapResult | None = None
    net: GroundNetwork | None = None
    converged = False
    seen = np.zeros(0, dtype=np.uint64)
    from .. import progress

    bar = progress.task(f"cutting planes ({base})", total=None)
    for iteration in range(1, max_iterations + 1):
        bar.update(completed=iteration - 1,
                   detail=f"round {iteration}: {sum(h['added'] for h in history):,} groundings so far"
                          + (f", cost {result.cost:.6g}" if result is not None else ""))
        new, seen = _unseen(grounder.violated_groundings(world), seen)
        if new.n_clauses == 0 and result is not None:
            converged = True
            break
        parts.append(new)
        net = grounder.assemble(_merged(parts, grounder.params.arrays()[0]))
        options = dict(solver_options)
        if deadline is not None:
            options["max_seconds"] = max(deadline - time.perf_counter(), 0.01)
        result = solve_map(net, method=base, **options)
        world = result.world
        history.append(
            dict(iteration=iteration, added=int(new.n_clauses), clauses=int(net.n_clauses),
                 cost=float(result.cost), seconds=round(time.perf_counter() - start, 4))
        )
        if deadline is not None and time.perf_counter() >= deadline:
            break
        # even when the first separation found nothing, the solved world
        # differs from the all-false one (blocks, ties): separate again
    bar.close()
    assert result is not None and net is not None
    exact_base = base in ("ilp", "cpsat", "exact")
    result.method = f"cpi+{base}"
    result.optimal = bool(converged and exact_base and result.optimal)
    result.seconds = time.perf_counter() - start
    result.stats.update(
        iterations=len(history),
        converged=converged,
        clauses=int(net.n_clauses),
        groundings_added=int(sum(h["added"] for h in history)),
        history=history,
    )
    if not converged:
        result.bound = None
        result.gap = None
        # the world may break groundings never separated: count them (hard) and
        # add their cost (soft), so the answer says what the written world does
        extra, _ = _unseen(grounder.violated_groundings(world), seen)
        hard_extra = int(extra.is_hard.sum())
        soft = ~extra.is_hard
        cost_extra = 0.0
        if soft.any():
            params = grounder.params.arrays()[0]
            entries = extra.param_coef * params[extra.param_index]
            per_clause = np.zeros(extra.n_clauses)
            np.add.at(per_clause, np.repeat(np.arange(extra.n_clauses), np.diff(extra.param_start)), entries)
            cost_extra = float(np.abs(per_clause[soft]).sum())
        result.hard_violated = int(result.hard_violated) + hard_extra
        result.cost = float(result.cost) + cost_extra
        result.stats.update(hard_violated=result.hard_violated, unseparated_hard_violated=hard_extra,
                            unseparated_soft_cost=cost_extra)
    return result, net


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: a well-spread 64-bit hash of each element."""
    x = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _clause_hashes(gc) -> np.ndarray:
    """One 64-bit key per ground clause from its literals AND its weight
    entries: the same literals grounded from two templates (say a positive and
    a negative one, which separation finds at different iterations) are two
    different additions to the partial network."""
    n = gc.n_clauses
    with np.errstate(over="ignore"):
        lit_code = 2 * gc.lit_atom.astype(np.uint64) + (~gc.lit_positive).astype(np.uint64)
        keys = np.zeros(n, dtype=np.uint64)
        np.add.at(keys, np.repeat(np.arange(n), np.diff(gc.clause_start)), _mix(lit_code))
        entry = _mix(gc.param_index.astype(np.uint64) * np.uint64(1_000_003)
                     + np.round(gc.param_coef * 1e9).astype(np.int64).astype(np.uint64))
        np.add.at(keys, np.repeat(np.arange(n), np.diff(gc.param_start)), entry)
        keys = _mix(keys ^ (gc.is_hard.astype(np.uint64) << np.uint64(63)))
    return keys


def _unseen(gc, seen: np.ndarray):
    """The clauses of ``gc`` not returned before, and the updated key set
    (``seen``: sorted, unique). Membership by binary search in ``seen`` and the
    new keys inserted in place: ``np.isin``/``np.union1d`` re-sorted the whole
    set every round (12 % of a Cora fold's CPI with a MaxWalkSAT base)."""
    from ..ground.grounder import select_clauses

    keys = _clause_hashes(gc)
    if len(seen):
        pos = np.minimum(np.searchsorted(seen, keys), len(seen) - 1)
        new = seen[pos] != keys
    else:
        new = np.ones(len(keys), dtype=bool)
    if not new.all():
        gc = select_clauses(gc, new)
    added = np.unique(keys[new])
    return gc, np.insert(seen, np.searchsorted(seen, added), added)


def _merged(parts: list, params: np.ndarray):
    """All clauses found so far as one merged clause set, with soft unit
    clauses P and !P folded as the full grounding does, so that scores and
    costs are comparable with the other methods'."""
    from ..ground.assemble import PAD, Rows, merge

    rows = []
    for gc in parts:
        sizes = np.diff(gc.clause_start)
        if len(sizes) == 0:
            continue
        width = int(sizes.max())
        codes = np.full((len(sizes), width), PAD, dtype=np.int32)
        clause_of_lit = np.repeat(np.arange(len(sizes)), sizes)
        col = np.arange(len(gc.lit_atom)) - np.repeat(gc.clause_start[:-1], sizes)
        codes[clause_of_lit, col] = 2 * gc.lit_atom + (~gc.lit_positive).astype(np.int32)
        if gc.is_hard.any():
            rows.append(Rows(codes[gc.is_hard], -1, None, 0.0))
        psizes = np.diff(gc.param_start)
        clause_of_entry = np.repeat(np.arange(len(sizes)), psizes)
        if len(clause_of_entry):
            rows.append(Rows(codes[clause_of_entry], -1, gc.param_index.astype(np.int32), gc.param_coef))
    return merge(rows, params, fold_units=True)


def cpi_map(
    mln,
    dbs: Sequence,
    queries=None,
    *,
    closed: Sequence[str] = (),
    open_: Sequence[str] = (),
    db_path: str | None = None,
    base: str = "ilp",
    max_iterations: int = 100,
    max_seconds: float | None = None,
    **solver_options,
) -> tuple[MapResult, GroundNetwork, float]:
    """Cutting-plane MAP from a model and evidence: (result, partial network,
    seconds spent setting up the evidence store)."""
    from ..ground import Grounder

    start = time.perf_counter()
    grounder = Grounder(mln, dbs, queries, closed=closed, open_=open_, db_path=db_path)
    setup = time.perf_counter() - start
    if max_seconds is not None:
        max_seconds = max(1.0, float(max_seconds) - setup)     # the limit covers setting up the store too
    try:
        result, net = cpi_solve(
            grounder, base=base, max_iterations=max_iterations, max_seconds=max_seconds, **solver_options
        )
    finally:
        grounder.close()
    return result, net, setup
