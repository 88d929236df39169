"""Issue 30 item 2: the MAP path's state is compact and its answers unchanged.

The compiled clause evaluation, the shared clause arrays of the local search,
the union-find components and the LP dual without per-literal multipliers for
negative units give the same figures as the numpy routes they replaced."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.kernels_state import atom_components, normalise_clauses, sat_arrays


def _random_network(seed: int, n_atoms: int = 30, n_clauses: int = 80, blocks: bool = False) -> GroundNetwork:
    rng = np.random.default_rng(seed)
    clauses = []
    for _ in range(n_clauses):
        size = int(rng.choice([1, 2, 2, 3, 5]))
        atoms = sorted(rng.choice(n_atoms, size=size, replace=False).tolist())
        lits = [(a, bool(rng.random() < 0.5)) for a in atoms]
        w = None if rng.random() < 0.1 else float(np.round(rng.normal(0.0, 1.5), 2) or 0.5)
        clauses.append((w, lits))
    groups = None
    if blocks:
        free = [a for a in range(n_atoms)]
        groups = [free[0:3], free[3:7], free[10:12]]
    return GroundNetwork.from_clauses(n_atoms, clauses, blocks=groups)


def _numpy_true_counts(net: GroundNetwork, world: np.ndarray) -> np.ndarray:
    """The numpy route the compiled pass replaced."""
    lit_true = (world[net.lit_atom] == net.lit_positive).astype(np.int64)
    counts = np.zeros(net.n_clauses, dtype=np.int64)
    np.add.at(counts, np.repeat(np.arange(net.n_clauses), np.diff(net.clause_start)), lit_true)
    return counts


@pytest.mark.parametrize("seed", range(6))
def test_compiled_clause_evaluation_matches_numpy(seed):
    net = _random_network(seed, blocks=seed % 2 == 1)
    rng = np.random.default_rng(100 + seed)
    for _ in range(5):
        world = rng.random(net.n_atoms) < 0.4
        counts = _numpy_true_counts(net, world)
        assert np.array_equal(net.clause_true_counts(world), counts)
        sat = counts > 0
        assert np.array_equal(net.satisfied(world), sat)
        soft = ~net.is_hard
        w = net.weight
        assert net.score(world) == float(w[soft & sat].sum())
        assert net.cost(world) == float(np.abs(w[soft & (((w > 0) & ~sat) | ((w < 0) & sat))]).sum())
        assert net.hard_violated(world) >= int((net.is_hard & ~sat).sum())


def test_a_world_of_the_wrong_length_is_refused():
    net = _random_network(0)
    with pytest.raises(IndexError, match="length 30"):
        net.satisfied(np.zeros(5, dtype=bool))


@pytest.mark.parametrize("seed", range(4))
def test_sat_arrays_share_the_networks_arrays_and_equal_their_own_copies(seed):
    net = _random_network(seed, blocks=seed % 2 == 0)
    shared = sat_arrays(net)
    own = normalise_clauses(net.n_atoms, net.clause_start, net.lit_atom, net.lit_positive, net.weight,
                            net.is_hard, net.block_start, net.block_atoms)
    for name in own._fields:
        a, b = getattr(shared, name), getattr(own, name)
        if isinstance(a, np.ndarray):
            assert np.array_equal(a, b), name
        else:
            assert a == b, name
    # shared, not copied: the reverse index, the weights (0 on hard clauses already), the block map
    assert np.shares_memory(shared.occ_clause, net.atom_clause)
    assert np.shares_memory(shared.atom_lit_start, net.atom_clause_start)
    assert np.shares_memory(shared.weight, net.weight)
    assert np.shares_memory(shared.atom_block, net.atom_block)


def test_sat_arrays_do_not_share_a_reverse_index_that_differs():
    net = _random_network(3)
    bad = net.atom_clause.copy()
    bad[[0, 1]] = bad[[1, 0]] if bad[0] != bad[1] else (bad[0] + 1, bad[1])
    sat = normalise_clauses(net.n_atoms, net.clause_start, net.lit_atom, net.lit_positive, net.weight,
                            net.is_hard, net.block_start, net.block_atoms, reverse=(net.atom_clause_start, bad))
    assert not np.shares_memory(sat.occ_clause, bad)
    assert np.array_equal(sat.occ_clause, sat.lit_clause[sat.atom_lit])


@pytest.mark.parametrize("seed", range(5))
def test_union_find_components_number_as_scipy_did(seed):
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    net = _random_network(seed, n_atoms=60, n_clauses=25, blocks=seed % 2 == 0)
    sat = sat_arrays(net)
    labels, k = atom_components(sat)
    sizes = np.diff(sat.clause_start)
    rows = np.concatenate([np.repeat(sat.lit_atom[sat.clause_start[:-1]], sizes),
                           np.repeat(sat.block_atoms[sat.block_start[:-1]], np.diff(sat.block_start))])
    cols = np.concatenate([sat.lit_atom, sat.block_atoms])
    graph = sp.coo_matrix((np.ones(len(rows), np.int8), (rows, cols)), shape=(sat.n_atoms, sat.n_atoms)).tocsr()
    k_ref, ref = connected_components(graph, directed=False)
    assert k == k_ref and np.array_equal(labels, ref) and labels.dtype == np.int32


def test_maxwalksat_keeps_no_block_scratch_without_blocks_and_answers_the_same():
    from markovlogic.infer.exact import exact_map
    from markovlogic.infer.maxwalksat import Search, maxwalksat

    plain = _random_network(7, n_atoms=12, n_clauses=40)
    assert len(Search(sat_arrays(plain), 0).stamp) == 0
    with_blocks = _random_network(8, n_atoms=12, n_clauses=40, blocks=True)
    assert len(Search(sat_arrays(with_blocks), 0).stamp) == with_blocks.n_clauses
    for net in (plain, with_blocks):
        best = exact_map(net)
        got = maxwalksat(net, seed=1, max_flips=2000, max_tries=5)
        assert got.hard_violated == best.hard_violated
        assert got.cost == pytest.approx(best.cost, abs=1e-9)


def test_lp_dual_bound_with_negative_units_is_valid_and_tight_on_a_cut():
    """Negative units take their multiplier from their weight (no per-literal array):
    on implications plus units (a minimum cut) the ascent reaches the optimum."""
    from markovlogic.infer.exact import exact_map
    from markovlogic.infer.lpbound import network_dual

    rng = np.random.default_rng(5)
    n = 14
    clauses = []
    for a in range(n):
        clauses.append((float(rng.choice([-1.2, -0.6, 0.8])), [(a, True)]))
    for _ in range(25):
        a, b = sorted(rng.choice(n, 2, replace=False).tolist())
        clauses.append((float(rng.uniform(0.2, 2.0)), [(a, False), (b, True)]))
    net = GroundNetwork.from_clauses(n, clauses)
    dual = network_dual(net, max_seconds=None, max_sweeps=2000)
    best = exact_map(net)
    assert dual.cost_bound <= best.cost + 1e-9
    assert dual.cost_bound == pytest.approx(best.cost, abs=1e-6)
    assert net.cost(dual.world) == pytest.approx(best.cost, abs=1e-6)


def test_default_map_returns_the_rounded_world_when_maxwalksat_does_not_fit(monkeypatch):
    """Only the LP's memory is needed up front; MaxWalkSAT's is checked when it
    would run, and without room the rounded world comes back with its bound."""
    from markovlogic.infer import plan

    net = _random_network(11, n_atoms=40, n_clauses=150)
    net = net.softened(5.0)                          # no hard clause: the rounded world is feasible
    monkeypatch.setitem(plan.SOLVER_CLAUSE_BYTES, "maxwalksat", 10**15)
    res = plan.approximate_map(net, 5.0, seed=0)
    # (this network's LP is not tight: the rounded world is above the bound, so a search would have run)
    assert res.stats["lp_world_cost"] > res.stats["lp_cost_bound"] + 1e-3
    assert "memory budget" in res.stats["maxwalksat_skipped"]
    assert res.stats["path"] == "lp-rounding" and res.stats["maxwalksat_cost"] is None
    assert res.cost == pytest.approx(net.cost(res.world))
    assert res.bound is not None and res.gap is not None and res.gap >= 0.0


def test_solvers_writing_weights_leave_the_networks_arrays_alone():
    """sat_arrays shares the network's weight array; the MC-SAT chain and the
    MaxWalkSAT search write new weights, and must not write through it."""
    from markovlogic.infer.maxwalksat import Search
    from markovlogic.infer.mcsat import MCSATChain

    net = _random_network(5)
    before = net.weight.copy()
    assert sat_arrays(net).weight is net.weight            # shared: the premise of this test
    chain = MCSATChain(net)
    chain.set_weights(np.full(net.n_clauses, 0.25))
    search = Search(sat_arrays(net), 0)
    search.set_weights(np.full(net.n_clauses, -0.5))
    assert np.array_equal(net.weight, before)
