"""Compiled kernels: what compiling them costs, booked apart, and said once.

numba compiles a kernel the first time it is called with new argument types
and keeps the machine code in its cache (``__pycache__`` beside the source),
so each kernel is compiled once per installation (again after an upgrade);
later processes load it from the cache. The first ``make demo`` therefore
spends most of its time compiling, and that time used to be booked as
grounding or inference time (``infer seconds 64`` next to ``samples per
second 3.8e4``).

:func:`watch` registers a listener for numba's ``numba:compile`` events,
which fire on cache misses only (a kernel loaded from the cache costs no
event). :func:`compile_seconds` is the time this process has spent
compiling so far; the API subtracts what falls in each stage from its
``ground_seconds`` / ``infer_seconds`` and reports it as
``compile_seconds``. :func:`on_first_compile` sets what to do when the first
compilation of the process starts: the command line prints one line,
``compiling kernels, first run only``.

Nothing here imports numba until :func:`watch` is called, and every path that
calls it imports numba anyway.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

NOTICE = "compiling kernels, first run only (they are cached for later runs; this takes a minute or two)"

_lock = threading.Lock()
_installed = False
_total = 0.0
_depth = 0
_started = 0.0
_first: Callable[[], None] | None = None
_noticed = False


def on_first_compile(callback: Callable[[], None] | None) -> None:
    """Call ``callback()`` (once per process) when the first kernel compilation starts."""
    global _first
    _first = callback


def compile_seconds() -> float:
    """Seconds this process has spent compiling kernels since :func:`watch` was first called
    (the compilation running now included)."""
    with _lock:
        return _total + (time.perf_counter() - _started if _depth else 0.0)


def watch() -> None:
    """Start counting compile time (idempotent)."""
    global _installed
    if _installed:
        return
    with _lock:
        if _installed:
            return
        from numba.core import event

        class _Listener(event.Listener):
            def on_start(self, ev) -> None:
                global _depth, _started, _noticed
                notify = None
                with _lock:
                    if _depth == 0:
                        _started = time.perf_counter()
                    _depth += 1
                    if not _noticed:
                        _noticed = True
                        notify = _first
                if notify is not None:
                    try:
                        notify()
                    except Exception:       # noqa: BLE001 - a notice must never break a compilation
                        pass

            def on_end(self, ev) -> None:
                global _depth, _total
                with _lock:
                    _depth = max(0, _depth - 1)
                    if _depth == 0:
                        _total += time.perf_counter() - _started

        event.register("numba:compile", _Listener())
        _installed = True


class Stages:
    """Wall time of the stages of one call, less the compile time in each::

        stages = Stages()            # starts the clock
        ...ground...
        ground_s = stages.lap()      # seconds since the start, compile excluded
        ...infer...
        infer_s = stages.lap()
        stages.compile               # compile seconds over both
    """

    def __init__(self) -> None:
        watch()
        self._t = time.perf_counter()
        self._c = compile_seconds()
        self.compile = 0.0

    def lap(self) -> float:
        t, c = time.perf_counter(), compile_seconds()
        spent, compiled = t - self._t, c - self._c
        self._t, self._c = t, c
        self.compile += compiled
        return max(0.0, spent - compiled)


def book(answer, before: float) -> None:
    """Take the compile time since ``before`` (a :func:`compile_seconds`
    reading) out of an answer that did not book it itself: from its
    ``infer_seconds`` first, then its ``ground_seconds``; report it in
    ``stats['compile_seconds']``."""
    if "compile_seconds" in answer.stats:
        return
    spent = compile_seconds() - before
    if spent <= 0:
        return
    answer.stats["compile_seconds"] = spent
    take = min(spent, answer.infer_seconds)
    answer.infer_seconds -= take
    answer.ground_seconds = max(0.0, answer.ground_seconds - (spent - take))
