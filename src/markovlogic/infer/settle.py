"""Break MAP ties toward false.

An exact solver returns *an* optimal world; atoms that no clause cares about
(``Cancer(Helen)`` when Helen does not smoke) may come back true. Users read a
MAP result as "what the model believes", so, as Alchemy does in practice, we
set such atoms false: one sequential pass over the true atoms that flips an
atom to false whenever that loses no score and breaks no hard clause. The
score never decreases, so an optimal world stays optimal. Atoms in
exactly-one blocks are left alone (one of them must be true).

The pass is done in numpy rounds (:func:`_settle_rounds`): every true atom's
change in score is computed at once, and a set of atoms that share no clause
(so their changes add up exactly) is set false; repeat until no true atom can
be. On the exact MAP paths this avoids the numba kernel, whose first call in
a process costs about 0.2 s of compiler start-up, more than the rest of the
pass on tuffy/class. The sequential kernel :func:`_settle` remains for
clauses that contain an atom twice and for chains that would need many rounds.
"""

from __future__ import annotations

import numpy as np

from ..jit import kernel
from ..ground.network import GroundNetwork


@kernel(cache=True)
def _settle(world, clause_start, lit_atom, lit_positive, weight, is_hard,
            atom_clause_start, atom_clause, atom_block, tolerance):
    n_clauses = len(clause_start) - 1
    counts = np.zeros(n_clauses, dtype=np.int64)
    for c in range(n_clauses):
        for i in range(clause_start[c], clause_start[c + 1]):
            if world[lit_atom[i]] == lit_positive[i]:
                counts[c] += 1
    flipped = 0
    for a in range(len(world)):
        if not world[a] or atom_block[a] >= 0:
            continue
        delta = 0.0
        ok = True
        last = -1
        for k in range(atom_clause_start[a], atom_clause_start[a + 1]):
            c = atom_clause[k]
            if c == last:          # the atom occurs twice in this clause: counted once below
                continue
            last = c
            change = 0
            for i in range(clause_start[c], clause_start[c + 1]):
                if lit_atom[i] == a:
                    change += -1 if lit_positive[i] else 1
            before = counts[c] > 0
            after = counts[c] + change > 0
            if before and not after:
                if is_hard[c]:
                    ok = False
                    break
                delta -= weight[c]
            elif after and not before and not is_hard[c]:
                delta += weight[c]
        if ok and delta >= -tolerance:
            world[a] = False
            flipped += 1
            last = -1
            for k in range(atom_clause_start[a], atom_clause_start[a + 1]):
                c = atom_clause[k]
                if c == last:
                    continue
                last = c
                for i in range(clause_start[c], clause_start[c + 1]):
                    if lit_atom[i] == a:
                        counts[c] += -1 if lit_positive[i] else 1
    return flipped


MAX_ROUNDS = 30


def settle_false(net: GroundNetwork, world: np.ndarray, tolerance: float = 1e-9) -> tuple[np.ndarray, int]:
    """A copy of ``world`` with every true atom that can be false at no loss of
    score (and no broken hard clause) set false; and how many were."""
    out = np.array(world, dtype=np.bool_, copy=True)
    if net.n_atoms == 0:
        return out, 0
    flipped, finished = _settle_rounds(net, out, tolerance)
    if not finished:
        flipped += _settle(out, net.clause_start, net.lit_atom, net.lit_positive, net.weight, net.is_hard,
                           net.atom_clause_start, net.atom_clause, net.atom_block, tolerance)
    return out, int(flipped)


def _settle_rounds(net: GroundNetwork, world: np.ndarray, tolerance: float) -> tuple[int, bool]:
    """Set atoms false in rounds of atoms that share no clause (in place).

    Returns the number set false and whether no true atom can be set false
    any more (False: an atom occurs twice in a clause, or MAX_ROUNDS ran out;
    the caller finishes with the sequential kernel)."""
    n_atoms, n_clauses = net.n_atoms, net.n_clauses
    candidate = world & (net.atom_block < 0)
    if not candidate.any():
        return 0, True
    sizes = np.diff(net.clause_start)
    lit_atom = net.lit_atom.astype(np.int64, copy=False)
    lit_clause = np.repeat(np.arange(n_clauses, dtype=np.int64), sizes)
    if len(np.unique(lit_clause * n_atoms + lit_atom)) < len(lit_atom):
        return 0, False
    # the change in a literal's truth when its (true) atom is set false
    change = np.where(net.lit_positive, -1, 1)
    counts = np.bincount(lit_clause, weights=(world[lit_atom] == net.lit_positive), minlength=n_clauses)
    soft_weight = np.where(net.is_hard, 0.0, net.weight)
    hard_lit = net.is_hard[lit_clause]
    starts = net.clause_start[:-1][sizes > 0]
    flipped = 0
    for _ in range(MAX_ROUNDS):
        lits = np.flatnonzero(candidate[lit_atom])
        c = lit_clause[lits]
        before = counts[c] > 0
        after = counts[c] + change[lits] > 0
        breaks = before & ~after
        makes = after & ~before
        atoms = lit_atom[lits]
        broken_hard = np.bincount(atoms[breaks & hard_lit[lits]], minlength=n_atoms) > 0
        delta = np.bincount(atoms, weights=soft_weight[c] * (makes.astype(np.float64) - breaks), minlength=n_atoms)
        ok = candidate & ~broken_hard & (delta >= -tolerance)
        if not ok.any():
            return flipped, True
        # keep an atom only if it is the smallest ok atom of each of its clauses
        marked = np.where(ok[lit_atom], lit_atom, n_atoms)
        smallest = np.full(n_clauses, n_atoms, dtype=np.int64)
        if len(starts):
            smallest[sizes > 0] = np.minimum.reduceat(marked, starts)
        blocked = np.bincount(lit_atom[ok[lit_atom] & (smallest[lit_clause] != lit_atom)], minlength=n_atoms) > 0
        chosen = ok & ~blocked
        world[chosen] = False
        candidate[chosen] = False
        flipped += int(chosen.sum())
        moved = chosen[lit_atom]
        counts += np.bincount(lit_clause[moved], weights=change[moved], minlength=n_clauses)
    return flipped, False
