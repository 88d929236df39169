"""User proposals for Metropolis-Hastings: the interface.

Both Metropolis-Hastings engines accept proposals written in Python besides
their built-in ones:

- over possible worlds of a ground network (:mod:`markovlogic.infer.mh`,
  ``AtomMHOptions(user_proposals=...)``): a proposal returns a :class:`Flip`
  (atoms whose truth values change together);
- over clusterings of an equivalence predicate (:mod:`markovlogic.cluster.mh`,
  ``MHOptions(user_proposals=...)``): a proposal returns a :class:`Merge`,
  :class:`Split` or :class:`MoveMention`.

A proposal is any callable ``proposal(view, rng) -> move | None``. ``view``
is a read-only view of the current state (:class:`AtomView`, or
:class:`markovlogic.cluster.usermix.ClusterView`; its arrays change as the
chain moves, so copy what you keep), ``rng`` a :class:`numpy.random.Generator`
(use it, and nothing else, for randomness: runs are then reproducible from
the seed). ``None`` is a null proposal: the chain stays where it is. Register
it with the probability of using it at each step::

    from markovlogic.infer.mh import AtomMHOptions, mh_marginals
    from markovlogic.infer.proposals import Flip, UserProposal

    def swap(view, rng):                        # flip a true and a false atom of a list
        on = [a for a in PAIR if view.world[a]]
        off = [a for a in PAIR if not view.world[a]]
        if not on or not off:
            return None
        move = [on[rng.integers(len(on))], off[rng.integers(len(off))]]
        # forward: 1/(|on| |off|); backward, in the new state: the same counts
        return Flip(move, log_forward=0.0, log_backward=0.0)

    opts = AtomMHOptions(samples=5000, user_proposals=[UserProposal(swap, 0.3)])
    result = mh_marginals(net, opts)

(``(swap, 0.3)`` is accepted for ``UserProposal(swap, 0.3)``.)

The engine computes the score change of the move with its compiled delta
functions, refuses a move that breaks a hard clause, an exactly-one block or
a must-link / cannot-link constraint, and accepts the rest with the
Metropolis-Hastings probability ``min(1, exp(delta / T) * q_back / q_fwd)``
(at ``T = 0``: only moves that do not lower the score over worlds, only
improving moves over clusterings; the densities are then ignored).

Densities: your own, not the mixture's
--------------------------------------
At each step the engine picks *which* proposal to use at random with fixed
probabilities: each registered proposal with its probability, the built-in
proposals (as one group, with their own exact mixture densities) with what
is left. Each choice is a Metropolis-Hastings kernel of its own, accepted
with its own densities; a state-independent random choice among kernels that
each satisfy detailed balance satisfies it too. So ``log_forward`` must be
the log-probability that *your* proposal, called in the current state,
returns this move, and ``log_backward`` the log-probability that it returns
the reverse move when called in the state the move leads to. Do not include
the probability of choosing your proposal, nor the built-in proposals'
densities. If your proposal can reach the same new state in several ways
(e.g. it picks a move kind at random, then its arguments), sum their
probabilities. A move your proposal could not reverse must have
``log_backward = -inf`` (it is then always rejected). Additive constants
common to both densities cancel (a symmetric proposal may return 0 and 0).

Speed
-----
Without user proposals the chains run entirely in compiled code. With them,
the engine runs the built-in proposals in compiled stretches between user
steps (their number drawn from the geometric distribution) and each user step
in Python: a user step costs tens of microseconds, a built-in one well under
one. Give user proposals a small probability unless they do the real work.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import InferenceError, OptionError


# ---------------------------------------------------------------- moves

@dataclass
class Flip:
    """Change the truth value of each atom in ``atoms`` (atom ids of the
    network, distinct). Moving an exactly-one block's true value from atom
    ``t`` to atom ``j`` is ``Flip([t, j])``: the block must still have exactly
    one true atom afterwards, or the move is rejected."""

    atoms: Sequence[int]
    log_forward: float = 0.0
    log_backward: float = 0.0


@dataclass
class Merge:
    """Merge clusters ``a`` and ``b`` (cluster ids, as in ``view.labels``)."""

    a: int
    b: int
    log_forward: float = 0.0
    log_backward: float = 0.0


@dataclass
class Split:
    """Split ``cluster``: the mentions ``part`` (a non-empty proper subset of
    its members) go to a new cluster, the others stay."""

    cluster: int
    part: Sequence[int]
    log_forward: float = 0.0
    log_backward: float = 0.0


@dataclass
class MoveMention:
    """Move mention ``mention`` to cluster ``to`` (a cluster id), or to a new
    cluster of its own with ``to=None`` (a null move if it is alone)."""

    mention: int
    to: int | None
    log_forward: float = 0.0
    log_backward: float = 0.0


# ---------------------------------------------------------------- registration

@dataclass
class UserProposal:
    """A proposal (``proposal(view, rng) -> move | None``) used at each step
    with probability ``probability``. ``name`` labels its statistics (default:
    the callable's name)."""

    proposal: Callable
    probability: float
    name: str | None = None

    def __post_init__(self) -> None:
        if self.name is None:
            self.name = getattr(self.proposal, "__name__", None) or type(self.proposal).__name__


def check_user_proposals(items: Sequence) -> list[UserProposal]:
    """Normalise ``items`` (``UserProposal`` objects or ``(callable,
    probability)`` pairs) and check them: callables, probabilities in (0, 1]
    summing to at most 1."""
    if items is None:
        return []
    if isinstance(items, UserProposal) or (isinstance(items, tuple) and len(items) == 2 and callable(items[0])):
        items = [items]          # a single proposal
    if callable(items) or not isinstance(items, (list, tuple)):
        raise OptionError("user_proposals must be a list of UserProposal(callable, probability) or "
                          f"(callable, probability) pairs, got {items!r}")
    out: list[UserProposal] = []
    for it in items:
        if isinstance(it, UserProposal):
            up = dataclasses.replace(it)
        elif isinstance(it, (tuple, list)) and len(it) == 2:
            up = UserProposal(it[0], it[1])
        else:
            raise OptionError(f"a user proposal must be UserProposal(callable, probability) or a "
                              f"(callable, probability) pair, got {it!r}")
        if not callable(up.proposal):
            raise OptionError(f"user proposal {up.name!r} is not callable")
        p = up.probability
        if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)) \
                or not math.isfinite(p) or not 0.0 < p <= 1.0:
            raise OptionError(f"user proposal {up.name!r}: probability must be in (0, 1], got {p!r}")
        out.append(up)
    total = sum(float(u.probability) for u in out)
    if total > 1.0 + 1e-9:
        raise OptionError(f"user proposal probabilities sum to {total:g}, more than 1")
    names = [u.name for u in out]
    if len(set(names)) != len(names):
        # distinct labels for the statistics
        for k, u in enumerate(out):
            u.name = f"{u.name}#{k}"
    return out


