"""Coreference metrics and atom scores (markovlogic.eval), against figures
computed by hand here, the worked examples of the papers that defined them,
and naive implementations of their definitions on random clusterings."""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import numpy as np
import pytest

from markovlogic.eval import binary
from markovlogic.eval.coref import (
    Pairs,
    b_cubed,
    ceaf_e,
    clusters_from_pairs,
    contingency,
    coreference_scores,
    muc,
    n_cluster_pairs,
    pair_counts,
    pairwise,
)


def close(prf, p, r, f=None):
    f = float(2 * F(p) * F(r) / (F(p) + F(r))) if f is None else f
    assert prf.precision == pytest.approx(float(p)) and prf.recall == pytest.approx(float(r))
    assert prf.f1 == pytest.approx(float(f))


def labels(*clusters, order=None):
    """Label array from clusters of mention names (mentions numbered in sorted name order)."""
    names = sorted({m for c in clusters for m in c}, key=order)
    out = np.empty(len(names), dtype=np.int64)
    index = {m: i for i, m in enumerate(names)}
    for k, c in enumerate(clusters):
        for m in c:
            out[index[m]] = k
    return out


# ------------------------------------------------------------------ worked examples


def test_muc_vilain_1995():
    """Vilain et al. (1995), "A model-theoretic coreference scoring scheme",
    MUC-6: key A-B-C-D, response A-B and C-D. Recall: the key's one class has
    |S| - |p(S)| = 4 - 2 links of 4 - 1; precision: each response class lies
    in one key class, (1 + 1) / (1 + 1)."""
    key = labels("ABCD")
    resp = labels("AB", "CD")
    close(muc(resp, key), 1, F(2, 3))
    close(muc(key, resp), F(2, 3), 1)        # the roles swapped
    close(muc(key, key), 1, 1)


# Bagga & Baldwin (1998), "Algorithms for scoring coreference chains", and
# Luo (2005), "On coreference resolution performance metrics" (Figure 1,
# Table 1): the truth has entities {1..5}, {6, 7}, {8, 9, A, B, C}
KEY = ["12345", "67", "89ABC"]
ORDER = "123456789ABC".index
RESPONSES = {
    "a": ["12345", "6789ABC"],            # the two last entities merged
    "b": ["1234589ABC", "67"],            # the first and the last merged
    "c": ["123456789ABC"],                # everything in one
    "d": list("123456789ABC"),            # all singletons
}


def example(name):
    return labels(*RESPONSES[name], order=ORDER), labels(*KEY, order=ORDER)


def test_b_cubed_bagga_baldwin_1998():
    """B-cubed: per mention |R & K| / |R| (precision) and / |K| (recall).
    (a): mentions 1-5 score 1, 6-7 score 2/7, 8-C score 5/7:
    (5 + 2*2/7 + 5*5/7) / 12 = 16/21 (their 76%); (b): 1-5 and 8-C score
    5/10, 6-7 score 1: 7/12 (their 58%). Recall is 1 for both; MUC gives both
    the same 9/10 precision (the paper's point)."""
    resp, key = example("a")
    close(b_cubed(resp, key), F(16, 21), 1)
    close(muc(resp, key), F(9, 10), 1)
    resp, key = example("b")
    close(b_cubed(resp, key), F(7, 12), 1)
    close(muc(resp, key), F(9, 10), 1)


