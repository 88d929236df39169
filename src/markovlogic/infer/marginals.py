"""Marginal inference: the dispatcher and what the samplers share.

``solve_marginals(net, method, **options)`` runs MC-SAT (default), Gibbs
sampling, Metropolis-Hastings or exact enumeration and returns a
:class:`~markovlogic.infer.results.MarginalResult`. Options are checked
before any work starts; a bad one is an :class:`~markovlogic.errors.OptionError`.

Connected components: exact enumeration works per component. The samplers
run one chain over the whole network: components are independent, so one run
over their union samples each of them exactly as separate runs would (a move
only touches clauses of one component), and one run avoids a kernel call per
component on networks with thousands of small ones. Atoms that no clause
touches get their exact marginal (1/2, or 1/size inside a block).

The samplers run their compiled kernels in chunks (a few tenths of a second
each) so that a ``progress`` callback can be called with the number of
samples drawn so far and ``max_seconds`` can stop the run between chunks. The
chunking does not change the result: the random state lives in an array the
kernels carry from one chunk to the next.
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable
from numbers import Integral, Real

from ..errors import OptionError
from ..ground.network import GroundNetwork
from .results import MarginalResult

METHODS = ("mcsat", "gibbs", "exact", "mh", "multitask-mh")
_EXACT_IGNORED = {"seed", "progress", "max_seconds"}
_CHUNK_SECONDS = 0.2


def check_int(name: str, value, minimum: int) -> int:
    """``value`` as an int, or :class:`OptionError` if not an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise OptionError(f"{name.replace('_', '-')} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_real(name: str, value, low: float, high: float = math.inf, low_open: bool = False) -> float:
    """``value`` as a float in [low, high] (or (low, high] if ``low_open``)."""
    if isinstance(value, bool) or not isinstance(value, Real) or math.isnan(value) or value > high \
            or value < low or (low_open and value == low):
        bound = f"> {low}" if low_open else f">= {low}"
        if high < math.inf:
            bound += f" and <= {high}"
        raise OptionError(f"{name.replace('_', '-')} must be a number {bound}, got {value!r}")
    return float(value)


def check_sampling(samples, burn_in, seed, max_seconds, progress) -> None:
    """The options every sampler takes."""
    check_int("samples", samples, 1)
    check_int("burn_in", burn_in, 0)
    if isinstance(seed, bool) or not isinstance(seed, Integral):
        raise OptionError(f"seed must be an integer, got {seed!r}")
    if max_seconds is not None:
        check_real("max_seconds", max_seconds, 0.0, low_open=True)
    if progress is not None and not callable(progress):
        raise OptionError("progress must be a callable taking the number of samples drawn")


class ChunkRunner:
    """Runs a kernel ``step(k)`` (draw ``k`` samples) in chunks sized to take
    about ``_CHUNK_SECONDS`` each, stopping at a deadline."""

    def __init__(self, max_seconds: float | None) -> None:
        self.start = time.perf_counter()
        self.deadline = None if max_seconds is None else self.start + max_seconds
        self.stopped_early = False
        self._rate = 0.0  # samples per second, once measured

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.perf_counter() >= self.deadline

    def run(self, step: Callable[[int], None], total: int, progress: Callable[[int], None] | None = None,
            at_least_one: bool = False) -> int:
        """Call ``step`` until ``total`` samples are drawn or time is up (but at
        least one sample if ``at_least_one``); returns the samples drawn."""
        done = 0
        chunk = 1 if self._rate == 0.0 else max(1, int(self._rate * _CHUNK_SECONDS))
        while done < total:
            if self.out_of_time() and not (at_least_one and done == 0):
                self.stopped_early = True
                break
            k = min(chunk, total - done)
            if self.deadline is not None and self._rate > 0.0:
                left = self.deadline - time.perf_counter()
                k = max(1, min(k, int(self._rate * left) + 1))
            t0 = time.perf_counter()
            step(k)
            dt = time.perf_counter() - t0
            done += k
            if progress is not None:
                progress(done)
            if dt > 0.0:
                self._rate = k / dt
                chunk = max(1, min(int(self._rate * _CHUNK_SECONDS), 4 * k))
            else:
                chunk = 4 * k
        return done

    def elapsed(self) -> float:
        return time.perf_counter() - self.start


def check_options(method: str, options: dict) -> None:
    """Reject an unknown method, options the method does not take, and bad
    values of the common ones, before any work (grounding included) starts."""
    if method not in METHODS:
        raise OptionError(f"unknown marginal method {method!r}; choose one of {', '.join(METHODS)}")
    if method == "exact":
        extra = set(options) - _EXACT_IGNORED - {"max_atoms"}
        if extra:
            raise OptionError(f"option(s) {', '.join(sorted(extra))} do not apply to exact inference")
        if "max_atoms" in options:
            check_int("max_atoms", options["max_atoms"], 1)
        return
    if method == "mh":
        from .mh import make_options

        if options.get("progress") is not None and not callable(options["progress"]):
            raise OptionError("progress must be a callable taking the number of samples drawn")
        make_options(None, {k: v for k, v in options.items() if k != "progress"})
        return
    if method == "mcsat":
        from .mcsat import make_options as mcsat_options

        if options.get("progress") is not None and not callable(options["progress"]):
            raise OptionError("progress must be a callable taking the number of samples drawn")
        mcsat_options(None, {k: v for k, v in options.items() if k != "progress"})
        return
    if method == "multitask-mh":
        from .multitask_mh import make_options as multitask_options

        if options.get("progress") is not None and not callable(options["progress"]):
            raise OptionError("progress must be a callable taking the number of samples drawn")
        multitask_options(None, {k: v for k, v in options.items() if k != "progress"})
        return
    accepted = set(inspect.signature(_sampler(method)).parameters) - {"net"}
    extra = set(options) - accepted
    if extra:
        raise OptionError(
            f"option(s) {', '.join(sorted(extra))} do not apply to {method}; "
            f"it takes {', '.join(sorted(accepted))}"
        )
    for name, minimum in (("samples", 1), ("burn_in", 0), ("chains", 1)):
        if name in options:
            check_int(name, options[name], minimum)
    if options.get("max_seconds") is not None:
        check_real("max_seconds", options["max_seconds"], 0.0, low_open=True)


def _sampler(method: str):
    if method == "mcsat":
        from .mcsat import mcsat

        return mcsat
    from .gibbs import gibbs

    return gibbs


def solve_marginals(net: GroundNetwork, method: str = "mcsat", **options) -> MarginalResult:
    """P(atom = true) for every atom of ``net``.

    ``method``: ``"mcsat"`` (:func:`~markovlogic.infer.mcsat.mcsat`),
    ``"gibbs"`` (:func:`~markovlogic.infer.gibbs.gibbs`), ``"mh"``
    (:func:`~markovlogic.infer.mh.mh_marginals`), ``"multitask-mh"``
    (:func:`~markovlogic.infer.multitask_mh.multitask_marginals`) or ``"exact"``
    (:func:`~markovlogic.infer.exact.exact_marginals`; ``seed``,
    ``progress`` and ``max_seconds`` are accepted and ignored, ``max_atoms``
    is passed on). ``options`` are the keyword arguments of that function."""
    check_options(method, options)
    if method == "exact":
        from .exact import DEFAULT_MAX_ATOMS, exact_marginals

        return exact_marginals(net, max_atoms=int(options.get("max_atoms", DEFAULT_MAX_ATOMS)))
    if method == "mh":
        from .mh import mh_marginals

        return mh_marginals(net, **options)
    if method == "multitask-mh":
        from .multitask_mh import multitask_marginals

        return multitask_marginals(net, **options)
    return _sampler(method)(net, **options)
