"""``python -m bench.reproduce``: the seed papers' tables beside markovlogic's.

    python -m bench.reproduce [--only poon3,riedel2,w06,culotta6,culotta9] [--from-cache]
                              [--json OUT.json] [--jobs N] [--work DIR]
                              [--set TABLE.NAME=VALUE ...]

Runs each table (or, with ``--from-cache``, reads the last run's figures from
``bench/reproduction.json``), prints paper and markovlogic side by side and
writes ``bench/REPRODUCTION.md`` from the same figures. A table run alone
(``--only``) replaces its own entry in the cache; the others keep theirs (each
table says the date and commit of its run). ``--json`` writes the figures as
table -> dataset -> system -> figure (e.g. ``poon3.cora.jnt_seg.pairwise_recall``).
``--quick`` runs each table on a small slice (the smoke tests'; its figures
are not the tables') into ``--cache``/``--markdown`` paths you give.
``--set poon3.RUN_CITESEER_FOLDS=2`` changes one of a table's constants for
the run (a subset where the whole table is too long): the record and the
report name each such change beside the table's own value.

Every row comes from the project's commands (``mln derive/learn/infer``,
recorded per table) or its Python API; the bench code prepares data (the
papers' splits and labels), fits the baselines and scores results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import REPO_ROOT
from bench.reproduce.common import Run

TABLES = ("poon3", "riedel2", "w06", "culotta6", "culotta9")
TITLES = {"poon3": "Poon's thesis, chapter 3 (Tables 3.1-3.6)", "riedel2": "Riedel (UAI 2008), Table 2",
          "w06": "Culotta & McCallum (2006), Table 1", "culotta6": "Culotta's thesis, chapter 6 (Figures 6.2-6.5)",
          "culotta9": "Culotta's thesis, chapter 9 (Figures 9.2-9.5)"}
CACHE = REPO_ROOT / "bench" / "reproduction.json"
MARKDOWN = REPO_ROOT / "bench" / "REPRODUCTION.md"


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT,
                               capture_output=True, text=True).stdout.strip()
        return out.stdout.strip() + ("+changes" if dirty else "")
    except OSError:
        return "unknown"


def apply_subset(module, name: str, settings: list[str]) -> list[str]:
    """``--set TABLE.NAME=VALUE``: a module constant of ``TABLE`` changed for this
    run (fewer folds, samples, trials...): the run is then a stated subset of the
    table, and its record and report say so. Returns the settings applied."""
    applied = []
    for item in settings:
        key, sep, value = item.partition("=")
        table, dot, const = key.partition(".")
        if table != name:
            continue
        if not sep or not dot or not const.isupper() or not hasattr(module, const):
            raise ValueError(f"--set {item}: expected {name}.NAME=VALUE, NAME one of the table's upper-case constants")
        old = getattr(module, const)
        try:
            if isinstance(old, tuple):
                kind = type(old[0]) if old else str
                new = tuple(kind(v) for v in value.split(",") if v)
            elif isinstance(old, bool):
                new = value.lower() in ("1", "true", "yes")
            elif old is None:
                new = int(value)
            else:
                new = type(old)(value)
        except ValueError:
            raise ValueError(f"--set {item}: {value!r} is not a {type(old).__name__}") from None
        setattr(module, const, new)
        applied.append(f"{const}={value} (table: {old if not isinstance(old, tuple) else ','.join(map(str, old))})")
    return applied


def run_table(name: str, work: Path, jobs: int, quick: bool, settings: list[str] | None = None,
              subset: list[str] | None = None) -> dict:
    """One table's run; ``subset``: the ``--set`` changes already applied (:func:`apply_subset`)."""
    module = importlib.import_module(f"bench.reproduce.{name}")
    subset = subset or []
    work.mkdir(parents=True, exist_ok=True)
    run = Run(work=work, log=work / "commands.log", quick=quick, jobs=jobs)
    load0, commit = os.getloadavg(), _commit()      # the code the run starts from
    t0, c0 = time.perf_counter(), time.process_time()
    result = module.run(run)
    meta = {"date": dt.datetime.now().astimezone().isoformat(timespec="seconds"), "commit": commit,
            "command": "python -m bench.reproduce --only " + name + (" --quick" if quick else "")
                       + (f" --jobs {jobs}" if jobs != 1 else "")
                       + "".join(f" --set {x}" for x in (settings or []) if x.startswith(name + ".")),
            "subset": subset,
            "wall_seconds": round(time.perf_counter() - t0, 1),
            "cpu_seconds": round(run.cpu + time.process_time() - c0, 1),
            "children_cpu_seconds": round(run.cpu, 1), "load_before": [round(x, 2) for x in load0],
            "load_after": [round(x, 2) for x in os.getloadavg()], "machine": f"{os.cpu_count()} cores, "
            f"{platform.system()} {platform.machine()}", "quick": quick, "commands": run.commands}
    return {"meta": meta, "result": result}


