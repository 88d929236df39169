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
    res = sgmp_map(net, schedule="random", messages="n-best", n_best=8, seed=2, max_seconds=1)
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


# ---------------------------------------------------------------- restarts and the automatic partition

def planted_clusters(seed: int, k: int, size: int = 12, inside: int = 40, links: int = 1,
                     hard: bool = False, blocks: bool = False) -> GroundNetwork:
    """``k`` clusters of ``size`` atoms, all of ONE predicate (so a cluster
    per predicate is degenerate), random 3-clauses inside each and ``links``
    clauses between consecutive clusters (0: disconnected)."""
    rng = np.random.default_rng(seed)
    clauses = []

    def lit(a):
        return int(a), bool(rng.random() < 0.5)

    for c in range(k):
        for _ in range(inside):
            atoms = c * size + rng.choice(size, 3, replace=False)
            w = None if hard and rng.random() < 0.05 else round(float(rng.uniform(0.1, 2.0)), 2)
            clauses.append((w, [lit(a) for a in atoms]))
    for c in range(k - 1):
        for _ in range(links):
            atoms = [c * size + int(rng.integers(size)), c * size + size + int(rng.integers(size))]
            clauses.append((round(float(rng.uniform(0.1, 1.0)), 2), [lit(a) for a in atoms]))
    block_list = [[c * size + size - 3, c * size + size - 2, c * size + size - 1] for c in range(k)] if blocks else None
    return GroundNetwork.from_clauses(k * size, clauses, blocks=block_list, atom_pred=np.zeros(k * size, np.int64),
                                      predicates=("p",))


def _same_split(group: np.ndarray, truth: np.ndarray) -> bool:
    """Whether two labellings are the same partition."""
    pairs = np.unique(np.stack([group, truth]), axis=1)
    return pairs.shape[1] == len(np.unique(group)) == len(np.unique(truth))


@pytest.mark.parametrize("k, links", [(2, 0), (3, 0), (3, 1), (4, 2), (5, 1)])
def test_the_automatic_partition_finds_planted_clusters(k, links):
    from markovlogic.infer.sgmp import resolve_partition

    for seed in range(3):
        net = planted_clusters(seed, k, links=links)
        group, kind = resolve_partition(net, "auto")
        assert kind == "graph"
        assert _same_split(group, np.repeat(np.arange(k), 12)), (seed, group)


def test_the_automatic_partition_keeps_a_random_network_whole():
    from markovlogic.infer.sgmp import resolve_partition

    # one cluster of 48 atoms and dense random clauses: no structure to split along
    net = planted_clusters(0, 1, size=48, inside=200)
    group, kind = resolve_partition(net, "auto")
    assert kind == "graph" and len(np.unique(group)) == 1


def test_auto_is_by_predicate_unless_degenerate_and_the_user_wins():
    from markovlogic.infer.sgmp import resolve_partition

    net = tree_clusters(0, CHAIN)                       # four predicates of four atoms each
    group, kind = resolve_partition(net, None)
    assert kind == "predicates" and _same_split(group, np.repeat(np.arange(4), 4))
    assert resolve_partition(net, "graph")[1] == "graph"
    group, kind = resolve_partition(net, [["c0", "c1", "c2", "c3"]])
    assert kind == "user" and len(np.unique(group)) == 1
    one = planted_clusters(0, 3, links=1)
    res = sgmp_map(one, partition=np.zeros(36, np.int64), seed=0)      # the user's single cluster
    assert res.stats["partition"] == "user" and res.stats["clusters"] == 1
    assert sgmp_map(one, seed=0).stats["clusters"] == 3
    assert sgmp_map(one, partition="predicates", seed=0).stats["clusters"] == 1


@pytest.mark.parametrize("restart", ["walksat", "fresh", "alternate"])
def test_restarts_against_exact_enumeration_with_hard_clauses(restart):
    for seed in range(4):
        net = planted_clusters(seed, 2, size=8, inside=30, links=2, hard=True)
        try:
            best = exact_map(net)
        except Exception:
            continue
        res = sgmp_map(net, restarts=3, restart=restart, seed=seed)
        assert res.hard_violated == best.hard_violated
        assert res.cost == pytest.approx(best.cost, abs=1e-9), (seed, res.stats)
        assert res.stats["partition"] == "graph" and res.stats["clusters"] == 2


