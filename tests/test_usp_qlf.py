"""QLFs from hand-made dependency trees (Poon's thesis, §5.3.1)."""

import numpy as np
import pytest

from markovlogic.text import TextError, read_conllu_lines
from markovlogic.usp.qlf import Vocab, build_qlf


def tree(*rows, sent_id="s1", extra=False):
    lines = [f"# sent_id = {sent_id}"]
    for i, (form, lemma, upos, head, rel) in enumerate(rows, 1):
        cols = [str(i), form, lemma, upos, "_", "_", str(head), rel, "_", "_"]
        if extra:
            cols += ["buy.01" if rel == "root" else "_", "V" if rel == "root" else "ARG0"]
        lines.append("\t".join(cols))
    return "\n".join(lines) + "\n\n"


def qlf_of(*texts, vocab=None):
    return build_qlf(read_conllu_lines("".join(texts).splitlines(True), "t.conllu"), vocab)


MICROSOFT = tree(("Microsoft", "Microsoft", "PROPN", 2, "compound"), ("Corporation", "Corporation", "PROPN", 3, "nsubj"),
                 ("bought", "buy", "VERB", 0, "root"), ("Farecast", "Farecast", "PROPN", 3, "obj"))


def test_nodes_become_unary_atoms_and_edges_binary_atoms():
    q = qlf_of(MICROSOFT)
    assert sorted(q.atoms(0)) == sorted([
        "Microsoft:PROPN(n1)", "Corporation:PROPN(n2)", "buy:VERB(n3)", "Farecast:PROPN(n4)",
        "compound(n2, n1)", "nsubj(n3, n2)", "obj(n3, n4)"])
    assert q.head.tolist() == [1, 2, -1, 2] and q.label[2] == -1
    assert q.n_sentences == 1 and q.n_nodes == 4


def test_prepositions_markers_and_coordinators_fold_into_labels():
    q = qlf_of(tree(("Farecast", "Farecast", "PROPN", 3, "nsubj:pass"), ("was", "be", "AUX", 3, "aux:pass"),
                    ("bought", "buy", "VERB", 0, "root"), ("by", "by", "ADP", 5, "case"),
                    ("Microsoft", "Microsoft", "PROPN", 3, "obl"), ("because", "because", "SCONJ", 8, "mark"),
                    ("it", "it", "PRON", 8, "nsubj"), ("grew", "grow", "VERB", 3, "advcl"),
                    ("and", "and", "CCONJ", 10, "cc"), ("thrived", "thrive", "VERB", 8, "conj"),
                    (".", ".", "PUNCT", 3, "punct")))
    atoms = q.atoms(0)
    assert "obl:by(n3, n5)" in atoms and "advcl:because(n3, n8)" in atoms and "conj:and(n8, n10)" in atoms
    assert not any(a.startswith(("by:", "because:", "and:", ".:")) for a in atoms)      # not nodes
    assert "nsubj:pass(n3, n1)" in atoms and not any(a.startswith("be:") for a in atoms)  # auxiliaries: Poon's reader
    assert len(q.tok_form) == 11 and q.n_nodes == 6                                       # words are kept for text


def test_multiword_markers_and_subtyped_labels():
    q = qlf_of(tree(("left", "leave", "VERB", 0, "root"), ("because", "because", "SCONJ", 4, "case"),
                    ("of", "of", "ADP", 2, "fixed"), ("rain", "rain", "NOUN", 1, "obl"),
                    ("yesterday", "yesterday", "NOUN", 1, "obl:tmod")))
    atoms = q.atoms(0)
    assert "obl:because_of(n1, n4)" in atoms and "obl:tmod(n1, n5)" in atoms
    assert not any(a.startswith(("of:", "because:")) for a in atoms)


