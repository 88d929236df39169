"""`mln eval` and what it reads: result files in Alchemy's formats, the
clusters file, truth .db files; scores by hand on small files; bad input
reported with file:line and exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from markovlogic.cli import main
from markovlogic.errors import MarkovLogicError, MLNSyntaxError, QueryError
from markovlogic.eval import clusters_from_labels, evaluate, read_clusters, read_result, write_clusters
from markovlogic.eval.resultfile import parse_result

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# truth: clusters {a, b, c} and {d, e}, f alone; the pair (a, c) is missing
# (not transitively closed, as in Cora's truth files); Smokes is ordinary
TRUTH = """\
Same(a, a)
Same(a, b)
Same(b, a)
Same(b, c)
Same(c, b)
Same(d, e)
Same(e, d)
Same(f, f)
Smokes(Anna)
Smokes(Bob)
!Smokes(Carl)
"""

MODEL = """\
Same(m, m)
Smokes(person)
Same(x, x).
Same(x, y) => Same(y, x).
Same(x, y) ^ Same(y, z) => Same(x, z).
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.fixture
def truth(tmp_path):
    return write(tmp_path, "truth.db", TRUTH)


# ------------------------------------------------------------------ reading results


def test_formats_are_detected(tmp_path):
    assert parse_result("Same(a,b)\n// c\n\nSame(b,a)\n", "r").format == "map"
    assert parse_result("", "r").format == "map"
    assert parse_result("Same(a,b) 1\nSame(a,c) 0\n", "r").format == "map-all"
    r = parse_result("Same(a,b) 0.7500\nSame(a,c) 0\n", "r")
    assert r.format == "marginals" and r.atoms["Same"].values == [0.75, 0.0]
    r = parse_result("Same\ta\tb\nSame\tc\n", "r")
    assert r.format == "clusters" and r.clusters == {"Same": [("a", "b"), ("c",)]}
    r = parse_result('P("x, y", B)\n', "r")
    assert r.atoms["P"].args == [('"x, y"', "B")]


@pytest.mark.parametrize("text, line, column, words", [
    ("Same(a,b)\nSame(a,b) 0.5\n", 2, 11, "one atom and nothing else"),
    ("Same(a,b) 0.5\nSame(a,c)\n", 2, 10, "an atom and its value"),
    ("Same(a,b) 1.5\n", 1, 11, "between 0 and 1"),
    ("Same(a,b) x\n", 1, 11, "between 0 and 1"),
    ("Same(a,b)\nSame(a,\n", 2, 1, "malformed result line"),
    ("  hello world\n", 1, 3, "malformed result line"),
    ("Same\ta\t\tb\n", 1, 8, "empty constant"),
    ("Same\ta\tb\nSame\tb\n", 2, 6, "already in the cluster on line 1"),
    ("Same\ta\nSame a b\n", 2, 1, "expected a predicate name"),
    ("Same\ta\nSame\n", 2, 5, "without constants"),
])
def test_malformed_results(text, line, column, words):
    with pytest.raises(MLNSyntaxError) as info:
        parse_result(text, "out.result")
    err = info.value
    assert (err.file, err.line, err.column) == ("out.result", line, column)
    assert words in err.message


def test_clusters_file_round_trip(tmp_path):
    names = ["a", "b", "c", "d", "e"]
    groups = clusters_from_labels(names, np.array([3, 1, 3, 3, 7]))
    assert groups == [("a", "c", "d"), ("b",), ("e",)]
    path = tmp_path / "out.clusters"
    write_clusters(path, {"Same": groups, "Other": [("x", "y")]})
    assert path.read_text().splitlines()[0] == "Same\ta\tc\td"
    assert read_clusters(path) == {"Same": groups, "Other": [("x", "y")]}
    with pytest.raises(MarkovLogicError, match="tab"):
        write_clusters(tmp_path / "bad", {"Same": [("a\tb",)]})
    assert not (tmp_path / "bad").exists()


# ------------------------------------------------------------------ scores


