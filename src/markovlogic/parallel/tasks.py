"""Independent per-database work of one API call, on the current threads.

Learning with several training databases (``multiple_databases``) keeps one
inference engine per database: each iteration asks every engine for its
expected counts (or MAP world) at the same weights, and the answers add up.
:func:`each` runs those calls on the threads of the current
:class:`~.options.ParallelOptions`; each engine has its own chain and
random state, so the answers do not depend on the thread count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .executor import ThreadExecutor
from .options import current


def each(fn: Callable, items: Sequence) -> list:
    """``[fn(x) for x in items]``, on the current threads (in order)."""
    items = list(items)
    threads = current().n_threads if len(items) > 1 else 1
    return ThreadExecutor(threads).map(fn, [(x,) for x in items])
