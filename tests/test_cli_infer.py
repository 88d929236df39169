"""``mln infer``: MAP and marginal results in Alchemy's format, options, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from markovlogic.cli import main

ROOT = Path(__file__).resolve().parents[1]
SMOKERS = ROOT / "examples" / "smokers"
DATA = ROOT.parent / "shared" / "data"
BASE = ["-i", str(SMOKERS / "smokers.mln"), "-e", str(SMOKERS / "evidence.db"), "-q", "Smokes,Cancer"]


def _read_marginals(path: Path) -> dict[str, float]:
    out = {}
    for line in path.read_text().splitlines():
        atom, p = line.rsplit(" ", 1)
        out[atom] = float(p)
    return out


def test_map_writes_true_atoms(tmp_path):
    result, stats = tmp_path / "out.result", tmp_path / "stats.json"
    assert main(["infer", *BASE, "--map", "-r", str(result), "--stats-json", str(stats)]) == 0
    atoms = set(result.read_text().split())
    assert {"Smokes(Bob)", "Smokes(Frank)", "Cancer(Bob)", "Cancer(Edward)", "Cancer(Frank)"} <= atoms
    assert "Smokes(Helen)" not in atoms
    figures = json.loads(stats.read_text())
    assert figures["optimal"] is True and figures["atoms"] == 12 and figures["hard_violated"] == 0
    # 12 atoms in 6 components: solved by enumeration, not HiGHS (infer/tiny.py)
    assert figures["solver"] == "enumeration" and figures["bound"] == figures["score"]
    for key in ("clauses", "ground_seconds", "infer_seconds", "score", "cost", "bound", "gap"):
        assert key in figures


def test_alchemy_a_writes_every_query_atom_with_0_or_1(tmp_path):
    result = tmp_path / "out.result"
    assert main(["infer", *BASE, "-a", "-r", str(result)]) == 0
    lines = result.read_text().splitlines()
    assert len(lines) == 12
    assert all(line.rsplit(" ", 1)[1] in ("0", "1") for line in lines)


@pytest.mark.parametrize("method", ["ilp", "cpi", "exact", "maxwalksat", "cpsat"])
def test_every_map_method_finds_the_same_world(tmp_path, method):
    ref, out = tmp_path / "ref.result", tmp_path / "out.result"
    assert main(["infer", *BASE, "-m", "--method", "exact", "-r", str(ref)]) == 0
    assert main(["infer", *BASE, "-m", "--method", method, "-r", str(out)]) == 0
    # ties (atoms no clause prefers) may differ; compare the score instead
    stats = tmp_path / "s.json"
    main(["infer", *BASE, "-m", "--method", method, "-r", str(out), "--stats-json", str(stats)])
    exact_stats = tmp_path / "e.json"
    main(["infer", *BASE, "-m", "--method", "exact", "-r", str(ref), "--stats-json", str(exact_stats)])
    assert json.loads(stats.read_text())["cost"] == pytest.approx(json.loads(exact_stats.read_text())["cost"])


def test_marginals_mcsat_agree_with_exact(tmp_path):
    exact, mcsat = tmp_path / "exact.result", tmp_path / "mcsat.result"
    assert main(["infer", *BASE, "--method", "exact", "-r", str(exact)]) == 0
    assert main(["infer", *BASE, "-ms", "--samples", "3000", "--seed", "3", "-r", str(mcsat)]) == 0
    p, q = _read_marginals(exact), _read_marginals(mcsat)
    assert p.keys() == q.keys() and len(p) == 12
    assert max(abs(p[a] - q[a]) for a in p) < 0.03


def test_gibbs_spelling_p(tmp_path):
    out, stats = tmp_path / "g.result", tmp_path / "g.json"
    assert main(["infer", *BASE, "-p", "--samples", "500", "-r", str(out), "--stats-json", str(stats)]) == 0
    assert json.loads(stats.read_text())["method"] == "gibbs"
    assert len(_read_marginals(out)) == 12


@pytest.mark.skipif(not (DATA / "tuffy" / "smoke").is_dir(), reason="../shared/data/tuffy/smoke not found")
def test_tuffy_smoke_marginals_match_enumeration_to_001(tmp_path):
    folder = DATA / "tuffy" / "smoke"
    args = ["-i", str(folder / "prog.mln"), "-e", str(folder / "evidence.db"), "-f", str(folder / "query.db")]
    exact, mcsat = tmp_path / "exact.result", tmp_path / "mcsat.result"
    assert main(["infer", *args, "--method", "exact", "-r", str(exact)]) == 0
    assert main(["infer", *args, "--samples", "5000", "-r", str(mcsat)]) == 0
    p, q = _read_marginals(exact), _read_marginals(mcsat)
    assert p.keys() == q.keys()
    assert max(abs(p[a] - q[a]) for a in p) < 0.01


def test_prints_to_stdout_without_result_file(capsys):
    assert main(["infer", *BASE, "--method", "exact"]) == 0
    out = capsys.readouterr().out
    assert "Cancer(Edward) 0.8176" in out


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--map", "-ms"], "cannot be combined"),
        (["--method", "nonsense"], "unknown marginal method"),
        (["--map", "--method", "mcsat"], "unknown MAP method"),
        (["--samples", "0"], "samples must be"),
        (["--burn-in", "-1"], "burn-in must be"),
        (["-m", "-a"], "choose one of -m"),
        (["--map", "--method", "ilp", "--noise", "0.3"], "--noise does not apply to --map --method ilp; it applies to --map --method maxwalksat"),
        (["-p", "--metropolis-steps", "2"], "--metropolis-steps does not apply to --method gibbs; it applies to --method mcsat"),
        (["--map", "--no-rao-blackwell"], "--rao-blackwell does not apply to --map --method ilp; it applies to --method mcsat, mh"),
        (["--method", "exact", "--hard-weight", "5"], "--hard-weight does not apply to --method exact"),
    ],
)
def test_bad_options_exit_2_before_work(tmp_path, capsys, extra, message):
    result = tmp_path / "out.result"
    result.write_text("previous\n")
    assert main(["infer", *BASE, *extra, "-r", str(result)]) == 2
    assert message in capsys.readouterr().err
    assert result.read_text() == "previous\n"          # nothing half-written, nothing lost


def test_contradicting_hard_clauses_sampled_with_hard_weight(tmp_path, capsys):
    """MC-SAT refuses contradicting hard clauses unless --hard-weight softens
    them, as Alchemy does; the softened model's marginals match enumeration."""
    mln = tmp_path / "bad.mln"
    mln.write_text("t = {A}\nP(t)\nQ(t)\nP(x) => Q(x).\nP(x) => !Q(x).\n")
    db = tmp_path / "bad.db"
    db.write_text("P(A)\n")
    args = ["-i", str(mln), "-e", str(db), "-q", "Q"]
    assert main(["infer", *args]) == 2
    assert "hard" in capsys.readouterr().err
    out = tmp_path / "out.result"
    assert main(["infer", *args, "--hard-weight", "3", "--samples", "2000", "--no-rao-blackwell",
                 "--metropolis-steps", "0", "-r", str(out)]) == 0
    assert _read_marginals(out)["Q(A)"] == pytest.approx(0.5, abs=0.05)   # the two clauses weigh the same


