"""``python -m bench [WORKLOAD ...] [-n RUNS] [--list]`` (run from the repository root).

Runs each workload RUNS times (default 3), each run in a fresh process;
prints median wall time, peak memory and the workload's figures beside the
previous result and other systems' figures; writes bench/results/<name>.json.
"""

from __future__ import annotations

import argparse
import json
import sys

from rich.console import Console
from rich.table import Table

from .harness import RESULTS_DIR, load_workloads, previous_result, run_once_here, run_workload, save_result
from .peers import peer_figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", help="workloads to run (default: all)")
    parser.add_argument("-n", "--runs", type=int, default=3, help="runs per workload (default 3)")
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    parser.add_argument("--in-process", action="store_true",
                        help="run in this process (no fresh process per run; peak memory is then cumulative)")
    parser.add_argument("--no-save", action="store_true", help="do not write bench/results/<name>.json")
    parser.add_argument("--child", metavar="NAME", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:  # one run inside a fresh process (see harness.run_once)
        result = run_once_here(args.child)
        print("BENCH-RESULT " + json.dumps(result), flush=True)
        return 0

    registry = load_workloads()
    console = Console(highlight=False)
    if args.list:
        for wl in registry.values():
            console.print(f"[bold]{wl.name}[/bold]  {wl.description}")
        return 0
    names = args.workloads or list(registry)
    unknown = [n for n in names if n not in registry]
    if unknown:
        console.print(f"unknown workload(s): {', '.join(unknown)}; known: {', '.join(registry)}")
        return 2
    if args.runs < 1:
        console.print("--runs must be at least 1")
        return 2

    status = 0
    for name in names:
        wl = registry[name]
        before = previous_result(name)
        with console.status(f"{name}...") as spinner:
            summary = run_workload(wl, args.runs, in_process=args.in_process,
                                   progress=lambda msg: spinner.update(msg))
        if summary.skipped:
            console.print(f"[yellow]{name}: skipped[/yellow] ({summary.skipped})")
            continue
        if summary.error:
            console.print(f"[red]{name}: failed[/red] {summary.error}")
            status = 1
            continue
        if not args.no_save:
            path = save_result(summary)
        report(console, summary, before)
        if not args.no_save:
            console.print(f"  written to {path.relative_to(RESULTS_DIR.parents[1])}")
        peers = peer_figures(wl.peers)
        if peers:
            table = Table(title=f"other systems ({wl.peers})", title_justify="left", show_edge=False)
            table.add_column("system")
            table.add_column("what")
            table.add_column("figure", justify="right")
            for p in peers:
                table.add_row(p.system, p.what, p.text() + (f"  ({p.note})" if p.note else ""))
            console.print(table)
    return status


def report(console: Console, summary, before: dict | None) -> None:
    data = summary.to_json()
    table = Table(title=f"{summary.name}: {summary.description} (median of {len(summary.ok_runs)} runs)",
                  title_justify="left", show_edge=False)
    table.add_column("figure")
    table.add_column("markovlogic", justify="right")
    table.add_column("previous", justify="right")
    table.add_column("ratio", justify="right")
    prev_figs = (before or {}).get("figures", {})
    rows = [("wall time (s)", data["median_wall_s"], (before or {}).get("median_wall_s")),
            ("CPU time (s)", data["median_cpu_s"], (before or {}).get("median_cpu_s")),
            ("peak RSS (MB)", data["peak_rss_mb"], (before or {}).get("peak_rss_mb"))]
    rows += [(k, v, prev_figs.get(k)) for k, v in data["figures"].items()]
    for label, value, prev in rows:
        ratio = ""
        if isinstance(value, (int, float)) and isinstance(prev, (int, float)) and prev:
            ratio = f"{value / prev:.2f}x"
        table.add_row(label, _fmt(value), _fmt(prev), ratio)
    console.print(table)


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


if __name__ == "__main__":
    sys.exit(main())
