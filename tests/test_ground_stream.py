"""Streaming grounding (issue 15): rows fetched in chunks, templates ground in
parts, the merge one template at a time -- the network must not change.

* against the reference grounder, with every template streamed in chunks of
  a few rows (so every chunk boundary case is met) and split in parts;
* digests of the network arrays of the tuffy workloads, Alchemy's example
  and generated social/class-like models, recorded from the grounder before
  streaming (``tests/golden_networks.py``): identical arrays, atom ids and
  clause order included;
* the memory budget stops a template whose held rows outgrow it while they
  stream, naming the template.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

import golden_networks  # noqa: E402
from test_ground_reference import _compare, problems  # noqa: E402

from markovlogic import MLN, Database  # noqa: E402
from markovlogic.errors import ResourceError  # noqa: E402
from markovlogic.ground import grounder as grounder_module  # noqa: E402
from markovlogic.ground import stream  # noqa: E402
from markovlogic.ground.grounder import Grounder  # noqa: E402
from markovlogic.lang.ast import Query  # noqa: E402


@contextlib.contextmanager
def streamed(chunk_rows: int, parts: int = 1):
    """Every template streamed (none prefetched), in chunks of ``chunk_rows``
    rows, each in ``parts`` parts."""
    saved = (grounder_module.PREFETCH_MAX_ROWS, stream.CHUNK_ROWS, Grounder.stream_template)
    original = Grounder.stream_template

    def in_parts(self, i, used=0, parts_=parts):
        return original(self, i, used, parts=parts_)

    grounder_module.PREFETCH_MAX_ROWS = -1
    stream.CHUNK_ROWS = chunk_rows
    Grounder.stream_template = in_parts
    try:
        yield
    finally:
        grounder_module.PREFETCH_MAX_ROWS, stream.CHUNK_ROWS, Grounder.stream_template = saved


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(problems())
def test_streamed_in_small_chunks_and_parts_matches_reference(problem):
    with streamed(chunk_rows=3, parts=2):
        _compare(*problem)


def _digests():
    """Recorded from main at 367087e (before streaming) by tests/golden_networks.py."""
    import json

    path = Path(__file__).resolve().parent / "golden_networks.json"
    return json.loads(path.read_text())


@pytest.mark.parametrize("name", sorted(_digests()))
def test_networks_identical_to_the_grounder_before_streaming(name):
    specs = golden_networks.workloads()
    spec = specs[name]
    model = spec[0]
    if isinstance(model, Path) and not model.exists():
        pytest.skip(f"data not found: {model}")
    expected = _digests()[name]
    got = golden_networks.digest(golden_networks.ground_one(spec))
    assert got == expected


def test_small_chunks_and_parts_give_the_same_arrays():
    spec = golden_networks.workloads()["classlike-3000"]
    plain = golden_networks.digest(golden_networks.ground_one(spec))
    with streamed(chunk_rows=1000, parts=3):
        chunked = golden_networks.digest(golden_networks.ground_one(spec))
    assert chunked == plain


def test_a_template_outgrowing_the_budget_while_streaming_is_stopped():
    consts = ", ".join(f"C{i}" for i in range(60))
    mln = MLN.from_string(f"dom = {{{consts}}}\nQ(dom)\nS(dom, dom)\n1 Q(a) ^ Q(b) => S(a, b)\n", filename="m.mln")
    db = Database.from_string("\n".join(f"Q(C{i})" for i in range(60)), mln=mln)
    g = Grounder(mln, [db], [Query("S")], memory_limit="64M")
    try:
        g._count_bounded = lambda sql, seconds: 1       # a wrong count: the stream itself must notice
        g.bytes_used = g.memory_limit - 1000 * g._row_bytes(0)
        with pytest.raises(ResourceError, match=r"template 0 .*m\.mln:4.* would produce more than [0-9,]+ ground "
                                                r"clauses.*--lazy.*--method cpi"):
            with streamed(chunk_rows=500):
                g.network()
    finally:
        g.close()


def test_a_count_that_does_not_finish_lets_a_streamed_template_go_on():
    """The bound says the rows may not fit, the count of the live rows does
    not finish in time: a streamed template is ground anyway (the stream's own
    check would stop it), and gives the network an unbudgeted grounding gives."""
    consts = ", ".join(f"C{i}" for i in range(60))
    text = f"dom = {{{consts}}}\nQ(dom)\nS(dom, dom)\n1 Q(a) ^ Q(b) => S(a, b)\n"
    mln = MLN.from_string(text, filename="m.mln")
    evidence = "\n".join(f"Q(C{i})" for i in range(30))      # 900 live rows of the bound's 3,600
    plain = Grounder(mln, [Database.from_string(evidence, mln=mln)], [Query("S")])
    try:
        want = plain.network()
    finally:
        plain.close()
    g = Grounder(mln, [Database.from_string(evidence, mln=mln)], [Query("S")], memory_limit="64M")
    try:
        g._count_bounded = lambda sql, seconds: None      # "did not finish in COUNT_SECONDS"
        g.bytes_used = g.memory_limit - 1000 * g._row_bytes(0)        # 900 rows fit, the bound's 3,600 do not
        assert g._grounding_bound(0) * g._row_bytes(0) > g.memory_limit - g.bytes_used
        with streamed(chunk_rows=500):
            net = g.network()
    finally:
        g.close()
    assert net.n_clauses == want.n_clauses == 900
    assert np.array_equal(net.lit_atom, want.lit_atom) and np.array_equal(net.weight, want.weight)


def test_constant_rows_are_counted_not_held():
    """Friends-of-friends over evidence only: every grounding is a constant;
    the template's rows are counted in SQL and its weight goes to the
    statistics, as when the rows were fetched."""
    mln = MLN.from_string("P(t)\nF(t, t)\n0.4 F(x, y) ^ F(y, z) => F(x, z)\n1 P(x)\n")
    db = Database.from_string("F(A,B)\nF(B,C)\nF(C,D)\n", mln=mln)
    g = Grounder(mln, [db], [Query("P")])
    try:
        net = g.network()
    finally:
        g.close()
    assert net.stats["soft_false_by_evidence"] == 2              # A-B-C and B-C-D: F(x, z) false
    assert net.stats["soft_false_weight"] == pytest.approx(0.8)
    assert net.n_clauses == 4 and np.all(net.lit_positive)


@pytest.mark.parametrize("name", ["tuffy-cse", "classlike-3000", "social-3000", "tuffy-cse-blocks-as-clauses"])
def test_solver_arrays_of_a_ground_network_skip_normalising_and_are_the_same(name):
    """kernels_state.normalise_clauses takes a short path for the grounder's
    canonical clauses (no copies, no sort): the arrays must equal the general
    path's."""
    from markovlogic.infer import kernels_state as K

    spec = golden_networks.workloads()[name]
    if isinstance(spec[0], Path) and not spec[0].exists():
        pytest.skip("data not found")
    net = golden_networks.ground_one(spec)
    fast = K.sat_arrays(net)
    slow = K.normalise_clauses(net.n_atoms, net.clause_start, net.lit_atom, net.lit_positive, net.weight,
                               net.is_hard, net.block_start, net.block_atoms, orig_clause=np.arange(net.n_clauses))
    for field in fast._fields:
        a, b = getattr(fast, field), getattr(slow, field)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), field
        else:
            assert a == b, field


