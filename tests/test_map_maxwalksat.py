"""MaxWalkSAT against exact enumeration, and its incremental state against a recount."""

from __future__ import annotations

import time

import numpy as np
import pytest

from markovlogic.errors import OptionError
from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.exact import exact_map
from markovlogic.infer.kernels_state import sat_arrays
from markovlogic.infer.maxwalksat import Search, start_world, maxwalksat

from networks import infeasible_network, random_components, random_network, tuffy_like


def _blocks_hold(net: GroundNetwork, world: np.ndarray) -> bool:
    if net.n_blocks == 0:
        return True
    per_block = np.add.reduceat(world[net.block_atoms].astype(np.int64), net.block_start[:-1])
    return bool((per_block == 1).all())


def _small(rng, k):
    if k % 4 == 0:
        sizes = list(rng.integers(1, 6, size=3))
        return random_components(rng, sizes, max_len=4, n_blocks=1, repeats=bool(k % 3 == 0))
    return random_network(
        rng, int(rng.integers(1, 13)), int(rng.integers(1, 30)), max_len=4,
        n_blocks=int(rng.integers(0, 4)), repeats=bool(k % 3 == 0),
    )


@pytest.mark.parametrize("chunk", range(6))
def test_reaches_the_enumerated_optimum(chunk):
    rng = np.random.default_rng(1000 + chunk)
    for k in range(40):
        net = _small(rng, k)
        best = exact_map(net)
        res = maxwalksat(net, max_flips=20_000, seed=k)
        assert res.hard_violated == 0
        assert _blocks_hold(net, res.world)
        assert res.score == pytest.approx(best.score, abs=1e-6), (chunk, k)
        assert res.cost == pytest.approx(net.cost(res.world))
        assert not res.optimal and res.bound is None


@pytest.mark.parametrize("seed", range(12))
def test_blocks_hold_at_every_returned_state(seed):
    rng = np.random.default_rng(2000 + seed)
    net = random_network(rng, 12, 25, max_len=3, n_blocks=4, p_hard=0.2)
    for flips in (0, 1, 2, 3, 5, 8, 13, 50):
        for noise in (0.0, 0.5, 1.0):
            res = maxwalksat(net, max_flips=flips, seed=seed, noise=noise)
            assert _blocks_hold(net, res.world), (flips, noise)


@pytest.mark.parametrize("seed", range(15))
def test_incremental_state_matches_a_recount(seed):
    """After any number of steps, the kernel's counts, flip values, cost and
    bad-clause list equal those computed from scratch for its world. Odd
    seeds: every clause takes the general (record) path, as when the atoms
    are too many to pack a short clause's literals."""
    rng = np.random.default_rng(3000 + seed)
    net = random_network(rng, 14, 40, max_len=5 if seed % 3 else 2, n_blocks=3, p_hard=0.15,
                         p_negative=0.3, repeats=True)
    sat = sat_arrays(net)
    search = Search(sat, seed)
    assert (search.occ_info >= 0).any()
    if seed % 2:
        search.occ_info[:] = -1
        search.clause_key[:] = -1
    search.reset(start_world(sat, rng, None), target_cost=-1.0)   # never "done"
    for _ in range(25):
        search.steps(int(rng.integers(1, 40)), noise=float(rng.random()))
        assert _blocks_hold(net, search.world)
        fresh = Search(sat, 0)
        fresh.reset(search.world, target_cost=-1.0)
        # true-literal counts; the packed count/XOR word is kept for longer clauses only
        holds = search.world[sat.lit_atom] == sat.lit_positive
        assert np.array_equal(search.true_counts(), np.add.reduceat(holds.astype(np.int64), sat.clause_start[:-1]))
        long = (np.diff(sat.clause_start) > 2) | (seed % 2 == 1)
        assert np.array_equal(search.rec[0::4][long], fresh.rec[0::4][long])
        h1, s1 = search.flip_values()
        h2, s2 = fresh.flip_values()
        assert np.array_equal(h1, h2)
        np.testing.assert_allclose(s1, s2, atol=1e-9)
        assert search.hard_violated == fresh.hard_violated
        assert search.cost == pytest.approx(fresh.cost, abs=1e-9)
        assert np.array_equal(search.bad_clauses(), fresh.bad_clauses())
        # flip values are the true score change of flipping one atom
        for a in np.flatnonzero(net.atom_block < 0)[:5]:
            w2 = search.world.copy()
            w2[a] = not w2[a]
            assert net.score(w2) - net.score(search.world) == pytest.approx(s1[a], abs=1e-9)
        # the best key describes best_world (saved lazily: compare after a sync)
        hv, cost = search.best_key
        assert hv >= 0 and cost >= -1e-9


