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

import sys
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
    """Start counting compile time (idempotent). numba is not imported here: if
    it is not loaded yet, the counting starts when it is (a run on a small
    network may never load it)."""
    global _hooked
    if _installed or _hooked:
        return
    if "numba" in sys.modules:
        _register()
        return
    with _lock:
        if not _hooked:
            _hooked = True
            sys.meta_path.insert(0, _AfterNumbaImport())


_hooked = False


class _AfterNumbaImport:
    """Registers the compile listener as soon as numba's import completes."""

    def find_spec(self, name, path=None, target=None):
        if name != "numba":
            return None
        import importlib.util

        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        spec = importlib.util.find_spec(name)
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module) -> None:
            run(module)
            _register()

        loader.exec_module = exec_module
        return spec


def _register() -> None:
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


# ------------------------------------------------------------------ kernels that load numba only when worth it

SMALL_ELEMENTS = 4096
"""A :func:`kernel` called while numba is not loaded, on arrays of at most this
many elements in all, runs as plain Python: loading numba and its cached
machine code costs a process about 0.5 s (import 0.16 s, then the target
context's registries on the first cached kernel), the Python loop over a few
thousand elements a few milliseconds (bench/workloads/firstrun.py)."""

_mode: str | None = None        # None: by size; "python" / "numba": forced (tests compare the two)
_numba_loaded = False


class Kernel:
    """A numba kernel whose compilation (or cache load) is deferred to its first
    large call; see :func:`kernel`."""

    def __init__(self, func: Callable, options: dict) -> None:
        self.py_func = func
        self._options = options
        self._dispatcher = None
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__
        self.__wrapped__ = func

    def dispatcher(self):
        """The numba dispatcher (numba imported on first use)."""
        global _numba_loaded
        if self._dispatcher is None:
            import numba

            self._dispatcher = numba.njit(**self._options)(self.py_func)
            _numba_loaded = True
        return self._dispatcher

    @property
    def _numba_type_(self):
        # another kernel calls this one: numba types the global as our dispatcher
        from numba.core import types

        return types.Dispatcher(self.dispatcher())

    def __call__(self, *args):
        if _mode == "python" or (_mode is None and not _numba_loaded and "numba" not in sys.modules
                                 and _small(args)):
            return self.py_func(*args)
        return self.dispatcher()(*args)

    def __repr__(self) -> str:
        return f"<kernel {self.__module__}.{self.__qualname__}>"


def _small(args) -> bool:
    total = 0
    for a in args:
        size = getattr(a, "size", None)
        if size is not None:
            total += size
            if total > SMALL_ELEMENTS:
                return False
    return True


def kernel(func: Callable | None = None, **options):
    """``numba.njit(**options)`` without importing numba until a call needs it:
    a call on small arrays while numba is not loaded yet runs the same source
    as Python (identical results: the kernels here draw no random numbers);
    any other call, and every call once numba is loaded, runs compiled. Other
    kernels may call a :class:`Kernel` (numba types it as its dispatcher)."""
    if func is None:
        return lambda f: Kernel(f, options)
    return Kernel(func, options)


def note_numba_loaded() -> None:
    """Record that numba's machinery is loaded (a plain numba kernel ran):
    later :func:`kernel` calls run compiled, whatever their size."""
    global _numba_loaded
    _numba_loaded = True


class force_mode:
    """``with force_mode("python"):`` (or ``"numba"``) runs every :func:`kernel`
    that way (tests compare the two paths on the same inputs)."""

    def __init__(self, mode: str | None) -> None:
        if mode not in (None, "python", "numba"):
            raise ValueError(mode)
        self.mode = mode

    def __enter__(self):
        global _mode
        self._saved, _mode = _mode, self.mode
        return self

    def __exit__(self, *exc) -> None:
        global _mode
        _mode = self._saved
