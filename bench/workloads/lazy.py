"""Workloads ``lazy-<case>-<mode>``: eager against lazy inference (issue 13,
item 2; ``infer/lazy/``).

``python -m bench.workloads.lazy [--cases cse-map,...]`` runs every case in
each of its modes, each in a fresh process (``bench.harness.run_once``: wall
time, CPU time, peak RSS), and prints one markdown table. The same runs are
registered as harness workloads (``python -m bench lazy-cse-map-lazy``).

Cases (MAP: MaxWalkSAT with the default budget, 20 tries of 50,000 flips,
seed 0, unless said; eager = ground everything, then search; lazy =
``lazy=True``, ``mln infer --lazy``):

- ``cse-map``, ``class-map``: tuffy/cse and tuffy/class. Cost (lower is
  better) of the world found; the trivial baseline is the all-false world
  (the default world lazy inference starts from).
- ``cse-marginals``: MC-SAT, 1,000 samples, eager and lazy, and a reference
  (eager MC-SAT, 10,000 samples, seed 99); mean and max |p - reference| over
  the query atoms; baseline: every atom false (p = 0).
- ``social-map``: the generated social network of issue 15
  (``bench/synthetic.social``, N = 10,000: friends of smokers smoke, a
  cascade) as it is.
- ``friends-map``: the same people (N = 2,000) with ``Friends`` unknown
  (hidden, ``-o Friends``), transitive with weight 0.8 and a prior of -3,
  and priors on ``Smokes``/``Cancer`` (``FRIENDS_MODEL``): the full grounding
  has N^3 = 8e9 transitivity groundings; eager grounding is refused by the
  memory budget (4 GB), lazy runs. 100,000 flips (5 tries of 20,000).
- ``friends100-marginals``, ``friends-marginals``: MC-SAT (1,000 samples)
  on the friends model with a prior of -8 on ``Friends``
  (``FRIENDS_MC_MODEL``; held atoms then have probabilities below the
  threshold) for N = 100 (eager and lazy both run; lazy against eager) and
  N = 2,000 (eager refused, lazy runs).
- ``citations-map``: Jnt-Seg (``examples/citations/jnt-seg.mln``, its ER
  part left out by closing ``SameBib``) on cora_refs fold 1's test
  citations with ``mln derive`` evidence; token F1
  of ``InField`` (all fields) against the truth, with the ILP's optimum and
  the per-token baseline of ``bench/workloads/citations.py`` (chosen on the
  training fold).
- ``cora90-map``, ``cora-map``: ``examples/cora-er/cora-pairwise.mln``
  (learned pairwise weights, hard reflexivity, symmetry and transitivity of
  SameBib) on cora fold 1's test evidence: its first 90 citations (both
  grounding modes fit: 729,090 clauses) and all 259 (17.4 M transitivity
  groundings: eager grounding is refused by the memory budget, 4 GB);
  lazy runs 2 tries of 50,000 flips; the exact optimum from the ILP (90)
  or from cutting-plane inference (259). SameBib pairwise F1 against the
  truth (``markovlogic.eval.evaluate``); baseline: citations with the same
  title constant are the same (nothing to train).

Measured 2026-11-26 on this 2-core machine, commits e002152 to 1d85a37 of
that day (nothing between them touches these cases; cse, class, social,
friends, cora90: load 1.0-1.5; citations and cora: load about 2,
another process running), ``python -m bench.workloads.lazy``. ``clauses``
= ground clauses held (eager: the network), ``rows`` their literal rows,
``total rows`` the full grounding's rows counted in SQL:

| case | mode | cost (baseline) | F1 (baseline) | clauses held | total rows | active atoms | rounds | s | peak MB |
|---|---|---|---|---|---|---|---|---|---|
| cse-map | eager | 2,791 (3,492) | | 161,932 | 468,230 | | | 0.94 | 340 |
| cse-map | lazy | 2,791 | | 77,272 | 357,297 | 2,591 | 5 | 1.32 | 343 |
| class-map | eager | 361.6 (4,393) | | 63,895 | 274,647 | | | 0.66 | 350 |
| class-map | lazy | 362.6 | | 23,570 | 202,155 | 3,205 | 233 | 4.05 | 345 |
| class-map | lazy-grow | 361.6 | | 63,895 | 202,155 | 9,650 | 9 | 0.91 | 354 |
| social-map (N=10k) | eager | 6,432 (6,730) | | 108,981 | 1,116,853 | | | 0.70 | 330 |
| social-map | lazy | 6,432 | | 108,981 | 118,880 | 18,944 | 334 | 6.6 | 334 |
| social-map | lazy-grow | 6,432 | | 108,981 | 118,880 | 19,007 | 7 | 1.09 | 334 |
| friends-map (N=2,000) | eager | refused: transitivity would produce up to 8e9 ground clauses | | | | | | 12.1 | 660 |
| friends-map | lazy | 182.3 (182.3) | | 234,608 | — | 3,732 | 391 | 45.1 | 454 |
| citations-map | eager (MaxWalkSAT) | 8,121 (26,389) | .892 (.849) | 672,273 | 1,279,863 | | | 7.1 | 606 |
| citations-map | lazy-grow | 8,147 | .896 | 670,438 | 864,499 | 172,228 | 5 | 53.9 | 644 |
| citations-map | ilp (optimum) | 8,025 | .896 | 672,273 | | | | 7.5 | 564 |
| cora90-map | eager (MaxWalkSAT) | 2,706 (3,113, 90 hard broken) | .324 (.855) | 729,090 | 835,376 | | | 3.8 | 751 |
| cora90-map | lazy | 2,792 | .308 | 28,468 | 835,376 | 1,166 | 13 | 0.67 | 301 |
| cora90-map | lazy-grow | 3,264 | .135 | 286,002 | 835,376 | 5,194 | 8 | 1.5 | 397 |
| cora90-map | ilp (optimum) | 484.9 | .997 | 729,090 | | | | 13.4 | 1,189 |
| cora-map (259) | eager | refused: MaxWalkSAT on 17.4 M clauses needs about 4.0 GB, the budget (4 GB) | | | | | | 8.0 | 1,445 |
| cora-map | lazy | 13,446 (13,258, 259 hard broken) | .121 (.887) | 285,760 | 18,152,099 | 5,957 | 67 | 5.0 | 441 |
| cora-map | cpi (optimum) | 1,684 | .833 | 172,541 | | | | 2.3 | 356 |

Marginals (MC-SAT, 1,000 samples, one chain each; errors against the
reference: cse a 10,000-sample eager chain, friends100 the eager chain;
baseline: every atom false):

| case | mode | mean / max error (baseline mean) | clauses held | total rows | active atoms | s | peak MB |
|---|---|---|---|---|---|---|---|
| cse-marginals | eager | .0010 / .079 (.046) | 161,932 | 468,230 | | 3.8 | 308 |
| cse-marginals | lazy | .0009 / .075 | 161,195 | 357,297 | 4,613 | 5.2 | 407 |
| friends100-marginals | eager | (reference) (.071) | 898,460 | 924,653 | | 26.8 | 436 |
| friends100-marginals | lazy | .0000 / .0003 | 6,494 | 924,653 | 212 | 2.3 | 403 |
| friends-marginals (N=2,000) | eager | refused: transitivity would produce up to 8e9 ground clauses | | | | 12.2 | 659 |
| friends-marginals | lazy (d165227: rows capped) | refused: a check reads over 8.2 M rows, more than the budget leaves | | | | 20.3 | 1,720 |
| friends-marginals | lazy (4821c62: summed in SQL) | did not finish within 25 min (resident 0.8-1.4 GB throughout) | | | | >1,500 | |

The last rows, measured the same day after commits d165227 and 4821c62
(the rows above them unchanged by both: cse .0009 / .075 with 4,613 active
atoms, 5.8 s, peak 468 MB; friends100 212 active atoms): lazy MC-SAT's
checks compute, for every held atom, its probability given the sampled
world over every ground clause its flip would change -- on the friends
network every unknown pair times the friends of one of them, 8.2 million
rows a check at N = 2,000. Before d165227 it read them all: 8 GB resident
and climbing after 6 minutes, killed. d165227 caps the rows by what the
memory budget leaves (a clear refusal); 4821c62 sums them per atom in
DuckDB and returns only the atoms that can pass a check, so memory stays
bounded, but each check still scans every pair: by hand
(``mln.infer(..., lazy=True)`` on ``_social(N, True, FRIENDS_MC_MODEL)``)
N = 300 / 600 / 1,000 take 18 / 61 / 382 s (22 checks at N = 1,000, 350 s
of them in SQL; before 4821c62: 32 / 108 s, peak 576 / 1,194 MB, now 420 /
849 / 2,012 MB), so N = 2,000 needs about half an hour. Lazy *MAP* on the
same network runs in 45 s (above): MaxWalkSAT needs no such check. (An
upper bound from a subset of the rows, tried first, activated 50 times too
many atoms at N = 300-600.)

A warning the friends model taught: its Smokes atoms, tied by
``Friends(x,y) ^ Smokes(x) => Smokes(y)`` over a connected friendship
graph, have two metastable modes (nobody smokes; everybody does). One
MC-SAT chain in four started from a random world settles in the wrong one
(seed 11: mean P(Smokes) .95 where the others give .00-.02), and two
pooled chains (``--threads 2``) then average to about .48. The first run of
this bench compared lazy (one chain) against eager with two pooled chains
and showed lazy "wrong" by .29 on average: it was the eager pool that was.
Independent chains need a start in the main mode (``--init maxwalksat``) or
more chains than modes.

What this shows. Lazy MaxWalkSAT reaches the eager search's cost where the
eager search does well (cse: same cost with half the clauses; class:
within 1, and the same with ``lazy-grow``; social: same; citations: within
0.3 %), holding a fraction of the grounding (cse 0.40 of the rows, class
0.37, friends 235,000 clauses where the full grounding has 8e9), and runs
where eager grounding is refused (friends, cora). The cost of laziness is
time: every stop rebuilds the held search (class: 233 rounds, 4 s against
0.7 s; citations' SQL 41 s of 54), which ``lazy-grow`` (activate more per
round) brings back to eager's time. Where MaxWalkSAT itself is weak the
lazy path is no better: on Cora with hard transitivity both searches end
far from the optimum that ILP (90 citations) and CPI (259) prove, below the
trivial baseline's F1 -- use ``--method cpi`` there (2.3 s, optimal). On
friends-map the lazy search ends at the all-false world's cost (182.3): no
better world was found (whether one exists is not known: no exact method
runs at this size).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.harness import REPO_ROOT, RESULTS_DIR, Skip, data_dir, run_once, workload

OUT = RESULTS_DIR / "lazy"
MEMORY_LIMIT = "4G"

FRIENDS_MODEL = """Smokes(person)
Cancer(person)
Friends(person, person)