@pytest.mark.parametrize("seed", range(10))
def test_set_weights_keeps_the_incremental_state_exact(seed):
    """New weights (some 0, some of the other sign) written into a search:
    after steps, its cost, flip values and bad list equal a recount, and a
    weight-0 clause is never bad."""
    rng = np.random.default_rng(3500 + seed)
    net = random_network(rng, 14, 40, max_len=4, n_blocks=2, p_hard=0.15, p_negative=0.3)
    sat = sat_arrays(net)
    search = Search(sat, seed)
    for _ in range(4):
        weight = rng.normal(0.0, 1.5, sat.n_clauses)
        weight[rng.random(sat.n_clauses) < 0.25] = 0.0
        search.set_weights(weight)
        search.reset(start_world(sat, rng, None), target_cost=-1.0)
        for _ in range(6):
            search.steps(int(rng.integers(1, 40)), noise=float(rng.random()))
            fresh = Search(sat, 0)
            fresh.set_weights(weight)
            fresh.reset(search.world, target_cost=-1.0)
            assert search.cost == pytest.approx(fresh.cost, abs=1e-9)
            assert search.hard_violated == fresh.hard_violated
            assert np.array_equal(np.sort(search.bad_clauses()), np.sort(fresh.bad_clauses()))
            assert not (search.sat.weight[search.bad_clauses()] == 0.0)[~sat.is_hard[search.bad_clauses()]].any()
            np.testing.assert_allclose(search.flip_values()[1], fresh.flip_values()[1], atol=1e-9)


def test_best_world_is_the_best_state_seen_per_component():
    """Components are independent: the best world combines each component's
    best state over the walk."""
    rng = np.random.default_rng(7)
    net = random_components(rng, [8, 6, 7], clauses_per_atom=3, max_len=3, p_hard=0.1, n_blocks=1)
    sat = sat_arrays(net)
    search = Search(sat, 3)
    search.reset(start_world(sat, rng, None), target_cost=-1.0)
    comp = search.atom_comp
    clause_comp = comp[sat.lit_atom[sat.clause_start[:-1]]]

    def per_component(world):
        holds = net.satisfied(world)
        out = []
        for k in range(comp.max() + 1):
            cl = sat.orig_clause[clause_comp == k]
            h = int((net.is_hard[cl] & ~holds[cl]).sum())
            w = net.weight[cl]
            c = float(np.abs(w[~net.is_hard[cl] & (((w > 0) & ~holds[cl]) | ((w < 0) & holds[cl]))]).sum())
            out.append((h, c))
        return out

    best = per_component(search.world)
    for _ in range(400):
        search.steps(1, noise=0.7)
        best = [min(b, now) for b, now in zip(best, per_component(search.world))]
    got = per_component(search.best_world)
    for (h1, c1), (h2, c2) in zip(got, best):
        assert h1 == h2 and c1 == pytest.approx(c2)
    assert search.best_key[0] == sum(h for h, _ in best)
    assert search.best_key[1] == pytest.approx(sum(c for _, c in best))


def test_many_components_reach_their_optimum():
    rng = np.random.default_rng(17)
    net = random_components(rng, [5] * 300, clauses_per_atom=2.0, max_len=3, n_blocks=1, p_hard=0.1)
    best = exact_map(net)
    res = maxwalksat(net, max_flips=300_000, seed=0)
    assert res.hard_violated == 0
    assert res.score == pytest.approx(best.score, abs=1e-6)


def test_negative_weights_are_fixed_by_making_every_literal_false():
    # -2: a v b v c  -> best: all false; +1: a alone would like a true but loses
    net = GroundNetwork.from_clauses(3, [(-2.0, [(0, True), (1, True), (2, True)]), (1.0, [(0, True)])])
    res = maxwalksat(net, max_flips=1000, seed=1)
    assert res.world.tolist() == [False, False, False]
    assert res.cost == pytest.approx(1.0)


def test_same_seed_same_answer_and_init_is_used():
    rng = np.random.default_rng(11)
    net = random_network(rng, 30, 90, max_len=3, n_blocks=3)
    a = maxwalksat(net, max_flips=500, seed=5)
    b = maxwalksat(net, max_flips=500, seed=5)
    assert np.array_equal(a.world, b.world) and a.stats["flips"] == b.stats["flips"]
    init = exact_map(random_network(np.random.default_rng(0), 3, 2)).world  # wrong length
    with pytest.raises(OptionError):
        maxwalksat(net, init=init)
    start = np.zeros(net.n_atoms, dtype=bool)
    start[net.block_atoms[net.block_start[:-1]]] = True       # first atom of each block
    res = maxwalksat(net, max_flips=0, init=start)
    # no flips: the start world, polished by greedy descent (never worse)
    assert res.stats["flips"] == 0
    assert (res.hard_violated, res.cost) <= (net.hard_violated(start), net.cost(start) + 1e-9)
    assert _blocks_hold(net, res.world)


