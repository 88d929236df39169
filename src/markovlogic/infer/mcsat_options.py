"""The options of MC-SAT (:class:`MCSATOptions`), apart from the compiled
sampler (:mod:`.mcsat`): checking them, and the dispatcher's choice of a
sampler for tiny networks (:mod:`.tiny`), need neither numba nor the kernels."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..errors import OptionError
from .sampling import check_int, check_real, check_sampling

DEFAULT_MAX_PATH = 100
DEFAULT_GUIDE_WEIGHT = 3.0
INIT_METHODS = ("hard", "maxwalksat", "two-pass", "best")


@dataclass
class MCSATOptions:
    """Options of MC-SAT (``method="mcsat"``), for :func:`mcsat`,
    :class:`MCSATChain` and ``mln infer``.

    ``samples`` post-burn-in MC-SAT steps are averaged after ``burn_in``
    steps; ``seed``; ``max_seconds`` stops burn-in and sampling early (at
    least one sample is drawn). SampleSAT: ``walksat_prob`` (probability of
    a WalkSAT move while some constraint is violated), ``temperature``
    (simulated annealing: a move that violates ``d`` more constraints is
    kept with probability ``exp(-d / temperature)``; 0 never leaves the
    slice), ``max_steps`` (proposals per sample; default ``max(50,
    variables / 2)``), ``max_path`` (longest walk outside the slice).
    ``metropolis_steps``: Metropolis-Hastings proposals on the model per
    sample (default: as many as ``max_steps``; 0 for plain MC-SAT);
    ``guide_weight``: soft clauses at least this heavy propose the pair
    moves. ``rao_blackwell``: average conditional probabilities (default)
    or truth values (Alchemy). ``hard_weight``: treat hard clauses as soft
    clauses of this weight (Alchemy's behaviour, when they contradict each
    other; no mutex group is then formed). ``init``: a start world
    (repaired by WalkSAT if it breaks a hard clause; it takes precedence
    over ``init_method``).

    Poon's extensions (see the module docstring): ``init_method`` -- where
    the chain starts when no ``init`` is given: ``"hard"`` (WalkSAT on the
    hard clauses from a random world), ``"maxwalksat"`` (MaxWalkSAT's best
    world), ``"two-pass"`` (MaxWalkSAT on the soft clauses, then on all) or
    ``"best"`` (MaxWalkSAT from a random world and from the all-false world,
    the cheaper of the two worlds);
    ``init_flips``: MaxWalkSAT flips per pass (default ``max(10,000, 20 *``
    variables``)``, one try, then its greedy descent); ``group_mutex``: hard pair-clause cliques as
    at-most-one / exactly-one blocks (:mod:`.mutex`); ``joint_moves``: pair
    moves that also move atoms in blocks. ``cluster_moves`` (not Poon's):
    after each slice, ``max_steps / 10`` proposals to flip a whole set of
    atoms that the selected clauses or cycles of hard implications tie by
    equivalences, or to swap the true atom of blocks tied that way
    (:func:`_cluster_moves`).
    """

    samples: int = 1000
    burn_in: int = 100
    seed: int = 0
    max_seconds: float | None = None
    walksat_prob: float = 0.5
    temperature: float = 0.5
    max_steps: int | None = None
    metropolis_steps: int | None = None
    guide_weight: float = DEFAULT_GUIDE_WEIGHT
    max_path: int = DEFAULT_MAX_PATH
    rao_blackwell: bool = True
    hard_weight: float | None = None
    init: np.ndarray | None = None
    init_method: str = "hard"
    init_flips: int | None = None
    group_mutex: bool = False
    joint_moves: bool = True
    cluster_moves: bool = True

    def check(self) -> "MCSATOptions":
        """Raise :class:`OptionError` on a bad value; returns ``self``."""
        check_sampling(self.samples, self.burn_in, self.seed, self.max_seconds, None)
        check_real("walksat_prob", self.walksat_prob, 0.0, 1.0)
        check_real("temperature", self.temperature, 0.0)
        if self.max_steps is not None:
            check_int("max_steps", self.max_steps, 1)
        if self.metropolis_steps is not None:
            check_int("metropolis_steps", self.metropolis_steps, 0)
        check_int("max_path", self.max_path, 1)
        check_real("guide_weight", self.guide_weight, 0.0, low_open=True)
        if self.hard_weight is not None:
            check_real("hard_weight", self.hard_weight, 0.0, low_open=True)
        if self.init_method not in INIT_METHODS:
            raise OptionError(f"init must be one of {', '.join(INIT_METHODS)}, got {self.init_method!r}")
        if self.init_flips is not None:
            check_int("init_flips", self.init_flips, 1)
        for name in ("rao_blackwell", "group_mutex", "joint_moves", "cluster_moves"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise OptionError(f"{name.replace('_', '-')} must be True or False, got {getattr(self, name)!r}")
        return self


OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(MCSATOptions))


def make_options(options: MCSATOptions | None, kw: dict) -> MCSATOptions:
    """``options`` (a copy, with the keyword values ``kw`` written over it),
    or :class:`MCSATOptions` from ``kw``; checked. Unknown names are an
    :class:`OptionError` naming them."""
    unknown = sorted(set(kw) - OPTION_NAMES)
    if unknown:
        raise OptionError(f"option(s) {', '.join(unknown)} do not apply to mcsat; "
                          f"it takes {', '.join(sorted(OPTION_NAMES | {'progress'}))}")
    base = MCSATOptions() if options is None else options
    if not isinstance(base, MCSATOptions):
        raise OptionError(f"options must be an MCSATOptions, got {type(base).__name__}")
    return dataclasses.replace(base, **kw).check()
