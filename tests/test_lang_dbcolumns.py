"""Evidence read into columns (lang/dbcolumns.py) against the line-by-line
reader (lang/dbfast.py): the same atoms, truth values and positions, on
every kind of line, across block boundaries, growing intern tables, wide
atoms, encodings; and the errors of the checks at the same places."""

from __future__ import annotations

import random

import pytest

from markovlogic import MLN, Database
from markovlogic.errors import EvidenceError
from markovlogic.lang import dbcolumns
from markovlogic.lang.dbfast import parse_db_lines

LINES = [
    "P(A,B)", "!Q(C)", "?R(1)", "P( A , B )", "  !P(X,Y)  ", "\tQ(D)\t", "P(A1-b,c'd)", "R(1.5)", "R(2e10)",
    "Q(\"a string\")", "P(A,B) P(C,D)", "Q(E) // a comment", "// only a comment", "", "   ",
    "Alice = f(Bob)", "Q(F)\r", "R(12abc)", "S(a,b,c,d,e,f,g)", "Q(G", "P(,)", "?Q(H)", "!!Q(I)", "Q (J)",
    "R(1.)", "R(.5)", "Q(_x)", "W(" + ",".join(f"c{i}" for i in range(20)) + ")",
]


@pytest.fixture(autouse=True)
def _columns_for_every_size(monkeypatch):
    """Small files are read as text (parser.SMALL_DB_BYTES); here every file
    goes through the column reader."""
    from markovlogic.lang import parser

    monkeypatch.setattr(parser, "SMALL_DB_BYTES", -1)


def _expected(text: str, name: str):
    atoms, values = parse_db_lines(text, name)
    return [(a.atom, a.truth, (a.pos.file, a.pos.line, a.pos.column)) for a in atoms], values


def _got(db):
    return [(a.atom, a.truth, (a.pos.file, a.pos.line, a.pos.column)) for a in db.atoms]


def _good_lines(rng, n):
    good = [ln for ln in LINES if ln not in ("Q(G", "P(,)", "!!Q(I)", "R(12abc)", "R(1.)", "R(.5)")]
    return [rng.choice(good) for _ in range(n)]


@pytest.mark.parametrize("seed", range(5))
def test_columns_match_the_line_reader(tmp_path, seed, monkeypatch):
    rng = random.Random(seed)
    lines = _good_lines(rng, 300)
    text = "\n".join(lines) + ("\n" if seed % 2 else "")
    path = tmp_path / "e.db"
    path.write_text(text)
    monkeypatch.setattr(dbcolumns, "BLOCK", 97)            # many blocks, lines cut at every place
    db = Database.from_file(path)
    atoms, values = _expected(text, str(path))
    assert _got(db) == atoms
    assert db.function_values == values
    assert len(db.atoms) == len(atoms)


def test_every_line_kind_from_a_string():
    lines = [ln for ln in LINES if ln not in ("Q(G", "P(,)", "!!Q(I)", "R(12abc)", "R(1.)", "R(.5)")]
    text = "\n".join(lines)
    db = Database.from_string(text, filename="s.db")
    atoms, values = _expected(text, "s.db")
    assert _got(db) == atoms and db.function_values == values


def test_many_constants_grow_the_intern_tables(tmp_path):
    text = "".join(f"P(C{i},D{i % 1000})\n" for i in range(50_000))
    path = tmp_path / "e.db"
    path.write_text(text)
    db = Database.from_file(path)
    atoms, _ = _expected(text, str(path))
    assert _got(db) == atoms


def test_byte_order_mark_crlf_and_latin1(tmp_path):
    path = tmp_path / "bom.db"
    path.write_bytes(b"\xef\xbb\xbfP(A,B)\r\n  Q(C)\r\n")
    assert _got(Database.from_file(path)) == _expected("P(A,B)\r\n  Q(C)\r\n", str(path))[0]
    latin = tmp_path / "latin.db"
    latin.write_bytes(b'P(A,B)\nQ("caf\xe9")\nQ(D)\n')
    assert _got(Database.from_file(latin)) == _expected('P(A,B)\nQ("caf\xe9")\nQ(D)\n', str(latin))[0]


