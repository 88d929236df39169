"""``mln learn``: weight learning, Alchemy's ``learnwts`` spellings accepted.

    mln learn -i prog.mln -t train.db[,more.db] -o learned.mln [--ne preds]
              [--method pll|perceptron|dn|scg|mira|samplerank|piecewise] [-g] [-d] [--multiple-databases]
              [--iterations N] [--prior-stddev S] [--seed N] [--trace FILE.csv] [--plot FILE.png]
              [--samples N] [--final-samples N] [--average] [--expectations map|mcsat|exact]
              [--hidden PRED[,PRED]] [--em hard|soft]
              [--loss hamming|pairwise-f1|b3] [--update perceptron|mira|mira++] [--steps N] ...

A progress bar shows the objective per iteration. The learned model is written
atomically, and only when learning succeeded; so are the trace (CSV: iteration,
objective, seconds, one column per weight) and the learning curve (PNG).
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Optional

import typer

from ..errors import OptionError
from ..io import check_outputs, write_text_atomic
from ..parallel.options import RAY_WORKERS_HELP, THREADS_HELP, ParallelOptions
from .common import MAX_CNF_HELP, MEMORY_HELP, LazyConsole, _existing, apply_limits, split_list

console = LazyConsole(stderr=True, highlight=False)

DEFAULT_ITERATIONS = {"pll": 10000, "dn": 100, "scg": 100, "perceptron": 100, "mira": 20, "samplerank": 5, "piecewise": 200}


LEARN_RAY_HELP = ("Ray: ground the training databases of --multiple-databases on a Ray cluster ('auto', HOST:PORT, "
                  "ray://HOST:PORT or 'local'); learning itself, and its inference, run on this machine "
                  "(pip install 'markovlogic[ray]').")
RAY_REFUSED = ("--ray-address: learning and its inference run on this machine; only the grounding of several "
               "training databases (--multiple-databases with two or more -t files) goes to a Ray cluster. "
               "Drop --ray-address, or use --threads N for both cores.")


def learn_command(
    input: str = typer.Option(..., "-i", "--input", help="MLN file(s), comma-separated."),
    train: str = typer.Option(..., "-t", "--train", help="Training .db file(s), comma-separated."),
    output: Path = typer.Option(..., "-o", "--output", help="Output .mln file with the learned weights."),
    ne: Optional[str] = typer.Option(
        None, "--ne", "-ne", help="Query (non-evidence) predicates, comma-separated. Default: the predicates not marked closed (*); all for -g."),
    method: Optional[str] = typer.Option(None, "--method", help="pll, perceptron, dn (default), scg, mira, samplerank, piecewise (set-level features: a logistic model of merges)."),
    generative: bool = typer.Option(False, "-g", help="Alchemy: generative learning (pseudo-likelihood, --method pll)."),
    discriminative: bool = typer.Option(False, "-d", help="Alchemy: discriminative learning (the default)."),
    multiple_databases: bool = typer.Option(
        False, "--multiple-databases", "-multipleDatabases", help="Each .db file is an independent world."),
    iterations: Optional[int] = typer.Option(
        None, "--iterations", "-dNumIter", "-gMaxIter", help="Iterations (pll 10000, dn/scg/perceptron 100, mira 20; samplerank: epochs, 5)."),
    prior_stddev: Optional[float] = typer.Option(
        None, "--prior-stddev", "-priorStdDev", help="Std. dev. of the Gaussian prior (default 2; 100 for pll)."),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
    inference: Optional[str] = typer.Option(
        None, "--inference",
        help="dn/scg expectations: mcsat (default) or exact. samplerank over an equivalence predicate: the inference "
             "it trains for, agglomerative (the merges greedy agglomerative MAP makes; default when the model has linkage "
             "features) or mh (MH proposals; default otherwise)."),
    samples: Optional[int] = typer.Option(
        None, "--samples", help="dn/scg (and perceptron with --expectations mcsat): MC-SAT samples per iteration (default 5)."),
    final_samples: Optional[int] = typer.Option(
        None, "--final-samples", help="dn/scg: grow the samples per iteration linearly from --samples to this at the last iteration."),
    average: Optional[bool] = typer.Option(
        None, "--average/--no-average",
        help="dn/scg (and samplerank): return the mean of the weights over the second half of the iterations "
             "(Polyak-Ruppert averaging of the sampled gradients' iterates) instead of the last."),
    expectations: Optional[str] = typer.Option(
        None, "--expectations", help="perceptron: expected counts from the MAP world (map, default), MC-SAT samples (mcsat) or enumeration (exact)."),
    init: Optional[str] = typer.Option(
        None, "--init", help="dn/scg/perceptron/mira starting weights: pll (default, the pseudo-likelihood optimum) or model "
                             "(samplerank: model by default, or pll)."),
    map_method: Optional[str] = typer.Option(
        None, "--map-method", help="perceptron/mira MAP: maxwalksat (perceptron default), cpi (mira default: soft clauses ground in full, "
             "hard formulas by cutting planes, ILP), ilp, exact."),
    max_seconds: Optional[float] = typer.Option(None, "--max-seconds", help="Stop learning after this many seconds."),
    learning_rate: Optional[float] = typer.Option(
        None, "--learning-rate", help="perceptron (and samplerank --update perceptron): step size (a positive number)."),
    loss: Optional[str] = typer.Option(
        None, "--loss", help="samplerank: hamming (default for ordinary query atoms; over an equivalence predicate: pairs "
                             "wrong), pairwise-f1 (default for an equivalence predicate) or b3."),
    update: Optional[str] = typer.Option(
        None, "--update",
        help="samplerank: perceptron, mira (default) or mira++; with --inference agglomerative perceptron, mira or "
             "logistic (default: chosen on held-out training data)."),
    linkage: Optional[str] = typer.Option(
        None, "--linkage",
        help="samplerank --inference agglomerative: which valued linkage features (link sum/max/mean/min) the cluster "
             "layer uses: all, max, sum, mean or min (default: chosen on held-out training data among all, max, "
             "sum and mean)."),
    set_features: Optional[str] = typer.Option(
        None, "--set-features",
        help="samplerank --inference agglomerative: the set-level features (other than the per-cluster constant) on, "
             "or off (the pair layer and linkage alone) (default: chosen on held-out training data)."),
    pair_features: Optional[str] = typer.Option(
        None, "--pair-features",
        help="samplerank --inference agglomerative, a model with a pair layer: which pair formulas it learns: all, or "
             "values (similarities as values and exact comparisons, without the formulas that bin a similarity) "
             "(default: chosen by the cross-fitted log-likelihood of the training pairs)."),
    held_out: Optional[str] = typer.Option(
        None, "--held-out",
        help="samplerank --inference agglomerative on one training world: halve it by its gold clusters (default) "
             "or by the connected components of its candidate graph (components: whole documents) for the "
             "held-out choices and the pair layer's cross-fitting."),
    linkage_rule: Optional[str] = typer.Option(
        None, "--linkage-rule",
        help="samplerank --inference agglomerative: how the linkage is chosen on held-out training data: best "
             "(default: the highest held-out F1) or one-se (the first of max, mean, sum, min, all within one "
             "standard error of the best)."),
    world_splits: Optional[str] = typer.Option(
        None, "--world-splits",
        help="samplerank --inference agglomerative on two or more training worlds (-multipleDatabases): the "
             "held-out choices' splits: one-out (default: with three or more worlds each held out in turn, trained "
             "on the others; beyond five worlds, five groups of them) or halves (each half of the worlds held out "
             "in turn)."),
    pair_layer: Optional[str] = typer.Option(
        None, "--pair-layer",
        help="samplerank --inference agglomerative, a model with a pair layer: the pair weights the learned model "
             "carries: mean (default: the mean of the cross-fitted fits, whose scores the linkage weights and the "
             "merge threshold were learned on) or refit (one fit on all the training data)."),
    steps: Optional[int] = typer.Option(None, "--steps", help="samplerank: proposals per training world per epoch (default 100 per constant, or per query atom)."),
    temperature: Optional[float] = typer.Option(
        None, "--temperature", help="samplerank: temperature of the training chain (default 1; larger explores more; "
                                    "0: greedy, a proposal is taken only when it does not lower the model's score)."),
    accept: Optional[str] = typer.Option(None, "--accept", help="samplerank: the next state follows the model (default) or the loss."),
    margin: Optional[float] = typer.Option(None, "--margin", help="samplerank: the ranking margin of MIRA and MIRA++ (default 1)."),
    start: Optional[str] = typer.Option(
        None, "--start", help="samplerank over atoms: the chain's first world, random (default), false or truth."),
    trace: Optional[Path] = typer.Option(None, "--trace", help="Write the objective and weights per iteration (CSV)."),
    stats_json: Optional[Path] = typer.Option(
        None, "--stats-json", help="Write the figures (method, atoms, clauses, weights, iterations, objective, "
                                   "seconds, peak memory) as JSON."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Draw the learning curve (PNG, matplotlib)."),
    hidden: Optional[str] = typer.Option(
        None, "--hidden", help="Predicates absent from the training data (all their atoms unknown), comma-separated: "
                               "dn/scg then maximise the observed-data likelihood (as with '?' atoms)."),
    em: Optional[str] = typer.Option(None, "--em", help="With unknown atoms: hard (MAP completion) or soft (exact expectations) EM "
                                                        "instead of the observed-data gradient."),
    drop_hard: bool = typer.Option(False, "--drop-hard", help="Learn without the hard formulas (too large to ground, e.g. transitivity); they are kept in the output unchanged."),
    memory_limit: Optional[str] = typer.Option(None, "--memory-limit", help=MEMORY_HELP),
    max_cnf_clauses: Optional[int] = typer.Option(None, "--max-cnf-clauses", help=MAX_CNF_HELP),
    threads: Optional[int] = typer.Option(None, "--threads", help=THREADS_HELP),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", "--ray", help=LEARN_RAY_HELP),
    ray_workers: Optional[int] = typer.Option(None, "--ray-workers", help=RAY_WORKERS_HELP),
) -> None:
    """Learn the weights of a model from training databases."""
    from ..lang.parser import parse_db_files
    from ..learn.api import learn_model
    from ..model import MLN

    apply_limits(max_cnf_clauses, memory_limit)
    if ray_address is None and ray_workers is not None:
        raise OptionError("--ray-workers applies with --ray-address (or --ray local)")
    if ray_address is not None and not (multiple_databases and len(split_list(train)) > 1):
        raise OptionError(RAY_REFUSED)
    parallel = ParallelOptions(threads=threads, ray_address=ray_address, ray_workers=ray_workers).check()
    check_outputs({"output model": output, "trace file": trace, "plot file": plot, "stats file": stats_json},
                  split_list(input) + split_list(train))
    method = _choose_method(method, generative, discriminative)
    if plot is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError as exc:
            raise OptionError("--plot needs matplotlib (pip install matplotlib)") from exc
    for name, value in (("samples", samples), ("final-samples", final_samples), ("iterations", iterations)):
        if value is not None and value < 1:
            raise OptionError(f"--{name} must be a positive integer, got {value}")
    if max_seconds is not None and max_seconds <= 0:
        raise OptionError(f"--max-seconds must be positive, got {max_seconds}")

    mln_paths = _existing(split_list(input), "MLN")
    if not mln_paths:
        raise OptionError("no MLN file given (-i)")
    db_paths = _existing(split_list(train), "training")
    if not db_paths:
        raise OptionError("no training database given (-t)")
    mln = MLN.from_file(list(mln_paths))
    if multiple_databases:
        dbs = [parse_db_files([p], mln=mln) for p in db_paths]
    else:
        dbs = [parse_db_files(list(db_paths), mln=mln)]

    options = dict(inference=inference, samples=samples, init=init, map_method=map_method, max_seconds=max_seconds,
                   final_samples=final_samples, average=average, expectations=expectations, loss=loss, update=update, linkage=linkage, held_out=held_out, pair_features=pair_features, set_features=set_features, pair_layer=pair_layer, linkage_rule=linkage_rule, world_splits=world_splits, steps=steps,
                   temperature=temperature, accept=accept, learning_rate=learning_rate, margin=margin, start=start)
    if method == "samplerank":
        options["log"] = lambda text: console.print(text)
    total = iterations or DEFAULT_ITERATIONS[method]
    with _LearningProgress(method, total) as progress:
        model = learn_model(
            mln, dbs, query_predicates=split_list(ne) or None, method=method,
            multiple_databases=multiple_databases, iterations=iterations, prior_stddev=prior_stddev,
            seed=seed, callback=progress.update, drop_hard=drop_hard,
            hidden=split_list(hidden) or None, em=em, parallel=parallel, **options,
        )
    result = model.result
    write_text_atomic(output, model.text)
    if trace is not None:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(result.trace_columns())
        writer.writerows(result.trace_rows())
        write_text_atomic(trace, buffer.getvalue())
    if plot is not None:
        _plot(result, plot)
    rows = _summary(model, output)
    if stats_json is not None:
        write_text_atomic(stats_json, json.dumps(_stats(model, rows), indent=2, default=_json_value) + "\n")


def _choose_method(method: str | None, generative: bool, discriminative: bool) -> str:
    from ..learn.api import METHODS

    if generative and discriminative:
        raise OptionError("choose one of -g (generative) and -d (discriminative)")
    if method is None:
        return "pll" if generative else "dn"
    if method not in METHODS:
        raise OptionError(f"unknown learning method {method!r}; choose one of {', '.join(METHODS)}")
    if generative and method != "pll":
        raise OptionError(f"-g (generative learning) contradicts --method {method}")
    if discriminative and method == "pll":
        raise OptionError("-d (discriminative learning) contradicts --method pll")
    return method


class _LearningProgress:
    """Iterations (epochs for SampleRank) with the objective of the last one,
    on the command's progress display."""

    def __init__(self, method: str, total: int) -> None:
        self.method = method
        self.total = total
        self.task = None

    def __enter__(self) -> "_LearningProgress":
        from .. import progress

        if progress.enabled():
            self.task = progress.task(f"learning ({self.method})", total=self.total)
        return self

    def update(self, row) -> None:
        if self.task is not None:
            self.task.update(completed=min(row.iteration, self.total), detail=f"objective {row.objective:.6g}")

    def __exit__(self, *exc) -> None:
        if self.task is not None:
            self.task.close()


