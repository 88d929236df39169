"""Which path the default MAP method takes under a time limit (issue 15).

The exact ILP (``ilp.py``) must normalise the clauses, presolve, split the
network into component groups and build a HiGHS model before it can search;
on a large network that alone outlasts a short ``--max-seconds`` (measured:
about one microsecond of CPU per literal, three to five times that in wall
time on a loaded machine; class-like N=100k, 3.8 M literals: 23 s before
HiGHS starts), and the search that follows needs time too. When the model's
estimated setup time is more than ``SETUP_SHARE`` of the time the solver
has, the default method does not start it (``MapResult.stats
["exact_skipped"]``); :func:`approximate_map` answers instead (issue 30):

1. coordinate ascent on the dual of the LP relaxation (:mod:`.lpbound`) for
   at most ``LP_SHARE`` of the time: a bound on the cost that is valid
   wherever the ascent stops, and a world read off its reduced costs (on
   implication cascades such as friends of smokers, whose LP is a minimum
   cut, that world makes the collective flips single-flip search misses);
2. MaxWalkSAT for the rest of the time, its first try started from that
   world, stopping early if it reaches the bound (then the world is optimal).

Only the LP's own memory is checked before it starts (``check_memory(net,
"lp")``); MaxWalkSAT's when it is needed, and if it does not fit the budget
the rounded world (when it breaks no hard clause) is the answer with its
bound (``stats["maxwalksat_skipped"]`` gives the reason).

The answer is the better of the two worlds; ``stats["path"]`` says which
(``lp-rounding`` or ``lp+maxwalksat``), the bound is the better of the LP
dual's and the trivial one (every soft clause as its weight wants),
``gap`` follows from it, and ``lp_*`` keys give the ascent's figures.
An explicit ``--method ilp`` is the same method: raising ``--max-seconds``
brings the exact path back.

A model the exact ILP can be set up for, but whose setup estimate is more
than ``EXACT_FULL_SHARE`` of the limit, gets the ILP for ``EXACT_SHARE`` of
it; if that proves nothing (gap above ``GAP_DONE``), :func:`approximate_map`
runs for the rest, and the answer is the better world with the better bound
(:func:`exact_then_approximate`; ``stats["path"]`` ``ilp+lp-rounding`` or
``ilp+lp+maxwalksat``). Measured under 60 s: class-like N=100k, 2.7 M
clauses, the ILP alone gave cost 307,558.5 with bound gap .21, the shared
limit 241,603.3 within .00076 of the LP bound (59.5 s wall with grounding);
social-light N=1M, 4.4 M clauses: an ILP gap of 3.1 % became a proven
optimum by LP rounding (45.6 s wall).
"""

from __future__ import annotations

import time

import numpy as np

from ..ground.network import GroundNetwork
from .results import MapResult

SETUP_SECONDS_PER_LITERAL = 4e-6    # wall seconds per literal to build the ILP (measured ~1e-6 CPU; load)
SETUP_SHARE = 0.5                   # the setup may take at most this part of the time limit


def exact_setup_seconds(net: GroundNetwork) -> float:
    """Estimated wall seconds before the exact ILP's solver starts."""
    return SETUP_SECONDS_PER_LITERAL * (len(net.lit_atom) + len(net.block_atoms))


def exact_fits(net: GroundNetwork, seconds: float | None) -> bool:
    """Whether the exact ILP can be set up within its share of ``seconds``."""
    return seconds is None or exact_setup_seconds(net) <= SETUP_SHARE * float(seconds)


EXACT_FULL_SHARE = 0.1     # the exact ILP keeps the whole limit while its setup estimate is at most this part
EXACT_SHARE = 0.5          # otherwise it gets this part; unproven, approximate_map gets the rest
GAP_DONE = 1e-4            # an exact answer within this gap needs no second path


def exact_share(net: GroundNetwork, seconds: float | None) -> float | None:
    """The part of ``seconds`` the exact ILP gets when it is started (None:
    all of it): a large model (setup estimate above ``EXACT_FULL_SHARE`` of
    the limit) gets ``EXACT_SHARE``, and :func:`exact_then_approximate`
    hands the rest to :func:`approximate_map` if the ILP proves nothing.
    Measured (issue 30): class-like N=100k (2.7 M clauses) under 60 s, the
    ILP alone returned a world of cost 307,558 with a bound of 43 (gap .21);
    social-light N=1M stopped with a 3.1 % gap where the LP's rounded world
    is optimal."""
    if seconds is None or exact_setup_seconds(net) <= EXACT_FULL_SHARE * float(seconds):
        return None
    return EXACT_SHARE


