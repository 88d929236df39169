"""Clause state shared by the local-search kernels (MaxWalkSAT, SampleSAT, ...).

Two pieces:

``SatArrays`` / :func:`sat_arrays`
    A normalised copy of a network's clauses, built once with numpy: duplicate
    literals removed, tautologies (``a v !a``) and zero-weight soft clauses
    dropped (their constant contribution kept in ``const_score`` /
    ``const_cost``), empty clauses dropped (an empty hard clause is counted in
    ``n_empty_hard``: it can never hold). After normalisation every atom occurs
    at most once per clause, which the incremental kernels rely on. It also
    carries the reverse index atom -> *literal* (not just clause), so a kernel
    knows the sign of the atom in each of its clauses, and ``lit_clause``;
    ``occ_clause`` / ``occ_positive`` repeat the clause and sign of each
    occurrence contiguously per atom, so a flip reads them sequentially
    (the kernels are bound by cache misses, not arithmetic).
    ``orig_clause`` maps each kept clause back to its id in the network.

numba kernels over those arrays
    :func:`init_counts` fills, for a world, ``count[c]`` (number of true
    literals of clause ``c``) and ``txor[c]`` (XOR of the atom ids of the true
    literals: when ``count[c] == 1`` it *is* the id of the one true atom, the
    "critical" atom whose flip would break the clause).
    :func:`flip_counts` flips one atom and updates both in O(degree).
    :func:`lit_true` tells whether a literal is true in a world.

Usage from another kernel (e.g. SampleSAT)::

    sat = sat_arrays(net)
    count = np.zeros(sat.n_clauses, np.int32); txor = np.zeros(sat.n_clauses, np.int32)
    init_counts(world, sat.clause_start, sat.lit_atom, sat.lit_positive, count, txor)
    flip_counts(a, world, sat.atom_lit_start, sat.occ_clause, sat.occ_positive,
                count, txor)   # world[a] is flipped in place

``world`` is a ``bool`` numpy array (numba treats it as ``boolean[:]``).
"""

from __future__ import annotations

from typing import NamedTuple

import numba as nb
import numpy as np

from ..ground.network import GroundNetwork


class SatArrays(NamedTuple):
    n_atoms: int
    clause_start: np.ndarray   # int64[n_clauses + 1]
    lit_atom: np.ndarray       # int32[n_lits]
    lit_positive: np.ndarray   # bool[n_lits]
    lit_clause: np.ndarray     # int32[n_lits]: clause of each literal
    weight: np.ndarray         # float64[n_clauses] (0 for hard)
    is_hard: np.ndarray        # bool[n_clauses]
    orig_clause: np.ndarray    # int64[n_clauses]: clause id in the network
    atom_lit_start: np.ndarray  # int64[n_atoms + 1]
    atom_lit: np.ndarray       # int32[n_lits]: literal ids, grouped by atom
    occ_clause: np.ndarray     # int32[n_lits]: lit_clause[atom_lit] (contiguous per atom)
    occ_positive: np.ndarray   # bool[n_lits]: lit_positive[atom_lit]
    block_start: np.ndarray    # int64[n_blocks + 1]
    block_atoms: np.ndarray    # int32[n_block_atoms]
    atom_block: np.ndarray     # int32[n_atoms], -1 if in no block
    const_score: float         # score of the dropped soft tautologies
    const_cost: float          # cost of dropped soft clauses that are always violated
    n_empty_hard: int          # hard clauses with no literal (never satisfiable)

    @property
    def n_clauses(self) -> int:
        return len(self.clause_start) - 1

    @property
    def n_blocks(self) -> int:
        return len(self.block_start) - 1


