"""Mutual-exclusion (``!``) declarations as hard clauses.

The grounder builds exactly-one blocks straight from ``PredicateDecl.mutex``;
these clauses are for algorithms that only know clauses.
"""

from __future__ import annotations

from ..lang.ast import Atom, PredicateDecl, Var
from .clauses import ClauseTemplate, Comparison, ExistsGroup, Literal


def block_clauses(pred: PredicateDecl) -> list[ClauseTemplate]:
    """The hard clauses of ``pred``'s ``!`` declaration (``[]`` without one).

    With key arguments ``k`` (unmarked) and value arguments ``v`` (marked
    ``!``): at least one value, ``EXIST v P(k,v)`` (an ``ExistsGroup``), and at
    most one, ``!P(k,v) v !P(k,w) v v = w``; with several value arguments the
    tuple equality ``v = w`` distributes into one clause per value argument,
    ``!P(k,v) v !P(k,w) v v_i = w_i``.
    """
    if not pred.has_block:
        return []
    n = pred.arity
    first = [Var(f"v{i + 1}" if pred.mutex[i] else f"k{i + 1}") for i in range(n)]
    second = [Var(f"w{i + 1}") if pred.mutex[i] else first[i] for i in range(n)]
    values = [i for i in range(n) if pred.mutex[i]]
    keys = [i for i in range(n) if not pred.mutex[i]]
    p1 = Atom(pred.name, tuple(first))
    p2 = Atom(pred.name, tuple(second))

    key_types = [(first[i].name, pred.arg_types[i]) for i in keys]
    v_types = [(first[i].name, pred.arg_types[i]) for i in values]
    w_types = [(second[i].name, pred.arg_types[i]) for i in values]

    out = [
        ClauseTemplate(
            literals=(),
            exists=(ExistsGroup(tuple(first[i].name for i in values), (Literal(p1, True),)),),
            var_types=tuple(sorted(key_types + v_types)),
            hard=True,
            clause_index=0,
        )
    ]
    for j, i in enumerate(values):
        out.append(
            ClauseTemplate(
                literals=(Literal(p1, False), Literal(p2, False)),
                comparisons=(Comparison("=", first[i], second[i]),),
                var_types=tuple(sorted(key_types + v_types + w_types)),
                hard=True,
                clause_index=1 + j,
            )
        )
    return out