def log_ratio(move, name: str) -> float:
    """``log_backward - log_forward`` of a move, checked: the forward
    density must be finite (the proposal returned the move), the backward one
    may be ``-inf`` (an irreversible move: rejected)."""
    try:
        f = float(move.log_forward)
        b = float(move.log_backward)
    except (TypeError, ValueError):
        raise InferenceError(f"user proposal {name!r}: log_forward and log_backward must be numbers") from None
    if not math.isfinite(f):
        raise InferenceError(f"user proposal {name!r} returned a move with log_forward={f!r}: the density of a "
                             "move it proposes must be finite")
    if math.isnan(b) or b == math.inf:
        raise InferenceError(f"user proposal {name!r} returned log_backward={b!r}")
    return b - f


class UserMix:
    """The schedule of a chain that mixes user proposals with its built-in
    ones: which kind of step comes next, and each user proposal's counts.

    Steps are i.i.d.: a user step with probability ``total`` (the sum of the
    user probabilities), proposal ``k`` with probability ``p_k / total``
    among them. The number of built-in steps before the next user step is
    therefore geometric; :meth:`builtin_run` gives it."""

    def __init__(self, proposals: list[UserProposal], rng: np.random.Generator) -> None:
        self.proposals = proposals
        self.rng = rng
        self.p = np.array([float(u.probability) for u in proposals])
        self.total = float(self.p.sum())
        self.cum = np.cumsum(self.p / self.total) if proposals else np.zeros(0)
        self.gap = self._draw_gap()
        self.counts = np.zeros((len(proposals), 4), np.int64)   # proposed, null, refused (hard), accepted

    def _draw_gap(self) -> int:
        if self.total >= 1.0 - 1e-12:
            return 0
        return int(self.rng.geometric(self.total)) - 1

    def builtin_run(self) -> int:
        """Built-in steps to make before the next user step."""
        return self.gap

    def took_builtin(self, k: int) -> None:
        self.gap -= k

    def pick(self) -> int:
        """Index of the user proposal for this user step (and the gap to the next)."""
        self.gap = self._draw_gap()
        k = int(np.searchsorted(self.cum, self.rng.random(), side="right"))
        return min(k, len(self.proposals) - 1)

    def stats(self) -> dict:
        out = {}
        for u, (n, null, refused, acc) in zip(self.proposals, self.counts.tolist()):
            out[f"user_{u.name}_proposed"] = n
            out[f"user_{u.name}_null"] = null
            out[f"user_{u.name}_refused"] = refused
            out[f"user_{u.name}_accepted"] = acc
        return out


