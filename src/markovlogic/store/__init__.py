"""store layer (see DESIGN.md): types, constants and evidence in DuckDB."""

from .constants import ConstantTable, constant_integer, constant_number, constant_value
from .store import FALSE, TRUE, UNKNOWN, EvidenceStore, FunctionInfo, PredicateInfo
from .world import WorldSpec, resolve_world

__all__ = [
    "ConstantTable",
    "EvidenceStore",
    "FunctionInfo",
    "PredicateInfo",
    "WorldSpec",
    "resolve_world",
    "constant_value",
    "constant_number",
    "constant_integer",
    "TRUE",
    "FALSE",
    "UNKNOWN",
]
