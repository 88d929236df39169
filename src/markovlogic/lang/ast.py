"""The abstract syntax of Markov logic: terms, formulas, declarations, evidence.

All nodes are frozen dataclasses, so models compare by value (``parse(print(m))
== m``). Source positions never take part in equality.

Terms
    ``Var`` (lower-case name, ``plus=True`` for ``+x``), ``Const`` (upper-case,
    integer or double-quoted; quotes kept in ``name``), ``Func`` (a user function
    such as ``motherOf(x)`` or an internal one: ``+ - * / %`` written infix, and
    ``succ``, ``concat``, ``substr``).

Formulas
    ``Atom`` (``star=True`` for ``*P(x)``), ``Compare`` (``= < > <= >=``),
    ``Not``, ``And``, ``Or``, ``Implies``, ``Iff`` (binary, left-associative as
    parsed), ``Forall`` and ``Exists`` over a tuple of variable names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class Pos:
    """A place in a source file (1-based line and column)."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


def _pos() -> Pos | None:
    return field(default=None, compare=False, repr=False)  # type: ignore[return-value]


# ---------------------------------------------------------------- terms


@dataclass(frozen=True)
class Var:
    name: str
    plus: bool = False
    pos: Pos | None = _pos()


@dataclass(frozen=True)
class Const:
    name: str
    pos: Pos | None = _pos()


# similarities over evidence paths: jaccard(x, y, P1, ..., Pk) and the others of ground/similarity.py
SIMILARITY_FUNCTIONS = {"jaccard", "overlap", "cosine", "containment", "jarowinkler", "levenshtein", "numdiff",
                        "absdiff"}
INTERNAL_FUNCTIONS = {"+", "-", "*", "/", "%", "succ", "concat", "substr"} | SIMILARITY_FUNCTIONS
ARITHMETIC_OPERATORS = {"+", "-", "*", "/", "%"}
# Alchemy's internal predicate ``substr(a, b)`` (a is a substring of b), used as
# an atom: ``Atom("substr", (a, b))`` with no PredicateDecl (unless the user
# declares a predicate of that name, which then takes precedence).
INTERNAL_PREDICATES = {"substr"}


@dataclass(frozen=True)
class Func:
    name: str
    args: tuple["Term", ...]
    pos: Pos | None = _pos()

    @property
    def is_internal(self) -> bool:
        return self.name in INTERNAL_FUNCTIONS


Term = Union[Var, Const, Func]


# ---------------------------------------------------------------- formulas


@dataclass(frozen=True)
class Atom:
    predicate: str
    args: tuple[Term, ...]
    star: bool = False
    pos: Pos | None = _pos()


COMPARISON_OPERATORS = ("=", "<", ">", "<=", ">=")


@dataclass(frozen=True)
class Compare:
    op: str
    left: Term
    right: Term
    pos: Pos | None = _pos()


@dataclass(frozen=True)
class Not:
    body: "Formula"
    pos: Pos | None = _pos()


@dataclass(frozen=True)
class And:
    left: "Formula"
    right: "Formula"
    pos: Pos | None = _pos()


@dataclass(frozen=True)
class Or:
    left: "Formula"
    right: "Formula"
    pos: Pos | None = _pos()


@dataclass(frozen=True)
class Implies:
    left: "Formula"
    right: "Formula"
    pos: Pos | None = _pos()


@dataclass(frozen=True)
class Iff:
    left: "Formula"
    right: "Formula"
    pos: Pos | None = _pos()


@dataclass(frozen=True)
class Forall:
    variables: tuple[str, ...]
    body: "Formula"
    pos: Pos | None = _pos()


@dataclass(frozen=True)
class Exists:
    variables: tuple[str, ...]
    body: "Formula"
    pos: Pos | None = _pos()


Formula = Union[Atom, Compare, Not, And, Or, Implies, Iff, Forall, Exists]


# ---------------------------------------------------------------- declarations


@dataclass(frozen=True)
class TypeDecl:
    name: str
    constants: tuple[str, ...]
    pos: Pos | None = _pos()


