"""Atomic file writing: results are never half-written.

A result goes to a temporary file ``.NAME.PID.XXXXXXXX.tmp`` beside its
target and is renamed onto it at the end, with the mode a plain ``open()``
would give (``0666`` less the umask; an existing target keeps its mode). A
run killed mid-write (SIGKILL, a power cut) leaves its temporary file
behind; the next write of the same target removes the temporary files of
writers that are no longer running (the PID in the name says which), and
never those of a writer still at work.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from .errors import OutputError


@contextmanager
def open_text_atomic(path: str | Path) -> Iterator[TextIO]:
    """Yield a text handle to a temporary file in the folder of ``path``; on a
    clean exit it is flushed, synced and renamed onto ``path``, on an error it is
    removed, so a crash leaves either the old file or the new one."""
    path = Path(path)
    check_writable(path)
    fd, tmp = _temporary(path, ".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise


def _temporary(path: Path, suffix: str) -> tuple[int, str]:
    """A new temporary file beside ``path`` (its descriptor and name), with the
    mode the finished file should have; stale ones of dead writers removed."""
    directory = path.parent if str(path.parent) else Path(".")
    remove_stale_temporaries(path, suffix)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=suffix, dir=directory)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        os.fchmod(fd, _final_mode(path))
    except OSError:
        pass
    return fd, tmp


def _final_mode(path: Path) -> int:
    """The mode a file written to ``path`` should have: the existing file's, or
    ``0666`` less the umask (mkstemp's own ``0600`` hid results from colleagues)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~current_umask()


_umask_lock = threading.Lock()


def current_umask() -> int:
    """The process's umask: from /proc on Linux, else by setting and restoring
    it (under a lock)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


# temporaries of writers older than this whose name carries no PID (older
# versions of this module) are taken for stale as well
LEGACY_STALE_SECONDS = 3600.0


def remove_stale_temporaries(path: str | Path, suffix: str = ".tmp") -> list[Path]:
    """Remove the temporary files a killed writer of ``path`` left behind:
    ``.NAME.PID.*SUFFIX`` whose process no longer runs (and, from older
    versions, ``.NAME.XXXXXXXX.SUFFIX`` untouched for an hour). Returns what was
    removed; errors are ignored (another writer may be cleaning too)."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    pattern = re.compile(r"\." + re.escape(path.name) + r"\.(?:(\d+)\.)?[A-Za-z0-9_]{8}" + re.escape(suffix) + r"\Z")
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        match = pattern.match(entry.name)
        if match is None:
            continue
        pid = match.group(1)
        try:
            if pid is not None:
                if _running(int(pid)):
                    continue
            elif now - entry.stat(follow_symlinks=False).st_mtime < LEGACY_STALE_SECONDS:
                continue
            os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True            # someone else's process: alive
    return True


@contextmanager
def open_binary_atomic(path: str | Path, suffix: str = ".tmp") -> Iterator[str]:
    """Yield the name of a temporary file beside ``path`` for a library to write
    (e.g. matplotlib's ``savefig``); renamed onto ``path`` on a clean exit,
    removed on an error. Same modes and stale-file cleaning as text."""
    path = Path(path)
    check_writable(path)
    fd, tmp = _temporary(path, suffix)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise


def check_writable(path: str | Path, what: str = "output") -> None:
    """An ``OutputError`` now, rather than after the work, when ``path`` cannot
    be written: a directory, a missing folder, a folder without write access."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{what} {path} is a directory, not a file")
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.exists():
        raise OutputError(f"cannot write {what} {path}: the folder {directory} does not exist")
    if not directory.is_dir():
        raise OutputError(f"cannot write {what} {path}: {directory} is not a folder")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {what} {path}: no permission to write in {directory}")
    if path.exists() and not os.access(path, os.W_OK) and not os.access(directory, os.W_OK):
        raise OutputError(f"cannot write {what} {path}: permission denied")


def check_outputs(outputs: dict, inputs: list) -> None:
    """Every named output path can be written and is none of the inputs (an
    output that would overwrite an input model or database is refused)."""
    ins = [Path(p) for p in inputs if p]
    for what, out in outputs.items():
        if out is None:
            continue
        out = Path(out)
        check_writable(out, what)
        for src in ins:
            if _same_file(out, src):
                raise OutputError(f"{what} {out} is also an input ({src}); refusing to overwrite it")
    named = [(w, Path(o)) for w, o in outputs.items() if o is not None]
    for i, (w1, a) in enumerate(named):
        for w2, b in named[i + 1:]:
            if _same_file(a, b):
                raise OutputError(f"{w1} and {w2} name the same file {a}")


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`open_text_atomic`)."""
    with open_text_atomic(path) as handle:
        handle.write(text)
