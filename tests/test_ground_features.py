"""Grounding features one by one: functions, '+' weights, merging, blocks,
existentials, labels, the constant term, closure and the clause budget."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reference_grounder import ReferenceGrounder, assert_same, network_as_reference  # noqa: E402

from markovlogic.errors import MarkovLogicError  # noqa: E402
from markovlogic.ground import Grounder, ground  # noqa: E402
from markovlogic.infer.exact import exact_marginals  # noqa: E402
from markovlogic.lang.parser import parse_queries  # noqa: E402
from markovlogic.logic.cnf import compile_mln  # noqa: E402
from markovlogic.model import MLN, Database  # noqa: E402


def _both(model: str, evidence: str, queries: str | None, **options):
    mln = MLN.from_string(model, "m.mln")
    db = Database.from_string(evidence, "e.db", mln=mln)
    q = parse_queries(queries, mln) if queries else None
    net = ground(mln, db, q, **options)
    ref_opts = {k: v for k, v in options.items() if k in ("closed", "open_", "query_truth", "truth_closed_world")}
    ref = ReferenceGrounder(mln, [db], q, compile_mln(mln), **ref_opts).ground(
        blocks_as_clauses=options.get("blocks_as_clauses", False))
    assert_same(network_as_reference(net), ref)
    return net, mln, db


def test_user_functions_and_arithmetic():
    model = """
    person = {Anna, Bob, Chris, Dora}
    num = {1, 2, 3, 4}
    person motherOf(person)
    Happy(person)
    Age(person, num)
    Next(num, num)
    1.0 Happy(x) => Happy(motherOf(x))
    0.5 Age(x, n) => Age(x, n + 1)
    0.7 Next(i, j) v i >= j
    -0.3 Next(i, succ(i))
    0.2 Next(i, (i * 2) % 3 + 1)
    """
    evidence = "Anna = motherOf(Bob)\nBob = motherOf(Chris)\nHappy(Anna)\nAge(Anna, 2)\n"
    net, _, _ = _both(model, evidence, "Happy,Age,Next")
    names = {net.atom_name(a) for c in range(net.n_clauses) for a, _ in net.clause_literals(c)}
    assert "Happy(Chris)" in names
    # Happy(Dora) has no mother: its grounding of the first formula does not exist
    assert not any(
        {net.atom_name(a) for a, _ in net.clause_literals(c)} == {"Happy(Dora)"} for c in range(net.n_clauses)
    )


def test_concat_and_strings():
    model = """
    Word(w)
    Joined(w)
    1.0 Word(a) ^ Word(b) => Joined(concat(a, b))
    """
    evidence = 'Word("ab")\nWord("c")\n!Joined("abc")\nJoined("x")\n'
    _both(model, evidence, "Joined", open_=["Joined"])


def test_string_comparisons_substr_and_zero_arity():
    model = """
    Name(n)
    Match(n, n)
    1.0 Name(a) ^ Name(b) ^ substr(a, b) => Match(a, b)
    0.5 Name(a) ^ Name(b) ^ a < b => Match(a, b)
    """
    _both(model, 'Name("ab")\nName("abc")\nName("b")\nName(C)\n', "Match")
    net, _, _ = _both("Rain()\nWet()\n1 Rain() => Wet()\n", "Rain()\n", "Wet")
    assert net.atom_names() == ["Wet()"] and net.n_clauses == 1


def test_plus_weights_one_parameter_per_constant():
    model = """
    Has(person, position)
    Prof(person)
    1.5 Has(x, +p) => Prof(x)
    @2 Prof(x)
    """
    evidence = "Has(A, Faculty)\nHas(B, Staff)\nHas(C, Faculty)\n"
    net, _, _ = _both(model, evidence, "Prof", open_=["Has"])
    names = [p.name for p in net.param_info]
    assert any("Faculty" in n for n in names) and any("Staff" in n for n in names)
    assert "+" not in " ".join(names)
    fixed = [p for p in net.param_info if p.fixed]
    assert len(fixed) == 1 and fixed[0].formula_index == 1
    plus = [i for i, p in enumerate(net.param_info) if p.formula_index == 0]
    assert len(plus) == 2 and np.allclose(net.params[plus], 1.5)


def test_identical_ground_clauses_merge_and_weights_add():
    model = """
    P(t)
    Q(t)
    1.0 P(x) => Q(x)
    0.5 !Q(x) => !P(x)
    2 P(A) v !P(A) v Q(B)
    """
    net, _, _ = _both(model, "P(A)\n!P(B)\n", None, open_=["P"])
    assert net.stats["merged"] >= 1
    # P(x) => Q(x) twice: one clause with two parameter entries summing 1.5
    (c,) = [c for c in range(net.n_clauses) if len(net.clause_literals(c)) == 1]
    assert net.weight[c] == pytest.approx(1.5)
    assert net.param_start[c + 1] - net.param_start[c] == 2


def test_blocks_and_blocks_as_clauses_agree():
    model = """
    Has(person, pos!)
    Good(person)
    1.2 Has(x, Prof) => Good(x)
    -0.4 Has(x, Student) ^ Good(x)
    0.3 Has(x, y)
    """
    evidence = "Has(Anna, Prof)\n!Has(Bob, Prof)\nHas(Chris, Lecturer)\n"
    q = "Good,Has"
    net, _, _ = _both(model, evidence, q)
    assert net.n_blocks == 1          # Bob's block; Anna's and Chris's are decided
    block = {net.atom_name(a) for a in net.block_atoms}
    assert block == {"Has(Bob,Student)", "Has(Bob,Lecturer)"}
    net2, _, _ = _both(model, evidence, q, blocks_as_clauses=True)
    assert net2.n_blocks == 0
    p1 = dict(zip(net.atom_names(), exact_marginals(net).probabilities))
    p2 = dict(zip(net2.atom_names(), exact_marginals(net2).probabilities))
    assert p1.keys() == p2.keys()
    for k in p1:
        assert p1[k] == pytest.approx(p2[k], abs=1e-9)


def test_existential_with_conjunctions_distributes():
    model = """
    Paper(p)
    Wrote(a, p)
    Cites(p, p)
    1.0 Paper(p) => EXIST q (Cites(p, q) ^ Wrote(a, q))
    Wrote(a, p) => EXIST q Cites(q, p).
    """
    evidence = "Paper(P1)\nPaper(P2)\nWrote(A1, P1)\nWrote(A2, P2)\n"
    net, _, _ = _both(model, evidence, "Cites", open_=["Wrote"])
    assert net.n_clauses > 0


def test_labels_go_to_truth():
    model = "P(t)\nQ(t)\n1 P(x) => Q(x)\n"
    evidence = "P(A)\nP(B)\nQ(A)\n!Q(B)\n?Q(C)\nP(C)\nP(D)\n"
    net, _, _ = _both(model, evidence, "Q", query_truth=True)
    truth = dict(zip(net.atom_names(), net.truth.tolist()))
    assert truth == {"Q(A)": 1, "Q(B)": 0, "Q(C)": -1, "Q(D)": -1}
    net, _, _ = _both(model, evidence, "Q", truth_closed_world=True)
    truth = dict(zip(net.atom_names(), net.truth.tolist()))
    assert truth == {"Q(A)": 1, "Q(B)": 0, "Q(C)": -1, "Q(D)": 0}
    # default: listed query atoms are evidence (Alchemy, Tuffy)
    net, _, _ = _both(model, evidence, "Q")
    assert sorted(net.atom_names()) == ["Q(C)", "Q(D)"]


def test_closure_keeps_only_components_with_query_atoms():
    model = "t = {X, Y}\nA(t)\nB(t)\nC(t)\n1 A(x) => B(x)\n1 C(x)\n"
    net, _, _ = _both(model, "", "B")
    assert {n.split("(")[0] for n in net.atom_names()} == {"A", "B"}
    net, _, _ = _both(model, "", "C(x)")
    assert net.n_clauses == 0 or {n.split("(")[0] for n in net.atom_names()} == {"C"}


def test_query_atoms_without_clauses_are_atoms():
    mln = MLN.from_string("t = {A, B}\nP(t)\nQ(t)\n1 P(x)\n", "m.mln")
    net = ground(mln, Database(), parse_queries("Q", mln))
    assert sorted(net.atom_names()) == ["Q(A)", "Q(B)"] and net.n_clauses == 0
    assert net.n_components == 2


def test_constant_score_is_the_rest_of_the_world_score():
    """score(world) + constant_score = sum of weights of every satisfied grounding."""
    model = """
    person = {Anna, Bob, Chris}
    Smokes(person)
    Cancer(person)
    Friends(person, person)
    1.5 Smokes(x) => Cancer(x)
    1.1 Friends(x, y) => (Smokes(x) <=> Smokes(y))
    0.4 Smokes(x) ^ Cancer(x)
    -0.7 !Cancer(x)
    0.9 Friends(x, x) v x = y
    """
    evidence = "Friends(Anna, Bob)\nFriends(Bob, Chris)\nSmokes(Anna)\n!Cancer(Bob)\n"
    mln = MLN.from_string(model, "m.mln")
    db = Database.from_string(evidence, "e.db", mln=mln)
    templates = compile_mln(mln)
    net = ground(mln, db, None, open_=["Smokes", "Cancer"])
    ref = ReferenceGrounder(mln, [db], None, templates, open_=["Smokes", "Cancer"])
    names = net.atom_names()
    rng = np.random.default_rng(0)
    for _ in range(5):
        world = rng.random(net.n_atoms) < 0.5
        value = dict(zip(names, world))
        total = 0.0
        for t in templates:
            vars_ = [v for v, _ in t.var_types]
            doms = [ref.dom[ty] for _, ty in t.var_types]
            w = mln.formulas[t.formula_index].weight * t.weight_scale
            for combo in itertools.product(*doms):
                b = dict(zip(vars_, combo))
                sat = any(ref.compare(c.op, ref.value(c.left, b), ref.value(c.right, b)) == c.positive
                          for c in t.comparisons)
                for lit in t.literals:
                    pred, args = ref.atom_of(lit, b)
                    v = ref.truth_of(pred, args)
                    if v is None:
                        v = value[ref.name(pred, args)]
                    sat |= v == lit.positive
                total += w * sat
        assert net.score(world) + net.constant_score == pytest.approx(total)


def test_max_clauses_points_at_cutting_planes():
    mln = MLN.from_string("t = {A, B, C, D, E}\nS(t, t)\nS(x, y) ^ S(y, z) => S(x, z).\n", "m.mln")
    with pytest.raises(MarkovLogicError) as e:
        ground(mln, Database(), parse_queries("S", mln), max_clauses=50)
    assert "125" in str(e.value) and "cpi" in str(e.value)
    net = ground(mln, Database(), parse_queries("S", mln), max_clauses=1000)
    assert net.n_clauses > 50


def test_grounder_reuse_and_file_database(tmp_path):
    mln = MLN.from_string("t = {A, B}\nP(t)\nQ(t)\n1 P(x) => Q(x)\n", "m.mln")
    g = Grounder(mln, Database.from_string("P(A)\n", "e.db", mln=mln), parse_queries("Q", mln),
                 db_path=str(tmp_path / "ground.duckdb"))
    a = g.network()
    b = g.network()
    assert a.atom_names() == b.atom_names() and a.n_clauses == b.n_clauses == 1
    g.close()
    assert (tmp_path / "ground.duckdb").exists()
