"""Coreference and atom metrics against worked examples, and ``mln eval``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from markovlogic.cli import main
from markovlogic.eval import auc_pr, b_cubed, ceaf_e, muc, pairwise
from markovlogic.eval.clusters import labels_from_pairs

# Bagga & Baldwin (1998), figure 2: key {1..5} {6,7} {8..12}; a response that
# merges the first and third entities.
KEY = np.array([0, 0, 0, 0, 0, 1, 1, 2, 2, 2, 2, 2])
RESPONSE = np.array([0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0])


def test_b_cubed_worked_example():
    s = b_cubed(KEY, RESPONSE)
    # precision: ten mentions see 5 of 10 right, two see 2 of 2: (10 * 0.5 + 2) / 12
    assert s["precision"] == pytest.approx(7 / 12)
    assert s["recall"] == pytest.approx(1.0)


def test_muc_worked_example():
    # Vilain et al.: the response needs one link fewer than it has: P = 9/10, R = 9/9
    s = muc(KEY, RESPONSE)
    assert s["precision"] == pytest.approx(0.9)
    assert s["recall"] == pytest.approx(1.0)


def test_ceaf_e_worked_example():
    # phi4({1..5}, {1..5, 8..12}) = 2*5/15; phi4({6,7}, {6,7}) = 1; best alignment 2/3 + 1
    s = ceaf_e(KEY, RESPONSE)
    assert s["precision"] == pytest.approx((2 / 3 + 1) / 2)
    assert s["recall"] == pytest.approx((2 / 3 + 1) / 3)


def test_pairwise_worked_example():
    s = pairwise(KEY, RESPONSE)
    assert s["precision"] == pytest.approx(21 / 46)
    assert s["recall"] == pytest.approx(1.0)


@pytest.mark.parametrize("fn", [pairwise, b_cubed, muc, ceaf_e])
def test_identical_clusterings_score_one(fn):
    assert fn(KEY, KEY)["f1"] == pytest.approx(1.0)


def test_all_singletons_against_clusters():
    single = np.arange(len(KEY))
    assert pairwise(KEY, single)["recall"] == 0.0
    assert muc(KEY, single)["recall"] == 0.0
    assert b_cubed(KEY, single)["precision"] == pytest.approx(1.0)
    assert b_cubed(KEY, single)["recall"] == pytest.approx((5 * 0.2 + 2 * 0.5 + 5 * 0.2) / 12)
    # CEAF-e: each gold entity aligned with one of its singletons
    assert ceaf_e(KEY, single)["recall"] == pytest.approx((2 / 6 + 2 / 3 + 2 / 6) / 3)


def test_everything_in_one_cluster():
    one = np.zeros(len(KEY), int)
    assert pairwise(KEY, one)["recall"] == 1.0
    assert muc(KEY, one)["recall"] == 1.0
    assert muc(KEY, one)["precision"] == pytest.approx((12 - 3) / 11)


def test_ceaf_e_splits_the_alignment_by_overlap_and_matches_a_dense_solve():
    from scipy.optimize import linear_sum_assignment

    rng = np.random.default_rng(3)
    gold = rng.integers(0, 40, size=400)
    pred = rng.integers(0, 55, size=400)
    g = np.unique(gold)
    p = np.unique(pred)
    m = np.zeros((len(g), len(p)))
    for i, a in enumerate(g):
        for j, b in enumerate(p):
            inter = np.sum((gold == a) & (pred == b))
            m[i, j] = 2 * inter / (np.sum(gold == a) + np.sum(pred == b))
    r, c = linear_sum_assignment(m, maximize=True)
    assert ceaf_e(gold, pred)["precision"] == pytest.approx(m[r, c].sum() / len(p))


def test_labels_from_pairs_are_components():
    lab = labels_from_pairs(5, np.array([0, 3]), np.array([1, 4]))
    assert lab[0] == lab[1] and lab[3] == lab[4] and len(set(lab.tolist())) == 3


def test_auc_pr_average_precision():
    assert auc_pr(np.array([0.9, 0.8, 0.7, 0.1]), np.array([1, 0, 1, 0])) == pytest.approx((1 + 2 / 3) / 2)


# ---------------------------------------------------------------- mln eval

TRUTH = """Same(A,A)
Same(A,B)
Same(B,A)
Same(B,B)
Same(C,C)
Same(D,D)
Same(C,D)
Same(D,C)
P(A)
P(C)
"""


def _run(tmp_path, result_text: str, *args: str) -> tuple[int, dict]:
    (tmp_path / "truth.db").write_text(TRUTH)
    (tmp_path / "r.result").write_text(result_text)
    out = tmp_path / "s.json"
    code = main(["eval", "-r", str(tmp_path / "r.result"), "-t", str(tmp_path / "truth.db"),
                 "--stats-json", str(out), *args])
    return code, (json.loads(out.read_text()) if out.exists() else {})


def test_eval_a_map_clustering(tmp_path):
    code, s = _run(tmp_path, "Same(A,A)\nSame(A,B)\nSame(B,A)\nSame(B,B)\nSame(C,C)\nSame(D,D)\n", "-q", "Same")
    assert code == 0
    assert s["equivalence"] is True           # symmetric truth, no model: an equivalence
    assert s["precision"] == 1.0 and s["recall"] == 0.5
    assert {"b3_f1", "muc_f1", "ceafe_f1", "pairwise_f1"} <= set(s)


def test_eval_a_clusters_file_and_an_ordinary_predicate(tmp_path):
    code, s = _run(tmp_path, "Same\tA\tB\nSame\tC\tD\n", "-q", "Same")
    assert code == 0 and s["f1"] == 1.0 and s["b3_f1"] == 1.0
    code, s = _run(tmp_path, "P(A)\nP(B)\n", "-q", "P")
    assert code == 0 and s["precision"] == 0.5 and s["recall"] == 0.5 and "b3_f1" not in s


def test_eval_marginals(tmp_path):
    code, s = _run(tmp_path, "P(A) 0.9\nP(B) 0.6\nP(C) 0.4\nP(D) 0.1\n", "-q", "P")
    assert code == 0
    assert s["auc_pr"] == pytest.approx((1 + 2 / 3) / 2) and "cll" in s
    assert s["precision"] == 0.5 and s["recall"] == 0.5       # threshold 0.5


@pytest.mark.parametrize("text, message", [
    ("Same(A,B) 0.5\nSame(A,C)\n", "mixes lines"),
    ("not an atom\n", "expected an atom"),
    ("Same(A,B) 1.7\n", "between 0 and 1"),
])
def test_eval_bad_result_files(tmp_path, capsys, text, message):
    code, _ = _run(tmp_path, text, "-q", "Same")
    assert code == 2
    assert message in capsys.readouterr().err


def test_eval_missing_files_and_unknown_predicates(tmp_path, capsys):
    code = main(["eval", "-r", str(tmp_path / "none.result"), "-t", str(tmp_path / "none.db"), "-q", "P"])
    assert code == 2 and "not found" in capsys.readouterr().err
    code, _ = _run(tmp_path, "P(A)\n", "-q", "Nope")
    assert code == 2 and "Nope" in capsys.readouterr().err
