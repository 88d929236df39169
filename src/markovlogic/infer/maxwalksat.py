"""MaxWalkSAT (Kautz, Selman & Jiang), compiled with numba over the clause arrays.

State kept incrementally, so that a flip costs only the clauses of the atom:

- per clause of more than two literals, one packed word: the number of true
  literals and the XOR of their atom ids (when one literal is true, the XOR
  names its atom), inside a 32-byte record that also holds the weight, the
  length, the start of the literals and the clause's place in the bad list
  (:func:`clause_records`): a flip touches one half cache line per clause;
- a clause of one or two literals keeps no count: each occurrence of an atom
  carries the clause's other atom, its sign and the weight
  (:func:`occurrence_info`), and the other literal's truth is read from the
  world (a few KB, always in cache). A flip streams through its atom's
  occurrences and touches a clause record only when the clause enters or
  leaves the bad list; the clause a step picks is read from one packed
  word (:func:`short_clause_keys`). On tuffy/cse (97 % binary clauses) this
  doubled the flips per second over per-clause counts for every clause;
- per atom, the change in soft score and in satisfied hard clauses if it
  alone were flipped (``val``, side by side). They change only when a clause's count
  crosses 0<->1 (every atom of the clause) or 1<->2 (the one critical atom),
  so the greedy step reads them in O(clause length);
- the list of "bad" clauses, those not satisfied as their sign wants: a hard
  or positive clause with no true literal, or a negative clause with at least
  one (Alchemy: a negative clause is fixed by making *all* its literals false,
  so only its true literals are candidates).

A step picks a random bad clause; with probability ``noise`` flips a random
candidate atom of it, otherwise the candidate whose flip gives the best
change, compared lexicographically: satisfied hard clauses first, then soft
score (equivalent to Alchemy's hard weight of "sum of soft weights + 10",
without its rounding). Ties are broken at random.

Exactly-one blocks hold at every step: the start state has one true atom per
block, and "flipping" an atom of a block moves the block's true value (two
atoms change). Flipping the false atom ``a`` makes it true and the block's
current true atom false; flipping the true atom makes another member true
(random in the noise step, the best one in the greedy step). The value of such
a pair move is computed exactly, clauses shared by the two atoms included
(the first atom's clause changes are stamped into a scratch array).

The best state (fewest violated hard clauses, then lowest cost) is kept *per
connected component*: components are independent, so the best world is the
union of each component's best state, which a single global "best" would
miss on networks of many components (tuffy/class: cost 11,393 with a global
best, 599 per component). A component's state is saved only when the search
is about to leave it, not on every improving flip. Each try ends with a
greedy descent from its best world (MaxWalkSAT only looks at atoms of the
clause it picked, so its best state is often not a local optimum): single
flips and block moves, then pairs of atoms that share a clause, until
neither improves (pairs are what the walk misses most: on tuffy/cse they take
a try's best world from about 2,805 to 2,791). Tries are combined per
component too, which is why the default is many short tries. When more
than a tenth of the clauses are long, clauses are reordered by their atoms
for the locality of their records (:func:`.kernels_state.local_clause_order`).
"""

from __future__ import annotations

import math
import time

import numba as nb
import numpy as np

from ..errors import OptionError
from ..ground.network import GroundNetwork
from .kernels_state import SatArrays, _csr_gather, atom_components, local_clause_order, sat_arrays
from .results import MapResult

# Default budget: 20 tries of 50,000 flips (Alchemy: 1 try of 1,000,000). The
# same million flips as short tries, each polished by single and pair descent
# and combined per component, find better worlds: tuffy/class cost 361.56 (the
# optimum) on 10 seeds of 10, against 361.56-366.2 with one long try; tuffy/cse
# 2,790.6-2,791.4 against 2,791.6-2,793.4 (measured 2026-11-22).
DEFAULT_FLIPS = 50_000
DEFAULT_TRIES = 20

# int state slots
_I_FLIPS, _I_HVIOL, _I_BEST_HVIOL, _I_STOP, _I_NBAD, _I_SID, _I_BEST_FLIP, _I_DONE = range(8)
# float state slots
_F_COST, _F_BEST_COST, _F_TARGET = range(3)


# ---------------------------------------------------------------- random numbers (xorshift64*)

