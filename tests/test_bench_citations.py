"""bench/workloads/citations.py scoring and baseline, and the shipped
examples/citations models: they parse, and `mln derive` + MAP run on a
hand-made citation pair (no accuracy asserted)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench.workloads.citations import (MODELS, SHIPPED, baseline_fit, baseline_predict,  # noqa: E402
                                       infield_set, segmentation_scores)
from markovlogic.cli import main  # noqa: E402
from markovlogic.model import MLN  # noqa: E402
from test_derive_citations import evidence  # noqa: E402


def test_segmentation_scores_per_field_and_micro():
    truth = {("A", "Fauthor", "P00"), ("A", "Ftitle", "P01"), ("A", "Ftitle", "P02"), ("A", "Fvenue", "P03")}
    pred = {("A", "Fauthor", "P00"), ("A", "Ftitle", "P01"), ("A", "Fvenue", "P02"), ("A", "Fvenue", "P03")}
    s = segmentation_scores(pred, truth)
    assert s["author_f1"] == 1.0
    assert (s["title_p"], s["title_r"]) == (1.0, 0.5)
    assert (s["venue_p"], s["venue_r"]) == (0.5, 1.0)
    assert s["all_p"] == s["all_r"] == 0.75
    assert infield_set(["InField(A,Ftitle,P01)", "Token(TX,P00,A)"]) == {("A", "Ftitle", "P01")}


def test_baseline_most_frequent_field_by_token_and_bucket(tmp_path: Path):
    train = tmp_path / "train.db"
    train.write_text("Token(TSMITH,P00,A)\nToken(TLEARNING,P01,A)\nToken(TPROC,P02,A)\n"
                     "InField(A,Fauthor,P00)\nInField(A,Ftitle,P01)\nInField(A,Fvenue,P02)\n")
    test = tmp_path / "test.db"
    test.write_text("Token(TSMITH,P00,B)\nToken(TLEARNING,P01,B)\nToken(TPROC,P02,B)\nToken(T1999,P03,B)\n")
    pred = baseline_predict(baseline_fit(train), test)
    assert {("B", "Fauthor", "P00"), ("B", "Ftitle", "P01"), ("B", "Fvenue", "P02")} <= pred


def test_shipped_models_derive_and_map(tmp_path: Path):
    for path in list(MODELS.values()) + list(SHIPPED.values()):
        MLN.from_file(path)
    ev = tmp_path / "e.db"
    ev.write_text(evidence({"A": "Smith. On the strength of weak learnability. Proceedings of ML",
                            "B": "Jones, The strength of weak learnability. Machine Learning"}))
    derived = tmp_path / "d.db"
    assert main(["derive", "-i", str(SHIPPED["jnt-seg"]), "-e", str(ev), "-o", str(derived)]) == 0
    assert "JntInfCandidate(A,P01,B)" in derived.read_text()
    out = tmp_path / "out"
    assert main(["infer", "-i", str(SHIPPED["jnt-seg"]), "-e", f"{ev},{derived}", "-q", "InField",
                 "--map", "-r", str(out)]) == 0
    assert "InField(" in out.read_text()