1.5 Smokes(x) => Cancer(x)
1.1 Friends(x, y) ^ Smokes(x) => Smokes(y)
0.8 Friends(x, y) ^ Friends(y, z) => Friends(x, z)
-2.5 Smokes(x)
-2 Cancer(x)
-3 Friends(x, y)
"""


# ------------------------------------------------------------------ inputs

FRIENDS_MC_MODEL = FRIENDS_MODEL.replace("-3 Friends(x, y)", "-8 Friends(x, y)")


def _tuffy(name: str):
    from markovlogic import MLN, Database

    folder = data_dir() / "tuffy" / name
    if not folder.is_dir():
        raise Skip(f"data folder not found: {folder}")
    mln = MLN.from_file([folder / "prog.mln"])
    db = Database.from_file([folder / "evidence.db"], mln=mln)
    return mln, db, (folder / "query.db").read_text().split(), {}


def _social(n: int, friends: bool, model_text: str | None = None):
    from markovlogic import MLN, Database

    sys.path.insert(0, str(REPO_ROOT))
    from bench.synthetic import social

    model, evidence, queries = social(n, 0)
    if friends:
        model = model_text or FRIENDS_MODEL
    mln = MLN.from_string(model, "social.mln")
    db = Database.from_string(evidence, "social.db", mln=mln)
    return mln, db, queries.split(","), ({"open_": ["Friends"]} if friends else {})


def _citations():
    from markovlogic import MLN, Database

    from bench.workloads.citations import derived_files, fold_dir

    folder = fold_dir(1)
    model = REPO_ROOT / "examples" / "citations" / "jnt-seg.mln"
    work = Path(tempfile.mkdtemp(prefix="lazy-bench-"))
    _, test_extra, _ = derived_files(model, folder, work)
    mln = MLN.from_file(model)
    db = Database.from_file([folder / "test-evidence.db", *test_extra], mln=mln)
    # the shipped model holds the ER part; SameBib closed leaves segmentation
    return mln, db, ["InField"], {"closed": ["SameBib"]}


def _cora(first: int | None):
    from markovlogic import MLN, Database

    folder = data_dir() / "cora" / "fold1"
    if not (folder / "test-evidence.db").is_file():
        raise Skip(f"missing {folder}")
    mln = MLN.from_file(REPO_ROOT / "examples" / "cora-er" / "cora-pairwise.mln")
    text = (folder / "test-evidence.db").read_text()
    if first is not None:
        text = _first_citations(text, first)
    db = Database.from_string(text, "cora.db", mln=mln)
    return mln, db, ["SameBib"], {}


def _first_citations(text: str, k: int) -> str:
    """The evidence of the first ``k`` citations (Author/Title/Venue lines
    of others dropped; word facts kept)."""
    keep: list[str] = []
    out = []
    for line in text.splitlines():
        pred, _, rest = line.partition("(")
        if pred in ("Author", "Title", "Venue"):
            bib = rest.split(",")[0]
            if bib not in keep:
                if len(keep) >= k:
                    continue
                keep.append(bib)
        out.append(line)
    return "\n".join(out) + "\n"


INPUTS = {
    "cse-map": lambda: _tuffy("cse"),
    "class-map": lambda: _tuffy("class"),
    "cse-marginals": lambda: _tuffy("cse"),
    "social-map": lambda: _social(10_000, friends=False),
    "friends-map": lambda: _social(2_000, friends=True),
    "friends100-marginals": lambda: _social(100, friends=True, model_text=FRIENDS_MC_MODEL),
    "friends-marginals": lambda: _social(2_000, friends=True, model_text=FRIENDS_MC_MODEL),
    "citations-map": _citations,
    "cora90-map": lambda: _cora(90),
    "cora-map": lambda: _cora(None),
}
BUDGET = {"friends-map": dict(max_flips=20_000, max_tries=5), "cora90-map": dict(max_flips=50_000, max_tries=2),
          "cora-map": dict(max_flips=50_000, max_tries=2)}
MODES = {case: ("eager", "lazy") for case in INPUTS}
MODES["class-map"] = ("eager", "lazy", "lazy-grow")
MODES["social-map"] = ("eager", "lazy", "lazy-grow")
MODES["cse-marginals"] = ("eager", "lazy", "reference")
MODES["citations-map"] = ("eager", "lazy-grow", "ilp")
MODES["cora90-map"] = ("eager", "lazy", "lazy-grow", "ilp")
MODES["cora-map"] = ("eager", "lazy", "cpi")
GROWTH = {"citations-map": 1.0}         # lazy-grow: LazyOptions.growth (default 0.25)


# ------------------------------------------------------------------ one run

def _scores(case: str, answer) -> dict:
    """Accuracy figures of a MAP answer, and the baseline's."""
    if case == "citations-map":
        from bench.workloads.citations import (
            baseline_fit, baseline_predict, fold_dir, infield_set, read_atoms, segmentation_scores,
        )

        folder = fold_dir(1)
        truth = {tuple(a) for a in read_atoms(folder / "test-truth.db", ("InField",))["InField"]}
        got = segmentation_scores(infield_set(answer.atoms), truth)
        base = segmentation_scores(baseline_predict(baseline_fit(folder / "train.db"),
                                                    folder / "test-evidence.db"), truth)
        return {"f1": got["all_f1"], "baseline_f1": base["all_f1"]}
    if case in ("cora90-map", "cora-map"):
        from markovlogic.eval import evaluate

        folder = data_dir() / "cora" / "fold1"
        work = Path(tempfile.mkdtemp(prefix="lazy-cora-"))
        result = work / "map.result"
        result.write_text("".join(f"{a}\n" for a in sorted(answer.atoms) if a.startswith("SameBib(")))
        truth = folder / "test-truth.db"
        if case == "cora90-map":
            bibs = {b for line in _first_citations((folder / "test-evidence.db").read_text(), 90).splitlines()
                    if line.startswith(("Author(", "Title(", "Venue(")) for b in [line.split("(")[1].split(",")[0]]}
            truth = work / "truth.db"
            truth.write_text("".join(line + "\n" for line in (folder / "test-truth.db").read_text().splitlines()
                                     if not line.startswith("SameBib(")
                                     or set(line[len("SameBib("):-1].split(",")) <= bibs))
        scores = evaluate(result, truth, ["SameBib"])
        same = {}
        evidence = (folder / "test-evidence.db").read_text()
        if case == "cora90-map":
            evidence = _first_citations(evidence, 90)
        for line in evidence.splitlines():
            if line.startswith("Title("):
                bib, title = line[len("Title("):-1].split(",")
                same.setdefault(title, []).append(bib)
        base = work / "baseline.result"
        base.write_text("".join(f"SameBib({a},{b})\n" for group in same.values() for a in group for b in group))
        bscores = evaluate(base, truth, ["SameBib"])
        return {"f1": _pair_f1(scores), "baseline_f1": _pair_f1(bscores)}
    return {}


