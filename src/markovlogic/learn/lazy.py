"""MAP-based learning with the hard formulas instantiated by cutting planes
(Riedel's training of Markov logic with cutting-plane inference).

A hard formula carries no weight to learn, but the MAP worlds of the
perceptron and of MIRA must respect it: with Cora's transitivity,
``SameBib(a, b) ^ SameBib(b, c) => SameBib(a, c)``, the MAP world under the
current weights is a clustering, not a set of independent pair decisions.
Grounding transitivity in full is out of reach (1,036 citations: 1.1e9
groundings). So each training world keeps

- its soft clauses ground in full, as the learning network (the feature
  counts of a MAP world need every soft grounding);
- a ``Grounder`` over the whole model for separation: a MAP call solves the
  soft network plus the hard groundings found so far with the base solver
  (ILP by default), asks the database for the hard groundings that the
  solution violates (``Grounder.violated_groundings``), adds them, and
  repeats until none is violated. With an exact base solver the world is a
  MAP world of the full network: every hard grounding left out is satisfied
  by it, and the left-out ones only restrict the feasible set.

Hard groundings found in one call are kept for the next (they are
constraints whatever the weights), so later calls usually need one round.

The training world itself may violate hard formulas that the grounding-in-
full path would reject (Cora's fold 1 ``train.db`` breaks transitivity 1,940
times): the count is reported (``truth_hard_violated``) and learning goes
on; the learners then move towards a world no MAP call can reach, which
MIRA's loss and the perceptron's counts tolerate.

Measured (session 3) on Cora fold 1's training world with
``examples/cora-er/cora-pairwise.mln`` (1,073,296 SameBib atoms): from the
pll weights the first MAP call takes 9.3 s (4 rounds, 78,556 transitivity
groundings), but after MIRA's first update the second call had not finished
after 14 minutes: the ILP over a million atoms with the transitivity rows
found so far is hard once the weights merge large clusters. So the Cora
benchmark learns without the hard formulas; this path is exact and tested
(tests/test_learn_lazy.py) but is practical on small or loosely coupled
training worlds only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..errors import LearningError, OptionError
from ..ground.network import GroundNetwork
from ..lang.ast import Query
from .data import _key

if TYPE_CHECKING:
    from ..ground.assemble import GroundClauses
    from ..ground.grounder import Grounder
    from ..model import MLN, Database

MAX_ROUNDS = 100


@dataclass
class LazyWorld:
    """One training world: its grounder, its soft clauses and the hard
    groundings separated so far."""

    grounder: "Grounder"
    soft: "GroundClauses"
    hard_templates: list[int]
    n_atoms: int
    truth_hard_violated: int
    hard_parts: list = field(default_factory=list)

    def close(self) -> None:
        self.grounder.close()


def ground_training_lazy(
    mln: "MLN",
    dbs: Sequence["Database"],
    predicates: list[str],
    multiple_databases: bool,
) -> tuple[list[GroundNetwork], list[LazyWorld]]:
    """The learning networks (soft clauses only, atom ids = the grounder's
    registry ids) and the worlds that separate the hard formulas."""
    from ..ground.grounder import Grounder
    from .api import _merge as merge_databases

    if not dbs:
        raise LearningError("no training database given")
    worlds = list(dbs) if multiple_databases else [merge_databases(dbs)]
    queries = [Query(p) for p in predicates]
    nets, lazies = [], []
    try:
        for db in worlds:
            g = Grounder(mln, [db], queries, allow_unweighted=True, truth_closed_world=True)
            try:
                hard = [i for i, t in enumerate(g.templates) if t.hard]
                soft = [i for i, t in enumerate(g.templates) if not t.hard]
                out: list = []
                net = g.network(template_ids=soft, closure=False, clauses_out=out)
                violated = 0
                if hard and net.truth is not None and not (net.truth < 0).any():
                    violated = int(g.violated_groundings(net.truth.astype(bool), hard).n_clauses)
            except BaseException:
                g.close()
                raise
            lazies.append(LazyWorld(g, out[0], hard, net.n_atoms, violated))
            nets.append(net)
    except BaseException:
        for lazy in lazies:
            lazy.close()
        raise
    return nets, lazies


class CuttingPlaneMAP:
    """MAP worlds of one training world for changing weights (module docstring).

    ``net`` is the learning network the learner holds (its parameter table
    may be the union over several training worlds); ``base``: "ilp"
    (default), "cpsat" or "exact" (exact), or "maxwalksat" (not exact)."""

    def __init__(self, net: GroundNetwork, lazy: LazyWorld, *, base: str = "ilp", max_rounds: int = MAX_ROUNDS,
                 **options) -> None:
        if base not in ("ilp", "cpsat", "exact", "maxwalksat"):
            raise OptionError(f"unknown cutting-plane base solver {base!r}; choose ilp, cpsat, exact or maxwalksat")
        if net.n_atoms != lazy.n_atoms:
            raise LearningError("internal: the learning network and its cutting-plane world disagree on the atoms")
        self.lazy = lazy
        self.base = base
        self.max_rounds = int(max_rounds)
        self.options = options
        own = lazy.grounder.params.arrays()[1]
        index = {_key(p): k for k, p in enumerate(net.param_info)}
        # the learner's weight vector (net's table) -> the grounder's own table
        self._to_own = np.array([index.get(_key(p), -1) for p in own], dtype=np.int64)
        self._own_default = np.asarray(lazy.grounder.params.arrays()[0], dtype=np.float64)
        self._network: GroundNetwork | None = None
        self._parts_in_network = -1
        self.calls = 0
        self.rounds = 0         # solver calls over all MAP calls
        self.hard_violated = 0

    def _own_params(self, params: np.ndarray) -> np.ndarray:
        own = self._own_default.copy()
        mapped = self._to_own >= 0
        own[mapped] = np.asarray(params, dtype=np.float64)[self._to_own[mapped]]
        return own

    def _current_network(self) -> GroundNetwork:
        lazy = self.lazy
        if self._network is None or self._parts_in_network != len(lazy.hard_parts):
            self._network = lazy.grounder.assemble([lazy.soft, *lazy.hard_parts])
            self._parts_in_network = len(lazy.hard_parts)
        return self._network

    def map_world(self, params: np.ndarray) -> np.ndarray:
        from ..infer.map import solve_map

        lazy = self.lazy
        own = self._own_params(params)
        for _ in range(self.max_rounds):
            net = self._current_network().with_params(own)
            result = solve_map(net, method=self.base, **self.options)
            world = np.asarray(result.world, dtype=bool)
            self.rounds += 1
            if not lazy.hard_templates:
                break
            new = lazy.grounder.violated_groundings(world, lazy.hard_templates, new_only=True)
            if new.n_clauses == 0:
                break
            lazy.hard_parts.append(new)
        else:
            raise LearningError(
                f"cutting-plane MAP did not converge in {self.max_rounds} rounds "
                f"({sum(p.n_clauses for p in lazy.hard_parts)} hard groundings instantiated)"
            )
        self.calls += 1
        self.hard_violated = int(result.hard_violated)
        return world


def cutting_plane_factory(lazies: list[LazyWorld], base: str = "ilp", **options):
    """``(net, seed) -> engine`` for the learners: the k-th call gets the k-th
    training world (the learners build their engines in network order)."""
    calls = iter(range(len(lazies)))

    def factory(net: GroundNetwork, seed: int) -> CuttingPlaneMAP:
        k = next(calls)
        return CuttingPlaneMAP(net, lazies[k], base=base, **options)

    return factory
