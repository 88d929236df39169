"""What the samplers share: option checks and the chunked kernel runner.

Gibbs, MC-SAT, Metropolis-Hastings and multi-task MH import these from here;
:mod:`.marginals` (the dispatcher) imports the samplers, never the reverse.

The samplers run their compiled kernels in chunks (a few tenths of a second
each) so that a ``progress`` callback can be called with the number of
samples drawn so far and ``max_seconds`` can stop the run between chunks. The
chunking does not change the result: the random state lives in an array the
kernels carry from one chunk to the next.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from numbers import Integral, Real

from ..errors import OptionError

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
