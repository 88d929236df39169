"""Optimum-preserving presolve for exact MAP.

Fixes atoms whose value some optimal world is known to take, simplifies the
clauses accordingly, and returns a smaller problem over the remaining (free)
atoms, with a constant that makes scores add up exactly:

    score_full(fixed values + w) == presolved.const + score_reduced(w)

for *every* world ``w`` of the free atoms (the transformation itself is exact,
whatever the fixing rules); and the fixing rules keep an optimal world, so
``const + optimum(reduced) == optimum(full)`` and a bound on the reduced
problem plus ``const`` bounds the full one.

Two rules, applied in rounds (numpy over all literals per round; a round
fixes every atom either rule fixes, up to ``MAX_ROUNDS`` rounds; tuffy/cse
and tuffy/class need 2-3):

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
from typing import NamedTuple

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


# ---------------------------------------------------------------- rounds

MAX_ROUNDS = 64     # stopping early only leaves more atoms free: still exact


class _State(NamedTuple):
    """What the clauses look like under a partial assignment ``value``."""

    open_: np.ndarray      # bool[n_clauses]: not satisfied by a fixed atom and some literal free
    nfree: np.ndarray      # int64[n_clauses]: free literals
    lit_live: np.ndarray   # bool[n_lits]: free literal of an open clause
    conflict: bool         # a hard clause has every literal false


def _state(sat: SatArrays, value: np.ndarray) -> _State:
    lv = value[sat.lit_atom]
    free = lv < 0
    true = ~free & (lv == sat.lit_positive)
    m = sat.n_clauses
    satisfied = np.bincount(sat.lit_clause, weights=true, minlength=m) > 0
    nfree = np.bincount(sat.lit_clause, weights=free, minlength=m).astype(np.int64)
    conflict = bool((sat.is_hard & ~satisfied & (nfree == 0)).any())
    open_ = ~satisfied & (nfree > 0)
    return _State(open_, nfree, free & open_[sat.lit_clause], conflict)


def _rounds(sat: SatArrays, max_rounds: int = MAX_ROUNDS):
    """Fix atoms in rounds: every round computes, for the current partial
    assignment, the hard clauses with one free literal left (forced) and the
    dominance bounds of every free atom, and fixes all of them at once (the
    bounds hold for every completion of the round's assignment, so fixing
    them together keeps an optimal world: flip them one by one in an optimal
    world, none loses score). Returns ``(value, state, n_dominated,
    n_forced)``, or ``None`` on a hard conflict."""
    n = sat.n_atoms
    value = np.full(n, -1, np.int8)
    lc, la, lp = sat.lit_clause, sat.lit_atom, sat.lit_positive
    hard_lit = sat.is_hard[lc]
    wl = sat.weight[lc]
    absw = np.abs(wl)
    helps_up = lp == (wl > 0)        # setting the atom to 1 can only help this clause
    movable = sat.atom_block < 0     # block atoms stay free
    n_dom = n_forced = 0
    for round_ in range(max_rounds + 1):
        st = _state(sat, value)
        if st.conflict:
            return None
        if round_ == max_rounds:
            break
        unit = st.nfree[lc] == 1
        hl = st.lit_live & hard_lit
        forced = hl & unit
        hpos = np.bincount(la[hl & lp], minlength=n)
        hneg = np.bincount(la[hl & ~lp], minlength=n)
        sl = st.lit_live & ~hard_lit
        ul = sl & unit
        obj = np.bincount(la[ul], weights=np.where(lp[ul], wl[ul], -wl[ul]), minlength=n)
        ml = sl & ~unit
        g1 = np.bincount(la[ml & helps_up], weights=absw[ml & helps_up], minlength=n)
        g0 = np.bincount(la[ml & ~helps_up], weights=absw[ml & ~helps_up], minlength=n)
        # forced values (block atoms excepted); both ways is a conflict
        f_true = np.bincount(la[forced & lp], minlength=n) > 0
        f_false = np.bincount(la[forced & ~lp], minlength=n) > 0
        if (f_true & f_false).any():
            return None
        f_true &= movable
        f_false &= movable
        free = (value < 0) & movable & ~f_true & ~f_false
        # (an atom forced one way never passes the dominance test the other way:
        # the forcing clause counts in hpos/hneg)
        to_false = free & (hpos == 0) & (obj + g1 <= 0.0)
        to_true = free & ~to_false & (hneg == 0) & (g0 - obj <= 0.0)
        if not (f_true.any() or f_false.any() or to_false.any() or to_true.any()):
            break
        n_forced += int(f_true.sum() + f_false.sum())
        n_dom += int(to_false.sum() + to_true.sum())
        value[f_false | to_false] = 0
        value[f_true | to_true] = 1
    return value, st, n_dom, n_forced


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


def presolve(sat: SatArrays, max_rounds: int = MAX_ROUNDS) -> Presolved:
    """Presolve ``sat`` (see module docstring). ``sat.const_score`` is not
    included in ``const`` (the caller adds it as before)."""
    n = sat.n_atoms
    out = _rounds(sat, max_rounds)
    if out is None:
        free = np.arange(n, dtype=np.int64)
        return Presolved(n, np.full(n, -1, np.int8), free, sat, 0.0, infeasible=True,
                         stats={"fixed": 0, "infeasible": True})
    value, st, n_dom, n_forced = out
    free = np.flatnonzero(value < 0).astype(np.int64)
    local = np.full(n, -1, np.int64)
    local[free] = np.arange(len(free))
    soft = ~sat.is_hard
    lc = sat.lit_clause

    # soft clauses satisfied by the fixed atoms are constant; soft clauses with
    # one free literal left become unit weights of their atom (as does a unit
    # soft clause of the input)
    lv = value[sat.lit_atom]
    satisfied = np.bincount(lc, weights=(lv >= 0) & (lv == sat.lit_positive), minlength=sat.n_clauses) > 0
    const = float(sat.weight[soft & satisfied].sum())
    unit_c = soft & st.open_ & (st.nfree == 1)
    ul = st.lit_live & unit_c[lc]
    wl = sat.weight[lc[ul]]
    pos = sat.lit_positive[ul]
    obj = np.bincount(sat.lit_atom[ul], weights=np.where(pos, wl, -wl), minlength=n)
    const += float(wl[~pos].sum())

    # surviving clauses with their free literals only
    alive = st.open_ & ~unit_c
    keep_lit = st.lit_live & alive[lc]
    clause_ids = np.flatnonzero(alive)
    sizes = np.bincount(lc[keep_lit], minlength=sat.n_clauses)[clause_ids]
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
    _, kidx = _gather(sizes, kept)

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
    total = const + reduced.const_score
    return Presolved(n, value, free, reduced._replace(const_score=0.0, const_cost=0.0), total, stats=stats)


def _gather(sizes: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    start = np.zeros(len(sizes) + 1, np.int64)
    np.cumsum(sizes, out=start[1:])
    from .kernels_state import _csr_gather

    return _csr_gather(start, rows)


def _local_blocks(sat: SatArrays, local: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The blocks of ``sat`` over local atom ids (block atoms are never fixed)."""
    return sat.block_start.copy(), local[sat.block_atoms].astype(np.int32)
