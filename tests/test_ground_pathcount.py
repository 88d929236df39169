"""The compiled count of a path-shaped evidence-only template
(``ground/pathcount.py``) against DuckDB's count of the same grounding query
and against brute force over the domain, on small random relations (repeated
and false evidence lines, self-loops, flipped argument orders, three
different predicates, no closing literal); the networks with and without the
compiled path are identical, constant score included; shapes it must not
take (repeated variables, constants, comparisons, a fourth literal) stay in
SQL.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from markovlogic import MLN, Database
from markovlogic.ground import pathcount
from markovlogic.ground.grounder import Grounder
from markovlogic.lang.parser import parse_queries

DECLS = "S(p)\nF(p, p)\nG(p, p)\nH(p, p)\n1 F(x, y) ^ S(x) => S(y)\n"

# (formula, brute-force test of a grounding (x, y, z) being false by evidence)
SHAPES = [
    ("0.4 F(x, y) ^ F(y, z) => F(x, z)", lambda F, G, H, x, y, z: (x, y) in F and (y, z) in F and (x, z) not in F),
    ("-0.7 F(y, x) ^ F(y, z) => F(z, x)", lambda F, G, H, x, y, z: (y, x) in F and (y, z) in F and (z, x) not in F),
    ("1.3 F(x, y) ^ G(z, y) => H(x, z)", lambda F, G, H, x, y, z: (x, y) in F and (z, y) in G and (x, z) not in H),
    ("0.9 G(y, x) ^ F(y, z) => H(z, x)", lambda F, G, H, x, y, z: (y, x) in G and (y, z) in F and (z, x) not in H),
    ("0.2 !F(x, y) v !G(y, z)", lambda F, G, H, x, y, z: (x, y) in F and (y, z) in G),
]


def _evidence(rng, n: int, with_h: bool) -> str:
    lines = []
    for pred in ("F", "G") + (("H",) if with_h else ()):
        sign: dict[tuple[int, int], str] = {}
        for _ in range(int(rng.integers(0, 3 * n))):
            a, b = (int(v) for v in rng.integers(0, n, 2))
            sign.setdefault((a, b), "!" if rng.random() < 0.15 else "")
            lines.append(f"{sign[a, b]}{pred}(P{a}, P{b})")   # repeated lines, never contradictory
    lines += [f"S(P{i})" for i in range(n) if rng.random() < 0.3]
    rng.shuffle(lines)
    return "\n".join(lines) + "\n"


def _true(db_text: str, pred: str) -> set[tuple[str, str]]:
    out = set()
    for line in db_text.splitlines():
        if line.startswith(pred + "("):
            a, b = line[len(pred) + 1:-1].split(", ")
            out.add((a, b))
    return out


def _grounder(formula: str, db_text: str) -> tuple[Grounder, int]:
    mln = MLN.from_string(DECLS + formula + "\n", "m.mln")
    db = Database.from_string(db_text, "m.db", mln=mln)
    g = Grounder(mln, [db], parse_queries("S", mln))
    i = next(k for k, t in enumerate(g.templates) if t.formula_index == 1)
    return g, i


@pytest.mark.parametrize("shape", range(len(SHAPES)))
@pytest.mark.parametrize("seed", range(6))
def test_compiled_count_equals_sql_and_brute_force(shape, seed):
    formula, false_by_evidence = SHAPES[shape]
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    text = _evidence(rng, n, with_h=seed % 3 != 0)        # H sometimes has no evidence (open)
    g, i = _grounder(formula, text)
    path = pathcount.path_shape(g.templates[i], g.store)
    q = g._query(i)
    if q.literals:              # H without evidence is open (unknown atoms): ground, not counted
        assert path is None and "H" in formula and not _true(text, "H")
        return
    assert path is not None
    if q.empty:
        return
    fast = pathcount.count_open_paths(g.store, path)
    assert fast == g._count(q.sql)
    F, G, H = (_true(text, p) for p in "FGH")
    domain = [g.store.constants.names[c] for c in g.store.domain("p")]
    brute = sum(bool(false_by_evidence(F, G, H, x, y, z)) for x, y, z in itertools.product(domain, repeat=3))
    assert fast == brute


@pytest.mark.parametrize("shape", range(len(SHAPES)))
def test_the_walk_split_over_threads_counts_the_same(shape, monkeypatch):
    """Sources cut into ranges, one walk per thread: the same count as one walk."""
    formula, _ = SHAPES[shape]
    text = _evidence(np.random.default_rng(200 + shape), 30, with_h=True)
    g, i = _grounder(formula, text)
    path = pathcount.path_shape(g.templates[i], g.store)
    if path is None:
        return
    one = pathcount.count_open_paths(g.store, path)
    monkeypatch.setattr(pathcount, "PARALLEL_EDGES", 0)
    monkeypatch.setattr(pathcount, "machine_cores", lambda: 4)
    for threads in (2, 3, 4):
        monkeypatch.setattr(pathcount, "THREADS", threads)
        assert pathcount.count_open_paths(g.store, path) == one


def _network(formula: str, text: str, compiled: bool, monkeypatch):
    with monkeypatch.context() as m:
        if not compiled:
            m.setattr(pathcount, "path_shape", lambda t, store: None)
        g, _ = _grounder(formula, text)
        return g.network()


@pytest.mark.parametrize("shape", range(len(SHAPES)))
def test_networks_with_and_without_the_compiled_count_are_identical(shape, monkeypatch):
    formula, _ = SHAPES[shape]
    text = _evidence(np.random.default_rng(100 + shape), 12, with_h=True)
    a = _network(formula, text, True, monkeypatch)
    b = _network(formula, text, False, monkeypatch)
    for name in ("clause_start", "lit_atom", "lit_positive", "weight", "is_hard", "template_id", "param_index",
                 "param_coef", "atom_pred", "atom_args"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.constant_score == b.constant_score
    assert a.stats["templates"][1]["rows"] == b.stats["templates"][1]["rows"]
    assert a.stats["constant_score"] == b.stats["constant_score"]


@pytest.mark.parametrize("formula", [
    "0.4 F(x, x) ^ F(x, z) => G(z, x)",          # repeated variable
    "0.4 F(x, y) ^ F(y, P1) => F(x, P1)",        # a constant
    "0.4 F(x, y) ^ F(y, z) ^ !(x = z) => F(x, z)",  # a comparison
    "0.4 F(x, y) ^ F(y, z) ^ G(z, w) => F(x, w)",  # three edges
    "0.4 F(x, y) ^ F(y, z) => G(x, y)",          # the closing literal on the first edge's pair
    "0.4 F(x, y) ^ F(z, w) => F(x, w)",          # edges sharing no variable
])
def test_other_evidence_only_shapes_stay_in_sql(formula):
    text = "F(P0, P1)\nF(P1, P2)\nG(P2, P0)\nF(P1, P1)\n!F(P2, P2)\nS(P0)\n"
    g, i = _grounder(formula, text)
    assert pathcount.path_shape(g.templates[i], g.store) is None
    g.network()                                   # the SQL count still works


def test_a_relation_with_unknown_atoms_is_not_counted_here():
    """``?F(a, b)`` makes F's atom unknown: the template keeps a literal and
    is ground, not counted."""
    text = "F(P0, P1)\nF(P1, P2)\n?F(P0, P2)\nS(P0)\n"
    g, i = _grounder(SHAPES[0][0], text)
    assert pathcount.path_shape(g.templates[i], g.store) is None
