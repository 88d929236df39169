"""End to end, as a user runs it: ``mln infer`` from files to a written result.

Each run is a fresh process, so the figures include imports, parsing,
grounding, kernel loading (numba cache) and inference: the number to set
beside Tuffy's and Alchemy's "total" columns. Cutting-plane inference (CPI)
runs here too, since it grounds lazily through SQL and has no separate
grounding phase.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from bench.harness import Skip, data_dir, workload


def _infer(name: str, *extra: str) -> dict:
    from markovlogic.cli import main

    folder = data_dir() / "tuffy" / name
    if not folder.is_dir():
        raise Skip(f"data folder not found: {folder}")
    with tempfile.TemporaryDirectory() as tmp:
        stats_path = Path(tmp) / "stats.json"
        code = main([
            "infer", "-i", str(folder / "prog.mln"), "-e", str(folder / "evidence.db"),
            "-f", str(folder / "query.db"), "-r", str(Path(tmp) / "out.result"),
            "--stats-json", str(stats_path), *extra,
        ])
        if code != 0:
            return {"exit_status": code}
        stats = json.loads(stats_path.read_text())
    keep = ("atoms", "clauses", "ground_seconds", "infer_seconds", "cost", "hard_violated", "optimal",
            "gap", "iterations", "groundings_added", "samples", "samples_per_second", "flips_per_second")
    out = {k: stats[k] for k in keep if stats.get(k) is not None}
    for k, v in list(out.items()):
        if isinstance(v, float):
            out[k] = round(v, 4)
    return out


@workload("e2e-cse-mws", "mln infer --map --method maxwalksat on tuffy/cse (default: 20 tries x 50k flips), files to result", peers="cse-map")
def e2e_cse_mws() -> dict:
    return _infer("cse", "--map", "--method", "maxwalksat")


@workload("e2e-cse-cpi", "mln infer --map --method cpi on tuffy/cse, 60 s cap", peers="cse-map")
def e2e_cse_cpi() -> dict:
    return _infer("cse", "--map", "--method", "cpi", "--max-seconds", "60")


@workload("e2e-cse-ilp", "mln infer --map --method ilp on tuffy/cse (presolve + cliques), files to result",
          peers="cse-map")
def e2e_cse_ilp() -> dict:
    return _infer("cse", "--map", "--method", "ilp", "--max-seconds", "60")


@workload("e2e-cse-cpsat", "mln infer --map --method cpsat on tuffy/cse (presolve + cliques), files to result",
          peers="cse-map")
def e2e_cse_cpsat() -> dict:
    return _infer("cse", "--map", "--method", "cpsat", "--max-seconds", "60")


@workload("e2e-rc1000-ilp", "mln infer --map --method ilp on tuffy/rc1000 (hard rules contradict the evidence: "
          "exit status 2 with the conflict), files to error", peers="rc1000-map")
def e2e_rc1000_ilp() -> dict:
    return _infer("rc1000", "--map", "--method", "ilp", "--max-seconds", "60")


@workload("e2e-class-ilp", "mln infer --map (ILP, exact) on tuffy/class, files to result", peers="class-map")
def e2e_class_ilp() -> dict:
    return _infer("class", "--map", "--method", "ilp")


@workload("e2e-class-cpi", "mln infer --map --method cpi on tuffy/class, files to result", peers="class-map")
def e2e_class_cpi() -> dict:
    return _infer("class", "--map", "--method", "cpi")


@workload("e2e-class-mws", "mln infer --map --method maxwalksat on tuffy/class, files to result", peers="class-map")
def e2e_class_mws() -> dict:
    return _infer("class", "--map", "--method", "maxwalksat")


@workload("e2e-cse-mcsat", "mln infer (MC-SAT, 1000 samples) on tuffy/cse, files to result", peers="cse-mcsat")
def e2e_cse_mcsat() -> dict:
    return _infer("cse", "--samples", "1000")


@workload("e2e-class-mcsat", "mln infer (MC-SAT, 1000 samples) on tuffy/class, files to result", peers="class-mcsat")
def e2e_class_mcsat() -> dict:
    return _infer("class", "--samples", "1000")


@workload("e2e-cora-cpi", "mln infer --map --method cpi on Cora fold 1 (examples/cora-er, hard transitivity), 600 s cap",
          timeout=1200.0)
def e2e_cora_cpi() -> dict:
    """The full network has 17.8M ground clauses (3.8 GB to build, see
    ground-cora-transitive); CPI instantiates a few hundred thousand."""
    return _cora_cpi("cora-er.mln", "SameBib,SameTitle,SameAuthor,SameVenue")


@workload("e2e-cora-pairwise-cpi",
          "mln infer --map --method cpi on Cora fold 1 (examples/cora-er/cora-pairwise.mln, learned weights)",
          timeout=1200.0)
def e2e_cora_pairwise_cpi() -> dict:
    return _cora_cpi("cora-pairwise.mln", "SameBib")


def _cora_cpi(model: str, queries: str) -> dict:
    from markovlogic.cli import main

    from bench.harness import REPO_ROOT

    fold = data_dir() / "cora" / "fold1"
    if not fold.is_dir():
        raise Skip(f"data folder not found: {fold}")
    with tempfile.TemporaryDirectory() as tmp:
        stats_path, result = Path(tmp) / "stats.json", Path(tmp) / "out.result"
        code = main([
            "infer", "-i", str(REPO_ROOT / "examples" / "cora-er" / model),
            "-e", str(fold / "test-evidence.db"), "-q", queries,
            "--map", "--method", "cpi", "--max-seconds", "600", "-r", str(result), "--stats-json", str(stats_path),
        ])
        if code != 0:
            return {"exit_status": code}
        stats = json.loads(stats_path.read_text())
    keep = ("atoms", "clauses", "hard_clauses", "infer_seconds", "cost", "hard_violated", "optimal", "gap",
            "iterations", "groundings_added")
    return {k: (round(stats[k], 4) if isinstance(stats[k], float) else stats[k]) for k in keep if stats.get(k) is not None}
