"""SGMP (infer/sgmp.py) against enumeration: the optimum on tree-structured
cluster graphs; bad input."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic.errors import OptionError
from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.exact import exact_map
from markovlogic.infer.sgmp import SGMPOptions, parse_partition, sgmp_map


def _tree_network(rng, sep_size: int) -> GroundNetwork:
    """Clusters A (atoms 0-3), B (4-7), C (8-11) in a chain A - B - C: A's
    cross clauses touch B's first ``sep_size`` atoms, B's touch C's."""
    clauses = []

    def lit(a):
        return (int(a), bool(rng.random() < 0.5))

    for lo in (0, 4, 8):                            # inside each cluster
        for _ in range(6):
            atoms = rng.choice(np.arange(lo, lo + 4), size=int(rng.integers(1, 4)), replace=False)
            clauses.append((float(rng.normal(0, 1.5)), [lit(a) for a in atoms]))
    for lo, nxt in ((0, 4), (4, 8)):                # cross clauses, first atom in the earlier cluster
        for _ in range(5):
            own = rng.choice(np.arange(lo, lo + 4), size=int(rng.integers(1, 3)), replace=False)
            other = rng.choice(np.arange(nxt, nxt + sep_size), size=1)
            clauses.append((float(rng.normal(0, 1.5)), [lit(a) for a in own] + [lit(other[0])]))
    return GroundNetwork.from_clauses(12, clauses, atom_pred=np.repeat(np.arange(3), 4).astype(np.int32),
                                      predicates=("A", "B", "C"))


@pytest.mark.parametrize("messages, sep", [("univariate", 1), ("full", 1), ("full", 2), ("full", 3)])
def test_optimum_on_tree_structured_cluster_graphs(messages, sep):
    rng = np.random.default_rng(11 + sep)
    for _ in range(12):
        net = _tree_network(rng, sep)
        best = exact_map(net)
        res = sgmp_map(net, SGMPOptions(messages=messages, iterations=6))
        assert res.hard_violated == 0
        assert res.score == pytest.approx(best.score, abs=1e-6)


def test_nbest_and_local_search_reach_a_good_world():
    rng = np.random.default_rng(3)
    net = _tree_network(rng, 2)
    best = exact_map(net)
    res = sgmp_map(net, SGMPOptions(messages="nbest", n_best=2, iterations=6, exact_atoms=2, max_flips=2000))
    assert res.score <= best.score + 1e-9
    assert res.score >= best.score - 3.0
    assert res.stats["local_searches"] > 0


def test_partition_by_user():
    rng = np.random.default_rng(5)
    net = _tree_network(rng, 1)
    res = sgmp_map(net, SGMPOptions(partition=parse_partition("A,B;C"), messages="full"))
    assert res.stats["clusters"] == 2
    assert res.score == pytest.approx(exact_map(net).score, abs=1e-6)


def test_bad_input():
    net = _tree_network(np.random.default_rng(0), 1)
    with pytest.raises(OptionError, match="does not cover the network: no cluster for C"):
        sgmp_map(net, SGMPOptions(partition={"A": 0, "B": 1}))
    with pytest.raises(OptionError, match="n-best must be an integer of at least 1"):
        sgmp_map(net, SGMPOptions(messages="nbest", n_best=0))
    with pytest.raises(OptionError, match="unknown message type"):
        SGMPOptions(messages="dense").check()
    with pytest.raises(OptionError, match="twice"):
        parse_partition("A,B;A")


def test_cli(tmp_path, capsys):
    from markovlogic.cli import main

    (tmp_path / "m.mln").write_text("Smokes(p)\nCancer(p)\nFriends(p, p)\n1.5 Smokes(x) => Cancer(x)\n"
                                    "1.1 Friends(x, y) ^ Smokes(x) => Smokes(y)\n-0.5 Cancer(x)\n")
    (tmp_path / "e.db").write_text("Friends(A, B)\nFriends(B, C)\nSmokes(A)\n")
    out = tmp_path / "r.txt"
    base = ["infer", "-i", str(tmp_path / "m.mln"), "-e", str(tmp_path / "e.db"), "-q", "Smokes,Cancer",
            "--map", "-r", str(out), "--method"]
    assert main(base + ["sgmp", "--messages", "full"]) == 0
    sgmp = out.read_text()
    assert main(base + ["exact"]) == 0
    assert sorted(sgmp.split()) == sorted(out.read_text().split())
    out.unlink()
    assert main(base + ["sgmp", "--partition", "Smokes"]) == 2
    assert "does not cover the network: no cluster for Cancer" in capsys.readouterr().err
    assert main(base + ["sgmp", "--messages", "nbest", "--n-best", "0"]) == 2
    assert main(base + ["ilp", "--partition", "Smokes;Cancer"]) == 2
    assert not out.exists()
