"""Grounding with the current threads: DuckDB's own (``SET threads``).

The grounder's queries are DuckDB's to parallelise (its joins and scans are
vectorised and multi-threaded). :func:`ground_network` is
:func:`markovlogic.ground.ground` with the connection's threads set to the
current call's ``threads`` (DuckDB's default, the machine's cores, outside
an API call), through the grounder's public ``Grounder`` and ``network``.
"""

from __future__ import annotations

from ..ground.network import GroundNetwork
from .options import duckdb_threads

_NETWORK_OPTIONS = ("blocks_as_clauses", "fold_units")


def set_threads(con, threads: int | None) -> None:
    if threads is not None:
        con.execute(f"SET threads = {int(threads)}")


def ground_network(mln, dbs, queries, **options) -> GroundNetwork:
    """``ground(mln, dbs, queries, **options)`` with DuckDB on the current threads."""
    from ..ground.grounder import Grounder

    net_options = {k: options.pop(k) for k in _NETWORK_OPTIONS if k in options}
    g = Grounder(mln, dbs, queries, **options)
    try:
        set_threads(g.store.con, duckdb_threads())
        return g.network(**net_options)
    finally:
        g.close()