def _csr_gather(start: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """New CSR start array and the flat element indices of ``rows`` of a CSR."""
    rows = np.asarray(rows, dtype=np.int64)
    sizes = start[rows + 1] - start[rows]
    new_start = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(sizes, out=new_start[1:])
    total = int(new_start[-1])
    # element k of the output belongs to row r = rows[j]; its index is start[r] + (k - new_start[j])
    owner = np.repeat(np.arange(len(rows), dtype=np.int64), sizes)
    idx = start[rows][owner] + (np.arange(total, dtype=np.int64) - new_start[:-1][owner])
    return new_start, idx


def reverse_index(n_atoms: int, lit_atom: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CSR atom -> literal ids (stable by literal id)."""
    atom_lit = np.argsort(lit_atom, kind="stable").astype(np.int32)
    atom_lit_start = np.zeros(n_atoms + 1, dtype=np.int64)
    np.cumsum(np.bincount(lit_atom, minlength=n_atoms), out=atom_lit_start[1:])
    return atom_lit_start, atom_lit


@nb.njit(cache=True)
def _canonical(clause_start, lit_atom, weight, is_hard):
    """Every clause non-empty, its atoms strictly increasing (no repeated atom,
    no tautology), and hard or of non-zero weight."""
    for c in range(len(clause_start) - 1):
        s, e = clause_start[c], clause_start[c + 1]
        if e <= s or (not is_hard[c] and weight[c] == 0.0):
            return False
        for i in range(s + 1, e):
            if lit_atom[i] <= lit_atom[i - 1]:
                return False
    return True


@nb.njit(cache=True)
def _lit_clause(clause_start, n_lits):
    out = np.empty(n_lits, np.int32)
    for c in range(len(clause_start) - 1):
        for i in range(clause_start[c], clause_start[c + 1]):
            out[i] = c
    return out


@nb.njit(cache=True)
def _fill_reverse(lit_atom, start, out):
    fill = start[:-1].copy()
    for i in range(len(lit_atom)):
        a = lit_atom[i]
        out[fill[a]] = i
        fill[a] += 1


@nb.njit(cache=True)
def _occ_from_reverse(clause_start, lit_atom, lit_positive, r_start, r_clause, occ_positive):
    """Whether ``(r_start, r_clause)`` is the atom -> clause index of these
    clauses in clause order (what :func:`_fill_reverse` and ``lit_clause``
    give), filling ``occ_positive`` (each occurrence's sign) on the way,
    without the per-literal ``lit_clause`` / ``atom_lit`` arrays."""
    fill = r_start[:-1].copy()
    for c in range(len(clause_start) - 1):
        for i in range(clause_start[c], clause_start[c + 1]):
            a = lit_atom[i]
            k = fill[a]
            if k >= r_start[a + 1] or r_clause[k] != c:
                return False
            occ_positive[k] = lit_positive[i]
            fill[a] = k + 1
    return True


@nb.njit(cache=True)
def _same_occ(lit_clause, atom_lit, occ_clause):
    for k in range(len(atom_lit)):
        if lit_clause[atom_lit[k]] != occ_clause[k]:
            return False
    return True


def counting_reverse(n_atoms: int, lit_atom: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`reverse_index` by a counting sort (the same arrays, no argsort):
    the literals of each atom in CSR form, in O(literals)."""
    start = np.zeros(n_atoms + 1, dtype=np.int64)
    np.cumsum(np.bincount(lit_atom, minlength=n_atoms), out=start[1:])
    out = np.empty(len(lit_atom), dtype=np.int32)
    _fill_reverse(lit_atom, start, out)
    return start, out


def normalise_clauses(
    n_atoms: int,
    clause_start: np.ndarray,
    lit_atom: np.ndarray,
    lit_positive: np.ndarray,
    weight: np.ndarray,
    is_hard: np.ndarray,
    block_start: np.ndarray,
    block_atoms: np.ndarray,
    orig_clause: np.ndarray | None = None,
    reverse: tuple[np.ndarray, np.ndarray] | None = None,
    atom_block: np.ndarray | None = None,
    lean: bool = False,
) -> SatArrays:
    """Normalise raw CSR clauses into :class:`SatArrays` (see module docstring).

    When the clauses are already canonical (the grounder's), the arrays that
    need no change are shared, not copied: the literal arrays, ``weight``
    (when it is 0 on every hard clause, as a network's is), and with
    ``reverse`` (a network's ``(atom_clause_start, atom_clause)``, checked)
    the atom -> clause index as ``atom_lit_start`` / ``occ_clause``;
    ``atom_block`` likewise (about 17 bytes per clause less than copies of
    each; MaxWalkSAT drops ``lit_clause`` and ``orig_clause`` while it runs).

    ``lean``: for a caller whose kernels never read ``lit_clause``,
    ``atom_lit`` or ``orig_clause`` (MC-SAT's chain): when the clauses are
    canonical and ``reverse`` is their index, those three come back empty
    (``orig_clause`` empty meaning the identity) and are never built, 16
    bytes a literal and 8 a clause less at the set-up's peak."""
    clause_start = np.asarray(clause_start, dtype=np.int64)
    lit_atom = np.asarray(lit_atom, dtype=np.int32)
    lit_positive = np.asarray(lit_positive, dtype=bool)
    weight = np.asarray(weight, dtype=np.float64)
    is_hard = np.asarray(is_hard, dtype=bool)
    n_clauses = len(clause_start) - 1
    canonical = orig_clause is None and _canonical(clause_start, lit_atom, weight, is_hard)
    if canonical and lean and reverse is not None:
        r_start, r_clause = reverse
        if (r_start.dtype == np.int64 and r_clause.dtype == np.int32 and len(r_start) == n_atoms + 1
                and len(r_clause) == len(lit_atom)):
            occ_positive = np.empty(len(lit_atom), dtype=bool)
            if _occ_from_reverse(clause_start, lit_atom, lit_positive, r_start, r_clause, occ_positive):
                return _canonical_arrays(n_atoms, clause_start, lit_atom, lit_positive, weight, is_hard,
                                         block_start, block_atoms, atom_block, np.zeros(0, dtype=np.int32),
                                         np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64),
                                         r_start, r_clause, occ_positive)
            del occ_positive
    if canonical:
        # the grounder's clauses: nothing to drop or reorder, no copies of the
        # literal arrays and no sort (tens of bytes per clause less at scale)
        lit_clause = _lit_clause(clause_start, len(lit_atom))
        atom_lit_start = np.zeros(n_atoms + 1, dtype=np.int64)
        np.cumsum(np.bincount(lit_atom, minlength=n_atoms), out=atom_lit_start[1:])
        atom_lit = np.empty(len(lit_atom), dtype=np.int32)
        _fill_reverse(lit_atom, atom_lit_start, atom_lit)
        occ_clause = None
        if reverse is not None:
            r_start, r_clause = reverse
            if (r_start.dtype == np.int64 and r_clause.dtype == np.int32 and np.array_equal(r_start, atom_lit_start)
                    and len(r_clause) == len(atom_lit) and _same_occ(lit_clause, atom_lit, r_clause)):
                atom_lit_start, occ_clause = r_start, r_clause
        if occ_clause is None:
            occ_clause = lit_clause[atom_lit]
        return _canonical_arrays(n_atoms, clause_start, lit_atom, lit_positive, weight, is_hard, block_start,
                                 block_atoms, atom_block, lit_clause, atom_lit,
                                 np.arange(n_clauses, dtype=np.int64), atom_lit_start, occ_clause,
                                 lit_positive[atom_lit])
    if orig_clause is None:
        orig_clause = np.arange(n_clauses, dtype=np.int64)
    sizes = np.diff(clause_start)
    clause_of_lit = np.repeat(np.arange(n_clauses, dtype=np.int64), sizes)

    # sort literals by (clause, atom, sign) and find repeated atoms within a clause;
    # the grounder writes each clause's atoms in increasing order, and then
    # that sort is the identity (the lexsort costs ~15 ms per 300k literals)
    inner = np.ones(len(lit_atom), dtype=bool)
    inner[clause_start[:-1][sizes > 0]] = False              # first literal of each clause
    if bool((lit_atom[1:][inner[1:]] > lit_atom[:-1][inner[1:]]).all()):
        order = np.arange(len(lit_atom), dtype=np.int64)
    else:
        order = np.lexsort((lit_positive, lit_atom, clause_of_lit))
    c_s, a_s, p_s = clause_of_lit[order], lit_atom[order], lit_positive[order]
    same_atom = np.zeros(len(order), dtype=bool)
    same_atom[1:] = (c_s[1:] == c_s[:-1]) & (a_s[1:] == a_s[:-1])
    duplicate = same_atom.copy()
    duplicate[1:] &= p_s[1:] == p_s[:-1]
    tautology_lit = same_atom & ~duplicate
    tautological = np.zeros(n_clauses, dtype=bool)
    tautological[c_s[tautology_lit]] = True

    empty = sizes == 0
    soft = ~is_hard
    const_score = float(weight[soft & tautological].sum())
    # an empty soft clause is never satisfied: cost |w| if w > 0, nothing if w < 0
    const_cost = float(weight[soft & empty & (weight > 0)].sum()) + float(
        -weight[soft & tautological & (weight < 0)].sum()
    )
    n_empty_hard = int((is_hard & empty).sum())
    keep_clause = ~tautological & ~empty & (is_hard | (weight != 0.0))

    keep_lit = ~duplicate & keep_clause[c_s]
    c_k = c_s[keep_lit]
    kept_ids = np.flatnonzero(keep_clause)
    new_id = np.full(n_clauses, -1, dtype=np.int64)
    new_id[kept_ids] = np.arange(len(kept_ids))
    new_lit_clause = new_id[c_k].astype(np.int32)
    new_start = np.zeros(len(kept_ids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(new_lit_clause, minlength=len(kept_ids)), out=new_start[1:])
    new_lit_atom = a_s[keep_lit].astype(np.int32)
    atom_lit_start, atom_lit = reverse_index(n_atoms, new_lit_atom)

    block_start = np.asarray(block_start, dtype=np.int64)
    block_atoms = np.asarray(block_atoms, dtype=np.int32)
    atom_block = np.full(n_atoms, -1, dtype=np.int32)
    atom_block[block_atoms] = np.repeat(np.arange(len(block_start) - 1, dtype=np.int32), np.diff(block_start))
    return SatArrays(
        n_atoms=int(n_atoms),
        clause_start=new_start,
        lit_atom=new_lit_atom,
        lit_positive=np.ascontiguousarray(p_s[keep_lit]),
        lit_clause=new_lit_clause,
        weight=np.where(is_hard, 0.0, weight)[kept_ids],
        is_hard=is_hard[kept_ids],
        orig_clause=np.asarray(orig_clause, dtype=np.int64)[kept_ids],
        atom_lit_start=atom_lit_start,
        atom_lit=atom_lit,
        occ_clause=new_lit_clause[atom_lit],
        occ_positive=np.ascontiguousarray(p_s[keep_lit][atom_lit]),
        block_start=block_start,
        block_atoms=block_atoms,
        atom_block=atom_block,
        const_score=const_score,
        const_cost=const_cost,
        n_empty_hard=n_empty_hard,
    )


def _canonical_arrays(n_atoms, clause_start, lit_atom, lit_positive, weight, is_hard, block_start, block_atoms,
                      atom_block, lit_clause, atom_lit, orig_clause, atom_lit_start, occ_clause,
                      occ_positive) -> SatArrays:
    """:class:`SatArrays` of canonical clauses, sharing the given arrays."""
    block_start = np.asarray(block_start, dtype=np.int64)
    block_atoms = np.asarray(block_atoms, dtype=np.int32)
    if atom_block is None or atom_block.dtype != np.int32 or len(atom_block) != n_atoms:
        atom_block = np.full(n_atoms, -1, dtype=np.int32)
        atom_block[block_atoms] = np.repeat(np.arange(len(block_start) - 1, dtype=np.int32),
                                            np.diff(block_start))
    hard_weight = weight[is_hard]
    return SatArrays(
        n_atoms=int(n_atoms), clause_start=clause_start, lit_atom=lit_atom, lit_positive=lit_positive,
        lit_clause=lit_clause,
        weight=weight if not np.any(hard_weight) else np.where(is_hard, 0.0, weight), is_hard=is_hard,
        orig_clause=orig_clause, atom_lit_start=atom_lit_start, atom_lit=atom_lit,
        occ_clause=occ_clause, occ_positive=occ_positive, block_start=block_start,
        block_atoms=block_atoms, atom_block=atom_block, const_score=0.0, const_cost=0.0, n_empty_hard=0,
    )


def sat_arrays(net: GroundNetwork, lean: bool = False) -> SatArrays:
    """The normalised clause arrays of a whole network (``lean``: see
    :func:`normalise_clauses`)."""
    return normalise_clauses(
        net.n_atoms, net.clause_start, net.lit_atom, net.lit_positive, net.weight,
        net.is_hard, net.block_start, net.block_atoms,
        reverse=(net.atom_clause_start, net.atom_clause), atom_block=net.atom_block, lean=lean,
    )


def subset(sat: SatArrays, atoms: np.ndarray, clauses: np.ndarray, blocks: np.ndarray) -> SatArrays:
    """The part of ``sat`` over ``atoms`` (renumbered 0..len-1 in the given
    order), keeping ``clauses`` and ``blocks`` (which must only mention those
    atoms: e.g. a union of connected components). Constants are not carried
    over (they belong to the whole network)."""
    atoms = np.asarray(atoms, dtype=np.int64)
    local = np.full(sat.n_atoms, -1, dtype=np.int64)
    local[atoms] = np.arange(len(atoms))
    cstart, lidx = _csr_gather(sat.clause_start, clauses)
    bstart, bidx = _csr_gather(sat.block_start, blocks)
    lit_atom = local[sat.lit_atom[lidx]].astype(np.int32)
    block_atoms = local[sat.block_atoms[bidx]].astype(np.int32)
    clauses = np.asarray(clauses, dtype=np.int64)
    lit_clause = np.repeat(np.arange(len(clauses), dtype=np.int32), np.diff(cstart))
    atom_lit_start, atom_lit = reverse_index(len(atoms), lit_atom)
    atom_block = np.full(len(atoms), -1, dtype=np.int32)
    atom_block[block_atoms] = np.repeat(np.arange(len(blocks), dtype=np.int32), np.diff(bstart))
    return SatArrays(
        n_atoms=len(atoms),
        clause_start=cstart,
        lit_atom=lit_atom,
        lit_positive=sat.lit_positive[lidx],
        lit_clause=lit_clause,
        weight=sat.weight[clauses],
        is_hard=sat.is_hard[clauses],
        orig_clause=sat.orig_clause[clauses],
        atom_lit_start=atom_lit_start,
        atom_lit=atom_lit,
        occ_clause=lit_clause[atom_lit],
        occ_positive=sat.lit_positive[lidx][atom_lit],
        block_start=bstart,
        block_atoms=block_atoms,
        atom_block=atom_block,
        const_score=0.0,
        const_cost=0.0,
        n_empty_hard=0,
    )


def permute_clauses(sat: SatArrays, order: np.ndarray) -> SatArrays:
    """``sat`` with its clauses in ``order`` (atoms and blocks unchanged)."""
    order = np.asarray(order, dtype=np.int64)
    start, idx = _csr_gather(sat.clause_start, order)
    lit_atom = sat.lit_atom[idx]
    lit_positive = sat.lit_positive[idx]
    lit_clause = np.repeat(np.arange(len(order), dtype=np.int32), np.diff(start))
    atom_lit_start, atom_lit = reverse_index(sat.n_atoms, lit_atom)
    return sat._replace(
        clause_start=start, lit_atom=lit_atom, lit_positive=lit_positive, lit_clause=lit_clause,
        weight=sat.weight[order], is_hard=sat.is_hard[order], orig_clause=sat.orig_clause[order],
        atom_lit_start=atom_lit_start, atom_lit=atom_lit,
        occ_clause=lit_clause[atom_lit], occ_positive=lit_positive[atom_lit],
    )


def local_clause_order(sat: SatArrays) -> SatArrays:
    """Clauses sorted by (smallest atom, largest atom): the clauses of an atom
    then sit close together in memory, which speeds up flips by 15-25 % on
    networks of 150k clauses (fewer cache misses)."""
    if sat.n_clauses < 2:
        return sat
    starts = sat.clause_start[:-1]
    lo = np.minimum.reduceat(sat.lit_atom, starts)
    hi = np.maximum.reduceat(sat.lit_atom, starts)
    return permute_clauses(sat, np.lexsort((hi, lo)))


def atom_components(sat: SatArrays) -> tuple[np.ndarray, int]:
    """Connected components of the atoms of ``sat`` (clauses and blocks link
    their atoms): ``(component id per atom (int32), number of components)``."""
    from ..ground.kernels import components

    # the compiled union-find (one int per atom) numbers components by their smallest atom, as scipy's
    # connected_components did over a sparse graph that took some 80 bytes per clause to build
    labels, k = components(sat.n_atoms, sat.clause_start, sat.lit_atom, sat.block_start, sat.block_atoms)
    return labels.astype(np.int32, copy=False), int(k)


def clause_component(sat: SatArrays, component: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Component id of each (non-empty) clause and each block of ``sat``."""
    comp = np.asarray(component)
    clause_comp = comp[sat.lit_atom[sat.clause_start[:-1]]] if sat.n_clauses else np.zeros(0, np.int32)
    block_comp = comp[sat.block_atoms[sat.block_start[:-1]]] if sat.n_blocks else np.zeros(0, np.int32)
    return clause_comp, block_comp


# ---------------------------------------------------------------- numba kernels

@nb.njit(cache=True, inline="always")
def lit_true(world, lit_atom, lit_positive, i):
    """Literal ``i`` is true in ``world``."""
    return world[lit_atom[i]] == lit_positive[i]


@nb.njit(cache=True, nogil=True)
def init_counts(world, clause_start, lit_atom, lit_positive, count, txor):
    """Fill ``count`` (true literals per clause) and ``txor`` (XOR of the ids of
    the atoms of the true literals) for ``world``."""
    n_clauses = len(clause_start) - 1
    for c in range(n_clauses):
        k = 0
        x = 0
        for i in range(clause_start[c], clause_start[c + 1]):
            if world[lit_atom[i]] == lit_positive[i]:
                k += 1
                x ^= lit_atom[i]
        count[c] = k
        txor[c] = x


@nb.njit(cache=True, nogil=True)
def flip_counts(a, world, atom_lit_start, occ_clause, occ_positive, count, txor):
    """Flip atom ``a`` in ``world`` and update ``count``/``txor`` of its clauses."""
    new = not world[a]
    world[a] = new
    for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
        c = occ_clause[k]
        if occ_positive[k] == new:
            count[c] += 1
        else:
            count[c] -= 1
        txor[c] ^= a
