"""Reading inference results: Alchemy's result formats and the clusters file.

The format is detected from the first line that is not blank or a ``//``
comment, and every other line must follow it:

- ``map``: a MAP result, the true query atoms one per line (``P(a,b)``);
- ``map-all``: Alchemy's ``-a``, every query atom with ``0`` or ``1``
  (``P(a,b) 1``): chosen when every value is written ``0`` or ``1``;
- ``marginals``: ``atom probability`` per line, probabilities in [0, 1];
- ``clusters``: the clusters file of :mod:`markovlogic.eval.clusterfile`
  (tab-separated, a predicate name first, no parenthesis).

Errors name the file, line and column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import MLNSyntaxError, OptionError
from .clusterfile import looks_like_clusters_line, parse_clusters

FORMATS = ("map", "map-all", "marginals", "clusters")

_NAME = r"[A-Za-z_][A-Za-z0-9_'\-]*"
_CONST = r'"(?:[^"\\\n]|\\.)*"|[^\s,()"]+'
_LINE = re.compile(
    rf"[ \t]*({_NAME})[ \t]*\([ \t]*((?:{_CONST})(?:[ \t]*,[ \t]*(?:{_CONST}))*)[ \t]*\)"
    r"(?:[ \t]+(\S+))?[ \t\r]*"
)
_CONST_RE = re.compile(_CONST)
_SKIP = re.compile(r"[ \t\r\f]*(?://.*)?")


@dataclass
class AtomTable:
    """The atoms of one predicate in a result file, in file order."""

    args: list[tuple[str, ...]] = field(default_factory=list)
    values: list[float] = field(default_factory=list)   # 1.0 for a MAP result's atoms
    lines: list[int] = field(default_factory=list)

    @property
    def value_array(self) -> np.ndarray:
        return np.asarray(self.values, dtype=np.float64)


@dataclass
class ResultFile:
    """A parsed result file: ``atoms`` per predicate, or ``clusters`` per
    predicate for the clusters format."""

    path: str
    format: str
    atoms: dict[str, AtomTable] = field(default_factory=dict)
    clusters: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)

    def predicates(self) -> set[str]:
        return set(self.atoms) | set(self.clusters)


def _shown(raw: str) -> str:
    return raw.rstrip("\r").replace("\t", " ")


def _split_args(text: str) -> tuple[str, ...]:
    if '"' not in text:
        return tuple(a.strip() for a in text.split(","))
    return tuple(_CONST_RE.findall(text))


def parse_result(text: str, filename: str) -> ResultFile:
    """Parse the text of a result file (see the module docstring)."""
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    first = next((i for i, line in enumerate(lines) if _SKIP.fullmatch(line) is None), None)
    if first is None:     # empty: a MAP result with no true atom
        return ResultFile(filename, "map")
    if looks_like_clusters_line(lines[first]):
        return ResultFile(filename, "clusters", clusters=parse_clusters(text, filename))
    match, skip = _LINE.fullmatch, _SKIP.fullmatch
    head = match(lines[first])
    if head is None:
        _malformed(lines, first, filename, None)
    with_value = head.group(3) is not None
    atoms: dict[str, AtomTable] = {}
    tokens: list[str] = []
    for i in range(first, len(lines)):
        line = lines[i]
        m = match(line)
        if m is None:
            if skip(line):
                continue
            _malformed(lines, i, filename, with_value)
        pred, args, value = m.groups()
        if (value is not None) != with_value:
            what = "an atom and its value" if with_value else "one atom and nothing else"
            col = m.start(3) + 1 if value is not None else m.end(2) + 2
            raise MLNSyntaxError(
                f"expected {what} (as on line {first + 1}, which sets the format of this file)",
                file=filename, line=i + 1, column=col, source_line=_shown(line))
        table = atoms.get(pred)
        if table is None:
            table = atoms[pred] = AtomTable()
        table.args.append(_split_args(args))
        table.lines.append(i + 1)
        if with_value:
            tokens.append(value)
            try:
                v = float(value)
            except ValueError:
                v = float("nan")
            if not 0.0 <= v <= 1.0:
                raise MLNSyntaxError(f"expected a probability between 0 and 1, found {value!r}",
                                     file=filename, line=i + 1, column=m.start(3) + 1, source_line=_shown(line))
            table.values.append(v)
        else:
            table.values.append(1.0)
    if not with_value:
        fmt = "map"
    elif all(t in ("0", "1") for t in tokens):
        fmt = "map-all"
    else:
        fmt = "marginals"
    return ResultFile(filename, fmt, atoms=atoms)


def _malformed(lines: list[str], i: int, filename: str, with_value: bool | None) -> None:
    line = lines[i]
    if with_value is None:
        what = ("a ground atom per line (MAP), an atom and 0/1 (-a), an atom and its probability "
                "(marginals), or a clusters line (predicate, then constants, separated by tabs)")
    elif with_value:
        what = "a ground atom and its value, e.g. P(a,b) 0.75"
    else:
        what = "one ground atom per line, e.g. P(a,b)"
    col = len(line) - len(line.lstrip(" \t")) + 1
    raise MLNSyntaxError(f"malformed result line: expected {what}",
                         file=filename, line=i + 1, column=col, source_line=_shown(line))


def read_result(path: str | Path) -> ResultFile:
    """Read and parse a result file; a missing file is an ``OptionError``."""
    from ..lang.parser import read_text

    p = Path(path)
    if not p.is_file():
        raise OptionError(f"result file not found: {path}")
    return parse_result(read_text(p), str(path))
