"""Metropolis-Hastings over possible worlds (infer/mh.py) and over clusterings
(cluster/chain.py, cluster/mh.py), and user proposals (infer/proposals.py,
cluster/usermix.py): marginals against exact enumeration, MAP against the
enumerated optimum, and detailed balance of the transition kernels on tiny
state spaces, with the proposal densities re-derived in pure Python
(tests/mh_reference.py)."""

from __future__ import annotations

import math
import warnings
from collections import Counter

import numpy as np
import pytest

from markovlogic import MLN, Database
from markovlogic.cluster.agglomerative import AgglomerativeOptions, agglomerative_map
from markovlogic.cluster.api import clusters_queried
from markovlogic.cluster.chain import propose, seed_rng
from markovlogic.cluster.mh import MHOptions
from markovlogic.cluster.mh import mh_map as cluster_map
from markovlogic.cluster.mh import mh_marginals as cluster_marginals
from markovlogic.cluster.model import build_cluster_model
from markovlogic.cluster.setfeatures import SetFeature
from markovlogic.errors import InferenceError, OptionError
from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.exact import exact_map, exact_marginals
from markovlogic.infer.map import solve_map
from markovlogic.infer.marginals import check_options, solve_marginals
from markovlogic.infer.mh import HARD_WARNING, AtomChain, AtomMHOptions, mh_map, mh_marginals
from markovlogic.infer.proposals import Flip, Merge, MoveMention, Split, UserProposal
from markovlogic.lang.ast import Atom, Var
from markovlogic.lang.ast import Query
from mh_reference import (
    atom_transition_matrix, canon, cluster_proposals, exact_pair_marginals, feasible_worlds, move_connected,
    partitions, reverse_path, satisfies_constraints,
)
from networks import random_network

TOL = 0.03


# ================================================================ worlds: marginals and MAP

def test_atom_marginals_match_exact_on_random_networks():
    rng = np.random.default_rng(2024)
    worst = 0.0
    for i in range(60):
        n = int(rng.integers(1, 11))
        net = random_network(rng, n, int(rng.integers(1, 2 * n + 4)), p_hard=0.0, p_negative=0.25,
                             n_blocks=int(rng.integers(0, 3)), repeats=bool(rng.random() < 0.2))
        exact = exact_marginals(net).probabilities
        with warnings.catch_warnings():
            warnings.simplefilter("error")          # no hard clauses: no warning
            r = mh_marginals(net, samples=5000, seed=i)
        err = float(np.abs(r.probabilities - exact).max())
        worst = max(worst, err)
        assert err <= TOL, f"network {i}: max error {err:.4f}\nmh    {r.probabilities.round(3)}\nexact {exact.round(3)}"
    assert r.method == "mh" and r.samples == 5000


def test_atom_marginals_with_hard_clauses_and_blocks():
    """Networks whose feasible worlds the single moves connect (the chain is
    exact there), hard clauses and blocks in each; both estimators."""
    rng = np.random.default_rng(31)
    tested = 0
    while tested < 25:
        n = int(rng.integers(3, 10))
        net = random_network(rng, n, int(rng.integers(n, 2 * n + 4)), p_hard=0.3,
                             n_blocks=int(rng.integers(1, 3)))
        if not net.is_hard.any() or not move_connected(net):
            continue
        exact = exact_marginals(net).probabilities
        rb = tested % 3 != 2
        with pytest.warns(UserWarning, match="hard clauses"):
            r = mh_marginals(net, samples=10000 if rb else 40000, thin=50, seed=tested, rao_blackwell=rb,
                             tie_max=1)
        err = float(np.abs(r.probabilities - exact).max())
        assert err <= TOL, f"network {tested} (rb={rb}): max error {err:.4f}"
        assert r.stats["warning"] == HARD_WARNING
        tested += 1


