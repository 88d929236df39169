"""Issue 29, item 4: typed options objects in the public signatures (the
method follows from the object), keyword options still accepted."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from markovlogic import MLN, Database
from markovlogic.errors import ArgumentTypeError, OptionError
from markovlogic.options import (CPIOptions, DiscriminativeOptions, ExactMAPOptions, GibbsOptions, ILPOptions,
                                 MaxWalkSATOptions, MCSATOptions, PLLOptions, SampleRankOptions)

SMOKERS = Path(__file__).resolve().parents[1] / "examples" / "smokers"


@pytest.fixture(scope="module")
def model():
    mln = MLN.from_file(SMOKERS / "smokers.mln")
    return mln, Database.from_file(SMOKERS / "evidence.db", mln=mln)


def test_signatures_name_the_options():
    for name in ("map", "infer", "learn"):
        params = inspect.signature(getattr(MLN, name)).parameters
        assert "options" in params and "parallel" in params
    assert "lazy" in inspect.signature(MLN.map).parameters


def test_the_method_follows_from_the_options(model):
    mln, db = model
    answer = mln.map(db, "Smokes,Cancer", options=MaxWalkSATOptions(max_tries=2, seed=3))
    assert answer.method == "maxwalksat"
    assert mln.map(db, "Smokes,Cancer", options=ILPOptions(max_seconds=None)).optimal
    assert mln.map(db, "Smokes,Cancer", options=ExactMAPOptions()).atoms == \
        mln.map(db, "Smokes,Cancer", method="exact").atoms
    assert mln.map(db, "Smokes,Cancer", options=CPIOptions()).method == "cpi"
    m = mln.infer(db, "Cancer", options=MCSATOptions(samples=300, seed=2))
    assert m.method == "mcsat" and m.samples == 300
    assert mln.infer(db, "Cancer", options=GibbsOptions(samples=200, chains=2)).method == "gibbs"


def test_options_and_keywords_give_the_same_answer(model):
    mln, db = model
    a = mln.infer(db, "Cancer", options=MCSATOptions(samples=400, seed=5)).as_dict()
    b = mln.infer(db, "Cancer", method="mcsat", samples=400, seed=5).as_dict()
    assert a == b


def test_learning_options(model):
    mln, db = model
    a = mln.learn(db, ["Cancer"], options=PLLOptions(iterations=20))
    b = mln.learn(db, ["Cancer"], method="pll", iterations=20)
    assert [f.weight for f in a.formulas] == [f.weight for f in b.formulas]
    c = mln.learn(db, ["Cancer"], options=DiscriminativeOptions(iterations=3, inference="exact"), method="scg")
    assert len(c.formulas) >= 4


def test_mistakes_are_named(model):
    mln, db = model
    with pytest.raises(OptionError, match="contradicts"):
        mln.map(db, "Smokes", method="ilp", options=MaxWalkSATOptions())
    with pytest.raises(OptionError, match="both"):
        mln.map(db, "Smokes", options=MaxWalkSATOptions(max_tries=2), max_tries=3)
    with pytest.raises(OptionError, match="not options of marginal inference"):
        mln.infer(db, "Smokes", options=ILPOptions())
    with pytest.raises(OptionError, match="not options of MAP"):
        mln.map(db, "Smokes", options=SampleRankOptions())
    with pytest.raises(ArgumentTypeError):
        mln.map(db, "Smokes", options={"max_tries": 2})
