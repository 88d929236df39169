"""Culotta's thesis, chapter 9: Sparse Generalized Max-Product on clustered
weighted MAX-SAT (Figures 9.2-9.5), as tables of the plotted values.

Instances (section 9.2.4, a variant of Frank et al.'s Cluster3-SAT): ``k``
random 3-SAT subproblems over disjoint variables, each ``(m - L) / k``
clauses of three distinct variables of its cluster, linked by ``L`` clauses
per pair of clusters (a complete cluster graph) that hold two variables of
one cluster and one of a pool of ``shared`` variables of the other (so the
clusters share variables, never clauses); literal signs at random; clause
weights ``|N(0, 1)| + 0.1`` (the chapter: "sampled from a Gaussian").
Built as a ``GroundNetwork`` (one predicate per cluster, the partition SGMP
splits by).

Protocol (the chapter's): SGMP (``markovlogic.infer.sgmp.sgmp_map``, 50-best
messages as the chapter's ``n = 50``, or univariate messages) runs first; its
total WalkSAT flips ``F`` are recorded; then MaxWalkSAT
(``markovlogic.infer.maxwalksat.maxwalksat``) on the whole problem for the
same ``F`` flips, one try, same seed. Improvement: the percentage by which
SGMP's score (the satisfied weight) exceeds MaxWalkSAT's,
``100 (score_sgmp - score_mws) / score_mws``; mean over ``INSTANCES``
instances per point (the chapter: 100 per point; 175,000 for Figure 9.3).

* Figure 9.2: 100 variables, 400 clauses, 2 clusters; n-best and univariate
  messages as the number of clauses holding shared variables grows;
* Figure 9.3: 80-180 variables, 300-600 clauses, 2 clusters at random; the
  improvement against the reduction of the clause-variable ratio (the whole
  problem's minus the mean of the clusters', each cluster's clauses over its
  variables, shared ones included);
* Figure 9.4: 400 variables, 1,600 clauses, 2-8 clusters, every pair of
  clusters sharing 2 variables;
* Figure 9.5: 1,000 variables, 4,000 clauses, 2 clusters, 5-100 shared variables.
"""

from __future__ import annotations

import time

import numpy as np

from bench.reproduce.common import Run, md_table, mean

INSTANCES = 4
N_BEST = 50
LINKS = 10          # clauses linking each pair of clusters (Figures 9.3-9.5)
SGMP_SECONDS = 20.0


