"""Fast reading of .db evidence files.

Evidence files are long (tuffy/class/evidence.db: 82,684 lines) and almost
every line is one atom such as ``!category(Paper29460,Databases)``. Those lines
are matched by one compiled regular expression; anything else (function
values, several atoms on a line, quoted strings, trailing comments, errors)
goes, in runs of consecutive lines, to the lark grammar (start symbol ``db``),
which accepts the same language and reports errors with their positions. The
two paths accept exactly the same text, so the result never depends on which
one read a line.
"""

from __future__ import annotations

import gc
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from .ast import EvidenceAtom, FunctionValue, GroundAtom, Pos
from .frontend import frontend

_NAME = r"[A-Za-z_][A-Za-z0-9_'\-]*"
_NUMBER = r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_CONST = rf"(?:{_NAME}|{_NUMBER})"
_ATOM_LINE = re.compile(
    rf"[ \t]*([!?]?)[ \t]*({_NAME})[ \t]*\([ \t]*({_CONST}(?:[ \t]*,[ \t]*{_CONST})*)[ \t]*\)[ \t\r]*"
)
_SKIP_LINE = re.compile(r"[ \t\r\f]*(?://.*)?")
# a block comment, a quoted string or a line comment; the last two are kept
# as they are ('/*' inside a string or after '//' does not open a comment)
_COMMENT_OR_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRUTH = {"": True, "!": False, "?": None}

def _blank_comments(text: str) -> str:
    """Replace block comments by spaces (newlines kept), so positions stay put."""

    def repl(m: re.Match) -> str:
        s = m.group(0)
        if s[0] == '"' or s[1] == "/":
            return s
        return re.sub(r"[^\n]", " ", s)

    return _COMMENT_OR_STRING.sub(repl, text)


@contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building many small objects.

    Reading class/evidence.db creates ~250,000 objects, none in a reference
    cycle. With the collector running, its young-generation passes over them
    cost more than the reading itself; with it merely paused, the first
    allocation after resuming traverses them all at once (0.15 s). Instead the
    new objects are moved straight to the oldest generation (freeze, then
    unfreeze), where they are visited only by the occasional full collection,
    as long-lived objects are anyway. Skipped if the application has frozen
    objects itself (unfreezing would undo its freeze).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()


def parse_db_lines(text: str, filename: str) -> tuple[list[EvidenceAtom], list[FunctionValue]]:
    """Evidence atoms and function values of a .db text, in file order."""
    with no_gc():
        return _parse_db_lines(text, filename)


def _parse_db_lines(text: str, filename: str) -> tuple[list[EvidenceAtom], list[FunctionValue]]:
    if "/*" in text:
        text = _blank_comments(text)
    lines = text.split("\n")
    atoms: list[EvidenceAtom] = []
    values: list[FunctionValue] = []
    match = _ATOM_LINE.fullmatch
    skip = _SKIP_LINE.fullmatch
    truth_of = _TRUTH
    slow_start = -1  # first line (0-based) of the current run of lines for lark

    intern = sys.intern  # constants repeat: share one string (memory, hashing)
    for i, line in enumerate(lines):
        m = match(line)
        if m is not None:
            if slow_start >= 0:
                _slow(lines, slow_start, i, filename, atoms, values)
                slow_start = -1
            sign, name, args = m.groups()
            if " " in args or "\t" in args:
                parts = tuple([intern(a.strip()) for a in args.split(",")])
            else:
                parts = tuple(map(intern, args.split(",")))
            atoms.append(
                EvidenceAtom(
                    GroundAtom(intern(name), parts),
                    truth_of[sign],
                    Pos(filename, i + 1, m.start(1 if sign else 2) + 1),
                )
            )
        elif slow_start < 0 and skip(line) is None:
            slow_start = i
    if slow_start >= 0:
        _slow(lines, slow_start, len(lines), filename, atoms, values)
    return atoms, values


def _slow(lines: list[str], start: int, stop: int, filename: str, atoms: list, values: list) -> None:
    chunk = "\n".join(lines[start:stop])
    for item in frontend("db").parse(chunk, filename, line_offset=start):
        if type(item) is EvidenceAtom:
            atoms.append(item)
        else:
            values.append(item)
