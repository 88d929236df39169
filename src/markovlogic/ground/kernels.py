"""Compiled helpers for building large networks: connected components by
union-find and the atom -> clause reverse index by counting sort.

Both run in O(literals) time and memory; scipy's sparse-graph route and a
stable argsort need several times the memory of the literal arrays, which
matters at tens of millions of clauses.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _find(parent, a):
    root = a
    while parent[root] != root:
        root = parent[root]
    while parent[a] != root:
        nxt = parent[a]
        parent[a] = root
        a = nxt
    return root


@numba.njit(cache=True)
def _union_groups(parent, start, members):
    for g in range(len(start) - 1):
        s, e = start[g], start[g + 1]
        if e - s < 2:
            continue
        r0 = _find(parent, members[s])
        for i in range(s + 1, e):
            r = _find(parent, members[i])
            if r != r0:
                if r < r0:
                    parent[r0] = r
                    r0 = r
                else:
                    parent[r] = r0


@numba.njit(cache=True)
def _labels(parent):
    n = len(parent)
    label = np.full(n, -1, np.int32)
    out = np.empty(n, np.int32)
    k = 0
    for a in range(n):
        r = _find(parent, a)
        if label[r] < 0:
            label[r] = k
            k += 1
        out[a] = label[r]
    return out, k


def components(n_atoms: int, clause_start, lit_atom, block_start, block_atoms) -> tuple[np.ndarray, int]:
    """Connected components of the atom graph (clauses and blocks link their
    atoms); components are numbered by their smallest atom."""
    if n_atoms == 0:
        return np.zeros(0, dtype=np.int32), 0
    parent = np.arange(n_atoms, dtype=np.int64)
    _union_groups(parent, np.asarray(clause_start, np.int64), np.asarray(lit_atom, np.int64))
    if len(block_atoms):
        _union_groups(parent, np.asarray(block_start, np.int64), np.asarray(block_atoms, np.int64))
    labels, k = _labels(parent)
    return labels, int(k)


@numba.njit(cache=True)
def _reverse(n_atoms, clause_start, lit_atom, counts_start, out):
    fill = counts_start[:-1].copy()
    for c in range(len(clause_start) - 1):
        for i in range(clause_start[c], clause_start[c + 1]):
            a = lit_atom[i]
            out[fill[a]] = c
            fill[a] += 1


def reverse_index(n_atoms: int, clause_start, lit_atom) -> tuple[np.ndarray, np.ndarray]:
    """(atom_clause_start int64[n_atoms+1], atom_clause int32[n_lits]): the
    clauses of each atom, in clause order."""
    start = np.zeros(n_atoms + 1, dtype=np.int64)
    np.cumsum(np.bincount(lit_atom, minlength=n_atoms), out=start[1:])
    out = np.empty(len(lit_atom), dtype=np.int32)
    _reverse(n_atoms, np.asarray(clause_start, np.int64), np.asarray(lit_atom, np.int32), start, out)
    return start, out