def test_dependents_of_dropped_words_hang_from_the_nearest_kept_ancestor():
    q = qlf_of(tree(("go", "go", "VERB", 0, "root"), ("(", "(", "PUNCT", 1, "punct"), ("now", "now", "ADV", 2, "advmod")))
    assert "advmod(n1, n3)" in q.atoms(0)


def test_propbank_columns_are_never_read():
    a = qlf_of(MICROSOFT)
    b = qlf_of(tree(("Microsoft", "Microsoft", "PROPN", 2, "compound"), ("Corporation", "Corporation", "PROPN", 3, "nsubj"),
                    ("bought", "buy", "VERB", 0, "root"), ("Farecast", "Farecast", "PROPN", 3, "obj"), extra=True))
    for name in ("form", "head", "label", "sent"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert a.vocab.forms == b.vocab.forms and a.vocab.labels == b.vocab.labels


def test_sentences_are_numbered_and_a_frozen_vocabulary_marks_unknown_forms():
    q = qlf_of(MICROSOFT, tree(("Google", "Google", "PROPN", 2, "nsubj"), ("bought", "buy", "VERB", 0, "root"),
                               ("YouTube", "YouTube", "PROPN", 2, "obj"), sent_id="s2"))
    assert q.sent_start.tolist() == [0, 4, 7] and q.sent_ids == ["s1", "s2"]
    frozen = Vocab(list(q.vocab.forms), list(q.vocab.labels), frozen=True)
    r = qlf_of(tree(("Apple", "Apple", "PROPN", 2, "nsubj"), ("bought", "buy", "VERB", 0, "root")), vocab=frozen)
    assert r.form[0] == -1 and r.form[1] == q.vocab.form_id("buy:VERB")
    assert frozen.forms == q.vocab.forms                   # not extended


def test_an_empty_corpus_and_bad_trees_are_errors():
    with pytest.raises(TextError, match="no sentences"):
        build_qlf([])
    cyc = "1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n2\tB\tb\tX\t_\t_\t3\tdep\t_\t_\n3\tC\tc\tX\t_\t_\t2\tdep\t_\t_\n"
    with pytest.raises(TextError, match="cycle") as e:
        build_qlf(read_conllu_lines(cyc.splitlines(True), "c.conllu"))
    assert e.value.file == "c.conllu" and e.value.line == 2


def test_poons_reader_leaves_out_auxiliaries_copulas_and_determiners_by_default():
    from markovlogic.usp.qlf import DROPPED, POON_DROPPED

    text = tree(("The", "the", "DET", 2, "det"), ("firm", "firm", "NOUN", 4, "nsubj:pass"),
                ("was", "be", "AUX", 4, "aux:pass"), ("bought", "buy", "VERB", 0, "root"),
                ("and", "and", "CCONJ", 8, "cc"), ("it", "it", "PRON", 8, "nsubj"), ("is", "be", "AUX", 8, "cop"),
                ("happy", "happy", "ADJ", 4, "conj"))
    kept = build_qlf(read_conllu_lines(text.splitlines(True), "t.conllu"), dropped=DROPPED)   # function words kept
    assert "aux:pass(n4, n3)" in kept.atoms(0) and "det(n2, n1)" in kept.atoms(0) and kept.n_nodes == 7
    q = build_qlf(read_conllu_lines(text.splitlines(True), "t.conllu"))                    # the default: Poon's
    assert sorted(q.atoms(0)) == sorted(["firm:NOUN(n2)", "buy:VERB(n4)", "it:PRON(n6)", "happy:ADJ(n8)",
                                         "nsubj:pass(n4, n2)", "conj:and(n4, n8)", "nsubj(n8, n6)"])
    assert q.vocab.dropped == POON_DROPPED
    # a frozen vocabulary reads new sentences with its own relations left out
    frozen = Vocab(list(q.vocab.forms), list(q.vocab.labels), frozen=True, dropped=q.vocab.dropped)
    r = qlf_of(text, vocab=frozen)
    assert r.atoms(0) == q.atoms(0)
