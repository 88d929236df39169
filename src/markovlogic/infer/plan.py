"""Which path the default MAP method takes under a time limit (issue 15).

The exact ILP (``ilp.py``) must normalise the clauses, presolve, split the
network into component groups and build a HiGHS model before it can search;
on a large network that alone outlasts a short ``--max-seconds`` (measured:
about one microsecond of CPU per literal, three to five times that in wall
time on a loaded machine; class-like N=100k, 3.8 M literals: 23 s before
HiGHS starts), and the search that follows needs time too. When the model's
estimated setup time is more than ``SETUP_SHARE`` of the time the solver
has, the default method does not start it: it returns MaxWalkSAT's world for
the time limit instead, with the trivial bound (every soft clause as its
weight wants) and a gap, and says so (``MapResult.stats["exact_skipped"]``).
An explicit ``--method ilp`` is the same method: raising ``--max-seconds``
brings the exact path back.
"""

from __future__ import annotations

import time

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


def score_bound(net: GroundNetwork) -> float:
    """An upper bound of the score: every positive soft clause satisfied,
    every negative one not."""
    w = net.weight[~net.is_hard]
    return float(w[w > 0].sum())


def maxwalksat_instead(net: GroundNetwork, seconds: float, seed: int = 0) -> MapResult:
    """MaxWalkSAT's world within ``seconds`` with the trivial bound, as the
    default method's answer on a network too large for the exact ILP."""
    from .maxwalksat import maxwalksat

    start = time.perf_counter()
    res = with_trivial_bound(net, maxwalksat(net, max_seconds=max(0.1, float(seconds)), seed=seed))
    res.seconds = time.perf_counter() - start
    return res


def with_trivial_bound(net: GroundNetwork, res: MapResult) -> MapResult:
    """A MaxWalkSAT result as the default (exact) method's answer: the trivial
    bound, its gap, and the note that the exact model was skipped."""
    bound = max(score_bound(net), res.score)
    res.bound = bound
    res.gap = max(0.0, bound - res.score) / max(1.0, abs(res.score))
    res.optimal = False
    res.method = "ilp"
    res.stats = dict(res.stats)
    res.stats.update(exact_skipped=True, exact_setup_estimate=round(exact_setup_seconds(net), 3),
                     literals=int(len(net.lit_atom)))
    return res


# bytes per ground clause (1.8 literals on average) that a method allocates
# beyond the network: MaxWalkSAT measured ~175 on social N=1M (its clause
# records, occurrence lists and solver arrays); the others are rounded up
# from the same structures (MC-SAT keeps a second search for SampleSAT; the
# ILP's model and HiGHS's copy of it)
SOLVER_CLAUSE_BYTES = {"maxwalksat": 200, "mcsat": 300, "gibbs": 150, "mh": 150, "ilp": 600, "cpsat": 800,
                       "sgmp": 300, "multitask-mh": 200}


def check_memory(net: GroundNetwork, method: str) -> None:
    """Stop with the estimate before a solver would outgrow the memory budget."""
    from ..resources import _limit, check_budget

    per = SOLVER_CLAUSE_BYTES.get(method)
    if per is None or net.n_clauses == 0:
        return
    need = per * net.n_clauses
    if _limit is not None:             # an explicit budget covers the network the solver works on
        need += net.nbytes()
    check_budget(
        f"{method} on the ground network ({net.n_clauses:,} clauses, {net.nbytes() / 2**20:,.0f} MB)", need,
        "Ways out: " + ("" if method == "maxwalksat" else "--method maxwalksat (the leanest solver), ")
        + "lazy inference (--lazy: only the clauses a search touches), less to ground (narrower queries, more "
        "evidence), a machine or cluster with more memory, or a larger --memory-limit.")


__all__ = ["check_memory", "exact_fits", "exact_setup_seconds", "maxwalksat_instead", "score_bound",
           "with_trivial_bound"]
