"""Presolve (infer/presolve.py) and the clique encoding of the ILP, against
enumeration: the reduced problem's scores add up exactly for every world, its
optimum plus the constant is the enumerated optimum, and the ILP with both
proves the enumerated optimum."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markovlogic.errors import InferenceError
from markovlogic.ground.network import GroundNetwork, WeightParam
from markovlogic.infer.exact import exact_map
from markovlogic.infer.ilp import _envelope_cuts, build_model, encode, find_cliques, ilp_map, solve_model
from markovlogic.infer.kernels_state import SatArrays, sat_arrays
from markovlogic.infer.presolve import presolve

from networks import infeasible_network, random_clause_list, random_network


def sat_network(sat: SatArrays) -> GroundNetwork:
    """A GroundNetwork with the clauses of ``sat`` (one parameter per soft clause)."""
    soft = ~sat.is_hard
    has = soft.astype(np.int64)
    param_start = np.zeros(sat.n_clauses + 1, np.int64)
    np.cumsum(has, out=param_start[1:])
    k = int(has.sum())
    return GroundNetwork.from_arrays(
        n_atoms=sat.n_atoms, clause_start=sat.clause_start, lit_atom=sat.lit_atom,
        lit_positive=sat.lit_positive, is_hard=sat.is_hard, param_start=param_start,
        param_index=np.arange(k, dtype=np.int32), param_coef=np.ones(k), params=sat.weight[soft],
        param_info=tuple(WeightParam(f"c{i}", i) for i in range(k)),
        block_start=sat.block_start, block_atoms=sat.block_atoms,
    )


def clique_network(rng: np.random.Generator, n_atoms: int, with_random: bool = True) -> GroundNetwork:
    """Cliques of pairwise clauses of one weight (``!a v !b`` or ``a v b``), unit
    clauses pulling the other way, and (optionally) random clauses: the shape
    the clique encoding aggregates (like tuffy/cse's "one advisor" rule)."""
    clauses: list = []
    perm = rng.permutation(n_atoms)
    at = 0
    while at < n_atoms:
        size = int(rng.integers(1, 7))
        members = perm[at:at + size].tolist()
        at += size
        w = round(float(rng.uniform(0.1, 2.0)), 2)
        positive = bool(rng.random() < 0.3)
        for i in range(len(members)):
            for j in range(i + 1, len(members)):
                clauses.append((w, [(members[i], positive), (members[j], positive)]))
        for a in members:
            u = round(float(rng.uniform(0.0, 3.0)), 2) * (-1 if positive else 1)
            if u:
                clauses.append((u, [(a, True)]))
        if len(members) >= 2 and rng.random() < 0.5:
            # "some pair member is false": a negative clause over the clique's false
            # literals (cse's "a student has an advisor" beside "at most one")
            a = round(float(rng.uniform(0.1, 4.0)), 2)
            clauses.append((-a, [(m, not positive) for m in members]))
    if with_random:
        extra, _ = random_clause_list(rng, n_atoms, int(rng.integers(0, n_atoms + 1)), max_len=3)
        clauses += extra
    return GroundNetwork.from_clauses(n_atoms, clauses)


def _reduced_score(sat: SatArrays, world: np.ndarray) -> float:
    holds = np.bincount(sat.lit_clause, weights=world[sat.lit_atom] == sat.lit_positive,
                        minlength=sat.n_clauses) > 0
    return float(sat.weight[holds & ~sat.is_hard].sum())


def _reduced_feasible(sat: SatArrays, world: np.ndarray) -> bool:
    holds = np.bincount(sat.lit_clause, weights=world[sat.lit_atom] == sat.lit_positive,
                        minlength=sat.n_clauses) > 0
    if (sat.is_hard & ~holds).any():
        return False
    if sat.n_blocks:
        per_block = np.add.reduceat(world[sat.block_atoms].astype(np.int64), sat.block_start[:-1])
        return bool((per_block == 1).all())
    return True


def _check_presolve(net: GroundNetwork, rng: np.random.Generator) -> None:
    sat = sat_arrays(net)
    if sat.n_empty_hard:
        return
    pre = presolve(sat)
    if pre.infeasible:
        assert not exact_map(net).hard_violated == 0
        return
    red = pre.sat
    assert red.n_atoms == len(pre.free)
    assert (pre.value[pre.free] == -1).all()
    assert ((pre.value >= 0).sum() + len(pre.free)) == net.n_atoms
    # the transformation is exact for every world of the free atoms
    for _ in range(20):
        local = rng.random(red.n_atoms) < 0.5
        full = pre.expand(local)
        assert (full[pre.value == 1]).all() and not full[pre.value == 0].any()
        assert net.score(full) == pytest.approx(pre.const + sat.const_score + _reduced_score(red, local), abs=1e-9)
        assert net.is_feasible(full) == _reduced_feasible(red, local)
    # and it keeps an optimum
    best = exact_map(net)
    reduced_best = exact_map(sat_network(red)) if red.n_atoms else None
    if best.hard_violated:
        assert reduced_best is not None and reduced_best.hard_violated
        return
    red_score = 0.0 if reduced_best is None else reduced_best.score
    assert pre.const + sat.const_score + red_score == pytest.approx(best.score, abs=1e-9)
    if reduced_best is not None:
        world = pre.expand(reduced_best.world)
        assert net.is_feasible(world)
        assert net.score(world) == pytest.approx(best.score, abs=1e-9)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    n_atoms=st.integers(1, 12),
    n_clauses=st.integers(0, 30),
    max_len=st.integers(1, 4),
    p_hard=st.sampled_from([0.0, 0.1, 0.3]),
    n_blocks=st.integers(0, 2),
    repeats=st.booleans(),
)
def test_presolve_exact_on_random_networks(seed, n_atoms, n_clauses, max_len, p_hard, n_blocks, repeats):
    rng = np.random.default_rng(seed)
    net = random_network(rng, n_atoms, n_clauses, max_len=max_len, p_hard=p_hard, n_blocks=n_blocks,
                         repeats=repeats)
    _check_presolve(net, rng)


