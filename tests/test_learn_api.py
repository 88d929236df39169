"""Weight learning from a model and databases (grounding included), and the
``mln learn`` command."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from markovlogic.cli import main
from markovlogic.errors import LearningError, OptionError, QueryError
from markovlogic.learn.api import learn_model
from markovlogic.model import MLN, Database

TRUE = {"Smokes(x)": 0.5, "Smokes(x) => Cancer(x)": 1.2, "Cancer(x)": -0.8}
DECLS = "Smokes(person)\nCancer(person)\n"


def sample_people(n: int, seed: int) -> str:
    """n independent people drawn exactly from the model above, as .db text."""
    worlds = [(s, c) for s in (0, 1) for c in (0, 1)]
    score = np.array([TRUE["Smokes(x)"] * s + TRUE["Smokes(x) => Cancer(x)"] * ((not s) or c) + TRUE["Cancer(x)"] * c
                      for s, c in worlds])
    p = np.exp(score - score.max())
    draws = np.random.default_rng(seed).choice(4, size=n, p=p / p.sum())
    lines = []
    for i, k in enumerate(draws):
        s, c = worlds[k]
        lines.append(f"{'' if s else '!'}Smokes(P{i})")
        if c:
            lines.append(f"Cancer(P{i})")
    return "\n".join(lines) + "\n"


def model(weights: bool = False) -> MLN:
    body = "\n".join(f"{'0 ' if weights else ''}{f}" for f in TRUE)
    return MLN.from_string(DECLS + body + "\n")


def learned_weights(m: MLN) -> np.ndarray:
    return np.array([f.weight for f in m.formulas])


@pytest.fixture(scope="module")
def train_db():
    mln = model()
    return Database.from_string(sample_people(3000, 0), mln=mln)


@pytest.mark.parametrize("method,options", [("pll", {}), ("dn", {"inference": "exact"}), ("scg", {"inference": "exact"})])
def test_weights_recovered_through_grounding(train_db, method, options):
    mln = model()
    result = learn_model(mln, [train_db], query_predicates=["Smokes", "Cancer"], method=method,
                         prior_stddev=100.0, **options)
    if method == "pll":      # counted while grounding (learn/pll_stream.py): no network kept
        assert result.networks == [] and result.result.stats["query_atoms"] == 6000
    else:
        assert result.networks[0].n_atoms == 6000
    assert np.max(np.abs(learned_weights(result.mln) - np.array(list(TRUE.values())))) < 0.2
    # the learned model is the text, parsed
    assert MLN.from_string(result.text) == result.mln
    assert result.mln.predicates == mln.predicates


def test_mln_learn_method_and_defaults(train_db):
    mln = model()
    learned = mln.learn(train_db, query_predicates=["Cancer"], method="dn", inference="exact", iterations=30)
    assert len(learned.formulas) == 3 and all(f.weight is not None for f in learned.formulas)
    # pll without query predicates learns every predicate
    m = learn_model(mln, [train_db], method="pll")
    assert m.query_predicates == ["Smokes", "Cancer"]


def test_unknown_truth_and_bad_options(train_db):
    mln = model()
    db = Database.from_string("Smokes(A)\n?Cancer(A)\nCancer(B)\n", mln=mln)
    # unknown atoms: dn learns by the observed-data likelihood (learn/hidden.py); the others refuse
    learned = learn_model(mln, [db], query_predicates=["Cancer"], method="dn", inference="exact", iterations=5)
    assert learned.result.stats["hidden_atoms"] == 1
    with pytest.raises(OptionError, match="needs every truth value"):
        learn_model(mln, [db], query_predicates=["Cancer"], method="perceptron")
    with pytest.raises(QueryError, match="unknown query predicate Cancr"):
        learn_model(mln, [train_db], query_predicates=["Cancr"])
    with pytest.raises(OptionError, match="--ne"):
        learn_model(mln, [train_db], method="dn")
    with pytest.raises(OptionError, match="unknown learning method"):
        learn_model(mln, [train_db], query_predicates=["Cancer"], method="newton")
    with pytest.raises(OptionError, match="learning-rate does not apply to --method dn"):
        learn_model(mln, [train_db], query_predicates=["Cancer"], method="dn", learning_rate=0.1)


def test_multiple_databases_are_independent_worlds():
    mln = model()
    a = Database.from_string(sample_people(200, 1), mln=mln)
    text_b = sample_people(300, 2).replace("(P", "(Q")
    b = Database.from_string(text_b, mln=mln)
    one = learn_model(mln, [a, b], query_predicates=["Smokes", "Cancer"], method="scg", inference="exact")
    two = learn_model(mln, [a, b], query_predicates=["Smokes", "Cancer"], method="scg", inference="exact",
                      multiple_databases=True)
    assert len(one.networks) == 1 and len(two.networks) == 2
    # disjoint constants: one world or two, the counts are the same
    assert np.allclose(learned_weights(one.mln), learned_weights(two.mln), atol=1e-3)


def test_split_formula_learns_a_weight_per_clause():
    mln = MLN.from_string(DECLS + "Smokes(x) <=> Cancer(x)\n")
    db = Database.from_string("Smokes(A)\nCancer(A)\nSmokes(B)\nCancer(C)\nSmokes(D)\nCancer(D)\n", mln=mln)
    m = learn_model(mln, [db], query_predicates=["Cancer"], method="dn", inference="exact")
    lines = m.text.splitlines()
    i = lines.index("// Smokes(x) <=> Cancer(x)")
    assert lines[i + 1].endswith("!Smokes(x) v Cancer(x)") and lines[i + 2].endswith("Smokes(x) v !Cancer(x)")
    assert len(m.result.params) == 2


# ---------------------------------------------------------------- the command


def test_cli_learn_writes_model_trace_and_plot(tmp_path):
    prog = tmp_path / "prog.mln"
    prog.write_text(DECLS + "\n".join(TRUE) + "\n")
    train = tmp_path / "train.db"
    train.write_text(sample_people(500, 3))
    out, trace, plot = tmp_path / "learned.mln", tmp_path / "trace.csv", tmp_path / "curve.png"
    status = main(["learn", "-i", str(prog), "-t", str(train), "-o", str(out), "-ne", "Smokes,Cancer",
                   "--method", "scg", "--inference", "exact", "--iterations", "20",
                   "--trace", str(trace), "--plot", str(plot)])
    assert status == 0
    learned = MLN.from_file(out)
    assert [f.weight is not None for f in learned.formulas] == [True] * 3
    rows = list(csv.reader(trace.open()))
    assert rows[0][:3] == ["iteration", "objective", "seconds"] and len(rows[0]) == 6
    assert 2 <= len(rows) <= 21
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Alchemy's -g: pseudo-likelihood
    assert main(["learn", "-i", str(prog), "-t", str(train), "-o", str(out), "-g"]) == 0


def test_cli_learn_failure_writes_nothing(tmp_path, capsys):
    prog = tmp_path / "prog.mln"
    prog.write_text(DECLS + "\n".join(TRUE) + "\n")
    train = tmp_path / "train.db"
    train.write_text("Smokes(A)\n?Cancer(A)\n")
    out = tmp_path / "learned.mln"
    assert main(["learn", "-i", str(prog), "-t", str(train), "-o", str(out), "--ne", "Cancer",
                 "--inference", "exact"]) == 2
    assert "unknown" in capsys.readouterr().err
    assert not out.exists()
    assert main(["learn", "-i", str(prog), "-t", str(train), "-o", str(out), "-g", "--method", "dn"]) == 2
    assert "contradicts" in capsys.readouterr().err
    assert set(tmp_path.iterdir()) == {prog, train}
