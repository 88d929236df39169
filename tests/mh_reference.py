"""Pure-Python references for the Metropolis-Hastings tests: the states of
tiny problems and the proposal distributions of the chains, derived from
their docstrings (``infer/mh.py``, ``cluster/chain.py``) by enumerating each
random choice a proposal makes, independently of the compiled code.

A proposal outcome is keyed by its *path*: over clusterings ``("merge", y)``
(kinds merge and edge merge), ``("split", y)`` and ``("move", i, y)`` (kinds
move and edge move of mention ``i``), ``y`` the canonical labels of the new
clustering. The chain pairs each path with its reverse (a merge with the
split back, a move of ``i`` with the move of ``i`` back) and accepts with the
ratio of their mixture densities; :func:`reverse_path` gives that pairing.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np


# ---------------------------------------------------------------- worlds

def feasible_worlds(net) -> list[tuple[bool, ...]]:
    """Every world of a small network that satisfies its hard clauses and blocks."""
    n = net.n_atoms
    out = []
    for code in range(1 << n):
        w = np.array([(code >> a) & 1 for a in range(n)], dtype=bool)
        if net.hard_violated(w) == 0:
            out.append(tuple(bool(v) for v in w))
    return out


def single_moves(net, x: tuple) -> list[tuple]:
    """Worlds one built-in move away from ``x`` (a flip of an atom outside the
    blocks, or a block's true value moved), feasible or not."""
    out = []
    for a in range(net.n_atoms):
        if net.atom_block[a] < 0:
            y = list(x)
            y[a] = not y[a]
            out.append(tuple(y))
    for b in range(net.n_blocks):
        atoms = net.block_atoms[net.block_start[b]:net.block_start[b + 1]].tolist()
        for t in atoms:
            if x[t]:
                for j in atoms:
                    if j != t:
                        y = list(x)
                        y[t], y[j] = False, True
                        out.append(tuple(y))
    return out


def move_connected(net) -> bool:
    """The feasible worlds form one class under the built-in moves."""
    worlds = feasible_worlds(net)
    if not worlds:
        return False
    ok = set(worlds)
    seen = {worlds[0]}
    stack = [worlds[0]]
    while stack:
        x = stack.pop()
        for y in single_moves(net, x):
            if y in ok and y not in seen:
                seen.add(y)
                stack.append(y)
    return len(seen) == len(ok)


def atom_transition_matrix(net, worlds: list[tuple], block_prob: float, temp: float = 1.0) -> np.ndarray:
    """The transition matrix of the atom chain over ``worlds`` (the feasible
    worlds), from its proposal (a block move with probability
    ``block_prob`` when the network has both free atoms and blocks; a free
    atom or a block, then a new true atom, uniformly) and the Metropolis rule
    ``min(1, exp(delta / T))``. Atoms in no clause are left out of the
    variables, as the chain does."""
    occurs = np.zeros(net.n_atoms, dtype=bool)
    occurs[net.lit_atom] = True
    free = [a for a in range(net.n_atoms) if net.atom_block[a] < 0 and occurs[a]]
    blocks = []
    for b in range(net.n_blocks):
        atoms = net.block_atoms[net.block_start[b]:net.block_start[b + 1]].tolist()
        if len(atoms) >= 2 and occurs[atoms].any():
            blocks.append(atoms)
    pb = block_prob if (free and blocks) else (1.0 if blocks else 0.0)
    index = {x: k for k, x in enumerate(worlds)}
    score = {x: net.score(np.array(x)) for x in worlds}
    T = np.zeros((len(worlds), len(worlds)))
    for x in worlds:
        props: dict[tuple, float] = defaultdict(float)
        for a in free:
            y = list(x)
            y[a] = not y[a]
            props[tuple(y)] += (1 - pb) / len(free)
        for atoms in blocks:
            t = next(a for a in atoms if x[a])
            for j in atoms:
                if j != t:
                    y = list(x)
                    y[t], y[j] = False, True
                    props[tuple(y)] += pb / len(blocks) / (len(atoms) - 1)
        for y, q in props.items():
            if y in index:
                T[index[x], index[y]] += q * min(1.0, math.exp((score[y] - score[x]) / temp))
    T[np.diag_indices_from(T)] = 1.0 - T.sum(axis=1)
    return T


# ---------------------------------------------------------------- clusterings

def partitions(n: int):
    """Every clustering of ``n`` mentions as canonical labels (restricted growth strings)."""
    def rec(i, labels, k):
        if i == n:
            yield tuple(labels)
            return
        for c in range(k + 1):
            labels.append(c)
            yield from rec(i + 1, labels, max(k, c + 1))
            labels.pop()
    yield from rec(0, [], 0)


def canon(labels) -> tuple:
    m: dict = {}
    return tuple(m.setdefault(int(l), len(m)) for l in labels)


def _clusters(x: tuple) -> list[list[int]]:
    d: dict[int, list[int]] = defaultdict(list)
    for i, l in enumerate(x):
        d[l].append(i)
    return list(d.values())


def _relabel(x: tuple, members, new: int) -> tuple:
    lab = list(x)
    for i in members:
        lab[i] = new
    return canon(lab)


def cluster_proposals(x: tuple, probs, neighbors: list[list[int]]) -> tuple[dict, float]:
    """The proposal distribution of the chain over clusterings in state ``x``,
    derived from the docstring of ``cluster/chain.py``: ``{path: probability}``
    and the probability of a null proposal. ``probs``: merge, split, move,
    edge merge, edge move; ``neighbors[i]``: the mentions linked to ``i``."""
    n = len(x)
    out: dict[tuple, float] = defaultdict(float)
    null = 0.0
    cl = _clusters(x)
    c = len(cl)
    new = max(x) + 1
    cluster_of = {i: C for C in cl for i in C}
    # 0. merge: two clusters, uniformly (ordered draw of two distinct ones)
    if c < 2:
        null += probs[0]
    else:
        for A in cl:
            for B in cl:
                if A is not B:
                    out[("merge", _relabel(x, B, x[A[0]]))] += probs[0] / (c * (c - 1))
    # 1. split: a cluster of two or more, then a bipartition, uniformly
    multi = [C for C in cl if len(C) >= 2]
    if not multi:
        null += probs[1]
    else:
        for C in multi:
            m = len(C)
            n_bip = 2 ** (m - 1) - 1
            for r in range(len(C)):
                for rest in itertools.combinations(C[1:], r):
                    side0 = {C[0], *rest}
                    side1 = [i for i in C if i not in side0]
                    if not side1:
                        continue
                    out[("split", _relabel(x, side1, new))] += probs[1] / len(multi) / n_bip
    for i in range(n):
        A = cluster_of[i]
        # 2. move: a mention, then another cluster or (unless alone) a new one, uniformly
        targets = [_relabel(x, [i], x[C[0]]) for C in cl if C is not A]
        if len(A) > 1:
            targets.append(_relabel(x, [i], new))
        if not targets:
            null += probs[2] / n
        for y in targets:
            out[("move", i, y)] += probs[2] / (n * len(targets))
        # 3. edge merge and 4. edge move: a mention, then one of its linked mentions
        nb = neighbors[i]
        if not nb:
            null += (probs[3] + probs[4]) / n
            continue
        for j in nb:
            q = 1.0 / (n * len(nb))
            if x[j] == x[i]:
                null += (probs[3] + probs[4]) * q
                continue
            out[("merge", _relabel(x, A, x[j]))] += probs[3] * q
            out[("move", i, _relabel(x, [i], x[j]))] += probs[4] * q
    return {k: q for k, q in out.items() if q > 0}, null


def reverse_path(path: tuple, x: tuple) -> tuple:
    """The path back to ``x`` that the chain pairs with ``path`` from ``x``."""
    if path[0] == "merge":
        return ("split", x)
    if path[0] == "split":
        return ("merge", x)
    return ("move", path[1], x)


def satisfies_constraints(model, labels) -> bool:
    """The clustering keeps the model's must-link and cannot-link pairs
    (hard formulas and evidence atoms of the predicate)."""
    lab = np.asarray(labels)
    for q in model.quantities:
        if q.kind in ("must", "cannot"):
            m = q.terms.sparse.tocoo()
            same = lab[m.row] == lab[m.col]
            if (q.kind == "must" and not same.all()) or (q.kind == "cannot" and same.any()):
                return False
    return True


def exact_pair_marginals(model, states=None) -> tuple[np.ndarray, list, np.ndarray]:
    """P(i and j share a cluster) by enumerating every clustering; also the
    clusterings and their scores (-inf where a constraint is broken)."""
    n = model.n
    states = list(partitions(n)) if states is None else states
    scores = np.array([model.score(np.array(s)) if satisfies_constraints(model, s) else -np.inf for s in states])
    p = np.exp(scores - scores[np.isfinite(scores)].max())
    p /= p.sum()
    out = np.zeros((n, n))
    for s, ps in zip(states, p):
        lab = np.array(s)
        out += ps * (lab[:, None] == lab[None, :])
    return out, states, scores


# ---------------------------------------------------------------- tie moves over worlds

class TieReference:
    """The tie moves of ``infer/mh.py`` re-derived from its comments, over the
    chain's own normalised clause arrays (``prep``): propagation flips the
    start atom, then, while a hard clause is violated, the first atom (in the
    clause's literal order) of the last clause of the violated list that is
    free and not flipped yet; the violated list is kept as the compiled state
    keeps it (appended when a clause becomes violated, the last entry moved
    into the place of one that becomes satisfied)."""

    def __init__(self, prep, tie_max: int) -> None:
        sat = prep.sat
        self.clause_start = sat.clause_start.tolist()
        self.lit_atom = sat.lit_atom.tolist()
        self.lit_positive = sat.lit_positive.tolist()
        self.atom_lit_start = sat.atom_lit_start.tolist()
        self.occ_clause = prep.occ_clause.tolist()
        self.occ_positive = prep.occ_positive.tolist()
        self.is_hard = sat.is_hard.tolist()
        self.atom_block = sat.atom_block.tolist()
        self.tie_max = tie_max

    def _count(self, x, c) -> int:
        return sum(x[self.lit_atom[i]] == self.lit_positive[i]
                   for i in range(self.clause_start[c], self.clause_start[c + 1]))

    def propagate(self, x: tuple, a: int):
        """The set of atoms flipped from world ``x`` and start atom ``a``
        (a frozenset), or None if propagation fails."""
        w = list(x)
        count = [self._count(w, c) for c in range(len(self.is_hard))]
        vlist: list[int] = []
        vpos: dict[int, int] = {}

        def flip(b):
            new = not w[b]
            w[b] = new
            for k in range(self.atom_lit_start[b], self.atom_lit_start[b + 1]):
                c = self.occ_clause[k]
                if self.occ_positive[k] == new:
                    count[c] += 1
                    if count[c] == 1 and self.is_hard[c]:
                        p = vpos.pop(c)
                        last = vlist.pop()
                        if last != c:
                            vlist[p] = last
                            vpos[last] = p
                else:
                    count[c] -= 1
                    if count[c] == 0 and self.is_hard[c]:
                        vpos[c] = len(vlist)
                        vlist.append(c)

        flipped = [a]
        flip(a)
        while vlist:
            c = vlist[-1]
            pick = next((self.lit_atom[i] for i in range(self.clause_start[c], self.clause_start[c + 1])
                         if self.lit_atom[i] not in flipped and self.atom_block[self.lit_atom[i]] < 0), None)
            if pick is None or len(flipped) >= self.tie_max:
                return None
            flipped.append(pick)
            flip(pick)
        return frozenset(flipped)


def tie_transition_matrix(net, prep, worlds: list[tuple], block_prob: float, tie_max: int,
                          temp: float = 1.0) -> np.ndarray:
    """The transition matrix of the atom chain with tie moves (``tie_max`` >=
    2): a free atom ``a`` drawn uniformly proposes ``x`` with ``S(x, a)``
    flipped, accepted with ``min(1, exp(delta / T) * back / fwd)`` where
    ``fwd`` (``back``) counts the atoms of ``S`` whose propagation from ``x``
    (from the new world) gives ``S``; block moves as in
    :func:`atom_transition_matrix`."""
    ref = TieReference(prep, tie_max)
    occurs = np.zeros(net.n_atoms, dtype=bool)
    occurs[net.lit_atom] = True
    free = [a for a in range(net.n_atoms) if net.atom_block[a] < 0 and occurs[a]]
    has_blocks = any(len(net.block_atoms[net.block_start[b]:net.block_start[b + 1]]) >= 2
                     for b in range(net.n_blocks))
    pb = block_prob if (free and has_blocks) else (1.0 if has_blocks else 0.0)
    blocks = []
    for b in range(net.n_blocks):
        atoms = net.block_atoms[net.block_start[b]:net.block_start[b + 1]].tolist()
        if len(atoms) >= 2 and occurs[atoms].any():
            blocks.append(atoms)
    index = {x: k for k, x in enumerate(worlds)}
    score = {x: net.score(np.array(x)) for x in worlds}
    T = np.zeros((len(worlds), len(worlds)))
    for x in worlds:
        for atoms in blocks:
            t = next(a for a in atoms if x[a])
            for j in atoms:
                if j != t:
                    y = list(x)
                    y[t], y[j] = False, True
                    y = tuple(y)
                    if y in index:
                        T[index[x], index[y]] += pb / len(blocks) / (len(atoms) - 1) * min(
                            1.0, math.exp((score[y] - score[x]) / temp))
        for a in free:
            s = ref.propagate(x, a)
            if s is None:
                continue
            y = tuple((not v) if k in s else v for k, v in enumerate(x))
            fwd = sum(ref.propagate(x, b) == s for b in s)
            back = sum(ref.propagate(y, b) == s for b in s)
            assert fwd >= 1 and y in index
            if back:
                T[index[x], index[y]] += (1 - pb) / len(free) * min(
                    1.0, math.exp((score[y] - score[x]) / temp) * back / fwd)
    T[np.diag_indices_from(T)] = 1.0 - T.sum(axis=1)
    return T


def connected(T: np.ndarray) -> bool:
    """Every state reaches every other under transition matrix ``T``."""
    n = len(T)
    reach = (T > 0) | np.eye(n, dtype=bool)
    for _ in range(max(1, int(np.ceil(np.log2(max(n, 2)))) + 1)):
        reach = (reach.astype(np.int64) @ reach.astype(np.int64)) > 0
    return bool(reach.all())
