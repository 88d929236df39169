"""Multi-task Metropolis-Hastings (infer/multitask_mh.py, Algorithm 6):
marginals within 0.03 of exact enumeration, MAP by the best sample, the
one-task case (Gibbs: every proposal accepted), and clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic.cli import main
from markovlogic.errors import OptionError
from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.exact import exact_map, exact_marginals
from markovlogic.infer.map import solve_map
from markovlogic.infer.marginals import solve_marginals
from markovlogic.infer.multitask_mh import MultiTaskOptions, multitask_map, multitask_marginals

ALCHEMY = "/work/shared/data/alchemy"


def three_tasks(seed: int, n_clauses: int = 26, blocks: bool = False, hard: bool = False) -> GroundNetwork:
    """11 atoms in three predicates (tasks) a, b, c; random clauses of 1-3
    literals across them, negative weights, optionally an exactly-one block
    in task c and hard clauses true in a hidden world."""
    rng = np.random.default_rng(seed)
    n = 11
    hidden = rng.random(n) < 0.5
    if blocks:
        hidden[8:11] = False
        hidden[8 + int(rng.integers(0, 3))] = True
    clauses = []
    for _ in range(n_clauses):
        atoms = rng.choice(n, int(rng.integers(1, 4)), replace=False)
        lits = [(int(a), bool(rng.random() < 0.5)) for a in atoms]
        if hard and rng.random() < 0.25:
            a0 = lits[0][0]
            lits[0] = (a0, bool(hidden[a0]))
            clauses.append((None, lits))
        else:
            clauses.append((round(float(rng.uniform(-1.5, 1.5)), 2) or 0.3, lits))
    return GroundNetwork.from_clauses(n, clauses, blocks=[[8, 9, 10]] if blocks else None,
                                      atom_pred=np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2]),
                                      predicates=("a", "b", "c"))


@pytest.mark.parametrize("blocks", [False, True], ids=["free", "block"])
def test_marginals_match_exact(blocks):
    for seed in range(4):
        net = three_tasks(seed, blocks=blocks)
        exact = exact_marginals(net).probabilities
        res = multitask_marginals(net, samples=3000, seed=seed)
        assert res.stats["tasks"] == 3 and 0 < res.stats["accept_rate"] < 1
        assert np.abs(res.probabilities - exact).max() < 0.03, seed
        raw = solve_marginals(net, "multitask-mh", samples=12000, seed=seed, rao_blackwell=False)
        assert np.abs(raw.probabilities - exact).max() < 0.03, seed


def test_marginals_with_hard_clauses():
    for seed in range(3):
        net = three_tasks(seed + 10, hard=True, blocks=True)
        assert net.is_hard.any()
        exact = exact_marginals(net).probabilities
        res = multitask_marginals(net, samples=3000, seed=seed, neighbourhood=4)
        assert np.abs(res.probabilities - exact).max() < 0.03, seed


def test_one_task_is_gibbs():
    net = three_tasks(1)
    res = multitask_marginals(net, tasks=[["a", "b", "c"]], samples=200, seed=0)
    assert res.stats["tasks"] == 1
    assert res.stats["accept_rate"] == 1.0


def test_map_is_the_best_sample():
    for seed in range(4):
        net = three_tasks(seed, blocks=True)
        best = exact_map(net)
        res = solve_map(net, "multitask-mh", seed=seed, steps=3000)
        assert res.method == "multitask-mh" and res.hard_violated == 0
        assert res.cost == pytest.approx(best.cost, abs=1e-9)
        low = multitask_map(net, MultiTaskOptions(seed=seed, steps=3000, temperature=0.3))
        assert low.cost == pytest.approx(best.cost, abs=1e-9)


@pytest.mark.parametrize("kw, message", [
    (dict(tasks=[["a"], ["b"]]), "does not cover the network: predicate(s) c"),
    (dict(tasks=[["a", "q"], ["b", "c"]]), "not a predicate"),
    (dict(neighbourhood=-1), "neighbourhood"),
    (dict(temperature=0), "temperature"),
    (dict(max_states=1), "max_states"),
    (dict(samples=0), "samples"),
    (dict(chains=2), "does not take option"),
])
def test_bad_input_is_a_clear_error(kw, message):
    with pytest.raises(OptionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        multitask_marginals(three_tasks(0), **kw)


def test_cli(tmp_path, capsys):
    args = ["infer", "-i", f"{ALCHEMY}/example-model.mln", "-e", f"{ALCHEMY}/example-evidence.db",
            "-q", "Smokes,Cancer,Friends", "--method", "multitask-mh"]
    out = tmp_path / "r.txt"
    assert main(args + ["-r", str(out), "--samples", "200", "--tasks", "Smokes,Cancer;Friends"]) == 0
    assert len(out.read_text().splitlines()) > 0
    assert main(args + ["--map", "--steps", "500", "-r", str(out)]) == 0
    assert main(args + ["--tasks", "Smokes;Cancer"]) == 2
    assert "does not cover the network" in capsys.readouterr().err
    assert main(args + ["--neighbourhood", "-2"]) == 2
    assert main(args + ["--map", "--thin", "3"]) == 2
