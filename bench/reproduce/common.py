"""Shared parts of ``python -m bench.reproduce``: running the project's own
commands in fresh processes (wall, CPU and peak memory of each), the run's
record (commands, seeds, timings) and small table helpers."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import contextlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bench.harness import REPO_ROOT

MLN_PREFIX = [sys.executable, "-c", "import sys; from markovlogic.cli import main; sys.exit(main(sys.argv[1:]))"]


@dataclass
class Step:
    wall: float
    cpu: float
    peak_mb: float


@dataclass
class Run:
    """One table's run: where it works, what it ran and how long it took."""

    work: Path                      # scratch folder (data it prepares, models, results)
    log: Path
    quick: bool = False             # the smoke-test slice
    jobs: int = 1                   # work units run at once (each a chain of fresh processes)
    slots: object = None            # a semaphore shared by tables run side by side (``--jobs N``,
                                    # several tables): each command holds one of its N slots while it runs
    commands: list[str] = field(default_factory=list)
    cpu: float = 0.0
    wall: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def map(self, fn, items: list) -> list:
        """``fn`` over ``items``, ``jobs`` at a time (threads that wait on child processes)."""
        if self.jobs <= 1 or len(items) <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            return list(pool.map(fn, items))

    @contextlib.contextmanager
    def slot(self):
        """Hold one of the shared slots (none to hold when the table runs alone)."""
        if self.slots is None:
            yield
            return
        self.slots.acquire()
        try:
            yield
        finally:
            self.slots.release()

    def mln(self, args: list[str], note: str | None = None) -> Step:
        """``mln ARGS`` in a fresh process (raises on a non-zero exit)."""
        shown = "mln " + " ".join(_short(a) for a in args).replace(str(self.work), "$WORK")
        if self.quick:
            return self._inprocess([str(a) for a in args], shown, note)
        return self.process(MLN_PREFIX + [str(a) for a in args], shown, note)

    def _inprocess(self, args: list[str], shown: str, note: str | None) -> Step:
        """The smoke slices: the same command through ``markovlogic.cli.main`` in
        this process (no start-up per command)."""
        import contextlib
        import io

        from markovlogic.cli import main

        with self.slot():
            start, cpu0 = time.perf_counter(), time.process_time()
            with open(self.log, "a") as out, contextlib.redirect_stdout(io.StringIO()) as o, \
                    contextlib.redirect_stderr(io.StringIO()) as e:
                code = main(args)
                out.write(f"$ {shown}\n{o.getvalue()}{e.getvalue()}")
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
        with self._lock:
            self.cpu += cpu
            self.wall += wall
            line = shown + (f"    # {note}" if note else "")
            if line not in self.commands:
                self.commands.append(line)
        if code != 0:
            raise RuntimeError(f"{shown[:80]} failed (exit {code}); see {self.log}")
        return Step(round(wall, 2), round(cpu, 2), 0)

    def python(self, code: str, shown: str) -> Step:
        """Python code in a fresh process (``shown``: how the record names it)."""
        return self.process([sys.executable, "-c", code], shown)

    def process(self, argv: list[str], shown: str, note: str | None = None) -> Step:
        env = dict(os.environ)
        src = str(REPO_ROOT / "src")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (src, str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        log = self.log.with_suffix(f".{threading.get_ident()}.log") if self.jobs > 1 else self.log
        with self.slot(), open(log, "a") as out:       # the wall clock starts once a slot is free
            start = time.perf_counter()
            out.write(f"$ {shown}\n")
            out.flush()
            proc = subprocess.Popen(argv, stdout=out, stderr=out, env=env, cwd=REPO_ROOT)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        cpu = usage.ru_utime + usage.ru_stime
        with self._lock:
            self.cpu += cpu
            self.wall += wall
            line = shown + (f"    # {note}" if note else "")
            if line not in self.commands:
                self.commands.append(line)
        if code != 0:
            raise RuntimeError(f"{shown[:80]} failed (exit {code}); see {log}")
        return Step(round(wall, 2), round(cpu, 2), round(usage.ru_maxrss / 1024.0))


def _short(arg) -> str:
    """A path argument as the record shows it: relative to the repository,
    ``$WORK/...`` under the scratch folder, ``../shared/...`` for the data."""
    s = str(arg)
    for root, name in ((REPO_ROOT.parent / "shared", "../shared"), (REPO_ROOT, ".")):
        s = s.replace(str(root) + "/", name + "/")
    return shlex.quote(s) if " " in s else s


def pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{100 * x:.{digits}f}"


def num(x, digits: int = 1) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, int):
        return f"{x:,}"
    return f"{x:,.{digits}f}"


def md_table(header: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def load_json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None