def test_map_result_equivalence(tmp_path, truth):
    """Predicted {a, b}, {c, d, e}, f: pairs ab, cd, ce, de (either
    orientation, reflexive atoms ignored) against true ab, bc, de.
    Clusters: truth {a,b,c} {d,e} {f} (components), prediction {a,b} {c,d,e} {f}."""
    result = write(tmp_path, "out.result", "Same(a,b)\nSame(b,a)\nSame(c,d)\nSame(e,c)\nSame(d,e)\nSame(f,f)\n")
    s = evaluate(result, truth, ["Same"])
    f = s["predicates"]["Same"]
    assert f["kind"] == "equivalence" and f["equivalence_from"] == "symmetric truth"
    assert (f["pairs_common"], f["pairs_predicted"], f["pairs_true"]) == (2, 4, 3)
    assert f["precision"] == pytest.approx(0.5) and f["recall"] == pytest.approx(2 / 3)
    assert f["pairwise_f1"] == f["f1"] == s["f1"]
    # B3 precision: a, b: 1; c: 1/3; d, e: 2/3; f: 1 -> (1+1+1/3+2/3+2/3+1)/6
    assert f["b3_precision"] == pytest.approx((1 + 1 + 1 / 3 + 2 / 3 + 2 / 3 + 1) / 6)
    # B3 recall: a, b: 2/3; c: 1/3; d, e: 1; f: 1
    assert f["b3_recall"] == pytest.approx((2 / 3 + 2 / 3 + 1 / 3 + 1 + 1 + 1) / 6)
    # MUC: truth {a,b,c} cut in 2, {d,e} whole: (6 - 4) / (6 - 3); prediction {c,d,e} cut in 2: (6-4)/(6-3)
    assert f["muc_recall"] == pytest.approx(2 / 3) and f["muc_precision"] == pytest.approx(2 / 3)
    # CEAF-e: {a,b,c}-{a,b} 4/5, {d,e}-{c,d,e} 4/5, {f}-{f} 1: 2.6 over 3 and 3
    assert f["ceafe_f1"] == pytest.approx(2.6 / 3)
    assert (f["constants"], f["true_clusters"], f["predicted_clusters"]) == (6, 3, 3)
    assert "auc_pr" not in f
    # cluster recall: of {a,b,c} {d,e} {f} only {f} is output exactly
    assert f["cluster_recall"] == pytest.approx(1 / 3) and f["clusters_exact"] == 1
    assert f["cluster_precision"] == pytest.approx(1 / 3)


def test_map_result_cluster_recall_after_closure(tmp_path, truth, capsys):
    """An unclosed result (a-b, b-c, no a-c) closes to {a,b,c}: that true
    cluster is output exactly; pairwise figures as given and after closure differ."""
    result = write(tmp_path, "out.result", "Same(a,b)\nSame(b,c)\n")
    f = evaluate(result, truth, ["Same"])["predicates"]["Same"]
    assert f["pairs_predicted"] == 2 and f["pairwise_precision"] == 1.0
    # after closure on both sides: ab, bc, ac against the true ab, bc, ac, de
    assert f["closure_pairwise_precision"] == 1.0 and f["closure_pairwise_recall"] == pytest.approx(3 / 4)
    # true clusters {a,b,c}, {d,e}, {f}; predicted {a,b,c}, {d}, {e}, {f}
    assert f["cluster_recall"] == pytest.approx(2 / 3) and f["cluster_precision"] == pytest.approx(2 / 4)
    assert main(["eval", "-r", str(result), "-t", str(truth), "-q", "Same"]) == 0
    out = capsys.readouterr().out
    assert "pairwise, closed" in out and "clusters exact" in out


def test_clusters_result(tmp_path, truth):
    """A clusters file predicts every pair inside a cluster; the truth's
    clusters are its components, so the truth's own clustering scores 1 on
    the cluster metrics, while its pairs (ab, ac, bc, de) include ac, which
    the truth's pair set lacks: pairwise precision 3/4."""
    result = write(tmp_path, "out.clusters", "Same\ta\tb\tc\nSame\td\te\n")
    f = evaluate(result, truth, ["Same"])["predicates"]["Same"]
    assert f["equivalence_from"] == "clusters file"
    assert (f["pairs_common"], f["pairs_predicted"], f["pairs_true"]) == (3, 4, 3)
    assert f["b3_f1"] == f["muc_f1"] == f["ceafe_f1"] == pytest.approx(1.0)   # f is a singleton on both sides
    assert f["constants"] == 6