def _pair_f1(scores) -> float | None:
    flat = json.dumps(scores, default=str)
    for key in ("pairwise_f1", "pair_f1", "f1"):
        value = _find(scores, key)
        if value is not None:
            return round(float(value), 4)
    raise KeyError(f"no pairwise F1 in {flat[:200]}")


def _find(obj, key):
    if isinstance(obj, dict):
        if key in obj and isinstance(obj[key], (int, float)):
            return obj[key]
        for v in obj.values():
            found = _find(v, key)
            if found is not None:
                return found
    elif hasattr(obj, "__dict__"):
        return _find(vars(obj), key)
    return None


def _zero_cost(net, world_len: int | None = None) -> float:
    return round(float(net.cost(np.zeros(net.n_atoms if world_len is None else world_len, dtype=bool))), 3)


def run_case(case: str, mode: str) -> dict:
    """One (case, mode): the figures of the table."""
    from markovlogic.errors import ResourceError
    from markovlogic.resources import set_memory_limit

    set_memory_limit(MEMORY_LIMIT)
    mln, db, queries, common = INPUTS[case]()
    budget = BUDGET.get(case, {})
    out: dict = {"case": case, "mode": mode}
    start = time.perf_counter()
    try:
        if case.endswith("-marginals"):
            samples, seed = (10_000, 99) if mode == "reference" else (1_000, 0)
            # one chain each (threads=1): lazy MC-SAT runs one chain, and on the
            # friends model the chains are bimodal (see the docstring)
            ans = mln.infer(db, queries=queries, samples=samples, seed=seed, lazy=(mode == "lazy"), threads=1,
                            **common)
            OUT.mkdir(parents=True, exist_ok=True)
            (OUT / f"{case}-{mode}.json").write_text(json.dumps(ans.as_dict()))
            net = ans.network
            out.update(samples=ans.samples)
        else:
            if mode in ("ilp", "cpi"):
                ans = mln.map(db, queries=queries, method=mode, **common)
            else:
                lazy = {"lazy": True} if mode == "lazy" else {}
                if mode == "lazy-grow":
                    lazy = {"lazy": {"growth": GROWTH.get(case, 0.25)}}
                ans = mln.map(db, queries=queries, method="maxwalksat", seed=0, **lazy, **budget, **common)
            net = ans.network
            zero = np.zeros(net.n_atoms, dtype=bool)
            out.update(cost=round(ans.cost, 3), hard_violated=ans.hard_violated, baseline_cost=_zero_cost(net),
                       baseline_hard_violated=net.hard_violated(zero))
            out.update(_scores(case, ans))
    except ResourceError as exc:
        out.update(refused=str(exc)[:160], seconds=round(time.perf_counter() - start, 2))
        return out
    out["seconds"] = round(time.perf_counter() - start, 2)
    out["ground_s"] = round(ans.ground_seconds, 2)
    st = ans.stats
    if mode.startswith("lazy"):
        out.update(clauses=st.get("active_clauses"), rows=st.get("active_rows"), total_rows=st.get("total_rows"),
                   active_atoms=st.get("active_atoms"), rounds=st.get("activation_rounds"),
                   sql_s=st.get("sql_seconds"), rebuild_s=st.get("rebuild_seconds"))
    else:
        out.update(clauses=net.n_clauses, rows=net.stats.get("rows"), atoms=net.n_atoms)
    return out


