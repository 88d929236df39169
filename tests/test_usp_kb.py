"""USP's question answering: a negated part ("Oracle did not buy Tivo")
answers nothing (Poon's eval.USP rule), unless asked to keep it; the
same-verb option answers only from the question's own verb while its cluster
still aligns the voices; negated words are found on hand-made trees."""

import numpy as np
import pytest

from markovlogic.text import read_conllu_lines
from markovlogic.usp import AnswerOptions, KnowledgeBase, USPOptions, build_qlf, learn
from markovlogic.usp.kb import negated_words
from usp_corpus import toy_corpus


def negated_sentence(sid: str, adverb: str = "not") -> str:
    rows = [("Oracle", "Oracle", "PROPN", 4, "nsubj"), ("did", "do", "AUX", 4, "aux"),
            (adverb, adverb, "PART" if adverb == "not" else "ADV", 4, "advmod"), ("buy", "buy", "VERB", 0, "root"),
            ("Tivo", "Tivo", "PROPN", 4, "obj"), (".", ".", "PUNCT", 4, "punct")]
    lines = [f"# sent_id = {sid}"] + ["\t".join([str(i), f, l, u, "_", "_", str(h), r, "_", "_"])
                                      for i, (f, l, u, h, r) in enumerate(rows, 1)]
    return "\n".join(lines) + "\n\n"


def qlf_of(text: str):
    return build_qlf(read_conllu_lines(text.splitlines(True), "t.conllu"))


def test_negated_words_on_hand_made_trees():
    q = qlf_of(negated_sentence("a") + negated_sentence("b", "never") + toy_corpus(n=2, seed=3))
    neg = negated_words(q)
    lemmas = [str(x) for x in q.tok_lemma]
    marked = [(i, lemmas[i]) for i in np.nonzero(neg)[0]]
    assert marked == [(3, "buy"), (9, "buy")]          # the verbs of the two negated sentences, nothing else


@pytest.fixture(scope="module")
def model():
    text = toy_corpus(n=240) + "".join(negated_sentence(f"n{i}") for i in range(4))
    return learn(qlf_of(text), USPOptions(min_shared=2))


def verb_of(kb: KnowledgeBase, a) -> str:
    q = kb.q
    lo, hi = int(q.tok_start[a.sentence]), int(q.tok_start[a.sentence + 1])
    return next(str(q.tok_lemma[t]) for t in range(lo, hi) if q.tok_upos[t] == "VERB")


def test_a_negated_fact_answers_nothing_unless_kept(model):
    kb = KnowledgeBase(model)
    assert kb.options.skip_negated
    answers = kb.answer("What does Oracle buy?")
    assert answers and "Tivo" not in {a.text for a in answers}
    kept = KnowledgeBase(model, options=AnswerOptions(skip_negated=False)).answer("What does Oracle buy?")
    assert "Tivo" in {a.text for a in kept}
    assert len(kept) == len(answers) + 4


def test_same_verb_answers_from_the_question_verb_only(model):
    wide = KnowledgeBase(model).answer("What does Microsoft buy?")
    assert {"acquire", "purchase"} & {verb_of(KnowledgeBase(model), a) for a in wide}   # the cluster's synonyms
    kb = KnowledgeBase(model, options=AnswerOptions(same_verb=True))
    narrow = kb.answer("What does Microsoft buy?")
    assert narrow and {verb_of(kb, a) for a in narrow} == {"buy"}
    assert len(narrow) < len(wide)
    # the cluster still aligns the voices: a passive question is answered by active "buy" sentences and vice versa
    passive = kb.answer("What is bought by Microsoft?")
    assert passive and {verb_of(kb, a) for a in passive} == {"buy"}
    assert {a.lemma for a in passive} == {a.lemma for a in narrow}


def test_a_model_keeps_the_relations_its_reader_left_out(tmp_path):
    from markovlogic.usp import USPModel
    from markovlogic.usp.qlf import POON_DROPPED

    text = toy_corpus(n=160, seed=2)
    m = learn(build_qlf(read_conllu_lines(text.splitlines(True), "t.conllu"), dropped=POON_DROPPED),
              USPOptions(min_shared=2))
    assert not any(f.startswith("be:") for f in m.vocab.forms)            # "was" of the passives is no node
    m.save(tmp_path / "m.usp")
    back = USPModel.load(tmp_path / "m.usp")
    assert back.vocab.dropped == POON_DROPPED
    kb = KnowledgeBase(back)
    # the question's "is" and "does" are left out as the corpus's auxiliaries were; voices still align
    assert {a.lemma for a in kb.answer("What is bought by Microsoft?")} == \
        {a.lemma for a in kb.answer("What does Microsoft buy?")} != set()


