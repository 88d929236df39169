"""Reading what ``mln eval`` compares: result files and truth databases.

A result file is one of (detected from its lines):

* MAP, true atoms (``mln infer --map``, Alchemy ``-m``): ``P(A,B)`` per line;
* MAP, every atom with 0/1 (``-a``): ``P(A,B) 1``;
* marginals: ``P(A,B) 0.8731``;
* clusters (``mln infer --clusters``): ``P<TAB>A<TAB>B<TAB>...``, one cluster
  per line.

Atoms are kept as ``(predicate, argument tuple)``; constants as written
(quoted strings keep their quotes). A line that fits none of these is an
``EvidenceError`` naming the file and line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import EvidenceError, OptionError

Atom = tuple[str, tuple[str, ...]]


@dataclass
class ResultFile:
    kind: str                                    # map, map01, marginals, clusters
    path: str
    true_atoms: set[Atom] = field(default_factory=set)            # map, map01 (value 1)
    listed: dict[Atom, float] = field(default_factory=dict)       # map01, marginals: every listed atom
    clusters: dict[str, list[list[str]]] = field(default_factory=dict)

    def predicates(self) -> set[str]:
        if self.kind == "clusters":
            return set(self.clusters)
        return {a[0] for a in self.true_atoms} | {a[0] for a in self.listed}


def _err(path: str, line: int, message: str, text: str | None = None) -> EvidenceError:
    return EvidenceError(message, file=path, line=line, column=1, source_line=text)


def parse_atom(text: str) -> tuple[Atom, str] | None:
    """``(atom, rest of the line)``, or None if the text does not start with an atom."""
    text = text.strip()
    i = text.find("(")
    if i <= 0:
        return None
    name = text[:i].strip()
    if not name or not (name[0].isalpha() or name[0] == "_") or any(c.isspace() for c in name):
        return None
    args: list[str] = []
    cur: list[str] = []
    j = i + 1
    in_str = False
    while j < len(text):
        c = text[j]
        if in_str:
            cur.append(c)
            if c == "\\" and j + 1 < len(text):
                cur.append(text[j + 1])
                j += 2
                continue
            if c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            cur.append(c)
        elif c == ",":
            args.append("".join(cur).strip())
            cur = []
        elif c == ")":
            last = "".join(cur).strip()
            if last or args:
                args.append(last)
            if any(a == "" for a in args):
                return None
            return (name, tuple(args)), text[j + 1:].strip()
        else:
            cur.append(c)
        j += 1
    return None


def read_result(path: str | Path) -> ResultFile:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise OptionError(f"result file not found: {path}") from None
    except IsADirectoryError:
        raise OptionError(f"result file is a directory: {path}") from None
    except OSError as exc:
        raise OptionError(f"cannot read result file {path}: {exc.strerror or exc}") from None
    lines = [(k + 1, line.rstrip("\r")) for k, line in enumerate(text.split("\n"))]
    lines = [(k, line) for k, line in lines if line.strip() and not line.lstrip().startswith("//")]
    name = str(path)
    if lines and "\t" in lines[0][1] and "(" not in lines[0][1].split("\t")[0]:
        out = ResultFile("clusters", name)
        for k, line in lines:
            parts = [x.strip() for x in line.split("\t")]
            if len(parts) < 2 or not all(parts) or "(" in parts[0]:
                raise _err(name, k, "a clusters file has one cluster per line: the predicate, then its "
                                    "constants, separated by tabs", line)
            out.clusters.setdefault(parts[0], []).append(parts[1:])
        return out
    kinds = set()
    atoms: list[tuple[Atom, float | None]] = []
    for k, line in lines:
        parsed = parse_atom(line)
        if parsed is None:
            raise _err(name, k, "expected an atom such as P(A,B), optionally followed by a number", line)
        atom, rest = parsed
        if not rest:
            kinds.add("map")
            atoms.append((atom, None))
            continue
        try:
            value = float(rest)
        except ValueError:
            raise _err(name, k, f"expected a probability or 0/1 after the atom, got {rest!r}", line) from None
        if not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise _err(name, k, f"a probability must be between 0 and 1, got {rest}", line)
        kinds.add("value")
        atoms.append((atom, value))
    if len(kinds) > 1:
        raise OptionError(f"{name}: mixes lines with and without a number; expected one result format")
    if not atoms or kinds == {"map"}:
        out = ResultFile("map", name)
        out.true_atoms = {a for a, _ in atoms}
        return out
    values = [v for _, v in atoms]
    kind = "map01" if all(v in (0.0, 1.0) for v in values) else "marginals"
    out = ResultFile(kind, name)
    out.listed = {a: v for a, v in atoms}
    out.true_atoms = {a for a, v in atoms if v >= 0.5} if kind == "map01" else set()
    return out


def read_truth(paths: list[str | Path]):
    """The truth databases' atoms: ``(true, false)`` sets of atoms (a ``?``
    atom is an error: the truth must be known)."""
    from ..lang.parser import parse_db_files

    for p in paths:
        if not Path(p).is_file():
            raise OptionError(f"truth file not found: {p}")
    db = parse_db_files([Path(p) for p in paths])
    true: set[Atom] = set()
    false: set[Atom] = set()
    for a in db.atoms:
        atom = (a.atom.predicate, tuple(a.atom.args))
        if a.truth is None:
            pos = a.pos
            raise EvidenceError("the truth database lists an unknown (?) atom",
                                file=pos.file if pos else None, line=pos.line if pos else None)
        (true if a.truth else false).add(atom)
    return true, false
