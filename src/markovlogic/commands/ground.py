"""``mln ground``: build the ground Markov network and report its size.

Prints atoms, ground clauses (hard/soft), blocks, components, grounding
seconds and peak memory; ``--stats-json`` writes the same figures as JSON,
``--dump`` every ground clause (``<weight> <literal> v <literal> ...``),
``--wcnf`` the weighted MaxSAT problem (2022 MaxSAT Evaluation format; see
``markovlogic.ground.export``). Files are written atomically.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Optional

import typer

from ..io import check_outputs, write_text_atomic
from .common import (MAX_CNF_HELP, MEMORY_HELP, OPEN_HELP, LazyConsole, apply_limits, check_world_flags, load_inputs,
                     peak_mb, split_list)

console = LazyConsole(stderr=True, highlight=False)


def ground_command(
    input: str = typer.Option(..., "-i", "--input", help="MLN file(s), comma-separated."),
    evidence: Optional[str] = typer.Option(None, "-e", "--evidence", help="Evidence .db file(s), comma-separated."),
    queries: Optional[str] = typer.Option(None, "-q", "--queries", help="Query predicates or atoms, comma-separated."),
    query_file: Optional[Path] = typer.Option(None, "-f", "--query-file", help="File of query predicates/atoms."),
    closed: Optional[str] = typer.Option(None, "-c", "--closed", help="Predicates to treat as closed-world."),
    open_: Optional[str] = typer.Option(None, "-o", "--open", help=OPEN_HELP),
    db_file: Optional[Path] = typer.Option(None, "--db-file", help="Keep the evidence database in this file (data larger than memory)."),
    stats_json: Optional[Path] = typer.Option(None, "--stats-json", help="Write the figures as JSON."),
    dump: Optional[Path] = typer.Option(None, "--dump", help="Write every ground clause, one per line."),
    wcnf: Optional[Path] = typer.Option(None, "--wcnf", help="Write the weighted MaxSAT problem (WCNF)."),
    wcnf_scale: float = typer.Option(1e6, "--wcnf-scale", help="WCNF weights are multiplied by this and rounded."),
    max_clauses: Optional[int] = typer.Option(None, "--max-clauses", help="Stop with an error past this many ground clauses."),
    blocks_as_clauses: bool = typer.Option(False, "--blocks-as-clauses", help="Exactly-one blocks as hard clauses."),
    memory_limit: Optional[str] = typer.Option(None, "--memory-limit", help=MEMORY_HELP),
    max_cnf_clauses: Optional[int] = typer.Option(None, "--max-cnf-clauses", help=MAX_CNF_HELP),
) -> None:
    """Ground a model: atoms, clauses, blocks, components, time and memory."""
    check_world_flags(closed, open_)
    apply_limits(max_cnf_clauses, memory_limit)
    check_outputs({"dump file": dump, "WCNF file": wcnf, "stats file": stats_json},
                  split_list(input) + split_list(evidence) + ([str(query_file)] if query_file else []))
    from .. import jit

    start = time.perf_counter()
    mln, dbs, query_list = load_inputs(input, evidence, queries, query_file)
    jit.watch()
    compiled = jit.compile_seconds()
    parsed = time.perf_counter()
    from rich.console import Console
    from rich.table import Table

    from ..ground import ground
    from ..ground.export import write_dump, write_wcnf

    net = ground(
        mln, dbs, query_list,
        closed=split_list(closed), open_=split_list(open_),
        db_path=str(db_file) if db_file else None,
        max_clauses=max_clauses, blocks_as_clauses=blocks_as_clauses,
        progress=console.is_terminal,
    )
    compiled = jit.compile_seconds() - compiled      # kernel compilation (first run), booked apart
    done = time.perf_counter() - compiled
    s = net.stats
    stats = {
        "atoms": net.n_atoms,
        "query_atoms": int(net.is_query.sum()),
        "clauses": net.n_clauses,
        "hard_clauses": int(net.is_hard.sum()),
        "soft_clauses": int((~net.is_hard).sum()),
        "blocks": net.n_blocks,
        "components": net.n_components,
        "parameters": net.n_params,
        "parse_seconds": round(parsed - start, 4),
        "ground_seconds": round(done - parsed, 4),
        "total_seconds": round(done - start, 4),
        "compile_seconds": round(compiled, 4) if compiled > 0 else None,
        "peak_mb": round(peak_mb(), 1),
        "network_bytes": int(net.nbytes()),
        "bytes_per_clause": round(net.nbytes() / max(net.n_clauses, 1), 1),
        "evidence_atoms": s.get("evidence_atoms"),
        "ground_rows": s.get("rows"),
        "merged_duplicates": s.get("merged"),
        "units_folded": s.get("units_folded"),
        "tautologies": s.get("tautologies"),
        "hard_violated_by_evidence": s.get("hard_violated_by_evidence"),
        "hard_unit_conflicts": s.get("hard_unit_conflicts"),
        "blocks_violated_by_evidence": s.get("blocks_violated_by_evidence"),
        "soft_false_by_evidence": s.get("soft_false_by_evidence"),
        "pruned_atoms": s.get("pruned_atoms"),
        "pruned_clauses": s.get("pruned_clauses"),
        "constant_score": net.constant_score,
    }
    if dump is not None:
        write_dump(net, dump)
    if wcnf is not None:
        write_wcnf(net, wcnf, scale=wcnf_scale)
    table = Table(title="ground network", show_header=False, box=None, pad_edge=False)
    for k, v in stats.items():
        if v is None:
            continue
        text = f"{v:,}" if isinstance(v, int) else (f"{v:.4g}" if isinstance(v, float) else str(v))
        table.add_row(k.replace("_", " "), text)
    for label, path in (("dump", dump), ("wcnf", wcnf), ("stats json", stats_json)):
        if path is not None:
            table.add_row(label, str(path))
    Console(highlight=False).print(table)
    if stats_json is not None:
        stats["seconds_by_stage"] = s.get("seconds")
        write_text_atomic(stats_json, json.dumps(stats, indent=2, default=float) + "\n")


def register(app: typer.Typer) -> None:
    app.command("ground")(ground_command)
