"""``mln infer``: MAP or marginal inference, Alchemy's result format.

MAP (``--map``, or Alchemy's ``-m``/``-a``) writes the true query atoms one per
line (``-a``: every query atom with 0/1); marginals (default) write
``atom probability`` per query atom. Results are written atomically.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from ..errors import OptionError
from ..infer import EXACT_DEFAULT_SECONDS
from ..io import check_outputs, write_text_atomic
from ..parallel.options import RAY_HELP, RAY_WORKERS_HELP, SHARED_DIR_HELP, THREADS_HELP, ParallelOptions
from .common import (MAX_CNF_HELP, MEMORY_HELP, OPEN_HELP, LazyConsole, apply_limits, check_world_flags, load_inputs,
                     peak_mb, split_list)

console = LazyConsole(stderr=True, highlight=False)

# Alchemy spells some options with several letters after one dash; click does not.
ALCHEMY_SPELLINGS = {"-ms": "--mcsat", "-mcsat": "--mcsat", "-gibbs": "--gibbs"}


def rewrite_alchemy_argv(argv: list[str]) -> list[str]:
    return [ALCHEMY_SPELLINGS.get(a, a) for a in argv]


def infer_command(
    input: str = typer.Option(..., "-i", "--input", help="MLN file(s), comma-separated."),
    evidence: Optional[str] = typer.Option(None, "-e", "--evidence", help="Evidence .db file(s), comma-separated."),
    queries: Optional[str] = typer.Option(None, "-q", "--queries", help="Query predicates or atoms, comma-separated."),
    query_file: Optional[Path] = typer.Option(None, "-f", "--query-file", help="File of query predicates/atoms."),
    result: Optional[Path] = typer.Option(None, "-r", "--result", help="Result file (default: print to stdout)."),
    map_: bool = typer.Option(False, "--map", help="MAP inference (most likely world) instead of marginals."),
    map_true: bool = typer.Option(False, "-m", help="Alchemy: MAP, write the true query atoms."),
    map_all: bool = typer.Option(False, "-a", help="Alchemy: MAP, write every query atom with 0/1."),
    method: Optional[str] = typer.Option(
        None, "--method",
        help="MAP: ilp (default), maxwalksat, cpi, cpsat, exact, agglomerative, mh, sgmp, multitask-mh. "
             "Marginals: mcsat (default), gibbs, exact, mh, multitask-mh. A model with set-level features or a declared equivalence among the queries "
             "defaults to agglomerative (MAP) and mh (marginals).",
    ),
    cpi_base: Optional[str] = typer.Option(None, "--cpi-base", help="Base solver of cutting-plane inference: ilp (default), maxwalksat, cpsat, exact."),
    cpi_rounds: Optional[int] = typer.Option(None, "--cpi-rounds", help="cpi: stop after this many rounds of separation and solving (default 100)."),
    mcsat: bool = typer.Option(False, "--mcsat", help="Alchemy's -ms: marginals with MC-SAT."),
    gibbs: bool = typer.Option(False, "-p", "--gibbs", help="Alchemy's -p: marginals with Gibbs sampling."),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
    max_seconds: Optional[float] = typer.Option(
        None, "--max-seconds",
        help=f"Time limit for inference (ilp, cpi and cpsat default to {EXACT_DEFAULT_SECONDS:g} s; "
             "the best world found and the proven bound are reported).",
    ),
    samples: Optional[int] = typer.Option(None, "--samples", help="Samples to draw after burn-in (MC-SAT, Gibbs, mh; default 1000)."),
    burn_in: Optional[int] = typer.Option(None, "--burn-in", help="Burn-in, discarded (MC-SAT, Gibbs: steps, default 100; mh: proposals, default scaled to the model)."),
    chains: Optional[int] = typer.Option(None, "--chains", help="Gibbs: independent chains, pooled (default 4)."),
    hard_weight: Optional[float] = typer.Option(
        None, "--hard-weight",
        help="Treat hard clauses as soft with this weight (as Alchemy does), e.g. when they contradict the "
             "evidence. MAP (not cpi), MC-SAT, Gibbs.",
    ),
    metropolis_steps: Optional[int] = typer.Option(
        None, "--metropolis-steps",
        help="MC-SAT: Metropolis moves on the model after each step (0: plain MC-SAT as in Alchemy).",
    ),
    rao_blackwell: Optional[bool] = typer.Option(
        None, "--rao-blackwell/--no-rao-blackwell",
        help="MC-SAT: average each atom's conditional probability (default) or its sampled value (Alchemy).",
    ),
    init: Optional[str] = typer.Option(
        None, "--init",
        help="MC-SAT start world: hard (WalkSAT on the hard clauses; default of one chain), maxwalksat "
             "(MaxWalkSAT's best world), two-pass (MaxWalkSAT on the soft clauses, then on all) or best (the "
             "cheaper of MaxWalkSAT from a random and from the all-false world; default of pooled chains).",
    ),
    init_flips: Optional[int] = typer.Option(
        None, "--init-flips", help="MC-SAT --init maxwalksat/two-pass/best: MaxWalkSAT flips per pass (default max(10,000, 20 per variable)).",
    ),
    group_mutex: Optional[bool] = typer.Option(
        None, "--group-mutex/--no-group-mutex",
        help="MC-SAT, MaxWalkSAT: cliques of hard clauses !a v !b become one at-most-one factor each (exactly-one "
             "when a hard clause lists the same atoms), moved in one step.",
    ),
    joint_moves: Optional[bool] = typer.Option(
        None, "--joint-moves/--no-joint-moves",
        help="MC-SAT: the Metropolis pair moves of strong clauses also move atoms of ! blocks and mutex groups.",
    ),
    cluster_moves: Optional[bool] = typer.Option(
        None, "--cluster-moves/--no-cluster-moves",
        help="MC-SAT: also flip whole sets of atoms that the slice ties by equivalences (chains of strong "
             "two-way rules, cycles of hard implications), in the manner of Swendsen-Wang, and swap the true "
             "atom of ! blocks tied that way.",
    ),
    max_flips: Optional[int] = typer.Option(None, "--max-flips", help="MaxWalkSAT flips per try (default 50,000)."),
    tries: Optional[int] = typer.Option(None, "--tries", help="MaxWalkSAT tries (restarts; default 20)."),
    noise: Optional[float] = typer.Option(None, "--noise", help="MaxWalkSAT noise: the probability of a random-walk step (default 0.5)."),
    closed: Optional[str] = typer.Option(None, "-c", "--closed", help="Predicates to treat as closed-world."),
    open_: Optional[str] = typer.Option(None, "-o", "--open", help=OPEN_HELP),
    db_file: Optional[Path] = typer.Option(None, "--db-file", help="Keep the evidence database in this file (data larger than memory)."),
    stats_json: Optional[Path] = typer.Option(None, "--stats-json", help="Write figures (atoms, clauses, seconds, score...) as JSON."),
    steps: Optional[int] = typer.Option(None, "--steps", help="mh: proposals per MAP run (default 200 per constant)."),
    temperature: Optional[float] = typer.Option(None, "--temperature", help="mh MAP: fixed temperature (0: greedy, the default)."),
    anneal: Optional[float] = typer.Option(None, "--anneal", help="mh MAP: simulated annealing from this temperature down to --temperature."),
    thin: Optional[int] = typer.Option(None, "--thin", help="mh marginals: proposals between samples (default: one per constant)."),
    restarts: Optional[int] = typer.Option(None, "--restarts", help="mh MAP: independent runs, the best kept (default 1). sgmp: restarts once messages settle (default: until --max-seconds; none without it)."),
    clusters: Optional[Path] = typer.Option(None, "--clusters", help="mh/agglomerative: also write the clusters, one per line (predicate, then its constants, tab-separated)."),
    partition: Optional[str] = typer.Option(
        None, "--partition",
        help="sgmp: clusters as groups of predicates, e.g. 'pos,chunk;ner', or predicates, graph (a partition of the atom-clause graph) or auto (the default: predicates unless one predicate holds most atoms, then graph).",
    ),
    messages: Optional[str] = typer.Option(None, "--messages", help="sgmp: full, n-best (default) or univariate."),
    n_best: Optional[int] = typer.Option(None, "--n-best", help="sgmp: entries of an n-best message (default 50)."),
    iterations: Optional[int] = typer.Option(None, "--iterations", help="sgmp: message-passing sweeps (default 10)."),
    tasks: Optional[str] = typer.Option(
        None, "--tasks",
        help="multitask-mh: tasks as groups of predicates, e.g. 'pos;ner' (default: one task per predicate).",
    ),
    neighbourhood: Optional[int] = typer.Option(
        None, "--neighbourhood", help="multitask-mh: variables re-sampled in each neighbouring task (default 3).",
    ),
    lazy: bool = typer.Option(
        False, "--lazy",
        help="Lazy inference: ground only the clauses the search can reach (MAP: maxwalksat; marginals: mcsat; "
             "infer/lazy/). Stats: active atoms and clauses against the full network's rows.",
    ),
    lazy_threshold: Optional[float] = typer.Option(
        None, "--lazy-threshold",
        help="--lazy marginals: activate an atom held false when its probability given a checked world exceeds "
             "this (default 0.001; 0: every atom that can be true).",
    ),
    memory_limit: Optional[str] = typer.Option(None, "--memory-limit", help=MEMORY_HELP),
    max_cnf_clauses: Optional[int] = typer.Option(None, "--max-cnf-clauses", help=MAX_CNF_HELP),
    threads: Optional[int] = typer.Option(None, "--threads", help=THREADS_HELP),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", "--ray", help=RAY_HELP),
    ray_workers: Optional[int] = typer.Option(None, "--ray-workers", help=RAY_WORKERS_HELP),
    shared_dir: Optional[Path] = typer.Option(None, "--shared-dir", help=SHARED_DIR_HELP),
) -> None:
    """Infer the most likely world (--map) or the marginal probabilities of the query atoms."""
    from ..checks import check_seconds, check_seed

    if not split_list(queries) and query_file is None:
        raise OptionError("no query given: name the query predicates or atoms with -q (e.g. -q Smokes,Cancer) "
                          "or give a query file with -f")
    check_world_flags(closed, open_)
    apply_limits(max_cnf_clauses, memory_limit)
    check_seed(seed)
    check_seconds(max_seconds)
    check_outputs({"result file": result, "stats file": stats_json, "clusters file": clusters},
                  split_list(input) + split_list(evidence) + ([str(query_file)] if query_file else []))
    want_map = map_ or map_true or map_all
    if want_map and (mcsat or gibbs):
        raise OptionError("--map (-m/-a) cannot be combined with -ms/-p (marginal inference)")
    if mcsat and gibbs:
        raise OptionError("choose one of -ms (MC-SAT) and -p (Gibbs)")
    if map_true and map_all:
        raise OptionError("choose one of -m (true atoms) and -a (all atoms with 0/1)")
    if steps is not None and steps < 1:
        raise OptionError(f"--steps must be a positive integer (proposals per MAP run), got {steps}")
    if lazy_threshold is not None and not lazy:
        raise OptionError("--lazy-threshold applies to --lazy inference")
    task = "map" if want_map else "marginals"
    mln, dbs, query_list = load_inputs(input, evidence, queries, query_file)
    from ..api import map_inference, marginal_inference

    if not query_list:
        raise OptionError(f"the query file {query_file} names no query atom or predicate (-f)")
    if method is None and lazy:
        method = "maxwalksat" if want_map else ("gibbs" if gibbs else "mcsat")
    elif method is None:
        method = "ilp" if want_map else ("gibbs" if gibbs else "mcsat")
        if not (mcsat or gibbs):
            from ..cluster.api import default_method

            method = default_method(mln, query_list, want_map) or method
    elif (mcsat and method != "mcsat") or (gibbs and method != "gibbs"):
        raise OptionError(f"--method {method} contradicts {'-ms' if mcsat else '-p'}")
    if lazy:
        from ..infer.lazy.run import check_lazy_method

        check_lazy_method(task, method)
    from ..cluster.api import clusters_queried
    from ..infer import catalog

    spec = catalog.method(task, method, catalog.ATOMS)
    if method == "agglomerative" or (method == "mh" and clusters_queried(mln, query_list)):
        spec = catalog.method(task, method, catalog.CLUSTERINGS)
    # every flag a method may take, from the one table of infer/catalog.py
    options = catalog.options(spec, {
        "--samples": samples, "--burn-in": burn_in, "--chains": chains, "--hard-weight": hard_weight,
        "--metropolis-steps": metropolis_steps, "--rao-blackwell": rao_blackwell, "--init": init,
        "--init-flips": init_flips, "--group-mutex": group_mutex, "--joint-moves": joint_moves,
        "--cluster-moves": cluster_moves, "--max-flips": max_flips, "--tries": tries, "--noise": noise,
        "--cpi-base": cpi_base, "--cpi-rounds": cpi_rounds, "--steps": steps, "--temperature": temperature, "--anneal": anneal,
        "--thin": thin, "--restarts": restarts, "--partition": partition if partition in ("auto", "graph", "predicates") else _groups(partition, "--partition"),
        "--messages": messages, "--n-best": n_best, "--iterations": iterations,
        "--tasks": _groups(tasks, "--tasks"), "--neighbourhood": neighbourhood,
        "--clusters": clusters, "--lazy-threshold": lazy_threshold,
    }, lazy=lazy)
    options.pop("clusters", None)
    options.pop("threshold", None)
    if spec.seeded and not (method == "cpi" and options.get("base", "ilp") != "maxwalksat"):
        options["seed"] = seed
    if max_seconds is not None:
        options["max_seconds"] = max_seconds

    common = dict(closed=split_list(closed), open_=split_list(open_), db_path=str(db_file) if db_file else None)
    if ray_address is None and (ray_workers is not None or shared_dir is not None):
        raise OptionError(f"--{'ray-workers' if ray_workers is not None else 'shared-dir'} applies with "
                          "--ray-address (or --ray local)")
    common["parallel"] = ParallelOptions(
        threads=threads, ray_address=ray_address, ray_workers=ray_workers,
        shared_dir=None if shared_dir is None else str(shared_dir)).check()
    if lazy:
        from ..infer.lazy import LazyOptions

        common["lazy"] = (LazyOptions() if lazy_threshold is None else LazyOptions(threshold=lazy_threshold)).check()

    stats: dict = {"method": method, "task": task}
    if spec.over == catalog.CLUSTERINGS:
        _cluster_inference(mln, dbs, query_list, method, want_map, map_all, common, stats, result, stats_json,
                           clusters, options)
        return
    if want_map:
        answer = map_inference(mln, dbs, query_list, method=method, **common, **options)
        if method in ("ilp", "cpi", "cpsat", "exact") and not answer.optimal:
            gap = "unknown" if answer.gap is None else f"{answer.gap:.4g}"
            broken = ""
            killed = answer.stats.get("killed_groups", 0)
            if answer.stats.get("exact_skipped"):
                broken += (f" The network ({answer.stats.get('literals', 0):,} literals) is too large to set up the "
                           f"exact ILP within the time limit (about {answer.stats.get('exact_setup_estimate', 0):.0f} s "
                           f"before HiGHS could start): the world comes from {_PATHS.get(answer.stats.get('path'), 'MaxWalkSAT')} and the "
                           "bound from the dual of the LP relaxation (infer/plan.py).")
            elif killed:
                broken += (f" HiGHS did not finish within the limit on {killed} large part(s): their world comes "
                           "from MaxWalkSAT, run meanwhile on the other core.")
            elif answer.stats.get("fallback_groups"):
                broken += " Part of the world comes from MaxWalkSAT (HiGHS's was worse or missing)."
            if answer.hard_violated:
                broken += (f" It violates {answer.hard_violated:,} hard ground clause"
                          f"{'s' if answer.hard_violated != 1 else ''}.")
            console.print(
                f"[yellow]warning:[/] {method} stopped before proving optimality (relative gap {gap}); "
                f"the result is the best world found.{broken} Raise --max-seconds to search longer."
            )
        text = answer.to_alchemy(all_atoms=map_all)
        net = answer.network
        stats.update(_scalar_stats(answer.stats))     # the answer's own figures below take precedence
        stats.update(
            score=answer.score, cost=answer.cost, hard_violated=answer.hard_violated,
            optimal=answer.optimal, bound=answer.bound, gap=answer.gap,
            ground_seconds=answer.ground_seconds, infer_seconds=answer.infer_seconds,
        )
    else:
        with _sampling_progress(method, options.get("samples", 1000)) as progress:
            if progress is not None:
                options["progress"] = progress
            answer = marginal_inference(mln, dbs, query_list, method=method, **common, **options)
        text = answer.to_alchemy()
        net = answer.network
        seconds = answer.infer_seconds
        stats.update(
            samples=answer.samples, ground_seconds=answer.ground_seconds, infer_seconds=seconds,
            samples_per_second=(answer.samples / seconds) if seconds > 0 and answer.samples else None,
        )
        stats.update(_scalar_stats(answer.stats))

    stats.update(
        atoms=net.n_atoms, query_atoms=int(net.is_query.sum()), clauses=net.n_clauses,
        hard_clauses=int(net.is_hard.sum()), components=net.n_components, peak_mb=peak_mb(),
    )
    if answer.stats.get("distributed"):
        # on Ray the driver never holds the clauses: the parts' counts (before merging across parts)
        stats.update(clauses=answer.stats.get("ground_clauses"), hard_clauses=None)
    if result is not None:
        write_text_atomic(result, text)
    else:
        sys.stdout.write(text)
    _print_summary(stats, result)
    if stats_json is not None:
        write_text_atomic(stats_json, json.dumps(stats, indent=2, default=float) + "\n")


def _cluster_inference(mln, dbs, query_list, method, want_map, map_all, common, stats, result, stats_json,
                       clusters_path, options) -> None:
    """``--method mh`` / ``agglomerative``: inference over clusterings of the
    equivalence predicates among the queries (cluster/api.py)."""
    from ..api import map_inference, marginal_inference

    if want_map:
        answer = map_inference(mln, dbs, query_list, method=method, **common, **options)
        text = answer.to_alchemy(all_atoms=map_all)
        stats.update(score=answer.score)
    else:
        answer = marginal_inference(mln, dbs, query_list, method=method, **common, **options)
        text = answer.to_alchemy()
    stats.update(_scalar_stats(answer.stats))
    stats.update(ground_seconds=answer.ground_seconds, infer_seconds=answer.infer_seconds, peak_mb=peak_mb(),
                 predicates=",".join(p.model.predicate for p in answer.parts))
    if result is not None:
        write_text_atomic(result, text)
    else:
        sys.stdout.write(text)
    if clusters_path is not None:
        write_text_atomic(clusters_path, answer.clusters_text())
    from rich.table import Table

    table = Table(show_header=False, box=None, pad_edge=False)
    for k in ("task", "method", "predicates", "mentions", "clusters", "score", "ground_seconds", "infer_seconds",
              "compile_seconds",
              "merges", "proposals", "accepted", "proposals_per_second", "samples"):
        v = stats.get(k)
        if v is not None:
            table.add_row(k.replace("_", " "), f"{v:.4g}" if isinstance(v, float) else str(v))
    if result is not None:
        table.add_row("result", str(result))
    if clusters_path is not None:
        table.add_row("clusters file", str(clusters_path))
    console.print(table)
    if stats_json is not None:
        write_text_atomic(stats_json, json.dumps(stats, indent=2, default=float) + "\n")


class _sampling_progress:
    """The samplers' bar (samples drawn), on the command's progress display."""

    def __init__(self, method: str, total: int) -> None:
        from .. import progress

        self.enabled = method in ("mcsat", "gibbs") and progress.enabled()
        self.total = total
        self.task = None

    def __enter__(self):
        if not self.enabled:
            return None
        from .. import progress

        self.task = progress.task("sampling", total=self.total)
        return lambda done: self.task.update(completed=done)

    def __exit__(self, *exc) -> None:
        if self.task is not None:
            self.task.close()


def _print_summary(stats: dict, result: Path | None) -> None:
    """Two aligned columns on stderr, in plain text: rich's table costs a small
    run about 30 ms of imports (bench/workloads/firstrun.py)."""
    keys = ["task", "method", "solver", "slice_sampler", "atoms", "query_atoms", "clauses", "hard_clauses",
            "components", "ground_seconds", "infer_seconds", "compile_seconds", "score", "cost", "hard_violated",
            "bound", "gap", "optimal", "iterations", "groundings_added", "converged", "samples",
            "samples_per_second", "flips_per_second", "active_atoms", "active_rows", "total_rows",
            "activation_rounds"]
    rows = []
    for k in keys:
        v = stats.get(k)
        if v is None:
            continue
        rows.append((k.replace("_", " "), f"{v:.4g}" if isinstance(v, float) else str(v)))
    if result is not None:
        rows.append(("result", str(result)))
    width = max((len(k) for k, _ in rows), default=0)
    sys.stderr.write("".join(f"{k.ljust(width)}  {v}\n" for k, v in rows))
    sys.stderr.flush()


def _groups(text: str | None, flag: str) -> list[list[str]] | None:
    """``'a,b;c'`` -> ``[['a', 'b'], ['c']]`` (groups of predicate names)."""
    if text is None:
        return None
    groups = [[p.strip() for p in g.split(",") if p.strip()] for g in text.split(";")]
    if not any(groups) or not all(groups):
        raise OptionError(f"{flag} takes groups of predicate names separated by ';', the names in a group by ','"
                          f" (e.g. 'a,b;c'), got {text!r}")
    return groups


def register(app: typer.Typer) -> None:
    app.command("infer")(infer_command)


_PATHS = {"lp-rounding": "the LP dual's reduced costs (MaxWalkSAT from there found none better)",
          "lp+maxwalksat": "MaxWalkSAT started from the LP dual's world"}


def _scalar_stats(stats: dict) -> dict:
    """The solver's figures for --stats-json: scalars as they are, one level
    of nested dictionaries (e.g. ``presolve``) flattened to ``presolve_fixed``."""
    out: dict = {}
    for k, v in stats.items():
        if isinstance(v, (int, float, str, bool)):
            out[k] = v
        elif isinstance(v, dict):
            out.update({f"{k}_{k2}": v2 for k2, v2 in v.items() if isinstance(v2, (int, float, str, bool))})
    return out
