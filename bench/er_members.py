"""Every linkage member of the recipe, per test fold: its held-out F1 (the
learner's choice among members) and its test F1, for judging a linkage
selection rule on development data (never on a reported dataset).

    python -m bench.er_members --root DIR --datasets authors_synth --folds 1-5 --json OUT.json

Per fold: the recipe as ``bench.workloads.er`` runs it (its F1 is the
recipe's), then every other member of the linkage grid retrained with the
update rule and setting the recipe chose, its set-level features chosen as
the learner chooses them, and clustered on the test fold.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench import er_data as E
from bench.workloads import er as W


def _score(ds, test, learned, texts):
    from markovlogic import Database

    test_db = Database.from_string(texts[test], mln=learned.mln)
    answer = learned.mln.map(test_db, queries="Same", method="agglomerative")
    members, _, labels = W.fold_labels(ds, test, answer.parts[0])
    return E.scores(labels, ds.cluster[members])


def run_fold(ds, test, log=print) -> dict:
    from markovlogic.learn.merge_rank import MergeRankOptions, learn_merge_rank_model

    mln, dbs, texts = W.recipe_inputs(ds, test)
    base = MergeRankOptions()
    t = time.perf_counter()
    learned = learn_merge_rank_model(mln, dbs, query_predicates=["Same"], multiple_databases=True, options=base)
    st = learned.result.stats
    held = {r["linkage"]: r["held_out_f1"] for r in learned.result.selection
            if "linkage" in r and "set_features" not in r}
    chosen = st["linkage"]
    out = {"fold": test, "chosen": chosen, "update": st["update"], "epochs": st["epochs"], "C": st["C"],
           "l2": st["l2"], "members": {}}
    sc = _score(ds, test, learned, texts)
    out["members"][chosen] = {"held_out_f1": held.get(chosen), "set_features": st["set_features"], **sc}
    log(f"{ds.name} fold {test}: chosen {chosen} F1 {sc['pairwise_f1']:.4f} held-out "
        + ", ".join(f"{k} {v:.4f}" for k, v in held.items()) + f" ({time.perf_counter() - t:.0f} s)")
    fixed = dict(update=st["update"], epochs=st["epochs"])
    if st["C"] is not None:
        fixed["C"] = st["C"]
    if st["l2"] is not None:
        fixed["l2"] = st["l2"]
    for v in base.linkage:
        if v == chosen:
            continue
        opt = replace(base, linkage=(v,), **fixed)
        lv = learn_merge_rank_model(mln, dbs, query_predicates=["Same"], multiple_databases=True, options=opt)
        sv = _score(ds, test, lv, texts)
        out["members"][v] = {"held_out_f1": held.get(v), "set_features": lv.result.stats["set_features"], **sv}
        log(f"  member {v}: F1 {sv['pairwise_f1']:.4f} (set features {lv.result.stats['set_features']}) "
            f"({time.perf_counter() - t:.0f} s)")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m bench.er_members", description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True, help="a folder of datasets in ../shared/data/er's layout")
    ap.add_argument("--datasets", required=True, help="comma-separated dataset folders under --root")
    ap.add_argument("--folds", default="1-5", help="test folds, e.g. 1-5 or 1,3")
    ap.add_argument("--json", required=True, help="where the member table is written (a new or an output file)")
    args = ap.parse_args(argv)
    root = Path(args.root)
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    if not names:
        ap.error("--datasets: no dataset named")
    inputs = set()
    for name in names:
        for f in ("records.csv", "gold.csv", "folds.csv", "schema.mln"):
            if not (root / name / f).is_file():
                ap.error(f"--root/--datasets: {root / name / f} not found (a dataset folder holds records.csv, "
                         "gold.csv, folds.csv and schema.mln)")
            inputs.add((root / name / f).resolve())
    try:
        folds = E.parse_folds(args.folds)
    except ValueError:
        folds = []
    if not folds:
        ap.error(f"--folds {args.folds!r}: give test folds as 1-5, 1,3 or both mixed")
    out = Path(args.json)
    if not out.parent.is_dir():
        ap.error(f"--json: folder {out.parent} does not exist")
    if out.resolve() in inputs:
        ap.error(f"--json {out}: that is an input file of the datasets; give a new path")
    data = {name: E.load(root / name, name) for name in names}
    for name, ds in data.items():
        missing = [k for k in folds if k not in ds.folds()]
        if missing:
            ap.error(f"--folds: {name} has no fold {missing[0]} (its folds: {', '.join(map(str, ds.folds()))})")
    rows = {}
    for name, ds in data.items():
        rows[name] = [run_fold(ds, k) for k in folds]
        out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
