"""MC-SAT and SampleSAT against exact enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from markovlogic.errors import InferenceError
from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.exact import exact_marginals
from markovlogic.infer.kernels_state import init_counts
from markovlogic.infer.mcsat import mcsat, sample_worlds
from markovlogic.infer.samplesat import (
    N_STATS, SEL_FALSE, SEL_SAT, feasible_state, prepare, rebuild_violated, samplesat,
)
from networks import infeasible_network, random_components, random_network

TOL = 0.03


def _random_small(rng: np.random.Generator) -> GroundNetwork:
    """<= 12 atoms: unit and longer clauses, hard clauses, negative weights,
    blocks, sometimes repeated atoms (duplicates, tautologies)."""
    n = int(rng.integers(1, 13))
    return random_network(
        rng, n, int(rng.integers(1, 2 * n + 4)), p_hard=0.15, p_negative=0.25,
        n_blocks=int(rng.integers(0, 3)), repeats=bool(rng.random() < 0.2),
    )


def test_mcsat_matches_exact_on_200_random_networks():
    rng = np.random.default_rng(2024)
    worst = 0.0
    for i in range(200):
        net = _random_small(rng)
        exact = exact_marginals(net).probabilities
        got = mcsat(net, samples=4000, seed=i).probabilities
        err = float(np.abs(got - exact).max())
        worst = max(worst, err)
        assert err <= TOL, f"network {i}: max error {err:.4f}\nmcsat {got.round(3)}\nexact {exact.round(3)}"
    assert worst > 0.0  # sampled, not copied


def test_pure_mcsat_without_extras_is_correct_on_weak_models():
    """Alchemy's MC-SAT (no Metropolis steps, fraction of samples) on models
    whose weights are small enough for it to mix."""
    rng = np.random.default_rng(7)
    for i in range(20):
        net = random_network(rng, 6, 8, p_hard=0.1, p_negative=0.3, n_blocks=1)
        net = net.with_params(net.params * 0.4)
        exact = exact_marginals(net).probabilities
        got = mcsat(net, samples=8000, seed=i, metropolis_steps=0, rao_blackwell=False).probabilities
        assert np.abs(got - exact).max() <= TOL, (i, got.round(3), exact.round(3))


def test_mcsat_on_many_components_at_once():
    rng = np.random.default_rng(11)
    net = random_components(rng, [int(k) for k in rng.integers(2, 9, size=40)], p_hard=0.15,
                            p_negative=0.25, n_blocks=1)
    assert net.n_components > 30
    exact = exact_marginals(net).probabilities
    # 10,000 samples: at 3,000 the largest error over these ~200 atoms ranged
    # from 0.022 to 0.065 over seeds, and passing depended on the random stream
    got = mcsat(net, samples=10000, seed=3).probabilities
    assert np.abs(got - exact).max() <= TOL


def test_hard_equivalence_crossed():
    """Two atoms tied by a hard equivalence: single flips can never move;
    SampleSAT walks cross from one mode to the other."""
    net = GroundNetwork.from_clauses(2, [
        (None, [(0, True), (1, False)]), (None, [(0, False), (1, True)]),
        (1.5, [(0, True)]), (0.5, [(1, True)]),
    ])
    exact = exact_marginals(net).probabilities
    for init in ([False, False], [True, True]):
        got = mcsat(net, samples=4000, seed=1, init=np.array(init)).probabilities
        assert np.abs(got - exact).max() <= TOL


def test_atoms_without_clauses_get_exact_values():
    # atom 0 in a clause; atom 1 free and untouched; block {2,3,4} untouched; block {5} of one
    net = GroundNetwork.from_clauses(6, [(1.0, [(0, True)])], blocks=[[2, 3, 4], [5]])
    p = mcsat(net, samples=200, seed=0).probabilities
    assert p[1] == 0.5
    assert np.allclose(p[2:5], 1 / 3)
    assert p[5] == 1.0
    assert abs(p[0] - 1 / (1 + np.exp(-1.0))) < 0.05


def test_empty_network():
    net = GroundNetwork.from_clauses(0, [])
    r = mcsat(net, samples=10)
    assert r.probabilities.shape == (0,)


def test_same_seed_same_result_whatever_the_chunking():
    rng = np.random.default_rng(5)
    net = random_network(rng, 10, 20, p_hard=0.2, n_blocks=2)
    a = mcsat(net, samples=3000, seed=42)
    seen = []
    b = mcsat(net, samples=3000, seed=42, progress=seen.append)
    c = mcsat(net, samples=3000, seed=43)
    assert np.array_equal(a.probabilities, b.probabilities)
    assert not np.array_equal(a.probabilities, c.probabilities)
    assert seen and seen[-1] == 3000 and seen == sorted(seen)


def test_infeasible_hard_clauses_raise():
    net = infeasible_network(np.random.default_rng(0))
    with pytest.raises(InferenceError, match="hard clauses"):
        mcsat(net, samples=10)


def test_empty_hard_clause_raises():
    net = GroundNetwork.from_clauses(2, [(None, []), (1.0, [(0, True)])])
    with pytest.raises(InferenceError, match="no literal"):
        mcsat(net, samples=10)


def test_bad_init_length_raises():
    net = GroundNetwork.from_clauses(2, [(1.0, [(0, True)])])
    with pytest.raises(InferenceError, match="initial world"):
        mcsat(net, samples=10, init=np.zeros(3, dtype=bool))


def test_max_seconds_stops_early_and_reports_samples():
    rng = np.random.default_rng(0)
    net = random_components(rng, [10] * 300, p_hard=0.1)
    r = mcsat(net, samples=10**7, burn_in=0, seed=0, max_seconds=0.3)
    assert r.stats["stopped_early"]
    assert 1 <= r.samples < 10**7
    assert r.samples == r.stats["samples"]
    assert r.stats["samples_per_second"] > 0


def test_stats():
    net = GroundNetwork.from_clauses(3, [(None, [(0, True), (1, True)]), (-1.0, [(1, True), (2, False)])])
    r = mcsat(net, samples=100, burn_in=10, seed=0)
    assert r.method == "mcsat" and r.samples == 100
    for key in ("samples", "burn_in", "seconds", "samples_per_second", "samplesat_accept_rate",
                "metropolis_accept_rate", "stopped_early", "variables"):
        assert key in r.stats
    assert r.stats["burn_in"] == 10


def _world_ok(net: GroundNetwork, w: np.ndarray) -> bool:
    return net.hard_violated(w) == 0


def test_sample_worlds_respect_hard_clauses_and_blocks():
    rng = np.random.default_rng(3)
    for i in range(10):
        net = random_network(rng, 10, 20, p_hard=0.3, n_blocks=2)
        worlds = sample_worlds(net, 200, seed=i, burn_in=10)
        assert worlds.shape == (200, net.n_atoms) and worlds.dtype == bool
        assert all(_world_ok(net, w) for w in worlds)
    # and they are draws from the model
    net = random_network(np.random.default_rng(4), 6, 10, p_hard=0.2, n_blocks=1)
    worlds = sample_worlds(net, 20000, seed=0)
    assert np.abs(worlds.mean(axis=0) - exact_marginals(net).probabilities).max() <= TOL


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_property_probabilities_valid_and_forced_atoms_exact(seed):
    rng = np.random.default_rng(seed)
    net = random_network(rng, 8, 12, p_hard=0.2, n_blocks=1)
    # force atom 0 false with a hard unit clause, unless a block or the hard clauses forbid it
    clauses = [(None if net.is_hard[c] else float(net.weight[c]), net.clause_literals(c)) for c in range(net.n_clauses)]
    blocks = [net.block_atoms[net.block_start[b]:net.block_start[b + 1]].tolist() for b in range(net.n_blocks)]
    forced = GroundNetwork.from_clauses(8, clauses + [(None, [(0, False)])], blocks=blocks)
    try:
        exact = exact_marginals(forced).probabilities
    except InferenceError:
        return
    p = mcsat(forced, samples=300, seed=seed).probabilities
    assert np.all((p >= 0) & (p <= 1))
    assert p[0] == 0.0
    assert np.all(p[exact == 0.0] == 0.0) and np.all(p[exact == 1.0] == 1.0)


# ---------------------------------------------------------------- SampleSAT kernel


def _slice_distribution(prep, sel, use_score):
    """Target distribution of a SampleSAT chain over the satisfying worlds of
    ``sel``, as {bytes of the active atoms' values: probability} (atoms that no
    clause touches are not sampled)."""
    sat = prep.sat
    n = sat.n_atoms
    count = np.zeros(sat.n_clauses, np.int32)
    txor = np.zeros_like(count)
    target: dict[bytes, float] = {}
    for bits in itertools.product([False, True], repeat=n):
        w = np.array(bits, dtype=bool)
        if sat.n_blocks and np.any(np.add.reduceat(w[sat.block_atoms].astype(int), sat.block_start[:-1]) != 1):
            continue
        init_counts(w, sat.clause_start, sat.lit_atom, sat.lit_positive, count, txor)
        violated = ((sel == SEL_SAT) & (count == 0)) | ((sel == SEL_FALSE) & (count > 0))
        if not violated.any():
            key = w[prep.active].tobytes()
            target[key] = target.get(key, 0.0) + (np.exp(sat.weight[count > 0].sum()) if use_score else 1.0)
    z = sum(target.values())
    return {k: v / z for k, v in target.items()}


def _chain_tv(prep, state, use_score, temp, p_ws, draws=20000):
    """Total variation distance between the worlds a SampleSAT chain visits
    and its target."""
    rebuild_violated(state.sel, state.count, state.vlist, state.vpos, state.ist)
    assert state.ist[0] == 0
    target = _slice_distribution(prep, state.sel, use_score)
    path = np.zeros(200, np.int32)
    stats = np.zeros(N_STATS, np.int64)
    hits = dict.fromkeys(target, 0)
    for _ in range(draws):
        samplesat(3, 100, p_ws, temp, use_score, prep.arrays, state.arrays, path, stats)
        hits[state.world[prep.active].tobytes()] += 1   # KeyError if it left the satisfying worlds
    return 0.5 * sum(abs(hits[k] / draws - target[k]) for k in target)


@pytest.mark.parametrize("use_score", [False, True])
def test_samplesat_chain_visits_satisfying_worlds_in_the_right_proportions(use_score):
    """The SampleSAT kernel alone, on fixed random constraint sets (hard
    clauses, selected positive and negative clauses, blocks): the worlds it
    visits are uniform over the satisfying ones (proportional to exp(score)
    in the Metropolis mode)."""
    rng = np.random.default_rng(99 + use_score)
    for trial in range(6):
        net = random_network(rng, 6, 9, p_hard=0.3, p_negative=0.3, n_blocks=1)
        prep = prepare(net)
        state, _ = feasible_state(prep, rng)
        sat = prep.sat
        if not use_score:  # select the soft clauses satisfied as their sign wants, with prob 1/2
            good = np.where(sat.weight > 0, state.count > 0, state.count == 0) & ~sat.is_hard
            pick = good & (rng.random(sat.n_clauses) < 0.5)
            state.sel[pick] = np.where(sat.weight[pick] > 0, SEL_SAT, SEL_FALSE)
        tv = _chain_tv(prep, state, use_score, 0.5, 0.5)
        assert tv < 0.03, (trial, tv)


@pytest.mark.parametrize("blocks, clauses", [
    ([], [[(0, True), (1, True)], [(0, True), (2, True)]]),
    ([[0, 1, 2]], [[(0, True), (3, True)], [(1, True), (4, False)], [(3, False), (4, True), (2, False)]]),
])
def test_samplesat_walks_are_corrected(blocks, clauses):
    """Slices where the walks are asymmetric (a WalkSAT move has more ways
    into some solutions than into others): at a high temperature and WalkSAT
    probability, walks accepted without the Metropolis-Hastings correction
    are off by 0.02-0.03 in total variation; the corrected kernel is not."""
    n = 1 + max(a for c in clauses for a, _ in c)
    net = GroundNetwork.from_clauses(n, [(None, c) for c in clauses], blocks=blocks)
    prep = prepare(net)
    state, _ = feasible_state(prep, np.random.default_rng(0))
    assert _chain_tv(prep, state, False, 2.0, 0.9, draws=40000) < 0.015


def test_pair_moves_cross_a_near_deterministic_barrier():
    """tuffy/cse's structure: advisedBy(x,y) v advisedBy(y,x) with weight 48,
    a unit clause making (a, b) = (0, 1) likelier than (1, 0), (1, 1)
    penalised, and b also held false by clauses to four other atoms. From
    (1, 0), a single flip costs e^-48; plain MC-SAT must leave all four
    pinning clauses out of one slice (e^-10); pair moves swap a and b."""
    clauses = [(47.94, [(0, True), (1, True)]), (15.0, [(0, False), (1, False)]), (-11.88, [(1, False)])]
    for k in (2, 3, 4, 5):
        clauses += [(2.5, [(1, False), (k, False)]), (5.0, [(k, True)])]
    net = GroundNetwork.from_clauses(6, clauses)
    exact = exact_marginals(net).probabilities
    start = np.array([True, False, True, True, True, True])
    plain = mcsat(net, samples=2000, seed=0, init=start, metropolis_steps=0).probabilities
    assert np.abs(plain - exact).max() > 0.5            # stuck where it started
    got = mcsat(net, samples=2000, seed=0, init=start)
    assert got.stats["strong_clauses"] == 2 and got.stats["pair_accept_rate"] > 0
    assert np.abs(got.probabilities - exact).max() <= TOL


def test_contradicting_hard_units_named_and_hard_weight_softens_them():
    clauses = [(None, [(0, True)]), (None, [(0, False)]), (None, [(0, True), (1, True)]), (0.7, [(1, False)])]
    net = GroundNetwork.from_clauses(2, clauses)
    with pytest.raises(InferenceError, match=r"A0\) must be both true and false"):
        mcsat(net, samples=10)
    soft = GroundNetwork.from_clauses(2, [(4.0 if w is None else w, lits) for w, lits in clauses])
    exact = exact_marginals(soft).probabilities
    got = mcsat(net, samples=3000, seed=0, hard_weight=4.0)
    assert got.stats["hard_weight"] == 4.0
    assert np.abs(got.probabilities - exact).max() <= TOL
