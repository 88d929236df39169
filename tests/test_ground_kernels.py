"""The compiled union-find and counting-sort kernels against scipy/numpy."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from markovlogic.ground.kernels import components, reverse_index
from markovlogic.ground.network import _components


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 40), st.integers(0, 60), st.integers(0, 5), st.integers(0, 2**31 - 1))
def test_kernels_match_reference(n_atoms, n_clauses, n_blocks, seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 4, n_clauses)
    clause_start = np.zeros(n_clauses + 1, np.int64)
    np.cumsum(sizes, out=clause_start[1:])
    lit_atom = rng.integers(0, n_atoms, int(clause_start[-1])).astype(np.int32)
    bsizes = rng.integers(1, 4, n_blocks)
    block_start = np.zeros(n_blocks + 1, np.int64)
    np.cumsum(bsizes, out=block_start[1:])
    block_atoms = rng.integers(0, n_atoms, int(block_start[-1])).astype(np.int32)
    got, k = components(n_atoms, clause_start, lit_atom, block_start, block_atoms)
    want, k2 = _components(n_atoms, clause_start, lit_atom, block_start, block_atoms)
    assert k == k2
    # same partition
    pairs = set(zip(got.tolist(), want.tolist()))
    assert len(pairs) == k
    start, clauses = reverse_index(n_atoms, clause_start, lit_atom)
    clause_of_lit = np.repeat(np.arange(n_clauses), sizes)
    order = np.argsort(lit_atom, kind="stable")
    assert np.array_equal(clauses, clause_of_lit[order])
    assert np.array_equal(start[1:], np.cumsum(np.bincount(lit_atom, minlength=n_atoms)))
