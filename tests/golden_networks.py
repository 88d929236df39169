"""Digests of ground networks, to check that a change of the grounder's
internals leaves every array identical (``test_ground_golden.py``).

``python tests/golden_networks.py`` prints the digests of the current code
(run it with another ``src`` first on ``PYTHONPATH`` to record a version);
``golden_networks.json`` holds those of main at 367087e, before grounding
streamed.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
ROOT = Path(__file__).resolve().parents[1]

ARRAYS = ("clause_start", "lit_atom", "lit_positive", "weight", "is_hard", "template_id", "param_start",
          "param_index", "param_coef", "params", "block_start", "block_atoms", "atom_pred", "atom_args",
          "is_query", "atom_clause_start", "atom_clause", "component")


def digest(net) -> dict[str, str]:
    out = {}
    for name in ARRAYS:
        a = np.ascontiguousarray(getattr(net, name))
        # offsets may be int32 or int64 by size: compare values, not widths
        if a.dtype.kind in "iu":
            a = a.astype(np.int64)
        out[name] = hashlib.sha256(a.tobytes()).hexdigest()[:16]
    out["n"] = f"{net.n_atoms}/{net.n_clauses}/{net.constant_score:.9g}"
    return out


def workloads() -> dict:
    """name -> (model text or path, evidence paths or text, queries, options)."""
    sys.path.insert(0, str(ROOT))
    from bench import synthetic

    t = DATA / "tuffy"
    out = {}
    for name in ("smoke", "cse", "rc1000", "class"):
        out[f"tuffy-{name}"] = (t / name / "prog.mln", [t / name / "evidence.db"], (t / name / "query.db"), {})
    out["alchemy-example"] = (DATA / "alchemy" / "example-model.mln", [DATA / "alchemy" / "example-evidence.db"],
                              "Smokes,Cancer,Friends", {})
    out["tuffy-cse-blocks-as-clauses"] = (t / "cse" / "prog.mln", [t / "cse" / "evidence.db"], (t / "cse" / "query.db"),
                                          {"blocks_as_clauses": True})
    for kind, n in (("social", 3000), ("classlike", 3000)):
        mln, db, q = synthetic.GENERATORS[kind](n, 0)
        out[f"{kind}-{n}"] = (mln, db, q, {})
    return out


def ground_one(spec):
    from markovlogic import MLN, Database
    from markovlogic.ground import ground
    from markovlogic.lang.parser import parse_queries

    model, evidence, queries, options = spec
    mln = MLN.from_file(model) if isinstance(model, Path) else MLN.from_string(model)
    db = Database.from_file(evidence, mln=mln) if isinstance(evidence, list) else Database.from_string(evidence, mln=mln)
    qtext = queries.read_text() if isinstance(queries, Path) else queries
    return ground(mln, [db], parse_queries(qtext, mln), **options)


if __name__ == "__main__":
    import json

    result = {name: digest(ground_one(spec)) for name, spec in workloads().items()}
    print(json.dumps(result, indent=1))
