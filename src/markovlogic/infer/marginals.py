"""Marginal inference: the dispatcher.

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

What the samplers share (option checks, the chunked kernel runner) lives in
:mod:`.sampling`; the samplers import it, and this module imports them.
"""

from __future__ import annotations

import inspect

from ..errors import InferenceError, OptionError
from ..ground.network import GroundNetwork
from .results import MarginalResult
from .sampling import ChunkRunner, check_int, check_real, check_sampling  # noqa: F401  (re-exported)

METHODS = ("mcsat", "gibbs", "exact", "mh", "multitask-mh")
_EXACT_IGNORED = {"seed", "progress", "max_seconds"}


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
        from .mcsat_options import make_options as mcsat_options

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
    if method == "mcsat":
        # a network small enough to enumerate: exact slice sampling in numpy
        # (no numba to load; infer/tiny.py), else the compiled chain
        from .mcsat_options import make_options
        from .tiny import mcsat_tiny, mcsat_tiny_fits

        kw = {k: v for k, v in options.items() if k not in ("options", "progress")}
        opt = make_options(options.get("options"), kw)
        if mcsat_tiny_fits(net, opt):
            try:
                return mcsat_tiny(net, opt, options.get("progress"))
            except InferenceError:
                pass        # unsatisfiable hard clauses: the compiled chain's error names them
    return _sampler(method)(net, **options)