# ------------------------------------------------- verb similarity gate (issue 27, cross-verb answers)
def tiny_tree(sid: str, subj: str, verb: str, obj: str) -> str:
    rows = [(subj, subj, "PROPN", 2, "nsubj"), (verb, verb, "VERB", 0, "root"), (obj, obj, "NOUN", 2, "obj")]
    lines = [f"# sent_id = {sid}"] + ["\t".join([str(i), f, l, u, "_", "_", str(h), r, "_", "_"])
                                      for i, (f, l, u, h, r) in enumerate(rows, 1)]
    return "\n".join(lines) + "\n\n"


def test_argument_vectors_compare_verbs_by_who_fills_which_slot():
    from math import log, sqrt

    from markovlogic.usp.kb import argument_vectors, verb_similarity

    # buy and purchase: the same (relation, argument) pairs; acquire shares "nsubj Acme" with them
    text = (tiny_tree("a", "Acme", "buy", "firm") + tiny_tree("b", "Acme", "purchase", "firm")
            + tiny_tree("c", "Bob", "buy", "shop") + tiny_tree("d", "Bob", "purchase", "shop")
            + tiny_tree("e", "Sue", "eat", "firm") + tiny_tree("f", "Sue", "eat", "soup")
            + tiny_tree("g", "Acme", "acquire", "plant") + tiny_tree("h", "Dan", "acquire", "plant"))
    q = qlf_of(text)
    lemmas = sorted({str(x).lower() for x in q.tok_lemma})
    idx = {x: i for i, x in enumerate(lemmas)}
    lemma_of_node = np.array([idx[str(q.tok_lemma[t]).lower()] for t in q.node_tok])
    V = argument_vectors(q, lemma_of_node, len(lemmas))
    buy, purchase, acquire = idx["buy"], idx["purchase"], idx["acquire"]
    assert verb_similarity(V, buy, purchase) == pytest.approx(1.0)
    assert verb_similarity(V, buy, buy) == 1.0
    assert verb_similarity(V, buy, idx["acme"]) == 0.0                   # a noun takes no arguments here
    # by hand: 16 edges; PPMI = log(count * 16 / (row sum * column sum)), e.g. (nsubj Acme) has column sum 3
    b = [log(16 / 12), log(16 / 8), log(16 / 12), log(16 / 8)]           # buy: Acme, Bob, firm, shop
    a = [log(16 / 12), log(16 / 4), log(2 * 16 / 8)]                     # acquire: Acme, Dan, plant (twice)
    want = log(16 / 12) ** 2 / (sqrt(sum(x * x for x in b)) * sqrt(sum(x * x for x in a)))
    assert verb_similarity(V, buy, acquire) == pytest.approx(want)
    assert 0 < want < 1


def test_min_verb_similarity_gates_answers_through_other_verbs(model):
    wide = KnowledgeBase(model).answer("What does Microsoft buy?")
    kb0 = KnowledgeBase(model, options=AnswerOptions(min_verb_similarity=0.0))
    assert len(kb0.answer("What does Microsoft buy?")) == len(wide)
    sims = {v: kb0.verb_similarity("buy", v) for v in ("acquire", "purchase")}
    assert all(0 < s < 1 for s in sims.values())
    # above 1: only the question's own verb, as same_verb
    only = KnowledgeBase(model, options=AnswerOptions(min_verb_similarity=1.01)).answer("What does Microsoft buy?")
    same = KnowledgeBase(model, options=AnswerOptions(same_verb=True)).answer("What does Microsoft buy?")
    assert [(a.sent_id, a.word) for a in only] == [(a.sent_id, a.word) for a in same]
    assert {a.via for a in only} == {"buy"}
    # between the two similarities: buy and the nearer synonym answer, the farther one does not
    near, far = sorted(sims, key=lambda v: -sims[v])
    if sims[near] > sims[far]:
        th = (sims[near] + sims[far]) / 2
        mid = KnowledgeBase(model, options=AnswerOptions(min_verb_similarity=th)).answer("What does Microsoft buy?")
        assert {a.via for a in mid} == {"buy", near}
    with pytest.raises(Exception, match="min_verb_similarity"):
        AnswerOptions(min_verb_similarity=-0.5)


def test_answers_name_the_verb_that_gave_them(model):
    kb = KnowledgeBase(model)
    for a in kb.answer("What does Microsoft buy?"):
        q = kb.q
        assert a.via == verb_of(kb, a)
        assert str(q.tok_lemma[int(q.tok_start[a.sentence]) + a.via_word - 1]) == a.via
