"""The ``mln`` command: check, ground, infer, learn, eval, derive, usp.

Each subcommand lives in ``commands/<name>.py`` and exposes ``register(app)``.
User mistakes (``MarkovLogicError``) are printed as ``file:line:col: message``
with the offending line and a caret, and exit with status 2; no traceback.
Ctrl-C prints ``interrupted`` and exits with status 130; results are written
atomically, so an interrupted run leaves the old result file untouched.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
import time
import warnings

import typer

from .commands.common import LazyConsole
from .errors import MarkovLogicError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="markovlogic: Markov logic networks (Alchemy and Tuffy syntax).",
    # plain click help: wrapped to the terminal (at most 120 columns), never cut, defaults shown;
    # rich's panels truncated option names at 80 columns and ate '[ray]' as markup
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120, "show_default": True},
)

def _version(value: bool) -> None:
    if value:
        from . import __version__

        typer.echo(f"mln (markovlogic) {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", "-V", is_eager=True, callback=_version,
                                 help="Print the version and exit."),
) -> None:
    """markovlogic: Markov logic networks (Alchemy and Tuffy syntax)."""


SUBCOMMANDS = ("check", "ground", "infer", "learn", "eval", "derive", "coref", "usp")

for _name in SUBCOMMANDS:
    try:
        _module = importlib.import_module(f"markovlogic.commands.{_name}")
    except ModuleNotFoundError as exc:  # a subcommand not built yet
        if exc.name != f"markovlogic.commands.{_name}":
            raise
        continue
    _module.register(app)

for _info in app.registered_commands:       # the whole first sentence in `mln --help`, not 45 characters
    if _info.short_help is None and _info.callback is not None and _info.callback.__doc__:
        _info.short_help = " ".join(_info.callback.__doc__.strip().split("\n\n")[0].split())

err_console = LazyConsole(stderr=True, highlight=False, soft_wrap=True)
INTERRUPTED = 130          # exit status after Ctrl-C (128 + SIGINT), as shells report it


def main(argv: list[str] | None = None) -> int:
    """Run one ``mln`` command; returns its exit status. Process-wide settings
    a command changes (``--memory-limit``, ``--max-cnf-clauses``) are restored
    afterwards, so calls from Python do not leak into each other."""
    from dataclasses import replace

    # the settings are snapshot only where their modules are loaded already
    # (importing them costs what `mln --help` should not); a module loaded by
    # the command itself is reset to its defaults afterwards
    limits = sys.modules.get("markovlogic.logic.limits")
    resources = sys.modules.get("markovlogic.resources")
    saved_limits = replace(limits.LIMITS) if limits is not None else None
    saved_memory = resources._limit if resources is not None else None
    previous = _watch_interrupts()
    try:
        return _main(argv)
    finally:
        limits = sys.modules.get("markovlogic.logic.limits")
        if limits is not None:
            limits.LIMITS.__dict__.update((saved_limits or limits.Limits()).__dict__)
        resources = sys.modules.get("markovlogic.resources")
        if resources is not None:
            resources._limit = saved_memory
        _Interrupts.handled = True       # the run is over: no watchdog may end the process now
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


# Ctrl-C: Python raises KeyboardInterrupt where the main thread is. A library
# can swallow it (DuckDB's lazy `import pandas`, interrupted, becomes "'pandas'
# is required ... but it was not installed", and once the run went on sampling
# as if nothing had happened) or wrap it (numba: SystemError). So the handler
# also counts the interrupt: the last line of defence treats any exception
# after one as the interrupt, and a watchdog ends the process with status 130
# if the interrupt has not reached it within INTERRUPT_GRACE seconds.
INTERRUPT_GRACE = 10.0


class _Interrupts:
    count = 0
    handled = False
    generation = 0          # one per call of main(): a watchdog acts only on its own call


def _watch_interrupts():
    """Install the counting SIGINT handler (main thread, Python's default
    handler in place); returns the handler to restore, or None."""
    _Interrupts.count, _Interrupts.handled = 0, False
    _Interrupts.generation += 1
    if threading.current_thread() is not threading.main_thread():
        return None
    current = signal.getsignal(signal.SIGINT)
    if current is not signal.default_int_handler:
        return None
    signal.signal(signal.SIGINT, _on_sigint)
    return current


def _on_sigint(signum, frame):
    _Interrupts.count += 1
    if _Interrupts.count == 1:
        threading.Thread(target=_watchdog, args=(_Interrupts.generation,), name="mln-interrupt-watchdog",
                         daemon=True).start()
    raise KeyboardInterrupt


def _watchdog(generation: int) -> None:
    time.sleep(INTERRUPT_GRACE)
    if _Interrupts.generation == generation and not _Interrupts.handled:
        try:
            sys.stderr.write("interrupted\n")
            sys.stderr.flush()
        finally:
            os._exit(INTERRUPTED)


def _report_interrupt() -> int:
    _Interrupts.handled = True
    err_console.print("interrupted")
    return INTERRUPTED


def _main(argv: list[str] | None = None) -> int:
    from .commands.infer import rewrite_alchemy_argv

    argv = rewrite_alchemy_argv(sys.argv[1:] if argv is None else list(argv))
    from . import jit

    jit.on_first_compile(lambda: err_console.print(jit.NOTICE, markup=False))
    # numerical warnings of numpy and numba internals are not for the user of the
    # command line (values are checked where they enter: weights, options)
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    warnings.showwarning = _show_warning
    try:
        from . import progress

        with progress.terminal(err_console if sys.stderr.isatty() else None):
            code = app(args=argv, standalone_mode=False, prog_name="mln")
        if code == INTERRUPTED:          # typer turns KeyboardInterrupt into Exit(130)
            return _report_interrupt()
        sys.stdout.flush()
    except KeyboardInterrupt:
        return _report_interrupt()
    except MarkovLogicError as exc:
        err_console.print(exc.render(), markup=False)
        return 2
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        err_console.print("aborted")
        return 1
    except typer.TyperException as exc:  # usage errors (unknown option, missing value)
        exc.show()
        return exc.exit_code
    except BrokenPipeError:               # `mln infer ... | head`: the reader left
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except OSError as exc:
        where = exc.filename or "standard output"
        err_console.print(f"cannot write {where}: {exc.strerror or exc}", markup=False)
        return 2
    except MemoryError:
        err_console.print(
            "out of memory: the problem does not fit; limit what is ground (narrower queries, "
            "--memory-limit), or use --method cpi or inference over clusterings")
        return 2
    except Exception as exc:              # noqa: BLE001 - the last line of defence: no traceback
        if _interrupted(exc) or _Interrupts.count:
            return _report_interrupt()
        if os.environ.get("MLN_TRACEBACK"):
            raise
        err_console.print(f"internal error: {type(exc).__name__}: {exc}", markup=False)
        err_console.print("this is a bug in markovlogic; run again with MLN_TRACEBACK=1 for the traceback "
                          "and report it")
        return 1
    return 0


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line on standard error (no source line, no module path)."""
    err_console.print(f"warning: {message}", markup=False)


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is Ctrl-C in disguise. DuckDB turns it into its own
    exception; a KeyboardInterrupt raised while a numba-compiled function runs
    comes back as ``SystemError: ... returned a result with an exception set``
    with the interrupt as its cause. The whole cause/context chain is read."""
    import duckdb

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, (KeyboardInterrupt, getattr(duckdb, "InterruptException", ()))):
            return True
        if isinstance(exc, RuntimeError) and "interrupted" in str(exc).lower():
            return True
        exc = exc.__cause__ or exc.__context__
    return False


if __name__ == "__main__":
    sys.exit(main())
