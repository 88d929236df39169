"""``mln eval``: score a result file against a truth ``.db``.

    mln eval -r RESULT -t TRUTH.db -q PRED[,PRED] [-i MODEL.mln] [--equivalence PRED[,PRED]]
             [--stats-json FILE]
    mln eval -r RESULT -t TRUTH.db -q SameEntity --documents EVIDENCE.db [--stats-json FILE]
    mln eval -r RESPONSE.conllu -t KEY.conllu [--stats-json FILE]

Coreference (``markovlogic.eval.corefeval``): with ``--documents`` (the
evidence whose ``InDoc`` atoms list every mention) or with CoNLL-U files on
both sides (``Entity=`` brackets, mentions matched by span), the figures are
MUC, B-cubed, CEAF-e and CoNLL F1 with and without singletons, pairwise, and
the mean absolute error of the number of clusters per document.

RESULT is an inference result in any of Alchemy's formats (true atoms one
per line; ``-a``'s ``atom 0|1``; marginals ``atom probability``) or a
clusters file (one cluster per line: ``PRED<TAB>c1<TAB>c2...``); the format
is detected. The truth is closed-world for the query predicates. A predicate
is scored as an equivalence relation (pairwise, B-cubed, MUC, CEAF-e) when
``--equivalence`` names it, when the model given with ``-i`` holds its hard
reflexivity, symmetry and transitivity rules, or, without a model, when it
is binary and its true atoms are symmetric; otherwise as atoms (precision,
recall, F1, and for marginals AUC-PR and CLL). Pair and universe
conventions, and the JSON written by ``--stats-json``, are documented in
``markovlogic.eval.compare``: ``precision``, ``recall``, ``f1`` (and
``auc_pr``, ``cll``; ``b3_f1``, ``muc_f1``, ``ceafe_f1``, ``pairwise_f1``
with their precision and recall, ``closure_pairwise_*`` after transitive
closure, ``cluster_recall`` (true clusters output exactly)) of the first predicate at the top level,
every predicate's figures under ``predicates``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ..io import write_text_atomic
from .common import LazyConsole, split_list

console = LazyConsole(highlight=False)
err_console = LazyConsole(stderr=True, highlight=False)


def eval_command(
    result: Path = typer.Option(..., "-r", "--result", help="Result file: MAP, -a (atom 0|1), marginals, or clusters."),
    truth: Path = typer.Option(..., "-t", "--truth", help="Truth .db file (closed world for the query predicates)."),
    queries: Optional[str] = typer.Option(None, "-q", "--queries", help="Predicates to score, comma-separated."),
    input: Optional[str] = typer.Option(
        None, "-i", "--input", help="MLN file(s): check the predicates, find the equivalence predicates."),
    equivalence: Optional[str] = typer.Option(
        None, "--equivalence", help="Predicates to score as equivalence relations (clusterings), comma-separated."),
    stats_json: Optional[Path] = typer.Option(None, "--stats-json", help="Write the figures as JSON."),
    documents: Optional[Path] = typer.Option(
        None, "--documents", help="Coreference: an evidence .db whose InDoc(mention, doc) atoms name every mention and "
                                  "its document; scores the (first) -q predicate by document: MUC, B-cubed, CEAF-e, "
                                  "CoNLL F1 with and without singletons, pairwise, cluster-count error."),
) -> None:
    """Score a result file against the truth: P/R/F1 (AUC-PR, CLL), pairwise, B-cubed, MUC, CEAF-e."""
    from ..errors import OptionError
    from ..eval.compare import evaluate
    from ..io import check_outputs
    from ..model import MLN

    from ..eval.corefeval import evaluate_coref_conllu, evaluate_coref_db, format_report, is_conllu

    if is_conllu([result]) and is_conllu([truth]):
        check_outputs({"stats file": stats_json}, [str(result), str(truth)])
        # CoNLL-U with Entity= brackets on both sides (coreference)
        figures = evaluate_coref_conllu([result], [truth])
        console.print(format_report(figures))
        if stats_json is not None:
            write_text_atomic(stats_json, json.dumps(figures, indent=2) + "\n")
        return
    predicates = split_list(queries)
    if documents is not None:
        if not predicates:
            raise OptionError("--documents scores a coreference predicate: name it with -q")
        check_outputs({"stats file": stats_json}, [str(result), str(truth), str(documents)])
        figures = evaluate_coref_db(result, truth, predicates[0], documents)
        console.print(format_report(figures))
        if stats_json is not None:
            write_text_atomic(stats_json, json.dumps(figures, indent=2) + "\n")
        return
    if not predicates:
        raise OptionError("no predicate given (-q)")
    unscored = [p for p in split_list(equivalence) if p not in predicates]
    if unscored:
        raise OptionError(f"--equivalence names {', '.join(unscored)}, which -q does not score "
                          f"(-q {','.join(predicates)}); add it to -q or drop it from --equivalence")
    check_outputs({"stats file": stats_json}, [str(result), str(truth), *split_list(input)])
    mln = None
    if input:
        paths = split_list(input)
        for p in paths:
            if not Path(p).is_file():
                raise OptionError(f"MLN file not found: {p}")
        mln = MLN.from_file([Path(p) for p in paths])
    figures = evaluate(result, truth, predicates, equivalence=split_list(equivalence), mln=mln)
    print_figures(figures)
    if stats_json is not None:
        write_text_atomic(stats_json, json.dumps(figures, indent=2) + "\n")


def print_figures(figures: dict) -> None:
    """A small table: one row per metric, then the counts behind them."""
    from rich.table import Table

    table = Table(title=f"{figures['result']} ({figures['format']}) against {figures['truth']}",
                  title_justify="left", show_edge=False)
    for name, justify in (("predicate", "left"), ("metric", "left"), ("precision", "right"),
                          ("recall", "right"), ("F1", "right")):
        table.add_column(name, justify=justify)
    notes = []
    for pred, f in figures["predicates"].items():
        if f["kind"] == "equivalence":
            rows = [("pairwise", "pairwise"), ("B-cubed", "b3"), ("MUC", "muc"), ("CEAF-e", "ceafe")]
            if f["closure_pairwise_f1"] != f["pairwise_f1"] or f["closure_pairwise_recall"] != f["pairwise_recall"]:
                rows.insert(1, ("pairwise, closed", "closure_pairwise"))
            for i, (label, key) in enumerate(rows):
                table.add_row(pred if i == 0 else "", label,
                              *(f"{f[f'{key}_{m}']:.4f}" for m in ("precision", "recall", "f1")))
            table.add_row("", "clusters exact", f"{f['cluster_precision']:.4f}", f"{f['cluster_recall']:.4f}", "")
            notes.append(f"{pred} (equivalence, from the {f['equivalence_from']}): {f['constants']} constants, "
                         f"{f['true_clusters']} true and {f['predicted_clusters']} predicted clusters; "
                         f"{f['pairs_predicted']} pairs predicted, {f['pairs_true']} true, {f['pairs_common']} both")
        else:
            table.add_row(pred, "atoms", f"{f['precision']:.4f}", f"{f['recall']:.4f}", f"{f['f1']:.4f}")
            notes.append(f"{pred}: {f['predicted']} atoms predicted true, {f['true']} true, {f['common']} both")
        if "auc_pr" in f:
            table.add_row("", "AUC-PR", "", "", f"{f['auc_pr']:.4f}")
            table.add_row("", "CLL", "", "", f"{f['cll']:.4f}")
    console.print(table)
    for note in notes:
        console.print("  " + note)
    for pred, f in figures["predicates"].items():
        if f["result_atoms"] == 0:
            err_console.print(f"[yellow]warning:[/] the result has nothing for {pred}")


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
