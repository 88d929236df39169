"""Lazy inference from a model and evidence (what ``lazy=True`` and
``mln infer --lazy`` call): a grounder over the evidence store, never a
full grounding."""

from __future__ import annotations

import time
from typing import Sequence

from ...errors import OptionError
from .maxwalksat import lazy_maxwalksat
from .mcsat import lazy_mcsat
from .options import LAZY_METHODS, LazyOptions

MAP_OPTIONS = ("max_flips", "max_tries", "noise", "seed", "max_seconds", "target_cost")
MARGINAL_OPTIONS = ("samples", "burn_in", "seed", "max_seconds", "walksat_prob", "temperature", "max_steps",
                    "metropolis_steps", "guide_weight", "max_path", "rao_blackwell", "hard_weight", "progress")


def check_lazy_method(task: str, method: str) -> None:
    """Lazy inference exists for MaxWalkSAT (MAP) and MC-SAT (marginals)."""
    allowed = LAZY_METHODS[task]
    if method not in allowed:
        other = "marginals" if task == "map" else "map"
        also = "" if method not in LAZY_METHODS[other] else f" ({method} is a {'MAP' if other == 'map' else 'marginal'} method)"
        raise OptionError(
            f"lazy inference runs {' or '.join(allowed)} for {'MAP' if task == 'map' else 'marginals'}; "
            f"--method {method} has no lazy version{also}. Drop --lazy, or use --method {allowed[0]}")


def _run(name: str, allowed: tuple[str, ...], solve, mln, dbs, queries, closed, open_, db_path, lazy, options):
    """Check the options, set up the evidence store (a grounder, nothing
    ground), take its seconds off ``max_seconds``, run ``solve`` and close."""
    from ...ground import Grounder

    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise OptionError(f"lazy {name} does not take option(s) {', '.join(unknown)}; it takes {', '.join(allowed)}")
    start = time.perf_counter()
    g = Grounder(mln, dbs, queries, closed=closed, open_=open_, db_path=db_path)
    setup = time.perf_counter() - start
    if options.get("max_seconds") is not None:
        options["max_seconds"] = max(1.0, float(options["max_seconds"]) - setup)
    try:
        result, held = solve(g, options=lazy, **options)
    finally:
        g.close()
    return result, held, setup


def lazy_map(mln, dbs: Sequence, queries=None, *, closed=(), open_=(), db_path=None,
             lazy: LazyOptions | None = None, **options):
    """Lazy MaxWalkSAT: ``(MapResult over registry atoms, held network, seconds
    spent setting up the evidence store)``."""
    from ..maxwalksat import DEFAULT_FLIPS, DEFAULT_TRIES

    options.setdefault("max_flips", DEFAULT_FLIPS)
    options.setdefault("max_tries", DEFAULT_TRIES)
    return _run("MaxWalkSAT", MAP_OPTIONS, lazy_maxwalksat, mln, dbs, queries, closed, open_, db_path, lazy, options)


def lazy_marginals(mln, dbs: Sequence, queries=None, *, closed=(), open_=(), db_path=None,
                   lazy: LazyOptions | None = None, **options):
    """Lazy MC-SAT: ``(MarginalResult over registry atoms, held network,
    seconds spent setting up the evidence store)``."""
    return _run("MC-SAT", MARGINAL_OPTIONS, lazy_mcsat, mln, dbs, queries, closed, open_, db_path, lazy, options)
