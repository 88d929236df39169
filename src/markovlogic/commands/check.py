"""``mln check``: parse and check a model, its evidence and queries; print a summary.

    mln check -i a.mln[,b.mln] [-e x.db[,y.db]] [-q Smokes,Cancer(x)] [-f query.db]

Any mistake is reported by ``cli.main`` as ``file:line:col: message`` with the
offending line and a caret (exit status 2).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Optional

from typing import TYPE_CHECKING

import typer

from .common import MAX_CNF_HELP, MEMORY_HELP, apply_limits, load_inputs, split_list

if TYPE_CHECKING:
    from rich.console import Console

    from ..lang.ast import Query
    from ..model import MLN, Database


def summarize(mln: MLN, db: Database | None, queries: list[Query] | None) -> dict:
    """The figures ``mln check`` prints, as a plain dict (also used by tests).
    Evidence read into columns is counted in numpy (a million-line file in a
    second, not one object per atom)."""
    from ..lang.checks import evidence_domains
    from ..lang.printer import format_query, format_set_feature

    if db is not None and getattr(db, "columns", None) is not None:
        domain_sizes, per_pred = _column_counts(mln, db)
    else:
        domains = evidence_domains(mln, db)
        domain_sizes = {name: len(c) for name, c in domains.items()}
        per_pred = {}
        if db is not None:
            for atom in db.atoms:
                per_pred.setdefault(atom.atom.predicate, Counter())[atom.truth] += 1
    hard = sum(1 for f in mln.formulas if f.hard)
    soft = sum(1 for f in mln.formulas if f.weight is not None)
    return {
        "types": len(domain_sizes),
        "constants": sum(domain_sizes.values()),
        "domains": domain_sizes,
        "predicates": len(mln.predicates),
        "closed_predicates": sum(1 for p in mln.predicates.values() if p.closed),
        "functions": len(mln.functions),
        "formulas": len(mln.formulas),
        "hard": hard,
        "soft": soft,
        "unweighted": len(mln.formulas) - hard - soft,
        "fixed": sum(1 for f in mln.formulas if f.fixed),
        "evidence_atoms": len(db.atoms) if db is not None else 0,
        "function_values": len(db.function_values) if db is not None else 0,
        "evidence": {
            name: {"true": c[True], "false": c[False], "unknown": c[None]} for name, c in per_pred.items()
        },
        "queries": [format_query(q) for q in queries] if queries else [],
        "equivalences": sorted(n for n, p in mln.predicates.items() if getattr(p, "equivalence", False)),
        "set_features": [format_set_feature(f) for f in getattr(mln, "set_features", ())],
    }


def _column_counts(mln: MLN, db: Database) -> tuple[dict[str, int], dict[str, Counter]]:
    """Constants per type and truth values per predicate, from the columns:
    the same figures as :func:`evidence_domains` and a pass over the atoms."""
    import numpy as np

    cols = db.columns
    ids_by_type: dict[str, list] = {}
    per_pred: dict[str, Counter] = {}
    for (name, arity), rows in cols.preds.items():
        if not len(rows):
            continue
        counts = np.bincount(rows.truth.astype(np.int64) + 1, minlength=3)
        c = per_pred.setdefault(name, Counter())
        for truth, k in ((None, counts[0]), (False, counts[1]), (True, counts[2])):
            if k:
                c[truth] += int(k)
        decl = mln.predicates.get(name)
        if decl is None:
            continue
        for j, type_name in enumerate(decl.arg_types[:arity]):
            ids_by_type.setdefault(type_name, []).append(rows.args[:, j])
    extra_names: dict[str, set] = {}
    for fv in db.function_values:
        decl = mln.functions.get(fv.function)
        if decl is None:
            continue
        extra_names.setdefault(decl.return_type, set()).add(fv.value)
        for const, type_name in zip(fv.args, decl.arg_types):
            extra_names.setdefault(type_name, set()).add(const)
    sizes = {name: len(consts) for name, consts in mln.types.items()}
    index: dict[str, int] | None = None
    for type_name in list(ids_by_type) + [t for t in extra_names if t not in ids_by_type]:
        parts = ids_by_type.get(type_name, [])
        ids = np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
        known = set(mln.types.get(type_name, ())) | extra_names.get(type_name, set())
        if known and index is None:
            index = {c: k for k, c in enumerate(cols.consts)}
        known_ids = np.array(sorted({index[c] for c in known if c in index}) if known else [], dtype=np.int64)
        new = len(ids) - int(np.isin(ids, known_ids).sum()) if len(known_ids) else len(ids)
        sizes[type_name] = len(known) + new
    return sizes, {p: per_pred[p] for p in per_pred}


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def print_summary(summary: dict, console: Console, model_files: list[str], evidence_files: list[str]) -> None:
    from rich.table import Table

    s = summary
    console.print(f"[bold]model[/bold] {', '.join(model_files)}: OK")
    console.print(
        f"  {_n(s['types'], 'type')}, {_n(s['constants'], 'constant')}, {_n(s['predicates'], 'predicate')}"
        f" ({s['closed_predicates']} closed-world), {_n(s['functions'], 'function')}"
    )
    console.print(
        f"  {_n(s['formulas'], 'formula')}: {s['hard']} hard, {s['soft']} soft"
        f" ({s['fixed']} fixed), {s['unweighted']} without weight"
    )
    if s.get("equivalences"):
        console.print(f"  equivalence predicates (clusterings): {', '.join(s['equivalences'])}")
    if s.get("set_features"):
        console.print(f"  {_n(len(s['set_features']), 'set-level feature')}:")
        for text in s["set_features"]:
            console.print(f"    {text}", markup=False)
    if s["domains"]:
        table = Table(title=None, show_edge=False, pad_edge=False, box=None)
        table.add_column("type", style="cyan")
        table.add_column("constants", justify="right")
        for name, n in s["domains"].items():
            table.add_row(name, str(n))
        console.print(table)
    if evidence_files:
        console.print(
            f"[bold]evidence[/bold] {', '.join(evidence_files)}: OK, {_n(s['evidence_atoms'], 'atom')}"
            + (f", {_n(s['function_values'], 'function value')}" if s["function_values"] else "")
        )
        if s["evidence"]:
            table = Table(show_edge=False, pad_edge=False, box=None)
            table.add_column("predicate", style="cyan")
            table.add_column("true", justify="right")
            table.add_column("false", justify="right")
            table.add_column("unknown", justify="right")
            for name, c in s["evidence"].items():
                table.add_row(name, str(c["true"]), str(c["false"]), str(c["unknown"]))
            console.print(table)
    if s["queries"]:
        console.print(f"[bold]queries[/bold]: {', '.join(s['queries'])}: OK")


def register(app: typer.Typer) -> None:
    @app.command("check")
    def check(
        input: Annotated[str, typer.Option("-i", "--input", help="MLN file(s), comma-separated, read as one program.")],
        evidence: Annotated[
            Optional[str], typer.Option("-e", "--evidence", help="Evidence .db file(s), comma-separated.")
        ] = None,
        queries: Annotated[
            Optional[str],
            typer.Option("-q", "--queries", help="Query predicates or atoms, comma-separated: Smokes,Friends(x,Bob)."),
        ] = None,
        query_file: Annotated[
            Optional[Path], typer.Option("-f", "--query-file", help="A file of queries (one or more per line).")
        ] = None,
        max_cnf_clauses: Annotated[Optional[int], typer.Option("--max-cnf-clauses", help=MAX_CNF_HELP)] = None,
        memory_limit: Annotated[Optional[str], typer.Option("--memory-limit", help=MEMORY_HELP)] = None,
    ) -> None:
        """Parse and check a model (and evidence, queries); print a summary."""
        apply_limits(max_cnf_clauses, memory_limit)
        mln, dbs, query_list = load_inputs(input, evidence, queries, query_file)
        from ..logic.cnf import compile_mln
        from ..logic.equivalence import equivalence_predicates

        compile_mln(mln)                     # CNF bounds and clause-level errors are reported here too
        if mln.set_features:
            from ..cluster.api import check_set_features

            check_set_features(mln, equivalence_predicates(mln))
        db = dbs[0] if dbs else None
        summary = summarize(mln, db, query_list)
        from rich.console import Console

        console = Console(highlight=False, soft_wrap=True)
        print_summary(summary, console, split_list(input), split_list(evidence))