def test_presolve_on_clique_networks():
    rng = np.random.default_rng(11)
    for _ in range(60):
        _check_presolve(clique_network(rng, int(rng.integers(2, 14))), rng)


def test_dominance_and_propagation_fix_what_they_should():
    # a: unit -2 and only in "!a v b" (w 1): a = 0 dominates.
    # b: then only its unit +0.5 remains: b = 1.
    # hard c, hard "!c v d": propagation forces c = 1; d = 1 by propagation or
    # by dominance (only in a hard clause, positively).
    # e, f: "e v f" (w 1) with units -0.3 each: neither can be fixed.
    net = GroundNetwork.from_clauses(6, [
        (-2.0, [(0, True)]), (1.0, [(0, False), (1, True)]), (0.5, [(1, True)]),
        (None, [(2, True)]), (None, [(2, False), (3, True)]),
        (1.0, [(4, True), (5, True)]), (-0.3, [(4, True)]), (-0.3, [(5, True)]),
    ])
    pre = presolve(sat_arrays(net))
    assert pre.value.tolist() == [0, 1, 1, 1, -1, -1]
    assert pre.stats["forced"] >= 1 and pre.stats["forced"] + pre.stats["dominated"] == 4
    assert pre.free.tolist() == [4, 5]
    assert pre.const == pytest.approx(1.0 + 0.5)


def test_identical_clauses_merge_after_fixing():
    # "x0 v x1 v x2" and "x1 v x2 v !x3" become "x1 v x2" twice once x0 = 0, x3 = 1
    net = GroundNetwork.from_clauses(4, [
        (1.0, [(0, True), (1, True), (2, True)]), (2.0, [(1, True), (2, True), (3, False)]),
        (-5.0, [(0, True)]), (5.0, [(3, True)]),
        (-1.0, [(1, True)]), (-1.5, [(2, True)]), (0.25, [(1, False), (2, False)]),
    ])
    pre = presolve(sat_arrays(net))
    assert pre.value[[0, 3]].tolist() == [0, 1]
    assert pre.stats["merged"] == 1
    sizes = np.diff(pre.sat.clause_start)
    two = np.flatnonzero(sizes == 2)
    assert sorted(pre.sat.weight[two].tolist()) == [0.25, 3.0]
    assert ilp_map(net).score == pytest.approx(exact_map(net).score)


def test_presolve_conflict_is_reported_by_the_ilp():
    net = infeasible_network(np.random.default_rng(3))
    assert presolve(sat_arrays(net)).infeasible
    with pytest.raises(InferenceError, match="x0|A0|conflict"):
        ilp_map(net)


def test_find_cliques_takes_only_complete_components():
    clauses = []
    for a in range(4):                       # K4 over 0..3, weight 1
        for b in range(a + 1, 4):
            clauses.append((1.0, [(a, False), (b, False)]))
    clauses += [(1.0, [(4, False), (5, False)]), (1.0, [(5, False), (6, False)])]   # a path: not a clique
    clauses += [(2.0, [(7, True), (8, True)]), (2.0, [(8, True), (9, True)]), (2.0, [(7, True), (9, True)])]
    net = GroundNetwork.from_clauses(10, clauses)
    cl = find_cliques(sat_arrays(net))
    assert cl.n_cliques == 2
    sets = sorted(
        (float(cl.weight[k]), tuple(sorted(zip(cl.lit_atom[cl.start[k]:cl.start[k + 1]].tolist(),
                                              cl.lit_positive[cl.start[k]:cl.start[k + 1]].tolist()))))
        for k in range(2)
    )
    assert sets == [(1.0, ((0, False), (1, False), (2, False), (3, False))),
                    (2.0, ((7, True), (8, True), (9, True)))]
    assert len(cl.clauses) == 6 + 3


