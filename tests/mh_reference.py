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
