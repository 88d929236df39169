"""What the two SampleRank learners share: the options and the weight update.

SampleRank walks a Metropolis-Hastings chain over training worlds; at each
proposal ``y -> y'`` whose loss against the training truth changes, the
model should rank the better world above the worse one by a margin. When it
does not, :func:`rank_update` moves the weights ``theta``:

* ``perceptron``: ``theta += rate * g`` when ``theta . g <= 0``, with ``g``
  the feature difference better minus worse;
* ``mira``: the smallest change that makes ``theta . g >= margin`` (one
  constraint, closed form, step clipped at ``C``);
* ``mira++``: MIRA with two more constraints, the truth ranked above both
  worlds by the margin, solved by Hildreth's method.

The update (:func:`rank_update`) and the step loop are written once, over
any kind of state, in :mod:`markovlogic.onestate`. Two state kinds use them:
clusterings of an equivalence predicate (:mod:`.samplerank`) and the atoms of
a ground network (:mod:`.samplerank_atoms`); ``mln learn --method samplerank`` picks one from
the query predicates (learn/api.py). :class:`SampleRankOptions` is the one
options class of the method, for the CLI and the API.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import OptionError
from ..onestate import dot, hildreth, rank_update  # noqa: F401 (the update lives with the loop)

LOSSES = {"hamming": 0, "pairwise-f1": 1, "b3": 2}
ATOM_LOSSES = ("hamming",)          # losses over ordinary query atoms
UPDATES = {"perceptron": 0, "mira": 1, "mira++": 2}
ACCEPT = {"model": 0, "loss": 1}
STARTS = ("random", "false", "truth")
INITS = ("model", "pll")


def _real(v) -> bool:
    return not isinstance(v, (bool, np.bool_)) and isinstance(v, (int, float, np.integer, np.floating))


def _positive_int(v) -> bool:
    return not isinstance(v, (bool, np.bool_)) and isinstance(v, (int, np.integer)) and v >= 1


@dataclass
class SampleRankOptions:
    """Options of SampleRank (``mln learn --method samplerank``).

    ``loss``: None picks ``pairwise-f1`` for an equivalence predicate and
    ``hamming`` for ordinary query atoms. ``steps``: proposals per training
    world per epoch (default 100 per mention, or per sampled variable over
    atoms). ``start`` (atoms only): the chain's first world, ``random``,
    ``false`` (every query atom false) or ``truth`` (the training world);
    worlds that break a hard clause or block are repaired by WalkSAT.
    ``init`` (atoms only): the first weights, the model's (``model``) or
    the pseudo-likelihood optimum (``pll``). ``proposals`` (clusterings only):
    the probabilities of the five cluster moves (cluster/chain.py).
    """

    loss: str | None = None
    update: str = "mira"
    steps: int | None = None
    epochs: int = 5
    temperature: float = 1.0
    accept: str = "model"
    margin: float = 1.0
    C: float = 1.0                    # MIRA's largest step
    learning_rate: float = 1.0        # perceptron
    average: bool = True
    proposals: tuple[float, float, float, float, float] = (0.15, 0.1, 0.25, 0.25, 0.25)
    start: str = "random"
    init: str = "model"
    seed: int = 0
    max_seconds: float | None = None
    trace_every: int | None = None    # record the loss every this many steps (default steps // 50)

    def check(self) -> "SampleRankOptions":
        if self.loss is not None and self.loss not in LOSSES:
            raise OptionError(f"unknown loss {self.loss!r}; choose one of {', '.join(LOSSES)}")
        if self.update not in UPDATES:
            raise OptionError(f"unknown update {self.update!r}; choose one of {', '.join(UPDATES)}")
        if self.accept not in ACCEPT:
            raise OptionError(f"accept must be one of {', '.join(ACCEPT)}, got {self.accept!r}")
        if self.start not in STARTS:
            raise OptionError(f"start must be one of {', '.join(STARTS)}, got {self.start!r}")
        if self.init not in INITS:
            raise OptionError(f"init must be one of {', '.join(INITS)} for samplerank, got {self.init!r}")
        for name in ("steps", "trace_every"):
            v = getattr(self, name)
            if v is not None and not _positive_int(v):
                raise OptionError(f"{name} must be a positive integer, got {v!r}")
        if not _positive_int(self.epochs):
            raise OptionError(f"epochs must be a positive integer, got {self.epochs!r}")
        for name in ("margin", "C", "learning_rate"):
            v = getattr(self, name)
            if not (_real(v) and math.isfinite(v) and v > 0):
                raise OptionError(f"{name.replace('_', ' ')} must be a positive number, got {v!r}")
        if not (_real(self.temperature) and math.isfinite(self.temperature) and self.temperature >= 0):
            raise OptionError(f"temperature must be a number >= 0, got {self.temperature!r}")
        if not isinstance(self.average, (bool, np.bool_)):
            raise OptionError(f"average must be True or False, got {self.average!r}")
        try:
            p = np.asarray(self.proposals, dtype=np.float64)
        except (TypeError, ValueError):
            p = np.zeros(0)
        if p.shape != (5,) or not np.isfinite(p).all() or (p < 0).any() or p.sum() <= 0:
            raise OptionError("proposals must be 5 non-negative probabilities, not all zero")
        if isinstance(self.seed, (bool, np.bool_)) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise OptionError(f"seed must be a non-negative integer, got {self.seed!r}")
        if self.max_seconds is not None and not (_real(self.max_seconds) and self.max_seconds > 0):
            raise OptionError(f"max_seconds must be a positive number, got {self.max_seconds!r}")
        return self
