"""Marginals on both cores (or on a Ray cluster): independent chains, or the
network split by component.

``solve_marginals_parallel(net, method, options, parallel)`` is
:func:`.infer.marginals.solve_marginals` with the sampling spread over
``parallel.threads`` threads (or Ray workers), for ``mcsat`` and ``gibbs``:

- a network of many components whose largest holds at most ``1/T + 1/4`` of
  the work is cut into ``T`` parts of whole components
  (:func:`.split.partition`); each part is sampled by its own chain with the
  full options (samples, burn-in) and its own seed. Components are
  independent, so this samples each component exactly as the one chain over
  the whole network does (which is how the serial sampler treats them, see
  :mod:`.infer.marginals`); SampleSAT's default steps per sample follow each
  part's variables, so the proposals per variable are the serial ones.
- otherwise ``T`` independent chains run on the whole network and are
  pooled: MC-SAT chain ``t`` draws its share of ``samples`` after its own
  full burn-in; Gibbs's ``chains`` (default 4) are dealt to the threads.
  Each estimate is an average of per-sample terms, so pooling weights each
  chain by the samples it drew. Same target distribution as one chain, the
  variance of more independent starts (and ``T`` burn-ins). Chains that
  settle in different modes would be averaged silently: ``stats
  ["chains_disagree"]`` (``atoms``, ``spread``, ``examples``; see
  :func:`chain_disagreement`) says how far the chains' marginals are apart,
  and a warning names the atoms they disagree on.

Where pooled MC-SAT chains start (``stats["init_method"]``; ``--init``
overrides): by default each from the cheaper of two MaxWalkSAT worlds, one
from a random world (the chain's own seed) and one from the all-false world
(``init_method="best"``), chosen by ``bench/chain_start.py`` (two pooled
chains, 1,000 samples, seeds 0-9, 2026-11-27, shared 2-core machine at load
1-6; ``disagree``: runs that warn; ``err``: max |p - reference| over the
atoms, the worst and the mean over seeds; ``silent``: err > .05 without a
warning; CPU s per pooled run):

  ========== ========== ======== ========== ======== ======
  model      start      disagree err max/mean silent   CPU s
  ========== ========== ======== ========== ======== ======
  friends30  hard       5/10     .500/.153  1        0.70
  friends30  maxwalksat 0/10     .001/.000  0        0.70
  friends30  best       0/10     .001/.000  0        0.72
  social5k   hard       0/10     .011/.007  0        2.48
  social5k   maxwalksat 7/10     1.00/.451  1        3.60
  social5k   best       0/10     .007/.006  0        2.81
  gated13    hard       2/10     .154/.086  7        0.03
  gated13    maxwalksat 5/10     .121/.052  3        0.03
  gated13    best       5/10     .121/.052  3        0.03
  hardtie9   hard       0/10     .025/.016  0        0.03
  hardtie9   best       0/10     .018/.012  0        0.02
  cse        hard       1/10     .105/.055  4        4.58
  cse        best       1/10     .067/.057  8        5.13
  class      hard       6/10     .196/.108  4        3.96
  class      best       5/10     .206/.102  5        3.94
  ========== ========== ======== ========== ======== ======

(friends30: the friends model of ``bench/workloads/lazy.py`` at N = 30,
whose "everybody smokes" mode costs 91 against 9; social5k:
``bench/synthetic.social`` N = 5,000, where one MaxWalkSAT try from a random
world ends in "everybody smokes" (cost 6,390 against 3,217) for 6 seeds in
10, 8 at N = 20,000 and 9 at N = 50,000, and the chain stays there; gated13,
hardtie9: exact marginals by enumeration; cse, class: tuffy's, against long
chains.) A random start fails the friends model, a MaxWalkSAT start the
social one; the cheaper of the two MaxWalkSAT worlds is in the main mode in
both. On social N = 50,000 (543,632 clauses, ``mln infer``) the start
costs 3-16 CPU s over 57 and about 140 MB. One chain (``--threads 1``) keeps WalkSAT's start
(:mod:`.infer.mcsat`'s measurement); the component split too.

With one thread, or a network under ``parallel.min_clauses`` clauses, this
is the serial path, bit for bit.
"""

from __future__ import annotations

