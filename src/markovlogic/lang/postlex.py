"""The post-lexer between lark's lexer and the LALR parser.

Alchemy's syntax is line-oriented but not strictly: a formula continues on the
next line after ``=>``, ``<=>``, ``^``, ``v`` (we also accept the connective at
the start of the continuation line), and anywhere inside parentheses or the
braces of a type declaration. A context-free grammar cannot say "this newline
does not count", so this module does, token by token:

* newlines inside ``( )`` / ``{ }``, after a connective or a comma, before a
  connective, repeated, leading or trailing are dropped; the others become the
  statement separator ``_NL``;
* a block comment that spans lines counts as a newline;
* the names ``v``, ``FORALL``/``forall``/``Forall`` and
  ``EXIST``/``exist``/``Exist`` (also ``EXISTS``...) become keywords;
* a number (with an optional sign) that opens a statement becomes ``WEIGHT``;
* a ``)`` without its ``(``, and a ``(`` never closed, are reported here with
  the position of the offending parenthesis.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from lark import Token

from ..errors import MLNSyntaxError

OR_WORDS = frozenset({"v"})
FORALL_WORDS = frozenset({"FORALL", "forall", "Forall"})
EXIST_WORDS = frozenset({"EXIST", "exist", "Exist", "EXISTS", "exists", "Exists"})
KEYWORDS = OR_WORDS | FORALL_WORDS | EXIST_WORDS

_CONNECTIVES = frozenset({"IMPLIES", "IFF", "AND", "OR"})
_CONTINUE_AFTER = _CONNECTIVES | {"COMMA", "NOT", "FORALL", "EXIST", "AT", "INCLUDE"}
_OPENERS = {"LPAR": "(", "TYPE_OPEN": "{"}
_CLOSERS = {"RPAR": ("LPAR", ")"), "RBRACE": ("TYPE_OPEN", "}")}


class ParseState:
    """What the post-lexer knows at the moment the parser stops (for messages)."""

    def __init__(self) -> None:
        self.open_brackets: list[Token] = []


class PostLexer:
    """A lark post-lexer; ``mode`` is ``"mln"``, ``"db"`` or ``"query"``."""

    always_accept = ("_NL", "BLOCK_COMMENT")

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self._local = threading.local()

    @property
    def state(self) -> ParseState | None:
        return getattr(self._local, "state", None)

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        state = ParseState()
        self._local.state = state
        if self.mode == "mln":
            return self._process_mln(stream, state)
        if self.mode == "query":
            return self._process_query(stream, state)
        return self._process_db(stream, state)

    # -------------------------------------------------------------- brackets
    @staticmethod
    def _track(tok: Token, state: ParseState) -> None:
        kind = tok.type
        if kind in _OPENERS:
            state.open_brackets.append(tok)
        elif kind in _CLOSERS:
            opener, char = _CLOSERS[kind]
            if not state.open_brackets or state.open_brackets[-1].type != opener:
                if state.open_brackets:
                    other = state.open_brackets[-1]
                    o_line, o_column = opener_position(other)
                    raise _error(
                        f"unbalanced parentheses: '{char}' does not match the "
                        f"'{_OPENERS[other.type]}' at line {o_line}, column {o_column}",
                        tok,
                    )
                raise _error(f"unbalanced parentheses: '{char}' without a matching opening one", tok)
            state.open_brackets.pop()

    @staticmethod
    def _check_closed(state: ParseState) -> None:
        if state.open_brackets:
            tok = state.open_brackets[0]
            char = _OPENERS[tok.type]
            raise _error(f"unbalanced parentheses: this '{char}' is never closed", tok)

    # -------------------------------------------------------------- .db
    def _process_db(self, stream: Iterator[Token], state: ParseState) -> Iterator[Token]:
        for tok in stream:
            if tok.type in ("BLOCK_COMMENT", "_NL"):
                continue
            self._track(tok, state)
            yield tok
        self._check_closed(state)

    # -------------------------------------------------------------- queries
    def _process_query(self, stream: Iterator[Token], state: ParseState) -> Iterator[Token]:
        """Queries are separated by commas, blanks or line breaks; empty items are dropped."""
        comma: Token | None = None
        started = False
        for tok in stream:
            kind = tok.type
            if kind in ("BLOCK_COMMENT", "_NL", "COMMA") and not state.open_brackets:
                if kind == "BLOCK_COMMENT" and "\n" not in tok:
                    continue
                if started and comma is None:
                    comma = Token.new_borrow_pos("COMMA", ",", tok)
                continue
            if kind in ("BLOCK_COMMENT", "_NL"):
                continue
            if comma is None and started and kind == "NAME" and not state.open_brackets:
                comma = Token.new_borrow_pos("COMMA", ",", tok)  # 'P(x) Q': blanks separate too
            if comma is not None:
                yield comma
                comma = None
            started = True
            self._track(tok, state)
            yield tok
        self._check_closed(state)

    # -------------------------------------------------------------- .mln
    def _process_mln(self, stream: Iterator[Token], state: ParseState) -> Iterator[Token]:
        prev: Token | None = None          # last token handed to the parser
        pending_nl: Token | None = None    # a newline that ends a statement unless a connective follows
        held: Token | None = None          # a sign that may start a signed weight
        at_start = True                    # next token opens a statement

        for tok in stream:
            kind = tok.type
            if kind == "BLOCK_COMMENT":
                if "\n" not in tok:
                    continue
                kind = "_NL"
                tok = Token.new_borrow_pos("_NL", "\n", tok)
            if kind == "_NL":
                if held is not None:       # a lone sign at the end of a line
                    yield held
                    prev, held = held, None
                if state.open_brackets or prev is None or prev.type in _CONTINUE_AFTER:
                    continue
                if pending_nl is None:
                    pending_nl = tok
                continue

            if kind == "NAME" and tok in KEYWORDS and not (
                state.open_brackets and state.open_brackets[-1].type == "TYPE_OPEN"
            ):  # inside a type's braces 'v' is a constant
                kind = "OR" if tok in OR_WORDS else "FORALL" if tok in FORALL_WORDS else "EXIST"
                tok = Token.new_borrow_pos(kind, tok, tok)

            if pending_nl is not None:
                if kind not in _CONNECTIVES:
                    yield pending_nl
                    at_start = True
                pending_nl = None

            if held is not None:
                if kind == "NUMBER":       # '-1.5' opening a statement: a signed weight
                    sign = "-" if held == "-" else ""
                    tok = Token.new_borrow_pos("WEIGHT", sign + tok, held)
                    held = None
                    at_start = False
                    prev = tok
                    yield tok
                    continue
                yield held
                prev, held = held, None
                at_start = False

            if at_start:
                if kind == "NUMBER":
                    tok = Token.new_borrow_pos("WEIGHT", tok, tok)
                    at_start = False
                elif kind == "ADDOP":
                    held = tok
                    continue
                elif kind == "AT":
                    pass                   # '@' keeps the statement open for its weight
                else:
                    at_start = False

            self._track(tok, state)
            prev = tok
            yield tok

        if held is not None:
            yield held
        self._check_closed(state)


def opener_position(tok: Token) -> tuple[int, int]:
    """Line and column of the bracket itself (``TYPE_OPEN`` is ``= {``)."""
    if tok.type != "TYPE_OPEN":
        return tok.line, tok.column
    text = str(tok)
    newlines = text.count("\n")
    if newlines:
        return tok.line + newlines, len(text) - text.rfind("\n")
    return tok.line, tok.column + len(text) - 1


def _error(message: str, tok: Token) -> MLNSyntaxError:
    line, column = opener_position(tok)
    err = MLNSyntaxError(message, line=line, column=column)
    err.token = tok  # type: ignore[attr-defined]
    return err
