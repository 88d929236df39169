"""Repeated and contradicting evidence rows, found by one compiled pass.

The rows of a predicate (an int32 matrix of constant ids) are bucketed by
their first argument (a counting sort, stable: each bucket in row order),
(the ranks of the values when they are sparse: the bucket array stays
about one entry per row), each bucket is sorted stably by the other arguments, and runs of equal rows
are scanned: the first row of a run (the smallest row index) is the atom's
first occurrence, the others are repeats, and a repeat whose truth differs
from the first occurrence's is a contradiction. Memory: an int32 row
permutation, one int64 bucket offset per first-argument value and a flag
per row (no packed key, no hash table); the result is what
``np.unique(key, return_index=True, return_inverse=True)`` gave before: the
first occurrences in row order and the smallest contradicting row with its
first occurrence.
"""

from __future__ import annotations

import numpy as np

from ..jit import kernel

_SMALL = 24          # buckets up to this size: insertion sort


@kernel(cache=True)
def _scan_rows(lead, args, truth, drop):
    """Mark repeats in ``drop`` (bool[n], zeros in); returns (number of
    repeats, smallest contradicting row or -1, its first occurrence).
    ``lead``: the bucket of each row (non-negative int32, equal when the
    first arguments are equal)."""
    n = args.shape[0]
    k = args.shape[1]
    bad_i = -1
    bad_j = -1
    if n < 2:
        return 0, bad_i, bad_j
    if k == 0:                                   # one atom: every row repeats row 0
        for i in range(1, n):
            drop[i] = True
            if bad_i < 0 and truth[i] != truth[0]:
                bad_i = i
                bad_j = 0
        return n - 1, bad_i, bad_j
    # ---- bucket by the first argument (stable counting sort)
    m = 0
    for i in range(n):
        if lead[i] > m:
            m = lead[i]
    end = np.zeros(m + 2, np.int64)
    for i in range(n):
        end[lead[i] + 1] += 1
    for v in range(m + 1):
        end[v + 1] += end[v]
    perm = np.empty(n, np.int32)
    for i in range(n):
        v = lead[i]
        perm[end[v]] = i
        end[v] += 1                              # afterwards end[v]: the end of bucket v
    biggest = 0
    lo = 0
    for v in range(m + 1):
        if end[v] - lo > biggest:
            biggest = end[v] - lo
        lo = end[v]
    scratch = np.empty(biggest if k > 1 and biggest > _SMALL else 0, np.int32)
    # ---- per bucket: sort stably by the other arguments, then scan runs
    n_drop = 0
    lo = 0
    for v in range(m + 1):
        hi = end[v]
        size = hi - lo
        if size >= 2:
            if k > 1:
                if size <= _SMALL:
                    for a in range(lo + 1, hi):
                        x = perm[a]
                        b = a - 1
                        while b >= lo and _compare(args, perm[b], x, k) > 0:
                            perm[b + 1] = perm[b]
                            b -= 1
                        perm[b + 1] = x
                else:
                    _merge_sort(args, perm, lo, hi, scratch, k)
            head = perm[lo]
            for a in range(lo + 1, hi):
                r = perm[a]
                if k > 1 and _compare(args, perm[a - 1], r, k) != 0:
                    head = r
                    continue
                drop[r] = True
                n_drop += 1
                if truth[r] != truth[head] and (bad_i < 0 or r < bad_i):
                    bad_i = r
                    bad_j = head
        lo = hi
    return n_drop, bad_i, bad_j


@kernel(cache=True)
def _compare(args, a, b, k):
    """-1/0/1: row a against row b over arguments 1..k-1."""
    for c in range(1, k):
        x = args[a, c]
        y = args[b, c]
        if x < y:
            return -1
        if x > y:
            return 1
    return 0


@kernel(cache=True)
def _merge_sort(args, perm, lo, hi, scratch, k):
    """Stable bottom-up merge sort of perm[lo:hi] by arguments 1..k-1."""
    n = hi - lo
    width = 1
    src_is_perm = True
    while width < n:
        for left in range(0, n, 2 * width):
            mid = min(left + width, n)
            right = min(left + 2 * width, n)
            i = left
            j = mid
            o = left
            while i < mid and j < right:
                if src_is_perm:
                    x = perm[lo + i]
                    y = perm[lo + j]
                else:
                    x = scratch[i]
                    y = scratch[j]
                if _compare(args, y, x, k) < 0:
                    val = y
                    j += 1
                else:
                    val = x
                    i += 1
                if src_is_perm:
                    scratch[o] = val
                else:
                    perm[lo + o] = val
                o += 1
            while i < mid:
                val = perm[lo + i] if src_is_perm else scratch[i]
                if src_is_perm:
                    scratch[o] = val
                else:
                    perm[lo + o] = val
                i += 1
                o += 1
            while j < right:
                val = perm[lo + j] if src_is_perm else scratch[j]
                if src_is_perm:
                    scratch[o] = val
                else:
                    perm[lo + o] = val
                j += 1
                o += 1
        src_is_perm = not src_is_perm
        width *= 2
    if not src_is_perm:
        for i in range(n):
            perm[lo + i] = scratch[i]


@kernel(cache=True)
def _kept_rows(drop, out):
    k = 0
    for i in range(len(drop)):
        if not drop[i]:
            out[k] = i
            k += 1
    return k


def scan_duplicates(args: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray | None, int, int]:
    """Repeated rows of an int32 matrix of non-negative ids: (the rows kept,
    first occurrences in row order as int32, or None when no row repeats;
    the smallest row whose truth differs from its atom's first occurrence,
    or -1; that first occurrence, or -1)."""
    n = len(truth)
    if n < 2:
        return None, -1, -1
    args = np.ascontiguousarray(args, dtype=np.int32)
    truth = np.ascontiguousarray(truth)
    drop = np.zeros(n, dtype=np.bool_)
    if args.shape[1]:
        lead = np.ascontiguousarray(args[:, 0])
        if len(lead) and int(lead.max()) >= 2 * n + 1024:   # sparse values: their ranks (one bucket array of ~n)
            lead = np.unique(lead, return_inverse=True)[1].reshape(-1).astype(np.int32)
    else:
        lead = np.zeros(0, np.int32)
    n_drop, bad_i, bad_j = _scan_rows(lead, args, truth, drop)
    if bad_i >= 0:
        return None, int(bad_i), int(bad_j)
    if n_drop == 0:
        return None, -1, -1
    keep = np.empty(n - int(n_drop), dtype=np.int32)
    _kept_rows(drop, keep)
    return keep, -1, -1
