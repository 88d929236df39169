"""Workloads ``mcsat-ext-*``: what Poon's MC-SAT extensions buy (issue 13, item 3).

``python -m bench.workloads.mcsat_ext [--models isolated,jnt-seg] [--samples 1000] [--variants ...] [--cse]``

Citation segmentation (``examples/citations/isolated.mln`` and ``jnt-seg.mln``
with their shipped fold-1 weights, ``mln derive`` evidence for Jnt-Seg) on
``cora_refs/fold1/test-evidence.db`` (627 citations, 173,052 ``InField``
atoms, ~628,000 clauses of which 173,052 hard pair clauses). MC-SAT with the
same sample budget (``--samples``, burn-in a tenth, seed 0) in each variant:

- ``plain``: the house's MC-SAT (start: WalkSAT on the hard clauses);
- ``group``: ``group_mutex`` (the hard pair clauses as 57,684 at-most-one
  blocks with a "none" state, :mod:`markovlogic.infer.mutex`);
- ``joint``: ``joint_moves`` (pair moves that move blocks too);
- ``group+joint``;
- ``mws``: ``init_method="maxwalksat"``; ``two-pass``: ``init_method="two-pass"``;
- ``all``: group, joint and two-pass.

Scored by the token F1 of the marginals thresholded at 0.5 (the scorer of
:mod:`bench.workloads.citations`), and against the **exact marginals**: in
these two models every ground clause touches one position of a citation or
two consecutive ones, so each citation is a chain of positions with 8 joint
states of its three ``InField`` atoms and forward-backward gives the exact
marginals of the whole network (:func:`chain_exact_marginals`, checked
against enumeration on small models in ``tests/test_bench_mcsat_ext.py``;
7 s). Columns: ``mae`` mean |p - exact| over all atoms, ``mae_real`` over
the atoms of positions that hold a token, ``off>.1`` atoms off by more than
0.1. Rows ``exact`` (the exact marginals thresholded: the best any sampler
can score this way), ``ILP MAP`` (the default of ``mln infer --map``) and
``baseline`` (the per-token baseline of :mod:`bench.workloads.citations`,
fit on ``train.db``; its 0/1 answers scored against the exact marginals
too).

Why two F1 columns: 132,276 of the 173,052 atoms (76 %) are positions past
the end of their citation (the ``position`` type has P00-P91 for every
citation). There the exact marginal of ``Fvenue`` is just under 0.5 (a
tail is all-venue or all-none with nearly equal weight: the chain rules of
weight 19 and 75 tie its positions together, and nothing else speaks), so
a sampler whose estimate of a tail lands just above 0.5 adds ~70 false
venue tokens, and ``F1`` (all atoms) swings with it; ``F1 real`` scores
only the positions that hold a token.

tuffy/cse (``--cse``): no exact answer; error against a long reference run
(plain MC-SAT, ``--reference`` samples, seed 99); the trivial baseline
answers 0.5 for every atom. cse has neither hard pair clauses nor blocks,
so ``group`` and ``joint`` change nothing there (the rows say so).

Measured: see the tables below (filled in from the runs; load average
beside each).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.harness import ground_tuffy, workload
from bench.workloads.citations import (
    SHIPPED, baseline_fit, baseline_predict, derived_files, fold_dir, read_atoms, segmentation_scores,
)

FIELDS = ("Fauthor", "Ftitle", "Fvenue")
PLAIN = {"init_method": "hard", "group_mutex": False, "joint_moves": False, "cluster_moves": False}
VARIANTS = {
    "plain": dict(PLAIN),
    "group": dict(PLAIN, group_mutex=True),
    "joint": dict(PLAIN, joint_moves=True),
    "group+joint": dict(PLAIN, group_mutex=True, joint_moves=True),
    "mws": dict(PLAIN, init_method="maxwalksat"),
    "two-pass": dict(PLAIN, init_method="two-pass"),
    "cluster": dict(PLAIN, cluster_moves=True),
    "mws+cluster": dict(PLAIN, init_method="maxwalksat", cluster_moves=True),
    "mws+group+joint": dict(PLAIN, init_method="maxwalksat", group_mutex=True, joint_moves=True),
}
DEFAULT_VARIANTS = ("plain", "group", "group+joint", "mws", "two-pass", "cluster", "mws+cluster", "mws+group+joint")


# ------------------------------------------------------------------ exact marginals of chain networks

def chain_exact_marginals(net, chain: np.ndarray, pos: np.ndarray, bit: np.ndarray, n_bits: int) -> np.ndarray:
    """Exact marginals of a network whose atoms sit on chains: atom ``a`` is
    bit ``bit[a]`` of the state of node ``(chain[a], pos[a])`` (positions
    0..L-1; a bit no atom fills stays 0). Every clause must touch one node
    or two consecutive nodes of one chain (else ``ValueError``); no blocks.
    Forward-backward in log space over ``2**n_bits`` states per node,
    vectorised over the chains."""
    from scipy.special import logsumexp

    if net.n_blocks:
        raise ValueError("blocks are not supported")
    chain = np.asarray(chain, dtype=np.int64)
    pos = np.asarray(pos, dtype=np.int64)
    bit = np.asarray(bit, dtype=np.int64)
    n_chains, length, n_states = int(chain.max()) + 1, int(pos.max()) + 1, 1 << n_bits
    node = chain * length + pos
    start = np.asarray(net.clause_start, dtype=np.int64)
    sizes = np.diff(start)
    lit_node = node[net.lit_atom]
    lo = np.minimum.reduceat(lit_node, start[:-1])
    hi = np.maximum.reduceat(lit_node, start[:-1])
    span = hi - lo
    if (span > 1).any() or (chain[net.lit_atom[start[:-1][span == 1]]] != chain[net.lit_atom[start[1:][span == 1] - 1]]).any():
        raise ValueError("a clause touches more than two consecutive nodes of one chain")
    states = np.arange(n_states)
    present = np.zeros((n_chains * length, n_bits), bool)
    present[node, bit] = True
    allowed = np.ones((n_chains * length, n_states), bool)
    for b in range(n_bits):
        allowed &= present[:, b:b + 1] | (((states >> b) & 1) == 0)[None, :]
    unary = np.zeros((n_chains * length, n_states))
    pair = np.zeros((n_chains * length, n_states, n_states))
    weight = np.where(net.is_hard, 0.0, net.weight)
    for kind, table in ((0, unary), (1, pair)):
        cl = np.flatnonzero(span == kind)
        if not len(cl):
            continue
        cs = np.zeros(len(cl) + 1, np.int64)
        np.cumsum(sizes[cl], out=cs[1:])
        lit = start[np.repeat(cl, sizes[cl])] + (np.arange(cs[-1]) - np.repeat(cs[:-1], sizes[cl]))
        b = bit[net.lit_atom[lit]]
        positive = net.lit_positive[lit]
        if kind == 0:
            value = ((states[None, :] >> b[:, None]) & 1) == positive[:, None]
            axes = (slice(None), None)
        else:
            upper = lit_node[lit] != lo[np.repeat(cl, sizes[cl])]
            s = np.where(upper[:, None, None], states[None, None, :], states[None, :, None])
            value = ((s >> b[:, None, None]) & 1) == positive[:, None, None]
            axes = (slice(None), None, None)
        sat = np.logical_or.reduceat(value, cs[:-1], axis=0)
        contrib = np.where(net.is_hard[cl][axes], np.where(sat, 0.0, -np.inf), weight[cl][axes] * sat)
        np.add.at(table, lo[cl], contrib)
    unary = np.where(allowed, unary, -np.inf).reshape(n_chains, length, n_states)
    pair = pair.reshape(n_chains, length, n_states, n_states)
    fwd = np.zeros_like(unary)
    bwd = np.zeros_like(unary)
    fwd[:, 0] = unary[:, 0]
    for p in range(1, length):
        fwd[:, p] = unary[:, p] + logsumexp(fwd[:, p - 1][:, :, None] + pair[:, p - 1], axis=1)
    for p in range(length - 2, -1, -1):
        bwd[:, p] = logsumexp(pair[:, p] + (unary[:, p + 1] + bwd[:, p + 1])[:, None, :], axis=2)
    logm = fwd + bwd
    logm -= logsumexp(logm, axis=2, keepdims=True)
    m = np.exp(logm).reshape(n_chains * length, n_states)
    prob = np.zeros(net.n_atoms)
    for b in range(n_bits):
        on = ((states >> b) & 1) == 1
        sel = bit == b
        prob[sel] = m[node[sel]][:, on].sum(axis=1)
    return prob


def citation_layout(net) -> tuple[list[tuple[str, str, str]], np.ndarray, np.ndarray, np.ndarray]:
    """``InField(bib, field, Pnn)`` atoms as (bib, field, position) and their
    chain (bib), position index and bit (field)."""
    names = [tuple(net.constants[c] for c in net.atom_args[i] if c >= 0) for i in range(net.n_atoms)]
    bibs = {b: k for k, b in enumerate(sorted({a[0] for a in names}))}
    chain = np.array([bibs[a[0]] for a in names], dtype=np.int64)
    pos = np.array([int(a[2][1:]) for a in names], dtype=np.int64)
    bit = np.array([FIELDS.index(a[1]) for a in names], dtype=np.int64)
    return names, chain, pos, bit


# ------------------------------------------------------------------ citations

def _ground(model: Path, evidence: list[Path]):
    from markovlogic import MLN, Database
    from markovlogic.api import ground_model

    mln = MLN.from_file(model)
    db = Database.from_file(evidence, mln=mln)
    return ground_model(mln, db, "InField")


def _load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def citations(models: list[str], samples: int, variants: list[str], seed: int = 0, fold: int = 1) -> list[dict]:
    import warnings

    from markovlogic.infer.ilp import ilp_map
    from markovlogic.infer.mcsat import mcsat

    folder = fold_dir(fold)
    truth = {tuple(a) for a in read_atoms(folder / "test-truth.db", ("InField",))["InField"]}
    real = {(b, p) for _, p, b in read_atoms(folder / "test-evidence.db", ("Token",))["Token"]}
    base = baseline_predict(baseline_fit(folder / "train.db"), folder / "test-evidence.db")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in models:
            model = SHIPPED[name]
            _, test_extra, _ = derived_files(model, folder, Path(tmp)) if name != "isolated" else ([], [], 0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                net = _ground(model, [folder / "test-evidence.db", *test_extra])
            names, chain, pos, bit = citation_layout(net)
            is_real = np.array([(a[0], a[2]) in real for a in names])

            def score(prob, label, seconds=None, extra=None, cpu=None):
                pred = {names[i] for i in np.flatnonzero(np.asarray(prob) > 0.5)}
                f_all = segmentation_scores(pred, truth)["all_f1"]
                f_real = segmentation_scores({a for a in pred if (a[0], a[2]) in real}, truth)["all_f1"]
                err = np.abs(np.asarray(prob, dtype=float) - exact)
                row = {"model": name, "row": label, "f1": f_all, "f1_real": f_real,
                       "mae": round(float(err.mean()), 4), "mae_real": round(float(err[is_real].mean()), 4),
                       "off_0.1": int((err > 0.1).sum()), "seconds": None if seconds is None else round(seconds, 1),
                       "cpu_s": None if cpu is None else round(cpu, 1), "load": _load()}
                row.update(extra or {})
                print(json.dumps(row), flush=True)
                rows.append(row)

            t0, c0 = time.perf_counter(), time.process_time()
            exact = chain_exact_marginals(net, chain, pos, bit, len(FIELDS))
            score(exact, "exact", time.perf_counter() - t0, cpu=time.process_time() - c0)
            t0, c0 = time.perf_counter(), time.process_time()
            m = ilp_map(net)
            score(m.world.astype(float), "ILP MAP", time.perf_counter() - t0, cpu=time.process_time() - c0)
            base_prob = np.array([a in base for a in names], dtype=float)
            score(base_prob, "baseline")
            for v in variants:
                t0, c0 = time.perf_counter(), time.process_time()
                r = mcsat(net, samples=samples, burn_in=max(1, samples // 10), seed=seed, **VARIANTS[v])
                s = r.stats
                score(r.probabilities, v, time.perf_counter() - t0,
                      {"init_s": round(s.get("init_seconds", 0.0), 1), "steps": s["samplesat_steps"]},
                      cpu=time.process_time() - c0)
    return rows


# ------------------------------------------------------------------ tuffy/cse

def cse(samples: int, variants: list[str], reference: int, seed: int = 0) -> list[dict]:
    from markovlogic.infer.mcsat import mcsat

    net, figures = ground_tuffy("cse")
    t0 = time.perf_counter()
    ref = mcsat(net, samples=reference, burn_in=reference // 10, seed=99).probabilities
    rows = []

    def add(label, prob, seconds, extra=None, cpu=None):
        err = np.abs(np.asarray(prob) - ref)
        row = {"model": "tuffy/cse", "row": label, "mae": round(float(err.mean()), 5), "max": round(float(err.max()), 4),
               "seconds": None if seconds is None else round(seconds, 1),
               "cpu_s": None if cpu is None else round(cpu, 1), "load": _load()}
        row.update(extra or {})
        print(json.dumps(row), flush=True)
        rows.append(row)

    add(f"reference ({reference} samples)", ref, time.perf_counter() - t0)
    add("baseline 0.5", np.full(net.n_atoms, 0.5), None)
    for v in variants:
        t0, c0 = time.perf_counter(), time.process_time()
        r = mcsat(net, samples=samples, burn_in=max(1, samples // 10), seed=seed, **VARIANTS[v])
        add(v, r.probabilities, time.perf_counter() - t0, {"groups": r.stats.get("mutex_groups", 0)},
            cpu=time.process_time() - c0)
    return rows


workload("mcsat-ext-citations", "MC-SAT extensions on cora_refs fold 1 (Isolated, Jnt-Seg): F1 and error vs exact",
         timeout=7200.0)(lambda: {f"{r['model']}_{r['row']}_{k}": v for r in citations(["isolated", "jnt-seg"], 1000,
                                                                                      list(DEFAULT_VARIANTS))
                                  for k, v in r.items() if k not in ("model", "row")})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="What Poon's MC-SAT extensions buy")
    parser.add_argument("--models", default="isolated,jnt-seg")
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--variants", default=",".join(DEFAULT_VARIANTS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cse", action="store_true", help="tuffy/cse instead of the citation models")
    parser.add_argument("--reference", type=int, default=20000, help="samples of the cse reference run")
    args = parser.parse_args(argv)
    variants = args.variants.split(",")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown variant(s) {unknown}; choose among {list(VARIANTS)}")
    if args.cse:
        rows = cse(args.samples, variants, args.reference, args.seed)
    else:
        rows = citations([m for m in args.models.split(",") if m], args.samples, variants, args.seed)
    keys = [k for k in rows[0] if k != "model"] if rows else []
    for r in rows:
        keys += [k for k in r if k not in keys and k != "model"]
    print("| model | " + " | ".join(keys) + " |")
    for r in rows:
        print(f"| {r['model']} | " + " | ".join("" if r.get(k) is None else str(r.get(k)) for k in keys) + " |")


if __name__ == "__main__":
    main()
