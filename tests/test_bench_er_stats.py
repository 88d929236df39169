"""The ER bench's per-gold-cluster counts and the bootstrap interval of the
recipe's difference to the best baseline (bench/er_data.py)."""

from __future__ import annotations

import numpy as np

from bench import er_data as E


def test_per_gold_cluster_counts_sum_to_the_pair_counts():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        gold, labels = rng.integers(0, 8, n), rng.integers(0, 6, n)
        c = E.cluster_contributions(labels, gold)
        assert c.shape == (3, len(np.unique(gold)))
        assert np.allclose(c.sum(axis=1), E.pair_counts(labels, gold))


def test_bootstrap_difference_of_a_system_with_itself_and_with_a_worse_one():
    rng = np.random.default_rng(1)
    gold = rng.integers(0, 30, 300)
    worse = rng.integers(0, 30, 300)
    good = E.cluster_contributions(gold, gold)
    bad = E.cluster_contributions(worse, gold)
    same = E.bootstrap_difference([good, good], [good, good], n=200)
    assert same["difference"] == 0.0 and same["ci90"] == [0.0, 0.0]
    d = E.bootstrap_difference([good], [bad], n=200)
    assert d["difference"] == 1.0 - E.scores(worse, gold)["pairwise_f1"]
    assert d["ci90"][0] > 0.5 and d["share_above_zero"] == 1.0
