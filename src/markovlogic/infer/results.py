"""Result objects returned by the inference algorithms.

Algorithms in ``infer/`` take a :class:`~markovlogic.ground.network.GroundNetwork`
and return one of these; they hold numpy arrays indexed by atom id. The
model-level API (``MLN.map`` / ``MLN.infer``) wraps them with atom names and
DataFrames.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class MapResult:
    world: np.ndarray                 # bool[n_atoms]
    score: float                      # sum of weights of satisfied soft clauses
    cost: float                       # sum of |w| of clauses not satisfied as their sign wants
    hard_violated: int                # violated hard clauses + violated blocks
    method: str
    seconds: float = 0.0
    optimal: bool = False             # proven optimal (exact methods)
    bound: float | None = None        # proven upper bound on the score (exact methods)
    gap: float | None = None          # (bound - score) / max(1, |score|)
    stats: dict = field(default_factory=dict)   # flips, tries, iterations, ...


@dataclass
class MarginalResult:
    probabilities: np.ndarray         # float64[n_atoms]
    method: str
    samples: int = 0
    seconds: float = 0.0
    stats: dict = field(default_factory=dict)   # burn-in, samples/s, convergence, ...
