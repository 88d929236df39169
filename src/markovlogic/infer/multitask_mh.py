"""Multi-task Metropolis-Hastings (Culotta's thesis, chapter 9, Algorithm 6).

A model with several query predicates is several tasks: the atoms of each
query predicate. Besides the single-atom moves of :mod:`.mh`, the chain
makes *multi-task proposals*:

1. a task ``i`` uniformly, a variable ``j`` of it uniformly (atoms in no
   exactly-one block and in some clause);
2. ``y_j`` drawn from its conditional under the global model given the
   rest of the world (a Gibbs step);
3. for every other task ``k``, in a fixed order, the atoms of ``k`` that
   share a clause with ``j`` (at most ``neighbours`` of them, the first by
   atom id: the variables "with the highest dependence on y_j", as the
   chapter restricts its local models) drawn jointly from their conditional
   given the world as it now stands, by enumerating their assignments;
4. the whole move accepted with ``min(1, p(y') q(y | y') / (p(y) q(y' | y)))``
   (the engine of :mod:`.mh`, which refuses moves that break a hard
   clause).

``q(y' | y)`` is the product of the conditionals of steps 2 and 3 along the
path taken; ``q(y | y')`` the product of the conditionals that the same
steps, started from ``y'`` with the same ``i`` and ``j``, would give the old
values. Given ``(i, j)`` the path from ``y`` to ``y'`` is unique, so each
``(i, j)`` defines a Metropolis-Hastings kernel that leaves ``p`` invariant,
and choosing ``(i, j)`` with probabilities that do not depend on the state
mixes kernels that each do: the chain targets ``p``.

The proposals are made in Python (:mod:`.proposals`' user-proposal
interface): tens of microseconds each, against well under one for a
compiled single flip; ``task_prob`` sets their share of the steps.
MAP by the best sample, marginals from the samples, as :mod:`.mh`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from ..errors import OptionError
from ..ground.network import GroundNetwork
from .proposals import Flip, UserProposal


@dataclass
class MultiTaskOptions:
    """Options of multi-task MH (``mln infer --method multitask-mh``); the
    options of :class:`.mh.AtomMHOptions` go in ``mh``."""

    tasks: list | None = None        # query predicates as tasks (default: every predicate with atoms)
    neighbours: int = 3              # atoms of each other task resampled with y_j
    task_prob: float = 0.3           # share of the steps that are multi-task proposals
    mh: dict = field(default_factory=dict)

    def check(self) -> None:
        if isinstance(self.neighbours, bool) or not isinstance(self.neighbours, (int, np.integer)) \
                or not 1 <= self.neighbours <= 12:
            raise OptionError(f"neighbours must be an integer from 1 to 12, got {self.neighbours!r}")
        if not isinstance(self.task_prob, (int, float)) or not 0.0 < self.task_prob <= 1.0:
            raise OptionError(f"task_prob must be a number in (0, 1], got {self.task_prob!r}")


class MultiTaskProposal:
    """Algorithm 6's proposal over a ground network (module docstring)."""

    def __init__(self, net: GroundNetwork, tasks: list | None, neighbours: int):
        self.net = net
        names = net.predicates
        in_clause = np.diff(net.atom_clause_start) > 0
        free = in_clause & (net.atom_block < 0) & net.is_query
        present = [names[p] for p in np.unique(net.atom_pred[free])]
        if tasks is None:
            tasks = present
        unknown = [t for t in tasks if t not in names]
        if unknown:
            raise OptionError(f"unknown task predicate(s): {', '.join(unknown)}")
        if len(tasks) < 2:
            raise OptionError("multi-task MH needs two or more tasks (query predicates with free atoms); "
                              f"got {', '.join(tasks) or 'none'}")
        self.tasks = list(tasks)
        ids = {n: i for i, n in enumerate(names)}
        self.task_atoms = [np.flatnonzero(free & (net.atom_pred == ids[t])) for t in self.tasks]
        self.task_of = np.full(net.n_atoms, -1, np.int64)
        for k, atoms in enumerate(self.task_atoms):
            self.task_of[atoms] = k
        self.usable = [k for k, a in enumerate(self.task_atoms) if len(a)]
        self.neighbours = int(neighbours)
        self._nb_cache: dict = {}

    # ---------------------------------------------------------------- scoring
    def _clauses_of(self, atoms) -> np.ndarray:
        net = self.net
        parts = [net.atom_clause[net.atom_clause_start[a]:net.atom_clause_start[a + 1]] for a in atoms]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)

    def _log_conditional(self, world: np.ndarray, atoms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every assignment of ``atoms`` (bool[2^m, m]) and its log conditional
        probability given the rest of ``world``."""
        net = self.net
        m = len(atoms)
        codes = np.arange(1 << m)
        assign = ((codes[:, None] >> np.arange(m)[None, :]) & 1).astype(bool)
        clauses = self._clauses_of(atoms)
        score = np.zeros(1 << m)
        feasible = np.ones(1 << m, dtype=bool)
        pos = {int(a): i for i, a in enumerate(atoms)}
        for c in clauses:
            lits = net.lit_atom[net.clause_start[c]:net.clause_start[c + 1]]
            signs = net.lit_positive[net.clause_start[c]:net.clause_start[c + 1]]
            fixed_true = False
            cols, want = [], []
            for a, s in zip(lits, signs):
                k = pos.get(int(a))
                if k is None:
                    fixed_true |= bool(world[a]) == bool(s)
                else:
                    cols.append(k)
                    want.append(bool(s))
            sat = np.full(1 << m, fixed_true)
            if cols and not fixed_true:
                sat = (assign[:, cols] == np.array(want)[None, :]).any(axis=1)
            if net.is_hard[c]:
                feasible &= sat
            else:
                score += net.weight[c] * sat
        score = np.where(feasible, score, -np.inf)
        top = score.max()
        logp = score - (top + np.log(np.exp(score - top).sum()))
        return assign, logp

    def _neighbourhood(self, j: int, k: int) -> np.ndarray:
        key = (j, k)
        if key not in self._nb_cache:
            clauses = self._clauses_of([j])
            net = self.net
            lits = np.concatenate([net.lit_atom[net.clause_start[c]:net.clause_start[c + 1]] for c in clauses]) \
                if len(clauses) else np.zeros(0, np.int64)
            atoms = np.unique(lits[self.task_of[lits] == k])
            self._nb_cache[key] = atoms[:self.neighbours]
        return self._nb_cache[key]

    # ---------------------------------------------------------------- proposal
    def __call__(self, view, rng) -> Flip | None:
        if not self.usable:
            return None
        i = self.usable[int(rng.integers(len(self.usable)))]
        j = int(self.task_atoms[i][int(rng.integers(len(self.task_atoms[i])))])
        old = np.asarray(view.world, dtype=bool).copy()
        new = old.copy()
        order = [k for k in range(len(self.tasks)) if k != i]
        # forward: Gibbs on y_j, then each neighbourhood from its conditional
        log_fwd = 0.0
        assign, logp = self._log_conditional(new, np.array([j]))
        pick = int(rng.choice(len(logp), p=np.exp(logp)))
        new[j] = assign[pick, 0]
        log_fwd += logp[pick]
        hoods = [self._neighbourhood(j, k) for k in order]
        for atoms in hoods:
            if len(atoms) == 0:
                continue
            assign, logp = self._log_conditional(new, atoms)
            pick = int(rng.choice(len(logp), p=np.exp(logp)))
            new[atoms] = assign[pick]
            log_fwd += logp[pick]
        # backward: the same steps from the new world, giving the old values
        log_bwd = 0.0
        back = new.copy()
        assign, logp = self._log_conditional(back, np.array([j]))
        log_bwd += logp[int(old[j])]
        back[j] = old[j]
        for atoms in hoods:
            if len(atoms) == 0:
                continue
            assign, logp = self._log_conditional(back, atoms)
            code = int(np.sum(old[atoms].astype(np.int64) << np.arange(len(atoms))))
            log_bwd += logp[code]
            back[atoms] = old[atoms]
        changed = np.flatnonzero(new != old)
        if len(changed) == 0:
            return None
        return Flip(changed.tolist(), log_forward=float(log_fwd), log_backward=float(log_bwd))


def _mh_options(net: GroundNetwork, opt: MultiTaskOptions):
    from .mh import AtomMHOptions

    allowed = {f.name for f in fields(AtomMHOptions)} - {"user_proposals"}
    bad = sorted(set(opt.mh) - allowed)
    if bad:
        raise OptionError(f"multitask-mh does not take option(s) {', '.join(bad)}")
    proposal = MultiTaskProposal(net, opt.tasks, opt.neighbours)
    return AtomMHOptions(**opt.mh, user_proposals=[UserProposal(proposal, float(opt.task_prob), "multi-task")])


def multitask_marginals(net: GroundNetwork, options: MultiTaskOptions | None = None, **kw):
    """Marginals from multi-task MH samples."""
    from .mh import mh_marginals

    opt = options or MultiTaskOptions(mh=kw)
    opt.check()
    res = mh_marginals(net, _mh_options(net, opt))
    res.method = "multitask-mh"
    return res


def multitask_map(net: GroundNetwork, options: MultiTaskOptions | None = None, **kw):
    """The best world seen by multi-task MH."""
    from .mh import mh_map

    opt = options or MultiTaskOptions(mh=kw)
    opt.check()
    res = mh_map(net, _mh_options(net, opt))
    res.method = "multitask-mh"
    return res
