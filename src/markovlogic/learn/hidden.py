"""Learning with hidden and missing atoms (Poon's thesis, chapter 2).

Some query atoms of the training data are unknown: ``?`` atoms in a
training database, or whole predicates named hidden (``mln learn --hidden
P``). With ``x`` the evidence, ``o`` the observed query atoms and ``h`` the
hidden ones, learning maximises the observed-data log-likelihood

    L(w) = log sum_h P_w(o, h | x) = log Z_w(x, o) - log Z_w(x)

(plus the Gaussian prior), whose gradient is ``E_w[n | x, o] - E_w[n | x]``:
the expected counts with the observed atoms clamped minus the expected counts
of the free model. Each expectation comes from its own engine per training
database: one MC-SAT chain over the *clamped* network (the training network
with a hard unit clause fixing each observed atom) and one over the free
network, both kept across iterations, or exact enumeration on small
networks. Semi-supervised data (some query atoms labelled, the rest
unknown) is the same computation.

Three methods (``HiddenOptions.em``):

* ``None`` (the default): the gradient method above, diagonal Newton steps
  preconditioned by the free model's count variances (Poon's preconditioned
  scaled conjugate gradient without the conjugacy; L is not concave, the
  step size is a trust region: alpha = d.g / (d^T (Cov_free - Cov_clamped) d
  + lambda d.d); with exact expectations a step that lowers L is taken
  back and lambda grown; with sampled ones no weight moves more than 0.5 per
  step and the result is the mean of the second half of the iterates);
* ``"hard"``: hard EM: complete the hidden atoms by the MAP world of the
  clamped network under the current weights, learn on the completed data
  with the complete-data learner (diagonal Newton), repeat until the
  completion stops changing;
* ``"soft"``: soft EM with exact expectations (small networks): the
  E-step's target ``T = E_w[n | x, o]``; the M-step maximises the concave
  ``w.T - log Z_w(x)`` + prior by diagonal Newton steps with a backtracking
  line search, so the objective ``L`` + prior never decreases.

Fixed-weight formulas (``@w`` or ``WeightParam.fixed``) are priors as Poon
uses them (for example ``@-1 InClust(b, c)`` against opening a cluster):
they enter every expectation and are never moved. A predicate whose atoms
are all unknown in a database must be tied down by such a formula or by a
labelled atom somewhere: otherwise its two truth values are interchangeable
and the likelihood says nothing about it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from ..errors import LearningError, OptionError
from ..ground.network import GroundNetwork
from .data import align_params, prior_terms
from .engines import ExactEngine, Moments, PersistentMCSAT, SampledEngine
from .result import Callback, LearnResult, TraceRow

EMS = ("hard", "soft")
MAX_SAMPLED_STEP = 0.5      # largest change of one weight per step with sampled expectations
INFERENCES = ("mcsat", "exact")


@dataclass
class HiddenOptions:
    """Options of learning with hidden atoms (``mln learn --hidden`` / ``?`` atoms)."""

    em: str | None = None              # None: observed-data gradient; "hard" or "soft" EM
    inference: str = "mcsat"           # expectations: "mcsat" or "exact" (soft EM: exact only)
    iterations: int = 100              # gradient steps (em=None) or EM rounds (hard/soft)
    m_iterations: int = 10             # complete-data steps per EM round
    samples: int = 10                  # MC-SAT samples per chain per iteration
    burn_in: int = 10
    prior_stddev: float | None = 2.0
    initial_lambda: float = 1.0
    tolerance: float = 1e-5
    max_seconds: float | None = None

    def check(self) -> None:
        if self.em is not None and self.em not in EMS:
            raise OptionError(f"unknown --em {self.em!r}; choose one of {', '.join(EMS)}")
        if self.inference not in INFERENCES:
            raise OptionError(f"unknown inference {self.inference!r}; choose one of {', '.join(INFERENCES)}")
        if self.em == "soft" and self.inference != "exact":
            raise OptionError("--em soft needs exact expectations (--inference exact, small networks); "
                              "use --em hard or the gradient method (no --em) with MC-SAT")
        for name in ("iterations", "m_iterations", "samples"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise OptionError(f"{name.replace('_', '-')} must be a positive integer, got {v!r}")
        if self.samples < 2 and self.inference == "mcsat":
            raise OptionError(f"learning needs at least 2 samples per iteration, got {self.samples}")
        if isinstance(self.burn_in, bool) or not isinstance(self.burn_in, (int, np.integer)) or self.burn_in < 0:
            raise OptionError(f"burn-in must be a non-negative integer, got {self.burn_in!r}")
        if self.prior_stddev is not None and not (self.prior_stddev > 0):
            raise OptionError(f"prior-stddev must be positive, got {self.prior_stddev!r}")
        if self.max_seconds is not None and not (self.max_seconds > 0):
            raise OptionError(f"max-seconds must be positive, got {self.max_seconds!r}")


def has_unknown(nets: list[GroundNetwork]) -> bool:
    """Whether any training network leaves a query atom's truth unknown."""
    return any(net.truth is not None and bool((net.truth[net.is_query] < 0).any()) for net in nets)