def test_marginal_result_equivalence(tmp_path, truth):
    """Pair probability = the larger orientation; predicted at >= 0.5.
    Pairs: ab .9 (ba .2), bc .6, de .4, ac .7, af .1. Ranking over listed
    pairs and true ones: ab(+) .9, ac(-) .7, bc(+) .6, de(+) .4, af(-) .1."""
    result = write(tmp_path, "out.result",
                   "Same(a,b) 0.9\nSame(b,a) 0.2\nSame(b,c) 0.6\nSame(d,e) 0.4\nSame(a,c) 0.7\nSame(a,f) 0.1\n"
                   "Same(a,a) 1\n")
    f = evaluate(result, truth, ["Same"])["predicates"]["Same"]
    assert (f["pairs_common"], f["pairs_predicted"], f["pairs_true"]) == (2, 3, 3)
    assert f["auc_pr"] == pytest.approx((1 + 2 / 3 + 3 / 4) / 3)
    expected = np.mean(np.log([0.9, 1 - 0.7, 0.6, 0.4, 1 - 0.1]))
    assert f["cll"] == pytest.approx(expected)


def test_ordinary_predicate(tmp_path, truth):
    result = write(tmp_path, "out.result", "Smokes(Anna) 0.8\nSmokes(Carl) 0.6\nSmokes(Dan) 0.1\n")
    s = evaluate(result, truth, ["Smokes"])
    f = s["predicates"]["Smokes"]
    assert f["kind"] == "atoms"
    # predicted Anna, Carl; true Anna, Bob
    assert (f["common"], f["predicted"], f["true"]) == (1, 2, 2)
    assert s["precision"] == pytest.approx(0.5) and s["recall"] == pytest.approx(0.5)
    # ranking: Anna(+) .8, Carl(-) .6, Dan(-) .1, Bob(+, not listed) 0
    assert f["auc_pr"] == pytest.approx((1 + 2 / 4) / 2)
    assert f["cll"] == pytest.approx(np.mean(np.log([0.8, 0.4, 0.9, 1e-4])))
    m = evaluate(write(tmp_path, "map.result", "Smokes(Anna) 1\nSmokes(Bob) 0\n"), truth, ["Smokes"])
    assert m["format"] == "map-all" and m["f1"] == pytest.approx(2 / 3) and "auc_pr" not in m


def test_equivalence_sources(tmp_path, truth):
    result = write(tmp_path, "out.result", "Same(a,b)\n")
    # an asymmetric truth is scored as atoms without a model or the option
    asym = write(tmp_path, "asym.db", "Same(a,b)\nSame(b,c)\n")
    assert evaluate(result, asym, ["Same"])["kind"] == "atoms"
    assert evaluate(result, asym, ["Same"], equivalence=["Same"])["equivalence_from"] == "option"
    from markovlogic import MLN

    mln = MLN.from_string(MODEL)
    assert evaluate(result, asym, ["Same"], mln=mln)["equivalence_from"] == "model"
    without = MLN.from_string(MODEL.replace("Same(x, x).\n", ""))
    assert evaluate(result, truth, ["Same"], mln=without)["kind"] == "atoms"
    with pytest.raises(QueryError, match="binary"):
        evaluate(write(tmp_path, "s.result", "Smokes(Anna)\n"), truth, ["Smokes"], equivalence=["Smokes"])


def test_several_predicates(tmp_path, truth):
    result = write(tmp_path, "out.result", "Same(a,b)\nSmokes(Anna)\n")
    s = evaluate(result, truth, ["Smokes", "Same"])
    assert s["predicate"] == "Smokes" and s["f1"] == s["predicates"]["Smokes"]["f1"]
    assert set(s["predicates"]) == {"Smokes", "Same"}


# ------------------------------------------------------------------ the command


