"""Grounder._give_back: once the templates are ground, DuckDB's memory cap is
lowered (its tables written out to its temporary directory) and restored; the
network is the same, the cap is back, and later queries read the tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from markovlogic import MLN, Database
from markovlogic.ground import grounder
from markovlogic.lang.parser import parse_queries

SMOKERS = Path(__file__).resolve().parents[1] / "examples" / "smokers"


def _network(monkeypatch, give_back: bool):
    if give_back:
        monkeypatch.setattr(grounder, "IDLE_GIVE_BACK", -1)     # every store gives back (it is tiny)
    else:
        monkeypatch.setattr(grounder.Grounder, "_give_back", lambda self: None)
    mln = MLN.from_file(SMOKERS / "smokers.mln")
    db = Database.from_file(SMOKERS / "evidence.db", mln)
    g = grounder.Grounder(mln, [db], parse_queries("Smokes,Cancer", mln), memory_limit="2G")
    try:
        net = g.network()
        limit = g.store.con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        again = g.network()                    # the tables are read again
    finally:
        g.close()
    return net, limit, again


def test_giving_back_duckdbs_memory_keeps_the_network_and_the_cap(monkeypatch):
    a, limit_a, again = _network(monkeypatch, True)
    monkeypatch.undo()
    b, limit_b, _ = _network(monkeypatch, False)
    assert limit_a == limit_b
    for net in (b, again):
        for name, value in vars(a).items():
            if isinstance(value, np.ndarray):
                other = getattr(net, name)
                assert value.dtype == other.dtype and np.array_equal(value, other), name