def test_unknown_query_predicate_is_an_error(capsys):
    assert main(["infer", "-i", str(SMOKERS / "smokers.mln"), "-q", "Drinks"]) == 2
    assert "Drinks" in capsys.readouterr().err


def test_infeasible_hard_clauses_are_reported(tmp_path, capsys):
    mln = tmp_path / "bad.mln"
    mln.write_text("t = {A}\nP(t)\nQ(t)\nP(x) => Q(x).\nP(x) => !Q(x).\n")
    db = tmp_path / "bad.db"
    db.write_text("P(A)\n")
    assert main(["infer", "-i", str(mln), "-e", str(db), "-q", "Q", "--map"]) == 2
    assert "cannot all be satisfied" in capsys.readouterr().err


@pytest.mark.parametrize(
    "method, options",
    [("exact", {"samples": 10}), ("mcsat", {"chains": 2}), ("gibbs", {"samples": 0}),
     ("mcsat", {"max_seconds": -1.0}), ("nonsense", {})],
)
def test_bad_marginal_options_fail_before_grounding(monkeypatch, method, options):
    from markovlogic import MLN, Database, api
    from markovlogic.errors import OptionError

    def no_grounding(*args, **kwargs):
        raise AssertionError("grounded before checking the options")

    monkeypatch.setattr(api, "ground_model", no_grounding)
    mln = MLN.from_file(SMOKERS / "smokers.mln")
    with pytest.raises(OptionError):
        mln.infer(Database(), queries="Cancer", method=method, **options)
