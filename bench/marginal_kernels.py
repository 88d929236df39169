"""Marginal inference kernels: MC-SAT and Gibbs on a random network shaped
like tuffy/cse, and on the real tuffy workloads when the data is there.

Run from the repository root::

    .venv/bin/python bench/marginal_kernels.py            # random network only
    .venv/bin/python bench/marginal_kernels.py --real     # + tuffy smoke, cse, rc1000, class

For each network: MC-SAT (1000 samples after 100 burn-in, default settings)
and Gibbs (4 chains x 250 sweeps after 25), median of ``--runs`` runs after a
warm-up run that loads the compiled kernels; wall clock and process CPU time
(the machines are shared: CPU time is the steadier figure) of the sampling
alone, samples per second. On tuffy/smoke the marginals are compared with
exact enumeration. Beside: other systems' figures from ../shared/PEERS.md.
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

from markovlogic.errors import InferenceError  # noqa: E402
from markovlogic.infer.exact import exact_marginals  # noqa: E402
from markovlogic.infer.gibbs import gibbs  # noqa: E402
from markovlogic.infer.mcsat import mcsat  # noqa: E402

PEERS = {
    "cse": "Alchemy: MC-SAT 1000 samples 64 s (88 s total); Tuffy: 100 samples 83 s (102 s total)",
    "rc1000": "Alchemy: MC-SAT 1000 samples 117 s CPU total; Tuffy: 100 samples 101 s (121 s total)",
    "class": "Alchemy -lazy: MC-SAT 339 s CPU total; Tuffy: 100 samples 25 s (43 s total)",
    "smoke": "Tuffy: 100 samples 1.0 s (4.0 s total); pracmln MC-SAT 12.9 s",
}


def timed(fn, runs: int) -> tuple[dict, object]:
    """Median wall and CPU seconds of ``fn()`` over ``runs`` runs (after a warm-up)."""
    fn()
    wall, cpu, result = [], [], None
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        result = fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return {"wall": statistics.median(wall), "cpu": statistics.median(cpu)}, result


def alchemy_hard_weight(net) -> float:
    """Alchemy's weight for hard clauses: the sum of the soft weights plus 10."""
    return float(np.abs(net.weight[~net.is_hard]).sum()) + 10.0


def bench_network(name: str, net, runs: int, samples: int = 1000, exact: bool = False) -> None:
    print(f"\n== {name}: {net.n_atoms:,} atoms, {net.n_clauses:,} clauses, "
          f"{int(net.is_hard.sum()):,} hard, {net.n_components:,} components")
    opts: dict = {}
    try:
        mcsat(net, samples=1, burn_in=0)
    except InferenceError as exc:
        opts["hard_weight"] = alchemy_hard_weight(net)
        print(f"hard clauses contradict each other ({str(exc)[:90]}...); as Alchemy does, "
              f"they become soft clauses of weight {opts['hard_weight']:g}")
    t, r = timed(lambda: mcsat(net, samples=samples, burn_in=100, seed=0, **opts), runs)
    s = r.stats
    print(f"MC-SAT {samples} samples: {t['wall']:.2f} s wall, {t['cpu']:.2f} s CPU "
          f"({samples / t['cpu']:.0f} samples/CPU-s; sampling alone {s['sampling_seconds']:.2f} s); "
          f"SampleSAT accept {s['samplesat_accept_rate']:.3f}, Metropolis accept {s['metropolis_accept_rate']:.3f}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # Gibbs with hard clauses: reported by R-hat below
        tg, rg = timed(lambda: gibbs(net, samples=250, burn_in=25, chains=4, seed=0, **opts), runs)
    print(f"Gibbs 4 x 250 sweeps: {tg['wall']:.2f} s wall, {tg['cpu']:.2f} s CPU "
          f"({1000 / tg['cpu']:.0f} sweeps/CPU-s); R-hat max {rg.stats['rhat_max']}, mean {rg.stats['rhat_mean']}")
    if exact:
        ex = exact_marginals(net).probabilities
        print(f"max |MC-SAT - exact| = {np.abs(r.probabilities - ex).max():.4f}, "
              f"max |Gibbs - exact| = {np.abs(rg.probabilities - ex).max():.4f}")
    if name in PEERS:
        print(f"peers: {PEERS[name]}")


def ground_tuffy(name: str):
    from markovlogic import Database, MLN
    from markovlogic.api import ground_model

    folder = ROOT.parent / "shared" / "data" / "tuffy" / name
    if not folder.is_dir():
        print(f"\n== {name}: data folder not found ({folder}); skipped")
        return None
    start = time.perf_counter()
    mln = MLN.from_file([folder / "prog.mln"])
    db = Database.from_file([folder / "evidence.db"], mln=mln)
    net = ground_model(mln, db, (folder / "query.db").read_text().split())
    print(f"\n{name}: grounded in {time.perf_counter() - start:.2f} s")
    return net


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real", action="store_true", help="also the tuffy workloads")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from networks import tuffy_like

    bench_network("random (tuffy_like)", tuffy_like(), args.runs)
    if args.real:
        for name in ("smoke", "cse", "rc1000", "class"):
            net = ground_tuffy(name)
            if net is not None:
                bench_network(name, net, args.runs, exact=(name == "smoke"))


if __name__ == "__main__":
    main()
