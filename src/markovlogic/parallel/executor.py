"""Running independent tasks: on threads here, or as Ray tasks on a cluster.

An executor maps a module-level function over a list of argument tuples and
returns the results in order, whatever order they finish in (the answers
must not depend on timing). :class:`ThreadExecutor` runs them on a pool of
threads: the compiled kernels (numba, ``nogil``), HiGHS (through scipy),
CP-SAT and DuckDB release the GIL, so threads use both cores without copying
the network. The Ray executor (:mod:`markovlogic.distributed.cluster`) has
the same interface and sends each task to a worker process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence


class ThreadExecutor:
    """``map`` on ``threads`` daemon threads (inline when 1).

    Daemon threads, waited for with short timed joins: Ctrl-C reaches the
    calling thread at once (a compiled kernel on a worker cannot be
    interrupted; the process exits without waiting for it, as the CLI does
    with exit status 130), where a ``ThreadPoolExecutor`` would make the
    interpreter wait for its workers."""

    def __init__(self, threads: int) -> None:
        self.workers = max(1, int(threads))

    def map(self, fn: Callable, args: Sequence[tuple]) -> list:
        args = list(args)
        if self.workers == 1 or len(args) <= 1:
            return [fn(*a) for a in args]
        results: list = [None] * len(args)
        errors: list = [None] * len(args)
        lock = threading.Lock()
        next_index = [0]

        def work() -> None:
            while True:
                with lock:
                    i = next_index[0]
                    next_index[0] += 1
                if i >= len(args):
                    return
                try:
                    results[i] = fn(*args[i])
                except BaseException as exc:       # re-raised in the caller, in task order
                    errors[i] = exc

        threads = [threading.Thread(target=work, name=f"markovlogic-{k}", daemon=True)
                   for k in range(min(self.workers, len(args)))]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.1)
        for exc in errors:
            if exc is not None:
                raise exc
        return results


def executor_for(options) -> ThreadExecutor:
    """The executor of :class:`~markovlogic.parallel.options.ParallelOptions`:
    Ray's when a cluster is named, else threads."""
    if options.on_ray:
        from ..distributed.cluster import ray_executor

        return ray_executor(options)
    return ThreadExecutor(options.n_threads)
