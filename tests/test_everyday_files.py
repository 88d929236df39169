"""Issue 29, item 3: files the CLI writes honour the umask (mkstemp's 0600
hid results from colleagues), an existing target keeps its mode, and the
temporary file a killed writer left behind is removed by the next write of
the same target, never one of a writer still at work."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from markovlogic.cli import main
from markovlogic.io import open_text_atomic, remove_stale_temporaries, write_text_atomic

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "smokers"
SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_written_files_honour_the_umask(tmp_path, umask_022):
    out = tmp_path / "a.txt"
    write_text_atomic(out, "x\n")
    assert out.stat().st_mode & 0o777 == 0o644
    os.umask(0o077)
    other = tmp_path / "b.txt"
    write_text_atomic(other, "y\n")
    assert other.stat().st_mode & 0o777 == 0o600


def test_an_existing_target_keeps_its_mode(tmp_path, umask_022):
    out = tmp_path / "a.txt"
    out.write_text("old\n")
    out.chmod(0o664)
    write_text_atomic(out, "new\n")
    assert out.read_text() == "new\n" and out.stat().st_mode & 0o777 == 0o664


def test_cli_results_are_readable_by_others(tmp_path, umask_022):
    result, stats = tmp_path / "out.result", tmp_path / "s.json"
    assert main(["infer", "-i", str(EXAMPLES / "smokers.mln"), "-e", str(EXAMPLES / "evidence.db"),
                 "-q", "Smokes", "--map", "-r", str(result), "--stats-json", str(stats)]) == 0
    for f in (result, stats):
        assert f.stat().st_mode & 0o777 == 0o644


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_stale_temporaries_of_dead_writers_are_removed(tmp_path):
    out = tmp_path / "r.result"
    stale = tmp_path / f".r.result.{_dead_pid()}.abcd_123.tmp"
    stale.write_text("half")
    live = tmp_path / f".r.result.{os.getppid()}.zzzzzzzz.tmp"      # a writer still running
    live.write_text("half")
    other = tmp_path / f".s.result.{_dead_pid()}.abcdefgh.tmp"       # another target's
    other.write_text("half")
    write_text_atomic(out, "done\n")
    assert out.read_text() == "done\n"
    assert not stale.exists() and live.exists() and other.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == sorted([live.name, other.name])


def test_legacy_temporaries_are_removed_when_old(tmp_path):
    out = tmp_path / "r.result"
    old, young = tmp_path / ".r.result.k3j_x9qa.tmp", tmp_path / ".r.result.m2n4b6v8.tmp"
    old.write_text("half")
    young.write_text("half")
    past = time.time() - 2 * 3600
    os.utime(old, (past, past))
    assert remove_stale_temporaries(out) == [old]
    assert young.exists()


def test_a_killed_writer_leaves_a_temporary_that_the_next_run_removes(tmp_path):
    out = tmp_path / "big.result"
    code = ("import sys, time\nfrom markovlogic.io import open_text_atomic\n"
            f"with open_text_atomic({str(out)!r}) as h:\n"
            "    h.write('x' * 100000); h.flush(); print('writing', flush=True); time.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, PYTHONPATH=str(SRC)))
    try:
        assert child.stdout.readline().strip() == "writing"
        temporaries = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
        assert len(temporaries) == 1
        remove_stale_temporaries(out)             # the writer still runs: kept
        assert temporaries[0].exists()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert temporaries[0].exists() and not out.exists()
    with open_text_atomic(out) as handle:
        handle.write("complete\n")
    assert out.read_text() == "complete\n"
    assert [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
