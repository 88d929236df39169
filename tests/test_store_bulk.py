"""The evidence store's bulk paths against the per-name/numpy paths they
replace: constant interning (names, ids, type members and their order) and
the compiled duplicate/contradiction scan (kept rows, first contradiction)."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic import MLN, Database
from markovlogic.jit import force_mode
from markovlogic.store.constants import ConstantTable
from markovlogic.store.dedupe import scan_duplicates
from markovlogic.store.store import EvidenceStore


def _old_scan(args: np.ndarray, truth: np.ndarray):
    """The numpy path the compiled scan replaces (np.unique on packed keys)."""
    if len(truth) < 2:
        return None, -1, -1
    _, inverse = np.unique(args, axis=0, return_inverse=True) if args.shape[1] else (None, np.zeros(len(truth), int))
    key = np.asarray(inverse).reshape(-1)
    uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    conflict = truth != truth[first[inverse]]
    if conflict.any():
        i = int(np.flatnonzero(conflict)[0])
        return None, i, int(first[inverse[i]])
    if len(uniq) == len(truth):
        return None, -1, -1
    return np.sort(first), -1, -1


@pytest.mark.parametrize("mode", ["python", "numba"])
@pytest.mark.parametrize("arity", [0, 1, 2, 3])
def test_scan_matches_numpy(mode, arity):
    rng = np.random.default_rng(arity)
    with force_mode(mode):
        for trial in range(40):
            n = int(rng.integers(0, 200 if mode == "python" else 3000))
            hi = int(rng.choice([2, 5, 50, 2**31 - 1]))
            base = rng.integers(0, hi, size=(max(1, n // 3), arity)).astype(np.int32)
            args = base[rng.integers(0, len(base), size=n)] if n else np.zeros((0, arity), np.int32)
            truth = np.ones(n, np.int8)
            if trial % 3 == 0 and n:
                truth[rng.integers(0, n, size=max(1, n // 50))] = rng.choice([0, -1])
            keep, i, j = scan_duplicates(args, truth)
            want_keep, wi, wj = _old_scan(args, truth)
            assert (i, j) == (wi, wj)
            if want_keep is None:
                assert keep is None
            else:
                assert np.array_equal(keep, want_keep)


def test_scan_big_bucket_merge_sort():
    """One first argument for every row: the bucket is merge sorted."""
    rng = np.random.default_rng(5)
    with force_mode("numba"):
        args = np.stack([np.zeros(5000, np.int32), rng.integers(0, 800, 5000).astype(np.int32),
                         rng.integers(0, 3, 5000).astype(np.int32)], axis=1)
        truth = np.ones(5000, np.int8)
        keep, i, j = scan_duplicates(args, truth)
        want = _old_scan(args, truth)
        assert np.array_equal(keep, want[0]) and (i, j) == want[1:]
        truth[4000] = 0
        assert scan_duplicates(args, truth)[1:] == _old_scan(args, truth)[1:]


def _old_intern(mln, dbs, formula_constants=()):
    """The per-name interning the bulk path replaces: declared types, formula
    constants, then per predicate (declaration order), column, database, the
    column's names in row order."""
    names: list[str] = []
    ids: dict[str, int] = {}
    members: dict[str, dict[int, None]] = {}

    def intern(c):
        if c not in ids:
            ids[c] = len(names)
            names.append(c)
        return ids[c]

    for t, cs in mln.types.items():
        table = members.setdefault(t, {})
        for c in cs:
            table[intern(c)] = None
    for decl in mln.predicates.values():
        for t in decl.arg_types:
            members.setdefault(t, {})
    for t, c in formula_constants:
        cid = intern(c)
        if t is not None:
            members.setdefault(t, {})[cid] = None
    for name, decl in mln.predicates.items():
        for j, t in enumerate(decl.arg_types):
            for db in dbs:
                for a in db.atoms:
                    if a.atom.predicate == name:
                        members.setdefault(t, {})[intern(a.atom.args[j])] = None
    return names, ids, members


def _random_case(tmp_path, seed, n_dbs):
    rng = np.random.default_rng(seed)
    mln_text = "person = {P1, P2, Q9}\nSmokes(person)\nFriends(person, person)\nLikes(person, thing)\n" \
               "Gift(thing, person, thing)\nSmokes(x) => Smokes(P3)\nFriends(x, y) => Likes(x, T1)\n"
    (tmp_path / "m.mln").write_text(mln_text)
    mln = MLN.from_file(str(tmp_path / "m.mln"))
    dbs = []
    for d in range(n_dbs):
        lines = []
        for _ in range(int(rng.integers(5, 300))):
            p = int(rng.integers(0, 4))
            a, b, c = (int(x) for x in rng.integers(0, 40, 3))
            atom = [f"Smokes(P{a})", f"Friends(P{a},P{b})", f"Likes(P{a},T{b})", f"Gift(T{a},P{b},T{c})"][p]
            lines.append(atom)
            if rng.random() < 0.2:
                lines.append(atom)                       # a repeated line
        path = tmp_path / f"e{d}.db"
        path.write_text("\n".join(lines) + "\n")
        dbs.append(Database.from_file([str(path)], mln=mln))
    return mln, dbs


