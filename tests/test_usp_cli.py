"""``mln usp learn|parse|ask``: a toy corpus end to end, and bad input
(malformed CoNLL-U, a cycle, an empty corpus, a missing or foreign model):
exit 2, a message naming the file and line, nothing written."""

import json

import pytest

from markovlogic.cli import main
from usp_corpus import toy_corpus

LEARN_FAST = ["--min-shared", "2", "-q"]


@pytest.fixture(scope="module")
def learned(tmp_path_factory):
    d = tmp_path_factory.mktemp("usp")
    corpus = d / "toy.conllu"
    corpus.write_text(toy_corpus(n=240), encoding="utf-8")
    model, onto, clusters, stats = d / "toy.usp", d / "onto.txt", d / "clusters.txt", d / "learn.json"
    code = main(["usp", "learn", "-i", str(corpus), "-o", str(model), "--onto", "--ontology", str(onto),
                 "--clusters", str(clusters), "--stats-json", str(stats), *LEARN_FAST])
    assert code == 0
    return d, corpus, model, onto, clusters, stats


def test_learn_writes_model_ontology_clusters_and_figures(learned):
    d, corpus, model, onto, clusters, stats = learned
    figures = json.loads(stats.read_text())
    assert figures["sentences"] == 240 and figures["merges"] >= 2 and figures["cpu_seconds"] > 0
    assert figures["peak_mb"] > 0 and "wall_seconds" in figures
    assert "{acquire, buy, purchase}" in clusters.read_text() or "{buy, acquire, purchase}" in clusters.read_text() \
        or "purchase" in clusters.read_text()
    text = onto.read_text()
    assert text.startswith("# USP/OntoUSP ontology") and "CLUSTER" in text
    # the model file is written as every other output: the umask's mode, no temporary left
    from markovlogic.io import current_umask

    assert model.stat().st_mode & 0o777 == 0o666 & ~current_umask()
    assert not list(d.glob(".toy.usp.*"))


def test_ask_answers_through_clusters_and_voice(learned, capsys):
    d, corpus, model, *_ = learned
    assert main(["usp", "ask", "-m", str(model), "What does Microsoft buy?", "What is bought by Microsoft?",
                 "What devoured pizza?"]) == 0
    out = capsys.readouterr().out
    blocks = out.split("Q: ")[1:]
    assert len(blocks) == 3
    assert all("A: " in b for b in blocks), out
    # passive question, active and passive facts alike; synonyms (acquired/purchased) too
    assert "Farecast" in blocks[1] or "YouTube" in blocks[1] or "Siri" in blocks[1]


def test_parse_prints_parts(learned, tmp_path):
    d, corpus, model, *_ = learned
    new = tmp_path / "new.conllu"
    new.write_text(toy_corpus(n=3, seed=9), encoding="utf-8")
    out = tmp_path / "parses.txt"
    assert main(["usp", "parse", "-m", str(model), "-i", str(new), "-o", str(out)]) == 0
    text = out.read_text()
    assert text.count("# sent_id") == 3 and "root" in text and "arg of part" in text


def _err(capsys):
    return capsys.readouterr().err


def test_malformed_conllu_is_exit_2_naming_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tA\ta\tNOUN\t_\t_\t0\troot\t_\t_\n2\tB\tb\tNOUN\t_\t_\n", encoding="utf-8")
    model = tmp_path / "m.usp"
    assert main(["usp", "learn", "-i", str(bad), "-o", str(model), "-q"]) == 2
    err = _err(capsys)
    assert f"{bad}:2:" in err and "10 tab-separated columns" in err
    assert not model.exists()


def test_a_cycle_is_exit_2(tmp_path, capsys):
    bad = tmp_path / "cycle.conllu"
    bad.write_text("1\tA\ta\tX\t_\t_\t0\troot\t_\t_\n2\tB\tb\tX\t_\t_\t3\tdep\t_\t_\n"
                   "3\tC\tc\tX\t_\t_\t2\tdep\t_\t_\n", encoding="utf-8")
    model = tmp_path / "m.usp"
    assert main(["usp", "learn", "-i", str(bad), "-o", str(model), "-q"]) == 2
    err = _err(capsys)
    assert f"{bad}:2" in err and "cycle" in err
    assert not model.exists()


