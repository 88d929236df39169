"""The benchmark harness: named workloads, run in fresh processes, reported
as medians beside other systems' figures.

Adding a workload (any module in ``bench/workloads/`` is imported)::

    from bench.harness import workload, data_dir, Skip

    @workload("ground-cse", "ground tuffy/cse", peers="tuffy/cse ground")
    def ground_cse() -> dict:
        net = ...                      # the work being measured
        return {"atoms": net.n_atoms, "clauses": net.n_clauses}

The harness calls the function once per run, each run in a new Python process
(so imports, compilation caches in memory and peak memory start from zero),
and records the run's wall time (of the call), the process's peak resident
memory (``ru_maxrss``: numpy and DuckDB allocate outside Python's heap, so
tracemalloc would miss them), its CPU time (all threads of the process: on a
shared machine less noisy than wall time) and the figures the function returns. Numbers are
summarised by their median over runs. A workload that cannot run here (data
missing...) raises ``Skip("why")``.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO_ROOT / "bench" / "results"


def data_dir() -> Path:
    """``../shared/data`` next to the repository (the workloads' inputs)."""
    return REPO_ROOT.parent / "shared" / "data"


class Skip(Exception):
    """Raised by a workload that cannot run on this machine (the message says why)."""


def ground_tuffy(name: str):
    """Parse and ground ``tuffy/<name>`` (prog.mln, evidence.db, query.db);
    returns the network and its figures (grounding seconds, sizes).
    Raises ``Skip`` when the data folder is missing."""
    from markovlogic import MLN, Database
    from markovlogic.api import ground_model

    folder = data_dir() / "tuffy" / name
    if not folder.is_dir():
        raise Skip(f"data folder not found: {folder}")
    start = time.perf_counter()
    mln = MLN.from_file([folder / "prog.mln"])
    db = Database.from_file([folder / "evidence.db"], mln=mln)
    net = ground_model(mln, db, (folder / "query.db").read_text().split())
    return net, {"ground_seconds": round(time.perf_counter() - start, 3),
                 "atoms": net.n_atoms, "clauses": net.n_clauses, "components": net.n_components}


@dataclass
class Workload:
    name: str
    description: str
    fn: Callable[[], dict]
    peers: str | None = None          # key into bench.peers.PEERS
    timeout: float = 1800.0


REGISTRY: dict[str, Workload] = {}


def workload(name: str, description: str = "", peers: str | None = None, timeout: float = 1800.0):
    """Register ``fn() -> dict`` as the workload ``name``."""

    def register(fn: Callable[[], dict]) -> Callable[[], dict]:
        if name in REGISTRY and REGISTRY[name].fn is not fn:
            raise ValueError(f"workload {name!r} registered twice")
        REGISTRY[name] = Workload(name, description or (fn.__doc__ or "").strip().split("\n")[0], fn, peers, timeout)
        return fn

    return register


def load_workloads() -> dict[str, Workload]:
    """Import every module of ``bench/workloads`` (they register themselves)."""
    import importlib
    import pkgutil

    from . import workloads

    for info in pkgutil.iter_modules(workloads.__path__):
        importlib.import_module(f"{workloads.__name__}.{info.name}")
    return REGISTRY


# ------------------------------------------------------------------ one run


def run_once_here(name: str) -> dict:
    """Run workload ``name`` in this process; return wall time, peak memory, figures."""
    load_workloads()
    wl = REGISTRY[name]
    cpu_start = time.process_time()
    start = time.perf_counter()
    try:
        figures = wl.fn() or {}
    except Skip as exc:
        return {"skipped": str(exc)}
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu_start  # all threads of this process
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux
    return {"wall_s": wall, "cpu_s": cpu, "peak_rss_mb": peak_kb / 1024.0, "figures": _jsonable(figures)}


def run_once(name: str, timeout: float) -> dict:
    """One run in a fresh ``python -m bench --child NAME`` process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")]))
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "bench", "--child", name],
            cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("BENCH-RESULT ")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
        return {"error": f"exit status {proc.returncode}", "stderr": "\n".join(tail)}
    return json.loads(lines[-1][len("BENCH-RESULT "):])


def _jsonable(figures: dict) -> dict:
    out = {}
    for key, value in figures.items():
        if hasattr(value, "item"):      # numpy scalars
            value = value.item()
        if not isinstance(value, (int, float, str, bool, type(None))):
            value = str(value)
        out[str(key)] = value
    return out


# ------------------------------------------------------------------ summary


@dataclass
class Summary:
    name: str
    description: str
    runs: list[dict] = field(default_factory=list)
    skipped: str | None = None
    error: str | None = None

    @property
    def ok_runs(self) -> list[dict]:
        return [r for r in self.runs if "wall_s" in r]

    def median(self, key: str) -> float | None:
        values = [r[key] for r in self.ok_runs]
        return statistics.median(values) if values else None

    def figures(self) -> dict:
        """Each figure's median over runs (numbers), or its last value (text)."""
        keys: list[str] = []
        for r in self.ok_runs:
            for k in r["figures"]:
                if k not in keys:
                    keys.append(k)
        out = {}
        for k in keys:
            values = [r["figures"][k] for r in self.ok_runs if k in r["figures"]]
            numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if numbers and len(numbers) == len(values):
                med = statistics.median(numbers)
                out[k] = int(med) if all(isinstance(v, int) for v in numbers) and med == int(med) else med
            else:
                out[k] = values[-1]
        return out

    def to_json(self) -> dict:
        return {
            "workload": self.name,
            "description": self.description,
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "commit": _git_commit(),
            "python": platform.python_version(),
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
            "repetitions": len(self.runs),
            "median_wall_s": self.median("wall_s"),
            "median_cpu_s": self.median("cpu_s"),
            "peak_rss_mb": max((r["peak_rss_mb"] for r in self.ok_runs), default=None),
            "figures": self.figures(),
            "runs": self.runs,
            "skipped": self.skipped,
            "error": self.error,
        }


def run_workload(wl: Workload, repetitions: int, in_process: bool = False, progress=None) -> Summary:
    summary = Summary(wl.name, wl.description)
    for i in range(repetitions):
        if progress is not None:
            progress(f"{wl.name}: run {i + 1}/{repetitions}")
        result = run_once_here(wl.name) if in_process else run_once(wl.name, wl.timeout)
        if "skipped" in result:
            summary.skipped = result["skipped"]
            break
        if "error" in result:
            summary.error = result["error"] + ("\n" + result["stderr"] if result.get("stderr") else "")
            break
        summary.runs.append(result)
    return summary


def previous_result(name: str, results_dir: Path = RESULTS_DIR) -> dict | None:
    path = results_dir / f"{name}.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def save_result(summary: Summary, results_dir: Path = RESULTS_DIR) -> Path:
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"{summary.name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(summary.to_json(), indent=2) + "\n")
    os.replace(tmp, path)
    return path


def _git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT,
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None
