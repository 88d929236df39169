"""What a learner returns: the learned parameters and the trace of the run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..ground.network import WeightParam


@dataclass
class TraceRow:
    """One iteration of a learner.

    ``objective`` is what the method reports (see ``LearnResult.objective_name``);
    ``params`` the full parameter vector after the iteration; ``seconds`` the
    time since learning started, or None where the learner does not time its
    rows (written as an empty cell by ``--trace``, never as 0.0).
    """

    iteration: int
    objective: float
    params: np.ndarray
    seconds: float | None = None
    info: dict = field(default_factory=dict)   # method-specific: lambda, step, loss, ...


@dataclass
class LearnResult:
    params: np.ndarray                  # float64[n_params]: learned weights (fixed ones unchanged)
    param_info: tuple[WeightParam, ...]
    method: str
    objective_name: str                 # e.g. "weighted PLL", "train CLL/atom", "MAP loss"
    trace: list[TraceRow] = field(default_factory=list)
    iterations: int = 0
    converged: bool = False
    seconds: float = 0.0
    stats: dict = field(default_factory=dict)

    @property
    def objective(self) -> float:
        return self.trace[-1].objective if self.trace else float("nan")

    def trace_columns(self) -> list[str]:
        return ["iteration", "objective", "seconds"] + [p.name for p in self.param_info]

    def trace_rows(self) -> list[list[float]]:
        return [[r.iteration, r.objective, "" if r.seconds is None else r.seconds, *r.params.tolist()]
                for r in self.trace]


# A learner reports each iteration to ``callback(row)``; returning True stops it.
Callback = Callable[[TraceRow], "bool | None"]
