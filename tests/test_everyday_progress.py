"""Issue 29, item 2: every long stage reports its progress on a terminal, and
nothing is shown elsewhere (a pipe, a file, the Python API)."""

from __future__ import annotations

import io
import re
from pathlib import Path

from rich.console import Console

from markovlogic import MLN, Database, progress

SMOKERS = Path(__file__).resolve().parents[1] / "examples" / "smokers"


def _stages(run, terminal: bool) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=terminal, width=200)
    with progress.terminal(console):
        assert progress.enabled() == terminal
        run()
    assert not progress.enabled()
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buffer.getvalue())


def _model():
    mln = MLN.from_file(SMOKERS / "smokers.mln")
    return mln, Database.from_file(SMOKERS / "evidence.db", mln=mln)


def test_stages_are_shown_on_a_terminal():
    mln, db = _model()
    shown = _stages(lambda: mln.map(db, queries="Smokes,Cancer", method="ilp"), True)
    assert "grounding templates" in shown and "MAP (ilp)" in shown
    shown = _stages(lambda: mln.map(db, queries="Smokes,Cancer", method="maxwalksat", max_tries=3), True)
    assert "MaxWalkSAT tries" in shown
    shown = _stages(lambda: mln.map(db, queries="Smokes,Cancer", method="cpi"), True)
    assert "cutting planes" in shown
    shown = _stages(lambda: mln.learn(db, query_predicates=["Cancer"], method="pll"), True)
    assert "grounding 1 training database" in shown


def test_nothing_is_shown_elsewhere():
    mln, db = _model()
    assert _stages(lambda: mln.map(db, queries="Smokes,Cancer"), False) == ""
    with progress.task("outside any display", total=3) as bar:      # the API: no-ops
        bar.advance(detail="x")
        bar.update(completed=2)


def test_the_cli_shows_nothing_on_a_pipe(tmp_path, capsys):
    from markovlogic.cli import main

    assert main(["infer", "-i", str(SMOKERS / "smokers.mln"), "-e", str(SMOKERS / "evidence.db"), "-q", "Smokes",
                 "-r", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    assert "sampling" not in err and "grounding templates" not in err and "\x1b[" not in err
