"""Piecewise training of set-level features (Culotta and McCallum 2006).

Instead of learning from whole clusterings, learn a logistic model of
"is the union of these two sets one entity?" from sampled pairs of sets:

    P(y = 1 | A, B) = sigmoid(theta . (f(A u B) - f(A) - f(B)))

where ``f(S)`` is what the model scores a cluster ``S`` with: the
within-sums of every pair formula over the pairs of ``S`` and every
set-level feature of ``S``. The difference is the score change of merging
``A`` and ``B``: exactly the decision greedy agglomerative inference makes
(and, with ``A`` and ``B`` singletons, a pairwise classifier). The objective
is the log-likelihood of the sampled merges plus a Gaussian prior
``||theta - theta_0||^2 / (2 sigma^2)`` around the model's weights,
maximised by L-BFGS (scipy). Fixed-weight (``@``) parameters enter the
logit with their value and are not moved.

Training merges per training world (the truth's clusters ``gold``):

* positives: ``subsets`` per gold cluster of two or more mentions: two
  disjoint random parts of it (sizes from one member up);
* negatives, the near misses: for a random mention ``i`` and a random
  *neighbour* ``j`` of ``i`` in another gold cluster (two mentions are
  neighbours when a pair feature with evidence links them: the sparse part
  of the model, which is what the cheap string similarities -- shared
  words, Jaccard bins -- produce), a random part of ``i``'s cluster
  containing ``i`` and one of ``j``'s containing ``j``; ``negatives`` per
  positive.

The paper samples its training sets by greedy agglomerative clustering
under a cheap similarity; the neighbour graph plays that role here (every
negative is a merge the cheap similarity would consider), without running
a clustering per example.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..errors import LearningError, OptionError


@dataclass
class PiecewiseOptions:
    """Options of piecewise training (``mln learn --method piecewise``)."""

    prior_stddev: float = 2.0        # Gaussian prior around the model's weights
    subsets: int = 5                 # positive merges per gold cluster (two random parts of it)
    negatives: float = 1.0           # near-miss negatives per positive
    max_examples: int = 20_000       # per training world
    iterations: int = 200            # L-BFGS iterations
    seed: int = 0

    def check(self) -> None:
        if not (isinstance(self.prior_stddev, (int, float)) and self.prior_stddev > 0 and np.isfinite(self.prior_stddev)):
            raise OptionError(f"prior-stddev must be a positive number, got {self.prior_stddev!r}")
        for name in ("subsets", "max_examples", "iterations"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < (0 if name == "subsets" else 1):
                raise OptionError(f"{name.replace('_', '-')} must be a {'non-negative' if name == 'subsets' else 'positive'} "
                                  f"integer, got {v!r}")
        if not (isinstance(self.negatives, (int, float)) and self.negatives > 0 and np.isfinite(self.negatives)):
            raise OptionError(f"negatives must be a positive number, got {self.negatives!r}")


def _part(rng: np.random.Generator, members: np.ndarray, must: int | None = None,
          most: int | None = None) -> np.ndarray:
    """A random part of ``members`` of one to ``most`` mentions (containing ``must``)."""
    most = len(members) if most is None else most
    k = int(rng.integers(1, most + 1))
    pick = rng.choice(members, size=k, replace=False)
    if must is not None and must not in pick:
        pick[0] = must
    return pick


def sample_merges(model, rng: np.random.Generator, opt: PiecewiseOptions):
    """The training merges ``(A, B)`` of one world and their labels (module docstring)."""
    gold = model.gold_labels
    if gold is None:
        raise LearningError(f"piecewise training needs the training truth of {model.predicate}: "
                            "list its true atoms in the training data")
    order = np.argsort(gold, kind="stable")
    bounds = np.flatnonzero(np.diff(gold[order])) + 1
    clusters = [c for c in np.split(order, bounds) if len(c)]
    of = np.empty(len(gold), np.int64)
    for k, c in enumerate(clusters):
        of[c] = k
    merges: list[tuple[np.ndarray, np.ndarray]] = []
    labels: list[int] = []
    for c in clusters:
        if len(c) < 2:
            continue
        for _ in range(max(1, opt.subsets)):
            perm = rng.permutation(c)
            cut = int(rng.integers(1, len(c)))
            a = perm[:cut]
            b = perm[cut:]
            a = a[:int(rng.integers(1, len(a) + 1))]
            b = b[:int(rng.integers(1, len(b) + 1))]
            merges.append((a, b))
            labels.append(1)
    n_pos = len(merges)
    if n_pos == 0:
        raise LearningError(f"the training truth of {model.predicate} has no cluster of two or more mentions: "
                            "nothing tells a merge that is right")
    md = model.arrays
    want = int(round(opt.negatives * n_pos))
    tries = 0
    while len(merges) - n_pos < want and tries < 20 * want:
        tries += 1
        i = int(rng.integers(len(gold)))
        lo, hi = md.indptr[i], md.indptr[i + 1]
        if hi == lo:
            continue
        j = int(md.indices[int(rng.integers(lo, hi))])
        if of[i] == of[j]:
            continue
        merges.append((_part(rng, clusters[of[i]], must=i), _part(rng, clusters[of[j]], must=j)))
        labels.append(0)
    if len(merges) == n_pos:
        raise LearningError("no near-miss negative found: no pair feature links mentions of different entities "
                            "(the model's pair features are its similarities; add some)")
    if len(merges) > opt.max_examples:
        keep = rng.choice(len(merges), size=opt.max_examples, replace=False)
        merges = [merges[k] for k in keep]
        labels = [labels[k] for k in keep]
    return merges, np.asarray(labels, dtype=np.float64)


def merge_features(model, merges, params) -> np.ndarray:
    """``f(A u B) - f(A) - f(B)`` in parameter space, one row per merge
    (every other mention as it starts)."""
    base = np.asarray(model.initial_labels, dtype=np.int64)
    Q = model.arrays.n_q
    out = np.zeros((len(merges), len(params.names)))
    for r, (a, b) in enumerate(merges):
        apart = base.copy()
        ga = np.isin(apart, base[a])            # with anything must-linked to them
        gb = np.isin(apart, base[b]) & ~ga
        apart[ga] = base[a[0]]
        apart[gb] = base[b[0]] if base[b[0]] != base[a[0]] else -1
        together = apart.copy()
        together[ga | gb] = base[a[0]]
        diff = model.features(together) - model.features(apart)
        for q in range(Q):
            k = params.q_param[q]
            if k >= 0:
                out[r, k] += diff[q] * params.q_coef[q]
        for j in range(len(params.sf_param)):
            k = params.sf_param[j]
            if k >= 0:
                out[r, k] += diff[Q + j]
    return out


def fit(X: np.ndarray, y: np.ndarray, theta0: np.ndarray, learnable: np.ndarray, sigma: float,
        iterations: int) -> tuple[np.ndarray, dict]:
    """L-BFGS on the penalised logistic log-likelihood (fixed parameters kept)."""
    from scipy.optimize import minimize

    free = np.flatnonzero(learnable)
    fixed_part = X[:, ~learnable] @ theta0[~learnable] if (~learnable).any() else np.zeros(len(y))
    Xf = X[:, free]
    sign = 2.0 * y - 1.0

    def objective(v):
        z = Xf @ v + fixed_part
        m = sign * z
        nll = float(np.sum(np.logaddexp(0.0, -m)))
        p = 1.0 / (1.0 + np.exp(np.clip(m, -700, 700)))      # sigmoid(-m)
        grad = -(Xf.T @ (sign * p))
        d = v - theta0[free]
        return nll + float(d @ d) / (2 * sigma ** 2), grad + d / sigma ** 2

    res = minimize(objective, theta0[free].copy(), jac=True, method="L-BFGS-B",
                   options={"maxiter": int(iterations)})
    theta = theta0.copy()
    theta[free] = res.x
    return theta, {"objective": float(res.fun), "iterations": int(res.nit), "converged": bool(res.success)}


def objective_and_gradient(X, y, theta, learnable, theta0, sigma):
    """The penalised negative log-likelihood and its gradient (for tests)."""
    z = X @ theta
    sign = 2.0 * y - 1.0
    m = sign * z
    p = 1.0 / (1.0 + np.exp(m))
    d = np.where(learnable, theta - theta0, 0.0)
    grad = np.where(learnable, -(X.T @ (sign * p)) + d / sigma ** 2, 0.0)
    return float(np.sum(np.logaddexp(0.0, -m)) + d @ d / (2 * sigma ** 2)), grad


def learn_piecewise_model(mln, dbs, *, query_predicates=None, multiple_databases: bool = False, seed: int = 0,
                          callback=None, options: PiecewiseOptions | None = None):
    """Piecewise training on training databases: a ``LearnedModel`` whose MLN
    carries the learned weights of the pair formulas and set-level features."""
    from dataclasses import replace

    from ..cluster.api import cluster_predicates
    from ..cluster.model import build_cluster_model
    from ..ground.network import WeightParam
    from ..lang.ast import Query
    from ..model import Database
    from .api import LearnedModel, _merge
    from .output import split_clauses
    from .result import LearnResult, TraceRow
    from .samplerank import _with_weights, parameters_of

    opt = options or PiecewiseOptions()
    if seed != opt.seed:
        opt = replace(opt, seed=seed)
    opt.check()
    if isinstance(dbs, Database):
        dbs = [dbs]
    if not dbs:
        raise LearningError("no training database given")
    if isinstance(query_predicates, str):
        query_predicates = [q.strip() for q in query_predicates.split(",") if q.strip()]
    queries = [Query(q) for q in query_predicates] if query_predicates else None
    from ..logic.equivalence import equivalence_predicates

    preds = cluster_predicates(mln, queries) if equivalence_predicates(mln) else []
    if len(preds) != 1:
        raise LearningError("piecewise training learns the formulas and set-level features of one equivalence "
                            f"predicate; got {', '.join(preds) or 'none'} (declare one with 'equivalence P(t, t)' "
                            "and name it with --ne)")
    pred = preds[0]
    start = time.perf_counter()
    clausal = split_clauses(mln)
    cm = clausal.mln
    if hasattr(mln, "set_features"):
        cm.set_features = list(mln.set_features)
    worlds = list(dbs) if multiple_databases else [_merge(dbs)]
    models = [build_cluster_model(cm, db, pred, truth=True) for db in worlds]
    params = parameters_of(models[0], cm)
    ground_seconds = time.perf_counter() - start
    rng = np.random.default_rng(opt.seed)
    Xs, ys = [], []
    for model in models:
        merges, y = sample_merges(model, rng, opt)
        Xs.append(merge_features(model, merges, params))
        ys.append(y)
    X, y = np.vstack(Xs), np.concatenate(ys)
    theta, info = fit(X, y, params.initial.astype(np.float64), params.learnable, float(opt.prior_stddev),
                      opt.iterations)
    learn_seconds = time.perf_counter() - start - ground_seconds
    row = TraceRow(iteration=info["iterations"], objective=-info["objective"], params=theta.copy(),
                   seconds=learn_seconds, info={"examples": len(y), "positives": int(y.sum())})
    if callback is not None:
        callback(row)
    learned = _with_weights(cm, models[0], params, theta)
    infos = tuple(WeightParam(name=nm, formula_index=-1, fixed=not params.learnable[k])
                  for k, nm in enumerate(params.names))
    result = LearnResult(params=theta, param_info=infos, method="piecewise",
                         objective_name="penalised log-likelihood of the sampled merges", trace=[row],
                         iterations=info["iterations"], converged=info["converged"], seconds=learn_seconds,
                         stats={"examples": int(len(y)), "positives": int(y.sum())})
    return LearnedModel(mln=learned, text=learned.to_string(), result=result, query_predicates=[pred], networks=[],
                        ground_seconds=ground_seconds, learn_seconds=learn_seconds)
