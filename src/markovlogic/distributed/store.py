"""The evidence store shared with Ray workers as Parquet files.

The driver loads the evidence once (``Grounder``: constants, domains, one
table per predicate, in DuckDB) and writes every table of the store to a
shared folder with DuckDB's ``COPY ... TO ... (FORMAT PARQUET)``. A worker
gets the grounder itself without its connection (:func:`snapshot`: the
compiled templates, the atom and parameter registries with the query atoms,
the store's constant and predicate tables' descriptions; pickled with
cloudpickle, about 1 MB on tuffy/class) and opens a DuckDB connection of its
own whose tables are views over the Parquet files (:func:`open_grounder`):
it grounds its templates from the shared store and reads only the rows its
queries touch.

On a real cluster the folder must be one every node sees at the same path
(NFS, or an object store mounted with a FUSE driver); DuckDB also reads
``s3://`` and ``gs://`` URLs with its ``httpfs`` extension, which the same
views would accept.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SharedStore:
    """Where the store's tables are (one Parquet file each) and the pickled grounder."""

    folder: str
    tables: tuple[str, ...]
    grounder: bytes            # cloudpickle of the Grounder without its connection
    n_registered: int          # atoms in the registry when the snapshot was taken


def export_tables(con, folder: Path) -> tuple[str, ...]:
    """Every table of the connection's main schema to ``folder/<table>.parquet``."""
    names = [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE NOT temporary AND schema_name = 'main' ORDER BY table_name"
    ).fetchall()]
    for name in names:
        path = str(folder / f"{name}.parquet").replace("'", "''")
        con.execute(f"COPY {name} TO '{path}' (FORMAT PARQUET)")
    return tuple(names)


def snapshot(grounder, folder: str | Path) -> SharedStore:
    """Write the grounder's store to ``folder`` and pickle the grounder (its
    connection left out) for the workers."""
    from ray import cloudpickle

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    con = grounder.store.con
    tables = export_tables(con, folder)
    grounder.store.con = None
    try:
        blob = cloudpickle.dumps(grounder)
    finally:
        grounder.store.con = con
    return SharedStore(folder=str(folder), tables=tables, grounder=blob,
                       n_registered=int(grounder.registry.n_atoms))


def open_views(shared: SharedStore, threads: int = 1):
    """A DuckDB connection whose tables are views over the shared Parquet files."""
    import duckdb

    from ..store.store import _safe_optimizers

    con = duckdb.connect(":memory:", config={"preserve_insertion_order": False, "threads": int(threads)})
    _safe_optimizers(con)
    for name in shared.tables:
        path = str(Path(shared.folder) / f"{name}.parquet").replace("'", "''")
        con.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{path}')")
    return con


def open_grounder(shared: SharedStore, threads: int = 1):
    """The driver's grounder, on a worker, reading the shared store."""
    import pickle

    grounder = pickle.loads(shared.grounder)
    grounder.store.con = open_views(shared, threads)
    return grounder
