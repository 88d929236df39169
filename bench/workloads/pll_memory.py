"""Generative learning's memory: the network path against counting while grounding.

``mln learn -g`` on UW-CSE fold 1 (the model of ``learn_uwcse.py``:
``tuffy/cse/prog.mln`` with every weight 0, ``--ne advisedBy``, fold 1's
``train.db``), each path in a fresh process through the CLI:

* ``network``: ground the whole training network, then build the
  pseudo-likelihood's events x parameters matrix from it (learn/pll.py; the
  path before issue 30 item 4, forced by turning off the streamed one);
* ``streamed``: the same matrix counted chunk by chunk while the grounder
  streams each template's rows, no clause kept (learn/pll_stream.py; what
  ``-g`` does now).

Per path: peak resident memory of the process (``ru_maxrss``), CPU seconds
(user + sys, all threads) and wall seconds of the whole command (imports,
parsing, kernel loading and grounding included), and the largest absolute
difference of the learned weights between the two. A third process,
``floor``, runs the same command on a 3-atom model and database: the memory
every ``mln learn`` process needs before any grounding (imports of numpy,
scipy, numba, DuckDB and pandas, numba's runtime, the DuckDB store).

    PYTHONPATH=src python -m bench.workloads.pll_memory [--fold 1] [--json OUT.json]

Measured 2026-11-27 18:56-19:23 UTC (issue 30 item 4), fold 1, four runs of
the command above, load average 4.4-8.4 (2 cores shared with two other
helpers' jobs), kernels compiled beforehand; range over the runs:

    path       peak MB      CPU s (user+sys)   wall s        weights max |diff|
    network    2,118-2,153  11.6-13.1          12.5-26.8
    streamed     340-362     4.9-6.3            5.4-11.1     5.0e-12
    floor        307-325     2.1-2.6            2.4-5.0

(network: 6,057,187 merged ground clauses held; streamed: 12,404,710 ground
rows counted chunk by chunk and dropped; both 52,441 events, 94 weights, 49
L-BFGS iterations, the same weights to 5e-12 and the same test AUC-PR with
learn_uwcse.py, 0.4168.) The streamed peak is 20-55 MB above the floor,
which is the price of the process itself: imports of numpy, scipy, numba,
DuckDB 144 MB and pandas 70 MB, numba's runtime at its first kernel 45 MB,
the DuckDB store 48 MB. The issue's target of 300 MB is below that floor: it
needs a leaner process (pandas is imported by DuckDB's chunked fetch
``fetch_df_chunk``; pyarrow's record batches import pandas too and peaked
higher, 435 MB), not leaner learning.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import REPO_ROOT, Skip, data_dir, workload

CHILD = """
import sys
if sys.argv[1] == "network":
    import markovlogic.learn.api as api
    api._stream_pll = lambda *a: None          # the network path (learn/pll.py)
from markovlogic.cli import main
code = main(sys.argv[2:])
sys.exit(code)
"""


def _run(path: str, argv: list[str]) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env_path = str(REPO_ROOT / "src")
    import os

    env = dict(os.environ, PYTHONPATH=env_path + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", CHILD, path, *argv], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{path} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return {"cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2),
            "wall_s": round(wall, 2)}


def _weights(text: str) -> list[float]:
    return [float(line.split()[0]) for line in text.splitlines() if re.match(r"^-?[0-9]", line)]


def measure(fold: int = 1) -> dict:
    from bench.workloads.learn_uwcse import zeroed_program

    train = data_dir() / "uwcse" / f"fold{fold}" / "train.db"
    if not train.is_file():
        raise Skip(f"missing {train}")
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        prog = tmp_path / "prog.mln"
        prog.write_text(zeroed_program())
        tiny_mln, tiny_db = tmp_path / "tiny.mln", tmp_path / "tiny.db"
        tiny_mln.write_text("P(thing)\nQ(thing)\n0 P(x) => Q(x)\n")
        tiny_db.write_text("P(A)\nQ(A)\n!P(B)\n")
        texts = {}
        for path, (mln, db, ne) in (("floor", (tiny_mln, tiny_db, [])),
                                    ("network", (prog, train, ["--ne", "advisedBy"])),
                                    ("streamed", (prog, train, ["--ne", "advisedBy"]))):
            out, stats = tmp_path / f"{path}.mln", tmp_path / f"{path}.json"
            argv = ["learn", "-g", "-i", str(mln), "-t", str(db), "-o", str(out), *ne, "--stats-json", str(stats)]
            row = _run(path, argv)
            figures = json.loads(stats.read_text())
            row["peak_mb"] = figures["peak_mb"]
            for k in ("atoms", "clauses", "ground_rows", "events", "weights", "iterations", "streamed"):
                if k in figures:
                    row[k] = figures[k]
            rows[path] = row
            texts[path] = out.read_text()
    a, b = _weights(texts["network"]), _weights(texts["streamed"])
    rows["streamed"]["weights_max_abs_diff"] = max(abs(x - y) for x, y in zip(a, b)) if len(a) == len(b) else None
    return rows


@workload("pll-memory-uwcse", "UW-CSE fold 1 mln learn -g: network path vs counting while grounding (peak memory)",
          peers="cse-learn", timeout=1800.0)
def pll_memory() -> dict:
    rows = measure(1)
    return {f"{path}_{k}": v for path, row in rows.items() for k, v in row.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fold", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    rows = measure(args.fold)
    print(f"{'path':10} {'peak MB':>8} {'CPU s':>7} {'wall s':>7}  weights max |diff|")
    for path, row in rows.items():
        diff = row.get("weights_max_abs_diff")
        print(f"{path:10} {row['peak_mb']:8.0f} {row['cpu_s']:7.2f} {row['wall_s']:7.2f}  "
              f"{'' if diff is None else f'{diff:.2g}'}")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
