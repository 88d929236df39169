"""Generative learning counted while grounding (learn/pll_stream.py): the same
events, groups and Δn as the pseudo-likelihood terms of the ground networks
(learn/pll.py, the oracle), hence the same weights, on models with blocks,
hard clauses, ``+`` weights, existential clauses and several databases."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import markovlogic.learn.api as api
from markovlogic.cli import main
from markovlogic.errors import LearningError, OptionError
from markovlogic.learn.api import _merge, ground_training, learn_model
from markovlogic.learn.data import prepare
from markovlogic.learn.output import split_clauses
from markovlogic.learn.pll import pll_terms
from markovlogic.learn.pll_stream import stream_pll
from markovlogic.model import MLN, Database

MODEL = """
Smokes(person)
Cancer(person)
Friends(person,person)
Job(person, job!)
1.0 Smokes(x) => Cancer(x)
0.5 Friends(x,y) ^ Smokes(x) => Smokes(y)
-0.3 Job(x, +j) ^ Smokes(x)
Cancer(x) => Smokes(x).
0.2 Cancer(x) v Job(x, J1)
0.7 Smokes(x) <=> Friends(x,x)
0.4 EXIST y (Friends(x,y) ^ Smokes(y)) v Cancer(x)
-1.1 !Smokes(x)
0.3 Job(x,j) ^ Job(y,j) ^ Friends(x,y)
"""


def world(rng, n: int, prefix: str) -> str:
    """A training world that satisfies the hard formula and the blocks."""
    lines = []
    for i in range(n):
        p = f"{prefix}{i}"
        s = rng.random() < .5
        lines.append(("" if s else "!") + f"Smokes({p})")
        if s and rng.random() < .5:
            lines.append(f"Cancer({p})")
        lines.append(f"Job({p},J{rng.integers(1, 4)})")
        lines.extend(f"Friends({p},{prefix}{k})" for k in range(n) if rng.random() < .3)
    return "\n".join(lines) + "\n"


def databases(mln: MLN, seed: int) -> list[Database]:
    rng = np.random.default_rng(seed)
    return [Database.from_string(world(rng, int(rng.integers(2, 6)), pre), mln=mln) for pre in ("P", "Q")]


def oracle_and_streamed(mln: MLN, dbs, predicates, multiple: bool):
    clausal = split_clauses(mln).mln
    old = pll_terms(prepare(ground_training(clausal, dbs, predicates, multiple)))
    new = stream_pll(clausal, list(dbs) if multiple else [_merge(dbs)], predicates)
    return old, new


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("multiple", [False, True])
@pytest.mark.parametrize("closed", [False, True])
def test_streamed_terms_equal_the_networks(seed, multiple, closed):
    text = MODEL
    predicates = ["Smokes", "Cancer", "Friends", "Job"]
    if closed:      # the predicates not learned are evidence (closed world)
        text = text.replace("\nFriends(person,person)", "\n*Friends(person,person)").replace("\nCancer(person)", "\n*Cancer(person)")
        predicates = ["Smokes", "Job"]
    mln = MLN.from_string(text)
    old, new = oracle_and_streamed(mln, databases(mln, seed), predicates, multiple)
    assert new is not None
    t = new.terms
    assert t.delta.shape == old.delta.shape and t.delta.shape[0] > 0
    assert np.array_equal(t.group, old.group)
    assert np.array_equal(t.group_weight, old.group_weight)
    assert t.group_pred == old.group_pred
    assert abs(t.delta - old.delta).max() < 1e-12
    assert new.stats["blocks"] > 0


def learned(mln, dbs, stream: bool, monkeypatch, **options):
    if not stream:
        monkeypatch.setattr(api, "_stream_pll", lambda *a: None)
    try:
        return learn_model(mln, dbs, method="pll", **options)
    finally:
        monkeypatch.undo()


def weights(text: str) -> list[float]:
    return [float(line.split()[0]) for line in text.splitlines() if re.match(r"^-?[0-9]", line)]


@pytest.mark.parametrize("multiple", [False, True])
def test_streamed_learning_gives_the_same_model(multiple, monkeypatch):
    mln = MLN.from_string(MODEL)
    dbs = databases(mln, 3)
    a = learned(mln, dbs, True, monkeypatch, multiple_databases=multiple)
    b = learned(mln, dbs, False, monkeypatch, multiple_databases=multiple)
    assert a.result.stats["streamed"] and "streamed" not in b.result.stats
    assert a.networks == [] and len(b.networks) == (2 if multiple else 1)
    assert [p.name for p in a.result.param_info] == [p.name for p in b.result.param_info]
    assert np.max(np.abs(a.result.params - b.result.params)) < 1e-6
    assert a.result.stats["events"] == b.result.stats["events"]
    # the same text, weights to 1e-6
    strip = lambda t: re.sub(r"^-?[0-9][0-9.eE+-]*", "W", t, flags=re.M)   # noqa: E731
    assert strip(a.text) == strip(b.text)
    assert np.max(np.abs(np.array(weights(a.text)) - np.array(weights(b.text)))) < 1e-6


def test_unknown_atoms_not_learned_fall_back_to_the_network():
    # no Cancer atom in the data: its atoms are unknown, and not query atoms
    mln = MLN.from_string(MODEL)
    db = Database.from_string("Smokes(P0)\n!Smokes(P1)\nJob(P0,J1)\nJob(P1,J2)\nFriends(P0,P1)\n", mln=mln)
    clausal = split_clauses(mln).mln
    assert stream_pll(clausal, [db], ["Smokes", "Job"]) is None
    with pytest.raises(LearningError, match="unknown"):
        learn_model(mln, [db], method="pll", query_predicates=["Smokes", "Job"])


def test_bad_training_worlds_are_refused():
    mln = MLN.from_string(MODEL)
    with pytest.raises(LearningError, match="violates a ground hard clause, e.g. .*Cancer\\(A\\)"):
        learn_model(mln, [Database.from_string("Cancer(A)\n!Smokes(A)\nJob(A,J1)\n", mln=mln)], method="pll")
    with pytest.raises(LearningError, match="0 true atom"):
        learn_model(mln, [Database.from_string("Smokes(A)\nSmokes(B)\nJob(B,J1)\n", mln=mln)], method="pll")
    with pytest.raises(OptionError, match="needs every truth value"):
        learn_model(mln, [Database.from_string("Smokes(A)\n?Cancer(A)\nJob(A,J1)\n", mln=mln)], method="pll")


def test_cli_learn_g_counts_while_grounding(tmp_path, monkeypatch):
    mln_path = tmp_path / "m.mln"
    mln_path.write_text(MODEL)
    mln = MLN.from_string(MODEL)
    rng = np.random.default_rng(5)
    db_path = tmp_path / "t.db"
    db_path.write_text(world(rng, 5, "P"))
    out, stats = tmp_path / "out.mln", tmp_path / "s.json"
    assert main(["learn", "-g", "-i", str(mln_path), "-t", str(db_path), "-o", str(out),
                 "--stats-json", str(stats)]) == 0
    figures = json.loads(stats.read_text())
    assert figures["streamed"] is True and figures["atoms"] == figures["query_atoms"] > 0
    assert figures["ground_rows"] > 0 and "clauses" not in figures
    b = learned(mln, [Database.from_file(db_path, mln=mln)], False, monkeypatch)
    assert np.max(np.abs(np.array(weights(out.read_text())) - np.array(weights(b.text)))) < 1e-6
