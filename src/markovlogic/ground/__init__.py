"""ground layer (see DESIGN.md): clause templates + evidence -> GroundNetwork, as SQL in DuckDB."""

from .assemble import GroundClauses
from .grounder import Grounder, ground
from .network import GroundNetwork, WeightParam

__all__ = ["GroundClauses", "GroundNetwork", "Grounder", "WeightParam", "ground"]
