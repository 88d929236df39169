"""MAP inference: one entry point over every method.

``solve_map(net, method, **options)`` dispatches to MaxWalkSAT
(:mod:`.maxwalksat`), the ILP (:mod:`.ilp`, HiGHS), CP-SAT (:mod:`.cpsat`,
OR-Tools) or enumeration (:mod:`.exact`), and to the samplers' MAP modes.
The exact methods solve connected components independently, packed into
groups by :mod:`.components`; the solvers import that module, and this one
imports the solvers.
"""

from __future__ import annotations

import numpy as np

from ..errors import OptionError
from ..ground.network import GroundNetwork
from .results import MapResult

def __getattr__(name: str):
    # re-exported from .components, imported on use (it loads the compiled kernels' module)
    if name in ("DEFAULT_GROUP_ATOMS", "Group", "component_groups"):
        from . import components

        return getattr(components, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


MAP_METHODS = ("ilp", "maxwalksat", "cpsat", "exact", "mh", "sgmp", "multitask-mh")


def solve_map(net: GroundNetwork, method: str = "ilp", **options) -> MapResult:
    """The most likely world of ``net`` by ``method``:

    - ``"ilp"``: exact, integer linear program solved by HiGHS
      (:func:`.ilp.ilp_map`; options ``max_seconds``, ``mip_gap``, ``threads``,
      ``presolve``, ``cliques``);
    - ``"cpsat"``: exact, OR-Tools CP-SAT (:func:`.cpsat.cpsat_map`; options
      ``max_seconds``, ``workers``, ``presolve``, ``cliques``, ``scale``);
    - ``"maxwalksat"``: local search (:func:`.maxwalksat.maxwalksat`; options
      ``max_flips``, ``max_tries``, ``noise``, ``seed``, ``max_seconds``,
      ``init``, ``target_cost``, ``group_mutex``);
    - ``"exact"``: enumeration of each component (``max_atoms``; components
      must be small). ``max_seconds`` is accepted and not enforced
      (enumeration of a component cannot be interrupted);
    - ``"mh"``: Metropolis-Hastings, the best world seen (:func:`.mh.mh_map`;
      the options of :class:`.mh.AtomMHOptions`);
    - ``"sgmp"``: Sparse Generalized Max-Product (:func:`.sgmp.sgmp_map`; the
      options of :class:`.sgmp.SGMPOptions`);
    - ``"multitask-mh"``: multi-task Metropolis-Hastings, the best sample
      (:func:`.multitask_mh.multitask_map`; the options of
      :class:`.multitask_mh.MultiTaskOptions`).
    """
    if method == "sgmp":
        from .sgmp import sgmp_map

        return sgmp_map(net, **options)
    if method == "multitask-mh":
        from .multitask_mh import multitask_map

        return multitask_map(net, **options)
    if method == "mh":
        from .mh import mh_map

        return mh_map(net, **options)
    if method == "maxwalksat":
        from .maxwalksat import maxwalksat

        return maxwalksat(net, **_only(options, method, "max_flips", "max_tries", "noise", "seed",
                                       "max_seconds", "init", "target_cost", "group_mutex"))
    if method == "ilp":
        opts = _only(options, method, "max_seconds", "mip_gap", "threads", "group_atoms", "presolve", "cliques")
        from .tiny import check_ilp_options, map_tiny

        check_ilp_options(**opts)
        # components small enough to enumerate: the same optimum without
        # importing scipy.optimize (infer/tiny.py)
        result = map_tiny(net)
        if result is not None:
            result.method = "ilp"
            return result
        from .ilp import ilp_map

        return ilp_map(net, **opts)
    if method == "cpsat":
        from .cpsat import cpsat_map

        return cpsat_map(net, **_only(options, method, "max_seconds", "workers", "group_atoms", "scale",
                                              "presolve", "cliques"))
    if method == "exact":
        from .exact import DEFAULT_MAX_ATOMS, exact_map

        opts = _only(options, method, "max_atoms", "max_seconds")
        max_seconds = opts.get("max_seconds")
        if max_seconds is not None and (not isinstance(max_seconds, (int, float)) or not max_seconds > 0):
            raise OptionError(f"max_seconds must be positive, got {max_seconds!r}")
        max_atoms = opts.get("max_atoms", DEFAULT_MAX_ATOMS)
        if not isinstance(max_atoms, (int, np.integer)) or isinstance(max_atoms, bool) or not 1 <= max_atoms <= 30:
            raise OptionError(f"max_atoms must be an integer in [1, 30], got {max_atoms!r}")
        return exact_map(net, max_atoms=int(max_atoms))
    raise OptionError(f"unknown MAP method {method!r}; choose one of {', '.join(MAP_METHODS)}")


def _only(options: dict, method: str, *allowed: str) -> dict:
    """``options`` if every key is one ``method`` takes, else an OptionError."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise OptionError(
            f"MAP method {method!r} does not take option(s) {', '.join(unknown)}; "
            f"it takes {', '.join(allowed)}"
        )
    return dict(options)
