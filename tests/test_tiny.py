"""Issue 29: small runs without numba or SciPy (infer/tiny.py, jit.kernel, the
text path for small evidence files). Each small path is held to exact
enumeration, or to the compiled path on the same inputs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from markovlogic import jit
from markovlogic.errors import InferenceError
from markovlogic.infer import tiny
from markovlogic.infer.exact import exact_map, exact_marginals
from markovlogic.infer.map import solve_map
from markovlogic.infer.marginals import solve_marginals
from markovlogic.infer.mcsat_options import MCSATOptions

from networks import infeasible_network, random_components, random_network

ROOT = Path(__file__).resolve().parents[1]
SMOKERS = ROOT / "examples" / "smokers"
TOL = 0.03


def _tiny_net(rng: np.random.Generator, n_blocks: int = 0):
    sizes = [int(s) for s in rng.integers(1, 9, size=int(rng.integers(1, 5)))]
    return random_components(rng, sizes, p_hard=0.15, p_negative=0.25, n_blocks=n_blocks,
                             repeats=bool(rng.random() < 0.2))


def _feasible_blocks_net(rng: np.random.Generator):
    """A tiny network with exactly-one blocks (one or two per component) that has a world."""
    while True:
        net = _tiny_net(rng, n_blocks=int(rng.integers(1, 3)))
        if not net.n_blocks:
            continue
        try:
            return net, exact_marginals(net).probabilities
        except InferenceError:
            continue


# ---------------------------------------------------------------- MC-SAT

def test_tiny_mcsat_matches_exact_enumeration():
    rng = np.random.default_rng(29)
    worst = 0.0
    for i in range(40):
        net = _tiny_net(rng)
        opt = MCSATOptions(samples=3000, seed=i)
        assert tiny.mcsat_tiny_fits(net, opt)
        got = tiny.mcsat_tiny(net, opt)
        exact = exact_marginals(net).probabilities
        err = float(np.abs(got.probabilities - exact).max())
        worst = max(worst, err)
        assert err <= TOL, (i, got.probabilities.round(3), exact.round(3))
        assert got.samples == 3000 and got.stats["slice_sampler"] == "enumeration"
    assert worst > 0.0                  # sampled, not computed


def test_tiny_mcsat_fraction_estimate_matches_exact():
    """Alchemy's estimate (the fraction of samples), not Rao-Blackwellised."""
    rng = np.random.default_rng(5)
    for i in range(10):
        net = _tiny_net(rng)
        got = tiny.mcsat_tiny(net, MCSATOptions(samples=6000, seed=i, rao_blackwell=False)).probabilities
        assert np.abs(got - exact_marginals(net).probabilities).max() <= 0.035


def test_tiny_mcsat_with_blocks_matches_exact_enumeration():
    """Exactly-one blocks: infeasible rows of the table, and a block atom's
    Rao-Blackwellised estimate from its block's conditional distribution."""
    rng = np.random.default_rng(291)
    worst = 0.0
    for i in range(30):
        net, exact = _feasible_blocks_net(rng)
        for rb in (True, False):
            opt = MCSATOptions(samples=3000 if rb else 6000, seed=i, rao_blackwell=rb)
            assert tiny.mcsat_tiny_fits(net, opt)
            got = tiny.mcsat_tiny(net, opt).probabilities
            err = float(np.abs(got - exact).max())
            worst = max(worst, err)
            assert err <= (TOL if rb else 0.035), (i, rb, got.round(3), exact.round(3))
        # every sampled world keeps each block's exactly one true atom: block marginals sum to 1
        starts = np.asarray(net.block_start)
        sums = np.add.reduceat(got[net.block_atoms], starts[:-1][np.diff(starts) > 0])
        assert np.allclose(sums, 1.0)
    assert worst > 0.0


def test_tiny_and_compiled_mcsat_agree_on_the_same_networks():
    from markovlogic.infer.mcsat import mcsat

    rng = np.random.default_rng(3)
    for i in range(8):
        net = _tiny_net(rng)
        a = tiny.mcsat_tiny(net, MCSATOptions(samples=4000, seed=i)).probabilities
        b = mcsat(net, samples=4000, seed=i).probabilities
        assert np.abs(a - b).max() <= 2 * TOL
    for i in range(4):
        net, _ = _feasible_blocks_net(rng)
        a = tiny.mcsat_tiny(net, MCSATOptions(samples=4000, seed=i)).probabilities
        b = mcsat(net, samples=4000, seed=i).probabilities
        assert np.abs(a - b).max() <= 2 * TOL


