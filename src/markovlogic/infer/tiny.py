"""Tiny networks without compiled code: exact MAP and MC-SAT by enumeration.

A process that runs one numba kernel pays about 0.5 s to load numba and its
cached machine code, and one that runs the ILP 0.35 s to import
``scipy.optimize``; the smokers example's whole network is 12 atoms in 6
components. When every connected component is small enough to enumerate
(:func:`fits`), the two default methods run here instead, in numpy:

* MAP (``method="ilp"``): each component's best world by enumeration
  (:func:`.exact.exact_map`), proven optimal like the ILP's (bound = score,
  gap 0); the result says ``solver: enumeration``. An infeasible network goes
  to the ILP, whose error names the conflicting hard clauses.
* MC-SAT (:func:`mcsat_tiny`): MC-SAT as Poon and Domingos define it, with
  the next world drawn *exactly* uniformly from the worlds that satisfy the
  slice (every hard clause, and each soft clause the current world satisfies
  as its sign wants, kept with probability ``1 - exp(-|w|)``), instead of
  approximately by SampleSAT. The worlds of all components are enumerated
  once (a ``rows x clauses`` table); a step is a dozen numpy operations over
  it. Slice sampling leaves the model's distribution invariant, and the
  estimates are Rao-Blackwellised as the compiled sampler's are (each atom's
  conditional probability given the rest of the world, read from the table).
  Each step then makes ``MH_PROPOSALS`` Metropolis-Hastings proposals on
  the model (a uniform feasible world of the component, accepted with
  ``exp(score' - score)``), as the compiled chain's step 3 does: slice
  sampling alone leaves modes that strong clauses pin slowly (off by 0.05
  after 3,000 samples on a network with weights near 3). Results are not the
  compiled chain's bit for bit (another sampler, another
  random stream) but samples of the same distribution; the tests check both
  against exact enumeration.

Exactly-one blocks are constraints on the enumerated worlds (a world with a
block of no or two true atoms is infeasible), and a block atom's
Rao-Blackwellised estimate is its probability given everything outside its
block, as the compiled sampler's.

Both switch on measured sizes (``bench/workloads/firstrun.py``): above them,
or when an option of the compiled chain is set to anything but its default (``init``, ``hard_weight``,
SampleSAT's and Poon's settings: :data:`CHAIN_OPTIONS`), the compiled paths
run as before.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from ..errors import InferenceError, OptionError
from ..ground.network import GroundNetwork
from .results import MapResult, MarginalResult

MAX_COMPONENT_ATOMS = 12     # 4,096 worlds per component
MAX_ROWS = 1 << 14           # worlds of all components together
MAX_CELLS = 1 << 19          # rows x clauses of the table MC-SAT steps over
MAX_CLAUSES = 4_000          # exact_map loops over clauses in Python
# MC-SAT: seconds per step, measured (CPU, this 2-core machine): 24 us on
# the smokers network (32 rows), 37 us on one 12-atom component (74k
# cells), 69 us at 387k cells; the compiled chain costs a process about
# 0.5 s to load numba and its cached kernels. The tiny sampler runs when its
# estimate stays under MAX_TINY_SECONDS.
STEP_SECONDS = 30e-6
CELL_SECONDS = 0.5e-9
MAX_TINY_SECONDS = 0.25
# options of the compiled chain (SampleSAT, its Metropolis steps, Poon's
# extensions): set to anything but their defaults, the compiled chain runs
CHAIN_OPTIONS = ("walksat_prob", "temperature", "max_steps", "metropolis_steps", "guide_weight", "max_path",
                 "hard_weight", "init_method", "init_flips", "group_mutex", "joint_moves", "cluster_moves")
MH_PROPOSALS = 2             # Metropolis-Hastings proposals per MC-SAT step


def _component_sizes(net: GroundNetwork) -> np.ndarray:
    return np.bincount(np.asarray(net.component, dtype=np.int64), minlength=net.n_components)


def fits(net: GroundNetwork) -> bool:
    """Whether ``net`` is small enough to enumerate, component by component."""
    if net.n_atoms == 0 or net.n_clauses > MAX_CLAUSES:
        return False
    lens = np.diff(np.asarray(net.clause_start, dtype=np.int64))
    if (net.is_hard & (lens == 0)).any():
        return False                  # unsatisfiable: the compiled paths say so
    sizes = _component_sizes(net)
    if sizes.max() > MAX_COMPONENT_ATOMS:
        return False
    return int((1 << sizes).sum()) <= MAX_ROWS


# ---------------------------------------------------------------- MAP

def check_common_options(max_seconds, group_atoms) -> None:
    """The exact MAP solvers' common options (:mod:`.ilp`, :mod:`.cpsat`)."""
    if max_seconds is not None and (
        isinstance(max_seconds, bool) or not isinstance(max_seconds, (int, float)) or not max_seconds > 0
    ):
        raise OptionError(f"max_seconds must be positive, got {max_seconds!r}")
    if isinstance(group_atoms, bool) or not isinstance(group_atoms, (int, np.integer)) or group_atoms < 1:
        raise OptionError(f"group_atoms must be a positive integer, got {group_atoms!r}")


