"""Discriminative learning (Alchemy's ``learnwts -d``): maximise the conditional
log-likelihood of the query atoms given the evidence,

    CLL(w) = sum over training networks of  w . n(y) - log Z_x(w),

plus a Gaussian prior (mean = the weights in the model, standard deviation 2 by
default, as in Alchemy). Its gradient is n(y) - E_w[n] - (w - mu)/sigma^2 and
its negative Hessian Cov_w[n] + I/sigma^2, with expectations from an
expectation engine (MC-SAT samples, warm-started across iterations, or exact
enumeration).

* ``learn_dn``: diagonal Newton, direction d = M g with M = 1/(Var[n] + 1/sigma^2);
* ``learn_scg``: scaled conjugate gradient preconditioned with M (Polak-Ribiere,
  restarted when the direction stops ascending);
* ``learn_perceptron``: voted (averaged) perceptron, E[n] approximated by the
  counts of the MAP world (or, with ``expectations="mcsat"``, the mean
  counts of a few MC-SAT samples: stochastic gradient steps on the CLL),
  per-weight learning rates.

DN and SCG share Lowd and Domingos' (2007) step-size control: the step is
alpha d with alpha = d.g / (d^T H d + lambda d.d), the Hessian product from the
samples. After each step the actual change of the CLL is bounded from below by
the new gradient (concavity: CLL(w+s) - CLL(w) >= s . g(w+s)); with the
predicted change s.g - s^T H s / 2 the ratio rho adjusts the trust region:
rho > 0.75 halves lambda, rho < 0 multiplies it by 4 and takes the step back
(the saved moments of the previous point are reused; no new inference).
Learning stops when the predicted improvement alpha d.g falls below
``tolerance`` or after ``iterations`` inference calls.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass

import numpy as np

from ..errors import OptionError
from ..ground.network import GroundNetwork
from ..parallel.tasks import each
from .data import TrainingSet, prepare, prior_terms
from .metrics import average_cll
from .engines import EngineFactory, MapFactory, Moments, expectation_factory, map_factory
from .result import Callback, LearnResult, TraceRow

DEFAULT_PRIOR_STDDEV = 2.0
DEFAULT_LAMBDA = 100.0      # Alchemy's -cgLambda
DEFAULT_MAX_STEP = None     # no cap on the change of one weight per iteration (Alchemy has none)
INITS = ("pll", "model")


def marginal_cll(data: TrainingSet, marginals: list[np.ndarray]) -> float:
    """Mean over the query atoms of log P(atom = its training value), from
    marginals clipped to [1e-4, 1 - 1e-4] (the per-atom CLL reported on test data)."""
    probs = [prob[net.is_query] for net, prob in zip(data.nets, marginals)]
    truth = [world[net.is_query] for net, world in zip(data.nets, data.worlds)]
    return average_cll(np.concatenate(probs), np.concatenate(truth))


def _make_engines(data: TrainingSet, factory, seed: int) -> list:
    return [factory(net, seed + 1009 * k) for k, net in enumerate(data.nets)]


def _save(engines: list) -> list:
    return [e.save() if hasattr(e, "save") else None for e in engines]


def _restore(engines: list, states: list | None) -> None:
    """Back to the chain worlds of an accepted point (a rejected step is taken
    back in the chains as well as in the weights, see ``SampledEngine``)."""
    for e, state in zip(engines, states or []):
        if hasattr(e, "restore"):
            e.restore(state)


def _moments(engines: list, params: np.ndarray) -> Moments:
    # one engine per training database, on the current threads (parallel/tasks.py)
    return Moments.combine(each(lambda e: e.moments(params), engines))


def sample_schedule(samples: int, final_samples: int | None, iterations: int) -> np.ndarray:
    """Samples per iteration (index 0 = iteration 1): ``samples`` throughout,
    or, with ``final_samples``, growing linearly from ``samples`` at the first
    iteration to ``final_samples`` at the last. Early steps are large and a
    few samples point them well enough; late steps are small and the
    sampling noise of the gradient, not its size, decides where the weights
    end up, so that is where samples pay."""
    if final_samples is None:
        return np.full(iterations, int(samples), dtype=np.int64)
    if isinstance(final_samples, bool) or int(final_samples) != final_samples or final_samples < samples:
        raise OptionError(f"final_samples must be an integer at least samples ({samples}), got {final_samples!r}")
    return np.rint(np.linspace(samples, final_samples, iterations)).astype(np.int64)


def _set_samples(engines: list, n: int) -> None:
    for e in engines:
        if hasattr(e, "samples"):
            e.samples = int(n)


@dataclass
class _Point:
    params: np.ndarray
    grad: np.ndarray
    moments: Moments
    objective: float
    chains: list | None = None     # each engine's chain world after this point's samples


def _second_order(
    nets: list[GroundNetwork],
    *,
    method: str,
    iterations: int,
    prior_stddev: float | None,
    seed: int,
    inference: str | EngineFactory,
    samples: int,
    burn_in: int,
    initial_lambda: float,
    max_lambda: float,
    max_step: float | None,
    init: str | np.ndarray,
    tolerance: float,
    max_seconds: float | None,
    callback: Callback | None,
    average: bool = False,
    final_samples: int | None = None,
) -> LearnResult:
    start = time.perf_counter()
    schedule = sample_schedule(samples, final_samples, iterations)
    data = prepare(nets)
    # the starting point first: its pseudo-likelihood terms are freed before the chains' state is built
    w = _starting_point(nets, data, init)
    gc.collect()        # the pseudo-likelihood fit's reference cycles (its terms) go before the chains come
    engines = _make_engines(data, expectation_factory(inference, samples=samples, burn_in=burn_in), seed)
    mean, learn = data.init.copy(), data.learnable
    lam = float(initial_lambda)
    prev: _Point | None = None
    prev_dir: np.ndarray | None = None
    prev_precond: np.ndarray | None = None
    trace: list[TraceRow] = []
    converged = False
    backtracks = 0
    for it in range(1, iterations + 1):
        _set_samples(engines, schedule[it - 1])
        mom = _moments(engines, w)
        _, prior_grad, prior_inv = prior_terms(w, mean, prior_stddev, learn)
        grad = np.where(learn, data.data_counts - mom.mean + prior_grad, 0.0)
        point = _Point(w.copy(), grad, mom, marginal_cll(data, mom.marginals), _save(engines))
        backtracked = False
        rho = float("nan")
        if prev is not None:
            step = point.params - prev.params
            h_step = prev.moments.cov_dot(step) + prior_inv * step
            predicted = float(step @ prev.grad - 0.5 * step @ h_step)
            real = float(step @ grad)          # lower bound on the actual change
            rho = real / predicted if predicted != 0 else (1.0 if real >= 0 else -1.0)
            if rho > 0.75:
                lam /= 2.0
            if rho < 0:
                lam = min(lam * 4.0, max_lambda)
                backtracked = True
                backtracks += 1
                point = prev
                _restore(engines, prev.chains)
        row = TraceRow(it, point.objective, point.params.copy(), time.perf_counter() - start,
                       {"lambda": lam, "rho": rho, "backtracked": backtracked})
        trace.append(row)
        stop = callback is not None and bool(callback(row))
        if it == iterations or stop or (max_seconds is not None and time.perf_counter() - start > max_seconds):
            w = point.params
            break
        precond = np.where(learn, 1.0 / (point.moments.var + prior_inv + 1e-5), 0.0)
        g = point.grad
        if backtracked and prev_dir is not None:
            direction = prev_dir
        else:
            direction = precond * g
            if method == "scg" and prev_dir is not None and prev is not None and prev_precond is not None:
                old = prev.grad
                denom = float(old @ (prev_precond * old))
                beta = max(0.0, float(g @ (precond * (g - old))) / denom) if denom > 0 else 0.0
                candidate = direction + beta * prev_dir
                if float(candidate @ g) > 0:
                    direction = candidate
        h_dir = point.moments.cov_dot(direction) + prior_inv * direction
        dg = float(direction @ g)
        denom = float(direction @ h_dir) + lam * float(direction @ direction)
        alpha = dg / denom if denom > 0 else 0.0
        if max_step is not None and alpha > 0:
            biggest = float(np.max(np.abs(direction)))
            if alpha * biggest > max_step:
                alpha = max_step / biggest
        if alpha * dg < tolerance or not np.isfinite(alpha):
            converged = True
            w = point.params
            break
        if not backtracked:
            prev, prev_precond = point, precond
        prev_dir = direction
        w = point.params + alpha * direction
    else:  # pragma: no cover - the loop always breaks
        pass
    if average and len(trace) > 1:
        # Polyak-Ruppert: the mean of the accepted points of the second half
        w = np.mean([r.params for r in trace[len(trace) // 2:]], axis=0)
    return LearnResult(
        params=w.copy(),
        param_info=data.param_info,
        method=method,
        objective_name="train CLL per query atom",
        trace=trace,
        iterations=len(trace),
        converged=converged,
        seconds=time.perf_counter() - start,
        stats={
            "lambda": lam,
            "backtracks": backtracks,
            "samples": sum(getattr(e, "drawn", 0) for e in engines),
        },
    )


def _starting_point(nets: list[GroundNetwork], data: TrainingSet, init: str | np.ndarray) -> np.ndarray:
    """Where DN and SCG start: the pseudo-likelihood optimum ("pll"), the
    model's weights ("model", Alchemy's choice), or given parameters."""
    w = data.init.copy()
    if isinstance(init, str):
        if init not in INITS:
            raise OptionError(f"unknown init {init!r}; choose one of {', '.join(INITS)}")
        if init == "pll":
            from .pll import learn_pll

            w = learn_pll(nets).params
        return w
    given = np.asarray(init, dtype=np.float64)
    if given.shape != w.shape:
        raise OptionError(f"init has {given.size} weights, the networks {w.size}")
    w[data.learnable] = given[data.learnable]
    return w


_SECOND_ORDER_DOC = """

    Arguments: ``iterations`` (inference calls, Alchemy's ``-dNumIter``),
    ``prior_stddev`` (Gaussian prior around the model's weights; None: no
    prior), ``inference``: "mcsat" (``samples`` worlds per iteration from one
    MC-SAT chain kept across iterations and started at the training world;
    ``burn_in`` steps before the first iteration), "exact", or a factory
    ``(net, seed) -> engine``; ``init``: "pll" (default: start from the
    pseudo-likelihood optimum, a few seconds; fewer iterations are needed
    than from zero: on UW-CSE fold 1, 20 from pll against about 50 from
    all-zero weights, whose first samples are uniform, dense worlds),
    "model" (the model's weights, as Alchemy) or an array;
    ``initial_lambda``, ``max_lambda``: the trust region (Alchemy's
    ``-cgLambda``, ``-cgMaxLambda``); ``max_step``: optional cap on the change
    of any weight per iteration; ``tolerance``: stop when the predicted
    improvement falls below it; ``max_seconds``; ``callback(row)`` after each
    iteration (True stops); ``average``: return the mean of the weights of
    the second half of the iterations (Polyak-Ruppert averaging: the
    sampled gradients make the last iterate noisy) instead of the last;
    ``final_samples``: grow the samples per iteration linearly from
    ``samples`` to this at the last iteration (:func:`sample_schedule`)."""


def learn_dn(
    nets: list[GroundNetwork],
    *,
    iterations: int = 100,
    prior_stddev: float | None = DEFAULT_PRIOR_STDDEV,
    seed: int = 0,
    inference: str | EngineFactory = "mcsat",
    samples: int = 5,
    burn_in: int = 5,
    init: str | np.ndarray = "pll",
    initial_lambda: float = DEFAULT_LAMBDA,
    max_lambda: float = 1e12,
    max_step: float | None = DEFAULT_MAX_STEP,
    tolerance: float = 1e-4,
    max_seconds: float | None = None,
    callback: Callback | None = None,
    average: bool = False,
    final_samples: int | None = None,
) -> LearnResult:
    return _second_order(
        nets, method="dn", iterations=iterations, prior_stddev=prior_stddev, seed=seed,
        inference=inference, samples=samples, burn_in=burn_in, initial_lambda=initial_lambda,
        max_lambda=max_lambda, max_step=max_step, init=init, tolerance=tolerance,
        max_seconds=max_seconds, callback=callback, average=average, final_samples=final_samples,
    )


learn_dn.__doc__ = "Diagonal Newton with Lowd and Domingos' trust region (module docstring)." + _SECOND_ORDER_DOC


def learn_scg(
    nets: list[GroundNetwork],
    *,
    iterations: int = 100,
    prior_stddev: float | None = DEFAULT_PRIOR_STDDEV,
    seed: int = 0,
    inference: str | EngineFactory = "mcsat",
    samples: int = 5,
    burn_in: int = 5,
    init: str | np.ndarray = "pll",
    initial_lambda: float = DEFAULT_LAMBDA,
    max_lambda: float = 1e12,
    max_step: float | None = DEFAULT_MAX_STEP,
    tolerance: float = 1e-4,
    max_seconds: float | None = None,
    callback: Callback | None = None,
    average: bool = False,
    final_samples: int | None = None,
) -> LearnResult:
    return _second_order(
        nets, method="scg", iterations=iterations, prior_stddev=prior_stddev, seed=seed,
        inference=inference, samples=samples, burn_in=burn_in, initial_lambda=initial_lambda,
        max_lambda=max_lambda, max_step=max_step, init=init, tolerance=tolerance,
        max_seconds=max_seconds, callback=callback, average=average, final_samples=final_samples,
    )


learn_scg.__doc__ = ("Scaled conjugate gradient preconditioned with the inverse diagonal Hessian "
                     "(Alchemy's default discriminative learner)." + _SECOND_ORDER_DOC)


def map_loss(data: TrainingSet, worlds: list[np.ndarray]) -> int:
    """Number of query atoms whose value differs from the training world."""
    return int(sum(int((w[n.is_query] != y[n.is_query]).sum()) for n, w, y in zip(data.nets, worlds, data.worlds)))


def learn_perceptron(
    nets: list[GroundNetwork],
    *,
    iterations: int = 100,
    prior_stddev: float | None = DEFAULT_PRIOR_STDDEV,
    seed: int = 0,
    map_method: str | MapFactory = "maxwalksat",
    learning_rate: float = 0.1,
    per_weight: bool = True,
    init: str | np.ndarray = "pll",
    max_seconds: float | None = None,
    callback: Callback | None = None,
    expectations: str | EngineFactory = "map",
    samples: int = 5,
    burn_in: int = 5,
) -> LearnResult:
    """Voted perceptron (Collins; Singla and Domingos): w += eta * (n(y) -
    n(MAP_w) - (w - mu)/sigma^2), returning the average of the weights over the
    iterations. With ``per_weight`` (the default) each weight's step is
    divided by the larger of its counts in the data and in the MAP world (at
    least 1), so no weight moves by more than about ``learning_rate`` per
    iteration whatever the number of its groundings: the perceptron's poor
    conditioning (Lowd and Domingos) fixed per weight. The default rate, 0.1,
    is small beside the weights it starts from (the pseudo-likelihood
    optimum's are mostly between 0.1 and 2 on UW-CSE): with 0.5 the MAP loss
    jumped between 90 and 430 wrong atoms from one iteration to the next on
    UW-CSE fold 1, with 0.1 between 85 and 140 (AUC-PR 0.411 and 0.413). Alchemy divides by the
    true groundings in the data only, which lets a clause true nowhere in the
    data but millions of times in a MAP world jump by millions.
    ``map_method``: "maxwalksat" (warm-started), "ilp", "exact" or a factory
    ``(net, seed) -> engine``; ``init``: the first weights, "pll" (default),
    "model" (the model's, as Alchemy) or an array. From all-zero weights every
    world is a MAP world and the MAP world depends only on the direction of
    the weights, so the perceptron's weights come out at a scale set by the
    learning rate, not by the data: on UW-CSE fold 1, learning rates 0.5 and
    0.1 gave the same MAP losses and AUC-PR and test CLL -0.05 and -0.16.
    Started at the pseudo-likelihood optimum, the updates correct a
    calibrated model (test CLL -0.029, AUC-PR unchanged).

    ``expectations``: "map" (the above: E[n] approximated by the counts of
    the MAP world, Collins' perceptron as Singla and Domingos ran it) or an
    expectation engine as for dn/scg: "mcsat" (the mean counts of
    ``samples`` worlds per iteration from one MC-SAT chain kept across
    iterations and started at the training world, ``burn_in`` steps before
    the first) or "exact". With sampled expectations the update is a
    stochastic gradient step on the conditional log-likelihood itself, with
    the per-weight rates and the averaging above. The MAP world is a poor
    stand-in for E[n] on sparse relational data: on UW-CSE it leaves almost
    every advisedBy atom false, so each update pushes weights towards making
    the truth the mode rather than towards calibrated probabilities (fold 1:
    the MAP perceptron's weights lower the training CLL below the
    pseudo-likelihood optimum's; see bench/workloads/learn_uwcse.py). The
    objective reported is then the training CLL per query atom from the
    samples' marginals instead of the MAP loss."""
    start = time.perf_counter()
    data = prepare(nets)
    sampled = not (isinstance(expectations, str) and expectations == "map")
    if sampled:
        engines = _make_engines(data, expectation_factory(expectations, samples=samples, burn_in=burn_in), seed)
    else:
        engines = _make_engines(data, map_factory(map_method), seed)
    mean, learn = data.init.copy(), data.learnable
    w = _starting_point(nets, data, init)
    total = np.zeros_like(w)
    trace: list[TraceRow] = []
    for it in range(1, iterations + 1):
        if sampled:
            mom = _moments(engines, w)
            model_counts = mom.mean
            objective = marginal_cll(data, mom.marginals)
            info: dict = {"train_cll": objective}
        else:
            worlds = each(lambda e: e.map_world(w), engines)
            model_counts = sum(counter(x) for counter, x in zip(data.counters, worlds))
            loss = map_loss(data, worlds)
            objective = float(loss)
            info = {"loss": loss}
        _, prior_grad, _ = prior_terms(w, mean, prior_stddev, learn)
        grad = np.where(learn, data.data_counts - model_counts + prior_grad, 0.0)
        rate = float(learning_rate)
        if per_weight:
            rate = rate / np.maximum(1.0, np.maximum(np.abs(data.data_counts), np.abs(model_counts)))
        w = w + rate * grad
        total += w
        avg = total / it
        row = TraceRow(it, objective, avg.copy(), time.perf_counter() - start, info)
        trace.append(row)
        if callback is not None and callback(row):
            break
        if max_seconds is not None and time.perf_counter() - start > max_seconds:
            break
    return LearnResult(
        params=trace[-1].params.copy() if trace else w,
        param_info=data.param_info,
        method="perceptron",
        objective_name="train CLL per query atom" if sampled else "MAP loss (wrong query atoms)",
        trace=trace,
        iterations=len(trace),
        converged=False,
        seconds=time.perf_counter() - start,
    )
