"""The LP-dual bound of MAP (infer/lpbound.py, issue 30): for any multipliers
the ascent reaches, the bound is at most the LP relaxation's optimum (solved
here by HiGHS through scipy) and so at most the exact MAP cost (enumeration);
on networks of units and two-literal clauses it reaches the LP optimum; the
world read off the reduced costs satisfies the blocks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from markovlogic.errors import OptionError
from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.exact import exact_map
from markovlogic.infer.lpbound import network_dual
from networks import random_network


def lp_optimum(net: GroundNetwork) -> float:
    """min cost of the LP relaxation (see the module docstring of lpbound)."""
    n = net.n_atoms
    cols = n
    c_obj, A_ub, b_ub, A_eq, b_eq = [0.0] * n, [], [], [], []
    const = 0.0
    bounds = [(0.0, 1.0)] * n
    for k in range(net.n_clauses):
        lits = net.clause_literals(k)
        w = float(net.weight[k])

        def row_s():            # coefficients of s_c = sum t(l), and its constant
            r = np.zeros(n)
            cst = 0.0
            for a, pos in lits:
                if pos:
                    r[a] += 1.0
                else:
                    r[a] -= 1.0
                    cst += 1.0
            return r, cst

        if net.is_hard[k]:
            r, cst = row_s()                    # s >= 1  ->  -r x <= cst - 1
            A_ub.append(np.concatenate([-r, np.zeros(cols - n)]))
            b_ub.append(cst - 1.0)
        elif w > 0:
            r, cst = row_s()                    # z >= 1 - s  ->  -z - r x <= cst - 1
            A_ub = [np.concatenate([row, [0.0]]) for row in A_ub]
            A_eq = [np.concatenate([row, [0.0]]) for row in A_eq]
            cols += 1
            c_obj.append(w)
            bounds = bounds + [(0.0, None)]
            A_ub.append(np.concatenate([-r, np.zeros(cols - n - 1), [-1.0]]))
            b_ub.append(cst - 1.0)
        elif w < 0:
            A_ub = [np.concatenate([row, [0.0]]) for row in A_ub]
            A_eq = [np.concatenate([row, [0.0]]) for row in A_eq]
            cols += 1
            c_obj.append(-w)
            bounds = bounds + [(0.0, 1.0)]
            for a, pos in lits:                 # y >= t(l)
                row = np.zeros(cols)
                row[-1] = -1.0
                if pos:
                    row[a] = 1.0
                    b_ub.append(0.0)
                else:
                    row[a] = -1.0
                    b_ub.append(-1.0)
                A_ub.append(row)
    for b in range(net.n_blocks):
        row = np.zeros(cols)
        row[net.block_atoms[net.block_start[b]:net.block_start[b + 1]]] = 1.0
        A_eq.append(row)
        b_eq.append(1.0)
    A_ub = [np.concatenate([row, np.zeros(cols - len(row))]) for row in A_ub]
    A_eq = [np.concatenate([row, np.zeros(cols - len(row))]) for row in A_eq]
    res = linprog(np.array(c_obj), A_ub=np.array(A_ub) if A_ub else None, b_ub=b_ub or None,
                  A_eq=np.array(A_eq) if A_eq else None, b_eq=b_eq or None, bounds=bounds, method="highs")
    assert res.status == 0, res.message
    return float(res.fun) + const


def test_bound_is_below_the_lp_and_the_map_cost():
    rng = np.random.default_rng(30)
    for i in range(40):
        n = int(rng.integers(2, 10))
        net = random_network(rng, n, int(rng.integers(1, 3 * n)), p_hard=0.15, p_negative=0.25,
                             n_blocks=int(rng.integers(0, 3)))
        d = network_dual(net, max_seconds=None, max_sweeps=400)
        best = exact_map(net)
        lp = lp_optimum(net)
        assert d.cost_bound <= lp + 1e-7, (i, d.cost_bound, lp)
        assert lp <= best.cost + 1e-7
        assert d.score_bound >= best.score - 1e-7
        if net.n_blocks:
            per_block = np.add.reduceat(d.world[net.block_atoms].astype(int), net.block_start[:-1])
            assert (per_block == 1).all()


def test_two_literal_networks_reach_the_lp_optimum():
    """Implications and units (the friends-of-smokers shape: a minimum cut,
    the LP is tight): the ascent reaches the LP optimum and the world read off
    the reduced costs is optimal."""
    rng = np.random.default_rng(4)
    for i in range(25):
        n = int(rng.integers(3, 11))
        clauses = [(round(float(rng.uniform(-2, 2)), 2) or 0.5, [(int(a), True)]) for a in rng.choice(n, n)]
        for _ in range(2 * n):
            a, b = (int(v) for v in rng.choice(n, 2, replace=False))
            clauses.append((round(float(rng.uniform(0.1, 2)), 2), [(a, False), (b, True)]))
        net = GroundNetwork.from_clauses(n, clauses)
        d = network_dual(net, max_seconds=None, max_sweeps=4000, tol=1e-10)
        best = exact_map(net)
        assert d.cost_bound == pytest.approx(lp_optimum(net), abs=1e-5), i
        assert d.cost_bound == pytest.approx(best.cost, abs=1e-5), i       # implications + units: LP is tight
        assert net.cost(d.world) == pytest.approx(best.cost, abs=1e-5), i


def test_options_and_empty_networks():
    net = GroundNetwork.from_clauses(2, [(1.0, [(0, True)]), (-0.5, [(1, True)])])
    d = network_dual(net, max_seconds=None)
    assert d.cost_bound == pytest.approx(0.0) and d.score_bound == pytest.approx(1.0)
    assert d.world.tolist() == [True, False]
    with pytest.raises(OptionError, match="max_sweeps"):
        network_dual(net, max_sweeps=-1)
    empty = GroundNetwork.from_clauses(3, [])
    assert network_dual(empty).cost_bound == 0.0


def test_approximate_map_reports_path_bound_and_gap():
    """The default MAP's answer when the ILP is skipped (infer/plan.py): a
    valid bound from the LP dual, the gap from it, which path gave the world,
    and optimality claimed only when the world reaches the bound."""
    from markovlogic.infer.plan import approximate_map, score_bound

    rng = np.random.default_rng(12)
    for i in range(12):
        n = int(rng.integers(3, 10))
        net = random_network(rng, n, int(rng.integers(n, 3 * n)), p_hard=0.1, n_blocks=int(rng.integers(0, 2)))
        best = exact_map(net)
        r = approximate_map(net, 1.0, seed=i)
        assert r.stats["exact_skipped"] and r.stats["path"] in ("lp-rounding", "lp+maxwalksat")
        assert r.stats["lp_cost_bound"] <= best.cost + 1e-9
        assert best.score - 1e-9 <= r.bound <= score_bound(net) + 1e-9
        assert r.hard_violated == 0 and r.score <= best.score + 1e-9
        if r.optimal:
            assert r.score == pytest.approx(best.score, abs=1e-6) and r.gap == 0.0
        else:
            assert r.gap == pytest.approx((r.bound - r.score) / max(1.0, abs(r.score)))
