"""Learning with hidden and missing atoms (learn/hidden.py): the observed-data
gradient, hard and soft EM, checked against enumeration."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from markovlogic.cli import main
from markovlogic.errors import LearningError, OptionError
from markovlogic.ground.network import GroundNetwork
from markovlogic.learn.engines import ExactEngine
from markovlogic.learn.hidden import HiddenOptions, clamped, learn_hidden, observed_log_likelihood, prepare_hidden
from markovlogic.learn.synthetic import replicate, sample_exact, world_distribution

TRUE = np.array([1.5, 1.2, 0.8, -0.3, -0.8, -0.5])
FIXED = 3        # the prior over the hidden atom: a fixed weight


def _base(w) -> GroundNetwork:
    """Atoms 0-2 observed, atom 3 hidden: H => O1, H => O2, H => O3, @w H, O1, O2."""
    net = GroundNetwork.from_clauses(4, [(w[0], [(3, False), (0, True)]), (w[1], [(3, False), (1, True)]),
                                         (w[2], [(3, False), (2, True)]), (w[3], [(3, True)]),
                                         (w[4], [(0, True)]), (w[5], [(1, True)])])
    info = list(net.param_info)
    info[FIXED] = replace(info[FIXED], fixed=True)
    return replace(net, param_info=tuple(info))


def _data(n: int, seed: int) -> GroundNetwork:
    worlds = sample_exact(_base(TRUE), n, np.random.default_rng(seed)).astype(np.int8)
    worlds[:, 3] = -1
    start = _base(np.where(np.arange(6) == FIXED, TRUE[FIXED], 0.0))
    return replicate(start, n, worlds)


@pytest.fixture(scope="module")
def train():
    return _data(400, 0)


@pytest.fixture(scope="module")
def heldout():
    return prepare_hidden([_data(2000, 1)])


def test_clamped_network_gives_conditional_expectations():
    net = _base(TRUE)
    world = np.array([True, False, True, False])
    mask = np.array([True, True, True, False])
    mc = ExactEngine(clamped(net, world, mask)).moments(TRUE)
    bits, p = world_distribution(net)
    keep = (bits[:, :3] == world[:3]).all(axis=1)
    q = p * keep
    q /= q.sum()
    counts = np.array([net.feature_counts(b) for b in bits])
    assert np.allclose(mc.mean, q @ counts)


@pytest.mark.parametrize("em", [None, "soft"])
def test_exact_learning_reaches_the_true_weights_likelihood(train, heldout, em):
    res = learn_hidden([train], options=HiddenOptions(em=em, inference="exact", iterations=60, prior_stddev=None))
    n = 2000
    true_ll = observed_log_likelihood(heldout, TRUE) / n
    learned_ll = observed_log_likelihood(heldout, res.params) / n
    zero_ll = observed_log_likelihood(heldout, np.where(np.arange(6) == FIXED, TRUE[FIXED], 0.0)) / n
    # margin: 0.01 nats per copy (the estimation error of 400 training copies); all-zero weights are 0.06 worse
    assert learned_ll >= true_ll - 0.01
    assert zero_ll < true_ll - 0.04
    assert res.params[FIXED] == TRUE[FIXED]           # the prior never moves


def test_soft_em_never_decreases_its_objective(train):
    res = learn_hidden([train], options=HiddenOptions(em="soft", inference="exact", iterations=25))
    objective = [r.objective for r in res.trace]
    assert len(objective) > 3
    assert all(b >= a - 1e-9 for a, b in zip(objective, objective[1:]))


def test_mcsat_gradient_within_margin(train, heldout):
    res = learn_hidden([train], options=HiddenOptions(inference="mcsat", iterations=80, samples=10), seed=3)
    n = 2000
    assert observed_log_likelihood(heldout, res.params) / n >= observed_log_likelihood(heldout, TRUE) / n - 0.02
    assert res.params[FIXED] == TRUE[FIXED]


def test_hard_em_improves_and_stops(train, heldout):
    start = np.where(np.arange(6) == FIXED, TRUE[FIXED], 0.0)
    res = learn_hidden([train], options=HiddenOptions(em="hard", inference="exact", iterations=10))
    assert observed_log_likelihood(heldout, res.params) > observed_log_likelihood(heldout, start)
    assert res.params[FIXED] == TRUE[FIXED]


def test_unanchored_hidden_predicate_is_refused():
    net = GroundNetwork.from_clauses(2, [(0.0, [(0, False), (1, True)])])
    net = replace(net, atom_pred=np.array([0, 1], dtype=np.int32), predicates=("O", "H"),
                  truth=np.array([1, -1], dtype=np.int8))
    with pytest.raises(LearningError, match="every atom of H is unknown"):
        learn_hidden([net])


def test_options_are_checked():
    with pytest.raises(OptionError, match="exact"):
        HiddenOptions(em="soft", inference="mcsat").check()
    with pytest.raises(OptionError, match="--em"):
        HiddenOptions(em="medium").check()


MODEL = """\
Smokes(person)
Cancer(person)
Cough(person)
0 Smokes(x) => Cancer(x)
0 Cancer(x) => Cough(x)
0 Cough(x)
@-1 Cancer(x)
"""


@pytest.fixture()
def smokers(tmp_path):
    rng = np.random.default_rng(0)
    lines = []
    for i in range(40):
        s = rng.random() < 0.4
        c = rng.random() < (0.8 if s else 0.1)
        co = rng.random() < (0.9 if c else 0.15)
        lines.append(("" if s else "!") + f"Smokes(P{i})")
        lines.append(("" if co else "!") + f"Cough(P{i})")
    (tmp_path / "m.mln").write_text(MODEL)
    (tmp_path / "train.db").write_text("\n".join(lines) + "\n")
    return tmp_path


@pytest.mark.parametrize("extra", [[], ["--em", "hard"], ["--em", "soft", "--inference", "exact"]])
def test_cli_hidden_predicate(smokers, extra, capsys):
    out = smokers / "out.mln"
    rc = main(["learn", "-i", str(smokers / "m.mln"), "-t", str(smokers / "train.db"), "-o", str(out),
               "--ne", "Smokes,Cough", "--hidden", "Cancer", "--iterations", "20", *extra])
    assert rc == 0, capsys.readouterr().err
    text = out.read_text()
    assert "@-1" in text.replace("@-1.0", "@-1")          # the prior kept as it was
    weights = {line.split(" ", 1)[1]: float(line.split()[0]) for line in text.splitlines()
               if line and line[0] in "-0123456789"}
    assert weights["Smokes(x) => Cancer(x)"] > 0


def test_cli_question_mark_atoms_are_semi_supervised(smokers, capsys):
    db = smokers / "train.db"
    db.write_text(db.read_text() + "Cancer(P1)\n!Cancer(P2)\n" + "".join(f"?Cancer(P{i})\n" for i in range(3, 40)))
    rc = main(["learn", "-i", str(smokers / "m.mln"), "-t", str(db), "-o", str(smokers / "out.mln"),
               "--ne", "Smokes,Cough,Cancer", "--iterations", "10"])
    assert rc == 0, capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--hidden", "Nothing"], "undeclared predicate"),
    (["--hidden", "Cancer", "--method", "pll"], "apply to --method dn or scg"),
    (["--em", "hard"], "has none"),
    (["--hidden", "Cancer", "--em", "soft"], "exact expectations"),
    (["--hidden", "Cancer", "--em", "often"], "choose hard or soft"),
])
def test_cli_bad_hidden_options(smokers, args, message, capsys):
    out = smokers / "out.mln"
    rc = main(["learn", "-i", str(smokers / "m.mln"), "-t", str(smokers / "train.db"), "-o", str(out),
               "--ne", "Smokes,Cough", *args])
    assert rc == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_cli_hidden_predicate_in_no_formula(smokers, capsys):
    (smokers / "m.mln").write_text(MODEL.replace("Cough(person)\n", "Cough(person)\nUnused(person)\n"))
    rc = main(["learn", "-i", str(smokers / "m.mln"), "-t", str(smokers / "train.db"), "-o", str(smokers / "o.mln"),
               "--ne", "Smokes,Cough", "--hidden", "Unused"])
    assert rc == 2
    assert "not mentioned by any formula" in capsys.readouterr().err


def test_cli_hidden_predicate_without_prior(smokers, capsys):
    (smokers / "m.mln").write_text(MODEL.replace("@-1 Cancer(x)\n", ""))
    rc = main(["learn", "-i", str(smokers / "m.mln"), "-t", str(smokers / "train.db"), "-o", str(smokers / "o.mln"),
               "--ne", "Smokes,Cough", "--hidden", "Cancer"])
    assert rc == 2
    assert "not identifiable" in capsys.readouterr().err


def test_exact_engine_enumerates_only_block_worlds():
    """Blocks cut the enumeration to one choice per block; the moments are
    those of the full enumeration."""
    rng = np.random.default_rng(5)
    clauses = [(float(rng.normal()), [(int(a), bool(rng.random() < 0.5)) for a in rng.choice(8, 2, replace=False)])
               for _ in range(14)]
    net = GroundNetwork.from_clauses(8, clauses, blocks=[[1, 2, 3], [5, 6]])
    w = net.params
    m = ExactEngine(net).moments(w)
    bits, p = world_distribution(net)
    counts = np.array([net.feature_counts(b) for b in bits])
    assert np.allclose(m.mean, p @ counts)
    assert np.allclose(m.marginals[0], p @ bits)