def instance(n: int, m: int, k: int, links: int, shared: int, seed: int):
    """A clustered weighted 3-SAT network (module docstring)."""
    from markovlogic.ground.network import GroundNetwork, WeightParam

    rng = np.random.default_rng(seed)
    per = n // k
    n = per * k
    pairs = k * (k - 1) // 2
    m_in = max(1, (m - links * pairs) // k)
    base = np.repeat(np.arange(k) * per, m_in)
    inside = np.argsort(rng.random((k * m_in, per)), axis=1)[:, :3] + base[:, None]
    pools = [c * per + rng.choice(per, size=min(shared, per), replace=False) for c in range(k)]
    rows = [inside]
    for a in range(k):
        for b in range(a + 1, k):
            for _ in range(links):
                src, dst = (a, b) if rng.random() < 0.5 else (b, a)
                two = src * per + rng.choice(per, 2, replace=False)
                rows.append(np.array([[two[0], two[1], rng.choice(pools[dst])]]))
    lits = np.concatenate(rows).astype(np.int32)
    mm = len(lits)
    weight = np.abs(rng.normal(0.0, 1.0, mm)) + 0.1
    return GroundNetwork.from_arrays(
        n_atoms=n, clause_start=np.arange(0, 3 * mm + 1, 3, dtype=np.int64), lit_atom=lits.reshape(-1),
        lit_positive=rng.random(3 * mm) < 0.5, is_hard=np.zeros(mm, bool),
        param_start=np.arange(mm + 1, dtype=np.int64), param_index=np.arange(mm, dtype=np.int32),
        param_coef=np.ones(mm), params=weight,
        param_info=tuple(WeightParam(name=f"c{i}", formula_index=-1) for i in range(mm)),
        atom_pred=np.repeat(np.arange(k, dtype=np.int32), per), predicates=tuple(f"c{i}" for i in range(k)),
    )


def ratio_reduction(net, k: int) -> float:
    """The whole problem's clauses per variable minus the clusters' mean (a clause goes to
    the cluster holding most of its atoms; a cluster's variables are its clauses' atoms)."""
    lits = net.lit_atom.reshape(-1, 3)
    group = net.atom_pred[lits]
    owner = np.array([np.bincount(g, minlength=k).argmax() for g in group])
    ratios = []
    for c in range(k):
        mine = lits[owner == c]
        ratios.append(len(mine) / max(1, len(np.unique(mine))))
    return net.n_clauses / net.n_atoms - float(np.mean(ratios))


def compare(net, messages: str, seed: int, seconds: float) -> dict:
    from markovlogic.infer.maxwalksat import maxwalksat
    from markovlogic.infer.sgmp import sgmp_map

    s = sgmp_map(net, messages=messages, n_best=N_BEST, iterations=50, seed=seed, max_seconds=seconds)
    flips = int(s.stats["flips"])
    w = maxwalksat(net, max_flips=max(flips, 1), max_tries=1, seed=seed)
    total = float(np.abs(net.weight).sum())
    return {"sgmp_cost": s.cost, "mws_cost": w.cost, "flips": flips, "sgmp_seconds": s.seconds,
            "mws_seconds": w.seconds, "total_weight": total,
            "improvement": 100.0 * (w.cost - s.cost) / (total - w.cost)}


def run(run: Run) -> dict:
    start = time.perf_counter()
    q = run.quick
    inst = 1 if q else INSTANCES
    secs = 2.0 if q else SGMP_SECONDS
    out: dict = {}
    # 9.2
    rows = []
    for links in ((5, 40) if q else (2, 5, 10, 20, 40, 80)):
        pt = {"shared_clauses": links}
        for messages in ("n-best", "univariate"):
            xs = [compare(instance(100, 400, 2, links, 10, seed), messages, seed, secs) for seed in range(inst)]
            pt[messages] = mean([x["improvement"] for x in xs])
            pt[f"{messages}_flips"] = mean([x["flips"] for x in xs])
        rows.append(pt)
    out["fig_9_2"] = rows
    # 9.3
    rng = np.random.default_rng(93)
    pts = []
    for seed in range(6 if q else 6 * inst):
        n = int(rng.integers(80, 181))
        m = int(rng.integers(300, 601))
        net = instance(n, m, 2, LINKS, 10, 1000 + seed)
        pts.append({"variables": n, "clauses": m, "ratio_reduction": ratio_reduction(net, 2),
                    **compare(net, "n-best", seed, secs)})
    x = np.array([p["ratio_reduction"] for p in pts])
    y = np.array([p["improvement"] for p in pts])
    out["fig_9_3"] = {"points": pts, "correlation": float(np.corrcoef(x, y)[0, 1]) if len(pts) > 2 and x.std() > 0
                      and y.std() > 0 else None}
    # 9.4
    rows = []
    for k in ((2, 4) if q else (2, 3, 4, 6, 8)):
        xs = [compare(instance(400, 1600, k, LINKS, 2, seed), "n-best", seed, secs) for seed in range(inst)]
        rows.append({"clusters": k, "improvement": mean([x["improvement"] for x in xs]),
                     "sgmp_cost": mean([x["sgmp_cost"] for x in xs]), "mws_cost": mean([x["mws_cost"] for x in xs]),
                     "wins": sum(x["improvement"] > 0 for x in xs), "instances": len(xs),
                     "flips": mean([x["flips"] for x in xs])})
    out["fig_9_4"] = rows
    # 9.5
    rows = []
    for shared in ((5, 50) if q else (5, 10, 25, 50, 100)):
        xs = [compare(instance(1000 if not q else 200, 4000 if not q else 800, 2, LINKS, shared, seed), "n-best",
                      seed, secs) for seed in range(inst)]
        rows.append({"shared": shared, "improvement": mean([x["improvement"] for x in xs]),
                     "sgmp_cost": mean([x["sgmp_cost"] for x in xs]), "mws_cost": mean([x["mws_cost"] for x in xs]),
                     "wins": sum(x["improvement"] > 0 for x in xs), "instances": len(xs),
                     "flips": mean([x["flips"] for x in xs])})
    out["fig_9_5"] = rows
    run.commands += [
        f"python: markovlogic.infer.sgmp.sgmp_map(net, messages='n-best'|'univariate', n_best={N_BEST}, "
        f"iterations=50, seed=SEED, max_seconds={secs:g})",
        "python: markovlogic.infer.maxwalksat.maxwalksat(net, max_flips=<SGMP's flips>, max_tries=1, seed=SEED)"]
    out["settings"] = {"instances_per_point": inst, "n_best": N_BEST, "links": LINKS, "sgmp_seconds": secs}
    out["wall"] = round(time.perf_counter() - start, 1)
    if not q:
        out["plot"] = plot(out, run.work / "culotta9.png")
    return out


def plot(res: dict, path) -> str | None:
    """The four figures as one PNG (matplotlib, if installed); returns the path written."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    from bench.harness import REPO_ROOT

    fig, ax = plt.subplots(1, 4, figsize=(16, 3.6))
    r = res["fig_9_2"]
    ax[0].plot([p["shared_clauses"] for p in r], [p["n-best"] for p in r], "o-", label="n-best")
    ax[0].plot([p["shared_clauses"] for p in r], [p["univariate"] for p in r], "s-", label="univariate")
    ax[0].set(xlabel="clauses with shared variables", ylabel="% improvement over WalkSAT", title="Fig. 9.2")
    ax[0].legend()
    p = res["fig_9_3"]["points"]
    ax[1].scatter([x["ratio_reduction"] for x in p], [x["improvement"] for x in p], s=10)
    ax[1].set(xlabel="reduction of clause/variable ratio", title="Fig. 9.3")
    r = res["fig_9_4"]
    ax[2].plot([x["clusters"] for x in r], [x["improvement"] for x in r], "o-")
    ax[2].set(xlabel="clusters", title="Fig. 9.4")
    r = res["fig_9_5"]
    ax[3].plot([x["shared"] for x in r], [x["improvement"] for x in r], "o-")
    ax[3].set(xlabel="shared variables", title="Fig. 9.5")
    for a in ax:
        a.axhline(0, color="grey", lw=0.5)
    fig.tight_layout()
    out = REPO_ROOT / "bench" / "reproduction-culotta9.png"
    fig.savefig(out, dpi=80)
    plt.close(fig)
    return str(out.relative_to(REPO_ROOT))


CLAIMS = {
    "9.2": "n-best messages above univariate ones as more clauses hold shared variables (a dip at 20)",
    "9.3": "improvement correlates (noisily) with the reduction of the clause-variable ratio",
    "9.4": "the improvement over WalkSAT grows with the number of clusters (2 to 8)",
    "9.5": "best with few shared variables; still above WalkSAT at 100",
}


def summary(res: dict) -> str:
    parts = []
    r = res["fig_9_2"]
    if r:
        parts.append(f"9.2 n-best above univariate at {sum(round(p['n-best'], 2) > round(p['univariate'], 2) for p in r)} "
                     f"of {len(r)} points")
    for fig, key in (("9_4", "clusters"), ("9_5", "shared")):
        r = res[f"fig_{fig}"]
        if r:
            parts.append(f"{fig.replace('_', '.')}: SGMP better on {sum(x['wins'] for x in r)} of "
                         f"{sum(x['instances'] for x in r)} instances, improvement {r[0]['improvement']:.2f} % at "
                         f"{r[0][key]} {key} to {r[-1]['improvement']:.2f} % at {r[-1][key]}")
    return "; ".join(parts) or "not run"


def render(res: dict) -> str:
    s = res["settings"]
    out = ["## Culotta's thesis, chapter 9: SGMP on clustered weighted MAX-SAT (Figures 9.2-9.5)", "",
           f"Improvement = % by which SGMP's score (satisfied weight) exceeds MaxWalkSAT's at equal WalkSAT flips; mean of "
           f"{s['instances_per_point']} instances per point (the chapter: 100); {s['n_best']}-best messages; "
           "the chapter's figures are plots without printed values: its claims are checked below.", ""]
    r = res["fig_9_2"]
    out.append("Figure 9.2 (100 variables, 400 clauses, 2 clusters):")
    out.append("")
    out.append(md_table(["clauses with shared variables", "n-best %", "univariate %", "flips (n-best)"],
                        [[p["shared_clauses"], f"{p['n-best']:.2f}", f"{p['univariate']:.2f}",
                          f"{p['n-best_flips']:,.0f}"] for p in r]))
    nb = sum(round(p["n-best"], 2) > round(p["univariate"], 2) for p in r)
    out.append("")
    out.append(f"- paper: {CLAIMS['9.2']}. Ours: n-best above univariate at {nb} of {len(r)} points.")
    out.append("")
    f3 = res["fig_9_3"]
    pts = sorted(f3["points"], key=lambda p: p["ratio_reduction"])
    third = max(1, len(pts) // 3)
    bins = [pts[:third], pts[third:2 * third], pts[2 * third:]]
    out.append("Figure 9.3 (80-180 variables, 300-600 clauses, 2 clusters), points in thirds of the ratio reduction:")
    out.append("")
    out.append(md_table(["ratio reduction (range)", "instances", "mean improvement %"],
                        [[f"{b[0]['ratio_reduction']:.3f} .. {b[-1]['ratio_reduction']:.3f}", len(b),
                          f"{mean([p['improvement'] for p in b]):.2f}"] for b in bins if b]))
    c = f3["correlation"]
    out.append("")
    out.append(f"- paper: {CLAIMS['9.3']}. Ours: correlation {c:+.2f}." if c is not None else
               f"- paper: {CLAIMS['9.3']}. Ours: not enough points.")
    out.append("")
    for fig, key, label, size in (("9.4", "clusters", "clusters", "400 variables, 1,600 clauses, 2 shared per pair"),
                                  ("9.5", "shared", "shared variables", "1,000 variables, 4,000 clauses, 2 clusters")):
        r = res[f"fig_{fig.replace('.', '_')}"]
        if not r:
            continue
        out.append(f"Figure {fig} ({size}):")
        out.append("")
        out.append(md_table([label, "improvement %", "SGMP better on", "cost SGMP / MaxWalkSAT", "flips"],
                            [[x[key], f"{x['improvement']:.2f}", f"{x['wins']} of {x['instances']}",
                              f"{x['sgmp_cost']:.2f} / {x['mws_cost']:.2f}", f"{x['flips']:,.0f}"] for x in r]))
        imp = [x["improvement"] for x in r]
        if fig == "9.4":
            verdict = "grows" if round(imp[-1], 2) > round(imp[0], 2) else "does not grow"
            out.append(f"\n- paper: {CLAIMS[fig]}. Ours: from {imp[0]:.2f} % to {imp[-1]:.2f} % ({verdict}).")
        else:
            verdict = "holds" if imp[0] >= imp[-1] and imp[-1] > 0 else "does not hold"
            out.append(f"\n- paper: {CLAIMS[fig]}. Ours: {imp[0]:.2f} % at {r[0]['shared']}, {imp[-1]:.2f} % at "
                       f"{r[-1]['shared']} ({verdict}).")
        out.append("")
    if res.get("plot"):
        out.append(f"Plot: `{res['plot']}`.")
    return "\n".join(out) + "\n"
