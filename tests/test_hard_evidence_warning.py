"""Evidence that falsifies a grounding of a hard formula is said, not dropped silently."""

from __future__ import annotations

import pytest

from markovlogic import MLN, Database

MODEL = """Same(t, t)
P(t)
Same(x, x).
1 P(x) ^ P(y) => Same(x, y)
"""


def test_evidence_against_a_hard_formula_warns_and_is_counted():
    mln = MLN.from_string(MODEL)
    db = Database.from_string("P(A)\nP(B)\n!Same(A,A)\n", mln=mln)
    with pytest.warns(UserWarning, match=r"falsifies 1 grounding\(s\) of hard formula\(s\) .*Same\(x,x\)"):
        answer = mln.map(db, queries="Same")
    assert answer.network.stats["hard_violated_by_evidence"] == 1


def test_consistent_evidence_does_not_warn(recwarn):
    mln = MLN.from_string(MODEL)
    db = Database.from_string("P(A)\nP(B)\nSame(A,A)\n", mln=mln)
    mln.map(db, queries="Same")
    assert not [w for w in recwarn if "falsifies" in str(w.message)]