import threading
import time
import warnings

import numpy as np

from ..ground.network import GroundNetwork
from ..infer.marginals import check_options, solve_marginals
from ..infer.results import MarginalResult
from .executor import ThreadExecutor, executor_for
from .options import ParallelOptions
from .split import largest_share, partition, seed_for

SAMPLERS = ("mcsat", "gibbs")


def solve_marginals_parallel(net: GroundNetwork, method: str, options: dict,
                             parallel: ParallelOptions) -> MarginalResult:
    """Marginals of every atom of ``net`` (see the module docstring)."""
    check_options(method, options)
    if parallel.on_ray:
        from ..distributed.cluster import cluster_cpus

        workers = parallel.ray_workers or cluster_cpus(parallel)
    else:
        workers = parallel.n_threads
    if workers <= 1 or method not in SAMPLERS or net.n_clauses < parallel.min_clauses:
        return solve_marginals(net, method=method, **options)
    if net.n_components >= workers and largest_share(net) <= 1.0 / workers + 0.25:
        return by_components(net, method, options, workers, executor_for(parallel))
    return pooled_chains(net, method, options, workers, executor_for(parallel))


def _run(net: GroundNetwork, method: str, options: dict) -> MarginalResult:
    return solve_marginals(net, method=method, **options)


class _Progress:
    """Sums the samples drawn by several chains for one ``progress`` callback."""

    def __init__(self, progress, n: int, combine) -> None:
        self.progress = progress
        self.done = [0] * n
        self.combine = combine
        self.lock = threading.Lock()

    def of(self, i: int):
        def report(k: int) -> None:
            with self.lock:
                self.done[i] = int(k)
                self.progress(self.combine(self.done))
        return report


def by_components(net: GroundNetwork, method: str, options: dict, workers: int, executor) -> MarginalResult:
    """Each part of whole components sampled by its own chain."""
    start = time.perf_counter()
    parts = partition(net, workers)
    progress = options.pop("progress", None) if "progress" in options else None
    meter = _Progress(progress, len(parts), min) if progress is not None and not _remote(executor) else None
    args = []
    for i, p in enumerate(parts):
        opts = dict(options)
        opts["seed"] = seed_for(int(options.get("seed", 0)), i)
        if opts.get("init") is not None:
            opts["init"] = np.asarray(opts["init"])[p.atoms]
        if meter is not None:
            opts["progress"] = meter.of(i)
        args.append((p.net, method, opts))
    results = executor.map(_run, args)
    prob = np.zeros(net.n_atoms, dtype=np.float64)
    for p, r in zip(parts, results):
        prob[p.atoms] = r.probabilities
    stats = _merged_stats(results)
    stats.update(split="components", parts=len(parts), workers=int(workers))
    samples = min(r.samples for r in results)
    return MarginalResult(probabilities=prob, method=method, samples=samples,
                          seconds=time.perf_counter() - start, stats=stats)