for _case, _modes in MODES.items():
    for _mode in _modes:
        def _fn(case=_case, mode=_mode) -> dict:
            return run_case(case, mode)

        workload(f"lazy-{_case}-{_mode}", f"{_case}: {_mode} inference (bench/workloads/lazy.py)",
                 timeout=3600.0)(_fn)


# ------------------------------------------------------------------ the table

def _marginal_errors(results: dict) -> None:
    """Marginal cases: mean and max |p - reference| (the reference run, or
    the eager one where there is no reference mode)."""
    for case in [c for c in INPUTS if c.endswith("-marginals")]:
        _errors_of(case, "reference" if "reference" in MODES[case] else "eager", results)


def _errors_of(case: str, reference: str, results: dict) -> None:
    ref_path = OUT / f"{case}-{reference}.json"
    if not ref_path.exists():
        return
    ref = json.loads(ref_path.read_text())
    keys = sorted(ref)
    r = np.array([ref[k] for k in keys])
    for mode in ("eager", "lazy"):
        path = OUT / f"{case}-{mode}.json"
        row = results.get((case, mode))
        if row is None or not path.exists():
            continue
        got = json.loads(path.read_text())
        p = np.array([got.get(k, np.nan) for k in keys])
        row["mean_err"] = round(float(np.nanmean(np.abs(p - r))), 4)
        row["max_err"] = round(float(np.nanmax(np.abs(p - r))), 4)
        row["baseline_err"] = round(float(np.mean(np.abs(r))), 4)


