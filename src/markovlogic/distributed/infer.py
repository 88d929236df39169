"""MAP and marginals on a Ray cluster: partitioned grounding, components
solved on the workers, the driver merging worlds.

1. **Store.** The driver loads the evidence into DuckDB (``Grounder``), makes
   the exactly-one blocks (so that their atoms are registered before the
   workers start) and shares the store as Parquet files
   (:mod:`.store`).
2. **Grounding, partitioned by template and by rows.** The clause
   templates are counted in SQL; a large one is split into one disjoint
   query per worker by a hash of its first output column (the constant of a
   join variable or argument, :func:`work_units`). The units are dealt to
   ``P`` parts of about equal size (largest first to the lightest part);
   one Ray task per part grounds its units from the shared store
   (``Grounder.network(template_ids=...)`` with ``Grounder.row_parts``) and
   writes its ground clauses as two Parquet files (literals; clause
   weights), over the registry's atom ids. It returns only atom-level
   summaries: a spanning forest of its part's connected components (one
   edge per atom), the literals per atom, and the atoms it registered
   itself (an atom no query and no block named: the driver gives it a
   global id).
3. **Components.** The driver joins the forests and the blocks into the
   connected components of the whole network (scipy), keeps those that
   contain a query atom (Alchemy's and Tuffy's closure), and packs them into
   ``G`` groups of about equal work.
4. **Solving.** One Ray task per group reads the clauses of its atoms from
   every part (a DuckDB semi-join over the Parquet files), builds the
   group's network and runs the method on it (any MAP method of
   :func:`markovlogic.infer.map.solve_map`, MC-SAT or Gibbs for marginals)
   with its own seed. A group that holds most of the atoms (one dominant
   component) is solved as one replica per worker: MaxWalkSAT's tries or
   MC-SAT/Gibbs's samples dealt between them, the best world kept or the
   marginals averaged (:func:`_replicas`, :func:`_combine`). The driver
   joins the worlds (or marginals) and adds scores, costs and bounds.

No process holds the whole ground network: the driver holds the evidence
and atom-level arrays, a grounding task one part's clauses, a solving task
one group's. Clauses that two templates (or two parts of one) ground identically stay two clauses
(the serial grounder merges them): the same distribution, a score that
differs by a constant, the same MAP worlds. Partitioning a single template
by ranges of its rows is done for large templates (:func:`work_units`: a
hash of the first output column, a join variable's or an argument's
constant, splits its rows into one disjoint query per worker).
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import OptionError
from ..ground.network import GroundNetwork
from ..parallel.split import balance, seed_for
from .cluster import RayExecutor, cluster_cpus, connect
from .store import SharedStore, open_grounder, snapshot


# ---------------------------------------------------------------- grounding tasks

@dataclass
class PartSummary:
    """What a grounding task returns (atom-level only; the clauses are in Parquet)."""

    lits_path: str
    clauses_path: str
    n_clauses: int
    n_literals: int
    atoms: np.ndarray          # int64: local atom ids that occur in the part
    reps: np.ndarray           # int64: for each, the smallest atom of its component in the part
    lit_counts: np.ndarray     # int64: literals per atom
    new_pred: np.ndarray       # int32: predicates of the atoms the task registered (local ids >= base)
    new_args: np.ndarray       # int32[n_new, max_arity]
    seconds: float


def _write_parquet(con, name: str, columns: dict, path: str) -> None:
    con.register(name, columns)
    try:
        con.execute(f"COPY (SELECT * FROM {name}) TO '{path}' (FORMAT PARQUET)")
    finally:
        con.unregister(name)


def ground_part(shared: SharedStore, units: list[tuple[int, int, int]], folder: str, index: int) -> PartSummary:
    """Ray task: ground its units of work from the shared store into
    Parquet. A unit is ``(template, k, P)``: part ``k`` of ``P`` of the
    template's rows (``P`` = 1: the whole template; see :func:`work_units`)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    t0 = time.perf_counter()
    g = open_grounder(shared)
    try:
        template_ids = list(dict.fromkeys(int(i) for i, _, _ in units))
        for i in template_ids:
            ks = tuple(int(k) for j, k, _ in units if j == i)
            n_parts = max(int(p) for j, _, p in units if j == i)
            if n_parts > 1 and len(ks) < n_parts:
                g.row_parts[i] = (ks, n_parts)
        out: list = []
        g.network(template_ids=template_ids, closure=False, clauses_out=out)
        gc = out[0]
        values, _ = g.params.arrays()
        cs = np.asarray(gc.clause_start, dtype=np.int64)
        n_clauses = len(cs) - 1
        sizes = np.diff(cs)
        ps = np.asarray(gc.param_start, dtype=np.int64)
        entry_clause = np.repeat(np.arange(n_clauses, dtype=np.int64), np.diff(ps))
        weight = np.bincount(entry_clause, weights=np.asarray(gc.param_coef) * np.asarray(values)[gc.param_index],
                             minlength=n_clauses) if n_clauses else np.zeros(0)
        weight[np.asarray(gc.is_hard, dtype=bool)] = 0.0
        lit_atom = np.asarray(gc.lit_atom, dtype=np.int64)
        lit_clause = np.repeat(np.arange(n_clauses, dtype=np.int64), sizes)
        base = f"{folder}/part{index}"
        lits_path, clauses_path = base + "-lits.parquet", base + "-clauses.parquet"
        _write_parquet(g.store.con, "_lits", {"clause": lit_clause, "k": np.arange(len(lit_atom), dtype=np.int64),
                                               "atom": lit_atom, "positive": np.asarray(gc.lit_positive, dtype=bool)},
                       lits_path)
        _write_parquet(g.store.con, "_clauses", {"clause": np.arange(n_clauses, dtype=np.int64), "weight": weight,
                                                  "hard": np.asarray(gc.is_hard, dtype=bool)}, clauses_path)
        n = int(g.registry.n_atoms)
        atoms = np.unique(lit_atom)
        if len(lit_atom):
            first = np.repeat(lit_atom[cs[:-1][sizes > 0]], sizes[sizes > 0])
            graph = coo_matrix((np.ones(len(first), np.int8), (first, lit_atom)), shape=(n, n)).tocsr()
            _, labels = connected_components(graph, directed=False)
            smallest = np.full(n, n, dtype=np.int64)
            np.minimum.at(smallest, labels[atoms], atoms)
            reps = smallest[labels[atoms]]
        else:
            reps = atoms.copy()
        lit_counts = np.bincount(lit_atom, minlength=n)[atoms] if len(atoms) else np.zeros(0, np.int64)
        pred, args = g.registry.arrays()
        return PartSummary(lits_path=lits_path, clauses_path=clauses_path, n_clauses=n_clauses,
                           n_literals=len(lit_atom), atoms=atoms, reps=reps, lit_counts=lit_counts.astype(np.int64),
                           new_pred=np.asarray(pred[shared.n_registered:]), new_args=np.asarray(args[shared.n_registered:]),
                           seconds=time.perf_counter() - t0)
    finally:
        g.store.con.close()