def figures(cache: dict) -> dict:
    """The --json nesting: table -> dataset -> system -> figure (each table's ``result`` as is)."""
    return {name: entry["result"] for name, entry in cache.items() if name in TABLES}


def markdown(cache: dict) -> str:
    out = ["# The seed papers' tables, reproduced side by side", "",
           "Written by `python -m bench.reproduce` from `bench/reproduction.json` (do not edit by hand). Each table "
           "gives the paper's figure, ours, the difference and whether the paper's shape holds; the data, folds and "
           "seeds; the date, commit and cost of its run; and the commands that made its rows (one fold's, where "
           "every fold runs the same; `$WORK` is the run's scratch folder). Timings are from a shared 2-core machine "
           "(CPU seconds are the fairer figure; the load average is given).", "", "## At a glance", ""]
    for name in TABLES:
        entry = cache.get(name)
        if entry is None:
            out.append(f"- **{TITLES[name]}**: not run yet.")
            continue
        module = importlib.import_module(f"bench.reproduce.{name}")
        m = entry["meta"]
        out.append(f"- **{TITLES[name]}** ({m['date'][:10]}, {m['cpu_seconds'] / 60:.1f} min CPU"
                   + (", QUICK SLICE" if m.get("quick") else "")
                   + (", SUBSET: " + "; ".join(m["subset"]) if m.get("subset") else "")
                   + f"): {module.summary(entry['result'])}")
    for name in TABLES:
        entry = cache.get(name)
        out.append("")
        if entry is None:
            out.append(f"## {TITLES[name]}\n\nNot run yet: `python -m bench.reproduce --only {name}`.\n")
            continue
        module = importlib.import_module(f"bench.reproduce.{name}")
        out.append(module.render(entry["result"]))
        out.append(_meta(entry["meta"]))
        out.append(_about(module))
    return "\n".join(out).rstrip() + "\n"


def _meta(m: dict) -> str:
    lines = ["", f"*Run:* {m['date']}, commit {m['commit']}, `{m['command']}`: {m['wall_seconds'] / 60:.1f} min "
             f"wall, {m['cpu_seconds'] / 60:.1f} min CPU (children {m['children_cpu_seconds'] / 60:.1f}), load "
             f"{m['load_before'][0]:.1f} -> {m['load_after'][0]:.1f}, {m['machine']}"
             + (" -- QUICK SLICE, not the table's figures" if m.get("quick") else "") + ".", ""]
    if m.get("subset"):
        lines += [f"**A stated subset of the table** (time on a shared machine): {'; '.join(m['subset'])}.", ""]
    commands = _generic(m.get("commands", []))
    if commands:
        lines.append("<details><summary>Commands</summary>")
        lines.append("")
        lines.append("```sh")
        lines += commands
        lines.append("```")
        lines.append("</details>")
        lines.append("")
    return "\n".join(lines)