COLUMNS = ("case", "mode", "cost", "baseline_cost", "baseline_hard_violated", "f1", "baseline_f1", "mean_err", "max_err", "baseline_err",
           "clauses", "rows", "total_rows", "active_atoms", "rounds", "seconds", "cpu_s", "peak_mb", "refused")


def markdown(rows: list[dict]) -> str:
    cols = [c for c in COLUMNS if any(r.get(c) is not None for r in rows)]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for r in rows:
        cells = []
        for c in cols:
            v = r.get(c)
            if v is None:
                cells.append("-")
            elif isinstance(v, float):
                cells.append(f"{v:,.4g}" if abs(v) < 1e5 else f"{v:,.0f}")
            elif isinstance(v, int):
                cells.append(f"{v:,}")
            else:
                cells.append(str(v)[:60])
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.workloads.lazy", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(INPUTS), help="comma-separated cases")
    args = parser.parse_args(argv)
    results: dict = {}
    for case in args.cases.split(","):
        if case not in INPUTS:
            raise SystemExit(f"unknown case {case!r}; known: {', '.join(INPUTS)}")
        for mode in MODES[case]:
            run = run_once(f"lazy-{case}-{mode}", 3600.0)
            if "skipped" in run or "error" in run:
                row = {"case": case, "mode": mode, "refused": run.get("skipped") or run.get("error")}
                print(run.get("stderr", ""), file=sys.stderr)
            else:
                row = dict(run["figures"])
                row["peak_mb"] = round(run["peak_rss_mb"])
                row["cpu_s"] = round(run["cpu_s"], 1)
            results[(case, mode)] = row
            print(json.dumps(row), flush=True)
    _marginal_errors(results)
    table = markdown(list(results.values()))
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "table.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
