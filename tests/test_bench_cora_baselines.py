"""The Cora baselines' parts (bench/cora_features.py,
bench/workloads/cora_baselines.py): pair similarities by hand on a small
.db, greedy correlation clustering against its naive definition, the
logistic regression, and learn_cora's scoring through markovlogic.eval."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.cora_features import (  # noqa: E402
    all_pairs,
    author_mentions,
    bib_mentions,
    pair_similarities,
    read_atoms,
    similarity_atoms,
    truth_pairs,
)
from bench.workloads.cora_baselines import (  # noqa: E402
    TASKS,
    greedy_correlation_clustering,
    identical,
    logistic_regression,
)

DB = """\
Title(B1,T_a)
Title(B2,T_a)
Title(B3,T_b)
Author(B1,A_x)
Author(B2,A_y)
Author(B3,A_y)
Venue(B1,V_1)
Venue(B2,V_2)
Venue(B3,V_2)
HasWordTitle(T_a,W_learn)
HasWordTitle(T_a,W_rules)
HasWordTitle(T_b,W_learn)
HasWordTitle(T_b,W_trees)
HasWordTitle(T_b,W_fast)
HasWordAuthor(A_x,W_smith)
HasWordAuthor(A_x,W_j)
HasWordAuthor(A_y,W_j)
HasWordAuthor(A_y,W_smith)
HasWordVenue(V_1,W_icml)
SameBib(B1,B2)
SameBib(B2,B1)
SameBib(B3,B3)
"""


@pytest.fixture
def atoms(tmp_path):
    path = tmp_path / "t.db"
    path.write_text(DB)
    return read_atoms(path)


def test_bib_pair_similarities(atoms):
    m = bib_mentions(atoms)
    assert list(m.names) == ["B1", "B2", "B3"]
    i, j = all_pairs(3)                      # (B1,B2), (B1,B3), (B2,B3)
    f = pair_similarities(m, i, j)
    assert f["title_same"].tolist() == [1, 0, 0]
    assert f["title_shared"].tolist() == [2, 1, 1]
    assert f["title_missing"].tolist() == [0, 3, 3]
    assert f["title_jaccard"].tolist() == pytest.approx([1, 1 / 4, 1 / 4])
    assert f["author_same"].tolist() == [0, 0, 1] and f["author_jaccard"].tolist() == [1, 1, 1]
    # V_2 has no words: Jaccard 0 when both sets are empty, 0 against {icml}
    assert f["venue_same"].tolist() == [0, 0, 1] and f["venue_jaccard"].tolist() == [0, 0, 0]
    a, b = truth_pairs(atoms, "SameBib", m)
    assert sorted(zip(a.tolist(), b.tolist())) == [(0, 1), (1, 0), (2, 2)]
    assert identical(type("S", (), {"mentions": m, "n": 3})(), TASKS["cora", "SameBib"]).tolist() == [0, 0, 1]
    assert similarity_atoms(f, m.names, "title_jaccard", 0.5, "SimTitle") == ["SimTitle(B1,B2)", "SimTitle(B2,B1)"]


def test_author_mentions(atoms):
    m = author_mentions(atoms)
    assert list(m.names) == ["A_x", "A_y"]
    f = pair_similarities(m, *all_pairs(2))
    assert f["name_jaccard"].tolist() == [1.0] and f["initials_jaccard"].tolist() == [1.0]
    # A_x is on B1 (title words learn, rules), A_y on B2 and B3 (learn, rules, trees, fast)
    assert f["title_jaccard"].tolist() == [pytest.approx(2 / 4)]
    assert f["titles_jaccard"].tolist() == [pytest.approx(1 / 2)]     # {T_a} and {T_a, T_b}
    assert identical(type("S", (), {"mentions": m, "n": 2})(), TASKS["cora", "SameAuthor"]).tolist() == [0, 0]


def naive_greedy(s):
    s = np.array(s, dtype=float)
    n = len(s)
    np.fill_diagonal(s, -np.inf)
    labels = np.arange(n)
    alive = np.ones(n, bool)
    while True:
        m = np.where(alive[:, None] & alive[None, :], s, -np.inf)
        a, b = divmod(int(np.argmax(m)), n)
        if m[a, b] <= 0:
            return labels
        s[a, :] += s[b, :]
        s[:, a] += s[:, b]
        s[a, a] = -np.inf
        alive[b] = False
        labels[labels == b] = a


def same_partition(x, y):
    return all((x[i] == x[j]) == (y[i] == y[j]) for i in range(len(x)) for j in range(len(x)))


def test_greedy_correlation_clustering():
    s = np.array([[0, 3, -1, -5], [3, 0, -1, -5], [-1, -1, 0, 2], [-5, -5, 2, 0]], dtype=float)
    lab = greedy_correlation_clustering(s)
    assert lab[0] == lab[1] and lab[2] == lab[3] and lab[0] != lab[2]
    # summed scores decide: 0-1 merge (3), then {0,1} with 2 sums to 4 - 1 - 1 = 2 > 0
    s2 = np.array([[0, 3, 2, -9], [3, 0, -1, -9], [2, -1, 0, -9], [-9, -9, -9, 0]], dtype=float)
    assert greedy_correlation_clustering(s2).tolist()[:3] == [0, 0, 0]
    rng = np.random.default_rng(1)
    for _ in range(30):
        n = int(rng.integers(1, 25))
        x = rng.normal(-0.5, 2, (n, n))
        x = (x + x.T) / 2
        assert same_partition(greedy_correlation_clustering(x), naive_greedy(x))


def test_logistic_regression():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20000, 2))
    w_true = np.array([1.5, -2.0])
    y = (rng.random(20000) < 1 / (1 + np.exp(-(x @ w_true + 0.5)))).astype(float)
    w = logistic_regression(x, y, l2=1.0)
    assert w[:2] == pytest.approx(w_true, abs=0.1) and w[2] == pytest.approx(0.5, abs=0.1)


def test_learn_cora_scores_through_eval(tmp_path):
    from bench.workloads.learn_cora import scores

    truth = tmp_path / "truth.db"
    truth.write_text("SameBib(a,a)\nSameBib(a,b)\nSameBib(b,a)\nSameBib(c,c)\nSameBib(c,d)\nSameBib(d,c)\n")

    class Answer:
        def to_alchemy(self):
            return "SameBib(a,b)\nSameBib(b,a)\nSameBib(b,c)\nSameBib(a,c)\nSameTitle(x,y)\n"

    f = scores(Answer(), truth)
    # predicted pairs ab, bc, ac; true ab, cd
    assert (f["predicted_pairs"], f["true_pairs"]) == (3, 2)
    assert f["precision"] == pytest.approx(1 / 3, abs=1e-4) and f["recall"] == 0.5
    assert "b3_f1" in f and "muc_f1" in f
