"""Issue 16, item 6: a MAP answer stopped early says how many hard ground
clauses its world violates (counted on the full model, not only on the part
cutting-plane inference instantiated)."""

from __future__ import annotations

import itertools

import numpy as np

from markovlogic import MLN, Database

MODEL = """
Word(bib, word)
Same(bib, bib)
2 Word(x, w) ^ Word(y, w) => Same(x, y)
0.5 !Same(x, y)
Same(x, x).
Same(x, y) => Same(y, x).
Same(x, y) ^ Same(y, z) => Same(x, z).
"""

EVIDENCE = "\n".join(["Word(A, W1)", "Word(B, W1)", "Word(B, W2)", "Word(C, W2)", "Word(C, W3)", "Word(D, W3)"])


def _violations(atoms: set[str], names: list[str]) -> int:
    same = {tuple(a[5:-1].split(",")) for a in atoms}
    n = 0
    for x in names:
        n += (x, x) not in same
    for x, y in itertools.product(names, names):
        n += (x, y) in same and (y, x) not in same
    for x, y, z in itertools.product(names, names, names):
        n += (x, y) in same and (y, z) in same and (x, z) not in same
    return n


def test_cpi_stopped_early_counts_the_hard_groundings_its_world_breaks():
    mln = MLN.from_string(MODEL)
    db = Database.from_string(EVIDENCE, mln=mln)
    answer = mln.map(db, "Same", method="cpi", max_iterations=1)
    assert not answer.optimal
    broken = _violations(answer.atoms, ["A", "B", "C", "D"])
    assert broken > 0
    assert answer.hard_violated == broken
    full = mln.map(db, "Same", method="cpi")
    assert full.optimal and full.hard_violated == 0 and _violations(full.atoms, ["A", "B", "C", "D"]) == 0