# ---------------------------------------------------------------- networks


def clamped(net: GroundNetwork, world: np.ndarray, mask: np.ndarray) -> GroundNetwork:
    """``net`` with a hard unit clause fixing each atom of ``mask`` to its
    value in ``world`` (no parameter: the feature counts are those of
    ``net``)."""
    atoms = np.flatnonzero(mask).astype(np.int32)
    k = len(atoms)
    end = int(net.clause_start[-1])
    clause_start = np.concatenate([np.asarray(net.clause_start, dtype=np.int64), end + 1 + np.arange(k, dtype=np.int64)])
    pend = int(net.param_start[-1])
    param_start = np.concatenate([np.asarray(net.param_start, dtype=np.int64), np.full(k, pend, dtype=np.int64)])
    return GroundNetwork.from_arrays(
        n_atoms=net.n_atoms,
        clause_start=clause_start,
        lit_atom=np.concatenate([net.lit_atom, atoms]).astype(np.int32),
        lit_positive=np.concatenate([net.lit_positive, np.asarray(world, dtype=bool)[atoms]]),
        is_hard=np.concatenate([net.is_hard, np.ones(k, dtype=bool)]),
        param_start=param_start,
        param_index=net.param_index,
        param_coef=net.param_coef,
        params=net.params,
        param_info=net.param_info,
        block_start=net.block_start,
        block_atoms=net.block_atoms,
        template_id=np.concatenate([net.template_id, np.full(k, -1, dtype=np.int32)]),
        atom_pred=net.atom_pred,
        atom_args=net.atom_args,
        predicates=net.predicates,
        constants=net.constants,
        is_query=net.is_query,
        constant_score=net.constant_score,
        truth=net.truth,
    )


@dataclass
class _Data:
    nets: list[GroundNetwork]          # free networks (aligned parameters)
    clamps: list[GroundNetwork]        # observed atoms fixed
    observed: list[np.ndarray]         # bool[n_atoms]: truth known
    values: list[np.ndarray]           # bool[n_atoms]: the known values (False where unknown)
    learnable: np.ndarray
    init: np.ndarray
    isolated: list[int]                # atoms in no clause and no block (log 2 each in log Z)


def _isolated(net: GroundNetwork) -> int:
    deg = np.diff(net.atom_clause_start)
    return int(((deg == 0) & (net.atom_block < 0)).sum())


