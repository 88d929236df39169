"""Lazy MaxWalkSAT and lazy MC-SAT (infer/lazy/) against exact answers and
against the eager algorithms; the --lazy option of mln infer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_ground_reference import problems  # noqa: E402

from markovlogic import MLN, Database  # noqa: E402
from markovlogic.errors import MarkovLogicError, OptionError  # noqa: E402
from markovlogic.ground import Grounder  # noqa: E402
from markovlogic.infer.exact import exact_map, exact_marginals  # noqa: E402
from markovlogic.infer.lazy import LazyOptions  # noqa: E402
from markovlogic.infer.lazy.maxwalksat import lazy_maxwalksat  # noqa: E402
from markovlogic.infer.lazy.mcsat import lazy_mcsat  # noqa: E402
from markovlogic.infer.maxwalksat import maxwalksat  # noqa: E402
from markovlogic.lang.parser import parse_queries  # noqa: E402
from markovlogic.logic.cnf import compile_mln  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
SMOKERS = ROOT / "examples" / "smokers"


def _by_name(net, world_or_values, atoms=None) -> dict:
    ids = np.arange(net.n_atoms) if atoms is None else atoms
    return {net.atom_name(int(a)): world_or_values[a] for a in ids}


def _world_on(full, held, world) -> np.ndarray:
    """A world of ``held`` (lazy, registry ids) as a world of ``full`` (by name)."""
    true = {held.atom_name(int(a)) for a in np.flatnonzero(world)}
    return np.array([full.atom_name(a) in true for a in range(full.n_atoms)], dtype=bool)


def _problem(problem):
    mln, db, queries, closed, opened, mode = problem
    assume(mode == "evidence")
    try:
        templates = compile_mln(mln)
    except MarkovLogicError:
        assume(False)
    assume(all(t.hard or t.weight is not None for t in templates))
    return mln, db, queries, closed, opened


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(problems(), st.integers(0, 1000))
def test_lazy_maxwalksat_reaches_the_enumerated_optimum(problem, seed):
    mln, db, queries, closed, opened = _problem(problem)
    try:
        g = Grounder(mln, db, queries, closed=closed, open_=opened)
        try:
            full = g.network(closure=False)
        finally:
            g.close()
        best = exact_map(full)
    except MarkovLogicError:
        assume(False)
    assume(best.hard_violated == 0)
    g = Grounder(mln, db, queries, closed=closed, open_=opened)
    try:
        result, held = lazy_maxwalksat(g, max_flips=2000, max_tries=10, seed=seed)
    finally:
        g.close()
    world = _world_on(full, held, result.world)
    assert full.hard_violated(world) == 0
    assert full.cost(world) == pytest.approx(best.cost, abs=1e-6)
    # the cost it reports is the full network's
    assert result.cost == pytest.approx(full.cost(world), abs=1e-6)
    # every true atom is active
    assert result.stats["active_atoms"] >= int(result.world.sum())


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(problems())
def test_lazy_mcsat_marginals_match_enumeration(problem):
    mln, db, queries, closed, opened = _problem(problem)
    from markovlogic.lang.printer import format_evidence_atom, print_mln

    note(print_mln(mln) + "\n" + "\n".join(format_evidence_atom(a) for a in db.atoms)
         + f"\nqueries {queries} closed {closed} open {opened}")
    try:
        g = Grounder(mln, db, queries, closed=closed, open_=opened)
        try:
            net = g.network()
            full = g.network(closure=False)
        finally:
            g.close()
        exact = exact_marginals(net).probabilities
        # hard clauses that no world satisfies (e.g. `*M(+x,i).` on an unknown M atom outside the
        # queries' closure): the marginals are undefined; lazy MC-SAT, which holds such an atom
        # once a clause activates it, says so with an InferenceError (found by CI's random examples)
        exact_map(full)
    except MarkovLogicError:
        assume(False)
    g = Grounder(mln, db, queries, closed=closed, open_=opened)
    try:
        result, held = lazy_mcsat(g, samples=4000, seed=3)
    finally:
        g.close()
    got = _by_name(held, result.probabilities, np.flatnonzero(held.is_query))
    want = _by_name(net, exact, np.flatnonzero(net.is_query))
    for name, p in got.items():
        # a query atom in no clause at all is not in the eager network: 1/2
        assert p == pytest.approx(want.get(name, 0.5), abs=0.03), name


# Found by random examples: worlds that the all-false start can only reach by
# flipping several atoms at once, through hard clauses (each single flip breaks
# one). Every query atom's marginal against enumeration.
HARD_GROUPS = [
    # two worlds (all P false, all P true): P 0.34, Q 0.54
    ("t = {A, B, C}\nP(t)\nQ(t)\nP(x) <=> P(y).\n0.5 P(x) => Q(x)\n", "", "P,Q", {}),
    # S(j) needs M(x,i) for every i != j (a positive literal on a held atom)
    ("t = {A, B, C}\nn = {1, 2, 3}\nS(n)\nM(t,n)\n-1.5 *M(+x,i)\nS(j) => (M(x,i) v i = j).\n", "S(2)\n", "S,M", {}),
    # S(1) needs M(A,2) false (a negative literal on an active atom that is true), and
    # M(A,2) is in no held clause at first (the chain never moves it)
    ("n = {1, 2, 3}\nS(n)\nM(n)\nS(j) => (i = j v !M(i)).\n", "S(2)\n", "M", {"open_": ["S"]}),
    # three worlds (every x on the same j), six atoms of three blocks apart: M 1/3 each
    # (MC-SAT, eager too, answered .45 / .30 / .25 before cluster swaps)
    ("t = {A, B, C}\nn = {1, 2, 3}\nM(t, n!)\nM(x, j) <=> M(y, j).\n", "", "M", {}),
    # the same through cycles of hard implications, no clause with a partner (hard ties)
    ("t = {A, B, C}\nn = {1, 2, 3}\nM(t, n!)\nN(t, n!)\nM(x, j) => N(x, j).\nN(x, j) => M(y, j).\n0.5 N(A, 2)\n",
     "", "M,N", {}),
]


@pytest.mark.parametrize("model,evidence,queries,where", HARD_GROUPS)
def test_lazy_mcsat_enters_worlds_behind_hard_clauses(model, evidence, queries, where):
    mln = MLN.from_string(model, "m.mln")
    db = Database.from_string(evidence, "e.db")
    q = parse_queries(queries, mln)
    g = Grounder(mln, db, q, **where)
    try:
        net = g.network()
    finally:
        g.close()
    exact = exact_marginals(net).probabilities
    want = _by_name(net, exact, np.flatnonzero(net.is_query))
    g = Grounder(mln, db, q, **where)
    try:
        result, held = lazy_mcsat(g, samples=4000, seed=3)
    finally:
        g.close()
    got = _by_name(held, result.probabilities, np.flatnonzero(held.is_query))
    assert set(got) >= set(want)
    for name, p in want.items():
        assert got[name] == pytest.approx(p, abs=0.03), name


@pytest.mark.xfail(strict=True, raises=AssertionError, reason="known limit of lazy MC-SAT: a held non-query atom whose flip alone changes "
                                       "no clause (S(i) below, conditional .5) is never a candidate of a check")
def test_lazy_mcsat_sees_hidden_atoms_that_matter_only_together():
    """Found by the random examples (hypothesis seed 1505): S is hidden (not
    a query), each S(i) alone changes nothing, two of them together forbid
    P. Exact P .444; lazy MC-SAT never activates S and answers .5."""
    mln = MLN.from_string("n = {1, 2, 3}\nP(t)\n*Q(t, t)\nS(n)\nS(i) ^ S(j) ^ P(x) => i = j.\n", "m.mln")
    db = Database.from_string("Q(A,C)\nQ(B,C)\nQ(C,C)\n", "e.db")
    q = parse_queries("P", mln)
    g = Grounder(mln, db, q)
    try:
        net = g.network()
    finally:
        g.close()
    want = _by_name(net, exact_marginals(net).probabilities, np.flatnonzero(net.is_query))
    g = Grounder(mln, db, q)
    try:
        result, held = lazy_mcsat(g, samples=4000, seed=3)
    finally:
        g.close()
    got = _by_name(held, result.probabilities, np.flatnonzero(held.is_query))
    for name, p in want.items():
        assert got[name] == pytest.approx(p, abs=0.03), name


PINNED = """
Link(node, node)
Seed(node)
Hot(node)
Alarm(node)

