"""Sparse distributional vectors shared by USP's MERGE candidates
(:mod:`.learn`) and question answering's verb similarity (:mod:`.kb`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp


def ppmi(counts: sp.spmatrix) -> sp.csr_matrix:
    """The positive pointwise mutual information of a count matrix (rows x
    features), each row L2-normalised (a row with no positive entry stays
    zero)."""
    m = sp.csr_matrix(counts, dtype=np.float64)
    m.sum_duplicates()
    total = m.sum()
    rs = np.asarray(m.sum(axis=1)).ravel()
    cs = np.asarray(m.sum(axis=0)).ravel()
    c = m.tocoo()
    pmi = np.log(c.data * total / (rs[c.row] * cs[c.col])) if c.nnz else np.zeros(0)
    pos = pmi > 0
    p = sp.csr_matrix((pmi[pos], (c.row[pos], c.col[pos])), shape=m.shape)
    norm = np.sqrt(np.asarray(p.multiply(p).sum(axis=1)).ravel())
    norm[norm == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / norm) @ p)


def nearest_pairs(ids: np.ndarray, scores: Callable[[int, int], np.ndarray], max_partners: int,
                  step: int = 512) -> list[tuple[int, int]]:
    """Each row's ``max_partners`` best-scoring partners as sorted pairs of
    ``ids``. ``scores(lo, hi)`` gives the dense score block of rows
    ``lo:hi`` against all rows, with a row against itself and every pair that
    is no candidate set to 0 (only positive scores pair); blocks of ``step``
    rows keep memory at ``step x rows``."""
    out: set[tuple[int, int]] = set()
    n = len(ids)
    for lo in range(0, n, step):
        s = scores(lo, min(lo + step, n))
        k = min(max_partners, s.shape[1])
        if k == 0:
            continue
        top = np.argpartition(-s, k - 1, axis=1)[:, :k] if k < s.shape[1] else \
            np.tile(np.arange(s.shape[1]), (s.shape[0], 1))
        ii, jj = np.nonzero(np.take_along_axis(s, top, axis=1) > 0)
        a = ids[lo + ii]
        b = ids[top[ii, jj]]
        out.update(zip(np.minimum(a, b).tolist(), np.maximum(a, b).tolist()))
    return sorted(out)
