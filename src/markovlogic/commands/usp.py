"""``mln usp``: unsupervised semantic parsing (USP) and ontology induction
(OntoUSP) from dependency trees (Poon's thesis, chapters 5 and 6).

    mln usp learn -i CORPUS.conllu[,MORE.conllu.gz] -o MODEL.usp [--onto] [--ontology ONTO.txt]
                  [--clusters CLUSTERS.txt] [--alpha -5] [--beta -10] [--threshold 10] [--min-shared 10]
                  [--min-compose 50] [--no-compose] [--no-role-merges] [--keep-function-words]
                  [--max-ops N] [--time-limit S]
                  [--onto-m 5] [--onto-tp 0.02] [--stats-json S.json] [--quiet]
    mln usp parse -m MODEL.usp -i SENTENCES.conllu [-o PARSES.txt] [--flat] [--stats-json S.json]
    mln usp ask -m MODEL.usp "What does X V?" ... [--questions FILE] [--flat] [--same-verb] [--keep-negated]
                [--max-answers N] [--stats-json S.json]

``learn`` reads CoNLL-U dependency trees (PropBank or other extra columns are
ignored), runs USP-Learn, and with ``--onto`` OntoUSP's ISA search; it writes
the model (weights and the MAP parses of the corpus, the knowledge base)
atomically, and on request the ontology and the clusters as text. ``parse``
prints the MAP semantic parses of new sentences; ``ask`` answers questions
from the model's knowledge base (with OntoUSP's hierarchy unless ``--flat``).
Progress is shown on a terminal (standard error) and nowhere else; mistakes
in the input exit with status 2.
"""

from __future__ import annotations

import json
import resource
import time
from pathlib import Path
from typing import List, Optional

import typer

from ..errors import OptionError
from ..io import check_outputs, write_text_atomic
from .common import LazyConsole, _existing, peak_mb, split_list

console = LazyConsole(stderr=True, highlight=False)
out = LazyConsole(highlight=False, soft_wrap=True)

HELP = "Unsupervised semantic parsing (USP) and ontology induction (OntoUSP) from CoNLL-U dependency trees."
app = typer.Typer(help=HELP, no_args_is_help=True, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120,
                                    "show_default": True})


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _corpus_paths(value: str) -> list[Path]:
    paths = []
    for p in split_list(value):
        path = Path(p)
        if not path.exists():
            raise OptionError(f"corpus file not found: {p}")
        paths.append(path)
    if not paths:
        raise OptionError("no corpus given (-i)")
    return paths


