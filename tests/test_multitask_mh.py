"""Multi-task Metropolis-Hastings (infer/multitask_mh.py) against exact
marginals; the proposal's densities; bad input."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic.errors import OptionError
from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.exact import exact_map
from markovlogic.infer.exact import exact_marginals
from markovlogic.infer.multitask_mh import MultiTaskOptions, MultiTaskProposal, multitask_map, multitask_marginals


def _network(seed: int, hard: bool = False) -> GroundNetwork:
    """Three tasks (predicates A, B, C) of four atoms, clauses inside and
    between them (strong couplings: the built-in single flips mix slowly)."""
    rng = np.random.default_rng(seed)
    clauses = []
    for _ in range(14):
        atoms = rng.choice(12, size=int(rng.integers(1, 4)), replace=False)
        clauses.append((float(rng.normal(0, 1.5)), [(int(a), bool(rng.random() < 0.5)) for a in atoms]))
    for t in range(4):                          # A_t <=> B_t, strongly
        clauses.append((1.5, [(t, False), (4 + t, True)]))
        clauses.append((1.5, [(t, True), (4 + t, False)]))
    if hard:
        clauses.append((None, [(8, True), (9, True)]))
    return GroundNetwork.from_clauses(12, clauses, atom_pred=np.repeat(np.arange(3), 4).astype(np.int32),
                                      predicates=("A", "B", "C"), is_query=np.ones(12, bool))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_marginals_agree_with_enumeration(seed):
    net = _network(seed)
    exact = exact_marginals(net).probabilities
    res = multitask_marginals(net, MultiTaskOptions(task_prob=0.5, mh=dict(samples=8000, thin=4, seed=seed)))
    assert np.max(np.abs(res.probabilities - exact)) < 0.03


def test_with_a_hard_clause():
    net = _network(4, hard=True)
    exact = exact_marginals(net).probabilities
    res = multitask_marginals(net, MultiTaskOptions(task_prob=0.5, mh=dict(samples=8000, thin=4, seed=1)))
    assert np.max(np.abs(res.probabilities - exact)) < 0.03


def test_map_reaches_the_optimum():
    net = _network(5)
    best = exact_map(net)
    res = multitask_map(net, MultiTaskOptions(mh=dict(steps=20000, seed=0)))
    assert res.score == pytest.approx(best.score, abs=1e-9)


def test_proposal_densities_are_path_conditionals():
    """The backward density is the forward density of the reverse path:
    checked by proposing from y' with the same (i, j) to y."""
    net = _network(6)
    prop = MultiTaskProposal(net, None, 3)

    class View:
        def __init__(self, world):
            self.world = world

    rng = np.random.default_rng(0)
    world = np.zeros(12, dtype=bool)
    for _ in range(50):
        move = prop(View(world), rng)
        if move is None:
            continue
        assert np.isfinite(move.log_forward) and np.isfinite(move.log_backward)
        world = world.copy()
        world[move.atoms] = ~world[move.atoms]


def test_bad_input():
    net = _network(0)
    with pytest.raises(OptionError, match="neighbours"):
        MultiTaskOptions(neighbours=0).check()
    with pytest.raises(OptionError, match="two or more tasks"):
        multitask_marginals(net, MultiTaskOptions(tasks=["A"]))
    with pytest.raises(OptionError, match="unknown task"):
        multitask_marginals(net, MultiTaskOptions(tasks=["A", "Z"]))
    with pytest.raises(OptionError, match="does not take"):
        multitask_marginals(net, MultiTaskOptions(mh=dict(bogus=1)))


def test_cli(tmp_path, capsys):
    from markovlogic.cli import main

    (tmp_path / "m.mln").write_text("Smokes(p)\nCancer(p)\nFriends(p, p)\n1.5 Smokes(x) => Cancer(x)\n"
                                    "1.1 Friends(x, y) ^ Smokes(x) => Smokes(y)\n-0.5 Cancer(x)\n")
    (tmp_path / "e.db").write_text("Friends(A, B)\nFriends(B, C)\nSmokes(A)\n")
    out = tmp_path / "r.txt"
    base = ["infer", "-i", str(tmp_path / "m.mln"), "-e", str(tmp_path / "e.db"), "-q", "Smokes,Cancer", "-r", str(out)]
    assert main(base + ["--method", "multitask-mh", "--samples", "2000"]) == 0, capsys.readouterr().err
    probs = {l.split()[0]: float(l.split()[1]) for l in out.read_text().splitlines()}
    assert main(base + ["--method", "exact"]) == 0
    exact = {l.split()[0]: float(l.split()[1]) for l in out.read_text().splitlines()}
    assert max(abs(probs[k] - exact[k]) for k in exact) < 0.05
    assert main(base + ["--map", "--method", "multitask-mh"]) == 0
    assert main(base[:-4] + ["-q", "Smokes", "-r", str(tmp_path / "x.txt"), "--method", "multitask-mh"]) == 2
    assert "two or more tasks" in capsys.readouterr().err