def exact_then_approximate(net: GroundNetwork, seconds: float, solve_exact, seed: int = 0,
                           parallel=None) -> MapResult:
    """The exact ILP for ``EXACT_SHARE`` of ``seconds`` (``solve_exact(limit)``),
    then, unless it proved its world within ``GAP_DONE``, :func:`approximate_map`
    for the rest: the better world (fewer broken hard clauses, then lower
    cost) with the better of the two proven bounds. ``stats["path"]`` names
    both (``ilp+lp-rounding``, ``ilp+lp+maxwalksat``) or ``ilp`` alone."""
    start = time.perf_counter()
    exact = solve_exact(EXACT_SHARE * float(seconds))
    exact.stats.setdefault("path", "ilp")
    if exact.optimal or (exact.gap is not None and exact.gap <= GAP_DONE):
        return exact
    left = float(seconds) - (time.perf_counter() - start)
    if left < 1.0:
        return exact
    approx = approximate_map(net, left, seed, parallel)
    keep_exact = (exact.hard_violated, exact.cost) <= (approx.hard_violated, approx.cost)
    best = exact if keep_exact else approx
    bounds = [b for b in (exact.bound, approx.bound) if b is not None]
    bound = max(min(bounds), best.score) if bounds else None
    stats = dict(approx.stats)
    stats.update(exact_seconds=round(exact.seconds, 3), exact_cost=float(exact.cost),
                 exact_hard_violated=int(exact.hard_violated), exact_bound=exact.bound,
                 path="ilp+" + approx.stats.get("path", "approximate") + (" (ilp's world)" if keep_exact else ""))
    stats.pop("exact_skipped", None)
    best.stats = stats
    best.bound = bound
    best.gap = None if bound is None else max(0.0, bound - best.score) / max(1.0, abs(best.score))
    best.optimal = best.hard_violated == 0 and best.gap is not None and best.gap <= 1e-7
    best.method = "ilp"
    best.seconds = time.perf_counter() - start
    return best


def score_bound(net: GroundNetwork) -> float:
    """An upper bound of the score: every positive soft clause satisfied,
    every negative one not."""
    w = net.weight[~net.is_hard]
    return float(w[w > 0].sum())


LP_SHARE = 0.5          # the LP dual's ascent may take this part of the time limit: half (was 0.3), measured
# 2026-11-28 (scale --max-seconds 60, quiet): social N=3M needs 8 sweeps (~19 s) for its rounded world to reach
# the bound and 0.3 stopped it at 7, leaving MaxWalkSAT 30 s to find the same optimum (MAP 47.9 -> 24.4 s);
# class-like N=100k got a better world and bound (241,356.1 / 240,467.2 -> 241,260.1 / 240,552.2)


def maxwalksat_instead(net: GroundNetwork, seconds: float, seed: int = 0) -> MapResult:
    """The default method's answer on a network too large for the exact ILP
    (:func:`approximate_map`, serial)."""
    return approximate_map(net, seconds, seed=seed)


