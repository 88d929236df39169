"""`mln check` through markovlogic.cli.main: the summary, and user mistakes
rendered as file:line:col, the offending line and a caret, exit status 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from markovlogic.cli import main

MODEL = """\
person = {Anna, Bob}
Friends(person, person)
*Smokes(person)
Cancer(person)
hasPosition(person, position!)

1.5 Smokes(x) => Cancer(x)
-0.5 Friends(x, y) ^ Smokes(x) => Smokes(y)
Friends(x, y) => Friends(y, x).
@2 Cancer(x)
!Cancer(Carol)
"""

EVIDENCE = """\
Friends(Anna, Bob)
Friends(Bob, Anna)
Smokes(Anna)
!Smokes(Bob)
?Cancer(Bob)
hasPosition(Anna, Prof)
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    mln = tmp_path / "model.mln"
    db = tmp_path / "evidence.db"
    mln.write_text(MODEL)
    db.write_text(EVIDENCE)
    return mln, db


def test_summary(files, capsys):
    mln, db = files
    assert main(["check", "-i", str(mln), "-e", str(db), "-q", "Cancer,Friends(x,Bob)"]) == 0
    out = capsys.readouterr().out
    assert f"model {mln}: OK" in out
    # Carol joins person from a formula; Prof joins position from the evidence
    assert "2 types, 4 constants, 4 predicates (1 closed-world), 0 functions" in out
    assert "5 formulas: 1 hard, 3 soft (1 fixed), 1 without weight" in out
    assert f"evidence {db}: OK, 6 atoms" in out
    lines = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.strip()}
    assert lines["Friends"] == ["2", "0", "0"]
    assert lines["Smokes"] == ["1", "1", "0"]
    assert lines["Cancer"] == ["0", "0", "1"]
    assert "queries: Cancer, Friends(x,Bob): OK" in out


def test_several_files_comma_separated(tmp_path, capsys):
    (tmp_path / "a.mln").write_text("Smokes(person)\n")
    (tmp_path / "b.mln").write_text("1 Smokes(x)\n")
    (tmp_path / "a.db").write_text("Smokes(Anna)\n")
    (tmp_path / "b.db").write_text("Smokes(Bob)\n")
    argv = ["check", "-i", f"{tmp_path / 'a.mln'},{tmp_path / 'b.mln'}", "-e", f"{tmp_path / 'a.db'},{tmp_path / 'b.db'}"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "1 formula:" in out and "OK, 2 atoms" in out


def _error(argv, capsys) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    return captured.err


def test_syntax_error_rendered(tmp_path, capsys):
    bad = tmp_path / "bad.mln"
    bad.write_text("Smokes(person)\n\n1.5 Smokes(x) ^ (Smokes(y)\n")
    err = _error(["check", "-i", str(bad)], capsys)
    assert err.splitlines() == [
        f"{bad}:3:17: unbalanced parentheses: this '(' is never closed",
        "    1.5 Smokes(x) ^ (Smokes(y)",
        "                    ^",
    ]


def test_semantic_error_rendered(tmp_path, capsys):
    bad = tmp_path / "bad.mln"
    bad.write_text("Smokes(person)\n2 Smokes(x) => Cancer(x)\n")
    err = _error(["check", "-i", str(bad)], capsys)
    assert err.splitlines()[0] == f"{bad}:2:16: undeclared predicate 'Cancer'"
    assert err.splitlines()[2] == "                   ^"


def test_evidence_error_rendered(files, capsys):
    mln, db = files
    db.write_text("Smokes(Anna)\nSmokes(Anna, Bob)\n")
    err = _error(["check", "-i", str(mln), "-e", str(db)], capsys)
    assert err.splitlines()[0] == f"{db}:2:1: predicate 'Smokes' takes 1 argument (person), not 2"
    assert err.splitlines()[1] == "    Smokes(Anna, Bob)"


def test_unknown_query_predicate(files, capsys):
    mln, _ = files
    err = _error(["check", "-i", str(mln), "-q", "Cancer,Smoke"], capsys)
    assert err.splitlines()[0].startswith("<query>:1:8: unknown query predicate 'Smoke'")
    assert err.splitlines()[1:] == ["    Cancer,Smoke", "           ^"]


def test_query_file(files, tmp_path, capsys):
    mln, _ = files
    q = tmp_path / "query.db"
    q.write_text("Cancer(x)\nFriends(x, Anna)\n")
    assert main(["check", "-i", str(mln), "-f", str(q)]) == 0
    assert "queries: Cancer(x), Friends(x,Anna): OK" in capsys.readouterr().out
    q.write_text("Cancer(x)\nFriends(x)\n")
    err = _error(["check", "-i", str(mln), "-f", str(q)], capsys)
    assert err.startswith(f"{q}:2:1: predicate 'Friends' takes 2 arguments")


def test_missing_files(tmp_path, capsys):
    err = _error(["check", "-i", str(tmp_path / "nope.mln")], capsys)
    assert "not found" in err
    (tmp_path / "m.mln").write_text("P(t)\n")
    err = _error(["check", "-i", str(tmp_path / "m.mln"), "-e", str(tmp_path / "nope.db")], capsys)
    assert "not found" in err


def test_usage_error_without_input(capsys):
    assert main(["check"]) == 2
