"""Error types for every mistake a user can make.

Every error a user can cause is a :class:`MarkovLogicError`. Errors tied to a
place in a file carry ``file``, ``line`` and ``column`` (1-based) and the text
of the offending line, so the CLI can print ``file:line:col: message`` with a
caret under the column.
"""

from __future__ import annotations


class MarkovLogicError(Exception):
    """Base class of every error caused by user input or options."""

    def __init__(
        self,
        message: str,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
        source_line: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.source_line = source_line

    def location(self) -> str:
        parts = [self.file or "<input>"]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)

    def __str__(self) -> str:
        if self.file is None and self.line is None:
            return self.message
        return f"{self.location()}: {self.message}"

    def render(self) -> str:
        """The message, the offending line and a caret under the column."""
        text = str(self)
        if self.source_line is not None:
            # unpaired surrogates (from a Python string) written as escapes: the text is printable
            line = self.source_line.rstrip("\n").encode("utf-8", "backslashreplace").decode("utf-8")
            text += "\n    " + line
            if self.column is not None:
                text += "\n    " + " " * (self.column - 1) + "^"
        return text


class MLNSyntaxError(MarkovLogicError):
    """Text that does not follow the grammar of .mln, .db or query files."""


class MLNSemanticError(MarkovLogicError):
    """Well-formed text that means something invalid (undeclared predicate, wrong arity, ...)."""


class EvidenceError(MarkovLogicError):
    """An evidence file that contradicts the model (wrong arity, undeclared predicate, ...)."""


class QueryError(MarkovLogicError):
    """A query that names something the model does not have."""


class OptionError(MarkovLogicError, ValueError):
    """Options that are invalid or contradict each other (a ``ValueError`` too,
    as Python callers expect)."""


class ArgumentTypeError(MarkovLogicError, TypeError):
    """An argument of the wrong type given to the Python API (a ``TypeError``)."""


class InferenceError(MarkovLogicError):
    """Inference could not produce an answer (e.g. unsatisfiable hard clauses)."""


class LearningError(MarkovLogicError):
    """Learning could not run on the given data."""


class OutputError(MarkovLogicError):
    """A result, model or figures file that cannot be written where asked."""


class DomainExtendedWarning(UserWarning):
    """Evidence names constants a type's declared list does not have: as in
    Alchemy, they join the type (the command line prints this once per type)."""


class ResourceError(MarkovLogicError):
    """Work that would exceed the memory budget or another stated limit: the
    message says what, the estimate, and the ways out."""