def test_luo_2005_table_1():
    """Luo (2005), Table 1, recomputed by hand.

    CEAF-e with phi4(K, R) = 2|K & R| / (|K| + |R|):
    (a) best alignment {1..5}-{1..5} (phi 1) and {8..C}-{6..C} (2*5/12):
        sum 11/6, precision 11/6 / 2, recall 11/6 / 3, F 0.733;
    (b) {6,7}-{6,7} (1) and one of the 5s with the 10 (2*5/15): 5/3, F 0.667;
    (c) the one cluster with a 5 (2*5/17): 10/17, F 0.294;
    (d) each entity with one of its singletons (1/3 + 2/3 + 1/3 = 4/3), over
        12 and 3: F 0.178.
    B-cubed (c): precision (5*5 + 2*2 + 5*5) / 12 / 12 = 54/144, recall 1,
    F 0.545; (d): precision 1, recall (1 + 1 + 1) / 12, F 0.400.
    MUC (c): precision (12 - 3) / (12 - 1), recall 1, F 0.900; (d): 0 links
    either way, 0 (MUC cannot score singletons)."""
    close(ceaf_e(*example("a")), F(11, 12), F(11, 18), 0.7333333)
    close(ceaf_e(*example("b")), F(5, 6), F(5, 9), 2 / 3)
    close(ceaf_e(*example("c")), F(10, 17), F(10, 51), 0.2941176)
    close(ceaf_e(*example("d")), F(1, 9), F(4, 9), 0.1777778)
    close(b_cubed(*example("c")), F(54, 144), 1, 0.5454545)
    close(b_cubed(*example("d")), 1, F(3, 12), 0.4)
    close(muc(*example("c")), F(9, 11), 1, 0.9)
    close(muc(*example("d")), 0, 0, 0.0)
    # B-cubed F of (a) and (b) as in Luo's table: 0.865 and 0.737
    assert b_cubed(*example("a")).f1 == pytest.approx(0.8648649)
    assert b_cubed(*example("b")).f1 == pytest.approx(0.7368421)


def test_pairwise_by_hand():
    """Truth {1,2,3}, {4,5}; prediction {1,2}, {3,4,5}: predicted pairs 12, 34,
    35, 45; true pairs 12, 13, 23, 45; common 12, 45: P = R = 2/4."""
    key = labels("123", "45")
    resp = labels("12", "345")
    close(pairwise(resp, key), F(1, 2), F(1, 2))
    assert pair_counts(resp, key) == (2, 4, 4)
    # the truth as a pair set that is not transitively closed (13 missing):
    # it is compared as given, so 12, 45 of 3 true pairs
    truth_pairs = Pairs.from_arrays(5, [0, 1, 3], [1, 2, 4])
    assert pair_counts(resp, truth_pairs) == (2, 4, 3)
    assert pair_counts(Pairs.from_arrays(5, [0, 2, 2, 3], [1, 3, 4, 4]), truth_pairs) == (2, 4, 3)


# ------------------------------------------------------------------ edge cases


def test_singletons_everywhere():
    s = np.arange(4)
    close(b_cubed(s, s), 1, 1)
    close(ceaf_e(s, s), 1, 1)
    assert muc(s, s) == (0.0, 0.0, 0.0)          # no link on either side: 0/0
    assert pairwise(s, s) == (0.0, 0.0, 0.0)     # no pair on either side
    assert n_cluster_pairs(s) == 0


def test_one_mention_and_no_mention():
    one = np.zeros(1, dtype=int)
    close(b_cubed(one, one), 1, 1)
    close(ceaf_e(one, one), 1, 1)
    empty = np.zeros(0, dtype=int)
    for metric in (b_cubed, muc, ceaf_e, pairwise):
        assert metric(empty, empty) == (0.0, 0.0, 0.0)


def test_empty_prediction_and_all_in_one():
    key = labels("123", "45", "6")
    singletons = np.arange(6)
    assert pairwise(singletons, key) == (0.0, 0.0, 0.0)
    close(b_cubed(singletons, key), 1, F(1 + 1 + 1, 6))               # (3 * 1/3 + 2 * 1/2 + 1) / 6
    assert muc(singletons, key).recall == 0.0
    one = np.zeros(6, dtype=int)
    close(pairwise(one, key), F(4, 15), 1)                           # 3 + 1 true pairs of 15
    close(muc(one, key), F(6 - 3, 6 - 1), 1)
    close(b_cubed(one, key), F(9 + 4 + 1, 36), 1)
    close(ceaf_e(one, key), F(6, 9), F(6, 27))                       # phi4 = 2*3/9 for {1,2,3}
    # empty prediction as pairs: nothing predicted
    assert pair_counts(Pairs.from_arrays(6, [], []), key) == (0, 0, 4)


