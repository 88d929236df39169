"""Issue 16, item 14 and API misuse: every option is checked before the work
starts; the Python API raises TypeError / ValueError saying what it expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from markovlogic import MLN, Database
from markovlogic.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "smokers"
INFER = ["infer", "-i", str(EXAMPLES / "smokers.mln"), "-e", str(EXAMPLES / "evidence.db"), "-q", "Smokes"]


@pytest.mark.parametrize("extra, message", [
    (["--seed", "-1"], "seed must be between"),
    (["--seed", "99999999999999999999"], "seed must be between"),
    (["--map", "--seed", "-1"], "seed must be between"),
    (["--samples", "1000000000000"], "would run for days"),
    (["--samples", "0"], "samples"),
    (["--max-seconds", "inf"], "max-seconds"),
    (["--max-seconds", "nan"], "max-seconds"),
    (["--max-seconds", "-2"], "max-seconds"),
    (["--burn-in", "-1"], "burn-in"),
    (["--map", "--method", "maxwalksat", "--noise", "2"], "noise"),
    (["--map", "--hard-weight", "-1"], "hard_weight"),
    (["-c", "Nope"], "Nope"),
    (["--map", "--method", "nope"], "unknown MAP method"),
    (["--map", "--method", "agglomerative"], "equivalence"),
])
def test_bad_options_are_refused_up_front(capsys, extra, message):
    assert main(INFER + extra) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_learning_options(tmp_path, capsys):
    base = ["learn", "-i", str(EXAMPLES / "smokers.mln"), "-t", str(EXAMPLES / "evidence.db"), "--ne", "Cancer",
            "-o", str(tmp_path / "out.mln")]
    assert main(base + ["--seed", "-1"]) == 2
    assert main(base + ["--max-seconds", "inf"]) == 2
    assert main(base + ["--method", "samplerank", "--loss", "b3"]) == 2   # b3 needs an equivalence predicate
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert not (tmp_path / "out.mln").exists()


@pytest.fixture(scope="module")
def smokers():
    mln = MLN.from_file(EXAMPLES / "smokers.mln")
    return mln, Database.from_file(EXAMPLES / "evidence.db", mln=mln)


def test_api_type_errors(smokers):
    mln, db = smokers
    with pytest.raises(TypeError, match="path"):
        MLN.from_file(None)
    with pytest.raises(TypeError, match="str"):
        MLN.from_string(123)
    with pytest.raises(TypeError, match="str"):
        Database.from_string(b"Smokes(Anna)")
    with pytest.raises(TypeError, match="MLN"):
        Database.from_string("Smokes(Anna)", mln=db)
    with pytest.raises(TypeError, match="model comes first"):
        mln.map(mln)
    with pytest.raises(TypeError, match="Database"):
        mln.infer("evidence.db")
    with pytest.raises(TypeError, match="seed must be an integer"):
        mln.map(db, "Smokes", method="maxwalksat", seed="1")
    with pytest.raises(TypeError, match="max_seconds"):
        mln.infer(db, "Smokes", max_seconds="10")


def test_api_value_errors(smokers):
    mln, db = smokers
    with pytest.raises(ValueError, match="seed"):
        mln.infer(db, "Smokes", seed=-1)
    with pytest.raises(ValueError, match="max-seconds"):
        mln.map(db, "Smokes", max_seconds=float("inf"))
    with pytest.raises(ValueError, match="unknown MAP method"):
        mln.map(db, "Smokes", method="simplex")
