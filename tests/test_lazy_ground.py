"""Lazy grounding (``ground/activation.py``) against the full grounding.

Activating every atom, batch after batch in any order, must fetch every ground
clause of the full network exactly once (merged and folded the same way);
after any batch, the clauses held must be those the definition of ``M(A)``
selects; the flip gains of the atoms outside ``A`` must be those computed
from the full network."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_ground_reference import problems  # noqa: E402

from markovlogic.errors import MarkovLogicError, MLNSemanticError  # noqa: E402
from markovlogic.ground import Grounder  # noqa: E402
from markovlogic.ground.activation import Activation, concat, remerge  # noqa: E402
from markovlogic.lang.parser import parse_queries  # noqa: E402
from markovlogic.logic.cnf import compile_mln  # noqa: E402
from markovlogic.model import MLN, Database  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def clause_map(net) -> dict:
    names = net.atom_names()
    out = {}
    for c in range(net.n_clauses):
        s, e = net.clause_start[c], net.clause_start[c + 1]
        key = frozenset((names[a], bool(p)) for a, p in zip(net.lit_atom[s:e], net.lit_positive[s:e]))
        assert key not in out, f"clause {sorted(key)} twice"
        if not net.is_hard[c] and abs(net.weight[c]) < 1e-12:
            continue                     # a weight-0 clause changes nothing (lazy grounding leaves it out)
        out[key] = (round(float(net.weight[c]), 9), bool(net.is_hard[c]))
    return out


def folded_clause_map(net) -> dict:
    """:func:`clause_map` with soft unit clauses folded to their positive literal
    (``!P`` of weight w is ``P`` of weight -w, up to a constant; the full
    grounding folds them, lazy assembly may not) and summed."""
    out: dict = {}
    units: dict = {}
    for key, (w, hard) in clause_map(net).items():
        if len(key) == 1 and not hard:
            (name, positive), = key
            units[name] = units.get(name, 0.0) + (w if positive else -w)
        else:
            out[key] = (w, hard)
    for name, w in units.items():
        if abs(w) > 1e-9:
            out[frozenset({(name, True)})] = (round(w, 9), False)
    return out


def _grounder(problem):
    mln, db, queries, closed, opened, mode = problem
    assume(mode == "evidence")
    try:
        templates = compile_mln(mln)
    except MLNSemanticError:
        assume(False)
    assume(all(t.hard or t.weight is not None for t in templates))
    return Grounder(mln, db, queries, closed=closed, open_=opened, templates=templates)


def _full(g: Grounder):
    try:
        return g.network(closure=False)
    except MarkovLogicError as exc:
        assume("existential expands into" not in str(exc))
        raise


def _unit_sign_free(key: frozenset, hard: bool) -> frozenset:
    """A soft unit clause without its sign: ``!P`` with weight w is ``P``
    with -w up to a constant, and the full grounding folds units that way
    (``fold_units``) where the lazy one need not."""
    if len(key) == 1 and not hard:
        return frozenset({(next(iter(key))[0], True)})
    return key


def _held_by_definition(full, active: np.ndarray, seen: np.ndarray) -> set:
    """Clauses of the full network that M(A) + U(seen atoms) holds (no
    opposite-sign duplicates in these models, so row signs = clause signs)."""
    names = full.atom_names()
    out = set()
    for c in range(full.n_clauses):
        s, e = full.clause_start[c], full.clause_start[c + 1]
        atoms, pos = full.lit_atom[s:e], full.lit_positive[s:e]
        if not full.is_hard[c] and abs(full.weight[c]) < 1e-12:
            continue
        key = frozenset((names[a], bool(p)) for a, p in zip(atoms, pos))
        if e - s == 1:
            if seen[atoms[0]]:
                out.add(_unit_sign_free(key, bool(full.is_hard[c])))
            continue
        if full.is_hard[c] or full.weight[c] > 0:
            if active[atoms[~pos]].all():
                out.add(key)
        elif full.weight[c] < 0:
            if (~pos).any() or active[atoms].any():
                out.add(key)
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(problems(), st.integers(0, 2**31 - 1), st.integers(1, 4))
def test_activating_everything_fetches_the_full_network(problem, seed, n_batches):
    g = _grounder(problem)
    try:
        full = _full(g)
        act = Activation(g)
        parts = [act.initial()]
        rng = np.random.default_rng(seed)
        ids = rng.permutation(g.registry.n_atoms)
        for chunk in np.array_split(ids, n_batches):
            parts.append(act.activate(chunk))
        act._grow()
        rest = np.flatnonzero(~act.active)
        if len(rest):
            parts.append(act.activate(rest))
        got = folded_clause_map(g.assemble(remerge(parts, g.params.arrays()[0])))
        want = folded_clause_map(g.network(closure=False))
        assert set(got) == set(want)
        for k, v in want.items():
            assert got[k] == pytest.approx(v), sorted(k)
        del full
    finally:
        g.close()


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(problems(), st.integers(0, 2**31 - 1))
def test_held_clauses_and_flip_gains_follow_the_definition(problem, seed):
    g = _grounder(problem)
    from markovlogic.lang.printer import format_evidence_atom, print_mln

    note(print_mln(problem[0]) + "\n" + "\n".join(format_evidence_atom(a) for a in problem[1].atoms)
         + f"\nqueries {problem[2]} closed {problem[3]} open {problem[4]}")
    try:
        assume(not any(t.exists for t in g.templates))
        full = _full(g)
        n = g.registry.n_atoms
        rng = np.random.default_rng(seed)
        act = Activation(g)
        parts = [act.initial()]
        active = rng.random(n) < 0.4
        parts.append(act.activate(np.flatnonzero(active)))
        act._grow()
        # clauses of opposite-sign templates with the same literals are merged by
        # the full grounding only: leave such models out
        signs: dict = {}
        for ti, t in enumerate(g.templates):
            part = g.network(template_ids=[ti], closure=False, fold_units=False)
            sign = "hard" if t.hard else None
            for key, (w, h) in clause_map(part).items():
                signs.setdefault(key, set()).add(sign or ("+" if w > 0 else "-"))
        assume(all(len(v) == 1 for v in signs.values()))
        got = {_unit_sign_free(k, h) for k, (_, h) in clause_map(g.assemble(concat(parts))).items()}
        want = _held_by_definition(full, act.active[:full.n_atoms], act.seen[:full.n_atoms])
        assert got == want
        # flip gains in a world whose true atoms are active
        world = active & (rng.random(n) < 0.5)
        atoms, soft, fixed, broken, rescuable = act.flip_gains(np.flatnonzero(world))
        gains = {int(a): (s, f > 0, b > 0, b > 0 and r >= b)
                 for a, s, f, b, r in zip(atoms, soft, fixed, broken, rescuable)}
        x = np.zeros(full.n_atoms, bool)
        x[: len(world)] = world[: full.n_atoms]
        for b in range(full.n_atoms):
            if act.active[b]:
                continue
            s_want = 0.0
            f_want = b_want = False
            r_want = True          # every broken hard clause has another unknown atom
            for c in full.atom_clause[full.atom_clause_start[b]:full.atom_clause_start[b + 1]]:
                lits = full.clause_literals(int(c))
                sign = next(p for a, p in lits if a == b)
                others = sum(1 for a, p in lits if a != b and x[a] == p)
                if others:
                    continue
                d = 1.0 if sign else -1.0        # flipping b to true: a positive literal becomes true
                if full.is_hard[c]:
                    f_want |= sign
                    b_want |= not sign
                    if not sign:
                        r_want &= any(a != b for a, p in lits)
                else:
                    s_want += d * full.weight[c]
            s_got, f_got, b_got, r_got = gains.get(b, (0.0, False, False, False))
            assert s_got == pytest.approx(s_want, abs=1e-9), full.atom_name(b)
            assert (f_got, b_got) == (f_want, b_want), full.atom_name(b)
            assert r_got == (b_want and r_want), full.atom_name(b)
        # the same summed in SQL and kept only where lazy MC-SAT's check can pass (or asked for)
        if act.summable:
            above = float(rng.normal(0.0, 1.5))
            registered = np.flatnonzero(~act.active & (rng.random(len(act.active)) < 0.3))
            h = act.held_gains(np.flatnonzero(world), above, registered)
            act._grow()
            kept = {int(a): (s, f > 0, b > 0, b > 0 and r >= b) for a, s, f, b, r in zip(*h)}
            assert len(kept) == len(h[0])
            pred, _ = g.registry.arrays()
            query_preds = set(pred[g.query_atoms].tolist())
            for a, (s, f, b, r) in gains.items():
                passes = (not b or r) and (f or s > above)
                if passes or a in set(registered.tolist()) or int(pred[a]) in query_preds:
                    assert a in kept, full.atom_name(a)
                    assert kept[a][0] == pytest.approx(s, abs=1e-9) and kept[a][1:] == (f, b, r)
            assert set(kept) <= set(gains)
    finally:
        g.close()


@pytest.mark.parametrize("name,queries", [("cse", "advisedBy"), ("class", "category")])
def test_tuffy_full_network_by_batches(name, queries):
    d = DATA / "tuffy" / name
    if not d.exists():
        pytest.skip("tuffy data not available")
    mln = MLN.from_file(str(d / "prog.mln"))
    db = Database.from_file(str(d / "evidence.db"), mln=mln)
    g = Grounder(mln, db, parse_queries(queries, mln))
    try:
        want = clause_map(g.network(closure=False))
        act = Activation(g)
        parts = [act.initial()]
        ids = np.random.default_rng(0).permutation(g.registry.n_atoms)
        for chunk in np.array_split(ids, 3):
            parts.append(act.activate(chunk))
        got = clause_map(g.assemble(concat(parts)))
        assert set(got) == set(want)
        assert all(got[k] == pytest.approx(v) for k, v in want.items())
    finally:
        g.close()
