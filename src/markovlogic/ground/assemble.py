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


def canonical(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sort each row, drop repeated literals; returns (codes, lengths, tautology)."""
    if codes.shape[1] == 0:
        n = len(codes)
        return codes, np.zeros(n, np.int64), np.zeros(n, bool)
    c = np.sort(codes, axis=1)
    if c.shape[1] > 1:
        same = c[:, 1:] == c[:, :-1]
        taut = ((c[:, 1:] >> 1) == (c[:, :-1] >> 1)) & ~same & (c[:, 1:] != PAD)
        tautology = taut.any(axis=1)
        if same.any():
            c[:, 1:][same] = PAD
            c = np.sort(c, axis=1)
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
    Rows are grouped by length, so memory follows the real clause sizes.

    ``fold_units``: a soft unit clause ``!P`` whose complement ``P`` is also a
    soft unit clause joins it with negated coefficients
    (``w1 [P] + w2 [!P] = (w1 - w2) [P] + w2``; the constant ``w2`` goes to
    ``constant_score``), as Alchemy does. Scores differ by a constant only,
    and so do feature counts (gradients are unchanged).
    """
    stats = {"rows": 0, "tautologies": 0, "hard_violated_by_evidence": 0,
             "soft_false_by_evidence": 0, "soft_false_weight": 0.0, "merged": 0}
    rows = [r for r in rows if len(r)]
    if not rows:
        out = GroundClauses.empty()
        out.stats = stats
        return out
    n = sum(len(r) for r in rows)
    tmpl = np.empty(n, dtype=np.int32)
    param = np.full(n, -1, dtype=np.int32)
    coef = np.zeros(n, dtype=np.float64)
    lengths = np.empty(n, dtype=np.int64)
    taut = np.empty(n, dtype=bool)
    by_length: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    at = 0
    for r in rows:
        k = len(r)
        c, ln, tt = canonical(r.codes)
        lengths[at:at + k] = ln
        taut[at:at + k] = tt
        tmpl[at:at + k] = r.template
        if r.param is not None:
            param[at:at + k] = r.param
            coef[at:at + k] = r.coef
        live_local = ~tt & (ln > 0)
        for L in np.unique(ln[live_local]):
            sel = np.flatnonzero(live_local & (ln == L))
            by_length.setdefault(int(L), []).append((sel + at, c[sel, :L]))
        at += k
    hard = param < 0
    stats["rows"] = int(n)
    weight_of_row = np.zeros(n)
    if len(params):
        soft = ~hard
        weight_of_row[soft] = coef[soft] * params[param[soft]]
    constant = float(weight_of_row[taut].sum())
    stats["tautologies"] = int(taut.sum())
    empty = (lengths == 0) & ~taut
    stats["hard_violated_by_evidence"] = int((empty & hard).sum())
    stats["soft_false_by_evidence"] = int((empty & ~hard).sum())
    stats["soft_false_weight"] = float(weight_of_row[empty].sum())

    # ---- group equal rows, per length
    row_group = np.full(n, -1, dtype=np.int64)
    reps = []              # (L, first group id, codes of each group)
    n_groups = 0
    for L in sorted(by_length):
        parts = by_length.pop(L)
        idx = np.concatenate([p[0] for p in parts])
        block = np.concatenate([p[1] for p in parts]) if len(parts) > 1 else parts[0][1]
        order, gid = _group_rows(block)
        row_group[idx[order]] = gid + n_groups
        starts = np.flatnonzero(np.r_[True, gid[1:] != gid[:-1]])
        reps.append((L, n_groups, block[order[starts]]))
        n_groups += len(starts)
    live = np.flatnonzero(row_group >= 0)
    group_hard = np.zeros(n_groups, dtype=bool)
    group_hard[row_group[live[hard[live]]]] = True
    sign = np.ones(n, dtype=np.float64)

    # ---- fold unit clauses: w1 [P] + w2 [!P] = (w1 - w2) [P] + w2 (Alchemy does this)
    stats["units_folded"] = 0
    if fold_units and reps and reps[0][0] == 1:
        _, g0, unit_codes = reps[0]
        ucodes = unit_codes[:, 0]
        soft = ~group_hard[g0:g0 + len(ucodes)]
        order_u = np.argsort(ucodes)
        sorted_codes = ucodes[order_u]
        neg = np.flatnonzero(((ucodes & 1) == 1) & soft)
        pos = np.searchsorted(sorted_codes, ucodes[neg] - 1)
        pos = np.minimum(pos, len(sorted_codes) - 1)
        partner = order_u[pos]
        ok = (sorted_codes[pos] == ucodes[neg] - 1) & soft[partner]
        if ok.any():
            moved = np.full(n_groups, -1, dtype=np.int64)
            moved[g0 + neg[ok]] = g0 + partner[ok]
            rows_moved = live[moved[row_group[live]] >= 0]
            constant += float(weight_of_row[rows_moved].sum())
            sign[rows_moved] = -1.0
            row_group[rows_moved] = moved[row_group[rows_moved]]
            stats["units_folded"] = int(ok.sum())
    # compact the groups that still have rows; clause ids by first occurrence
    present = np.zeros(n_groups, dtype=bool)
    present[row_group[live]] = True
    first_row = np.full(n_groups, n, dtype=np.int64)
    np.minimum.at(first_row, row_group[live], live)
    kept_groups = np.flatnonzero(present)
    order = np.argsort(first_row[kept_groups], kind="stable")
    n_clauses = len(kept_groups)
    clause_of_group = np.full(n_groups, -1, dtype=np.int64)
    clause_of_group[kept_groups[order]] = np.arange(n_clauses)
    clause_of_row = clause_of_group[row_group[live]]
    stats["merged"] = int(len(live) - n_clauses - stats["units_folded"])

    # ---- literals (CSR in clause order)
    clens = np.zeros(n_clauses, dtype=np.int64)
    for L, g0, codes_L in reps:
        cids = clause_of_group[g0:g0 + len(codes_L)]
        clens[cids[cids >= 0]] = L
    clause_start = np.zeros(n_clauses + 1, dtype=np.int64)
    np.cumsum(clens, out=clause_start[1:])
    flat = np.empty(int(clause_start[-1]), dtype=np.int32)
    for L, g0, codes_L in reps:
        cids = clause_of_group[g0:g0 + len(codes_L)]
        keep = cids >= 0
        pos = clause_start[cids[keep]][:, None] + np.arange(L)[None, :]
        flat[pos.reshape(-1)] = codes_L[keep].reshape(-1)
    lit_atom = (flat >> 1).astype(np.int32)
    lit_positive = (flat & 1) == 0

    # ---- hard flags, templates
    is_hard = np.zeros(n_clauses, dtype=bool)
    is_hard[clause_of_row[hard[live]]] = True
    template_id = tmpl[first_row[kept_groups[order]]].astype(np.int32)

    # ---- parameter entries: (clause, param) pairs with summed coefficients
    live_param = param[live]
    soft_live = live_param >= 0
    into_hard = soft_live & is_hard[clause_of_row]
    constant += float(weight_of_row[live][into_hard].sum())
    use = soft_live & ~into_hard
    n_params = max(len(params), int(live_param.max(initial=-1)) + 1, 1)
    key = clause_of_row[use] * n_params + live_param[use]
    ukey, inv = np.unique(key, return_inverse=True)
    summed = np.bincount(inv.reshape(-1), weights=(coef * sign)[live][use], minlength=len(ukey))
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
