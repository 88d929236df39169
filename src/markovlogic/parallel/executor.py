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

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor


class ThreadExecutor:
    """``map`` on a pool of ``threads`` threads (inline when 1)."""

    def __init__(self, threads: int) -> None:
        self.workers = max(1, int(threads))

    def map(self, fn: Callable, args: Sequence[tuple]) -> list:
        args = list(args)
        if self.workers == 1 or len(args) <= 1:
            return [fn(*a) for a in args]
        with ThreadPoolExecutor(max_workers=min(self.workers, len(args)),
                                thread_name_prefix="markovlogic") as pool:
            futures = [pool.submit(fn, *a) for a in args]
            try:
                return [f.result() for f in futures]
            except BaseException:
                for f in futures:
                    f.cancel()
                raise


def executor_for(options) -> ThreadExecutor:
    """The executor of :class:`~markovlogic.parallel.options.ParallelOptions`:
    Ray's when a cluster is named, else threads."""
    if options.on_ray:
        from ..distributed.cluster import ray_executor

        return ray_executor(options)
    return ThreadExecutor(options.n_threads)
