"""Ground rows (as they come out of DuckDB) -> canonical, merged clauses in CSR.

A literal is coded as one int32: ``2 * atom + (1 if negative else 0)``; a
clause is a row of codes padded with ``PAD``. Canonical form: codes sorted,
duplicates removed; a row holding both codes of one atom is a tautology.
Rows equal after canonicalisation are one ground clause: their weight
entries are summed in the parameter CSR (Alchemy merges duplicates too).
Everything here is numpy over whole arrays; no Python loop runs per clause.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..jit import kernel
from ..errors import MarkovLogicError

PAD = np.iinfo(np.int32).max


@dataclass
class Rows:
    """Ground clause instances of one template, before merging."""

    codes: np.ndarray              # int32[R, W], PAD-padded (any order)
    template: int                  # template index (-1: generated, e.g. blocks)
    param: np.ndarray | None       # int32[R] parameter ids; None: hard
    coef: np.ndarray | float       # float64[R] or scalar: coefficient of the parameter
    dropped: dict | None = None    # rows the grounder dropped already: rows, tautologies, empty, weight

    def __len__(self) -> int:
        return len(self.codes)


@dataclass
class GroundClauses:
    """Merged ground clauses (CSR) over registry atom ids."""

    clause_start: np.ndarray
    lit_atom: np.ndarray
    lit_positive: np.ndarray
    is_hard: np.ndarray
    template_id: np.ndarray
    param_start: np.ndarray
    param_index: np.ndarray
    param_coef: np.ndarray
    constant_score: float = 0.0
    stats: dict = field(default_factory=dict)

    @property
    def n_clauses(self) -> int:
        return len(self.clause_start) - 1

    @classmethod
    def empty(cls) -> "GroundClauses":
        z64 = np.zeros(1, np.int64)
        return cls(z64, np.zeros(0, np.int32), np.zeros(0, bool), np.zeros(0, bool),
                   np.zeros(0, np.int32), z64.copy(), np.zeros(0, np.int32), np.zeros(0))

    def codes(self) -> tuple[np.ndarray, np.ndarray]:
        """(clause of each literal, literal code), for set comparisons."""
        clause = np.repeat(np.arange(self.n_clauses), np.diff(self.clause_start))
        return clause, 2 * self.lit_atom.astype(np.int64) + (~self.lit_positive)


_NETWORKS = {
    2: [(0, 1)],
    3: [(0, 1), (1, 2), (0, 1)],
    4: [(0, 1), (2, 3), (0, 2), (1, 3), (1, 2)],
}


def block_pairs(block_start: np.ndarray, block_atoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair ``(a[i], b[i])`` of two atoms of one exactly-one block (the
    "no two values" clauses), vectorised per block size, sizes ascending."""
    sizes = np.diff(block_start)
    a_parts, b_parts = [], []
    for s in np.unique(sizes):
        if s < 2:
            continue
        which = np.flatnonzero(sizes == s)
        p, q = np.triu_indices(int(s), 1)
        a_parts.append(block_atoms[block_start[which][:, None] + p[None, :]].reshape(-1))
        b_parts.append(block_atoms[block_start[which][:, None] + q[None, :]].reshape(-1))
    if not a_parts:
        empty = np.zeros(0, dtype=block_atoms.dtype)
        return empty, empty.copy()
    return np.concatenate(a_parts), np.concatenate(b_parts)


def _sort_rows(codes: np.ndarray) -> np.ndarray:
    """Sort each row; narrow rows with a sorting network over columns
    (a few vectorised min/max passes instead of a per-row sort)."""
    w = codes.shape[1]
    if w == 1:
        return codes
    net = _NETWORKS.get(w)
    if net is None:
        return np.sort(codes, axis=1)
    # copies: the passes below write into the columns, and a column of a
    # one-row or Fortran-ordered array would be a view of the caller's codes
    cols = [np.array(codes[:, j], copy=True) for j in range(w)]
    for i, j in net:
        lo = np.minimum(cols[i], cols[j])
        np.maximum(cols[i], cols[j], out=cols[j])
        cols[i] = lo
    return np.stack(cols, axis=1)


