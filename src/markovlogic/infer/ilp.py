"""Exact MAP as an integer linear program (Riedel's mapping), solved by HiGHS.

Variables: ``x_a`` in {0, 1} per atom; ``z_c`` in [0, 1] per soft clause of
two or more literals. Writing ``t(l)`` for the term of a literal (``x`` for a
positive literal, ``1 - x`` for a negative one):

- positive weight: maximise ``w z_c`` with ``z_c <= sum_l t(l)`` (one row);
- negative weight: ``z_c >= t(l)`` for every literal (``z_c`` is 1 as soon as
  one literal is true; the objective ``w z_c`` with ``w < 0`` pushes it down);
- single-literal soft clauses go straight into the objective on ``x_a``
  (a negative literal adds a constant ``w`` and ``-w x_a``);
- hard clauses: ``sum_l t(l) >= 1``; exactly-one blocks: ``sum x = 1``.

``z_c`` need not be integer: at an integer ``x`` the objective drives it to
``min(1, sum t)`` or ``max t``, both 0 or 1. The constraint matrix is built
from the CSR arrays with numpy (no Python loop over clauses).

HiGHS is reached through ``scipy.optimize.milp`` (sparse matrix in, dual
bound out) rather than ``highspy``: ``highspy`` and OR-Tools each ship their
own ``libhighs.so.1`` and cannot both be loaded in one process, and CP-SAT
is the other backend.

Two exact reformulations come first (both on by default, see
:func:`ilp_map`): the network is presolved (:mod:`.presolve`: hard unit
propagation and weighted dominance fix atoms, the clauses shrink, components
are recomputed), and cliques of equal-weight pairwise clauses become one
counting variable each (:class:`Cliques`). The second is what makes
tuffy/cse solvable: its "at most one advisor" rule grounds to 68 cliques of
68 atoms (154,904 pairwise clauses of weight 0.77) whose pairwise rows let
the LP set every atom to 1/2 at no cost; the plain ILP stalled at a 0.5 %
gap after 500 s, the clique encoding proves the optimum (cost 2790.586) at
the root in about a second. Its "every student has an advisor" rule (a
negative-weight clause over the same atoms as a clique) then adds the rows
of the lower convex envelope of the pair's joint penalty
``a [F >= 1] + w C(F, 2)`` (valid inequalities; root LP gap 4.7 -> 0.4,
HiGHS 1.2 -> 0.3 s on the presolved cse).

Components are packed into groups (:func:`.map.component_groups`) and each
group is one model; scores and bounds add up. The bound is HiGHS's proven
dual bound in score units. When a group stops on the time limit, MaxWalkSAT
runs on it for the time kept in reserve and the better of its world and
HiGHS's incumbent (if any) is returned; the bound stays HiGHS's.

Infeasible hard constraints raise :class:`InferenceError` naming conflicting
hard clauses: unit propagation finds a conflict and the clauses behind it,
and a deletion filter (feasibility MILPs) makes the set minimal when it is
small; when propagation finds none, the smallest infeasible component is
reported.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numba as nb
import numpy as np
import scipy.sparse as sp
from scipy.optimize import LinearConstraint, milp
from scipy.sparse.csgraph import connected_components

from ..errors import InferenceError, OptionError
from ..ground.network import GroundNetwork
from .kernels_state import SatArrays, _csr_gather, atom_components, init_counts, sat_arrays, subset
from .components import DEFAULT_GROUP_ATOMS, Group, component_groups
from .presolve import presolve as presolve_sat
from . import highs_process
from .results import MapResult
from .tiny import check_common_options, check_ilp_options  # noqa: F401  (check_common_options re-exported)

_INF = np.inf
_DIAGNOSE_MAX = 80       # deletion filter only on components with this many hard constraints


# ---------------------------------------------------------------- encoding

@dataclass
class Cliques:
    """Sets of literals every pair of which forms a soft clause of one
    positive weight: ``(l_i v l_j)`` with weight ``w`` for all i < j in a set
    of ``n`` literals. With ``F`` the number of false literals of the set,
    those clauses score ``w (C(n, 2) - C(F, 2))``; ``C(F, 2)`` is convex in
    ``F``, so one continuous variable ``p >= k F - k (k + 1) / 2``
    (k = 1..n-1, the chords of ``C(F, 2)`` between consecutive integers)
    replaces ``C(n, 2)`` clause variables exactly, and its LP relaxation is
    far tighter (the pairwise rows allow every literal at 1/2 for free)."""

    start: np.ndarray         # int64[n_cliques + 1]: CSR over the literals below
    lit_atom: np.ndarray      # int64
    lit_positive: np.ndarray  # bool
    weight: np.ndarray        # float64[n_cliques]
    clauses: np.ndarray       # int64: the clauses they replace

    @property
    def n_cliques(self) -> int:
        return len(self.weight)


def _no_cliques() -> Cliques:
    e = np.zeros(0, np.int64)
    return Cliques(np.zeros(1, np.int64), e, np.zeros(0, bool), np.zeros(0), e)


def find_cliques(sat: SatArrays, min_size: int = 3) -> Cliques:
    """Complete graphs of equal positive weight among the soft two-literal
    clauses of ``sat`` (nodes: literals; edges: clauses), of ``min_size``
    literals or more. Only whole connected components of one weight's graph
    are taken, and only when complete (then they are cliques for certain);
    clauses must be merged (one clause per literal pair), as the grounder and
    the presolve leave them."""
    sizes = np.diff(sat.clause_start)
    ids = np.flatnonzero((sizes == 2) & ~sat.is_hard & (sat.weight > 0))
    if len(ids) < 3:
        return _no_cliques()
    first = sat.clause_start[:-1][ids]
    code_a = 2 * sat.lit_atom[first].astype(np.int64) + (~sat.lit_positive[first])
    code_b = 2 * sat.lit_atom[first + 1].astype(np.int64) + (~sat.lit_positive[first + 1])
    # graph over (weight class, literal) nodes
    _, wclass = np.unique(sat.weight[ids], return_inverse=True)
    wclass = wclass.ravel().astype(np.int64)
    key_a = wclass * (2 * sat.n_atoms) + code_a
    key_b = wclass * (2 * sat.n_atoms) + code_b
    nodes, loc = np.unique(np.concatenate([key_a, key_b]), return_inverse=True)
    m = len(ids)
    graph = sp.coo_matrix((np.ones(m, np.int8), (loc[:m], loc[m:])), shape=(len(nodes), len(nodes)))
    n_comp, label = connected_components(graph, directed=False)
    comp_size = np.bincount(label, minlength=n_comp)
    comp_edges = np.bincount(label[loc[:m]], minlength=n_comp)
    chosen = (comp_size >= min_size) & (comp_edges == comp_size * (comp_size - 1) // 2)
    if not chosen.any():
        return _no_cliques()
    renum = np.full(n_comp, -1, np.int64)
    renum[chosen] = np.arange(int(chosen.sum()))
    node_clique = renum[label]
    in_clique = np.flatnonzero(node_clique >= 0)
    order = in_clique[np.argsort(node_clique[in_clique], kind="stable")]
    codes = nodes[order] % (2 * sat.n_atoms)
    start = np.zeros(int(chosen.sum()) + 1, np.int64)
    np.cumsum(comp_size[chosen], out=start[1:])
    edge_clique = node_clique[loc[:m]]
    replaced = ids[edge_clique >= 0]
    weight = np.zeros(len(start) - 1)
    weight[edge_clique[edge_clique >= 0]] = sat.weight[replaced]
    return Cliques(start=start, lit_atom=codes // 2, lit_positive=(codes % 2) == 0,
                   weight=weight, clauses=replaced.astype(np.int64))


def _envelope_cuts(sat: SatArrays, enc: "Encoding", cl: Cliques, z_weight: np.ndarray):
    """For each clique whose false literals are exactly the literals of a
    negative-weight clause: ``(clique, z index, [(slope, intercept), ...])``,
    the edges of the lower convex envelope of ``h(F) = a [F >= 1] + w C(F, 2)``
    over F = 0..n (``a = -weight`` of the clause, ``w`` the clique's)."""
    neg = np.flatnonzero(z_weight < 0)
    if len(neg) == 0:
        return []
    sizes = np.diff(cl.start)
    by_key: dict[tuple, int] = {}
    for k in range(cl.n_cliques):
        sl = slice(cl.start[k], cl.start[k + 1])
        # the clique's literal l is false exactly when the clause literal !l is true
        codes = np.sort(2 * cl.lit_atom[sl] + cl.lit_positive[sl].astype(np.int64))
        by_key.setdefault((len(codes),) + tuple(codes.tolist()), k)
    clause_sizes = np.diff(sat.clause_start)[enc.z_clause[neg]]
    neg = neg[np.isin(clause_sizes, sizes)]          # only clauses as long as some clique
    out = []
    for zi in neg.tolist():
        c = enc.z_clause[zi]
        s0, s1 = sat.clause_start[c], sat.clause_start[c + 1]
        codes = np.sort(2 * sat.lit_atom[s0:s1].astype(np.int64) + (~sat.lit_positive[s0:s1]))
        k = by_key.get((len(codes),) + tuple(codes.tolist()))
        if k is None:
            continue
        a, w, n = -float(z_weight[zi]), float(cl.weight[k]), int(sizes[k])
        f = np.arange(n + 1, dtype=np.float64)
        h = np.where(f >= 1, a, 0.0) + w * f * (f - 1) / 2
        hull = [0]                                   # lower hull, monotone chain
        for i in range(1, n + 1):
            while len(hull) >= 2:
                i0, i1 = hull[-2], hull[-1]
                if (h[i1] - h[i0]) * (i - i0) >= (h[i] - h[i0]) * (i1 - i0):
                    hull.pop()
                else:
                    break
            hull.append(i)
        edges = []
        for i0, i1 in zip(hull[:-1], hull[1:]):
            slope = (h[i1] - h[i0]) / (i1 - i0)
            edges.append((slope, h[i0] - slope * i0))
        out.append((k, zi, edges))
    return out


@dataclass
class Encoding:
    """Riedel's encoding of one sub-problem, as arrays (shared with CP-SAT)."""

    n_atoms: int
    atom_obj: np.ndarray      # float64[n_atoms]: objective coefficient of x_a
    offset: float             # constant part of the objective
    z_clause: np.ndarray      # int64[n_z]: clause (local id) of each z variable
    z_weight: np.ndarray      # float64[n_z]
    hard: np.ndarray          # int64: hard clause ids (local)
    cliques: Cliques | None = None   # pairwise clauses aggregated (their ids are not in z_clause)


def encode(sat: SatArrays, cliques: bool = False) -> Encoding:
    """Objective and variable classes of Riedel's encoding of ``sat``;
    ``cliques=True`` aggregates cliques of pairwise clauses (:class:`Cliques`)."""
    sizes = np.diff(sat.clause_start)
    soft = ~sat.is_hard
    unit = soft & (sizes == 1)
    first = sat.clause_start[:-1]
    u_atom = sat.lit_atom[first[unit]]
    u_pos = sat.lit_positive[first[unit]]
    u_w = sat.weight[unit]
    atom_obj = np.bincount(u_atom, weights=np.where(u_pos, u_w, -u_w), minlength=sat.n_atoms)
    # opposite unit clauses on one atom cancel up to rounding: make it exact
    scale = np.bincount(u_atom, weights=np.abs(u_w), minlength=sat.n_atoms)
    atom_obj[np.abs(atom_obj) <= 1e-12 * scale] = 0.0
    offset = float(u_w[~u_pos].sum())
    multi = soft & (sizes >= 2)
    found = None
    if cliques:
        found = find_cliques(sat)
        multi[found.clauses] = False
        n = np.diff(found.start).astype(np.float64)
        offset += float((found.weight * n * (n - 1) / 2).sum())
    z_clause = np.flatnonzero(multi)
    return Encoding(
        n_atoms=sat.n_atoms,
        atom_obj=atom_obj.astype(np.float64),
        offset=offset,
        z_clause=z_clause,
        z_weight=sat.weight[z_clause],
        hard=np.flatnonzero(sat.is_hard),
        cliques=found,
    )


def _rows(sat: SatArrays, clauses: np.ndarray, z_col: np.ndarray | None):
    """COO entries of one row per clause: ``[z_c] - sum_pos x + sum_neg x``
    (``z_col`` given) or ``sum_pos x - sum_neg x`` (hard), and #neg per clause."""
    if len(clauses) == 0:
        e = np.zeros(0, np.int64)
        return e, e, np.zeros(0), e
    start, idx = _csr_gather(sat.clause_start, clauses)
    sizes = np.diff(start)
    row = np.repeat(np.arange(len(clauses), dtype=np.int64), sizes)
    pos = sat.lit_positive[idx]
    sign = np.where(pos, 1.0, -1.0)
    n_neg = np.bincount(row, weights=(~pos).astype(np.float64), minlength=len(clauses))
    cols = sat.lit_atom[idx].astype(np.int64)
    if z_col is None:
        return row, cols, sign, n_neg
    return (
        np.concatenate([row, np.arange(len(clauses), dtype=np.int64)]),
        np.concatenate([cols, z_col]),
        np.concatenate([-sign, np.ones(len(clauses))]),
        n_neg,
    )


@dataclass
class Model:
    """A maximisation MILP over columns ``[x (atoms) | z (clauses)]``."""

    cost: np.ndarray          # float64[n_cols]: objective (maximised)
    matrix: sp.csr_matrix     # rows x cols
    row_lower: np.ndarray
    row_upper: np.ndarray
    integrality: np.ndarray   # uint8[n_cols]: 1 for atoms, 0 for clause variables
    n_atoms: int
    col_upper: np.ndarray | None = None   # upper bounds (None: all 1; lower bounds are 0)

    @property
    def n_cols(self) -> int:
        return len(self.cost)

    @property
    def n_rows(self) -> int:
        return self.matrix.shape[0]


def build_model(sat: SatArrays, enc: Encoding, with_objective: bool = True) -> Model:
    """The MILP of ``sat``; ``with_objective=False`` keeps only the hard
    clauses and blocks (a feasibility problem)."""
    n = sat.n_atoms
    if with_objective:
        z_clause, z_weight = enc.z_clause, enc.z_weight
    else:
        z_clause, z_weight = np.zeros(0, np.int64), np.zeros(0)
    nz = len(z_clause)
    z_col = n + np.arange(nz, dtype=np.int64)
    pos_z = z_weight > 0
    parts: list[tuple] = []
    lowers: list[np.ndarray] = []
    uppers: list[np.ndarray] = []
    n_rows = 0

    def add(rows, cols, vals, lo, hi):
        nonlocal n_rows
        parts.append((rows + n_rows, cols, vals))
        lowers.append(lo)
        uppers.append(hi)
        n_rows += len(lo)

    # positive weight: z - sum t(l) <= 0  <=>  z - sum_pos x + sum_neg x <= n_neg
    r, c, v, n_neg = _rows(sat, z_clause[pos_z], z_col[pos_z])
    add(r, c, v, np.full(len(n_neg), -_INF), n_neg)
    # negative weight: z >= t(l) for each literal: z - x >= 0 or z + x >= 1
    neg_ids = z_clause[~pos_z]
    if len(neg_ids):
        start, idx = _csr_gather(sat.clause_start, neg_ids)
        k = len(idx)
        owner = np.repeat(np.arange(len(neg_ids), dtype=np.int64), np.diff(start))
        pos = sat.lit_positive[idx]
        rows = np.arange(k, dtype=np.int64)
        add(
            np.concatenate([rows, rows]),
            np.concatenate([z_col[~pos_z][owner], sat.lit_atom[idx].astype(np.int64)]),
            np.concatenate([np.ones(k), np.where(pos, -1.0, 1.0)]),
            np.where(pos, 0.0, 1.0),
            np.full(k, _INF),
        )
    # hard: sum_pos x - sum_neg x >= 1 - n_neg
    r, c, v, n_neg = _rows(sat, enc.hard, None)
    add(r, c, v, 1.0 - n_neg, np.full(len(n_neg), _INF))
    # blocks: sum x = 1
    if sat.n_blocks:
        sizes = np.diff(sat.block_start)
        add(
            np.repeat(np.arange(sat.n_blocks, dtype=np.int64), sizes),
            sat.block_atoms.astype(np.int64),
            np.ones(len(sat.block_atoms)),
            np.ones(sat.n_blocks),
            np.ones(sat.n_blocks),
        )

    # cliques: p_K - k (F - n_pos) >= k n_pos - k (k + 1) / 2, with
    # F - n_pos = sum_neg x - sum_pos x (F: false literals of the clique)
    cl = enc.cliques if with_objective and enc.cliques is not None else _no_cliques()
    p_col = n + nz + np.arange(cl.n_cliques, dtype=np.int64)
    if cl.n_cliques:
        csize = np.diff(cl.start)
        n_pos = np.bincount(np.repeat(np.arange(cl.n_cliques), csize), weights=cl.lit_positive.astype(np.float64),
                            minlength=cl.n_cliques)
        # one row per (clique, k), k = 1..size-1
        row_clique = np.repeat(np.arange(cl.n_cliques, dtype=np.int64), csize - 1)
        row_first = np.zeros(cl.n_cliques + 1, np.int64)
        np.cumsum(csize - 1, out=row_first[1:])
        k = (np.arange(len(row_clique), dtype=np.int64) - row_first[row_clique] + 1).astype(np.float64)
        # entries: each row repeats its clique's literals
        lits_per_row = csize[row_clique]
        entry_row = np.repeat(np.arange(len(row_clique), dtype=np.int64), lits_per_row)
        lit_index = cl.start[row_clique][np.repeat(np.arange(len(row_clique)), lits_per_row)] + (
            np.arange(len(entry_row), dtype=np.int64) - np.repeat(np.cumsum(lits_per_row) - lits_per_row, lits_per_row)
        )
        add(
            np.concatenate([entry_row, np.arange(len(row_clique), dtype=np.int64)]),
            np.concatenate([cl.lit_atom[lit_index], p_col[row_clique]]),
            np.concatenate([np.where(cl.lit_positive[lit_index], 1.0, -1.0) * k[entry_row],
                            np.ones(len(row_clique))]),
            k * n_pos[row_clique] - k * (k + 1) / 2,
            np.full(len(row_clique), _INF),
        )

    # a negative-weight clause over exactly the clique's false literals ("some
    # of them true") joins the clique: the pair's penalty a [F >= 1] + w C(F, 2)
    # gets the rows of its lower convex envelope (valid for every integer F)
    if cl.n_cliques:
        for k, zi, rows_k in _envelope_cuts(sat, enc, cl, z_weight):
            lits = np.arange(cl.start[k], cl.start[k + 1])
            coef_f = np.where(cl.lit_positive[lits], -1.0, 1.0)      # F = n_pos + sum coef_f x
            a = -float(z_weight[zi])
            for slope, intercept in rows_k:
                # a z + w p - slope F >= intercept
                m = len(lits)
                add(
                    np.zeros(m + 2, np.int64),
                    np.concatenate([cl.lit_atom[lits], [z_col[zi], p_col[k]]]),
                    np.concatenate([-slope * coef_f, [a, float(cl.weight[k])]]),
                    np.array([intercept + slope * n_pos[k]]),
                    np.array([_INF]),
                )

    n_cols = n + nz + cl.n_cliques
    rows = np.concatenate([p[0] for p in parts])
    cols = np.concatenate([p[1] for p in parts])
    vals = np.concatenate([p[2] for p in parts])
    matrix = sp.csr_matrix((vals, (rows, cols)), shape=(n_rows, n_cols))
    matrix.sum_duplicates()
    cost = np.zeros(n_cols)
    if with_objective:
        cost[:n] = enc.atom_obj
        cost[n:n + nz] = z_weight
        cost[n + nz:] = -cl.weight
    integrality = np.zeros(n_cols, dtype=np.uint8)
    integrality[:n] = 1
    col_upper = None
    if cl.n_cliques:
        col_upper = np.ones(n_cols)
        csize = np.diff(cl.start).astype(np.float64)
        col_upper[n + nz:] = csize * (csize - 1) / 2
    return Model(
        cost=cost, matrix=matrix, row_lower=np.concatenate(lowers), row_upper=np.concatenate(uppers),
        integrality=integrality, n_atoms=n, col_upper=col_upper,
    )


@dataclass
class Solution:
    status: int                 # scipy.optimize.milp status: 0 optimal, 1 limit, 2 infeasible, ...
    x: np.ndarray | None        # column values (None: no feasible solution)
    objective: float | None     # maximised objective of ``x``
    bound: float                # proven upper bound on the objective (inf if none)
    nodes: int


def highs_options(mip_gap: float, threads: int) -> dict:
    return {"presolve": True, "mip_rel_gap": float(mip_gap), "disp": False,
            "mip_abs_gap": 1e-7, "threads": int(threads), "random_seed": 0}


def _solution(model: Model, status: int, x, dual, nodes: int) -> Solution:
    x = None if x is None else np.asarray(x)
    bound = np.inf if dual is None or not np.isfinite(dual) else -float(dual)
    objective = None if x is None else float(model.cost @ x)
    if status == 0 and x is not None and not np.isfinite(bound):
        bound = objective
    return Solution(int(status), x, objective, bound, int(nodes or 0))


def solve_model(model: Model, max_seconds: float | None, mip_gap: float, threads: int) -> Solution:
    """Solve with HiGHS (through ``scipy.optimize.milp``; see :func:`ilp_map`)."""
    if model.n_cols == 0:
        return Solution(0, np.zeros(0), 0.0, 0.0, 0)
    options = highs_options(mip_gap, threads)
    if max_seconds is not None:
        options["time_limit"] = max(float(max_seconds), 1e-3)
    constraints = (
        [LinearConstraint(model.matrix, model.row_lower, model.row_upper)] if model.n_rows else None
    )
    with warnings.catch_warnings():
        # options beyond scipy's five go to HiGHS verbatim, with a warning
        warnings.simplefilter("ignore", RuntimeWarning)
        bounds = (0.0, 1.0) if model.col_upper is None else (np.zeros(model.n_cols), model.col_upper)
        res = milp(-model.cost, integrality=model.integrality, bounds=bounds,
                   constraints=constraints, options=options)
    x = None if res.x is None else np.asarray(res.x)
    dual = getattr(res, "mip_dual_bound", None)
    bound = np.inf if dual is None or not np.isfinite(dual) else -float(dual)
    objective = None if x is None else float(model.cost @ x)
    if res.status == 0 and x is not None and not np.isfinite(bound):
        bound = objective
    return Solution(int(res.status), x, objective, bound, int(getattr(res, "mip_node_count", 0) or 0))


def _feasible(sat: SatArrays, max_seconds: float | None = None) -> bool | None:
    """Whether the hard clauses and blocks of ``sat`` can all hold (None: unknown)."""
    if sat.n_clauses == 0 and sat.n_blocks == 0:
        return True
    sol = solve_model(build_model(sat, encode(sat), with_objective=False), max_seconds, 0.0, 1)
    if sol.status == 2:
        return False
    if sol.x is not None:
        return True
    return None


# ---------------------------------------------------------------- diagnosis

def _describe_clause(net: GroundNetwork, c: int) -> str:
    lits = net.clause_literals(int(c))
    return " v ".join(("" if p else "!") + net.atom_name(a) for a, p in lits)


def _describe_block(net: GroundNetwork, sat: SatArrays, b: int) -> str:
    members = sat.block_atoms[sat.block_start[b]:sat.block_start[b + 1]]
    return "exactly one of {" + ", ".join(net.atom_name(int(a)) for a in members) + "}"


@nb.njit(cache=True)
def _assign(x, v, r, value, reason, queue, qt):
    """Set atom ``x`` to ``v`` because of ``r``; returns (new queue tail, conflict)."""
    if value[x] == -1:
        value[x] = v
        reason[x] = r
        queue[qt] = x
        return qt + 1, False
    return qt, value[x] != v


@nb.njit(cache=True)
def _unit_propagate(clause_start, lit_atom, lit_positive, is_hard, atom_lit_start, occ_clause,
                    occ_positive, block_start, block_atoms, atom_block):
    """Unit propagation over the hard clauses and exactly-one blocks.

    Returns ``(kind, ident, extra, value, reason)``: ``kind`` 0 means no
    conflict, 1 a hard clause ``ident`` with every literal false, 2 an atom
    ``ident`` forced both ways (second reason ``extra``), 3 a block ``ident``
    with no or two true atoms. ``reason[a]`` is the clause (>= 0) or block
    (``-2 - b``) that forced atom ``a``.
    """
    n = len(atom_block)
    n_clauses = len(clause_start) - 1
    value = np.full(n, -1, np.int8)
    reason = np.full(n, -1, np.int64)
    queue = np.zeros(n, np.int64)
    qh = 0
    qt = 0
    nfalse = np.zeros(n_clauses, np.int64)
    done = np.zeros(n_clauses, np.bool_)
    for c in range(n_clauses):
        if is_hard[c] and clause_start[c + 1] - clause_start[c] == 1:
            i = clause_start[c]
            x = lit_atom[i]
            qt, bad = _assign(x, np.int8(lit_positive[i]), c, value, reason, queue, qt)
            if bad:
                return 2, x, c, value, reason
    for b in range(len(block_start) - 1):
        if block_start[b + 1] - block_start[b] == 1:
            x = block_atoms[block_start[b]]
            qt, bad = _assign(x, np.int8(1), -2 - b, value, reason, queue, qt)
            if bad:
                return 2, x, -2 - b, value, reason
    while qh < qt:
        a = queue[qh]
        qh += 1
        v = value[a]
        for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
            c = occ_clause[k]
            if not is_hard[c] or done[c]:
                continue
            if np.int8(occ_positive[k]) == v:
                done[c] = True
                continue
            nfalse[c] += 1
            s = clause_start[c]
            e = clause_start[c + 1]
            if nfalse[c] < e - s - 1:
                continue
            free = -1
            for i in range(s, e):
                x = lit_atom[i]
                if value[x] == -1:
                    free = i
                elif value[x] == np.int8(lit_positive[i]):
                    done[c] = True
                    break
            if done[c]:
                continue
            if free < 0:
                return 1, c, -1, value, reason
            if nfalse[c] == e - s - 1:
                qt, bad = _assign(lit_atom[free], np.int8(lit_positive[free]), c, value, reason, queue, qt)
                if bad:
                    return 2, lit_atom[free], c, value, reason
        b = atom_block[a]
        if b >= 0:
            bs = block_start[b]
            be = block_start[b + 1]
            if v == 1:
                for j in range(bs, be):
                    u = block_atoms[j]
                    if u != a:
                        qt, bad = _assign(u, np.int8(0), -2 - b, value, reason, queue, qt)
                        if bad:
                            return 3, b, -1, value, reason
            else:
                n_free = 0
                last = -1
                any_true = False
                for j in range(bs, be):
                    u = block_atoms[j]
                    if value[u] == -1:
                        n_free += 1
                        last = u
                    elif value[u] == 1:
                        any_true = True
                if not any_true:
                    if n_free == 0:
                        return 3, b, -1, value, reason
                    if n_free == 1:
                        qt, bad = _assign(last, np.int8(1), -2 - b, value, reason, queue, qt)
                        if bad:
                            return 3, b, -1, value, reason
    return 0, -1, -1, value, reason


def _propagation_core(sat: SatArrays) -> tuple[np.ndarray, np.ndarray] | None:
    """Hard clauses and blocks that unit propagation shows to conflict (the
    conflict and every reason behind it), or None if propagation finds none."""
    kind, ident, extra, value, reason = _unit_propagate(
        sat.clause_start, sat.lit_atom, sat.lit_positive, sat.is_hard, sat.atom_lit_start,
        sat.occ_clause, sat.occ_positive, sat.block_start, sat.block_atoms, sat.atom_block,
    )
    if kind == 0:
        return None
    clauses: set[int] = set()
    blocks: set[int] = set()
    stack: list[int] = []

    def add_reason(r: int) -> None:
        if r >= 0:
            if r not in clauses:
                clauses.add(r)
                stack.extend(sat.lit_atom[sat.clause_start[r]:sat.clause_start[r + 1]].tolist())
        elif r <= -2:
            b = -2 - r
            if b not in blocks:
                blocks.add(b)
                members = sat.block_atoms[sat.block_start[b]:sat.block_start[b + 1]]
                stack.extend(members[value[members] >= 0].tolist())

    if kind == 1:
        add_reason(int(ident))
    elif kind == 2:
        add_reason(int(extra))
        stack.append(int(ident))
    else:
        add_reason(-2 - int(ident))
    seen: set[int] = set()
    while stack:
        a = stack.pop()
        if a in seen or value[a] < 0:
            continue
        seen.add(a)
        add_reason(int(reason[a]))
    return np.array(sorted(clauses), np.int64), np.array(sorted(blocks), np.int64)


def infeasibility_error(net: GroundNetwork, sat: SatArrays, group: Group | None = None) -> InferenceError:
    """An InferenceError naming conflicting hard clauses/blocks of ``sat``
    (global atom ids), searched within ``group`` (or the whole network)."""
    if sat.n_empty_hard:
        return InferenceError(
            f"the hard clauses cannot all be satisfied: {sat.n_empty_hard} hard clause(s) "
            "have every literal made false by the evidence"
        )
    deadline = time.perf_counter() + 30.0
    core = _propagation_core(sat)
    if core is not None:
        core_c, core_b = core
        atoms = np.unique(np.concatenate([
            sat.lit_atom[np.concatenate([np.arange(sat.clause_start[c], sat.clause_start[c + 1]) for c in core_c])]
            if len(core_c) else np.zeros(0, np.int64),
            np.concatenate([sat.block_atoms[sat.block_start[b]:sat.block_start[b + 1]] for b in core_b])
            if len(core_b) else np.zeros(0, np.int64),
        ]).astype(np.int64))
        minimal = False
        if len(core_c) + len(core_b) <= _DIAGNOSE_MAX:
            core_c, core_b, minimal = _deletion_filter(sat, atoms, core_c, core_b, deadline)
        return _conflict_error(net, sat, core_c, core_b, minimal)
    hard_only = np.flatnonzero(sat.is_hard)
    comp = net.component.astype(np.int64)
    clause_comp = comp[sat.lit_atom[sat.clause_start[:-1][hard_only]]] if len(hard_only) else np.zeros(0, np.int64)
    block_comp = comp[sat.block_atoms[sat.block_start[:-1]]] if sat.n_blocks else np.zeros(0, np.int64)
    if group is not None:
        members = np.unique(comp[group.atoms])
    else:
        members = np.unique(np.concatenate([clause_comp, block_comp]))
    # components by number of hard constraints, smallest first
    count = np.bincount(np.concatenate([clause_comp, block_comp]), minlength=net.n_components)
    members = members[count[members] > 0]
    members = members[np.argsort(count[members], kind="stable")]
    for k in members:
        clauses = hard_only[clause_comp == k]
        blocks = np.flatnonzero(block_comp == k)
        atoms = np.flatnonzero(comp == k)
        part = subset(sat, atoms, clauses, blocks)
        if _feasible(part, max_seconds=max(0.1, deadline - time.perf_counter())) is not False:
            continue
        core_c, core_b, minimal = clauses, blocks, False
        if len(clauses) + len(blocks) <= _DIAGNOSE_MAX:
            core_c, core_b, minimal = _deletion_filter(sat, atoms, clauses, blocks, deadline)
        return _conflict_error(net, sat, core_c, core_b, minimal)
    return InferenceError("the hard clauses and blocks cannot all be satisfied")


def _conflict_error(net, sat, core_c, core_b, minimal: bool) -> InferenceError:
    items = [_describe_clause(net, sat.orig_clause[c]) for c in core_c]
    items += [_describe_block(net, sat, b) for b in core_b]
    shown = items[:12]
    more = f" (and {len(items) - len(shown)} more)" if len(items) > len(shown) else ""
    verb = "conflict" if minimal else "include a conflict"
    return InferenceError(
        f"the hard clauses cannot all be satisfied: these {len(items)} hard constraint(s) {verb}: "
        + "; ".join(shown) + more
    )


def _deletion_filter(sat, atoms, clauses, blocks, deadline):
    """A minimal infeasible subset of the given hard clauses and blocks, and
    whether the filter finished (else the subset is infeasible, not minimal)."""
    keep_c = list(map(int, clauses))
    keep_b = list(map(int, blocks))
    for kind in ("c", "b"):
        items = keep_c if kind == "c" else keep_b
        i = 0
        while i < len(items):
            if time.perf_counter() > deadline:
                return np.array(keep_c, np.int64), np.array(keep_b, np.int64), False
            trial = items[:i] + items[i + 1:]
            tc, tb = (trial, keep_b) if kind == "c" else (keep_c, trial)
            part = subset(sat, atoms, np.array(tc, np.int64), np.array(tb, np.int64))
            if _feasible(part, max_seconds=max(0.05, deadline - time.perf_counter())) is False:
                items.pop(i)
            else:
                i += 1
    return np.array(keep_c, np.int64), np.array(keep_b, np.int64), True


# ---------------------------------------------------------------- solving

def trivial_bound(sat: SatArrays) -> float:
    """Every positive clause satisfied, every negative one not."""
    return float(sat.weight[~sat.is_hard & (sat.weight > 0)].sum())


def fallback_world(sat: SatArrays, seconds: float, seed: int = 0) -> np.ndarray:
    """A world from a short MaxWalkSAT run, when an exact solver found none."""
    from .maxwalksat import DEFAULT_FLIPS, DEFAULT_TRIES, run_maxwalksat

    world, _ = run_maxwalksat(
        sat, max_flips=DEFAULT_FLIPS, max_tries=DEFAULT_TRIES, noise=0.5, seed=seed,
        deadline=time.perf_counter() + max(0.05, seconds),
    )
    return world


def local_key(sat: SatArrays, world: np.ndarray) -> tuple[int, float]:
    """(violated hard clauses and blocks, cost) of a world of ``sat``."""
    count = np.zeros(sat.n_clauses, np.int32)
    init_counts(world, sat.clause_start, sat.lit_atom, sat.lit_positive, count, np.zeros_like(count))
    holds = count > 0
    w = sat.weight
    hard = int((sat.is_hard & ~holds).sum())
    if sat.n_blocks:
        per_block = np.add.reduceat(world[sat.block_atoms].astype(np.int64), sat.block_start[:-1])
        hard += int((per_block != 1).sum())
    cost = float(np.abs(w[~sat.is_hard & (((w > 0) & ~holds) | ((w < 0) & holds))]).sum())
    return hard, cost


def better_world(sat: SatArrays, solver_world: np.ndarray | None, other: np.ndarray) -> tuple[np.ndarray, bool]:
    """The better of a solver's incumbent (None: no incumbent) and another
    world, and whether the other one won."""
    if solver_world is None or local_key(sat, other) < local_key(sat, solver_world):
        return other, True
    return solver_world, False


def time_share(deadline: float | None, size: int, remaining_size: int) -> float | None:
    """The part of the time left that a group of ``size`` atoms gets."""
    if deadline is None:
        return None
    left = deadline - time.perf_counter()
    return max(0.01, left * size / max(1, remaining_size))


def solved_map_result(
    net: GroundNetwork,
    world: np.ndarray,
    bound: float,
    proven: bool,
    method: str,
    start: float,
    stats: dict,
) -> MapResult:
    """The MapResult of an exact solver that assembled ``world`` group by group.

    ``bound`` is the summed upper bound of the groups; ``proven`` says every
    group was solved to proven optimality for the true weights, which lifts the
    bound to the score. ``start`` is the ``time.perf_counter()`` of the call.
    """
    score = net.score(world)
    hard_violated = net.hard_violated(world)
    if proven:
        bound = max(bound, score)
    gap = max(0.0, bound - score) / max(1.0, abs(score))
    return MapResult(
        world=world,
        score=score,
        cost=net.cost(world),
        hard_violated=hard_violated,
        method=method,
        seconds=time.perf_counter() - start,
        optimal=proven and hard_violated == 0,
        bound=bound,
        gap=gap,
        stats=stats,
    )


def ilp_map(
    net: GroundNetwork,
    *,
    max_seconds: float | None = None,
    mip_gap: float = 0.0,
    threads: int = 1,
    group_atoms: int = DEFAULT_GROUP_ATOMS,
    presolve: bool = True,
    cliques: bool = True,
) -> MapResult:
    """Exact MAP by integer linear programming with HiGHS (see module docstring).

    ``mip_gap`` is HiGHS's relative gap tolerance (0: prove optimality);
    ``max_seconds`` bounds the whole solve: then the result is the best world
    found with its proven bound and ``optimal`` says whether it was proven.
    ``presolve`` fixes atoms first (:mod:`.presolve`); ``cliques`` aggregates
    cliques of pairwise clauses (:class:`Cliques`). Both keep the answer exact.
    """
    start = time.perf_counter()
    check_ilp_options(max_seconds=max_seconds, mip_gap=mip_gap, threads=threads, group_atoms=group_atoms)
    deadline = None if max_seconds is None else start + float(max_seconds)

    sat = sat_arrays(net)
    if sat.n_empty_hard:
        raise infeasibility_error(net, sat)
    work, component, bound, pre = reduced_problem(net, sat, presolve)
    groups = component_groups(work, component, group_atoms)
    world = np.zeros(work.n_atoms, dtype=bool)
    all_optimal = True
    stats = {"groups": len(groups), "variables": 0, "rows": 0, "nodes": 0,
             "fallback_groups": 0, "timed_out_groups": 0, "cliques": 0}
    if pre is not None:
        stats["presolve"] = pre.stats
    remaining = sum(len(g.atoms) for g in groups)
    from .. import progress

    bar = progress.task("exact MAP (HiGHS), component groups", total=len(groups))
    for gi, g in enumerate(groups):
        bar.update(completed=gi, detail=f"{len(g.atoms):,} atoms; proven bound so far {bound:.6g}")
        budget = time_share(deadline, len(g.atoms), remaining)
        remaining -= len(g.atoms)
        enc = encode(g.sat, cliques=cliques)
        stats["cliques"] += 0 if enc.cliques is None else enc.cliques.n_cliques
        model = build_model(g.sat, enc)
        stats["variables"] += model.n_cols
        stats["rows"] += model.n_rows
        # HiGHS checks its clock between phases and may overrun a little: keep
        # some of the group's time for the fallback when it finds no world
        parallel_world = None
        if budget is not None and model.n_cols >= highs_process.SUBPROCESS_COLUMNS:
            # a large model: HiGHS in a child killed at the deadline, MaxWalkSAT
            # meanwhile on the other core (see highs_process)
            child = highs_process.start(model, max(0.5, budget - 1.5), highs_options(mip_gap, threads))
            parallel_world = fallback_world(g.sat, max(0.05, 0.8 * budget - 1.0), seed=gi)
            out = child.result()
            if out is None:
                stats["killed_groups"] = stats.get("killed_groups", 0) + 1
                sol = Solution(1, None, None, np.inf, 0)
            else:
                sol = _solution(model, *out)
        else:
            sol = solve_model(model, None if budget is None else budget - min(0.3 * budget, 2.0), mip_gap, threads)
        stats["nodes"] += sol.nodes
        if sol.status == 2:
            raise infeasibility_error(net, sat, None if pre is not None else g)
        if sol.status not in (0, 1):
            raise InferenceError(f"HiGHS failed on a MAP model (status {sol.status})")
        optimal = sol.status == 0
        trivial = trivial_bound(g.sat)
        group_bound = min(sol.bound + enc.offset, trivial)
        local = None if sol.x is None else sol.x[: g.sat.n_atoms] > 0.5
        if optimal:
            group_bound = max(group_bound, sol.objective + enc.offset)
        else:
            # stopped by the time limit: HiGHS's incumbent (if any) can be poor;
            # spend the reserved time on MaxWalkSAT and keep the better world
            if parallel_world is None:
                left = 1.0 if deadline is None else max(0.05, deadline - time.perf_counter())
                if budget is not None and remaining > 0:
                    left = min(left, max(0.05, 0.25 * budget))
                parallel_world = fallback_world(g.sat, left, seed=gi)
            local, used = better_world(g.sat, local, parallel_world)
            stats["fallback_groups"] += int(used)
        if not optimal:
            all_optimal = False
            stats["timed_out_groups"] += 1
        world[g.atoms] = local
        bound += group_bound
    bar.close()

    if pre is not None:
        world = pre.expand(world)
    return solved_map_result(net, world, bound, all_optimal, "ilp", start, stats)


def reduced_problem(net: GroundNetwork, sat: SatArrays, use_presolve: bool):
    """The problem an exact solver works on: ``(sat, component labels, constant
    score, Presolved or None)``. With ``use_presolve`` it is the presolved
    problem (:func:`.presolve.presolve`), with its components recomputed
    (fixing atoms often splits the network); when the presolve's propagation
    meets a conflict, the InferenceError naming it is raised."""
    if use_presolve:
        pre = presolve_sat(sat)
        if pre.infeasible:
            raise infeasibility_error(net, sat)
        component, _ = atom_components(pre.sat)
        return pre.sat, component, sat.const_score + pre.const, pre
    return sat, net.component, sat.const_score, None
