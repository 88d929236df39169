"""Reading CoNLL-U: the Universal Dependencies interchange format every
dependency parser writes (https://universaldependencies.org/format.html).

A file is a sequence of sentences separated by blank lines; a sentence is a
block of ``# key = value`` comments and token lines of ten tab-separated
columns ``ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC``. CoNLL-U Plus
files (``# global.columns = ...``, or the English Universal PropBank's
predicate and argument columns after MISC) carry more columns: they are kept
as ``Token.extra``. Multi-word token lines (``3-4``) and empty nodes (``5.1``)
are kept aside (``Sentence.ranges``, ``Sentence.empty``) and never take part
in the tree.

Every mistake is a :class:`TextError` naming the file, line and column:
a wrong number of columns, an ID out of sequence, a HEAD that is not a
token of the sentence, a tree with a cycle or without exactly one root.

The reader is written by hand rather than through the ``conllu`` library
because errors must name the line (the library's do not), and because it is
one pass over the lines with no per-token objects beyond what is returned.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from ..errors import MarkovLogicError

COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")


class TextError(MarkovLogicError):
    """A text input (CoNLL-U, a mention list) that does not follow its format."""


@dataclass
class Token:
    """One word of a sentence (1-based ``id``; ``head`` 0 is the root)."""

    id: int
    form: str
    lemma: str
    upos: str
    xpos: str
    feats: dict[str, str]
    head: int
    deprel: str
    deps: str
    misc: dict[str, str]
    extra: tuple[str, ...] = ()
    line: int = 0


@dataclass
class Sentence:
    """A sentence: its tokens in order, its comments, and where it was read."""

    tokens: list[Token]
    metadata: dict[str, str]
    file: str
    line: int                       # line of the first line of the block (comment or token)
    doc_id: str | None = None       # from the last ``# newdoc id = ...`` at or before it
    ranges: list[tuple[int, int, str, int]] = field(default_factory=list)   # (first, last, form, line)
    empty: list[tuple[str, str, int]] = field(default_factory=list)        # (id, form, line)

    @property
    def sent_id(self) -> str | None:
        return self.metadata.get("sent_id")

    @property
    def text(self) -> str | None:
        return self.metadata.get("text")

    def __len__(self) -> int:
        return len(self.tokens)

    def heads(self) -> list[int]:
        return [t.head for t in self.tokens]

    def children(self) -> list[list[int]]:
        """``children()[h]``: the ids of the dependents of token ``h`` (0: the root's)."""
        out: list[list[int]] = [[] for _ in range(len(self.tokens) + 1)]
        for t in self.tokens:
            out[t.head].append(t.id)
        return out


def _features(value: str, path: str, line: int, column: int, what: str) -> dict[str, str]:
    if value == "_" or value == "":
        return {}
    out: dict[str, str] = {}
    for part in value.split("|"):
        if "=" not in part:
            if what == "MISC":          # MISC may hold bare words (SpaceAfter=No is the usual form)
                out[part] = ""
                continue
            raise TextError(f"{what} item {part!r} is not Name=Value", file=path, line=line, column=column)
        k, v = part.split("=", 1)
        out[k] = v
    return out


def _column_of(fields: list[str], k: int) -> int:
    return sum(len(f) + 1 for f in fields[:k]) + 1


def _check_tree(tokens: list[Token], path: str, first_line: int) -> None:
    n = len(tokens)
    roots = [t for t in tokens if t.head == 0]
    if len(roots) != 1:
        where = roots[1].line if len(roots) > 1 else first_line
        raise TextError(
            f"the sentence has {len(roots)} root tokens (HEAD 0); a dependency tree has exactly one",
            file=path, line=where)
    # every token must reach the root: follow heads, marking the path
    state = [0] * (n + 1)            # 0 unseen, 1 on the current path, 2 reaches the root
    state[0] = 2
    for t in tokens:
        path_ids = []
        i = t.id
        while state[i] == 0:
            state[i] = 1
            path_ids.append(i)
            i = tokens[i - 1].head
        if state[i] == 1:
            cycle = path_ids[path_ids.index(i):]
            raise TextError(
                "the tree has a cycle: " + " -> ".join(str(c) for c in cycle + [i]) + " (HEAD column)",
                file=path, line=tokens[i - 1].line)
        for j in path_ids:
            state[j] = 2


def _finish(tokens, meta, path, start, doc, ranges, empty, check_tree) -> Sentence:
    if not tokens:
        raise TextError("a sentence block without token lines", file=path, line=start)
    n = len(tokens)
    for t in tokens:
        if t.head > n:
            raise TextError(f"HEAD {t.head} of token {t.id} is not a token of the sentence (it has {n})",
                            file=path, line=t.line)
    if check_tree:
        _check_tree(tokens, path, start)
    return Sentence(tokens, meta, path, start, doc, ranges, empty)


def read_conllu_lines(lines: Iterable[str], path: str = "<input>", *, check_tree: bool = True
                      ) -> Iterator[Sentence]:
    """Sentences of CoNLL-U text given as lines (see :func:`read_conllu`)."""
    tokens: list[Token] = []
    meta: dict[str, str] = {}
    ranges: list = []
    empty: list = []
    start = 0
    doc: str | None = None
    lineno = 0
    for lineno, raw in enumerate(lines, 1):
        line = raw.rstrip("\n").rstrip("\r")
        if not line.strip():
            if tokens or meta:
                yield _finish(tokens, meta, path, start, doc, ranges, empty, check_tree)
                tokens, meta, ranges, empty = [], {}, [], []
            start = 0
            continue
        if not start:
            start = lineno
        if line.startswith("#"):
            if tokens:
                raise TextError("a comment line inside a sentence's token lines (a blank line must end the "
                                "sentence first)", file=path, line=lineno, column=1)
            body = line[1:].strip()
            key, sep, value = body.partition("=")
            key = key.strip()
            if sep:
                meta[key] = value.strip()
                if key in ("newdoc id", "newdoc"):
                    doc = value.strip()
            elif body.startswith("newdoc"):
                doc = None
            continue
        fields = line.split("\t")
        if len(fields) < 10:
            raise TextError(f"a token line needs 10 tab-separated columns ({' '.join(COLUMNS)}); this one has "
                            f"{len(fields)}", file=path, line=lineno, column=1)
        tid = fields[0]
        if "-" in tid:
            a, _, b = tid.partition("-")
            if not (a.isdigit() and b.isdigit()) or int(a) > int(b):
                raise TextError(f"bad multi-word token range {tid!r}", file=path, line=lineno, column=1)
            ranges.append((int(a), int(b), fields[1], lineno))
            continue
        if "." in tid:
            empty.append((tid, fields[1], lineno))
            continue
        if not tid.isdigit() or int(tid) != len(tokens) + 1:
            raise TextError(f"token ID {tid!r} out of sequence (expected {len(tokens) + 1})",
                            file=path, line=lineno, column=1)
        head_text = fields[6]
        if head_text == "_":
            raise TextError("the token has no HEAD ('_'); a dependency tree is needed", file=path, line=lineno,
                            column=_column_of(fields, 6))
        if not head_text.isdigit():
            raise TextError(f"HEAD {head_text!r} is not a number", file=path, line=lineno,
                            column=_column_of(fields, 6))
        head = int(head_text)
        if head == int(tid):
            raise TextError(f"token {tid} is its own HEAD", file=path, line=lineno, column=_column_of(fields, 6))
        tokens.append(Token(
            id=int(tid), form=fields[1], lemma=fields[2], upos=fields[3], xpos=fields[4],
            feats=_features(fields[5], path, lineno, _column_of(fields, 5), "FEATS"),
            head=head, deprel=fields[7], deps=fields[8],
            misc=_features(fields[9], path, lineno, _column_of(fields, 9), "MISC"),
            extra=tuple(fields[10:]), line=lineno))
    if tokens or meta:
        yield _finish(tokens, meta, path, start or lineno, doc, ranges, empty, check_tree)


def read_conllu(path: str | Path, *, check_tree: bool = True) -> Iterator[Sentence]:
    """The sentences of a CoNLL-U file (plain or ``.gz``), one at a time.
    A missing or unreadable file, or text that is not CoNLL-U, is a
    :class:`TextError` naming the file and line."""
    p = Path(path)
    if not p.exists():
        raise TextError(f"no such file: {p}")
    if p.is_dir():
        raise TextError(f"{p} is a folder, not a CoNLL-U file")
    opener = gzip.open if p.suffix == ".gz" else open
    try:
        with opener(p, "rt", encoding="utf-8") as handle:
            yield from read_conllu_lines(handle, str(p), check_tree=check_tree)
    except UnicodeDecodeError as exc:
        raise TextError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=str(p)) from None
    except (OSError, EOFError) as exc:
        raise TextError(f"cannot read {p}: {getattr(exc, 'strerror', None) or exc}") from None


def read_conllu_files(paths: Iterable[str | Path], *, check_tree: bool = True) -> Iterator[Sentence]:
    """Sentences of several files in order (a folder stands for its ``*.conllu`` files, sorted)."""
    for path in paths:
        p = Path(path)
        if p.is_dir():
            files = sorted(list(p.glob("*.conllu")) + list(p.glob("*.conllu.gz")))
            if not files:
                raise TextError(f"the folder {p} holds no .conllu files")
            for f in files:
                yield from read_conllu(f, check_tree=check_tree)
        else:
            yield from read_conllu(p, check_tree=check_tree)
