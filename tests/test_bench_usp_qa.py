"""The USP bench's question judge (bench/workloads/usp.py) on a hand-made
up_ewt-like folder: a negated predicate (ARGM-NEG) gives no question and no
gold answer; KW-SYN with the negation rule skips a negated verb; answers are
counted over all sentences and over the labelled ones."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.workloads.usp import FILES, Keywords, _Tally, answer_kw, labelled_sentences, make_questions  # noqa: E402
from markovlogic.text import read_conllu_lines  # noqa: E402
from markovlogic.usp import build_qlf  # noqa: E402

PRED = "sent_id\tpred_id\tpred_form\tpred_lemma\tpred_upos\troleset\tn_args\n"
ARGS = "sent_id\tpred_id\tpred_lemma\tpred_upos\troleset\targ_id\targ_form\targ_lemma\targ_upos\trelation\trole\n"


def tree(sid, words):
    lines = [f"# sent_id = {sid}"]
    lines += ["\t".join([str(i), f, l, u, "_", "_", str(h), r, "_", "_"]) for i, (f, l, u, h, r) in enumerate(words, 1)]
    return "\n".join(lines) + "\n\n"


BOUGHT = [("Acme", "Acme", "PROPN", 2, "nsubj"), ("bought", "buy", "VERB", 0, "root"),
          ("Widgets", "Widgets", "PROPN", 2, "obj")]
NEVER_SOLD = [("Gadgets", "Gadgets", "PROPN", 4, "nsubj:pass"), ("were", "be", "AUX", 4, "aux:pass"),
              ("never", "never", "ADV", 4, "advmod"), ("sold", "sell", "VERB", 0, "root"), ("by", "by", "ADP", 6, "case"),
              ("Acme", "Acme", "PROPN", 4, "obl")]


def folder(tmp_path):
    for sp in ("dev", "test"):
        (tmp_path / sp).mkdir()
        (tmp_path / sp / "predicates.tsv").write_text(PRED + (
            f"{sp}1\t2\tbought\tbuy\tVERB\tbuy.01\t2\n{sp}2\t4\tsell\tsell\tVERB\tsell.01\t3\n"))
        (tmp_path / sp / "arguments.tsv").write_text(ARGS + (
            f"{sp}1\t2\tbuy\tVERB\tbuy.01\t1\tAcme\tAcme\tPROPN\tnsubj\tARG0\n"
            f"{sp}1\t2\tbuy\tVERB\tbuy.01\t3\tWidgets\tWidgets\tPROPN\tobj\tARG1\n"
            f"{sp}2\t4\tsell\tVERB\tsell.01\t1\tAcme\tAcme\tPROPN\tnsubj\tARG0\n"
            f"{sp}2\t4\tsell\tVERB\tsell.01\t3\tnot\tnot\tPART\tadvmod\tARGM-NEG\n"
            f"{sp}2\t4\tsell\tVERB\tsell.01\t5\tGadgets\tGadgets\tPROPN\tobj\tARG1\n"))
    return tmp_path


def test_negated_predicates_give_no_questions_or_gold(tmp_path):
    data = folder(tmp_path)
    questions, gold = make_questions(data, "test")
    assert {k for k, _ in questions} == {("active_obj", "buy", "acme"), ("active_subj", "buy", "widgets"),
                                         ("passive_subj", "buy", "widgets"), ("passive_obj", "buy", "acme")}
    assert gold[("active_obj", "buy", "acme")] == {"widgets"} and not gold[("active_obj", "sell", "acme")]
    questions, gold = make_questions(data, "test", negated=False)       # the former judge: negated facts count
    assert gold[("active_obj", "sell", "acme")] == {"gadgets"} and len(questions) == 8


def test_kw_syn_negation_rule_and_labelled_counts():
    text = tree("a", BOUGHT) + tree("b", NEVER_SOLD)        # "sold by Acme": the keywords match, the verb is negated
    q = build_qlf(read_conllu_lines(text.splitlines(True), FILES[1]))     # a labelled (dev) file
    kw = Keywords(q)
    lab = labelled_sentences(q)
    assert lab.tolist() == [True, True]
    assert [a for a, _ in kw.answer("passive_obj", "sell", "acme", syntax=True)] == [("gadgets",)]
    assert kw.answer("passive_obj", "sell", "acme", syntax=True, negation=True) == []
    questions = [(("passive_obj", "sell", "acme"), None), (("active_obj", "buy", "acme"), None)]
    gold = {("passive_obj", "sell", "acme"): set(), ("active_obj", "buy", "acme"): {"widgets"}}
    r = answer_kw(kw, questions, gold, syntax=True, labelled=lab)
    assert (r["answered"], r["correct"], r["answered_labelled"]) == (2, 1, 2)
    r = answer_kw(kw, questions, gold, syntax=True, labelled=np.zeros(2, dtype=bool), negation=True)
    assert (r["answered"], r["correct"], r["accuracy"], r["answered_labelled"]) == (1, 1, 100.0, 0)


def test_tally_counts_labelled_answers_apart():
    t = _Tally()
    for ok, lab in ((True, True), (False, False), (False, True), (True, False)):
        t.add(ok, lab)
    r = t.result()
    assert (r["answered"], r["correct"], r["accuracy"]) == (4, 2, 50.0)
    assert (r["answered_labelled"], r["correct_labelled"], r["accuracy_labelled"]) == (2, 1, 50.0)


def test_sentence_check_reads_the_gold_arguments_of_the_answering_sentence(tmp_path, monkeypatch):
    import bench.workloads.usp as B
    from markovlogic.usp.kb import Answer

    data = folder(tmp_path)
    g = B.gold_arguments(data)
    assert g[("dev1", "2")]["ARG1"] == {(3, "widgets")}
    lab = np.array([True, False])
    # "What does Acme purchase?" answered by "Widgets" through "bought" in labelled dev1: the reading is right
    right = Answer("q", "widgets", "Widgets", "dev1", 0, 3, via="buy", via_word=2)
    wrong_word = Answer("q", "acme", "Acme", "dev1", 0, 1, via="buy", via_word=2)
    unlabelled = Answer("q", "widgets", "Widgets", "dev1", 1, 3, via="buy", via_word=2)
    no_pred = Answer("q", "widgets", "Widgets", "dev1", 0, 3, via="buy", via_word=3)
    assert B.sentence_check("active_obj", "acme", [right], g, lab) is True
    assert B.sentence_check("active_obj", "acme", [wrong_word], g, lab) is False
    assert B.sentence_check("active_obj", "widgets", [right], g, lab) is False      # X is not the given ARG0
    assert B.sentence_check("active_subj", "widgets", [wrong_word], g, lab) is True  # What buys Widgets? Acme
    assert B.sentence_check("active_obj", "acme", [unlabelled, no_pred], g, lab) is None
    assert B.sentence_check("active_obj", "acme", [wrong_word, right], g, lab) is True
    t = _Tally()
    t.add(False, True)
    t.add_check(True)
    t.add_cross(False, True, False)
    t.add(True, False)
    t.add_check(None)
    t.add_check_keys(wordnet=True)
    r = t.result()
    assert (r["checked_answered"], r["checked_correct"], r["checked_accuracy"]) == (1, 1, 100.0)
    assert (r["cross_verb_answered"], r["cross_verb_correct"], r["cross_verb_checked_correct"]) == (1, 0, 1)
    assert r["cross_verb_wordnet_synonyms"] == 0
    monkeypatch.setattr(B, "_WORDNET", tmp_path / "no-wordnet")
    assert B.wordnet_verbs() is None
    wn = tmp_path / "index.verb"
    wn.write_text("  1 This software and database is being provided\n"
                  "buy v 2 1 @ 2 1 02207206 02646757  \npurchase v 1 1 @ 1 1 02207206  \n")
    monkeypatch.setattr(B, "_WORDNET", wn)
    syn = B.wordnet_verbs()
    assert syn["buy"] & syn["purchase"] == {"02207206"}
