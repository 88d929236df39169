"""One state protocol (src/markovlogic/onestate.py): the four chains it
serves, before and after, in one run.

    .venv/bin/python bench/onestate.py --before BEFORE_SRC [--after src] [--runs 3]
    .venv/bin/python bench/onestate.py --before BEFORE_SRC --same

``BEFORE_SRC`` is the ``src`` folder of another checkout (e.g. ``git archive
main | tar -x -C /tmp/base``). For each tree, each case runs in a fresh
process (the trees' modules share names):

- ``cold``: the first call of each chain on a tiny problem with an empty
  numba cache (``NUMBA_CACHE_DIR`` a new folder per tree; the cases run in
  the order below, so a case finds what the cases before it compiled):
  compile time;
- ``warm``: the same in a second process with that cache filled: load time;
- throughput (median of ``--runs`` after a warm-up), proposals per CPU
  second: atom MH greedy MAP (tuffy-like network, 5,000 atoms, 150,000
  clauses, 2M proposals), cluster MH greedy MAP (1,000 mentions, 1M
  proposals), SampleRank over atoms (20,000 copies of a 3-atom network,
  1M steps), SampleRank over clusterings (300 mentions, 300k steps);
- a fingerprint of each result (score, or a hash of the learned weights):
  equal before and after means the chains made the same moves.

``--same`` runs only :func:`same_runs` in both trees and says whether every
result is identical (94 runs; 2.2 min wall, 1.3 min CPU, on 2026-11-27: "94 runs:
identical before and after").

The machine is shared: CPU seconds are the figure to compare; wall is given too.

Measured 2026-11-27 on this 2-core machine shared with two other jobs (load
7.3), before = da523b1 (hand-written loops), after = the generic loops of
onestate.py, ``--runs 3`` (7.6 min wall, 3.6 min CPU for the whole run);
fingerprints equal before and after in all four:

| chain | cold first call, CPU s | warm first call, CPU s | M proposals / CPU s |
|---|---|---|---|
| atom MH, greedy MAP | 6.94 -> 8.14 | 0.78 -> 0.79 | 0.573 -> 0.617 |
| cluster MH, greedy MAP | 50.38 -> 46.46 | 0.92 -> 0.97 | 0.359 -> 1.034 |
| SampleRank, atoms | 5.09 -> 7.62 | 1.05 -> 1.17 | 2.640 -> 2.797 |
| SampleRank, clusterings | 11.57 -> 11.15 | 1.45 -> 1.52 | 0.467 -> 0.856 |

(cold cluster MH includes compiling the grounder and cluster model builder.)
The clusterings' chains got faster because the bound loops run without
numba's reference counting (onestate.py, "Speed"); the first version of the
generic loops, with it and without inlining, made SampleRank over atoms 2.9x
and over clusterings 1.6x slower.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- the cases (run inside a child process)

def _cluster_mln():
    from markovlogic import MLN

    return MLN.from_string("""