@pytest.mark.filterwarnings("ignore::markovlogic.errors.DomainExtendedWarning")
@pytest.mark.parametrize("seed", range(6))
def test_bulk_interning_matches_per_name(tmp_path, seed):
    mln, dbs = _random_case(tmp_path, seed, 1 + seed % 3)
    formula = [("person", "P3"), (None, "T1"), ("thing", "T1")]
    store = EvidenceStore(mln, dbs, formula_constants=formula)
    try:
        names, ids, members = _old_intern(mln, dbs, formula)
        consts = store.constants
        assert consts.names == names
        assert consts.ids == ids
        assert list(consts.members) == list(members)
        assert {t: list(m) for t, m in consts.members.items()} == {t: list(m) for t, m in members.items()}
        for t, m in members.items():
            assert np.array_equal(consts.domain(t), np.array(sorted(m), dtype=np.int32))
            assert store.domain(t).tolist() == sorted(m)
        assert consts.id_of("nope") is None and store.const_id("P3") == ids["P3"]
        # the stored rows are the input's first occurrences, by id
        for name, info in store.preds.items():
            got = sorted(map(tuple, store.con.execute(f"SELECT * FROM {info.table}").fetchall()))
            want = {tuple(ids[c] for c in a.atom.args) + (1,) for db in dbs for a in db.atoms
                    if a.atom.predicate == name}
            assert got == sorted(want)
    finally:
        store.close()


def test_constant_table_one_by_one_and_bulk():
    t = ConstantTable()
    t.add_many("a", ["x", "y", "x"])
    start = t.extend_new(["u", "v", "w"])
    t.add_ids("b", np.array([start + 2, start, start + 2], np.int32))
    assert t.add("b", "x") == 0
    assert t.intern("z") == 5 and t.intern("v") == 3
    assert t.names == ["x", "y", "u", "v", "w", "z"]
    assert t.ids == {n: i for i, n in enumerate(t.names)}
    assert {k: list(v) for k, v in t.members.items()} == {"a": [0, 1], "b": [4, 2, 0]}
    assert t.domain("b").tolist() == [0, 2, 4] and t.is_member("b", 4) and not t.is_member("a", 4)
    assert not t.is_member("nope", 0) and t.domain("nope").tolist() == []
    assert t.type_names() == ["a", "b"]


def test_value_columns_first_characters():
    """Only names starting with a quote or a number's first character get
    per-name work; the result is the per-name rules on every name."""
    from markovlogic.store.constants import constant_integer, constant_number, constant_value

    t = ConstantTable()
    names = ["A", '"q"', "+1", "-2.5", ".5", "7", "", "\u0663", "x1", '"3"', "\u00e9", "+", '"', "1e5",
             "\u06634", "\U0001d7d8", "\ud800x"]
    for n in names:
        t.intern(n)
    cols = t.value_columns()
    svals = [constant_value(n) for n in names]
    nums = [constant_number(s) for s in svals]
    assert list(cols["sval"]) == svals
    assert [None if np.isnan(x) else x for x in cols["num"]] == nums
    ints = [constant_integer(s) if x is not None else None for s, x in zip(svals, nums)]
    assert cols["has_inum"].tolist() == [i is not None for i in ints]
    assert [int(v) if h else None for v, h in zip(cols["inum"], cols["has_inum"])] == ints


def test_contradiction_across_databases_names_the_first(tmp_path):
    (tmp_path / "m.mln").write_text("Friends(person, person)\nFriends(x, y) => Friends(y, x)\n")
    mln = MLN.from_file(str(tmp_path / "m.mln"))
    (tmp_path / "a.db").write_text("Friends(A,B)\nFriends(C,D)\nFriends(A,B)\n")
    (tmp_path / "b.db").write_text("Friends(E,F)\n!Friends(C,D)\n!Friends(A,B)\n")
    dbs = [Database.from_file([str(tmp_path / n)], mln=mln) for n in ("a.db", "b.db")]
    from markovlogic.errors import EvidenceError

    with pytest.raises(EvidenceError) as info:
        EvidenceStore(mln, dbs)
    err = info.value
    assert "Friends(C,D) contradicts an earlier evidence line (line 2)" in str(err)
    assert err.file.endswith("b.db") and err.line == 2
