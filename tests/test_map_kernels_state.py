"""The normalised clause arrays and the count kernels shared by local search."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.kernels_state import flip_counts, init_counts, normalise_clauses, sat_arrays, subset
from markovlogic.infer.map import component_groups

from networks import random_components, random_network


def _score_cost_hard(sat, world):
    count = np.zeros(sat.n_clauses, np.int32)
    txor = np.zeros(sat.n_clauses, np.int32)
    init_counts(world, sat.clause_start, sat.lit_atom, sat.lit_positive, count, txor)
    holds = count > 0
    soft = ~sat.is_hard
    w = sat.weight
    score = w[soft & holds].sum() + sat.const_score
    cost = np.abs(w[soft & (((w > 0) & ~holds) | ((w < 0) & holds))]).sum() + sat.const_cost
    hard = int((sat.is_hard & ~holds).sum()) + sat.n_empty_hard
    return score, cost, hard


@pytest.mark.parametrize("seed", range(40))
def test_normalisation_keeps_score_cost_and_hard(seed):
    rng = np.random.default_rng(seed)
    net = random_network(rng, 7, 14, max_len=5, n_blocks=2, repeats=True)
    sat = sat_arrays(net)
    # every atom at most once per clause after normalisation
    for c in range(sat.n_clauses):
        atoms = sat.lit_atom[sat.clause_start[c]:sat.clause_start[c + 1]]
        assert len(set(atoms.tolist())) == len(atoms) > 0
    for _ in range(8):
        world = rng.random(net.n_atoms) < 0.5
        score, cost, hard = _score_cost_hard(sat, world)
        assert score == pytest.approx(net.score(world), abs=1e-9)
        assert cost == pytest.approx(net.cost(world), abs=1e-9)
        assert hard == int((net.is_hard & ~net.satisfied(world)).sum())


def test_tautology_duplicate_and_empty_clauses():
    net = GroundNetwork.from_clauses(
        2,
        [
            (1.5, [(0, True), (0, False)]),      # tautology: always satisfied
            (-2.0, [(1, True), (1, False)]),     # negative tautology: always costs 2
            (0.5, [(0, True), (0, True)]),       # duplicate literal
            (3.0, []),                           # empty soft: never satisfied, costs 3
            (0.0, [(1, True)]),                  # zero weight: irrelevant
        ],
    )
    sat = sat_arrays(net)
    assert sat.n_clauses == 1
    assert sat.lit_atom.tolist() == [0]
    assert sat.const_score == pytest.approx(1.5 - 2.0)
    assert sat.const_cost == pytest.approx(2.0 + 3.0)
    for world in ([False, False], [True, False], [True, True]):
        w = np.array(world)
        score, cost, _ = _score_cost_hard(sat, w)
        assert score == pytest.approx(net.score(w))
        assert cost == pytest.approx(net.cost(w))
    empty_hard = GroundNetwork.from_clauses(1, [(None, [])])
    assert sat_arrays(empty_hard).n_empty_hard == 1


@pytest.mark.parametrize("seed", range(20))
def test_flip_counts_matches_recount(seed):
    rng = np.random.default_rng(100 + seed)
    net = random_network(rng, 9, 20, max_len=4)
    sat = sat_arrays(net)
    world = rng.random(net.n_atoms) < 0.5
    count = np.zeros(sat.n_clauses, np.int32)
    txor = np.zeros(sat.n_clauses, np.int32)
    init_counts(world, sat.clause_start, sat.lit_atom, sat.lit_positive, count, txor)
    for a in rng.integers(0, net.n_atoms, size=30):
        flip_counts(int(a), world, sat.atom_lit_start, sat.occ_clause, sat.occ_positive, count, txor)
        fresh_c = np.zeros_like(count)
        fresh_x = np.zeros_like(txor)
        init_counts(world, sat.clause_start, sat.lit_atom, sat.lit_positive, fresh_c, fresh_x)
        assert np.array_equal(count, fresh_c) and np.array_equal(txor, fresh_x)
    # when one literal is true, txor names its atom
    one = np.flatnonzero(count == 1)
    for c in one:
        lits = range(sat.clause_start[c], sat.clause_start[c + 1])
        true_atoms = [sat.lit_atom[i] for i in lits if world[sat.lit_atom[i]] == sat.lit_positive[i]]
        assert true_atoms == [txor[c]]


@pytest.mark.parametrize("seed", range(10))
def test_component_groups_partition_the_problem(seed):
    rng = np.random.default_rng(200 + seed)
    net = random_components(rng, [3, 1, 4, 2, 5, 1], n_blocks=1)
    sat = sat_arrays(net)
    groups = component_groups(sat, net.component, max_atoms=int(rng.integers(1, 8)))
    atoms = np.concatenate([g.atoms for g in groups])
    clauses = np.concatenate([g.clauses for g in groups])
    blocks = np.concatenate([g.blocks for g in groups])
    assert len(set(atoms.tolist())) == len(atoms)
    assert sorted(clauses.tolist()) == list(range(sat.n_clauses))
    assert sorted(blocks.tolist()) == list(range(sat.n_blocks))
    for g in groups:
        # a group holds whole components
        comps = set(net.component[g.atoms].tolist())
        assert set(np.flatnonzero(np.isin(net.component, list(comps))).tolist()) >= set(
            a for a in g.atoms.tolist()
        )
        world = rng.random(net.n_atoms) < 0.5
        sub = g.sat
        local = world[g.atoms]
        count = np.zeros(sub.n_clauses, np.int32)
        init_counts(local, sub.clause_start, sub.lit_atom, sub.lit_positive, count, np.zeros_like(count))
        full = np.zeros(sat.n_clauses, np.int32)
        init_counts(world, sat.clause_start, sat.lit_atom, sat.lit_positive, full, np.zeros_like(full))
        assert np.array_equal(count, full[g.clauses])


def test_subset_renumbers_blocks():
    net = GroundNetwork.from_clauses(4, [(1.0, [(2, True), (3, False)])], blocks=[[0, 1], [2, 3]])
    sat = sat_arrays(net)
    sub = subset(sat, np.array([3, 2]), np.array([0]), np.array([1]))
    assert sub.lit_atom.tolist() == [1, 0]
    assert sub.block_atoms.tolist() == [1, 0]
    assert sub.atom_block.tolist() == [0, 0]


@pytest.mark.parametrize("seed", range(5))
def test_clause_reordering_keeps_the_problem(seed):
    from markovlogic.infer.kernels_state import atom_components, local_clause_order

    rng = np.random.default_rng(300 + seed)
    net = random_components(rng, [4, 6, 3], max_len=4, n_blocks=1)
    sat = sat_arrays(net)
    ordered = local_clause_order(sat)
    lo = np.minimum.reduceat(ordered.lit_atom, ordered.clause_start[:-1])
    assert np.all(np.diff(lo) >= 0)
    assert sorted(ordered.orig_clause.tolist()) == sorted(sat.orig_clause.tolist())
    for _ in range(5):
        world = rng.random(net.n_atoms) < 0.5
        assert _score_cost_hard(ordered, world)[:2] == pytest.approx(_score_cost_hard(sat, world)[:2])
    # the reverse index and occurrence arrays match the new clause order
    for a in range(net.n_atoms):
        ks = range(ordered.atom_lit_start[a], ordered.atom_lit_start[a + 1])
        for k in ks:
            i = ordered.atom_lit[k]
            assert ordered.lit_atom[i] == a
            assert ordered.occ_clause[k] == ordered.lit_clause[i]
            assert ordered.occ_positive[k] == ordered.lit_positive[i]
    comp, k = atom_components(sat)
    assert k == net.n_components
    assert len(set(zip(comp.tolist(), net.component.tolist()))) == k


@pytest.mark.parametrize("seed", range(20))
def test_sorted_clauses_normalise_as_the_general_sort_does(seed):
    """Clauses whose atoms come in increasing order (as the grounder writes
    them) skip the sort; the arrays equal those the sort gives from the same
    clauses written in another order."""
    rng = np.random.default_rng(500 + seed)
    net = random_network(rng, 9, 30, max_len=5, n_blocks=2, repeats=bool(seed % 2))
    start = net.clause_start
    sizes = np.diff(start)
    clause = np.repeat(np.arange(net.n_clauses), sizes)
    # each clause's literals by (atom, sign), and the same reversed
    order = np.lexsort((net.lit_positive, net.lit_atom, clause))
    rev = np.lexsort((-net.lit_positive.astype(np.int64), -net.lit_atom.astype(np.int64), clause))
    common = (net.n_atoms, start)
    tail = (net.weight, net.is_hard, net.block_start, net.block_atoms)
    a = normalise_clauses(*common, net.lit_atom[order], net.lit_positive[order], *tail)
    b = normalise_clauses(*common, net.lit_atom[rev], net.lit_positive[rev], *tail)
    for name in a._fields:
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y), name
        else:
            assert x == y, name



@pytest.mark.parametrize("seed", range(20))
def test_lean_normalisation_shares_the_same_arrays(seed):
    """``lean`` (MC-SAT's chain) leaves out the literal -> clause, atom ->
    literal and clause maps when the clauses are canonical; every other array
    equals the full normalisation's. A reverse index that does not match the
    clauses is not trusted: the full arrays come back."""
    rng = np.random.default_rng(900 + seed)
    net = random_network(rng, 9, 30, max_len=4, n_blocks=2, repeats=bool(seed % 3 == 0))
    if seed % 2:
        # the grounder's form: each clause's atoms increasing, no repeats, no zero weights
        s = sat_arrays(net)
        clauses = [(None if s.is_hard[c] else float(s.weight[c]),
                    [(int(s.lit_atom[i]), bool(s.lit_positive[i]))
                     for i in range(s.clause_start[c], s.clause_start[c + 1])]) for c in range(s.n_clauses)]
        blocks = [s.block_atoms[s.block_start[b]:s.block_start[b + 1]].tolist() for b in range(s.n_blocks)]
        net = GroundNetwork.from_clauses(net.n_atoms, clauses, blocks=blocks)
    full = sat_arrays(net)
    lean = sat_arrays(net, lean=True)
    dropped = {"lit_clause", "atom_lit", "orig_clause"}
    if seed % 2:
        assert len(lean.orig_clause) == 0
        assert np.array_equal(full.orig_clause, np.arange(net.n_clauses))
        assert len(lean.lit_clause) == len(lean.atom_lit) == 0
    else:
        assert len(lean.orig_clause) == net.n_clauses or not np.array_equal(full.orig_clause,
                                                                             np.arange(net.n_clauses))
        dropped = set()
    for name in full._fields:
        if name in dropped:
            continue
        x, y = getattr(full, name), getattr(lean, name)
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y), name
        else:
            assert x == y, name
    # a wrong reverse index (two occurrences swapped between atoms' lists) is refused
    if net.n_clauses and len(net.atom_clause) >= 2 and net.atom_clause[0] != net.atom_clause[-1]:
        bad = net.atom_clause.copy()
        bad[0], bad[-1] = bad[-1], bad[0]
        out = normalise_clauses(net.n_atoms, net.clause_start, net.lit_atom, net.lit_positive, net.weight,
                                net.is_hard, net.block_start, net.block_atoms,
                                reverse=(net.atom_clause_start, bad), lean=True)
        assert len(out.orig_clause) == out.n_clauses
        assert not np.array_equal(out.occ_clause, bad)


@pytest.mark.parametrize("seed", range(10))
def test_a_restart_that_reuses_a_state_equals_a_fresh_one(seed):
    """``feasible_state(reuse=...)`` (a chain's restart) overwrites the old
    state's arrays and gives exactly the state a fresh call gives with the
    same random stream, whatever the old state held."""
    from markovlogic.infer.samplesat import feasible_state, prepare

    rng = np.random.default_rng(700 + seed)
    net = random_network(rng, 10, 25, max_len=3, n_blocks=2, p_hard=0.3)
    prep = prepare(net)
    old, _ = feasible_state(prep, np.random.default_rng(1))
    old.count[:] = 7
    old.vlist[:] = 3
    old.sel[:] = 2
    init = rng.random(net.n_atoms) < 0.5
    fresh, f1 = feasible_state(prep, np.random.default_rng(seed), init)
    reused, f2 = feasible_state(prep, np.random.default_rng(seed), init, reuse=old)
    assert f1 == f2
    assert reused.count is old.count and reused.sel is old.sel and reused.vpos is old.vpos
    for a, b in zip(fresh, reused):
        n = int(fresh.ist[0])
        if a is fresh.vlist:                    # only the first ist entries of the violated list mean anything
            assert np.array_equal(a[:n], b[:n])
        else:
            assert np.array_equal(a, b)