def test_dispatcher_uses_the_tiny_sampler_only_where_it_applies():
    rng = np.random.default_rng(1)
    net = random_components(rng, [4, 5, 3])
    assert solve_marginals(net, "mcsat", samples=200).stats.get("slice_sampler") == "enumeration"
    # options the enumeration does not implement, large components: the compiled chain
    for kw in ({"hard_weight": 5.0}, {"init_method": "maxwalksat"}, {"group_mutex": True},
               {"init": np.zeros(net.n_atoms, dtype=bool)}, {"joint_moves": False}, {"max_steps": 20},
               {"temperature": 0.2}):
        assert "slice_sampler" not in solve_marginals(net, "mcsat", samples=50, **kw).stats
    blocks, _ = _feasible_blocks_net(rng)          # blocks: enumerated too
    assert solve_marginals(blocks, "mcsat", samples=50).stats.get("slice_sampler") == "enumeration"
    big = random_network(rng, tiny.MAX_COMPONENT_ATOMS + 6, 40)
    if big.n_components == 1:
        assert "slice_sampler" not in solve_marginals(big, "mcsat", samples=50).stats
    many_samples = MCSATOptions(samples=10 ** 6)
    assert not tiny.mcsat_tiny_fits(net, many_samples)


def test_tiny_mcsat_progress_and_seed():
    rng = np.random.default_rng(8)
    net = _tiny_net(rng)
    seen = []
    a = solve_marginals(net, "mcsat", samples=600, seed=4, progress=seen.append)
    b = solve_marginals(net, "mcsat", samples=600, seed=4)
    assert seen and seen[-1] == 600
    assert np.array_equal(a.probabilities, b.probabilities)


def test_infeasible_tiny_network_gets_the_compiled_error():
    net = infeasible_network(np.random.default_rng(0))
    with pytest.raises(InferenceError, match="hard clauses"):
        solve_marginals(net, "mcsat", samples=10)
    with pytest.raises(InferenceError):
        solve_map(net, "ilp")


# ---------------------------------------------------------------- MAP

def test_tiny_map_is_the_ilp_optimum():
    from markovlogic.infer.ilp import ilp_map

    rng = np.random.default_rng(12)
    for i in range(30):
        sizes = [int(s) for s in rng.integers(1, 10, size=int(rng.integers(1, 4)))]
        net = random_components(rng, sizes, p_hard=0.15, p_negative=0.25, n_blocks=int(rng.integers(0, 2)))
        got = solve_map(net, "ilp")
        assert got.method == "ilp" and got.stats["solver"] == "enumeration"
        assert got.optimal and got.gap == 0.0 and got.hard_violated == 0
        ref = ilp_map(net)
        assert abs(got.score - ref.score) <= 1e-9, (i, got.score, ref.score)
        assert abs(got.score - exact_map(net).score) <= 1e-9


def test_ilp_options_are_checked_on_the_tiny_path_too():
    from markovlogic.errors import OptionError

    net = random_components(np.random.default_rng(0), [3, 3])
    for kw in ({"mip_gap": 2.0}, {"threads": 0}, {"max_seconds": -1}, {"group_atoms": 0}):
        with pytest.raises(OptionError):
            solve_map(net, "ilp", **kw)


def test_large_components_still_go_to_the_ilp():
    net = random_network(np.random.default_rng(4), tiny.MAX_COMPONENT_ATOMS + 8, 60)
    if net.n_components == 1:
        assert "solver" not in solve_map(net, "ilp").stats


# ---------------------------------------------------------------- kernels as Python

def _ground(mln_path: Path, db_path: Path, queries: str):
    from markovlogic.api import ground_model
    from markovlogic.model import MLN, Database

    mln = MLN.from_file(mln_path)
    return ground_model(mln, Database.from_file(db_path, mln), queries)


def _same_network(a, b) -> None:
    for name, value in vars(a).items():
        if isinstance(value, np.ndarray):
            other = getattr(b, name)
            assert value.dtype == other.dtype and np.array_equal(value, other), name
    assert a.n_components == b.n_components and a.predicates == b.predicates and a.constants == b.constants


@pytest.mark.parametrize("example,queries", [("smokers", "Smokes,Cancer")])
def test_python_and_numba_kernels_ground_the_same_network(example, queries):
    folder = ROOT / "examples" / example
    with jit.force_mode("python"):
        a = _ground(folder / f"{example}.mln", folder / "evidence.db", queries)
    with jit.force_mode("numba"):
        b = _ground(folder / f"{example}.mln", folder / "evidence.db", queries)
    _same_network(a, b)


