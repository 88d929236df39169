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

``--jobs N`` (default 2; 1 with ``--quick``): N commands at once. Several
tables run side by side, each in its own process (its record: its own wall
from start to end, its own CPU and its children's), sharing N slots: every
command holds one while it runs, and the tables whose work is in-process
Python (culotta6, culotta9: one long unit each) hold one for their whole run
and start first, so the long indivisible units are not left for the end.
The whole run's wall and CPU go to the cache's ``run`` record. ``--jobs 1``
runs the tables one after the other, each command alone.

Every row comes from the project's commands (``mln derive/learn/infer``,
recorded per table) or its Python API; the bench code prepares data (the
papers' splits and labels), fits the baselines and scores results.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import json
import multiprocessing
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
# tables whose work runs in the table's own process (no child commands): one slot for the whole run
IN_PROCESS = ("culotta9", "culotta6")
# side by side, the tables start in this order: the long in-process units first, then by CPU
START_ORDER = ("culotta9", "culotta6", "poon3", "riedel2", "w06")
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
              subset: list[str] | None = None, slots=None, command: str | None = None) -> dict:
    """One table's run; ``subset``: the ``--set`` changes already applied (:func:`apply_subset`);
    ``slots``: the semaphore shared with tables running side by side and ``command`` the whole
    run's command line (see :func:`run_side_by_side`)."""
    module = importlib.import_module(f"bench.reproduce.{name}")
    subset = subset or []
    work.mkdir(parents=True, exist_ok=True)
    run = Run(work=work, log=work / "commands.log", quick=quick, jobs=jobs, slots=slots)
    load0, commit = os.getloadavg(), _commit()      # the code the run starts from
    t0, c0 = time.perf_counter(), time.process_time()
    result = module.run(run)
    meta = {"date": dt.datetime.now().astimezone().isoformat(timespec="seconds"), "commit": commit,
            "command": command or ("python -m bench.reproduce --only " + name + (" --quick" if quick else "")
                                   + (f" --jobs {jobs}" if jobs != 1 else "")
                                   + "".join(f" --set {x}" for x in (settings or []) if x.startswith(name + "."))),
            "subset": subset,
            "wall_seconds": round(time.perf_counter() - t0, 1),
            "cpu_seconds": round(run.cpu + time.process_time() - c0, 1),
            "children_cpu_seconds": round(run.cpu, 1), "load_before": [round(x, 2) for x in load0],
            "load_after": [round(x, 2) for x in os.getloadavg()], "machine": f"{os.cpu_count()} cores, "
            f"{platform.system()} {platform.machine()}", "quick": quick, "commands": run.commands}
    return {"meta": meta, "result": result}


def _table_process(name: str, work: Path, jobs: int, quick: bool, settings: list[str], subset: list[str],
                   slots, held: bool, command: str, out: Path) -> None:
    """A table run side by side (a forked process): its entry goes to ``out``. An
    in-process table holds one slot for its whole run (``held``: the parent took it
    for this table already); the others take one per command."""
    import traceback

    try:
        if name in IN_PROCESS:
            if not held:
                slots.acquire()
            try:
                entry = run_table(name, work, 1, quick, settings, subset, None, command)
            finally:
                slots.release()
        else:
            # (the quick slices run their commands in this process: one at a time)
            entry = run_table(name, work, 1 if quick else jobs, quick, settings, subset, slots, command)
        entry["meta"]["side_by_side"] = {"slots": jobs, "note": "wall_seconds: the table's start to end while "
                                         "sharing the slots with the other tables (waits for a slot included)"}
        out.write_text(json.dumps(entry, indent=1, default=float) + "\n")
    except BaseException:
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    sys.stdout.flush()
    os._exit(0)


def run_side_by_side(only: list[str], work: Path, jobs: int, quick: bool, settings: list[str],
                     subsets: dict, command: str, done) -> tuple[list[str], float]:
    """The tables in ``only`` at once, each in a forked process, sharing ``jobs``
    slots (a semaphore every command holds while it runs); ``done(name, entry)``
    as each table ends. Returns (the tables that failed, the whole run's wall)."""
    ctx = multiprocessing.get_context("fork")
    slots = ctx.BoundedSemaphore(jobs)
    t0 = time.perf_counter()
    procs, held = {}, 0
    for name in sorted(only, key=START_ORDER.index):
        take = name in IN_PROCESS and held < jobs
        if take:            # the long in-process units get their slot before the others ask for any
            slots.acquire()
            held += 1
        (work / name).mkdir(parents=True, exist_ok=True)
        out = work / name / "entry.json"
        out.unlink(missing_ok=True)
        p = ctx.Process(target=_table_process, name=f"reproduce-{name}",
                        args=(name, work / name, jobs, quick, settings, subsets.get(name, []), slots, take,
                              command, out))
        p.start()
        procs[p.sentinel] = (name, p, out)
    failed = []
    from multiprocessing.connection import wait

    while procs:
        for sentinel in wait(list(procs)):
            name, p, out = procs.pop(sentinel)
            p.join()
            if p.exitcode == 0 and out.is_file():
                done(name, json.loads(out.read_text()))
            else:
                failed.append(name)
                print(f"   {name} failed (exit {p.exitcode}); its commands' logs are under {work / name}",
                      file=sys.stderr, flush=True)
    return failed, time.perf_counter() - t0