def test_greedy_map_is_exact_where_each_variable_is_independent():
    """Unit clauses and blocks only: greedy single moves reach the optimum."""
    rng = np.random.default_rng(5)
    for i in range(20):
        n = int(rng.integers(2, 12))
        clauses = [(round(float(rng.uniform(-2, 2)), 2), [(int(a), bool(rng.random() < 0.5))])
                   for a in rng.integers(0, n, size=n)]
        blocks = [list(range(k, min(k + 3, n))) for k in range(0, n // 2, 3)]
        net = GroundNetwork.from_clauses(n, clauses, blocks=blocks)
        r = mh_map(net, seed=i)
        assert r.score == pytest.approx(exact_map(net).score, abs=1e-9)
        assert r.hard_violated == 0 and r.method == "mh"


def test_annealing_reaches_the_optimum_on_random_networks():
    rng = np.random.default_rng(8)
    tested = 0
    while tested < 30:
        n = int(rng.integers(3, 13))
        net = random_network(rng, n, int(rng.integers(n, 3 * n)), p_hard=0.15, n_blocks=int(rng.integers(0, 3)))
        if net.is_hard.any() and not move_connected(net):
            continue
        best = exact_map(net).score
        r = mh_map(net, anneal=4.0, steps=4000, restarts=2, seed=tested)
        assert r.hard_violated == 0
        assert r.score == pytest.approx(best, abs=1e-9), f"network {tested}: {r.score} < {best}"
        assert r.stats["score_drift"] < 1e-9
        tested += 1


def test_fixed_temperature_map_and_best_world_tracking():
    """At a high fixed temperature the chain wanders far from its best world
    (the log of moves since the best overflows); the best world it reports is
    the one it scored."""
    rng = np.random.default_rng(3)
    net = random_network(rng, 40, 120, p_hard=0.0, n_blocks=4)
    for temp in (0.5, 3.0):
        r = mh_map(net, temperature=temp, steps=20000, seed=1)
        assert r.stats["score_drift"] < 1e-9
        assert r.score == pytest.approx(net.score(r.world))


# ================================================================ worlds: detailed balance

def _tiny_network() -> GroundNetwork:
    return GroundNetwork.from_clauses(5, [
        (1.2, [(0, True), (1, True)]),
        (-0.7, [(0, False), (2, True)]),
        (0.9, [(1, False), (3, True), (4, True)]),
        (None, [(0, False), (1, False), (4, False)]),
        (0.4, [(2, True)]),
        (-1.1, [(1, True), (3, False)]),
    ], blocks=[[2, 3, 4]])


def test_atom_chain_detailed_balance_and_its_transitions():
    net = _tiny_network()
    worlds = feasible_worlds(net)
    assert len(worlds) == 11 and move_connected(net)
    score = np.array([net.score(np.array(x)) for x in worlds])
    for temp in (1.0, 0.5):
        T = atom_transition_matrix(net, worlds, block_prob=0.4, temp=temp)
        pi = np.exp(score / temp)
        pi /= pi.sum()
        flow = pi[:, None] * T
        assert np.abs(flow - flow.T).max() < 1e-14              # detailed balance
        assert (T >= 0).all() and np.allclose(T.sum(axis=1), 1.0)
    # the compiled chain makes exactly these transitions (T = 1)
    T = atom_transition_matrix(net, worlds, block_prob=0.4)
    chain = AtomChain(net, AtomMHOptions(block_prob=0.4, seed=3, tie_max=1).check())     # single moves
    N = 150_000
    store = np.zeros((N, net.n_atoms), dtype=bool)
    start = tuple(chain.world.tolist())
    chain.sample(N, 1, store=store)
    index = {x: k for k, x in enumerate(worlds)}
    seq = [index[start]] + [index[tuple(w)] for w in store.tolist()]
    counts = np.zeros_like(T)
    np.add.at(counts, (seq[:-1], seq[1:]), 1.0)
    rows = counts.sum(axis=1, keepdims=True)
    est = counts / rows
    sd = np.sqrt(np.maximum(T * (1 - T), 1e-12) / rows)
    assert (counts[T == 0] == 0).all()                          # no impossible transition
    assert np.abs(est - T).max() < 0.02
    assert (np.abs(est - T) / sd).max() < 5.0


# ================================================================ clusterings: models

CLUSTER_MLN = """
Title(bib, title)
HasWord(title, word)
Venue(bib, venue)
Same(bib, bib)
{w1} Title(x, t) ^ Title(y, t) => Same(x, y)
{w2} HasWord(t1, w) ^ HasWord(t2, w) ^ Title(x, t1) ^ Title(y, t2) => Same(x, y)
{w3} HasWord(t1, w) ^ !HasWord(t2, w) ^ Title(x, t1) ^ Title(y, t2) => Same(x, y)
{w4} !Same(x, y)
"""

FIXED_DB = """Title(A, T1)
Title(B, T1)
Title(C, T2)
Title(D, T3)
Title(E, T4)
HasWord(T1, W1)
HasWord(T1, W2)
HasWord(T2, W2)
HasWord(T2, W3)
HasWord(T3, W3)
HasWord(T4, W4)
Venue(A, V1)
Venue(B, V2)
Venue(C, V1)
Venue(E, V2)
"""


def _venue_features():
    return [SetFeature("size", "Same", -0.7, (), op=">=", threshold=3),
            SetFeature("distinct", "Same", -0.5, ("x",), body=Atom("Venue", (Var("x"), Var("z"))), value_var="z")]


def _fixed_model(extra: str = "", weights=(1.3, 0.7, -0.4, 0.5), set_features=True):
    w = dict(zip(("w1", "w2", "w3", "w4"), weights))
    mln = MLN.from_string(CLUSTER_MLN.format(**w))
    db = Database.from_string(FIXED_DB + extra, mln=mln)
    return build_cluster_model(mln, db, "Same", set_features=_venue_features() if set_features else ())


def _random_cluster_model(rng, n: int):
    """Mentions M0..M{n-1} with random titles, title words and venues,
    random weights, set-level features over venues and sizes."""
    w = {k: round(float(rng.uniform(-1.5, 1.5)), 2) for k in ("w1", "w2", "w3", "w4")}
    mln = MLN.from_string(CLUSTER_MLN.format(**w))
    lines = [f"Title(M{i}, T{int(rng.integers(0, n // 2 + 1))})" for i in range(n)]
    for t in range(n // 2 + 1):
        for word in rng.choice(4, size=int(rng.integers(1, 3)), replace=False):
            lines.append(f"HasWord(T{t}, W{int(word)})")
    for i in range(n):
        if rng.random() < 0.7:
            lines.append(f"Venue(M{i}, V{int(rng.integers(0, 2))})")
    db = Database.from_string("\n".join(lines) + "\n", mln=mln)
    sfs = [SetFeature("size", "Same", round(float(rng.uniform(-1, 1)), 2), (), op=">=", threshold=3),
           SetFeature("distinct", "Same", round(float(rng.uniform(-1, 0.5)), 2), ("x",),
                      body=Atom("Venue", (Var("x"), Var("z"))), value_var="z")]
    return build_cluster_model(mln, db, "Same", set_features=sfs)


def _dense(ans) -> np.ndarray:
    p = np.array(ans.pair_probabilities, dtype=float)
    np.fill_diagonal(p, 1.0)
    return p


# ================================================================ clusterings: detailed balance

def _observed_path(st, prop, n):
    """The path key and new labels of the proposal ``propose`` just drew."""
    kind = int(prop[0])
    lab = st.label.copy()
    if kind in (0, 3):
        lab[lab == prop[2]] = prop[1]
        y = canon(lab)
        return ("merge", y), y
    if kind == 1:
        mem = st.buf[:prop[4]]
        lab[mem[st.side[mem] == 1]] = n + 7
        y = canon(lab)
        return ("split", y), y
    i = int(prop[3])
    lab[i] = prop[2] if prop[2] >= 0 else n + 7
    y = canon(lab)
    return ("move", i, y), y


def _check_cluster_chain(model, probs, calls: int, seed: int) -> dict:
    """From every valid clustering, draw ``calls`` proposals with the compiled
    ``propose`` and check against the pure-Python derivation: each observed
    proposal is one the derivation gives, drawn with the derived frequency;
    its score change is the difference of the scores; its log density
    ratio is the derived one. Then build the transition matrix from the
    derived proposal probabilities and the compiled acceptance ratios and
    check detailed balance (temperatures 1 and 2)."""
    md = model.arrays
    n = model.n
    probs = np.asarray(probs, dtype=float)
    cum = np.cumsum(probs)
    neighbors = [md.indices[md.indptr[i]:md.indptr[i + 1]].tolist() for i in range(n)]
    states = [s for s in partitions(n) if satisfies_constraints(model, s)]
    valid = set(states)
    score = {s: model.score(np.array(s)) for s in states}
    derived = {s: cluster_proposals(s, probs, neighbors) for s in states}
    for s in states:
        out, null = derived[s]
        assert sum(out.values()) + null == pytest.approx(1.0, abs=1e-12)
    seed_rng(seed)
    prop = np.zeros(5, np.int64)
    code_ratio = {}
    worst = {"delta": 0.0, "ratio": 0.0, "z": 0.0}
    for x in states:
        st, sc = model.new_state(np.array(x))
        freq: Counter = Counter()
        for _ in range(calls):
            d, lq = propose(md, st, sc, probs, cum, prop)
            if np.isnan(d):
                freq["null"] += 1
                continue
            path, y = _observed_path(st, prop, n)
            freq[path] += 1
            assert path in derived[x][0], f"{x}: the chain proposed {path}, which the derivation does not give"
            if y not in valid:
                assert d == -np.inf, f"{x} -> {y} breaks a constraint but delta = {d}"
                continue
            assert d != -np.inf
            worst["delta"] = max(worst["delta"], abs(d - (score[y] - score[x])))
            back = derived[y][0][reverse_path(path, x)]
            ratio = math.log(back) - math.log(derived[x][0][path])
            worst["ratio"] = max(worst["ratio"], abs(lq - ratio))
            code_ratio[(x, path)] = lq
        out, null = derived[x]
        for path, q in list(out.items()) + [("null", null)]:
            if q > 0:
                z = abs(freq.get(path, 0) / calls - q) / math.sqrt(q * (1 - q) / calls + 1e-300)
                worst["z"] = max(worst["z"], z)
    assert worst["delta"] < 1e-9, worst
    assert worst["ratio"] < 1e-9, worst
    assert worst["z"] < 5.5, worst
    index = {s: k for k, s in enumerate(states)}
    for temp in (1.0, 2.0):
        T = np.zeros((len(states), len(states)))
        for x in states:
            for path, q in derived[x][0].items():
                y = path[-1]
                if y not in valid:
                    continue
                lq = code_ratio.get((x, path))
                assert lq is not None, f"{x}: path {path} of probability {q:.4f} never drawn"
                T[index[x], index[y]] += q * min(1.0, math.exp((score[y] - score[x]) / temp + lq))
        T[np.diag_indices_from(T)] = 1.0 - T.sum(axis=1)
        pi = np.exp(np.array([score[s] for s in states]) / temp)
        pi /= pi.sum()
        flow = pi[:, None] * T
        assert np.abs(flow - flow.T).max() < 1e-14, f"detailed balance broken at T={temp}"
        assert (T >= -1e-15).all()
    return worst


def test_cluster_chain_densities_and_detailed_balance_five_mentions():
    """Five mentions (one without links), set-level features and a
    cannot-link evidence atom; the default mixture of the five proposals."""
    model = _fixed_model("!Same(B, D)\n")
    assert model.n == 5
    degrees = np.diff(model.arrays.indptr)
    assert (degrees == 0).any() and (degrees >= 2).any()
    _check_cluster_chain(model, MHOptions().probs, calls=1500, seed=7)


@pytest.mark.parametrize("probs", [(0.3, 0.3, 0.2, 0.1, 0.1), (0.5, 0.5, 0.0, 0.0, 0.0), (0.0, 0.0, 0.5, 0.0, 0.5)])
def test_cluster_chain_densities_and_detailed_balance_four_mentions(probs):
    """Four mentions with a must-link evidence atom; other mixtures,
    including some without merges and splits, or without moves."""
    mln = MLN.from_string(CLUSTER_MLN.format(w1=0.9, w2=0.4, w3=-0.6, w4=0.3))
    db = Database.from_string(FIXED_DB.replace("Title(E, T4)\n", "").replace("Venue(E, V2)\n", "")
                              + "Same(C, D)\n", mln=mln)
    model = build_cluster_model(mln, db, "Same", set_features=_venue_features())
    assert model.n == 4
    _check_cluster_chain(model, probs, calls=2500, seed=3)


# ================================================================ clusterings: marginals and MAP

def test_cluster_marginals_match_exact_on_generated_models():
    rng = np.random.default_rng(17)
    for k in range(3):
        n = 5 + k % 2
        model = _random_cluster_model(rng, n)
        exact, _, _ = exact_pair_marginals(model)
        ans = cluster_marginals(model, MHOptions(samples=15000, thin=n, burn_in=500, seed=k))
        err = float(np.abs(_dense(ans) - exact).max())
        assert err <= TOL, f"model {k}: max error {err:.4f}"


def test_cluster_marginals_with_constraints_match_exact():
    model = _fixed_model("!Same(A, E)\nSame(B, C)\n")
    exact, _, _ = exact_pair_marginals(model)
    ans = cluster_marginals(model, MHOptions(samples=15000, thin=5, seed=2))
    assert np.abs(_dense(ans) - exact).max() <= TOL
    assert ans.pair_probabilities[1, 2] == 1.0 and ans.pair_probabilities[0, 4] == 0.0


def test_cluster_mh_map_reaches_the_enumerated_optimum():
    rng = np.random.default_rng(23)
    for k in range(4):
        model = _random_cluster_model(rng, 6)
        _, states, scores = exact_pair_marginals(model)
        best = float(scores.max())
        ans = cluster_map(model, MHOptions(anneal=2.0, steps=6000, restarts=2, seed=k))
        assert ans.score == pytest.approx(best, abs=1e-9)
        assert ans.stats["score_drift"] < 1e-9


PLANTED_MLN = """
Group(m, g)
Link(m, m)
Same(m, m)
1.5 Group(x, g) ^ Group(y, g) => Same(x, y)
0.6 Link(x, y) => Same(x, y)
0.9 !Same(x, y)
"""


def test_agglomerative_map_is_exact_when_greedy_merging_is():
    """Positive pair weights inside planted clusters, negative across: every
    merge inside a planted cluster raises the score, every other lowers it,
    so greedy merging ends at the optimum (checked by enumeration)."""
    rng = np.random.default_rng(4)
    mln = MLN.from_string(PLANTED_MLN)
    for trial in range(3):
        n = 7
        group = rng.integers(0, 3, size=n)
        lines = [f"Group(M{i}, G{int(group[i])})" for i in range(n)]
        lines += [f"Link(M{i}, M{j})" for i in range(n) for j in range(n)
                  if i != j and group[i] == group[j] and rng.random() < 0.5]
        model = build_cluster_model(mln, Database.from_string("\n".join(lines) + "\n", mln=mln), "Same")
        _, states, scores = exact_pair_marginals(model)
        best = states[int(np.argmax(scores))]
        names = model.mention_names
        planted = canon([group[int(name[1:])] for name in names])
        assert best == planted
        ans = agglomerative_map(model, AgglomerativeOptions(polish_steps=0))
        assert canon(ans.labels) == planted
        assert ans.score == pytest.approx(float(scores.max()), abs=1e-9)
        greedy = cluster_map(model, MHOptions(seed=trial))       # T = 0: greedy MH reaches it too
        assert greedy.score == pytest.approx(float(scores.max()), abs=1e-9)


# ================================================================ user proposals: worlds

def _flip_one(view, rng):
    """The built-in single flip, in Python."""
    if len(view.free_atoms) == 0:
        return None
    return Flip([int(view.free_atoms[rng.integers(len(view.free_atoms))])])


def _block_move(view, rng):
    """The built-in block move, in Python."""
    if len(view.blocks) == 0:
        return None
    b = int(view.blocks[rng.integers(len(view.blocks))])
    t = int(view.block_true[b])
    others = [int(a) for a in view.block_atoms(b) if a != t]
    return Flip([t, others[rng.integers(len(others))]], 0.0, 0.0)


def test_user_proposals_reimplementing_the_built_in_ones_sample_the_same_distribution():
    rng = np.random.default_rng(99)
    for i in range(4):
        n = int(rng.integers(4, 9))
        net = random_network(rng, n, 2 * n, p_hard=0.0, n_blocks=2)
        exact = exact_marginals(net).probabilities
        chain = AtomChain(net, AtomMHOptions().check())
        nf, nb = len(chain.free), len(chain.blocks)
        if nb == 0 or nf == 0:
            continue
        only_user = [UserProposal(_flip_one, nf / (nf + nb)), UserProposal(_block_move, nb / (nf + nb))]
        r = mh_marginals(net, samples=3000, seed=i, user_proposals=only_user)
        assert r.stats["flips_proposed"] == 0 and r.stats["block_moves_proposed"] == 0
        assert r.stats["user__flip_one_proposed"] > 0 and r.stats["user__block_move_accepted"] > 0
        assert np.abs(r.probabilities - exact).max() <= TOL
        mixed = mh_marginals(net, samples=3000, seed=i, user_proposals=[(_block_move, 0.3)])
        assert mixed.stats["flips_proposed"] > 0 and mixed.stats["user__block_move_proposed"] > 0
        assert np.abs(mixed.probabilities - exact).max() <= TOL


def _tied_pair() -> GroundNetwork:
    """a <=> b as two hard clauses; P(a = b = true) = e^2.5 / (1 + e^2.5)."""
    return GroundNetwork.from_clauses(2, [
        (None, [(0, True), (1, False)]), (None, [(0, False), (1, True)]),
        (1.5, [(0, True)]), (1.0, [(1, True)]),
    ])


def test_a_user_proposal_connects_what_hard_clauses_separate():
    net = _tied_pair()
    exact = exact_marginals(net).probabilities
    wrong_mode = np.zeros(2, dtype=bool)
    with pytest.warns(UserWarning, match="hard clauses"):
        stuck = mh_marginals(net, samples=2000, seed=0, init=wrong_mode, rao_blackwell=False, tie_max=1)
    assert np.all(stuck.probabilities == 0.0)
    assert stuck.stats["hard_refused"] > 0

    def both(view, rng):
        return Flip([0, 1])

    with warnings.catch_warnings():
        warnings.simplefilter("error")               # user proposals: no warning
        r = mh_marginals(net, samples=4000, seed=0, init=wrong_mode, user_proposals=[(both, 0.5)], tie_max=1)
    assert np.abs(r.probabilities - exact).max() <= TOL
    m = mh_map(net, init=wrong_mode, user_proposals=[(both, 0.5)], seed=0)
    assert m.score == pytest.approx(2.5) and m.world.all()


def test_user_flip_breaking_a_block_is_refused_and_densities_are_used():
    net = GroundNetwork.from_clauses(3, [(1.0, [(0, True)]), (2.0, [(1, True)])], blocks=[[0, 1, 2]])

    def bad(view, rng):
        return Flip([int(view.block_true[0])])        # leaves the block without a true atom

    r = mh_marginals(net, samples=500, seed=0, user_proposals=[(bad, 0.5)])
    assert r.stats["user_bad_refused"] == r.stats["user_bad_proposed"] > 0

    # an asymmetric proposal: "move the true value to atom 0" only, with the
    # right densities (forward 1, backward: the built-in-like move back is
    # not this proposal's, so it cannot be reversed): always rejected at T > 0
    def to_zero(view, rng):
        t = int(view.block_true[0])
        return None if t == 0 else Flip([t, 0], 0.0, -math.inf)

    r = mh_marginals(net, samples=3000, seed=1, user_proposals=[(to_zero, 0.5)])
    assert r.stats["user_to_zero_accepted"] == 0
    w = np.exp([1.0, 2.0, 0.0])
    assert np.abs(r.probabilities - w / w.sum()).max() <= TOL


def test_user_proposal_errors():
    net = GroundNetwork.from_clauses(3, [(1.0, [(0, True), (1, True)]), (0.5, [(2, False)])])
    cases = [
        (lambda v, r: Merge(0, 1), "returned Merge"),
        (lambda v, r: Flip([0, 0]), "twice"),
        (lambda v, r: Flip([5]), "out of range"),
        (lambda v, r: Flip([0], log_forward=-math.inf), "log_forward"),
        (lambda v, r: Flip([0.5]), "atom ids"),
    ]
    for fn, msg in cases:
        with pytest.raises(InferenceError, match=msg):
            mh_marginals(net, samples=10, user_proposals=[(fn, 1.0)])
    for bad, msg in [([(len, 0.0)], "probability"), ([(len, 0.7), (len, 0.6)], "sum to"),
                     ([("nope", 0.5)], "not callable"), ([len], "pair"), (len, "list")]:
        with pytest.raises(OptionError, match=msg):
            AtomMHOptions(user_proposals=bad).check()

    def writes(view, rng):
        view.world[0] = True

    with pytest.raises(ValueError):                   # the view is read-only
        mh_marginals(net, samples=10, user_proposals=[(writes, 1.0)])


# ================================================================ user proposals: clusterings

def _merge_split(view, rng):
    """The built-in merge and split kinds, in Python (each half the time):
    their densities include that internal choice."""
    c = view.n_clusters
    multi = view.multi()
    if rng.random() < 0.5:
        if c < 2:
            return None
        a, b = (int(v) for v in rng.choice(view.clusters(), size=2, replace=False))
        m = view.size(a) + view.size(b)
        s_after = len(multi) - (view.size(a) >= 2) - (view.size(b) >= 2) + 1
        return Merge(a, b, math.log(0.5 * 2 / (c * (c - 1))),
                     math.log(0.5 / s_after / (2 ** (m - 1) - 1)))
    if len(multi) == 0:
        return None
    C = int(multi[rng.integers(len(multi))])
    mem = view.members(C)
    m = len(mem)
    while True:
        bits = rng.integers(0, 2, size=m).astype(bool)
        if 0 < bits.sum() < m:
            break
    return Split(C, mem[bits].tolist(), math.log(0.5 / len(multi) / (2 ** (m - 1) - 1)),
                 math.log(0.5 * 2 / ((c + 1) * c)))


def _move_one(view, rng):
    """The built-in move kind, in Python."""
    n, c = view.n, view.n_clusters
    i = int(rng.integers(n))
    A = int(view.labels[i])
    alone = view.size(A) == 1
    targets = [int(k) for k in view.clusters() if k != A] + ([] if alone else [None])
    if not targets:
        return None
    to = targets[rng.integers(len(targets))]
    c_after = c + (to is None) - alone
    back_targets = (c_after - 1) + (0 if to is None else 1)
    return MoveMention(i, to, -math.log(n * len(targets)), -math.log(n * back_targets))


def test_cluster_user_proposals_reimplementing_built_ins_sample_the_same_distribution():
    model = _fixed_model("!Same(A, E)\n")
    exact, _, _ = exact_pair_marginals(model)
    user = [UserProposal(_merge_split, 0.5), UserProposal(_move_one, 0.5)]
    ans = cluster_marginals(model, MHOptions(samples=4000, thin=5, burn_in=200, seed=5, user_proposals=user))
    assert ans.stats["proposals"] == 0                          # built-ins never used
    assert ans.stats["user__merge_split_accepted"] > 0 and ans.stats["user__move_one_accepted"] > 0
    assert ans.stats["user__move_one_refused"] > 0               # moves onto the cannot-link
    assert np.abs(_dense(ans) - exact).max() <= TOL
    mixed = cluster_marginals(model, MHOptions(samples=8000, thin=5, seed=6, user_proposals=[(_merge_split, 0.2)]))
    assert mixed.stats["proposals"] > 0 and mixed.stats["user__merge_split_proposed"] > 0
    assert np.abs(_dense(mixed) - exact).max() <= TOL
    best = cluster_map(model, MHOptions(anneal=2.0, steps=3000, seed=1, user_proposals=user))
    _, _, scores = exact_pair_marginals(model)
    assert best.score == pytest.approx(float(scores.max()), abs=1e-9)


def test_cluster_user_proposal_errors():
    model = _fixed_model()
    cases = [
        (lambda v, r: Flip([0]), "returned Flip"),
        (lambda v, r: Merge(0, 0), "itself"),
        (lambda v, r: Merge(0, 99), "not a cluster id"),
        (lambda v, r: Split(int(v.labels[0]), [0]), "proper subset"),
        (lambda v, r: MoveMention(17, None), "not a mention"),
    ]
    for fn, msg in cases:
        with pytest.raises(InferenceError, match=msg):
            cluster_marginals(model, MHOptions(samples=5, user_proposals=[(fn, 1.0)]))
    with pytest.raises(OptionError, match="probability"):
        MHOptions(user_proposals=[(len, 2.0)]).check()


# ================================================================ options, dispatch, stats

def test_options_are_checked():
    for kw, msg in [({"steps": -1}, "steps"), ({"thin": 0}, "thin"), ({"samples": 0}, "samples"),
                    ({"temperature": -1.0}, "temperature"), ({"anneal": 0.0}, "anneal"),
                    ({"restarts": 0}, "restarts"), ({"seed": 1.5}, "seed"), ({"max_seconds": 0}, "max_seconds"),
                    ({"block_prob": 1.5}, "block_prob"), ({"hard_weight": -2.0}, "hard_weight"),
                    ({"rao_blackwell": "yes"}, "rao_blackwell"), ({"init": [[True]]}, "init")]:
        with pytest.raises(OptionError, match=msg):
            AtomMHOptions(**kw).check()
    net = _tiny_network()
    with pytest.raises(OptionError, match="does not take"):
        mh_map(net, chains=3)
    with pytest.raises(OptionError, match="either"):
        mh_map(net, AtomMHOptions(), steps=3)
    with pytest.raises(OptionError, match="init has"):
        mh_map(net, init=np.zeros(3, dtype=bool))
    with pytest.raises(OptionError, match="does not take"):
        check_options("mh", {"chains": 2})
    check_options("mh", {"samples": 10, "progress": print})


def test_dispatch_from_the_solvers():
    net = _tiny_network()
    r = solve_map(net, "mh", anneal=2.0, steps=2000, seed=1)
    assert r.method == "mh" and r.score == pytest.approx(exact_map(net).score)
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # tie moves: the chain moves, no warning
        m = solve_marginals(net, "mh", samples=4000, seed=1)
    assert np.abs(m.probabilities - exact_marginals(net).probabilities).max() <= TOL


def test_hard_weight_softens_hard_clauses():
    net = _tied_pair()
    soft = GroundNetwork.from_clauses(2, [
        (3.0, [(0, True), (1, False)]), (3.0, [(0, False), (1, True)]), (1.5, [(0, True)]), (1.0, [(1, True)]),
    ])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = mh_marginals(net, samples=8000, seed=0, hard_weight=3.0)
    assert np.abs(r.probabilities - exact_marginals(soft).probabilities).max() <= TOL


def test_determinism_progress_and_time_limit():
    rng = np.random.default_rng(1)
    net = random_network(rng, 30, 80, p_hard=0.0, n_blocks=3)
    a = mh_marginals(net, samples=300, seed=4)
    b = mh_marginals(net, samples=300, seed=4)
    assert np.array_equal(a.probabilities, b.probabilities)
    seen = []
    mh_marginals(net, samples=300, seed=4, progress=seen.append)
    assert seen and seen[-1] == 300
    steps = []
    r = mh_map(net, steps=5000, restarts=2, seed=0, progress=steps.append)
    assert steps[-1] == 10000 and r.stats["restarts"] == 2 and r.stats["proposals"] == 10000
    slow = mh_marginals(net, samples=10**9, thin=10**6, max_seconds=0.2, seed=0)
    assert slow.stats["stopped_early"] and slow.samples >= 1
    t = mh_map(net, steps=10**12, max_seconds=0.2, seed=0)
    assert t.stats["stopped_early"] and t.hard_violated == 0


def test_networks_without_variables():
    empty = GroundNetwork.from_clauses(3, [])
    assert np.allclose(mh_marginals(empty, samples=5).probabilities, 0.5)
    r = mh_map(empty)
    assert not r.world.any() and r.score == 0.0


def test_clusters_queried():
    eq = MLN.from_string("""
Name(m, name)
Same(m, m)
Other(m)
Same(x, x).
Same(x, y) => Same(y, x).
Same(x, y) ^ Same(y, z) => Same(x, z).
1.0 Name(x, n) ^ Name(y, n) => Same(x, y)
0.5 Other(x)
""")
    assert clusters_queried(eq, [Query("Same")])
    assert clusters_queried(eq, None)
    assert not clusters_queried(eq, [Query("Other")])
    plain = MLN.from_string("Smokes(p)\nCancer(p)\n1.5 Smokes(x) => Cancer(x)\n")
    assert not clusters_queried(plain, None)


def test_view_finds_atoms_by_name():
    net = GroundNetwork.from_clauses(3, [(1.0, [(0, True), (1, True)]), (0.5, [(2, False)])])
    seen = {}

    def look(view, rng):
        seen["id"] = view.atom("a(A1)")
        seen["score"] = view.score
        return Flip([view.atom("a( A2 )")])

    mh_marginals(net, samples=5, user_proposals=[(look, 1.0)])
    assert seen["id"] == 1 and isinstance(seen["score"], float)

    def missing(view, rng):
        return Flip([view.atom("b(A1)")])

    with pytest.raises(InferenceError, match="no unknown atom"):
        mh_marginals(net, samples=5, user_proposals=[(missing, 1.0)])