def test_row_parts_of_a_template_ground_the_template_between_them():
    """``Grounder.row_parts``: the parts of each template's rows, ground by
    separate grounders (as grounding workers do), hold the clauses of the
    whole grounding between them, and the evidence constant once."""
    from collections import Counter

    from markovlogic import MLN, Database
    from markovlogic.ground.grounder import Grounder
    from markovlogic.lang.parser import parse_queries

    mln = MLN.from_string("P(t)\nQ(t)\nR(t, t)\n1.5 P(x) ^ R(x, y) => Q(y)\n-0.5 P(x) v Q(x)\n", "m.mln")
    db = Database.from_string("\n".join(f"R(C{i}, C{(i * 7) % 23})" for i in range(23)) + "\nP(C1)\n!Q(C3)\n",
                              "m.db", mln=mln)

    def clauses(g):
        out: list = []
        net = g.network(closure=False, clauses_out=out)
        gc = out[0]
        cs = np.asarray(gc.clause_start)
        names = [net.atom_name(int(a)) if a < net.n_atoms else str(a) for a in np.asarray(gc.lit_atom)]
        pos = np.asarray(gc.lit_positive)
        return Counter(tuple(sorted((names[j], bool(pos[j])) for j in range(cs[c], cs[c + 1])))
                       for c in range(len(cs) - 1)), net.stats.get("evidence_constant")

    queries = parse_queries("P,Q", mln)
    whole, constant = clauses(Grounder(mln, [db], queries))
    parts, constants = Counter(), 0.0
    for k in range(3):
        g = Grounder(mln, [db], queries)
        g.row_parts = {i: ((k,), 3) for i in range(len(g.templates))}
        c, e = clauses(g)
        parts += c
        constants += e or 0.0
    assert sum(parts.values()) == sum(whole.values())
    assert set(parts) == set(whole)
    if constant is not None:
        assert constants == pytest.approx(constant)


def test_canonical_leaves_the_callers_codes_alone():
    """``canonical`` sorted a one-row batch in place (a column of a one-row
    array is a view), so merging the same rows twice -- lazy grounding
    merges its eager templates' rows, then all rows -- turned the tautology
    ``!S(1) v S(1) v S(2) v S(3)`` into the clause ``!S(1) v S(2) v S(3)``."""
    from markovlogic.ground.assemble import canonical

    for codes in (np.array([[1, 0, 2, 4]], dtype=np.int32), np.asfortranarray([[5, 2, 9], [3, 1, 0]], dtype=np.int32)):
        before = codes.copy()
        c, lengths, taut = canonical(codes)
        assert (codes == before).all()
    c, lengths, taut = canonical(np.array([[1, 0, 2, 4]], dtype=np.int32))
    assert taut.tolist() == [True]


