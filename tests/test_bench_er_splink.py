"""Smoke test of the Splink baseline (bench/er_splink.py) on tiny generated
data in the layout of ../shared/data/er: a clean-clean set (two sources, a
value field) and a dirty one (one source, clusters of three). Skips when
Splink is not installed (it is in the ``bench`` extra)."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("splink")
pytest.importorskip("duckdb")

from bench import er_data as E  # noqa: E402
from bench.er_splink import DEFAULT_OPTIONS, GRID, run_splink  # noqa: E402

VOCAB = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
         "quebec romeo sierra tango uniform victor whiskey xray yankee zulu").split()


def _write(root, name, rows, gold, folds, text, values, source):
    d = root / name
    d.mkdir()
    rec = pd.DataFrame(rows)
    rec.to_csv(d / "records.csv", index=False)
    pd.DataFrame({"id": rec["id"], "cluster": gold}).to_csv(d / "gold.csv", index=False)
    pd.DataFrame({"id": rec["id"], "fold": folds}).to_csv(d / "folds.csv", index=False)
    schema = (["Source(record, source)"] if source else []) + [f"HasWord{t.title()}(record, word)" for t in text]
    schema += [f"{v.title()}(record, {v})" for v in values] + ["equivalence Same(record, record)"]
    (d / "schema.mln").write_text("\n".join(schema) + "\n")
    for k in sorted(set(folds)):
        lines = []
        for r, f in zip(rows, folds):
            if f != k:
                continue
            if source:
                lines.append(f"Source({r['id']},S_{r['source']})")
            for t in text:
                for w in sorted(set(r[t].split())):
                    lines.append(f"HasWord{t.title()}({r['id']},W_{w})")
            for v in values:
                if r[v]:
                    lines.append(f"{v.title()}({r['id']},V_{r[v]})")
        (d / f"fold{k}").mkdir()
        (d / f"fold{k}" / "test-evidence.db").write_text("\n".join(lines) + "\n")
    return E.load(d, name)


def _name(rng):
    return " ".join(rng.sample(VOCAB, 3)) + f" m{rng.randrange(10**6)}"


def _clean_clean(root):
    rng = random.Random(0)
    rows, gold, folds = [], [], []
    for c in range(60):
        k = 1 + c % 2
        name = _name(rng)
        price = str(rng.randrange(10, 500))
        rows.append({"id": f"R{len(rows):04d}", "source": "a", "name": name, "price": price})
        gold.append(c), folds.append(k)
        if c % 3:                               # two of three entities in both sources
            words = name.split()
            words[0] = words[0] + "x" if rng.random() < 0.3 else words[0]
            rows.append({"id": f"R{len(rows):04d}", "source": "b", "name": " ".join(words),
                         "price": price if rng.random() < 0.7 else ""})
            gold.append(c), folds.append(k)
    return _write(root, "tiny_cc", rows, gold, folds, ["name"], ["price"], source=True)


def _dirty(root):
    rng = random.Random(1)
    rows, gold, folds = [], [], []
    for c in range(50):
        k = 1 + c % 2
        title, artist = _name(rng), " ".join(rng.sample(VOCAB, 2))
        for _ in range(1 + (c % 3 == 0) * 2):
            words = title.split()
            if rng.random() < 0.4:
                words.pop(rng.randrange(len(words)))
            rows.append({"id": f"R{len(rows):04d}", "title": " ".join(words), "artist": artist})
            gold.append(c), folds.append(k)
    return _write(root, "tiny_dirty", rows, gold, folds, ["title", "artist"], [], source=False)


def _check_row(r, ds, fold):
    assert r["system"] == "splink" and r["dataset"] == ds.name and r["fold"] == fold
    assert r["hyperparameters"]["threshold"] in GRID
    for k in ("pairwise_precision", "pairwise_recall", "pairwise_f1", "b3_f1", "blocking_recall"):
        assert 0.0 <= r[k] <= 1.0
    assert r["cpu_s"] >= 0 and r["wall_s"] >= 0 and r["fold_cpu_s"] > 0 and r["fold_wall_s"] > 0
    assert r["candidate_pairs"] == len(E.candidates(ds, np.flatnonzero(ds.fold == fold))[0])


def test_splink_clean_clean_and_threshold_from_training_labels_only(tmp_path):
    ds = _clean_clean(tmp_path)
    assert ds.clean_clean and ds.value_fields == ["Price"]
    cache: dict = {}
    r1 = run_splink(ds, 1, cache)
    _check_row(r1, ds, 1)
    assert r1["em_blocking"] in ("rarest_word", "main_prefix4")
    # easy data: Splink, unsupervised, finds most pairs
    assert r1["pairwise_f1"] > 0.6, r1
    r2 = run_splink(ds, 2, cache)       # fold 1 and 2 models come from the cache
    _check_row(r2, ds, 2)
    assert len(cache) == 2
    # Splink scored exactly the protocol's candidate pairs, across sources only
    sf = cache[("splink", DEFAULT_OPTIONS, 1)]
    i, j = E.candidates(ds, sf.members)
    assert np.array_equal(sf.i, i) and np.array_equal(sf.j, j) and len(i) > 0
    assert np.all((sf.p >= 0) & (sf.p <= 1))
    assert np.all(ds.source[sf.members][sf.i] != ds.source[sf.members][sf.j])
    # the test fold's labels never reach the choice: scrambling them keeps the threshold
    scrambled = E.Dataset(**{**ds.__dict__})
    cl = ds.cluster.copy()
    test = np.flatnonzero(ds.fold == 1)
    cl[test] = cl[test][np.random.default_rng(0).permutation(len(test))]
    scrambled.cluster = cl
    assert run_splink(scrambled, 1, cache)["hyperparameters"] == r1["hyperparameters"]


def test_splink_dirty(tmp_path):
    ds = _dirty(tmp_path)
    assert not ds.clean_clean and ds.value_fields == []
    r = run_splink(ds, 2, {})
    _check_row(r, ds, 2)
    assert r["pairwise_f1"] > 0.5, r


def test_splink_em_fallback_when_m_driven_to_zero(tmp_path, monkeypatch):
    """Where EM on the rarest-word rule drives an m probability to 0 (Splink
    refuses it with a ValueError mid-EM), the fold is refitted with EM
    blocked on the main field's first 4 characters."""
    from splink.internals.linker_components.training import LinkerTraining

    from bench.er_splink import fit_fold

    ds = _dirty(tmp_path)
    real = LinkerTraining.estimate_parameters_using_expectation_maximisation
    rules = []

    def em(self, blocking_rule, *a, **k):
        sql = blocking_rule.get_blocking_rule("duckdb").blocking_rule_sql
        rules.append(sql)
        if "rarest_word" in sql:
            raise ValueError("m_probability value 8.1e-312 is below the minimum allowed value of 1e-300. ...")
        return real(self, blocking_rule, *a, **k)

    monkeypatch.setattr(LinkerTraining, "estimate_parameters_using_expectation_maximisation", em)
    sf = fit_fold(ds, 1)
    assert sf.em_blocking == "main_prefix4" and sf.em_zero_m == ["m_probability value 8.1e-312"]
    assert len(rules) == 2 and "substr" in rules[1].lower()
    i, j = E.candidates(ds, sf.members)
    assert np.array_equal(sf.i, i) and np.array_equal(sf.j, j)
