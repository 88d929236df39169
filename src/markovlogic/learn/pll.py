"""Generative learning: weighted pseudo-log-likelihood (Alchemy's ``learnwts -g``).

    PLL(w) = sum over predicates P of 1/|G_P| * sum over groups g of P
             log P_w(x_g = y_g | y_{Markov blanket of g})

A group is one query atom, or one exactly-one block taken jointly (its value,
which of its atoms is true, given the rest of the world: the only conditional
that respects the block). |G_P| counts the groups of predicate P over all
training networks, so every predicate weighs the same (Alchemy's default,
``-gNoEqualPredWt`` off); a block counts once.

The conditional of a group compares the training world with each of its
alternatives ("events": flipping one atom, or moving a block's true atom):
    log P(y_g | rest) = -log(1 + sum_e exp(w . Δn_e))
where Δn_e is the change of the feature counts the event causes. The sparse
matrix of Δn_e (events x parameters) is built once with numpy from the CSR
arrays: the training world's true-literal count of each clause, then per
literal of a flipped atom whether the flip changes the clause's
satisfaction. Value and gradient are then sparse mat-vec products, handed to
L-BFGS-B. Events that would violate a hard clause have probability zero and
are left out.

Gaussian prior on each learnable weight: mean = the weight in the model (0 when
none was written), standard deviation ``prior_stddev`` (Alchemy's default for
generative learning: 100).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize

from ..ground.network import GroundNetwork
from ..ground.kernels import _true_counts
from ..jit import kernel
from .data import TrainingSet, prepare, prior_terms
from .result import Callback, LearnResult, TraceRow

DEFAULT_PRIOR_STDDEV = 100.0


@dataclass
class PLLTerms:
    delta: sp.csr_matrix        # [n_events, n_params]: Δn of each event
    group: np.ndarray           # int64[n_events]: the group of each event
    group_weight: np.ndarray    # float64[n_groups]: 1 / (groups of the predicate)
    group_pred: list[str]       # predicate of each group

    @property
    def n_groups(self) -> int:
        return len(self.group_weight)


@kernel(cache=True, nogil=True)
def _event_deltas(ev_start, ev_atom, world, clause_start, lit_atom, lit_positive, is_hard, true_count,
                  atom_clause_start, atom_clause, param_start, param_index, param_coef, n_params,
                  fill, out_start, out_index, out_value, breaks):
    """Per event (flipping the atoms ``ev_atom[ev_start[e]:ev_start[e+1]]``
    of the training world): the change of each parameter's feature count, as
    CSR rows (``fill`` False: only their lengths into ``out_start[e+1]``), and
    whether it breaks a hard clause. Walks each flipped atom's clauses once
    (the network's reverse index; an atom twice in a clause is one visit that
    sums both literals), with per-clause scratch reset after each event."""
    n_clauses = len(clause_start) - 1
    dtrue = np.zeros(n_clauses, dtype=np.int32)
    mark = np.full(n_clauses, -1, dtype=np.int64)
    touched = np.empty(n_clauses if n_clauses < 1 << 16 else 1 << 16, dtype=np.int64)
    acc = np.zeros(n_params, dtype=np.float64)
    seen = np.zeros(n_params, dtype=np.bool_)
    plist = np.empty(n_params, dtype=np.int64)
    for e in range(len(ev_start) - 1):
        nt = 0
        for k in range(ev_start[e], ev_start[e + 1]):
            a = ev_atom[k]
            for j in range(atom_clause_start[a], atom_clause_start[a + 1]):
                c = atom_clause[j]
                if j > atom_clause_start[a] and atom_clause[j - 1] == c:
                    continue
                for i in range(clause_start[c], clause_start[c + 1]):
                    if lit_atom[i] == a:
                        dtrue[c] += -1 if world[a] == lit_positive[i] else 1
                if mark[c] != e:
                    mark[c] = e
                    if nt == len(touched):
                        grown = np.empty(2 * len(touched), dtype=np.int64)
                        grown[:nt] = touched
                        touched = grown
                    touched[nt] = c
                    nt += 1
        np_ = 0
        broken = False
        for t in range(nt):
            c = touched[t]
            before = true_count[c] > 0
            after = true_count[c] + dtrue[c] > 0
            dtrue[c] = 0
            if before == after:
                continue
            if is_hard[c]:
                if before:
                    broken = True
                continue
            d = 1.0 if after else -1.0
            for q in range(param_start[c], param_start[c + 1]):
                p = param_index[q]
                if param_coef[q] == 0.0:
                    continue
                if not seen[p]:
                    seen[p] = True
                    plist[np_] = p
                    np_ += 1
                acc[p] += d * param_coef[q]
        breaks[e] = broken
        base = out_start[e]
        for r in range(np_):
            p = plist[r]
            if fill:
                out_index[base + r] = p
                out_value[base + r] = acc[p]
            acc[p] = 0.0
            seen[p] = False
        if not fill:
            out_start[e + 1] = np_


def _net_events(net: GroundNetwork, world: np.ndarray, n_params: int):
    """Δn matrix, group of each event, and predicate id of each group, for one
    network: events are flipping one query atom outside blocks, or moving a
    query block's true atom to another of its atoms; the deltas come from one
    compiled pass over the flipped atoms' clauses (:func:`_event_deltas`), in
    memory of the order of the clauses, not of their literals."""
    world = np.ascontiguousarray(world, dtype=np.bool_)
    true_count = np.empty(net.n_clauses, dtype=np.int32)
    _true_counts(net.clause_start, net.lit_atom, net.lit_positive, world, true_count)

    query = net.is_query
    singles = np.flatnonzero(query & (net.atom_block < 0)).astype(np.int64)
    # blocks of query atoms: the true atom t moves to each other atom j
    if net.n_blocks:
        sizes = np.diff(net.block_start)
        block_of = np.repeat(np.arange(net.n_blocks, dtype=np.int64), sizes)
        in_query = np.zeros(net.n_blocks, dtype=bool)
        in_query[block_of] = query[net.block_atoms]
        true_atom = np.full(net.n_blocks, -1, dtype=np.int64)
        is_true = world[net.block_atoms]
        true_atom[block_of[is_true]] = net.block_atoms[is_true]
        keep = in_query[block_of] & ~is_true
        blocks_used = np.flatnonzero(in_query & (sizes > 0))
        block_group = np.full(net.n_blocks, -1, dtype=np.int64)
        block_group[blocks_used] = len(singles) + np.arange(len(blocks_used))
        alt_atom = net.block_atoms[keep].astype(np.int64)
        alt_block = block_of[keep]
        alt_true = true_atom[alt_block]
        alt_group = block_group[alt_block]
        group_pred_blocks = net.atom_pred[net.block_atoms[net.block_start[blocks_used]]]
    else:
        alt_atom = alt_true = alt_group = np.zeros(0, dtype=np.int64)
        group_pred_blocks = np.zeros(0, dtype=np.int32)

    n_single = len(singles)
    n_events = n_single + len(alt_atom)
    # the flipped atoms of each event: one for a single, the new and (if any) the old true atom of a block
    n_flip = np.concatenate([np.ones(n_single, dtype=np.int64), 1 + (alt_true >= 0)])
    ev_start = np.zeros(n_events + 1, dtype=np.int64)
    np.cumsum(n_flip, out=ev_start[1:])
    ev_atom = np.empty(int(ev_start[-1]), dtype=np.int64)
    ev_atom[ev_start[:n_single]] = singles
    alt_first = ev_start[n_single:-1]
    ev_atom[alt_first] = alt_atom
    has_old = alt_true >= 0
    ev_atom[alt_first[has_old] + 1] = alt_true[has_old]

    args = (ev_start, ev_atom, world, net.clause_start, net.lit_atom, net.lit_positive, net.is_hard, true_count,
            net.atom_clause_start, net.atom_clause, net.param_start, net.param_index,
            np.asarray(net.param_coef, dtype=np.float64), int(n_params))
    out_start = np.zeros(n_events + 1, dtype=np.int64)
    breaks = np.zeros(n_events, dtype=np.bool_)
    none_i, none_v = np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float64)
    _event_deltas(*args, False, out_start, none_i, none_v, breaks)
    np.cumsum(out_start, out=out_start)
    out_index = np.empty(int(out_start[-1]), dtype=np.int32)
    out_value = np.empty(int(out_start[-1]), dtype=np.float64)
    _event_deltas(*args, True, out_start, out_index, out_value, breaks)
    delta = sp.csr_matrix((out_value, out_index, out_start), shape=(n_events, n_params))
    group = np.concatenate([np.arange(n_single, dtype=np.int64), alt_group])
    feasible = ~breaks
    group_pred = np.concatenate([net.atom_pred[singles], group_pred_blocks]).astype(np.int64)
    return delta[feasible], group[feasible], group_pred


def pll_terms(data: TrainingSet) -> PLLTerms:
    """The events of every training network, stacked (see module docstring)."""
    deltas, groups, preds = [], [], []
    offset = 0
    for net, world in zip(data.nets, data.worlds):
        delta, group, group_pred = _net_events(net, world, data.n_params)
        deltas.append(delta)
        groups.append(group + offset)
        preds.extend(net.predicates[p] for p in group_pred.tolist())
        offset += len(group_pred)
    names, pred_index, per_pred = np.unique(np.array(preds, dtype=object).astype(str), return_inverse=True, return_counts=True) if preds else (np.zeros(0), np.zeros(0, np.int64), np.zeros(0))
    weight = 1.0 / per_pred[pred_index] if preds else np.zeros(0)
    return PLLTerms(
        delta=sp.vstack(deltas).tocsr() if deltas else sp.csr_matrix((0, data.n_params)),
        group=np.concatenate(groups) if groups else np.zeros(0, np.int64),
        group_weight=np.asarray(weight, dtype=np.float64),
        group_pred=list(preds),
    )


def pll_value_grad(terms: PLLTerms, params: np.ndarray) -> tuple[float, np.ndarray]:
    """Weighted PLL and its gradient (no prior)."""
    z = terms.delta @ params
    g = terms.group
    top = np.zeros(terms.n_groups)
    np.maximum.at(top, g, z)
    shifted = np.exp(z - top[g])
    total = np.exp(-top) + np.bincount(g, weights=shifted, minlength=terms.n_groups)
    lse = top + np.log(total)
    value = -float(terms.group_weight @ lse)
    prob = shifted / total[g]
    grad = -(terms.delta.T @ (terms.group_weight[g] * prob))
    return value, np.asarray(grad, dtype=np.float64)


def pseudo_log_likelihood(nets: list[GroundNetwork], params: np.ndarray | None = None) -> float:
    """The weighted PLL of the training worlds at ``params`` (default: the networks' own)."""
    data = prepare(nets)
    params = data.init if params is None else np.asarray(params, dtype=np.float64)
    return pll_value_grad(pll_terms(data), params)[0]


def learn_pll(
    nets: list[GroundNetwork],
    *,
    iterations: int = 10000,
    prior_stddev: float | None = DEFAULT_PRIOR_STDDEV,
    seed: int = 0,
    tolerance: float = 1e-10,
    callback: Callback | None = None,
) -> LearnResult:
    """Maximise the weighted pseudo-log-likelihood plus the Gaussian prior with
    L-BFGS-B. ``iterations`` bounds L-BFGS iterations (Alchemy's ``-gMaxIter``,
    default 10000); ``tolerance`` is the relative change of the objective at
    which it stops. ``seed`` is unused (the method is deterministic)."""
    start = time.perf_counter()
    data = prepare(nets)
    terms = pll_terms(data)
    return learn_pll_terms(terms, data.init, data.learnable, data.param_info, iterations=iterations,
                           prior_stddev=prior_stddev, tolerance=tolerance, callback=callback, start=start)


def learn_pll_terms(
    terms: PLLTerms,
    init: np.ndarray,
    learnable: np.ndarray,
    param_info: tuple,
    *,
    iterations: int = 10000,
    prior_stddev: float | None = DEFAULT_PRIOR_STDDEV,
    tolerance: float = 1e-10,
    callback: Callback | None = None,
    start: float | None = None,
) -> LearnResult:
    """:func:`learn_pll` on terms already built (from networks, or streamed
    while grounding: ``learn/pll_stream.py``); ``init`` are the model's
    weights (the prior means), ``learnable`` the weights that are not fixed."""
    start = time.perf_counter() if start is None else start
    mean = init.copy()
    learn = learnable
    full = init.copy()
    trace: list[TraceRow] = []

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        full[learn] = x
        value, grad = pll_value_grad(terms, full)
        pv, pg, _ = prior_terms(full, mean, prior_stddev, learn)
        return -(value + pv), -(grad + pg)[learn]

    def on_iteration(intermediate_result) -> None:
        params = init.copy()
        params[learn] = intermediate_result.x
        row = TraceRow(len(trace) + 1, -float(intermediate_result.fun), params, time.perf_counter() - start)
        trace.append(row)
        if callback is not None and callback(row):
            raise StopIteration

    x0 = init[learn]
    if learn.any():
        res = minimize(objective, x0, jac=True, method="L-BFGS-B", callback=on_iteration,
                       options={"maxiter": iterations, "ftol": tolerance, "gtol": 1e-9, "maxcor": 20})
        x, converged, n_iter = res.x, bool(res.success), int(res.nit)
    else:
        x, converged, n_iter = x0, True, 0
    params = init.copy()
    params[learn] = x
    value, _ = pll_value_grad(terms, params)
    if not trace or not np.array_equal(trace[-1].params, params):
        pv = prior_terms(params, mean, prior_stddev, learn)[0]
        trace.append(TraceRow(len(trace) + 1, value + pv, params.copy(), time.perf_counter() - start))
    return LearnResult(
        params=params,
        param_info=param_info,
        method="pll",
        objective_name="weighted PLL + log prior",
        trace=trace,
        iterations=n_iter,
        converged=converged,
        seconds=time.perf_counter() - start,
        stats={"events": terms.delta.shape[0], "groups": terms.n_groups, "pll": value},
    )