@dataclass(frozen=True)
class PredicateDecl:
    """``hasPosition(person, position!)``; ``closed`` is Tuffy's leading ``*``."""

    name: str
    arg_types: tuple[str, ...]
    mutex: tuple[bool, ...]
    closed: bool = False
    pos: Pos | None = _pos()
    equivalence: bool = False     # ``equivalence P(t, t)``: reflexive, symmetric, transitive

    @property
    def arity(self) -> int:
        return len(self.arg_types)

    @property
    def has_block(self) -> bool:
        return any(self.mutex)


@dataclass(frozen=True)
class FunctionDecl:
    """``person motherOf(person)``."""

    name: str
    return_type: str
    arg_types: tuple[str, ...]
    pos: Pos | None = _pos()

    @property
    def arity(self) -> int:
        return len(self.arg_types)


@dataclass(frozen=True)
class FormulaDecl:
    """A formula with its weight.

    ``weight`` is None when no weight was written (and the formula is not hard);
    ``hard`` is a trailing period; ``fixed`` is Tuffy's ``@`` (not learned).
    """

    formula: Formula
    weight: float | None = None
    hard: bool = False
    fixed: bool = False
    pos: Pos | None = _pos()

    @property
    def has_weight(self) -> bool:
        return self.hard or self.weight is not None


@dataclass(frozen=True)
class SetFeature:
    """A set-level (aggregate) feature over the clusters of an equivalence
    predicate (see ``cluster/setfeatures.py`` for the kinds and their values)::

        -1.2  some(x, y in SameBib: jaccard(x, y, Title, HasWordTitle) < 0.2)
         0.8  all(x, y in SameBib: Title(x, t) ^ Title(y, t))
        -0.3  min(x, y in SameBib: jaccard(x, y, Author, HasWordAuthor))
        -0.1  size(SameBib) >= 10
        -0.4  distinct(u; x in SameBib: Venue(x, u)) >= 3

    ``variables``: the pair ``(x, y)`` (all, some, most, most_not, count,
    max, min), the member ``(x,)`` (distinct) or ``()`` (size). ``body``: the
    pair condition or the attribute formula; ``term``: the numeric pair term
    of max/min; ``value_var``: distinct's counted variable; ``op`` and
    ``threshold``: an optional comparison of the value.
    """

    kind: str
    predicate: str
    weight: float | None = None
    variables: tuple[str, ...] = ()
    body: "Formula | None" = None
    term: "Term | None" = None
    value_var: str | None = None
    op: str | None = None
    threshold: float | None = None
    fixed: bool = False
    pos: Pos | None = _pos()
    link: bool = False          # a linkage feature (link sum/max/min/mean/fraction/count) over merges

    @property
    def is_pair_value(self) -> bool:
        """``similarity(x, y in P: T)``: a pair feature (a sum over co-clustered pairs), not a set feature."""
        return self.kind == "similarity"

    def describe(self, where: bool = True) -> str:
        where = f"{self.pos.file}:{self.pos.line}: " if where and self.pos is not None else ""
        if self.link:
            return f"{where}linkage feature link {self.kind}({', '.join(self.variables)} in {self.predicate})"
        if self.kind == "candidates":
            return f"{where}candidates({', '.join(self.variables)} in {self.predicate})"
        if self.kind == "size":
            head = f"size({self.predicate})"
        elif self.kind == "distinct":
            head = f"distinct({self.value_var}; {', '.join(self.variables)} in {self.predicate})"
        else:
            head = f"{self.kind}({', '.join(self.variables)} in {self.predicate})"
        return f"{where}set-level feature {head}"


# ---------------------------------------------------------------- evidence


@dataclass(frozen=True)
class GroundAtom:
    predicate: str
    args: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.predicate}({','.join(self.args)})"


@dataclass(frozen=True)
class EvidenceAtom:
    """A line of a .db file: ``P(A,B)`` (True), ``!P(A,B)`` (False), ``?P(A,B)`` (None)."""

    atom: GroundAtom
    truth: bool | None
    pos: Pos | None = _pos()


@dataclass(frozen=True)
class FunctionValue:
    """``Alice = motherOf(Bob)`` in a .db file."""

    function: str
    args: tuple[str, ...]
    value: str
    pos: Pos | None = _pos()


@dataclass(frozen=True)
class Query:
    """A query: a predicate name alone (``args is None``) or an atom whose
    arguments are constants or variables (``advisedBy(x, Ida)``)."""

    predicate: str
    args: tuple[Term, ...] | None = None
    pos: Pos | None = _pos()
