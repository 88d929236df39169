"""The lark LALR parsers (one per start symbol) and the translation of lark's
errors into ``MLNSyntaxError`` with file, line, column and a readable message.

The grammar is compiled once per process (lazily). The AST builder runs inside
the parser (lark's ``transformer=`` option), so no parse tree is built; a lock
guards the per-parse settings (file name, line offset) of the shared builder.
"""

from __future__ import annotations

import threading
from functools import cache
from pathlib import Path

from lark import Lark
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ..errors import MarkovLogicError, MLNSyntaxError
from .postlex import PostLexer, opener_position
from .transform import AstBuilder

GRAMMAR_PATH = Path(__file__).with_name("grammar.lark")

_TOKEN_NAMES = {
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": "a quoted string",
    "WEIGHT": "a weight",
    "LPAR": "'('",
    "RPAR": "')'",
    "COMMA": "','",
    "PERIOD": "'.'",
    "_NL": "the end of the line",
    "$END": "the end of the input",
    "AND": "'^'",
    "OR": "'v'",
    "IMPLIES": "'=>'",
    "IFF": "'<=>'",
    "NOT": "'!'",
    "QMARK": "'?'",
    "STAR": "'*'",
    "EQ": "'='",
    "LT": "'<'",
    "GT": "'>'",
    "LE": "'<='",
    "GE": "'>='",
    "ADDOP": "'+' or '-'",
    "MULOP": "'/' or '%'",
    "TYPE_OPEN": "'= {'",
    "RBRACE": "'}'",
    "ELLIPSIS": "'...'",
    "FORALL": "FORALL",
    "EXIST": "EXIST",
    "AT": "'@'",
    "INCLUDE": "#include",
}

_KIND = {"mln": "formula or declaration", "db": "evidence", "queries": "query"}


class Frontend:
    """One compiled parser for one start symbol (``mln``, ``db`` or ``queries``)."""

    def __init__(self, start: str) -> None:
        self.start = start
        self.builder = AstBuilder()
        self.postlex = PostLexer({"mln": "mln", "db": "db", "queries": "query"}[start])
        self.lark = Lark(
            GRAMMAR_PATH.read_text(encoding="utf-8"),
            parser="lalr",
            lexer="basic",
            start=start,
            postlex=self.postlex,
            transformer=self.builder,
            maybe_placeholders=True,
            cache=_cache_path(start),  # ~0.07 s saved per process
        )
        self.lock = threading.Lock()

    def parse(self, text: str, filename: str, line_offset: int = 0):
        with self.lock:
            self.builder.filename = filename
            self.builder.line_offset = line_offset
            try:
                return self.lark.parse(text)
            except MarkovLogicError as err:
                if err.file is None:
                    err.file = filename
                    if err.line is not None:
                        err.line += line_offset
                raise
            except UnexpectedInput as err:
                raise self._translate(err, text, filename, line_offset) from None
            except LarkError as err:  # pragma: no cover - defensive
                raise MLNSyntaxError(f"cannot parse: {err}", file=filename) from None
            except RecursionError:
                raise MLNSyntaxError("input nested too deeply", file=filename) from None

    # -------------------------------------------------------------- errors
    def _translate(self, err: UnexpectedInput, text: str, filename: str, line_offset: int) -> MLNSyntaxError:
        state = self.postlex.state
        line, column = err.line, err.column
        if isinstance(err, UnexpectedCharacters):
            char = text[err.pos_in_stream] if 0 <= err.pos_in_stream < len(text) else ""
            rest = text[err.pos_in_stream: err.pos_in_stream + 2]
            if char == '"':
                message = "unterminated string (a quoted string must end on the same line)"
            elif rest == "/*":
                message = "unterminated comment: '/*' without '*/'"
            elif char == "#":
                message = "unexpected '#': the only directive is #include \"file.mln\""
            elif char in ("\t", " ") or not char.isprintable():
                message = f"unexpected character {char!r}"
            else:
                message = f"unexpected character '{char}'"
        else:
            tok = err.token if isinstance(err, UnexpectedToken) else None
            expected = _expected(err)
            # an unclosed bracket on an earlier line is the real culprit
            if state is not None and state.open_brackets:
                opener = state.open_brackets[0]
                if tok is None or tok.type == "$END" or getattr(tok, "line", opener.line) != opener.line:
                    char = "(" if opener.type == "LPAR" else "{"
                    o_line, o_column = opener_position(opener)
                    return MLNSyntaxError(
                        f"unbalanced parentheses: this '{char}' is never closed",
                        file=filename, line=o_line + line_offset, column=o_column,
                    )
            if tok is None or tok.type == "$END" or isinstance(err, UnexpectedEOF):
                message = f"unexpected end of input in {_KIND[self.start]}"
                if expected:
                    message += f"; expected {expected}"
                if tok is not None and getattr(tok, "line", None):
                    line, column = tok.line, tok.column
                else:
                    line, column = _end_position(text)
            else:
                line, column = tok.line, tok.column
                start = getattr(tok, "start_pos", None)
                if start is not None and (text.startswith("/*", start) or (start > 0 and text.startswith("/*", start - 1))):
                    message = "unterminated comment: '/*' without '*/'"
                    if not text.startswith("/*", start):
                        column -= 1
                else:
                    message = f"unexpected {_describe(tok)}"
                    hint = _hint(tok, err)
                    if expected:
                        message += f"; expected {expected}"
                    if hint:
                        message += f" ({hint})"
        if line is None or line < 1:
            line, column = _end_position(text)
        return MLNSyntaxError(message, file=filename, line=line + line_offset, column=column)


