"""The exact oracle of bench/workloads/mcsat_ext.py (forward-backward over
chains of positions) against enumeration, and its refusal of other shapes."""

from __future__ import annotations

import numpy as np
import pytest

from bench.workloads.mcsat_ext import chain_exact_marginals
from markovlogic import MLN, Database
from markovlogic.api import ground_model
from markovlogic.ground.network import GroundNetwork
from markovlogic.infer.exact import exact_marginals

MODEL = """
field = {A, B, C}
pos = {P0, P1, P2, P3}
InF(pos, field)
Next(pos, pos)
Sig(pos)
!InF(i, A) v !InF(i, B).
!InF(i, A) v !InF(i, C).
!InF(i, B) v !InF(i, C).
0.8 InF(i, A)
-0.4 InF(i, C)
1.2 Sig(i) => InF(i, B)
0.7 InF(i, A) v InF(i, C)
2.5 Next(j, i) ^ InF(i, +f) => InF(j, +f)
-1.5 Next(j, i) ^ InF(j, +f) ^ InF(i, B)
"""


@pytest.mark.parametrize("evidence", ["Next(P1, P0)\nNext(P2, P1)\nNext(P3, P2)\nSig(P1)\n",
                                      "Next(P1, P0)\nNext(P3, P2)\nSig(P2)\nInF(P0, B)\n!InF(P3, C)\n"])
def test_chain_oracle_matches_enumeration(evidence):
    mln = MLN.from_string(MODEL)
    net = ground_model(mln, Database.from_string(evidence, mln=mln), "InF")
    names = [net.atom_name(i) for i in range(net.n_atoms)]
    pos = np.array([int(n.split("(")[1].split(",")[0][1:]) for n in names])
    bit = np.array(["ABC".index(n.split(",")[1][0]) for n in names])
    p = chain_exact_marginals(net, np.zeros(net.n_atoms, int), pos, bit, 3)
    assert np.abs(p - exact_marginals(net).probabilities).max() < 1e-9


def test_chain_oracle_refuses_long_range_clauses():
    net = GroundNetwork.from_clauses(3, [(1.0, [(0, True), (2, True)])])
    with pytest.raises(ValueError, match="consecutive"):
        chain_exact_marginals(net, np.zeros(3, int), np.array([0, 1, 2]), np.zeros(3, int), 1)
