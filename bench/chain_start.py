"""Where pooled MC-SAT chains start (issue 30, item 3): measured per start.

``PYTHONPATH=src:. python -m bench.chain_start [--seeds 10] [--models friends30,...] [--json OUT]``
``PYTHONPATH=src:. python -m bench.chain_start --scale 50000 [--scale-samples 200]``

Two pooled MC-SAT chains (``--threads 2``: :func:`markovlogic.parallel.
marginals.pooled_chains`, called directly so that the small networks and
``class``, which ``mln infer`` would split by component, pool too; 1,000 samples in all, 500 a chain, burn-in 100, the
defaults) on each model, for seeds 0..``--seeds``-1, from each start:

- ``default``: what ``pooled_chains`` does when no start is given (the
  checkout's default: ``hard`` before this bench, ``maxwalksat`` after);
- ``hard``: each chain from WalkSAT's first solution of the hard clauses,
  from a random world (the default before this bench);
- ``maxwalksat``: each chain from its own MaxWalkSAT world (one try, the
  chain's own seed: ``--init maxwalksat``);
- ``best``: each chain from the cheaper of two MaxWalkSAT worlds, one from
  a random world (as ``maxwalksat``) and one from the all-false world
  (``--init best``);
- ``shared-mws``: one MaxWalkSAT world (seed of chain 0), both chains start
  there (one search instead of two);
- ``mixed``: chain 0 from MaxWalkSAT, chain 1 from WalkSAT (a random
  start as a witness for the between-chain diagnostic).

Per start: ``disagree`` how many of the seeds' pooled runs flag
``chains_disagree`` (and the warning), ``max err`` the largest (over seeds)
and the mean of the per-seed max |p - reference| over the network's atoms,
``bad`` seeds whose max error is above .05 with no warning (a wrong answer
that says nothing), CPU and wall seconds per pooled run (process CPU, both
threads; the machine is shared).

Models and references:

- ``friends30``: the friends model of ``bench/workloads/lazy.py``
  (``FRIENDS_MC_MODEL``: ``Friends(x,y) ^ Smokes(x) => Smokes(y)`` with
  ``Friends`` open, prior -8) on ``bench/synthetic.social`` N = 30 (703
  atoms, 18,035 clauses): the issue's metastable "everybody smokes" mode.
  Reference: one chain of 20,000 samples from MaxWalkSAT's world (seed 99);
  a second long chain (20,000 samples, WalkSAT start, seed 98) is reported
  beside it as the check (their max difference).
- ``gated13``: generated, 12 atoms ``S_i`` pairwise tied by three-literal
  clauses through a gate atom ``G`` (``1.5 !G v !S_i v S_j`` both ways,
  ``5 G``, ``-0.3`` on each ``S_i``): two modes (all ``S`` false, favoured,
  and all true) that cluster moves do not join (no two-literal
  equivalence). Exact marginals by enumeration.
- ``hardtie9``: the hard-tie model of issue 30 widened to six people
  (``1.371 !S(x) v P(x)``, ``1.97 S(y)``, ``!S(y) v !P(x) v P(y).``,
  evidence ``!S(A) S(B) S(C)``). Exact marginals by enumeration.
- ``cse``: tuffy's cse (``../shared/data/tuffy/cse``, 4,624 atoms, 161,932
  clauses, one component: ``--threads 2`` pools two chains there). Reference
  and check as for ``class``.
- ``class``: tuffy's class (``../shared/data/tuffy/class``, 63,895 clauses;
  bistable components: the MaxWalkSAT start of one chain left an atom .29
  off in ``bench/workloads/mcsat_ext.py``). Reference and check: two chains
  of 10,000 samples, MaxWalkSAT start seed 99 and WalkSAT start seed 98;
  the error is against their mean, the check is their max difference.

Measured 2026-11-27 on this 2-core machine, shared with another session
and a benchmark (load 1-6). First run (commit 3103b56, where ``default`` was
``maxwalksat``; ``smoke`` left out: 6 atoms, split by component)::

    | model     | start      | disagree | max err | mean err | err>.05 | bad | cpu s | wall s |
    | friends30 | hard       | 5/10     | .500    | .153     | 6       | 1   | 0.66  | 1.26   |
    | friends30 | maxwalksat | 0/10     | .001    | .000     | 0       | 0   | 0.70  | 1.51   |
    | friends30 | shared-mws | 0/10     | .001    | .000     | 0       | 0   | 0.67  | 1.64   |
    | friends30 | mixed      | 3/10     | .500    | .096     | 4       | 1   | 0.68  | 1.20   |
    | gated13   | hard       | 2/10     | .154    | .086     | 9       | 7   | 0.02  | 0.04   |
    | gated13   | maxwalksat | 5/10     | .121    | .052     | 3       | 3   | 0.03  | 0.06   |
    | gated13   | shared-mws | 5/10     | .121    | .052     | 3       | 3   | 0.03  | 0.04   |
    | gated13   | mixed      | 1/10     | .201    | .088     | 9       | 8   | 0.02  | 0.03   |
    | hardtie9  | hard       | 0/10     | .025    | .016     | 0       | 0   | 0.03  | 0.05   |
    | hardtie9  | maxwalksat | 0/10     | .018    | .012     | 0       | 0   | 0.02  | 0.02   |
    | hardtie9  | shared-mws | 0/10     | .018    | .013     | 0       | 0   | 0.01  | 0.03   |
    | hardtie9  | mixed      | 0/10     | .022    | .013     | 0       | 0   | 0.02  | 0.03   |
    | cse       | hard       | 1/10     | .105    | .055     | 5       | 4   | 4.75  | 3.83   |
    | cse       | maxwalksat | 1/10     | .090    | .062     | 9       | 8   | 4.93  | 5.80   |
    | cse       | shared-mws | 0/10     | .096    | .065     | 6       | 6   | 5.20  | 6.93   |
    | cse       | mixed      | 1/10     | .104    | .062     | 7       | 7   | 5.20  | 5.66   |
    | class     | hard       | 6/10     | .196    | .108     | 10      | 4   | 4.62  | 4.69   |
    | class     | maxwalksat | 3/10     | .148    | .097     | 10      | 7   | 4.91  | 4.99   |
    | class     | shared-mws | 2/10     | .161    | .104     | 10      | 8   | 4.90  | 4.95   |
    | class     | mixed      | 7/10     | .157    | .101     | 10      | 3   | 4.48  | 4.67   |

Then ``--scale 50000`` (social N = 50,000, 543,632 clauses, 1,000 samples)
showed the MaxWalkSAT start's failure: chain 0's MaxWalkSAT world (cost
63,770, everybody smokes) against chain 1's (32,816), the pool flagging
89,861 atoms (hard: 0). One MaxWalkSAT try from a random world ends in
"everybody smokes" for 6 seeds in 10 at N = 5,000, 8 at 20,000, 9 at 50,000
(each atom's single flip breaks about ten implications; issue 30 item 1).
So the ``best`` start, and the ``social5k`` model; second run (commit
06d2259, ``default`` = ``best``), ``--models friends30,social5k,gated13,
hardtie9 --starts default,hard,maxwalksat,best`` and ``--models cse,class
--starts hard,best``::

    | model     | start      | disagree | max err | mean err | err>.05 | bad | cpu s | wall s |
    | friends30 | hard       | 5/10     | .500    | .153     | 6       | 1   | 0.70  | 0.37   |
    | friends30 | maxwalksat | 0/10     | .001    | .000     | 0       | 0   | 0.70  | 0.38   |
    | friends30 | best       | 0/10     | .001    | .000     | 0       | 0   | 0.72  | 0.39   |
    | social5k  | hard       | 0/10     | .011    | .007     | 0       | 0   | 2.48  | 1.27   |
    | social5k  | maxwalksat | 7/10     | 1.000   | .451     | 8       | 1   | 3.60  | 2.15   |
    | social5k  | best       | 0/10     | .007    | .006     | 0       | 0   | 2.81  | 1.44   |
    | gated13   | hard       | 2/10     | .154    | .086     | 9       | 7   | 0.03  | 0.02   |
    | gated13   | maxwalksat | 5/10     | .121    | .052     | 3       | 3   | 0.03  | 0.02   |
    | gated13   | best       | 5/10     | .121    | .052     | 3       | 3   | 0.03  | 0.02   |
    | hardtie9  | hard       | 0/10     | .025    | .016     | 0       | 0   | 0.06  | 0.05   |
    | hardtie9  | maxwalksat | 0/10     | .018    | .012     | 0       | 0   | 0.02  | 0.01   |
    | hardtie9  | best       | 0/10     | .018    | .012     | 0       | 0   | 0.02  | 0.01   |
    | cse       | hard       | 1/10     | .105    | .055     | 5       | 4   | 4.58  | 2.33   |
    | cse       | best       | 1/10     | .067    | .057     | 8       | 8   | 5.13  | 2.66   |
    | class     | hard       | 6/10     | .196    | .108     | 10      | 4   | 3.96  | 2.10   |
    | class     | best       | 5/10     | .206    | .102     | 10      | 5   | 3.94  | 2.04   |

(``default`` rows equal the ``best`` rows, and equalled ``maxwalksat`` in
the first run.) References: friends30's two long chains agree to .021;
social5k's to .004 (that MaxWalkSAT-started long chain left the costly
mode); cse's to .026, class's to .065 (bistable components no chain
crosses: class's errors are the reference's own as much as the runs', and no
start helps there). cse and class: at 1,000 samples the error is noise of
about .05-.1 whatever the start.

``--scale 50000`` (``mln infer``, two pooled chains, 1,000 samples), twice::

    | N      | start | wall s      | cpu s       | peak MB   | init s (both chains) | disagree |
    | 50,000 | hard  | 32.2 / 30.6 | 57.6 / 56.5 | 542 / 552 | 0                    | 0        |
    | 50,000 | best  | 66.2 / 31.6 | 73.5 / 59.9 | 687 / 684 | 8.6 / 7.3            | 0        |

(the first ``best`` wall is the shared machine; the start costs 3-16 CPU
seconds here and 130-145 MB: MaxWalkSAT's search state beside the chain's.)

Chosen: ``best`` for pooled chains (``POOLED_INIT`` in
:mod:`markovlogic.parallel.marginals`). A random start fails the friends
model (6 runs in 10 off by up to .5), a MaxWalkSAT start the social one (8
in 10 off by up to 1.0); ``best`` is right on both, ties or beats either
elsewhere, for 3-15 % more CPU. One chain (``--threads 1``) and the
component split keep WalkSAT's start (measured in ``bench/workloads/
mcsat_ext.py``; not re-measured here).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
STARTS = ("default", "hard", "maxwalksat", "best", "shared-mws", "mixed")
SAMPLES = 1000


def _friends(n: int):
    sys.path.insert(0, str(REPO_ROOT))
    from bench.workloads.lazy import FRIENDS_MC_MODEL, _social

    mln, db, queries, common = _social(n, True, FRIENDS_MC_MODEL)
    return mln.ground(db, queries=queries, **common)


def _gated(n: int = 12):
    from markovlogic.ground.network import GroundNetwork

    g = n
    clauses = [(5.0, [(g, True)])] + [(-0.3, [(a, True)]) for a in range(n)]
    for a in range(n):
        for b in range(n):
            if a != b:
                clauses.append((1.5, [(g, False), (a, False), (b, True)]))
    return GroundNetwork.from_clauses(n + 1, clauses)


HARDTIE = """S(person)
P(person)
1.371 !S(x) v P(x)
1.97 S(y)
!S(y) v !P(x) v P(y).
"""


def _hardtie():
    from markovlogic import MLN, Database

    mln = MLN.from_string("person = {A, B, C, D, E, F}\n" + HARDTIE, "hardtie.mln")
    db = Database.from_string("!S(A)\nS(B)\nS(C)\n", "hardtie.db", mln=mln)
    return mln.ground(db, queries=["S", "P"])


def _tuffy(name: str):
    from markovlogic import MLN, Database

    folder = REPO_ROOT.parent / "shared" / "data" / "tuffy" / name
    if not folder.is_dir():
        return None
    mln = MLN.from_file([folder / "prog.mln"])
    db = Database.from_file([folder / "evidence.db"], mln=mln)
    return mln.ground(db, queries=(folder / "query.db").read_text().split())


def _social(n: int):
    from markovlogic import MLN, Database

    sys.path.insert(0, str(REPO_ROOT))
    from bench.synthetic import write

    model, evidence, queries = write("social", n)
    mln = MLN.from_file(str(model))
    return mln.ground(Database.from_file(str(evidence), mln=mln), queries=queries.split(","))


MODELS = {
    "friends30": lambda: _friends(30),
    "social5k": lambda: _social(5_000),
    "gated13": _gated,
    "hardtie9": _hardtie,
    "cse": lambda: _tuffy("cse"),
    "class": lambda: _tuffy("class"),
}
EXACT = {"gated13", "hardtie9"}
LONG = {"friends30": 20_000, "social5k": 5_000, "class": 10_000, "cse": 10_000}


def reference(name: str, net) -> tuple[np.ndarray, float, str]:
    """(reference marginals, max difference of the check, how)."""
    from markovlogic.infer.exact import exact_marginals
    from markovlogic.infer.marginals import solve_marginals

    if name in EXACT:
        return exact_marginals(net).probabilities, 0.0, "exact"
    n = LONG[name]
    a = solve_marginals(net, method="mcsat", samples=n, seed=99, init_method="maxwalksat").probabilities
    b = solve_marginals(net, method="mcsat", samples=n, seed=98).probabilities
    check = float(np.abs(a - b).max())
    if name == "social5k":      # MaxWalkSAT's start is in the costly mode there (see RESULTS)
        return b, check, f"{n}-sample chain from WalkSAT (check: MaxWalkSAT start)"
    if name in ("class", "cse"):
        return (a + b) / 2, check, f"mean of two {n}-sample chains"
    return a, check, f"{n}-sample chain from MaxWalkSAT (check: WalkSAT start)"


def _chain(net, opts: dict):
    from markovlogic.infer.marginals import solve_marginals

    return solve_marginals(net, method="mcsat", **opts)


def pooled(net, start: str, seed: int):
    """Two pooled chains from ``start``; (marginals, disagree atoms)."""
    from markovlogic.infer.mcsat import default_init_flips, maxwalksat_start
    from markovlogic.parallel.executor import ThreadExecutor
    from markovlogic.parallel.marginals import chain_disagreement, pooled_chains
    from markovlogic.parallel.split import seed_for

    if start in ("default", "hard", "maxwalksat", "best"):
        opts = {"seed": seed, "samples": SAMPLES} | ({} if start == "default" else {"init_method": start})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = pooled_chains(net, "mcsat", opts, 2, ThreadExecutor(2))
        return r.probabilities, r.stats["chains_disagree"]["atoms"]
    seeds = [seed_for(seed, 0), seed_for(seed, 1)]
    if start == "shared-mws":
        world, _ = maxwalksat_start(net, two_pass=False, flips=default_init_flips(net.n_atoms), seed=seeds[0])
        opts = [{"seed": s, "samples": SAMPLES // 2, "init": world} for s in seeds]
    else:   # mixed
        opts = [{"seed": seeds[0], "samples": SAMPLES // 2, "init_method": "maxwalksat"},
                {"seed": seeds[1], "samples": SAMPLES // 2}]
    results = ThreadExecutor(2).map(_chain, [(net, o) for o in opts])
    w = np.array([r.samples for r in results], dtype=np.float64)
    prob = sum(wi * r.probabilities for wi, r in zip(w, results)) / w.sum()
    return prob, chain_disagreement(net, [r.probabilities for r in results], w)["atoms"]


def run_model(name: str, seeds: int, starts: tuple[str, ...]) -> list[dict]:
    net = MODELS[name]()
    if net is None:
        print(f"{name}: data not found, skipped", flush=True)
        return []
    t0 = time.perf_counter()
    ref, check, how = reference(name, net)
    print(f"{name}: {net.n_atoms} atoms, {net.n_clauses} clauses; reference {how} "
          f"({time.perf_counter() - t0:.1f} s; check max diff {check:.3f})", flush=True)
    rows = []
    for start in starts:
        errs, flags, cpu, wall = [], [], [], []
        for seed in range(seeds):
            c0, w0 = time.process_time(), time.perf_counter()
            prob, atoms = pooled(net, start, seed)
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
            errs.append(float(np.abs(prob - ref).max()))
            flags.append(int(atoms))
        errs_a = np.array(errs)
        flagged = np.array(flags) > 0
        row = {"model": name, "start": start, "seeds": seeds, "disagree": int(flagged.sum()),
               "max_err": round(float(errs_a.max()), 4), "mean_err": round(float(errs_a.mean()), 4),
               "over_05": int((errs_a > 0.05).sum()), "bad": int(((errs_a > 0.05) & ~flagged).sum()),
               "cpu_s": round(float(np.mean(cpu)), 3), "wall_s": round(float(np.mean(wall)), 3),
               "errs": [round(e, 3) for e in errs], "check": round(check, 4)}
        rows.append(row)
        print(f"| {name} | {start} | {row['disagree']}/{seeds} | {row['max_err']:.3f} | {row['mean_err']:.3f} | "
              f"{row['over_05']} | {row['bad']} | {row['cpu_s']:.2f} | {row['wall_s']:.2f} |", flush=True)
    return rows


def scale(n: int, samples: int) -> list[dict]:
    """What the start costs on a large pooled network: ``mln infer`` (two
    pooled chains, ``samples`` samples) on ``bench/synthetic.social`` N =
    ``n`` (one component holds nearly every atom), each start in a fresh
    process under ``/usr/bin/time``: wall, CPU (user + sys) and peak RSS."""
    import os
    import subprocess
    import tempfile

    sys.path.insert(0, str(REPO_ROOT))
    from bench.synthetic import write

    model, evidence, queries = write("social", n)
    rows = []
    print("| N | start | wall s | cpu s | peak MB | init s | disagree |")
    print("|---|---|---|---|---|---|---|")
    for start in ("hard", "default"):
        with tempfile.TemporaryDirectory() as tmp:
            stats = Path(tmp) / "stats.json"
            cmd = ["/usr/bin/time", "-f", "%e %U %S %M", sys.executable, "-m", "markovlogic.cli", "infer", "-i",
                   str(model), "-e", str(evidence), "-q", queries, "-r", str(Path(tmp) / "out.result"),
                   "--samples", str(samples), "--seed", "0", "--stats-json", str(stats)]
            if start != "default":
                cmd += ["--init", start]
            run = subprocess.run(cmd, capture_output=True, text=True, env=os.environ)
            if run.returncode != 0:
                raise SystemExit(run.stderr[-2000:])
            wall, user, sys_, rss = run.stderr.strip().splitlines()[-1].split()
            st = json.loads(stats.read_text())
            row = {"n": n, "start": st.get("init_method", start), "wall_s": float(wall),
                   "cpu_s": round(float(user) + float(sys_), 2), "peak_mb": round(int(rss) / 1024),
                   "init_s": round(float(st.get("init_seconds", 0.0)), 2), "split": st.get("split"),
                   "disagree": st.get("chains_disagree_atoms"), "clauses": st.get("clauses")}
            rows.append(row)
            print(f"| {n:,} | {row['start']} | {row['wall_s']:.1f} | {row['cpu_s']:.1f} | {row['peak_mb']:,} | "
                  f"{row['init_s']:.2f} | {row['disagree']} |", flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--starts", default=",".join(STARTS))
    ap.add_argument("--json")
    ap.add_argument("--scale", type=int, help="instead: mln infer on social N=SCALE, hard against the default start")
    ap.add_argument("--scale-samples", type=int, default=200)
    a = ap.parse_args(argv)
    if a.scale:
        rows = scale(a.scale, a.scale_samples)
        if a.json:
            Path(a.json).write_text(json.dumps(rows, indent=1))
        return
    _chain(_gated(), {"samples": 10})            # compile before timing
    print("| model | start | disagree | max err | mean err | err>.05 | bad (>.05, silent) | cpu s | wall s |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    for m in a.models.split(","):
        rows += run_model(m, a.seeds, tuple(a.starts.split(",")))
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
