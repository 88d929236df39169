"""Tie moves of the Metropolis-Hastings samplers over worlds (infer/mh.py,
issue 30): a flip that breaks a hard clause propagates along the hard
clauses and the tied atoms flip together, accepted with the
Metropolis-Hastings ratio of the propagation counts. Checked against exact
enumeration (marginals) and against a pure-Python reference of the
transition matrix (detailed balance, and the compiled chain's transitions);
a chain that cannot move says so (``frozen_atoms`` and a warning)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from markovlogic import MLN, Database
from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.exact import exact_marginals
from markovlogic.infer.mh import AtomChain, AtomMHOptions, mh_marginals
from markovlogic.infer.multitask_mh import multitask_marginals
from mh_reference import connected, feasible_worlds, tie_transition_matrix
from networks import random_clause_list

TOL = 0.05

ISSUE_MLN = """
S(d)
P(d)
1.371 !S(x) v P(x)
1.97 S(y)
!S(y) v !P(x) v P(y).
"""
ISSUE_DB = "!S(A)\nS(B)\nS(C)\n"


def _issue_network() -> GroundNetwork:
    """The issue's example after evidence: P(x) => P(B) and P(x) => P(C)."""
    return GroundNetwork.from_clauses(3, [
        (1.371, [(1, True)]), (1.371, [(2, True)]),
        (None, [(0, False), (1, True)]), (None, [(0, False), (2, True)]),
        (None, [(1, False), (2, True)]), (None, [(2, False), (1, True)]),
    ])


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kw)


def test_issue_example_through_the_model():
    mln = MLN.from_string(ISSUE_MLN)
    db = Database.from_string(ISSUE_DB, mln=mln)
    exact = mln.infer(db, queries=["P"], method="exact").as_dict()
    assert exact["P(A)"] == pytest.approx(0.4844, abs=1e-3)
    for method in ("mh", "multitask-mh"):
        res = _quiet(mln.infer, db, queries=["P"], method=method, samples=4000, seed=1)
        got = res.as_dict()
        for atom in ("P(A)", "P(B)", "P(C)"):
            assert abs(got[atom] - exact[atom]) < TOL, (method, atom, got[atom], exact[atom])
        assert res.stats["frozen_atoms"] == 0
        assert res.stats["tie_moves_accepted"] > 0


@pytest.mark.parametrize("rb", [True, False])
def test_issue_example_from_the_all_false_start(rb):
    net = _issue_network()
    exact = exact_marginals(net).probabilities
    start = np.zeros(3, dtype=bool)
    r = _quiet(mh_marginals, net, samples=6000, seed=0, init=start, rao_blackwell=rb)
    assert np.abs(r.probabilities - exact).max() < TOL, r.probabilities
    m = _quiet(multitask_marginals, net, samples=6000, seed=0, init=start, rao_blackwell=rb)
    assert np.abs(m.probabilities - exact).max() < TOL, m.probabilities


def test_a_chain_that_cannot_move_says_so():
    """Single flips only (tie_max=1): the chain stays in the all-false start;
    the answer names the frozen atoms and warns, instead of a quiet 0."""
    net = _issue_network()
    start = np.zeros(3, dtype=bool)
    with pytest.warns(UserWarning) as caught:              # single moves with hard clauses: warned up front too
        r = mh_marginals(net, samples=500, seed=0, init=start, tie_max=1)
    assert any("could not move 3 atom(s)" in str(w.message) for w in caught)
    assert any("single-variable moves" in str(w.message) for w in caught)
    assert r.stats["frozen_atoms"] == 3            # every single flip from all-false breaks a hard clause
    assert len(r.stats["frozen_examples"].split(", ")) == 3 and "could not move 3 atom(s)" in r.stats["warning"]
    with pytest.warns(UserWarning, match="could not move"):
        m = multitask_marginals(net, samples=500, seed=0, init=start, tie_max=1)
    assert m.stats["frozen_atoms"] >= 2