# ---------------------------------------------------------------- the view over worlds

class AtomView:
    """What a user proposal sees of a chain over possible worlds (read-only
    arrays that follow the chain as it moves).

    - ``world``: bool[n_atoms], the current truth values;
    - ``free_atoms``: the atoms the built-in single flips change (in some
      clause, in no exactly-one block);
    - ``blocks``: ids of the exactly-one blocks the built-in block moves
      change; ``block_atoms(b)``: their atoms; ``block_true[b]``: the true
      atom of block ``b``; ``atom_block[a]``: the block of atom ``a`` (-1:
      none);
    - ``net``: the :class:`~markovlogic.ground.network.GroundNetwork` (atom
      names: ``net.atom_name(a)``; clauses: ``net.clause_literals(c)``);
      ``atom(name)``: the id of the atom named e.g. ``"Smokes(Anna)"``;
    - ``score``: the current score (soft clauses satisfied, up to a constant).
    """

    def __init__(self, net, world, block_true, free_atoms, blocks, block_start, block_atoms, atom_block, fst):
        self.net = net
        self.world = readonly(world)
        self.block_true = readonly(block_true)
        self.free_atoms = readonly(np.asarray(free_atoms, dtype=np.int64))
        self.blocks = readonly(np.asarray(blocks, dtype=np.int64))
        self._block_start = block_start
        self._block_atoms = readonly(block_atoms)
        self.atom_block = readonly(atom_block)
        self._fst = fst
        self._ids = None

    @property
    def n_atoms(self) -> int:
        return len(self.world)

    def atom(self, name: str) -> int:
        """The id of the unknown atom ``name`` (written as in result files,
        without spaces: ``"Friends(Anna,Bob)"``)."""
        if self._ids is None:
            self._ids = {a: i for i, a in enumerate(self.net.atom_names())}
        key = name.replace(" ", "")
        if key not in self._ids:
            raise InferenceError(f"no unknown atom {name!r} in the network (evidence atoms and atoms that do "
                                 "not matter for the query are not in it)")
        return self._ids[key]

    def block_atoms(self, b: int) -> np.ndarray:
        return self._block_atoms[self._block_start[b]:self._block_start[b + 1]]

    @property
    def score(self) -> float:
        return float(self._fst[0])


def readonly(a: np.ndarray) -> np.ndarray:
    v = np.asarray(a).view()
    v.flags.writeable = False
    return v
