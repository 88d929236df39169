"""Lazy MaxWalkSAT (LazySAT: Singla & Domingos, *Memory-efficient inference
in relational domains*, AAAI 2006; Poon's thesis, section 2.4).

Unknown atoms start false, and only the *active* atoms ``A`` and the clauses
``M(A)`` (plus unit clauses, ``ground/activation.py``) are held. The search
is the compiled MaxWalkSAT of :mod:`..maxwalksat` run on the held clauses,
with one addition to its step: when the clause a step has drawn has an atom
outside ``A``, the kernel stops before drawing anything else; the atoms
outside ``A`` of every clause that is bad at that moment are activated in one
batch (one SQL query per template and literal position), the arrays are
rebuilt, and the same step goes on with the clause it had drawn.

**The steps are those of MaxWalkSAT on the full network** started from the
all-false world (blocks: a random true atom each, as the eager search's
start). Invariant: every atom outside ``A`` is false (atoms of blocks are in
``A`` from the start; an atom is flipped only in a step whose clause has all
its atoms in ``A``). By the claim of ``ground/activation.py``, every clause
not held is satisfied as its sign wants and stays so while only atoms of
``A`` change. Hence, at every step,

1. the bad clauses of the full network are bad clauses held (a held clause
   merges all of the full network's groundings with its literals once its
   atoms are in ``A``; before that it may be bad where the full clause is not,
   but then it has an atom outside ``A``, so a step that draws it stops and
   the activation merges it; a draw that lands on such a clause, which is
   not bad once merged, is drawn again: rejection sampling, which leaves the
   draw uniform over the full network's bad clauses);
2. the drawn clause's atoms are all in ``A``, so the value of flipping each
   (the change of cost over every clause of the full network that contains
   it) is the value over the held clauses: the clauses not held do not
   change when an atom of ``A`` flips;
3. the noise and greedy choices are then the eager kernel's own code.

So each step has the distribution of the eager step from the same world,
and the chain of worlds is the eager chain; only which clauses are in memory
differs. The cost of a world is the cost over the held clauses (the others
cost nothing), so the best state kept per connected component of the held
network is a best state of the full network (components of the held network
are finer than the full network's: the clauses joining them are satisfied
whatever the atoms of ``A`` do).

The polish that ends each eager try (greedy descent over single flips, block
moves and pairs, :meth:`..maxwalksat.Search.descend`) is exact in the same
way: an atom outside ``A`` whose value over the held clauses says "improves"
may be wrong (clauses it would break are not held), so when the descent flips
one, those atoms are activated and the descent starts again from the same
world. It visits atoms in another order than the eager descent (local ids
follow the order of activation), so it may stop at another local optimum.

What differs from the eager :func:`..maxwalksat.maxwalksat`: every try starts
from the all-false world (the eager search starts its tries after the first
from random worlds, which would activate everything); tries and the time
limit are as in the eager search.
"""

from __future__ import annotations

import time

import numpy as np

from ...ground.kernels import components
from ..kernels_state import _csr_gather
from ..maxwalksat import (
    _F_BEST_COST, _I_BEST_HVIOL, _I_NBAD, _I_STOP, Search, _check_options, _comp_costs, start_world,
)
from ..results import MapResult
from .network import start_held
from .options import LazyOptions


