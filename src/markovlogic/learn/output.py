"""From the model to the formulas that are learned, and from learned weights
back to a model written as Alchemy writes it.

Alchemy learns one weight per CNF clause. The grounder ties the clauses of
a formula to one parameter (the formula's weight, split by the clause's
scale), so before grounding ``split_clauses`` replaces each soft formula
whose CNF has several clauses by those clauses, each a formula of its own
whose prior mean is its share of the formula's weight. ``+`` formulas get one
parameter per constant combination from the grounder.

``learned_mln_text`` writes the result: a formula learned as one weight keeps
its text and takes that weight; a split formula is written as a comment
followed by each clause with its weight; a ``+`` formula as a comment followed
by one line per constant combination (constants substituted). Hard formulas
are unchanged; fixed (``@``) weights keep their ``@``. The learned ``MLN`` is
parsed back from that text, so the file and the object always agree.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import reduce

import numpy as np

from ..errors import MarkovLogicError
from ..ground.network import GroundNetwork, WeightParam
from ..lang.ast import And, Atom, Compare, Exists, FormulaDecl, Func, Not, Or, Term, Var
from ..lang.printer import format_formula_decl, print_mln
from ..logic.clauses import ClauseTemplate, Comparison, Literal
from ..logic.cnf import compile_formula, compile_mln_detailed
from ..logic.format import format_clause
from ..model import MLN


@dataclass
class ClausalModel:
    """The model whose formulas are grounded for learning."""

    mln: MLN                          # formulas: originals, or clauses of split ones
    origin: list[tuple[int, int]]     # per formula: (original formula index, clause index or -1 if whole)
    original: MLN


def _plus_term(t: Term, plus: frozenset[str]) -> Term:
    if isinstance(t, Var):
        return Var(t.name, plus=t.name in plus)
    if isinstance(t, Func):
        return Func(t.name, tuple(_plus_term(a, plus) for a in t.args))
    return t


def _leaf_formula(d: Literal | Comparison, plus: frozenset[str]):
    if isinstance(d, Literal):
        atom = Atom(d.atom.predicate, tuple(_plus_term(a, plus) for a in d.atom.args))
        return atom if d.positive else Not(atom)
    cmp = Compare(d.op, _plus_term(d.left, plus), _plus_term(d.right, plus))
    return cmp if d.positive else Not(cmp)


def clause_formula(t: ClauseTemplate):
    """The clause of a template as a formula (a disjunction; ``+`` kept)."""
    plus = frozenset(t.plus_vars)
    parts = [_leaf_formula(d, plus) for d in t.literals]
    parts += [_leaf_formula(d, plus) for d in t.comparisons]
    for g in t.exists:
        body = reduce(And, [_leaf_formula(c, plus) for c in g.conjuncts])
        parts.append(Exists(tuple(g.variables), body))
    return reduce(Or, parts)


def split_clauses(mln: MLN) -> ClausalModel:
    """Split every soft formula with several CNF clauses into its clauses (see
    module docstring). A clause that does not compile back to itself on its
    own (e.g. a comparison whose variable's type only the rest of the formula
    tells) leaves its formula whole, learned as one weight."""
    formulas: list[FormulaDecl] = []
    origin: list[tuple[int, int]] = []
    for i, (decl, comp) in enumerate(zip(mln.formulas, compile_mln_detailed(mln))):
        templates = comp.templates
        pieces: list[FormulaDecl] | None = None
        if not decl.hard and len(templates) >= 2:
            pieces = []
            for t in templates:
                piece = FormulaDecl(clause_formula(t), weight=t.weight, fixed=decl.fixed, pos=decl.pos)
                try:
                    again = compile_formula(piece, mln).templates
                except MarkovLogicError:
                    pieces = None
                    break
                if len(again) != 1 or format_clause(again[0]) != format_clause(t) or again[0].plus_vars != t.plus_vars:
                    pieces = None
                    break
                pieces.append(piece)
        if pieces is None:
            formulas.append(decl)
            origin.append((i, -1))
        else:
            formulas.extend(pieces)
            origin.extend((i, t.clause_index) for t in templates)
    clausal = MLN(types=dict(mln.types), predicates=dict(mln.predicates), functions=dict(mln.functions),
                  formulas=formulas)
    return ClausalModel(mln=clausal, origin=origin, original=mln)


def param_coefficients(nets: list[GroundNetwork], n_params: int) -> np.ndarray:
    """The coefficient of each parameter in its clauses' weights (1 when unused)."""
    coef = np.ones(n_params)
    for net in reversed(nets):
        if len(net.param_index):
            coef[net.param_index] = net.param_coef
    return coef


