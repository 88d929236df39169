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
scipy, numba and DuckDB, numba's runtime, the DuckDB store; pandas before
the Arrow reader, below).

    PYTHONPATH=src python -m bench.workloads.pll_memory [--fold 1] [--json OUT.json] [--against REV] [--dn]

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
learn_uwcse.py, 0.4168.) At that time the streamed peak was 20-55 MB above a floor of imports
(numpy, scipy, numba, DuckDB 144 MB and pandas 70 MB, imported by DuckDB's
chunked fetch ``fetch_df_chunk``), numba's runtime (45 MB) and the DuckDB
store (48 MB).

Since then grounding reads DuckDB's Arrow stream through ``nanoarrow``
(``ground/stream.py``: no pandas or pyarrow, one 131,072-row batch at a
time) and ``markovlogic.eval`` imports pandas only where it factorizes
strings, so ``mln learn`` never imports pandas. Measured before and after in
one run (``PYTHONPATH=src python -m bench.workloads.pll_memory --against
b93b709``, 2026-11-27 20:49 UTC, load 3.4-5.0 with two other jobs):

    path               peak MB   CPU s (user+sys)   wall s   weights max |diff| (to network)
    floor@b93b709        329       3.02              4.35
    floor                239       1.43              2.17
    streamed@b93b709     377       8.23             12.63     5e-12
    streamed             272       4.59              6.81     5e-12
    network            2,058      11.31             17.13

Three runs gave streamed 272-273 MB and floor 238-239 MB: the issue's 300 MB
is met with the same weights. (With 1,048,576-row chunks gathered from
several batches the streamed peak was 337 MB; grounding social N=300k took
the same CPU time, 5.4-6.4 s, with either size and 70-90 MB less peak than
the pandas path.) ``--against REV`` runs the floor and streamed paths of REV
(a temporary git worktree) in the same run.

``--dn`` adds the discriminative learner (issue 30's last memory bullet:
under 1 GB). Measured before and after in one run
(``python -m bench.workloads.pll_memory --against 54e27a5 --dn``,
2026-11-28 00:37-00:46 UTC, quiet machine, load ~1):

    path               peak MB   CPU s (user+sys)   wall s   weights max |diff|
    floor@54e27a5        262       2.71              2.42
    floor                239       1.59              1.28
    streamed@54e27a5     310       8.27              7.56     1.4e-12 (to network)
    streamed             267       4.57              3.82     1.4e-12 (to network)
    network              737       7.84              7.15
    dn@54e27a5         2,702     158.98            146.42
    dn                 1,007     110.80            110.44     3.2e-12 (to dn@54e27a5)

``dn`` fell from 2,702 to 1,007 MB in that run (MiB, like every figure
here), and the network path to 737 MB (2,058 MB in the 2026-11-27 run above;
this run has no network@REV row): the pseudo-likelihood's events by one
compiled pass over the flipped atoms' clauses instead of per-literal numpy
arrays, the starting point computed before the MC-SAT chain is built, and a
leaner chain (see ``infer/mcsat.py``: compiled set-up, unread arrays dropped,
weights written from the parameters).