class _Lazy:
    """The held network, its search and the activation bookkeeping."""

    def __init__(self, grounder, options: LazyOptions, seed: int) -> None:
        self.g = grounder
        self.opt = options
        self.act, self.net, self.blocks = start_held(grounder)
        self.seed = seed
        self.search: Search | None = None
        self.rebuilds = 0
        self.rebuild_seconds = 0.0

    def build(self, world: np.ndarray | None, best_world: np.ndarray | None, target: float) -> Search:
        """A search over everything held, continuing from ``world`` with the
        best states of ``best_world`` (local ids; new atoms false)."""
        t0 = time.perf_counter()
        net = self.net
        sat = net.sat_arrays(self.blocks)
        old = self.search
        s = Search(sat, self.seed, components(sat.n_atoms, sat.clause_start, sat.lit_atom, sat.block_start,
                                              sat.block_atoms))
        if old is not None:
            s.rs[:] = old.rs
        s.complete = net.complete()
        n = sat.n_atoms
        if world is None:
            world = start_world(sat, s.rng, np.zeros(n, dtype=bool))
        world = _extend(world, n)
        s.reset(world, target)
        if best_world is not None:
            self._carry_best(s, _extend(best_world, n))
        self.search = s
        self.rebuilds += 1
        self.rebuild_seconds += time.perf_counter() - t0
        return s

    @staticmethod
    def _carry_best(s: Search, best: np.ndarray) -> None:
        """Per component, the better of the current state and ``best``."""
        sat = s.sat
        _comp_costs(best, sat.clause_start, sat.lit_atom, sat.lit_positive, sat.weight, sat.is_hard,
                    s.atom_comp, s.comp_bh, s.comp_bc)
        now_better = (s.comp_h < s.comp_bh) | ((s.comp_h == s.comp_bh) & (s.comp_c < s.comp_bc))
        take = now_better[s.atom_comp]
        best = np.where(take, s.world, best)
        s.comp_bh[:] = np.where(now_better, s.comp_h, s.comp_bh)
        s.comp_bc[:] = np.where(now_better, s.comp_c, s.comp_bc)
        differs = np.zeros(len(s.comp_h), dtype=bool)
        if len(best):
            np.logical_or.at(differs, s.atom_comp, best != s.world)
        s.comp_at_best[:] = ~differs
        # a component away from its best differs from it anywhere: its log is
        # "every atom" (the eager search's log, infer/maxwalksat.py _run)
        s.log_full[:] = differs
        s.best_world = best
        s.ist[_I_BEST_HVIOL] = int(s.comp_bh.sum())
        s.fst[_F_BEST_COST] = float(s.comp_bc.sum())

    def registry_literals(self, s: Search, c: int) -> frozenset:
        sat = s.sat
        a, e = sat.clause_start[c], sat.clause_start[c + 1]
        return frozenset(zip(self.net.atoms[sat.lit_atom[a:e]].tolist(), sat.lit_positive[a:e].tolist()))

    def find(self, s: Search, lits: frozenset) -> int:
        """The clause of ``s`` with these (registry atom, sign) literals, or -1
        (among the clauses of one of its atoms, compared as whole arrays)."""
        sat = s.sat
        a0 = self.net.local[next(iter(lits))[0]]
        cands = sat.occ_clause[sat.atom_lit_start[a0]:sat.atom_lit_start[a0 + 1]].astype(np.int64)
        sizes = sat.clause_start[cands + 1] - sat.clause_start[cands]
        cands = cands[sizes == len(lits)]
        if len(cands) == 0:
            return -1
        want = np.sort(np.array([2 * self.net.local[a] + (0 if p else 1) for a, p in lits], dtype=np.int64))
        _, idx = _csr_gather(sat.clause_start, cands)
        codes = (2 * sat.lit_atom[idx].astype(np.int64) + (~sat.lit_positive[idx]).astype(np.int64))
        codes = np.sort(codes.reshape(len(cands), len(lits)), axis=1)
        hit = np.flatnonzero((codes == want).all(axis=1))
        return int(cands[hit[0]]) if len(hit) else -1

    def activate_registry(self, ids: np.ndarray) -> None:
        gc = self.act.activate(ids)
        self.net.add(gc)
        self.net.add_atoms(ids)
        if self.opt.batch == "ahead" and gc.n_clauses:
            # one step ahead: the inactive atoms of the new clauses that a flip of
            # a newly active atom could make false (its negative literals' clauses)
            sizes = np.diff(gc.clause_start)
            owner = np.repeat(np.arange(gc.n_clauses), sizes)
            ids = np.asarray(ids, dtype=np.int64)
            hit = np.zeros(gc.n_clauses, dtype=bool)
            neg = ~gc.lit_positive & np.isin(gc.lit_atom, ids)
            hit[owner[neg]] = True
            atoms = np.unique(gc.lit_atom[hit[owner]])
            self.act._grow()
            atoms = atoms[~self.act.active[atoms]]
            if len(atoms):
                self.net.add(self.act.activate(atoms))
                self.net.add_atoms(atoms)

    def stop_batch(self, s: Search, c: int) -> np.ndarray:
        """Registry ids of the inactive atoms to activate after a stop at clause
        ``c``: those of the bad clauses (or of ``c``), and with ``growth`` more
        from the held clauses, those with the fewest true literals first."""
        sat = s.sat
        clauses = np.array([c]) if self.opt.batch == "clause" else s.bad[: s.ist[_I_NBAD]]
        _, idx = _csr_gather(sat.clause_start, clauses)
        atoms = np.unique(sat.lit_atom[idx])
        atoms = atoms[~s.complete[atoms]]
        want = int(self.opt.growth * int(s.complete.sum())) - len(atoms)
        if want > 0 and sat.n_clauses:
            atoms = np.union1d(atoms, self._frontier(s, want))
        return self.net.atoms[atoms]

    @staticmethod
    def _frontier(s: Search, k: int) -> np.ndarray:
        """Up to ``k`` inactive atoms of held clauses, those of the clauses with
        the fewest true literals (the next to go bad) first."""
        sat = s.sat
        true = s.world[sat.lit_atom] == sat.lit_positive
        count = np.add.reduceat(true.astype(np.int32), sat.clause_start[:-1]) if len(true) else np.zeros(0, np.int32)
        inactive = ~s.complete[sat.lit_atom]
        lit_count = np.repeat(count, np.diff(sat.clause_start))[inactive]
        cand = sat.lit_atom[inactive]
        order = np.argsort(lit_count, kind="stable")
        cand = cand[order]
        _, first = np.unique(cand, return_index=True)
        return cand[np.sort(first)][:k]


