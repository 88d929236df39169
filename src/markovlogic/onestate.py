"""One state protocol: the Metropolis-Hastings step loop and the SampleRank
step loop, each written once, over any kind of state (as in Factorie:
states change by diffs, proposers yield diffs, templates score diffs).

A *state kind* is a set of numba-jitted functions over one value ``S`` (a
tuple of arrays, namedtuples and numbers that the kind defines and nobody
else reads) and a *diff*, an ``int64`` buffer that the kind fills and reads
(``diff[0]`` is the *move kind*, a small integer that indexes the MH
statistics; the rest is the kind's own encoding of the move). Loss, feature
and score buffers the kind needs live in ``S``.

Chain (MH) functions, required:

``propose(S, diff) -> (delta, logq)``
    Draw a move with the kind's own random stream and evaluate it: ``delta``
    is the change of the model's log score (the unnormalised log
    probability), ``logq = log q(back) - log q(forward)`` the Hastings
    correction (0 for a symmetric move). ``delta`` is ``nan`` for a null
    proposal and ``-inf`` for a move a hard constraint forbids; in both cases
    the state is left as it was. Otherwise the move is *pending*: ``accept``
    or ``reject`` follows before the next ``propose``. A kind may evaluate a
    move by applying it (the pending state is then the new one and ``reject``
    undoes it) or read-only (``accept`` applies it).
``accept(S, diff, delta, track)``
    Commit the pending move. ``track``: keep the kind's record of the best
    state seen (MAP), if it has one.
``reject(S, diff)``
    Drop the pending move (undo it if ``propose`` applied it).
``unit(S) -> float``
    A uniform number in ``[0, 1)`` from the kind's random stream (the
    Metropolis test and the loss-following SampleRank walk draw from it, so
    one seed fixes the whole run).

Learning (SampleRank) functions, for kinds that learn:

``loss_delta(S, diff) -> float``
    Change of the loss against the training truth if the pending move is
    committed (``accept`` keeps the kind's loss statistics up to date).
``features(S, diff, dphi)``
    The change of the learned parameters' feature values by the pending move,
    written densely into ``dphi`` (``float64[D]``, every entry set).
``set_weights(S, theta)``
    The parameters changed: make the model's scores follow ``theta``.
``score_delta(S, diff) -> float``
    ``delta`` of the pending move under the current weights (after
    ``set_weights``).
``loss(S) -> float``
    The loss of the current state (for the trace).

The generic loops (the templates below: :func:`mh_loop`,
:func:`samplerank_loop`, and the Metropolis test :func:`metropolis`) call
these functions by name. :func:`bind` turns a kind (a :class:`StateKind`)
into compiled loops for it: each template is copied into a namespace where
those names are the kind's functions, inlined at numba's level
(``inline="always"``), and compiled with numba, so each kind gets its own
specialised machine code (no call, no dispatch per step) and its own entry in
numba's on-disk cache.

Speed. ``S`` is passed whole to every function, and a compiled call passes
every array in it (several words each) and, with numba's reference counting
on, increments and decrements each array's count: on a small state that
costs more than the step (SampleRank over atoms ran 3.5x slower so). Hence
the inlining, and kinds should compile their functions and the loops
without reference counting (``StateKind(jit=dict(_nrt=False))``, helpers
they call in the loop too): the loops allocate nothing (the SampleRank
buffers come from :func:`sr_work`). With both, the loops run as fast as the
hand-written ones they replace, or faster (``bench/onestate.py``).

Why not pass the functions as arguments (numba's first-class functions)?
They work, but a compiled function that takes a dispatcher as an argument
is never found in the on-disk cache (the dispatcher's type is keyed by the
object, new in each process): every process would recompile every loop,
the first-run cost issue 29 works against (measured in ``bench/onestate.py``).
Closures over the functions miss the cache the same way. The copies made by
:func:`bind` are ordinary functions to numba's cache: each is named
``<template>__<kind>`` and stamped with the file of the kind's ``propose``
(its cache files sit in that folder's ``__pycache__`` as
``<file>.<template>__<kind>-<line>.*``), so editing that file recompiles
them, and editing a template changes its bytecode, which is part of numba's
cache key. Caveat, as everywhere in numba: a cached function does not
notice edits to the functions it calls from *other* files, so edits to
functions a kind calls in a third file (e.g. :mod:`.infer.samplesat`'s
``flip``), and edits to the templates here as seen by the compiled callers
of a bound loop (``cluster.chain.run``, ``infer.mh._mh_steps``,
``learn.samplerank_atoms.samplerank_atoms_run``, which numba caches with the
loop inside), need the cache files deleted (``find src -name '*.nb[ci]'
-delete``). Compile errors in a bound loop name the kind's file with the
template's line numbers.

The instances: atoms of a ground network (:mod:`.infer.mh`: flips, block
moves, tie moves; :mod:`.learn.samplerank_atoms`), clusterings of an
equivalence predicate (:mod:`.cluster.chain`, :mod:`.learn.samplerank`), and
a toy kind in the tests (a world of categorical variables, checked against
enumeration) that shows the protocol carries a third kind with no change
here.
"""