def pooled_chains(net: GroundNetwork, method: str, options: dict, workers: int, executor) -> MarginalResult:
    """Independent chains on the whole network, pooled by the samples they drew."""
    start = time.perf_counter()
    progress = options.pop("progress", None) if "progress" in options else None
    seed = int(options.get("seed", 0))
    init_method = None
    if method == "mcsat":
        init_method = options.get("init_method")
        if init_method is None:
            init_method = POOLED_INIT
            options = {**options, "init_method": POOLED_INIT}
    args = []
    if method == "gibbs":
        chains = int(options.get("chains", 4))
        k = min(workers, chains)
        share = [chains // k + (1 if t < chains % k else 0) for t in range(k)]
    else:
        samples = int(options.get("samples", 1000))
        k = min(workers, samples)
        share = [samples // k + (1 if t < samples % k else 0) for t in range(k)]
    meter = _Progress(progress, k, sum if method == "mcsat" else min) \
        if progress is not None and not _remote(executor) else None
    for t in range(k):
        opts = dict(options)
        opts["seed"] = seed_for(seed, t)
        if method == "gibbs":
            opts["chains"] = share[t]
        else:
            opts["samples"] = share[t]
        if t > 0:
            opts.pop("init", None)
        if meter is not None:
            opts["progress"] = meter.of(t)
        args.append((net, method, opts))
    results = executor.map(_run, args)
    # samples drawn (Gibbs: chains x sweeps), the weight of each run's average
    weight = np.array([r.samples for r in results], dtype=np.float64)
    prob = np.zeros(net.n_atoms, dtype=np.float64)
    for w, r in zip(weight, results):
        prob += w * r.probabilities
    prob /= max(weight.sum(), 1.0)
    stats = _merged_stats(results)
    stats.update(split="chains", chains=k, workers=int(workers))
    if init_method is not None:
        # where the chains started: chain 0 from a given world, if one was given
        stats["init_method"] = init_method if options.get("init") is None else f"given, then {init_method}"
    stats["chains_disagree"] = chain_disagreement(net, [r.probabilities for r in results], weight)
    if stats["chains_disagree"]["atoms"]:
        d = stats["chains_disagree"]
        start_hint = "" if init_method == "best" else ", start from MaxWalkSAT's best world (--init best)"
        msg = (f"{method}: the {k} pooled chains disagree on {d['atoms']} atom(s) (largest spread of the chains' "
               f"marginals {d['spread']:.3f}; {d['examples']}): they settled in different modes and the pooled "
               f"marginals average them. Run longer (--burn-in, --samples){start_hint} or use one chain "
               "(--threads 1) and compare.")
        warnings.warn(msg, stacklevel=3)
        stats["warning"] = msg
    drawn = int(sum(r.samples for r in results))
    return MarginalResult(probabilities=prob, method=method, samples=drawn,
                          seconds=time.perf_counter() - start, stats=stats)


# Where pooled MC-SAT chains start unless told (``init_method``/``--init``):
# each from the cheaper of two MaxWalkSAT worlds (from a random world with its
# own seed, and from the all-false world), chosen by measurement
# (bench/chain_start.py, see the module docstring).
POOLED_INIT = "best"

DISAGREE_SPREAD = 0.2        # chains disagree on an atom whose marginals spread more than this ...
DISAGREE_SIGMAS = 4.0        # ... and more than this many binomial standard errors of the pooled marginal


def chain_disagreement(net: GroundNetwork, probs: list[np.ndarray], samples: np.ndarray) -> dict:
    """How far pooled chains' marginals are apart: ``spread`` (the largest,
    over the atoms, of the max less the min of the chains' marginals),
    ``atoms`` (how many atoms the chains disagree on: spread above
    ``DISAGREE_SPREAD`` and above ``DISAGREE_SIGMAS`` binomial standard errors
    ``sqrt(p (1 - p) / m)``, ``p`` the pooled marginal and ``m`` the fewest
    samples a chain drew; a chain's autocorrelation only widens its error, so
    this flags modes, not noise) and ``examples`` (up to five of them, the
    widest first, as ``name a/b`` with the chains' least and largest
    marginals)."""
    if len(probs) < 2:
        return {"atoms": 0, "spread": 0.0, "examples": ""}
    p = np.vstack(probs)
    lo, hi = p.min(axis=0), p.max(axis=0)
    spread = hi - lo
    w = np.asarray(samples, dtype=np.float64)
    pooled = (w[:, None] * p).sum(axis=0) / max(w.sum(), 1.0)
    m = max(float(w.min()), 1.0)
    se = np.sqrt(np.clip(pooled * (1.0 - pooled), 0.0, None) / m)
    bad = np.flatnonzero((spread > DISAGREE_SPREAD) & (spread > DISAGREE_SIGMAS * se))
    top = bad[np.argsort(-spread[bad], kind="stable")][:5]
    examples = ", ".join(f"{net.atom_name(int(a))} {lo[a]:.2f}/{hi[a]:.2f}" for a in top)
    return {"atoms": int(len(bad)), "spread": float(spread.max()) if len(spread) else 0.0, "examples": examples}


def _remote(executor) -> bool:
    return not isinstance(executor, ThreadExecutor)


def _merged_stats(results: list[MarginalResult]) -> dict:
    out: dict = {}
    for r in results:
        for key, v in r.stats.items():
            if isinstance(v, bool):
                out[key] = out.get(key, False) or v
            elif isinstance(v, (int, float)) and not key.endswith(("per_second", "rate")):
                out[key] = out.get(key, 0) + v
    return out
