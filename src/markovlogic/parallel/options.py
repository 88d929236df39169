"""Where the work runs: the options of both cores and of a Ray cluster.

:class:`ParallelOptions` is declared once and used by the CLI (``--threads``,
``--ray-address``/``--ray``), the API (``threads=``, ``ray_address=`` of
``MLN.map``, ``MLN.infer``, ``MLN.learn``) and the docs. The options are a
resource, not a model setting: with a given seed and thread count the answers
are deterministic, and in distribution they are the serial path's (see
:mod:`markovlogic.parallel.map` and :mod:`markovlogic.parallel.marginals` for
what is split and how).

The active options are kept in a context variable while one API call runs
(:func:`using`), so that the dispatch points deep in inference and learning
(``solve_map``'s callers, the learners' per-database loops, the grounder's
DuckDB connection) read them without threading one more argument through
every signature.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from dataclasses import dataclass, replace

from ..errors import OptionError

#: networks with fewer ground clauses than this are solved serially: splitting
#: a small network costs more than it saves (thread start, copies of the
#: arrays). Tests set it to 0 to exercise the parallel path on tiny networks.
DEFAULT_MIN_CLAUSES = 5_000


def machine_cores() -> int:
    """The cores this process may run on (the affinity mask, not the machine's total)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class ParallelOptions:
    """Both cores and a Ray cluster.

    ``threads``: worker threads on this machine (None: the machine's cores;
    1: the serial path, bit for bit). ``ray_address``: run on a Ray cluster:
    ``"auto"`` (the cluster this machine belongs to), ``"HOST:PORT"`` or
    ``"ray://HOST:PORT"`` (its head node), or ``"local"`` (start a local
    cluster of ``ray_workers`` worker processes, stopped at the end).
    ``ray_workers``: worker processes of a local cluster (None: the machine's
    cores), and the number of parts the work is cut into on a remote one
    (None: the cluster's CPUs). ``shared_dir``: the folder for the Parquet
    parts of distributed grounding; on a real cluster it must be a path every
    node sees (NFS, a mounted bucket); None: a temporary folder (fine on one
    machine). ``min_clauses``: networks smaller than this are solved
    serially. ``connect_seconds``: how long to wait for a Ray head node
    before giving up with a clear error."""

    threads: int | None = None
    ray_address: str | None = None
    ray_workers: int | None = None
    shared_dir: str | None = None
    min_clauses: int = DEFAULT_MIN_CLAUSES
    connect_seconds: float = 5.0

    def check(self) -> "ParallelOptions":
        """The options with ``threads`` resolved, or :class:`OptionError`."""
        t = self.threads
        if t is not None and (isinstance(t, bool) or not isinstance(t, int) or t < 1):
            raise OptionError(f"threads must be a positive integer, got {t!r}")
        w = self.ray_workers
        if w is not None and (isinstance(w, bool) or not isinstance(w, int) or w < 1):
            raise OptionError(f"ray_workers must be a positive integer, got {w!r}")
        if isinstance(self.min_clauses, bool) or not isinstance(self.min_clauses, int) or self.min_clauses < 0:
            raise OptionError(f"min_clauses must be a non-negative integer, got {self.min_clauses!r}")
        if not isinstance(self.connect_seconds, (int, float)) or not self.connect_seconds > 0:
            raise OptionError(f"connect_seconds must be positive, got {self.connect_seconds!r}")
        a = self.ray_address
        if a is not None:
            if not isinstance(a, str) or not a.strip():
                raise OptionError(f"ray_address must be 'auto', 'local', HOST:PORT or ray://HOST:PORT, got {a!r}")
            from ..distributed.cluster import check_address

            check_address(a.strip())
        return replace(self, threads=machine_cores() if t is None else int(t),
                       ray_address=None if a is None else a.strip())

    @property
    def n_threads(self) -> int:
        return machine_cores() if self.threads is None else int(self.threads)

    @property
    def on_ray(self) -> bool:
        return self.ray_address is not None


SERIAL = ParallelOptions(threads=1)

_current: contextvars.ContextVar[ParallelOptions | None] = contextvars.ContextVar("markovlogic_parallel",
                                                                                default=None)


def current() -> ParallelOptions:
    """The options of the API call running in this thread (serial outside one)."""
    return _current.get() or SERIAL


def duckdb_threads() -> int | None:
    """DuckDB threads for grounding queries: the current call's threads, or
    None outside an API call (DuckDB's own default: the machine's cores)."""
    options = _current.get()
    return None if options is None else options.n_threads


@contextlib.contextmanager
def using(options: ParallelOptions):
    """Make ``options`` (checked) the current ones for the duration of the block."""
    token = _current.set(options)
    try:
        yield options
    finally:
        _current.reset(token)


def pop_options(options: dict) -> ParallelOptions:
    """Take ``threads``, ``ray_address``, ``ray_workers`` and ``shared_dir``
    out of an API call's keyword arguments, as checked :class:`ParallelOptions`
    (``parallel=ParallelOptions(...)`` may be given whole instead)."""
    given = options.pop("parallel", None)
    fields = {k: options.pop(k) for k in ("threads", "ray_address", "ray_workers", "shared_dir") if k in options}
    if given is not None:
        if not isinstance(given, ParallelOptions):
            raise OptionError(f"parallel must be a ParallelOptions, got {type(given).__name__}")
        if fields:
            raise OptionError(f"give either parallel= or {', '.join(fields)}, not both")
        return given.check()
    return ParallelOptions(**fields).check()


# the command line's help, shared by ``mln infer`` and ``mln learn``
THREADS_HELP = ("Threads on this machine (default: its cores; 1: the serial path). Components, tries, chains, "
                "training databases and the merge-ranking learner's held-out splits run in parallel; DuckDB "
                "grounds with as many threads.")
RAY_HELP = ("Run on a Ray cluster: 'auto' (the cluster this machine belongs to), HOST:PORT or ray://HOST:PORT "
            "(its head node), or 'local' (start a local cluster). Grounding is partitioned by template into "
            "Parquet parts, components are solved on the workers (pip install 'markovlogic[ray]').")
RAY_WORKERS_HELP = "Ray: worker processes of a local cluster (default: the cores), or parts to cut the work into."
SHARED_DIR_HELP = "Ray: folder for the Parquet parts, seen by every node (default: a temporary folder)."
