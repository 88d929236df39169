"""Optimum-preserving presolve for exact MAP.

Fixes atoms whose value some optimal world is known to take, simplifies the
clauses accordingly, and returns a smaller problem over the remaining (free)
atoms, with a constant that makes scores add up exactly:

    score_full(fixed values + w) == presolved.const + score_reduced(w)

for *every* world ``w`` of the free atoms (the transformation itself is exact,
whatever the fixing rules); and the fixing rules keep an optimal world, so
``const + optimum(reduced) == optimum(full)`` and a bound on the reduced
problem plus ``const`` bounds the full one.

Two rules, applied to a fixpoint with a work queue (numba, O(literals)):

- **hard unit propagation**: a hard clause whose literals are all false but
  one forces that one true;
- **weighted dominance** (pure literals in the weighted sense): flipping atom
  ``a`` from 0 to 1 can gain at most ``up(a) = obj(a) + g1(a)`` in score, where
  ``obj(a)`` is the exact effect of its unit clauses and ``g1(a)`` sums |w|
  over its longer clauses in which the flip might help (positive weight and
  ``a`` positive, or negative weight and ``a`` negative). If ``up(a) <= 0``
  and no hard clause has ``a`` positive, then from any world with ``a = 1``
  setting ``a = 0`` loses nothing and breaks no hard clause: fix ``a = 0``.
  Symmetrically ``down(a) = -obj(a) + g0(a) <= 0`` (and no hard clause has
  ``a`` negative) fixes ``a = 1``. The bounds hold for every world, so fixings
  made one after another stay jointly optimal.

Atoms in exactly-one blocks are never fixed (the blocks pass through
unchanged). When propagation meets a conflict the presolve gives up
(``infeasible=True``) and the caller diagnoses the original problem.

The simplified clauses: clauses satisfied by a fixed atom are dropped (their
weight goes into ``const``); false literals are removed; a soft clause left
with one literal becomes part of its atom's unit weight; identical clauses
(same literals) are merged by adding their weights.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numba as nb
import numpy as np

from .kernels_state import SatArrays, normalise_clauses


@dataclass
class Presolved:
    """A presolved problem: the reduced clauses over the free atoms and the
    way back to the full world."""

    n_atoms: int               # atoms of the original problem
    value: np.ndarray          # int8[n_atoms]: fixed value (0/1) or -1 (free)
    free: np.ndarray           # int64[n_free]: original id of each free atom (local id = position)
    sat: SatArrays             # the reduced problem over local atom ids (its const_score is 0)
    const: float               # score of the original clauses not in ``sat``, same for every completion
    infeasible: bool = False   # propagation found hard clauses that cannot hold together
    stats: dict = field(default_factory=dict)

    def expand(self, local_world: np.ndarray) -> np.ndarray:
        """The full world: fixed values, and ``local_world`` on the free atoms."""
        world = self.value > 0
        world[self.free] = np.asarray(local_world, dtype=bool)
        return world


# ---------------------------------------------------------------- kernel

@nb.njit(cache=True)
def _enqueue(a, queued, queue, qt):
    if not queued[a]:
        queued[a] = True
        queue[qt % len(queue)] = a
        return qt + 1
    return qt


@nb.njit(cache=True)
def _kernel(n_atoms, clause_start, lit_atom, lit_positive, weight, is_hard,
            atom_lit_start, occ_clause, occ_positive, atom_block):
    """Propagate to a fixpoint. Returns ``(status, value, alive, obj, const,
    n_dominated, n_forced)``; ``status`` 1 means a hard conflict. ``alive[c]``
    says clause ``c`` (with its free literals) is still part of the problem;
    ``obj`` is the unit weight of each free atom (score(a=1) - score(a=0))."""
    n_clauses = len(clause_start) - 1
    value = np.full(n_atoms, -1, np.int8)
    nfree = np.empty(n_clauses, np.int64)
    alive = np.ones(n_clauses, np.bool_)
    obj = np.zeros(n_atoms)
    g1 = np.zeros(n_atoms)
    g0 = np.zeros(n_atoms)
    hpos = np.zeros(n_atoms, np.int64)
    hneg = np.zeros(n_atoms, np.int64)
    const = 0.0
    # queue of atoms to (re)examine; a ring buffer of n_atoms + 1 slots
    queue = np.empty(n_atoms + 1, np.int64)
    queued = np.zeros(n_atoms, np.bool_)
    qh = 0
    qt = 0
    n_dom = 0
    n_forced = 0
    # forced assignments (hard units): a stack with the value to set
    fstack = np.empty(n_clauses + 1, np.int64)
    fval = np.empty(n_clauses + 1, np.int8)
    ft = 0

    for c in range(n_clauses):
        s = clause_start[c]
        e = clause_start[c + 1]
        nfree[c] = e - s
        if is_hard[c]:
            if e - s == 1:
                fstack[ft] = lit_atom[s]
                fval[ft] = 1 if lit_positive[s] else 0
                ft += 1
            for i in range(s, e):
                if lit_positive[i]:
                    hpos[lit_atom[i]] += 1
                else:
                    hneg[lit_atom[i]] += 1
        else:
            w = weight[c]
            if e - s == 1:
                a = lit_atom[s]
                if lit_positive[s]:
                    obj[a] += w
                else:
                    obj[a] -= w
                    const += w
                alive[c] = False
            else:
                for i in range(s, e):
                    if lit_positive[i] == (w > 0):
                        g1[lit_atom[i]] += abs(w)
                    else:
                        g0[lit_atom[i]] += abs(w)
    for a in range(n_atoms):
        qt = _enqueue(a, queued, queue, qt)

    while True:
        # pick the next assignment: forced ones first, then dominance checks
        a = -1
        v = np.int8(-1)
        forced = False
        while ft > 0:
            ft -= 1
            x = fstack[ft]
            if value[x] == -1:
                if atom_block[x] >= 0:
                    continue            # block atoms are left to the solver
                a = x
                v = fval[ft]
                forced = True
                break
            if value[x] != fval[ft]:
                return 1, value, alive, obj, const, n_dom, n_forced
        if a < 0:
            while qh < qt:
                x = queue[qh % len(queue)]
                qh += 1
                queued[x] = False
                if value[x] != -1 or atom_block[x] >= 0:
                    continue
                if hpos[x] == 0 and obj[x] + g1[x] <= 0.0:
                    a = x
                    v = np.int8(0)
                    break
                if hneg[x] == 0 and g0[x] - obj[x] <= 0.0:
                    a = x
                    v = np.int8(1)
                    break
        if a < 0:
            break
        if forced:
            n_forced += 1
        else:
            n_dom += 1
        value[a] = v
        if v == 1:
            const += obj[a]
        obj[a] = 0.0
        for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
            c = occ_clause[k]
            if not alive[c]:
                continue
            s = clause_start[c]
            e = clause_start[c + 1]
            hard = is_hard[c]
            w = weight[c]
            if (occ_positive[k] and v == 1) or (not occ_positive[k] and v == 0):
                # satisfied: the clause leaves; its other free literals lose its pull
                alive[c] = False
                if not hard:
                    const += w
                for i in range(s, e):
                    x = lit_atom[i]
                    if x == a or value[x] != -1:
                        continue
                    if hard:
                        if lit_positive[i]:
                            hpos[x] -= 1
                        else:
                            hneg[x] -= 1
                    elif lit_positive[i] == (w > 0):
                        g1[x] -= abs(w)
                    else:
                        g0[x] -= abs(w)
                    qt = _enqueue(x, queued, queue, qt)
                continue
            # the literal is false
            nfree[c] -= 1
            if nfree[c] > 1:
                continue
            if nfree[c] == 0:
                if hard:
                    return 1, value, alive, obj, const, n_dom, n_forced
                alive[c] = False          # soft, every literal false: contributes nothing
                continue
            # one free literal left
            last = -1
            for i in range(s, e):
                if value[lit_atom[i]] == -1:
                    last = i
                    break
            x = lit_atom[last]
            if hard:
                fstack[ft] = x
                fval[ft] = 1 if lit_positive[last] else 0
                ft += 1
                continue
            # a soft clause becomes a unit on x
            alive[c] = False
            if lit_positive[last] == (w > 0):
                g1[x] -= abs(w)
            else:
                g0[x] -= abs(w)
            if lit_positive[last]:
                obj[x] += w
            else:
                obj[x] -= w
                const += w
            qt = _enqueue(x, queued, queue, qt)
    return 0, value, alive, obj, const, n_dom, n_forced


# ---------------------------------------------------------------- assembly

def _merge_identical(sizes: np.ndarray, codes: np.ndarray, weight: np.ndarray, is_hard: np.ndarray):
    """Merge clauses with identical literal lists (sorted codes, CSR by
    ``sizes``) and the same hardness: soft weights add up (a soft group whose
    weights add up to 0 is dropped), hard copies collapse into one. A soft
    clause is never merged into an equal hard one, so that scores stay equal
    for every world, feasible or not. Returns (keep mask: the clauses that
    represent their group, merged weight)."""
    n = len(sizes)
    rep = np.arange(n, dtype=np.int64)
    if n == 0:
        return np.zeros(0, bool), weight.copy()
    start = np.zeros(n + 1, np.int64)
    np.cumsum(sizes, out=start[1:])
    for k in np.unique(sizes).tolist():
        ids = np.flatnonzero(sizes == k)
        if len(ids) < 2:
            continue
        mat = np.concatenate([codes[start[ids][:, None] + np.arange(k)[None, :]],
                              is_hard[ids].astype(np.int64)[:, None]], axis=1)
        _, first, inverse = np.unique(mat, axis=0, return_index=True, return_inverse=True)
        rep[ids] = ids[first[inverse.ravel()]]
    merged_w = np.bincount(rep, weights=np.where(is_hard, 0.0, weight), minlength=n)
    keep = (rep == np.arange(n)) & (is_hard | (merged_w != 0.0))
    return keep, merged_w


def presolve(sat: SatArrays) -> Presolved:
    """Presolve ``sat`` (see module docstring). ``sat.const_score`` is not
    included in ``const`` (the caller adds it as before)."""
    n = sat.n_atoms
    status, value, alive, obj, const, n_dom, n_forced = _kernel(
        n, sat.clause_start.astype(np.int64), sat.lit_atom, sat.lit_positive, sat.weight, sat.is_hard,
        sat.atom_lit_start, sat.occ_clause, sat.occ_positive, sat.atom_block,
    )
    if status != 0:
        free = np.arange(n, dtype=np.int64)
        return Presolved(n, np.full(n, -1, np.int8), free, sat, 0.0, infeasible=True,
                         stats={"fixed": 0, "infeasible": True})
    free = np.flatnonzero(value < 0).astype(np.int64)
    local = np.full(n, -1, np.int64)
    local[free] = np.arange(len(free))

    # surviving clauses with their free literals only
    keep_lit = alive[sat.lit_clause] & (value[sat.lit_atom] < 0)
    clause_ids = np.flatnonzero(alive)
    sizes = np.bincount(sat.lit_clause[keep_lit], minlength=sat.n_clauses)[clause_ids]
    lit_atom = local[sat.lit_atom[keep_lit]]
    lit_pos = sat.lit_positive[keep_lit]
    weight = sat.weight[clause_ids]
    hard = sat.is_hard[clause_ids]
    orig = sat.orig_clause[clause_ids]

    # unit weights of the free atoms as unit clauses (one per atom, positive literal)
    unit_atoms = np.flatnonzero(obj[free] != 0.0)
    n_units = len(unit_atoms)

    # merge clauses that became identical (literals are in atom order within a clause)
    codes = (2 * lit_atom + (~lit_pos)).astype(np.int64)
    keep, merged_w = _merge_identical(sizes, codes, weight, hard)
    kept = np.flatnonzero(keep)
    kstart, kidx = _gather(sizes, kept)

    all_sizes = np.concatenate([sizes[kept], np.ones(n_units, np.int64)])
    clause_start = np.zeros(len(all_sizes) + 1, np.int64)
    np.cumsum(all_sizes, out=clause_start[1:])
    block_start, block_atoms = _local_blocks(sat, local)
    reduced = normalise_clauses(
        len(free),
        clause_start,
        np.concatenate([lit_atom[kidx], unit_atoms]).astype(np.int32),
        np.concatenate([lit_pos[kidx], np.ones(n_units, bool)]),
        np.concatenate([merged_w[kept], obj[free[unit_atoms]]]),
        np.concatenate([hard[kept], np.zeros(n_units, bool)]),
        block_start,
        block_atoms,
        orig_clause=np.concatenate([orig[kept], np.full(n_units, -1, np.int64)]),
    )
    stats = {
        "fixed": int(n - len(free)), "dominated": int(n_dom), "forced": int(n_forced),
        "free_atoms": int(len(free)), "clauses_in": int(sat.n_clauses), "clauses_out": int(reduced.n_clauses),
        "merged": int(len(clause_ids) - keep.sum()),
    }
    total = float(const) + reduced.const_score
    return Presolved(n, value, free, reduced._replace(const_score=0.0, const_cost=0.0), total, stats=stats)


def _gather(sizes: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    start = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=start[1:])
    from .kernels_state import _csr_gather

    return _csr_gather(start, rows)


def _local_blocks(sat: SatArrays, local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The blocks of ``sat`` over local atom ids (block atoms are never fixed)."""
    return sat.block_start.copy(), local[sat.block_atoms].astype(np.int32)
