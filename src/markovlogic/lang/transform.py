"""Lark callbacks that build the AST while the LALR parser reduces (no parse
tree is materialised, so parsing is fast and never recursive).

The callbacks are purely syntactic: they know nothing of declarations.
Statements come out as small records (``RawStatement`` subclasses) that
``parser.py`` classifies in order (a bare ``Name(type, ...)`` line is a
predicate declaration only if ``Name`` is not yet declared).
"""

from __future__ import annotations

from dataclasses import dataclass

from lark import Token, Transformer, v_args

from ..errors import MLNSyntaxError, QueryError
from .ast import (
    And,
    Atom,
    Compare,
    Const,
    EvidenceAtom,
    Exists,
    Forall,
    Formula,
    FunctionDecl,
    FunctionValue,
    GroundAtom,
    Iff,
    Implies,
    Not,
    Or,
    Pos,
    Query,
    Term,
    Var,
    Func,
)


# Alchemy's named forms of the internal predicates and functions.
NAMED_COMPARISONS = {"greaterThan": ">", "lessThan": "<", "greaterThanEq": ">=", "lessThanEq": "<="}
NAMED_OPERATORS = {"plus": "+", "minus": "-", "times": "*", "dividedBy": "/", "mod": "%"}


def is_variable_name(name: str) -> bool:
    """Alchemy: variables start with a lower-case letter."""
    return name[:1].islower()


# ------------------------------------------------------------------ raw records


@dataclass(frozen=True)
class MutexArg:
    """``position!`` inside an argument list (only meaningful in a declaration)."""

    name: str
    pos: Pos


@dataclass(frozen=True)
class Call:
    """``name(args)`` before we know whether it is an atom or a function term."""

    name: str
    args: tuple
    pos: Pos


class RawStatement:
    pos: Pos


@dataclass(frozen=True)
class RawInclude(RawStatement):
    path: str
    pos: Pos
    path_pos: Pos


@dataclass(frozen=True)
class RawTypeDecl(RawStatement):
    name: str
    items: tuple[Token, ...]
    pos: Pos


@dataclass(frozen=True)
class RawFunctionDecl(RawStatement):
    decl: FunctionDecl
    pos: Pos


@dataclass(frozen=True)
class RawFormula(RawStatement):
    formula: Formula
    weight: float | None
    fixed: bool
    weight_pos: Pos | None
    period_pos: Pos | None
    pos: Pos


# ------------------------------------------------------------------ callbacks


