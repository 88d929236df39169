"""Issue 16, item 7: Ctrl-C during inference, learning or grounding exits with
status 130 and one line, and leaves the old result file as it was."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CSE = DATA / "tuffy" / "cse"
SRC = Path(__file__).resolve().parents[1] / "src"

pytestmark = pytest.mark.skipif(not CSE.is_dir(), reason=f"shared data not found at {CSE}")


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("inf")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _interrupt(args: list[str], after: float = 4.0, warm: list[str] | None = None) -> subprocess.CompletedProcess:
    """Run the CLI, send SIGINT once it is busy, return how it ended. ``warm``:
    a short run of the same command first, so that numba's compilation (a
    first run's) is not what the signal interrupts. The child is interrupted
    after ``after`` seconds of its own CPU time where /proc tells it (a loaded
    machine stretches wall time: at load 7 the imports alone took over 4 s),
    else of wall time."""
    if warm is not None:
        subprocess.run([sys.executable, "-m", "markovlogic.cli", *warm], capture_output=True, env=_env(),
                       timeout=600)
    p = subprocess.Popen([sys.executable, "-m", "markovlogic.cli", *args], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=_env(),
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    start = time.perf_counter()
    if Path(f"/proc/{p.pid}/stat").exists():
        while p.poll() is None and _cpu_seconds(p.pid) < after and time.perf_counter() - start < 120:
            time.sleep(0.05)
    else:
        time.sleep(after)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    return subprocess.CompletedProcess(args, p.returncode, out.decode(), err.decode())


COMMON = ["-i", str(CSE / "prog.mln"), "-e", str(CSE / "evidence.db"), "-f", str(CSE / "query.db")]


@pytest.mark.parametrize("extra, short", [
    (["--samples", "10000000"], ["--samples", "10"]),                                  # MC-SAT
    (["--gibbs", "--samples", "10000000"], ["--gibbs", "--samples", "10"]),           # Gibbs
    (["--map", "--method", "maxwalksat", "--tries", "100000"],
     ["--map", "--method", "maxwalksat", "--tries", "1"]),                             # MaxWalkSAT
])
def test_ctrl_c_during_inference(tmp_path, extra, short):
    result = tmp_path / "old.result"
    result.write_text("the old result\n")
    done = _interrupt(["infer", *COMMON, "-r", str(result), *extra],
                      warm=["infer", *COMMON, "-r", str(tmp_path / "warm.result"), *short])
    assert done.returncode == 130, done.stderr[-500:]
    assert done.stderr.strip().splitlines()[-1] == "interrupted"
    assert "Traceback" not in done.stderr
    assert result.read_text() == "the old result\n"


def test_ctrl_c_during_learning(tmp_path):
    out = tmp_path / "learned.mln"
    out.write_text("old\n")
    done = _interrupt(["learn", "-i", str(CSE / "prog.mln"), "-t", str(DATA / "uwcse" / "fold1" / "train.db"),
                       "--ne", "advisedBy", "--method", "dn", "--iterations", "100000", "-o", str(out)])
    assert done.returncode == 130, done.stderr[-500:]
    assert "Traceback" not in done.stderr
    assert out.read_text() == "old\n"


def test_interrupted_duckdb_query_is_an_interrupt():
    import duckdb

    from markovlogic.cli import _interrupted

    assert _interrupted(RuntimeError("Query interrupted"))
    if hasattr(duckdb, "InterruptException"):
        assert _interrupted(duckdb.InterruptException("INTERRUPT Error: Interrupted!"))
    assert not _interrupted(RuntimeError("something else"))


def test_interrupt_inside_a_numba_kernel_is_an_interrupt():
    """CI saw `SystemError: CPUDispatcher(...) returned a result with an
    exception set` after Ctrl-C during learning: the KeyboardInterrupt is its cause."""
    from markovlogic.cli import _interrupted

    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as inner:
            raise SystemError("CPUDispatcher(<function f>) returned a result with an exception set") from inner
    except SystemError as exc:
        assert _interrupted(exc)
    assert not _interrupted(SystemError("returned a result with an exception set"))
    loop = ValueError("a")
    loop.__context__ = ValueError("b")
    loop.__context__.__context__ = loop
    assert not _interrupted(loop)


def test_an_exception_after_ctrl_c_is_the_interrupt(monkeypatch, capsys):
    """A library that swallows the KeyboardInterrupt and fails instead (DuckDB,
    interrupted in its lazy `import pandas`: "'pandas' is required ... but it
    was not installed", seen by hand) still ends with status 130."""
    import markovlogic.cli as cli

    def swallowing_app(*args, **kwargs):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            pass
        raise RuntimeError("Invalid Input Error: 'pandas' is required for this operation but it was not installed")

    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT is not Python's default handler here")
    monkeypatch.setattr(cli, "app", swallowing_app)
    assert cli.main(["infer"]) == 130
    assert capsys.readouterr().err.strip().splitlines()[-1] == "interrupted"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler       # restored


def test_a_swallowed_ctrl_c_cannot_hang(tmp_path):
    """Once (by hand, Ctrl-C 0.6 s after start) the interrupt vanished and
    MC-SAT went on sampling: a watchdog ends the run with status 130 when the
    interrupt has not reached the command line's handler in time."""
    script = tmp_path / "swallow.py"
    script.write_text(
        "import sys, time\n"
        "import markovlogic.cli as cli\n"
        "cli.INTERRUPT_GRACE = 1.0\n"
        "def app(*a, **k):\n"
        "    print('ready', flush=True)\n"
        "    end = time.time() + 60\n"
        "    while time.time() < end:\n"
        "        try:\n"
        "            time.sleep(0.05)\n"
        "        except KeyboardInterrupt:\n"
        "            pass\n"
        "    return 0\n"
        "cli.app = app\n"
        "sys.exit(cli.main(['infer']))\n")
    env = dict(os.environ, PYTHONPATH=str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert p.stdout.readline().strip() == b"ready"
    start = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    assert p.returncode == 130
    assert err.decode().strip().splitlines()[-1] == "interrupted"
    assert time.monotonic() - start < 10
