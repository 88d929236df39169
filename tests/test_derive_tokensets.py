"""Token-set evidence (markovlogic.derive.tokensets): HasTok, HasFront,
HasBack, HasFirst, HasNum, HasTitle on hand-made citations, one test per
rule; a model holding both families; bad input refused (exit 2 from the
CLI, nothing written)."""

from __future__ import annotations

from pathlib import Path

import pytest

from markovlogic.cli import main
from markovlogic.derive import derive_atoms
from markovlogic.errors import EvidenceError
from markovlogic.model import MLN, Database

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "citations"
SETS = MLN.from_file(EXAMPLES / "sets.template.mln")


def db_text(citations: dict[str, str], keyword: dict[str, int] | None = None, titles: dict[str, range] | None = None,
            numbers: tuple[str, ...] = ()) -> str:
    """Token evidence of whitespace-separated citations (positions P00 ...)."""
    lines = [f"Next(P{k + 1:02d},P{k:02d})" for k in range(30)]
    for b, text in citations.items():
        for k, w in enumerate(text.split()):
            lines.append(f"Token(T{w.upper()},P{k:02d},{b})")
        for k in (titles or {}).get(b, ()):
            lines.append(f"InField({b},Ftitle,P{k:02d})")
    lines += [f"FirstNonAuthorTitleTkn({b},P{k:02d})" for b, k in (keyword or {}).items()]
    lines += [f"IsDate(T{w})" for w in numbers]
    return "\n".join(lines) + "\n"


def sets(text: str, model: MLN = SETS) -> dict[str, set[tuple[str, str]]]:
    return {k: set(v) for k, v in derive_atoms(model, Database.from_string(text, mln=model)).items()}


def test_every_token_once_per_citation():
    out = sets(db_text({"A": "learning to learn learning", "B": "to be"}, titles={"A": range(0, 1)}))
    assert out["HasTok"] == {("A", "TLEARNING"), ("A", "TTO"), ("A", "TLEARN"), ("B", "TTO"), ("B", "TBE")}


def test_front_and_back_split_at_the_first_venue_keyword():
    text = db_text({"A": "smith strength of learnability proceedings colt 1990", "B": "jones title only"},
                   keyword={"A": 4}, titles={"A": range(1, 4)})
    out = sets(text)
    assert out["HasFront"] == {("A", "TSMITH"), ("A", "TSTRENGTH"), ("A", "TOF"), ("A", "TLEARNABILITY"),
                               ("B", "TJONES"), ("B", "TTITLE"), ("B", "TONLY")}      # no keyword: all front
    assert out["HasBack"] == {("A", "TPROCEEDINGS"), ("A", "TCOLT"), ("A", "T1990")}
    # a keyword position past the last token (the data have such atoms) leaves everything in front
    out = sets(db_text({"A": "a b c"}, keyword={"A": 7}, titles={"A": range(1, 2)}))
    assert out["HasBack"] == set() and len(out["HasFront"]) == 3


def test_first_five_positions_of_each_citation():
    out = sets(db_text({"A": "a b c d e f g"}, titles={"A": range(0, 1)}))
    assert out["HasFirst"] == {("A", f"T{w}") for w in "ABCDE"}


def test_numbers_are_digit_or_date_tokens():
    out = sets(db_text({"A": "smith 1990 pages 12"}, numbers=("1990", "12"), titles={"A": range(0, 1)}))
    assert out["HasNum"] == {("A", "T1990"), ("A", "T12")}


def test_title_tokens_from_infield_atoms():
    text = db_text({"A": "smith strength of learnability ml", "B": "jones strength ml"},
                   titles={"A": range(1, 4), "B": range(1, 2)})
    assert sets(text)["HasTitle"] == {("A", "TSTRENGTH"), ("A", "TOF"), ("A", "TLEARNABILITY"), ("B", "TSTRENGTH")}


def test_title_needs_infield_evidence():
    with pytest.raises(EvidenceError, match="HasTitle is read from InField"):
        sets(db_text({"A": "a b c"}))
    # a model without HasTitle does not need them
    no_title = MLN.from_string("\n".join(line for line in (EXAMPLES / "sets.template.mln").read_text().splitlines()
                                         if "HasTitle" not in line) + "\n")
    assert "HasTitle" not in sets(db_text({"A": "a b c"}), no_title)


def test_both_families_from_one_model():
    decls = ("Token(token,position,bib)\nNext(position,position)\nHasPunc(bib,position)\n"
             "SimilarVenue(bib,bib)\nHasTok(bib,token)\nSameBib(bib,bib)\n")
    model = MLN.from_string(decls + "1 SimilarVenue(a,b) => SameBib(a,b)\n1 HasTok(a,t) ^ HasTok(b,t) => SameBib(a,b)\n")
    out = sets(db_text({"A": "x y", "B": "x z"}), model)
    assert out["HasTok"] == {("A", "TX"), ("A", "TY"), ("B", "TX"), ("B", "TZ")}
    assert out["SimilarVenue"] == {("A", "B"), ("B", "A")}


def test_cli_writes_sets_and_refuses_bad_input(tmp_path: Path, capsys):
    ev, out = tmp_path / "e.db", tmp_path / "s.db"
    ev.write_text(db_text({"A": "smith strength of learnability", "B": "jones strength"},
                          titles={"A": range(1, 4), "B": range(1, 2)}))
    assert main(["derive", "-i", str(EXAMPLES / "sets.template.mln"), "-e", str(ev), "-o", str(out)]) == 0
    text = out.read_text()
    assert "HasTitle(A,TLEARNABILITY)" in text and "HasTok(B,TJONES)" in text
    out.unlink()
    ev.write_text(db_text({"A": "a b c"}))                      # no InField: HasTitle cannot be read
    assert main(["derive", "-i", str(EXAMPLES / "sets.template.mln"), "-e", str(ev), "-o", str(out)]) == 2
    assert "HasTitle is read from InField" in capsys.readouterr().err
    assert not out.exists()
    ev.write_text("Next(P01,P00)\nInField(A,Ftitle,P00)\n")     # no Token evidence
    assert main(["derive", "-i", str(EXAMPLES / "sets.template.mln"), "-e", str(ev), "-o", str(out)]) == 2
    assert "no Token evidence" in capsys.readouterr().err