def test_a_block_comment_reads_the_file_as_text(tmp_path):
    path = tmp_path / "c.db"
    text = "P(A,B)\n/* Q(X)\nQ(Y) */ Q(Z)\nQ(W)\n"
    path.write_text(text)
    assert _got(Database.from_file(path)) == _expected(text, str(path))[0]


def test_several_files_keep_their_order_and_names(tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    a.write_text("P(A,B)\nQ(C)\n")
    b.write_text("Q(D)\nP(E,F)\n")
    db = Database.from_file([a, b])
    assert [(str(x.atom), x.pos.file, x.pos.line) for x in db.atoms] == [
        ("P(A,B)", str(a), 1), ("Q(C)", str(a), 2), ("Q(D)", str(b), 1), ("P(E,F)", str(b), 2)]


MODEL = "P(t, t)\nQ(t)\nColor(t, c!)\n1 P(x, y) => Q(x)\n"


def test_errors_name_the_place_in_a_large_file(tmp_path):
    mln = MLN.from_string(MODEL)
    body = "".join(f"P(A{i},B{i})\n" for i in range(20_000))
    cases = [
        ("Undeclared(A)\n", "undeclared predicate 'Undeclared'", 20_001, 1),
        ("   Q(A,B)\n", "predicate 'Q' takes 1 argument", 20_001, 4),
        ("!P(A7,B7)\n", "contradictory evidence: P(A7,B7) is given as false here and as true at line 8, column 1",
         20_001, 1),
        ("Color(A, Red)\nColor(A, Blue)\n", "Color(A,Blue) and Color(A,Red) are both true", 20_002, 1),
    ]
    for tail, message, line, column in cases:
        path = tmp_path / "e.db"
        path.write_text(body + tail)
        with pytest.raises(EvidenceError) as info:
            Database.from_file(path, mln=mln)
        err = info.value
        assert message in str(err), str(err)
        assert (err.file, err.line, err.column) == (str(path), line, column)
        assert err.source_line is not None and err.source_line.strip() == tail.splitlines()[-1].strip()


@pytest.mark.parametrize("bad", ["Q(G", "P(,)", "!!Q(I)", "R(12abc)", "R(1.)", "R(-3)"])
def test_bad_lines_give_the_line_readers_error(tmp_path, bad):
    from markovlogic.errors import MarkovLogicError

    text = "P(A,B)\nQ(C)\n" + bad + "\nQ(D)\n"
    with pytest.raises(MarkovLogicError) as expected:
        parse_db_lines(text, "e.db")
    with pytest.raises(MarkovLogicError) as got:
        Database.from_string(text, filename="e.db")
    assert str(got.value) == str(expected.value)
    assert (got.value.line, got.value.column) == (expected.value.line, expected.value.column)


def _first_seen(atoms):
    seen: dict = {}
    for a, _, _ in atoms:
        for c in a.args:
            seen.setdefault(c, len(seen))
    return list(seen)


@pytest.mark.parametrize("mode", ["python", "numba"])
def test_names_sharing_eight_bytes_long_names_and_queue_flushes(tmp_path, monkeypatch, mode):
    """The intern table finds short names by their first eight bytes and
    compares longer ones in full: names equal in their first eight bytes,
    lengths 8 / 9 / 255 / 300, names differing only in their last byte; ids in
    first-appearance order across queue flushes, table growth and blocks
    (the kernels compiled and run as Python agree)."""
    from markovlogic import jit

    long_a, long_b = "L" * 299 + "a", "L" * 299 + "b"
    names = ["ABCDEFGH", "ABCDEFGHI", "ABCDEFGHJ", "ABCDEFG", "A", "x" * 255, "x" * 254 + "y", long_a, long_b, "7",
             "1.5e3"]
    rng = random.Random(3)
    lines = []
    for i in range(3000):
        a = rng.choice(names) if rng.random() < 0.5 else f"C{rng.randrange(900)}"
        b = rng.choice(names) if rng.random() < 0.3 else f"Dname{rng.randrange(1200)}xyz"
        lines.append(f"P({a},{b})" if i % 7 else f"!P({a}, {a})")
    text = "\n".join(lines) + "\n"
    path = tmp_path / "e.db"
    path.write_text(text)
    monkeypatch.setattr(dbcolumns, "BLOCK", 4096 if mode == "python" else 997)
    monkeypatch.setattr(dbcolumns, "QUEUE", 37)
    with jit.force_mode(mode):
        reader = dbcolumns.ColumnReader()
        assert reader.read_file(path, str(path))
        cols = reader.finish()
    atoms, _ = _expected(text, str(path))
    assert cols.consts == _first_seen(atoms)
    got = [(a.atom, a.truth, (a.pos.file, a.pos.line, a.pos.column)) for a in cols.iter_atoms()]
    assert got == atoms


def test_the_survey_sees_a_block_comment_across_reads_and_the_encoding():
    """``/*`` split between two reads of the file is still seen; a file that is
    not valid UTF-8 (also when its bad byte comes in a later read) is latin-1."""
    import io

    head = b"P(A,B)\n" * 20
    for size in (len(head) + 5, len(head) + 6, 7, 4096):
        survey = dbcolumns.ColumnReader._survey
        assert survey(io.BytesIO(head + b"Q(C) /* x */\n"), bytearray(size)) is None
        assert survey(io.BytesIO(head + b"Q(C) / * x\n"), bytearray(size)) == "utf-8"
        assert survey(io.BytesIO(head + "Q(Caf\u00e9)\n".encode()), bytearray(size)) == "utf-8"
        assert survey(io.BytesIO(head + b"Q(Caf\xe9)\n"), bytearray(size)) == "latin-1"
        assert survey(io.BytesIO(head + b"Q(Caf\xc3)"), bytearray(size)) == "latin-1"


def test_lines_longer_than_the_read_buffer(tmp_path, monkeypatch):
    """A line longer than the reading buffer (BLOCK) makes it grow; the lines
    after it are read as before; a last line without a newline too."""
    lines = ["P(A,B)", "S(" + ",".join(f"long_name_{i}" for i in range(7)) + ")", "Q(C)", "",
             "S(" + ",".join(f"x{i}" for i in range(7)) + ")", "!P(B,A)"]
    text = "\n".join(lines)
    path = tmp_path / "e.db"
    path.write_text(text)
    monkeypatch.setattr(dbcolumns, "BLOCK", 16)
    db = Database.from_file(path)
    atoms, _ = _expected(text, str(path))
    assert _got(db) == atoms


def test_an_empty_file_and_a_file_of_blank_lines(tmp_path):
    for text in ("", "\n\n  \n// c\n"):
        path = tmp_path / "e.db"
        path.write_text(text)
        reader = dbcolumns.ColumnReader()
        assert reader.read_file(path, str(path))
        cols = reader.finish()
        assert len(cols) == 0 and cols.consts == []


def test_the_predicate_table_grows_while_argument_names_wait(tmp_path):
    """Hundreds of predicate names (their table grows mid-block) between lines
    whose argument names are still queued: every argument is written."""
    rng = random.Random(5)
    lines = [f"{'Pred' + str(rng.randrange(400)) + '_with_a_long_name'}(C{rng.randrange(50)},D{i})"
             for i in range(5000)]
    text = "\n".join(lines) + "\n"
    path = tmp_path / "e.db"
    path.write_text(text)
    db = Database.from_file(path)
    atoms, _ = _expected(text, str(path))
    assert _got(db) == atoms
    assert db.columns.consts == _first_seen(atoms)
