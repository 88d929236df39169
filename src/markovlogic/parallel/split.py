"""Cutting a ground network into independent parts, and putting answers back.

Connected components of a ground network share no clause and no block, so
MAP and marginals of each can be computed on its own and the answers
combined exactly: the world is the union of the parts' worlds, the score and
the bound are sums, the marginals are the parts' marginals. :func:`partition`
packs whole components into ``k`` parts of about equal work (largest first,
each to the lightest part so far; deterministic), :func:`subnetwork` builds a
part as a :class:`GroundNetwork` of its own (atoms renumbered, the parameter
vector shared, names left out: the solvers never read them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ground.network import GroundNetwork


@dataclass
class Part:
    """Some whole components of a network, as a network of their own."""

    atoms: np.ndarray          # int64: atom ids in the parent network (local id = position)
    net: GroundNetwork
    n_components: int


def component_work(net: GroundNetwork) -> np.ndarray:
    """Work per component: its literals plus its atoms (float64[n_components])."""
    comp = np.asarray(net.component, dtype=np.int64)
    n_comp = int(net.n_components)
    work = np.bincount(comp, minlength=n_comp).astype(np.float64)
    if net.n_clauses:
        first = net.lit_atom[np.asarray(net.clause_start[:-1], dtype=np.int64)[np.diff(net.clause_start) > 0]]
        sizes = np.diff(net.clause_start)
        work += np.bincount(comp[first], weights=sizes[sizes > 0].astype(np.float64), minlength=n_comp)
    return work


def balance(work: np.ndarray, k: int) -> np.ndarray:
    """Bin of each item for ``k`` bins of about equal total work: largest
    first, each to the lightest bin (ties: lowest bin). Bins are renumbered in
    order of first use, empty ones dropped."""
    n = len(work)
    if k <= 1 or n <= 1:
        return np.zeros(n, dtype=np.int64)
    order = np.argsort(-work, kind="stable")
    load = np.zeros(k)
    out = np.empty(n, dtype=np.int64)
    # a Python loop over the few heaviest items only: the rest (each lighter
    # than the mean load left) are dealt round-robin in vectorised blocks
    # after it, which keeps 100,000 tiny components cheap
    heavy = order[: min(n, 64 * k)]
    for i in heavy.tolist():
        b = int(np.argmin(load))
        out[i] = b
        load[b] += work[i]
    rest = order[len(heavy):]
    if len(rest):
        # fill the bins up in chunks of k, each chunk to the bins from lightest
        for s in range(0, len(rest), k):
            chunk = rest[s:s + k]
            bins = np.argsort(load, kind="stable")[: len(chunk)]
            out[chunk] = bins
            load[bins] += work[chunk]
    _, out = np.unique(out, return_inverse=True)
    return out.reshape(-1).astype(np.int64)


def largest_share(net: GroundNetwork) -> float:
    """The largest component's share of the work (1.0 for one component)."""
    work = component_work(net)
    total = float(work.sum())
    return float(work.max()) / total if total > 0 else 1.0


def partition(net: GroundNetwork, k: int) -> list[Part]:
    """Whole components of ``net`` in at most ``k`` parts of about equal work."""
    work = component_work(net)
    comp_part = balance(work, k)
    n_parts = int(comp_part.max()) + 1 if len(comp_part) else 0
    atom_part = comp_part[np.asarray(net.component, dtype=np.int64)]
    order = np.argsort(atom_part, kind="stable")
    bounds = np.searchsorted(atom_part[order], np.arange(n_parts + 1))
    parts = []
    for p in range(n_parts):
        atoms = order[bounds[p]:bounds[p + 1]].astype(np.int64)
        parts.append(Part(atoms=atoms, net=subnetwork(net, atoms), n_components=int((comp_part == p).sum())))
    return parts


def subnetwork(net: GroundNetwork, atoms: np.ndarray) -> GroundNetwork:
    """The network over ``atoms`` (sorted ids, a union of whole components):
    their clauses and blocks, atom ``atoms[i]`` renumbered ``i``. Parameters
    are shared (the weights stay those of ``net``); constant names are left
    out (``constants=()``): ``atom_args`` keeps the parent's ids."""
    atoms = np.asarray(atoms, dtype=np.int64)
    remap = np.full(net.n_atoms, -1, dtype=np.int64)
    remap[atoms] = np.arange(len(atoms))
    cs = np.asarray(net.clause_start, dtype=np.int64)
    sizes = np.diff(cs)
    inside = np.zeros(net.n_clauses, dtype=bool)
    nonempty = sizes > 0
    inside[nonempty] = remap[net.lit_atom[cs[:-1][nonempty]]] >= 0
    lit_keep = np.repeat(inside, sizes)
    new_cs = np.zeros(int(inside.sum()) + 1, dtype=np.int64)
    np.cumsum(sizes[inside], out=new_cs[1:])
    ps = np.asarray(net.param_start, dtype=np.int64)
    psizes = np.diff(ps)
    pkeep = np.repeat(inside, psizes)
    new_ps = np.zeros(len(new_cs), dtype=np.int64)
    np.cumsum(psizes[inside], out=new_ps[1:])
    bs = np.asarray(net.block_start, dtype=np.int64)
    bsizes = np.diff(bs)
    binside = np.zeros(net.n_blocks, dtype=bool)
    bnon = bsizes > 0
    binside[bnon] = remap[net.block_atoms[bs[:-1][bnon]]] >= 0
    new_bs = np.zeros(int(binside.sum()) + 1, dtype=np.int64)
    np.cumsum(bsizes[binside], out=new_bs[1:])
    comp = np.asarray(net.component, dtype=np.int64)[atoms]
    _, comp = np.unique(comp, return_inverse=True)
    comp = comp.reshape(-1).astype(np.int32)
    sub = GroundNetwork.from_arrays(
        n_atoms=len(atoms),
        clause_start=new_cs,
        lit_atom=remap[net.lit_atom[lit_keep]].astype(np.int32),
        lit_positive=net.lit_positive[lit_keep],
        is_hard=net.is_hard[inside],
        param_start=new_ps,
        param_index=net.param_index[pkeep],
        param_coef=net.param_coef[pkeep],
        params=net.params,
        param_info=net.param_info,
        block_start=new_bs,
        block_atoms=remap[net.block_atoms[np.repeat(binside, bsizes)]].astype(np.int32),
        template_id=net.template_id[inside],
        atom_pred=net.atom_pred[atoms],
        atom_args=net.atom_args[atoms],
        predicates=net.predicates,
        constants=(),
        is_query=net.is_query[atoms],
        truth=None if net.truth is None else net.truth[atoms],
        components=(comp, int(comp.max()) + 1 if len(comp) else 0),
    )
    # the parent's clause weights as they are (a reweighted or softened
    # network need not equal the sum of its parameters)
    object.__setattr__(sub, "weight", np.asarray(net.weight, dtype=np.float64)[inside])
    return sub


def seed_for(seed: int, index: int) -> int:
    """The seed of part or chain ``index`` (index 0 keeps ``seed``)."""
    if index == 0:
        return int(seed)
    return int(np.random.SeedSequence([int(seed), int(index)]).generate_state(1, dtype=np.uint32)[0])