def test_restarts_never_return_a_worse_world():
    for seed in range(4):
        net = planted_clusters(seed, 3, size=12, inside=50, links=3)
        kw = dict(seed=seed, messages="n-best", n_best=4, flips=30, iterations=4)
        once = sgmp_map(net, restarts=0, **kw)
        more = sgmp_map(net, restarts=4, **kw)
        assert once.stats["restarts"] == 0 and more.stats["restarts"] <= 4
        assert (more.hard_violated, more.cost) <= (once.hard_violated, once.cost + 1e-12)
        costs = [r["cost"] for r in more.stats["restart_costs"]]
        assert more.stats["restart_costs"][0]["cost"] == pytest.approx(once.cost, abs=1e-6)
        assert more.cost == pytest.approx(min(costs), abs=1e-6)
        assert more.stats["best_from"] in ("sgmp", "walksat")


def test_restarts_use_the_time_given_unless_optimal():
    net = planted_clusters(1, 3, size=16, inside=75, links=2)
    # 2 s, not less: on a loaded machine (load 5-8 on 2 cores) the partition and the first run alone took 0.5 s
    res = sgmp_map(net, seed=0, max_seconds=2.0)
    if res.cost > 0:
        assert res.stats["restarts"] >= 1 and res.seconds >= 1.9
    # a network every world of which can satisfy: cost 0 is proven optimal and SGMP stops at once
    easy = GroundNetwork.from_clauses(4, [(1.0, [(0, True), (1, True)]), (1.0, [(2, True), (3, False)])])
    res = sgmp_map(easy, seed=0, max_seconds=30)
    assert res.cost == 0 and res.optimal and res.stats["restarts"] == 0 and res.seconds < 10


@pytest.mark.parametrize("kw, message", [
    (dict(partition="metis"), "partition must be 'auto', 'graph', 'predicates'"),
    (dict(partition=np.zeros(16, bool)), "one integer group per atom"),
    (dict(restarts=-1), "restarts must be an integer >= 0"),
    (dict(restarts=1.5), "restarts must be an integer >= 0"),
    (dict(restart="random"), "restart must be one of walksat, fresh, alternate"),
    (dict(patience=0), "patience must be an integer >= 1"),
])
def test_bad_restart_and_partition_options(kw, message):
    net = tree_clusters(0, CHAIN)
    with pytest.raises(OptionError, match=message):
        sgmp_map(net, **kw)


def test_cli_graph_partition_and_restarts(tmp_path, capsys):
    import json

    args = ["infer", "-i", f"{ALCHEMY}/example-model.mln", "-e", f"{ALCHEMY}/example-evidence.db",
            "-q", "Smokes,Cancer,Friends", "--map", "--method", "sgmp"]
    stats = tmp_path / "s.json"
    assert main(args + ["-r", str(tmp_path / "r.txt"), "--partition", "graph", "--restarts", "2",
                        "--stats-json", str(stats)]) == 0
    got = json.loads(stats.read_text())
    assert got["partition"] == "graph" and got["restarts"] <= 2
    assert main(args + ["--restarts", "-1"]) == 2
    assert "restarts must be an integer" in capsys.readouterr().err


def test_graph_partition_with_blocks_and_hard_clauses_against_exact():
    for seed in range(4):
        net = planted_clusters(seed, 2, size=9, inside=30, links=2, hard=True, blocks=True)
        best = exact_map(net)
        res = sgmp_map(net, restarts=2, seed=seed)
        assert res.stats["partition"] == "graph" and res.stats["clusters"] == 2
        assert res.hard_violated == 0 and res.cost == pytest.approx(best.cost, abs=1e-9), (seed, res.stats)


def test_no_split_when_most_atoms_would_sit_on_separators():
    from markovlogic.infer.graph_partition import graph_partition, incidence, separator_share

    net = planted_clusters(0, 3, links=1)
    sat = sat_arrays(net)
    H = incidence(net.n_atoms, sat.clause_start, sat.lit_atom, sat.block_start, sat.block_atoms)
    truth = np.repeat(np.arange(3), 12)
    assert 0 < separator_share(H, truth) < 0.6 and _same_split(graph_partition(H), truth)
    assert len(np.unique(graph_partition(H, max_separator=0.0))) == 1
