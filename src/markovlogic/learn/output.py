"""Learned weights back into a model, written as Alchemy writes it.

A formula whose weight is one parameter (one CNF clause, no ``+``) keeps its
text and gets the learned weight (divided by the clause's scale: a negated
conjunction is stored as a clause with the opposite weight). A formula whose
CNF has several clauses learns one weight per clause, and a ``+`` formula one
weight per constant combination: Alchemy prints such a formula as a comment,
followed by each derived clause (constants substituted) with its weight; so do
we. Hard formulas are written unchanged; fixed (``@``) weights keep their
``@``. The learned ``MLN`` is parsed back from that text, so the file and the
object always agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from ..ground.network import GroundNetwork, WeightParam
from ..lang.printer import format_formula_decl, print_mln
from ..logic.cnf import compile_mln_detailed
from ..logic.format import format_clause
from ..model import MLN


def _weight_text(w: float) -> str:
    return repr(float(w))


def _binding(p: WeightParam) -> Mapping[str, str] | None:
    binding = getattr(p, "binding", None)
    if binding is None:
        return None
    return dict(binding)


def param_coefficients(nets: list[GroundNetwork], n_params: int) -> np.ndarray:
    """The coefficient of each parameter in its clauses' weights (1 when unused)."""
    coef = np.ones(n_params)
    for net in reversed(nets):
        if len(net.param_index):
            coef[net.param_index] = net.param_coef
    return coef


def learned_mln_text(
    mln: MLN,
    param_info: tuple[WeightParam, ...],
    params: np.ndarray,
    coefficients: np.ndarray | None = None,
    domains: dict[str, tuple[str, ...]] | None = None,
) -> str:
    """The .mln text of ``mln`` with the learned ``params`` (see module docstring)."""
    coefficients = np.ones(len(params)) if coefficients is None else coefficients
    compiled = compile_mln_detailed(mln, domains=domains)
    by_formula: dict[int, list[int]] = {}
    for j, p in enumerate(param_info):
        by_formula.setdefault(p.formula_index, []).append(j)

    header = MLN(types=dict(mln.types), predicates=dict(mln.predicates), functions=dict(mln.functions), formulas=[])
    lines = print_mln(header).rstrip("\n").split("\n") if (mln.types or mln.predicates or mln.functions) else []
    if lines and lines[-1] != "":
        lines.append("")
    for i, decl in enumerate(mln.formulas):
        templates = {t.clause_index: t for t in compiled[i].templates}
        ids = by_formula.get(i, [])
        if decl.hard:
            lines.append(format_formula_decl(decl))
            continue
        if not ids:
            # no grounding reached this formula: its weight is what it was
            lines.append(format_formula_decl(replace(decl, weight=0.0 if decl.weight is None else decl.weight)))
            continue
        plus = any(t.plus_vars for t in templates.values())
        if len(ids) == 1 and not plus and len(templates) <= 1:
            j = ids[0]
            t = templates.get(param_info[j].clause_index)
            scale = t.weight_scale if t is not None and t.weight_scale != 0 else 1.0
            lines.append(format_formula_decl(replace(decl, weight=float(coefficients[j] * params[j] / scale))))
            continue
        lines.append("// " + format_formula_decl(decl))
        prefix = "@" if decl.fixed else ""
        for j in sorted(ids, key=lambda j: (param_info[j].clause_index, j)):
            p = param_info[j]
            t = templates.get(p.clause_index)
            binding = _binding(p)
            if t is not None and (binding is not None or not t.plus_vars):
                body = format_clause(t, binding)
            else:
                body = p.name
            lines.append(f"{prefix}{_weight_text(coefficients[j] * params[j])}  {body}")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
