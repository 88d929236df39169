"""Random ground networks for tests (shared by the MAP and marginal tests).

``random_network`` draws a network with unit and longer clauses, hard
clauses, negative weights and exactly-one blocks. With ``feasible=True``
(default) a hidden world satisfying every block is drawn first and every hard
clause is made true in it (one literal is set to agree with it), so the hard
part is always satisfiable. Weights are multiples of 0.01, which integer-scaled
solvers (CP-SAT) represent exactly.

``random_components`` joins several independent random networks into one
(several connected components), ``infeasible_network`` gives a network whose
hard clauses contradict each other, and ``tuffy_like`` a large random network
shaped like tuffy/cse for benchmarks.
"""

from __future__ import annotations

import numpy as np

from markovlogic.ground.network import GroundNetwork


def _draw_clauses(rng, n_atoms, n_clauses, max_len, p_hard, p_negative, repeats):
    clauses = []
    for _ in range(n_clauses):
        size = int(rng.integers(1, max_len + 1))
        if repeats:
            atoms = rng.integers(0, n_atoms, size=size)
        else:
            atoms = rng.choice(n_atoms, size=min(size, n_atoms), replace=False)
        lits = [(int(a), bool(rng.random() < 0.5)) for a in atoms]
        if rng.random() < p_hard:
            w = None
        else:
            w = round(float(rng.uniform(0.05, 3.0)), 2)
            if rng.random() < p_negative:
                w = -w
        clauses.append((w, lits))
    return clauses


def _draw_blocks(rng, n_atoms, n_blocks, max_block=4):
    perm = rng.permutation(n_atoms)
    blocks, at = [], 0
    for _ in range(n_blocks):
        size = int(rng.integers(1, max_block + 1))
        if at + size > n_atoms:
            break
        blocks.append([int(a) for a in perm[at:at + size]])
        at += size
    return blocks


def random_clause_list(
    rng: np.random.Generator,
    n_atoms: int,
    n_clauses: int,
    max_len: int = 3,
    p_hard: float = 0.1,
    p_negative: float = 0.2,
    n_blocks: int = 0,
    feasible: bool = True,
    repeats: bool = False,
) -> tuple[list, list]:
    """``(clauses, blocks)`` in the format of :meth:`GroundNetwork.from_clauses`."""
    clauses = _draw_clauses(rng, n_atoms, n_clauses, max_len, p_hard, p_negative, repeats)
    blocks = _draw_blocks(rng, n_atoms, n_blocks)
    if feasible:
        hidden = rng.random(n_atoms) < 0.5
        for b in blocks:
            hidden[b] = False
            hidden[b[int(rng.integers(len(b)))]] = True
        for k, (w, lits) in enumerate(clauses):
            if w is None and not any(hidden[a] == p for a, p in lits):
                j = int(rng.integers(len(lits)))
                a, _ = lits[j]
                lits = list(lits)
                lits[j] = (a, bool(hidden[a]))
                # a repeated atom may still carry the other sign elsewhere: fine, the clause is true
                clauses[k] = (w, lits)
    return clauses, blocks


def random_network(
    rng: np.random.Generator,
    n_atoms: int,
    n_clauses: int,
    max_len: int = 3,
    p_hard: float = 0.1,
    p_negative: float = 0.2,
    n_blocks: int = 0,
    feasible: bool = True,
    repeats: bool = False,
) -> GroundNetwork:
    """A random network (see module docstring). ``repeats=True`` lets an atom
    occur several times in one clause (duplicates and tautologies)."""
    clauses, blocks = random_clause_list(
        rng, n_atoms, n_clauses, max_len, p_hard, p_negative, n_blocks, feasible, repeats
    )
    return GroundNetwork.from_clauses(n_atoms, clauses, blocks=blocks)


def random_components(
    rng: np.random.Generator,
    sizes: list[int],
    clauses_per_atom: float = 1.5,
    **kwargs,
) -> GroundNetwork:
    """Several independent random networks (atoms ``sizes[k]`` each) in one."""
    all_clauses, all_blocks, offset = [], [], 0
    for n in sizes:
        m = max(1, int(round(clauses_per_atom * n)))
        clauses, blocks = random_clause_list(rng, n, m, **kwargs)
        all_clauses += [(w, [(a + offset, p) for a, p in lits]) for w, lits in clauses]
        all_blocks += [[a + offset for a in b] for b in blocks]
        offset += n
    return GroundNetwork.from_clauses(offset, all_clauses, blocks=all_blocks)


def infeasible_network(rng: np.random.Generator, n_atoms: int = 6, n_clauses: int = 10) -> GroundNetwork:
    """A random soft network plus hard clauses ``x0``, ``!x0 v x1``, ``!x1``."""
    clauses, _ = random_clause_list(rng, n_atoms, n_clauses, p_hard=0.0)
    clauses += [(None, [(0, True)]), (None, [(0, False), (1, True)]), (None, [(1, False)])]
    return GroundNetwork.from_clauses(n_atoms, clauses)


def tuffy_like(
    seed: int = 0,
    n_atoms: int = 5_000,
    n_clauses: int = 150_000,
    max_len: int = 6,
    p_hard: float = 0.01,
    p_negative: float = 0.1,
) -> GroundNetwork:
    """A large random network shaped like tuffy/cse (~5k atoms, ~150k clauses
    of 1-6 literals), built with numpy (no per-clause Python)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_len + 1, size=n_clauses)
    clause_start = np.zeros(n_clauses + 1, dtype=np.int64)
    np.cumsum(sizes, out=clause_start[1:])
    n_lits = int(clause_start[-1])
    lit_atom = rng.integers(0, n_atoms, size=n_lits).astype(np.int32)
    lit_positive = rng.random(n_lits) < 0.3      # mostly negative literals, like Horn rules
    is_hard = rng.random(n_clauses) < p_hard
    # plant a world and make every hard clause true in it (first literal agrees)
    hidden = rng.random(n_atoms) < 0.5
    lit_true = hidden[lit_atom] == lit_positive
    clause_sat = np.add.reduceat(lit_true.astype(np.int64), clause_start[:-1]) > 0
    fix = clause_start[:-1][is_hard & ~clause_sat]
    lit_positive[fix] = hidden[lit_atom[fix]]
    soft = np.flatnonzero(~is_hard)
    weights = rng.uniform(0.05, 3.0, size=len(soft)).round(2)
    weights[rng.random(len(soft)) < p_negative] *= -1
    param_start = np.zeros(n_clauses + 1, dtype=np.int64)
    np.cumsum((~is_hard).astype(np.int64), out=param_start[1:])
    return GroundNetwork.from_arrays(
        n_atoms=n_atoms,
        clause_start=clause_start,
        lit_atom=lit_atom,
        lit_positive=lit_positive,
        is_hard=is_hard,
        param_start=param_start,
        param_index=np.arange(len(soft), dtype=np.int32),
        param_coef=np.ones(len(soft)),
        params=weights,
        param_info=(),
    )
