"""The Cora entity-resolution examples: they parse, and on a small citation
database cutting-plane MAP (transitivity instantiated lazily) equals
enumeration of the full ground network and returns an equivalence relation."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from markovlogic import MLN, Database
from markovlogic.ground import ground
from markovlogic.infer.exact import exact_map
from markovlogic.lang.ast import Query

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "cora-er"

# two papers cited twice each: the same title with an author variant, and a
# title variant (one word differs) with the same author and venue
CITATIONS = {
    "B1": ("T_learn", "A_smith", "V_icml", ["learning", "rules", "fast", "boosting"], ["smith"], ["icml", "proc"]),
    "B2": ("T_learn", "A_smith2", "V_icml", ["learning", "rules", "fast", "boosting"], ["smith", "j"],
           ["icml", "proc"]),
    "B3": ("T_graph", "A_jones", "V_aaai", ["graph", "search", "heuristic", "optimal", "bounded"], ["jones"],
           ["aaai", "conf"]),
    "B4": ("T_graph2", "A_jones", "V_aaai", ["graph", "search", "heuristics", "optimal", "bounded"], ["jones"],
           ["aaai", "conf"]),
}


def _evidence() -> str:
    lines = []
    for bib, (title, author, venue, tw, aw, vw) in CITATIONS.items():
        lines += [f"Title({bib},{title})", f"Author({bib},{author})", f"Venue({bib},{venue})"]
        lines += [f"HasWordTitle({title},W_{w})" for w in tw]
        lines += [f"HasWordAuthor({author},W_{w})" for w in aw]
        lines += [f"HasWordVenue({venue},W_{w})" for w in vw]
    return "\n".join(sorted(set(lines))) + "\n"


def _pairs(atoms) -> set[tuple[str, str]]:
    out = set()
    for atom in atoms:
        m = re.match(r"^SameBib\((\w+),(\w+)\)$", str(atom).replace(" ", ""))
        if m:
            out.add((m.group(1), m.group(2)))
    return out


@pytest.mark.parametrize("name", ["cora-er.mln", "cora-pairwise.mln"])
def test_example_models_parse(name):
    mln = MLN.from_file(EXAMPLES / name)
    assert "SameBib" in mln.predicates
    assert any(f.hard for f in mln.formulas)   # the hard equivalence rules


def test_pairwise_model_cpi_map_is_the_enumerated_optimum_and_an_equivalence():
    mln = MLN.from_file(EXAMPLES / "cora-pairwise.mln")
    db = Database.from_string(_evidence(), filename="citations.db", mln=mln)
    answer = mln.map(db, queries=["SameBib"], method="cpi")
    assert answer.optimal and answer.hard_violated == 0
    same = _pairs(answer.atoms)
    bibs = sorted(CITATIONS)
    assert all((b, b) in same for b in bibs)
    assert all((b, a) in same for a, b in same)
    assert all((a, c) in same for (a, b), (b2, c) in itertools.product(same, same) if b == b2)
    # the same papers, told apart
    assert {("B1", "B2"), ("B3", "B4")} <= same
    assert not any((a, b) in same for a in ("B1", "B2") for b in ("B3", "B4"))

    full = ground(mln, [db], [Query("SameBib")])
    best = exact_map(full)
    # CPI reports the cost on the full network (its score covers the instantiated part)
    assert answer.cost == pytest.approx(best.cost, abs=1e-6)