def check_ilp_options(*, max_seconds=None, mip_gap=0.0, threads=1, group_atoms=4_000, presolve=True,
                      cliques=True) -> None:
    """:func:`.ilp.ilp_map`'s options, checked before the tiny path may skip it."""
    check_common_options(max_seconds, group_atoms)
    if isinstance(mip_gap, bool) or not isinstance(mip_gap, (int, float)) or not 0.0 <= mip_gap < 1.0 \
            or math.isnan(mip_gap):
        raise OptionError(f"mip_gap must be in [0, 1), got {mip_gap!r}")
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise OptionError(f"threads must be a positive integer, got {threads!r}")


def map_tiny(net: GroundNetwork) -> MapResult | None:
    """The exact MAP world by enumeration, or None (too large, or infeasible:
    the caller's solver then reports it)."""
    if not fits(net):
        return None
    from .exact import exact_map

    try:
        result = exact_map(net, max_atoms=MAX_COMPONENT_ATOMS)
    except InferenceError:
        return None
    result.stats["solver"] = "enumeration"
    return result


# ---------------------------------------------------------------- MC-SAT

class _Table:
    """Every world of every component: row ``off[k] + code`` is world ``code``
    of component ``k`` (bit ``j`` of ``code``: the component's ``j``-th atom)."""

    def __init__(self, net: GroundNetwork) -> None:
        comp = np.asarray(net.component, dtype=np.int64)
        k = net.n_components
        sizes = np.bincount(comp, minlength=k)
        order = np.argsort(comp, kind="stable")
        first = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        local = np.empty(net.n_atoms, dtype=np.int64)
        local[order] = np.arange(net.n_atoms) - first[comp[order]]
        width = np.int64(1) << sizes
        off = np.concatenate([[0], np.cumsum(width)]).astype(np.int64)
        rows = int(off[-1])
        self.off, self.width, self.rows = off, width, rows
        self.atom_off = off[comp]
        self.atom_bit = np.int64(1) << local
        self.atom_comp = comp
        row_comp = np.repeat(np.arange(k), width)
        code = np.arange(rows, dtype=np.int64) - off[row_comp]

        # satisfaction of each clause on the rows of its component
        n_c = net.n_clauses
        lens = np.diff(np.asarray(net.clause_start, dtype=np.int64))
        lit_clause = np.repeat(np.arange(n_c), lens)
        lit_atom = np.asarray(net.lit_atom, dtype=np.int64)
        lit_rows = width[comp[lit_atom]]
        rep = np.repeat(np.arange(len(lit_atom)), lit_rows)
        starts = np.concatenate([[0], np.cumsum(lit_rows)[:-1]])
        r = off[comp[lit_atom]][rep] + (np.arange(len(rep)) - starts[rep])
        bit_true = (code[r] & self.atom_bit[lit_atom][rep]) != 0
        lit_true = bit_true == np.asarray(net.lit_positive, dtype=bool)[rep]
        count = np.zeros(rows * n_c, dtype=np.int32)
        np.add.at(count, r * n_c + lit_clause[rep], lit_true.astype(np.int32))
        inside = np.zeros(rows * n_c, dtype=bool)
        inside[r * n_c + lit_clause[rep]] = True
        sat = (count > 0).reshape(rows, n_c)
        inside = inside.reshape(rows, n_c)

        weight = np.asarray(net.weight, dtype=np.float64)
        hard = np.asarray(net.is_hard, dtype=bool)
        soft = ~hard
        lw = (sat[:, soft] & inside[:, soft]) @ weight[soft] if soft.any() else np.zeros(rows)
        feasible = ~(inside[:, hard] & ~sat[:, hard]).any(axis=1) if hard.any() else np.ones(rows, dtype=bool)
        # exactly-one blocks: a row is feasible only if each block of its component has one true atom
        # (a block's atoms share a component: blocks link them)
        n_b = net.n_blocks
        self.block_atoms = np.asarray(net.block_atoms, dtype=np.int64)
        self.block_first = np.asarray(net.block_start, dtype=np.int64)[:-1]
        if n_b:
            bsizes = np.diff(np.asarray(net.block_start, dtype=np.int64))
            of_block = np.repeat(np.arange(n_b), bsizes)
            mask = np.zeros(n_b, dtype=np.int64)
            np.bitwise_or.at(mask, of_block, self.atom_bit[self.block_atoms])
            bcomp = np.full(n_b, -1, dtype=np.int64)
            bcomp[of_block] = comp[self.block_atoms]
            live = bsizes > 0
            b_rows = np.where(live, width[np.maximum(bcomp, 0)], 0)
            rep = np.repeat(np.arange(n_b), b_rows)
            starts = np.concatenate([[0], np.cumsum(b_rows)[:-1]])
            r = off[bcomp[rep]] + (np.arange(len(rep)) - starts[rep])
            x = code[r] & mask[rep]
            one = (x != 0) & ((x & (x - 1)) == 0)
            feasible = feasible.copy()
            feasible[r[~one]] = False
            # for the block conditionals: each block atom's bit, and its block's mask
            self.block_mask = mask[of_block]
        self.lw = np.where(feasible, lw, -np.inf)
        self.feasible = feasible
        # a soft clause satisfied "as its sign wants" (negative weights: all literals false)
        want = np.where(weight[None, :] < 0, ~sat, sat) | ~inside
        self.unwanted = (~want[:, soft]).astype(np.float32)          # rows x soft clauses
        self.soft_weight = np.abs(weight[soft])
        self.keep = -np.expm1(-self.soft_weight)                      # 1 - exp(-|w|)
        self.soft_comp = np.full(int(soft.sum()), 0, dtype=np.int64)
        soft_ids = np.flatnonzero(soft)
        nonempty = lens[soft_ids] > 0
        self.soft_comp[nonempty] = comp[lit_atom[np.asarray(net.clause_start, dtype=np.int64)[soft_ids[nonempty]]]]
        self.soft_empty = ~nonempty
        self.want_soft = want[:, soft]

    def counts(self, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(cumulative count of allowed rows, allowed rows per component, allowed rows before each)."""
        cum = np.cumsum(allowed)
        last = cum[self.off[1:] - 1]
        per = last - np.concatenate([[0], cum[self.off[1:-1] - 1]])
        if (per == 0).any():
            raise InferenceError("the hard clauses cannot all be satisfied")
        return cum, per, last - per

    @staticmethod
    def draw(cum, per, before, rng: np.random.Generator) -> np.ndarray:
        """One row per component, uniformly among the allowed rows that ``counts`` counted."""
        target = before + np.floor(rng.random(len(per)) * per).astype(np.int64) + 1
        return np.searchsorted(cum, target)

    def pick(self, allowed: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One row per component, uniformly among its ``allowed`` rows."""
        return self.draw(*self.counts(allowed), rng)


def mcsat_tiny_fits(net: GroundNetwork, opt) -> bool:
    """Whether :func:`mcsat_tiny` runs for these options (see the module docstring)."""
    if opt.init is not None:
        return False
    default = type(opt)()
    if any(getattr(opt, name) != getattr(default, name) for name in CHAIN_OPTIONS):
        return False                  # the compiled chain's own settings: it runs them
    if not fits(net):
        return False
    rows = int((1 << _component_sizes(net)).sum())
    steps = opt.samples + opt.burn_in
    return steps * (STEP_SECONDS + rows * net.n_clauses * CELL_SECONDS) <= MAX_TINY_SECONDS \
        and rows * net.n_clauses <= MAX_CELLS


def mcsat_tiny(net: GroundNetwork, opt, progress: Callable[[int], None] | None = None) -> MarginalResult:
    """Marginals by MC-SAT with exact slice sampling (see the module docstring);
    ``opt`` is a checked :class:`.mcsat.MCSATOptions`."""
    start = time.perf_counter()
    deadline = None if opt.max_seconds is None else start + float(opt.max_seconds)
    rng = np.random.default_rng(opt.seed)
    t = _Table(net)
    cur = t.pick(t.feasible, rng)
    setup = time.perf_counter() - start
    keep, unwanted = t.keep, t.unwanted
    soft_comp, feasible = t.soft_comp, t.feasible
    want_soft = t.want_soft
    atom_comp, atom_off, atom_bit = t.atom_comp, t.atom_off, t.atom_bit
    lw = t.lw
    n_soft = len(keep)
    n_blocks = len(t.block_atoms) > 0
    if n_blocks:
        b_atoms, b_mask = t.block_atoms, t.block_mask
        b_sizes = np.diff(np.asarray(net.block_start, dtype=np.int64))
        b_first = t.block_first[b_sizes > 0]
        b_sizes = b_sizes[b_sizes > 0]

    off_lo, off_hi = t.off[:-1], t.off[1:]
    f_cum, f_per, f_before = t.counts(feasible)
    soft_ids = np.arange(n_soft)
    n_comp = len(t.width)
    cbuf = np.zeros(t.rows + 1, dtype=np.int64)       # cbuf[r + 1]: allowed rows up to r
    cview = cbuf[1:]
    chunk = 256
    pending: list = []

    def randomness() -> None:
        # the random numbers of ``chunk`` steps at once (numpy calls cost more than their work here)
        u_sel = rng.random((chunk, n_soft)) < keep if n_soft else None
        u_pick = rng.random((chunk, n_comp))
        props = np.searchsorted(f_cum, f_before + np.floor(rng.random((chunk, MH_PROPOSALS, n_comp)) * f_per)
                                .astype(np.int64) + 1)
        log_u = np.log(rng.random((chunk, MH_PROPOSALS, n_comp)))
        pending.extend(zip(u_sel if u_sel is not None else [None] * chunk, u_pick, props, lw[props], log_u))

    def step() -> None:
        nonlocal cur
        if not pending:
            randomness()
            pending.reverse()
        u_sel, u_pick, props, lw_props, log_u = pending.pop()
        # the slice, and a uniform world in it
        if n_soft:
            sel = want_soft[cur[soft_comp], soft_ids] & u_sel
            allowed = feasible & (unwanted @ sel.astype(np.float32) == 0) if sel.any() else feasible
        else:
            allowed = feasible
        np.cumsum(allowed, out=cview)
        before = cbuf[off_lo]
        per = cbuf[off_hi] - before
        cur = np.searchsorted(cview, before + (u_pick * per).astype(np.int64) + 1)
        # Metropolis-Hastings on the model, a uniform feasible world of the
        # component proposed (as the compiled chain's step 3, for mixing
        # across modes that strong clauses hold in place)
        for m in range(MH_PROPOSALS):
            cur = np.where(log_u[m] < lw_props[m] - lw[cur], props[m], cur)

    burned = 0
    while burned < opt.burn_in:
        step()
        burned += 1
        if deadline is not None and burned % 64 == 0 and time.perf_counter() > deadline:
            break
    t_sample = time.perf_counter()
    tally = np.zeros(net.n_atoms, dtype=np.float64)
    drawn = 0
    stopped = False
    while drawn < opt.samples:
        step()
        row = cur[atom_comp]
        code = row - atom_off
        if opt.rao_blackwell:
            on = atom_off + (code | atom_bit)
            off = atom_off + (code & ~atom_bit)
            with np.errstate(over="ignore", invalid="ignore"):
                p = 1.0 / (1.0 + np.exp(lw[off] - lw[on]))
            if n_blocks:
                # a block atom: its probability given everything outside its block (the block's
                # conditional distribution, as the compiled sampler's Rao-Blackwell estimate)
                bc = code[b_atoms]
                lb = lw[atom_off[b_atoms] + ((bc & ~b_mask) | atom_bit[b_atoms])]
                top = np.maximum.reduceat(lb, b_first)
                e = np.exp(lb - np.repeat(top, b_sizes))
                p[b_atoms] = e / np.repeat(np.add.reduceat(e, b_first), b_sizes)
            tally += p
        else:
            tally += (code & atom_bit) != 0
        drawn += 1
        if drawn % 256 == 0:
            if progress is not None:
                progress(drawn)
            if deadline is not None and time.perf_counter() > deadline:
                stopped = drawn < opt.samples
                break
    if progress is not None:
        progress(drawn)
    sample_seconds = time.perf_counter() - t_sample
    seconds = time.perf_counter() - start
    stats = {
        "samples": drawn,
        "burn_in": burned,
        "seconds": seconds,
        "setup_seconds": setup,
        "sampling_seconds": sample_seconds,
        "samples_per_second": drawn / sample_seconds if sample_seconds > 0 else math.inf,
        "stopped_early": stopped,
        "variables": net.n_atoms,
        "rao_blackwell": opt.rao_blackwell,
        "hard_weight": None,
        "slice_sampler": "enumeration",
        "enumerated_worlds": t.rows,
    }
    return MarginalResult(probabilities=tally / drawn, method="mcsat", samples=drawn, seconds=seconds, stats=stats)