Then (2026-11-28 02:07-02:16 UTC, ``python -m bench.workloads.pll_memory
--against a322f0c --dn``, load 3.4-3.7 with a helper's grounding runs; each
path of each version first run once untimed, so that neither run compiles
kernels; before that warm-up the cold revision's ``dn`` measured 1,204 MB):

    path               peak MB   CPU s (user+sys)   wall s   weights max |diff|
    floor@a322f0c        239       1.68              1.38
    floor                239       1.57              1.26
    streamed@a322f0c     269       4.35              3.65     1.4e-12 (to network)
    streamed             268       4.09              3.38     1.4e-12 (to network)
    network              730       7.74              7.00
    dn@a322f0c         1,024     108.77            108.12
    dn                   912     107.09            106.42     0 (to dn@a322f0c)

``dn`` under 1 GB (912 MiB, 0.96 GB), identical weights: a chain restart
reuses its state's arrays instead of holding two states, the chain's
normalisation never builds the literal -> clause, atom -> literal and clause
maps it drops (``lean``), the feature counter's clause lists are int32 and
the chain's strong clauses stay in their scratch array.
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


def _run(path: str, argv: list[str], src: Path | None = None) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    env_path = str(src or REPO_ROOT / "src")
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


def measure(fold: int = 1, against: str | None = None, dn: bool = False) -> dict:
    """Rows per path; with ``against`` (a git revision) the floor and streamed
    paths are also run on that revision's source (a temporary worktree), in
    the same run, as ``floor@REV`` and ``streamed@REV``. ``dn``: also the
    discriminative learner (``mln learn`` without ``-g``: diagonal Newton,
    MC-SAT expectations, 100 iterations of 500 samples, from the
    pseudo-likelihood start), as ``dn`` (and ``dn@REV``), its weights compared
    with ``dn@REV``'s."""
    from bench.workloads.learn_uwcse import zeroed_program

    train = data_dir() / "uwcse" / f"fold{fold}" / "train.db"
    if not train.is_file():
        raise Skip(f"missing {train}")
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        runs = [("floor", None), ("network", None), ("streamed", None)]
        if against:
            tree = tmp_path / "against"
            subprocess.run(["git", "-C", str(REPO_ROOT), "worktree", "add", "--detach", "-q", str(tree), against],
                           check=True)
            runs = [("floor", tree / "src"), ("floor", None), ("streamed", tree / "src"), ("streamed", None),
                    ("network", None)]
        if dn:
            runs += [("dn", tree / "src")] if against else []
            runs += [("dn", None)]
        prog = tmp_path / "prog.mln"
        prog.write_text(zeroed_program())
        tiny_mln, tiny_db = tmp_path / "tiny.mln", tmp_path / "tiny.db"
        tiny_mln.write_text("P(thing)\nQ(thing)\n0 P(x) => Q(x)\n")
        tiny_db.write_text("P(A)\nQ(A)\n!P(B)\n")
        texts = {}

        def argv_of(path, out, stats, warm=False):
            mln, db, ne = (tiny_mln, tiny_db, []) if path == "floor" else (prog, train, ["--ne", "advisedBy"])
            return ["learn", *([] if path == "dn" else ["-g"]), "-i", str(mln), "-t", str(db), "-o", str(out),
                    *ne, "--stats-json", str(stats), *(["--iterations", "1"] if warm and path == "dn" else [])]

        try:
            # each path of each version once first, untimed (dn for one iteration): a revision's temporary
            # worktree starts with no compiled kernels, and a process that compiles them holds LLVM's memory
            # (about 200 MB more for dn), which is not what either version needs
            for path, src in dict.fromkeys(runs):
                _run(path, argv_of(path, tmp_path / "warm.mln", tmp_path / "warm.json", warm=True), src)
            for path, src in runs:
                name = path if src is None else f"{path}@{against}"
                out, stats = tmp_path / f"{path}.mln", tmp_path / f"{path}.json"
                row = _run(path, argv_of(path, out, stats), src)
                figures = json.loads(stats.read_text())
                row["peak_mb"] = figures["peak_mb"]
                for k in ("atoms", "clauses", "ground_rows", "events", "weights", "iterations", "streamed"):
                    if k in figures:
                        row[k] = figures[k]
                rows[name] = row
                texts[name] = out.read_text()
        finally:
            if against:
                subprocess.run(["git", "-C", str(REPO_ROOT), "worktree", "remove", "--force", str(tree)],
                               check=False)
    a = _weights(texts["network"])
    for name in texts:
        if name.startswith("streamed"):
            b = _weights(texts[name])
            rows[name]["weights_max_abs_diff"] = max(abs(x - y) for x, y in zip(a, b)) if len(a) == len(b) else None
    if "dn" in texts and f"dn@{against}" in texts:
        a, b = _weights(texts[f"dn@{against}"]), _weights(texts["dn"])
        rows["dn"]["weights_max_abs_diff"] = max(abs(x - y) for x, y in zip(a, b)) if len(a) == len(b) else None
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
    parser.add_argument("--against", default=None, metavar="REV",
                        help="also run the floor and streamed paths on this git revision, in the same run")
    parser.add_argument("--dn", action="store_true",
                        help="also the discriminative learner (dn; with --against, on both revisions; "
                             "its weights' difference is to REV's dn)")
    args = parser.parse_args(argv)
    rows = measure(args.fold, args.against, args.dn)
    print(f"{'path':18} {'peak MB':>8} {'CPU s':>7} {'wall s':>7}  weights max |diff|")
    for path, row in rows.items():
        diff = row.get("weights_max_abs_diff")
        print(f"{path:18} {row['peak_mb']:8.0f} {row['cpu_s']:7.2f} {row['wall_s']:7.2f}  "
              f"{'' if diff is None else f'{diff:.2g}'}")
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
