"""Clause templates: the first-order clauses that grounding turns into SQL.

``logic.cnf.compile_mln`` turns each weighted formula of an MLN into one or
more ``ClauseTemplate``s (its CNF clauses, with Alchemy's weight semantics
already applied). ``ground/`` compiles each template to one SQL query.

A template is the disjunction of
  * ``literals``: atoms of declared predicates, positive or negative; their
    arguments are ``Var``, ``Const`` or ``Func`` terms (functions are evaluated
    during grounding: internal ones in SQL, user functions by a join with their
    values from the evidence);
  * ``comparisons``: built-in literals (``=``, ``<``, ``>``, ``<=``, ``>=``,
    possibly negated) evaluated during grounding, never turned into atoms;
  * ``exists``: existential groups ``EXIST v (c1 ^ c2 ^ ...)``; each expands,
    per grounding of the clause's own variables, into a disjunction over the
    bindings of ``v`` (disjuncts falsified by evidence are skipped).
Variables of the template are universally quantified; ``var_types`` gives the
type of every variable (including those bound by ``exists`` groups). Group
variables never coincide with the clause's own variables, but two groups of one
clause may bind the same name (``EXIST y P(x,y) v EXIST y Q(x,y)``): each group
is its own scope. Every ``plus_vars`` variable is in ``var_types`` even when no
literal of this clause mentions it (a formula split into several clauses gives
all of them the formula's ``+`` variables); the grounder ranges over its type.
``variant`` numbers the ``*`` sign combinations of one formula (each is its own
formula in Alchemy, with its own learned weight); ``clause_index`` counts the
clauses across all variants, so ``(formula_index, clause_index)`` is unique.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lang.ast import Atom, Term


@dataclass(frozen=True)
class Literal:
    atom: Atom          # predicate and argument terms (atom.star is always False here)
    positive: bool

    def negated(self) -> "Literal":
        return Literal(self.atom, not self.positive)


@dataclass(frozen=True)
class Comparison:
    op: str             # '=', '<', '>', '<=', '>=', or an internal predicate: 'substr' (left is a substring of right)
    left: Term
    right: Term
    positive: bool = True

    def negated(self) -> "Comparison":
        return Comparison(self.op, self.left, self.right, not self.positive)


@dataclass(frozen=True)
class ExistsGroup:
    """Disjunction over bindings of ``variables`` of the conjunction ``conjuncts``."""

    variables: tuple[str, ...]
    conjuncts: tuple[Literal | Comparison, ...]


@dataclass(frozen=True)
class ClauseTemplate:
    literals: tuple[Literal, ...]
    comparisons: tuple[Comparison, ...] = ()
    exists: tuple[ExistsGroup, ...] = ()
    var_types: tuple[tuple[str, str], ...] = ()   # (variable, type), sorted by variable
    plus_vars: tuple[str, ...] = ()               # '+' variables: one weight per binding
    weight: float | None = None                   # per-clause weight after Alchemy's split/negation; None if hard or unweighted
    hard: bool = False
    fixed: bool = False                           # Tuffy '@': not learned
    formula_index: int = -1                       # index into MLN.formulas (-1: generated, e.g. blocks)
    clause_index: int = 0                         # index among the formula's CNF clauses
    weight_scale: float = 1.0                     # this clause's weight = weight_scale * formula weight (learning ties)
    variant: int = 0                              # '*' sign combination (Alchemy: one learned weight per variant)

    @property
    def variable_types(self) -> dict[str, str]:
        return dict(self.var_types)
