"""The ``mln`` command: check, ground, infer, learn.

Each subcommand lives in ``commands/<name>.py`` and exposes ``register(app)``.
User mistakes (``MarkovLogicError``) are printed as ``file:line:col: message``
with the offending line and a caret, and exit with status 2; no traceback.
"""

from __future__ import annotations

import importlib
import sys

import typer
from rich.console import Console

from .errors import MarkovLogicError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="markovlogic: Markov logic networks (Alchemy and Tuffy syntax).",
    context_settings={"help_option_names": ["-h", "--help"]},
)

SUBCOMMANDS = ("check", "ground", "infer", "learn", "eval")

for _name in SUBCOMMANDS:
    try:
        _module = importlib.import_module(f"markovlogic.commands.{_name}")
    except ModuleNotFoundError as exc:  # a subcommand not built yet
        if exc.name != f"markovlogic.commands.{_name}":
            raise
        continue
    _module.register(app)

err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def main(argv: list[str] | None = None) -> int:
    from .commands.infer import rewrite_alchemy_argv

    argv = rewrite_alchemy_argv(sys.argv[1:] if argv is None else list(argv))
    try:
        app(args=argv, standalone_mode=False, prog_name="mln")
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
