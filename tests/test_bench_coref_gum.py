"""The GUM coreference bench's command line (bench/workloads/coref_gum.py):
an unknown --systems name is an argparse error (exit 2) before any data is
read; the scoring step scores only the named systems and splits (a dev-only
loop never touches test)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.workloads import coref_gum


def test_unknown_system_is_refused():
    with pytest.raises(SystemExit) as exc:
        coref_gum.main(["--systems", "full,nonesuch"])
    assert exc.value.code == 2


class _Split:
    def __init__(self, name):
        self.name = name

    def score(self, labels):
        return {"score": float(np.sum(labels))}


def test_score_all_scores_only_the_named_systems_and_splits(monkeypatch):
    monkeypatch.setattr(coref_gum, "KEYS", ("score",))
    out = {"dev": {}, "test": {}, "ablation": {"dev": {}, "test": {}}}
    called = []

    def pred(name):
        def f(sp):
            called.append((name, sp.name))
            return np.array([1, 2])
        return f
    predictors = {n: pred(n) for n in ("rule_han", "full", "pairwise")}
    splits = {"dev": _Split("dev"), "test": _Split("test")}
    res = coref_gum._score_all(out, predictors, splits, ("rule_han", "full"), ("dev",), log=lambda s: None)
    assert called == [("rule_han", "dev"), ("full", "dev")]
    assert set(res["dev"]) == {"rule_han", "full"} and res["test"] == {}
    assert res["ablation"]["dev"]["mln_han"] is res["dev"]["full"]
    assert res["test_scored_once"] is False and res["systems"] == ["rule_han", "full"]
