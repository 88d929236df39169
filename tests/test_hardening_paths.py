"""Issue 16, items 8, 11, 12, 13: output paths, clobbered inputs and the
``--db-file`` store get one-line errors (exit 2) before the work starts, and
never a traceback; nothing is half-written."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from markovlogic.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "smokers"
MLN_FILE = EXAMPLES / "smokers.mln"
DB_FILE = EXAMPLES / "evidence.db"
SRC = Path(__file__).resolve().parents[1] / "src"


def _infer(*extra: str) -> list[str]:
    return ["infer", "-i", str(MLN_FILE), "-e", str(DB_FILE), "-q", "Smokes", *extra]


@pytest.mark.parametrize("make_args, message", [
    (lambda t: _infer("-r", str(t / "missing" / "x.result")), "does not exist"),
    (lambda t: _infer("-r", str(t)), "is a directory"),
    (lambda t: _infer("--stats-json", str(t / "missing" / "s.json")), "does not exist"),
    (lambda t: ["ground", "-i", str(MLN_FILE), "-e", str(DB_FILE), "--dump", str(t)], "is a directory"),
    (lambda t: ["ground", "-i", str(MLN_FILE), "-e", str(DB_FILE), "--wcnf", str(t / "no" / "x.wcnf")],
     "does not exist"),
    (lambda t: ["learn", "-i", str(MLN_FILE), "-t", str(DB_FILE), "-o", str(t / "no" / "l.mln"), "--ne", "Cancer"],
     "does not exist"),
])
def test_bad_output_paths(tmp_path, capsys, make_args, message):
    assert main(make_args(tmp_path)) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_outputs_that_are_inputs_are_refused(tmp_path, capsys):
    model = tmp_path / "m.mln"
    model.write_text(MLN_FILE.read_text())
    before = model.read_text()
    assert main(["infer", "-i", str(model), "-e", str(DB_FILE), "-q", "Smokes", "-r", str(model)]) == 2
    assert "also an input" in capsys.readouterr().err
    assert main(["learn", "-i", str(model), "-t", str(DB_FILE), "--ne", "Cancer", "-o", str(model)]) == 2
    assert "also an input" in capsys.readouterr().err
    assert main(["infer", "-i", str(model), "-e", str(DB_FILE), "-q", "Smokes", "--stats-json", str(DB_FILE)]) == 2
    assert model.read_text() == before


def test_a_full_disk_on_standard_output_is_an_error():
    env = dict(os.environ, PYTHONPATH=str(SRC))
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "markovlogic.cli", *_infer()], stdout=full,
                              stderr=subprocess.PIPE, env=env, text=True, timeout=120)
    assert done.returncode == 2
    assert "No space left" in done.stderr and "Traceback" not in done.stderr


def test_db_file_never_touches_a_file_that_is_not_a_store(tmp_path, capsys):
    evidence = tmp_path / "evidence.db"
    evidence.write_text(DB_FILE.read_text())
    before = evidence.read_bytes()
    assert main(_infer("--db-file", str(evidence))) == 2
    assert "not a DuckDB store" in capsys.readouterr().err
    assert evidence.read_bytes() == before
    assert main(_infer("--db-file", str(tmp_path / "missing" / "x.duckdb"))) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(_infer("--db-file", str(tmp_path))) == 2
    assert "is a directory" in capsys.readouterr().err
    store = tmp_path / "ok.duckdb"
    assert main(_infer("--db-file", str(store))) == 0
    assert main(_infer("--db-file", str(store))) == 0         # a store made before is reused


def test_a_store_in_use_by_another_process(tmp_path, capsys):
    store = tmp_path / "busy.duckdb"
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import duckdb, time; c = duckdb.connect({str(store)!r}); "
                               "c.execute('create table t(a int)'); print('ready', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        assert main(_infer("--db-file", str(store))) == 2
        err = capsys.readouterr().err
        assert "in use by another process" in err and f"PID {holder.pid}" in err
    finally:
        holder.kill()
        holder.wait()