def test_an_empty_corpus_is_exit_2(tmp_path, capsys):
    empty = tmp_path / "empty.conllu"
    empty.write_text("\n\n", encoding="utf-8")
    model = tmp_path / "m.usp"
    assert main(["usp", "learn", "-i", str(empty), "-o", str(model), "-q"]) == 2
    assert "no sentences" in _err(capsys)
    assert not model.exists()


def test_missing_inputs_and_bad_models_are_exit_2(tmp_path, learned, capsys):
    d, corpus, model, *_ = learned
    assert main(["usp", "learn", "-i", str(tmp_path / "none.conllu"), "-o", str(tmp_path / "m.usp")]) == 2
    assert "not found" in _err(capsys)
    assert main(["usp", "ask", "-m", str(tmp_path / "none.usp"), "What does X buy?"]) == 2
    assert "no such model file" in _err(capsys)
    assert main(["usp", "ask", "-m", str(corpus), "What does X buy?"]) == 2
    assert "not a USP model" in _err(capsys)
    assert main(["usp", "ask", "-m", str(model), "Who is John?"]) == 2
    assert "cannot read the question" in _err(capsys)
    before = corpus.read_bytes()
    assert main(["usp", "learn", "-i", str(corpus), "-o", str(corpus), "-q"]) == 2       # never overwrite an input
    assert "also an input" in _err(capsys) and corpus.read_bytes() == before
    assert main(["usp", "learn", "-i", str(corpus), "-o", str(tmp_path / "m.usp"), "--alpha", "2"]) == 2
    assert "alpha" in _err(capsys)


def test_keep_function_words_is_recorded_in_the_model(tmp_path):
    from markovlogic.usp import USPModel
    from markovlogic.usp.qlf import DROPPED, POON_DROPPED

    corpus = tmp_path / "toy.conllu"
    corpus.write_text(toy_corpus(n=60), encoding="utf-8")
    for flag, dropped in (([], POON_DROPPED), (["--keep-function-words"], DROPPED)):
        model = tmp_path / f"m{len(flag)}.usp"
        assert main(["usp", "learn", "-i", str(corpus), "-o", str(model), *flag, *LEARN_FAST]) == 0
        m = USPModel.load(model)
        assert m.vocab.dropped == dropped
        assert any(f.startswith("be:") for f in m.vocab.forms) == bool(flag)     # the passives' "was"


def test_ask_names_the_other_verb_and_gates_it_by_similarity(learned, capsys):
    d, corpus, model, *_ = learned
    assert main(["usp", "ask", "-m", str(model), "--max-answers", "0", "What does Microsoft buy?"]) == 0
    wide = capsys.readouterr().out
    assert "via 'acquire'" in wide or "via 'purchase'" in wide
    assert main(["usp", "ask", "-m", str(model), "--max-answers", "0", "--min-verb-similarity", "1.5",
                 "What does Microsoft buy?"]) == 0
    narrow = capsys.readouterr().out
    assert "A: " in narrow and "via" not in narrow
    assert main(["usp", "ask", "-m", str(model), "--min-verb-similarity", "-1", "What does Microsoft buy?"]) == 2
    assert "min_verb_similarity" in capsys.readouterr().err


def test_learn_options_for_merge_candidates(tmp_path, capsys):
    corpus = tmp_path / "toy.conllu"
    corpus.write_text(toy_corpus(n=120), encoding="utf-8")
    for flags in (["--merge-candidates", "words"], ["--min-merge-parts", "5"]):
        model = tmp_path / f"m{len(flags[1])}.usp"
        assert main(["usp", "learn", "-i", str(corpus), "-o", str(model), *flags, *LEARN_FAST]) == 0
        assert model.exists()
    assert main(["usp", "learn", "-i", str(corpus), "-o", str(tmp_path / "x.usp"), "--merge-candidates", "nouns",
                 *LEARN_FAST]) == 2
    assert "merge-candidates" in capsys.readouterr().err
    assert not (tmp_path / "x.usp").exists()