# ---------------------------------------------------------------- the plan

# a template is split by ranges of its rows (a hash of its first column, the
# first join variable's or argument's constant) when its groundings exceed
# both this and 1/(2 x workers) of the model's: one huge template (a
# transitivity, a pair rule over every pair) then grounds on every worker
SPLIT_MIN_ROWS = 100_000


def work_units(sizes: np.ndarray, splittable: np.ndarray, workers: int,
               min_rows: float = SPLIT_MIN_ROWS) -> tuple[list[tuple[int, int, int]], np.ndarray]:
    """The grounding's units of work, ``(template, k, P)``, and their
    estimated rows: each template whole (``P`` = 1), or, for a large one
    without existential groups (``splittable``), ``P`` = ``workers`` parts
    of its rows (:meth:`~markovlogic.ground.grounder.Grounder.part_sql`)."""
    total = float(np.sum(sizes))
    units, est = [], []
    for i, n in enumerate(np.asarray(sizes, dtype=np.float64)):
        p = workers if (workers > 1 and splittable[i] and n > max(min_rows, total / (2.0 * workers))) else 1
        for k in range(p):
            units.append((i, k, p))
            est.append(n / p)
    return units, np.asarray(est, dtype=np.float64)


@dataclass
class Plan:
    """The driver's view after grounding: parts on disk, atom-level arrays."""

    grounder: object
    parts: list[PartSummary]
    remaps: list[np.ndarray]        # per part: global id of each atom it registered
    base: int
    group_atoms: list[np.ndarray]   # sorted global atom ids per group
    group_blocks: list[tuple[np.ndarray, np.ndarray]]
    kept: np.ndarray                # sorted global ids of the atoms in the answer
    kept_labels: np.ndarray         # their component (0..n_components-1)
    n_components: int
    stats: dict


