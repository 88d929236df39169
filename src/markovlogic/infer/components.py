"""Connected components packed into solver-sized groups.

The exact MAP methods (:mod:`.ilp`, :mod:`.cpsat`) solve connected components
independently: :func:`component_groups` packs components into groups of a
few thousand atoms, so that thousands of tiny components make a handful of
solver models rather than thousands (each model has a fixed cost), while a
big component is still solved on its own. :mod:`.map` (the dispatcher)
imports the solvers, and the solvers import this module, never :mod:`.map`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kernels_state import SatArrays, clause_component, subset

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
