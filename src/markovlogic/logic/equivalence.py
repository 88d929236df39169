"""Which predicates are equivalence relations: declared ``equivalence P(t, t)``,
or with hard reflexivity, symmetry and transitivity written out."""

from __future__ import annotations

from .clauses import ClauseTemplate


def is_equivalence_axiom(t: ClauseTemplate, predicate: str) -> bool:
    """Reflexivity ``E(x,x)``, symmetry ``!E(x,y) v E(y,x)`` or transitivity
    ``!E(x,y) v !E(y,z) v E(x,z)`` (in any orientation): always true when
    ``E`` is an equivalence relation."""
    from ..lang.ast import Var

    lits = t.literals
    if t.comparisons or t.exists or not lits or any(lit.atom.predicate != predicate for lit in lits):
        return False
    if not all(isinstance(a, Var) for lit in lits for a in lit.atom.args):
        return False
    args = [tuple(a.name for a in lit.atom.args) for lit in lits]
    pos = [a for a, lit in zip(args, lits) if lit.positive]
    neg = [a for a, lit in zip(args, lits) if not lit.positive]
    if len(pos) != 1 or any(len(a) != 2 for a in args):
        return False
    e, f = pos[0]
    if e == f:
        return True                      # E(x, x) holds whatever the rest
    # the positive pair must be connected through the negated pairs
    graph: dict[str, set[str]] = {}
    for a, b in neg:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set()).add(a)
    seen, stack = {e}, [e]
    while stack:
        n = stack.pop()
        for m in graph.get(n, ()):
            if m not in seen:
                seen.add(m)
                stack.append(m)
    return f in seen and len(lits) <= 3


def equivalence_predicates(mln) -> list[str]:
    """Predicates declared equivalences, or whose hard reflexivity, symmetry and
    transitivity are all in the model."""
    from .cnf import compile_mln_detailed

    declared = [name for name, d in mln.predicates.items() if getattr(d, "equivalence", False)]
    candidates = [name for name, d in mln.predicates.items()
                  if name not in declared and d.arity == 2 and d.arg_types[0] == d.arg_types[1]]
    if not candidates:
        return declared
    templates = [t for fc in compile_mln_detailed(mln) for t in fc.templates]
    found = []
    for name in candidates:
        kinds = set()
        for t in templates:
            if t.hard and is_equivalence_axiom(t, name):
                kinds.add(_axiom_kind(t))
        if {"reflexive", "symmetric", "transitive"} <= kinds:
            found.append(name)
    return declared + found


def _axiom_kind(t: ClauseTemplate) -> str:
    lits = t.literals
    pos = [lit for lit in lits if lit.positive][0]
    if len(lits) == 1 or pos.atom.args[0] == pos.atom.args[1]:
        return "reflexive"
    return "symmetric" if len(lits) == 2 else "transitive"