def _global(local: np.ndarray, base: int, remap: np.ndarray) -> np.ndarray:
    local = np.asarray(local, dtype=np.int64)
    out = local.copy()
    new = local >= base
    out[new] = remap[local[new] - base]
    return out


def plan_grounding(mln, dbs, queries, *, closed, open_, db_path, workers: int, folder: Path,
                   executor: RayExecutor, split_min_rows: float | None = None) -> Plan:
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    from ..ground.grounder import Grounder

    t0 = time.perf_counter()
    g = Grounder(mln, dbs, queries, closed=closed, open_=open_, db_path=db_path)
    block_start, block_atoms, _ = g.blocks()
    shared = snapshot(g, folder / "store")
    base = shared.n_registered
    sizes = np.array([float(g.count_groundings(i)) for i in range(len(g.templates))])
    t_store = time.perf_counter() - t0
    splittable = np.array([not t.exists for t in g.templates], dtype=bool)
    units, est = work_units(sizes, splittable, workers, SPLIT_MIN_ROWS if split_min_rows is None else split_min_rows)
    unit_part = balance(est + 1.0, workers)
    n_parts = int(unit_part.max()) + 1 if len(unit_part) else 0
    import ray

    shared_ref = ray.put(shared)
    parts = executor.map(ground_part, [(shared_ref, [units[u] for u in np.flatnonzero(unit_part == p)], str(folder), p)
                                       for p in range(n_parts)])
    t_parts = time.perf_counter() - t0 - t_store
    # atoms registered by the tasks get global ids in the driver's registry
    remaps = []
    for p in parts:
        remap = np.zeros(len(p.new_pred), dtype=np.int64)
        for k in np.unique(p.new_pred):
            sel = np.flatnonzero(p.new_pred == k)
            arity = len(g.store.preds[g.store.pred_names[int(k)]].arg_types)
            remap[sel] = g.registry.ids(int(k), p.new_args[sel, :arity], add=True)
        remaps.append(remap)
    n = int(g.registry.n_atoms)
    rows = [np.asarray(block_atoms[np.repeat(block_start[:-1], np.diff(block_start))], dtype=np.int64)]
    cols = [np.asarray(block_atoms, dtype=np.int64)]
    for p, remap in zip(parts, remaps):
        rows.append(_global(p.reps, base, remap))
        cols.append(_global(p.atoms, base, remap))
    query = np.asarray(g.query_atoms, dtype=np.int64)
    rows.append(query)
    cols.append(query)
    r, c = np.concatenate(rows), np.concatenate(cols)
    graph = coo_matrix((np.ones(len(r), np.int8), (r, c)), shape=(n, n)).tocsr()
    _, labels = connected_components(graph, directed=False)
    used = np.zeros(n, dtype=bool)
    used[c] = True
    good = np.zeros(int(labels.max()) + 1 if n else 0, dtype=bool)
    good[labels[query]] = True
    kept = np.flatnonzero(used & good[labels]).astype(np.int64)
    comp_ids, kept_labels = np.unique(labels[kept], return_inverse=True)
    kept_labels = kept_labels.reshape(-1)
    n_comp = len(comp_ids)
    work = np.bincount(kept_labels, minlength=n_comp).astype(np.float64)
    pos = np.full(n, -1, dtype=np.int64)
    pos[kept] = np.arange(len(kept))
    for p, remap in zip(parts, remaps):
        at = pos[_global(p.atoms, base, remap)]
        ok = at >= 0
        work += np.bincount(kept_labels[at[ok]], weights=p.lit_counts[ok].astype(np.float64), minlength=n_comp)
    comp_group = balance(work, workers)
    n_groups = int(comp_group.max()) + 1 if n_comp else 0
    atom_group = comp_group[kept_labels]
    group_atoms = [kept[atom_group == k] for k in range(n_groups)]
    # blocks, per group (their atoms are kept: a block joins its atoms' component)
    bsz = np.diff(block_start)
    group_blocks = []
    if len(bsz):
        first = block_atoms[block_start[:-1]]
        bgroup = np.where(pos[first] >= 0, atom_group[np.maximum(pos[first], 0)], -1)
    for k in range(n_groups):
        if len(bsz) == 0:
            group_blocks.append((np.zeros(1, np.int64), np.zeros(0, np.int64)))
            continue
        sel = np.flatnonzero(bgroup == k)
        start = np.zeros(len(sel) + 1, dtype=np.int64)
        np.cumsum(bsz[sel], out=start[1:])
        members = np.concatenate([block_atoms[block_start[b]:block_start[b + 1]] for b in sel]) if len(sel) \
            else np.zeros(0, np.int64)
        group_blocks.append((start, np.asarray(members, dtype=np.int64)))
    stats = {"ground_parts": n_parts, "split_templates": int(sum(1 for _, k, p in units if p > 1 and k == 0)),
             "ray_groups": n_groups, "ground_clauses": int(sum(p.n_clauses for p in parts)),
             "ground_literals": int(sum(p.n_literals for p in parts)), "store_seconds": round(t_store, 3),
             "parts_seconds": round(t_parts, 3),
             "part_ground_seconds_max": round(max((p.seconds for p in parts), default=0.0), 3)}
    return Plan(grounder=g, parts=parts, remaps=remaps, base=base, group_atoms=group_atoms, group_blocks=group_blocks,
                kept=kept, kept_labels=kept_labels, n_components=n_comp, stats=stats)


