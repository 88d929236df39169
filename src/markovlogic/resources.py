"""The memory budget: how much a grounding or a learner may allocate.

Work that could outgrow the machine estimates its size before it allocates
(the grounder counts each template's groundings in SQL first) and stops with
a clear error past the budget, rather than dying with a ``MemoryError`` or
being killed by the system. The budget is ``--memory-limit`` (or
:func:`set_memory_limit`), by default 60% of the memory available when it is
first asked for: the least of the system's available memory, a cgroup limit
and the process's address-space limit (``ulimit -v``).
"""

from __future__ import annotations

import os
import re
import resource

from .errors import OptionError

DEFAULT_FRACTION = 0.6
_limit: int | None = None
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "G": 1 << 30, "GB": 1 << 30,
          "T": 1 << 40, "TB": 1 << 40}


def parse_size(text) -> int:
    """``"8G"``, ``"512MB"``, ``"2.5g"``, ``1000000`` -> bytes."""
    if isinstance(text, bool):
        raise OptionError(f"memory limit must be a size such as 8G or 512M, got {text!r}")
    if isinstance(text, (int, float)):
        value = float(text)
        unit = ""
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", str(text))
        if m is None or m.group(2).upper() not in _UNITS:
            raise OptionError(f"memory limit must be a size such as 8G or 512M, got {text!r}")
        value, unit = float(m.group(1)), m.group(2).upper()
    size = int(value * _UNITS[unit])
    if size < (1 << 20):
        raise OptionError(f"memory limit must be at least 1M, got {text!r}")
    return size


def available_memory() -> int:
    """Bytes this process can still use (see module docstring)."""
    candidates = []
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    candidates.append(int(line.split()[1]) * 1024)
                    break
    except OSError:
        pass
    try:
        with open("/sys/fs/cgroup/memory.max") as fh:
            limit = fh.read().strip()
        if limit != "max":
            with open("/sys/fs/cgroup/memory.current") as fh:
                candidates.append(int(limit) - int(fh.read().strip()))
    except (OSError, ValueError):
        pass
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft not in (resource.RLIM_INFINITY, -1):
        candidates.append(soft - _address_space())
    if not candidates:
        return 8 << 30
    return max(1 << 20, min(candidates))


def _address_space() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def set_memory_limit(value) -> None:
    """The budget in bytes (or a size string); ``None`` restores the default."""
    global _limit
    _limit = None if value is None else parse_size(value)


def memory_budget() -> int:
    """Bytes the next large step may use."""
    return _limit if _limit is not None else int(available_memory() * DEFAULT_FRACTION)


def format_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def check_budget(what: str, need: float, ways_out: str) -> None:
    """Stop before a step that needs ``need`` more bytes than the budget leaves
    (the default budget is 60 % of the memory available now, so what is
    already allocated counts; an explicit ``--memory-limit`` is compared with
    ``need`` as given: include what the step keeps alive)."""
    from .errors import ResourceError

    budget = memory_budget()
    if need > budget:
        raise ResourceError(f"{what} needs about {format_bytes(need)}; the memory budget is "
                            f"{format_bytes(budget)}. {ways_out}")