from __future__ import annotations

import inspect
import math
import types
from dataclasses import dataclass, field
from typing import Callable

import numba as nb
import numpy as np


# SampleRank statistics slots
SR_PROPOSED, SR_REFUSED, SR_UPDATES, SR_ACCEPTED = range(4)
SR_STATS = 4


@dataclass(frozen=True)
class StateKind:
    """A state kind (module docstring): its name (a Python identifier, unique
    among kinds: it names the compiled loops in numba's cache) and its
    jitted functions. ``jit`` options of the loops (``cache=True`` always)."""

    name: str
    propose: Callable
    accept: Callable
    reject: Callable
    unit: Callable
    loss_delta: Callable | None = None
    features: Callable | None = None
    set_weights: Callable | None = None
    score_delta: Callable | None = None
    loss: Callable | None = None
    jit: dict = field(default_factory=dict)


@dataclass
class BoundKind:
    """The compiled loops of one kind: ``mh(S, diff, n_steps, temp, ratio,
    greedy_min, track, stats) -> temp`` and ``samplerank(...)`` (see the
    templates), ``metropolis(S, delta, logq, temp, greedy_min)``."""

    kind: StateKind
    mh: Callable
    metropolis: Callable
    samplerank: Callable | None


# ---------------------------------------------------------------- the SampleRank update

@nb.njit(cache=True, _nrt=False)
def dot(a, b):
    s = 0.0
    for k in range(len(a)):
        s += a[k] * b[k]
    return s


@nb.njit(cache=True, _nrt=False)
def hildreth(theta, G, margins, C, iters, alpha):
    """theta <- argmin ||theta' - theta||^2 s.t. theta' . G[i] >= margins[i]
    (dual coordinate ascent, multipliers in [0, C]; ``alpha``: a buffer of
    ``len(G)``)."""
    m = G.shape[0]
    for i in range(m):
        alpha[i] = 0.0
    for _ in range(iters):
        changed = False
        for i in range(m):
            nn = dot(G[i], G[i])
            if nn <= 0.0:
                continue
            a_new = alpha[i] + (margins[i] - dot(theta, G[i])) / nn
            a_new = min(max(a_new, 0.0), C)
            da = a_new - alpha[i]
            if da != 0.0:
                changed = True
                alpha[i] = a_new
                for k in range(len(theta)):
                    theta[k] += da * G[i, k]
        if not changed:
            break


