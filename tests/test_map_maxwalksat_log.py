"""MaxWalkSAT's best state of a large component is kept through a log of
flipped atoms (infer/maxwalksat.py, _run): the world it returns as the best
must have exactly the best cost and hard count the search tracked, on a
component larger than the threshold where the log replaces whole copies."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic.ground.network import GroundNetwork
from markovlogic.infer import maxwalksat as mws
from markovlogic.infer.ilp import local_key
from markovlogic.infer.kernels_state import sat_arrays


def _chain(n: int, seed: int) -> GroundNetwork:
    """One connected component of ``n`` atoms: pair clauses along a chain and
    across it, unit clauses, a few hard clauses and exactly-one blocks."""
    rng = np.random.default_rng(seed)
    clauses = []
    for i in range(n - 1):
        clauses.append((float(rng.normal()), [(i, bool(rng.integers(2))), (i + 1, bool(rng.integers(2)))]))
    for _ in range(n // 2):
        a, b, c = sorted(rng.choice(n, 3, replace=False).tolist())
        clauses.append((float(rng.normal()), [(a, bool(rng.integers(2))), (b, bool(rng.integers(2))),
                                              (c, bool(rng.integers(2)))]))
    for i in range(0, n, 3):
        clauses.append((float(rng.normal()), [(i, bool(rng.integers(2)))]))
    for i in range(0, n - 5, 97):
        clauses.append((None, [(i, True), (i + 5, True)]))
    blocks = [[j, j + 1, j + 2] for j in range(1, n - 3, 1001)]
    return GroundNetwork.from_clauses(n, clauses, blocks=blocks)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_logged_best_world_has_the_tracked_best_cost(seed):
    n = 3 * mws._LOG_MIN_ATOMS
    net = _chain(n, seed)
    assert net.n_components == 1
    sat = sat_arrays(net)
    search = mws.Search(sat, seed)
    search.reset(mws.start_world(sat, search.rng, None), 0.0)
    for _ in range(6):                     # several chunks: the log survives between them
        search.steps(20_000, 0.5)
        hard, cost = local_key(sat, search.best_world)
        assert hard == int(search.comp_bh.sum())
        assert cost == pytest.approx(float(search.comp_bc.sum()), rel=1e-9, abs=1e-6)
    res = mws.maxwalksat(net, max_flips=30_000, max_tries=3, seed=seed)
    assert res.cost == pytest.approx(net.cost(res.world))