def _plot(result, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot([r.iteration for r in result.trace], [r.objective for r in result.trace], marker=".")
    ax.set_xlabel("iteration")
    ax.set_ylabel(result.objective_name)
    ax.set_title(f"weight learning ({result.method})")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    from ..io import open_binary_atomic

    try:
        with open_binary_atomic(path, ".png") as tmp:
            fig.savefig(tmp, format="png", dpi=100)
    finally:
        plt.close(fig)


def _summary(model, output: Path) -> list[tuple[str, object]]:
    """Print the summary table; returns its rows (name, value) for --stats-json.
    Rows a learner has no figure for are left out, never printed empty."""
    from rich.table import Table

    result = model.result
    table = Table(show_header=False, box=None, pad_edge=False)
    stats = result.stats
    if model.networks:
        size = [("databases", len(model.networks)),
                ("atoms", sum(n.n_atoms for n in model.networks)),
                ("clauses", sum(n.n_clauses for n in model.networks))]
    elif "ground_rows" in stats:      # pll counted while grounding: no network kept (learn/pll_stream.py)
        size = [("databases", stats.get("databases")), ("atoms", stats.get("query_atoms")),
                ("ground rows", stats.get("ground_rows"))]
    else:      # learning over clusterings (samplerank, piecewise): no ground network
        size = [("databases", stats.get("worlds")), ("constants clustered", stats.get("mentions")),
                ("training merges", stats.get("examples")), ("of them true", stats.get("positives"))]
    rows = [
        ("method", result.method),
        ("query predicates", ", ".join(model.query_predicates)),
        *size,
        ("weights", len(result.params)),
        ("iterations", result.iterations),
        ("converged", result.converged),
        (result.objective_name, float(result.objective)),
        ("ground seconds", float(model.ground_seconds)),
        ("learn seconds", float(model.learn_seconds)),
        ("compile seconds", stats.get("compile_seconds")),
        ("output", str(output)),
    ]
    rows = [(k, v) for k, v in rows if v is not None and v != ""]
    for k, v in rows:
        if isinstance(v, float):
            text = f"{v:.6g}" if k == result.objective_name else f"{v:.3g}"
        else:
            text = str(v)
        table.add_row(k, text)
    console.print(table)
    return rows


def _stats(model, rows: list[tuple[str, object]]) -> dict:
    """--stats-json: the summary's figures under plain keys, the learner's own
    scalar figures, and the peak memory."""
    from .common import peak_mb

    result = model.result
    out: dict = {}
    for k, v in rows:
        key = "objective" if k == result.objective_name else k.replace(" ", "_")
        out[key] = v
    out["objective_name"] = result.objective_name
    out["query_predicates"] = list(model.query_predicates)
    for k, v in result.stats.items():
        if isinstance(v, (bool, int, float, str)) and k not in out:
            out[k] = v
    out["peak_mb"] = round(peak_mb(), 1)
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in out.items()}


def _json_value(v):
    """numpy scalars and non-finite floats as JSON can hold them."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    return f if math.isfinite(f) else None


def register(app: typer.Typer) -> None:
    app.command("learn")(learn_command)