def test_pairs_are_canonical():
    p = Pairs.from_arrays(4, [0, 1, 2, 3, 3], [1, 0, 2, 2, 1])       # duplicates, a reflexive pair, orientation
    assert list(zip(p.i.tolist(), p.j.tolist())) == [(0, 1), (1, 3), (2, 3)]
    lab = p.clusters()
    assert lab[0] == lab[1] == lab[2] == lab[3]
    assert len(Pairs.from_arrays(4, [], [])) == 0
    with pytest.raises(ValueError):
        Pairs.from_arrays(3, [0], [3])


def test_clusters_from_pairs_components():
    lab = clusters_from_pairs(6, [0, 1, 4], [1, 2, 5])
    assert lab[0] == lab[1] == lab[2] and lab[4] == lab[5]
    assert len({lab[0], lab[3], lab[4]}) == 3


def test_mismatched_lengths():
    with pytest.raises(ValueError):
        b_cubed(np.arange(3), np.arange(4))
    with pytest.raises(ValueError):
        pair_counts(Pairs.from_arrays(3, [0], [1]), np.arange(4))


# ------------------------------------------------------------------ definitions, naively


def naive_b3(resp, key):
    n = len(key)
    p = sum(np.sum((resp == resp[i]) & (key == key[i])) / np.sum(resp == resp[i]) for i in range(n)) / n
    r = sum(np.sum((resp == resp[i]) & (key == key[i])) / np.sum(key == key[i]) for i in range(n)) / n
    return p, r


def naive_muc_recall(resp, key):
    num = den = 0
    for k in np.unique(key):
        members = key == k
        num += members.sum() - len(np.unique(resp[members]))
        den += members.sum() - 1
    return num / den if den else 0.0


def naive_ceaf(resp, key):
    ks = [set(np.flatnonzero(key == k)) for k in np.unique(key)]
    rs = [set(np.flatnonzero(resp == r)) for r in np.unique(resp)]
    best = 0.0
    small, large = (ks, rs) if len(ks) <= len(rs) else (rs, ks)
    for perm in itertools.permutations(range(len(large)), len(small)):
        total = sum(2 * len(a & large[j]) / (len(a) + len(large[j])) for a, j in zip(small, perm))
        best = max(best, total)
    return best / len(rs), best / len(ks)


def naive_pairs(lab):
    return {(i, j) for i in range(len(lab)) for j in range(i + 1, len(lab)) if lab[i] == lab[j]}


def test_random_clusterings_against_definitions():
    rng = np.random.default_rng(3)
    for _ in range(60):
        n = int(rng.integers(1, 9))
        key = rng.integers(0, int(rng.integers(1, n + 1)), n) * 7 + 3      # arbitrary label values
        resp = rng.integers(0, int(rng.integers(1, n + 1)), n) - 5
        p, r = naive_b3(resp, key)
        assert b_cubed(resp, key)[:2] == pytest.approx((p, r))
        assert muc(resp, key).recall == pytest.approx(naive_muc_recall(resp, key))
        assert muc(resp, key).precision == pytest.approx(naive_muc_recall(key, resp))
        if len(np.unique(key)) <= 6 and len(np.unique(resp)) <= 6:
            assert ceaf_e(resp, key)[:2] == pytest.approx(naive_ceaf(resp, key))
        pk, pr = naive_pairs(key), naive_pairs(resp)
        common = len(pk & pr)
        assert pair_counts(resp, key) == (common, len(pr), len(pk))
        kp = Pairs.from_arrays(n, [i for i, _ in pk], [j for _, j in pk])
        rp = Pairs.from_arrays(n, [i for i, _ in pr], [j for _, j in pr])
        assert pair_counts(rp, kp) == pair_counts(resp, kp) == pair_counts(rp, key) == (common, len(pr), len(pk))