def check_identifiable(nets: list[GroundNetwork]) -> None:
    """A predicate whose every ground atom is unknown in every database needs a
    fixed-weight formula (a prior) over it: see the module docstring."""
    fixed = {i for i, p in enumerate(nets[0].param_info) if p.fixed}
    for pred_name in nets[0].predicates:
        anchored = False
        all_unknown = True
        for net in nets:
            p = net.predicates.index(pred_name) if pred_name in net.predicates else -1
            atoms = np.flatnonzero((net.atom_pred == p) & net.is_query) if p >= 0 else np.zeros(0, np.int64)
            if not len(atoms):
                continue
            if net.truth is None or (net.truth[atoms] >= 0).any():
                all_unknown = False
                break
            # a fixed parameter on a clause over one of these atoms anchors the predicate
            if fixed and not anchored:
                occ = set()
                for a in atoms[:2000]:
                    occ.update(net.atom_clause[net.atom_clause_start[a]:net.atom_clause_start[a + 1]].tolist())
                for c in occ:
                    if set(net.param_index[net.param_start[c]:net.param_start[c + 1]].tolist()) & fixed:
                        anchored = True
                        break
        if all_unknown and not anchored and any(
                pred_name in n.predicates and ((n.atom_pred == n.predicates.index(pred_name)) & n.is_query).any()
                for n in nets):
            raise LearningError(
                f"every atom of {pred_name} is unknown in the training data and no fixed-weight formula "
                f"mentions it: its weights are not identifiable (true and false are interchangeable). "
                f"Add a prior over it as a fixed-weight formula (for example '@-1 {pred_name}(...)') "
                f"or label some of its atoms")


def prepare_hidden(nets: list[GroundNetwork]) -> _Data:
    if not nets:
        raise LearningError("no training data: give at least one training database")
    nets = align_params(list(nets))
    clamps, observed, values = [], [], []
    for k, net in enumerate(nets):
        if net.truth is None:
            raise LearningError(f"training database {k + 1} carries no truth values")
        obs = (net.truth >= 0) & net.is_query
        val = net.truth > 0
        clamps.append(clamped(net, val, obs))
        observed.append(obs)
        values.append(val)
    check_identifiable(nets)
    info = nets[0].param_info
    return _Data(nets, clamps, observed, values, np.array([not p.fixed for p in info], dtype=bool),
                 nets[0].params.copy(), [_isolated(n) for n in nets])


def _engines(data: _Data, opt: HiddenOptions, seed: int) -> tuple[list, list]:
    if opt.inference == "exact":
        return [ExactEngine(n) for n in data.clamps], [ExactEngine(n) for n in data.nets]
    clamp_engines, free_engines = [], []
    for k, (net, cnet) in enumerate(zip(data.nets, data.clamps)):
        start = data.values[k]                     # observed values, hidden atoms false (repaired by WalkSAT)
        s = seed + 1009 * k
        clamp_engines.append(SampledEngine(cnet, PersistentMCSAT(cnet, s, init=start),
                                           samples=opt.samples, burn_in=opt.burn_in, seed=s))
        free_engines.append(SampledEngine(net, PersistentMCSAT(net, s + 1, init=start),
                                          samples=opt.samples, burn_in=opt.burn_in, seed=s + 1))
    return clamp_engines, free_engines


def _moments(engines: list, w: np.ndarray) -> Moments:
    from ..parallel.tasks import each

    return Moments.combine(each(lambda e: e.moments(w), engines))


def observed_log_likelihood(data: _Data, w: np.ndarray) -> float:
    """L(w) by enumeration (small networks)."""
    mc = _moments([ExactEngine(n) for n in data.clamps], w)
    mf = _moments([ExactEngine(n) for n in data.nets], w)
    return float(mc.log_partition - mf.log_partition - math.log(2.0) * sum(data.isolated))


# ---------------------------------------------------------------- methods