2.5 Seed(x) => Hot(x)
1.2 Link(x, y) ^ Hot(x) => Hot(y)
3 Hot(x) => Alarm(x)
-5 Hot(x)
-6 Alarm(x)
"""


def _pinned(n: int = 60, seeds: int = 3):
    rng = np.random.default_rng(5)
    lines = [f"Link(N{i},N{(i + 1) % n})" for i in range(n)]
    lines += [f"Link(N{i},N{int(j)})" for i in range(n) for j in rng.integers(0, n, 1)]
    lines += [f"Seed(N{i})" for i in range(0, n, n // seeds)]
    mln = MLN.from_string(PINNED, "pinned.mln")
    return mln, Database.from_string("\n".join(lines) + "\n", "pinned.db", mln=mln)


def test_lazy_map_on_a_pinned_model_holds_a_small_part():
    """Strong priors keep most atoms false: lazy MaxWalkSAT holds the seeds'
    neighbourhoods only and reaches the ILP's optimum."""
    mln, db = _pinned()
    ilp = mln.map(db, queries="Hot,Alarm", method="ilp")
    lazy = mln.map(db, queries="Hot,Alarm", lazy=True, seed=1)
    assert lazy.method == "maxwalksat"
    assert lazy.cost == pytest.approx(ilp.cost, abs=1e-6)
    assert lazy.atoms == ilp.atoms
    assert lazy.stats["active_rows"] < lazy.stats["total_rows"] / 3
    assert lazy.stats["active_atoms"] < 40


