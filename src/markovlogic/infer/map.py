"""MAP inference: one entry point over every method.

``solve_map(net, method, **options)`` dispatches to MaxWalkSAT
(:mod:`.maxwalksat`), the ILP (:mod:`.ilp`, HiGHS), CP-SAT (:mod:`.cpsat`,
OR-Tools) or enumeration (:mod:`.exact`). The exact methods solve connected
components independently: :func:`component_groups` packs components into
groups of a few thousand atoms, so that thousands of tiny components make a
handful of solver models rather than thousands (each model has a fixed cost),
while a big component is still solved on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import OptionError
from ..ground.network import GroundNetwork
from .kernels_state import SatArrays, clause_component, subset
from .results import MapResult

MAP_METHODS = ("ilp", "maxwalksat", "cpsat", "exact", "mh", "sgmp", "multitask-mh")
DEFAULT_GROUP_ATOMS = 4_000


@dataclass
class Group:
    """Some whole connected components, as a renumbered sub-problem."""

    atoms: np.ndarray        # int64: network atom ids (local id = position)
    clauses: np.ndarray      # int64: clause ids in the parent SatArrays
    blocks: np.ndarray       # int64: block ids in the parent SatArrays
    n_components: int
    sat: SatArrays           # the sub-problem over local atom ids


def component_groups(
    sat: SatArrays, component: np.ndarray, max_atoms: int = DEFAULT_GROUP_ATOMS
) -> list[Group]:
    """Pack the connected components that have a clause or a block into groups
    of about ``max_atoms`` atoms (a bigger component forms its own group).
    Atoms in no clause and no block belong to no group: any value is optimal
    for them."""
    component = np.asarray(component, dtype=np.int64)
    n_comp = int(component.max()) + 1 if len(component) else 0
    clause_comp, block_comp = clause_component(sat, component)
    active = np.diff(sat.atom_lit_start) > 0
    active |= sat.atom_block >= 0
    if not active.any():
        return []
    atoms = np.flatnonzero(active)
    sizes = np.bincount(component[atoms], minlength=n_comp)
    used = sizes > 0
    # a component goes to the group in which its first atom falls, counting
    # atoms of used components in component order
    offset = np.cumsum(sizes) - sizes
    comp_group = np.where(used, offset // max(1, int(max_atoms)), -1)
    _, comp_group[used] = np.unique(comp_group[used], return_inverse=True)
    n_groups = int(comp_group.max()) + 1

    def split(ids: np.ndarray, group_of: np.ndarray) -> list[np.ndarray]:
        order = np.argsort(group_of, kind="stable")
        bounds = np.searchsorted(group_of[order], np.arange(n_groups + 1))
        return [ids[order[bounds[g]:bounds[g + 1]]] for g in range(n_groups)]

    atom_parts = split(atoms, comp_group[component[atoms]])
    clause_parts = split(np.arange(sat.n_clauses, dtype=np.int64), comp_group[clause_comp])
    block_parts = split(np.arange(sat.n_blocks, dtype=np.int64), comp_group[block_comp])
    comps_per_group = np.bincount(comp_group[used], minlength=n_groups)
    return [
        Group(
            atoms=a, clauses=c, blocks=b, n_components=int(k),
            sat=subset(sat, a, c, b),
        )
        for a, c, b, k in zip(atom_parts, clause_parts, block_parts, comps_per_group)
    ]


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
        from .ilp import ilp_map

        return ilp_map(net, **_only(options, method, "max_seconds", "mip_gap", "threads", "group_atoms",
                                          "presolve", "cliques"))
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
