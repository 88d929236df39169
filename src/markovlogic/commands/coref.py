"""``mln coref``: Poon & Domingos' unsupervised coreference MLNs
(``examples/coref/{base,full,rule,rule-han}.mln``; ``markovlogic.cluster.inclust``).

    mln coref learn -i MODEL.mln -e EVIDENCE.db[,MORE.db] -o LEARNED.mln [--iterations 30]
                    [--init-iterations 5] [--samples 5] [--burn-in 2] [--prior-stddev 2]
                    [--workers 2] [--seed 0] [--max-seconds S]
    mln coref infer -i MODEL.mln -e EVIDENCE.db -r RESULT.clusters [--predicate SameEntity]
                    [--head-scale 1] [--workers 2] [--conllu FILES --conllu-out OUT]

The evidence is what ``mln derive --conllu`` writes (no label is read:
learning is unsupervised). ``infer`` writes the clusters of every document as
a clusters file (``SameEntity<TAB>m1<TAB>m2...``) for ``mln eval``, and with
``--conllu`` (the CoNLL-U the evidence was derived from, with the same
``--mentions``) also the CoNLL-U files with the clusters as ``Entity=``
brackets.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Optional

import typer

from ..errors import OptionError
from ..io import check_outputs, write_text_atomic
from .common import LazyConsole, _existing, peak_mb, split_list

console = LazyConsole(stderr=True, highlight=False)
app = typer.Typer(no_args_is_help=True, help="Poon & Domingos' unsupervised coreference MLNs (InClust models).")


def _load(input: str, evidence: str):
    from ..cluster.inclust import compile_inclust, read_documents
    from ..model import MLN, Database

    paths = split_list(input)
    _existing(paths, "MLN")
    ev = split_list(evidence)
    _existing(ev, "evidence")
    mln = MLN.from_file([Path(p) for p in paths])
    spec = compile_inclust(mln)
    docs = read_documents(spec, [Database.from_file(Path(p)) for p in ev])
    return spec, docs


@app.command("learn")
def learn_command(
    input: str = typer.Option(..., "-i", "--input", help="The InClust MLN (examples/coref/base.mln or full.mln)."),
    evidence: str = typer.Option(..., "-e", "--evidence", help="Evidence .db file(s) of mln derive --conllu (no labels)."),
    output: Path = typer.Option(..., "-o", "--output", help="The learned MLN."),
    iterations: int = typer.Option(30, "--iterations", help="Gradient steps (the thesis: 30)."),
    init_iterations: int = typer.Option(5, "--init-iterations", help="First steps with the non-pronouns clamped to their head clusters (4.5.1)."),
    samples: int = typer.Option(5, "--samples", help="Gibbs sweeps per chain and document per step."),
    burn_in: int = typer.Option(2, "--burn-in", help="Sweeps before the first step."),
    prior_stddev: float = typer.Option(2.0, "--prior-stddev", help="Gaussian prior on the weights."),
    workers: int = typer.Option(2, "--workers", help="Documents processed in parallel (threads)."),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
    max_seconds: Optional[float] = typer.Option(None, "--max-seconds", help="Stop learning after this many seconds."),
) -> None:
    """Learn an InClust coreference MLN without labels (observed-data gradient)."""
    from ..cluster.inclust import InClustOptions, learn_inclust, learned_mln_text, with_weights

    check_outputs({"output model": output}, split_list(input) + split_list(evidence))
    opt = InClustOptions(iterations=iterations, init_iterations=init_iterations, samples=samples, burn_in=burn_in,
                         prior_stddev=prior_stddev, workers=workers, seed=seed, max_seconds=max_seconds).check()
    start = time.perf_counter()
    spec, docs = _load(input, evidence)
    loaded = time.perf_counter()
    res = learn_inclust(spec, docs, opt, callback=lambda row, th: console.print(
        f"iteration {row['iteration']}: gradient norm {row['gradient_norm']:.1f}, largest step {row['step']:.3f}, "
        f"{row['seconds']:.1f} s"))
    write_text_atomic(output, learned_mln_text(with_weights(spec, res.params, res.theta)))
    console.print(f"learned {res.stats['parameters']} weights on {res.stats['documents']} documents "
                  f"({res.stats['mentions']:,} mentions) in {res.seconds:.1f} s (read {loaded - start:.1f} s, "
                  f"peak {peak_mb():.0f} MiB); wrote {output}")


@app.command("infer")
def infer_command(
    input: str = typer.Option(..., "-i", "--input", help="The InClust MLN (learned, or rule.mln / rule-han.mln)."),
    evidence: str = typer.Option(..., "-e", "--evidence", help="Evidence .db file(s) of mln derive --conllu."),
    result: Path = typer.Option(..., "-r", "--result", help="The clusters file to write."),
    predicate: str = typer.Option("SameEntity", "--predicate", help="Predicate name of the clusters file's lines."),
    workers: int = typer.Option(2, "--workers", help="Documents processed in parallel (threads)."),
    conllu: Optional[str] = typer.Option(None, "--conllu", help="The CoNLL-U file(s) the evidence was derived from."),
    conllu_out: Optional[Path] = typer.Option(None, "--conllu-out", help="Write them again with the clusters as Entity= brackets (a file, or a folder for several files)."),
    mentions: str = typer.Option("gold", "--mentions", help="With --conllu: the --mentions the evidence was derived with."),
    head_scale: float = typer.Option(1.0, "--head-scale", help="Multiply the head mixture term (1: the profile likelihood; large: non-pronouns of different heads apart, as the thesis's fixed per-cluster weights; the GUM bench chooses 1000 on dev)."),
) -> None:
    """The clustering of each document by the two-pass greedy MAP search."""
    from ..cluster.inclust import map_inclust, with_head_scale

    if (conllu is None) != (conllu_out is None):
        raise OptionError("--conllu and --conllu-out go together")
    if workers < 1:
        raise OptionError(f"--workers must be a positive integer, got {workers}")
    check_outputs({"result file": result}, split_list(input) + split_list(evidence))
    start = time.perf_counter()
    if not (math.isfinite(head_scale) and head_scale > 0):
        raise OptionError(f"--head-scale must be a positive finite number, got {head_scale}")
    spec, docs = _load(input, evidence)
    spec = with_head_scale(spec, head_scale)
    loaded = time.perf_counter()
    ans = map_inclust(spec, docs, workers=workers)
    write_text_atomic(result, ans.clusters_text(predicate))
    console.print(f"{ans.stats['documents']} documents, {ans.stats['mentions']:,} mentions, {ans.stats['clusters']:,} "
                  f"clusters (read {loaded - start:.1f} s, inference {ans.seconds:.1f} s, peak {peak_mb():.0f} MiB); "
                  f"wrote {result}")
    if conllu is not None:
        from ..derive.coref import CorefDeriveOptions, derive_coref, write_conllu_clusters

        cdocs = derive_coref(split_list(conllu), CorefDeriveOptions(mentions=mentions))
        cluster_of = {m: c[0] for c in ans.clusters() for m in c}
        out = write_conllu_clusters(cdocs, cluster_of, conllu_out)
        console.print(f"wrote {len(out)} CoNLL-U file(s) with Entity= brackets to {conllu_out}")


def register(parent: typer.Typer) -> None:
    parent.add_typer(app, name="coref")
