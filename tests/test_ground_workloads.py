"""Every Tuffy workload and Alchemy's example ground, with the expected sizes.

Figures to match: Alchemy grounds cse to 4,624 atoms / 161,932 clauses and
rc1000 to 1,389 / 201,927; Tuffy's closure of class has 9,650 atoms in 546
components.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from markovlogic.ground import ground
from markovlogic.lang.parser import parse_queries
from markovlogic.model import MLN, Database

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data not found at {DATA}")


def _tuffy(name: str, **options):
    d = DATA / "tuffy" / name
    mln = MLN.from_file(d / "prog.mln")
    db = Database.from_file(d / "evidence.db", mln=mln)
    queries = parse_queries((d / "query.db").read_text(), mln)
    return ground(mln, db, queries, **options)


def _check_network(net):
    assert (np.diff(net.clause_start) > 0).all()
    assert net.lit_atom.min(initial=0) >= 0 and net.lit_atom.max(initial=-1) < net.n_atoms
    assert net.is_query.sum() == net.stats["query_atoms"]
    # each component holds a query atom (closure)
    assert set(np.unique(net.component[net.is_query]).tolist()) == set(range(net.n_components))
    # no clause holds an atom twice
    clause = np.repeat(np.arange(net.n_clauses), np.diff(net.clause_start))
    pairs = clause.astype(np.int64) * net.n_atoms + net.lit_atom
    assert len(np.unique(pairs)) == len(pairs)


def test_smoke():
    net = _tuffy("smoke")
    _check_network(net)
    # Smokes has evidence, so it is closed-world (Alchemy): only Cancer atoms remain
    assert net.stats["atoms"] == 6 and net.n_clauses == 2
    net = _tuffy("smoke", open_=["Smokes"])          # Tuffy's reading: Smokes open
    _check_network(net)
    assert net.n_atoms == 10


def test_cse_matches_alchemy():
    net = _tuffy("cse")
    _check_network(net)
    assert (net.n_atoms, net.n_clauses) == (4624, 161932)


def test_rc1000_matches_alchemy():
    net = _tuffy("rc1000")
    _check_network(net)
    assert (net.n_atoms, net.n_clauses) == (1389, 201927)
    assert net.is_hard.all()


def test_class_matches_tuffy_closure():
    net = _tuffy("class")
    _check_network(net)
    assert net.n_atoms == 9650 and net.n_components == 546


def test_alchemy_example():
    d = DATA / "alchemy"
    mln = MLN.from_file(d / "example-model.mln")
    db = Database.from_file(d / "example-evidence.db", mln=mln)
    net = ground(mln, db, parse_queries("Smokes,Cancer,Friends", mln))
    _check_network(net)
    # 3 people: Smokes 3 - 1 evidence... all Smokes/Cancer/Friends atoms of query predicates
    # that are not evidence: 2 Smokes + 3 Cancer + 7 Friends
    assert net.n_atoms == 12
    names = set(net.atom_names())
    assert "Smokes(Jerry)" not in names and "Friends(Jerry,Elaine)" not in names
