"""Atomic file writing: results are never half-written."""

from __future__ import annotations

import os
import tempfile
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
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
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