@nb.njit(cache=True, _nrt=False)
def rank_update(theta, dth, dloss, phi_cur, phi_gold, learnable, update, margin, C, rate, g, G, margins, alpha):
    """One SampleRank update (:mod:`.learn.samplerank_core`) for the proposal ``y -> y'``:
    ``dth = phi(y') - phi(y)`` with zeros on the fixed parameters, ``dloss =
    loss(y') - loss(y)`` (not 0), ``phi_cur = phi(y)``, ``phi_gold`` the
    features of the training truth. ``g`` (D), ``G`` (3 x D), ``margins``
    (3), ``alpha`` (3) are work buffers. Returns True when ``theta`` moved."""
    D = len(theta)
    sign = 1.0 if dloss < 0.0 else -1.0
    for k in range(D):
        g[k] = sign * dth[k]
    m = dot(theta, g)
    nn = dot(g, g)
    if nn <= 0.0:
        return False
    if update == 0:
        if m <= 0.0:
            for k in range(D):
                theta[k] += rate * g[k]
            return True
        return False
    if update == 1:
        if m < margin:
            tau = min(C, (margin - m) / nn)
            for k in range(D):
                theta[k] += tau * g[k]
            return True
        return False
    if m < margin or dot(theta, phi_gold) - dot(theta, phi_cur) < margin:
        for k in range(D):
            G[0, k] = g[k]
            if dloss < 0.0:         # y' better: the truth above y' (the better) and y
                G[1, k] = phi_gold[k] - (phi_cur[k] + dth[k])
                G[2, k] = phi_gold[k] - phi_cur[k]
            else:
                G[1, k] = phi_gold[k] - phi_cur[k]
                G[2, k] = phi_gold[k] - (phi_cur[k] + dth[k])
            if not learnable[k]:
                G[1, k] = 0.0
                G[2, k] = 0.0
        margins[0] = margin
        margins[1] = margin
        margins[2] = margin
        hildreth(theta, G, margins, C, 50, alpha)
        return True
    return False


# ---------------------------------------------------------------- templates
#
# Plain Python functions, never compiled as they are: bind() compiles copies
# in which propose, accept, ... name a kind's functions.

def metropolis(S, delta, logq, temp, greedy_min):
    """The Metropolis-Hastings test of a move of score change ``delta`` and
    Hastings correction ``logq`` at temperature ``temp`` (the chain targets
    ``p^(1/T)``). At ``T = 0`` a move is kept iff ``delta >= greedy_min`` (a
    small negative number keeps sideways moves, a small positive one only
    improving moves). A uniform number is drawn only when the test needs one."""
    if temp <= 0.0:
        return delta >= greedy_min
    a = delta / temp + logq
    if a >= 0.0:
        return True
    return unit(S) < math.exp(a)  # noqa: F821 (bound by bind())


def mh_loop(S, diff, n_steps, temp, ratio, greedy_min, track, stats):
    """``n_steps`` Metropolis-Hastings steps, the temperature multiplied by
    ``ratio`` after each; returns the temperature reached. ``stats[k, 0]``
    counts the proposals of move kind ``k`` (``diff[0]``), ``stats[k, 1]``
    the accepted ones."""
    for _ in range(n_steps):
        d, logq = propose(S, diff)  # noqa: F821
        k = diff[0]
        stats[k, 0] += 1
        if d == d and d != -np.inf:
            if metropolis(S, d, logq, temp, greedy_min):
                accept(S, diff, d, track)  # noqa: F821
                stats[k, 1] += 1
            else:
                reject(S, diff)  # noqa: F821
        temp *= ratio
    return temp


def samplerank_loop(S, diff, work, n_steps, step0, trace_phase, temp, greedy_min, update, accept_kind, margin, C,
                    rate, theta, u_sum, learnable, phi_cur, phi_gold, trace_every, trace, stats):
    """``n_steps`` SampleRank steps (:mod:`.learn.samplerank_core`), the
    global step count starting after ``step0``. For each proposal that is
    not null or refused: the loss change and the feature change; when the
    loss changes, :func:`rank_update` may move ``theta`` (then the kind's
    weights follow and the move is rescored); the chain then follows the
    model (``accept_kind`` 0: the Metropolis test at ``temp``) or the loss
    (1: a move that lowers it is taken, one that leaves it equal with
    probability 1/2). ``u_sum`` accumulates ``(t - 1) * (change of theta at
    step t)`` so that the average of the weights after every step is ``theta
    - u_sum / t`` (O(D) per update, not per step); ``phi_cur`` follows the
    features of the current state. Every ``trace_every``-th step (counted
    from ``trace_phase``) a row (step, loss, theta) goes to ``trace``; returns
    the rows written. ``stats``: proposals, refused, updates, accepted.
    ``work``: the buffers of :func:`sr_work`."""
    D = len(theta)
    dphi, dth, before, gb, G, margins, alpha = work
    rows = 0
    for it in range(n_steps):
        step = step0 + it + 1
        d, logq = propose(S, diff)  # noqa: F821
        stats[0] += 1
        if d == -np.inf:
            stats[1] += 1
        elif d == d:
            dloss = loss_delta(S, diff)  # noqa: F821
            features(S, diff, dphi)  # noqa: F821
            if abs(dloss) > 1e-12:
                for k in range(D):
                    dth[k] = dphi[k] if learnable[k] else 0.0
                    before[k] = theta[k]
                if rank_update(theta, dth, dloss, phi_cur, phi_gold, learnable, update, margin, C, rate,
                               gb, G, margins, alpha):
                    stats[2] += 1
                    for k in range(D):
                        u_sum[k] += (step - 1) * (theta[k] - before[k])
                    set_weights(S, theta)  # noqa: F821
                    d = score_delta(S, diff)  # noqa: F821
            if accept_kind == 0:
                take = metropolis(S, d, logq, temp, greedy_min)
            else:
                take = dloss < 0.0 or (dloss == 0.0 and unit(S) < 0.5)  # noqa: F821
            if take:
                accept(S, diff, d, False)  # noqa: F821
                stats[3] += 1
                for k in range(D):
                    phi_cur[k] += dphi[k]
            else:
                reject(S, diff)  # noqa: F821
        if trace_every > 0 and (trace_phase + it + 1) % trace_every == 0 and rows < trace.shape[0]:
            trace[rows, 0] = step
            trace[rows, 1] = loss(S)  # noqa: F821
            for k in range(D):
                trace[rows, 2 + k] = theta[k]
            rows += 1
    return rows


