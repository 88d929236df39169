"""Ties toward false: the clean-up pass after MAP never loses score."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from networks import random_network  # noqa: E402

from markovlogic import MLN, Database  # noqa: E402
from markovlogic.infer.exact import exact_map  # noqa: E402
from markovlogic.infer.settle import settle_false  # noqa: E402

SMOKERS = Path(__file__).resolve().parents[1] / "examples" / "smokers"


def _flip_loses(net, world, a) -> bool:
    other = world.copy()
    other[a] = False
    return net.hard_violated(other) > net.hard_violated(world) or net.score(other) < net.score(world) - 1e-9


@pytest.mark.parametrize("seed", range(60))
def test_settle_keeps_optimality_and_leaves_no_free_true_atom(seed):
    rng = np.random.default_rng(seed)
    net = random_network(rng, n_atoms=int(rng.integers(2, 10)), n_clauses=int(rng.integers(1, 14)),
                         n_blocks=int(rng.integers(0, 2)))
    best = exact_map(net)
    world, flipped = settle_false(net, best.world)
    assert net.hard_violated(world) == 0
    assert net.score(world) == pytest.approx(best.score, abs=1e-9)
    assert flipped == int(best.world.sum() - world.sum())
    for a in np.flatnonzero(world):
        if net.atom_block[a] < 0:
            assert _flip_loses(net, world, a)


def test_smokers_map_has_no_unsupported_true_atoms():
    mln = MLN.from_file(SMOKERS / "smokers.mln")
    db = Database.from_file(SMOKERS / "evidence.db", mln=mln)
    answer = mln.map(db, queries="Smokes,Cancer")
    assert answer.atoms == {"Smokes(Bob)", "Smokes(Frank)", "Cancer(Bob)", "Cancer(Edward)", "Cancer(Frank)"}
    assert answer.optimal and answer.score == pytest.approx(answer.bound)


@pytest.mark.parametrize("seed", range(30))
def test_rounds_never_lose_score_from_any_world(seed):
    """From arbitrary worlds (not optimal ones), on networks large enough for
    several rounds: score and hard clauses never get worse, and, when the
    rounds finish on their own, no true atom outside a block can be set false
    without loss."""
    from markovlogic.infer.settle import _settle_rounds

    rng = np.random.default_rng(100 + seed)
    net = random_network(rng, n_atoms=60, n_clauses=150, n_blocks=int(rng.integers(0, 3)))
    start = rng.random(net.n_atoms) < 0.6
    for b in range(net.n_blocks):                       # one true atom per block
        members = net.block_atoms[net.block_start[b]:net.block_start[b + 1]]
        start[members] = False
        start[members[0]] = True
    world = start.copy()
    flipped, finished = _settle_rounds(net, world, 1e-9)
    assert flipped == int(start.sum() - world.sum())
    assert not (world & ~start).any()
    assert net.hard_violated(world) <= net.hard_violated(start)
    assert net.score(world) >= net.score(start) - 1e-9
    if finished:
        for a in np.flatnonzero(world):
            if net.atom_block[a] < 0:
                assert _flip_loses(net, world, a)
    settled, n = settle_false(net, start)
    assert n == int(start.sum() - settled.sum()) and net.score(settled) >= net.score(start) - 1e-9


def test_clause_with_a_repeated_atom_falls_back_to_the_kernel():
    from markovlogic.ground.network import GroundNetwork

    net = GroundNetwork.from_clauses(2, [(1.0, [(0, True), (0, True), (1, False)]), (0.5, [(1, True)])])
    world, flipped = settle_false(net, np.array([True, True]))
    assert net.score(world) >= net.score(np.array([True, True])) - 1e-9
