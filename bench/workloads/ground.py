"""Grounding workloads: files -> ``GroundNetwork`` (parse, evidence store,
one SQL query per clause template, merging, closure, network arrays).

The wall time the harness reports covers parsing and grounding; the figures
split them (``parse_s``, ``ground_s``) and give the network's size next to
Tuffy's and Alchemy's counts (``bench/peers.py``).
"""

from __future__ import annotations

import time
from pathlib import Path

from bench.harness import Skip, data_dir, workload

REPO = Path(__file__).resolve().parents[2]


def _figures(net, parse_s: float, ground_s: float) -> dict:
    s = net.stats
    return {
        "atoms": net.n_atoms,
        "query_atoms": int(net.is_query.sum()),
        "clauses": net.n_clauses,
        "hard_clauses": int(net.is_hard.sum()),
        "blocks": net.n_blocks,
        "components": net.n_components,
        "parameters": net.n_params,
        "ground_rows": s.get("rows"),
        "merged": s.get("merged"),
        "units_folded": s.get("units_folded"),
        "hard_violated_by_evidence": s.get("hard_violated_by_evidence"),
        "hard_unit_conflicts": s.get("hard_unit_conflicts"),
        "bytes_per_clause": round(net.nbytes() / max(net.n_clauses, 1), 1),
        "network_MB": round(net.nbytes() / 1e6, 1),
        "parse_s": round(parse_s, 4),
        "ground_s": round(ground_s, 4),
        "sql_s": s.get("seconds", {}).get("sql"),
        "merge_s": s.get("seconds", {}).get("merge"),
    }


def _run(mln_path: Path, db_paths: list[Path], queries: str, mln_text: str | None = None, **options) -> dict:
    from markovlogic import MLN, Database
    from markovlogic.ground import ground
    from markovlogic.lang.parser import parse_queries

    for p in [mln_path, *db_paths]:
        if not p.is_file():
            raise Skip(f"missing {p}")
    start = time.perf_counter()
    mln = MLN.from_string(mln_text, str(mln_path)) if mln_text is not None else MLN.from_file(mln_path)
    db = Database.from_file(db_paths, mln=mln)
    q = parse_queries(queries, mln)
    parsed = time.perf_counter()
    net = ground(mln, db, q, **options)
    done = time.perf_counter()
    return _figures(net, parsed - start, done - parsed)


def _tuffy(name: str) -> dict:
    d = data_dir() / "tuffy" / name
    if not d.is_dir():
        raise Skip(f"data folder not found: {d}")
    return _run(d / "prog.mln", [d / "evidence.db"], (d / "query.db").read_text())


@workload("ground-smoke", "ground tuffy/smoke (files -> network)", peers="smoke")
def ground_smoke() -> dict:
    return _tuffy("smoke")


@workload("ground-cse", "ground tuffy/cse (files -> network)", peers="cse-ground")
def ground_cse() -> dict:
    return _tuffy("cse")


@workload("ground-rc1000", "ground tuffy/rc1000 (files -> network)", peers="rc1000-ground")
def ground_rc1000() -> dict:
    return _tuffy("rc1000")


@workload("ground-class", "ground tuffy/class (files -> network)", peers="class-ground")
def ground_class() -> dict:
    return _tuffy("class")


@workload("ground-alchemy-example", "ground alchemy/example-model.mln, query Smokes,Cancer,Friends")
def ground_alchemy_example() -> dict:
    d = data_dir() / "alchemy"
    return _run(d / "example-model.mln", [d / "example-evidence.db"], "Smokes,Cancer,Friends")


def _cora(transitive: bool) -> dict:
    mln_path = REPO / "examples" / "cora-er" / "cora-er.mln"
    text = mln_path.read_text()
    if not transitive:
        text = "\n".join(line for line in text.splitlines() if "b2, b3" not in line)
    db = data_dir() / "cora" / "fold1" / "test-evidence.db"
    return _run(mln_path, [db], "SameBib,SameAuthor,SameTitle,SameVenue", mln_text=text)


@workload("ground-cora", "ground cora fold1 test evidence, examples/cora-er without transitivity")
def ground_cora() -> dict:
    return _cora(False)


@workload("ground-cora-transitive", "ground cora fold1 test evidence, examples/cora-er with hard SameBib transitivity",
          timeout=1800.0)
def ground_cora_transitive() -> dict:
    return _cora(True)
