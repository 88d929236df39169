"""Issue 29, item 4 (Python): MLN.save writes the model as the user wrote it
(clauses only when asked), Database.from_files and Database.from_frame, and
the options objects in the public signatures."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from markovlogic import MLN, Database
from markovlogic.errors import ArgumentTypeError, EvidenceError, OptionError

SMOKERS = Path(__file__).resolve().parents[1] / "examples" / "smokers"


def test_save_writes_the_model_as_written(tmp_path):
    mln = MLN.from_file(SMOKERS / "smokers.mln")
    out = tmp_path / "m.mln"
    mln.save(out)
    assert out.read_text() == (SMOKERS / "smokers.mln").read_text()          # comments and all
    mln.formulas[0] = type(mln.formulas[0])(mln.formulas[0].formula, weight=2.0, pos=mln.formulas[0].pos)
    mln.save(out)                                                              # changed: printed, formulas as written
    text = out.read_text()
    assert "2.0 Smokes(x) => Cancer(x)" in text and "1.1 Friends(x, y) => (Smokes(x) <=> Smokes(y))" in text
    assert MLN.from_file(out) == mln


def test_save_clauses_only_when_asked(tmp_path):
    mln = MLN.from_file(SMOKERS / "smokers.mln")
    out = tmp_path / "c.mln"
    mln.save(out, clauses=True)
    lines = out.read_text().splitlines()
    i = lines.index("// 1.1 Friends(x, y) => (Smokes(x) <=> Smokes(y))")
    assert lines[i + 1:i + 3] == ["0.55 !Friends(x, y) v !Smokes(x) v Smokes(y)",
                                  "0.55 !Friends(x, y) v Smokes(x) v !Smokes(y)"]
    assert "!Friends(x, y) v Friends(y, x)." in lines
    again = MLN.from_file(out)
    assert len(again.formulas) == 5


def test_a_learned_model_keeps_the_formulas_it_did_not_split(tmp_path):
    mln = MLN.from_file(SMOKERS / "smokers.mln")
    db = Database.from_file(SMOKERS / "evidence.db", mln=mln)
    learned = mln.learn(db, query_predicates=["Cancer"], method="pll")
    out = tmp_path / "l.mln"
    learned.save(out)
    text = out.read_text()
    assert "1.1 Friends(x, y) => (Smokes(x) <=> Smokes(y))" in text              # not two 0.55 clauses
    assert "0.55" not in text


def test_from_files_is_one_world(tmp_path):
    mln = MLN.from_file(SMOKERS / "smokers.mln")
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    a.write_text("Smokes(Anna)\n")
    b.write_text("Friends(Anna, Bob)\n")
    db = Database.from_files([a, b], mln=mln)
    assert len(db) == 2 and db == Database.from_file([a, b], mln=mln)
    with pytest.raises(ArgumentTypeError, match="list of paths"):
        Database.from_files(str(a))


def test_from_frame_and_concat():
    mln = MLN.from_file(SMOKERS / "smokers.mln")
    friends = Database.from_frame(pd.DataFrame({"a": ["Anna", "Bob"], "b": ["Bob", "Anna"]}), "Friends", mln=mln)
    smokes = Database.from_frame(pd.DataFrame({"person": ["Anna", "Bob", "Gary"], "truth": [True, False, None]}),
                                 "Smokes", mln=mln)
    assert friends.to_string() == "Friends(Anna,Bob)\nFriends(Bob,Anna)\n"
    assert smokes.to_string() == "Smokes(Anna)\n!Smokes(Bob)\n?Smokes(Gary)\n"
    both = Database.concat([friends, smokes], mln=mln)
    assert len(both) == 5
    text = "Friends(Anna,Bob)\nFriends(Bob,Anna)\nSmokes(Anna)\n!Smokes(Bob)\n?Smokes(Gary)\n"
    assert mln.map(both, "Cancer", method="exact").atoms == \
        mln.map(Database.from_string(text, mln=mln), "Cancer", method="exact").atoms
    odd = Database.from_frame(pd.DataFrame({"x": ["Dan Smith", 7, 2.0]}), "Smokes")
    assert odd.to_string() == 'Smokes("Dan Smith")\nSmokes(7)\nSmokes(2)\n'


def test_from_frame_errors_name_the_column_or_row():
    mln = MLN.from_file(SMOKERS / "smokers.mln")
    with pytest.raises(OptionError, match="no column 'who'"):
        Database.from_frame(pd.DataFrame({"x": ["Anna"]}), "Smokes", columns=["who"])
    with pytest.raises(EvidenceError, match="truth"):
        Database.from_frame(pd.DataFrame({"x": ["Anna"], "truth": ["yes"]}), "Smokes")
    with pytest.raises(EvidenceError) as info:
        Database.from_frame(pd.DataFrame({"a": ["Anna", "Bob"]}), "Friends", mln=mln)     # arity 2
    assert "<frame Friends>:1" in str(info.value.render())
    with pytest.raises(ArgumentTypeError):
        Database.from_frame([["Anna"]], "Smokes")
