"""Break MAP ties toward false.

An exact solver returns *an* optimal world; atoms that no clause cares about
(``Cancer(Helen)`` when Helen does not smoke) may come back true. Users read a
MAP result as "what the model believes", so, as Alchemy does in practice, we
set such atoms false: one sequential pass over the true atoms that flips an
atom to false whenever that loses no score and breaks no hard clause. The
score never decreases, so an optimal world stays optimal. Atoms in
exactly-one blocks are left alone (one of them must be true).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..ground.network import GroundNetwork


@nb.njit(cache=True)
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


def settle_false(net: GroundNetwork, world: np.ndarray, tolerance: float = 1e-9) -> tuple[np.ndarray, int]:
    """A copy of ``world`` with every true atom that can be false at no loss of
    score (and no broken hard clause) set false; and how many were."""
    out = np.array(world, dtype=np.bool_, copy=True)
    if net.n_atoms == 0:
        return out, 0
    flipped = _settle(out, net.clause_start, net.lit_atom, net.lit_positive, net.weight, net.is_hard,
                      net.atom_clause_start, net.atom_clause, net.atom_block, tolerance)
    return out, int(flipped)
