"""Metropolis-Hastings over clusterings: MAP by the best sample (greedy at
``T = 0``, fixed ``T`` or simulated annealing) and pair marginals from the
samples. The chain itself is :mod:`.chain`; this module runs it, watches the
clock and turns its output into answers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..errors import OptionError
from ..infer.proposals import check_user_proposals
from .chain import KIND_NAMES, accumulate_edges, accumulate_pairs, run, seed_rng
from .kernels import total_score
from .model import ClusterModel
from .usermix import make_runner

DENSE_MARGINALS = 4_000       # mentions: up to this many, every pair's marginal is tracked
CHUNK = 20_000                # proposals between clock checks


@dataclass
class MHOptions:
    """Options of Metropolis-Hastings over clusterings (``mln infer --method mh``).

    ``proposals``: probabilities of merge, split, move, edge merge, edge move
    (normalised). ``steps``: proposals for MAP (default ``200 * n``).
    ``temperature``: fixed temperature (0: greedy); ``anneal``: start
    temperature of simulated annealing down to ``temperature`` (or 0.01).
    ``samples``/``burn_in``/``thin``: marginals (thin: proposals between
    samples, default ``n``). ``restarts``: independent MAP runs from the
    initial clustering, the best kept. ``init``: ``"singletons"`` or a label
    array. ``max_seconds``: a time limit (the best so far is returned).
    ``user_proposals``: proposals written in Python, each with the
    probability of using it at a step (:mod:`markovlogic.infer.proposals`).
    """

    proposals: tuple[float, float, float, float, float] = (0.15, 0.1, 0.25, 0.25, 0.25)
    steps: int | None = None
    temperature: float = 0.0
    anneal: float | None = None
    samples: int = 1000
    burn_in: int | None = None
    thin: int | None = None
    restarts: int = 1
    seed: int = 0
    max_seconds: float | None = None
    init: object = "singletons"
    user_proposals: Sequence = ()

    def check(self) -> "MHOptions":
        p = np.asarray(self.proposals, dtype=np.float64)
        if p.shape != (5,) or not np.all(np.isfinite(p)) or (p < 0).any() or p.sum() <= 0:
            raise OptionError("proposals must be 5 non-negative probabilities (merge, split, move, "
                              "edge merge, edge move), not all zero")
        for name in ("steps", "burn_in", "thin"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0):
                raise OptionError(f"{name} must be a non-negative integer, got {v!r}")
        if isinstance(self.samples, bool) or not isinstance(self.samples, (int, np.integer)) or self.samples < 1:
            raise OptionError(f"samples must be a positive integer, got {self.samples!r}")
        if isinstance(self.restarts, bool) or not isinstance(self.restarts, (int, np.integer)) or self.restarts < 1:
            raise OptionError(f"restarts must be a positive integer, got {self.restarts!r}")
        if not np.isfinite(self.temperature) or self.temperature < 0:
            raise OptionError(f"temperature must be >= 0, got {self.temperature!r}")
        if self.anneal is not None and (not np.isfinite(self.anneal) or self.anneal <= 0):
            raise OptionError(f"anneal (start temperature) must be > 0, got {self.anneal!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise OptionError(f"seed must be a non-negative integer, got {self.seed!r}")
        if self.max_seconds is not None and not (self.max_seconds > 0):
            raise OptionError(f"max_seconds must be positive, got {self.max_seconds!r}")
        self.user_proposals = check_user_proposals(self.user_proposals)
        return self

    @property
    def probs(self) -> np.ndarray:
        p = np.asarray(self.proposals, dtype=np.float64)
        return p / p.sum()


@dataclass
class ClusterAnswer:
    """A clustering (MAP) or pair marginals of one equivalence predicate."""

    model: ClusterModel
    labels: np.ndarray
    score: float
    stats: dict = field(default_factory=dict)
    pair_probabilities: object = None      # dense n x n array or (rows, cols, probs)

    @property
    def clusters(self) -> list[list[str]]:
        return self.model.clusters(self.labels)

    def pair_atoms(self) -> list[str]:
        return self.model.pair_atoms(self.labels)


def _initial_labels(model: ClusterModel, init) -> np.ndarray:
    if isinstance(init, str):
        if init != "singletons":
            raise OptionError(f"init must be 'singletons' or a label array, got {init!r}")
        return model.initial_labels.copy()
    lab = np.asarray(init, dtype=np.int64)
    if lab.shape != (model.n,) or (model.n and lab.min() < 0):
        raise OptionError(f"init labels must be {model.n} non-negative integers")
    return lab


def _refuse_linkage(model: ClusterModel, what: str) -> None:
    """Linkage features score merges, not clusterings: no distribution to sample."""
    if getattr(model, "link_features", None):
        from ..errors import OptionError

        spec = model.link_features[0].spec
        raise OptionError(f"{spec.describe()} scores merges, not clusterings, so the model defines no "
                          f"probability of a clustering for {what}; use --map --method agglomerative (the "
                          "default), the search it was trained for")


def mh_map(model: ClusterModel, options: MHOptions | None = None, progress=None) -> ClusterAnswer:
    """The best clustering found by the chain (greedy, fixed temperature or
    annealing), over ``restarts`` runs."""
    opt = (options or MHOptions()).check()
    _refuse_linkage(model, "MAP by Metropolis-Hastings")
    n = model.n
    steps = opt.steps if opt.steps is not None else 200 * max(n, 1)
    md = model.arrays
    probs = opt.probs
    start = time.perf_counter()
    seed_rng(int(opt.seed))
    runner = make_runner(model, opt.user_proposals, opt.seed)
    best_labels = None
    best = -np.inf
    stats = np.zeros((5, 2), np.int64)
    done = 0
    timed_out = False
    for r in range(opt.restarts):
        st, sc = model.new_state(_initial_labels(model, opt.init))
        score = np.array([total_score(md, st, sc.wq)])
        run_best = np.array([score[0]])
        run_labels = st.label.copy()
        t_hi = opt.anneal if opt.anneal is not None else opt.temperature
        t_lo = opt.temperature if opt.anneal is None else (opt.temperature or 0.01 * opt.anneal)
        left = steps
        while left > 0:
            k = min(CHUNK, left)
            frac0 = (steps - left) / max(steps, 1)
            frac1 = (steps - left + k) / max(steps, 1)
            if t_hi > 0 and t_lo > 0 and t_hi != t_lo:
                a = t_hi * (t_lo / t_hi) ** frac0
                b = t_hi * (t_lo / t_hi) ** frac1
            else:
                a = b = t_hi if opt.anneal is None else t_lo
            runner(md, st, sc, k, probs, a, b, score, run_best, run_labels, stats)
            left -= k
            done += k
            if progress is not None:
                progress(done, steps * opt.restarts)
            if opt.max_seconds is not None and time.perf_counter() - start > opt.max_seconds:
                timed_out = True
                break
        if run_best[0] > best:
            best = float(run_best[0])
            best_labels = run_labels.copy()
        if timed_out:
            break
    seconds = time.perf_counter() - start
    st, sc = model.new_state(best_labels)
    exact = float(total_score(md, st, sc.wq))
    info = {
        "proposals": int(stats[:, 0].sum()), "accepted": int(stats[:, 1].sum()),
        "proposals_per_second": float(done / seconds) if seconds > 0 else None,
        "seconds": seconds, "timed_out": timed_out, "clusters": int(st.counts[0]),
        "score_drift": abs(exact - best),
    }
    for k, name in enumerate(KIND_NAMES):
        info[f"proposed_{name}"] = int(stats[k, 0])
        info[f"accepted_{name}"] = int(stats[k, 1])
    if runner is not run:
        info.update(runner.stats())
    return ClusterAnswer(model, best_labels, exact, info)


def mh_marginals(model: ClusterModel, options: MHOptions | None = None, progress=None) -> ClusterAnswer:
    """Pair marginals ``P(a and b share a cluster)`` from ``samples`` states of
    the chain at temperature 1, after ``burn_in`` proposals, ``thin`` apart.
    Up to :data:`DENSE_MARGINALS` mentions every pair is tracked; beyond, the
    linked pairs (the sparse pair graph) only."""
    opt = (options or MHOptions()).check()
    _refuse_linkage(model, "marginals")
    n = model.n
    md = model.arrays
    probs = opt.probs
    thin = opt.thin if opt.thin is not None else max(n, 1)
    burn = opt.burn_in if opt.burn_in is not None else 50 * max(n, 1)
    seed_rng(int(opt.seed))
    runner = make_runner(model, opt.user_proposals, opt.seed)
    st, sc = model.new_state(_initial_labels(model, opt.init))
    score = np.array([total_score(md, st, sc.wq)])
    best = np.array([score[0]])
    best_labels = st.label.copy()
    stats = np.zeros((5, 2), np.int64)
    start = time.perf_counter()
    left = burn
    while left > 0:
        k = min(CHUNK, left)
        runner(md, st, sc, k, probs, 1.0, 1.0, score, best, best_labels, stats)
        left -= k
    dense = n <= DENSE_MARGINALS
    acc = np.zeros((n, n)) if dense else np.zeros(len(md.indices))
    taken = 0
    timed_out = False
    for s in range(opt.samples):
        runner(md, st, sc, thin, probs, 1.0, 1.0, score, best, best_labels, stats)
        if dense:
            accumulate_pairs(st, acc)
        else:
            accumulate_edges(md, st, acc)
        taken += 1
        if progress is not None:
            progress(taken, opt.samples)
        if opt.max_seconds is not None and time.perf_counter() - start > opt.max_seconds:
            timed_out = True
            break
    seconds = time.perf_counter() - start
    if dense:
        probs_out = acc / max(taken, 1)
    else:
        rows = np.repeat(np.arange(n), np.diff(md.indptr))
        probs_out = (rows, md.indices.astype(np.int64), acc / max(taken, 1))
    info = {"samples": taken, "burn_in": burn, "thin": thin, "seconds": seconds, "timed_out": timed_out,
            "proposals": int(stats[:, 0].sum()), "accepted": int(stats[:, 1].sum())}
    if runner is not run:
        info.update(runner.stats())
    return ClusterAnswer(model, best_labels, float(best[0]), info, probs_out)
