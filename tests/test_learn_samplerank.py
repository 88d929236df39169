"""SampleRank over clusterings: separable data learned to zero loss; data
drawn from a known model recovered to near the exact maximum-likelihood
weights (held-out conditional log-likelihood by enumerating every
clustering)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from markovlogic import MLN, Database
from markovlogic.cluster.agglomerative import agglomerative_map
from markovlogic.cluster.model import build_cluster_model
from markovlogic.learn.samplerank import SampleRankOptions, parameters_of, samplerank

from test_cluster_model import partitions

DECL = "Tok(m, tok)\nSame(m, m)\n"
FORMULAS = """0 Tok(x, t) ^ Tok(y, t) => Same(x, y)
0 jaccard(x, y, Tok) >= 0.5 => Same(x, y)
0 !Same(x, y)
"""


def _truth_db(tokens: str, labels, n: int) -> str:
    atoms = [f"Same(M{i},M{j})" for i in range(n) for j in range(n) if labels[i] == labels[j]]
    return tokens + "\n" + "\n".join(atoms)


def _apply(model, params, theta):
    from markovlogic.learn.samplerank import _set_weights

    md = model.arrays._replace(w_q=model.arrays.w_q.copy(), w_sf=model.arrays.w_sf.copy())
    _set_weights(md, theta, params.q_param, params.q_coef, params.sf_param)
    return model.with_weights(np.concatenate([md.w_q, md.w_sf]))


@pytest.mark.parametrize("update", ["perceptron", "mira", "mira++"])
def test_separable_clusters_are_learned_to_zero_loss(update):
    # three entities; mentions of one entity share a token, no token crosses entities
    n = 9
    truth = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    tokens = "\n".join(f"Tok(M{i},T{truth[i]})" for i in range(n)) + "\n" + \
        "\n".join(f"Tok(M{i},U{i})" for i in range(n))
    mln = MLN.from_string(DECL + FORMULAS)
    model = build_cluster_model(mln, Database.from_string(_truth_db(tokens, truth, n), mln=mln), "Same", truth=True)
    params = parameters_of(model, mln)
    res = samplerank([model], params, SampleRankOptions(update=update, loss="pairwise-f1", epochs=3, steps=2000))
    ans = agglomerative_map(_apply(model, params, res.theta))
    lab = ans.labels
    names = model.mention_names
    pred = {names[i]: lab[i] for i in range(n)}
    assert [pred[f"M{i}"] == pred[f"M{j}"] for i in range(n) for j in range(n)] == \
        [truth[i] == truth[j] for i in range(n) for j in range(n)]


def test_weights_from_a_known_model_reach_the_likelihood_of_the_ml_weights():
    rng = np.random.default_rng(0)
    n = 6
    tokens = "\n".join(f"Tok(M{i},T{t})" for i in range(n) for t in rng.choice(6, size=2, replace=False))
    mln = MLN.from_string(DECL + FORMULAS)
    base = build_cluster_model(mln, Database.from_string(tokens, mln=mln), "Same")
    parts = [np.array(p) for p in partitions(n)]
    signs = np.array([q.sign for q in base.quantities[:3]])
    F = np.array([base.features(p)[:3] for p in parts]) * signs      # per-formula feature values
    true_theta = np.array([0.4, 0.6, 0.35])
    s = F @ true_theta
    p = np.exp(s - s.max())
    p /= p.sum()
    train = rng.choice(len(parts), size=30, p=p)
    test = rng.choice(len(parts), size=200, p=p)

    def cll(theta, idx):
        sc = F @ theta
        return float((sc - np.logaddexp.reduce(sc))[idx].mean())

    ml = minimize(lambda w: -cll(w, train), np.zeros(3)).x
    models = [build_cluster_model(mln, Database.from_string(_truth_db(tokens, parts[k], n), mln=mln), "Same",
                                  truth=True) for k in train]
    params = parameters_of(models[0], mln)
    res = samplerank(models, params, SampleRankOptions(update="mira", loss="pairwise-f1", epochs=3, steps=300,
                                                       seed=1))
    # stated margin: within 0.25 nats per held-out clustering of the exact ML weights
    assert cll(res.theta, test) >= cll(ml, test) - 0.25
    assert cll(res.theta, test) > cll(np.zeros(3), test) + 0.5       # far better than knowing nothing
