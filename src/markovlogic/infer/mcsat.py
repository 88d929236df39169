"""MC-SAT (Poon and Domingos 2006; Algorithm 1 of Poon's thesis), compiled,
with Metropolis-Hastings steps and Rao-Blackwellised estimates.

Start from a world satisfying the hard clauses and the exactly-one blocks
(WalkSAT on the hard clauses, :func:`.samplesat.feasible_state`). Each step:

1. the slice: every hard clause, plus each soft clause that the current world
   satisfies *as its sign wants*, with probability ``1 - exp(-|w|)``: a
   positive-weight clause that is satisfied must stay satisfied; a
   negative-weight clause whose literals are all false must keep them all
   false (Alchemy's unit clauses of the negated literals);
2. the next world: SampleSAT from the current one over the worlds that meet
   every selected constraint (:func:`.samplesat.samplesat`: WalkSAT and
   simulated-annealing moves inside a Metropolis-Hastings correction, exact
   for the uniform distribution on the slice);
3. Metropolis-Hastings steps on the model itself (``metropolis_steps``
   proposals; 0 for plain MC-SAT), accepted with ``exp(score(y) - score(x))``
   times the proposal ratio: SampleSAT walks that repair the hard clauses
   (:func:`.samplesat.samplesat` with ``use_score``) and, when the network
   has strong soft clauses of two or more literals (``|w| >= guide_weight``),
   pair moves: flip two atoms of a random strong clause together (up to half
   of the proposals, at most four per strong clause).

Why step 3: MC-SAT alone mixes slowly when strong soft clauses hold a mode in
place. To leave it, every clause that pins it must be left out of the slice
in the same step (probability ``exp(-sum of their weights)``), while a direct
move to the other mode may be likely. On small random networks plain MC-SAT
was off by up to 0.14 after 5000 samples; with step 3 every atom was within
0.03. On tuffy/cse, pairs of atoms tied by a clause of weight 48
(``advisedBy(x,y) v advisedBy(y,x)``) stayed in whichever mode they started
in: one flip alone costs e^-48, in the slice and in the walks alike; the pair
move swaps them in one step. Each of the three steps leaves the distribution
invariant, so their composition does.

Estimates (``rao_blackwell=True``): an atom's marginal is the average over
the post-burn-in samples of its conditional probability given the rest of
the sampled world (:func:`.gibbs.rao_blackwell_tally`), which has the same
expectation as the fraction of samples in which it is true (Alchemy's
estimate, ``rao_blackwell=False``) and a smaller variance (the error halved
on small networks). The chain is one for the whole network: independent
components are sampled as separate chains would sample them (see
:mod:`.marginals`).

Poon's extensions (Poon and Domingos, *Joint inference in information
extraction*, AAAI 2007, used for the citation models; Poon's thesis,
sections 2.4 and 3.4), each an option of :class:`MCSATOptions`:

- ``init_method="maxwalksat"``: the first world is MaxWalkSAT's (on the
  whole network, hard clauses first) instead of WalkSAT's first solution of
  the hard clauses: the chain starts near a mode and burn-in is spent there;
- ``init_method="two-pass"``: MaxWalkSAT twice, first over the soft clauses
  only (the blocks kept), then over all clauses from the first pass's world;
- ``init_method="best"`` (not Poon's): MaxWalkSAT from a random world and
  from the all-false world, the cheaper world (on implication cascades one
  try from a random world often stops in the costly "everybody smokes"
  local optimum; the default start of pooled chains, see
  :mod:`markovlogic.parallel.marginals`);
- moves that flip several atoms while keeping the ``!`` constraints: every
  SampleSAT move on a block already changes two atoms (the true one off,
  another on, :mod:`.samplesat`); ``joint_moves=True`` extends the pair moves
  of step 3 to atoms in blocks (the two atoms of a strong clause each change
  their block's value, up to four atoms flip; the proposal ratio corrects
  for the choice of the new true atom);
- ``group_mutex=True``: hard pair clauses ``!a v !b`` that form cliques are
  one factor each, an at-most-one block with a "none" state (exactly-one
  when a hard clause says "at least one"), found at network level by
  :mod:`.mutex`; SampleSAT and the Metropolis steps then move a token of
  the citation models from one field to another in one step instead of
  crossing the pair clauses one flip at a time. The chain runs on the
  equivalent grouped network; worlds, weights and marginals are mapped back.

Not Poon's, added because the four above leave the main error of the
citation models in place: ``cluster_moves=True`` flips, after each slice,
whole sets of free atoms that the selected clauses tie by equivalences
(both ``!a v b`` and ``a v !b`` in the slice), in the manner of Swendsen
and Wang (:func:`_cluster_moves`; exact for the uniform distribution on the
slice). A chain of positions tied by strong two-way rules (a citation's
field, or the positions past its end) then changes its label in one move
instead of by a walk that has to cross the whole chain. The same moves
swap a block's true atom for another together with everything the
slice's equivalences tie to the two (every block touched must then hold
exactly those two atoms of the move, so each keeps one true atom): the
worlds of ``M(t, n!)`` with ``M(x,j) <=> M(y,j).`` differ in two atoms of
each block, and without the swap MC-SAT answered .45 / .30 / .25 where
each is 1/3. Besides the bonds of a slice, a move takes together the atoms
that hard two-literal clauses make equivalent through cycles of
implications (:func:`hard_ties`, 2-SAT's strongly connected components;
``M(x,j) => N(x,j).`` with ``N(x,j) => M(y,j).`` has no clause with a
partner, and MC-SAT was .2 off there).

Defaults, as measured (``bench/workloads/mcsat_ext.py``, errors against the
exact marginals of the citation models and long runs on tuffy/cse and
tuffy/class): cluster moves and joint moves on; WalkSAT's start (a
MaxWalkSAT start cuts the citation models' error on real tokens by three
but left one tuffy/class atom off by 0.29: it starts every bistable
component in its best mode); no mutex groups (no gain for MC-SAT there;
an option for models where they help).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numba as nb
import numpy as np

from ..errors import InferenceError, OptionError
from ..ground.network import GroundNetwork
from .gibbs import rao_blackwell_tally
from .sampling import ChunkRunner, check_int, check_real, check_sampling
from .results import MarginalResult
from .samplesat import (
    KERNEL, N_STATS, SEL_FALSE, SEL_NONE, SEL_SAT, ST_CAPPED, ST_EXC_ACCEPTED, ST_EXCURSIONS,
    ST_MH_ACCEPTED, ST_MH_PROPOSALS, ST_MOVES, ST_ONE_STEP, ST_PROPOSALS, _apply, _other_in_block, _undo,
    feasible_state, fill_inactive, flip, prepare, rand_below, rand_unit, random_inactive, samplesat,
    satisfied_weight,
)

from .mcsat_options import (  # noqa: F401  (re-exported)
    DEFAULT_GUIDE_WEIGHT, DEFAULT_MAX_PATH, INIT_METHODS, OPTION_NAMES, MCSATOptions, make_options,
)
# extra statistics slots of this module
ST_PAIR_PROPOSALS, ST_PAIR_ACCEPTED, ST_CLUSTER_PROPOSALS, ST_CLUSTER_ACCEPTED, ST_CLUSTER_ATOMS = range(N_STATS, N_STATS + 5)
DEFAULT_MAX_CLUSTER = 10_000
HARD_TIE_BYTES = 120          # hard_ties' transient peak per hard two-literal clause (measured: 107)


def default_steps(n_vars: int) -> int:
    """SampleSAT proposals per MC-SAT sample when ``max_steps`` is not given."""
    return max(50, n_vars // 2)


def default_init_flips(n_vars: int) -> int:
    """MaxWalkSAT flips per pass of the start search when ``init_flips`` is not given."""
    return max(10_000, 20 * n_vars)


@nb.njit(**KERNEL)
def _select(soft, weight, thresh, count, sel, rs):
    """Step 1 of MC-SAT for the soft clauses (hard clauses stay selected)."""
    for k in range(len(soft)):
        c = soft[k]
        if weight[c] > 0.0:
            if count[c] > 0 and rand_unit(rs) < thresh[c]:
                sel[c] = SEL_SAT
            else:
                sel[c] = SEL_NONE
        else:
            if count[c] == 0 and rand_unit(rs) < thresh[c]:
                sel[c] = SEL_FALSE
            else:
                sel[c] = SEL_NONE


@nb.njit(**KERNEL)
def _pair_half(rs, a, ba, world, block_start, block_atoms, block_true):
    """One atom's part of a pair move: the ``(x1, x2)`` that ``_apply``
    changes (``x2`` = -1: flip ``a`` alone) and its log proposal ratio (see
    :func:`_pair_moves`)."""
    if ba < 0:
        return a, -1, 0.0
    size = block_start[ba + 1] - block_start[ba]
    if world[a]:
        return a, _other_in_block(rs, ba, a, block_start, block_atoms), np.log(size - 1.0)
    return block_true[ba], a, -np.log(size - 1.0)


@nb.njit(**KERNEL)
def _pair_moves(n_moves, joint, strong, g, s, stats):
    """Metropolis-Hastings pair moves: pick a random strong clause and two of
    its atoms at random, change both; keep the change with probability
    ``min(1, exp(score change) * proposal ratio)`` if no hard clause breaks
    (``sel`` must select exactly the hard clauses). The choice of the clause
    and the two atoms does not depend on the world.

    A free atom is flipped. An atom in a block (only with ``joint``; else
    the pick is dropped) changes its block's value: if false it becomes the
    block's true atom, if true the block's value moves to another random
    member; the reverse move of the former picks the old true atom with
    probability ``1 / (size - 1)``, hence the ratio. Two atoms of one block
    are dropped."""
    clause_start, lit_atom, atom_lit_start, occ_clause, occ_positive = g[0], g[1], g[3], g[4], g[5]
    weight, block_start, block_atoms, atom_block = g[6], g[7], g[8], g[9]
    world, count, sel, vlist, vpos, ist, fst, block_true, rs = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]
    for _ in range(n_moves):
        c = strong[rand_below(rs, len(strong))]
        st = clause_start[c]
        m = clause_start[c + 1] - st
        if m < 2:
            continue
        i = rand_below(rs, m)
        j = rand_below(rs, m - 1)
        if j >= i:
            j += 1
        a = lit_atom[st + i]
        b = lit_atom[st + j]
        ba = atom_block[a]
        bb = atom_block[b]
        if ba >= 0 or bb >= 0:
            if not joint or ba == bb:
                continue
            if ba >= 0 and block_start[ba + 1] - block_start[ba] < 2:
                continue
            if bb >= 0 and block_start[bb + 1] - block_start[bb] < 2:
                continue
        a1, a2, qa = _pair_half(rs, a, ba, world, block_start, block_atoms, block_true)
        b1, b2, qb = _pair_half(rs, b, bb, world, block_start, block_atoms, block_true)
        log_q = qa + qb
        stats[ST_PAIR_PROPOSALS] += 1
        score0 = fst[0]
        _apply(a1, a2, world, count, sel, vlist, vpos, ist, fst, block_true, atom_block,
               atom_lit_start, occ_clause, occ_positive, weight)
        _apply(b1, b2, world, count, sel, vlist, vpos, ist, fst, block_true, atom_block,
               atom_lit_start, occ_clause, occ_positive, weight)
        d = fst[0] - score0 + log_q
        if ist[0] == 0 and (d >= 0.0 or rand_unit(rs) < np.exp(d)):
            stats[ST_PAIR_ACCEPTED] += 1
        else:
            _undo(b1, b2, world, count, sel, vlist, vpos, ist, fst, block_true, atom_block,
                  atom_lit_start, occ_clause, occ_positive, weight)
            _undo(a1, a2, world, count, sel, vlist, vpos, ist, fst, block_true, atom_block,
                  atom_lit_start, occ_clause, occ_positive, weight)


@nb.njit(**KERNEL)
def _enqueue(b, st, swap, max_size, mark, queue, qn, atom_block):
    """Add atom ``b`` to the set of a cluster move (``qn`` atoms so far);
    returns the new size (``qn`` if ``b`` is in already), or -1 when the
    move must be dropped: ``b`` is in a block and the move is no swap, or
    the set would exceed ``max_size``."""
    if mark[b] == st:
        return qn
    if (atom_block[b] >= 0 and not swap) or qn >= max_size:
        return -1
    mark[b] = st
    queue[qn] = b
    return qn + 1


@nb.njit(**KERNEL)
def _cluster_moves(n_moves, max_size, partner, g, s, mark, queue, stamp, bscratch, bonded, ties, stats):
    """Cluster flips on the slice (in the manner of Swendsen and Wang; the
    target is the uniform distribution on the slice). Two atoms are bonded
    when the slice selected both clauses of an equivalence between them
    (``!a v b`` and ``a v !b``, or ``a v b`` and ``!a v !b``: ``partner[c]``
    is the other clause of ``c``'s pair, -1 if none). Bonds depend on the
    selection only, not on the world, and flipping both atoms of a bond
    keeps both clauses true. A move picks a random variable.

    A free atom: the move takes its connected component over bonds (free
    atoms only: reaching an atom of a block, or more than ``max_size``
    atoms, drops the move), flips every atom of it and keeps the result iff
    no selected constraint is violated. The component is the same from any
    of its atoms and in the new world, so the proposal is symmetric.

    A block (``bscratch``: two int64 per block, scratch; ``bonded``: whether
    an atom of the block is in an equivalence pair at all, else the move is
    skipped before it draws anything): the move takes the
    block's true atom ``t``, another atom ``o`` of it at random, and the
    component of both over bonds, block atoms included; it is a swap if
    every block it touches has exactly two atoms in it, its true one and
    another (each block then keeps one true atom), and is dropped otherwise.
    Flipping the component is kept iff no selected constraint is violated.
    Found on ``M(t, n!)`` with ``M(x,j) <=> M(y,j).``: the worlds (every
    ``x`` on the same ``j``) differ in six atoms of three blocks, and no
    single or block move of SampleSAT crosses between them. Symmetric: the
    same set of blocks generates the move back (their true and chosen atoms
    exchanged), each with the same probability ``1 / (size - 1)``.

    ``ties`` (``atom_tie``, ``tie_start``, ``tie_atoms``, ``tie_mark``:
    :func:`hard_ties`): atoms that the hard two-literal clauses make
    equivalent through a cycle of implications (one strongly connected
    component), which every slice holds; a move takes all of them
    together, as it takes the two atoms of a bond. Found on ``M(x,j) =>
    N(x,j).`` with ``N(x,j) => M(y,j).``, where no clause has a partner."""
    atom_tie, tie_start, tie_atoms, tie_mark = ties
    clause_start, lit_atom, atom_lit_start, occ_clause = g[0], g[1], g[3], g[4]
    occ_positive, weight, block_start, block_atoms, atom_block, var = g[5], g[6], g[7], g[8], g[9], g[10]
    world, count, sel, vlist, vpos, ist, fst, block_true, rs = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]
    n_vars = len(var)
    if n_vars == 0:
        return
    for _ in range(n_moves):
        v = var[rand_below(rs, n_vars)]
        stamp[0] += 1
        st = stamp[0]
        swap = v < 0
        if swap:
            b0 = -v - 1
            if len(bscratch) == 0 or not bonded[b0]:
                continue
            t = block_true[b0]
            if t < 0:
                continue
            o = _other_in_block(rs, b0, t, block_start, block_atoms)
            mark[t] = st
            mark[o] = st
            queue[0] = t
            queue[1] = o
            qn = 2
        else:
            mark[v] = st
            queue[0] = v
            qn = 1
        qi = 0
        ok = True
        while qi < qn and ok:
            a = queue[qi]
            qi += 1
            ta = atom_tie[a] if len(atom_tie) else -1
            if ta >= 0 and tie_mark[ta] != st:
                tie_mark[ta] = st
                for k in range(tie_start[ta], tie_start[ta + 1]):
                    qn = _enqueue(tie_atoms[k], st, swap, max_size, mark, queue, qn, atom_block)
                    if qn < 0:
                        break
                if qn < 0:
                    ok = False
                    break
            for k in range(atom_lit_start[a], atom_lit_start[a + 1]):
                c = occ_clause[k]
                pc = partner[c]
                if pc < 0 or sel[c] != SEL_SAT or sel[pc] != SEL_SAT:
                    continue
                cs = clause_start[c]
                b = lit_atom[cs]
                if b == a:
                    b = lit_atom[cs + 1]
                qn = _enqueue(b, st, swap, max_size, mark, queue, qn, atom_block)
                if qn < 0:
                    ok = False
                    break
        if swap and ok:
            # bonds reached no other atom: a block move, SampleSAT's own
            if qn == 2:
                continue
            for i in range(qn):
                bx = atom_block[queue[i]]
                if bx < 0:
                    continue
                if bscratch[2 * bx] != st:
                    bscratch[2 * bx] = st
                    bscratch[2 * bx + 1] = 0
                bscratch[2 * bx + 1] += 1
            for i in range(qn):
                bx = atom_block[queue[i]]
                if bx >= 0 and (bscratch[2 * bx + 1] != 2 or mark[block_true[bx]] != st):
                    ok = False
                    break
        if not ok or qn < 2:
            continue      # too big, a block, or a single atom (SampleSAT's own moves)
        stats[ST_CLUSTER_PROPOSALS] += 1
        for i in range(qn):
            flip(queue[i], world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive, weight)
        if ist[0] == 0:
            stats[ST_CLUSTER_ACCEPTED] += 1
            stats[ST_CLUSTER_ATOMS] += qn
            if swap:
                for i in range(qn):
                    a = queue[i]
                    if atom_block[a] >= 0 and world[a]:
                        block_true[atom_block[a]] = a
        else:
            for i in range(qn - 1, -1, -1):
                flip(queue[i], world, count, sel, vlist, vpos, ist, fst, atom_lit_start, occ_clause, occ_positive,
                     weight)


def _bonded_blocks(sat, partner: np.ndarray, atom_tie: np.ndarray) -> np.ndarray:
    """Per block, whether one of its atoms is in a clause with an
    equivalence partner or tied by hard clauses (bool[n_blocks])."""
    bonded = np.zeros(sat.n_blocks, dtype=np.bool_)
    if sat.n_blocks == 0:
        return bonded
    atoms = np.zeros(sat.n_atoms, dtype=np.bool_)
    if len(atom_tie):
        atoms |= atom_tie >= 0
    if len(partner) and (partner >= 0).any():
        starts = sat.clause_start[np.flatnonzero(partner >= 0)]
        atoms[sat.lit_atom[starts]] = True
        atoms[sat.lit_atom[starts + 1]] = True
    in_block = sat.atom_block[atoms.nonzero()[0]]
    bonded[in_block[in_block >= 0]] = True
    return bonded


def hard_ties(sat, enabled: bool = True) -> tuple:
    """Atoms the hard two-literal clauses make equivalent (or opposite):
    those whose literals lie in one strongly connected component of the
    clauses' implication graph (``a v b`` gives ``!a -> b`` and ``!b -> a``),
    as in 2-SAT. Hard clauses hold in every MC-SAT slice, so the ties do
    not depend on the world or the selection. Returns ``(atom_tie,
    tie_start, tie_atoms, tie_mark)``: per atom its group (-1: none), the
    groups' atoms (groups of two or more atoms only), scratch; empty arrays
    when ``enabled`` is false, nothing is tied, or the graph would not fit
    in the memory budget (``HARD_TIE_BYTES`` per hard pair clause). A
    component that holds both literals of an atom (no world satisfies the
    clauses) ties nothing."""
    none = (np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32),
            np.zeros(0, dtype=np.int64))
    n = sat.n_atoms
    sizes = np.diff(sat.clause_start)
    two = np.flatnonzero((sizes == 2) & sat.is_hard) if enabled else np.zeros(0, dtype=np.int64)
    if len(two) < 2:
        return none
    from ..resources import memory_budget

    if HARD_TIE_BYTES * len(two) > memory_budget():
        return none           # the ties only speed mixing up: without them the chain is as before
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    first = sat.clause_start[:-1][two]
    kind = np.int32 if 2 * n < 2**31 else np.int64
    la = 2 * sat.lit_atom[first].astype(kind) + sat.lit_positive[first].astype(kind)
    lb = 2 * sat.lit_atom[first + 1].astype(kind) + sat.lit_positive[first + 1].astype(kind)
    src, dst = np.concatenate([la ^ 1, lb ^ 1]), np.concatenate([lb, la])
    del la, lb
    graph = csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(2 * n, 2 * n))
    del src, dst
    _, label = connected_components(graph, directed=True, connection="strong")
    neg, pos = label[0::2], label[1::2]
    key = np.where(neg == pos, -1, np.minimum(neg, pos))       # the pair of mirror components
    keys, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    tied = (counts[inverse] >= 2) & (key >= 0)
    if not tied.any():
        return none
    atoms = np.flatnonzero(tied)
    order = np.argsort(key[atoms], kind="stable")
    atoms = atoms[order]
    _, first_of, group_sizes = np.unique(key[atoms], return_index=True, return_counts=True)
    atom_tie = np.full(n, -1, dtype=np.int32)
    atom_tie[atoms] = np.repeat(np.arange(len(group_sizes), dtype=np.int32), group_sizes)
    tie_start = np.concatenate([first_of, [len(atoms)]]).astype(np.int64)
    return atom_tie, tie_start, atoms.astype(np.int32), np.zeros(len(group_sizes), dtype=np.int64)


@nb.njit(**KERNEL)
def _pair_keys(two, clause_start, lit_atom, lit_positive, n_atoms, key):
    """The key of each two-literal clause ``two[k]``: its atoms in increasing
    order and their signs, ``(lo * n_atoms + hi) * 4 + 2 * sign_lo + sign_hi``."""
    for k in range(len(two)):
        f = clause_start[two[k]]
        a, b = np.int64(lit_atom[f]), np.int64(lit_atom[f + 1])
        pa, pb = np.int64(lit_positive[f]), np.int64(lit_positive[f + 1])
        if a > b:
            a, b = b, a
            pa, pb = pb, pa
        key[k] = (a * n_atoms + b) * 4 + 2 * pa + pb


@nb.njit(**KERNEL)
def _lower_bound(a, x):
    """The first position of sorted ``a`` whose value is not below ``x``."""
    lo, hi = 0, len(a)
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@nb.njit(**KERNEL)
def _pair_match(key, order, sorted_key, two, partner):
    """``partner[two[k]]``: the first clause (in ``order``, a stable sort of
    ``key``) whose key is ``key[k]`` with both signs flipped (``key ^ 3``)."""
    n = len(sorted_key)
    for k in range(len(key)):
        want = key[k] ^ 3
        lo = _lower_bound(sorted_key, want)
        if lo < n and sorted_key[lo] == want:
            partner[two[k]] = two[order[lo]]


@nb.njit(**KERNEL)
def _strong_clauses(soft, weight, size2, guide, out):
    """Writes to ``out`` the soft clauses of two or more literals with
    |weight| >= ``guide`` (``size2`` per entry of ``soft``); returns how many."""
    n = 0
    for k in range(len(soft)):
        if size2[k] and abs(weight[soft[k]]) >= guide:
            out[n] = soft[k]
            n += 1
    return n


@nb.njit(**KERNEL)
def _bond_partners(pairs, is_hard, weight, out):
    """``out[c]``: ``pairs[c]`` when both clauses of the equivalence can be in
    a slice (hard or of positive weight), else -1. Returns whether any is."""
    any_ok = False
    for c in range(len(pairs)):
        p = pairs[c]
        if p >= 0 and (is_hard[c] or weight[c] > 0.0) and (is_hard[p] or weight[p] > 0.0):
            out[c] = p
            any_ok = True
        else:
            out[c] = -1
    return any_ok


@nb.njit(**KERNEL)
def _is_identity(a):
    for i in range(len(a)):
        if a[i] != i:
            return False
    return True


@nb.njit(**KERNEL)
def _pack_index(key, ibits):
    """``key[k] = key[k] << ibits | k`` in place: each key with its entry's index in the low bits."""
    for k in range(len(key)):
        key[k] = (key[k] << ibits) | k


@nb.njit(**KERNEL)
def _packed_pair_match(packed, ibits, two, partner):
    """On the sorted packed keys: for each entry, the first entry (lowest
    index) whose key is its key with both signs flipped."""
    n = len(packed)
    mask = (np.int64(1) << ibits) - 1
    for e in range(n):
        k = packed[e] & mask
        target = ((packed[e] >> ibits) ^ 3) << ibits
        lo = _lower_bound(packed, target)
        if lo < n and (packed[lo] >> ibits) == (target >> ibits):
            partner[two[k]] = two[packed[lo] & mask]


def equivalence_partners(sat) -> np.ndarray:
    """For each clause of two literals, the id of a clause over the same two
    atoms with both signs opposite (together: an equivalence between the
    atoms), else -1 (int32[n_clauses]). Compiled, on one array of 8 bytes per
    two-literal clause (key and index packed, sorted in place) when the bits
    fit, else three (the numpy version held about 150)."""
    n = sat.n_clauses
    partner = np.full(n, -1, dtype=np.int32)
    two = np.flatnonzero(np.diff(sat.clause_start) == 2).astype(np.int32 if n < 2**31 else np.int64)
    if len(two) < 2:
        return partner
    ibits = max(1, int(len(two) - 1).bit_length())
    if (4 * int(sat.n_atoms) ** 2).bit_length() + ibits <= 62:
        packed = np.empty(len(two), dtype=np.int64)
        _pair_keys(two, sat.clause_start, sat.lit_atom, sat.lit_positive, np.int64(sat.n_atoms), packed)
        _pack_index(packed, np.int64(ibits))
        packed.sort()
        _packed_pair_match(packed, np.int64(ibits), two, partner)
        return partner
    key = np.empty(len(two), dtype=np.int64)
    _pair_keys(two, sat.clause_start, sat.lit_atom, sat.lit_positive, np.int64(sat.n_atoms), key)
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    _pair_match(key, order, sorted_key, two, partner)
    return partner


@nb.njit(**KERNEL)
def _mcsat_run(n_samples, tally, store, rb, n_steps, n_mh, max_path, p_ws, temp, soft, strong, joint, thresh,
               is_hard, g, s, path, prob, stats, n_cluster, max_cluster, partner, mark, queue, stamp, bscratch,
               bonded, ties):
    """``n_samples`` MC-SAT steps (with their Metropolis steps). After each:
    if ``tally`` has one entry per atom, adds to it each atom's conditional
    probability given the rest of the world (``rb``) or its truth value; if
    ``store`` has rows, writes the world to row ``i``. ``joint``: pair moves
    also over atoms in blocks. ``n_cluster`` cluster flips on each slice
    (:func:`_cluster_moves` over the bonds of ``partner``; scratch ``mark``,
    ``queue``, ``stamp``)."""
    world, count, sel, block_true, rs = s[0], s[1], s[2], s[7], s[8]
    weight = g[6]
    n = len(world)
    do_tally = len(tally) == n
    do_store = store.shape[0] > 0
    n_pairs = min(n_mh // 2, 4 * len(strong))
    n_walks = n_mh - n_pairs
    for i in range(n_samples):
        _select(soft, weight, thresh, count, sel, rs)
        samplesat(n_steps, max_path, p_ws, temp, False, g, s, path, stats)
        if n_cluster > 0:
            _cluster_moves(n_cluster, max_cluster, partner, g, s, mark, queue, stamp, bscratch, bonded, ties, stats)
        if n_mh > 0:
            for k in range(len(soft)):
                sel[soft[k]] = SEL_NONE
            samplesat(n_walks, max_path, p_ws, temp, True, g, s, path, stats)
            if n_pairs > 0:
                _pair_moves(n_pairs, joint, strong, g, s, stats)
        if do_tally:
            if rb:
                rao_blackwell_tally(g, world, count, is_hard, block_true, prob, tally)
            else:
                for a in range(n):
                    if world[a]:
                        tally[a] += 1.0
        if do_store:
            for a in range(n):
                store[i, a] = world[a]


def maxwalksat_start(net: GroundNetwork, *, two_pass: bool, flips: int, seed: int,
                     hard_weight: float | None = None, init: np.ndarray | None = None,
                     deadline: float | None = None) -> tuple[np.ndarray, dict]:
    """A start world by MaxWalkSAT (one try of ``flips`` flips and its greedy
    descent): with ``two_pass``, first over the soft clauses only (blocks
    kept), then over all clauses from the first pass's world (Poon and
    Domingos 2007). ``deadline`` (a ``time.perf_counter()`` value) ends the
    search early. Returns the world and figures (cost, seconds per pass)."""
    from .kernels_state import sat_arrays, subset
    from .maxwalksat import run_maxwalksat

    t0 = time.perf_counter()
    sat = sat_arrays(net if hard_weight is None else net.softened(hard_weight))
    info: dict = {}
    world = None if init is None else np.asarray(init, dtype=bool)
    if two_pass:
        soft = np.flatnonzero(~sat.is_hard)
        soft_sat = subset(sat, np.arange(sat.n_atoms), soft, np.arange(sat.n_blocks))
        world, _ = run_maxwalksat(soft_sat, max_flips=flips, max_tries=1, noise=0.5, seed=seed, deadline=deadline,
                                  init=world)
        info["init_pass1_seconds"] = time.perf_counter() - t0
        info["init_pass1_hard_violated"] = int(net.hard_violated(world) if hard_weight is None else 0)
    world, stats = run_maxwalksat(sat, max_flips=flips, max_tries=1, noise=0.5, seed=seed + 1, deadline=deadline,
                                  init=world)
    info["init_seconds"] = time.perf_counter() - t0
    info["init_maxwalksat_flips"] = int(stats["flips"]) + (flips if two_pass else 0)
    soft_net = net if hard_weight is None else net.softened(hard_weight)
    info["init_cost"] = float(soft_net.cost(world))
    info["init_hard_violated"] = int(net.hard_violated(world)) if hard_weight is None else 0
    return world, info


class MCSATChain:
    """One MC-SAT chain over a network whose clause weights may change
    between calls (weight learning keeps one per training database).

    The clauses are normalised once, with every soft clause kept whatever its
    weight (normalisation would drop the zero-weight ones, and learning starts
    at zero): a zero weight is never selected by the slice and adds nothing
    to the score, so it samples the same distribution. :meth:`set_weights`
    writes new weights into the normalised arrays, with the slice
    probabilities ``1 - exp(-|w|)``, the strong clauses of the pair moves and
    the world's score, without re-normalising or finding a new start world.

    ``options``: an :class:`MCSATOptions` (or its fields as keywords; the
    sample counts and time limit are not used here). ``init``: the first
    world (made to satisfy the hard clauses and blocks by WalkSAT if it does
    not; if None, where ``init_method`` says). With ``group_mutex`` the
    chain runs on the grouped network of :mod:`.mutex`; worlds, weights and
    marginals are those of ``net`` all the same. :meth:`sample` draws
    successive worlds, continuing from where the last call stopped;
    :attr:`state` is the current world."""

    def __init__(self, net: GroundNetwork, options: MCSATOptions | None = None, **kw) -> None:
        opt = make_options(options, kw)
        self.options = opt
        self.p_ws = float(opt.walksat_prob)
        self.temp = float(opt.temperature)
        self.max_path = int(opt.max_path)
        self.guide_weight = float(opt.guide_weight)
        self.hard_weight = opt.hard_weight
        self.rao_blackwell = bool(opt.rao_blackwell)
        self.joint = bool(opt.joint_moves)
        self.n_clauses = net.n_clauses
        self.n_atoms = net.n_atoms
        self.grouped = None
        self.group_seconds = 0.0
        if opt.group_mutex and opt.hard_weight is None:
            from .mutex import group_mutex

            t0 = time.perf_counter()
            grouped = group_mutex(net)
            self.group_seconds = time.perf_counter() - t0
            if grouped.groups.n_groups:
                self.grouped = grouped
                net = grouped.net
        self.net = net
        # every soft clause kept: normalise with placeholder weights, then write the real ones
        # (a fresh array: sat_arrays shares the network's weight array, and _write_weights writes in place)
        placeholder = replace(net, weight=np.where(net.is_hard, 0.0, 1.0))
        self.prep = prepare(placeholder, opt.hard_weight, lean=True)
        sat = self.prep.sat
        # a lean normalisation leaves the clause map empty when it is the identity
        self._identity = (len(sat.orig_clause) == 0 and sat.n_clauses == net.n_clauses) or (
            len(sat.orig_clause) == net.n_clauses and _is_identity(sat.orig_clause))
        self._orig_hard = np.flatnonzero(net.is_hard if self._identity else net.is_hard[sat.orig_clause])
        # the kernels read ``prep.arrays`` only: drop the normalised arrays they never read (literal ->
        # clause, atom -> literal, and the clause map while it is the identity), 16 bytes a literal and
        # 8 a clause less for the life of the chain (on UW-CSE's 6 M clauses, 144 MB)
        sat = sat._replace(lit_clause=np.zeros(0, dtype=np.int32), atom_lit=np.zeros(0, dtype=np.int32),
                           orig_clause=np.zeros(0, dtype=np.int64) if self._identity else sat.orig_clause)
        self.prep = self.prep._replace(sat=sat)
        self._size2 = np.diff(sat.clause_start)[self.prep.soft] >= 2
        self.rng = np.random.default_rng(opt.seed)
        self.n_steps = default_steps(self.prep.n_vars) if opt.max_steps is None else int(opt.max_steps)
        self.n_mh = self.n_steps if opt.metropolis_steps is None else int(opt.metropolis_steps)
        self.path = np.zeros(2 * self.max_path, dtype=np.int32)
        self.stats = np.zeros(N_STATS + 5, dtype=np.int64)
        self.n_cluster = max(1, self.n_steps // 10) if opt.cluster_moves else 0
        self._cluster_now = 0         # n_cluster while some equivalence can be in the slice (see _write_weights)
        self._mark = np.zeros(sat.n_atoms if opt.cluster_moves else 0, dtype=np.int64)
        self._queue = np.zeros(sat.n_atoms if opt.cluster_moves else 0, dtype=np.int32)
        self._stamp = np.zeros(1, dtype=np.int64)
        self._bscratch = np.zeros(2 * sat.n_blocks if opt.cluster_moves else 0, dtype=np.int64)
        self._pairs = equivalence_partners(sat) if opt.cluster_moves else np.zeros(0, dtype=np.int32)
        self._ties = hard_ties(sat, opt.cluster_moves and opt.hard_weight is None)
        self._bonded = _bonded_blocks(sat, self._pairs, self._ties[0])
        self._partner = self._pairs
        self.prob = np.zeros(2 * (int(np.diff(sat.block_start).max()) if sat.n_blocks else 1), dtype=np.float64)
        self._no_tally = np.zeros(0, dtype=np.float64)
        self._no_store = np.zeros((0, sat.n_atoms), dtype=bool)
        self._write_weights(np.asarray(net.weight, dtype=np.float64), mapped=True)
        self.init_info: dict = {"init_method": "given" if opt.init is not None else opt.init_method}
        init = opt.init
        if init is not None:
            init = self._lift(init)
        elif opt.init_method != "hard":
            flips = opt.init_flips if opt.init_flips is not None else default_init_flips(self.prep.n_vars)
            # under --max-seconds the start search takes at most a quarter of it
            deadline = None if opt.max_seconds is None else time.perf_counter() + opt.max_seconds / 4
            init, info = maxwalksat_start(net, two_pass=opt.init_method == "two-pass", flips=int(flips),
                                          seed=int(opt.seed), hard_weight=opt.hard_weight, deadline=deadline)
            if opt.init_method == "best":
                # also from the all-false world: on implication cascades (friends of smokers smoke) one
                # try from a random world often ends in the costly "everybody smokes" local optimum
                zero, info0 = maxwalksat_start(net, two_pass=False, flips=int(flips), seed=int(opt.seed) + 2,
                                               hard_weight=opt.hard_weight, deadline=deadline,
                                               init=np.zeros(net.n_atoms, dtype=bool))
                info["init_seconds"] += info0["init_seconds"]
                info["init_maxwalksat_flips"] += info0["init_maxwalksat_flips"]
                if (info0["init_hard_violated"], info0["init_cost"]) < (info["init_hard_violated"], info["init_cost"]):
                    init, info["init_cost"], info["init_hard_violated"] = zero, info0["init_cost"], info0["init_hard_violated"]
            self.init_info.update(info)
        self._state, self.init_flips = feasible_state(self.prep, self.rng, init)
        self._state.fst[0] = self._score()

    # ---------------------------------------------------------------- weights

    def set_weights(self, weights: np.ndarray) -> None:
        """New clause weights (float64[n_clauses] of the network the chain was
        built from; the entries of hard clauses are ignored). The chain goes
        on from its current world, now sampling the new distribution."""
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (self.n_clauses,):
            raise InferenceError(f"set_weights: expected {self.n_clauses} clause weights, got shape {w.shape}")
        self._write_weights(w)
        self._state.fst[0] = self._score()

    def set_weights_from_params(self, net: GroundNetwork, params: np.ndarray) -> None:
        """As ``set_weights(net.clause_weights(params))``, ``net`` the network
        the chain was built from (its parameter table), with the weights
        computed straight into the chain's own when its clauses are the
        network's in order: no per-clause temporary (48 MB on 6 M clauses
        at every learning iteration)."""
        if self.grouped is not None or not self._identity or net.n_clauses != self.n_clauses:
            self.set_weights(net.clause_weights(params))
            return
        from ..ground.kernels import _clause_weights

        _clause_weights(net.param_start, net.param_index, np.asarray(net.param_coef, np.float64),
                        np.asarray(params, np.float64), net.is_hard, self.prep.sat.weight)
        self._write_weights(None)
        self._state.fst[0] = self._score()

    def _write_weights(self, w: np.ndarray | None, mapped: bool = False) -> None:
        """``w``: weights of the original network's clauses (of the grouped
        network's if ``mapped``); None: already written in the chain's
        weight array (:meth:`set_weights_from_params`)."""
        if w is not None and self.grouped is not None and not mapped:
            w = self.grouped.weights(w)
        sat, prep = self.prep.sat, self.prep
        if w is None:
            pass
        elif self._identity:
            np.copyto(sat.weight, w)
        else:
            np.take(w, sat.orig_clause, out=sat.weight)
        sat.weight[self._orig_hard] = 0.0 if self.hard_weight is None else float(self.hard_weight)
        if not np.all(np.isfinite(sat.weight)):
            raise InferenceError("a clause weight is not finite; use a hard clause instead of an infinite weight")
        # thresh = -expm1(-|w|), computed in place (no per-clause scratch)
        np.abs(sat.weight, out=prep.thresh)
        np.negative(prep.thresh, out=prep.thresh)
        np.expm1(prep.thresh, out=prep.thresh)
        np.negative(prep.thresh, out=prep.thresh)
        # the strong clauses are a prefix of a scratch array; when they are most of it, it is kept as theirs
        # (a learner's re-weighting then needs no new scratch), else they are copied out and it is dropped
        buf = getattr(self, "_strong_buf", None)
        if buf is None or len(buf) != len(prep.soft):
            buf = np.empty(len(prep.soft), dtype=np.int32)
        n = _strong_clauses(prep.soft, sat.weight, self._size2, float(self.guide_weight), buf)
        if 2 * n > len(buf):
            self._strong_buf, self.strong = buf, buf[:n]
        else:
            self._strong_buf, self.strong = None, buf[:n].copy()
        del buf
        if len(self._pairs):
            # a bond needs both clauses of an equivalence in the slice: hard or of positive weight
            if len(self._partner) != len(self._pairs) or self._partner is self._pairs:
                self._partner = np.empty(len(self._pairs), dtype=np.int32)
            any_ok = _bond_partners(self._pairs, sat.is_hard, sat.weight, self._partner)
            self._bonded = _bonded_blocks(sat, self._partner, self._ties[0])
            self._cluster_now = self.n_cluster if any_ok or len(self._ties[1]) > 1 else 0
        elif len(self._ties[1]) > 1:          # atoms tied by hard clauses alone
            self._cluster_now = self.n_cluster

    def _score(self) -> float:
        """The score the kernels keep up to date by differences (soft clauses only)."""
        return float(satisfied_weight(self.prep.sat.weight, self._state.count))

    # ---------------------------------------------------------------- state

    def _lift(self, world: np.ndarray) -> np.ndarray:
        """A world of the original network as one of the network sampled."""
        world = np.asarray(world, dtype=bool).reshape(-1)
        if len(world) != self.n_atoms:
            raise InferenceError(f"initial world has {len(world)} atoms, the network has {self.n_atoms}")
        return world if self.grouped is None else self.grouped.lift(world)

    def _project(self, values: np.ndarray) -> np.ndarray:
        return values if self.grouped is None else self.grouped.project(values)

    @property
    def state(self) -> np.ndarray:
        """A copy of the current world (bool[n_atoms]; atoms that no clause
        touches hold arbitrary values: :meth:`sample` redraws them)."""
        return self._project(self._state.world).copy()

    @state.setter
    def state(self, world: np.ndarray) -> None:
        """Move the chain to ``world`` (repaired by WalkSAT on the hard
        clauses and blocks if it violates them)."""
        self.reset(world)

    def reset(self, init: np.ndarray | None = None) -> None:
        """Restart the chain from ``init`` (or a random world)."""
        self._state, flips = feasible_state(self.prep, self.rng, None if init is None else self._lift(init),
                                             reuse=self._state)
        self.init_flips += flips
        self._state.fst[0] = self._score()

    @property
    def variables(self) -> int:
        return self.prep.n_vars

    # ---------------------------------------------------------------- sampling

    def run(self, k: int, tally: np.ndarray | None = None, store: np.ndarray | None = None) -> None:
        """``k`` MC-SAT steps; after each, add to ``tally`` (float64[n_atoms]
        of the network sampled, :attr:`net`) each atom's conditional
        probability (Rao-Blackwell) or truth value, and/or write the world
        to row ``i`` of ``store`` (bool[k, net.n_atoms])."""
        _mcsat_run(
            k, self._no_tally if tally is None else tally, self._no_store if store is None else store,
            self.rao_blackwell, self.n_steps, self.n_mh, self.max_path, self.p_ws, self.temp, self.prep.soft,
            self.strong, self.joint, self.prep.thresh, self.prep.sat.is_hard, self.prep.arrays,
            self._state.arrays, self.path, self.prob, self.stats, self._cluster_now, DEFAULT_MAX_CLUSTER,
            self._partner, self._mark, self._queue, self._stamp, self._bscratch, self._bonded, self._ties,
        )

    def new_tally(self) -> np.ndarray:
        """A zero tally for :meth:`run` (one entry per atom of :attr:`net`)."""
        return np.zeros(self.net.n_atoms, dtype=np.float64)

    def sample(self, n: int, *, burn_in: int = 0) -> np.ndarray:
        """``n`` successive worlds (bool[n, n_atoms]) after ``burn_in`` steps.
        Atoms that no clause touches are drawn from their exact distribution
        in each world."""
        check_int("n", n, 1)
        check_int("burn_in", burn_in, 0)
        if burn_in:
            self.run(burn_in)
        worlds = np.zeros((n, self.net.n_atoms), dtype=bool)
        self.run(n, store=worlds)
        random_inactive(self.prep, worlds, self.rng)
        return self._project(worlds)

    def marginals(self, tally: np.ndarray, n: int) -> np.ndarray:
        """Marginals of the original atoms from a tally of ``n`` samples
        (exact ones for the atoms that no clause touches)."""
        return self._project(fill_inactive(self.prep, tally / float(n)))

    def stats_dict(self) -> dict:
        s = self.stats
        proposals = int(s[ST_PROPOSALS])
        excursions = int(s[ST_EXCURSIONS])
        mh = int(s[ST_MH_PROPOSALS])
        out = {
            "samplesat_steps": self.n_steps,
            "samplesat_proposals": proposals,
            "samplesat_moves": int(s[ST_MOVES]),
            "samplesat_accept_rate": (int(s[ST_ONE_STEP]) + int(s[ST_EXC_ACCEPTED])) / proposals if proposals else 0.0,
            "samplesat_excursions": excursions,
            "samplesat_excursion_accept_rate": int(s[ST_EXC_ACCEPTED]) / excursions if excursions else 0.0,
            "samplesat_excursions_capped": int(s[ST_CAPPED]),
            "metropolis_steps": self.n_mh,
            "metropolis_proposals": mh,
            "metropolis_accept_rate": int(s[ST_MH_ACCEPTED]) / mh if mh else 0.0,
            "strong_clauses": len(self.strong),
            "pair_proposals": int(s[ST_PAIR_PROPOSALS]),
            "pair_accept_rate": int(s[ST_PAIR_ACCEPTED]) / int(s[ST_PAIR_PROPOSALS]) if s[ST_PAIR_PROPOSALS] else 0.0,
            "joint_moves": self.joint,
            "cluster_moves": self._cluster_now,
            "cluster_proposals": int(s[ST_CLUSTER_PROPOSALS]),
            "cluster_accept_rate": int(s[ST_CLUSTER_ACCEPTED]) / int(s[ST_CLUSTER_PROPOSALS]) if s[ST_CLUSTER_PROPOSALS] else 0.0,
            "cluster_mean_size": int(s[ST_CLUSTER_ATOMS]) / int(s[ST_CLUSTER_ACCEPTED]) if s[ST_CLUSTER_ACCEPTED] else 0.0,
            "group_mutex": self.grouped is not None,
        }
        out.update(self.init_info)
        if self.grouped is not None:
            out.update(self.grouped.groups.summary())
            out["mutex_seconds"] = self.group_seconds
        return out


def mcsat(
    net: GroundNetwork,
    options: MCSATOptions | None = None,
    *,
    progress: Callable[[int], None] | None = None,
    **kw,
) -> MarginalResult:
    """Marginals by MC-SAT (see the module docstring). ``options``: an
    :class:`MCSATOptions`, or its fields as keywords (``samples``,
    ``burn_in``, ``seed``, ``max_seconds``, ``walksat_prob``,
    ``temperature``, ``max_steps``, ``metropolis_steps``, ``guide_weight``,
    ``max_path``, ``rao_blackwell``, ``hard_weight``, ``init``,
    ``init_method``, ``init_flips``, ``group_mutex``, ``joint_moves``,
    ``cluster_moves``).
    ``progress(n)`` is called with the number of samples drawn so far."""
    opt = make_options(options, kw)
    check_sampling(opt.samples, opt.burn_in, opt.seed, opt.max_seconds, progress)
    runner = ChunkRunner(opt.max_seconds)
    chain = MCSATChain(net, opt)
    init_flips = chain.init_flips
    setup_seconds = runner.elapsed()
    burned = runner.run(lambda k: chain.run(k), opt.burn_in)
    t_sample = time.perf_counter()
    tally = chain.new_tally()
    drawn = runner.run(lambda k: chain.run(k, tally=tally), opt.samples, progress, at_least_one=True)
    sample_seconds = time.perf_counter() - t_sample
    prob = chain.marginals(tally, drawn)
    seconds = runner.elapsed()
    stats = {
        "samples": drawn,
        "burn_in": burned,
        "seconds": seconds,
        "setup_seconds": setup_seconds,
        "sampling_seconds": sample_seconds,
        "samples_per_second": drawn / sample_seconds if sample_seconds > 0 else float("inf"),
        "stopped_early": runner.stopped_early,
        "init_flips": init_flips,
        "variables": chain.variables,
        "walksat_prob": chain.p_ws,
        "temperature": chain.temp,
        "rao_blackwell": chain.rao_blackwell,
        "hard_weight": opt.hard_weight,
    }
    stats.update(chain.stats_dict())
    return MarginalResult(probabilities=prob, method="mcsat", samples=drawn, seconds=seconds, stats=stats)


def sample_worlds(
    net: GroundNetwork,
    n_samples: int,
    options: MCSATOptions | None = None,
    **kw,
) -> np.ndarray:
    """``n_samples`` successive MC-SAT worlds (bool[n_samples, n_atoms]) after
    ``burn_in`` steps (default 100) from ``init`` (for learning: expected
    counts are means over these worlds); the other options are those of
    :class:`MCSATOptions`. Atoms that no clause touches are drawn from their
    exact distribution in each world."""
    opt = make_options(options, kw)
    check_sampling(n_samples, opt.burn_in, opt.seed, None, None)
    chain = MCSATChain(net, opt)
    return chain.sample(n_samples, burn_in=opt.burn_in)
