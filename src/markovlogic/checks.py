"""Argument checks shared by the Python API and the command line: a wrong
type is an ``ArgumentTypeError`` (a ``TypeError``), a bad value an
``OptionError`` (a ``ValueError``); both name the argument and what was
expected."""

from __future__ import annotations

import math
from numbers import Integral, Real
from pathlib import Path

from .errors import ArgumentTypeError, OptionError

MAX_SEED = 2**32 - 1
MAX_SAMPLES = 10**9


def check_seed(seed, name: str = "seed") -> int:
    if isinstance(seed, bool) or not isinstance(seed, Integral):
        raise ArgumentTypeError(f"{name} must be an integer, got {type(seed).__name__} {seed!r}")
    if not 0 <= seed <= MAX_SEED:
        raise OptionError(f"{name} must be between 0 and {MAX_SEED}, got {seed}")
    return int(seed)


def check_seconds(value, name: str = "max_seconds") -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ArgumentTypeError(f"{name} must be a number of seconds, got {type(value).__name__} {value!r}")
    if not (math.isfinite(value) and value > 0):
        raise OptionError(f"{name.replace('_', '-')} must be a positive, finite number of seconds, got {value!r}")
    return float(value)


def check_path(value, name: str) -> Path:
    if isinstance(value, (str, Path)):
        return Path(value)
    raise ArgumentTypeError(f"{name} must be a path (str or pathlib.Path), got {type(value).__name__}")


def check_paths(value, name: str) -> list[Path]:
    """One path or a list of paths."""
    if isinstance(value, (str, Path)):
        return [Path(value)]
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (str, Path)) for v in value):
        return [Path(v) for v in value]
    raise ArgumentTypeError(f"{name} must be a path or a non-empty list of paths, got {value!r:.80}")


def check_text(value, name: str) -> str:
    if isinstance(value, str):
        return value
    raise ArgumentTypeError(f"{name} must be a str, got {type(value).__name__}")


def check_model(mln) -> None:
    from .model import MLN

    if not isinstance(mln, MLN):
        raise ArgumentTypeError(f"expected an MLN (markovlogic.MLN), got {type(mln).__name__}")


def check_databases(db) -> None:
    from .model import MLN, Database

    if isinstance(db, Database):
        return
    if isinstance(db, (list, tuple)) and all(isinstance(d, Database) for d in db):
        return
    if isinstance(db, MLN):
        raise ArgumentTypeError("expected evidence (a markovlogic.Database) but got an MLN; the model comes "
                                "first: mln.map(db), not db.map(mln)")
    raise ArgumentTypeError(f"expected a Database or a list of Databases, got {type(db).__name__}")


def check_world_arguments(closed=(), open_=(), db_path=None) -> None:
    """``closed``/``open_``: predicate names (a str, comma-separated, or a
    sequence of str); ``db_path``: None or a path (str or pathlib.Path)."""
    for name, value in (("closed", closed), ("open_", open_)):
        if value is None or isinstance(value, str):
            continue
        if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
            continue
        raise ArgumentTypeError(f"{name} must be predicate names (a str or a list of str), got "
                                f"{type(value).__name__} {value!r:.80}")
    if db_path is not None and not isinstance(db_path, (str, Path)):
        raise ArgumentTypeError(f"db_path must be a path (str or pathlib.Path) or None, got "
                                f"{type(db_path).__name__} {db_path!r:.80}")


def check_sampling_options(options: dict) -> None:
    """Seeds, time limits and sample counts that every method shares."""
    if "seed" in options and options["seed"] is not None:
        check_seed(options["seed"])
    if "max_seconds" in options:
        check_seconds(options["max_seconds"])
    samples = options.get("samples")
    if samples is not None and not isinstance(samples, bool) and isinstance(samples, Integral) \
            and samples > MAX_SAMPLES and options.get("max_seconds") is None:
        raise OptionError(f"samples={samples:,} would run for days; at most {MAX_SAMPLES:,} without a time "
                          "limit (give max_seconds / --max-seconds to sample until then)")
