"""MAP quality when the exact ILP is skipped (issue 30): before and after in one run.

On a generated workload (``bench/synthetic.py``: ``social`` or ``classlike``
at size N) ground once, then with the same time limit ``--seconds``:

- ``before``: the default method's old fallback, MaxWalkSAT for the whole
  limit with the trivial bound (every soft clause as its weight wants);
- ``after``: :func:`markovlogic.infer.plan.approximate_map`, the LP dual's
  bound and world (``infer/lpbound.py``, at most 30 % of the limit), then
  MaxWalkSAT from that world;
- ``ilp`` (unless ``--no-ilp``): the exact ILP given ``--ilp-seconds``, for
  the optimum (or its best world and proven bound) to measure against.

Each row: cost, the bound on the cost, the reported gap, the cost's excess
over the ILP's optimum, CPU (user+sys of this process over the step) and
wall seconds, the step's peak resident memory (RSS sampled every 5 ms) and
that peak less the RSS before parsing per ground clause (``bytes_per_clause``:
what the process needs per clause up to and through the step; the network
stays alive throughout); ``--json OUT`` writes the rows. ``--kind
social-light`` is the issue's lighter social network (4.4 clauses a person);
``--no-before`` skips the MaxWalkSAT-only row. The machine is shared: CPU
seconds are the figure to compare. Run (social N=100k, ~2 minutes)::

    python -m bench.workloads.scale_quality --kind social --n 100000 --seconds 20 --json out.json

Measured 2026-11-27 on this machine (2 cores, shared with two other jobs:
CPU seconds are the figures to compare; cost = the weight of the clauses the
world does not satisfy as their sign wants, lower is better; "bound" a
proven lower bound of that cost):

| workload | clauses | step | cost | cost bound | gap (score) | CPU s / wall s |
|---|---|---|---|---|---|---|
| social N=100k (limit 20 s) | 1,088,731 | before: MaxWalkSAT | 127,569.8 | 0 (trivial) | .132 | 9.0 / 13.9 |
| | | after: LP dual (8 sweeps) + MaxWalkSAT | **65,598.4** optimal | 65,598.4 | 0 | 9.1 / 13.6 |
| | | ILP, 90 s | 65,598.4 optimal | | 0 | 12.2 / 59.5 |
| social N=1M (limit 60 s) | 10,894,772 | before: MaxWalkSAT | 1,277,442.3 | 0 (trivial) | .132 | 42.9 / 64.2 |
| | | after: LP dual (8 sweeps), rounded | **650,782.2** optimal | 650,782.2 | 0 | **6.1 / 9.4** |
| class-like N=30k (limit 30 s) | 818,190 | before: MaxWalkSAT | 92,556.2 | 0 (trivial) | .208 | 5.6 / 8.4 |
| | | after: LP dual (121 sweeps, 9.1 s) + MaxWalkSAT | **72,792.2** | 72,679.9 | .00024 | 11.1 / 16.2 |
| | | ILP, 60 s (limit) | 92,454.6 | 12.3 | .207 | 6.4 / 60.7 |

Commands: ``--kind social --n 100000 --seconds 20 --ilp-seconds 90``;
``--kind social --n 1000000 --seconds 60 --no-ilp`` (grounding 37.8 CPU s /
56.7 wall s, peak RSS 3.3 GB for the whole run); ``--kind classlike --n 30000
--seconds 30 --ilp-seconds 60``. On social networks (implications and units:
the LP is a minimum cut, tight) the LP dual's rounded world is the optimum
and its bound proves it; single-flip MaxWalkSAT misses the collective flips
and ends at twice the cost. On class-like (exactly-one topics, not tight) the
rounded world (73,043.4) polished by MaxWalkSAT is within 0.15 % of the LP
bound (cost terms), 21 % below what MaxWalkSAT or the ILP reach in the limit.
Not measured here: class-like N=100k. The lighter social generator
(``--kind social-light``, 4.4 clauses a person), N=3M and N=10M with the
memory per stage: ``bench/workloads/scale.py`` (issue 30 section).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class _Peak:
    """The process's resident memory sampled every 5 ms: the peak of each step."""

    def __init__(self) -> None:
        self.peak = _rss_mb()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            self.peak = max(self.peak, _rss_mb())
            time.sleep(0.005)

    def take(self) -> float:
        """The peak since the last call (MB)."""
        peak, self.peak = max(self.peak, _rss_mb()), _rss_mb()
        return peak


