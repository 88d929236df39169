"""User proposals in the chain over clusterings (the interface is
:mod:`markovlogic.infer.proposals`).

:class:`UserMixRunner` has the signature of :func:`.chain.run`, so that
:mod:`.mh` runs either: it makes the built-in proposals in compiled stretches
(``chain.run``) and, between them, one user proposal at a time from Python.
Each step is a user step with probability the sum of the user proposals'
probabilities, so the lengths of the stretches are geometric. A user move is
scored by the compiled deltas of :mod:`.kernels` (``merge_delta``,
``split_delta``, ``move_delta``), refused if it breaks a must-link or
cannot-link constraint, and accepted with ``min(1, exp(delta / T) *
q_back / q_fwd)`` from the densities the proposal returns (at ``T = 0``:
iff it raises the score, as the built-in chain does).
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InferenceError
from ..infer.proposals import Merge, MoveMention, Split, UserMix, readonly, check_user_proposals, log_ratio
from .chain import run
from .kernels import apply_merge, apply_move, apply_split, merge_delta, move_delta, split_delta
from .model import ClusterModel


class ClusterView:
    """What a user proposal sees of a chain over clusterings (read-only;
    it follows the chain as it moves). Clusters are named by ids in
    ``[0, n)``, recycled as clusters come and go.

    - ``n``: the number of mentions; ``names[i]``: the constant of mention ``i``;
    - ``labels``: int64[n], the cluster id of each mention;
    - ``n_clusters``; ``clusters()``: the ids of the clusters;
      ``multi()``: those with two members or more;
    - ``size(c)``; ``members(c)``: the mentions of cluster ``c``;
    - ``neighbors(i)``: the mentions linked to ``i`` in the sparse pair graph
      (the pairs the evidence relates, which the edge proposals use);
    - ``model``: the :class:`~markovlogic.cluster.model.ClusterModel`.
    """

    def __init__(self, model: ClusterModel, st) -> None:
        self.model = model
        self.n = model.n
        self.names = model.mention_names
        self.labels = readonly(st.label)
        self._st = st
        md = model.arrays
        self._indptr = md.indptr
        self._indices = readonly(md.indices)

    @property
    def n_clusters(self) -> int:
        return int(self._st.counts[0])

    def clusters(self) -> np.ndarray:
        return self._st.active[:self._st.counts[0]].copy()

    def multi(self) -> np.ndarray:
        return self._st.multi[:self._st.counts[1]].copy()

    def size(self, c: int) -> int:
        return int(self._st.size[c])

    def members(self, c: int) -> np.ndarray:
        st = self._st
        out = np.empty(int(st.size[c]), np.int64)
        i = int(st.head[c])
        k = 0
        while i >= 0:
            out[k] = i
            k += 1
            i = int(st.nxt[i])
        return out

    def neighbors(self, i: int) -> np.ndarray:
        return self._indices[self._indptr[i]:self._indptr[i + 1]]


def make_runner(model: ClusterModel, user_proposals, seed: int):
    """:func:`.chain.run` itself without user proposals, else a
    :class:`UserMixRunner`."""
    user = check_user_proposals(user_proposals)
    if not user:
        return run
    return UserMixRunner(model, user, seed)


class UserMixRunner:
    """``runner(md, st, sc, n_steps, probs, t_start, t_end, score,
    best_score, best_labels, stats)``: :func:`.chain.run` with the user
    proposals mixed in (see the module docstring). ``stats`` counts the
    built-in proposals; :meth:`stats` the user ones."""

    def __init__(self, model: ClusterModel, user: list, seed: int) -> None:
        self.model = model
        self.user = user
        self.mix = UserMix(user, np.random.default_rng([int(seed), 2]))
        self._view = None

    def view(self, st) -> ClusterView:
        if self._view is None or self._view._st is not st:
            self._view = ClusterView(self.model, st)
        return self._view

    def stats(self) -> dict:
        return self.mix.stats()

    def __call__(self, md, st, sc, n_steps, probs, t_start, t_end, score, best_score, best_labels, stats) -> int:
        ratio = 1.0
        if n_steps > 1 and t_start > 0.0 and t_end > 0.0 and t_end != t_start:
            ratio = (t_end / t_start) ** (1.0 / (n_steps - 1))
        mix = self.mix
        accepted = 0
        done = 0
        while done < n_steps:
            m = min(mix.builtin_run(), n_steps - done)
            if m > 0:
                t0 = t_start * ratio ** done
                accepted += run(md, st, sc, m, probs, t0, t0 * ratio ** (m - 1), score, best_score, best_labels,
                                stats)
                mix.took_builtin(m)
                done += m
                continue
            accepted += self._user_step(mix.pick(), md, st, sc, t_start * ratio ** done, score, best_score,
                                        best_labels)
            done += 1
        return accepted

    def _user_step(self, j, md, st, sc, temp, score, best_score, best_labels) -> int:
        up = self.user[j]
        counts = self.mix.counts[j]
        counts[0] += 1
        move = up.proposal(self.view(st), self.mix.rng)
        if move is None:
            counts[1] += 1
            return 0
        n = md.n
        name = up.name

        def cluster_id(c, what):
            if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or not 0 <= c < n or st.size[c] == 0:
                raise InferenceError(f"user proposal {name!r}: {what} {c!r} is not a cluster id (see view.clusters())")
            return int(c)

        if isinstance(move, Merge):
            a, b = cluster_id(move.a, "Merge.a"), cluster_id(move.b, "Merge.b")
            if a == b:
                raise InferenceError(f"user proposal {name!r}: Merge of cluster {a} with itself")
            d = merge_delta(md, st, sc, a, b)
            apply = lambda: apply_merge(md, st, sc, a, b)          # noqa: E731
        elif isinstance(move, Split):
            c = cluster_id(move.cluster, "Split.cluster")
            part = np.asarray(move.part)
            if part.ndim != 1 or (len(part) and not np.issubdtype(part.dtype, np.integer)):
                raise InferenceError(f"user proposal {name!r}: Split.part must be a list of mentions")
            size = int(st.size[c])
            if len(part) == 0 or len(np.unique(part)) != len(part) or len(part) >= size \
                    or part.min() < 0 or part.max() >= n or np.any(st.label[part] != c):
                raise InferenceError(f"user proposal {name!r}: Split.part {part.tolist()} is not a non-empty proper "
                                     f"subset of the {size} members of cluster {c}")
            mem = self.view(st).members(c)
            k = len(mem)
            st.buf[:k] = mem
            st.side[mem] = 0
            st.side[part] = 1
            d = split_delta(md, st, sc, c, k)
            apply = lambda: apply_split(md, st, sc, c, k)          # noqa: E731
        elif isinstance(move, MoveMention):
            i = move.mention
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < n:
                raise InferenceError(f"user proposal {name!r}: MoveMention.mention {i!r} is not a mention in [0, {n})")
            i = int(i)
            if move.to is None:
                if st.size[st.label[i]] == 1:
                    counts[1] += 1
                    return 0
                target = -1
            else:
                target = cluster_id(move.to, "MoveMention.to")
                if target == st.label[i]:
                    counts[1] += 1
                    return 0
            d = move_delta(md, st, sc, i, target)
            apply = lambda: apply_move(md, st, sc, i, target)      # noqa: E731
        else:
            raise InferenceError(f"user proposal {name!r} returned {type(move).__name__}; over clusterings a "
                                 "proposal returns a Merge, Split or MoveMention (or None)")
        lr = log_ratio(move, name)
        if d == -math.inf:
            counts[2] += 1
            return 0
        if temp <= 0.0:
            ok = d > 1e-12
        else:
            x = d / temp + lr
            ok = x >= 0.0 or (x > -math.inf and self.mix.rng.random() < math.exp(x))
        if not ok:
            return 0
        apply()
        counts[3] += 1
        score[0] += d
        if score[0] > best_score[0] + 1e-12:
            best_score[0] = score[0]
            best_labels[:] = st.label
        return 1
