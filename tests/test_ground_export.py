"""``--dump``, ``--wcnf`` and the ``mln ground`` command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from markovlogic.cli import main
from markovlogic.ground import ground
from markovlogic.ground.export import dump_text, wcnf_text
from markovlogic.ground.network import GroundNetwork
from markovlogic.lang.parser import parse_queries
from markovlogic.model import MLN, Database

MODEL = """
person = {Anna, Bob, Chris}
Smokes(person)
Cancer(person)
Friends(person, person)
Job(person, kind!)
1.5 Smokes(x) => Cancer(x)
1.1 Friends(x, y) => (Smokes(x) <=> Smokes(y))
-0.8 Smokes(x) ^ Friends(x, y)
-0.5 Cancer(x) v Smokes(x)
2 Job(x, Clerk) => !Smokes(x)
Friends(x, y) => Friends(y, x).
"""
EVIDENCE = "Friends(Anna, Bob)\nSmokes(Anna)\nJob(Chris, Clerk)\n!Job(Bob, Clerk)\n"


@pytest.fixture()
def files(tmp_path):
    m = tmp_path / "m.mln"
    e = tmp_path / "e.db"
    m.write_text(MODEL)
    e.write_text(EVIDENCE)
    return m, e


def _net(queries: str = "Smokes,Cancer,Friends,Job") -> GroundNetwork:
    mln = MLN.from_string(MODEL, "m.mln")
    db = Database.from_string(EVIDENCE, "e.db", mln=mln)
    kind = MLN.from_string(MODEL, "m.mln")
    kind.types["kind"] = ("Clerk", "Pilot", "Chef")
    return ground(kind, db, parse_queries(queries, kind))


def test_dump_lists_every_clause_with_names_and_weights():
    net = _net()
    lines = dump_text(net).splitlines()
    clause_lines = [l for l in lines if not l.startswith("block ")]
    assert len(clause_lines) == net.n_clauses
    names = net.atom_names()
    for c, line in enumerate(clause_lines):
        head, body = line.split(" ", 1)
        if net.is_hard[c]:
            assert head == "hard"
        else:
            assert float(head) == pytest.approx(net.weight[c])
        lits = body.split(" v ")
        want = [("" if p else "!") + names[a] for a, p in net.clause_literals(c)]
        assert lits == want
    blocks = [l for l in lines if l.startswith("block ")]
    assert len(blocks) == net.n_blocks > 0


def _wcnf_cost(text: str, world: np.ndarray) -> float | None:
    """Minimum cost of a WCNF over its auxiliary variables, atoms fixed (None: hard violated)."""
    n = len(world)
    hard, soft = [], []
    for line in text.splitlines():
        if line.startswith("c") or not line.strip():
            continue
        parts = line.split()
        lits = [int(x) for x in parts[1:-1]]
        (hard if parts[0] == "h" else soft).append((0 if parts[0] == "h" else int(parts[0]), lits))
    value = {i + 1: bool(world[i]) for i in range(n)}
    # auxiliary variables: true only when a hard clause forces them
    for _, lits in hard:
        aux = [l for l in lits if abs(l) > n]
        if aux:
            others = [l for l in lits if abs(l) <= n]
            forced = not any(value[abs(l)] == (l > 0) for l in others)
            value.setdefault(abs(aux[0]), False)
            if forced:
                value[abs(aux[0])] = True
    for _, lits in soft:
        for l in lits:
            value.setdefault(abs(l), False)

    def sat(lits):
        return any(value[abs(l)] == (l > 0) for l in lits)

    if not all(sat(lits) for _, lits in hard):
        return None
    return float(sum(w for w, lits in soft if not sat(lits)))


def test_wcnf_cost_is_score_gap_for_every_world():
    net = _net("Smokes,Cancer,Job")
    assert net.n_atoms <= 16 and (net.weight < 0).any() and net.n_blocks
    scale = 1000.0
    text = wcnf_text(net, scale=scale)
    offset = float(net.weight[~net.is_hard & (net.weight > 0)].sum())
    for code in range(1 << net.n_atoms):
        world = ((code >> np.arange(net.n_atoms)) & 1).astype(bool)
        cost = _wcnf_cost(text, world)
        if not net.is_feasible(world):
            assert cost is None
            continue
        assert cost is not None
        assert cost / scale == pytest.approx(offset - net.score(world), abs=1e-3 * net.n_clauses)


def test_cli_ground_writes_files(files, tmp_path, capsys):
    m, e = files
    dump, wcnf, stats = tmp_path / "g.txt", tmp_path / "g.wcnf", tmp_path / "g.json"
    code = main(["ground", "-i", str(m), "-e", str(e), "-q", "Cancer,Smokes",
                 "--dump", str(dump), "--wcnf", str(wcnf), "--stats-json", str(stats)])
    assert code == 0
    figures = json.loads(stats.read_text())
    assert figures["clauses"] == len(dump.read_text().splitlines())
    assert figures["atoms"] > 0 and "ground_seconds" in figures and "peak_mb" in figures
    assert "h " in wcnf.read_text() or figures["hard_clauses"] == 0
    out = capsys.readouterr().out
    assert "atoms" in out and "components" in out


def test_cli_ground_errors_exit_2(files, capsys):
    m, e = files
    assert main(["ground", "-i", str(m), "-e", str(e), "-q", "Drinks"]) == 2
    assert "Drinks" in capsys.readouterr().err
    assert main(["ground", "-i", str(m), "-e", str(e), "-q", "Cancer", "-c", "Smokes", "-o", "Smokes"]) == 2


def test_cli_max_clauses(files, capsys):
    m, e = files
    assert main(["ground", "-i", str(m), "-e", str(e), "-q", "Friends", "--max-clauses", "2"]) == 2
    assert "cpi" in capsys.readouterr().err
