"""MAP kernels on a random network shaped like tuffy/cse, and on the real
tuffy workloads when the data is there.

Run from the repository root::

    .venv/bin/python bench/map_kernels.py            # random network only
    .venv/bin/python bench/map_kernels.py --real     # + tuffy/cse, tuffy/class

Prints MaxWalkSAT flips per second (median of 3 runs of 1M flips, after a
warm-up run that compiles the kernels; wall clock and process CPU time: the
machines are shared, so CPU time is the steadier figure), its cost, and the
ILP's time, cost and bound (with a time limit).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))      # tests/networks.py: the random generators
sys.path.insert(0, str(ROOT / "src"))

from markovlogic.infer.ilp import ilp_map  # noqa: E402
from markovlogic.infer.maxwalksat import maxwalksat  # noqa: E402


def bench_maxwalksat(net, flips: int = 1_000_000, runs: int = 3) -> dict:
    maxwalksat(net, max_flips=1_000, seed=0)            # compile / load the kernels
    wall, cpu, costs = [], [], []
    for seed in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        res = maxwalksat(net, max_flips=flips, seed=seed, target_cost=-1.0)
        wall.append(res.stats["flips"] / (time.perf_counter() - w0))
        cpu.append(res.stats["flips"] / (time.process_time() - c0))
        costs.append(res.cost)
    return {
        "flips_per_s_wall": statistics.median(wall),
        "flips_per_s_cpu": statistics.median(cpu),
        "cost_median": statistics.median(costs),
        "cost_best": min(costs),
    }


def bench_ilp(net, max_seconds: float) -> dict:
    start = time.perf_counter()
    res = ilp_map(net, max_seconds=max_seconds)
    return {
        "seconds": time.perf_counter() - start,
        "cost": res.cost,
        "score": res.score,
        "bound": res.bound,
        "gap": res.gap,
        "optimal": res.optimal,
    }


def _real(name: str):
    from markovlogic import MLN, Database
    from markovlogic.api import ground_model

    folder = ROOT.parent / "shared" / "data" / "tuffy" / name
    if not folder.is_dir():
        return None
    mln = MLN.from_file([folder / "prog.mln"])
    db = Database.from_file([folder / "evidence.db"], mln=mln)
    queries = (folder / "query.db").read_text().split()
    return ground_model(mln, db, queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", action="store_true", help="also tuffy/cse and tuffy/class")
    parser.add_argument("--ilp-seconds", type=float, default=60.0)
    args = parser.parse_args()

    from networks import tuffy_like

    net = tuffy_like()
    print(f"random cse-shaped network: {net.n_atoms} atoms, {net.n_clauses} clauses "
          f"(1-6 literals, {int(net.is_hard.sum())} hard)")
    mws = bench_maxwalksat(net)
    print(f"  maxwalksat: {mws['flips_per_s_wall']:,.0f} flips/s wall, {mws['flips_per_s_cpu']:,.0f} flips/s CPU "
          f"(median of 3 x 1M flips); cost {mws['cost_median']:.2f}")
    ilp = bench_ilp(net, args.ilp_seconds)
    print(f"  ilp: {ilp['seconds']:.1f} s, cost {ilp['cost']:.2f}, bound {ilp['bound']:.2f}, "
          f"gap {ilp['gap']:.4f}, optimal {ilp['optimal']}")
    if args.real:
        for name in ("cse", "class"):
            net = _real(name)
            if net is None:
                print(f"tuffy/{name}: data not found")
                continue
            print(f"tuffy/{name}: {net.n_atoms} atoms, {net.n_clauses} clauses, {net.n_components} components")
            mws = bench_maxwalksat(net)
            print(f"  maxwalksat: {mws['flips_per_s_wall']:,.0f} flips/s wall, "
                  f"{mws['flips_per_s_cpu']:,.0f} flips/s CPU; cost {mws['cost_median']:.2f} "
                  f"(best {mws['cost_best']:.2f})")
            ilp = bench_ilp(net, args.ilp_seconds)
            print(f"  ilp: {ilp['seconds']:.1f} s, cost {ilp['cost']:.2f}, bound {ilp['bound']:.2f}, "
                  f"gap {ilp['gap']:.4f}, optimal {ilp['optimal']}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
