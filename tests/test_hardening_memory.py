"""Issue 16, item 4: grounding and learning stop before the memory budget
with a message naming the formula, the estimate and the ways out."""

from __future__ import annotations

import pytest

from markovlogic import MLN, Database
from markovlogic.cli import main
from markovlogic.errors import ResourceError
from markovlogic.ground import ground
from markovlogic.lang.ast import Query
from markovlogic.resources import parse_size

CONSTANTS = ", ".join(f"C{i}" for i in range(20))


def test_a_template_too_large_for_the_budget_is_refused_before_it_is_ground():
    mln = MLN.from_string(f"dom = {{{CONSTANTS}}}\nQ(dom)\nS(dom)\n"
                          "1 Q(a) ^ Q(b) ^ Q(c) ^ Q(d) ^ Q(e) => S(f)\n", filename="m.mln")
    db = Database.from_string("\n".join(f"Q(C{i})" for i in range(20)), mln=mln)
    with pytest.raises(ResourceError, match=r"template 0 .*m\.mln:4.* would produce 64,000,000 ground clauses"
                                            r".*memory budget is 64\.0 MB.*--method cpi"):
        ground(mln, [db], [Query("S")], memory_limit="64M")
    small = MLN.from_string(f"dom = {{{CONSTANTS}}}\nQ(dom)\nS(dom)\n1 Q(a) ^ Q(b) => S(f)\n")
    assert ground(small, [Database.from_string("Q(C1)", mln=small)], [Query("S")], memory_limit="64M").n_atoms == 20


def test_too_many_query_atoms_are_refused():
    mln = MLN.from_string(f"dom = {{{CONSTANTS}}}\nP(dom, dom, dom, dom, dom, dom)\n1 P(a, b, c, d, e, f)\n")
    with pytest.raises(ResourceError, match="query predicate P has 64,000,000 unknown ground atoms"):
        ground(mln, [Database()], [Query("P")], memory_limit="100M")


TRANSITIVE = """
Word(bib, word)
Same(bib, bib)
1 Word(x, w) ^ Word(y, w) => Same(x, y)
-1 Same(x, y)
Same(x, x).
Same(x, y) => Same(y, x).
Same(x, y) ^ Same(y, z) => Same(x, z).
"""


def test_learning_suggests_dropping_hard_formulas_and_can(tmp_path, capsys):
    bibs = [f"B{i}" for i in range(60)]
    lines = [f"Word({b}, W{i // 3})" for i, b in enumerate(bibs)]
    lines += [f"Same({a}, {b})" for i, a in enumerate(bibs) for b in bibs[i - i % 3:i - i % 3 + 3]]
    (tmp_path / "m.mln").write_text(TRANSITIVE)
    (tmp_path / "t.db").write_text("\n".join(lines) + "\n")
    out = tmp_path / "learned.mln"
    args = ["learn", "-i", str(tmp_path / "m.mln"), "-t", str(tmp_path / "t.db"), "--ne", "Same",
            "--method", "perceptron", "-o", str(out), "--memory-limit", "20M"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "would produce 216,000 ground clauses" in err and "--drop-hard" in err and "Traceback" not in err
    assert not out.exists()
    assert main(args + ["--drop-hard"]) == 0
    learned = MLN.from_file(out)
    assert sum(f.hard for f in learned.formulas) == 3                 # kept unchanged
    assert all(f.weight is not None for f in learned.formulas if not f.hard)
    # -g counts while grounding and holds no clause: the hard formulas fit in the budget
    out.unlink()
    generative = ["learn", "-i", str(tmp_path / "m.mln"), "-t", str(tmp_path / "t.db"), "--ne", "Same", "-g",
                  "-o", str(out), "--memory-limit", "20M"]
    assert main(generative) == 0 and MLN.from_file(out).formulas


@pytest.mark.parametrize("text, size", [("8G", 8 << 30), ("512M", 512 << 20), ("1.5g", int(1.5 * (1 << 30)))])
def test_memory_limit_sizes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["lots", "-1G", "12Q", "10"])
def test_bad_memory_limits(text):
    with pytest.raises(ValueError):
        parse_size(text)


def test_a_model_file_too_large_to_parse_within_the_budget_is_refused(tmp_path, capsys):
    """Issue 16, item 3: the size of the .mln text is checked against the
    budget before it is read (parsing takes ~160 bytes per byte)."""
    path = tmp_path / "big.mln"
    path.write_text("P(t)\nQ(t)\n" + "".join(f"{i % 7}.5 P(x) => Q(x)\n" for i in range(2000)))
    assert main(["check", "-i", str(path), "--memory-limit", "1M"]) == 2
    assert "over the memory budget of 1.0 MB" in capsys.readouterr().err
    assert len(MLN.from_file(path).formulas) == 2000     # within the default budget it parses
