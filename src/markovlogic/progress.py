"""Progress of the long stages, shown on a terminal and nowhere else.

The engine reports its stages here (grounding per template, the exact
solver's components and bound, CPI rounds, MaxWalkSAT tries, sampling,
learning iterations, derived evidence, reading large files); the command line
shows them as transient bars on standard error when it is a terminal
(:func:`terminal`), and nothing is shown otherwise (a pipe, a file, CI, the
Python API). Without a display every call is a no-op costing a function
call, so stages report freely, but never per atom or clause: per template,
round, try, chunk of samples or iteration.

    with progress.task("grounding", total=len(templates)) as bar:
        for t in templates:
            ...
            bar.advance(detail=f"template {t}")
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

_display: "_Display | None" = None
_lock = threading.Lock()


class _Task:
    """A stage on the display (or nowhere, when there is none)."""

    def __init__(self, display: "_Display | None", label: str, total: float | None) -> None:
        self._display = display
        self._id = display.add(label, total) if display is not None else None

    def advance(self, n: float = 1, detail: str | None = None) -> None:
        if self._id is not None:
            self._display.update(self._id, advance=n, detail=detail)

    def update(self, completed: float | None = None, detail: str | None = None, total: float | None = None) -> None:
        if self._id is not None:
            self._display.update(self._id, completed=completed, detail=detail, total=total)

    def close(self) -> None:
        if self._id is not None:
            self._display.remove(self._id)
            self._id = None

    def __enter__(self) -> "_Task":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Display:
    """One rich ``Progress`` (transient), started with the first task."""

    def __init__(self, console) -> None:
        self.console = console
        self.progress = None

    def _start(self):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=30),
                                 MofNCompleteColumn(), TextColumn("{task.fields[detail]}"), TimeElapsedColumn(),
                                 console=self.console, transient=True)
        self.progress.start()

    def add(self, label: str, total: float | None):
        with _lock:
            if self.progress is None:
                self._start()
            return self.progress.add_task(label, total=total, detail="")

    def update(self, task_id, advance=None, completed=None, detail=None, total=None) -> None:
        kwargs = {}
        if advance is not None:
            kwargs["advance"] = advance
        if completed is not None:
            kwargs["completed"] = completed
        if detail is not None:
            kwargs["detail"] = detail
        if total is not None:
            kwargs["total"] = total
        try:
            self.progress.update(task_id, **kwargs)
        except KeyError:          # removed meanwhile (another thread closed it)
            pass

    def remove(self, task_id) -> None:
        try:
            self.progress.remove_task(task_id)
        except KeyError:
            pass

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


def enabled() -> bool:
    """Whether a display is active (a command on a terminal)."""
    return _display is not None


def task(label: str, total: float | None = None) -> _Task:
    """A stage, shown while the returned object is open (a context manager);
    ``total`` None shows a pulsing bar and the elapsed time."""
    return _Task(_display, label, total)


@contextmanager
def terminal(console) -> Iterator[None]:
    """Show the stages reported inside the block on ``console`` (rich), if it
    is a terminal; otherwise they stay silent."""
    global _display
    console = getattr(console, "real", console)          # commands.common.LazyConsole
    if console is None or not getattr(console, "is_terminal", False) or _display is not None:
        yield
        return
    display = _Display(console)
    _display = display
    try:
        yield
    finally:
        _display = None
        display.stop()