def _gradient(data: _Data, opt: HiddenOptions, seed: int, w: np.ndarray, start: float,
              callback: Callback | None) -> tuple[np.ndarray, list[TraceRow], bool]:
    clamp_eng, free_eng = _engines(data, opt, seed)
    mean, learn = data.init, data.learnable
    lam = float(opt.initial_lambda)
    trace: list[TraceRow] = []
    prev_step: np.ndarray | None = None
    prev_obj = -np.inf
    prev_w = w.copy()
    converged = False
    for it in range(1, opt.iterations + 1):
        mc, mf = _moments(clamp_eng, w), _moments(free_eng, w)
        prior, pg, pinv = prior_terms(w, mean, opt.prior_stddev, learn)
        g = np.where(learn, mc.mean - mf.mean + pg, 0.0)
        exact = mc.log_partition is not None and mf.log_partition is not None
        obj = (mc.log_partition - mf.log_partition - math.log(2.0) * sum(data.isolated) + prior) if exact \
            else float(np.abs(mc.mean - mf.mean)[learn].sum())
        backtracked = False
        if exact and prev_step is not None and obj < prev_obj - 1e-12:
            # the exact objective fell: back to the previous point with a smaller step
            lam *= 4.0
            backtracked = True
            w = prev_w.copy()
            mc, mf = _moments(clamp_eng, w), _moments(free_eng, w)
            prior, pg, pinv = prior_terms(w, mean, opt.prior_stddev, learn)
            g = np.where(learn, mc.mean - mf.mean + pg, 0.0)
            obj = prev_obj
        elif exact and prev_step is not None:
            lam = max(lam / 2.0, 1e-6)
        row = TraceRow(it, float(obj), w.copy(), time.perf_counter() - start,
                       {"lambda": lam, "backtracked": backtracked,
                        "objective": "observed log-likelihood + prior" if exact else "gradient size"})
        trace.append(row)
        if (callback is not None and bool(callback(row))) or it == opt.iterations or \
                (opt.max_seconds is not None and time.perf_counter() - start > opt.max_seconds):
            break
        d = np.where(learn, g / (mf.var + pinv + 1e-5), 0.0)
        dg = float(d @ g)
        curv = mf.quad(d) - mc.quad(d) + float(d @ (pinv * d))
        denom = max(curv, 0.0) + lam * float(d @ d)
        alpha = dg / denom if denom > 0 else 0.0
        if not np.isfinite(alpha) or (exact and alpha * dg < opt.tolerance):
            converged = True
            break
        biggest = float(np.max(np.abs(d))) if len(d) else 0.0
        if not exact and alpha * biggest > MAX_SAMPLED_STEP:
            alpha = MAX_SAMPLED_STEP / biggest      # sampled gradients: bounded steps, averaged weights
        prev_w, prev_obj = w.copy(), obj
        prev_step = alpha * d
        w = w + prev_step
    if not exact and len(trace) > 3:
        # Polyak-Ruppert: the mean of the second half of the iterates (the
        # sampled gradients make the last one noisy)
        w = np.mean([r.params for r in trace[len(trace) // 2:]] + [w], axis=0)
    return w, trace, converged


def _completion_map(cnet: GroundNetwork, w: np.ndarray, inference: str, seed: int) -> np.ndarray:
    if inference == "exact":
        return ExactEngine(cnet).map_world(w)
    from ..infer.map import solve_map

    res = solve_map(cnet.with_params(w), method="ilp", max_seconds=60.0)
    return np.asarray(res.world, dtype=bool)


def _hard_em(data: _Data, opt: HiddenOptions, seed: int, w: np.ndarray, start: float,
             callback: Callback | None) -> tuple[np.ndarray, list[TraceRow], bool]:
    from .discriminative import learn_dn

    trace: list[TraceRow] = []
    last: list[np.ndarray] | None = None
    converged = False
    for it in range(1, opt.iterations + 1):
        worlds = [_completion_map(c, w, opt.inference, seed + it) for c in data.clamps]
        completed = [replace(n, truth=np.where(o, v, wd).astype(np.int8))
                     for n, o, v, wd in zip(data.nets, data.observed, data.values, worlds)]
        changed = None if last is None else int(sum(int((a != b).sum()) for a, b in zip(worlds, last)))
        res = learn_dn(completed, iterations=opt.m_iterations, prior_stddev=opt.prior_stddev, seed=seed + it,
                       inference=opt.inference, samples=opt.samples, burn_in=opt.burn_in, init=w)
        w = res.params
        obj = observed_log_likelihood(data, w) if opt.inference == "exact" else float(res.trace[-1].objective)
        row = TraceRow(it, obj, w.copy(), time.perf_counter() - start, {"changed": changed})
        trace.append(row)
        last = worlds
        if changed == 0:
            converged = True
            break
        if (callback is not None and bool(callback(row))) or \
                (opt.max_seconds is not None and time.perf_counter() - start > opt.max_seconds):
            break
    return w, trace, converged


def _soft_em(data: _Data, opt: HiddenOptions, seed: int, w: np.ndarray, start: float,
             callback: Callback | None) -> tuple[np.ndarray, list[TraceRow], bool]:
    clamp_eng = [ExactEngine(n) for n in data.clamps]
    free_eng = [ExactEngine(n) for n in data.nets]
    mean, learn = data.init, data.learnable
    iso = math.log(2.0) * sum(data.isolated)
    trace: list[TraceRow] = []
    converged = False
    prev = -np.inf
    for it in range(1, opt.iterations + 1):
        mc = _moments(clamp_eng, w)                      # E-step: target counts
        target = mc.mean
        mf = _moments(free_eng, w)
        prior, _, _ = prior_terms(w, mean, opt.prior_stddev, learn)
        obj = float(mc.log_partition - mf.log_partition - iso + prior)
        row = TraceRow(it, obj, w.copy(), time.perf_counter() - start, {"objective": "observed log-likelihood + prior"})
        trace.append(row)
        if obj - prev < opt.tolerance and it > 1:
            converged = True
            break
        prev = obj
        if (callback is not None and bool(callback(row))) or \
                (opt.max_seconds is not None and time.perf_counter() - start > opt.max_seconds):
            break

        def q(v: np.ndarray, m: Moments) -> float:       # M-step objective (concave)
            return float(v @ target - m.log_partition + prior_terms(v, mean, opt.prior_stddev, learn)[0])

        for _ in range(opt.m_iterations):
            _, pg, pinv = prior_terms(w, mean, opt.prior_stddev, learn)
            g = np.where(learn, target - mf.mean + pg, 0.0)
            d = np.where(learn, g / (mf.var + pinv + 1e-8), 0.0)
            dg = float(d @ g)
            if dg < 1e-12:
                break
            base = q(w, mf)
            step = 1.0
            while step > 1e-6:
                cand = w + step * d
                mcand = _moments(free_eng, cand)
                if q(cand, mcand) >= base + 1e-4 * step * dg:
                    w, mf = cand, mcand
                    break
                step /= 2.0
            else:
                break
    return w, trace, converged


def learn_hidden(nets: list[GroundNetwork], *, options: HiddenOptions | None = None, seed: int = 0,
                 init: np.ndarray | None = None, callback: Callback | None = None) -> LearnResult:
    """Learn weights from training networks with unknown query atoms (module docstring)."""
    opt = options or HiddenOptions()
    opt.check()
    start = time.perf_counter()
    data = prepare_hidden(nets)
    w = data.init.copy()
    if init is not None:
        given = np.asarray(init, dtype=np.float64)
        if given.shape != w.shape:
            raise OptionError(f"init has {given.size} weights, the networks {w.size}")
        w[data.learnable] = given[data.learnable]
    method = {None: _gradient, "hard": _hard_em, "soft": _soft_em}[opt.em]
    w, trace, converged = method(data, opt, seed, w, start, callback)
    w = np.where(data.learnable, w, data.init)        # fixed weights exactly as given
    name = {None: "observed-data gradient", "hard": "hard EM", "soft": "soft EM"}[opt.em]
    n_hidden = int(sum(int((~o & n.is_query).sum()) for o, n in zip(data.observed, data.nets)))
    return LearnResult(
        params=np.asarray(w, dtype=np.float64).copy(),
        param_info=data.nets[0].param_info,
        method=name,
        objective_name=("observed log-likelihood + prior" if opt.inference == "exact" or opt.em == "soft"
                        else "gradient size (observed - free counts)" if opt.em is None else "train CLL (completed data)"),
        trace=trace,
        iterations=len(trace),
        converged=converged,
        seconds=time.perf_counter() - start,
        stats={"hidden_atoms": n_hidden},
    )
