"""The automatic partition's eigen-solves with BLAS limited to one thread, or
as BLAS comes (``infer/graph_partition.py``).

    python bench/graph_partition_threads.py [--n 60000] [--k 6] [--repeat 3]

On a clustered 3-SAT network given as one predicate (``bench/workloads/sgmp.py``'s
generator), times ``graph_partition`` both ways in one process, alternating,
and prints wall and process CPU seconds (all threads) and whether the groups
are identical. Measured 2026-11-27 19:13 UTC on this 2-core machine (load ~5
from other jobs; OpenBLAS with 2 threads), ``--n 60000 --k 6 --repeat 3``
(60,000 atoms, 252,090 clauses, 6 groups found): BLAS as it comes median
4.04 s wall / 2.47 s CPU, BLAS on one thread 2.42 s wall / 1.18 s CPU, the
same groups every run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=60000)
    ap.add_argument("--k", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    from threadpoolctl import threadpool_info

    from bench.workloads.sgmp import clustered_3sat
    from markovlogic.infer.graph_partition import graph_partition, incidence
    from markovlogic.infer.kernels_state import sat_arrays

    net = clustered_3sat(a.n, a.k, one_predicate=True)
    sat = sat_arrays(net)
    H = incidence(net.n_atoms, sat.clause_start, sat.lit_atom, sat.block_start, sat.block_atoms)
    blas = [(i.get("internal_api"), i.get("num_threads")) for i in threadpool_info() if i.get("user_api") == "blas"]
    print(f"network: {net.n_atoms:,} atoms, {net.n_clauses:,} clauses; BLAS {blas}")
    out = {}
    for r in range(a.repeat):
        for name, threads in (("blas as it comes", None), ("blas 1 thread", 1)):
            w, c = time.perf_counter(), time.process_time()
            g = graph_partition(H, blas_threads=threads)
            w, c = time.perf_counter() - w, time.process_time() - c
            out.setdefault(name, []).append((w, c, g))
            print(f"  run {r + 1} {name:17s} wall {w:6.2f} s  cpu {c:6.2f} s  groups {int(g.max()) + 1}")
    same = all(np.array_equal(x[2], out["blas 1 thread"][0][2]) for v in out.values() for x in v)
    for name, v in out.items():
        print(f"{name:17s} median wall {np.median([x[0] for x in v]):.2f} s, cpu {np.median([x[1] for x in v]):.2f} s")
    print("identical groups:", same)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
