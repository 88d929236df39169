"""Sparse Generalized Max-Product (infer/sgmp.py): the optimum on
tree-structured cluster graphs against exact enumeration, the partition
options, and clear errors for bad input (API and CLI)."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic.cli import main
from markovlogic.errors import OptionError
from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.exact import exact_map
from markovlogic.infer.map import solve_map
from markovlogic.infer.sgmp import SGMPOptions, atom_groups, build_clusters, sgmp_map
from markovlogic.infer.kernels_state import sat_arrays

ALCHEMY = "/work/shared/data/alchemy"


def tree_clusters(seed: int, edges: list[tuple[int, int]], size: int = 4, inside: int = 14, links: int = 2,
                  one_shared: bool = False, hard: bool = False, blocks: bool = False) -> GroundNetwork:
    """Clusters of ``size`` atoms (predicate ``c<k>``), dense random 3-clauses
    inside, and for each edge ``(a, b)`` of a tree ``links`` clauses with two
    atoms of ``a`` and one of ``b`` (the same atom of ``b`` if ``one_shared``):
    the cluster graph is that tree."""
    rng = np.random.default_rng(seed)
    k = 1 + max(max(e) for e in edges)
    clauses = []

    def lit(a):
        return int(a), bool(rng.random() < 0.5)

    for c in range(k):
        for _ in range(inside):
            atoms = c * size + rng.choice(size, 3, replace=False)
            w = None if hard and rng.random() < 0.08 else round(float(rng.uniform(-0.5, 2.0)), 2) or 0.5
            clauses.append((w, [lit(a) for a in atoms]))
    for a, b in edges:
        shared = b * size + int(rng.integers(0, size))
        for _ in range(links):
            two = a * size + rng.choice(size, 2, replace=False)
            other = shared if one_shared else b * size + int(rng.integers(0, size))
            clauses.append((round(float(rng.uniform(0.2, 2.0)), 2), [lit(x) for x in list(two) + [other]]))
    block_list = [[c * size + size - 2, c * size + size - 1] for c in range(k)] if blocks else None
    return GroundNetwork.from_clauses(k * size, clauses, blocks=block_list,
                                      atom_pred=np.repeat(np.arange(k), size),
                                      predicates=tuple(f"c{i}" for i in range(k)))


CHAIN = [(0, 1), (1, 2), (2, 3)]
STAR = [(0, 1), (0, 2), (3, 0)]


def _cluster_graph_is_tree(net: GroundNetwork) -> bool:
    clusters = build_clusters(net, sat_arrays(net), atom_groups(net, None))
    edges = sum(len(c.nbrs) for c in clusters) // 2
    return edges == len(clusters) - 1


@pytest.mark.parametrize("edges", [CHAIN, STAR], ids=["chain", "star"])
def test_full_messages_reach_the_optimum_on_trees(edges):
    for seed in range(8):
        net = tree_clusters(seed, edges)
        assert _cluster_graph_is_tree(net)
        best = exact_map(net)
        res = sgmp_map(net, messages="full", seed=seed, polish=False)
        assert res.hard_violated == 0
        assert res.cost == pytest.approx(best.cost, abs=1e-9), (seed, res.stats)


def test_univariate_messages_are_exact_with_one_shared_atom_per_edge():
    for seed in range(8):
        net = tree_clusters(seed, CHAIN, one_shared=True)
        best = exact_map(net)
        res = sgmp_map(net, messages="univariate", seed=seed, polish=False)
        assert res.cost == pytest.approx(best.cost, abs=1e-9), seed


def test_n_best_messages_with_hard_clauses_and_blocks():
    for seed in range(6):
        net = tree_clusters(seed, STAR, hard=True, blocks=True)
        try:
            best = exact_map(net)
        except Exception:
            continue
        res = sgmp_map(net, messages="n-best", n_best=16, seed=seed)
        assert res.hard_violated == 0
        assert res.cost == pytest.approx(best.cost, abs=1e-9), (seed, res.stats)
        res = sgmp_map(net, messages="full", seed=seed, polish=False)
        assert res.hard_violated == 0 and res.cost == pytest.approx(best.cost, abs=1e-9)


def test_partition_forms_and_dispatch():
    net = tree_clusters(3, CHAIN)
    best = exact_map(net).cost
    by_list = solve_map(net, "sgmp", partition=[["c0"], ["c1"], ["c2"], ["c3"]], messages="full", seed=1)
    by_array = sgmp_map(net, SGMPOptions(partition=np.repeat(np.arange(4), 4), messages="full", seed=1))
    assert by_list.method == "sgmp" and by_list.cost == pytest.approx(best)
    assert by_array.cost == pytest.approx(best)
    # two groups: clusters {c0,c1} and {c2,c3}, one cluster: plain WalkSAT on the whole network
    two = sgmp_map(net, partition=[["c0", "c1"], ["c2", "c3"]], messages="full", seed=1)
    assert two.stats["clusters"] == 2 and two.cost == pytest.approx(best)
    one = sgmp_map(net, partition=[["c0", "c1", "c2", "c3"]], seed=1)
    assert one.stats["clusters"] == 1 and one.cost == pytest.approx(best)


def test_random_schedule_and_time_limit():
    net = tree_clusters(5, STAR)
    res = sgmp_map(net, schedule="random", messages="n-best", n_best=8, seed=2, max_seconds=5)
    assert res.hard_violated == 0 and res.cost >= exact_map(net).cost - 1e-9


@pytest.mark.parametrize("kw, message", [
    (dict(partition=[["c0", "c1"], ["c2"]]), "does not cover the network: predicate(s) c3"),
    (dict(partition=[["c0", "c1"], ["c2", "c1"], ["c3"]]), "in two groups"),
    (dict(partition=[["c0", "zz"], ["c1", "c2", "c3"]]), "not a predicate"),
    (dict(partition=[[], ["c0", "c1", "c2", "c3"]]), "empty"),
    (dict(partition=np.array([0] * 15 + [-1])), "does not cover the network"),
    (dict(partition=np.zeros(3, int)), "one integer group per atom"),
    (dict(n_best=0), "n-best size"),
    (dict(n_best=-3), "n-best size"),
    (dict(messages="beliefs"), "messages must be one of"),
    (dict(iterations=0), "iterations"),
    (dict(flavour=1), "does not take option"),
])
def test_bad_input_is_a_clear_error(kw, message):
    net = tree_clusters(0, CHAIN)
    with pytest.raises(OptionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        sgmp_map(net, **kw)


def test_full_messages_refuse_a_large_separator():
    net = tree_clusters(0, CHAIN, links=6)
    with pytest.raises(OptionError, match="max_full_atoms"):
        sgmp_map(net, messages="full", max_full_atoms=1)


def test_cli(tmp_path, capsys):
    args = ["infer", "-i", f"{ALCHEMY}/example-model.mln", "-e", f"{ALCHEMY}/example-evidence.db",
            "-q", "Smokes,Cancer,Friends", "--map", "--method", "sgmp"]
    out = tmp_path / "r.txt"
    assert main(args + ["-r", str(out), "--messages", "full", "--partition", "Smokes,Cancer;Friends"]) == 0
    assert main(args + ["--partition", "Smokes;Cancer"]) == 2
    assert "does not cover the network" in capsys.readouterr().err
    assert main(args + ["--n-best", "0"]) == 2
    assert "n-best size" in capsys.readouterr().err
    assert main(args[:-2] + ["--method", "maxwalksat", "--n-best", "3"]) == 2