def test_lazy_mcsat_on_a_pinned_model_matches_exact():
    mln, db = _pinned()
    g = Grounder(mln, db, parse_queries("Hot,Alarm", mln))
    try:
        net = g.network()
    finally:
        g.close()
    exact = exact_marginals(net, max_atoms=30).probabilities if net.n_atoms <= 30 else None
    ref = exact if exact is not None else mln.infer(db, queries="Hot,Alarm", samples=8000, seed=2).probabilities
    lazy = mln.infer(db, queries="Hot,Alarm", lazy=True, samples=4000, seed=1)
    got = lazy.as_dict()
    want = dict(zip(*[[net.atom_name(int(a)) for a in np.flatnonzero(net.is_query)],
                      ref[np.flatnonzero(net.is_query)].tolist()]))
    err = max(abs(got[k] - want[k]) for k in want)
    assert err <= 0.03
    assert lazy.stats["active_atoms"] < net.n_atoms
    assert lazy.stats["held_query_atoms"] > 0


def test_api_defaults_and_bad_options():
    mln = MLN.from_file(SMOKERS / "smokers.mln")
    db = Database.from_file(SMOKERS / "evidence.db", mln=mln)
    answer = mln.map(db, queries="Smokes,Cancer", lazy=True)
    assert answer.method == "maxwalksat" and answer.stats["lazy"]
    with pytest.raises(OptionError, match="no lazy version"):
        mln.map(db, queries="Smokes,Cancer", method="ilp", lazy=True)
    with pytest.raises(OptionError, match="no lazy version"):
        mln.infer(db, queries="Smokes", method="gibbs", lazy=True)
    with pytest.raises(OptionError, match="lazy batch"):
        mln.map(db, queries="Smokes", lazy={"batch": "all"})
    with pytest.raises(OptionError, match="unknown lazy option"):
        mln.map(db, queries="Smokes", lazy={"treshold": 0.1})
    with pytest.raises(OptionError, match="threshold"):
        mln.infer(db, queries="Smokes", lazy=LazyOptions(threshold=0.9))
    with pytest.raises(OptionError, match="hard_weight"):
        mln.map(db, queries="Smokes", lazy=True, hard_weight=5.0)
    with pytest.raises(OptionError, match="does not take"):
        mln.map(db, queries="Smokes", lazy=True, mip_gap=0.1)