def run(kind: str, n: int, seconds: float, ilp_seconds: float | None, seed: int = 0,
        before: bool = True) -> list[dict]:
    from bench.synthetic import write
    from markovlogic import MLN, Database
    from markovlogic.ground import ground
    from markovlogic.infer.map import solve_map
    from markovlogic.infer.maxwalksat import maxwalksat
    from markovlogic.infer.plan import approximate_map, with_trivial_bound
    from markovlogic.lang.parser import parse_queries

    model, evidence, queries = write(kind, n)
    rows: list[dict] = []
    start_mb = _rss_mb()
    peaks = _Peak()
    c0, w0 = _cpu(), time.perf_counter()
    mln = MLN.from_file(model)
    db = Database.from_file([evidence], mln=mln)
    net = ground(mln, [db], parse_queries(queries, mln))
    del db
    base = {"workload": f"{kind} N={n:,}", "clauses": int(net.n_clauses), "limit_s": seconds}

    def memory() -> dict:
        peak = peaks.take()
        return {"peak_mb": round(peak), "bytes_per_clause": round((peak - start_mb) * 2**20 / max(1, net.n_clauses))}

    rows.append(dict(base, step="ground", cpu_s=round(_cpu() - c0, 1), wall_s=round(time.perf_counter() - w0, 1),
                     **memory()))

    def record(step: str, res, c0: float, w0: float) -> None:
        positive = float(net.weight[~net.is_hard & (net.weight > 0)].sum())
        cost_bound = None if res.bound is None else positive - float(res.bound)
        rows.append(dict(base, step=step, cost=round(float(res.cost), 3), hard_violated=int(res.hard_violated),
                         cost_bound=None if cost_bound is None else round(cost_bound, 3),
                         gap=None if res.gap is None else round(float(res.gap), 5), optimal=bool(res.optimal),
                         path=res.stats.get("path"), lp_sweeps=res.stats.get("lp_sweeps"),
                         lp_seconds=res.stats.get("lp_seconds"), lp_world_cost=res.stats.get("lp_world_cost"),
                         cpu_s=round(_cpu() - c0, 1), wall_s=round(time.perf_counter() - w0, 1), **memory()))

    if before:
        c0, w0 = _cpu(), time.perf_counter()
        record("before", with_trivial_bound(net, maxwalksat(net, max_seconds=seconds, seed=seed)), c0, w0)
    c0, w0 = _cpu(), time.perf_counter()
    record("after", approximate_map(net, seconds, seed=seed), c0, w0)
    if ilp_seconds:
        c0, w0 = _cpu(), time.perf_counter()
        record("ilp", solve_map(net, "ilp", max_seconds=ilp_seconds), c0, w0)
        ilp = rows[-1]
        if ilp["optimal"]:
            for r in rows[1:-1]:
                r["excess_over_optimum"] = round((r["cost"] - ilp["cost"]) / max(1.0, ilp["cost"]), 5)
    return rows


def markdown(rows: list[dict]) -> str:
    cols = ["workload", "clauses", "step", "path", "cost", "cost_bound", "gap", "excess_over_optimum", "optimal",
            "lp_sweeps", "cpu_s", "wall_s", "peak_mb", "bytes_per_clause"]
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        out.append("| " + " | ".join("" if r.get(c) is None else str(r.get(c)) for c in cols) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kind", default="social", choices=["social", "social-light", "classlike"])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--ilp-seconds", type=float, default=120.0)
    p.add_argument("--no-ilp", action="store_true")
    p.add_argument("--no-before", action="store_true", help="skip the MaxWalkSAT-only row (large N)")
    p.add_argument("--json", type=str, default=None)
    a = p.parse_args(argv)
    rows = run(a.kind, a.n, a.seconds, None if a.no_ilp else a.ilp_seconds, before=not a.no_before)
    print(markdown(rows))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
