"""The citation bench's parts (bench/workloads/citations.py): token scores by
hand, the per-token baseline, cora_ie's coarse fields, SameBib result files
scored through mln eval's code; and the shipped examples/citations models:
they parse, and `mln derive` + MAP run on a hand-made citation pair (no
accuracy asserted)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bench.workloads.citations import (  # noqa: E402
    EXAMPLES,
    EXTRA_MODELS,
    MODELS,
    _write_pairs,
    baseline_fit,
    baseline_predict,
    coarse_copy,
    er_clusters,
    infield_set,
    jic_report,
    samebib_scores,
    segmentation_scores,
    thresholded,
)


def test_segmentation_scores_by_hand():
    truth = {("A", "Fauthor", "P00"), ("A", "Ftitle", "P01"), ("A", "Ftitle", "P02"), ("A", "Fvenue", "P03")}
    predicted = {("A", "Fauthor", "P00"), ("A", "Ftitle", "P01"), ("A", "Fvenue", "P02"), ("A", "Fvenue", "P03"),
                 ("A", "Fvenue", "P04")}                  # P04 holds no field in the truth
    s = segmentation_scores(predicted, truth)
    assert s["author_f1"] == 1.0
    assert s["title_p"] == 1.0 and s["title_r"] == 0.5
    assert s["venue_p"] == pytest.approx(1 / 3, abs=1e-4) and s["venue_r"] == 1.0
    assert s["all_p"] == pytest.approx(3 / 5, abs=1e-4) and s["all_r"] == pytest.approx(3 / 4, abs=1e-4)
    assert infield_set(["InField(A,Fauthor,P00)", "SameBib(A,B)", "InField(B, Ftitle, P01)"]) == \
        {("A", "Fauthor", "P00"), ("B", "Ftitle", "P01")}


def test_baseline_is_fit_on_training_data(tmp_path: Path):
    train = tmp_path / "train.db"
    train.write_text("Token(TSMITH,P00,A)\nToken(TLEARNING,P01,A)\nToken(T1999,P02,A)\n"
                     "InField(A,Fauthor,P00)\nInField(A,Ftitle,P01)\n")
    test = tmp_path / "test.db"
    test.write_text("Token(TSMITH,P00,B)\nToken(TLEARNING,P01,B)\nToken(T1999,P02,B)\nToken(TNEW,P03,B)\n")
    predicted = baseline_predict(baseline_fit(train), test)
    # 1999 is "no field" on the training data; an unseen token takes its position bucket's field
    assert ("B", "Fauthor", "P00") in predicted and ("B", "Ftitle", "P01") in predicted
    assert not any(p == "P02" for _, _, p in predicted)


def test_coarse_fields_of_cora_ie(tmp_path: Path):
    src = tmp_path / "fine.db"
    src.write_text("Token(TA,P00,B1)\nInField(B1,Fauthor,P00)\nInField(B1,Fbooktitle,P01)\nInField(B1,Fjournal,P02)\n"
                   "InField(B1,Ftech,P03)\nInField(B1,Fdate,P04)\nInField(B1,Fpages,P05)\nInField(B1,Ftitle,P06)\n")
    dst = tmp_path / "coarse.db"
    coarse_copy(src, dst)
    lines = dst.read_text().split()
    assert lines == ["Token(TA,P00,B1)", "InField(B1,Fauthor,P00)", "InField(B1,Fvenue,P01)", "InField(B1,Fvenue,P02)",
                     "InField(B1,Fvenue,P03)", "InField(B1,Ftitle,P06)"]


def test_samebib_result_scored_by_mln_eval_code(tmp_path: Path):
    truth = tmp_path / "truth.db"
    truth.write_text("SameBib(A,A)\nSameBib(B,B)\nSameBib(C,C)\nSameBib(D,D)\nSameBib(A,B)\nSameBib(B,A)\n"
                     "SameBib(A,C)\nSameBib(C,A)\nSameBib(B,C)\nSameBib(C,B)\n")
    names = np.array(["A", "B", "C", "D"], dtype=object)
    i, j = np.array([0, 1, 0]), np.array([1, 2, 3])
    result = tmp_path / "r.result"
    _write_pairs(result, names, i, j, np.array([True, True, False]))
    s = samebib_scores(result, truth)
    # pairs A-B, B-C against A-B, A-C, B-C: precision 1, recall 2/3; closed: {A,B,C} and {D}, both exact
    assert s["er_pairwise_precision"] == 1.0 and s["er_pairwise_recall"] == pytest.approx(2 / 3, abs=1e-4)
    assert s["er_closure_pairwise_f1"] == 1.0 and s["er_cluster_recall"] == 1.0


def test_shipped_models_and_templates_parse():
    from markovlogic import MLN

    for model in MODELS + EXTRA_MODELS:
        for name in (f"{model}.mln", f"{model}.template.mln") if model in MODELS else (f"{model}.template.mln",):
            mln = MLN.from_file(EXAMPLES / name)
            assert {"InField", "SameBib", "SimilarTitle", "SimilarVenue", "JntInfCandidate"} <= set(mln.predicates)
            assert mln.predicates["JntInfCandidate"].closed


def test_shipped_models_derive_and_map(tmp_path: Path):
    from markovlogic.cli import main
    from test_derive_citations import evidence

    ev = tmp_path / "e.db"
    ev.write_text(evidence({"A": "Smith. On the strength of weak learnability. Proceedings of ML",
                            "B": "Jones, The strength of weak learnability. Machine Learning"}))
    for model in MODELS:
        shipped = EXAMPLES / f"{model}.mln"
        derived = tmp_path / f"{model}.d.db"
        assert main(["derive", "-i", str(shipped), "-e", str(ev), "-o", str(derived)]) == 0
        assert "JntInfCandidate(A,P01,B)" in derived.read_text()
        out = tmp_path / f"{model}.out"
        assert main(["infer", "-i", str(shipped), "-e", f"{ev},{derived}", "-q", "InField,SameBib",
                     "--map", "-r", str(out)]) == 0
        text = out.read_text()
        assert "InField(" in text and "SameBib(A,A)" in text


def _citations_db(texts: dict[str, str], clusters: list[list[str]] | None = None, fields=None) -> str:
    lines = [f"Next(P{k + 1:02d},P{k:02d})" for k in range(12)]
    for b, text in texts.items():
        for k, w in enumerate(text.split()):
            lines.append(f"Token(T{w.upper()},P{k:02d},{b})")
            if w == "proceedings":
                lines.append(f"FirstNonAuthorTitleTkn({b},P{k:02d})")
            if w.isdigit():
                lines.append(f"IsDate(T{w})")
            if fields and (b, k) in fields:
                lines.append(f"InField({b},{fields[(b, k)]},P{k:02d})")
    for c in clusters or []:
        lines += [f"SameBib({a},{b})" for a in c for b in c]
    return "\n".join(lines) + "\n"


def test_er_clusters_writes_result_and_evidence(tmp_path: Path):
    papers = {"p": "strength weak learnability machine learning", "q": "boosting algorithm experiments icml",
              "r": "decision trees incremental induction", "s": "cascade correlation learning architecture"}
    texts, clusters = {}, []
    for k, (key, text) in enumerate(papers.items()):
        names = [f"B{k}{n}" for n in range(3)]
        clusters.append(names)
        for n, b in enumerate(names):
            texts[b] = f"author{n} " + text + " proceedings icml" + (" 1990" if n else " 1991")
    title = {(b, k): "Ftitle" for b in texts for k in range(1, 4)}
    train = tmp_path / "train.db"
    train.write_text(_citations_db(texts, clusters, title))
    test_texts = {"C1": "jones strength weak learnability machine learning proceedings colt 1990",
                  "C2": "lee strength weak learnability proceedings colt 1990",
                  "C3": "kim cascade correlation learning architecture proceedings nips 1991"}
    ev = tmp_path / "e.db"
    ev.write_text(_citations_db(test_texts))
    titles = tmp_path / "seg.result"
    titles.write_text("".join(f"InField({b},Ftitle,P0{k})\n" for b in test_texts for k in (1, 2, 3)))
    for use in (None, str(titles)):
        result, samebib = tmp_path / "r.result", tmp_path / "s.db"
        er_clusters(str(train), str(ev), str(result), str(samebib), use)
        lines = set(result.read_text().split())
        assert {"SameBib(C1,C1)", "SameBib(C2,C2)", "SameBib(C3,C3)"} <= lines
        pairs = {tuple(x[len("SameBib("):-1].split(",")) for x in samebib.read_text().split()}
        assert all((b, a) in pairs for a, b in pairs) and all(a != b for a, b in pairs)
        one = {tuple(x[len("SameBib("):-1].split(",")) for x in lines}
        assert {(a, b) for a, b in pairs if a < b} == {(a, b) for a, b in one if a != b}


def test_shipped_sets_model_pipeline(tmp_path: Path):
    """README's entity-resolution-first path: Isolated's segmentation, the set-level model's clusters from
    its titles, Jnt-Seg-ER's segmentation with those clusters as SameBib evidence."""
    from markovlogic.cli import main
    from test_derive_citations import evidence

    ev = tmp_path / "e.db"
    ev.write_text(evidence({"A": "Smith. On the strength of weak learnability. Proceedings of ML",
                            "B": "Smith, On the strength of weak learnability. Proceedings of ML",
                            "C": "Jones. Learning decision trees by induction. Machine Learning"}))
    seg, derived = tmp_path / "seg.result", tmp_path / "d.db"
    assert main(["derive", "-i", str(EXAMPLES / "isolated.mln"), "-e", str(ev), "-o", str(derived)]) == 0
    assert main(["infer", "-i", str(EXAMPLES / "isolated.mln"), "-e", f"{ev},{derived}", "-q", "InField,SameBib",
                 "--map", "-r", str(seg)]) == 0
    sets, clusters = tmp_path / "sets.db", tmp_path / "clusters.result"
    assert main(["derive", "-i", str(EXAMPLES / "sets.mln"), "-e", f"{ev},{seg}", "-o", str(sets)]) == 0
    assert "HasTitle(" in sets.read_text()
    assert main(["infer", "-i", str(EXAMPLES / "sets.mln"), "-e", str(sets), "-q", "SameBib", "--map",
                 "-r", str(clusters)]) == 0
    pairs = set(clusters.read_text().split())
    assert {"SameBib(A,B)", "SameBib(B,A)"} <= pairs and "SameBib(A,C)" not in pairs
    out, d2 = tmp_path / "seg2.result", tmp_path / "d2.db"
    assert main(["derive", "-i", str(EXAMPLES / "jnt-seg-er.mln"), "-e", str(ev), "-o", str(d2)]) == 0
    assert main(["infer", "-i", str(EXAMPLES / "jnt-seg-er.mln"), "-e", f"{ev},{d2},{clusters}", "-q", "InField",
                 "--map", "-r", str(out)]) == 0
    assert "InField(A," in out.read_text()


