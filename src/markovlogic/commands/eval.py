"""``mln eval``: score a result file against a truth database.

    mln eval -r RESULT -t TRUTH.db[,more.db] -q PRED[,PRED] [-i MODEL.mln]
             [--equivalence PRED[,PRED]] [--stats-json FILE]

A predicate is scored as an equivalence relation (pairwise, B-cubed, MUC,
CEAF-e) when ``--equivalence`` names it, when the model given with ``-i``
declares it one (or writes its hard reflexivity, symmetry and
transitivity), or, with no model, when it is binary and its true atoms in
the truth are symmetric. See ``markovlogic.eval.report`` for every figure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from ..errors import OptionError
from ..io import check_outputs, write_text_atomic
from .common import split_list

console = Console(stderr=True, highlight=False)


def eval_command(
    result: Path = typer.Option(..., "-r", "--result", help="Result file (MAP atoms, atoms with 0/1, marginals, or clusters)."),
    truth: str = typer.Option(..., "-t", "--truth", help="Truth .db file(s), comma-separated (closed world)."),
    queries: str = typer.Option(..., "-q", "--queries", help="Predicates to score, comma-separated."),
    input: Optional[str] = typer.Option(None, "-i", "--input", help="The model (tells which predicates are equivalences)."),
    equivalence: Optional[str] = typer.Option(None, "--equivalence", help="Predicates to score as equivalence relations."),
    stats_json: Optional[Path] = typer.Option(None, "--stats-json", help="Write the figures as JSON."),
) -> None:
    """Score a result file against the truth (precision, recall, F1; clusters: B3, MUC, CEAF-e)."""
    from ..eval.files import read_result, read_truth
    from ..eval.report import evaluate, symmetric_truth

    check_outputs({"stats file": stats_json}, [str(result)] + split_list(truth) + split_list(input))
    preds = split_list(queries)
    if not preds:
        raise OptionError("no predicate given (-q)")
    truth_paths = split_list(truth)
    if not truth_paths:
        raise OptionError("no truth file given (-t)")
    res = read_result(result)
    true_atoms, _ = read_truth(truth_paths)
    eq = set(split_list(equivalence))
    if input:
        from ..logic.equivalence import equivalence_predicates
        from ..model import MLN

        mln = MLN.from_file([Path(p) for p in split_list(input)])
        unknown = [p for p in preds if p not in mln.predicates]
        if unknown:
            raise OptionError(f"predicate {unknown[0]} is not declared in the model")
        eq |= set(equivalence_predicates(mln))
    else:
        eq |= {p for p in preds if symmetric_truth(true_atoms, p)}
    figures = evaluate(res, true_atoms, preds, eq)
    _print(figures)
    if stats_json is not None:
        write_text_atomic(stats_json, json.dumps(figures, indent=2, default=float) + "\n")


def _print(figures: dict) -> None:
    table = Table(box=None, pad_edge=False)
    table.add_column("predicate")
    cols = ["precision", "recall", "f1", "b3_f1", "muc_f1", "ceafe_f1", "pairwise_f1", "auc_pr", "cll"]
    present = [c for c in cols if any(c in f for f in figures["predicates"].values())]
    for c in present:
        table.add_column(c.replace("_", " "), justify="right")
    for p, f in figures["predicates"].items():
        table.add_row(p, *[f"{f[c]:.4f}" if c in f else "" for c in present])
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
