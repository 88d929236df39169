"""The CoNLL-U reader: trees, extra columns, and errors naming file and line."""

import pytest

from markovlogic.text import TextError, read_conllu, read_conllu_lines

GOOD = """# newdoc id = d1
# sent_id = s1
# text = Bush bought it.
1\tBush\tBush\tPROPN\tNNP\tNumber=Sing\t2\tnsubj\t_\t_\tARG0
2-3\tbought\t_\t_\t_\t_\t_\t_\t_\t_
2\tbought\tbuy\tVERB\tVBD\tTense=Past\t0\troot\t_\tSpaceAfter=No\tV
3\tit\tit\tPRON\tPRP\tGender=Neut|Number=Sing\t2\tobj\t_\t_\tARG1
4\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_\t_

# sent_id = s2
1\tYes\tyes\tINTJ\tUH\t_\t0\troot\t_\t_\t_
"""


def _lines(text):
    return text.splitlines(keepends=True)


def test_reads_tokens_metadata_and_extra_columns():
    s1, s2 = read_conllu_lines(_lines(GOOD), "x.conllu")
    assert s1.doc_id == "d1" and s2.doc_id == "d1"
    assert s1.sent_id == "s1" and s1.text == "Bush bought it."
    assert [t.form for t in s1.tokens] == ["Bush", "bought", "it", "."]
    assert s1.tokens[2].feats == {"Gender": "Neut", "Number": "Sing"}
    assert s1.tokens[1].misc == {"SpaceAfter": "No"}
    assert s1.tokens[0].extra == ("ARG0",)
    assert s1.heads() == [2, 0, 2, 2]
    assert s1.children()[2] == [1, 3, 4]
    assert s1.ranges == [(2, 3, "bought", 5)]
    assert s1.tokens[0].line == 4 and s2.line == 10


@pytest.mark.parametrize("bad, line, words", [
    ("1\tA\ta\tX\tX\t_\t0\troot\t_\n", 1, "10 tab-separated columns"),
    ("1\tA\ta\tX\tX\t_\t2\tdep\t_\t_\n2\tB\tb\tX\tX\t_\t1\tdep\t_\t_\n", 1, "0 root"),
    ("1\tA\ta\tX\tX\t_\t0\troot\t_\t_\n2\tB\tb\tX\tX\t_\t3\tdep\t_\t_\n3\tC\tc\tX\tX\t_\t2\tdep\t_\t_\n", 2, "cycle"),
    ("1\tA\ta\tX\tX\t_\t0\troot\t_\t_\n3\tB\tb\tX\tX\t_\t1\tdep\t_\t_\n", 2, "out of sequence"),
    ("1\tA\ta\tX\tX\t_\t0\troot\t_\t_\n2\tB\tb\tX\tX\t_\t7\tdep\t_\t_\n", 2, "not a token"),
    ("1\tA\ta\tX\tX\t_\tx\troot\t_\t_\n", 1, "not a number"),
    ("1\tA\ta\tX\tX\tNumber\t0\troot\t_\t_\n", 1, "Name=Value"),
    ("1\tA\ta\tX\tX\t_\t0\troot\t_\t_\n# late comment\n", 2, "comment line inside"),
])
def test_errors_name_the_line(bad, line, words):
    with pytest.raises(TextError) as e:
        list(read_conllu_lines(_lines(bad), "bad.conllu"))
    assert e.value.file == "bad.conllu" and e.value.line == line
    assert words in str(e.value)


def test_files(tmp_path):
    p = tmp_path / "a.conllu"
    p.write_text(GOOD, encoding="utf-8")
    assert len(list(read_conllu(p))) == 2
    with pytest.raises(TextError, match="no such file"):
        list(read_conllu(tmp_path / "missing.conllu"))
    q = tmp_path / "latin1.conllu"
    q.write_bytes("1\tA\t\xe9\tX\tX\t_\t0\troot\t_\t_\n".encode("latin-1"))
    with pytest.raises(TextError, match="UTF-8"):
        list(read_conllu(q))
