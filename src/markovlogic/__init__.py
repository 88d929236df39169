"""markovlogic: a Markov logic engine for Python.

Public API: ``MLN`` and ``Database`` (model objects), plus the result types.
"""

from .errors import MarkovLogicError
from .model import MLN, Database

__all__ = ["MLN", "Database", "MarkovLogicError"]
__version__ = "0.1.0"
