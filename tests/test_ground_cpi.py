"""Cutting-plane separation (``Grounder.violated_groundings``) against brute force:
ground a template fully, evaluate every ground clause in the world."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_ground_reference import problems  # noqa: E402

from markovlogic.errors import MLNSemanticError  # noqa: E402
from markovlogic.ground import Grounder  # noqa: E402
from markovlogic.lang.parser import parse_queries  # noqa: E402
from markovlogic.logic.cnf import compile_mln  # noqa: E402
from markovlogic.model import MLN, Database  # noqa: E402


def _clause_set(names, clause_start, lit_atom, lit_positive, weight=None, hard=None):
    out = {}
    for c in range(len(clause_start) - 1):
        s, e = clause_start[c], clause_start[c + 1]
        key = frozenset((names[a], bool(p)) for a, p in zip(lit_atom[s:e], lit_positive[s:e]))
        out[key] = (None if weight is None else round(float(weight[c]), 9), None if hard is None else bool(hard[c]))
    return out


def _brute(g: Grounder, t: int, world: np.ndarray):
    net = g.network(template_ids=[t], closure=False, fold_units=False)
    assert net.n_atoms == g.registry.n_atoms       # registry ids are the network ids
    sat = net.satisfied(world[: net.n_atoms])
    want = (net.is_hard & ~sat) | (~net.is_hard & (((net.weight > 0) & ~sat) | ((net.weight < 0) & sat)))
    sel = np.flatnonzero(want)
    names = net.atom_names()
    full = _clause_set(names, net.clause_start, net.lit_atom, net.lit_positive, net.weight, net.is_hard)
    keys = _clause_set(names, net.clause_start, net.lit_atom, net.lit_positive)
    keys = list(keys)
    return {keys[c]: full[keys[c]] for c in sel}, names


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(problems(), st.integers(0, 2**31 - 1))
def test_violated_groundings_match_brute_force(problem, seed):
    mln, db, queries, closed, opened, mode = problem
    try:
        templates = compile_mln(mln)
    except MLNSemanticError:
        assume(False)
    g = Grounder(mln, db, queries, closed=closed, open_=opened, allow_unweighted=True, templates=templates,
                 query_truth=mode != "evidence")
    try:
        g.network(closure=False)                   # registers every atom
        rng = np.random.default_rng(seed)
        world = rng.random(g.registry.n_atoms) < 0.5
        for t in range(len(g.templates)):
            gc = g.violated_groundings(world, [t])
            want, names = _brute(g, t, world)
            names = [g_name for g_name in names]
            got = _clause_set(names, gc.clause_start, gc.lit_atom, gc.lit_positive)
            assert set(got) == set(want), f"template {t}"
            # weights: the same merged weight as in the full grounding
            net = g.assemble(gc)
            w = _clause_set(net.atom_names(), net.clause_start, net.lit_atom, net.lit_positive, net.weight, net.is_hard)
            for k, v in w.items():
                assert v == want[k]
    finally:
        g.close()


def test_separation_rounds_on_transitivity():
    """Rounds of separation on a hard transitivity clause reach a world that
    violates nothing, over one atom-id space; new_only never repeats a clause."""
    mln = MLN.from_string(
        "t = {A, B, C, D, E, F}\nSame(t, t)\nSim(t, t)\n"
        "Same(x, y) ^ Same(y, z) => Same(x, z).\n1.5 Sim(x, y) => Same(x, y)\n-0.5 Same(x, y)\n",
        "m.mln",
    )
    db = Database.from_string("Sim(A, B)\nSim(B, C)\nSim(D, E)\n", "e.db", mln=mln)
    g = Grounder(mln, db, parse_queries("Same", mln))
    n0 = g.registry.n_atoms
    assert n0 == 36
    world = np.zeros(n0, dtype=bool)
    seen = set()
    for _ in range(10):
        gc = g.violated_groundings(world, new_only=True)
        if gc.n_clauses == 0:
            break
        keys = {tuple(sorted(zip(gc.lit_atom[s:e].tolist(), gc.lit_positive[s:e].tolist())))
                for s, e in zip(gc.clause_start[:-1], gc.clause_start[1:])}
        assert not keys & seen
        seen |= keys
        net = g.assemble(gc)
        # a greedy fix: make every violated positive-weight/hard clause true via its first positive literal
        for c in range(net.n_clauses):
            lits = net.clause_literals(c)
            if net.is_hard[c] or net.weight[c] > 0:
                pos = [a for a, p in lits if p]
                if pos and not any(world[a] == p for a, p in lits):
                    world[pos[0]] = True
    assert g.registry.n_atoms == n0
    g.close()
