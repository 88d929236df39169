"""The one state protocol (markovlogic/onestate.py) carries a third kind of
state with no change to the generic loop: a toy world of categorical
variables (a Potts-like model), defined here, run by the generic
Metropolis-Hastings loop, matches exact enumeration; its two proposals cover
both ways a kind may evaluate a move (read-only, or applied and undone on
rejection) and an asymmetric proposal (the Hastings correction). A learning
toy kind trained by the generic SampleRank loop keeps its loss and features
incrementally and learns weights whose MAP world, by enumeration, is the
truth."""

from __future__ import annotations

import itertools
import math

import numba as nb
import numpy as np
import pytest

from markovlogic.onestate import StateKind, bind

# S = (x, unary[n, k], edges[m, 2], pair[m, k, k], r[k], best_x, trk) with trk =
# [score, best score]; diff = [move kind, variable, old value, new value].
# Move 0: a uniform variable to a uniform other value (symmetric), evaluated
# read-only. Move 1: a uniform variable to a value drawn from r (an
# independent proposal: logq = log r[old] - log r[new]), applied at once
# and undone when rejected.


@nb.njit(cache=True)
def _seed(seed):
    np.random.seed(seed)


@nb.njit(cache=True)
def _delta(S, i, new):
    x, unary, edges, pair = S[0], S[1], S[2], S[3]
    old = x[i]
    d = unary[i, new] - unary[i, old]
    for e in range(edges.shape[0]):
        a, b = edges[e, 0], edges[e, 1]
        if a == i:
            d += pair[e, new, x[b]] - pair[e, old, x[b]]
        elif b == i:
            d += pair[e, x[a], new] - pair[e, x[a], old]
    return d


@nb.njit(cache=True)
def toy_propose(S, diff):
    x, r = S[0], S[4]
    n, k = S[1].shape
    i = np.random.randint(n)
    old = x[i]
    if np.random.random() < 0.5:
        new = np.random.randint(k - 1)
        if new >= old:
            new += 1
        diff[0], diff[1], diff[2], diff[3] = 0, i, old, new
        return _delta(S, i, new), 0.0
    u = np.random.random()
    new = 0
    c = r[0]
    while new < k - 1 and u >= c:
        new += 1
        c += r[new]
    diff[0], diff[1], diff[2], diff[3] = 1, i, old, new
    if new == old:
        return np.nan, 0.0                       # a null move
    d = _delta(S, i, new)
    x[i] = new                                   # applied: reject undoes it
    return d, math.log(r[old]) - math.log(r[new])


@nb.njit(cache=True)
def toy_accept(S, diff, d, track):
    x, best_x, trk = S[0], S[5], S[6]
    x[diff[1]] = diff[3]
    trk[0] += d
    if track and trk[0] > trk[1] + 1e-12:
        trk[1] = trk[0]
        best_x[:] = x


@nb.njit(cache=True)
def toy_reject(S, diff):
    if diff[0] == 1:
        S[0][diff[1]] = diff[2]


@nb.njit(cache=True)
def toy_unit(S):
    return np.random.random()


TOY = bind(StateKind("toy_categorical", toy_propose, toy_accept, toy_reject, toy_unit))


def _model(seed: int, n: int = 4, k: int = 3):
    rng = np.random.default_rng(seed)
    unary = rng.normal(0, 1, (n, k))
    edges = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.7] or [(0, 1)],
                     np.int64)
    pair = rng.normal(0, 1, (len(edges), k, k))
    r = np.array([0.6, 0.3, 0.1][:k])
    return unary, edges, pair, r / r.sum()


def _score(x, unary, edges, pair):
    return sum(unary[i, v] for i, v in enumerate(x)) + sum(pair[e, x[a], x[b]] for e, (a, b) in enumerate(edges))


def _exact(unary, edges, pair):
    n, k = unary.shape
    worlds = np.array(list(itertools.product(range(k), repeat=n)))
    s = np.array([_score(w, unary, edges, pair) for w in worlds])
    p = np.exp(s - s.max())
    p /= p.sum()
    marg = np.zeros((n, k))
    for w, pw in zip(worlds, p):
        marg[np.arange(n), w] += pw
    return marg, worlds[int(np.argmax(s))], float(s.max())


def _state(unary, edges, pair, r, x0):
    x = np.array(x0, np.int64)
    s0 = _score(x, unary, edges, pair)
    return (x, unary, edges, pair, r, x.copy(), np.array([s0, s0]))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_toy_kind_matches_enumeration(seed):
    unary, edges, pair, r = _model(seed)
    marg, _, _ = _exact(unary, edges, pair)
    n, k = unary.shape
    S = _state(unary, edges, pair, r, np.zeros(n))
    diff = np.zeros(4, np.int64)
    stats = np.zeros((2, 2), np.int64)
    _seed(seed)
    TOY.mh(S, diff, 2000, 1.0, 1.0, -1e-9, False, stats)            # burn-in
    tally = np.zeros((n, k))
    samples = 20_000
    for _ in range(samples):
        TOY.mh(S, diff, 5, 1.0, 1.0, -1e-9, False, stats)
        tally[np.arange(n), S[0]] += 1
    assert np.abs(tally / samples - marg).max() < 0.025
    # the incremental score is the recomputed one; both move kinds ran and were accepted
    assert S[6][0] == pytest.approx(_score(S[0], unary, edges, pair))
    assert (stats[:, 1] > 0).all() and (stats[:, 0] > stats[:, 1]).all()


