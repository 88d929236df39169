"""Typed options of the public API: one dataclass per inference and learning
method, passed whole as ``options=`` (the method follows from its type)::

    from markovlogic.options import MaxWalkSATOptions, MCSATOptions

    world = mln.map(db, "Smokes", options=MaxWalkSATOptions(max_tries=5, seed=1))
    marginals = mln.infer(db, "Cancer", options=MCSATOptions(samples=5000))
    learned = mln.learn(db, ["Cancer"], options=DiscriminativeOptions(iterations=50), method="scg")

Methods that had an options class keep it (re-exported here): MC-SAT
(:class:`MCSATOptions`), atom Metropolis-Hastings (:class:`AtomMHOptions`),
SGMP, multi-task MH, Metropolis-Hastings and agglomerative clustering over
clusterings, SampleRank, piecewise training, lazy inference and
:class:`ParallelOptions`. Keyword options (``mln.map(db, q, method="maxwalksat",
max_tries=5)``) are still accepted, as before; giving one field both ways is
an error.

An options object's fields left at their defaults are the method's own
defaults; only the fields that differ are passed on.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .errors import ArgumentTypeError, OptionError
from .infer import EXACT_DEFAULT_SECONDS


# ---------------------------------------------------------------- MAP

@dataclass
class ILPOptions:
    """``method="ilp"``: exact MAP (HiGHS) with a proven bound. ``max_seconds``:
    stop with the best world and its bound and gap (None: wait for the
    proof); ``hard_weight``: hard clauses as soft ones of this weight."""

    max_seconds: float | None = EXACT_DEFAULT_SECONDS
    hard_weight: float | None = None


@dataclass
class CPSATOptions:
    """``method="cpsat"``: exact MAP by OR-Tools CP-SAT (the ``cpsat`` extra)."""

    max_seconds: float | None = EXACT_DEFAULT_SECONDS
    hard_weight: float | None = None


@dataclass
class ExactMAPOptions:
    """``method="exact"``: enumeration of each (small) component."""

    hard_weight: float | None = None


@dataclass
class MaxWalkSATOptions:
    """``method="maxwalksat"``: local search. ``max_flips`` per try,
    ``max_tries`` restarts, ``noise`` (the probability of a random-walk
    step), ``group_mutex`` (hard pair cliques moved as one factor)."""

    max_flips: int = 50_000
    max_tries: int = 20
    noise: float = 0.5
    seed: int = 0
    max_seconds: float | None = None
    hard_weight: float | None = None
    group_mutex: bool = False


@dataclass
class CPIOptions:
    """``method="cpi"``: cutting-plane inference over ``base`` (ilp, maxwalksat,
    cpsat or exact); ``max_flips``/``max_tries``/``noise`` with base
    maxwalksat."""

    base: str = "ilp"
    max_seconds: float | None = EXACT_DEFAULT_SECONDS
    seed: int = 0
    max_flips: int | None = None
    max_tries: int | None = None
    noise: float | None = None


# ---------------------------------------------------------------- marginals

@dataclass
class GibbsOptions:
    """``method="gibbs"``: Gibbs sampling, ``chains`` independent chains pooled."""

    samples: int = 1000
    burn_in: int = 100
    chains: int = 4
    seed: int = 0
    max_seconds: float | None = None
    hard_weight: float | None = None


@dataclass
class ExactMarginalsOptions:
    """``method="exact"``: enumeration of each component (at most ``max_atoms`` atoms)."""

    max_atoms: int | None = None


# ---------------------------------------------------------------- learning

@dataclass
class PLLOptions:
    """``method="pll"``: pseudo-likelihood (L-BFGS)."""

    iterations: int | None = None
    prior_stddev: float | None = None
    seed: int = 0
    tolerance: float | None = None


@dataclass
class DiscriminativeOptions:
    """``method="dn"`` or ``"scg"``: the conditional likelihood's gradient from
    MC-SAT samples (``inference="mcsat"``) or enumeration (``"exact"``)."""

    iterations: int | None = None
    prior_stddev: float | None = None
    seed: int = 0
    inference: str | None = None
    samples: int | None = None
    final_samples: int | None = None
    burn_in: int | None = None
    init: str | None = None
    average: bool | None = None
    tolerance: float | None = None
    max_seconds: float | None = None


@dataclass
class PerceptronOptions:
    """``method="perceptron"``: voted perceptron (MAP or sampled expectations)."""

    iterations: int | None = None
    prior_stddev: float | None = None
    seed: int = 0
    map_method: str | None = None
    learning_rate: float | None = None
    expectations: str | None = None
    samples: int | None = None
    burn_in: int | None = None
    init: str | None = None
    max_seconds: float | None = None


@dataclass
class MIRAOptions:
    """``method="mira"``: online MIRA over MAP worlds."""

    iterations: int | None = None
    prior_stddev: float | None = None
    seed: int = 0
    map_method: str | None = None
    C: float | None = None
    init: str | None = None
    max_seconds: float | None = None


def _existing() -> dict:
    """The options classes that live with their methods: class -> (task, method)."""
    from .cluster.agglomerative import AgglomerativeOptions
    from .cluster.mh import MHOptions
    from .infer.mcsat import MCSATOptions
    from .infer.mh import AtomMHOptions
    from .infer.multitask_mh import MultiTaskOptions
    from .infer.sgmp import SGMPOptions
    from .learn.piecewise import PiecewiseOptions
    from .learn.samplerank_core import SampleRankOptions

    return {
        MCSATOptions: (("marginals", "mcsat"),), AtomMHOptions: (("map", "mh"), ("marginals", "mh")),
        MHOptions: (("map", "mh"), ("marginals", "mh")), AgglomerativeOptions: (("map", "agglomerative"),),
        SGMPOptions: (("map", "sgmp"),), MultiTaskOptions: (("map", "multitask-mh"), ("marginals", "multitask-mh")),
        SampleRankOptions: (("learn", "samplerank"),), PiecewiseOptions: (("learn", "piecewise"),),
    }


_OWN = {
    ILPOptions: (("map", "ilp"),), CPSATOptions: (("map", "cpsat"),), ExactMAPOptions: (("map", "exact"),),
    MaxWalkSATOptions: (("map", "maxwalksat"),), CPIOptions: (("map", "cpi"),),
    GibbsOptions: (("marginals", "gibbs"),), ExactMarginalsOptions: (("marginals", "exact"),),
    PLLOptions: (("learn", "pll"),), DiscriminativeOptions: (("learn", "dn"), ("learn", "scg")),
    PerceptronOptions: (("learn", "perceptron"),), MIRAOptions: (("learn", "mira"),),
}


def merge(task: str, method: str | None, options, kwargs: dict) -> tuple[str | None, dict]:
    """The method and the keyword options of an API call given ``options`` (an
    options object or None) and keyword options ``kwargs``: the method follows
    from the object's type when not named; the object's non-default fields
    join ``kwargs`` (a field given both ways is an error)."""
    if options is None:
        return method, kwargs
    if not dataclasses.is_dataclass(options) or isinstance(options, type):
        raise ArgumentTypeError(f"options must be an options object (e.g. markovlogic.options.MCSATOptions), "
                                f"got {type(options).__name__}")
    kinds = _OWN.get(type(options)) or _existing().get(type(options))
    if kinds is None:
        raise ArgumentTypeError(f"{type(options).__name__} is not the options of an inference or learning method")
    methods = [m for t, m in kinds if t == task]
    if not methods:
        what = {"map": "MAP inference", "marginals": "marginal inference", "learn": "learning"}[task]
        raise OptionError(f"{type(options).__name__} are not options of {what}")
    if method is None:
        method = methods[0]
    elif method not in methods:
        raise OptionError(f"method {method!r} contradicts the options given ({type(options).__name__}: "
                          f"{' or '.join(methods)})")
    fields = {f.name: getattr(options, f.name) for f in dataclasses.fields(options)
              if f.init and not _is_default(f, getattr(options, f.name))}
    both = sorted(set(fields) & set(kwargs))
    if both:
        raise OptionError(f"option{'s' if len(both) > 1 else ''} {', '.join(both)} given both in options= and "
                          "as keyword arguments")
    return method, {**fields, **kwargs}


def _is_default(f: dataclasses.Field, value) -> bool:
    if f.default is not dataclasses.MISSING:
        default = f.default
    elif f.default_factory is not dataclasses.MISSING:
        default = f.default_factory()
    else:
        return False
    try:
        same = value == default
        return bool(same) if not hasattr(same, "all") else bool(same.all())
    except Exception:          # noqa: BLE001 - arrays and the like: not the default
        return False


def __getattr__(name: str):
    for cls in _existing():
        if cls.__name__ == name:
            return cls
    if name in ("LazyOptions",):
        from .infer.lazy import LazyOptions

        return LazyOptions
    if name == "ParallelOptions":
        from .parallel.options import ParallelOptions

        return ParallelOptions
    raise AttributeError(f"module 'markovlogic.options' has no attribute {name!r}")
