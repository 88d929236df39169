"""Which predicates of a model are equivalence relations.

A binary predicate over one type is an equivalence relation when the model
holds all three of its hard rules, in any spelling that compiles to these
clauses (variables renamed at will):

- reflexivity: ``P(x, x).``
- symmetry: ``P(x, y) => P(y, x).`` (also ``P(x, y) <=> P(y, x).``)
- transitivity: ``P(x, y) ^ P(y, z) => P(x, z).``; since symmetry is
  required too, any orientation of the three atoms is accepted (e.g.
  ``P(x, y) ^ P(z, y) => P(x, z).``).

A clause may also carry positive equalities between its variables (``x = z v
...``, i.e. ``x != z ^ ... =>``): with reflexivity they exempt only cases
that hold anyway.

A predicate declared ``equivalence P(t, t)`` is one too (its three rules are
added when the model is compiled, ``logic.cnf.equivalence_axioms``).
:func:`is_equivalence_axiom` tells the clause templates a clustering always
satisfies (hard or soft), which inference over clusterings drops.
"""

from __future__ import annotations

from ..errors import MarkovLogicError
from ..lang.ast import Var
from ..model import MLN
from .clauses import ClauseTemplate, Literal
from .cnf import compile_formula

__all__ = ["equivalence_predicates", "equivalence_rules", "is_equivalence_axiom"]


def _var_pair(lit: Literal) -> tuple[str, str] | None:
    args = lit.atom.args
    if len(args) != 2 or not all(isinstance(a, Var) for a in args):
        return None
    return args[0].name, args[1].name


def _plain(t: ClauseTemplate) -> bool:
    """No existential, and comparisons only positive equalities of variables."""
    if t.exists:
        return False
    return all(c.op == "=" and c.positive and isinstance(c.left, Var) and isinstance(c.right, Var)
               for c in t.comparisons)


def _one_predicate(t: ClauseTemplate) -> str | None:
    names = {lit.atom.predicate for lit in t.literals}
    return names.pop() if len(names) == 1 else None


def clause_rule(t: ClauseTemplate) -> tuple[str, str] | None:
    """``(predicate, rule)`` with rule ``reflexive``, ``symmetric`` or
    ``transitive`` when the hard clause template ``t`` is one of the rules
    above, else None."""
    if not t.hard or not _plain(t):
        return None
    pred = _one_predicate(t)
    pairs = [_var_pair(lit) for lit in t.literals]
    if pred is None or any(p is None for p in pairs):
        return None
    pos = [p for p, lit in zip(pairs, t.literals) if lit.positive]
    neg = [p for p, lit in zip(pairs, t.literals) if not lit.positive]
    if len(pos) == 1 and not neg and pos[0][0] == pos[0][1]:
        return pred, "reflexive"
    if len(pos) == 1 and len(neg) == 1:
        (a, b), (c, d) = neg[0], pos[0]
        if a != b and (c, d) == (b, a):
            return pred, "symmetric"
    if len(pos) == 1 and len(neg) == 2:
        e1, e2 = set(neg[0]), set(neg[1])
        if len(e1) == 2 and len(e2) == 2 and len(e1 & e2) == 1 and e1 != e2:
            ends = e1 ^ e2
            if set(pos[0]) == ends and len(ends) == 2:
                return pred, "transitive"
    return None


def equivalence_rules(mln: MLN) -> dict[str, set[str]]:
    """For each predicate, which of the three rules the model's hard formulas hold."""
    found: dict[str, set[str]] = {}
    for index, decl in enumerate(mln.formulas):
        if not decl.hard:
            continue
        try:
            templates = compile_formula(decl, mln, formula_index=index).templates
        except MarkovLogicError:   # e.g. needs the constants of a type: not one of these rules
            continue
        for t in templates:
            rule = clause_rule(t)
            if rule is not None:
                found.setdefault(rule[0], set()).add(rule[1])
    return found


def is_equivalence_axiom(t: ClauseTemplate, predicate: str) -> bool:
    """Whether the template (hard or soft) is reflexivity, symmetry or
    transitivity of ``predicate``: always satisfied by a clustering."""
    from dataclasses import replace

    rule = clause_rule(t if t.hard else replace(t, hard=True))
    return rule is not None and rule[0] == predicate


def equivalence_predicates(mln: MLN) -> set[str]:
    """Binary predicates over one type declared ``equivalence``, or whose hard
    reflexivity, symmetry and transitivity rules are all in ``mln``."""
    out = {name for name, d in mln.predicates.items() if getattr(d, "equivalence", False)}
    for pred, rules in equivalence_rules(mln).items():
        decl = mln.predicates.get(pred)
        if (decl is not None and decl.arity == 2 and decl.arg_types[0] == decl.arg_types[1]
                and rules >= {"reflexive", "symmetric", "transitive"}):
            out.add(pred)
    return out
