"""Metropolis-Hastings kernels: proposals per second over possible worlds
(infer/mh.py) and over clusterings (cluster/chain.py), with and without
user proposals, and the accuracy of the marginals on small random networks.

Run from the repository root::

    .venv/bin/python bench/mh_kernels.py [--runs 3]

Figures (median of ``--runs`` runs after a warm-up that loads the compiled
kernels; wall clock and process CPU time):

- worlds: a random network shaped like tuffy/cse (5,000 atoms, 150,000
  clauses), greedy MAP, annealing MAP and marginals; the same with a user
  proposal (a single flip in Python) taking 1 % and 100 % of the steps;
- clusterings: a synthetic coreference model (planted clusters, title
  words), MAP at T = 0 and marginals, with the default mixture of the five
  proposals; and with a user merge/split proposal at 10 %;
- accuracy: max |MH - exact| marginal error over 100 random networks of up
  to 10 atoms (blocks, no hard clauses; 5,000 samples).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))      # tests/networks.py: the random generators
sys.path.insert(0, str(ROOT / "src"))

from markovlogic import MLN, Database  # noqa: E402
from markovlogic.cluster.mh import MHOptions  # noqa: E402
from markovlogic.cluster.mh import mh_map as cluster_map  # noqa: E402
from markovlogic.cluster.mh import mh_marginals as cluster_marginals  # noqa: E402
from markovlogic.cluster.model import build_cluster_model  # noqa: E402
from markovlogic.infer.exact import exact_marginals  # noqa: E402
from markovlogic.infer.mh import mh_map, mh_marginals  # noqa: E402
from markovlogic.infer.proposals import Flip, Merge  # noqa: E402
from networks import random_network, tuffy_like  # noqa: E402


def timed(fn, runs: int):
    fn()
    wall, cpu, result = [], [], None
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu), result


def py_flip(view, rng):
    return Flip([int(view.free_atoms[rng.integers(len(view.free_atoms))])])


def worlds(runs: int) -> None:
    net = tuffy_like(seed=0)
    print(f"\n== worlds: tuffy-like network, {net.n_atoms:,} atoms, {net.n_clauses:,} clauses, "
          f"{int(net.is_hard.sum()):,} hard")
    steps = 2_000_000
    for label, kw in [("greedy MAP", dict(steps=steps)), ("annealing MAP (T 5 -> 0.05)", dict(steps=steps, anneal=5.0)),
                      ("fixed T = 1 MAP", dict(steps=steps, temperature=1.0))]:
        w, c, r = timed(lambda: mh_map(net, seed=0, **kw), runs)
        print(f"{label}: {steps:,} proposals {w:.2f} s wall, {c:.2f} s CPU = {steps / c / 1e6:.2f} M proposals/CPU-s; "
              f"accept {r.stats['accept_rate']:.3f}, score {r.score:.1f}, cost {r.cost:.1f}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w, c, r = timed(lambda: mh_marginals(net, samples=200, seed=0, burn_in=100_000), runs)
    props = r.stats["proposals"]
    print(f"marginals 200 samples x {r.stats['thin']:,} proposals (Rao-Blackwellised): {w:.2f} s wall, "
          f"{c:.2f} s CPU = {props / c / 1e6:.2f} M proposals/CPU-s")
    for p, k in [(0.01, 1_000_000), (1.0, 100_000)]:
        w, c, r = timed(lambda: mh_map(net, seed=0, steps=k, user_proposals=[(py_flip, p)]), runs)
        print(f"user flip proposal at {p:.0%} of {k:,} steps: {w:.2f} s wall = {k / w:,.0f} proposals/s")


def cluster_model(n_mentions: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    mln = MLN.from_string("""
Title(m, t)
HasWord(t, w)
Same(m, m)
1.5 Title(x, t) ^ Title(y, t) => Same(x, y)
0.4 HasWord(t1, w) ^ HasWord(t2, w) ^ Title(x, t1) ^ Title(y, t2) => Same(x, y)
1.0 !Same(x, y)
""")
    n_ent = max(1, n_mentions // 4)
    words = {e: rng.choice(5 * n_ent, size=4, replace=False) for e in range(n_ent)}
    lines = []
    for i in range(n_mentions):
        e = int(rng.integers(n_ent))
        t = f"T{e}_{int(rng.integers(2))}"
        lines.append(f"Title(M{i}, {t})")
        for w in words[e][:3 + int(rng.integers(2))]:
            lines.append(f"HasWord({t}, W{int(w)})")
    db = Database.from_string("\n".join(sorted(set(lines))) + "\n", mln=mln)
    return build_cluster_model(mln, db, "Same")


def py_merge(view, rng):
    c = view.n_clusters
    if c < 2:
        return None
    a, b = (int(v) for v in rng.choice(view.clusters(), size=2, replace=False))
    return Merge(a, b, 0.0, -np.inf)       # merges only: irreversible, rejected at T > 0, greedy at T = 0


def clusterings(runs: int) -> None:
    for n in (1000, 5000):
        model = cluster_model(n)
        print(f"\n== clusterings: {n:,} mentions, {len(model.arrays.indices) // 2:,} linked pairs")
        steps = 1_000_000
        w, c, r = timed(lambda: cluster_map(model, MHOptions(steps=steps, seed=0)), runs)
        print(f"greedy MAP {steps:,} proposals: {w:.2f} s wall, {c:.2f} s CPU = {steps / c / 1e3:,.0f} k proposals/CPU-s; "
              f"accepted {r.stats['accepted']:,}, {r.stats['clusters']:,} clusters")
        w, c, r = timed(lambda: cluster_marginals(model, MHOptions(samples=200, burn_in=100_000, seed=0)), runs)
        print(f"marginals 200 samples x {r.stats['thin']:,}: {w:.2f} s wall = {r.stats['proposals'] / c / 1e3:,.0f} k proposals/CPU-s")
        k = 100_000
        w, c, r = timed(lambda: cluster_map(model, MHOptions(steps=k, seed=0, user_proposals=[(py_merge, 0.1)])), runs)
        print(f"user merge proposal at 10 % of {k:,} steps: {w:.2f} s wall = {k / w:,.0f} proposals/s")


def accuracy() -> None:
    rng = np.random.default_rng(7)
    errs = []
    t0 = time.perf_counter()
    for i in range(100):
        n = int(rng.integers(1, 11))
        net = random_network(rng, n, int(rng.integers(1, 2 * n + 4)), p_hard=0.0, n_blocks=int(rng.integers(0, 3)))
        exact = exact_marginals(net).probabilities
        errs.append(float(np.abs(mh_marginals(net, samples=5000, seed=i).probabilities - exact).max()))
    print(f"\n== accuracy: 100 random networks (<= 10 atoms, blocks), 5,000 samples: max error {max(errs):.4f}, "
          f"median {statistics.median(errs):.4f} ({time.perf_counter() - t0:.1f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    accuracy()
    worlds(args.runs)
    clusterings(args.runs)


if __name__ == "__main__":
    main()
