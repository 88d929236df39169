"""The Febrl development sets in the ER layout (bench/er_febrl.py), from a
small CSV in Febrl's format (no download)."""

from __future__ import annotations

import numpy as np

from bench import er_data as E
from bench import er_febrl

CSV = """rec_id, given_name, surname, street_number, address_1, address_2, suburb, postcode, state, date_of_birth, soc_sec_id
rec-1-org, mitchell, green, 7, wallaby place, delmar, cleveland, 2119, sa, 19560409, 1804974
rec-1-dup-0, mitchel, green, 7, wallaby pl, delmar, cleveland, 2119, sa, 19560409, 1804974
rec-2-org, harley, mccarthy, 177, pridham street, milton, marsden, 3165, nsw, 19080419, 6089216
rec-2-dup-0, harley, mccarthy, , pridhamstreet, milton, marsden, 3165, nsw, 19080419, 6089216
rec-2-dup-1, harly, mccarthy, 177, pridham street, , marsden, 3165, nsw, , 6089216
rec-3-org, isabelle, , 23, gundulu place, currin ga, utakarra, 2193, wa, 19921119, 4314184
"""


def test_febrl_written_in_the_er_layout_and_loadable(tmp_path, monkeypatch):
    monkeypatch.setattr(er_febrl, "_csv_text", lambda name: CSV)
    (out,) = er_febrl.make(tmp_path, ["febrl3"])
    ds = E.load(out)
    assert ds.n == 6
    # entities from rec_id: 1 -> two records, 2 -> three, 3 -> one; each entity in one fold
    assert sorted(np.bincount(ds.cluster).tolist()) == [1, 2, 3]
    for c in np.unique(ds.cluster):
        assert len(np.unique(ds.fold[ds.cluster == c])) == 1
    assert ds.text_fields == ["Given_name", "Surname", "Address_1", "Address_2", "Suburb"]
    assert set(ds.value_fields) == {"Street_number", "Postcode", "State", "Date_of_birth", "Soc_sec_id"}
    # a missing value stays missing; words come from the fold evidence
    assert ds.values["Date_of_birth"][4] == ""
    assert ds.words["Surname"][5].nnz == 0 and ds.words["Surname"][0].nnz == 1
    # written once: a second call keeps the files
    stamp = (out / "records.csv").stat().st_mtime_ns
    er_febrl.make(tmp_path, ["febrl3"])
    assert (out / "records.csv").stat().st_mtime_ns == stamp


def test_febrl_cut_into_k_folds_by_entity(tmp_path, monkeypatch, capsys):
    import pytest

    monkeypatch.setattr(er_febrl, "_csv_text", lambda name: CSV)
    (out,) = er_febrl.make(tmp_path, ["febrl3"], n_folds=2)
    ds = E.load(out)
    assert set(ds.fold.tolist()) <= {1, 2} and len(set(ds.fold.tolist())) == 2
    for c in np.unique(ds.cluster):
        assert len(np.unique(ds.fold[ds.cluster == c])) == 1
    with pytest.raises(SystemExit) as e:
        er_febrl.main(["--folds", "1", "--out", str(tmp_path / "x")])
    assert e.value.code == 2 and "--folds must be at least 2" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