def test_evidence_only_template_is_counted_not_fetched():
    """The transitivity of an observed (closed, fully known) relation keeps
    no literal: every grounding is constant, so the grounder counts its rows
    in SQL instead of fetching them (social N=1M: 100 M rows); the network
    and the counts are those of the rows' reading."""
    from markovlogic import MLN, Database
    from markovlogic.ground.grounder import Grounder
    from markovlogic.lang.parser import parse_queries

    mln = MLN.from_string("S(p)\nF(p, p)\n1 F(x, y) ^ S(x) => S(y)\n0.4 F(x, y) ^ F(y, z) => F(x, z)\n", "m.mln")
    db = Database.from_string("\n".join(f"F(P{i}, P{(i + 1) % 7})" for i in range(7)) + "\nS(P0)\n", "m.db", mln=mln)
    g = Grounder(mln, [db], parse_queries("S", mln))
    trans = [i for i, t in enumerate(g.templates) if all(lit.atom.predicate == "F" for lit in t.literals)]
    assert trans and all(not g._query(i).literals for i in trans)
    net = g.network()
    rows = {d["template"]: d for d in net.stats["templates"]}
    assert net.n_clauses > 0
    assert all(rows[i]["rows"] == 7 for i in trans)      # F(x,y) ^ F(y,z) with !F(x,z): 7 paths


def test_an_abandoned_chunk_stream_leaves_the_connection_usable():
    """DuckDB 2 refuses other work on a connection while a result is
    unfinished; a stream closed early (a consumer that stops or raises) must
    finish its result at once, and one-row lookups must not leave one."""
    import duckdb

    from markovlogic.ground.stream import fetch_chunks

    con = duckdb.connect()
    stream = fetch_chunks(con, "SELECT range AS a FROM range(100000)", rows=2048)
    first = next(stream)
    assert len(first["a"]) == 2048
    stream.close()
    con.register("w", {"a": np.arange(3)})          # raised ResourceInUse before the fix
    assert con.execute("SELECT count(*) FROM w").fetchall()[0][0] == 3
    with contextlib.closing(fetch_chunks(con, "SELECT range AS a FROM range(10)")) as chunks:
        assert sum(len(c["a"]) for c in chunks) == 10
    con.unregister("w")


def test_chunks_are_read_from_arrow_batches_without_pandas():
    """fetch_chunks reads DuckDB's Arrow stream (nanoarrow): every row once,
    in chunks of at most ``rows`` rows across batch boundaries, integer,
    float and boolean columns as numpy, a NULL reported, no pandas import."""
    import subprocess
    import sys

    import duckdb

    from markovlogic.ground.stream import fetch_chunks

    con = duckdb.connect()
    sql = ("SELECT range::INTEGER AS a, (range * 3)::BIGINT AS b, range % 2 = 0 AS t, (range / 2)::DOUBLE AS d, "
           "(range % 7)::TINYINT AS s FROM range(300007)")
    for rows in (1, 1000, 131072, 200000, 1 << 20):
        if rows == 1:
            chunks = list(fetch_chunks(con, "SELECT range::INTEGER AS a FROM range(5)", rows=1))
            assert [len(c["a"]) for c in chunks] == [1] * 5
            continue
        chunks = list(fetch_chunks(con, sql, rows=rows))
        assert max(len(c["a"]) for c in chunks) <= rows
        assert sum(len(c["a"]) for c in chunks) == 300007
        a = np.concatenate([c["a"] for c in chunks])
        order = np.argsort(a)
        assert np.array_equal(a[order], np.arange(300007))
        for name, want in (("b", 3 * np.arange(300007)), ("t", np.arange(300007) % 2 == 0),
                           ("d", np.arange(300007) / 2), ("s", np.arange(300007) % 7)):
            got = np.concatenate([c[name] for c in chunks])[order]
            assert np.array_equal(got, want), name
        assert chunks[0]["t"].dtype == bool and chunks[0]["a"].dtype == np.int32
    assert list(fetch_chunks(con, "SELECT 1 AS a WHERE false")) == []
    with pytest.raises(ValueError, match="'a'.*NULL"):
        list(fetch_chunks(con, "SELECT CASE WHEN range = 3 THEN NULL ELSE range END AS a FROM range(10)"))
    assert con.execute("SELECT 42").fetchall() == [(42,)]
    code = ("import sys, duckdb; from markovlogic.ground.stream import fetch_chunks; "
            "c = duckdb.connect(); n = sum(len(x['a']) for x in fetch_chunks(c, 'SELECT range AS a FROM range(10)')); "
            "assert n == 10; print('pandas' in sys.modules or 'pyarrow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
