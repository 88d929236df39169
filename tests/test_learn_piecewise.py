"""Piecewise training of set-level features (learn/piecewise.py): the
gradient against finite differences, a separable clustering learned so that
greedy agglomerative MAP recovers it, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic import MLN, Database
from markovlogic.cli import main
from markovlogic.cluster.agglomerative import agglomerative_map
from markovlogic.cluster.model import build_cluster_model
from markovlogic.errors import LearningError, OptionError
from markovlogic.learn.api import learn_model
from markovlogic.learn.piecewise import PiecewiseOptions, objective_and_gradient

MODEL = """Tok(m, tok)
equivalence Same(m, m)

0 Tok(x, t) ^ Tok(y, t) => Same(x, y)
0 jaccard(x, y, Tok) >= 0.4 => Same(x, y)
0 !Same(x, y)
0 some(x, y in Same: jaccard(x, y, Tok) < 0.1)
"""


def _data(seed: int, entities: int = 5, per: int = 4) -> tuple[str, list[int]]:
    """Mentions of an entity share two entity tokens; each has two of its own;
    consecutive mentions of neighbouring entities share a noise token (so
    that different entities are neighbours too)."""
    rng = np.random.default_rng(seed)
    truth = [k for k in range(entities) for _ in range(per)]
    n = len(truth)
    atoms = []
    for i, k in enumerate(truth):
        atoms += [f"Tok(M{i}, E{k}a)", f"Tok(M{i}, E{k}b)", f"Tok(M{i}, U{i}a)", f"Tok(M{i}, U{i}b)"]
        if rng.random() < 0.5:
            atoms.append(f"Tok(M{i}, N{i % per})")
    atoms += [f"Same(M{i}, M{j})" for i in range(n) for j in range(n) if truth[i] == truth[j]]
    return "\n".join(atoms) + "\n", truth


def test_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 5))
    y = (rng.random(40) < 0.5).astype(float)
    theta = rng.normal(size=5)
    theta0 = rng.normal(size=5)
    learnable = np.array([True, True, False, True, True])
    f, g = objective_and_gradient(X, y, theta, learnable, theta0, 1.5)
    eps = 1e-6
    for k in np.flatnonzero(learnable):
        e = np.zeros(5)
        e[k] = eps
        num = (objective_and_gradient(X, y, theta + e, learnable, theta0, 1.5)[0]
               - objective_and_gradient(X, y, theta - e, learnable, theta0, 1.5)[0]) / (2 * eps)
        assert g[k] == pytest.approx(num, rel=1e-4, abs=1e-6)
    assert g[2] == 0.0


def test_separable_clusters_are_recovered_by_agglomerative_map():
    mln = MLN.from_string(MODEL)
    text, truth = _data(0)
    learned = learn_model(mln, [Database.from_string(text, mln=mln)], query_predicates=["Same"], method="piecewise")
    w = {f.formula_text if hasattr(f, "formula_text") else str(f.formula): f.weight for f in learned.mln.formulas}
    assert learned.result.stats["positives"] > 0
    # a fresh draw of the same process, clustered with the learned weights
    test_text, test_truth = _data(7)
    test_text = "\n".join(l for l in test_text.splitlines() if not l.startswith("Same")) + "\n"
    model = build_cluster_model(learned.mln, Database.from_string(test_text, mln=learned.mln), "Same")
    lab = agglomerative_map(model).labels
    names = model.mention_names
    pred = {names[i]: lab[i] for i in range(len(names))}
    n = len(test_truth)
    assert all((pred[f"M{i}"] == pred[f"M{j}"]) == (test_truth[i] == test_truth[j]) for i in range(n) for j in range(n))
    assert w


def test_bad_input(tmp_path, capsys):
    mln = MLN.from_string(MODEL.replace("equivalence Same(m, m)", "Same(m, m)").replace(
        "0 some(x, y in Same: jaccard(x, y, Tok) < 0.1)\n", ""))
    text, _ = _data(0)
    with pytest.raises(LearningError, match="equivalence"):
        learn_model(mln, [Database.from_string(text, mln=mln)], query_predicates=["Same"], method="piecewise")
    eq = MLN.from_string(MODEL)
    no_truth = "\n".join(l for l in text.splitlines() if not l.startswith("Same")) + "\n"
    with pytest.raises(LearningError):
        learn_model(eq, [Database.from_string(no_truth, mln=eq)], query_predicates=["Same"], method="piecewise")
    with pytest.raises(OptionError, match="prior-stddev"):
        PiecewiseOptions(prior_stddev=-1).check()
    (tmp_path / "m.mln").write_text(MODEL)
    (tmp_path / "t.db").write_text(text)
    out = tmp_path / "o.mln"
    assert main(["learn", "-i", str(tmp_path / "m.mln"), "-t", str(tmp_path / "t.db"), "-o", str(out),
                 "--method", "piecewise", "--ne", "Same", "--prior-stddev", "0"]) == 2
    assert not out.exists()
    assert main(["learn", "-i", str(tmp_path / "m.mln"), "-t", str(tmp_path / "t.db"), "-o", str(out),
                 "--method", "piecewise", "--ne", "Same"]) == 0
    assert "some(x, y in Same" in out.read_text()