def test_atoms_forced_by_hard_clauses_are_not_frozen():
    """An atom that every feasible world sets the same way (a failed literal
    of unit propagation) is rightly constant: no warning."""
    net = GroundNetwork.from_clauses(3, [
        (None, [(0, True), (1, True)]), (None, [(0, True), (1, False)]),     # forces atom 0
        (0.5, [(2, True)]), (0.3, [(0, False), (2, True)]),
    ])
    r = _quiet(mh_marginals, net, samples=500, seed=0)
    assert r.stats["frozen_atoms"] == 0
    assert r.probabilities[0] == 1.0


def _hard_networks(seed: int, want: int, tie_max: int = 8):
    """Small random networks with hard clauses (implications and longer)
    whose feasible worlds the tie chain connects, some of them not connected
    by single flips."""
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < want:
        n = int(rng.integers(3, 8))
        clauses, blocks = random_clause_list(rng, n, int(rng.integers(n, 2 * n + 3)), max_len=3, p_hard=0.3,
                                             n_blocks=int(rng.integers(0, 2)))
        in_block = {a for b in blocks for a in b}
        free = [a for a in range(n) if a not in in_block]
        for _ in range(int(rng.integers(1, 3))):           # hard ties a <=> b, a => c
            if len(free) < 2:
                break
            a, b = (int(v) for v in rng.choice(free, 2, replace=False))
            clauses.append((None, [(a, False), (b, True)]))
            if rng.random() < 0.7:
                clauses.append((None, [(a, True), (b, False)]))
        net = GroundNetwork.from_clauses(n, clauses, blocks=blocks)
        worlds = feasible_worlds(net)
        if len(worlds) < 2:
            continue
        chain = AtomChain(net, AtomMHOptions(seed=0, tie_max=tie_max).check())
        T = tie_transition_matrix(net, chain.prep, worlds, chain.p_block, tie_max)
        if connected(T):
            out.append((net, chain, worlds, T))
    return out


def test_tie_chain_is_reversible_and_the_kernel_makes_its_transitions():
    nets = _hard_networks(7, 6)
    singles_disconnected = 0
    from mh_reference import atom_transition_matrix
    for net, chain, worlds, T in nets:
        score = np.array([net.score(np.array(x)) for x in worlds])
        pi = np.exp(score - score.max())
        pi /= pi.sum()
        flow = pi[:, None] * T
        assert np.abs(flow - flow.T).max() < 1e-12          # detailed balance
        assert (T >= -1e-15).all() and np.allclose(T.sum(axis=1), 1.0)
        if not connected(atom_transition_matrix(net, worlds, chain.p_block)):
            singles_disconnected += 1
    assert singles_disconnected >= 1
    # the compiled chain makes exactly these transitions
    for net, chain, worlds, T in nets[:3]:
        N = 60_000
        store = np.zeros((N, net.n_atoms), dtype=bool)
        start = tuple(chain.world.tolist())
        chain.sample(N, 1, store=store)
        index = {x: k for k, x in enumerate(worlds)}
        seq = [index[start]] + [index[tuple(w)] for w in store.tolist()]
        counts = np.zeros_like(T)
        np.add.at(counts, (seq[:-1], seq[1:]), 1.0)
        rows = np.maximum(counts.sum(axis=1, keepdims=True), 1.0)
        est = counts / rows
        sd = np.sqrt(np.maximum(T * (1 - T), 1e-12) / rows)
        assert (counts[T == 0] == 0).all()                  # no impossible transition
        assert (np.abs(est - T) / sd).max() < 5.5


def test_marginals_match_exact_on_hard_networks():
    for k, (net, _, _, _) in enumerate(_hard_networks(11, 8)):
        exact = exact_marginals(net).probabilities
        r = _quiet(mh_marginals, net, samples=4000, thin=20, seed=k, tie_max=8)
        assert np.abs(r.probabilities - exact).max() < TOL, (k, r.probabilities.round(3), exact.round(3))
        assert r.stats["frozen_atoms"] == 0
        m = _quiet(multitask_marginals, net, samples=3000, thin=20, seed=k, tie_max=8)
        assert np.abs(m.probabilities - exact).max() < TOL, (k, m.probabilities.round(3), exact.round(3))