def sr_work(D: int) -> tuple:
    """The work buffers of the SampleRank loop for ``D`` parameters (the
    loops allocate nothing: they may be compiled without numba's reference
    counting, ``_nrt=False``)."""
    return (np.zeros(D), np.zeros(D), np.zeros(D), np.zeros(D), np.zeros((3, D)), np.zeros(3), np.zeros(3))


# ---------------------------------------------------------------- binding

def _inlined(fn, kind: StateKind):
    """A kind's function, inlined into the loops at numba's level: a call
    passes every array of ``S`` (a few words each), which costs more than
    the work of a step on small states (measured: SampleRank over atoms 3x
    slower without)."""
    opts = {k: v for k, v in kind.jit.items() if k != "cache"}
    return nb.njit(inline="always", **opts)(getattr(fn, "py_func", fn))


def _instance(template, namespace: dict, kind: StateKind, inline: bool = False):
    # stamped with the file of the kind's propose: numba's cache then notices
    # edits to the kind (the template's own edits change the bytecode, which
    # is part of the cache key)
    py = getattr(kind.propose, "py_func", kind.propose)
    code = template.__code__.replace(co_filename=inspect.getfile(py))
    fn = types.FunctionType(code, namespace, template.__name__, template.__defaults__)
    fn.__qualname__ = f"{template.__name__}__{kind.name}"
    fn.__doc__ = template.__doc__
    fn.__module__ = template.__module__
    opts = dict(kind.jit)
    opts["cache"] = True
    if inline:
        opts["inline"] = "always"
    return nb.njit(**opts)(fn)


_BOUND: dict[str, StateKind] = {}


def bind(kind: StateKind) -> BoundKind:
    """The generic loops compiled for ``kind`` (module docstring); lazily:
    numba compiles (or loads from its cache) at the first call."""
    if not kind.name.isidentifier():
        raise ValueError(f"a state kind's name must be an identifier, got {kind.name!r}")
    learns = kind.loss_delta is not None
    for name in ("loss_delta", "features", "set_weights", "score_delta", "loss"):
        if learns and getattr(kind, name) is None:
            raise ValueError(f"state kind {kind.name}: a kind that learns needs {name}")
    # the name keys the cache files: two kinds of one name could load each other's loops
    if _BOUND.setdefault(kind.name, kind) != kind:
        raise ValueError(f"a state kind named {kind.name!r} is bound already (kinds' names must be unique)")
    ns = dict(globals())
    for name in ("propose", "accept", "reject", "unit", "loss_delta", "features", "set_weights", "score_delta",
                 "loss"):
        fn = getattr(kind, name)
        ns[name] = _inlined(fn, kind) if fn is not None else None
    ns["metropolis"] = _instance(metropolis, ns, kind, inline=True)
    loop = _instance(mh_loop, ns, kind)
    sr = _instance(samplerank_loop, ns, kind) if learns else None
    return BoundKind(kind, loop, ns["metropolis"], sr)
