"""MAP-based learning with hard formulas separated by cutting planes
(learn/lazy.py): every MAP world is a MAP world of the fully ground network."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic import MLN, Database
from markovlogic.infer.map import solve_map
from markovlogic.learn.api import ground_training, learn_model
from markovlogic.learn.lazy import CuttingPlaneMAP, ground_training_lazy

MODEL = """
Sim(item, item)
Same(item, item)
1.0  Sim(x, y) => Same(x, y)
0.5  !Same(x, y)
Same(x, x).
Same(x, y) => Same(y, x).
Same(x, y) ^ Same(y, z) => Same(x, z).
"""

# clusters {A, B, C}, {D, E}; similarity links within and one across
ITEMS = "ABCDE"
CLUSTERS = [set("ABC"), set("DE")]
SIM = [("A", "B"), ("B", "C"), ("D", "E"), ("C", "D")]


def _training_db(mln: MLN, transitive: bool = True) -> Database:
    lines = [f"Sim({a},{b})" for a, b in SIM] + [f"Sim({b},{a})" for a, b in SIM]
    for cluster in CLUSTERS:
        for a in cluster:
            for b in cluster:
                lines.append(f"Same({a},{b})")
    if not transitive:
        lines.remove("Same(A,C)")
        lines.remove("Same(C,A)")
    return Database.from_string("\n".join(lines) + "\n", filename="train.db", mln=mln)


@pytest.fixture(scope="module")
def mln() -> MLN:
    return MLN.from_string(MODEL, filename="same.mln")


def test_cutting_plane_map_equals_the_full_ground_ilp(mln):
    db = _training_db(mln)
    full = ground_training(mln, [db], ["Same"], False)[0]
    nets, lazies = ground_training_lazy(mln, [db], ["Same"], False)
    try:
        net = nets[0]
        assert not net.is_hard.any()                # hard formulas are not ground
        engine = CuttingPlaneMAP(net, lazies[0])
        rng = np.random.default_rng(3)
        for _ in range(8):
            w = rng.normal(0.0, 2.0, size=len(net.params))
            world = engine.map_world(w)
            # the same world scored on the full network: feasible and optimal
            names = {net.atom_name(a) for a in np.flatnonzero(world)}
            full_world = np.array([full.atom_name(a) in names for a in range(full.n_atoms)], dtype=bool)
            reweighted = full.with_params(_aligned(w, net, full))
            best = solve_map(reweighted, method="ilp")
            assert best.optimal
            assert reweighted.hard_violated(full_world) == 0
            assert reweighted.cost(full_world) == pytest.approx(best.cost, abs=1e-6)
        assert engine.calls == 8 and lazies[0].hard_parts    # transitivity groundings were separated
    finally:
        for lazy in lazies:
            lazy.close()


def _aligned(w: np.ndarray, net, full) -> np.ndarray:
    index = {(p.name, p.formula_index, p.clause_index): k for k, p in enumerate(net.param_info)}
    return np.array([w[index[(p.name, p.formula_index, p.clause_index)]] for p in full.param_info])


def test_mira_with_cutting_planes_learns_the_clusters(mln):
    db = _training_db(mln)
    model = learn_model(mln, [db], query_predicates=["Same"], method="mira", iterations=10, init="model")
    assert model.result.stats["truth_hard_violated"] == 0
    assert model.result.stats["hard_groundings"] > 0
    evidence = Database.from_string("\n".join(f"Sim({a},{b})" for a, b in SIM) + "\n", filename="e.db", mln=mln)
    answer = model.mln.map(evidence, queries=["Same"], method="cpi")
    same = {str(a).replace(" ", "") for a in answer.atoms}
    truth = {f"Same({a},{b})" for c in CLUSTERS for a in c for b in c}
    # the similarity link C-D across the clusters is outweighed, transitivity holds
    assert same == truth


def test_mira_default_is_cutting_planes_and_training_truth_may_break_hard_formulas(mln):
    db = _training_db(mln, transitive=False)
    model = learn_model(mln, [db], query_predicates=["Same"], method="mira", iterations=3, init="model")
    assert model.result.stats["truth_hard_violated"] > 0      # reported, not an error


def test_cpi_map_method_refuses_prebuilt_networks(mln):
    from markovlogic.errors import OptionError

    db = _training_db(mln)
    nets = ground_training(mln, [db], ["Same"], False)
    with pytest.raises(OptionError, match="cpi"):
        learn_model(mln, [db], query_predicates=["Same"], method="mira", networks=nets)