def test_python_and_numba_kernels_agree_on_random_inputs():
    from markovlogic.ground import kernels
    from markovlogic.infer.settle import settle_false

    rng = np.random.default_rng(0)
    for _ in range(10):
        net = random_network(rng, 30, 45, n_blocks=2)
        args = (net.n_atoms, net.clause_start, net.lit_atom, net.block_start, net.block_atoms)
        world = rng.random(net.n_atoms) < 0.5
        out = {}
        for mode in ("python", "numba"):
            with jit.force_mode(mode):
                out[mode] = (kernels.components(*args), kernels.reverse_index(net.n_atoms, net.clause_start,
                                                                              net.lit_atom),
                             settle_false(net, world))
        (ca, ra, sa), (cb, rb, sb) = out["python"], out["numba"]
        assert np.array_equal(ca[0], cb[0]) and ca[1] == cb[1]
        assert all(np.array_equal(x, y) for x, y in zip(ra, rb))
        assert np.array_equal(sa[0], sb[0]) and sa[1] == sb[1]


def test_small_evidence_text_path_reads_what_the_column_scanner_reads(tmp_path, monkeypatch):
    from markovlogic.lang import parser
    from markovlogic.model import MLN, Database

    mln = MLN.from_file(SMOKERS / "smokers.mln")
    db = tmp_path / "e.db"
    db.write_text("Friends(Anna, Bob)\n  !Smokes(Gary)  // a comment\n?Cancer(Helen)\n\nSmokes( Anna )\n"
                  "Friends(Bob,Anna), Friends(Gary, Helen)\n")
    text = Database.from_file(db, mln)
    monkeypatch.setattr(parser, "SMALL_DB_BYTES", -1)
    columns = Database.from_file(db, mln)
    assert columns.columns is not None
    assert list(text.atoms) == list(columns.atoms)
    assert text.function_values == columns.function_values


def test_small_evidence_errors_name_file_line_and_column(tmp_path):
    from markovlogic.errors import MarkovLogicError
    from markovlogic.model import MLN, Database

    mln = MLN.from_file(SMOKERS / "smokers.mln")
    db = tmp_path / "bad.db"
    db.write_text("Smokes(Anna)\nSmokes(Anna, Bob)\n")
    with pytest.raises(MarkovLogicError) as err:
        Database.from_file(db, mln)
    assert "bad.db" in str(err.value) and "2" in str(err.value)


# ---------------------------------------------------------------- the whole small run

def test_small_cli_runs_load_neither_numba_nor_scipy():
    """What makes a warm small run fast (bench/workloads/firstrun.py measures
    the time): `mln infer` on the smokers example, MAP and MC-SAT, imports
    neither numba nor SciPy."""
    code = (
        "import sys\n"
        "from markovlogic.cli import main\n"
        "for extra in (['--map'], []):\n"
        "    status = main(['infer', '-i', sys.argv[1], '-e', sys.argv[2], '-q', 'Smokes,Cancer', *extra])\n"
        "    assert status == 0, status\n"
        "heavy = sorted(m for m in ('numba', 'scipy', 'pandas') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(SMOKERS / "smokers.mln"), str(SMOKERS / "evidence.db")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "HEAVY []" in out.stdout, out.stdout[-2000:]


def test_compile_time_is_counted_when_numba_is_imported_after_watch():
    """jit.watch() no longer imports numba: the listener is registered when
    numba's import completes (a large run still books its compile time apart)."""
    code = (
        "import sys\n"
        "from markovlogic import jit\n"
        "jit.watch()\n"
        "assert 'numba' not in sys.modules\n"
        "import numba\n"
        "@numba.njit(cache=False)\n"
        "def fresh(x):\n"
        "    return x + 1\n"
        "assert fresh(1) == 2\n"
        "print('COMPILED', jit.compile_seconds() > 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "COMPILED True" in out.stdout


def test_a_kernel_called_from_numba_code_is_compiled_with_it():
    """A jit.kernel that another (compiled) kernel calls: numba types it as its dispatcher."""
    import numba

    @jit.kernel(cache=False)
    def double(x):
        return 2 * x

    @numba.njit(cache=False)
    def total(a):
        s = 0
        for i in range(a.shape[0]):
            s += double(a[i])
        return s

    assert total(np.arange(5)) == 20
    with jit.force_mode("python"):
        assert double(3) == 6