def test_ceaf_sparse_alignment_equals_dense():
    """Components too large for a dense matrix go to the sparse matcher: same optimum."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        n = int(rng.integers(5, 200))
        key = rng.integers(0, max(1, n // 4), n)
        resp = np.where(rng.random(n) < 0.3, rng.integers(0, n, n), key)
        assert ceaf_e(resp, key, dense_limit=0) == pytest.approx(ceaf_e(resp, key))


def test_coreference_scores_keys():
    resp, key = example("a")
    s = coreference_scores(resp, key)
    assert s["b3_precision"] == pytest.approx(16 / 21) and s["muc_f1"] == pytest.approx(0.9473684)
    assert s["ceafe_f1"] == pytest.approx(0.7333333)
    assert {"pairwise_precision", "pairwise_recall", "pairwise_f1", "pairs_common"} <= set(s)


def test_contingency():
    c = contingency(np.array([5, 5, 9]), np.array([1, 2, 2]))
    assert c.n == 3 and c.count.sum() == 3
    assert sorted(c.true_size.tolist()) == [1, 2] and sorted(c.pred_size.tolist()) == [1, 2]


# ------------------------------------------------------------------ atoms


def test_precision_recall_f1():
    close(binary.precision_recall_f1([1, 1, 0, 0], [1, 0, 1, 0]), F(1, 2), F(1, 2))
    assert binary.precision_recall_f1([0, 0], [1, 0]) == (0.0, 0.0, 0.0)
    assert binary.precision_recall_f1([], []) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        binary.precision_recall_f1([1], [1, 0])


def test_auc_pr_and_cll_are_the_learners():
    from markovlogic.learn import metrics

    assert metrics.auc_pr is binary.auc_pr and metrics.average_cll is binary.average_cll
    # ranks + - + : precision 1 at the first positive, 2/3 at the second
    assert binary.auc_pr(np.array([0.9, 0.8, 0.7]), np.array([1, 0, 1])) == pytest.approx((1 + 2 / 3) / 2)
    assert binary.average_cll(np.array([0.5, 0.0]), np.array([1, 0])) == pytest.approx(
        (np.log(0.5) + np.log1p(-1e-4)) / 2)


# ------------------------------------------------------------------ cluster recall


def test_cluster_recall_by_hand():
    from markovlogic.eval.coref import cluster_precision, cluster_recall, exact_clusters

    # truth {a,b,c} {d,e} {f}; predicted {a,b,c} {d} {e,f}: only {a,b,c} is output exactly
    key = labels("abc", "de", "f")
    resp = labels("abc", "d", "ef")
    assert exact_clusters(resp, key) == 1
    assert cluster_recall(resp, key) == pytest.approx(1 / 3)
    assert cluster_precision(resp, key) == pytest.approx(1 / 3)
    # a singleton true cluster output as a singleton counts
    resp = labels("abc", "de", "f")
    assert cluster_recall(resp, key) == 1.0 and cluster_precision(resp, key) == 1.0
    # one predicted cluster holding everything: no true cluster is exact
    assert cluster_recall(np.zeros(6, dtype=np.int64), key) == 0.0
    assert cluster_recall(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)) == 0.0


def test_cluster_recall_after_closure_of_pairs():
    # pairs a-b, b-c (not closed) close to {a,b,c}: the true cluster {a,b,c} is output exactly
    p = Pairs.from_arrays(4, [0, 1], [1, 2])
    t = Pairs.from_arrays(4, [0, 0, 1], [1, 2, 2])
    s = coreference_scores(p.clusters(), t.clusters(), p, t)
    assert s["cluster_recall"] == 1.0 and s["clusters_exact"] == 2      # {a,b,c} and the singleton {d}
    assert s["pairwise_recall"] == pytest.approx(2 / 3) and s["pairwise_precision"] == 1.0
    assert s["closure_pairwise_recall"] == 1.0 and s["closure_pairwise_precision"] == 1.0


def test_cluster_recall_against_definition():
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(1, 30))
        key = rng.integers(0, max(1, n // 3), n)
        resp = np.where(rng.random(n) < 0.2, rng.integers(0, n, n), key)
        true_sets = {frozenset(np.flatnonzero(key == k)) for k in np.unique(key)}
        pred_sets = {frozenset(np.flatnonzero(resp == k)) for k in np.unique(resp)}
        from markovlogic.eval.coref import cluster_recall

        assert cluster_recall(resp, key) == pytest.approx(len(true_sets & pred_sets) / len(true_sets))
