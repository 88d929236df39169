"""Every model and evidence file of ../shared/data loads with `mln check`
(alchemy/univ.mln excepted: it uses an undeclared predicate, and must be
refused at that place), and printing any of the models parses back to the
same model."""

from __future__ import annotations

from pathlib import Path

import pytest

from markovlogic import MLN, Database
from markovlogic.cli import main
from markovlogic.errors import MLNSemanticError
from markovlogic.lang.parser import parse_queries

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data folder not found: {DATA}")


def _groups() -> list[tuple[str, list[Path], list[Path], Path | None]]:
    """(id, model files, evidence files, query file) for every file in DATA."""
    if not DATA.is_dir():
        return []
    groups = []
    for prog in sorted(DATA.glob("tuffy/*/prog.mln")):
        folder = prog.parent
        groups.append((f"tuffy/{folder.name}", [prog], [folder / "evidence.db"], folder / "query.db"))
    alchemy = DATA / "alchemy"
    groups.append(("alchemy/example", [alchemy / "example-model.mln"], [alchemy / "example-evidence.db"], None))
    for mln in sorted(alchemy.glob("*.mln")):
        if mln.name not in ("univ.mln", "example-model.mln"):
            groups.append((f"alchemy/{mln.stem}", [mln], [], None))
    for mln in sorted(DATA.glob("thebeast/*.mln")):
        groups.append((f"thebeast/{mln.stem}", [mln], [], None))
    for schema in sorted(DATA.glob("*/schema.mln")) + sorted(DATA.glob("er/*/schema.mln")):
        name = schema.parent.relative_to(DATA).as_posix()
        for db in sorted(schema.parent.glob("fold*/*.db")):
            groups.append((f"{name}/{db.parent.name}/{db.stem}", [schema], [db], None))
        for db in sorted(schema.parent.glob("*.db")):
            groups.append((f"{name}/{db.stem}", [schema], [db], None))
    return groups


GROUPS = _groups()


def test_every_data_file_is_covered():
    covered = {p for _, mlns, dbs, q in GROUPS for p in [*mlns, *dbs, *([q] if q else [])]}
    every = set(DATA.rglob("*.mln")) | set(DATA.rglob("*.db"))
    assert every - covered == {DATA / "alchemy" / "univ.mln"}


@pytest.mark.parametrize("name, mlns, dbs, query", GROUPS, ids=[g[0] for g in GROUPS])
def test_mln_check_accepts(name, mlns, dbs, query, capsys):
    argv = ["check", "-i", ",".join(map(str, mlns))]
    if dbs:
        argv += ["-e", ",".join(map(str, dbs))]
    if query is not None:
        argv += ["-f", str(query)]
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert ": OK" in out


def test_univ_is_refused_at_line_27(capsys):
    univ = DATA / "alchemy" / "univ.mln"
    with pytest.raises(MLNSemanticError) as info:
        MLN.from_file(univ)
    err = info.value
    assert err.message == "undeclared predicate 'publication'"
    assert (err.line, err.column) == (27, 8)
    assert main(["check", "-i", str(univ)]) == 2
    text = capsys.readouterr().err
    assert f"{univ}:27:8: undeclared predicate 'publication'" in text
    assert "0.0053 publication(t,p)" in text and "\n           ^" in text


def test_known_figures():
    cse = MLN.from_file(DATA / "tuffy/cse/prog.mln")
    assert len(cse.predicates) == 22 and sum(p.closed for p in cse.predicates.values()) == 21
    assert len(cse.formulas) == 94 and all(f.weight is not None for f in cse.formulas)
    rc = MLN.from_file(DATA / "tuffy/rc1000/prog.mln")
    assert sum(f.hard for f in rc.formulas) == 4 and sum(f.fixed for f in rc.formulas) == 1
    cls = MLN.from_file(DATA / "tuffy/class/prog.mln")
    db = Database.from_file(DATA / "tuffy/class/evidence.db", mln=cls)
    assert len(db.atoms) == 82684
    assert parse_queries((DATA / "tuffy/class/query.db").read_text(), cls)[0].predicate == "category"
    ie = MLN.from_file(DATA / "thebeast/ie_base.mln")
    assert sum(f.weight is None and not f.hard for f in ie.formulas) == 19
    assert ie.types["field"] == ("Fauthor", "Ftitle", "Fvenue")  # constants from formulas join types


MODELS = sorted(p for p in DATA.rglob("*.mln") if p.name != "univ.mln") if DATA.is_dir() else []


@pytest.mark.parametrize("path", MODELS, ids=[str(p.relative_to(DATA)) for p in MODELS])
def test_print_parse_round_trip_of_data_models(path):
    mln = MLN.from_file(path)
    again = MLN.from_string(mln.to_string())
    assert again == mln


def test_print_parse_round_trip_of_evidence():
    for rel in ("tuffy/rc1000/evidence.db", "tuffy/smoke/evidence.db", "uwcse/fold1/train.db"):
        db = Database.from_file(DATA / rel)
        assert Database.from_string(db.to_string()).atoms == db.atoms
