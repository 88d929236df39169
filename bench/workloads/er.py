"""Entity resolution on the five benchmarks of ``../shared/data/er`` and on
Cora: the Markov logic recipe of ``examples/er`` against the baselines of
the data's protocol, per fold, scored by the same code.

    python -m bench.workloads.er [--root DIR] [--datasets A,B] [--folds 1-3] [--systems ...] [--json OUT.json]

Protocol (``../shared/data/er/README.md``): per dataset and test fold N,
train on the other two folds, test on fold N; every threshold, offset or
hyperparameter is chosen on the training folds only (each training fold is
blocked and scored as a test fold would be; learned scores on a training
fold come from a model fit on the other training fold), maximising pooled
pairwise F1. Candidate pairs (all systems): records sharing a word of the
blocking fields with document frequency at most max(30, 1 %) among the
fold's records; clean-clean sets: across sources only.

Systems: ``lr_closure`` (logistic regression on the protocol's pair
features, probability threshold, transitive closure), ``lr_cc`` (the same
log-odds plus an offset, greedy correlation clustering, non-candidate pairs
-5), ``splink`` (Splink 5, unsupervised, where installed), ``mln`` (the
recipe).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from bench import er_data as E
from bench.harness import REPO_ROOT

DEFAULT_ROOT = REPO_ROOT.parent / "shared" / "data" / "er"
THRESHOLDS = np.round(np.arange(0.05, 0.951, 0.05), 2)
OFFSETS = np.arange(-2.0, 4.01, 0.5)


# ---------------------------------------------------------------- folds


class FoldData:
    """Records of one fold: positions, candidate pairs, features, labels."""

    def __init__(self, ds: E.Dataset, fold: int):
        self.fold = fold
        self.members = np.flatnonzero(ds.fold == fold)
        self.n = len(self.members)
        self.i, self.j = E.candidates(ds, self.members)
        self.x = E.baseline_features(ds, self.members, self.i, self.j)
        self.gold = ds.cluster[self.members]
        self.y = (self.gold[self.i] == self.gold[self.j]).astype(np.int64)

    def blocking_recall(self) -> float:
        tp, _, gp = E.pair_counts(self.gold, self.gold)
        return float(self.y.sum()) / gp if gp else 1.0


def _fit_lr(folds: list[FoldData]):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x = np.vstack([f.x for f in folds])
    y = np.concatenate([f.y for f in folds])
    model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))
    model.fit(x, y)
    return model


def _logodds(model, f: FoldData) -> np.ndarray:
    if len(f.i) == 0:
        return np.zeros(0)
    return model.decision_function(f.x)


def _closure_labels(f: FoldData, z: np.ndarray, p: float) -> np.ndarray:
    return E.closure(f.n, f.i, f.j, z >= np.log(p / (1 - p)))


def _cc_labels(f: FoldData, z: np.ndarray, offset: float) -> np.ndarray:
    return E.greedy_cc(f.n, f.i, f.j, z + offset)


def _pooled_f1(parts) -> float:
    tp = pp = gp = 0
    for labels, gold in parts:
        a, b, c = E.pair_counts(labels, gold)
        tp, pp, gp = tp + a, pp + b, gp + c
    return E.prf(tp, pp, gp)[2]


def run_baselines(ds: E.Dataset, test: int, cache: dict) -> list[dict]:
    """lr_closure and lr_cc on one test fold."""
    def fold(k):
        if k not in cache:
            cache[k] = FoldData(ds, k)
        return cache[k]

    train = [k for k in ds.folds() if k != test]
    t0 = time.process_time()
    # scores on each training fold from a model fit on the other training fold(s)
    inner = []
    for k in train:
        others = [fold(o) for o in train if o != k]
        m = _fit_lr(others)
        inner.append((fold(k), _logodds(m, fold(k))))
    best_p = max(THRESHOLDS, key=lambda p: (_pooled_f1([(_closure_labels(f, z, p), f.gold) for f, z in inner]), -p))
    best_o = max(OFFSETS, key=lambda o: (_pooled_f1([(_cc_labels(f, z, o), f.gold) for f, z in inner]), -o))
    model = _fit_lr([fold(k) for k in train])
    tf = fold(test)
    z = _logodds(model, tf)
    choose_s = time.process_time() - t0
    rows = []
    for system, labels, hp in (("lr_closure", _closure_labels(tf, z, best_p), {"threshold": float(best_p)}),
                               ("lr_cc", _cc_labels(tf, z, best_o), {"offset": float(best_o)})):
        r = {"dataset": ds.name, "fold": test, "system": system, **E.scores(labels, tf.gold),
             "hyperparameters": hp, "blocking_recall": tf.blocking_recall(), "cpu_s": choose_s}
        rows.append(r)
    return rows


# ---------------------------------------------------------------- driver


def _folds(text: str) -> list[int]:
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


def summarise(rows: list[dict]) -> dict:
    out: dict = {}
    for r in rows:
        d = out.setdefault(r["dataset"], {}).setdefault(r["system"], {"folds": {}})
        d["folds"][str(r["fold"])] = {k: r[k] for k in ("pairwise_f1", "pairwise_precision", "pairwise_recall",
                                                          "b3_f1", "hyperparameters", "blocking_recall", "cpu_s")
                                      if k in r}
    for ds, systems in out.items():
        for name, d in systems.items():
            fs = list(d["folds"].values())
            for k in ("pairwise_f1", "pairwise_precision", "pairwise_recall", "b3_f1"):
                d[k] = float(np.mean([f[k] for f in fs]))
    return out


def table(summary: dict) -> str:
    lines = ["| dataset | system | pair P | pair R | pair F1 | B3 F1 | F1 per fold |", "|---|---|---|---|---|---|---|"]
    for ds, systems in summary.items():
        for name, d in systems.items():
            per = " ".join(f"{d['folds'][k]['pairwise_f1']:.3f}" for k in sorted(d["folds"]))
            lines.append(f"| {ds} | {name} | {d['pairwise_precision']:.3f} | {d['pairwise_recall']:.3f} | "
                         f"{d['pairwise_f1']:.3f} | {d['b3_f1']:.3f} | {per} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.workloads.er", description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(DEFAULT_ROOT))
    ap.add_argument("--datasets", default=None)
    ap.add_argument("--folds", default="1-3")
    ap.add_argument("--systems", default="lr_closure,lr_cc")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    root = Path(args.root)
    names = args.datasets.split(",") if args.datasets else sorted(p.name for p in root.iterdir()
                                                                  if (p / "records.csv").exists())
    rows = []
    for name in names:
        ds = E.load(root / name, name)
        cache: dict = {}
        for k in _folds(args.folds):
            t = time.perf_counter()
            for r in run_baselines(ds, k, cache):
                rows.append(r)
                print(f"{name} fold {k} {r['system']:10s} P {r['pairwise_precision']:.3f} R {r['pairwise_recall']:.3f} "
                      f"F1 {r['pairwise_f1']:.3f} B3 {r['b3_f1']:.3f} {r['hyperparameters']} "
                      f"({time.perf_counter() - t:.1f} s)", flush=True)
    summary = summarise(rows)
    print(table(summary))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