def canonical(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort each row, drop repeated literals; returns (codes, lengths, tautology)."""
    if codes.shape[1] == 0:
        n = len(codes)
        return codes, np.zeros(n, np.int16), np.zeros(n, bool)
    c = _sort_rows(codes)
    if c.shape[1] > 1:
        same = c[:, 1:] == c[:, :-1]
        taut = ((c[:, 1:] >> 1) == (c[:, :-1] >> 1)) & ~same & (c[:, 1:] != PAD)
        tautology = taut.any(axis=1)
        if same.any():
            c[:, 1:][same] = PAD
            c = _sort_rows(c)
    else:
        tautology = np.zeros(len(c), bool)
    lengths = (c != PAD).sum(axis=1, dtype=np.int16 if c.shape[1] < 2**15 else np.int64)
    return c, lengths, tautology


def _group_rows(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group equal rows of an int32 matrix: (order, group id per sorted row).
    The order is stable, so a group's first row is its earliest."""
    n, L = block.shape
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int32)
    maxcode = int(block.max()) + 1
    bits = max(1, maxcode.bit_length())
    new = np.empty(n, dtype=bool)
    new[0] = True
    if bits * L <= 63:
        if L == 1:
            key = block[:, 0]
        else:
            key = block[:, 0].astype(np.int64)
            for j in range(1, L):
                key <<= bits
                key |= block[:, j]
        order = np.argsort(key, kind="stable")
        key = key[order]
        np.not_equal(key[1:], key[:-1], out=new[1:])
        del key
    else:
        order = np.lexsort(block.T[::-1])
        new[1:] = False
        for j in range(L):
            col = block[order, j]
            new[1:] |= col[1:] != col[:-1]
            del col
    gid = np.empty(n, dtype=np.int32 if n < 2**31 - 1 else np.int64)
    np.cumsum(new, out=gid)
    gid -= 1
    return order, gid


def _reduce_packed(block: np.ndarray, param: np.ndarray | None):
    """The distinct rows of an int32 matrix of literal codes with, per distinct
    row, its parameters and how many rows use each: ``(distinct codes sorted,
    entry row, entry parameter, entry count)`` (with ``param`` None: the
    distinct rows and the number of rows, as ``(distinct, None, None, None,
    n)``), from one in-place sort of packed keys; None when the codes and the
    parameter do not fit in 63 bits."""
    n, L = block.shape
    if n == 0:
        return None
    bits = max(1, (int(block.max()) + 1).bit_length())
    pbits = 0 if param is None else max(1, (int(param.max()) + 1).bit_length())
    if bits * L + pbits > 63:
        return None
    key = block[:, 0].astype(np.int64)
    for j in range(1, L):
        key <<= bits
        key |= block[:, j]
    if param is not None:
        key <<= pbits
        key |= param
    key.sort()
    codes, e_u, e_p, e_cnt = _packed_runs(key, L, bits, pbits, param is not None)
    return codes, e_u, e_p, e_cnt, n


@kernel(cache=True)
def _packed_runs(key, L, bits, pbits, with_param):
    """Distinct clauses and (clause, parameter) runs of sorted packed keys."""
    n = len(key)
    n_clause = 0
    n_entry = 0
    for i in range(n):
        if i == 0 or key[i] != key[i - 1]:
            n_entry += 1
            if i == 0 or (key[i] >> pbits) != (key[i - 1] >> pbits):
                n_clause += 1
    codes = np.empty((n_clause, L), np.int32)
    e_u = np.empty(n_entry if with_param else 0, np.int32)
    e_p = np.empty(n_entry if with_param else 0, np.int32)
    e_cnt = np.zeros(n_entry if with_param else 0, np.int32)
    mask = (np.int64(1) << bits) - 1
    pmask = (np.int64(1) << pbits) - 1
    c = -1
    e = -1
    for i in range(n):
        if i == 0 or key[i] != key[i - 1]:
            e += 1
            if i == 0 or (key[i] >> pbits) != (key[i - 1] >> pbits):
                c += 1
                k = key[i] >> pbits
                for j in range(L - 1, -1, -1):
                    codes[c, j] = k & mask
                    k >>= bits
            if with_param:
                e_u[e] = c
                e_p[e] = key[i] & pmask
        if with_param:
            e_cnt[e] += 1
    return codes, e_u, e_p, e_cnt


