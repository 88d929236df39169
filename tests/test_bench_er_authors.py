"""The generated author-disambiguation development set (bench/er_authors.py)
in the ER layout: the generator's spec holds and the layout loads."""

from __future__ import annotations

import numpy as np
import pytest

from bench import er_authors
from bench import er_data as E


def test_authors_synth_follows_its_spec_and_loads(tmp_path):
    out = er_authors.make(tmp_path)
    ds = E.load(out)
    recs = ds.records
    assert ds.text_fields == ["Name", "Coauthors", "Title", "Venue"] and ds.value_fields == ["Year"]
    assert sorted(set(ds.fold.tolist())) == [1, 2, 3, 4, 5]
    block = recs["name"].str.split().str[-1].to_numpy()
    # a block (one surname) lies in one fold, holds at most 30 papers and 5 authors; an author writes at most 20
    for b in np.unique(block):
        m = block == b
        assert len(np.unique(ds.fold[m])) == 1 and m.sum() <= er_authors.MAX_BLOCK
        assert len(np.unique(ds.cluster[m])) <= er_authors.MAX_AUTHORS
    assert np.bincount(ds.cluster).max() <= er_authors.MAX_PAPERS
    # an author is one block: one surname and one initial; the full first names of a block's authors differ
    for c in np.unique(ds.cluster):
        names = recs["name"][ds.cluster == c]
        assert names.str.split().str[-1].nunique() == 1 and names.str[0].nunique() == 1
    full = recs[recs["name"].str.split().str[0].str.len() > 1]
    per = full.assign(c=ds.cluster[full.index]).groupby("name")["c"].nunique()
    assert (per == 1).all()
    # 1-4 coauthors, 6 title words, a year, on every record
    assert recs["coauthors"].str.split("; ").str.len().between(1, 4).all()
    assert (recs["title"].str.split().str.len() == 6).all() and recs["year"].str.fullmatch(r"\d{4}").all()
    # the same seed writes the same data; written once
    again, gold, folds = er_authors.generate(0)
    assert again.equals(recs) and folds == ds.fold.tolist()
    stamp = (out / "records.csv").stat().st_mtime_ns
    er_authors.make(tmp_path)
    assert (out / "records.csv").stat().st_mtime_ns == stamp


def test_low_ambiguity_profile_follows_its_spec(tmp_path):
    """Most name blocks one author, clusters up to the block cap, three name forms and a few typos;
    the default profile is untouched (the test above) and an unknown profile is refused."""
    recs, gold, folds = er_authors.generate(10, "low-ambiguity")
    gold = np.asarray(gold)
    blocks = np.array([g.split("_")[0] for g in gold])
    per_block = {b: len(set(gold[blocks == b])) for b in set(blocks)}
    assert np.mean([k == 1 for k in per_block.values()]) > 0.6
    sizes = np.unique(gold, return_counts=True)[1]
    assert sizes.max() > er_authors.MAX_PAPERS and sizes.max() <= er_authors.MAX_BLOCK
    words = recs["name"].str.split()
    initial_first = (words.str[0].str.len() == 1).mean()
    initial_last = (words.str[-1].str.len() == 1).mean()
    assert 0.4 < initial_first < 0.6 and 0.1 < initial_last < 0.3
    # typos: some authors' records carry more than one spelling of the surname
    surname = np.where(words.str[-1].str.len() == 1, words.str[0], words.str[-1])
    spellings = recs.assign(c=gold, s=surname).groupby("c")["s"].nunique()
    assert (spellings > 1).any() and (spellings > 1).mean() < 0.6
    with pytest.raises(ValueError, match="nope"):
        er_authors.generate(0, "nope")
    out = er_authors.make(tmp_path, seed=10, profile="low-ambiguity")
    assert E.load(out).records.equals(recs)