def _tuffy(name: str, queries: str):
    d = DATA / "tuffy" / name
    if not d.exists():
        pytest.skip("tuffy data not available")
    mln = MLN.from_file(str(d / "prog.mln"))
    return mln, Database.from_file(str(d / "evidence.db"), mln=mln), parse_queries(queries, mln)


def test_tuffy_cse_lazy_maxwalksat_matches_eager():
    """The same budget (10 tries of 50,000 flips): the same cost within noise
    (eager: 2,790.6-2,791.4 with 20 tries), with about half the clauses held."""
    mln, db, q = _tuffy("cse", "advisedBy")
    g = Grounder(mln, db, q)
    try:
        net = g.network(closure=False)
    finally:
        g.close()
    eager = maxwalksat(net, max_flips=50_000, max_tries=10, seed=1)
    g = Grounder(mln, db, q)
    try:
        lazy, held = lazy_maxwalksat(g, max_flips=50_000, max_tries=10, seed=1)
    finally:
        g.close()
    assert lazy.hard_violated == 0
    on_full = net.cost(_world_on(net, held, lazy.world))
    assert on_full == pytest.approx(lazy.cost, rel=1e-9)
    assert abs(lazy.cost - eager.cost) < 0.002 * eager.cost
    assert held.n_clauses < 0.6 * net.n_clauses
    assert lazy.stats["active_rows"] < lazy.stats["total_rows"]


@pytest.mark.slow
def test_tuffy_class_lazy_maxwalksat_matches_eager():
    mln, db, q = _tuffy("class", "category")
    g = Grounder(mln, db, q)
    try:
        net = g.network(closure=False)
    finally:
        g.close()
    eager = maxwalksat(net, seed=1)
    g = Grounder(mln, db, q)
    try:
        lazy, held = lazy_maxwalksat(g, max_flips=50_000, max_tries=20, seed=1)
    finally:
        g.close()
    assert abs(lazy.cost - eager.cost) < 0.01 * eager.cost      # optimum 361.56
    assert held.n_clauses < 0.5 * net.n_clauses


@pytest.mark.slow
def test_tuffy_cse_lazy_mcsat_matches_eager():
    mln, db, q = _tuffy("cse", "advisedBy")
    eager = mln.infer(db, queries="advisedBy", samples=1000, seed=1).as_dict()
    lazy = mln.infer(db, queries="advisedBy", samples=1000, seed=2, lazy=True)
    got = lazy.as_dict()
    diff = np.array([abs(got[k] - eager[k]) for k in eager])
    assert diff.mean() < 0.01 and diff.max() < 0.15     # two chains of 1,000 samples


def _mln(*args, check=True):
    return subprocess.run([sys.executable, "-m", "markovlogic.cli", *args], capture_output=True, text=True,
                          check=False)


def test_cli_lazy(tmp_path):
    out, stats = tmp_path / "map.result", tmp_path / "map.json"
    r = _mln("infer", "-i", str(SMOKERS / "smokers.mln"), "-e", str(SMOKERS / "evidence.db"),
             "-q", "Smokes,Cancer", "--map", "--lazy", "-r", str(out), "--stats-json", str(stats))
    assert r.returncode == 0, r.stderr
    figures = json.loads(stats.read_text())
    assert figures["method"] == "maxwalksat" and figures["lazy"]
    for key in ("active_atoms", "active_clauses", "active_rows", "total_rows", "activation_rounds",
                "sql_seconds"):
        assert key in figures
    assert "Smokes(Bob)" in out.read_text().split()
    out2 = tmp_path / "marg.result"
    r = _mln("infer", "-i", str(SMOKERS / "smokers.mln"), "-e", str(SMOKERS / "evidence.db"),
             "-q", "Smokes,Cancer", "--lazy", "--lazy-threshold", "0.01", "-r", str(out2))
    assert r.returncode == 0, r.stderr
    assert len(out2.read_text().splitlines()) == 12