def figures(cache: dict) -> dict:
    """The --json nesting: table -> dataset -> system -> figure (each table's ``result`` as is)."""
    return {name: entry["result"] for name, entry in cache.items() if name in TABLES}


def markdown(cache: dict) -> str:
    out = ["# The seed papers' tables, reproduced side by side", "",
           "Written by `python -m bench.reproduce` from `bench/reproduction.json` (do not edit by hand). Each table "
           "gives the paper's figure, ours, the difference and whether the paper's shape holds; the data, folds and "
           "seeds; the date, commit and cost of its run; and the commands that made its rows (one fold's, where "
           "every fold runs the same; `$WORK` is the run's scratch folder). Timings are from a shared 2-core machine "
           "(CPU seconds are the fairer figure; the load average is given).", ""]
    r = cache.get("run")
    if r:
        out += [f"Last run of several tables: {r['date']}, commit {r['commit']}, `{r['command']}`: "
                f"{', '.join(r['tables'])} "
                + (f"side by side ({r['jobs']} commands at once)" if r.get("side_by_side") else "one after the other")
                + f", {r['wall_seconds'] / 60:.1f} min wall for the whole run, {r['cpu_seconds'] / 60:.1f} min CPU "
                f"over the tables, load {r['load_before'][0]:.1f} -> {r['load_after'][0]:.1f}"
                + (" -- QUICK SLICES" if r.get("quick") else "") + ".", ""]
    out += ["## At a glance", ""]
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
             + (" -- QUICK SLICE, not the table's figures" if m.get("quick") else "")
             + (f"; side by side with the other tables ({m['side_by_side']['slots']} commands at once; its wall "
                "includes waiting for a slot; whole run "
                f"{m.get('run_wall_seconds', 0) / 60:.1f} min wall)" if m.get("side_by_side") else "") + ".", ""]
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
    ap.add_argument("--jobs", type=int, default=None,
                    help="commands at once, tables side by side (default 2; 1 with --quick; 1: one after the other)")
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temporary one)")
    ap.add_argument("--set", action="append", default=[], metavar="TABLE.NAME=VALUE",
                    help="change a table's constant for this run (a stated subset: fewer folds, samples...)")
    ap.add_argument("--quick", action="store_true", help="small slices (smoke tests): use with --cache/--markdown")
    ap.add_argument("--cache", type=Path, default=CACHE, help="figures cache (default bench/reproduction.json)")
    ap.add_argument("--markdown", type=Path, default=MARKDOWN, help="report (default bench/REPRODUCTION.md)")
    args = ap.parse_args(argv)
    jobs_given = args.jobs is not None
    if args.jobs is None:
        args.jobs = 1 if args.quick else 2
    if args.jobs < 1:
        print(f"--jobs {args.jobs}: expected 1 or more", file=sys.stderr)
        return 2
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
        command = ("python -m bench.reproduce" + ("" if args.only == ",".join(TABLES) else f" --only {args.only}")
                   + (" --quick" if args.quick else "") + (f" --jobs {args.jobs}" if jobs_given else "")
                   + "".join(f" --set {x}" for x in args.set))
        date, commit, load0 = dt.datetime.now().astimezone().isoformat(timespec="seconds"), _commit(), os.getloadavg()
        t0 = time.perf_counter()

        def done(name: str, entry: dict) -> None:
            cache[name] = entry
            args.cache.write_text(json.dumps(cache, indent=1, default=float) + "\n")
            print(f"== {TITLES[name]}: {entry['meta']['wall_seconds']:.0f} s wall, "
                  f"{entry['meta']['cpu_seconds']:.0f} s CPU", flush=True)

        failed: list[str] = []
        try:
            if args.jobs > 1 and len(only) > 1:
                print(f"== {', '.join(only)} side by side, {args.jobs} commands at once", flush=True)
                failed, _ = run_side_by_side(only, work, args.jobs, args.quick, args.set, subsets, command, done)
            else:
                for name in only:
                    print(f"== {TITLES[name]}", flush=True)
                    done(name, run_table(name, work / name, args.jobs, args.quick, args.set, subsets.get(name),
                                         command=command if len(only) > 1 else None))
        finally:
            if tmp is not None:
                tmp.cleanup()
        wall = time.perf_counter() - t0
        if len(only) > 1:
            ran = [n for n in only if n not in failed]
            cache["run"] = {"date": date, "commit": commit, "command": command, "tables": ran, "failed": failed,
                            "jobs": args.jobs, "side_by_side": args.jobs > 1, "wall_seconds": round(wall, 1),
                            "cpu_seconds": round(sum(cache[n]["meta"]["cpu_seconds"] for n in ran), 1),
                            "load_before": [round(x, 2) for x in load0],
                            "load_after": [round(x, 2) for x in os.getloadavg()], "quick": args.quick}
            for n in ran:
                cache[n]["meta"]["run_wall_seconds"] = cache["run"]["wall_seconds"]
            args.cache.write_text(json.dumps(cache, indent=1, default=float) + "\n")
        print(f"== whole run: {wall:.0f} s wall ({wall / 60:.1f} min)"
              + (f", {cache['run']['cpu_seconds']:.0f} s CPU over the tables" if len(only) > 1 else "")
              + (f"; FAILED: {', '.join(failed)}" if failed else ""), flush=True)
        if failed:
            args.markdown.write_text(markdown(cache))
            return 1
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
