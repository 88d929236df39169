"""logic layer (see DESIGN.md): weighted formulas to clause templates."""

from .blocks import block_clauses
from .clauses import ClauseTemplate, Comparison, ExistsGroup, Literal
from .cnf import (
    FormulaCompilation,
    compile_formula,
    compile_mln,
    compile_mln_detailed,
    needs_weight,
    to_cnf,
)
from .format import bind_template, format_clause, format_template
from .nnf import expand_star, to_nnf
from .types import infer_variable_types

__all__ = [
    "ClauseTemplate",
    "Comparison",
    "ExistsGroup",
    "FormulaCompilation",
    "Literal",
    "bind_template",
    "block_clauses",
    "compile_formula",
    "compile_mln",
    "compile_mln_detailed",
    "expand_star",
    "format_clause",
    "format_template",
    "infer_variable_types",
    "needs_weight",
    "to_cnf",
    "to_nnf",
]
