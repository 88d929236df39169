"""The clusters file: the clustering of an equivalence predicate, one cluster
per line.

::

    SameBib<TAB>Class_7<TAB>Class_8<TAB>Class_9
    SameBib<TAB>Class_81
    // a comment line; blank lines are skipped too

Each line holds the predicate name, then the constants of one cluster,
separated by single tabs. A file may hold several predicates. Every constant
of the clustered universe should appear once (singletons on lines of their
own), so a reader knows the whole universe; a constant listed twice for the
same predicate is an error. The pair atoms of a cluster ``{a, b, c}`` are all
``P(x, y)`` with ``x, y`` in it (reflexive ones included).

:func:`write_clusters` writes the file atomically; :func:`clusters_from_labels`
turns a label array into the cluster lists it takes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from ..errors import MLNSyntaxError, OptionError
from ..io import open_text_atomic

_PREDICATE = re.compile(r"[A-Za-z_][A-Za-z0-9_'\-]*")
_COMMENT = re.compile(r"\s*(//.*)?")


def clusters_from_labels(names: Sequence[str], labels) -> list[tuple[str, ...]]:
    """The clusters of a label array as tuples of names, largest first (ties
    by first name); members in the order of ``names``."""
    labels = np.asarray(labels).ravel()
    if len(labels) != len(names):
        raise ValueError(f"{len(names)} names and {len(labels)} labels")
    if len(labels) == 0:
        return []
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    groups = [tuple(names[i] for i in g) for g in np.split(order, bounds)]
    groups.sort(key=lambda g: (-len(g), g[0]))
    return groups


def format_clusters(clusters: Mapping[str, Iterable[Sequence[str]]]) -> str:
    """The text of a clusters file for ``{predicate: [cluster, ...]}``."""
    lines = []
    for pred, groups in clusters.items():
        if not _PREDICATE.fullmatch(pred):
            raise OptionError(f"not a predicate name: {pred!r}")
        for group in groups:
            if not group:
                continue
            for c in group:
                if not c or any(ch in c for ch in "\t\n\r"):
                    raise OptionError(f"constant {c!r} of {pred} cannot be written to a clusters file "
                                      "(empty, or holds a tab or a line break)")
            lines.append("\t".join((pred, *group)))
    return "".join(line + "\n" for line in lines)


def write_clusters(path: str | Path, clusters: Mapping[str, Iterable[Sequence[str]]]) -> None:
    """Write ``{predicate: [cluster, ...]}`` as a clusters file, atomically."""
    text = format_clusters(clusters)
    with open_text_atomic(path) as handle:
        handle.write(text)


def looks_like_clusters_line(line: str) -> bool:
    """A first line of a clusters file: tab-separated, a predicate name first, no parenthesis."""
    if "\t" not in line or "(" in line:
        return False
    return _PREDICATE.fullmatch(line.split("\t", 1)[0].strip()) is not None


def _shown(raw: str) -> str:
    """The offending line as printed under an error (a tab as one space keeps the caret in place)."""
    return raw.rstrip("\r").replace("\t", " ")


def parse_clusters(text: str, filename: str) -> dict[str, list[tuple[str, ...]]]:
    """``{predicate: [cluster, ...]}`` from the text of a clusters file.
    Errors name the file, line and column."""
    out: dict[str, list[tuple[str, ...]]] = {}
    seen: dict[str, dict[str, int]] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r")
        if _COMMENT.fullmatch(line):
            continue
        fields = line.split("\t")
        pred = fields[0].strip()
        if not _PREDICATE.fullmatch(pred):
            raise MLNSyntaxError(
                "expected a predicate name, then the constants of one cluster, separated by tabs",
                file=filename, line=number, column=1, source_line=_shown(raw))
        if len(fields) < 2:
            raise MLNSyntaxError(f"cluster of {pred} without constants (fields are separated by tabs)",
                                 file=filename, line=number, column=len(line) + 1, source_line=_shown(raw))
        members = []
        column = len(fields[0]) + 2
        mine = seen.setdefault(pred, {})
        for field in fields[1:]:
            c = field.strip()
            if not c:
                raise MLNSyntaxError("empty constant (two tabs in a row, or a trailing tab)",
                                     file=filename, line=number, column=column, source_line=_shown(raw))
            if c in mine:
                raise MLNSyntaxError(f"constant {c} of {pred} is already in the cluster on line {mine[c]}",
                                     file=filename, line=number, column=column, source_line=_shown(raw))
            mine[c] = number
            members.append(c)
            column += len(field) + 1
        out.setdefault(pred, []).append(tuple(members))
    return out


def read_clusters(path: str | Path) -> dict[str, list[tuple[str, ...]]]:
    """Read a clusters file (see the module docstring)."""
    from ..lang.parser import read_text

    return parse_clusters(read_text(Path(path)), str(path))