Title(m, t)
HasWord(t, w)
Same(m, m)
1.5 Title(x, t) ^ Title(y, t) => Same(x, y)
0.4 HasWord(t1, w) ^ HasWord(t2, w) ^ Title(x, t1) ^ Title(y, t2) => Same(x, y)
1.0 !Same(x, y)
""")


def _cluster_model(n_mentions: int, truth: bool, seed: int = 0):
    import numpy as np

    from markovlogic import Database
    from markovlogic.cluster.model import build_cluster_model

    rng = np.random.default_rng(seed)
    mln = _cluster_mln()
    n_ent = max(1, n_mentions // 4)
    words = {e: rng.choice(5 * n_ent, size=4, replace=False) for e in range(n_ent)}
    lines, ent = [], []
    for i in range(n_mentions):
        e = int(rng.integers(n_ent))
        ent.append(e)
        t = f"T{e}_{int(rng.integers(2))}"
        lines.append(f"Title(M{i}, {t})")
        for w in words[e][:3 + int(rng.integers(2))]:
            lines.append(f"HasWord({t}, W{int(w)})")
    if truth:
        lines += [f"Same(M{i}, M{j})" for i in range(n_mentions) for j in range(n_mentions) if ent[i] == ent[j]]
    db = Database.from_string("\n".join(sorted(set(lines))) + "\n", mln=mln)
    return mln, build_cluster_model(mln, db, "Same", truth=truth)


def _atom_training(copies: int):
    import numpy as np

    from markovlogic.ground.network import GroundNetwork
    from markovlogic.learn.synthetic import replicate, sample_exact

    w = np.array([0.8, 1.5, -1.0, 0.6])
    t = GroundNetwork.from_clauses(3, [(w[0], [(0, True)]), (w[1], [(0, False), (1, True)]),
                                       (w[2], [(1, True), (2, True)]), (w[3], [(2, False), (0, False)])])
    return replicate(t.with_params(np.zeros(4)), copies, sample_exact(t, copies, np.random.default_rng(3)))


def _digest(a) -> str:
    import numpy as np

    # rounded: the same moves may sum the average in another order
    return hashlib.sha256(np.round(np.asarray(a, dtype=np.float64), 9).tobytes()).hexdigest()[:12]


def case_atom_mh(size: str):
    from markovlogic.infer.mh import mh_map

    sys.path.insert(0, str(ROOT / "tests"))
    from networks import random_network, tuffy_like
    import numpy as np

    if size == "tiny":
        net = random_network(np.random.default_rng(0), 8, 12, p_hard=0.2, n_blocks=1)
        steps = 1000
    else:
        net, steps = tuffy_like(seed=0), 2_000_000
    r = mh_map(net, seed=0, steps=steps)
    return steps, f"score {r.score:.6f} accepted {r.stats['accepted']}"


def case_cluster_mh(size: str):
    from markovlogic.cluster.mh import MHOptions, mh_map

    n, steps = (20, 1000) if size == "tiny" else (1000, 1_000_000)
    _, model = _cluster_model(n, truth=False)
    r = mh_map(model, MHOptions(steps=steps, seed=0))
    return steps, f"score {r.score:.6f} accepted {r.stats['accepted']} clusters {r.stats['clusters']}"


def case_atom_samplerank(size: str):
    from markovlogic.learn import learn_samplerank_atoms
    from markovlogic.learn.samplerank_core import SampleRankOptions

    copies, steps = (5, 1000) if size == "tiny" else (20_000, 1_000_000)
    net = _atom_training(copies)
    r = learn_samplerank_atoms([net], options=SampleRankOptions(update="mira", epochs=1, steps=steps), seed=1)
    return steps, f"theta {_digest(r.params)} updates {r.stats['updates']} accepted {r.stats['accepted']}"


def case_cluster_samplerank(size: str):
    from markovlogic.learn.samplerank import SampleRankOptions, parameters_of, samplerank

    n, steps = (12, 1000) if size == "tiny" else (300, 300_000)
    mln, model = _cluster_model(n, truth=True)
    params = parameters_of(model, mln)
    r = samplerank([model], params, SampleRankOptions(update="mira", epochs=1, steps=steps, seed=0))
    return steps, f"theta {_digest(r.theta)} updates {r.stats['updates']} accepted {r.stats['accepted']}"


def same_runs() -> list:
    """Many small runs with fixed seeds (``--same``): worlds, statistics,
    learned weights and traces, to compare before and after exactly: atom MH
    (greedy, annealing, T = 1 with single flips, marginals; hard clauses,
    blocks, tie moves) on 6 random networks; SampleRank over atoms (3
    updates x 2 acceptances x 2 temperatures) on 4; SampleRank over
    clusterings (3 losses x 3 updates x 2 acceptances) and cluster MH (greedy,
    annealing, T = 1 with restarts, pair marginals)."""
    import numpy as np
    from dataclasses import replace

    sys.path.insert(0, str(ROOT / "tests"))
    from networks import random_network

    from markovlogic.cluster.mh import MHOptions, mh_map as cmap, mh_marginals as cmarg
    from markovlogic.infer.mh import mh_map, mh_marginals
    from markovlogic.learn import learn_samplerank_atoms
    from markovlogic.learn.samplerank import SampleRankOptions, parameters_of, samplerank
    from markovlogic.learn.synthetic import sample_exact

    out: list = []
    for seed in range(6):
        net = random_network(np.random.default_rng(seed), 12, 30, p_hard=0.3, n_blocks=2)
        for kw in [dict(steps=3000), dict(steps=3000, anneal=3.0), dict(steps=3000, temperature=1.0, tie_max=1)]:
            r = mh_map(net, seed=seed, **kw)
            out.append([r.world.astype(int).tolist(), {k: v for k, v in r.stats.items() if "second" not in k}])
        m = mh_marginals(net, samples=300, seed=seed)
        out.append([m.probabilities.tolist(), {k: v for k, v in m.stats.items() if "second" not in k}])
    for seed in range(4):
        rng = np.random.default_rng(seed)
        net = random_network(rng, 14, 30, p_hard=0.15, n_blocks=2)
        truth = sample_exact(net, 1, rng)[0]
        net = replace(net.with_params(np.zeros(net.n_params)), truth=truth.astype(np.int8))
        for upd in ["perceptron", "mira", "mira++"]:
            for acc in ["model", "loss"]:
                for temp in [1.0, 0.0]:
                    r = learn_samplerank_atoms([net], options=SampleRankOptions(
                        update=upd, accept=acc, epochs=2, steps=3000, temperature=temp, trace_every=100), seed=seed)
                    out.append([np.asarray(r.params).tolist(), {k: v for k, v in r.stats.items() if "second" not in k},
                                [[t.iteration, t.objective] for t in r.trace]])
    mln, model = _cluster_model(40, truth=True, seed=1)
    params = parameters_of(model, mln)
    for loss in ["pairwise-f1", "hamming", "b3"]:
        for upd in ["perceptron", "mira", "mira++"]:
            for acc in ["model", "loss"]:
                r = samplerank([model], params, SampleRankOptions(update=upd, loss=loss, accept=acc, epochs=2,
                                                                  steps=4000, seed=3))
                out.append([np.round(r.theta, 10).tolist(), r.stats["updates"], r.stats["accepted"],
                            [round(t["loss"], 10) for t in r.trace]])
    _, m2 = _cluster_model(60, truth=False, seed=2)
    for kw in [dict(steps=20000), dict(steps=20000, anneal=3.0), dict(steps=20000, temperature=1.0, restarts=2)]:
        r = cmap(m2, MHOptions(seed=4, **kw))
        out.append([r.labels.tolist(), round(r.score, 9), {k: v for k, v in r.stats.items() if "second" not in k}])
    out.append(np.round(cmarg(m2, MHOptions(seed=5, samples=200)).pair_probabilities, 12).tolist())
    return out


CASES = {"atom_mh": case_atom_mh, "cluster_mh": case_cluster_mh, "atom_samplerank": case_atom_samplerank,
         "cluster_samplerank": case_cluster_samplerank}


def child(name: str, size: str, runs: int) -> dict:
    warnings.simplefilter("ignore")
    fn = CASES[name]
    w0, c0 = time.perf_counter(), time.process_time()
    steps, fp = fn(size)
    first = {"first_wall_s": time.perf_counter() - w0, "first_cpu_s": time.process_time() - c0}
    if size == "tiny":
        return {**first, "fingerprint": fp}
    walls, cpus = [], []
    for _ in range(runs):
        w0, c0 = time.perf_counter(), time.process_time()
        steps, fp = fn(size)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    w, c = statistics.median(walls), statistics.median(cpus)
    return {"wall_s": w, "cpu_s": c, "steps": steps, "steps_per_cpu_s": steps / c, "fingerprint": fp}


# ---------------------------------------------------------------- the driver

def run_tree(src: str, runs: int) -> dict:
    out: dict = {}
    cache = tempfile.mkdtemp(prefix="onestate-numba-")
    env = dict(os.environ, PYTHONPATH=src, NUMBA_CACHE_DIR=cache)

    def call(name, size, r=1):
        p = subprocess.run([sys.executable, __file__, "--child", name, size, str(r)], env=env, capture_output=True,
                           text=True)
        if p.returncode:
            raise SystemExit(p.stderr)
        return json.loads(p.stdout.strip().splitlines()[-1])

    for name in CASES:
        out[name] = {"cold": call(name, "tiny"), "warm": call(name, "tiny")}
    for name in CASES:
        out[name]["throughput"] = call(name, "big", runs)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", help="src folder of the tree before")
    ap.add_argument("--after", default=str(ROOT / "src"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--same", action="store_true", help="only compare many small fixed-seed runs (needs --before)")
    a = ap.parse_args()
    if a.child:
        if a.child[0] == "same":
            warnings.simplefilter("ignore")
            print(json.dumps(same_runs()))
        else:
            print(json.dumps(child(a.child[0], a.child[1], int(a.child[2]))))
        return
    if a.same:
        runs = {}
        for label, src in (("before", a.before), ("after", a.after)):
            p = subprocess.run([sys.executable, __file__, "--child", "same", "-", "0"], capture_output=True, text=True,
                               env=dict(os.environ, PYTHONPATH=src))
            if p.returncode:
                raise SystemExit(p.stderr)
            runs[label] = json.loads(p.stdout.strip().splitlines()[-1])
        diff = [i for i, (x, y) in enumerate(zip(runs["before"], runs["after"])) if x != y]
        print(f"{len(runs['after'])} runs: " + ("identical before and after" if not diff and
                                                 len(runs["before"]) == len(runs["after"]) else f"differ at {diff}"))
        return
    trees = ([("before", a.before)] if a.before else []) + [("after", a.after)]
    res = {label: run_tree(src, a.runs) for label, src in trees}
    print(f"load {os.getloadavg()[0]:.1f}")
    for name in CASES:
        for label, _ in trees:
            r = res[label][name]
            t = r["throughput"]
            print(f"{name:19s} {label:6s} cold first call {r['cold']['first_wall_s']:6.2f} s wall "
                  f"({r['cold']['first_cpu_s']:.2f} CPU), warm {r['warm']['first_wall_s']:5.2f} s "
                  f"({r['warm']['first_cpu_s']:.2f}); {t['steps_per_cpu_s'] / 1e6:6.3f} M steps/CPU-s "
                  f"({t['cpu_s']:.2f} CPU s, {t['wall_s']:.2f} wall); {t['fingerprint']}")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
