"""The ground network is the same on every run (DuckDB's row order is not),
so a seeded algorithm over it repeats exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from markovlogic import MLN, Database
from markovlogic.api import ground_model

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "tuffy" / "class"


@pytest.mark.skipif(not DATA.is_dir(), reason=f"data folder not found: {DATA}")
def test_grounding_class_twice_gives_identical_arrays():
    mln = MLN.from_file(DATA / "prog.mln")
    db = Database.from_file(DATA / "evidence.db", mln=mln)
    queries = (DATA / "query.db").read_text().split()
    a = ground_model(mln, db, queries)
    b = ground_model(mln, db, queries)
    for name in ("clause_start", "lit_atom", "lit_positive", "weight", "is_hard", "template_id",
                 "param_start", "param_index", "param_coef", "atom_args", "component"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