def test_mcsat_marginals_thresholded_at_one_half(tmp_path: Path):
    marginals = tmp_path / "m.result"
    marginals.write_text("InField(A,Ftitle,P01) 0.9300\nInField(A,Fvenue,P01) 0.0500\nInField(A,Fvenue,P02) 0.5000\n"
                         "SameBib(A,B) 0.7100\nSameBib(A,A) 1.0000\n")
    out = tmp_path / "t.result"
    thresholded(marginals, out)
    assert out.read_text().split() == ["InField(A,Ftitle,P01)", "SameBib(A,B)", "SameBib(A,A)"]
    assert infield_set(out.read_text().split()) == {("A", "Ftitle", "P01")}


def test_jic_report_counts_boundaries_by_hand(tmp_path: Path):
    # A: "ta tb tc td te" (title ta tb, venue tc td te); B: "tx, tc td te" (same paper);
    # C: "ty, tb tc td". JntInfCandidate(A, after tb, B) sits on A's title/venue boundary,
    # JntInfCandidate(A, after ta, C) inside A's title.
    lines = [f"Next(P{k + 1},P{k})" for k in range(5)]
    for bib, words, fields in (("A", ["TA", "TB", "TC", "TD", "TE"], "ttvvv"),
                               ("B", ["TX", "TC", "TD", "TE"], "avvv"),
                               ("C", ["TY", "TB", "TC", "TD"], "attt")):
        for k, (w, f) in enumerate(zip(words, fields)):
            lines.append(f"Token({w},P{k},{bib})")
            lines.append(f"InField({bib},{dict(a='Fauthor', t='Ftitle', v='Fvenue')[f]},P{k})")
        lines.append(f"HasPunc({bib},P0)" if bib != "A" else "HasPunc(A,P4)")
    lines += ["SameBib(A,B)", "SameBib(B,A)"]
    train = tmp_path / "train.db"
    train.write_text("\n".join(lines) + "\n")
    r = jic_report(train, match="exact")
    # unpunctuated boundaries: A's tb|tc only (B's tx|tc and C's ty|tb follow punctuation)
    assert r["unpunctuated_boundaries"] == 1
    assert (r["any_positions"], r["any_boundaries"], r["any_precision"]) == (2, 1, 0.5)
    assert (r["same_positions"], r["same_boundaries"], r["same_precision"]) == (1, 1, 1.0)
