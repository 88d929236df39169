"""Options of lazy inference, declared once for the API, the CLI and the docs."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from numbers import Integral, Real

from ...errors import OptionError

BATCHES = ("bad", "clause", "ahead")
LAZY_METHODS = {"map": ("maxwalksat",), "marginals": ("mcsat",)}


@dataclass
class LazyOptions:
    """What lazy inference (``lazy=True``; ``mln infer --lazy``) adds to the
    options of the algorithm it runs (MaxWalkSAT's or MC-SAT's own).

    ``batch`` (MaxWalkSAT): when a step draws a clause with an inactive atom,
    activate the inactive atoms of every clause that is bad at that moment
    (``"bad"``, fewer activation rounds) or of that clause only
    (``"clause"``, the fewest active atoms), or also, one step ahead, those
    of the clauses that a flip of a newly active atom could make false
    (``"ahead"``). The steps are the same every way (:mod:`.maxwalksat`).
    ``growth`` (MaxWalkSAT): a round activates at least this fraction of the
    active atoms, adding inactive atoms of held clauses with the fewest true
    literals: each round rebuilds the search's arrays (time proportional to
    the held clauses), so without it a long search that keeps reaching new
    atoms pays a rebuild every few flips; with it the rounds are
    logarithmic in the number of active atoms, for more atoms held (the
    default 0: only the atoms the steps need; tuffy/class: 233 rounds and
    9 s with 0, 9 rounds and 1.5 s with 0.25, holding every clause; Cora
    (90 citations): 13 rounds and 28,468 clauses with 0, 8 rounds and
    286,002 clauses with 0.25).

    ``threshold`` (MC-SAT): an inactive atom is activated when, in a checked
    sample, its probability of being true given the rest of the world
    exceeds this (:mod:`.mcsat`); 0 activates every atom that can be true.
    ``checks`` (MC-SAT): samples checked per round of sampling.
    ``max_rounds`` (MC-SAT): rounds of activation before the active set is
    frozen (the result then says ``converged: False``).

    ``count_total``: count the ground clauses of the full network in SQL
    (without fetching them) for the statistics, giving up after
    ``count_seconds``.
    """

    batch: str = "bad"
    growth: float = 0.0
    threshold: float = 1e-3
    checks: int = 10
    max_rounds: int = 30
    count_total: bool = True
    count_seconds: float = 30.0

    def check(self) -> "LazyOptions":
        if self.batch not in BATCHES:
            raise OptionError(f"lazy batch must be one of {', '.join(BATCHES)}, got {self.batch!r}")
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, Real) \
                or not 0.0 <= float(self.threshold) < 0.5:
            raise OptionError(f"lazy threshold must be a probability in [0, 0.5), got {self.threshold!r}")
        if isinstance(self.growth, bool) or not isinstance(self.growth, Real) \
                or not (0.0 <= float(self.growth) <= 10.0):
            raise OptionError(f"lazy growth must be a number in [0, 10], got {self.growth!r}")
        for name, low in (("checks", 1), ("max_rounds", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, Integral) or v < low:
                raise OptionError(f"lazy {name.replace('_', '-')} must be an integer >= {low}, got {v!r}")
        if not isinstance(self.count_total, bool):
            raise OptionError(f"lazy count_total must be True or False, got {self.count_total!r}")
        if isinstance(self.count_seconds, bool) or not isinstance(self.count_seconds, Real) \
                or not (self.count_seconds > 0 and math.isfinite(self.count_seconds)):
            raise OptionError(f"lazy count_seconds must be a positive number, got {self.count_seconds!r}")
        return self


def lazy_options(value) -> LazyOptions:
    """``lazy=True`` / a dict of :class:`LazyOptions` fields / a LazyOptions."""
    if value is True:
        return LazyOptions().check()
    if isinstance(value, LazyOptions):
        return value.check()
    if isinstance(value, dict):
        names = {f.name for f in fields(LazyOptions)}
        unknown = sorted(set(value) - names)
        if unknown:
            raise OptionError(f"unknown lazy option(s) {', '.join(unknown)}; the options are {', '.join(sorted(names))}")
        return LazyOptions(**value).check()
    raise OptionError(f"lazy must be True, a dict of lazy options or a LazyOptions, got {value!r}")