@app.command("learn")
def learn_command(
    input: str = typer.Option(..., "-i", "--input", help="CoNLL-U file(s) or folders, comma-separated (.gz too)."),
    output: Path = typer.Option(..., "-o", "--output", help="The learned model (.usp)."),
    onto: bool = typer.Option(False, "--onto/--no-onto", help="Also learn OntoUSP's ISA hierarchy (ABSTRACT, ADDCHILD)."),
    ontology: Optional[Path] = typer.Option(None, "--ontology", help="Write the ontology (concepts, ISA links, properties, clusters) as text."),
    clusters: Optional[Path] = typer.Option(None, "--clusters", help="Write the clusters of more than one core form, as in the thesis's §5.5.4."),
    alpha: float = typer.Option(-5.0, "--alpha", help="Log prior per parameter (thesis: -5)."),
    beta: float = typer.Option(-10.0, "--beta", help="Log prior per conj edge inside one cluster (thesis: -10)."),
    threshold: float = typer.Option(10.0, "--threshold", help="Least improvement of the objective an operation must bring (thesis: 10)."),
    min_shared: int = typer.Option(10, "--min-shared", help="MERGE candidates: clusters sharing this many neighbour clusters."),
    min_merge_parts: int = typer.Option(0, "--min-merge-parts", help="MERGE candidates: only clusters of at least this many parts (0: all, as the thesis)."),
    merge_candidates: str = typer.Option("clusters", "--merge-candidates", help="MERGE candidates: 'clusters' (sharing --min-shared neighbour clusters, as Poon's code) or 'words' (sharing --min-shared (relation, argument word) pairs, nearest by PPMI cosine)."),
    min_compose: int = typer.Option(50, "--min-compose", help="COMPOSE candidates: parent/argument cluster pairs seen this often."),
    compose: bool = typer.Option(True, "--compose/--no-compose", help="Use the COMPOSE operator."),
    function_words: bool = typer.Option(False, "--keep-function-words", help="Keep auxiliaries, copulas, determiners and expletives as QLF nodes (default: left out, as Poon's reader)."),
    role_merges: bool = typer.Option(True, "--role-merges/--no-role-merges", help="Merge argument types inside a cluster."),
    max_ops: int = typer.Option(0, "--max-ops", help="Stop after this many operations (0: until the agenda is empty)."),
    time_limit: float = typer.Option(0.0, "--time-limit", help="Stop USP-Learn's search after this many seconds (0: no limit)."),
    onto_m: float = typer.Option(5.0, "--onto-m", help="OntoUSP: weight m of the parent in the m-estimates."),
    onto_tp: float = typer.Option(0.02, "--onto-tp", help="OntoUSP: least probability an abstract property keeps."),
    stats_json: Optional[Path] = typer.Option(None, "--stats-json", help="Write the figures (operations, seconds, memory) as JSON."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary line either."),
) -> None:
    """Learn a USP (or OntoUSP) model from dependency trees."""
    from .. import progress
    from ..usp import OntoOptions, USPOptions, learn, read_corpus
    from ..usp.model import ontology_text
    from ..usp.qlf import DROPPED, POON_DROPPED

    options = USPOptions(alpha=alpha, beta=beta, threshold=threshold, min_shared=min_shared, min_compose=min_compose,
                         min_merge_parts=min_merge_parts, merge_candidates=merge_candidates, compose=compose, merge_roles=role_merges, max_ops=max_ops, time_limit=time_limit)
    options.check()
    onto_options = OntoOptions(m=onto_m, tp=onto_tp, alpha=alpha, threshold=threshold) if onto else None
    if onto_options is not None:
        onto_options.check()
    paths = _corpus_paths(input)
    check_outputs({"model": output, "ontology file": ontology, "clusters file": clusters, "stats file": stats_json},
                  [str(p) for p in paths])
    t0, c0 = time.perf_counter(), _cpu()
    with progress.task("reading the corpus"):
        qlf = read_corpus(paths, dropped=DROPPED if function_words else POON_DROPPED)
    with progress.task(f"USP-Learn on {qlf.n_sentences:,} sentences") as bar:
        model = learn(qlf, options, onto=onto_options, progress=lambda msg: bar.update(detail=msg))
    model.save(output)
    if ontology is not None:
        write_text_atomic(ontology, ontology_text(model))
    if clusters is not None:
        write_text_atomic(clusters, model.clusters_text(types=3) + "\n")
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    st = model.stats
    u = st["usp"]
    figures = {"sentences": qlf.n_sentences, "qlf_nodes": qlf.n_nodes, "clusters": len(model.n),
               "clusters_with_several_forms": len(model.multi_form_clusters()), "merges": u["merges"],
               "composes": u["composes"], "role_merges": u["role_merges"], "rounds": u["rounds"],
               "objective_start": u["objective_start"], "objective_end": u["objective_end"],
               "abstract_concepts": len(model.ontology.abstract), "isa_links": len(model.ontology.parent),
               "wall_seconds": wall, "cpu_seconds": cpu, "peak_mb": peak_mb()}
    if not quiet:
        console.print(f"{figures['clusters']:,} clusters ({figures['clusters_with_several_forms']:,} of several forms), "
                      f"{u['merges']:,} merges, {u['composes']:,} compositions, {u['role_merges']:,} argument-type merges"
                      + (f", {figures['abstract_concepts']:,} abstract concepts over {figures['isa_links']:,} clusters"
                         if onto else "")
                      + f"; wrote {output} ({wall:.1f} s wall, {cpu:.1f} s CPU, peak {figures['peak_mb']:.0f} MiB)")
    if stats_json is not None:
        write_text_atomic(stats_json, json.dumps(figures, indent=2) + "\n")


def _load(model_path: Path):
    from ..usp.model import USPModel

    return USPModel.load(model_path)


@app.command("parse")
def parse_command(
    model_path: Path = typer.Option(..., "-m", "--model", help="A model written by mln usp learn."),
    input: str = typer.Option(..., "-i", "--input", help="CoNLL-U file(s) of the sentences to parse."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the parses here (default: standard output)."),
    flat: bool = typer.Option(False, "--flat", help="USP's weights even when the model has an ontology (no smoothing)."),
    stats_json: Optional[Path] = typer.Option(None, "--stats-json", help="Write the figures as JSON."),
) -> None:
    """Print the MAP semantic parses of sentences (USP-Parse)."""
    from ..text import read_conllu_files
    from ..usp.parse import Parser
    from ..usp.qlf import build_qlf

    paths = _corpus_paths(input)
    check_outputs({"output": output, "stats file": stats_json}, [str(p) for p in paths] + [str(model_path)])
    t0, c0 = time.perf_counter(), _cpu()
    from .. import progress

    with progress.task("reading the model"):
        model = _load(model_path)
    model.smoothed = not flat
    qlf = build_qlf(read_conllu_files(paths), model.vocab)
    parser = Parser(model)
    lines = []
    n_parts = 0
    from .. import progress

    with progress.task("USP-Parse", total=qlf.n_sentences) as bar:
        for s in range(qlf.n_sentences):
            p = parser.parse_sentence(qlf, s)
            n_parts += len(p.parts)
            lines += _parse_lines(model, qlf, p)
            bar.advance()
    text = "\n".join(lines) + "\n"
    if output is None:
        out.print(text, end="", markup=False)
    else:
        write_text_atomic(output, text)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    console.print(f"parsed {qlf.n_sentences:,} sentences into {n_parts:,} parts ({wall:.1f} s wall, {cpu:.1f} s CPU)")
    if stats_json is not None:
        write_text_atomic(stats_json, json.dumps({"sentences": qlf.n_sentences, "parts": n_parts, "wall_seconds": wall,
                                                  "cpu_seconds": cpu, "peak_mb": peak_mb()}, indent=2) + "\n")


def _parse_lines(model, qlf, p) -> list[str]:
    s = p.sentence
    lo = int(qlf.sent_start[s])
    words = qlf.node_tok[lo:int(qlf.sent_start[s + 1])] - qlf.tok_start[s] + 1
    text = " ".join(str(x) for x in qlf.tok_form[int(qlf.tok_start[s]):int(qlf.tok_start[s + 1])])
    lines = [f"# sent_id = {qlf.sent_ids[s]}", f"# text = {text}", f"# score = {p.score:.3f}"]
    for i, part in enumerate(p.parts):
        if part.cluster >= 0:
            cname = f"C{part.cluster} {{{', '.join(model.cluster_words(part.cluster, 5))}}}"
        else:
            cname = "unknown" if part.cluster == -1 else "wildcard"
        where = "root" if part.parent < 0 else (
            f"arg of part {part.parent + 1} via {part.aform}, type "
            + (f"T{part.atype} ({' | '.join(model.type_forms(part.atype, 3))})" if part.atype >= 0 else "unseen"))
        nodes = ",".join(str(int(words[v])) for v in sorted(part.nodes))
        lines.append(f"{i + 1}\t{part.form}\twords {nodes}\t{cname}\t{where}")
    lines.append("")
    return lines


@app.command("ask")
def ask_command(
    questions: Optional[List[str]] = typer.Argument(None, help='Questions: "What does X V?", "What Vs X?", "What is X V-ed by?", "What is V-ed by X?".'),
    model_path: Path = typer.Option(..., "-m", "--model", help="A model written by mln usp learn."),
    question_file: Optional[Path] = typer.Option(None, "--questions", help="A file of questions, one per line."),
    flat: bool = typer.Option(False, "--flat", help="Answer as USP: no ISA hierarchy, no smoothing."),
    same_verb: bool = typer.Option(False, "--same-verb", help="Answer only from parts headed by the question's verb "
                                   "(its cluster still matches the argument types: passive finds active)."),
    keep_negated: bool = typer.Option(False, "--keep-negated", help="Also answer from negated parts (X does not V Y)."),
    min_verb_similarity: float = typer.Option(0.0, "--min-verb-similarity", help="Answer through another verb of the cluster only when its (relation, argument word) PPMI cosine with the question's verb is at least this (0: every verb, as the thesis)."),
    max_answers: int = typer.Option(10, "--max-answers", help="Answers printed per question (0: all)."),
    stats_json: Optional[Path] = typer.Option(None, "--stats-json", help="Write the figures as JSON."),
) -> None:
    """Answer questions from the knowledge base of a learned model."""
    from ..usp.kb import AnswerOptions, KnowledgeBase

    qs = list(questions or [])
    if question_file is not None:
        qpath = _existing([str(question_file)], "question")[0]
        qs += [line.strip() for line in qpath.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not qs:
        raise OptionError("no question given (as arguments or --questions FILE)")
    if max_answers < 0:
        raise OptionError("--max-answers must be >= 0")
    check_outputs({"stats file": stats_json}, [str(model_path)] + ([str(question_file)] if question_file else []))
    t0, c0 = time.perf_counter(), _cpu()
    from .. import progress

    with progress.task("reading the model"):
        model = _load(model_path)
    model.smoothed = not flat
    kb = KnowledgeBase(model, ontology=not flat, options=AnswerOptions(skip_negated=not keep_negated, same_verb=same_verb,
                                                                        min_verb_similarity=min_verb_similarity))
    answered = 0
    for text in qs:
        q = kb.question_from_text(text)
        answers = kb.answer(q)
        out.print(f"Q: {q.text}", markup=False)
        if not answers:
            out.print("   (no answer)", markup=False)
        seen = set()
        shown = 0
        for a in answers:
            if (a.lemma, a.sent_id) in seen:
                continue
            seen.add((a.lemma, a.sent_id))
            if max_answers and shown >= max_answers:
                break
            shown += 1
            via = f", via {a.via!r}" if a.via and a.via != q.verb[1].lower() else ""     # another verb of the cluster
            out.print(f"A: {a.text}    [{a.sent_id}, word {a.word}{via}]", markup=False)
        answered += bool(answers)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    console.print(f"{answered} of {len(qs)} questions answered ({wall:.1f} s wall, {cpu:.1f} s CPU)")
    if stats_json is not None:
        write_text_atomic(stats_json, json.dumps({"questions": len(qs), "answered": answered, "wall_seconds": wall,
                                                  "cpu_seconds": cpu, "peak_mb": peak_mb()}, indent=2) + "\n")


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="usp", short_help=HELP)
