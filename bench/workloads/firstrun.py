"""A new user's first day, measured: ``python -m bench.workloads.firstrun [--json OUT.json]``.

For each revision (default: ``57d4e2e``, the commit issue 29's work started
from, then ``HEAD``), in one run, one after the other:

* ``cold_demo_s``: a clean clone into a temporary folder, then ``make demo``
  as README says: the virtual environment, the install (pip's download cache
  as this machine has it: the wheels are not downloaded again, they are
  unpacked and installed), the numba kernels compiled on first use, and the
  demo's three commands (check, MAP, MC-SAT marginals);
* ``venv_mb``: the size of ``.venv`` after it;
* ``warm_map_s``, ``warm_mcsat_s``: one ``mln infer`` process on the smokers
  example, MAP (exact ILP) and marginals (MC-SAT, 1000 samples), with the
  kernels compiled (the median of ``--repeat`` processes);
* ``help_s``: ``mln --help``; ``bad_path_s``: ``mln infer`` with a mistyped
  model path (the error, exit status 2).

Wall seconds are the keys above; each has a ``*_cpu_s`` twin (user + system
CPU of the process and its children), because the machine is shared and wall
time includes waiting for the other jobs. ``load_1min`` is the load average
when each revision started. Nothing here is a test: the figures are for the
issue and README.

The targets of issue 29: cold demo under 120 s, ``.venv`` under 400 MB,
warm MAP and MC-SAT under 0.5 s, ``--help`` under 0.3 s, a mistyped path
under 0.5 s.

Measured 2026-11-27 on this 2-core machine, shared with two other jobs (load
3.9-6.7; wall above CPU where the others took the cores), pip's cache warm,
``--repeat 5``:

| figure | 57d4e2e (before) | after | target |
|---|---|---|---|
| cold ``make demo``, wall (CPU) | 102.8 s (54.7) | 55.3 s (45.4) | < 120 s |
| ``.venv`` | 1,066 MB | 613 MB | < 400 MB: out of reach |
| warm smokers MAP, wall (CPU) | 2.67 s (1.76) | 1.67 s (1.58) | < 0.5 s: out of reach |
| warm smokers MC-SAT, wall (CPU) | 2.46 s (1.51) | 1.48 s (1.41) | < 0.5 s: out of reach |
| ``mln --help`` | 0.50 s (0.35) | 0.10 s (0.10) | < 0.3 s |
| mistyped path | 1.42 s (1.00) | 0.13 s (0.13) | < 0.5 s |

Measured again 2026-11-27 18:49 UTC (issue 29, small runs without numba or
SciPy: ``infer/tiny.py``, ``jit.kernel``, small evidence files read as text),
``python -m bench.workloads.firstrun --revs 5aac724,HEAD --repeat 5``, the
machine shared with a long benchmark (load 3.8-4.9 on 2 cores: every wall
figure, the floor included, is about 1.5-2x its CPU):

| figure | 5aac724 (before) | 7f6188a (after) | target |
|---|---|---|---|
| cold ``make demo``, wall (CPU) | 66.3 s (41.4) | 44.1 s (28.9): no kernel compiled | < 120 s |
| warm smokers MAP, wall (CPU) | 3.15 s (1.57) | 0.59 s (0.40) | < 0.5 s |
| warm smokers MC-SAT, wall (CPU) | 2.90 s (1.49) | 0.65 s (0.45) | < 0.5 s |
| ``mln --help`` | 0.28 s (0.14) | 0.14 s (0.09) | < 0.3 s |
| mistyped path | 0.27 s (0.13) | 0.11 s (0.11) | < 0.5 s |
| floor: NumPy, DuckDB, lark, typer imported | 0.55 s (0.27) | 0.50 s (0.28) | |

``--warm-only`` (the shared interpreter, no install), same day, ``--repeat 7``,
load 3.9-4.2: MAP 2.13 s (1.41) -> 0.59 s (0.43), MC-SAT 1.86 s (1.28) ->
0.68 s (0.47). A warm small call now costs the floor (0.28 s CPU: the
interpreter, NumPy 0.1 s, DuckDB and a connection 0.06 s, typer, lark) plus
about 0.13-0.17 s: the package's own imports (0.04 s), reading the files
(0.03 s), grounding in DuckDB (0.06 s) and inference (MAP by enumeration
1 ms, MC-SAT's 1,100 steps 0.03 s). Under 0.5 s wall holds on a quiet
machine (the CPU figures); with the other benchmark running, the floor alone
took 0.50 s wall.

At a lower load (1.4-2.5), 2026-11-27 19:45 UTC, ``--warm-only --repeat 7``
(before = the default 57d4e2e): warm MAP 1.50 s (1.46 CPU) -> **0.45 s**
(0.45), MC-SAT 1.29 s (1.27) -> **0.48 s** (0.48), ``mln --help`` 0.31 ->
0.10 s, a mistyped path 0.80 -> 0.12 s, floor 0.38 -> 0.29 s: every warm
target of issue 29 met in wall time at that load.

Why two targets were out of reach with the present dependencies (before the
tiny paths): the
runtime's own wheels are 492 MB before pandas (llvmlite 172 MB, SciPy 143,
NumPy 73, DuckDB 69, numba 35); and a process that loads one cached numba
kernel takes 0.7 s (numba's import 0.3 s, its first cache load 0.4 s, the
target context and its registries), before NumPy, DuckDB, SciPy's HiGHS
(0.25 s to import ``scipy.optimize``) and the work. Under 0.5 s needs a path
for tiny networks that loads neither numba nor SciPy.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BEFORE = "57d4e2e"
SMOKERS = ["-i", "examples/smokers/smokers.mln", "-e", "examples/smokers/evidence.db", "-q", "Smokes,Cancer"]
KEYS = ("cold_demo_s", "venv_mb", "warm_map_s", "warm_mcsat_s", "help_s", "bad_path_s")


def _run(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds of the process and its children, exit status, output)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out, _ = proc.communicate()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode, out


def _du_mb(path: Path) -> float:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_blocks * 512
            except OSError:
                pass
    return total / 2**20


def _median(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def measure(rev: str, repeat: int) -> dict:
    sha = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    load = os.getloadavg()[0]
    tmp = Path(tempfile.mkdtemp(prefix="firstrun-"))
    clone = tmp / "markovlogic"
    try:
        subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "checkout", "--quiet", sha], cwd=clone, check=True)
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")}
        env["PYTHON"] = shutil.which("python3") or sys.executable
        wall, cpu, code, out = _run(["make", "demo"], clone, env)
        if code != 0:
            raise RuntimeError(f"make demo failed at {rev}:\n{out[-3000:]}")
        figures: dict = {"rev": rev, "sha": sha[:10], "load_1min": round(load, 2),
                         "cold_demo_s": round(wall, 1), "cold_demo_cpu_s": round(cpu, 1),
                         "venv_mb": round(_du_mb(clone / ".venv"), 1),
                         "compile_notice": "compiling kernels" in out}
        mln = str(clone / ".venv" / "bin" / "mln")
        floor = [_run([str(clone / ".venv" / "bin" / "python"), "-c", FLOOR], clone, env)[:2] for _ in range(repeat)]
        figures["floor_s"], figures["floor_cpu_s"] = (round(x, 3) for x in _median(floor))
        for key, args, status in (("warm_map_s", ["infer", *SMOKERS, "--map"], 0),
                                  ("warm_mcsat_s", ["infer", *SMOKERS], 0),
                                  ("help_s", ["--help"], 0),
                                  ("bad_path_s", ["infer", "-i", "exmples/smokers/smokers.mln", "-q", "Smokes"], 2)):
            runs = []
            for _ in range(repeat):
                w, c, code, out = _run([mln, *args], clone, env)
                if code != status:
                    raise RuntimeError(f"{key} at {rev}: exit status {code}, expected {status}:\n{out[-2000:]}")
                runs.append((w, c))
            w, c = _median(runs)
            figures[key] = round(w, 3)
            figures[key.replace("_s", "_cpu_s")] = round(c, 3)
        return figures
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# what any small run pays before its own work: the interpreter, NumPy, DuckDB (and a connection), lark, typer
FLOOR = "import numpy, duckdb, lark, typer; duckdb.connect(':memory:')"
WARM = (("warm_map_s", ["infer", *SMOKERS, "--map"], 0),
        ("warm_mcsat_s", ["infer", *SMOKERS], 0),
        ("help_s", ["--help"], 0),
        ("bad_path_s", ["infer", "-i", "exmples/smokers/smokers.mln", "-q", "Smokes"], 2))


def measure_warm(rev: str, repeat: int) -> dict:
    """The warm figures only (``--warm-only``): the revision's source checked
    out into a temporary folder and run by this interpreter (its environment:
    no install, no ``make demo``), ``python -m markovlogic.cli``; each command
    runs once untimed first (numba's cache and the ``.pyc`` files written),
    then ``repeat`` times, interleaved with the other commands."""
    sha = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    load = os.getloadavg()[0]
    tmp = Path(tempfile.mkdtemp(prefix="firstrun-"))
    clone = tmp / "markovlogic"
    try:
        subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "checkout", "--quiet", sha], cwd=clone, check=True)
        # as a new user's shell: bytecode written, nothing of this process's PYTHONPATH
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")}
        env["PYTHONPATH"] = str(clone / "src")
        mln = [sys.executable, "-m", "markovlogic.cli"]
        for key, args, status in WARM:
            _run([*mln, *args], clone, env)
        figures: dict = {"rev": rev, "sha": sha[:10], "load_1min": round(load, 2), "mode": "warm-only"}
        runs: dict = {key: [] for key, _, _ in WARM}
        for _ in range(repeat):
            for key, args, status in WARM:
                w, c, code, out = _run([*mln, *args], clone, env)
                if code != status:
                    raise RuntimeError(f"{key} at {rev}: exit status {code}, expected {status}:\n{out[-2000:]}")
                runs[key].append((w, c))
        floor = [_run([sys.executable, "-c", FLOOR], clone, env)[:2] for _ in range(repeat)]
        figures["floor_s"], figures["floor_cpu_s"] = (round(x, 3) for x in _median(floor))
        for key, values in runs.items():
            w, c = _median(values)
            figures[key] = round(w, 3)
            figures[key.replace("_s", "_cpu_s")] = round(c, 3)
        return figures
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.workloads.firstrun", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--revs", default=f"{BEFORE},HEAD", help=f"revisions, comma-separated (default {BEFORE},HEAD)")
    parser.add_argument("--repeat", type=int, default=5, help="processes per warm figure (the median is kept)")
    parser.add_argument("--warm-only", action="store_true",
                        help="only the warm figures, with this interpreter's environment (no clean install)")
    args = parser.parse_args(argv)
    result: dict = {"date": time.strftime("%Y-%m-%d %H:%M"), "cores": os.cpu_count(),
                    "machine": "shared: other jobs ran meanwhile; *_cpu_s are the CPU seconds",
                    "pip_cache": "warm (wheels not downloaded again)", "revisions": []}
    for rev in args.revs.split(","):
        figures = (measure_warm if args.warm_only else measure)(rev.strip(), args.repeat)
        result["revisions"].append(figures)
        print(json.dumps(figures), flush=True)
    if len(result["revisions"]) == 2:
        result["before"], result["after"] = result["revisions"]
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
