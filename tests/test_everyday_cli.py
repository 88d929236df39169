"""Issue 29, items 4 and 6: the command line's rough edges and the faults a
bad-input corpus found, each refused with a clear message (exit status 2)
or fixed."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from markovlogic import MLN, Database
from markovlogic.cli import main
from markovlogic.errors import ArgumentTypeError, EvidenceError, MLNSyntaxError, OptionError

ROOT = Path(__file__).resolve().parents[1]
SMOKERS = ROOT / "examples" / "smokers"
MODEL, EVIDENCE = str(SMOKERS / "smokers.mln"), str(SMOKERS / "evidence.db")
SRC = ROOT / "src"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "markovlogic.cli", *args], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(SRC)), timeout=120)


# ------------------------------------------------------------ consistency

def test_version(capsys):
    from markovlogic import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"mln (markovlogic) {__version__}"


def test_infer_without_queries_names_q_and_f(capsys):
    assert main(["infer", "-i", MODEL, "-e", EVIDENCE, "--map"]) == 2
    err = capsys.readouterr().err
    assert "-q" in err and "-f" in err and "Traceback" not in err


def test_infer_with_an_empty_query_file(tmp_path, capsys):
    empty = tmp_path / "q.db"
    empty.write_text("// nothing\n")
    assert main(["infer", "-i", MODEL, "-e", EVIDENCE, "-f", str(empty)]) == 2
    assert "names no query" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["infer", "ground"])
def test_o_given_a_file_in_infer_and_ground_says_it_is_open_world(tmp_path, capsys, command):
    out = tmp_path / "out.result"
    assert main([command, "-i", MODEL, "-e", EVIDENCE, "-q", "Smokes", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "open-world" in err and "-r" in err
    assert not out.exists()


def test_o_with_an_undeclared_predicate_names_r(capsys):
    assert main(["infer", "-i", MODEL, "-e", EVIDENCE, "-q", "Smokes", "-o", "Result"]) == 2
    err = capsys.readouterr().err
    assert "not declared" in err and "-r" in err


def test_help_is_wrapped_not_cut_and_shows_defaults():
    done = _run("infer", "--help")
    assert done.returncode == 0
    text = done.stdout
    assert "…" not in text and "╭" not in text             # rich's boxes truncated option names at 80 columns
    assert "--ray-address" in text and "markovlogic[ray]" in text     # '[ray]' was eaten as markup
    flat = " ".join(text.split())
    for flag, default in (("--samples", "default 1000"), ("--burn-in", "default 100"), ("--chains", "default 4"),
                          ("--noise", "default 0.5"), ("--seed", "[default: 0]")):
        assert flag in flat
        assert default in flat[flat.index(flag):flat.index(flag) + 400], flag
    top = _run("--help").stdout
    assert "..." not in top.split("Commands:")[1]         # each command's first sentence whole


def test_learn_help_says_what_ray_does():
    text = " ".join(_run("learn", "--help").stdout.split())
    assert "--multiple-databases" in text[text.index("--ray-address"):]
    assert "0: greedy" in text[text.index("--temperature"):]


def test_learn_stats_json_and_trace(tmp_path):
    stats, trace, out = tmp_path / "s.json", tmp_path / "t.csv", tmp_path / "l.mln"
    assert main(["learn", "-i", MODEL, "-t", EVIDENCE, "-o", str(out), "--ne", "Cancer", "-g",
                 "--stats-json", str(stats), "--trace", str(trace)]) == 0
    figures = json.loads(stats.read_text())
    # -g counts while grounding and keeps no network: ground rows (unmerged), not merged clauses
    for key in ("method", "atoms", "ground_rows", "weights", "iterations", "converged", "objective", "objective_name",
                "ground_seconds", "learn_seconds", "peak_mb"):
        assert key in figures, key
    assert figures["method"] == "pll" and figures["query_predicates"] == ["Cancer"]
    rows = list(csv.reader(trace.read_text().splitlines()))
    assert rows[0][:3] == ["iteration", "objective", "seconds"]
    assert all(float(r[2]) > 0 for r in rows[1:])


def test_learn_stats_json_is_not_an_input(tmp_path, capsys):
    model = tmp_path / "m.mln"
    model.write_text(Path(MODEL).read_text())
    assert main(["learn", "-i", str(model), "-t", EVIDENCE, "-o", str(tmp_path / "l.mln"), "--ne", "Cancer",
                 "--stats-json", str(model)]) == 2
    assert "also an input" in capsys.readouterr().err


@pytest.mark.parametrize("address", ["127.0.0.1:1", "auto"])
def test_learn_refuses_ray_where_nothing_would_run_on_it(tmp_path, capsys, address):
    assert main(["learn", "-i", MODEL, "-t", EVIDENCE, "-o", str(tmp_path / "l.mln"), "--ne", "Cancer",
                 "--ray-address", address]) == 2
    err = capsys.readouterr().err
    assert "--multiple-databases" in err and not (tmp_path / "l.mln").exists()


def test_learn_api_refuses_ray_for_one_database():
    mln = MLN.from_file(MODEL)
    db = Database.from_file(EVIDENCE, mln=mln)
    with pytest.raises(OptionError, match="multiple_databases"):
        mln.learn(db, query_predicates=["Cancer"], method="pll", ray_address="auto")


def test_learn_trace_leaves_untimed_rows_empty():
    import numpy as np

    from markovlogic.learn.result import LearnResult, TraceRow

    result = LearnResult(params=np.zeros(1), param_info=(), method="x", objective_name="o",
                         trace=[TraceRow(1, 0.5, np.zeros(0)), TraceRow(2, 0.4, np.zeros(0), 1.5)])
    assert [r[2] for r in result.trace_rows()] == ["", 1.5]


# ------------------------------------------------------------ the bad-input corpus

def test_eval_stats_json_onto_its_own_result_or_truth_is_refused(tmp_path, capsys):
    result = tmp_path / "r.result"
    assert main(["infer", "-i", MODEL, "-e", EVIDENCE, "-q", "Smokes", "--map", "-r", str(result)]) == 0
    truth = tmp_path / "truth.db"
    truth.write_text(Path(EVIDENCE).read_text())
    before = result.read_text(), truth.read_text()
    for target in (result, truth):
        assert main(["eval", "-r", str(result), "-t", str(truth), "-q", "Smokes", "--stats-json", str(target)]) == 2
        assert "also an input" in capsys.readouterr().err
    assert (result.read_text(), truth.read_text()) == before


def test_eval_equivalence_for_a_predicate_not_scored(tmp_path, capsys):
    result = tmp_path / "r.result"
    result.write_text("Smokes(Anna)\n")
    assert main(["eval", "-r", str(result), "-t", EVIDENCE, "-q", "Smokes", "--equivalence", "Friends"]) == 2
    assert "--equivalence names Friends" in capsys.readouterr().err


EQUIVALENCE_MODEL = "equivalence Same(m, m)\nHasW(m, w)\n1 HasW(x, t) ^ HasW(y, t) => Same(x, y)\n"


def test_false_reflexive_atom_of_an_equivalence_is_refused(tmp_path, capsys):
    model, db = tmp_path / "e.mln", tmp_path / "e.db"
    model.write_text(EQUIVALENCE_MODEL)
    db.write_text("HasW(M1, A)\nHasW(M2, A)\nHasW(M4, B)\n!Same(M4, M4)\n")
    assert main(["infer", "-i", str(model), "-e", str(db), "-q", "Same", "--map"]) == 2
    err = capsys.readouterr().err
    assert f"{db}:4:1:" in err and "reflexive" in err
    mln = MLN.from_string(EQUIVALENCE_MODEL)
    with pytest.raises(EvidenceError, match="reflexive"):
        Database.from_string("!Same(M4,M4)\n", mln=mln)
    Database.from_string("Same(M4,M4)\n!Same(M4,M5)\n", mln=mln)          # fine


def test_db_path_of_the_wrong_type_is_a_clear_error():
    mln = MLN.from_file(MODEL)
    db = Database.from_file(EVIDENCE, mln=mln)
    for call in (mln.map, mln.infer, mln.ground):
        with pytest.raises(ArgumentTypeError, match="db_path must be a path"):
            call(db, queries="Smokes", db_path=123)
        with pytest.raises(ArgumentTypeError, match="closed must be predicate names"):
            call(db, queries="Smokes", closed=5)


def test_unicode_predicate_in_a_set_level_feature_gets_the_usual_message():
    text = "equivalence Same(bib, bib)\nTitle(bib, t)\n0.5 all(x, y in Sàme: Title(x, t) ^ Title(y, t))\n"
    with pytest.raises(MLNSyntaxError, match="unexpected character 'à'") as info:
        MLN.from_string(text, "u.mln")
    assert (info.value.line, info.value.column) == (3, 18)
    with pytest.raises(MLNSyntaxError, match="unexpected character 'à'"):
        MLN.from_string("Sàme(bib, bib)\n", "d.mln")                # as in a declaration


def test_unknown_atom_with_a_variable_is_refused(tmp_path, capsys):
    model, db = tmp_path / "m.mln", tmp_path / "t.db"
    model.write_text("Smokes(person)\nCancer(person)\n1 Smokes(x) => Cancer(x)\n")
    db.write_text("Smokes(Anna)\nCancer(Anna)\n?Smokes(x)\n")
    assert main(["learn", "-i", str(model), "-t", str(db), "-o", str(tmp_path / "l.mln"), "--ne", "Cancer"]) == 2
    err = capsys.readouterr().err
    assert f"{db}:3:1:" in err and "--hidden Smokes" in err
    mln = MLN.from_file(str(model))
    Database.from_string('?Smokes("x")\n?Smokes(Bob)\n', mln=mln)         # quoted or capitalised: constants


def test_em_with_samplerank_is_refused(tmp_path, capsys):
    assert main(["learn", "-i", MODEL, "-t", EVIDENCE, "-o", str(tmp_path / "l.mln"), "--ne", "Cancer",
                 "--method", "samplerank", "--em", "hard"]) == 2
    assert "--em hard: --hidden and --em apply to --method dn or scg" in capsys.readouterr().err
    mln = MLN.from_file(MODEL)
    db = Database.from_file(EVIDENCE, mln=mln)
    for method in ("samplerank", "pll"):
        with pytest.raises(OptionError, match="dn or scg"):
            mln.learn(db, query_predicates=["Cancer"], method=method, em="soft")


def test_mh_map_with_zero_steps_is_refused(capsys):
    assert main(["infer", "-i", MODEL, "-e", EVIDENCE, "-q", "Smokes", "--map", "--method", "mh", "--steps", "0"]) == 2
    assert "--steps must be a positive integer" in capsys.readouterr().err
    mln = MLN.from_file(MODEL)
    db = Database.from_file(EVIDENCE, mln=mln)
    for method in ("mh", "multitask-mh"):
        with pytest.raises(OptionError, match="steps"):
            mln.map(db, queries="Smokes", method=method, steps=0)


def test_check_on_a_large_db_counts_in_columns(tmp_path):
    """The column counts of `mln check` agree with the atom-by-atom ones."""
    from markovlogic.commands.check import summarize

    mln = MLN.from_string("t = {A, B}\nP(t, u)\nQ(u)\n1 P(x, y) => Q(y)\n")
    lines = ["P(A, C1)", "P(B, C2)", "!P(D, C1)", "?Q(C3)", "Q(C1)", "!Q(C4)", "P(E, C5)"]
    path = tmp_path / "e.db"
    path.write_text("\n".join(lines * 3) + "\n")
    columnar = Database.from_file(str(path), mln=mln)
    objects = Database(atoms=list(columnar.atoms))
    assert columnar.columns is not None and objects.columns is None
    assert summarize(mln, columnar, None) == summarize(mln, objects, None)
    s = summarize(mln, columnar, None)
    assert s["domains"] == {"t": 4, "u": 5}
    assert s["evidence"]["Q"] == {"true": 3, "false": 3, "unknown": 3}


def test_check_lists_set_level_features(capsys):
    assert main(["check", "-i", str(ROOT / "examples" / "cora-er" / "cora-sets.mln")]) == 0
    out = capsys.readouterr().out
    assert "equivalence predicates (clusterings): SameBib" in out
    assert "set-level feature" in out and "some(x, y in SameBib:" in out


def test_learn_summary_leaves_out_rows_a_learner_has_no_figure_for(capsys, tmp_path):
    """Piecewise training has no 'databases'/'constants clustered' figures: no empty rows."""
    import numpy as np

    from markovlogic.commands.learn import _stats, _summary
    from markovlogic.learn.api import LearnedModel
    from markovlogic.learn.result import LearnResult

    result = LearnResult(params=np.zeros(3), param_info=(), method="piecewise", objective_name="penalised LL",
                         iterations=7, converged=True, stats={"examples": 120, "positives": 40})
    model = LearnedModel(mln=None, text="", result=result, query_predicates=["SameBib"], networks=[])
    rows = _summary(model, tmp_path / "l.mln")
    out = capsys.readouterr().err
    assert "databases" not in out and "constants clustered" not in out
    assert "training merges" in out and "120" in out
    figures = _stats(model, rows)
    assert figures["training_merges"] == 120 and figures["method"] == "piecewise"