@kernel(cache=True)
def _scatter_literals(codes, keep, cids, clause_start, lit_atom, lit_positive):
    """Write the literal codes of kept groups at their clauses' places."""
    k = 0
    L = codes.shape[1]
    for g in range(codes.shape[0]):
        if not keep[g]:
            continue
        at = clause_start[cids[k]]
        k += 1
        for j in range(L):
            c = codes[g, j]
            lit_atom[at + j] = c >> 1
            lit_positive[at + j] = (c & 1) == 0


@kernel(cache=True)
def _entries_pass(fill_mode, u, p, cnt, coef, group_map, clause_of_group, is_hard, moved, params,
                  slots, p_slot, c_slot, k_slot):
    """One record of parameter entries: count them per clause (``fill_mode``
    False: ``slots`` are counts) or put them in their clause's slots (True:
    ``slots`` are the next free positions). Entries that land in hard clauses
    are left out; returns the weight of those and of folded ``!P`` rows (they
    become constants)."""
    hard_const = 0.0
    fold_const = 0.0
    scalar = len(coef) == 1
    for i in range(len(u)):
        g = group_map[u[i]]
        cl = clause_of_group[g]
        c = coef[0] if scalar else coef[i]
        w = c * params[p[i]] if len(params) else 0.0
        if is_hard[cl]:
            hard_const += w * cnt[i]
            continue
        folded = len(moved) > 0 and moved[g] >= 0
        if folded:
            fold_const += w * cnt[i]
            c = -c
        if fill_mode:
            j = slots[cl]
            p_slot[j] = p[i]
            c_slot[j] = c
            k_slot[j] = cnt[i]
            slots[cl] += 1
        else:
            slots[cl] += 1
    return hard_const, fold_const


@kernel(cache=True)
def _shift_right(a):
    for i in range(len(a) - 1, 0, -1):
        a[i] = a[i - 1]
    a[0] = 0


@kernel(cache=True)
def _sum_slots(start, p_slot, c_slot, k_slot):
    """Per clause (slots ``start[c]:start[c+1]``, in input order), the
    coefficients summed per parameter: each entry added ``count`` times, one
    by one, as a row-by-row sum does; parameters ascending. The result is
    written over the first slots of ``p_slot``/``c_slot``; returns
    (param_start, number of entries)."""
    n_clauses = len(start) - 1
    out_start = np.zeros(n_clauses + 1, np.int64)
    out_p = p_slot              # compacted in place: entry m is written after slot m is read
    out_c = c_slot
    m = 0
    for c in range(n_clauses):
        s, e = start[c], start[c + 1]
        for i in range(s + 1, e):          # stable insertion sort by parameter (few per clause)
            pv, cv, kv = p_slot[i], c_slot[i], k_slot[i]
            j = i - 1
            while j >= s and p_slot[j] > pv:
                p_slot[j + 1] = p_slot[j]
                c_slot[j + 1] = c_slot[j]
                k_slot[j + 1] = k_slot[j]
                j -= 1
            p_slot[j + 1] = pv
            c_slot[j + 1] = cv
            k_slot[j + 1] = kv
        i = s
        while i < e:
            pv = p_slot[i]
            total = 0.0
            while i < e and p_slot[i] == pv:
                for _ in range(k_slot[i]):
                    total += c_slot[i]
                i += 1
            out_p[m] = pv
            out_c[m] = total
            m += 1
        out_start[c + 1] = m
    return out_start, m


