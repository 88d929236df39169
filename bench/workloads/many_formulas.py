"""Models of many formulas (issue 16, item 15): grounding time against the
number of formulas, with templates grounded in batches (one ``UNION ALL``
query per ``grounder.PREFETCH`` templates) and one query per template (the
previous way), measured in the same run.

    python -m bench.workloads.many_formulas [--sizes 1000,5000,20000] [--repeat 3]

The model: four predicates over 50 constants and N weighted formulas of four
shapes with a constant each (``w P(x) ^ Q(x, C7) => R(x)`` and the like),
evidence of 67 atoms; ``mln ground`` figures: parse (text to formulas),
convert (formulas to clause templates) and ground (SQL, merging, network)
seconds, medians over the repeats.

Measured 2026-11-24 (``--sizes 1000,5000,20000 --repeat 1``, after DuckDB's
``common_subplan`` optimizer was turned off for correctness, see
``store._safe_optimizers``; load about 1):

    formulas       way  parse s convert s  ground s ms/formula
        1000  one each     0.28      0.26      1.83      1.828
        1000   batched     0.15      0.18      0.70      0.700
        5000  one each     0.64      0.66      5.88      1.177
        5000   batched     0.69      0.49      5.12      1.023
       20000  one each     5.11      3.80     37.68      1.884
       20000   batched     4.03      3.55     19.83      0.991

An earlier run under load 2-4 (optimizer on) gave 65 s one each and 13 s
batched at 20,000. One query per template grows faster than linearly;
batched, about 1 ms per formula: 20,000 formulas parse, convert and ground
in under 30 s, inside `mln infer`'s default limit.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from bench.harness import workload

SHAPES = ("{w} P(x) ^ Q(x,{c}) => R(x)", "{w} Q({c},y) => S(y)", "{w} R(x) v S({c})", "{w} P({c}) => !S(x)")


def model_text(n: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    lines = ["P(t)", "Q(t,t)", "R(t)", "S(t)", ""]
    lines += [SHAPES[i % 4].format(w=round(rng.uniform(-2, 2), 3), c=f"C{i % 50}") for i in range(n)]
    return "\n".join(lines) + "\n"


EVIDENCE = "\n".join([f"P(C{i})" for i in range(0, 50, 3)] + [f"Q(C{i},C{(i * 7) % 50})" for i in range(50)]) + "\n"


def measure(n: int, batched: bool) -> dict:
    from markovlogic import MLN, Database
    from markovlogic.ground import grounder
    from markovlogic.ground import ground
    from markovlogic.lang.ast import Query
    from markovlogic.logic.cnf import compile_mln

    old = grounder.PREFETCH
    grounder.PREFETCH = old if batched else 1
    try:
        t0 = time.perf_counter()
        mln = MLN.from_string(model_text(n))
        t1 = time.perf_counter()
        compile_mln(mln)
        t2 = time.perf_counter()
        db = Database.from_string(EVIDENCE, mln=mln)
        net = ground(mln, [db], [Query("R"), Query("S")])
        t3 = time.perf_counter()
    finally:
        grounder.PREFETCH = old
    return {"parse_s": t1 - t0, "convert_s": t2 - t1, "ground_s": t3 - t2, "clauses": net.n_clauses}


@workload("ground-many-formulas", "Grounding a model of 5,000 formulas (batched template queries)")
def five_thousand() -> dict:
    return {k: round(v, 3) for k, v in measure(5000, True).items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,5000,20000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'formulas':>8s} {'way':>9s} {'parse s':>8s} {'convert s':>9s} {'ground s':>9s} {'ms/formula':>10s}")
    for n in (int(x) for x in args.sizes.split(",")):
        for batched in (False, True):
            runs = [measure(n, batched) for _ in range(args.repeat)]
            med = {k: statistics.median(r[k] for r in runs) for k in ("parse_s", "convert_s", "ground_s")}
            print(f"{n:8d} {'batched' if batched else 'one each':>9s} {med['parse_s']:8.2f} {med['convert_s']:9.2f} "
                  f"{med['ground_s']:9.2f} {1000 * med['ground_s'] / n:10.3f}", flush=True)


if __name__ == "__main__":
    main()