def test_clique_encoding_lp_is_tighter_and_integer_optimum_equal():
    # 8 atoms that each want to be true (unit 1.0) but pairwise exclude (weight 0.8)
    clauses = [(1.0, [(a, True)]) for a in range(8)]
    clauses += [(0.8, [(a, False), (b, False)]) for a in range(8) for b in range(a + 1, 8)]
    net = GroundNetwork.from_clauses(8, clauses)
    sat = sat_arrays(net)
    bounds = {}
    for cliques in (False, True):
        enc = encode(sat, cliques=cliques)
        model = build_model(sat, enc)
        relaxed = model.__class__(**{**model.__dict__, "integrality": np.zeros_like(model.integrality)})
        bounds[cliques] = solve_model(relaxed, None, 0.0, 1).objective + enc.offset
        sol = solve_model(model, None, 0.0, 1)
        assert sol.objective + enc.offset == pytest.approx(exact_map(net).score)
    assert bounds[True] < bounds[False] - 1.0
    # two atoms true (2.0) and 27 of the 28 pairs: the clique LP is exact here
    assert exact_map(net).score == pytest.approx(2.0 + 27 * 0.8)
    assert bounds[True] == pytest.approx(2.0 + 27 * 0.8)


@pytest.mark.parametrize("presolve_on", [False, True])
def test_ilp_with_cliques_matches_enumeration(presolve_on):
    rng = np.random.default_rng(77 + presolve_on)
    for _ in range(40):
        net = clique_network(rng, int(rng.integers(2, 15)))
        best = exact_map(net)
        res = ilp_map(net, presolve=presolve_on, cliques=True)
        assert res.optimal and res.hard_violated == 0
        assert res.score == pytest.approx(best.score, abs=1e-6)
        assert res.score == pytest.approx(net.score(res.world), abs=1e-12)
        assert res.bound >= res.score - 1e-6 and res.bound == pytest.approx(res.score, abs=1e-5)


@pytest.mark.parametrize("presolve_on", [False, True])
def test_cpsat_with_cliques_matches_enumeration(presolve_on):
    pytest.importorskip("ortools")
    from markovlogic.infer.cpsat import cpsat_map

    rng = np.random.default_rng(91 + presolve_on)
    for _ in range(25):
        net = clique_network(rng, int(rng.integers(2, 15)))
        best = exact_map(net)
        res = cpsat_map(net, presolve=presolve_on, cliques=True)
        assert res.optimal and res.hard_violated == 0
        assert res.score == pytest.approx(best.score, abs=1e-6)
        assert res.bound >= res.score - 1e-6 and res.bound == pytest.approx(res.score, abs=1e-5)


def test_round_cap_leaves_atoms_free_and_stays_exact():
    # a hard implication chain x0 -> x1 -> ... -> x9 (x0 hard) with soft pulls against it
    clauses = [(None, [(0, True)])] + [(None, [(i, False), (i + 1, True)]) for i in range(9)]
    clauses += [(-0.5, [(i, True)]) for i in range(10)] + [(0.7, [(i, False), (9 - i, False)]) for i in range(5)]
    net = GroundNetwork.from_clauses(10, clauses)
    sat = sat_arrays(net)
    short = presolve(sat, max_rounds=3)
    full = presolve(sat)
    assert 0 < short.stats["fixed"] < full.stats["fixed"] == 10
    best = exact_map(net)
    for pre in (short, full):
        red = exact_map(sat_network(pre.sat)) if pre.sat.n_atoms else None
        assert pre.const + (red.score if red else 0.0) == pytest.approx(best.score)


def test_envelope_cuts_join_a_clique_and_its_any_clause():
    # 6 atoms: unit pulls +1.2 each, "at most one" pairs (0.5), and a -2.0 clause
    # "some atom true": h(F) = 2 [F >= 1] + 0.5 C(F, 2)
    clauses = [(1.2, [(a, True)]) for a in range(6)]
    clauses += [(0.5, [(a, False), (b, False)]) for a in range(6) for b in range(a + 1, 6)]
    clauses += [(-2.0, [(a, True) for a in range(6)])]
    net = GroundNetwork.from_clauses(6, clauses)
    sat = sat_arrays(net)
    enc = encode(sat, cliques=True)
    cuts = _envelope_cuts(sat, enc, enc.cliques, enc.z_weight)
    assert len(cuts) == 1
    k, zi, edges = cuts[0]
    f = np.arange(7)
    h = np.where(f >= 1, 2.0, 0.0) + 0.5 * f * (f - 1) / 2
    env = np.max([s * f + b for s, b in edges], axis=0)
    assert (env <= h + 1e-12).all()                # valid at every integer F
    assert env[0] == pytest.approx(0.0) and env[-1] == pytest.approx(h[-1])
    model = build_model(sat, enc)
    relaxed = model.__class__(**{**model.__dict__, "integrality": np.zeros_like(model.integrality)})
    lp = solve_model(relaxed, None, 0.0, 1).objective + enc.offset
    best = exact_map(net).score
    assert lp >= best - 1e-9
    assert lp == pytest.approx(best)               # the envelope makes this LP exact
