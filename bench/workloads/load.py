"""Workload ``load``: reading the largest model and evidence files.

Parses (and checks evidence against its model) tuffy/class, tuffy/cse,
cora fold 1 and citeseer fold 1 training data, each timed on its own; the
run's wall time is their sum plus the one-time grammar compilation.
"""

from __future__ import annotations

import time

from bench.harness import Skip, data_dir, workload

FILES = [
    # (figure prefix, model files, evidence files)
    ("class", ["tuffy/class/prog.mln"], ["tuffy/class/evidence.db"]),
    ("cse", ["tuffy/cse/prog.mln"], ["tuffy/cse/evidence.db"]),
    ("cora_fold1", ["cora/schema.mln"], ["cora/fold1/train.db"]),
    ("citeseer_fold1", ["citeseer/schema.mln"], ["citeseer/fold1/train.db"]),
]


@workload("load", "parse + check the largest .mln/.db files", peers="load")
def load() -> dict:
    from markovlogic import MLN, Database

    root = data_dir()
    if not root.is_dir():
        raise Skip(f"data folder not found: {root}")
    figures: dict = {}
    total_atoms = 0
    total_bytes = 0
    for name, mlns, dbs in FILES:
        mln_paths = [root / p for p in mlns]
        db_paths = [root / p for p in dbs]
        for p in mln_paths + db_paths:
            if not p.is_file():
                raise Skip(f"missing {p}")
        start = time.perf_counter()
        mln = MLN.from_file(mln_paths)
        db = Database.from_file(db_paths, mln=mln)
        figures[f"{name}_s"] = round(time.perf_counter() - start, 4)
        total_atoms += len(db.atoms)
        total_bytes += sum(p.stat().st_size for p in db_paths)
        figures[f"{name}_atoms"] = len(db.atoms)
    figures["atoms"] = total_atoms
    figures["MB"] = round(total_bytes / 1e6, 2)
    return figures