def _weight(w: float) -> str:
    return repr(float(w))


def _merged_weight(model: ClausalModel, original_compiled: list, ks: list[int], compiled, by_formula: dict,
                   coefficients: np.ndarray, params: np.ndarray) -> float | None:
    """The weight of a split formula when its clauses' learned weights are in
    the proportions of the split (equal for Alchemy's ``w / k``): then the
    formula as the user wrote it, with that weight, is the same model. None
    otherwise (or for ``+`` formulas)."""
    if not original_compiled:
        original_compiled.extend(compile_mln_detailed(model.original))
    weights = []
    for k in ks:
        ids = by_formula.get(k, [])
        [t] = compiled[k].templates
        if len(ids) != 1 or t.plus_vars:
            return None
        i, clause = model.origin[k]
        scales = [u.weight_scale for u in original_compiled[i].templates if u.clause_index == clause]
        if len(scales) != 1 or scales[0] == 0:
            return None
        weights.append(float(coefficients[ids[0]] * params[ids[0]]) / scales[0])
    if not weights:
        return None
    w = weights[0]
    if all(abs(x - w) <= 1e-9 * max(1.0, abs(w)) for x in weights):
        return w
    return None


def learned_mln_text(
    model: ClausalModel,
    param_info: tuple[WeightParam, ...],
    params: np.ndarray,
    coefficients: np.ndarray | None = None,
) -> str:
    """The .mln text of the original model with the learned ``params`` of the
    clausal model's formulas (see module docstring)."""
    coefficients = np.ones(len(params)) if coefficients is None else coefficients
    mln = model.original
    compiled = compile_mln_detailed(model.mln)
    by_formula: dict[int, list[int]] = {}
    for j, p in enumerate(param_info):
        by_formula.setdefault(p.formula_index, []).append(j)
    pieces: dict[int, list[int]] = {}
    for k, (i, _) in enumerate(model.origin):
        pieces.setdefault(i, []).append(k)

    original_compiled: list = []
    header = MLN(types=dict(mln.types), predicates=dict(mln.predicates), functions=dict(mln.functions), formulas=[])
    lines = print_mln(header).rstrip("\n").split("\n") if (mln.types or mln.predicates or mln.functions) else []
    if lines and lines[-1] != "":
        lines.append("")
    for i, decl in enumerate(mln.formulas):
        ks = pieces.get(i, [])
        if decl.hard or not ks:
            lines.append(format_formula_decl(decl))
            continue
        prefix = "@" if decl.fixed else ""
        if len(ks) == 1 and model.origin[ks[0]][1] == -1:
            k = ks[0]
            ids = by_formula.get(k, [])
            templates = compiled[k].templates
            plus = any(t.plus_vars for t in templates)
            if not ids:       # no parameter: no grounding reached the formula
                lines.append(format_formula_decl(replace(decl, weight=0.0 if decl.weight is None else decl.weight)))
            elif len(ids) == 1 and not plus:
                lines.append(format_formula_decl(replace(decl, weight=float(params[ids[0]]))))
            else:
                # '+': one weight per constant combination. With one clause the
                # name is that clause (weight coef * param); otherwise the
                # whole formula with the constants (weight = the parameter).
                single = len(templates) == 1
                lines.append("// " + format_formula_decl(decl))
                for j in ids:
                    w = coefficients[j] * params[j] if single else params[j]
                    lines.append(f"{prefix}{_weight(w)}  {param_info[j].name}")
                lines.append("")
            continue
        merged = _merged_weight(model, original_compiled, ks, compiled, by_formula, coefficients, params)
        if merged is not None:
            # every clause kept the formula's proportions: the formula as written, with its weight
            lines.append(format_formula_decl(replace(decl, weight=merged)))
            continue
        lines.append("// " + format_formula_decl(decl))
        for k in ks:
            [t] = compiled[k].templates
            for j in by_formula.get(k, []):
                name = param_info[j].name if t.plus_vars else format_clause(t)
                lines.append(f"{prefix}{_weight(coefficients[j] * params[j])}  {name}")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
