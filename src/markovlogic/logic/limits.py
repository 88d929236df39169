"""Bounds checked before a formula is converted, so that a formula whose CNF
would explode is refused with its place and size instead of hanging.

``cnf_size(formula)`` walks the formula once (iteratively: any depth) and
returns upper bounds of the number of leaves of its negation normal form and
of the number of clauses of its CNF by distribution, before simplification:
``A ^ B`` adds clauses, ``A v B`` multiplies them, ``A <=> B`` is
``(!A v B) ^ (A v !B)`` and its negation ``(A ^ !B) v (!A ^ B)``. A chain of
25 ``<=>`` reaches 10^7 clauses; the default limit is 100,000 clauses per
formula (``MAX_CNF_CLAUSES``; ``set_limits`` changes it, ``mln ...
--max-cnf-clauses`` sets it from the command line). ``MAX_CLAUSE_LITERALS``
bounds the literals of one clause (the grounder joins one table per literal).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lang.checks import MAX_ABS_WEIGHT, check_weight  # noqa: F401  (re-exported)
from ..lang.ast import And, Atom, Compare, Exists, Forall, Formula, Iff, Implies, Not, Or

MAX_CNF_CLAUSES = 100_000
MAX_NNF_LEAVES = 2_000_000
MAX_CLAUSE_LITERALS = 128


@dataclass
class Limits:
    max_cnf_clauses: int = MAX_CNF_CLAUSES
    max_nnf_leaves: int = MAX_NNF_LEAVES
    max_clause_literals: int = MAX_CLAUSE_LITERALS


LIMITS = Limits()


def set_limits(max_cnf_clauses: int | None = None, max_clause_literals: int | None = None) -> None:
    """Change the per-formula bounds (process-wide)."""
    if max_cnf_clauses is not None:
        if isinstance(max_cnf_clauses, bool) or int(max_cnf_clauses) != max_cnf_clauses or max_cnf_clauses < 1:
            from ..errors import OptionError

            raise OptionError(f"max-cnf-clauses must be a positive integer, got {max_cnf_clauses!r}")
        LIMITS.max_cnf_clauses = int(max_cnf_clauses)
        LIMITS.max_nnf_leaves = max(MAX_NNF_LEAVES, 20 * int(max_cnf_clauses))
    if max_clause_literals is not None:
        LIMITS.max_clause_literals = int(max_clause_literals)


def cnf_size(formula: Formula) -> tuple[float, float]:
    """(NNF leaves, CNF clauses) upper bounds of ``formula`` (as floats: they
    can be astronomically large)."""
    # post-order over (node, positive); results: (leaves, clauses_pos, clauses_neg) per node
    results: dict[int, tuple[float, float, float]] = {}
    stack: list[tuple[Formula, bool]] = [(formula, False)]
    while stack:
        f, done = stack.pop()
        kind = type(f)
        if kind is Atom or kind is Compare:
            results[id(f)] = (1.0, 1.0, 1.0)
            continue
        if kind is Not or kind is Forall or kind is Exists:
            children = (f.body,)
        else:
            children = (f.left, f.right)
        if not done:
            stack.append((f, True))
            for c in children:
                if id(c) not in results:
                    stack.append((c, False))
            continue
        if kind is Not:
            leaves, cp, cn = results[id(f.body)]
            results[id(f)] = (leaves, cn, cp)
        elif kind is Forall or kind is Exists:
            results[id(f)] = results[id(f.body)]
        else:
            la, pa, na = results[id(f.left)]
            lb, pb, nb = results[id(f.right)]
            if kind is And:
                results[id(f)] = (la + lb, pa + pb, na * nb)
            elif kind is Or:
                results[id(f)] = (la + lb, pa * pb, na + nb)
            elif kind is Implies:          # !a v b ; negation a ^ !b
                results[id(f)] = (la + lb, na * pb, pa + nb)
            elif kind is Iff:              # (!a v b) ^ (a v !b) ; (a ^ !b) v (!a ^ b)
                results[id(f)] = (2 * (la + lb), na * pb + pa * nb, (pa + nb) * (na + pb))
    leaves, cp, _ = results[id(formula)]
    return leaves, cp


def check_formula_size(formula: Formula, pos, what: str = "formula") -> None:
    """Raise ``MLNSemanticError`` at ``pos`` if converting ``formula`` would
    exceed the bounds."""
    from ..errors import MLNSemanticError

    leaves, clauses = cnf_size(formula)
    where = dict(file=pos.file, line=pos.line, column=pos.column) if pos is not None else {}
    if clauses > LIMITS.max_cnf_clauses or leaves > LIMITS.max_nnf_leaves:
        size = f"about {clauses:,.0f}" if clauses < 1e15 else (
            f"about {clauses:.3g}" if clauses < float("inf") else "more than 10^308")
        raise MLNSemanticError(
            f"this {what} expands to {size} CNF clauses (at most {LIMITS.max_cnf_clauses:,}; "
            "raise the bound with --max-cnf-clauses, or rewrite the formula, e.g. split a chain of '<=>' "
            "with auxiliary predicates)", **where)
