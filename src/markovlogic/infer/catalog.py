"""Which option each inference method takes: declared once, here.

``mln infer`` reads this table to turn its flags into the keyword options of
:func:`markovlogic.map_inference` / :func:`markovlogic.marginal_inference`
and to refuse a flag the chosen method does not take (one message for every
flag, naming where it does apply); ``README.md``'s table of methods and flags
is printed from it (``python -m markovlogic.infer.catalog``, checked by a
test); and a test checks every name below against the options class or the
function of its method, so the command line cannot offer what the API
refuses.

A method is a task (``map`` or ``marginals``), a name (``--method``) and, for
``mh``, what it samples: ground atoms, or the clusterings of an equivalence
predicate among the queries (:mod:`markovlogic.cluster`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import OptionError

# flag of `mln infer` -> keyword option of the API (the flags every method takes,
# -i -e -q -r --seed --max-seconds ..., are not listed)
FLAGS: dict[str, str] = {
    "--samples": "samples",
    "--burn-in": "burn_in",
    "--chains": "chains",
    "--hard-weight": "hard_weight",
    "--metropolis-steps": "metropolis_steps",
    "--rao-blackwell": "rao_blackwell",
    "--init": "init_method",
    "--init-flips": "init_flips",
    "--group-mutex": "group_mutex",
    "--joint-moves": "joint_moves",
    "--cluster-moves": "cluster_moves",
    "--max-flips": "max_flips",
    "--tries": "max_tries",
    "--noise": "noise",
    "--cpi-base": "base",
    "--cpi-rounds": "max_iterations",
    "--steps": "steps",
    "--temperature": "temperature",
    "--anneal": "anneal",
    "--thin": "thin",
    "--restarts": "restarts",
    "--partition": "partition",
    "--messages": "messages",
    "--n-best": "n_best",
    "--iterations": "iterations",
    "--tasks": "tasks",
    "--neighbourhood": "neighbourhood",
    "--clusters": "clusters",
    "--lazy-threshold": "threshold",
}

ATOMS, CLUSTERINGS = "atoms", "clusterings"


@dataclass(frozen=True)
class Method:
    """One inference method: its task, ``--method`` name, what it runs over
    and the flags it takes (besides the common ones). ``renamed``: flags whose
    API option has another name for this method (``--max-flips`` is SGMP's
    ``flips``). ``seeded``: whether ``--seed`` means anything to it (the exact
    solvers ignore it)."""

    task: str
    name: str
    flags: tuple[str, ...]
    over: str = ATOMS
    renamed: tuple[tuple[str, str], ...] = ()
    seeded: bool = True
    lazy: bool = False          # one of the methods of --lazy (infer/lazy/)

    @property
    def label(self) -> str:
        where = " over clusterings" if self.over == CLUSTERINGS else ""
        return f"{'--map ' if self.task == 'map' else ''}--method {self.name}{where}"

    def option(self, flag: str) -> str:
        return dict(self.renamed).get(flag, FLAGS[flag])


_MCSAT = ("--samples", "--burn-in", "--hard-weight", "--metropolis-steps", "--rao-blackwell", "--init",
          "--init-flips", "--group-mutex", "--joint-moves", "--cluster-moves")
_MWS = ("--max-flips", "--tries", "--noise", "--hard-weight", "--group-mutex")

METHODS: tuple[Method, ...] = (
    Method("map", "ilp", ("--hard-weight",), seeded=False),
    Method("map", "maxwalksat", _MWS, lazy=True),
    Method("map", "cpi", ("--cpi-base", "--cpi-rounds", "--max-flips", "--tries", "--noise")),
    Method("map", "cpsat", ("--hard-weight",), seeded=False),
    Method("map", "exact", ("--hard-weight",), seeded=False),
    Method("map", "mh", ("--hard-weight", "--steps", "--temperature", "--anneal", "--restarts")),
    Method("map", "mh", ("--steps", "--temperature", "--anneal", "--restarts", "--clusters"), over=CLUSTERINGS),
    Method("map", "agglomerative", ("--clusters",), over=CLUSTERINGS),
    Method("map", "sgmp", ("--hard-weight", "--max-flips", "--noise", "--partition", "--messages", "--n-best",
                           "--iterations", "--restarts"), renamed=(("--max-flips", "flips"),)),
    Method("map", "multitask-mh", ("--hard-weight", "--steps", "--temperature", "--tasks", "--neighbourhood")),
    Method("marginals", "mcsat", _MCSAT + ("--lazy-threshold",), lazy=True),
    Method("marginals", "gibbs", ("--samples", "--burn-in", "--chains", "--hard-weight")),
    Method("marginals", "exact", (), seeded=False),
    Method("marginals", "mh", ("--samples", "--burn-in", "--thin", "--hard-weight", "--rao-blackwell")),
    Method("marginals", "mh", ("--samples", "--burn-in", "--thin"), over=CLUSTERINGS),
    Method("marginals", "multitask-mh", ("--samples", "--burn-in", "--thin", "--hard-weight", "--rao-blackwell",
                                         "--tasks", "--neighbourhood")),
)

# the flags a cpi run takes only when its base solver is MaxWalkSAT
CPI_MAXWALKSAT_FLAGS = ("--max-flips", "--tries", "--noise")


def names(task: str) -> tuple[str, ...]:
    """The ``--method`` names of ``task``, in the table's order."""
    return tuple(dict.fromkeys(m.name for m in METHODS if m.task == task))


