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

from ..errors import MarkovLogicError

PAD = np.iinfo(np.int32).max


@dataclass
class Rows:
    """Ground clause instances of one template, before merging."""

    codes: np.ndarray              # int32[R, W], PAD-padded (any order)
    template: int                  # template index (-1: generated, e.g. blocks)
    param: np.ndarray | None       # int32[R] parameter ids; None: hard
    coef: np.ndarray | float       # float64[R] or scalar: coefficient of the parameter

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
    net = _NETWORKS.get(w)
    if net is None:
        return np.sort(codes, axis=1)
    cols = [np.ascontiguousarray(codes[:, j]) for j in range(w)]
    for i, j in net:
        lo = np.minimum(cols[i], cols[j])
        np.maximum(cols[i], cols[j], out=cols[j])
        cols[i] = lo
    return np.stack(cols, axis=1)


def canonical(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort each row, drop repeated literals; returns (codes, lengths, tautology)."""
    if codes.shape[1] == 0:
        n = len(codes)
        return codes, np.zeros(n, np.int64), np.zeros(n, bool)
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
    lengths = (c != PAD).sum(axis=1)
    return c, lengths, tautology


def _group_rows(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Group equal rows of an int32 matrix: (order, group id per sorted row)."""
    n, L = block.shape
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    maxcode = int(block.max()) + 1
    bits = max(1, maxcode.bit_length())
    if bits * L <= 63:
        key = np.zeros(n, dtype=np.int64)
        for j in range(L):
            key = (key << bits) | block[:, j].astype(np.int64)
        order = np.argsort(key, kind="stable")
        k = key[order]
        new = np.empty(n, dtype=bool)
        new[0] = True
        new[1:] = k[1:] != k[:-1]
    else:
        order = np.lexsort(block.T[::-1])
        s = block[order]
        new = np.empty(n, dtype=bool)
        new[0] = True
        new[1:] = (s[1:] != s[:-1]).any(axis=1)
    return order, np.cumsum(new) - 1


def merge(rows: list[Rows], params: np.ndarray, fold_units: bool = False) -> GroundClauses:
    """Canonicalise and merge ground rows into CSR clauses.

    Constant rows are dropped and reported in ``stats``: tautologies and soft
    rows merged into hard clauses are true in every feasible world (their
    weight goes to ``constant_score``); empty rows are false (soft: weight
    reported as ``soft_false_weight``; hard: ``hard_violated_by_evidence``).
    Rows are grouped by length, so memory follows the real clause sizes;
    per-row bookkeeping is kept per batch (template) where it can be.

    ``fold_units``: a soft unit clause ``!P`` whose complement ``P`` is also a
    soft unit clause joins it with negated coefficients
    (``w1 [P] + w2 [!P] = (w1 - w2) [P] + w2``; the constant ``w2`` goes to
    ``constant_score``), as Alchemy does. Scores differ by a constant only,
    and so do feature counts (gradients are unchanged).
    """
    stats = {"rows": 0, "tautologies": 0, "hard_violated_by_evidence": 0, "hard_unit_conflicts": 0,
             "soft_false_by_evidence": 0, "soft_false_weight": 0.0, "merged": 0, "units_folded": 0}
    rows = [r for r in rows if len(r)]
    if not rows:
        out = GroundClauses.empty()
        out.stats = stats
        return out
    sizes = [len(r) for r in rows]
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    n = int(offsets[-1])
    idx_t = np.int32 if n < 2**31 - 1 else np.int64
    stats["rows"] = n
    constant = 0.0
    by_length: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    soft_w: list[np.ndarray | None] = []          # per batch: weight of each row (soft batches)
    for b, r in enumerate(rows):
        c, ln, tt = canonical(r.codes)
        at = int(offsets[b])
        empty = (ln == 0) & ~tt
        if r.param is not None:
            w = np.asarray(r.coef, dtype=np.float64) * params[r.param] if len(params) else np.zeros(len(r))
            w = np.broadcast_to(w, (len(r),))
            soft_w.append(w)
            constant += float(w[tt].sum())
            stats["soft_false_by_evidence"] += int(empty.sum())
            stats["soft_false_weight"] += float(w[empty].sum())
        else:
            soft_w.append(None)
            stats["hard_violated_by_evidence"] += int(empty.sum())
        stats["tautologies"] += int(tt.sum())
        live_local = ~tt & (ln > 0)
        if live_local.all() and len(np.unique(ln)) == 1:
            L = int(ln[0])
            by_length.setdefault(L, []).append((np.arange(at, at + len(r), dtype=idx_t), c[:, :L]))
            continue
        for L in np.unique(ln[live_local]):
            sel = np.flatnonzero(live_local & (ln == L))
            by_length.setdefault(int(L), []).append(((sel + at).astype(idx_t), c[sel, :L]))
        del c

    # ---- group equal rows, per length (stable: a group's first row is its smallest)
    row_group = np.full(n, -1, dtype=np.int64 if n >= 2**31 - 1 else np.int32)
    reps = []              # (L, first group id, codes of each group)
    firsts = []
    n_groups = 0
    for L in sorted(by_length):
        parts = by_length.pop(L)
        idx = np.concatenate([p[0] for p in parts]) if len(parts) > 1 else parts[0][0]
        block = np.concatenate([p[1] for p in parts]) if len(parts) > 1 else parts[0][1]
        del parts
        order, gid = _group_rows(block)
        sorted_idx = idx[order]
        row_group[sorted_idx] = gid + n_groups
        starts = np.flatnonzero(np.r_[True, gid[1:] != gid[:-1]])
        firsts.append(sorted_idx[starts].astype(np.int64))
        reps.append((L, n_groups, block[order[starts]]))
        n_groups += len(starts)
        del order, gid, sorted_idx, block, idx
    first_row = np.concatenate(firsts) if firsts else np.zeros(0, np.int64)
    group_hard = np.zeros(n_groups, dtype=bool)
    for b, r in enumerate(rows):
        if r.param is None:
            g = row_group[offsets[b]:offsets[b + 1]]
            group_hard[g[g >= 0]] = True

    # ---- hard unit clauses P and !P on the same atom: no world satisfies both
    stats["hard_unit_conflicts"] = 0
    if reps and reps[0][0] == 1:
        _, g0, unit_codes = reps[0]
        hard_units = unit_codes[group_hard[g0:g0 + len(unit_codes)], 0]
        stats["hard_unit_conflicts"] = int(np.isin(hard_units[(hard_units & 1) == 1] - 1, hard_units).sum())

    # ---- fold unit clauses: w1 [P] + w2 [!P] = (w1 - w2) [P] + w2 (Alchemy does this)
    present = np.ones(n_groups, dtype=bool)
    moved = None
    if fold_units and reps and reps[0][0] == 1:
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
            moved = np.full(n_groups, -1, dtype=np.int64)
            moved[src] = dst
            present[src] = False
            first_row[dst] = np.minimum(first_row[dst], first_row[src])
            stats["units_folded"] = int(ok.sum())
    kept_groups = np.flatnonzero(present)
    # clause order: by the first batch (template) that produced the clause,
    # then canonically (groups are sorted by length and literal codes). Not by
    # first row: DuckDB returns rows in a thread-dependent order, and the
    # network (hence a seeded search over it) must be the same on every run.
    first_batch = np.searchsorted(offsets, first_row[kept_groups], side="right") - 1
    order = np.lexsort((kept_groups, first_batch))
    n_clauses = len(kept_groups)
    clause_of_group = np.full(n_groups, -1, dtype=np.int64)
    clause_of_group[kept_groups[order]] = np.arange(n_clauses)
    if moved is not None:
        m = moved >= 0
        clause_of_group[m] = clause_of_group[moved[m]]
    n_live = int((row_group >= 0).sum())
    stats["merged"] = int(n_live - n_clauses - stats["units_folded"])

    # ---- literals (CSR in clause order)
    clens = np.zeros(n_clauses, dtype=np.int64)
    for L, g0, codes_L in reps:
        cids = clause_of_group[g0:g0 + len(codes_L)][present[g0:g0 + len(codes_L)]]
        clens[cids] = L
    clause_start = np.zeros(n_clauses + 1, dtype=np.int64)
    np.cumsum(clens, out=clause_start[1:])
    flat = np.empty(int(clause_start[-1]), dtype=np.int32)
    for L, g0, codes_L in reps:
        keep = present[g0:g0 + len(codes_L)]
        cids = clause_of_group[g0:g0 + len(codes_L)][keep]
        pos = clause_start[cids][:, None] + np.arange(L)[None, :]
        flat[pos.reshape(-1)] = codes_L[keep].reshape(-1)
    del reps
    lit_atom = (flat >> 1).astype(np.int32)
    lit_positive = (flat & 1) == 0
    del flat

    # ---- hard flags, templates
    is_hard = np.zeros(n_clauses, dtype=bool)
    is_hard[clause_of_group[group_hard & present]] = True
    first_sorted = first_row[kept_groups[order]]
    batch_of_clause = np.searchsorted(offsets, first_sorted, side="right") - 1
    template_id = np.array([r.template for r in rows], dtype=np.int32)[batch_of_clause]

    # ---- parameter entries: (clause, param) pairs with summed coefficients
    e_clause, e_param, e_coef = [], [], []
    for b, r in enumerate(rows):
        if r.param is None:
            continue
        g = row_group[offsets[b]:offsets[b + 1]]
        live = g >= 0
        cl = clause_of_group[g[live]]
        coef = np.broadcast_to(np.asarray(r.coef, dtype=np.float64), (len(r),))[live]
        if moved is not None:
            coef = np.where(moved[g[live]] >= 0, -coef, coef)
        into_hard = is_hard[cl]
        if into_hard.any():
            constant += float(soft_w[b][live][into_hard].sum())
        use = ~into_hard
        e_clause.append(cl[use])
        e_param.append(r.param[live][use])
        e_coef.append(coef[use])
    if moved is not None:   # the folded !P rows are true exactly when P is false: constant w2
        for b, r in enumerate(rows):
            if r.param is None:
                continue
            g = row_group[offsets[b]:offsets[b + 1]]
            live = g >= 0
            folded = moved[g[live]] >= 0
            constant += float(soft_w[b][live][folded].sum())
    n_params = max([len(params), 1] + [int(p.max(initial=-1)) + 1 for p in e_param])
    if e_clause:
        key = np.concatenate(e_clause) * n_params + np.concatenate(e_param)
        ukey, inv = np.unique(key, return_inverse=True)
        summed = np.bincount(inv.reshape(-1), weights=np.concatenate(e_coef), minlength=len(ukey))
    else:
        ukey, summed = np.zeros(0, np.int64), np.zeros(0)
    entry_clause = ukey // n_params
    param_index = (ukey % n_params).astype(np.int32)
    param_start = np.searchsorted(entry_clause, np.arange(n_clauses + 1)).astype(np.int64)
    return GroundClauses(
        clause_start=clause_start,
        lit_atom=lit_atom,
        lit_positive=lit_positive,
        is_hard=is_hard,
        template_id=template_id,
        param_start=param_start,
        param_index=param_index,
        param_coef=summed.astype(np.float64),
        constant_score=constant,
        stats=stats,
    )


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