@nb.njit(cache=True, inline="always")
def _rand(rs):
    x = rs[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    rs[0] = x
    return x * np.uint64(0x2545F4914F6CDD1D)


@nb.njit(cache=True, inline="always")
def _rand_below(rs, n):
    """Uniform integer in [0, n) for 0 < n < 2**32."""
    return np.int64(((_rand(rs) >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


@nb.njit(cache=True, inline="always")
def _rand_unit(rs):
    return np.float64(_rand(rs) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


# ---------------------------------------------------------------- state

@nb.njit(cache=True, inline="always")
def _bad_add(c, bad, bad_pos, ist):
    n = ist[_I_NBAD]
    bad[n] = c
    bad_pos[c] = n
    ist[_I_NBAD] = n + 1


@nb.njit(cache=True, inline="always")
def _bad_remove(c, bad, bad_pos, ist):
    n = ist[_I_NBAD] - 1
    p = bad_pos[c]
    last = bad[n]
    bad[p] = last
    bad_pos[last] = p
    bad_pos[c] = -1
    ist[_I_NBAD] = n


_ONE = np.int64(1) << np.int64(32)       # one true literal, in the packed clause state
_HARD = np.int64(1) << np.int64(62)      # hard-clause flag bit
_XOR_MASK = np.int64(0xFFFFFFFF)
_COUNT_MASK = np.int64(0x3FFFFFFF)


def clause_records(sat: SatArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The 32-byte clause records the kernel works on, and two views of them.

    Record ``c`` is ``rec[4c:4c+4]`` (int64): the packed state (filled by
    :func:`_init_state`), the weight as float64 (``wv[4c+1]``; 1.0 for a hard
    clause, whose flag lives in the state), then as int32 (``r32[8c+4:8c+8]``)
    the length, the start of its literals in ``lit_atom`` and the clause's
    position in the bad-clause list (slot 7, filled by the search). One
    record is half a cache line: a flip reads and writes only that for each
    of its clauses of more than two literals (shorter ones are read from the
    world, see :func:`occurrence_info`; their record's count is not kept up
    to date, only its hard flag, weight and bad-list slot are used).
    """
    n = sat.n_clauses
    rec = np.zeros(4 * n, dtype=np.int64)
    wv = rec.view(np.float64)
    r32 = rec.view(np.int32)
    # written in place (no clause-sized temporaries)
    wv[1::4] = sat.weight
    np.copyto(wv[1::4], 1.0, where=sat.is_hard)
    np.subtract(sat.clause_start[1:], sat.clause_start[:-1], out=r32[4::8], casting="unsafe")
    r32[5::8] = sat.clause_start[:-1]
    return rec, wv, r32


def occurrence_info(sat: SatArrays) -> tuple[np.ndarray, np.ndarray]:
    """Per occurrence ``k`` of an atom in a clause (the ``occ_*`` order):
    ``info[k]`` and the clause's weight (1.0 for a hard clause) signed by the
    literal's sign (``-w`` for a negative literal: the change a flip making
    the atom true brings, before the clause's other literals are looked at).

    For a clause of one or two literals, ``info = (o + 1) << 2 | hard << 1 |
    sign`` where ``o`` is the clause's other atom (-1 for a unit clause) and
    ``sign`` the sign of its literal; for a longer clause ``info = -1``. The
    state of a short clause is then read from the world, next to the
    occurrence, instead of from its record: on tuffy/cse (97 % binary
    clauses) a flip no longer misses the cache once per clause.
    """
    n = len(sat.occ_clause)
    info = np.empty(n, dtype=np.int32)
    sw = np.empty(n, dtype=np.float64)
    _occurrence_info(sat.clause_start, sat.lit_atom, sat.lit_positive, sat.weight, sat.is_hard,
                     sat.atom_lit, sat.occ_clause, sat.occ_positive, sat.n_atoms < 2**29 - 1, info, sw)
    return info, sw


@nb.njit(cache=True, nogil=True)
def _occurrence_info(clause_start, lit_atom, lit_positive, weight, is_hard,
                     atom_lit, occ_clause, occ_positive, pack, info, sw):
    for k in range(len(occ_clause)):
        c = occ_clause[k]
        h = is_hard[c]
        w = 1.0 if h else weight[c]
        sw[k] = w if occ_positive[k] else -w
        s = clause_start[c]
        size = clause_start[c + 1] - s
        if size > 2 or not pack:
            info[k] = -1
            continue
        o = -1
        sign = 0
        if size == 2:
            j = s + 1 if atom_lit[k] == s else s
            o = lit_atom[j]
            sign = 1 if lit_positive[j] else 0
        info[k] = np.int32(((o + 1) << 2) | (2 if h else 0) | sign)


_ATOM_BITS = np.int64(0x1FFFFFFF)


def short_clause_keys(sat: SatArrays) -> np.ndarray:
    """Per clause, its literals packed in one int64 when it has at most two
    (``-1`` otherwise): ``hard << 61 | negative << 60 | x0 << 31 | s0 << 30 |
    (x1 + 1) << 1 | s1`` (``x1 = -1`` for a unit clause; ``negative``: a soft
    clause of negative weight). A step reads the clause it picked from this
    one word instead of from the record and the literal arrays (three cache
    misses on cse)."""
    key = np.full(sat.n_clauses, -1, dtype=np.int64)
    if sat.n_atoms < 2**29 - 1:
        _short_clause_keys(sat.clause_start, sat.lit_atom, sat.lit_positive, sat.weight, sat.is_hard, key)
    return key


@nb.njit(cache=True, nogil=True)
def _short_clause_keys(clause_start, lit_atom, lit_positive, weight, is_hard, key):
    for c in range(len(clause_start) - 1):
        s = clause_start[c]
        size = clause_start[c + 1] - s
        if size > 2 or size == 0:
            continue
        k = np.int64(0)
        if is_hard[c]:
            k |= np.int64(1) << np.int64(61)
        elif weight[c] < 0:
            k |= np.int64(1) << np.int64(60)
        k |= (np.int64(lit_atom[s]) << np.int64(31)) | (np.int64(lit_positive[s]) << np.int64(30))
        if size == 2:
            k |= ((np.int64(lit_atom[s + 1]) + 1) << np.int64(1)) | np.int64(lit_positive[s + 1])
        key[c] = k


@nb.njit(cache=True, inline="always")
def _lit(key, i, lit_atom, lit_positive):
    """Atom and sign of literal ``i`` of the picked clause: the ``i``-th of its
    packed key (0 or 1) if it has one, else ``lit_atom[i]``."""
    if key >= 0:
        if i == 0:
            return np.int64((key >> np.int64(31)) & _ATOM_BITS), ((key >> np.int64(30)) & 1) == 1
        return np.int64(((key >> np.int64(1)) & _ATOM_BITS) - 1), (key & 1) == 1
    return np.int64(lit_atom[i]), lit_positive[i]


@nb.njit(cache=True, inline="always")
def _count(st):
    return (st >> np.int64(32)) & _COUNT_MASK


@nb.njit(cache=True, nogil=True)
def _init_state(world, clause_start, lit_atom, lit_positive, is_hard, rec, wv,
                val, P, bad, bad_pos, ist, fst):
    """Clause states, flip values, bad-clause list and cost for ``world``.

    The state word of clause ``c`` (``rec[4c]``) packs the hard flag (bit 62),
    the number of true literals (bits 32-61) and the XOR of the true literals'
    atom ids (bits 0-31). ``val[2a]`` is the change in soft score and
    ``val[2a + 1]`` the change in satisfied hard clauses if ``a`` is flipped
    (side by side: a step reads both from one cache line; ``val`` has
    ``2P`` entries, ``P`` a power of two >= n_atoms, so an XOR of atom ids is
    always a valid index: the kernel updates ``val`` without branching on the
    count).
    """
    val[:] = 0.0
    bad_pos[:] = -1
    ist[_I_NBAD] = 0
    hviol = 0
    cost = 0.0
    for c in range(len(clause_start) - 1):
        n = 0
        x = 0
        for i in range(clause_start[c], clause_start[c + 1]):
            if world[lit_atom[i]] == lit_positive[i]:
                n += 1
                x ^= lit_atom[i]
        h = is_hard[c]
        rec[4 * c] = (_HARD if h else np.int64(0)) | (np.int64(n) << np.int64(32)) | np.int64(x)
        w = wv[4 * c + 1]
        row = 1 if h else 0
        if n == 0:
            for i in range(clause_start[c], clause_start[c + 1]):
                val[2 * lit_atom[i] + row] += w
            if h:
                hviol += 1
                _bad_add(c, bad, bad_pos, ist)
            elif w > 0:
                cost += w
                _bad_add(c, bad, bad_pos, ist)
        else:
            if n == 1:
                val[2 * x + row] -= w
            if not h and w < 0:
                cost -= w
                _bad_add(c, bad, bad_pos, ist)
    ist[_I_HVIOL] = hviol
    fst[_F_COST] = cost


@nb.njit(cache=True, inline="always")
def _flip(a, world, lit_atom, atom_lit_start, occ_clause, occ_positive, occ_info, occ_sw,
          rec, wv, r32, val, P, bad, bad_pos, ist, fst):
    """Flip atom ``a`` and update every incremental structure.

    A clause of one or two literals keeps no count: its other literal's truth
    is read from ``world`` (``occ_info``, see :func:`occurrence_info`), so the
    flip streams through the atom's occurrences and touches the clause record
    only to move the clause in or out of the bad list. A longer clause: the
    count/XOR word always; the critical atom's value on a 1<->2 crossing
    (branch-free: multiplied by 0 otherwise); every atom's value, the cost and
    the bad list on a 0<->1 crossing.
    """
    new = not world[a]
    world[a] = new
    hviol = ist[_I_HVIOL]
    cost = fst[_F_COST]
    ia = np.int64(a)
    fs = 1.0 if new else -1.0
    va = np.uint64(2 * a)
    for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
        uk = np.uint64(k)                              # unsigned: no wrap-around code
        info = occ_info[uk]
        if info >= 0:                                  # one or two literals
            dw = fs * occ_sw[uk]                       # +w if the literal becomes true, else -w
            row = (info >> 1) & 1
            o = (info >> 2) - 1
            if o >= 0:
                vo = np.uint64(2 * o + row)
                if world[np.uint64(o)] == ((info & 1) == 1):
                    val[vo] += dw                      # 1 <-> 2: o's break
                    continue
                val[vo] -= dw                          # 0 <-> 1
            val[va + np.uint64(row)] -= 2.0 * dw
            c = np.int64(occ_clause[uk])
            bt = np.int64(occ_positive[uk] == new)     # literal becomes true
            w = dw if bt else -dw
        else:
            bt = np.int64(occ_positive[k] == new)      # literal becomes true
            sg = np.float64(2 * bt - 1)
            c = np.int64(occ_clause[k])
            st = rec[4 * c]
            rec[4 * c] = (st + (2 * bt - 1) * _ONE) ^ ia
            m = _count(st) - 1 + bt                      # the smaller count of before/after
            w = wv[4 * c + 1]
            row = st >> np.int64(62)
            # 1 <-> 2: the atom that is (or becomes) the only true one gains/loses its break
            t = (st ^ (ia * (1 - bt))) & _XOR_MASK
            val[2 * t + row] += np.float64(m == 1) * sg * w
            if m != 0:
                continue
            dw = sg * w                                  # 0 <-> 1
            size = r32[8 * c + 4]
            s = r32[8 * c + 5]
            for j in range(s, s + size):
                val[2 * lit_atom[j] + row] -= dw
            val[2 * a + row] -= dw
        if row != 0:
            hviol -= 2 * bt - 1
            if bt:
                _bad_remove(c, bad, bad_pos, ist)
            else:
                _bad_add(c, bad, bad_pos, ist)
        else:
            cost -= dw
            if w != 0.0:                               # a weight-0 clause is never bad
                if (w > 0) == (bt == 1):
                    _bad_remove(c, bad, bad_pos, ist)
                else:
                    _bad_add(c, bad, bad_pos, ist)
    ist[_I_HVIOL] = hviol
    fst[_F_COST] = cost


@nb.njit(cache=True, inline="always")
def _stamp(a, world, atom_lit_start, occ_clause, occ_positive, stamp, adj, sid):
    """Record in ``adj`` how flipping ``a`` would change each of its clauses' counts."""
    for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
        c = occ_clause[k]
        stamp[c] = sid
        adj[c] = -1 if world[a] == occ_positive[k] else 1


@nb.njit(cache=True, inline="always")
def _second_value(u, world, atom_lit_start, occ_clause, occ_positive, occ_info, occ_sw, rec, wv, stamp, adj, sid):
    """(hard, soft) value of flipping ``u`` after the stamped flip."""
    hv = 0.0
    sv = 0.0
    for k in range(atom_lit_start[u], atom_lit_start[u + 1]):
        c = occ_clause[k]
        info = occ_info[k]
        u_true = world[u] == occ_positive[k]
        if info >= 0:
            o = (info >> 2) - 1
            n = np.int64(u_true)
            if o >= 0 and world[o] == ((info & 1) == 1):
                n += 1
            hard = ((info >> 1) & 1) == 1
            w = occ_sw[k] if occ_positive[k] else -occ_sw[k]
        else:
            st = rec[4 * c]
            n = _count(st)
            hard = st >= _HARD
            w = wv[4 * c + 1]
        if stamp[c] == sid:
            n += adj[c]
        d = 0.0
        if u_true:
            if n == 1:
                d = -1.0
        elif n == 0:
            d = 1.0
        if hard:
            hv += d
        else:
            sv += d * w
    return hv, sv


@nb.njit(cache=True, nogil=True)
def _run(n_steps, noise, rs,
         world, best_world, clause_start, lit_atom, lit_positive,
         atom_lit_start, occ_clause, occ_positive, occ_info, occ_sw, rec, wv, r32, val, P,
         block_start, block_atoms, atom_block, block_true,
         bad, bad_pos, stamp, adj, ist, fst, clause_key,
         atom_comp, comp_start, comp_atoms, comp_h, comp_c, comp_bh, comp_bc, comp_at_best,
         log_next, in_log, log_head, log_count, log_full, complete):
    """Run up to ``n_steps`` steps; stop early when the target is reached.

    The best state is kept per connected component (components are
    independent, so the best world is the union of each one's best state):
    ``comp_h``/``comp_c`` are a component's current violated hard clauses and
    cost, ``comp_bh``/``comp_bc`` its best, ``ist[_I_BEST_HVIOL]`` and
    ``fst[_F_BEST_COST]`` their sums.

    ``best_world`` is kept up to date through a log per component of the
    atoms where it may differ from ``world`` (see :func:`_log_add`): a
    component at its best lags in ``best_world`` by its logged atoms, and one
    that left its best has its best state in ``best_world`` and differs from
    it in ``world`` at its logged atoms. Leaving the best state then costs the
    atoms flipped since the last save, not the size of the component (a
    million-atom component was copied on every other flip of a descent:
    class-like N=100k, 2,000 flips per second). Components of at most
    ``_LOG_MIN_ATOMS`` atoms are copied whole instead (cheaper when small).

    ``complete`` (lazy MaxWalkSAT, :mod:`.lazy.maxwalksat`; empty otherwise):
    per atom, whether every ground clause it can break is among the arrays'.
    A step whose clause has an atom that is not complete stops the run
    before drawing anything else (``ist[_I_STOP]`` = clause + 1), so that
    the caller can fetch that atom's clauses and go on with the same step:
    a run that starts with ``ist[_I_STOP] = c + 1`` takes clause ``c`` (which
    must be bad) for its first step instead of drawing one.
    """
    check = len(complete) > 0
    forced = ist[_I_STOP] - 1
    ist[_I_STOP] = 0
    for _ in range(n_steps):
        nbad = ist[_I_NBAD]
        if nbad == 0 or (ist[_I_BEST_HVIOL] == 0 and fst[_F_BEST_COST] <= fst[_F_TARGET]):
            ist[_I_DONE] = 1
            break
        if forced >= 0:
            c = forced                # the clause a stopped step had drawn (the caller checked it is bad)
            forced = -1
        else:
            c = bad[_rand_below(rs, nbad)]
        if check:
            stop = False
            for i in range(clause_start[c], clause_start[c + 1]):
                if not complete[lit_atom[i]]:
                    stop = True
                    break
            if stop:
                ist[_I_STOP] = c + 1
                break
        ist[_I_FLIPS] += 1
        key = clause_key[c]
        if key >= 0:
            s = 0
            e = 2 if (key & np.int64(0x3FFFFFFE)) != 0 else 1
            only_true = ((key >> np.int64(60)) & 1) == 1
        else:
            s = clause_start[c]
            e = clause_start[c + 1]
            only_true = rec[4 * c] < _HARD and wv[4 * c + 1] < 0
        a = -1
        partner = -1
        if _rand_unit(rs) < noise:
            m = 0
            for i in range(s, e):
                x, xp = _lit(key, i, lit_atom, lit_positive)
                if only_true and world[x] != xp:
                    continue
                b = atom_block[x]
                if b >= 0 and block_start[b + 1] - block_start[b] < 2:
                    continue
                m += 1
                if _rand_below(rs, m) == 0:
                    a = x
            if a < 0:
                continue
            b = atom_block[a]
            if b >= 0:
                if not world[a]:
                    partner = block_true[b]
                else:
                    bs = block_start[b]
                    j = bs + _rand_below(rs, block_start[b + 1] - bs - 1)
                    partner = block_atoms[j]
                    if partner == a:
                        partner = block_atoms[block_start[b + 1] - 1]
        else:
            best_h = 0.0
            best_s = 0.0
            ties = 0
            for i in range(s, e):
                x, xp = _lit(key, i, lit_atom, lit_positive)
                if only_true and world[x] != xp:
                    continue
                b = atom_block[x]
                if b < 0:
                    vh = val[2 * x + 1]
                    vs = val[2 * x]
                    if ties == 0 or vh > best_h or (vh == best_h and vs > best_s):
                        best_h = vh
                        best_s = vs
                        a = x
                        partner = -1
                        ties = 1
                    elif vh == best_h and vs == best_s:
                        ties += 1
                        if _rand_below(rs, ties) == 0:
                            a = x
                            partner = -1
                    continue
                bs = block_start[b]
                be = block_start[b + 1]
                if be - bs < 2:
                    continue
                sid = ist[_I_SID] + 1
                ist[_I_SID] = sid
                _stamp(x, world, atom_lit_start, occ_clause, occ_positive, stamp, adj, sid)
                for jj in range(bs, be):
                    u = block_atoms[jj]
                    if u == x:
                        continue
                    if not world[x] and u != block_true[b]:
                        continue
                    h2, s2 = _second_value(u, world, atom_lit_start, occ_clause, occ_positive, occ_info, occ_sw,
                                           rec, wv, stamp, adj, sid)
                    vh = val[2 * x + 1] + h2
                    vs = val[2 * x] + s2
                    if ties == 0 or vh > best_h or (vh == best_h and vs > best_s):
                        best_h = vh
                        best_s = vs
                        a = x
                        partner = u
                        ties = 1
                    elif vh == best_h and vs == best_s:
                        ties += 1
                        if _rand_below(rs, ties) == 0:
                            a = x
                            partner = u
            if a < 0:
                continue

        old_h = ist[_I_HVIOL]
        old_c = fst[_F_COST]
        _flip(a, world, lit_atom, atom_lit_start, occ_clause, occ_positive, occ_info, occ_sw,
              rec, wv, r32, val, P, bad, bad_pos, ist, fst)
        if partner >= 0:
            _flip(partner, world, lit_atom, atom_lit_start, occ_clause, occ_positive, occ_info, occ_sw,
                  rec, wv, r32, val, P, bad, bad_pos, ist, fst)
            b = atom_block[a]
            block_true[b] = a if world[a] else partner
        k = atom_comp[a]                      # the move stays inside one component
        h = comp_h[k] + ist[_I_HVIOL] - old_h
        cst = comp_c[k] + fst[_F_COST] - old_c
        comp_h[k] = h
        comp_c[k] = cst
        better = h < comp_bh[k] or (h == comp_bh[k] and cst < comp_bc[k])
        logged = comp_start[k + 1] - comp_start[k] > _LOG_MIN_ATOMS
        if comp_at_best[k] and not better:
            # leaving the component's best state: save it (the world minus this move)
            if logged:
                _log_sync(k, world, best_world, comp_start, comp_atoms, log_next, in_log, log_head, log_count,
                          log_full)
            else:
                for j in range(comp_start[k], comp_start[k + 1]):
                    x = comp_atoms[j]
                    best_world[x] = world[x]
            best_world[a] = not world[a]
            if partner >= 0:
                best_world[partner] = not world[partner]
            comp_at_best[k] = False
        elif better:
            comp_at_best[k] = True
        if logged:
            _log_add(a, k, comp_start, log_next, in_log, log_head, log_count, log_full)
            if partner >= 0:
                _log_add(partner, k, comp_start, log_next, in_log, log_head, log_count, log_full)
        if better:
            ist[_I_BEST_HVIOL] += h - comp_bh[k]
            fst[_F_BEST_COST] += cst - comp_bc[k]
            comp_bh[k] = h
            comp_bc[k] = cst
            ist[_I_BEST_FLIP] = ist[_I_FLIPS]
    _save_best(world, best_world, comp_start, comp_atoms, comp_at_best, log_next, in_log, log_head, log_count,
               log_full)


@nb.njit(cache=True, nogil=True)
def _comp_costs(world, clause_start, lit_atom, lit_positive, weight, is_hard, atom_comp, comp_h, comp_c):
    """Violated hard clauses and cost of each component in ``world`` (a
    clause's component is its first atom's: clauses are never empty here)."""
    comp_h[:] = 0
    comp_c[:] = 0.0
    for c in range(len(clause_start) - 1):
        n = 0
        for i in range(clause_start[c], clause_start[c + 1]):
            if world[lit_atom[i]] == lit_positive[i]:
                n += 1
        k = atom_comp[lit_atom[clause_start[c]]]
        w = weight[c]
        if is_hard[c]:
            if n == 0:
                comp_h[k] += 1
        elif w > 0:
            if n == 0:
                comp_c[k] += w
        elif n > 0:
            comp_c[k] -= w


# components up to this many atoms are copied whole when the search leaves
# their best state (cheaper than keeping a log on tuffy/cse and class); larger
# ones keep the log of their flipped atoms
_LOG_MIN_ATOMS = 8192


@nb.njit(cache=True, nogil=True)
def _log_add(x, k, comp_start, log_next, in_log, log_head, log_count, log_full):
    """Log atom ``x`` of component ``k`` (once); past half the component the
    log becomes "every atom" (``log_full``) and its list is dropped."""
    if log_full[k] or in_log[x]:
        return
    in_log[x] = True
    log_next[x] = log_head[k]
    log_head[k] = x
    log_count[k] += 1
    if 2 * log_count[k] > comp_start[k + 1] - comp_start[k] + 32:
        y = log_head[k]
        while y >= 0:
            in_log[y] = False
            y = log_next[y]
        log_head[k] = -1
        log_count[k] = 0
        log_full[k] = True


@nb.njit(cache=True, nogil=True)
def _log_sync(k, world, best_world, comp_start, comp_atoms, log_next, in_log, log_head, log_count, log_full):
    """``best_world`` = ``world`` on component ``k``'s logged atoms; the log is emptied."""
    if log_full[k]:
        for j in range(comp_start[k], comp_start[k + 1]):
            x = comp_atoms[j]
            best_world[x] = world[x]
        log_full[k] = False
        return
    y = log_head[k]
    while y >= 0:
        best_world[y] = world[y]
        in_log[y] = False
        y = log_next[y]
    log_head[k] = -1
    log_count[k] = 0


@nb.njit(cache=True, nogil=True)
def _save_best(world, best_world, comp_start, comp_atoms, comp_at_best, log_next, in_log, log_head, log_count,
               log_full):
    """Bring ``best_world`` up to date on the components at their best state."""
    for k in range(len(comp_start) - 1):
        if not comp_at_best[k]:
            continue
        if comp_start[k + 1] - comp_start[k] > _LOG_MIN_ATOMS:
            _log_sync(k, world, best_world, comp_start, comp_atoms, log_next, in_log, log_head, log_count, log_full)
        else:
            for j in range(comp_start[k], comp_start[k + 1]):
                x = comp_atoms[j]
                best_world[x] = world[x]


@nb.njit(cache=True, nogil=True)
def _descend(world, lit_atom, atom_lit_start, occ_clause, occ_positive, occ_info, occ_sw, rec, wv, r32, val, P,
             block_start, block_atoms, atom_block, block_true, bad, bad_pos, stamp, adj, ist, fst,
             max_sweeps):
    """Greedy descent: sweep the atoms (and blocks) and make every move that
    improves (fewer violated hard clauses, or as many and a lower cost), until
    a sweep finds none. MaxWalkSAT's best state is often not a local optimum
    (it only considers atoms of the clause it picked), so this polishes it.
    Returns the number of moves made."""
    n = len(atom_block)
    moves = 0
    eps = 1e-9
    for _ in range(max_sweeps):
        changed = 0
        for x in range(n):
            if atom_block[x] >= 0:
                continue
            vh = val[2 * x + 1]
            if vh > 0 or (vh == 0 and val[2 * x] > eps):
                _flip(x, world, lit_atom, atom_lit_start, occ_clause, occ_positive, occ_info, occ_sw,
                      rec, wv, r32, val, P, bad, bad_pos, ist, fst)
                changed += 1
        for b in range(len(block_start) - 1):
            bs = block_start[b]
            be = block_start[b + 1]
            if be - bs < 2:
                continue
            t = block_true[b]
            sid = ist[_I_SID] + 1
            ist[_I_SID] = sid
            _stamp(t, world, atom_lit_start, occ_clause, occ_positive, stamp, adj, sid)
            best_u = -1
            best_h = 0.0
            best_s = eps
            for j in range(bs, be):
                u = block_atoms[j]
                if u == t:
                    continue
                h2, s2 = _second_value(u, world, atom_lit_start, occ_clause, occ_positive, occ_info, occ_sw,
                                       rec, wv, stamp, adj, sid)
                vh = val[2 * t + 1] + h2
                vs = val[2 * t] + s2
                if vh > best_h or (vh == best_h and vs > best_s):
                    best_h = vh
                    best_s = vs
                    best_u = u
            if best_u >= 0:
                _flip(t, world, lit_atom, atom_lit_start, occ_clause, occ_positive, occ_info, occ_sw,
                      rec, wv, r32, val, P, bad, bad_pos, ist, fst)
                _flip(best_u, world, lit_atom, atom_lit_start, occ_clause, occ_positive, occ_info, occ_sw,
                      rec, wv, r32, val, P, bad, bad_pos, ist, fst)
                block_true[b] = best_u
                changed += 1
        moves += changed
        if changed == 0:
            break
    return moves


@nb.njit(cache=True, nogil=True)
def _descend_pairs(world, clause_start, lit_atom, lit_positive, weight, is_hard, atom_lit_start, occ_clause,
                   occ_positive, occ_info, occ_sw, rec, wv, r32, val, P, atom_block, bad, bad_pos, ist, fst,
                   dirty, mark, acc_h, acc_s, touched):
    """One sweep of two-atom moves: for each atom x, flip x together with an
    atom y of one of x's clauses when the pair improves (fewer violated hard
    clauses, or as many and a lower cost) although neither flip alone does.

    Single-flip descent stops at such points: on tuffy/class two papers that
    cite each other both belong in a category of weight 0.04, but moving one
    alone breaks the weight-2 citation clause. The value of flipping y after
    x is y's value plus the change x's flip makes to the clauses they share,
    accumulated per y while scanning x's clauses (``mark``/``acc_*`` are
    scratch arrays over atoms), so a sweep costs about the sum over clauses
    of their squared length. Atoms in blocks are left to the block moves of
    :func:`_descend`. Only atoms marked ``dirty`` are examined (an atom's
    pair moves can only have changed if an atom of its clauses flipped since:
    :func:`_mark_neighbours`). Returns the number of pairs flipped."""
    eps = 1e-9
    moves = 0
    for x in range(len(atom_block)):
        if not dirty[x]:
            continue
        dirty[x] = False
        if atom_block[x] >= 0:
            continue
        n_touched = 0
        for k in range(atom_lit_start[x], atom_lit_start[x + 1]):
            c = occ_clause[k]
            cs = clause_start[c]
            ce = clause_start[c + 1]
            n = 0
            for j in range(cs, ce):
                if world[lit_atom[j]] == lit_positive[j]:
                    n += 1
            n_after = n + (-1 if world[x] == occ_positive[k] else 1)
            for j in range(cs, ce):
                y = lit_atom[j]
                if y == x or atom_block[y] >= 0:
                    continue
                y_true = world[y] == lit_positive[j]
                if y_true:
                    d = (-1.0 if n_after == 1 else 0.0) - (-1.0 if n == 1 else 0.0)
                else:
                    d = (1.0 if n_after == 0 else 0.0) - (1.0 if n == 0 else 0.0)
                if mark[y] != x:
                    mark[y] = x
                    acc_h[y] = 0.0
                    acc_s[y] = 0.0
                    touched[n_touched] = y
                    n_touched += 1
                if is_hard[c]:
                    acc_h[y] += d
                else:
                    acc_s[y] += d * weight[c]
        vx_h = val[2 * x + 1]
        vx_s = val[2 * x]
        best_y = -1
        for i in range(n_touched):
            y = touched[i]
            th = vx_h + val[2 * y + 1] + acc_h[y]
            if th > 0 or (th == 0 and vx_s + val[2 * y] + acc_s[y] > eps):
                best_y = y
                break
        if best_y >= 0:
            _flip(x, world, lit_atom, atom_lit_start, occ_clause, occ_positive, occ_info, occ_sw,
                  rec, wv, r32, val, P, bad, bad_pos, ist, fst)
            _flip(best_y, world, lit_atom, atom_lit_start, occ_clause, occ_positive, occ_info, occ_sw,
                  rec, wv, r32, val, P, bad, bad_pos, ist, fst)
            _mark_neighbours(x, clause_start, lit_atom, atom_lit_start, occ_clause, dirty)
            _mark_neighbours(best_y, clause_start, lit_atom, atom_lit_start, occ_clause, dirty)
            moves += 1
    return moves


@nb.njit(cache=True, nogil=True)
def _mark_neighbours(a, clause_start, lit_atom, atom_lit_start, occ_clause, dirty):
    """Mark ``a`` and every atom sharing a clause with it."""
    dirty[a] = True
    for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
        c = occ_clause[k]
        for j in range(clause_start[c], clause_start[c + 1]):
            dirty[lit_atom[j]] = True


@nb.njit(cache=True, nogil=True)
def _mark_changed(before, world, clause_start, lit_atom, atom_lit_start, occ_clause, dirty):
    """Mark the neighbourhoods of the atoms whose value differs from ``before``."""
    for a in range(len(world)):
        if before[a] != world[a]:
            _mark_neighbours(a, clause_start, lit_atom, atom_lit_start, occ_clause, dirty)


# ---------------------------------------------------------------- driver

def _check_options(max_flips, max_tries, noise, max_seconds, target_cost) -> None:
    if not isinstance(max_flips, (int, np.integer)) or isinstance(max_flips, bool) or max_flips < 0:
        raise OptionError(f"max_flips must be a non-negative integer, got {max_flips!r}")
    if not isinstance(max_tries, (int, np.integer)) or isinstance(max_tries, bool) or max_tries < 1:
        raise OptionError(f"max_tries must be an integer >= 1, got {max_tries!r}")
    if not isinstance(noise, (int, float)) or not 0.0 <= float(noise) <= 1.0:
        raise OptionError(f"noise must be a probability in [0, 1], got {noise!r}")
    if max_seconds is not None and (not isinstance(max_seconds, (int, float)) or not max_seconds > 0):
        raise OptionError(f"max_seconds must be positive, got {max_seconds!r}")
    if not isinstance(target_cost, (int, float)) or math.isnan(target_cost):
        raise OptionError(f"target_cost must be a number, got {target_cost!r}")


def start_world(sat: SatArrays, rng: np.random.Generator, init: np.ndarray | None) -> np.ndarray:
    """A start world: ``init`` (random if None) with every exactly-one block
    that has no or several true atoms given one true atom at random."""
    if init is None:
        world = rng.random(sat.n_atoms) < 0.5
    else:
        world = np.array(init, dtype=bool, copy=True)
    if sat.n_blocks:
        sizes = np.diff(sat.block_start)
        true_per_block = np.bincount(np.repeat(np.arange(sat.n_blocks), sizes),
                                     weights=world[sat.block_atoms], minlength=sat.n_blocks)
        fix = np.flatnonzero((true_per_block != 1) & (sizes > 0))
        if len(fix):
            _, members = _csr_gather(sat.block_start, fix)
            world[sat.block_atoms[members]] = False
            pick = sat.block_start[fix] + (rng.random(len(fix)) * sizes[fix]).astype(np.int64)
            world[sat.block_atoms[pick]] = True
    return world


class Search:
    """The arrays of one MaxWalkSAT search over ``sat`` (reused across tries)."""

    def __init__(self, sat: SatArrays, seed: int, components: tuple[np.ndarray, int] | None = None) -> None:
        """``components``: (label per atom, count) when the caller has them
        (lazy MaxWalkSAT computes them with the compiled union-find)."""
        self.sat = sat
        n_clauses = sat.n_clauses
        rng = np.random.default_rng(seed)
        self.rng = rng
        self.rs = np.array([np.uint64(rng.integers(1, 2**63 - 1))], dtype=np.uint64)
        self.rec, self.wv, self.r32 = clause_records(sat)
        self.occ_info, self.occ_sw = occurrence_info(sat)
        self.clause_key = short_clause_keys(sat)
        self.P = 1 << max(0, int(sat.n_atoms - 1).bit_length())
        self.val = np.zeros(2 * self.P, np.float64)
        self.bad = np.zeros(n_clauses, np.int32)
        # position in the bad list: its own int32 array (4 bytes a clause, in
        # L2 on cse), not the 32-byte record that a binary clause never reads
        self.bad_pos = np.full(n_clauses, -1, np.int32)
        # the scratch of block moves (see _stamp): only a network with exactly-one blocks of two atoms or more
        # needs it (9 bytes a clause otherwise spent for nothing)
        n_stamp = n_clauses if sat.n_blocks and int(np.diff(sat.block_start).max()) >= 2 else 0
        self.stamp = np.full(n_stamp, -1, np.int64)
        self.adj = np.zeros(n_stamp, np.int8)
        self.ist = np.zeros(8, np.int64)
        self.fst = np.zeros(3, np.float64)
        self.block_true = np.zeros(sat.n_blocks, np.int32)
        self.world = np.zeros(sat.n_atoms, dtype=bool)
        self.best_world = self.world.copy()
        self.complete = np.zeros(0, dtype=bool)   # lazy MaxWalkSAT: see _run
        self.pair_scratch: tuple | None = None  # scratch arrays of the pair moves, made on first use
        self._abs_weight_sum: float | None = None
        comp, n_comp = atom_components(sat) if components is None else components
        self.atom_comp = comp
        self.comp_atoms = np.argsort(comp, kind="stable").astype(np.int32)
        self.comp_start = np.zeros(n_comp + 1, dtype=np.int64)
        np.cumsum(np.bincount(comp, minlength=n_comp), out=self.comp_start[1:])
        self.comp_h = np.zeros(n_comp, np.int64)
        self.comp_c = np.zeros(n_comp, np.float64)
        self.comp_bh = np.zeros(n_comp, np.int64)
        self.comp_bc = np.zeros(n_comp, np.float64)
        self.comp_at_best = np.ones(n_comp, dtype=bool)
        # the atoms where best_world and world may differ, per component (see _run)
        self.log_next = np.full(sat.n_atoms, -1, np.int32)
        self.in_log = np.zeros(sat.n_atoms, dtype=bool)
        self.log_head = np.full(n_comp, -1, np.int32)
        self.log_count = np.zeros(n_comp, np.int64)
        self.log_full = np.zeros(n_comp, dtype=bool)

    @property
    def abs_weight_sum(self) -> float:
        """The sum of the clauses' absolute weights (the scale of the cost
        tolerances), computed once: a per-try ``np.abs`` took 8 bytes a clause."""
        if self._abs_weight_sum is None:
            self._abs_weight_sum = float(np.abs(self.sat.weight).sum())
        return self._abs_weight_sum

    def set_weights(self, weight: np.ndarray) -> None:
        """New soft-clause weights (``float64[n_clauses]`` over this search's
        clauses; hard clauses keep theirs and ignore the value given): the
        weight-dependent arrays are rewritten, the clause structure is kept.
        Weights may be 0 or change sign. Call :meth:`reset` before the next
        steps (the incremental state depends on the weights). Learning calls
        this once per MAP query instead of building a new search."""
        weight = np.asarray(weight, dtype=np.float64)
        if weight.shape != (self.sat.n_clauses,):
            raise OptionError(f"weights must have shape ({self.sat.n_clauses},), got {weight.shape}")
        sat = self.sat._replace(weight=np.where(self.sat.is_hard, 0.0, weight))
        self.sat = sat
        self._abs_weight_sum = None
        self.rec, self.wv, self.r32 = clause_records(sat)
        self.occ_info, self.occ_sw = occurrence_info(sat)
        self.clause_key = short_clause_keys(sat)

    def reset(self, world: np.ndarray, target_cost: float) -> None:
        """Start a try from ``world`` (one true atom per block)."""
        sat, ist, fst = self.sat, self.ist, self.fst
        self.world = np.array(world, dtype=bool, copy=True)
        if sat.n_blocks:
            true_members = sat.block_atoms[self.world[sat.block_atoms]]
            self.block_true[sat.atom_block[true_members]] = true_members
        _init_state(self.world, sat.clause_start, sat.lit_atom, sat.lit_positive, sat.is_hard,
                    self.rec, self.wv, self.val, self.P, self.bad, self.bad_pos, ist, fst)
        self._component_costs()
        ist[_I_FLIPS] = 0
        ist[_I_BEST_HVIOL] = ist[_I_HVIOL]
        fst[_F_BEST_COST] = fst[_F_COST]
        ist[_I_BEST_FLIP] = 0
        ist[_I_DONE] = 0
        ist[_I_STOP] = 0
        fst[_F_TARGET] = target_cost + 1e-9 * (1.0 + self.abs_weight_sum)
        self.best_world = self.world.copy()

    def _component_costs(self) -> None:
        """Each component's violated hard clauses and cost, from the clause
        states; the current state becomes every component's best."""
        sat = self.sat
        _comp_costs(self.world, sat.clause_start, sat.lit_atom, sat.lit_positive, sat.weight, sat.is_hard,
                    self.atom_comp, self.comp_h, self.comp_c)
        self.comp_bh[:] = self.comp_h
        self.comp_bc[:] = self.comp_c
        self.comp_at_best[:] = True
        self.ist[_I_BEST_HVIOL] = int(self.comp_h.sum())
        self.fst[_F_BEST_COST] = float(self.comp_c.sum())
        self.best_world = self.world.copy()
        self.log_next[:] = -1
        self.in_log[:] = False
        self.log_head[:] = -1
        self.log_count[:] = 0
        self.log_full[:] = False

    def true_counts(self) -> np.ndarray:
        """True literals per clause in the current world (the kernel keeps
        counts only for clauses of more than two literals)."""
        sat = self.sat
        if sat.n_clauses == 0:
            return np.zeros(0, dtype=np.int64)
        holds = self.world[sat.lit_atom] == sat.lit_positive
        return np.add.reduceat(holds.astype(np.int64), sat.clause_start[:-1])

    def descend(self, max_sweeps: int = 100, pairs: bool = True, deadline: float | None = None) -> int:
        """Greedy descent from the current state (see :func:`_descend`), then,
        with ``pairs``, sweeps of two-atom moves (:func:`_descend_pairs`), the
        two alternating until neither improves or, after the first round, the
        ``deadline`` (a ``time.perf_counter()`` value) has passed; the result
        becomes the best state. Returns the number of moves."""
        sat = self.sat
        moves = 0
        if pairs:
            if self.pair_scratch is None:
                n = sat.n_atoms
                self.pair_scratch = (np.zeros(n, dtype=bool), np.full(n, -1, np.int64), np.zeros(n), np.zeros(n),
                                     np.zeros(max(n, 1), np.int32))
            dirty = self.pair_scratch[0]
            dirty[:] = True
        for _ in range(max_sweeps):
            before = self.world.copy() if pairs else self.world
            moves += _descend(self.world, sat.lit_atom, sat.atom_lit_start, sat.occ_clause, sat.occ_positive,
                              self.occ_info, self.occ_sw, self.rec, self.wv, self.r32, self.val, self.P,
                              sat.block_start, sat.block_atoms, sat.atom_block, self.block_true, self.bad,
                              self.bad_pos, self.stamp, self.adj, self.ist, self.fst, int(max_sweeps))
            if not pairs or (deadline is not None and time.perf_counter() >= deadline):
                break
            _mark_changed(before, self.world, sat.clause_start, sat.lit_atom, sat.atom_lit_start, sat.occ_clause,
                          dirty)
            paired = _descend_pairs(self.world, sat.clause_start, sat.lit_atom, sat.lit_positive, sat.weight,
                                    sat.is_hard, sat.atom_lit_start, sat.occ_clause, sat.occ_positive,
                                    self.occ_info, self.occ_sw, self.rec, self.wv, self.r32, self.val, self.P,
                                    sat.atom_block, self.bad, self.bad_pos, self.ist, self.fst,
                                    *self.pair_scratch)
            moves += paired
            if paired == 0 or (deadline is not None and time.perf_counter() >= deadline):
                break
        self._component_costs()
        return int(moves)

    def steps(self, n: int, noise: float) -> None:
        """Run up to ``n`` steps (fewer if the target is reached)."""
        sat = self.sat
        _run(int(n), float(noise), self.rs, self.world, self.best_world, sat.clause_start, sat.lit_atom,
             sat.lit_positive, sat.atom_lit_start, sat.occ_clause, sat.occ_positive, self.occ_info, self.occ_sw,
             self.rec, self.wv, self.r32, self.val, self.P, sat.block_start, sat.block_atoms,
             sat.atom_block, self.block_true, self.bad, self.bad_pos, self.stamp, self.adj,
             self.ist, self.fst, self.clause_key, self.atom_comp, self.comp_start, self.comp_atoms,
             self.comp_h, self.comp_c, self.comp_bh, self.comp_bc, self.comp_at_best,
             self.log_next, self.in_log, self.log_head, self.log_count, self.log_full, self.complete)

    @property
    def flips(self) -> int:
        return int(self.ist[_I_FLIPS])

    @property
    def done(self) -> bool:
        return bool(self.ist[_I_DONE])

    @property
    def hard_violated(self) -> int:
        return int(self.ist[_I_HVIOL])

    @property
    def cost(self) -> float:
        return float(self.fst[_F_COST])

    @property
    def best_key(self) -> tuple[int, float]:
        return int(self.ist[_I_BEST_HVIOL]), float(self.fst[_F_BEST_COST])

    @property
    def best_flip(self) -> int:
        return int(self.ist[_I_BEST_FLIP])

    def bad_clauses(self) -> np.ndarray:
        return np.sort(self.bad[: self.ist[_I_NBAD]])

    def flip_values(self) -> tuple[np.ndarray, np.ndarray]:
        """(hard, soft) value of flipping each atom alone."""
        n = self.sat.n_atoms
        return self.val[1:2 * n:2].copy(), self.val[0:2 * n:2].copy()


def wants_local_order(sat: SatArrays) -> bool:
    """Whether the clauses are worth reordering for locality: records are
    touched per flip only for clauses of more than two literals, and their
    locality pays for the sort when more than a tenth of the clauses are
    long (tuffy/cse, 97 % binary: +1 %, not worth it)."""
    return int(np.count_nonzero(sat.clause_start[1:] - sat.clause_start[:-1] > 2)) > 0.1 * sat.n_clauses


def run_maxwalksat(
    sat: SatArrays,
    *,
    max_flips: int,
    max_tries: int,
    noise: float,
    seed: int,
    deadline: float | None,
    init: np.ndarray | None = None,
    target_cost: float = 0.0,
    local_order: bool = True,
) -> tuple[np.ndarray, dict]:
    """MaxWalkSAT over normalised arrays: the best world over all tries and stats.

    ``target_cost`` is in the units of the arrays' own cost (no constants).
    ``local_order``: reorder the clauses for locality where that pays
    (:func:`wants_local_order`); False when the caller has done it.
    """
    if local_order and wants_local_order(sat):
        sat = local_clause_order(sat)
    search = Search(sat, seed)
    best = None
    polish_moves = 0
    total_flips = 0
    tries_done = 0
    best_try = 0
    best_flip = 0
    reached_target = False
    timed_out = False
    from .. import jit, progress

    compiled = jit.compile_seconds()
    start = time.perf_counter()

    bar = progress.task("MaxWalkSAT tries", total=max_tries)
    # under a deadline, the flips of a try stop early enough for the reset and the greedy polish that end
    # it, as long as the last try's took (on social N=1M: 0.5 s and 4.5 s, which overran the limit)
    reserve = 0.0
    for t in range(max_tries):
        bar.update(completed=t, detail=f"flips {total_flips:,}")
        search.reset(start_world(sat, search.rng, init if t == 0 else None), target_cost)
        flip_deadline = None if deadline is None else deadline - reserve
        remaining = max_flips
        # under a deadline, a first short chunk measures the flip rate (a large
        # network can flip slowly: 20,000 flips took 5 s on class-like N=100k)
        chunk = max_flips if deadline is None else min(max_flips, 1_000)
        while True:
            steps = min(chunk, remaining)
            before = search.flips
            t0 = time.perf_counter()
            search.steps(steps, noise)
            done = search.flips - before
            remaining -= steps
            if search.done or remaining <= 0:
                break
            now = time.perf_counter()
            if flip_deadline is not None:
                if now >= flip_deadline:
                    timed_out = True
                    break
                # aim for about 50 ms per chunk, never past the deadline
                rate = done / max(now - t0, 1e-6)
                chunk = int(max(1_000, min(rate * 0.05, rate * (flip_deadline - now) + 1)))
        tries_done += 1
        total_flips += search.flips
        best_flip_try = search.best_flip
        nothing_bad = search.done and search.ist[_I_NBAD] == 0
        # polish the try's best world by greedy descent (never makes it worse), within the deadline
        t_polish = time.perf_counter()
        search.reset(search.best_world, target_cost)
        polish_moves += search.descend(deadline=deadline)
        reserve = time.perf_counter() - t_polish
        if best is None:
            best = search.best_world.copy()
            best_h, best_c = search.comp_bh.copy(), search.comp_bc.copy()
            best_flip = best_flip_try
        else:
            # components are independent: keep each one's best over the tries
            won = (search.comp_bh < best_h) | ((search.comp_bh == best_h) & (search.comp_bc < best_c))
            if won.any():
                take = won[search.atom_comp]
                best[take] = search.best_world[take]
                best_h[won] = search.comp_bh[won]
                best_c[won] = search.comp_bc[won]
                best_try, best_flip = t, best_flip_try
        tol = 1e-9 * (1.0 + search.abs_weight_sum)
        if nothing_bad or (best_h.sum() == 0 and best_c.sum() <= target_cost + tol):
            reached_target = True
            break
        if timed_out or (deadline is not None and time.perf_counter() >= deadline - reserve):
            timed_out = True        # (another try would end after the deadline)
            break
    bar.close()
    # the kernels' compilation on a first run is not search time
    seconds = max(1e-9, time.perf_counter() - start - (jit.compile_seconds() - compiled))
    stats = {
        "flips": total_flips,
        "flips_per_second": total_flips / seconds if seconds > 0 else 0.0,
        "tries": tries_done,
        "best_try": best_try,
        "best_flip": best_flip,
        "polish_moves": polish_moves,
        "reached_target": reached_target,
        "timed_out": timed_out,
        "search_seconds": seconds,
    }
    return best, stats


def maxwalksat(
    net: GroundNetwork,
    *,
    max_flips: int = DEFAULT_FLIPS,
    max_tries: int = DEFAULT_TRIES,
    noise: float = 0.5,
    seed: int = 0,
    max_seconds: float | None = None,
    init: np.ndarray | None = None,
    target_cost: float = 0.0,
    group_mutex: bool = False,
) -> MapResult:
    """Approximate MAP by MaxWalkSAT (see module docstring).

    Runs ``max_tries`` tries of ``max_flips`` steps each (fewer if
    ``max_seconds`` runs out or a world with no violated hard clause and cost
    <= ``target_cost`` is found) and returns the best world seen. The result's
    ``hard_violated`` says how many hard clauses and blocks that world
    violates; it is never claimed optimal. ``group_mutex``: search the
    equivalent network in which cliques of hard clauses ``!a v !b`` are
    at-most-one blocks (:mod:`.mutex`; a flip then moves the group's true
    atom in one step).
    """
    start = time.perf_counter()
    _check_options(max_flips, max_tries, noise, max_seconds, target_cost)
    if not isinstance(group_mutex, (bool, np.bool_)):
        raise OptionError(f"group_mutex must be True or False, got {group_mutex!r}")
    if init is not None:
        init = np.asarray(init)
        if init.shape != (net.n_atoms,):
            raise OptionError(f"init must be a boolean array of length {net.n_atoms}, got shape {init.shape}")
    if group_mutex:
        from .mutex import group_mutex as grouped_network

        grouped = grouped_network(net)
        if grouped.groups.n_groups:
            inner = maxwalksat(grouped.net, max_flips=max_flips, max_tries=max_tries, noise=noise, seed=seed,
                               max_seconds=None if max_seconds is None else max(1e-3, max_seconds - (time.perf_counter() - start)),
                               init=None if init is None else grouped.lift(init), target_cost=target_cost)
            world = grouped.project(inner.world)
            stats = dict(inner.stats)
            stats.update(grouped.groups.summary())
            hard_violated = net.hard_violated(world)
            stats["hard_violated"] = hard_violated
            return MapResult(world=world, score=net.score(world), cost=net.cost(world), hard_violated=hard_violated,
                             method="maxwalksat", seconds=time.perf_counter() - start, optimal=False, stats=stats)
    deadline = None if max_seconds is None else start + float(max_seconds)
    sat = sat_arrays(net)
    # atoms in no clause and no block do not matter: they are reported false
    free = (np.diff(sat.atom_lit_start) == 0) & (sat.atom_block < 0)
    if wants_local_order(sat):
        sat = local_clause_order(sat)       # here, so that the arrays in the network's order are not kept too
    # the search reads neither the literal -> clause map nor the clause ids (its occurrence lists are the
    # network's reverse index): 11 bytes a clause less while it runs
    sat = sat._replace(lit_clause=np.zeros(0, np.int32), orig_clause=np.zeros(0, np.int64))
    world, stats = run_maxwalksat(
        sat, max_flips=int(max_flips), max_tries=int(max_tries), noise=float(noise), seed=int(seed),
        deadline=deadline, init=init, target_cost=float(target_cost) - sat.const_cost, local_order=False,
    )
    del sat
    world[free] = False
    hard_violated = net.hard_violated(world)
    stats["hard_violated"] = hard_violated
    return MapResult(
        world=world,
        score=net.score(world),
        cost=net.cost(world),
        hard_violated=hard_violated,
        method="maxwalksat",
        seconds=time.perf_counter() - start,
        optimal=False,
        stats=stats,
    )
