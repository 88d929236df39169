"""Where the test suite's first-run time goes: ``python -m bench.compile_profile [--json OUT.json] [-- PYTEST ARGS]``.

Runs pytest (by default the suite as ``make test`` does: ``-n 2 --dist
loadfile``) with numba's cache in a new empty folder, so every kernel is
compiled as on a clean clone, and this module loaded as a pytest plugin in
each worker. Each worker books, from numba's ``numba:compile`` events, the
seconds spent compiling each kernel (the outermost compilation only: a
kernel's callees compiled on the way count in its figure), and the
seconds of each test file. The report: the wall time, each worker's test
and compile seconds, compile seconds per module and per kernel, and the
test files by time (their compile included). Processes pytest does not
run itself (Ray's workers, the CLI subprocesses some tests start) compile
too and are not booked: their time shows only in their test file's.

Nothing here is a test: it is the instrument for the suite's time (CI's
target is under 10 minutes) and for the kernels' first-run compile.

Measured 2026-11-28 on a quiet 2-core machine, the whole suite: ``bash
.ci/run`` on a clean clone with a plugin that books as this one does
(the draft of this module, loaded through ``PYTEST_ADDOPTS``): pytest 783
s, CI 861 s wall; the workers compiled for 385 s of
their 1,502 s of tests, 201 s (52 %) of it the clustering kernels
(``cluster.chain.run`` 41 s, ``learn.merge_rank.walk`` 24,
``cluster.agglomerative.agglomerate`` 23, the clusterings' SampleRank loop
21, ``cluster.kernels.merge_delta`` 17, ...). A small entry point such as
``agglomerate`` costs 23 s because numba generates machine code for each
entry point together with everything it calls: every clustering entry point
compiles the merge, split and move kernels again. The suite with every
kernel compiled runs in 533 s wall.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV_OUT = "MARKOVLOGIC_COMPILE_PROFILE_DIR"
DEFAULT_ARGS = ["-n", "2", "--dist", "loadfile"]


# ------------------------------------------------------------------ the pytest plugin (in each worker)

_compile: collections.Counter = collections.Counter()
_count: collections.Counter = collections.Counter()
_files: collections.Counter = collections.Counter()
_start = [0.0]


def pytest_configure(config) -> None:
    if not os.environ.get(ENV_OUT):
        return
    from numba.core import event

    stack: list[float] = []

    class _Listener(event.Listener):
        def on_start(self, ev) -> None:
            stack.append(time.perf_counter())

        def on_end(self, ev) -> None:
            spent = time.perf_counter() - stack.pop()
            if stack:
                return
            func = getattr(ev.data.get("dispatcher"), "py_func", None)
            name = f"{func.__module__}.{func.__qualname__}" if func is not None else "?"
            _compile[name] += spent
            _count[name] += 1

    event.register("numba:compile", _Listener())
    _start[0] = time.time()


def pytest_runtest_logreport(report) -> None:
    if os.environ.get(ENV_OUT):
        _files[report.nodeid.split("::")[0]] += report.duration


def pytest_unconfigure(config) -> None:
    out = os.environ.get(ENV_OUT)
    if not out:
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    record = {"worker": worker, "seconds": time.time() - _start[0], "compile": dict(_compile),
              "compiles": dict(_count), "files": dict(_files)}
    Path(out, f"{worker}-{os.getpid()}.json").write_text(json.dumps(record))


# ------------------------------------------------------------------ the report

def summarize(records: list[dict], wall: float) -> dict:
    """One report from the workers' records. Under pytest-xdist the controller
    (``main``) receives every worker's test reports and compiles nothing: it is
    left out; without xdist it is the only record."""
    workers = [r for r in records if r["worker"] != "main"] or [r for r in records if r["worker"] == "main"]
    kernels: collections.Counter = collections.Counter()
    files: collections.Counter = collections.Counter()
    for r in workers:
        kernels.update(r["compile"])
        files.update(r["files"])
    modules: collections.Counter = collections.Counter()
    for name, s in kernels.items():
        modules[name.rsplit(".", 1)[0]] += s
    return {
        "wall_s": wall,
        "workers": [{"worker": r["worker"], "test_s": sum(r["files"].values()),
                     "compile_s": sum(r["compile"].values())} for r in workers],
        "test_s": sum(files.values()),
        "compile_s": sum(kernels.values()),
        "compile_by_module": dict(modules.most_common()),
        "compile_by_kernel": dict(kernels.most_common()),
        "test_files": dict(files.most_common()),
    }


def render(report: dict, top: int = 15) -> str:
    lines = [f"wall {report['wall_s']:.0f} s; tests {report['test_s']:.0f} s over "
             f"{len(report['workers'])} worker(s), of which compiling {report['compile_s']:.0f} s"]
    for w in report["workers"]:
        lines.append(f"  {w['worker']}: tests {w['test_s']:.0f} s, compiling {w['compile_s']:.0f} s")
    for title, key in (("compile seconds by module", "compile_by_module"),
                       ("compile seconds by kernel", "compile_by_kernel"),
                       ("test files by seconds (compile included)", "test_files")):
        lines.append(title + ":")
        lines += [f"  {s:7.1f}  {name}" for name, s in list(report[key].items())[:top]]
    return "\n".join(lines)


def _fail(message: str) -> None:
    print(f"bench.compile_profile: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    pytest_args = []
    if "--" in argv:
        k = argv.index("--")
        argv, pytest_args = argv[:k], argv[k + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", type=Path, help="write the report here as JSON")
    ap.add_argument("--top", type=int, default=15, help="rows per table (default 15)")
    a = ap.parse_args(argv)
    if a.json is not None and not a.json.parent.is_dir():
        _fail(f"--json: folder {a.json.parent} does not exist")
    if a.json is not None and a.json.exists() and a.json.suffix != ".json":
        _fail(f"--json: {a.json} exists and is not a .json file; not overwriting it")
    if a.top < 1:
        _fail(f"--top must be at least 1, not {a.top}")
    with tempfile.TemporaryDirectory(prefix="compile-profile-") as tmp:
        cache, out = Path(tmp, "numba-cache"), Path(tmp, "records")
        cache.mkdir()
        out.mkdir()
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), **{ENV_OUT: str(out)})
        cmd = [sys.executable, "-m", "pytest", "-p", "bench.compile_profile", "-q",
               *(pytest_args or DEFAULT_ARGS)]
        start = time.time()
        rc = subprocess.run(cmd, env=env).returncode
        wall = time.time() - start
        records = [json.loads(p.read_text()) for p in sorted(out.glob("*.json"))]
    report = summarize(records, wall) | {"pytest_args": pytest_args or DEFAULT_ARGS, "pytest_exit": rc}
    print(render(report, a.top))
    if a.json is not None:
        a.json.write_text(json.dumps(report, indent=1))
    return 0 if rc == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