def test_toy_kind_annealing_finds_the_enumerated_map():
    unary, edges, pair, r = _model(7, n=5, k=3)
    _, best, best_score = _exact(unary, edges, pair)
    S = _state(unary, edges, pair, r, np.zeros(5))
    _seed(3)
    steps = 20_000
    TOY.mh(S, np.zeros(4, np.int64), steps, 5.0, (0.01 / 5.0) ** (1 / (steps - 1)), -1e-9, True,
           np.zeros((2, 2), np.int64))
    assert S[6][1] == pytest.approx(best_score)
    assert _score(S[5], unary, edges, pair) == pytest.approx(best_score)


def test_a_kind_that_learns_must_give_every_learning_function():
    with pytest.raises(ValueError, match="needs features"):
        bind(StateKind("toy_half", toy_propose, toy_accept, toy_reject, toy_unit, loss_delta=toy_unit))
    with pytest.raises(ValueError, match="identifier"):
        bind(StateKind("toy kind", toy_propose, toy_accept, toy_reject, toy_unit))
    with pytest.raises(ValueError, match="bound already"):          # its cache files would be the toy's
        bind(StateKind("toy_categorical", learn_propose, toy_accept, toy_reject, toy_unit))


# ---------------------------------------------------------------- the SampleRank loop over the toy kind
#
# A learning toy kind: S = (x, truth, theta, dphi, dl, loss, k); one feature
# per (variable, value) (D = n * k), the score theta . phi(x), the Hamming
# loss against truth. Move: a uniform variable to a uniform other value,
# read-only.


@nb.njit(cache=True)
def learn_propose(S, diff):
    x, truth, theta, dphi, dl, k = S[0], S[1], S[2], S[3], S[4], S[6]
    i = np.random.randint(len(x))
    old = x[i]
    new = np.random.randint(k - 1)
    if new >= old:
        new += 1
    diff[0], diff[1], diff[2], diff[3] = 0, i, old, new
    dphi[:] = 0.0
    dphi[i * k + old] = -1.0
    dphi[i * k + new] = 1.0
    dl[0] = (1.0 if new != truth[i] else 0.0) - (1.0 if old != truth[i] else 0.0)
    return theta[i * k + new] - theta[i * k + old], 0.0


@nb.njit(cache=True)
def learn_accept(S, diff, d, track):
    S[0][diff[1]] = diff[3]
    S[5][0] += S[4][0]


@nb.njit(cache=True)
def learn_reject(S, diff):
    pass


@nb.njit(cache=True)
def learn_loss_delta(S, diff):
    return S[4][0]


@nb.njit(cache=True)
def learn_features(S, diff, out):
    out[:] = S[3]


@nb.njit(cache=True)
def learn_set_weights(S, theta):
    pass                                 # S[2] is theta itself


@nb.njit(cache=True)
def learn_score_delta(S, diff):
    k = S[6]
    return S[2][diff[1] * k + diff[3]] - S[2][diff[1] * k + diff[2]]


@nb.njit(cache=True)
def learn_loss(S):
    return S[5][0]


TOY_LEARN = bind(StateKind("toy_learning", learn_propose, learn_accept, learn_reject, toy_unit,
                           loss_delta=learn_loss_delta, features=learn_features, set_weights=learn_set_weights,
                           score_delta=learn_score_delta, loss=learn_loss))


@pytest.mark.parametrize("update", [0, 1, 2])          # perceptron, MIRA, MIRA++
def test_toy_kind_learns_by_the_generic_samplerank_loop(update):
    from markovlogic.onestate import sr_work

    n, k = 4, 3
    truth = np.array([2, 0, 1, 2], np.int64)
    x = np.zeros(n, np.int64)
    D = n * k
    onehot = lambda w: np.eye(k)[w].ravel()          # noqa: E731
    theta, u_sum = np.zeros(D), np.zeros(D)
    S = (x, truth, theta, np.zeros(D), np.zeros(1), np.array([float(np.count_nonzero(x != truth))]), k)
    phi_cur, phi_gold = onehot(x), onehot(truth)
    trace = np.zeros((10, 2 + D))
    stats = np.zeros(4, np.int64)
    _seed(update)
    rows = TOY_LEARN.samplerank(S, np.zeros(4, np.int64), sr_work(D), 3000, 0, 0, 1.0, -1e-9, update, 0, 1.0, 1.0,
                                1.0, theta, u_sum, np.ones(D, bool), phi_cur, phi_gold, 300, trace, stats)
    assert rows == 10 and stats[0] == 3000 and stats[2] > 0
    # the incremental loss and features are those of the state recounted
    assert S[5][0] == np.count_nonzero(x != truth) and np.array_equal(phi_cur, onehot(x))
    assert trace[-1, 0] == 3000 and trace[-1, 1] == S[5][0] and np.array_equal(trace[-1, 2:], theta)
    # the learned weights (last and averaged) make the truth the MAP world, by enumeration
    for w in (theta, theta - u_sum / 3000):
        worlds = np.array(list(itertools.product(range(k), repeat=n)))
        scores = np.array([w @ onehot(v) for v in worlds])
        assert np.array_equal(worlds[int(np.argmax(scores))], truth)