def approximate_map(net: GroundNetwork, seconds: float, seed: int = 0, parallel=None) -> MapResult:
    """The LP dual's bound and world, then MaxWalkSAT from that world, within
    ``seconds`` (see the module docstring). ``parallel``: a
    :class:`~markovlogic.parallel.options.ParallelOptions` to deal
    MaxWalkSAT's tries to threads (default: serial)."""
    from .lpbound import network_dual
    from .maxwalksat import maxwalksat

    start = time.perf_counter()
    seconds = max(0.1, float(seconds))
    def world_cost(world):
        return net.cost(world) if net.hard_violated(world) == 0 else float("inf")

    dual = network_dual(net, max_seconds=LP_SHARE * seconds, world_cost=world_cost)
    lp_world = dual.world
    lp_cost, lp_bad = net.cost(lp_world), net.hard_violated(lp_world)
    tol = 1e-7 * max(1.0, abs(lp_cost))
    optimal = lp_bad == 0 and lp_cost <= dual.cost_bound + tol
    no_room = None
    if not optimal:
        # MaxWalkSAT's state is checked against the memory budget only now that it is needed; a feasible
        # rounded world with its bound is the answer when the search does not fit
        from ..errors import ResourceError

        try:
            check_memory(net, "maxwalksat")
        except ResourceError as exc:
            if lp_bad:
                raise
            no_room = str(exc)
    if optimal or no_room is not None:
        # the rounded world reaches the bound: optimal, no search needed (or no room for one)
        res = MapResult(world=lp_world.copy(), score=net.score(lp_world), cost=lp_cost, hard_violated=0,
                        method="ilp", seconds=0.0, stats={} if no_room is None else {"maxwalksat_skipped": no_room})
        mws_cost, mws_bad = None, None
    else:
        left = max(0.1, seconds - (time.perf_counter() - start))
        opts = {"max_seconds": left, "init": lp_world, "target_cost": float(dual.cost_bound)}
        if parallel is None:
            res = maxwalksat(net, seed=seed, **opts)
        else:
            from ..parallel.map import solve_map_parallel

            res = solve_map_parallel(net, "maxwalksat", dict(opts, seed=seed), parallel)
        mws_cost, mws_bad = float(res.cost), int(res.hard_violated)
    path = "lp+maxwalksat"
    if mws_cost is None:
        path = "lp-rounding"
    elif lp_bad == 0 and (res.hard_violated > 0 or lp_cost < res.cost - 1e-9 * (1.0 + abs(res.cost))):
        res.world = lp_world.copy()
        res.score, res.cost, res.hard_violated = net.score(lp_world), lp_cost, 0
        path = "lp-rounding"
    res = with_trivial_bound(net, res, min(score_bound(net), float(dual.score_bound)))
    if res.hard_violated == 0 and res.cost <= dual.cost_bound + 1e-7 * max(1.0, abs(res.cost)):
        res.optimal = True             # within 1e-7 of the bound, as a MIP solver's gap tolerance
        res.bound = res.score
        res.gap = 0.0
    res.stats.update(path=path, lp_cost_bound=float(dual.cost_bound), lp_sweeps=int(dual.sweeps),
                     lp_seconds=round(dual.seconds, 3), lp_converged=bool(dual.converged),
                     lp_world_cost=float(lp_cost), lp_world_hard_violated=int(lp_bad),
                     maxwalksat_cost=mws_cost, maxwalksat_hard_violated=mws_bad)
    res.seconds = time.perf_counter() - start
    return res


def with_trivial_bound(net: GroundNetwork, res: MapResult, bound: float | None = None) -> MapResult:
    """A MaxWalkSAT result as the default (exact) method's answer: the
    trivial bound (or ``bound``, a better upper bound of the score), its gap,
    and the note that the exact model was skipped."""
    bound = max(score_bound(net) if bound is None else float(bound), res.score)
    res.bound = bound
    res.gap = max(0.0, bound - res.score) / max(1.0, abs(res.score))
    res.optimal = False
    res.method = "ilp"
    res.stats = dict(res.stats)
    res.stats.update(exact_skipped=True, exact_setup_estimate=round(exact_setup_seconds(net), 3),
                     literals=int(len(net.lit_atom)))
    return res


# bytes per ground clause (1.8 literals on average) that a method allocates
# beyond the network: MaxWalkSAT measured ~175 on social N=1M before issue 30
# and 86-97 after (its 32-byte clause records, occurrence lists, packed short
# clauses, bad list; the network's reverse index shared), 110 with its
# transients; the LP dual ("lp": the first step of the default method's
# approximate path) 8 per clause plus about 8 of transients (more with
# negative clauses of several literals: 8 per literal); the others are
# rounded up from the same structures (MC-SAT keeps a second search for
# SampleSAT; the ILP's model and HiGHS's copy of it)
SOLVER_CLAUSE_BYTES = {"maxwalksat": 110, "lp": 16, "mcsat": 300, "gibbs": 150, "mh": 150, "ilp": 600,
                       "cpsat": 800, "sgmp": 300, "multitask-mh": 200}


def check_memory(net: GroundNetwork, method: str) -> None:
    """Stop with the estimate before a solver would outgrow the memory budget."""
    from ..resources import _limit, check_budget

    per = SOLVER_CLAUSE_BYTES.get(method)
    if per is None or net.n_clauses == 0:
        return
    need = per * net.n_clauses
    if method == "lp" and bool(np.any(~net.is_hard & (net.weight < 0) & (np.diff(net.clause_start) > 1))):
        need += 8 * len(net.lit_atom)          # one multiplier per literal of such clauses
    if _limit is not None:             # an explicit budget covers the network the solver works on
        need += net.nbytes()
    check_budget(
        f"{method} on the ground network ({net.n_clauses:,} clauses, {net.nbytes() / 2**20:,.0f} MB)", need,
        "Ways out: " + ("" if method == "maxwalksat" else "--method maxwalksat (the leanest solver), ")
        + "lazy inference (--lazy: only the clauses a search touches), less to ground (narrower queries, more "
        "evidence), a machine or cluster with more memory, or a larger --memory-limit.")


__all__ = ["approximate_map", "check_memory", "exact_fits", "exact_setup_seconds", "exact_share",
           "exact_then_approximate", "maxwalksat_instead",
           "score_bound", "with_trivial_bound"]