class Merger:
    """Canonicalises and merges ground rows into CSR clauses, one batch
    (template) at a time: :meth:`add` reduces a batch to its distinct clauses
    at once (so a template's rows are never all held beside the others'),
    :meth:`finish` merges the batches. See :func:`merge` for the semantics.

    Held between batches, per distinct clause of a batch: its literal codes,
    its group in the merge (int32) and one parameter entry (parameter,
    coefficient, multiplicity) per parameter it uses.
    """

    def __init__(self, params, fold_units: bool = False) -> None:
        # the parameter values, or the list they are appended to while the
        # batches are ground (read when a batch refers to a new one)
        self._source = params if isinstance(params, list) else None
        self._buffer = np.zeros(0)
        self.params = np.zeros(0) if self._source is not None else np.asarray(params, dtype=np.float64)
        self.fold_units = fold_units
        self.stats = {"rows": 0, "tautologies": 0, "hard_violated_by_evidence": 0, "hard_unit_conflicts": 0,
                      "soft_false_by_evidence": 0, "soft_false_weight": 0.0, "merged": 0, "units_folded": 0}
        self.constant = 0.0
        self.hard_false_templates: set[int] = set()     # hard templates with groundings false by evidence
        self.templates: list[int] = []
        self.hard: list[bool] = []
        self.blocks: dict[int, list[tuple[int, np.ndarray]]] = {}     # L -> [(batch, distinct codes sorted)]
        self.entries: list[tuple] = []          # (batch, L, part, distinct row, param, coef, count)
        self.n_live = 0

    @property
    def n_distinct(self) -> int:
        """Distinct clauses per batch so far (an upper bound of the merged clauses)."""
        return sum(len(c) for parts in self.blocks.values() for _, c in parts)

    def nbytes(self) -> int:
        n = sum(c.nbytes for parts in self.blocks.values() for _, c in parts)
        for e in self.entries:
            n += sum(a.nbytes for a in e[3:] if isinstance(a, np.ndarray))
        return n

    def _refresh(self, max_param: int = -1) -> None:
        src = self._source
        if src is None or (max_param < len(self.params) and max_param >= 0):
            return
        n = len(self.params)
        if len(src) > len(self._buffer):          # grow by doubling: linear time over all batches
            buf = np.empty(max(len(src), 2 * len(self._buffer)), dtype=np.float64)
            buf[:n] = self.params
            self._buffer = buf
        self._buffer[n:len(src)] = src[n:]
        self.params = self._buffer[:len(src)]

    def _weights(self, r: Rows, sel) -> np.ndarray:
        if len(r.param):
            self._refresh(int(r.param.max()))
        if not len(self.params):
            return np.zeros(len(sel) if not isinstance(sel, slice) else len(r))
        coef = r.coef if np.isscalar(r.coef) else np.asarray(r.coef, dtype=np.float64)[sel]
        return np.asarray(coef, dtype=np.float64) * self.params[r.param[sel]]

    def add(self, r: Rows) -> None:
        b = len(self.templates)
        self.templates.append(int(r.template))
        soft = r.param is not None
        self.hard.append(not soft)
        st = self.stats
        d = getattr(r, "dropped", None)
        if d:
            st["rows"] += int(d["rows"])
            st["tautologies"] += int(d["tautologies"])
            if soft:
                self.constant += float(d["weight"]) * d["tautologies"]
                st["soft_false_by_evidence"] += int(d["empty"])
                st["soft_false_weight"] += float(d["weight"]) * d["empty"]
            else:
                st["hard_violated_by_evidence"] += int(d["empty"])
                if d["empty"]:
                    self.hard_false_templates.add(int(r.template))
        n = len(r)
        if n == 0:
            return
        st["rows"] += n
        c, ln, tt = canonical(r.codes)
        empty = (ln == 0) & ~tt
        if soft:
            if tt.any():
                self.constant += float(self._weights(r, np.flatnonzero(tt)).sum())
            if empty.any():
                st["soft_false_by_evidence"] += int(empty.sum())
                st["soft_false_weight"] += float(self._weights(r, np.flatnonzero(empty)).sum())
        else:
            st["hard_violated_by_evidence"] += int(empty.sum())
            if empty.any():
                self.hard_false_templates.add(int(r.template))
        st["tautologies"] += int(tt.sum())
        live = ~tt & (ln > 0)
        del tt, empty
        lengths = np.unique(ln[live])
        scalar = np.isscalar(r.coef) or np.ndim(r.coef) == 0
        for L in lengths.tolist():
            sel = np.flatnonzero(live & (ln == L)) if len(lengths) > 1 or not live.all() else None
            block = c[:, :L] if sel is None else c[sel, :L]
            block = np.ascontiguousarray(block)
            if scalar or not soft:
                p = None if not soft else (r.param if sel is None else r.param[sel])
                packed = _reduce_packed(block, p)
                if packed is not None:        # one sort of packed (codes, parameter) keys, no row order kept
                    distinct, u, pe, cnt, n_rows = packed
                    del block
                    parts = self.blocks.setdefault(L, [])
                    parts.append((b, distinct))
                    self.n_live += n_rows
                    if soft:
                        self.entries.append((b, L, len(parts) - 1, u, pe, float(r.coef), cnt))
                    continue
            order, gid = _group_rows(block)
            starts = np.flatnonzero(np.r_[True, gid[1:] != gid[:-1]]) if len(gid) else np.zeros(0, np.int64)
            distinct = block[order[starts]]
            del block
            parts = self.blocks.setdefault(L, [])
            part = len(parts)
            parts.append((b, distinct))
            self.n_live += len(order)
            if not soft:
                continue
            u_of_row = np.empty(len(order), dtype=np.int32)
            u_of_row[order] = gid
            del order, gid
            p = r.param if sel is None else r.param[sel]
            if scalar:
                if len(p) and (p == p[0]).all():
                    cnt = np.bincount(u_of_row, minlength=len(distinct)).astype(np.int32)
                    self.entries.append((b, L, part, np.arange(len(distinct), dtype=np.int32),
                                         np.full(len(distinct), p[0], np.int32), float(r.coef), cnt))
                else:
                    n_p = int(p.max()) + 1
                    key = u_of_row.astype(np.int64) * n_p + p
                    uk, cnt = np.unique(key, return_counts=True)
                    del key
                    self.entries.append((b, L, part, (uk // n_p).astype(np.int32), (uk % n_p).astype(np.int32),
                                         float(r.coef), cnt.astype(np.int32)))
            else:
                coef = np.asarray(r.coef, dtype=np.float64)
                coef = coef if sel is None else coef[sel]
                self.entries.append((b, L, part, u_of_row, np.asarray(p, dtype=np.int32), coef,
                                     np.ones(len(u_of_row), np.int32)))
        del c, ln

    def finish(self) -> GroundClauses:
        st = self.stats
        if not self.blocks:
            out = GroundClauses.empty()
            out.constant_score = self.constant
            out.stats = st
            return out
        # ---- groups: distinct clauses over all batches, by length then codes
        reps: list = []                                      # (L, first group id, codes)
        group_of: dict[int, list[np.ndarray]] = {}          # L -> per part: group of each distinct row
        first_batch_parts, hard_parts = [], []
        n_groups = 0
        hard_batch = np.array(self.hard, dtype=bool)
        for L in sorted(self.blocks):
            parts = self.blocks.pop(L)
            if len(parts) == 1:
                b, codes = parts[0]
                group_of[L] = [np.arange(n_groups, n_groups + len(codes), dtype=np.int32)]
                first_batch_parts.append(np.full(len(codes), b, np.int32))
                hard_parts.append(np.full(len(codes), hard_batch[b], bool))
                reps.append((L, n_groups, codes))
                n_groups += len(codes)
                continue
            sizes = [len(c) for _, c in parts]
            batch_of = np.repeat(np.array([b for b, _ in parts], np.int32), sizes)
            allc = np.concatenate([c for _, c in parts])
            del parts
            order, gid = _group_rows(allc)
            starts = np.flatnonzero(np.r_[True, gid[1:] != gid[:-1]])
            g_of_row = np.empty(len(allc), dtype=np.int32)
            g_of_row[order] = gid + n_groups
            bounds = np.cumsum([0] + sizes)
            group_of[L] = [g_of_row[bounds[k]:bounds[k + 1]] for k in range(len(sizes))]
            first_batch_parts.append(batch_of[order[starts]])      # stable: the earliest batch first
            h = np.zeros(len(starts), bool)
            h[gid[hard_batch[batch_of[order]]]] = True
            hard_parts.append(h)
            del gid, batch_of
            reps.append((L, n_groups, allc[order[starts]]))
            n_groups += len(starts)
            del allc, order, starts
        first_batch = np.concatenate(first_batch_parts)
        group_hard = np.concatenate(hard_parts)
        del first_batch_parts, hard_parts

        # ---- hard unit clauses P and !P on the same atom: no world satisfies both
        if reps[0][0] == 1:
            _, g0, unit_codes = reps[0]
            hard_units = unit_codes[group_hard[g0:g0 + len(unit_codes)], 0]
            st["hard_unit_conflicts"] = int(np.isin(hard_units[(hard_units & 1) == 1] - 1, hard_units).sum())
            del hard_units

        # ---- fold unit clauses: w1 [P] + w2 [!P] = (w1 - w2) [P] + w2 (Alchemy does this)
        idx_t = np.int32 if n_groups < 2**31 - 1 else np.int64
        present = np.ones(n_groups, dtype=bool)
        moved = np.zeros(0, dtype=idx_t)
        if self.fold_units and reps[0][0] == 1:
            _, g0, unit_codes = reps[0]
            ucodes = unit_codes[:, 0]
            soft = ~group_hard[g0:g0 + len(ucodes)]
            order_u = np.argsort(ucodes)
            sorted_codes = ucodes[order_u]
            neg = np.flatnonzero(((ucodes & 1) == 1) & soft)
            pos = np.minimum(np.searchsorted(sorted_codes, ucodes[neg] - 1), len(sorted_codes) - 1)
            partner = order_u[pos]
            ok = (sorted_codes[pos] == ucodes[neg] - 1) & soft[partner]
            if ok.any():
                src, dst = g0 + neg[ok], g0 + partner[ok]
                moved = np.full(n_groups, -1, dtype=idx_t)
                moved[src] = dst
                present[src] = False
                first_batch[dst] = np.minimum(first_batch[dst], first_batch[src])
                st["units_folded"] = int(ok.sum())
            del ucodes, soft, order_u, sorted_codes, neg, pos, partner, ok
        # clause order: by the first batch (template) that produced the clause,
        # then canonically (groups are sorted by length and literal codes). Not by
        # row: DuckDB returns rows in a thread-dependent order, and the network
        # (hence a seeded search over it) must be the same on every run.
        kept_groups = np.flatnonzero(present).astype(idx_t)
        order = np.lexsort((kept_groups, first_batch[kept_groups]))
        n_clauses = len(kept_groups)
        clause_of_group = np.full(n_groups, -1, dtype=idx_t)
        clause_of_group[kept_groups[order]] = np.arange(n_clauses, dtype=idx_t)
        if len(moved):
            m = moved >= 0
            clause_of_group[m] = clause_of_group[moved[m]]
            del m
        st["merged"] = int(self.n_live - n_clauses - st["units_folded"])
        template_of_batch = np.array(self.templates, dtype=np.int32)
        template_id = template_of_batch[first_batch[kept_groups[order]]]
        is_hard = np.zeros(n_clauses, dtype=bool)
        is_hard[clause_of_group[group_hard & present]] = True
        del first_batch, kept_groups, order, group_hard

        # ---- literals (CSR in clause order)
        clause_start = np.zeros(n_clauses + 1, dtype=np.int64)
        for L, g0, codes_L in reps:
            cids = clause_of_group[g0:g0 + len(codes_L)][present[g0:g0 + len(codes_L)]]
            clause_start[cids + 1] = L
        np.cumsum(clause_start, out=clause_start)
        lit_atom = np.empty(int(clause_start[-1]), dtype=np.int32)
        lit_positive = np.empty(int(clause_start[-1]), dtype=bool)
        for k in range(len(reps)):
            L, g0, codes_L = reps[k]
            reps[k] = None
            keep = present[g0:g0 + len(codes_L)]
            cids = clause_of_group[g0:g0 + len(codes_L)][keep]
            _scatter_literals(codes_L, keep, cids, clause_start, lit_atom, lit_positive)
            del codes_L, keep, cids

        # ---- parameter entries: (clause, param) pairs with summed coefficients
        self._refresh()
        params = self.params
        records = []
        for b, L, part, u, p, coef, cnt in self.entries:
            records.append((u, np.asarray(p, np.int32), cnt, np.atleast_1d(np.asarray(coef, np.float64)),
                            group_of[L][part]))
        self.entries = []
        counts = np.zeros(n_clauses + 1, dtype=np.int64)
        dummy_p, dummy_c, dummy_k = np.zeros(0, np.int32), np.zeros(0), np.zeros(0, np.int32)
        for u, p, cnt, coef, gmap in records:
            hard_const, fold_const = _entries_pass(False, u, p, cnt, coef, gmap, clause_of_group, is_hard, moved,
                                                   params, counts[1:], dummy_p, dummy_c, dummy_k)
            self.constant += hard_const + fold_const
        np.cumsum(counts, out=counts)
        n_entries = int(counts[-1])
        p_slot = np.empty(n_entries, np.int32)
        c_slot = np.empty(n_entries, np.float64)
        k_slot = np.empty(n_entries, np.int32)
        for k in range(len(records)):          # counts[c] runs from the start of clause c to its end
            u, p, cnt, coef, gmap = records[k]
            records[k] = None
            _entries_pass(True, u, p, cnt, coef, gmap, clause_of_group, is_hard, moved, params,
                          counts[:-1], p_slot, c_slot, k_slot)
        del records
        _shift_right(counts)                    # back to the starts
        param_start, m = _sum_slots(counts, p_slot, c_slot, k_slot)
        del k_slot, counts
        param_index = p_slot if m == len(p_slot) else p_slot[:m].copy()
        param_coef = c_slot if m == len(c_slot) else c_slot[:m].copy()
        del p_slot, c_slot
        return GroundClauses(
            clause_start=clause_start,
            lit_atom=lit_atom,
            lit_positive=lit_positive,
            is_hard=is_hard,
            template_id=template_id,
            param_start=param_start,
            param_index=param_index,
            param_coef=param_coef,
            constant_score=self.constant,
            stats=st,
        )


def merge(rows: list[Rows], params: np.ndarray, fold_units: bool = False) -> GroundClauses:
    """Canonicalise and merge ground rows into CSR clauses.

    Constant rows are dropped and reported in ``stats``: tautologies and soft
    rows merged into hard clauses are true in every feasible world (their
    weight goes to ``constant_score``); empty rows are false (soft: weight
    reported as ``soft_false_weight``; hard: ``hard_violated_by_evidence``).
    Rows that the grounder dropped already (``Rows.dropped``) are counted the
    same way. Batches are reduced one at a time (:class:`Merger`).

    ``fold_units``: a soft unit clause ``!P`` whose complement ``P`` is also a
    soft unit clause joins it with negated coefficients
    (``w1 [P] + w2 [!P] = (w1 - w2) [P] + w2``; the constant ``w2`` goes to
    ``constant_score``), as Alchemy does. Scores differ by a constant only,
    and so do feature counts (gradients are unchanged).
    """
    m = Merger(params, fold_units=fold_units)
    for r in rows:
        m.add(r)
    return m.finish()

def distribute(
    n_rows: int,
    single_row: np.ndarray,
    single_code: np.ndarray,
    multi_row: np.ndarray,
    multi_codes: np.ndarray,
    max_product: int,
    what: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Clauses of ``OR_d (conjunction d)`` per row, by distribution.

    Each row's disjuncts are single literals (``single_row``/``single_code``)
    and conjunctions of several literals (``multi_row``/``multi_codes``,
    PAD-padded). ``(A ^ B) v C`` becomes ``(A v C) ^ (B v C)``: a row with
    multi-literal disjuncts of sizes s1, s2, ... yields s1*s2*... clauses.

    Returns (row of each clause, codes int32[C, W] PAD-padded, clauses per row).
    """
    sizes = (multi_codes != PAD).sum(axis=1) if len(multi_codes) else np.zeros(0, np.int64)
    order = np.argsort(multi_row, kind="stable")
    multi_row, multi_codes, sizes = multi_row[order], multi_codes[order], sizes[order]
    # clauses per row: product of multi sizes (checked in log space first)
    logk = np.zeros(n_rows)
    np.add.at(logk, multi_row, np.log2(np.maximum(sizes, 1)))
    if len(logk) and logk.max(initial=0) > np.log2(max_product) + 1e-9:
        r = int(np.argmax(logk))
        raise MarkovLogicError(
            f"{what}: an existential expands into {2 ** logk[r]:.0f} clauses for one grounding "
            f"(limit {max_product}); rewrite the formula with fewer literals per existential disjunct"
        )
    k_per_row = np.ones(n_rows, dtype=np.int64)
    np.multiply.at(k_per_row, multi_row, sizes.astype(np.int64))
    clause_row = np.repeat(np.arange(n_rows), k_per_row)
    n_clauses = len(clause_row)
    offsets = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(k_per_row, out=offsets[1:])
    k_local = np.arange(n_clauses) - offsets[clause_row]
    # literals: singles copied to every clause of their row; one literal per multi
    n_single = np.bincount(single_row, minlength=n_rows) if len(single_row) else np.zeros(n_rows, np.int64)
    n_multi = np.bincount(multi_row, minlength=n_rows) if len(multi_row) else np.zeros(n_rows, np.int64)
    width = int((n_single + n_multi).max(initial=0))
    codes = np.full((n_clauses, max(width, 1)), PAD, dtype=np.int32)
    # singles
    if len(single_row):
        so = np.argsort(single_row, kind="stable")
        s_row, s_code = single_row[so], single_code[so]
        s_start = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(n_single, out=s_start[1:])
        s_pos = np.arange(len(s_row)) - s_start[s_row]
        # every clause of the row gets every single literal
        rep = k_per_row[s_row]
        lit_idx = np.repeat(np.arange(len(s_row)), rep)
        local = np.arange(len(lit_idx)) - np.repeat(np.cumsum(rep) - rep, rep)
        cl = offsets[s_row[lit_idx]] + local
        codes[cl, s_pos[lit_idx]] = s_code[lit_idx]
    # multis: digit of the mixed-radix clause index
    if len(multi_row):
        m_start = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(n_multi, out=m_start[1:])
        m_pos = np.arange(len(multi_row)) - m_start[multi_row]
        # stride of multi d = product of sizes of later multis of the same row
        stride = np.ones(len(multi_row), dtype=np.int64)
        for j in range(int(n_multi.max(initial=0)) - 2, -1, -1):
            cur = np.flatnonzero(m_pos == j)
            nxt = cur + 1
            ok = (nxt < len(multi_row))
            ok[ok] &= multi_row[nxt[ok]] == multi_row[cur[ok]]
            stride[cur[ok]] = stride[nxt[ok]] * sizes[nxt[ok]]
        rep = k_per_row[multi_row]
        lit_idx = np.repeat(np.arange(len(multi_row)), rep)
        local = np.arange(len(lit_idx)) - np.repeat(np.cumsum(rep) - rep, rep)
        cl = offsets[multi_row[lit_idx]] + local
        digit = (k_local[cl] // stride[lit_idx]) % sizes[lit_idx]
        col = n_single[multi_row[lit_idx]] + m_pos[lit_idx]
        codes[cl, col] = multi_codes[lit_idx, digit]
    return clause_row, codes, k_per_row
