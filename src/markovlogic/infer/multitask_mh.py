"""Multi-task Metropolis-Hastings (Culotta's thesis, section 9.3, Algorithm 6).

The model's variables are split into *tasks*: by default one task per
predicate with unknown atoms (the query predicates), or the groups of
predicates given by ``tasks`` (a list of lists of predicate names, as the
``partition`` of :mod:`.sgmp`). A variable is a free atom or an exactly-one
block (the variables of :mod:`.samplesat`); a block belongs to the task of
its first atom.

One proposal (Algorithm 6):

1. a task ``i`` is chosen uniformly among the tasks that have variables
   (line 3), and a variable ``j`` of it uniformly (line 4);
2. ``y_j`` is drawn from its conditional under the global model given the
   rest of the world (line 5, a Gibbs step);
3. for every other task ``k``, in task order (lines 6-8), the neighbourhood
   of ``j`` in task ``k`` is re-sampled: the variables of task ``k`` that
   share a clause with ``j`` (at most ``neighbourhood`` of them, a uniform
   random subset when there are more; the chapter's "only allow changes to
   a fixed number of variables from task k", its ``y_{j-1}, y_j, y_{j+1}``),
   jointly, from their conditional given the world as it stands after the
   previous steps, enumerated exactly (the local model; at most
   ``max_states`` joint states, variables dropped from the end of the
   subset beyond that). A task with no variable next to ``j`` is skipped;
4. the new world ``y'`` is accepted with probability ``min(1, p(y') q(y |
   y') / (p(y) q(y' | y)))`` (lines 10-12). ``q(y' | y)`` is the product of
   the conditionals of the values drawn at each step; ``q(y | y')`` that of
   the reverse move, the same steps in the same order from ``y'`` drawing
   the old values (each variable is touched by one step, so the reverse
   path is determined: before step ``m`` it has the old values of the steps
   before ``m`` and the new values of the others). Task, variable,
   neighbourhood subsets and order do not depend on the world, so this is
   a valid Metropolis-Hastings kernel for ``p``; with one task it is Gibbs
   sampling (always accepted).

Each step's local model is the global model's conditional of that block:
the chapter's local models ``p(y^k | x^k, n(y^k))`` with the global weights.
Worlds that break a hard clause or a block have probability 0, so the chain
stays among feasible worlds (it starts from one found by WalkSAT,
:func:`.samplesat.feasible_state`). On a network with hard clauses a step is,
with probability ``tie_prob`` (default 0.25), a tie move of :mod:`.mh`
instead (a free atom flipped with the atoms the hard clauses tie to it, its
own Metropolis-Hastings kernel): the other steps cannot cross between regions
that hard clauses separate. Atoms the chain could not move are reported as in
:mod:`.mh` (``frozen_atoms``, and a warning).

The chain state, the start world, the best-world tracking and the
(Rao-Blackwellised) tallies are those of :class:`.mh.AtomChain`; the
proposal runs in one compiled kernel. Marginals (:func:`multitask_marginals`):
``samples`` states ``thin`` proposals apart after ``burn_in`` proposals.
MAP (:func:`multitask_map`): the best world seen in ``steps`` proposals at
``temperature`` (the chain then targets ``p^(1/T)``).
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass

import numba as nb
import numpy as np
import scipy.sparse as sp

from ..errors import OptionError
from ..ground.network import GroundNetwork
from .sampling import ChunkRunner
from .mh import AtomChain, AtomMHOptions, TIE_MAX, _collect, _record, _tie_move, _update_best, frozen_stats
from .results import MapResult, MarginalResult
from .samplesat import KERNEL, fill_inactive, flip, rand_below, rand_unit
from .sgmp import atom_groups

# statistics slots
ST_PROPOSED, ST_ACCEPTED, ST_NO_REVERSE, ST_UNCHANGED, ST_STEPS, ST_TRUNCATED = range(6)
N_STATS = 6


@dataclass
class MultiTaskOptions:
    """Options of multi-task Metropolis-Hastings (``method="multitask-mh"``).

    ``tasks``: ``None`` (one task per predicate) or a list of lists of
    predicate names. ``neighbourhood``: variables of a neighbouring task
    re-sampled with the chosen one (default 3); ``max_states``: joint states
    a step may enumerate. Marginals: ``samples`` states ``thin`` proposals
    apart (default: the number of variables) after ``burn_in`` proposals
    (default ``10 *`` variables), Rao-Blackwellised unless
    ``rao_blackwell=False``. MAP: the best world in ``steps`` proposals
    (default ``20 *`` variables) at ``temperature`` (> 0). ``init``: a start
    world; ``hard_weight``: hard clauses as soft clauses of this weight;
    ``max_seconds``: a time limit. ``tie_prob``: probability that a step is
    a tie move of :mod:`.mh` instead (a free atom flipped with the atoms the
    hard clauses tie to it; default 0.25 on a network with hard clauses, 0
    without), ``tie_max``: the largest set of atoms a tie move flips.
    """

    tasks: object = None
    neighbourhood: int = 3
    max_states: int = 256
    samples: int = 1000
    burn_in: int | None = None
    thin: int | None = None
    steps: int | None = None
    temperature: float = 1.0
    seed: int = 0
    max_seconds: float | None = None
    init: np.ndarray | None = None
    rao_blackwell: bool = True
    hard_weight: float | None = None
    tie_prob: float | None = None
    tie_max: int = TIE_MAX

    def check(self) -> "MultiTaskOptions":
        def integer(name, v, low, optional=False):
            if v is None and optional:
                return
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < low:
                raise OptionError(f"{name} must be an integer >= {low}, got {v!r}")

        integer("neighbourhood", self.neighbourhood, 0)
        integer("max_states", self.max_states, 2)
        integer("samples", self.samples, 1)
        integer("burn_in", self.burn_in, 0, True)
        integer("thin", self.thin, 1, True)
        integer("steps", self.steps, 1, True)          # 0: the start world as the MAP
        integer("seed", self.seed, 0)
        integer("tie_max", self.tie_max, 1)
        tp = self.tie_prob
        if tp is not None and (isinstance(tp, (bool, np.bool_)) or not isinstance(
                tp, (int, float, np.integer, np.floating)) or not 0.0 <= tp <= 1.0):
            raise OptionError(f"tie_prob must be a number in [0, 1], got {tp!r}")
        t = self.temperature
        if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, float, np.integer, np.floating)) \
                or not math.isfinite(t) or t <= 0:
            raise OptionError(f"temperature must be a number > 0, got {t!r}")
        if self.max_seconds is not None and (isinstance(self.max_seconds, bool) or not isinstance(
                self.max_seconds, (int, float)) or not self.max_seconds > 0):
            raise OptionError(f"max_seconds must be a positive number, got {self.max_seconds!r}")
        return self


def make_options(options: MultiTaskOptions | None, kw: dict) -> MultiTaskOptions:
    if options is not None:
        if kw:
            raise OptionError("give either a MultiTaskOptions or keyword options, not both")
        return dataclasses.replace(options).check()
    names = {f.name for f in dataclasses.fields(MultiTaskOptions)}
    unknown = sorted(set(kw) - names)
    if unknown:
        raise OptionError(f"method multitask-mh does not take option(s) {', '.join(unknown)}; "
                          f"it takes {', '.join(sorted(names))}")
    return MultiTaskOptions(**kw).check()


# ---------------------------------------------------------------- kernels

@nb.njit(**KERNEL)
def _dom(v, block_start):
    """Number of values of variable ``v`` (atom id, or -(block + 1))."""
    if v >= 0:
        return 2
    b = -v - 1
    return block_start[b + 1] - block_start[b]


@nb.njit(**KERNEL)
def _atom_value(v, digit, a, block_start, block_atoms):
    """Value of atom ``a`` of variable ``v`` when the variable takes ``digit``."""
    if v >= 0:
        return digit == 1
    return block_atoms[block_start[-v - 1] + digit] == a


@nb.njit(**KERNEL)
def _enumerate(vars_, u0, u1, temp, world, count, block_true, is_hard, atom_lit_start, occ_clause, occ_positive,
               weight, block_start, block_atoms, stamp, sid, cidx, base, tcount, scores):
    """Log-weights (score / temp, -inf if a hard clause breaks) of every joint
    state of the variables ``vars_[u0:u1]`` at the current world, in
    ``scores``; returns (number of states, index of the current state).
    States are mixed-radix numbers, the first variable the lowest digit."""
    sid[0] += 1
    st = sid[0]
    nt = 0
    n_states = 1
    cur = 0
    stride = 1
    # touched clauses and their true literals outside the block
    for p in range(u0, u1):
        v = vars_[p]
        d = _dom(v, block_start)
        if v >= 0:
            digit = 1 if world[v] else 0
            a0, a1, blk = v, v + 1, False
        else:
            b = -v - 1
            digit = 0
            for q in range(block_start[b], block_start[b + 1]):
                if block_atoms[q] == block_true[b]:
                    digit = q - block_start[b]
            a0, a1, blk = block_start[b], block_start[b + 1], True
        cur += digit * stride
        stride *= d
        n_states *= d
        for q in range(a0, a1):
            a = block_atoms[q] if blk else q
            for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
                c = occ_clause[k]
                if stamp[c] != st:
                    stamp[c] = st
                    cidx[c] = nt
                    base[nt] = count[c]
                    nt += 1
                if occ_positive[k] == world[a]:
                    base[cidx[c]] -= 1
    for e in range(n_states):
        for t in range(nt):
            tcount[t] = base[t]
        rest = e
        for p in range(u0, u1):
            v = vars_[p]
            d = _dom(v, block_start)
            digit = rest % d
            rest //= d
            if v >= 0:
                a0, a1, blk = v, v + 1, False
            else:
                b = -v - 1
                a0, a1, blk = block_start[b], block_start[b + 1], True
            for q in range(a0, a1):
                a = block_atoms[q] if blk else q
                val = _atom_value(v, digit, a, block_start, block_atoms)
                for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
                    if occ_positive[k] == val:
                        tcount[cidx[occ_clause[k]]] += 1
        total = 0.0
        ok = True
        sid[0] += 1
        st2 = sid[0]
        for p in range(u0, u1):
            v = vars_[p]
            if v >= 0:
                a0, a1, blk = v, v + 1, False
            else:
                b = -v - 1
                a0, a1, blk = block_start[b], block_start[b + 1], True
            for q in range(a0, a1):
                a = block_atoms[q] if blk else q
                for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
                    c = occ_clause[k]
                    if stamp[c] == st2:
                        continue
                    stamp[c] = st2
                    if tcount[cidx[c]] > 0:
                        total += weight[c]
                    elif is_hard[c]:
                        ok = False
        scores[e] = total / temp if ok else -np.inf
    return n_states, cur


@nb.njit(**KERNEL)
def _normalise(scores, n):
    """Turn ``scores[:n]`` into log-probabilities (log-sum-exp)."""
    top = -np.inf
    for e in range(n):
        if scores[e] > top:
            top = scores[e]
    z = 0.0
    for e in range(n):
        if scores[e] > -np.inf:
            z += math.exp(scores[e] - top)
    lz = top + math.log(z)
    for e in range(n):
        scores[e] -= lz


@nb.njit(**KERNEL)
def _draw(scores, n, rs):
    r = rand_unit(rs)
    acc = 0.0
    last = 0
    for e in range(n):
        if scores[e] > -np.inf:
            acc += math.exp(scores[e])
            last = e
            if r < acc:
                return e
    return last


@nb.njit(**KERNEL)
def _set_state(vars_, u0, u1, e, world, count, sel, vlist, vpos, ist, fst, block_true,
               atom_lit_start, occ_clause, occ_positive, weight, block_start, block_atoms,
               track, log, lst):
    """Give the variables ``vars_[u0:u1]`` joint state ``e``."""
    rest = e
    for p in range(u0, u1):
        v = vars_[p]
        d = _dom(v, block_start)
        digit = rest % d
        rest //= d
        if v >= 0:
            if world[v] != (digit == 1):
                flip(v, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
                if track:
                    _record(v, log, lst)
        else:
            b = -v - 1
            new = block_atoms[block_start[b] + digit]
            old = block_true[b]
            if new != old:
                flip(old, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
                flip(new, world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
                block_true[b] = new
                if track:
                    _record(old, log, lst)
                    _record(new, log, lst)


@nb.njit(**KERNEL)
def _propose(temp, track, g, s, is_hard, task_units, task_start, live_tasks, unit_var, nbr_off, nbr_unit,
             n_tasks, hood, max_states, sc, best, best_world, log, lst, stats):
    """One multi-task proposal (see the module docstring), accepted or not."""
    atom_lit_start, occ_clause, occ_positive, weight = g[3], g[4], g[5], g[6]
    block_start, block_atoms = g[7], g[8]
    world, count, sel, vlist, vpos, ist, fst, block_true, rs = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]
    vars_, step_start, old_state, new_state, pick, stamp, sid, cidx, base, tcount, scores = (
        sc[0], sc[1], sc[2], sc[3], sc[4], sc[5], sc[6], sc[7], sc[8], sc[9], sc[10])
    stats[ST_PROPOSED] += 1
    i = live_tasks[rand_below(rs, len(live_tasks))]
    u = task_units[task_start[i] + rand_below(rs, task_start[i + 1] - task_start[i])]
    # the steps: u alone, then u's neighbourhood in each other task
    n_steps = 1
    nv = 0
    vars_[nv] = unit_var[u]
    nv += 1
    step_start[0] = 0
    step_start[1] = 1
    for k in range(n_tasks):
        if k == i:
            continue
        lo = nbr_off[u, k]
        hi = nbr_off[u, k + 1]
        m = hi - lo
        if m == 0 or hood == 0:
            continue
        take = min(hood, m)
        for q in range(m):
            pick[q] = nbr_unit[lo + q]
        for q in range(take):            # partial Fisher-Yates: a uniform subset
            r = q + rand_below(rs, m - q)
            tmp = pick[q]
            pick[q] = pick[r]
            pick[r] = tmp
        states = 1
        start = nv
        for q in range(take):
            d = _dom(unit_var[pick[q]], block_start)
            if states * d > max_states:
                stats[ST_TRUNCATED] += 1
                break
            states *= d
            vars_[nv] = unit_var[pick[q]]
            nv += 1
        if nv > start:
            n_steps += 1
            step_start[n_steps] = nv
    stats[ST_STEPS] += n_steps
    # forward: draw each step from its conditional at the current world
    s0 = fst[0]
    log_fwd = 0.0
    changed = False
    for m in range(n_steps):
        n, cur = _enumerate(vars_, step_start[m], step_start[m + 1], temp, world, count, block_true, is_hard,
                            atom_lit_start, occ_clause, occ_positive, weight, block_start, block_atoms,
                            stamp, sid, cidx, base, tcount, scores)
        _normalise(scores, n)
        e = _draw(scores, n, rs)
        log_fwd += scores[e]
        old_state[m] = cur
        new_state[m] = e
        if e != cur:
            changed = True
            _set_state(vars_, step_start[m], step_start[m + 1], e, world, count, sel, vlist, vpos, ist, fst,
                       block_true, atom_lit_start, occ_clause, occ_positive, weight, block_start, block_atoms,
                       False, log, lst)
    if not changed:
        stats[ST_UNCHANGED] += 1
        stats[ST_ACCEPTED] += 1
        return
    delta = (fst[0] - s0) / temp
    # reverse: the same steps from y', drawing the old values
    log_rev = 0.0
    possible = True
    for m in range(n_steps):
        if possible:
            n, cur = _enumerate(vars_, step_start[m], step_start[m + 1], temp, world, count, block_true,
                                is_hard, atom_lit_start, occ_clause, occ_positive, weight, block_start,
                                block_atoms, stamp, sid, cidx, base, tcount, scores)
            _normalise(scores, n)
            lp = scores[old_state[m]]
            if lp == -np.inf:
                possible = False
            else:
                log_rev += lp
        _set_state(vars_, step_start[m], step_start[m + 1], old_state[m], world, count, sel, vlist, vpos, ist,
                   fst, block_true, atom_lit_start, occ_clause, occ_positive, weight, block_start, block_atoms,
                   False, log, lst)
    if not possible:
        stats[ST_NO_REVERSE] += 1
        return
    x = delta + log_rev - log_fwd
    if x >= 0.0 or rand_unit(rs) < math.exp(x):
        stats[ST_ACCEPTED] += 1
        for m in range(n_steps):
            _set_state(vars_, step_start[m], step_start[m + 1], new_state[m], world, count, sel, vlist, vpos, ist,
                       fst, block_true, atom_lit_start, occ_clause, occ_positive, weight, block_start,
                       block_atoms, track, log, lst)
        if track:
            _update_best(world, fst, best, best_world, log, lst)


@nb.njit(**KERNEL)
def _run(n, temp, track, g, s, is_hard, task_units, task_start, live_tasks, unit_var, nbr_off, nbr_unit,
         n_tasks, hood, max_states, sc, best, best_world, log, lst, stats, p_tie, free, tie, chain_stats):
    """``n`` steps: a tie move of a uniform free atom with probability
    ``p_tie`` (a kernel of its own, see :func:`.mh._tie_move`), else a
    multi-task proposal."""
    rs = s[8]
    nf = len(free)
    for _ in range(n):
        if p_tie > 0.0 and nf > 0 and rand_unit(rs) < p_tie:
            _tie_move(free[rand_below(rs, nf)], temp, track, g, s, tie, best, best_world, log, lst, chain_stats)
            continue
        _propose(temp, track, g, s, is_hard, task_units, task_start, live_tasks, unit_var, nbr_off, nbr_unit,
                 n_tasks, hood, max_states, sc, best, best_world, log, lst, stats)


@nb.njit(**KERNEL)
def _sample(n_samples, thin, rb, g, s, is_hard, task_units, task_start, live_tasks, unit_var, nbr_off, nbr_unit,
            n_tasks, hood, max_states, sc, best, best_world, log, lst, stats, p_tie, free, tie, chain_stats,
            prob, tally, store, seen):
    rs = s[8]
    for i in range(n_samples):
        k = thin + 1 if thin > 1 and rand_unit(rs) < 0.5 else thin      # both phases of a periodic chain
        _run(k, 1.0, False, g, s, is_hard, task_units, task_start, live_tasks, unit_var, nbr_off, nbr_unit,
             n_tasks, hood, max_states, sc, best, best_world, log, lst, stats, p_tie, free, tie, chain_stats)
        _collect(i, rb, is_hard, g, s, prob, tally, store, seen)


# ---------------------------------------------------------------- the chain

class MultiTaskChain:
    """An :class:`.mh.AtomChain` moved by multi-task proposals."""

    def __init__(self, net: GroundNetwork, opt: MultiTaskOptions) -> None:
        self.opt = opt
        init = None if opt.init is None else np.asarray(opt.init)
        self.chain = AtomChain(net, AtomMHOptions(seed=int(opt.seed), init=init,
                                                  rao_blackwell=bool(opt.rao_blackwell),
                                                  hard_weight=opt.hard_weight, tie_max=int(opt.tie_max)))
        net = self.chain.net
        prep = self.chain.prep
        sat = prep.sat
        var = prep.var.astype(np.int64)
        nv = len(var)
        group = atom_groups(net, opt.tasks)
        first_atom = np.where(var >= 0, var, sat.block_atoms[sat.block_start[np.maximum(-var - 1, 0)]]
                              if sat.n_blocks else var)
        unit_group = group[first_atom] if nv else np.zeros(0, np.int64)
        present, unit_task = np.unique(unit_group, return_inverse=True)
        unit_task = unit_task.reshape(-1).astype(np.int64)
        self.n_tasks = len(present)
        self.task_names = [self._task_name(net, group, g) for g in present]
        order = np.argsort(unit_task, kind="stable")
        self.task_units = order.astype(np.int64)
        self.task_start = np.zeros(self.n_tasks + 1, np.int64)
        np.cumsum(np.bincount(unit_task, minlength=self.n_tasks), out=self.task_start[1:])
        self.live_tasks = np.flatnonzero(np.diff(self.task_start) > 0).astype(np.int64)
        self.unit_var = var
        # variables that share a clause, grouped by task
        atom_unit = np.full(net.n_atoms, -1, np.int64)
        free = var >= 0
        atom_unit[var[free]] = np.flatnonzero(free)
        if sat.n_blocks:
            blocks = -var[~free] - 1
            sizes = sat.block_start[blocks + 1] - sat.block_start[blocks]
            from .kernels_state import _csr_gather

            _, members = _csr_gather(sat.block_start, blocks)
            atom_unit[sat.block_atoms[members]] = np.repeat(np.flatnonzero(~free), sizes)
        lit_unit = atom_unit[sat.lit_atom]
        clause_of_lit = np.repeat(np.arange(sat.n_clauses, dtype=np.int64), np.diff(sat.clause_start))
        keep = lit_unit >= 0
        inc = sp.csr_matrix((np.ones(int(keep.sum()), np.int32), (clause_of_lit[keep], lit_unit[keep])),
                            shape=(sat.n_clauses, nv))
        inc.data[:] = 1
        adj = (inc.T @ inc).tocoo()
        off = adj.row != adj.col
        rows, cols = adj.row[off].astype(np.int64), adj.col[off].astype(np.int64)
        o = np.lexsort((cols, unit_task[cols] if nv else cols, rows))
        rows, cols = rows[o], cols[o]
        self.nbr_unit = cols
        keys = rows * (self.n_tasks + 1) + (unit_task[cols] if len(cols) else cols)
        grid = (np.arange(nv, dtype=np.int64)[:, None] * (self.n_tasks + 1)
                + np.arange(self.n_tasks + 1, dtype=np.int64)[None, :])
        self.nbr_off = np.searchsorted(keys, grid).astype(np.int64)
        self.max_nbrs = int(np.max(self.nbr_off[:, -1] - self.nbr_off[:, 0])) if nv else 0
        # scratch of the kernel
        hood = int(opt.neighbourhood)
        max_vars = 1 + hood * max(self.n_tasks - 1, 0)
        nc = max(sat.n_clauses, 1)
        self.scratch = (
            np.zeros(max_vars + 1, np.int64), np.zeros(self.n_tasks + 2, np.int64),
            np.zeros(self.n_tasks + 1, np.int64), np.zeros(self.n_tasks + 1, np.int64),
            np.zeros(max(self.max_nbrs, 1), np.int64), np.zeros(nc, np.int64), np.zeros(1, np.int64),
            np.zeros(nc, np.int64), np.zeros(nc, np.int64), np.zeros(nc, np.int64),
            np.zeros(max(int(opt.max_states), self._largest_block(sat)), np.float64),
        )
        self.stats = np.zeros(N_STATS, np.int64)
        if opt.tie_prob is not None:
            self.p_tie = float(opt.tie_prob)
        else:
            self.p_tie = 0.25 if prep.n_hard and opt.tie_max >= 2 else 0.0

    @staticmethod
    def _largest_block(sat) -> int:
        return int(np.diff(sat.block_start).max()) if sat.n_blocks else 2

    @staticmethod
    def _task_name(net, group, g) -> str:
        preds = np.unique(net.atom_pred[group == g])
        return ",".join(net.predicates[p] for p in preds)

    @property
    def variables(self) -> int:
        return len(self.unit_var)

    def _args(self, temp: float, track: bool) -> tuple:
        c = self.chain
        return (float(temp), bool(track), c.prep.arrays, c.state.arrays, c.prep.sat.is_hard, self.task_units,
                self.task_start, self.live_tasks, self.unit_var, self.nbr_off, self.nbr_unit, self.n_tasks,
                int(self.opt.neighbourhood), int(self.opt.max_states), self.scratch, c.best, c.best_world,
                c.log, c.lst, self.stats, self.p_tie, c.free, c.tie, c.stats)

    def advance(self, k: int, temp: float, track: bool) -> None:
        if self.variables == 0 or k <= 0:
            return
        _run(int(k), *self._args(temp, track))

    def sample(self, n: int, thin: int, tally: np.ndarray) -> None:
        c = self.chain
        if self.variables == 0:
            _collect_none = np.zeros((0, c.net.n_atoms), dtype=bool)
            for i in range(n):
                _collect(i, c.rb, c.prep.sat.is_hard, c.prep.arrays, c.state.arrays, c.prob, tally, _collect_none,
                         c.seen)
            return
        args = self._args(1.0, False)
        _sample(int(n), int(thin), c.rb, *args[2:], c.prob, tally, c._no_store, c.seen)

    def stats_dict(self) -> dict:
        s = self.stats.tolist()
        proposed = s[ST_PROPOSED]
        cs = self.chain.stats_dict()
        ties = {k: cs[k] for k in ("tie_moves_proposed", "tie_moves_accepted", "tie_moves_failed", "tie_move_atoms")}
        ties["tie_prob"] = self.p_tie
        return ties | {
            "proposals": proposed, "accepted": s[ST_ACCEPTED],
            "accept_rate": s[ST_ACCEPTED] / proposed if proposed else 0.0,
            "unchanged": s[ST_UNCHANGED], "reverse_impossible": s[ST_NO_REVERSE],
            "steps_per_proposal": s[ST_STEPS] / proposed if proposed else 0.0,
            "neighbourhoods_truncated": s[ST_TRUNCATED], "tasks": self.n_tasks,
            "task_predicates": ";".join(self.task_names), "variables": self.variables,
            "init_flips": self.chain.init_flips,
        }


def multitask_marginals(net: GroundNetwork, options: MultiTaskOptions | None = None, *,
                        progress=None, **kw) -> MarginalResult:
    """P(atom = true) from multi-task Metropolis-Hastings samples (see
    :class:`MultiTaskOptions`)."""
    opt = make_options(options, kw)
    start = time.perf_counter()
    mt = MultiTaskChain(net, opt)
    nv = max(mt.variables, 1)
    thin = opt.thin if opt.thin is not None else nv
    burn = opt.burn_in if opt.burn_in is not None else 10 * nv
    burner = ChunkRunner(opt.max_seconds)
    burned = burner.run(lambda k: mt.advance(k, 1.0, False), burn)
    left = None if opt.max_seconds is None else max(opt.max_seconds - burner.elapsed(), 1e-9)
    sampler = ChunkRunner(left)
    tally = np.zeros(mt.chain.net.n_atoms, np.float64)
    drawn = sampler.run(lambda k: mt.sample(k, thin, tally), opt.samples, progress, at_least_one=True)
    prob = fill_inactive(mt.chain.prep, tally / float(drawn))
    seconds = time.perf_counter() - start
    stats = mt.stats_dict()
    frozen_stats(mt.chain, drawn, "multitask-mh", stats)
    stats.update({"samples": drawn, "burn_in": burned, "thin": thin, "seconds": seconds,
                  "rao_blackwell": mt.chain.rb, "stopped_early": burner.stopped_early or sampler.stopped_early})
    return MarginalResult(probabilities=prob, method="multitask-mh", samples=drawn, seconds=seconds, stats=stats)


def multitask_map(net: GroundNetwork, options: MultiTaskOptions | None = None, **kw) -> MapResult:
    """The best world seen by multi-task Metropolis-Hastings at
    ``temperature`` in ``steps`` proposals (see :class:`MultiTaskOptions`)."""
    opt = make_options(options, kw)
    start = time.perf_counter()
    mt = MultiTaskChain(net, opt)
    steps = opt.steps if opt.steps is not None else 20 * max(mt.variables, 1)
    runner = ChunkRunner(opt.max_seconds)
    made = runner.run(lambda k: mt.advance(k, float(opt.temperature), True), steps)
    net = mt.chain.net
    world = mt.chain.best_world.copy()
    prep = mt.chain.prep
    world[~prep.active & (prep.sat.atom_block < 0)] = False
    stats = mt.stats_dict()
    stats.update({"steps": made, "temperature": float(opt.temperature), "stopped_early": runner.stopped_early,
                  "seconds": runner.elapsed()})
    return MapResult(world=world, score=net.score(world), cost=net.cost(world),
                     hard_violated=net.hard_violated(world), method="multitask-mh",
                     seconds=time.perf_counter() - start, stats=stats)