# ---------------------------------------------------------------- solving tasks

def read_group(parts: list[tuple[str, str, np.ndarray]], base: int, atoms: np.ndarray,
               blocks: tuple[np.ndarray, np.ndarray], is_query: np.ndarray) -> GroundNetwork:
    """The network of a group: its clauses read from every part's Parquet
    files (a semi-join on the group's atoms), atoms renumbered by position
    in ``atoms``; one parameter per clause (its weight)."""
    import duckdb

    con = duckdb.connect(":memory:", config={"threads": 1})
    starts, lit_atoms, lit_pos, weights, hards = [], [], [], [], []
    offset = 0
    try:
        for lits_path, clauses_path, remap in parts:
            wanted = atoms[atoms < base]
            if len(remap):
                new_local = base + np.flatnonzero(np.isin(remap, atoms))
                wanted = np.concatenate([wanted, new_local])
            if len(wanted) == 0:
                continue
            con.register("_want", {"atom": wanted.astype(np.int64)})
            lits = con.execute(
                f"SELECT l.clause, l.atom, l.positive FROM read_parquet('{lits_path}') l "
                f"WHERE l.clause IN (SELECT clause FROM read_parquet('{lits_path}') x SEMI JOIN _want w ON x.atom = w.atom) "
                "ORDER BY l.k").fetchnumpy()
            con.unregister("_want")
            clause = np.asarray(lits["clause"], dtype=np.int64)
            if len(clause) == 0:
                continue
            ids, first_pos, counts = np.unique(clause, return_index=True, return_counts=True)
            con.register("_ids", {"clause": ids})
            cl = con.execute(f"SELECT c.clause, c.weight, c.hard FROM read_parquet('{clauses_path}') c "
                             "SEMI JOIN _ids i ON c.clause = i.clause ORDER BY c.clause").fetchnumpy()
            con.unregister("_ids")
            # literals come ordered by k (clause-major), so clause blocks are contiguous in id order
            starts.append(offset + np.concatenate([[0], np.cumsum(counts)]))
            offset += int(counts.sum())
            glob = _global(np.asarray(lits["atom"], dtype=np.int64), base, remap)
            lit_atoms.append(np.searchsorted(atoms, glob))
            lit_pos.append(np.asarray(lits["positive"], dtype=bool))
            weights.append(np.asarray(cl["weight"], dtype=np.float64))
            hards.append(np.asarray(cl["hard"], dtype=bool))
    finally:
        con.close()
    if starts:
        clause_start = np.concatenate([starts[0]] + [s[1:] for s in starts[1:]])
        lit_atom = np.concatenate(lit_atoms)
        lit_positive = np.concatenate(lit_pos)
        weight = np.concatenate(weights)
        is_hard = np.concatenate(hards)
    else:
        clause_start = np.zeros(1, np.int64)
        lit_atom, lit_positive = np.zeros(0, np.int64), np.zeros(0, bool)
        weight, is_hard = np.zeros(0), np.zeros(0, bool)
    if len(starts) > 1:
        clause_start, lit_atom, lit_positive, weight, is_hard = merge_duplicates(
            clause_start, lit_atom, lit_positive, weight, is_hard)
    nc = len(weight)
    bstart, batoms = blocks
    return GroundNetwork.from_arrays(
        n_atoms=len(atoms), clause_start=clause_start, lit_atom=lit_atom.astype(np.int32),
        lit_positive=lit_positive, is_hard=is_hard, param_start=np.arange(nc + 1, dtype=np.int64),
        param_index=np.arange(nc, dtype=np.int32), param_coef=np.ones(nc), params=np.where(is_hard, 0.0, weight),
        param_info=(), block_start=bstart, block_atoms=np.searchsorted(atoms, batoms).astype(np.int32),
        is_query=is_query, atom_args=np.zeros((len(atoms), 1), np.int32), constants=(),
    )