def _describe(tok) -> str:
    if tok.type == "_NL":
        return "end of line"
    if tok.type in ("NAME", "NUMBER", "STRING", "WEIGHT"):
        return f"{_TOKEN_NAMES[tok.type].split(' ', 1)[1]} '{tok}'"
    return f"'{tok}'"


def _hint(tok, err: UnexpectedInput) -> str:
    expected = getattr(err, "expected", set()) or set()
    if tok.type == "OR" and "NAME" in expected:
        return ("'v' is the disjunction (Alchemy's 'or') and cannot name a variable or a constant; "
                "rename it, e.g. 'vn' or 'venue'")
    if tok.type in ("NAME", "NUMBER", "STRING") and ("AND" in expected or "OR" in expected):
        return "two formulas on one line? join them with a connective or put each on its own line"
    return ""


_FORMULA_END = {"AND", "OR", "IMPLIES", "IFF", "PERIOD", "_NL", "$END"}
_FORMULA_START = {"NOT", "LPAR", "NAME", "FORALL", "EXIST"}


def _expected(err: UnexpectedInput) -> str:
    names = set(getattr(err, "expected", None) or getattr(err, "accepts", None) or ())
    # LALR states mix alternatives; summarise the common situations in words
    if names & {"AND", "OR", "IMPLIES", "IFF"} and names & {"PERIOD", "_NL", "$END"}:
        return "a connective (^, v, =>, <=>), a final '.' or the end of the line"
    if _FORMULA_START <= names:
        return "a formula"
    if {"COMMA", "RPAR"} <= names:
        return "',' or ')'"
    shown = sorted({_TOKEN_NAMES.get(n, n) for n in names if not n.startswith("__")})
    if not shown:
        return ""
    if len(shown) > 8:
        shown = shown[:8] + ["..."]
    if len(shown) == 1:
        return shown[0]
    return "one of " + ", ".join(shown)


def _end_position(text: str) -> tuple[int, int]:
    lines = text.split("\n")
    return len(lines), len(lines[-1]) + 1


def _cache_path(start: str) -> str | bool:
    """Where lark keeps the compiled parse tables: the user's cache folder (not
    the shared temp folder, since lark unpickles the file). False if unusable."""
    import os

    import lark

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(base) / "markovlogic"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    if not os.access(folder, os.W_OK):
        return False
    return str(folder / f"grammar-{start}-lark{lark.__version__}.cache")


@cache
def frontend(start: str) -> Frontend:
    """The compiled parser for ``start`` (built on first use)."""
    return Frontend(start)
