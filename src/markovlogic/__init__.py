"""markovlogic: a Markov logic engine for Python.

Public API: ``MLN`` and ``Database`` (model objects), plus the result types.
They are imported on first use, so that ``mln --help`` and argument errors do
not pay for the modules behind them.
"""

from .errors import MarkovLogicError

__all__ = ["MLN", "Database", "MarkovLogicError"]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in ("MLN", "Database"):
        from . import model

        return getattr(model, name)
    raise AttributeError(f"module 'markovlogic' has no attribute {name!r}")
