"""Similarity bins of Singla & Domingos' Cora entity-resolution MLNs.

The learned Cora MLN of Riedel's cutting-plane experiments
(``../shared/data/thebeast/cora-er-bibserv.mln``) reads, for each field
``F`` of ``Author``, ``Title``, ``Venue``, the predicates ``FScore0(x, y)``,
``FScore20``, ..., ``FScore100``: the TF-IDF similarity of the two field
strings falls in that bin. ``mln derive`` writes them from the word evidence
``HasWordF(x, word)`` (as in ``../shared/data/cora``) for every model that
declares such a family: binary term weights, inverse document frequency
``ln((1 + N) / (1 + df)) + 1`` over the ``N`` constants that have words (the
``cosine`` similarity of :mod:`markovlogic.ground.similarity`), cosine of the
two weight vectors; a pair gets the bin of the largest ``K`` with
``s >= K / 100`` (``Score100`` only for ``s >= 1 - 1e-9``: the same words).
Every ordered pair of constants with words, a constant with itself included
(``Score100``); constants without words get no bin. Vectorised: one sparse
matrix product per field.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

SCORE = re.compile(r"^([A-Z][A-Za-z0-9_]*?)Score(\d+)$")
TOP = 1.0 - 1e-9


def score_families(predicates: dict) -> dict[str, list[tuple[int, str]]]:
    """Field -> [(K, predicate name)] for the declared ``<F>Score<K>`` binary
    predicates whose two arguments have one type (sorted by K)."""
    out: dict[str, list[tuple[int, str]]] = {}
    for name, decl in predicates.items():
        m = SCORE.match(name)
        types = getattr(decl, "arg_types", None)
        if m and types is not None and len(types) == 2 and types[0] == types[1]:
            out.setdefault(m.group(1), []).append((int(m.group(2)), name))
    return {f: sorted(v) for f, v in out.items()}


def derive_score_bins(atoms: dict[str, list[tuple[str, ...]]], families: dict[str, list[tuple[int, str]]]
                      ) -> dict[str, list[tuple[str, str]]]:
    """Predicate -> (x, y) rows of its true atoms, for each field family, from
    evidence atoms grouped by predicate (``HasWord<F>`` rows)."""
    from scipy import sparse

    out: dict[str, list[tuple[str, str]]] = {}
    for field, bins in families.items():
        for _, name in bins:
            out[name] = []
        rows = atoms.get(f"HasWord{field}", [])
        if not rows:
            continue
        words = pd.DataFrame(rows, columns=["x", "w"]).drop_duplicates()
        xs, xi = np.unique(words["x"].to_numpy(dtype=object), return_inverse=True)
        ws, wi = np.unique(words["w"].to_numpy(dtype=object), return_inverse=True)
        n = len(xs)
        df = np.bincount(wi, minlength=len(ws))
        idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
        m = sparse.csr_matrix((idf[wi], (xi, wi)), shape=(n, len(ws)))
        norm = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        sim = (m @ m.T).toarray() / np.outer(norm, norm)
        np.fill_diagonal(sim, 1.0)
        ks = np.array([k for k, _ in bins], dtype=float) / 100.0
        thresholds = np.where(ks >= 1.0, TOP, ks)
        which = np.searchsorted(thresholds, sim, side="right") - 1        # largest K with s >= threshold
        a, b = np.nonzero(which >= 0)
        for k, (_, name) in enumerate(bins):
            sel = which[a, b] == k
            out[name] = list(zip(xs[a[sel]], xs[b[sel]]))
    return out
