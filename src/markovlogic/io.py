"""Atomic file writing: results are never half-written."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


@contextmanager
def open_text_atomic(path: str | Path) -> Iterator[TextIO]:
    """Yield a text handle to a temporary file in the folder of ``path``; on a
    clean exit it is flushed, synced and renamed onto ``path``, on an error it is
    removed, so a crash leaves either the old file or the new one."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`open_text_atomic`)."""
    with open_text_atomic(path) as handle:
        handle.write(text)
