"""Token-set evidence of citations, for set-level entity resolution.

The set-level ``SameBib`` model of ``examples/citations/sets.template.mln``
(Culotta & McCallum's clusters scored by Jaccard bins and a set-level feature,
learned by SampleRank) compares citations as sets of tokens. This module
writes those sets as atoms, one per (citation, distinct token) of a part of
the citation, from the token evidence of Poon & Domingos' schema:

- ``HasTok(bib, token)``: every token of the citation;
- ``HasFront(bib, token)``: tokens before ``FirstNonAuthorTitleTkn`` (Poon's
  first venue keyword: mostly authors and title; the whole citation if it has
  none);
- ``HasBack(bib, token)``: tokens from that keyword on (venue, year ...);
- ``HasFirst(bib, token)``: the first five tokens (mostly author names);
- ``HasNum(bib, token)``: tokens that are ``IsDigit`` or ``IsDate``;
- ``HasTitle(bib, token)``: tokens at positions an ``InField(bib, Ftitle, i)``
  atom of the evidence puts in the title. On training data these are the
  gold fields; on new citations, a segmentation model's MAP answer given as
  evidence (``mln derive -i sets.mln -e EVIDENCE.db,SEGMENTATION.result``).

Positions are ordered along ``Next`` as in :mod:`.citations` (the same checks:
one token per position, each citation's positions consecutive). Vectorised:
pandas over the per-token table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import EvidenceError
from .citations import _bound, _rows, positions_table

TOKEN_SETS = ("HasTok", "HasFront", "HasBack", "HasFirst", "HasNum", "HasTitle")
FIRST = 5
TITLE_FIELD = "Ftitle"


def derive_token_sets(atoms: dict[str, list[tuple[str, ...]]], predicates: tuple[str, ...] = TOKEN_SETS
                      ) -> dict[str, list[tuple[str, ...]]]:
    """Predicate -> (bib, token) rows of its true atoms, for ``predicates``
    (a subset of :data:`TOKEN_SETS`), from evidence atoms grouped by predicate."""
    unknown = set(predicates) - set(TOKEN_SETS)
    if unknown:
        raise ValueError(f"not token-set predicates: {', '.join(sorted(unknown))}")
    positions = positions_table(atoms)
    t = positions.table                              # bib, rank, pos, token, ... sorted by (bib, rank)
    rank = t["rank"].to_numpy()
    start = t.groupby("bib", sort=False)["rank"].transform("min").to_numpy()
    offset = rank - start
    keep: dict[str, np.ndarray] = {"HasTok": np.ones(len(t), bool), "HasFirst": offset < FIRST}
    if "HasFront" in predicates or "HasBack" in predicates:
        ranks = {p: r for r, p in positions.position_of_rank.items()}
        # no keyword, or one at a position in no chain: the whole citation is front
        cut = _bound(atoms, "FirstNonAuthorTitleTkn", ranks, t, min, 1 << 62)
        keep["HasFront"] = rank < cut
        keep["HasBack"] = rank >= cut
    if "HasNum" in predicates:
        numeric = {r[0] for r in atoms.get("IsDigit", [])} | {r[0] for r in atoms.get("IsDate", [])}
        keep["HasNum"] = t["token"].isin(numeric).to_numpy()
    if "HasTitle" in predicates:
        fields = _rows(atoms, "InField", 3)
        title = fields[fields.a1 == TITLE_FIELD] if not fields.empty else fields
        if title.empty:
            raise EvidenceError("HasTitle is read from InField(bib, Ftitle, position) atoms and the evidence has "
                                "none: give the training data's fields, or a segmentation model's MAP result as "
                                "evidence (mln derive -i MODEL.mln -e EVIDENCE.db,SEGMENTATION.result ...)")
        key = pd.MultiIndex.from_frame(t[["bib", "pos"]])
        keep["HasTitle"] = np.asarray(key.isin(pd.MultiIndex.from_frame(title[["a0", "a2"]])), bool)
    out: dict[str, list[tuple[str, ...]]] = {}
    for name in predicates:
        rows = t.loc[keep[name], ["bib", "token"]].drop_duplicates()
        out[name] = list(rows.itertuples(index=False, name=None))
    return out