@pytest.mark.parametrize("seed", range(10))
def test_result_is_a_local_optimum(seed):
    """After the final descent no single flip (or block move) improves."""
    rng = np.random.default_rng(4000 + seed)
    net = random_network(rng, 40, 120, max_len=3, n_blocks=5, p_hard=0.05)
    res = maxwalksat(net, max_flips=300, seed=seed)
    key = (res.hard_violated, res.cost)
    for a in np.flatnonzero(net.atom_block < 0):
        w = res.world.copy()
        w[a] = not w[a]
        assert (net.hard_violated(w), net.cost(w)) >= (key[0], key[1] - 1e-9)
    for b in range(net.n_blocks):
        members = net.block_atoms[net.block_start[b]:net.block_start[b + 1]]
        for u in members:
            w = res.world.copy()
            w[members] = False
            w[u] = True
            assert (net.hard_violated(w), net.cost(w)) >= (key[0], key[1] - 1e-9)


@pytest.mark.parametrize("seed", range(10))
def test_result_admits_no_improving_pair_of_neighbours(seed):
    """Nor does flipping two atoms that share a clause (the pair descent)."""
    rng = np.random.default_rng(4100 + seed)
    net = random_network(rng, 30, 90, max_len=3, n_blocks=3, p_hard=0.05)
    res = maxwalksat(net, max_flips=200, max_tries=2, seed=seed)
    key = (res.hard_violated, res.cost - 1e-9)
    free = net.atom_block < 0
    for c in range(net.n_clauses):
        atoms = [a for a in net.lit_atom[net.clause_start[c]:net.clause_start[c + 1]] if free[a]]
        for i, x in enumerate(atoms):
            for y in atoms[i + 1:]:
                if x == y:
                    continue
                w = res.world.copy()
                w[[x, y]] = ~w[[x, y]]
                assert (net.hard_violated(w), net.cost(w)) >= key


def test_pair_descent_escapes_what_single_flips_cannot():
    """Two atoms each worth 0.04 alone, tied by weight-2 implications both ways
    (tuffy/class: two papers citing each other): from all-false no single flip
    helps, the pair does."""
    net = GroundNetwork.from_clauses(2, [
        (0.04, [(0, True)]), (0.04, [(1, True)]),
        (2.0, [(0, False), (1, True)]), (2.0, [(1, False), (0, True)]),
    ])
    sat = sat_arrays(net)
    search = Search(sat, 0)
    search.reset(np.zeros(2, dtype=bool), 0.0)
    search.descend(pairs=False)
    assert not search.world.any()
    search.descend(pairs=True)
    assert search.world.all()
    assert net.cost(search.best_world) == pytest.approx(0.0)


def test_init_violating_blocks_is_repaired():
    net = GroundNetwork.from_clauses(4, [(1.0, [(0, True)])], blocks=[[0, 1, 2]])
    res = maxwalksat(net, max_flips=0, init=np.array([True, True, True, False]))
    assert res.world[:3].sum() == 1


def test_unsatisfiable_hard_clauses_are_reported_not_raised():
    net = infeasible_network(np.random.default_rng(1))
    res = maxwalksat(net, max_flips=2000, seed=0)
    assert res.hard_violated >= 1
    assert res.stats["hard_violated"] == res.hard_violated
    assert not res.optimal


def test_target_cost_stops_early():
    rng = np.random.default_rng(5)
    net = random_network(rng, 40, 60, max_len=3, p_hard=0.0, p_negative=0.0)
    res = maxwalksat(net, max_flips=1_000_000, target_cost=1e9, seed=0)
    assert res.stats["flips"] == 0 and res.stats["reached_target"]
    free = GroundNetwork.from_clauses(3, [(1.0, [(0, True), (1, True)]), (2.0, [(2, False)])])
    res = maxwalksat(free, max_flips=1_000_000, seed=0)
    assert res.cost == 0.0 and res.stats["flips"] < 100


def test_tries_restart_and_keep_the_best():
    rng = np.random.default_rng(9)
    net = random_network(rng, 12, 40, max_len=3)
    res = maxwalksat(net, max_flips=200, max_tries=4, seed=2, target_cost=-1.0)
    assert res.stats["tries"] == 4
    assert res.score == pytest.approx(exact_map(net).score, abs=1e-6)


def test_max_seconds_is_honoured():
    net = tuffy_like(seed=1, n_atoms=2_000, n_clauses=30_000)
    maxwalksat(net, max_flips=10)      # compile outside the clock
    start = time.perf_counter()
    res = maxwalksat(net, max_flips=10**12, max_tries=3, max_seconds=0.4, seed=0, target_cost=-1.0)
    assert time.perf_counter() - start < 1.5
    assert res.stats["timed_out"]
    assert res.stats["flips"] > 0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_flips": -1}, {"max_flips": 1.5}, {"max_tries": 0}, {"noise": 1.5}, {"noise": -0.1},
        {"max_seconds": 0}, {"max_seconds": -3}, {"target_cost": float("nan")},
    ],
)
def test_bad_options(kwargs):
    net = random_network(np.random.default_rng(0), 3, 3)
    with pytest.raises(OptionError):
        maxwalksat(net, **kwargs)


def test_empty_network():
    net = GroundNetwork.from_clauses(0, [])
    res = maxwalksat(net)
    assert res.world.shape == (0,) and res.score == 0.0
    net = GroundNetwork.from_clauses(3, [])
    res = maxwalksat(net)
    assert res.world.tolist() == [False, False, False]