@v_args(inline=True)
class AstBuilder(Transformer):
    """Builds AST nodes. ``filename`` and ``line_offset`` are set before each parse."""

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)
        self.filename = "<string>"
        self.line_offset = 0

    def _pos(self, tok: Token) -> Pos:
        return Pos(self.filename, tok.line + self.line_offset, tok.column)

    def _syntax(self, message: str, tok: Token) -> MLNSyntaxError:
        return MLNSyntaxError(message, file=self.filename, line=tok.line + self.line_offset, column=tok.column)

    # -------------------------------------------------------------- statements
    def mln(self, *statements):
        return [s for s in statements if s is not None]

    def include(self, kw, path):
        return RawInclude(_unquote(path), self._pos(kw), self._pos(path))

    def type_decl(self, name, _open, *rest):
        items = tuple(t for t in rest[:-1] if t is not None)
        return RawTypeDecl(str(name), items, self._pos(name))

    def func_decl(self, ret, name, lpar, *rest):
        arg_types = tuple(str(t) for t in rest[:-1])
        pos = self._pos(ret)
        return RawFunctionDecl(FunctionDecl(str(name), str(ret), arg_types, pos=self._pos(name)), pos)

    def weight(self, at, value):
        try:
            number = float(value)
        except ValueError:  # pragma: no cover - the lexer only lets numbers through
            raise self._syntax(f"invalid weight '{value}'", value) from None
        if number != number or number in (float("inf"), float("-inf")):
            raise self._syntax(f"weight '{value}' is not a finite number", value)
        return (number, at is not None, self._pos(at if at is not None else value))

    def formula_stmt(self, weight, formula, period):
        if weight is None:
            value, fixed, wpos = None, False, None
            pos = formula.pos
        else:
            value, fixed, wpos = weight
            pos = wpos
        return RawFormula(formula, value, fixed, wpos, self._pos(period) if period is not None else None, pos)

    # -------------------------------------------------------------- formulas
    def iff(self, left, op, right):
        return Iff(left, right, pos=left.pos)

    def implies(self, left, op, right):
        return Implies(left, right, pos=left.pos)

    def disj(self, left, op, right):
        return Or(left, right, pos=left.pos)

    def conj(self, left, op, right):
        return And(left, right, pos=left.pos)

    def negation(self, op, body):
        return Not(body, pos=self._pos(op))

    def forall(self, kw, variables, body):
        return Forall(variables, body, pos=self._pos(kw))

    def exists(self, kw, variables, body):
        return Exists(variables, body, pos=self._pos(kw))

    def paren(self, lpar, formula, rpar):
        return formula

    def varlist(self, *names):
        out = []
        for tok in names:
            if not is_variable_name(tok):
                raise self._syntax(f"quantified variable '{tok}' must start with a lower-case letter", tok)
            out.append(str(tok))
        return tuple(out)

    def atom(self, star, call):
        pos = self._pos(star) if star is not None else call.pos
        if call.name in NAMED_COMPARISONS and star is None:
            if len(call.args) != 2:
                raise MLNSyntaxError(f"internal predicate '{call.name}' takes 2 arguments, not {len(call.args)}",
                                     file=pos.file, line=pos.line, column=pos.column)
            _no_mutex(call)
            return Compare(NAMED_COMPARISONS[call.name], call.args[0], call.args[1], pos=pos)
        return Atom(call.name, call.args, star=star is not None, pos=pos)

    def compare(self, left, op, right):
        return Compare(str(op), left, right, pos=_term_pos(left) or self._pos(op))

    # -------------------------------------------------------------- terms
    def call(self, name, lpar, *rest):
        args = tuple(a for a in rest[:-1] if a is not None)
        return Call(str(name), args, self._pos(name))

    def mutex_arg(self, name, bang):
        return MutexArg(str(name), self._pos(name))

    def name(self, tok):
        if is_variable_name(tok):
            return Var(str(tok), pos=self._pos(tok))
        return Const(str(tok), pos=self._pos(tok))

    def number(self, tok):
        return Const(str(tok), pos=self._pos(tok))

    def string(self, tok):
        return Const(str(tok), pos=self._pos(tok))

    def plus_var(self, sign, name):
        if sign != "+":
            raise self._syntax("unary minus is not supported; write '0 - x'", sign)
        if not is_variable_name(name):
            raise self._syntax(f"'+' applies to variables only, not to the constant '{name}'", sign)
        return Var(str(name), plus=True, pos=self._pos(sign))

    def function_term(self, call):
        _no_mutex(call)
        name = call.name
        if name in NAMED_OPERATORS:
            if len(call.args) != 2:
                raise MLNSyntaxError(f"internal function '{name}' takes 2 arguments, not {len(call.args)}",
                                     file=call.pos.file, line=call.pos.line, column=call.pos.column)
            name = NAMED_OPERATORS[name]
        return Func(name, call.args, pos=call.pos)

    def paren_term(self, lpar, term, rpar):
        return term

    def arith(self, left, op, right):
        return Func(str(op), (left, right), pos=_term_pos(left) or self._pos(op))

    # -------------------------------------------------------------- .db
    def db(self, *items):
        return [i for i in items if i is not None]

    def separator(self):
        return None

    def db_atom(self, sign, name, lpar, *rest):
        args = tuple(_const_text(a) for a in rest[:-1] if a is not None)
        truth = True if sign is None else (False if sign == "!" else None)
        tok = sign if sign is not None else name
        return EvidenceAtom(GroundAtom(str(name), args), truth, pos=self._pos(tok))

    def func_value(self, value, eq, name, lpar, *rest):
        args = tuple(_const_text(a) for a in rest[:-1] if a is not None)
        return FunctionValue(str(name), args, _const_text(value), pos=self._pos(value))

    # -------------------------------------------------------------- queries
    def queries(self, *items):
        return [i for i in items if i is not None]

    def query_name(self, name):
        return Query(str(name), None, pos=self._pos(name))

    def query_atom(self, name, lpar, *rest):
        args: list[Term] = []
        for tok in rest[:-1]:
            if tok is None:
                continue
            if tok.type == "NAME" and is_variable_name(tok):
                args.append(Var(str(tok), pos=self._pos(tok)))
            else:
                args.append(Const(str(tok), pos=self._pos(tok)))
        if not args:
            raise QueryError(f"query atom '{name}()' has no arguments", file=self.filename,
                             line=name.line + self.line_offset, column=name.column)
        return Query(str(name), tuple(args), pos=self._pos(name))


def _no_mutex(call: Call) -> None:
    for arg in call.args:
        if isinstance(arg, MutexArg):
            raise MLNSyntaxError(
                "'!' after an argument marks a mutually exclusive argument in a predicate declaration; "
                "it cannot appear in a formula",
                file=arg.pos.file, line=arg.pos.line, column=arg.pos.column,
            )


def _term_pos(term) -> Pos | None:
    return getattr(term, "pos", None)


def _const_text(tok: Token) -> str:
    return str(tok)


def _unquote(tok: Token) -> str:
    text = str(tok)
    return text[1:-1] if len(text) >= 2 and text[0] == '"' else text