def _extend(world: np.ndarray, n: int) -> np.ndarray:
    w = np.zeros(n, dtype=bool)
    w[: len(world)] = world[:n]
    return w


def lazy_maxwalksat(
    grounder,
    *,
    max_flips: int,
    max_tries: int,
    noise: float = 0.5,
    seed: int = 0,
    max_seconds: float | None = None,
    target_cost: float = 0.0,
    options: LazyOptions | None = None,
):
    """Lazy MaxWalkSAT over a :class:`~markovlogic.ground.Grounder` (module
    docstring). Returns ``(MapResult over registry atom ids, held network as
    a GroundNetwork over the registry atoms)``."""
    _check_options(max_flips, max_tries, noise, max_seconds, target_cost)
    opt = (options or LazyOptions()).check()
    start = time.perf_counter()
    deadline = None if max_seconds is None else start + float(max_seconds)
    lz = _Lazy(grounder, opt, int(seed))
    setup = time.perf_counter() - start
    rng = np.random.default_rng(seed)
    best: np.ndarray | None = None
    total_flips = polish = stops = 0
    tries_done = 0
    timed_out = reached = False
    for t in range(max_tries):
        s = lz.build(None, None, target_cost) if t == 0 else None
        if s is None:
            s = lz.search
            n = s.sat.n_atoms
            s.reset(start_world(s.sat, rng, np.zeros(n, dtype=bool)), target_cost)
        remaining = int(max_flips)
        forced = -1
        while remaining > 0:
            chunk = remaining if deadline is None else min(remaining, 20_000)
            s.ist[_I_STOP] = forced + 1
            before = s.flips
            s.steps(chunk, noise)
            done = s.flips - before
            remaining -= done
            total_flips += done
            if s.ist[_I_STOP] > 0:
                stops += 1
                c = int(s.ist[_I_STOP]) - 1
                lits = lz.registry_literals(s, c)
                lz.activate_registry(lz.stop_batch(s, c))
                s = lz.build(s.world, s.best_world, target_cost)
                forced = lz.find(s, lits)
                if forced >= 0 and s.bad_pos[forced] < 0:
                    forced = -1          # not bad once merged: the step draws again
                continue
            forced = -1
            if s.done:
                break
            if deadline is not None and time.perf_counter() >= deadline:
                timed_out = True
                break
            if done == 0 and chunk > 0:
                break
        tries_done += 1
        # polish the try's best world; a descent that moves an inactive atom is
        # redone from the same world once that atom is active
        start_polish = s.best_world.copy()
        s.reset(start_polish, target_cost)
        while True:
            polish_moves = s.descend()
            moved = np.flatnonzero(s.world != start_polish[: len(s.world)] if len(start_polish) == len(s.world)
                                   else s.world != _extend(start_polish, len(s.world)))
            wrong = moved[~s.complete[moved]]
            if len(wrong) == 0:
                polish += polish_moves
                break
            lz.activate_registry(lz.net.atoms[wrong])
            s = lz.build(start_polish, start_polish, target_cost)
        # combine tries per component of the current held network
        best = s.best_world.copy() if best is None else _better(s, _extend(best, s.sat.n_atoms), s.best_world)
        if s.comp_bh.sum() == 0 and s.comp_bc.sum() <= target_cost + 1e-9 * (1.0 + float(np.abs(s.sat.weight).sum())):
            reached = True
            break
        if timed_out or (deadline is not None and time.perf_counter() >= deadline):
            timed_out = True
            break
    seconds = time.perf_counter() - start
    net = lz.net
    n_reg = grounder.registry.n_atoms
    world = np.zeros(n_reg, dtype=bool)
    world[net.atoms] = _extend(best, net.n_atoms)
    held = grounder.assemble(net.clauses())
    stats = {
        "flips": total_flips,
        "flips_per_second": total_flips / seconds if seconds > 0 else 0.0,
        "tries": tries_done,
        "polish_moves": polish,
        "reached_target": reached,
        "timed_out": timed_out,
        "lazy": True,
        "active_atoms": int(lz.act.active.sum()),
        "held_atoms": int(net.n_atoms),
        "active_clauses": int(held.n_clauses),
        "active_rows": int(lz.act.rows),
        "activation_rounds": int(lz.act.rounds),
        "activation_queries": int(lz.act.queries),
        "stops": stops,
        "rebuilds": lz.rebuilds,
        "sql_seconds": round(lz.act.seconds, 4),
        "rebuild_seconds": round(lz.rebuild_seconds, 4),
        "setup_seconds": round(setup, 4),
        "seconds": seconds,
        "remerged": net.remerged,
        "held_bytes": net.nbytes(),
    }
    if opt.count_total:
        total = lz.act.count_total(opt.count_seconds)
        stats["total_rows"] = total
    lz.act.close()
    hv = held.hard_violated(world)
    stats["hard_violated"] = hv
    result = MapResult(world=world, score=held.score(world), cost=held.cost(world), hard_violated=hv,
                       method="maxwalksat", seconds=seconds, optimal=False, stats=stats)
    return result, held


def _better(s: Search, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per component of ``s``'s network, the better of worlds ``a`` and ``b``."""
    sat = s.sat
    k = len(s.comp_h)
    ha, ca = np.zeros(k, np.int64), np.zeros(k)
    hb, cb = np.zeros(k, np.int64), np.zeros(k)
    _comp_costs(a, sat.clause_start, sat.lit_atom, sat.lit_positive, sat.weight, sat.is_hard, s.atom_comp, ha, ca)
    _comp_costs(b, sat.clause_start, sat.lit_atom, sat.lit_positive, sat.weight, sat.is_hard, s.atom_comp, hb, cb)
    b_wins = (hb < ha) | ((hb == ha) & (cb < ca))
    return np.where(b_wins[s.atom_comp], b, a)
