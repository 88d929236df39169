"""Learning with missing labels on UW-CSE (issue 14): a fraction of the
training ``advisedBy`` atoms unknown.

    python -m bench.workloads.learn_hidden [--folds 1-5] [--fractions 0.25,0.5,1.0]

The model and protocol of ``learn_uwcse`` (tuffy/cse formulas from zero
weights, MC-SAT marginals of advisedBy on the test fold, AUC-PR and CLL).
Per fold, the training network is ground once; for each fraction ``f`` a
random ``f`` of its advisedBy atoms (seed 0) are made unknown and the
weights learned

* ``hidden``: by the observed-data likelihood (``learn/hidden.py``: one
  MC-SAT chain clamped to the observed atoms, one free; ``SETTINGS``),
  started at the pseudo-likelihood optimum of the data with the unknown
  atoms read as false;
* ``as false``: the naive way, the unknown atoms read as false (closed
  world) and diagonal Newton on the completed data (from the same start),
  same settings: the trivial baseline;

beside ``supervised`` (every label, diagonal Newton from the
pseudo-likelihood optimum, the settings of ``learn_uwcse``) and the all-zero
model.

With every label unknown (f = 1) nothing is observed: the conditional
likelihood of the query given the evidence is constant, and the learner
refuses (no fixed-weight prior ties advisedBy down). The row says so.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np

from bench.harness import workload
from bench.workloads.learn_uwcse import _numbers, evaluate, load_fold

SETTINGS = {"iterations": 20, "samples": 5}      # learn_uwcse's dn settings


def _networks(data):
    from markovlogic.learn.api import ground_training
    from markovlogic.learn.output import split_clauses

    start = time.perf_counter()
    nets = ground_training(split_clauses(data.mln).mln, [data.train], ["advisedBy"], False)
    return nets, time.perf_counter() - start


def _unknown(net, fraction: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    q = np.flatnonzero(net.is_query & (net.truth >= 0))
    chosen = rng.choice(q, size=int(round(fraction * len(q))), replace=False)
    truth = net.truth.copy()
    truth[chosen] = -1
    return replace(net, truth=truth)


def _learn(data, nets, label: str, fraction: float, init=None) -> dict:
    from markovlogic.errors import LearningError
    from markovlogic.learn.api import learn_model

    start = time.perf_counter()
    settings = dict(SETTINGS)
    if init is not None:
        settings["init"] = init
    try:
        model = learn_model(data.mln, [data.train], query_predicates=["advisedBy"], method="dn",
                            networks=nets, **settings)
    except LearningError as exc:
        return {"system": label, "fraction": fraction, "refused": str(exc)[:120]}
    figures = {"system": label, "fraction": fraction, "learn_s": round(time.perf_counter() - start, 1),
               "iterations": model.result.iterations}
    figures.update(evaluate(model.mln, data.evidence, data.truth_atoms, 0))
    return figures


def run_fold(fold: int, fractions: list[float]) -> list[dict]:
    data = load_fold(fold)
    nets, ground_s = _networks(data)
    rows = [{"system": "zero weights", "fraction": 0.0, **evaluate(data.mln, data.evidence, data.truth_atoms, 0)},
            _learn(data, nets, "supervised", 0.0)]
    from markovlogic.learn.api import learn_model

    for f in fractions:
        hidden = [_unknown(n, f) for n in nets]
        as_false = [replace(n, truth=np.where(n.truth < 0, 0, n.truth).astype(np.int8)) for n in hidden]
        # both start from the pseudo-likelihood optimum of the data read as false
        # (pll needs every truth value); dn's default start is the same
        start = learn_model(data.mln, [data.train], query_predicates=["advisedBy"], method="pll",
                            networks=as_false).result.params if f < 1.0 else None
        rows.append(_learn(data, hidden, "hidden", f, init=start))
        if f < 1.0:
            rows.append(_learn(data, as_false, "as false", f))
    for r in rows:
        r["fold"] = fold
        r["ground_s"] = round(ground_s, 1)
    return rows


def summary(rows: list[dict]) -> str:
    folds = sorted({r["fold"] for r in rows})
    keys = []
    for r in rows:
        k = (r["system"], r["fraction"])
        if k not in keys:
            keys.append(k)
    lines = [f"{'system':14s} {'unknown':>7s} " + " ".join(f"fold{k:<2d}" for k in folds)
             + "  AUC-PR  CLL      learn s"]
    for system, fraction in keys:
        mine = [r for r in rows if r["system"] == system and r["fraction"] == fraction]
        if any("refused" in r for r in mine):
            lines.append(f"{system:14s} {fraction:7.2f} refused: {mine[0]['refused']}")
            continue
        cells = " ".join(f"{next((r['auc_pr'] for r in mine if r['fold'] == k), float('nan')):.4f}" for k in folds)
        learn = [r["learn_s"] for r in mine if "learn_s" in r]
        lines.append(f"{system:14s} {fraction:7.2f} {cells}  {np.mean([r['auc_pr'] for r in mine]):.4f}  "
                     f"{np.mean([r['cll'] for r in mine]):.4f}  {np.mean(learn) if learn else 0:7.1f}")
    return "\n".join(lines)


@workload("learn-hidden-uwcse", "UW-CSE fold 1: advisedBy with half its training labels unknown", timeout=3600.0)
def fold1() -> dict:
    rows = run_fold(1, [0.5])
    return {f"{r['system']}@{r['fraction']}_auc_pr": r.get("auc_pr") for r in rows}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folds", default="1")
    parser.add_argument("--fractions", default="0.25,0.5,1.0")
    args = parser.parse_args(argv)
    fractions = [float(x) for x in args.fractions.split(",")]
    rows = []
    for fold in _numbers(args.folds):
        for r in run_fold(fold, fractions):
            rows.append(r)
            print(f"fold{fold} " + " ".join(f"{k}={v}" for k, v in r.items() if not k.startswith("_")), flush=True)
    print(summary(rows))


if __name__ == "__main__":
    main()