def test_cli_writes_json(tmp_path, truth, capsys):
    result = write(tmp_path, "out.result", "Same(a,b)\nSame(b,c)\nSame(d,e)\n")
    stats = tmp_path / "stats.json"
    mln = write(tmp_path, "m.mln", MODEL)
    assert main(["eval", "-r", str(result), "-t", str(truth), "-q", "Same", "-i", str(mln),
                 "--stats-json", str(stats)]) == 0
    out = capsys.readouterr().out
    assert "B-cubed" in out and "CEAF-e" in out
    figures = json.loads(stats.read_text())
    for key in ("precision", "recall", "f1", "b3_f1", "muc_f1", "ceafe_f1", "pairwise_f1"):
        assert figures[key] == pytest.approx(1.0)
    assert figures["equivalence_from"] == "model"


@pytest.mark.parametrize("args, words", [
    (["-r", "missing.result"], "result file not found: missing.result"),
    (["-t", "missing.db"], "truth file not found: missing.db"),
    (["-q", "Nope"], "predicate Nope has no atom in the truth file"),
    (["-i", "missing.mln"], "MLN file not found"),
])
def test_cli_bad_input(tmp_path, truth, capsys, monkeypatch, args, words):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "out.result", "Same(a,b)\n")
    base = {"-r": "out.result", "-t": str(truth), "-q": "Same"}
    base.update(dict(zip(args[::2], args[1::2])))
    argv = ["eval"] + [x for kv in base.items() for x in kv]
    assert main(argv) == 2
    assert words in capsys.readouterr().err


def test_cli_malformed_line(tmp_path, truth, capsys):
    result = write(tmp_path, "out.result", "Same(a,b)\nSame(a,c\n")
    assert main(["eval", "-r", str(result), "-t", str(truth), "-q", "Same"]) == 2
    err = capsys.readouterr().err
    assert f"{result}:2:1: malformed result line" in err


def test_cli_arity_mismatch(tmp_path, truth, capsys):
    result = write(tmp_path, "out.result", "Same(a,b)\nSame(a,b,c)\n")
    assert main(["eval", "-r", str(result), "-t", str(truth), "-q", "Same"]) == 2
    assert f"{result}:2:1: Same has 3 arguments here and 2 in the truth file" in capsys.readouterr().err


def test_cli_undeclared_with_model(tmp_path, truth, capsys):
    mln = write(tmp_path, "m.mln", MODEL)
    result = write(tmp_path, "out.result", "Same(a,b)\n")
    assert main(["eval", "-r", str(result), "-t", str(truth), "-q", "Other", "-i", str(mln)]) == 2
    assert "predicate Other is not declared in the model" in capsys.readouterr().err


# ------------------------------------------------------------------ Cora


def test_cora_truth_closure(tmp_path):
    """fold 1's test truth is not transitively closed: its own clusters
    (components) score 1 on every cluster metric, while their pairs include
    pairs its pair set lacks, so pairwise precision is below 1 and recall 1."""
    folder = DATA / "cora" / "fold1"
    if not (folder / "test-truth.db").is_file():
        pytest.skip(f"Cora data not found at {folder}")
    truth = folder / "test-truth.db"
    same = evaluate(truth, truth, ["SameBib", "SameAuthor"])
    assert same["f1"] == 1.0 and same["b3_f1"] == 1.0 and same["predicates"]["SameAuthor"]["ceafe_f1"] == 1.0
    from markovlogic.eval.coref import Pairs

    res = read_result(truth)
    table = res.atoms["SameBib"]
    names = sorted({c for a in table.args for c in a})
    index = {c: i for i, c in enumerate(names)}
    pairs = Pairs.from_arrays(len(names), [index[a] for a, _ in table.args], [index[b] for _, b in table.args])
    out = tmp_path / "truth.clusters"
    write_clusters(out, {"SameBib": clusters_from_labels(names, pairs.clusters())})
    f = evaluate(out, truth, ["SameBib"])
    assert f["b3_f1"] == f["muc_f1"] == f["ceafe_f1"] == 1.0
    assert f["recall"] == 1.0 and f["pairs_predicted"] > f["pairs_true"] == 2486