MERGE_WIDTH = 16    # clauses longer than this are never duplicates across parts in practice: not compared


def merge_duplicates(clause_start, lit_atom, lit_positive, weight, is_hard):
    """Clauses that several parts ground identically, made one (weights
    added; hard wins), and soft unit clauses ``!P`` written ``P`` with the
    opposite weight, as the serial grounder merges and folds them (the cost
    of every world is then the serial network's)."""
    cs = np.asarray(clause_start, dtype=np.int64)
    sizes = np.diff(cs)
    n = len(sizes)
    lit_atom = np.asarray(lit_atom, dtype=np.int64)
    lit_positive = np.asarray(lit_positive, dtype=bool).copy()
    weight = np.asarray(weight, dtype=np.float64).copy()
    unit = (sizes == 1) & ~is_hard
    neg_unit = unit.copy()
    neg_unit[unit] = ~lit_positive[cs[:-1][unit]]
    lit_positive[cs[:-1][neg_unit]] = True
    weight[neg_unit] = -weight[neg_unit]
    clause_of = np.repeat(np.arange(n, dtype=np.int64), sizes)
    codes = 2 * lit_atom + (~lit_positive)
    order = np.lexsort((codes, clause_of))
    codes = codes[order]
    width = int(min(MERGE_WIDTH, sizes.max(initial=0)))
    keyed = np.flatnonzero((sizes > 0) & (sizes <= width))
    table = np.full((n, width + 1), -1, dtype=np.int64)
    if len(keyed):
        pos_in = np.arange(len(codes)) - cs[:-1][clause_of]
        mask = (sizes[clause_of] <= width)
        table[clause_of[mask], pos_in[mask]] = codes[mask]
        table[:, width] = is_hard.astype(np.int64)
    # rows not keyed keep a unique key of their own (no merge)
    table[sizes > width, 0] = -2 - np.flatnonzero(sizes > width)
    _, first, inverse = np.unique(table[:, :width], axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if len(first) == n:
        return cs, lit_atom, lit_positive, weight, is_hard
    keep = np.sort(first)
    new_id = np.full(n, -1, dtype=np.int64)
    new_id[keep] = np.arange(len(keep))
    rep = new_id[first[inverse]]                 # each clause's representative
    hard = np.zeros(len(keep), dtype=bool)
    np.logical_or.at(hard, rep, is_hard)
    w = np.bincount(rep, weights=np.where(is_hard, 0.0, weight), minlength=len(keep))
    w[hard] = 0.0
    lit_keep = np.repeat(np.isin(np.arange(n), keep), sizes)
    new_cs = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(sizes[keep], out=new_cs[1:])
    return new_cs, lit_atom[lit_keep], lit_positive[lit_keep], w, hard


def solve_group(parts, base, atoms, blocks, is_query, task: str, method: str, options: dict,
                hard_weight: float | None) -> dict:
    """Ray task: read the group's network and solve it."""
    t0 = time.perf_counter()
    net = read_group(parts, base, atoms, blocks, is_query)
    t_read = time.perf_counter() - t0
    solve_net = net.softened(float(hard_weight)) if hard_weight is not None else net
    out = {"read_seconds": t_read, "clauses": net.n_clauses, "atoms": net.n_atoms}
    if task == "map":
        from ..infer.map import solve_map
        from ..infer.settle import settle_false

        r = solve_map(solve_net, method=method, **options)
        world = r.world
        hard = net.hard_violated(world)
        if hard == 0:
            world, _ = settle_false(solve_net, world)
        out.update(world=world, score=solve_net.score(world), cost=solve_net.cost(world), hard_violated=hard,
                   optimal=r.optimal, bound=r.bound, stats=_scalars(r.stats), seconds=r.seconds)
    else:
        from ..infer.marginals import solve_marginals

        r = solve_marginals(solve_net, method=method, **options)
        out.update(probabilities=r.probabilities, samples=r.samples, stats=_scalars(r.stats), seconds=r.seconds)
    return out


def _scalars(stats: dict) -> dict:
    return {k: v for k, v in stats.items() if isinstance(v, (int, float, bool, str))}


# a group holding more than this share of the atoms is solved as several
# replicas (independent MaxWalkSAT tries or MC-SAT/Gibbs chains, one per
# worker), as the threads path does on one machine: one dominant component
# otherwise leaves the other workers idle
REPLICATE_SHARE = 0.6
REPLICABLE = {("map", "maxwalksat"), ("marginals", "mcsat"), ("marginals", "gibbs")}


def _replicas(plan: Plan, task: str, method: str, workers: int) -> list[int]:
    """Replicas per group: ``workers`` for a dominant group (see
    :data:`REPLICATE_SHARE`), 1 for the others."""
    sizes = np.array([len(a) for a in plan.group_atoms], dtype=np.float64)
    out = [1] * len(sizes)
    if workers < 2 or (task, method) not in REPLICABLE or not len(sizes) or sizes.sum() == 0:
        return out
    k = int(np.argmax(sizes))
    if sizes[k] > REPLICATE_SHARE * sizes.sum():
        out[k] = workers
    return out


def _combine(task: str, runs: list[dict]) -> dict:
    """One group's result from its replicas: the best world (MAP; components
    of a group are solved together, so the best replica's world is kept
    whole), or the marginals averaged with the samples as weights."""
    if len(runs) == 1:
        return runs[0]
    if task == "map":
        best = min(runs, key=lambda r: (r["hard_violated"], r["cost"]))
    else:
        w = np.array([max(1, r["samples"]) for r in runs], dtype=np.float64)
        best = dict(runs[0])
        best["probabilities"] = np.average(np.stack([r["probabilities"] for r in runs]), axis=0, weights=w)
        best["samples"] = int(sum(r["samples"] for r in runs))
    out = dict(best)
    out["read_seconds"] = max(r["read_seconds"] for r in runs)
    out["seconds"] = max(r["seconds"] for r in runs)
    stats: dict = {}
    for r in runs:
        for key, v in r["stats"].items():
            if isinstance(v, bool):
                stats[key] = stats.get(key, False) or v
            elif isinstance(v, (int, float)) and not key.endswith(("per_second", "rate")):
                stats[key] = stats.get(key, 0) + v
    stats["replicas"] = len(runs)
    out["stats"] = stats
    return out


def _run_groups(plan: Plan, executor, task: str, method: str, options: dict, hard_weight,
                workers: int = 1) -> list[dict]:
    parts = [(p.lits_path, p.clauses_path, r) for p, r in zip(plan.parts, plan.remaps)]
    query = np.zeros(int(plan.grounder.registry.n_atoms), dtype=bool)
    query[np.asarray(plan.grounder.query_atoms, dtype=np.int64)] = True
    replicas = _replicas(plan, task, method, workers)
    args, owner = [], []
    for k, (atoms, blocks) in enumerate(zip(plan.group_atoms, plan.group_blocks)):
        for j in range(replicas[k]):
            opts = dict(options)
            r = replicas[k]
            seeded = "seed" in options or task == "marginals" or r > 1
            if seeded:
                opts["seed"] = seed_for(int(options.get("seed", 0)), k if j == 0 else 1_000_003 * (j + 1) + k)
            else:
                opts.pop("seed", None)
            if task == "map" and method == "maxwalksat":
                from ..infer.maxwalksat import DEFAULT_FLIPS, DEFAULT_TRIES

                share = len(atoms) / max(1, len(plan.kept))
                opts["max_flips"] = max(1_000, int(round(int(options.get("max_flips", DEFAULT_FLIPS)) * share)))
                if r > 1:       # the tries dealt to the replicas
                    tries = int(options.get("max_tries", DEFAULT_TRIES))
                    opts["max_tries"] = max(1, tries // r + (1 if j < tries % r else 0))
            elif task == "marginals" and r > 1:
                samples = int(options.get("samples", 1000))     # MC-SAT's and Gibbs's default
                opts["samples"] = max(1, samples // r + (1 if j < samples % r else 0))
            args.append((parts, plan.base, atoms, blocks, query[atoms], task, method, opts, hard_weight))
            owner.append(k)
    results = executor.map(solve_group, args)
    return [_combine(task, [res for res, o in zip(results, owner) if o == k]) for k in range(len(plan.group_atoms))]


def _names_network(plan: Plan, stats: dict) -> GroundNetwork:
    """A network with the kept atoms' names and no clause (the answer's names)."""
    g = plan.grounder
    pred, args = g.registry.arrays()
    kept = plan.kept
    query = np.zeros(int(g.registry.n_atoms), dtype=bool)
    query[np.asarray(g.query_atoms, dtype=np.int64)] = True
    e = np.zeros(0, np.int64)
    return GroundNetwork.from_arrays(
        n_atoms=len(kept), clause_start=np.zeros(1, np.int64), lit_atom=e, lit_positive=np.zeros(0, bool),
        is_hard=np.zeros(0, bool), param_start=np.zeros(1, np.int64), param_index=e, param_coef=np.zeros(0),
        params=np.zeros(0), param_info=(), atom_pred=pred[kept], atom_args=args[kept],
        predicates=g.store.pred_names, constants=g.store.constant_names(), is_query=query[kept],
        components=(plan.kept_labels.astype(np.int32), plan.n_components), stats=stats,
    )


def _folder(parallel) -> Path:
    root = parallel.shared_dir or tempfile.gettempdir()
    if not Path(root).is_dir():
        raise OptionError(f"--shared-dir {root} is not a folder")
    folder = Path(root) / f"markovlogic-{uuid.uuid4().hex[:12]}"
    folder.mkdir(parents=True)
    return folder


def _distributed(mln, dbs, queries, task, method, closed, open_, db_path, parallel, options):
    from ..infer import EXACT_DEFAULT_SECONDS

    hard_weight = options.pop("hard_weight", None)
    if hard_weight is not None and (isinstance(hard_weight, bool) or not isinstance(hard_weight, (int, float))
                                    or not np.isfinite(hard_weight) or hard_weight <= 0):
        raise OptionError(f"hard_weight must be a positive number, got {hard_weight!r}")
    options.pop("progress", None)            # the workers' progress is not shown
    if task == "map" and method in ("ilp", "cpsat") and "max_seconds" not in options:
        options["max_seconds"] = EXACT_DEFAULT_SECONDS
    with connect(parallel):
        workers = parallel.ray_workers or cluster_cpus(parallel)
        executor = RayExecutor(workers)
        folder = _folder(parallel)
        start = time.perf_counter()
        try:
            plan = plan_grounding(mln, dbs, queries, closed=closed, open_=open_, db_path=db_path, workers=workers,
                                  folder=folder, executor=executor)
            ground_seconds = time.perf_counter() - start
            if options.get("max_seconds") is not None:
                options["max_seconds"] = max(1.0, float(options["max_seconds"]) - ground_seconds)
            results = _run_groups(plan, executor, task, method, options, hard_weight, workers)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        infer_seconds = time.perf_counter() - start - ground_seconds
        stats = dict(plan.stats)
        stats.update(ray_workers=workers, distributed=True,
                     group_read_seconds_max=round(max((r["read_seconds"] for r in results), default=0.0), 3),
                     group_seconds_max=round(max((r["seconds"] for r in results), default=0.0), 3))
        for r in results:
            for k, v in r["stats"].items():
                if isinstance(v, bool):
                    stats[k] = stats.get(k, False) or v
                elif isinstance(v, (int, float)) and not k.endswith(("per_second", "rate")):
                    stats[k] = stats.get(k, 0) + v
        net = _names_network(plan, stats)
        plan.grounder.close()
        return plan, results, net, stats, ground_seconds, infer_seconds


def distributed_map(mln, dbs, queries, *, method: str, closed, open_, db_path, parallel, **options):
    """:func:`markovlogic.api.map_inference` on Ray (see the module docstring)."""
    from ..api import MapAnswer
    from ..infer.map import MAP_METHODS

    if method not in MAP_METHODS or method in ("mh", "sgmp", "multitask-mh"):
        raise OptionError(f"--method {method} does not run on Ray; use ilp, cpsat, maxwalksat or exact")
    plan, results, net, stats, ground_seconds, infer_seconds = _distributed(
        mln, dbs, queries, "map", method, closed, open_, db_path, parallel, options)
    pos = np.full(int(plan.grounder.registry.n_atoms), -1, dtype=np.int64)
    pos[plan.kept] = np.arange(len(plan.kept))
    world = np.zeros(len(plan.kept), dtype=bool)
    for atoms, r in zip(plan.group_atoms, results):
        world[pos[atoms]] = r["world"]
    score = float(sum(r["score"] for r in results))
    bounds = [r["bound"] for r in results]
    bound = None if any(b is None for b in bounds) else float(sum(bounds))
    optimal = all(r["optimal"] for r in results)
    hard = int(sum(r["hard_violated"] for r in results))
    return MapAnswer(network=net, world=world, score=score, cost=float(sum(r["cost"] for r in results)),
                     hard_violated=hard, method=method, optimal=optimal and hard == 0, bound=bound,
                     gap=None if bound is None else max(0.0, bound - score) / max(1.0, abs(score)),
                     ground_seconds=ground_seconds, infer_seconds=infer_seconds, stats=stats)


def distributed_marginals(mln, dbs, queries, *, method: str, closed, open_, db_path, parallel, **options):
    """:func:`markovlogic.api.marginal_inference` on Ray (MC-SAT, Gibbs)."""
    from ..api import Marginals

    plan, results, net, stats, ground_seconds, infer_seconds = _distributed(
        mln, dbs, queries, "marginals", method, closed, open_, db_path, parallel, options)
    pos = np.full(int(plan.grounder.registry.n_atoms), -1, dtype=np.int64)
    pos[plan.kept] = np.arange(len(plan.kept))
    prob = np.full(len(plan.kept), 0.5)
    for atoms, r in zip(plan.group_atoms, results):
        prob[pos[atoms]] = r["probabilities"]
    samples = min((r["samples"] for r in results), default=0)
    return Marginals(network=net, probabilities=prob, method=method, samples=samples,
                     ground_seconds=ground_seconds, infer_seconds=infer_seconds, stats=stats)