def _about(module) -> str:
    """The table's data, folds, systems and what differs from the paper: its
    module's docstring (the one description the code and the report share)."""
    import re

    doc = (module.__doc__ or "").strip()
    if not doc:
        return ""
    text = re.sub(r"``([^`]+)``", r"`\1`", doc)
    text = re.sub(r":(?:func|class|mod):`([^`]+)`", r"`\1`", text)
    return "#### Data, folds, systems and what differs from the paper\n\n" + text + "\n"


def _generic(commands: list[str]) -> list[str]:
    """Commands with fold numbers folded (``fold1`` ... -> ``foldN``), each shape once."""
    import re

    seen, out = set(), []
    for c in commands:
        g = re.sub(r"fold\d+", "foldN", c)
        if g not in seen:
            seen.add(g)
            out.append(g)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.reproduce", description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=",".join(TABLES), help=f"comma-separated of {', '.join(TABLES)}")
    ap.add_argument("--from-cache", action="store_true", help="re-print the cached figures; run nothing")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--jobs", type=int, default=1, help="work units at once (folds x systems), default 1")
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temporary one)")
    ap.add_argument("--set", action="append", default=[], metavar="TABLE.NAME=VALUE",
                    help="change a table's constant for this run (a stated subset: fewer folds, samples...)")
    ap.add_argument("--quick", action="store_true", help="small slices (smoke tests): use with --cache/--markdown")
    ap.add_argument("--cache", type=Path, default=CACHE, help="figures cache (default bench/reproduction.json)")
    ap.add_argument("--markdown", type=Path, default=MARKDOWN, help="report (default bench/REPRODUCTION.md)")
    args = ap.parse_args(argv)
    only = [t.strip() for t in args.only.split(",") if t.strip()]
    bad = [t for t in only if t not in TABLES]
    if bad:
        print(f"unknown table {', '.join(bad)}; tables: {', '.join(TABLES)}", file=sys.stderr)
        return 2
    if args.quick and (args.cache == CACHE or args.markdown == MARKDOWN):
        print("--quick writes slices, not the tables: give --cache and --markdown paths", file=sys.stderr)
        return 2
    bad = [x for x in args.set if x.partition(".")[0] not in only]
    if bad:
        print(f"--set {bad[0]}: expected TABLE.NAME=VALUE with TABLE one of --only's", file=sys.stderr)
        return 2
    subsets = {}
    if not args.from_cache:
        try:
            for name in only:
                subsets[name] = apply_subset(importlib.import_module(f"bench.reproduce.{name}"), name, args.set)
        except ValueError as e:
            print(e, file=sys.stderr)
            return 2
    cache = json.loads(args.cache.read_text()) if args.cache.is_file() else {}
    if args.from_cache:
        missing = [t for t in only if t not in cache]
        if missing:
            print(f"no cached figures for {', '.join(missing)} in {args.cache}", file=sys.stderr)
            return 2
    else:
        tmp = None
        work = args.work
        if work is None:
            tmp = tempfile.TemporaryDirectory(prefix="reproduce-")
            work = Path(tmp.name)
        try:
            for name in only:
                print(f"== {TITLES[name]}", flush=True)
                cache[name] = run_table(name, work / name, args.jobs, args.quick, args.set, subsets.get(name))
                args.cache.write_text(json.dumps(cache, indent=1, default=float) + "\n")
                print(f"   {cache[name]['meta']['wall_seconds']:.0f} s wall, "
                      f"{cache[name]['meta']['cpu_seconds']:.0f} s CPU", flush=True)
        finally:
            if tmp is not None:
                tmp.cleanup()
    text = markdown(cache)
    args.markdown.write_text(text)
    selected = "\n".join(importlib.import_module(f"bench.reproduce.{n}").render(cache[n]["result"])
                         for n in only if n in cache)
    print(selected)
    if args.json is not None:
        args.json.write_text(json.dumps({n: cache[n]["result"] for n in only if n in cache}, indent=1,
                                        default=float) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
