"""Shared by the subcommands: loading model files, evidence files, queries; peak memory."""

from __future__ import annotations

import resource
from pathlib import Path

from typing import TYPE_CHECKING

from ..errors import OptionError

if TYPE_CHECKING:
    from ..lang.ast import Query
    from ..model import MLN, Database


class LazyConsole:
    """A rich ``Console`` made on first use: importing rich costs tens of
    milliseconds that ``mln --help`` and argument errors need not pay."""

    def __init__(self, **kwargs) -> None:
        self._kwargs = kwargs
        self._console = None

    @property
    def real(self):
        """The rich ``Console`` itself (made now if need be)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._kwargs)
        return self._console

    def __getattr__(self, name):
        return getattr(self.real, name)


def peak_mb() -> float:
    """Peak resident memory of this process so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def split_list(value: str | None) -> list[str]:
    """``"a.mln,b.mln"`` -> ``["a.mln", "b.mln"]`` (empty items dropped)."""
    if not value:
        return []
    return [item.strip() for item in value.split(",") if item.strip()]


def _existing(paths: list[str], what: str) -> list[Path]:
    out = []
    for p in paths:
        path = Path(p)
        if not path.is_file():
            raise OptionError(f"{what} file not found: {p}")
        out.append(path)
    return out


def load_inputs(
    input: str,
    evidence: str | None,
    queries: str | None,
    query_file: Path | None,
) -> tuple[MLN, list[Database], list[Query] | None]:
    """Parse the model, the evidence (several files form one world) and the queries.
    Every path is checked before anything is parsed (a mistyped path is
    reported at once)."""
    mln_paths = _existing(split_list(input), "MLN")
    if not mln_paths:
        raise OptionError("no MLN file given (-i)")
    db_paths = _existing(split_list(evidence), "evidence")
    if query_file is not None:
        _existing([str(query_file)], "query")
    from .. import progress
    from ..lang.parser import parse_queries
    from ..model import MLN, Database

    with progress.task("reading the model"):
        mln = MLN.from_file(list(mln_paths))
    with progress.task("reading the evidence"):
        dbs = [Database.from_file(list(db_paths), mln=mln)] if db_paths else [Database()]
    query_list: list[Query] | None = None
    if queries:
        query_list = parse_queries(queries, mln)
    if query_file is not None:
        qpath = _existing([str(query_file)], "query")[0]
        query_list = (query_list or []) + parse_queries(qpath.read_text(), mln, filename=str(qpath))
    return mln, dbs, query_list


OPEN_HELP = ("Predicates to treat as open-world, comma-separated (Alchemy's infer -o; not an output file: "
             "the result file is -r).")


def check_world_flags(closed: str | None, open_: str | None) -> None:
    """``-o`` is Alchemy's open-world list in ``infer`` and ``ground`` but the
    output file in ``learn`` and ``derive``: a path given to it is refused at
    once, with the flag that writes a result."""
    for flag, value in (("-c/--closed", closed), ("-o/--open", open_)):
        for item in split_list(value):
            if "/" in item or "." in item or "\\" in item:
                raise OptionError(
                    f"{flag} takes predicate names, not a file ({item!r}); in mln infer and mln ground -o is "
                    "Alchemy's open-world list: write the result with -r FILE (learn and derive take -o FILE)")


MAX_CNF_HELP = ("Largest number of CNF clauses one formula may expand to (default 100,000); "
                "a formula beyond it is refused before it is converted.")


MEMORY_HELP = ("Memory budget, e.g. 8G or 500M (default: 60% of the available memory); work that would "
               "exceed it stops with an error naming the formula and the estimate.")


def apply_limits(max_cnf_clauses: int | None, memory_limit: str | None = None) -> None:
    """``--max-cnf-clauses`` (the per-formula bound of ``logic.limits``) and
    ``--memory-limit`` (``resources.set_memory_limit``)."""
    if max_cnf_clauses is not None:
        from ..logic.limits import set_limits

        set_limits(max_cnf_clauses=max_cnf_clauses)
    if memory_limit is not None:
        from ..resources import set_memory_limit

        set_memory_limit(memory_limit)
