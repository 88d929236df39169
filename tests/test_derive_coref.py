"""Coreference evidence from CoNLL-U (markovlogic.derive.coref): head rules,
apposition, predicate nominatives and pronoun features on hand-made
sentences checked by hand; bad input refused with file:line, exit 2, nothing
written; clusters written back as Entity= brackets and read again; the
coreference scores by document (eval.corefeval / coref_report)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from markovlogic.cli import main
from markovlogic.derive.coref import (
    CorefDeriveOptions, conllu_entities, derive_coref, evidence_atoms, find_head, truth_atoms,
    write_conllu_clusters,
)
from markovlogic.eval.coref import coref_report
from markovlogic.text.conllu import TextError, read_conllu_lines

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "gum_coref"


def tok(i, form, lemma, upos, head, deprel, feats="_", misc="_", xpos="_"):
    return "\t".join([str(i), form, lemma, upos, xpos, feats, str(head), deprel, "_", misc])


# "Bill Gates, the chairman of Microsoft, is a rich man. He founded it."
DOC = "\n".join([
    "# newdoc id = D1",
    "# sent_id = D1-1",
    tok(1, "Bill", "Bill", "PROPN", 2, "compound", "Number=Sing", "Entity=(e1-person"),
    tok(2, "Gates", "Gates", "PROPN", 12, "nsubj", "Number=Sing", "Entity=e1)"),
    tok(3, ",", ",", "PUNCT", 5, "punct"),
    tok(4, "the", "the", "DET", 5, "det", misc="Entity=(e1-person"),
    tok(5, "chairman", "chairman", "NOUN", 2, "appos", "Number=Sing"),
    tok(6, "of", "of", "ADP", 7, "case"),
    tok(7, "Microsoft", "Microsoft", "PROPN", 5, "nmod", "Number=Sing", "Entity=(e2-organization)e1)"),
    tok(8, ",", ",", "PUNCT", 5, "punct"),
    tok(9, "is", "be", "AUX", 12, "cop"),
    tok(10, "a", "a", "DET", 12, "det", misc="Entity=(e1-person"),
    tok(11, "rich", "rich", "ADJ", 12, "amod"),
    tok(12, "man", "man", "NOUN", 0, "root", "Number=Sing", "Entity=e1)"),
    tok(13, ".", ".", "PUNCT", 12, "punct"),
    "",
    "# sent_id = D1-2",
    tok(1, "He", "he", "PRON", 2, "nsubj", "Case=Nom|Gender=Masc|Number=Sing|Person=3|PronType=Prs", "Entity=(e1-person)"),
    tok(2, "founded", "found", "VERB", 0, "root"),
    tok(3, "it", "it", "PRON", 2, "obj", "Case=Acc|Gender=Neut|Number=Sing|Person=3|PronType=Prs", "Entity=(e2-organization)"),
    tok(4, "with", "with", "ADP", 7, "case"),
    tok(5, "Allen", "Allen", "PROPN", 2, "obl", "Number=Sing", "Entity=(e3-person"),
    tok(6, "and", "and", "CCONJ", 8, "cc"),
    tok(7, "Mr.", "Mr.", "PROPN", 8, "compound", "Number=Sing"),
    tok(8, "Smith", "Smith", "PROPN", 5, "conj", "Number=Sing", "Entity=e3)"),
    tok(9, ".", ".", "PUNCT", 2, "punct"),
    "", ""])


@pytest.fixture
def doc_file(tmp_path):
    p = tmp_path / "d1.conllu"
    p.write_text(DOC)
    return p


def mentions_of(path, **kw):
    (d,) = derive_coref([path], CorefDeriveOptions(**kw))
    return d, {(m.sent, m.start, m.end): m for m in d.mentions}


def test_gold_mentions_are_ordered_and_named(doc_file):
    d, ms = mentions_of(doc_file)
    spans = [(m.sent, m.start, m.end) for m in d.mentions]
    # sentence, first word, longer span first
    assert spans == [(1, 1, 2), (1, 4, 7), (1, 7, 7), (1, 10, 12), (2, 1, 1), (2, 3, 3), (2, 5, 8)]
    assert [m.name for m in d.mentions][:2] == ["D1_m0001", "D1_m0002"]


def test_head_rules_over_the_tree(doc_file):
    d, ms = mentions_of(doc_file)
    assert ms[(1, 1, 2)].head == 2                 # Bill <- Gates: Gates heads the span
    assert ms[(1, 4, 7)].head == 5                 # the chairman of Microsoft: chairman, not the rightmost word
    assert ms[(1, 10, 12)].head == 12
    assert ms[(2, 5, 8)].head == 5                 # Allen and Mr. Smith: the coordination's head
    s = d.sentences[0]
    assert find_head(s, 4, 7, "rightmost") == 7
    _, right = mentions_of(doc_file, heads="rightmost")
    assert right[(1, 4, 7)].head == 7 and right[(1, 4, 7)].head_lemma == "Microsoft"


def test_apposition_and_predicate_nominative(doc_file):
    d, ms = mentions_of(doc_file)
    idx = {(m.sent, m.start, m.end): k for k, m in enumerate(d.mentions)}
    assert ("appos", idx[(1, 1, 2)], idx[(1, 4, 7)]) in d.relations
    assert ("prednom", idx[(1, 1, 2)], idx[(1, 10, 12)]) in d.relations
    assert len(d.relations) == 2


def test_pronoun_number_gender_and_type_features(doc_file):
    d, ms = mentions_of(doc_file)
    he, it = ms[(2, 1, 1)], ms[(2, 3, 3)]
    assert he.is_prn and he.mtype == "PRO" and (he.number, he.gender, he.type) == ("Sing", "Masc", "Person")
    assert it.is_prn and (it.number, it.gender, it.type) == ("Sing", "Neut", "")
    coord = ms[(2, 5, 8)]
    assert not coord.is_prn and coord.number == "Plur"          # a coordination is plural
    assert coord.type == "Person"                               # Mr. is a person cue
    man = ms[(1, 10, 12)]
    assert man.gender == "Masc" and man.type == "Person"        # a gendered head noun
    assert ms[(1, 7, 7)].mtype == "NAM" and ms[(1, 7, 7)].gender == ""


def test_evidence_atoms_and_truth(doc_file):
    docs = derive_coref([doc_file], CorefDeriveOptions(truth=True))
    atoms = set(evidence_atoms(docs))
    assert "InDoc(D1_m0001,D1)" in atoms and "MentionOrder(D1_m0005,5)" in atoms
    assert "Head(D1_m0002,L_chairman)" in atoms and "IsPrn(D1_m0005)" in atoms
    assert "Apposition(D1_m0001,D1_m0002)" in atoms and "PredNom(D1_m0001,D1_m0004)" in atoms
    assert "Nested(D1_m0002,D1_m0003)" in atoms
    assert "Near(D1_m0001,D1_m0005,D1)" in atoms                 # a pronoun one sentence later
    assert not any(a.startswith("EntityType") for a in atoms)     # gold types only when asked
    assert any(a.startswith("EntityType") for a in evidence_atoms(docs, entity_types=True))
    truth = set(truth_atoms(docs))
    assert "SameEntity(D1_m0001,D1_m0002)" in truth and "SameEntity(D1_m0003,D1_m0006)" in truth
    assert len(truth) == 6 + 1


def test_mention_file(tmp_path, doc_file):
    f = tmp_path / "m.tsv"
    f.write_text("doc\tsent\tstart\tend\nD1\t1\t1\t2\nD1\t2\t1\t1\n")
    d, ms = mentions_of(doc_file, mentions=str(f))
    assert sorted(ms) == [(1, 1, 2), (2, 1, 1)] and d.mentions[0].entity is None


@pytest.mark.parametrize("text,where,message", [
    ("doc\tsent\tstart\tend\nD1\t1\t3\t20\n", 2, "outside sentence"),
    ("doc\tsent\tstart\tend\tmention\nD1\t1\t1\t2\tM1\nD1\t2\t1\t1\tM1\n", 3, "already used on line 2"),
    ("doc\tsent\tstart\tend\nD1\t1\t1\t2\nD1\t1\t1\t2\n", 3, "given twice"),
    ("doc\tsent\tstart\nD1\t1\t1\n", 1, "lacks column"),
    ("doc\tsent\tstart\tend\nD9\t1\t1\t2\n", 2, "not in the CoNLL-U"),
])
def test_bad_mention_files(tmp_path, doc_file, capsys, text, where, message):
    f = tmp_path / "m.tsv"
    f.write_text(text)
    out = tmp_path / "ev.db"
    assert main(["derive", "--conllu", str(doc_file), "--mentions", str(f), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{f}:{where}" in err and message in err
    assert not out.exists()


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.replace("\t12\tcop\t", "\tx\tcop\t"), "HEAD 'x' is not a number"),
    (lambda t: t.replace("Entity=(e3-person", "Entity=(e3-person(e4"), "sentence ends before it is closed"),
    (lambda t: t.replace("Entity=e3)", "Entity=e9)"), "which no bracket in this sentence opened"),
])
def test_bad_conllu(tmp_path, capsys, edit, message):
    p = tmp_path / "bad.conllu"
    p.write_text(edit(DOC))
    out = tmp_path / "ev.db"
    assert main(["derive", "--conllu", str(p), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{p}:" in err and message in err
    assert not out.exists()


def test_cli_writes_evidence_truth_and_table(tmp_path, doc_file, capsys):
    ev, tr, tab = tmp_path / "ev.db", tmp_path / "tr.db", tmp_path / "m.tsv"
    assert main(["derive", "--conllu", str(doc_file), "-o", str(ev), "--truth", str(tr),
                 "--mention-table", str(tab)]) == 0
    assert "Head(D1_m0002,L_chairman)" in ev.read_text()
    assert "SameEntity(D1_m0001,D1_m0002)" in tr.read_text()
    assert tab.read_text().splitlines()[0].startswith("doc\tmention")
    # --truth needs the gold brackets
    f = tmp_path / "m2.tsv"
    f.write_text("doc\tsent\tstart\tend\nD1\t1\t1\t2\n")
    assert main(["derive", "--conllu", str(doc_file), "--mentions", str(f), "-o", str(tmp_path / "x.db"),
                 "--truth", str(tmp_path / "y.db")]) == 2


def test_clusters_round_trip_through_conllu(tmp_path, doc_file):
    docs = derive_coref([doc_file], CorefDeriveOptions(truth=True))
    gold = {m.name: m.entity for d in docs for m in d.mentions}
    out = tmp_path / "out.conllu"
    write_conllu_clusters(docs, gold, out)
    text = out.read_text()
    assert "# global.Entity = eid-etype-head-other" in text and "Bridge" not in text
    spans, ents = conllu_entities([out])
    spans0, ents0 = conllu_entities([doc_file])
    assert spans == spans0
    group = lambda s, e: sorted(sorted(x for x, y in zip(s, e) if y == k) for k in set(e))
    assert group(spans, ents) == group(spans0, ents0)
    # an input is never overwritten
    with pytest.raises(Exception):
        write_conllu_clusters(docs, gold, doc_file)


def test_coref_report_by_hand():
    # key {0,1,2} {3} {4,5}; response {0,1} {2,3} {4} {5}
    key = np.array([0, 0, 0, 1, 2, 2])
    pred = np.array([0, 0, 1, 1, 2, 3])
    docs = np.array([0, 0, 0, 0, 1, 1])
    r = coref_report(pred, key, docs)
    # MUC: recall (3-2 + 2-2) / (2 + 1) = 1/3, precision (2-1 + 2-2) / (1 + 1) = 1/2
    assert r["muc_recall"] == pytest.approx(1 / 3) and r["muc_precision"] == pytest.approx(1 / 2)
    # clusters per document: doc0 2 gold vs 2 predicted, doc1 1 vs 2: MAE 0.5
    assert r["cluster_count_mae"] == pytest.approx(0.5)
    assert r["conll_f1"] == pytest.approx((r["muc_f1"] + r["b3_f1"] + r["ceafe_f1"]) / 3)
    n = coref_report(pred, key, docs, singletons=False)
    # without singletons: key {0,1,2} {4,5}; response {0,1} {2,3}: B3 precision (4/2 + 1/2 + 0) / 4
    assert n["b3_precision"] == pytest.approx((2 + 0.5) / 4)
    assert n["b3_recall"] == pytest.approx((4 / 3 + 1 / 3) / 5)
    assert n["muc_f1"] == r["muc_f1"]


@pytest.mark.skipif(not (DATA / "dev" / "conllu").is_dir(), reason="gum_coref data not available")
def test_gum_dev_agrees_with_the_data_readme(tmp_path):
    """Mentions, heads, relations and truth of mln derive equal the data's
    files; the README's head-match baseline scores as the README says."""
    import csv

    docs = derive_coref([DATA / "dev" / "conllu"], CorefDeriveOptions(truth=True))
    with open(DATA / "dev" / "mentions.tsv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    ms = [m for d in docs for m in d.mentions]
    assert [(m.name, m.head, m.head_lemma) for m in ms] == [(r["mention"], int(r["head"]), r["head_lemma"]) for r in rows]
    truth = sorted(truth_atoms(docs))
    assert truth == [line for line in (DATA / "dev-truth.db").read_text().splitlines() if not line.startswith("//")]
    key = np.unique([r["entity"] for r in rows], return_inverse=True)[1]
    pred = np.unique([f"{r['doc']}/{r['head_lemma']}" if r["mtype"] != "PRO" else r["mention"] for r in rows],
                     return_inverse=True)[1]
    rep = coref_report(pred, key, [r["doc"] for r in rows])
    assert round(100 * rep["muc_f1"], 2) == 53.85 and round(100 * rep["conll_f1"], 2) == 64.51
    rep = coref_report(pred, key, [r["doc"] for r in rows], singletons=False)
    assert round(100 * rep["b3_f1"], 2) == 46.93 and round(100 * rep["ceafe_f1"], 2) == 47.39
