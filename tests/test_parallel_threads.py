"""Both cores (issue 15 part 3): the split MAP and marginal paths against
enumeration, determinism for a seed and a thread count, the serial path with
one thread, per-database learning, and bad options."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic.errors import OptionError
from markovlogic.infer.exact import exact_map, exact_marginals
from markovlogic.infer.map import solve_map
from markovlogic.infer.marginals import solve_marginals
from markovlogic.parallel.map import solve_map_parallel
from markovlogic.parallel.marginals import solve_marginals_parallel
from markovlogic.parallel.options import ParallelOptions
from markovlogic.parallel.split import balance, partition, subnetwork

from networks import random_components, random_network

TOL = 0.03
TWO = ParallelOptions(threads=2, min_clauses=0)
THREE = ParallelOptions(threads=3, min_clauses=0)


def _many(seed: int, k: int = 12):
    rng = np.random.default_rng(seed)
    return random_components(rng, [int(s) for s in rng.integers(2, 8, size=k)], p_hard=0.15,
                             p_negative=0.25, n_blocks=1)


def test_partition_keeps_whole_components_and_every_atom():
    net = _many(1, 30)
    parts = partition(net, 3)
    assert len(parts) == 3
    seen = np.concatenate([p.atoms for p in parts])
    assert sorted(seen.tolist()) == list(range(net.n_atoms))
    for p in parts:
        comps = set(net.component[p.atoms].tolist())
        assert sum(int((net.component == c).sum()) for c in comps) == len(p.atoms)
    assert sum(p.net.n_clauses for p in parts) == net.n_clauses
    assert sum(p.net.n_blocks for p in parts) == net.n_blocks


def test_subnetwork_scores_add_up():
    net = _many(2, 10)
    rng = np.random.default_rng(0)
    world = rng.random(net.n_atoms) < 0.5
    parts = partition(net, 4)
    assert abs(sum(p.net.score(world[p.atoms]) for p in parts) - net.score(world)) < 1e-9
    assert sum(p.net.hard_violated(world[p.atoms]) for p in parts) == net.hard_violated(world)


def test_balance_is_deterministic_and_balanced():
    work = np.random.default_rng(3).random(10_000)
    a, b = balance(work, 4), balance(work, 4)
    assert (a == b).all()
    loads = np.bincount(a, weights=work)
    assert loads.max() / loads.min() < 1.01


@pytest.mark.parametrize("method", ["ilp", "exact", "cpsat"])
def test_component_split_exact_map_cost_equals_serial(method):
    for seed in range(6):
        net = _many(10 + seed)
        serial = solve_map(net, method=method)
        split = solve_map_parallel(net, method, {}, TWO if seed % 2 else THREE)
        assert split.stats["parts"] >= 2
        assert split.optimal and serial.optimal
        assert split.cost == pytest.approx(serial.cost, abs=1e-9)
        assert split.hard_violated == 0
        assert split.bound == pytest.approx(serial.bound, abs=1e-6)


def test_maxwalksat_tries_on_threads_reach_the_optimum_and_are_deterministic():
    for seed in range(6):
        net = _many(20 + seed)
        best = exact_map(net).cost
        a = solve_map_parallel(net, "maxwalksat", {"seed": seed}, TWO)
        b = solve_map_parallel(net, "maxwalksat", {"seed": seed}, TWO)
        assert a.stats["threads"] == 2 and a.stats["tries"] == 20
        assert (a.world == b.world).all()
        assert a.hard_violated == 0
        assert a.cost == pytest.approx(best, abs=1e-9)


def test_one_thread_is_the_serial_path_bit_for_bit():
    net = _many(5)
    one = ParallelOptions(threads=1, min_clauses=0)
    a = solve_map_parallel(net, "maxwalksat", {"seed": 4}, one)
    b = solve_map(net, method="maxwalksat", seed=4)
    assert (a.world == b.world).all()
    m1 = solve_marginals_parallel(net, "mcsat", {"seed": 4, "samples": 200}, one)
    m2 = solve_marginals(net, method="mcsat", seed=4, samples=200)
    assert (m1.probabilities == m2.probabilities).all()


def test_small_networks_stay_serial_by_default():
    net = _many(6)
    r = solve_map_parallel(net, "ilp", {}, ParallelOptions(threads=2))
    assert "parts" not in r.stats


@pytest.mark.parametrize("method", ["mcsat", "gibbs"])
def test_component_split_marginals_match_enumeration(method):
    for seed in range(4):
        net = _many(30 + seed, 16)
        exact = exact_marginals(net).probabilities
        opts = {"seed": seed, "samples": 4000}
        if method == "gibbs":
            opts["hard_weight"] = 6.0
            exact = exact_marginals(net.softened(6.0)).probabilities
        got = solve_marginals_parallel(net, method, dict(opts), TWO)
        assert got.stats["split"] == "components" and got.stats["parts"] == 2
        assert np.abs(got.probabilities - exact).max() <= TOL
        again = solve_marginals_parallel(net, method, dict(opts), TWO)
        assert (again.probabilities == got.probabilities).all()


@pytest.mark.parametrize("method", ["mcsat", "gibbs"])
def test_pooled_chains_match_enumeration_on_one_component(method):
    rng = np.random.default_rng(77)
    done = 0
    while done < 6:
        net = random_network(rng, 10, 22, p_hard=0.1, p_negative=0.25, n_blocks=1)
        if net.n_components != 1:
            continue
        opts = {"seed": done, "samples": 4000}
        if method == "gibbs":
            opts["hard_weight"] = 6.0
            exact = exact_marginals(net.softened(6.0)).probabilities
        else:
            exact = exact_marginals(net).probabilities
        got = solve_marginals_parallel(net, method, dict(opts), TWO)
        assert got.stats["split"] == "chains"
        assert got.stats.get("init_method") == ("best" if method == "mcsat" else None)   # the pooled default
        assert got.samples == (4000 if method == "mcsat" else 4 * 4000)
        assert np.abs(got.probabilities - exact).max() <= TOL
        again = solve_marginals_parallel(net, method, dict(opts), TWO)
        assert (again.probabilities == got.probabilities).all()
        done += 1


def test_subnetwork_keeps_reweighted_clause_weights():
    net = _many(8)
    soft = net.softened(2.5)
    sub = subnetwork(soft, partition(soft, 2)[0].atoms)
    assert not sub.is_hard.any()
    assert set(np.round(sub.weight, 6).tolist()) <= set(np.round(soft.weight, 6).tolist())


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_bad_threads_are_refused(bad):
    with pytest.raises(OptionError, match="threads"):
        ParallelOptions(threads=bad).check()


def test_api_threads_map_and_marginals_agree_with_serial():
    from markovlogic import MLN, Database

    mln = MLN.from_file("examples/smokers/smokers.mln")
    db = Database.from_file("examples/smokers/evidence.db", mln=mln)
    a = mln.map(db, queries="Smokes,Cancer", threads=2)
    b = mln.map(db, queries="Smokes,Cancer", threads=1)
    assert a.atoms == b.atoms and a.cost == pytest.approx(b.cost)
    m = mln.infer(db, queries="Cancer", threads=2, samples=500)
    assert len(m.as_dict()) > 0
    with pytest.raises(OptionError, match="threads"):
        mln.map(db, queries="Smokes", threads=0)


def test_cli_threads_bad_value_exits_2(tmp_path):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "markovlogic.cli", "infer", "-i", "examples/smokers/smokers.mln",
                          "-e", "examples/smokers/evidence.db", "-q", "Smokes", "--map", "--threads", "0"],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "threads must be a positive integer" in out.stderr
    assert "Traceback" not in out.stderr


def test_per_database_learning_on_threads_is_thread_independent():
    from markovlogic import MLN, Database

    mln = MLN.from_file("examples/smokers/smokers.mln")
    db = Database.from_file("examples/smokers/evidence.db", mln=mln)
    kwargs = dict(query_predicates=["Cancer"], method="dn", multiple_databases=True, iterations=5, seed=3)
    one = mln.learn([db, db, db], threads=1, **kwargs)
    two = mln.learn([db, db, db], threads=2, **kwargs)
    assert [f.weight for f in one.formulas] == [f.weight for f in two.formulas]


def test_learn_cli_threads_and_bad_ray_options(tmp_path):
    import subprocess
    import sys

    base = [sys.executable, "-m", "markovlogic.cli", "learn", "-i", "examples/smokers/smokers.mln",
            "-t", "examples/smokers/evidence.db", "--ne", "Cancer", "-g", "-o", str(tmp_path / "out.mln")]
    ok = subprocess.run(base + ["--threads", "2"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run(base + ["--ray-workers", "2"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--ray-workers applies with --ray-address" in bad.stderr


def test_gibbs_marginals_do_not_depend_on_how_sweeps_are_chunked(monkeypatch):
    """The chunk size follows the measured sampling rate (so a loaded machine
    chunks differently); several chains' conditionals summed in one array made
    the last bits of the marginals depend on it. One row per chain does not."""
    from markovlogic.infer import sampling

    net = _many(31, 16)
    opts = {"seed": 3, "samples": 500, "chains": 3, "hard_weight": 6.0}
    default = solve_marginals(net, "gibbs", **opts).probabilities
    monkeypatch.setattr(sampling, "_CHUNK_SECONDS", 1e-9)      # one sweep per chunk
    single = solve_marginals(net, "gibbs", **opts).probabilities
    assert (default == single).all()