@pytest.mark.parametrize("args,message", [
    (["--map", "--lazy", "--method", "ilp"], "no lazy version"),
    (["--lazy", "--method", "gibbs"], "no lazy version"),
    (["--map", "--lazy-threshold", "0.1"], "applies to --lazy"),
    (["--map", "--lazy", "--lazy-threshold", "0.1"], "it applies to --lazy marginals"),
    (["--lazy", "--lazy-threshold", "0.7"], "threshold"),
    (["--map", "--lazy", "--hard-weight", "4"], "hard_weight"),
])
def test_cli_lazy_bad_combinations(args, message, tmp_path):
    result = tmp_path / "never.result"
    r = _mln("infer", "-i", str(SMOKERS / "smokers.mln"), "-e", str(SMOKERS / "evidence.db"),
             "-q", "Smokes,Cancer", "-r", str(result), *args)
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr
    assert not result.exists()


def test_active_part_over_the_memory_budget_stops_with_a_message():
    mln, db, q = _tuffy("cse", "advisedBy")
    from markovlogic.errors import ResourceError

    g = Grounder(mln, db, q, memory_limit="3MB")
    try:
        with pytest.raises(ResourceError, match="lazy inference: the active part"):
            lazy_maxwalksat(g, max_flips=10_000, max_tries=1)
    finally:
        g.close()


def test_lazy_mcsat_checks_stop_at_the_memory_budget():
    """The checks read, for every held atom, the ground clauses its flip would
    change (friends: every unknown Friends pair with each friend of one of
    them); they stop before the rows outgrow the budget instead of reading
    them all (bench/workloads/lazy.py friends-marginals: 8 GB and climbing
    at N = 2,000 before)."""
    from markovlogic.errors import ResourceError

    n = 150
    mln = MLN.from_string("Smokes(person)\nFriends(person, person)\n1.1 Friends(x, y) ^ Smokes(x) => Smokes(y)\n"
                          "0.8 Friends(x, y) ^ Friends(y, z) => Friends(x, z)\n-2.5 Smokes(x)\n-8 Friends(x, y)\n",
                          "f.mln")
    ev = "".join(f"Friends(P{i},P{(i + 1) % n})\nFriends(P{i},P{(i + 7) % n})\n" for i in range(n)) + "Smokes(P0)\n"
    db = Database.from_string(ev, "f.db", mln=mln)
    # summed per atom in SQL, a check reads one row per atom that can pass or is asked for:
    # with Friends among the queries, every pair
    for limit, queries, fits in (("4GB", "Smokes", True), ("10MB", "Smokes", True), ("10MB", "Smokes,Friends", False)):
        g = Grounder(mln, db, parse_queries(queries, mln), open_=None if "Friends" in queries else ["Friends"],
                     memory_limit=limit)
        try:
            if fits:
                result, _ = lazy_mcsat(g, samples=200, seed=1)
                assert result.stats["active_atoms"] < n * n
            else:
                with pytest.raises(ResourceError, match="checking the held atoms .* more than the memory budget"):
                    lazy_mcsat(g, samples=200, seed=1)
        finally:
            g.close()


def test_cli_lazy_memory_budget(tmp_path):
    d = DATA / "tuffy" / "cse"
    if not d.exists():
        pytest.skip("tuffy data not available")
    out = tmp_path / "never.result"
    r = _mln("infer", "-i", str(d / "prog.mln"), "-e", str(d / "evidence.db"), "-q", "advisedBy", "--map",
             "--lazy", "--memory-limit", "3MB", "-r", str(out))
    assert r.returncode == 2
    assert "memory budget" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()