def method(task: str, name: str, over: str = ATOMS) -> Method:
    """The method ``name`` of ``task``; ``over`` picks the clustering variant
    of ``mh`` (``agglomerative`` runs over clusterings only)."""
    found = [m for m in METHODS if m.task == task and m.name == name]
    if not found:
        kind = "MAP" if task == "map" else "marginal"
        raise OptionError(f"unknown {kind} method {name!r}; choose one of {', '.join(names(task))}")
    return next((m for m in found if m.over == over), found[0])


def where(flag: str) -> str:
    """Where ``flag`` applies, e.g. ``--map --method maxwalksat, sgmp; --method mcsat``."""
    if flag == "--lazy-threshold":
        return "--lazy marginals (--method mcsat)"
    parts = []
    for task, prefix in (("map", "--map --method "), ("marginals", "--method ")):
        found: dict[str, None] = {}
        for m in METHODS:
            if m.task != task or flag not in m.flags:
                continue
            both = sum(o.task == task and o.name == m.name for o in METHODS) > 1
            takes_all = all(flag in o.flags for o in METHODS if o.task == task and o.name == m.name)
            found[m.name + (f" (over {m.over})" if both and not takes_all else "")] = None
        if found:
            parts.append(prefix + ", ".join(found))
    return "; ".join(parts) if parts else "no method"


def options(m: Method, given: dict[str, object], lazy: bool = False) -> dict[str, object]:
    """The API keyword options of the flags in ``given`` (flag -> value; a
    value of None is a flag not given), or an :class:`OptionError` naming the
    first flag ``m`` does not take and where it applies."""
    out: dict[str, object] = {}
    for flag, value in given.items():
        if value is None:
            continue
        if flag not in m.flags or (flag == "--lazy-threshold" and not lazy):
            raise OptionError(f"{flag} does not apply to {m.label}{' --lazy' if lazy else ''}; "
                              f"it applies to {where(flag)}")
        out[m.option(flag)] = value
    if m.name == "cpi" and out.get("base", "ilp") != "maxwalksat":
        bad = [f for f in CPI_MAXWALKSAT_FLAGS if given.get(f) is not None]
        if bad:
            raise OptionError(f"{bad[0]} applies to --method cpi only with --cpi-base maxwalksat")
    return out


def markdown() -> str:
    """The table of methods and the flags each takes (README.md)."""
    lines = ["| task | `--method` | runs over | flags it takes besides the common ones |", "|---|---|---|---|"]
    for m in METHODS:
        task = "MAP (`--map`)" if m.task == "map" else "marginals"
        flags = ", ".join(f"`{f}`" for f in m.flags) or "none"
        if not m.seeded:
            flags += " (ignores `--seed`)"
        if m.lazy:
            flags += "; also `--lazy`"
        lines.append(f"| {task} | {m.name} | {m.over} | {flags} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
