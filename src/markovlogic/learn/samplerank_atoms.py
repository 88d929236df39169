"""SampleRank over ordinary query atoms (Culotta's thesis, Algorithm 4; Wick
et al. 2011): learning weights from the ranking of neighbouring worlds that
a Metropolis-Hastings chain over the atoms of each training network visits.

The chain is the one of :mod:`..infer.mh`: a step flips one free atom, or
moves the true atom of an exactly-one block (``!`` predicates) to another
atom of the block; a step that would break a hard clause is refused. For
each proposal ``y -> y'`` the kernel knows, from the clauses of the flipped
atoms only:

* the feature change ``dphi = n(y') - n(y)``, ``n`` the true-grounding
  counts per learned parameter (the formulas split into their CNF clauses
  first, one weight per clause, as the other learners do: learn/output.py,
  learn/data.py; ``+`` variables give one parameter per constant);
* the change of the Hamming loss against the training truth (the number of
  query atoms whose value differs from it; several query predicates add up).

When the loss changes and the model ranks the two worlds against it (or
within the margin), the weights move by the perceptron, MIRA or MIRA++ rule
of :func:`.samplerank_core.rank_update` (shared with SampleRank over
clusterings, :mod:`.samplerank`). The next state follows the model (MH
acceptance ``min(1, exp(theta . dphi / T))`` with the weights after the
update; ``T = 0``: greedy) or the loss (``accept="loss"``: a step that
lowers it is taken, one that leaves it equal with probability 1/2). The
returned weights are the average of the weights after every step (kept
in O(D) per update, not per step: ``avg = theta_N - sum_t (t-1) delta_t / N``).

Training worlds: one chain per training network, started from a random
world (``start="random"``), the all-false world (``"false"``) or the
training world (``"truth"``), repaired by WalkSAT where it breaks a hard
clause or block (:func:`..infer.samplesat.feasible_state`). An epoch runs
``steps`` proposals on each network in turn (default 100 per sampled
variable). Atoms that occur in no clause are not sampled: no weight can
change their value, and they add a constant to the loss.

Zero-weight clauses are not dropped (the samplers' normalisation drops them,
so the chain is built over the network with every soft clause at weight 1
and the weights are read from ``theta``). Models that query an equivalence
predicate go to :mod:`.samplerank`; a run that queries an equivalence
predicate and ordinary predicates at once is refused (learn/api.py).

Kernels: :func:`_flip_acc` (one atom, counts and feature change) and the
training worlds as a state kind of :mod:`markovlogic.onestate`
(``TRAINING_WORLDS``); :func:`samplerank_atoms_run` is the generic SampleRank
loop bound to it (numba, no Python per step).

Measured (bench/workloads/learn_uwcse.py, where the table and command are
quoted): UW-CSE advisedBy, 5 folds, from zero weights, 2 epochs (8.5-12.5M
proposals, 45-86 s per fold, about 6 us per proposal on 4.4-7.9M clauses):
AUC-PR 0.429 (pll 0.371, the best other learner 0.399) but test CLL -0.068
(pll -0.028, the base rate -0.049): SampleRank ranks well and is badly
calibrated, the margin setting the scale of the weights. Following the loss
(``accept="loss"``): CLL -0.031, AUC-PR 0.353. On a known 3-atom model
(tests) MIRA's held-out likelihood is 0.035-0.04 nats per world below the
exact ML weights' at margin 1, 0.003-0.006 at margin 2.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numba as nb
import numpy as np

from ..errors import OptionError
from ..ground.network import GroundNetwork
from ..infer.mh import GREEDY_EPS
from ..infer.samplesat import _other_in_block, feasible_state, prepare as prepare_sampler, rand_below, rand_unit
from ..onestate import StateKind, bind, dot
from .counts import expand_ranges
from .data import TrainingSet, prepare
from .result import Callback, LearnResult, TraceRow
from .samplerank_core import ACCEPT, ATOM_LOSSES, UPDATES, SampleRankOptions

CHUNK = 200_000          # steps per kernel call (time limit and callback granularity)
# statistics slots
ST_PROPOSED, ST_REFUSED, ST_UPDATES, ST_ACCEPTED = range(4)


# ---------------------------------------------------------------- kernels

@nb.njit(cache=True, _nrt=False)
def _flip_acc(a, world, count, atom_lit_start, occ_clause, occ_positive, is_hard, cp_start, cp_param, cp_coef,
              dphi):
    """Flip atom ``a``: update the true-literal counts, add the change of the
    feature counts to ``dphi``; returns the change of the number of violated
    hard clauses."""
    new = not world[a]
    world[a] = new
    hv = 0
    for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
        c = occ_clause[k]
        if occ_positive[k] == new:
            count[c] += 1
            if count[c] == 1:
                if is_hard[c]:
                    hv -= 1
                else:
                    for j in range(cp_start[c], cp_start[c + 1]):
                        dphi[cp_param[j]] += cp_coef[j]
        else:
            count[c] -= 1
            if count[c] == 0:
                if is_hard[c]:
                    hv += 1
                else:
                    for j in range(cp_start[c], cp_start[c + 1]):
                        dphi[cp_param[j]] -= cp_coef[j]
    return hv


@nb.njit(cache=True, _nrt=False)
def _loss_change(a, world, truth, in_loss):
    """Change of the Hamming loss if atom ``a`` flips."""
    if not in_loss[a]:
        return 0.0
    return 1.0 if world[a] == truth[a] else -1.0


# ---------------------------------------------------------------- the state kind
#
# Training worlds as a state kind of markovlogic.onestate: S = (g, s, free,
# blocks, p_block, truth, in_loss, theta, dphi, dl, loss_cur) with g the
# network arrays and s = (world, count, block_true, rs) as below, theta the
# learned weights (read in place: set_weights has nothing to do), dphi the
# feature change of the pending move and dl (float64[1]) its loss change.
# The diff: [move, a1, a2]: a flip of a1 (a2 = -1) or a block move from a1 to
# a2, applied by propose (which accumulates dphi) and undone by reject.


@nb.njit(cache=True, _nrt=False)
def _flip_move(S, a1, a2):
    g, s, dphi = S[0], S[1], S[8]
    hv = _flip_acc(a1, s[0], s[1], g[0], g[1], g[2], g[3], g[7], g[8], g[9], dphi)
    if a2 >= 0:
        hv += _flip_acc(a2, s[0], s[1], g[0], g[1], g[2], g[3], g[7], g[8], g[9], dphi)
    return hv


@nb.njit(cache=True, _nrt=False)
def _unflip_move(S, a1, a2):
    g, s, dphi = S[0], S[1], S[8]
    if a2 >= 0:
        _flip_acc(a2, s[0], s[1], g[0], g[1], g[2], g[3], g[7], g[8], g[9], dphi)
    _flip_acc(a1, s[0], s[1], g[0], g[1], g[2], g[3], g[7], g[8], g[9], dphi)


@nb.njit(cache=True)
def train_propose(S, diff):
    g, s, free, blocks, p_block, truth, in_loss = S[0], S[1], S[2], S[3], S[4], S[5], S[6]
    world, block_true, rs = s[0], s[2], s[3]
    dphi, dl = S[8], S[9]
    nf = len(free)
    nbk = len(blocks)
    diff[0] = 0
    if nf + nbk == 0:
        return np.nan, 0.0
    a2 = -1
    if nbk > 0 and (nf == 0 or rand_unit(rs) < p_block):
        b = blocks[rand_below(rs, nbk)]
        a1 = block_true[b]
        a2 = _other_in_block(rs, b, a1, g[4], g[5])
        diff[0] = 1
    else:
        a1 = free[rand_below(rs, nf)]
    diff[1] = a1
    diff[2] = a2
    d = _loss_change(a1, world, truth, in_loss)
    if a2 >= 0:
        d += _loss_change(a2, world, truth, in_loss)
    dl[0] = d
    for k in range(len(dphi)):
        dphi[k] = 0.0
    if _flip_move(S, a1, a2) > 0:
        _unflip_move(S, a1, a2)
        return -np.inf, 0.0
    return train_score_delta(S, diff), 0.0


@nb.njit(cache=True)
def train_accept(S, diff, d, track):
    S[10][0] += S[9][0]
    a2 = diff[2]
    if a2 >= 0:
        S[1][2][S[0][6][a2]] = a2


@nb.njit(cache=True)
def train_reject(S, diff):
    _unflip_move(S, diff[1], diff[2])


@nb.njit(cache=True)
def train_unit(S):
    return rand_unit(S[1][3])


@nb.njit(cache=True)
def train_loss_delta(S, diff):
    return S[9][0]


@nb.njit(cache=True)
def train_features(S, diff, out):
    dphi = S[8]
    for k in range(len(dphi)):
        out[k] = dphi[k]


@nb.njit(cache=True)
def train_set_weights(S, theta):
    pass


@nb.njit(cache=True)
def train_score_delta(S, diff):
    return dot(S[7], S[8])


@nb.njit(cache=True)
def train_loss(S):
    return S[10][0]


TRAINING_WORLDS = StateKind("training_worlds", train_propose, train_accept, train_reject, train_unit,
                            loss_delta=train_loss_delta, features=train_features, set_weights=train_set_weights,
                            score_delta=train_score_delta, loss=train_loss, jit=dict(_nrt=False))
LOOPS = bind(TRAINING_WORLDS)
_sr_loop = LOOPS.samplerank


@nb.njit(cache=True)
def samplerank_atoms_run(n_steps, step0, temp, update, accept_kind, margin, C, rate, g, s, free, blocks, p_block,
                         truth, in_loss, theta, u_sum, learnable, phi_cur, phi_gold, loss_cur, trace_every, trace,
                         stats):
    """``n_steps`` SampleRank steps on one network (module docstring), the
    global step count starting after ``step0``: the generic SampleRank loop of
    :mod:`markovlogic.onestate` bound to training worlds. ``g``: the network
    arrays (atom_lit_start, occ_clause, occ_positive, is_hard, block_start,
    block_atoms, atom_block, cp_start, cp_param, cp_coef); ``s``: the chain
    (world, count, block_true, rs), updated in place, as are ``theta``,
    ``u_sum`` (sum of (t-1) * change of theta at step t), ``phi_cur``,
    ``loss_cur[0]`` and ``stats``. Every ``trace_every``-th global step a row
    (step, loss, theta) goes to ``trace``; returns the rows written."""
    D = len(theta)
    S = (g, s, free, blocks, p_block, truth, in_loss, theta, np.zeros(D), np.zeros(1), loss_cur)
    work = (np.zeros(D), np.zeros(D), np.zeros(D), np.zeros(D), np.zeros((3, D)), np.zeros(3), np.zeros(3))
    return _sr_loop(S, np.zeros(3, np.int64), work, n_steps, step0, step0, temp, -GREEDY_EPS, update, accept_kind,
                    margin, C, rate, theta, u_sum, learnable, phi_cur, phi_gold, trace_every, trace, stats)


# ---------------------------------------------------------------- chains

@dataclass
class AtomTrainingChain:
    """One training network's chain: the sampler arrays (every soft clause
    kept), the parameters of each kept clause, the chain state, the truth."""

    net_arrays: tuple
    state: tuple
    free: np.ndarray
    blocks: np.ndarray
    p_block: float
    truth: np.ndarray
    in_loss: np.ndarray
    phi_cur: np.ndarray
    phi_gold: np.ndarray
    loss_cur: np.ndarray
    variables: int


def clause_parameters(net: GroundNetwork, orig_clause: np.ndarray, is_hard: np.ndarray):
    """CSR (start, parameter, coefficient) of the sampler's clauses (ids
    ``orig_clause`` in ``net``): hard clauses carry none."""
    ps = np.asarray(net.param_start, dtype=np.int64)
    starts = np.where(is_hard, 0, ps[orig_clause])
    ends = np.where(is_hard, 0, ps[orig_clause + 1])
    pos, _ = expand_ranges(starts, ends)
    cp_start = np.zeros(len(orig_clause) + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=cp_start[1:])
    return (cp_start, np.asarray(net.param_index, dtype=np.int64)[pos],
            np.asarray(net.param_coef, dtype=np.float64)[pos])


def build_chain(net: GroundNetwork, world: np.ndarray, counter, start: str, rng: np.random.Generator
                ) -> AtomTrainingChain:
    """The chain over ``net`` (training world ``world``) from ``start``."""
    unit = replace(net, weight=np.where(net.is_hard, 0.0, 1.0))    # keep the zero-weight clauses
    prep = prepare_sampler(unit)
    sat = prep.sat
    cp = clause_parameters(net, sat.orig_clause, sat.is_hard)
    init = {"random": None, "false": np.zeros(net.n_atoms, dtype=bool), "truth": world}[start]
    st, _ = feasible_state(prep, rng, init)
    var = prep.var
    free = var[var >= 0].astype(np.int64)
    blocks = (-var[var < 0] - 1).astype(np.int64)
    p_block = len(blocks) / max(len(var), 1)
    g = (sat.atom_lit_start, sat.occ_clause, sat.occ_positive, sat.is_hard, sat.block_start, sat.block_atoms,
         sat.atom_block, *cp)
    state = (st.world, st.count, st.block_true, st.rs)
    in_loss = np.asarray(net.is_query, dtype=bool)
    truth = np.asarray(world, dtype=bool)
    loss = float(np.count_nonzero((st.world != truth) & in_loss))
    return AtomTrainingChain(g, state, free, blocks, float(p_block), truth, in_loss, counter(st.world),
                             counter(truth), np.array([loss]), len(var))


# ---------------------------------------------------------------- learner

def check_atom_options(opt: SampleRankOptions, predicates: list[str]) -> SampleRankOptions:
    """``opt`` checked for ordinary query atoms (a loss over clusterings refused)."""
    opt.check()
    if opt.loss is not None and opt.loss not in ATOM_LOSSES:
        raise OptionError(
            f"loss {opt.loss} compares clusterings of an equivalence predicate; the query predicate"
            f"{'s' if len(predicates) > 1 else ''} {', '.join(predicates) or '(none)'} "
            f"{'are' if len(predicates) > 1 else 'is'} ordinary: use --loss hamming")
    return opt


def learn_samplerank_atoms(
    nets: list[GroundNetwork],
    *,
    iterations: int | None = None,
    prior_stddev: float | None = None,
    seed: int | None = None,
    callback: Callback | None = None,
    options: SampleRankOptions | None = None,
    **kw,
) -> LearnResult:
    """SampleRank on the training networks (module docstring). ``options``
    or keyword options of :class:`SampleRankOptions` (not both); ``seed``
    (if given) replaces the options' seed;
    ``iterations``: epochs; ``prior_stddev`` is refused (``margin`` and
    ``C`` bound the steps); ``callback(row)`` after each network of each
    epoch (row.iteration = the epoch; True stops)."""
    if options is not None and kw:
        raise OptionError("give either a SampleRankOptions or keyword options, not both")
    opt = options if options is not None else SampleRankOptions(**kw)
    opt = replace(opt) if seed is None else replace(opt, seed=seed)
    if iterations is not None:
        opt.epochs = iterations
    if prior_stddev is not None:
        raise OptionError("prior_stddev does not apply to samplerank (its margin and C bound the steps)")
    start_time = time.perf_counter()
    data = prepare(nets)
    preds = sorted({n.predicates[p] for n in data.nets for p in np.unique(n.atom_pred[n.is_query]).tolist()})
    check_atom_options(opt, preds)
    theta = _initial(nets, data, opt.init)
    D = len(theta)
    u_sum = np.zeros(D)
    learnable = data.learnable
    rng = np.random.default_rng(opt.seed)
    chains = [build_chain(net, world, counter, opt.start, rng)
              for net, world, counter in zip(data.nets, data.worlds, data.counters)]
    stats = np.zeros(4, np.int64)
    trace: list[TraceRow] = []
    total = 0
    epochs_done = 0
    converged = timed_out = stopped = False
    for epoch in range(1, opt.epochs + 1):
        updates_before = int(stats[ST_UPDATES])
        for w_i, ch in enumerate(chains):
            steps = opt.steps if opt.steps is not None else 100 * max(ch.variables, 1)
            every = opt.trace_every or max(1, steps // 50)
            left = steps
            while left > 0:
                k = min(left, CHUNK)
                buf = np.zeros((k // every + 1, 2 + D))
                rows = samplerank_atoms_run(
                    k, total, float(opt.temperature), UPDATES[opt.update], ACCEPT[opt.accept], float(opt.margin),
                    float(opt.C), float(opt.learning_rate), ch.net_arrays, ch.state, ch.free, ch.blocks,
                    ch.p_block, ch.truth, ch.in_loss, theta, u_sum, learnable, ch.phi_cur, ch.phi_gold,
                    ch.loss_cur, every, buf, stats)
                now = time.perf_counter() - start_time
                trace.extend(TraceRow(int(buf[r, 0]), float(buf[r, 1]), buf[r, 2:].copy(), now,
                                      {"epoch": epoch, "world": w_i}) for r in range(rows))
                total += k
                left -= k
                if opt.max_seconds is not None and now > opt.max_seconds:
                    timed_out = True
                    break
            if callback is not None and callback(TraceRow(epoch, float(ch.loss_cur[0]), theta.copy(),
                                                          time.perf_counter() - start_time,
                                                          {"world": w_i})):
                stopped = True
            if timed_out or stopped:
                break
        epochs_done = epoch
        if timed_out or stopped:
            break
        if int(stats[ST_UPDATES]) == updates_before:
            converged = True          # a whole epoch ranked every proposal right
            break
    final = theta - u_sum / total if (opt.average and total) else theta.copy()
    final[~learnable] = data.init[~learnable]
    loss = float(sum(ch.loss_cur[0] for ch in chains))
    if not trace or trace[-1].iteration != total:
        trace.append(TraceRow(total, loss, theta.copy(), time.perf_counter() - start_time, {"epoch": epochs_done}))
    s = stats.tolist()
    info = {
        "steps": total, "epochs": epochs_done, "proposals": s[ST_PROPOSED], "hard_refused": s[ST_REFUSED],
        "updates": s[ST_UPDATES], "accepted": s[ST_ACCEPTED], "final_train_loss": loss,
        "query_atoms": int(sum(int(ch.in_loss.sum()) for ch in chains)),
        "variables": int(sum(ch.variables for ch in chains)), "timed_out": timed_out,
        "loss": "hamming", "update": opt.update, "accept": opt.accept, "start": opt.start, "init": opt.init,
    }
    return LearnResult(
        params=final,
        param_info=data.param_info,
        method="samplerank",
        objective_name="training loss (hamming: wrong query atoms of the chain's world)",
        trace=trace,
        iterations=epochs_done,
        converged=converged,
        seconds=time.perf_counter() - start_time,
        stats=info,
    )


def _initial(nets: list[GroundNetwork], data: TrainingSet, init: str) -> np.ndarray:
    """The first weights: the model's, or the pseudo-likelihood optimum."""
    w = data.init.copy()
    if init == "pll":
        from .pll import learn_pll

        w = np.asarray(learn_pll(nets).params, dtype=np.float64).copy()
    return w
