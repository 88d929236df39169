"""MAP kernels on a random network shaped like tuffy/cse, and on the real
tuffy workloads when the data is there.

Run from the repository root::

    .venv/bin/python bench/map_kernels.py            # random network only
    .venv/bin/python bench/map_kernels.py --real     # + tuffy/cse, tuffy/class
    .venv/bin/python bench/map_kernels.py --real --no-ilp --against /tmp/old_maxwalksat.py

``--against`` times another copy of the MaxWalkSAT module (e.g. the previous
commit's, with its relative imports made absolute) in the same process,
runs interleaved, and prints the ratio of the medians: the machines are
shared, so a speed-up is only believable measured side by side.

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


def _load_module(path: Path):
    """Import ``path`` as a top-level module (numba's on-disk cache re-imports
    a kernel's module by name, so it must be importable)."""
    import importlib

    path = path.resolve()
    if path.stem in sys.modules or path.stem == "maxwalksat":
        raise SystemExit(f"--against: rename {path} (its module name {path.stem!r} is taken)")
    sys.path.insert(0, str(path.parent))
    return importlib.import_module(path.stem)


def bench_maxwalksat(net, flips: int = 1_000_000, runs: int = 3, fn=maxwalksat) -> dict:
    fn(net, max_flips=1_000, max_tries=1, seed=0)            # compile / load the kernels
    wall, cpu, costs = [], [], []
    for seed in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        res = fn(net, max_flips=flips, max_tries=1, seed=seed, target_cost=-1.0)
        wall.append(res.stats["flips"] / (time.perf_counter() - w0))
        cpu.append(res.stats["flips"] / (time.process_time() - c0))
        costs.append(res.cost)
    return {
        "flips_per_s_wall": statistics.median(wall),
        "flips_per_s_cpu": statistics.median(cpu),
        "cost_median": statistics.median(costs),
        "cost_best": min(costs),
    }


def compare_maxwalksat(net, other, flips: int = 1_000_000, runs: int = 3) -> tuple[dict, dict]:
    """This module's MaxWalkSAT and ``other``'s, one run of each in turn
    (medians over ``runs`` seeds)."""
    maxwalksat(net, max_flips=1_000, max_tries=1, seed=0)            # compile / load the kernels
    other(net, max_flips=1_000, max_tries=1, seed=0)
    theirs: list[dict] = []
    ours = []
    for seed in range(runs):
        ours.append(_one(net, flips, seed, maxwalksat))
        theirs.append(_one(net, flips, seed, other))

    def med(rows: list[dict]) -> dict:
        return {k: statistics.median(r[k] for r in rows) for k in rows[0]}

    return med(ours), med(theirs)


def _one(net, flips: int, seed: int, fn) -> dict:
    w0, c0 = time.perf_counter(), time.process_time()
    res = fn(net, max_flips=flips, max_tries=1, seed=seed, target_cost=-1.0)
    f = res.stats["flips"]
    return {"flips_per_s_wall": f / (time.perf_counter() - w0), "flips_per_s_cpu": f / (time.process_time() - c0),
            "cost_median": res.cost, "cost_best": res.cost}


def _print_mws(mws: dict, label: str = "maxwalksat") -> None:
    print(f"  {label}: {mws['flips_per_s_wall']:,.0f} flips/s wall, {mws['flips_per_s_cpu']:,.0f} flips/s CPU "
          f"(median of 3 x 1M flips); cost {mws['cost_median']:.2f}")


def _mws_figures(net, against) -> None:
    if against is None:
        _print_mws(bench_maxwalksat(net))
        return
    ours, theirs = compare_maxwalksat(net, against.maxwalksat)
    _print_mws(ours)
    _print_mws(theirs, "against")
    print(f"  ratio (CPU flips/s, this / against): {ours['flips_per_s_cpu'] / theirs['flips_per_s_cpu']:.2f}")


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
    parser.add_argument("--no-ilp", action="store_true", help="skip the ILP")
    parser.add_argument("--against", type=Path, help="another maxwalksat.py to time side by side")
    args = parser.parse_args()
    against = _load_module(args.against) if args.against else None

    from networks import tuffy_like

    net = tuffy_like()
    print(f"random cse-shaped network: {net.n_atoms} atoms, {net.n_clauses} clauses "
          f"(1-6 literals, {int(net.is_hard.sum())} hard)")
    _mws_figures(net, against)
    if not args.no_ilp:
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
            _mws_figures(net, against)
            if args.no_ilp:
                continue
            ilp = bench_ilp(net, args.ilp_seconds)
            print(f"  ilp: {ilp['seconds']:.1f} s, cost {ilp['cost']:.2f}, bound {ilp['bound']:.2f}, "
                  f"gap {ilp['gap']:.4f}, optimal {ilp['optimal']}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
