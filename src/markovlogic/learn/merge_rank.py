"""SampleRank on the states greedy agglomerative inference visits (Culotta's
thesis, chapter 8: error-driven training of a model used by greedy
agglomerative clustering; Daume and Marcu's LaSO).

Greedy agglomerative MAP (``cluster/agglomerative.py``) starts from
singletons and repeatedly takes the merge of highest score while it is
positive. Its decisions are what the weights must get right, so learning
walks the same search on the training worlds. At each state, the candidate
merges (pairs of clusters the evidence links) each have a feature vector
(the change of the model's features that merge makes: pair formulas, set-
level features, linkage features) and a *gain* against the training truth,
``TP - FP``: the co-referent minus the non-co-referent pairs it would join.
A merge is *good* when its gain is positive. The model's action is its top
merge when that scores above 0 and *stop* otherwise; it is an error when it
merges a bad pair, or stops while a good merge remains. On an error the
weights move so that a correct action (the best-scoring good merge, or stop
when none is good) outranks the model's by a margin:

* ``perceptron``: ``theta += rate * (f_correct - f_chosen)``;
* ``mira``: the smallest such change that makes the correct action win by
  ``margin`` (closed form, step at most ``C``).

The search then continues from the model's own choice (``follow='model'``:
the states inference visits, its mistakes included; when the model stops
early, the best good merge keeps the walk going) or only along good merges
(``follow='oracle'``). Weights are averaged over all steps.

``update='logistic'`` learns from the same states differently (DAgger,
Ross et al. 2011): every candidate merge met along the walks is an example
"is this merge good?" weighted by ``|gain|``; a logistic regression (L2)
is fit on all examples met so far, and the next walk follows the new
model.

Learning ends by *calibration*: the weight of the per-cluster constant
(a ``size(P) > 0`` set-level feature: every merge changes it by -1) is set
to maximise the training worlds' pairwise F1 under the very inference the
model will run with, over a grid; the reported training loss is that of the
returned model under that inference.

Two stages when linkage features read the pair layer's ``score(x, y)``:
the pair formulas' weights are first fit as a logistic model over the
candidate pairs (pseudo-likelihood of the pair atoms given the others is
exactly that), cross-fitted across the training parts so that the cluster
layer learns on scores like those it will see on new data; then the
linkage and set-level weights are learned as above with the pair scores
fixed.

Hyperparameters (the update rule, epochs, C, the logistic regularisation)
are chosen on a held-out part of the training data (the training worlds:
with ``world_splits='one-out'`` each of three or more held out in turn,
trained on the others (beyond five worlds, five groups of them), with
``'halves'`` each half of them; or halves of
the single world: of its gold clusters, or with ``held_out='components'``
of the connected components of its candidate graph, e.g. whole
documents): each candidate is trained on the other part(s), calibrated
there, and scored by pairwise F1 on the held-out part under agglomerative
inference; the best is retrained on everything.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import numba as nb
import numpy as np

from ..errors import LearningError, OptionError
from ..cluster.agglomerative import _gain_pairs
from ..cluster.chain import _set_weights, _to_theta
from ..cluster.kernels import apply_merge, merge_delta

UPDATES = {"perceptron": 0, "mira": 1, "logistic": 2}
MAX_EXAMPLES = 200_000      # merges a logistic fit reads (the wrong ones sampled beyond)
FOLLOW = {"model": 0, "oracle": 1}
HELD_OUT = ("clusters", "components")
# the held-out splits of two or more training worlds: "one-out" (with three or more, each world held out in
# turn, trained on all the others: fits closest to the returned model's; beyond MAX_WORLD_SPLITS worlds, that many
# groups of them) or "halves" (each half of the worlds held out in turn); with two worlds both are the same splits.
# Adopted as the default on 2026-11-28 by a rule written before its development check (examples/er/README.md)
WORLD_SPLITS = ("one-out", "halves")
MAX_WORLD_SPLITS = 5        # "one-out" over more worlds holds out this many groups of them (five fits per choice)
# the pair layer a learned model carries: the mean of its cross-fitted fits' weights ("mean": the scores the
# cluster layer was trained and calibrated on), or one fit on all the training parts ("refit")
PAIR_LAYER = ("mean", "refit")


LINKAGES = ("all", "max", "sum", "mean", "min")
LINKAGE_RULES = ("one-se", "best")
SIMPLEST_FIRST = ("max", "mean", "sum", "min", "all")     # the one-standard-error rule's order
SE_RESAMPLES = 500
VALUED_LINKS = ("sum", "max", "mean", "min")


SET_FEATURES = ("on", "off")


def restrict_set_features(params: "MergeParameters", model, choice: str) -> "MergeParameters | None":
    """``params`` with the set-level features off (``choice='off'``: every
    learnable one but the per-cluster constant fixed at 0, the pair layer and
    linkage alone: "LR + closure" and its kin), or itself ("on"); None when
    there is nothing to switch off."""
    if choice == "on":
        return params
    learnable = params.learnable.copy()
    initial = params.initial.copy()
    found = False
    for j in range(len(model.set_features)):
        p = int(params.sf_param[j])
        if p < 0 or p == params.const or not learnable[p]:
            continue
        found = True
        learnable[p] = False
        initial[p] = 0.0
    if not found:
        return None
    return replace(params, learnable=learnable, initial=initial)


def restrict_linkage(params: "MergeParameters", model, linkage: str) -> "MergeParameters | None":
    """``params`` with only the valued linkage features of kind ``linkage``
    left learnable (the others fixed at 0); None when the model has no
    learnable one of that kind ("all": ``params`` itself)."""
    if linkage == "all":
        return params
    learnable = params.learnable.copy()
    initial = params.initial.copy()
    found = False
    for k, f in enumerate(model.link_features):
        p = int(params.lk_param[k])
        if p < 0 or f.spec.kind not in VALUED_LINKS:
            continue
        if f.spec.kind == linkage:
            found = found or bool(learnable[p])
        else:
            learnable[p] = False
            initial[p] = 0.0
    if not found:
        return None
    return replace(params, learnable=learnable, initial=initial)


@dataclass
class MergeRankOptions:
    """Options of SampleRank over agglomerative states (``mln learn --method
    samplerank --inference agglomerative``). A tuple in ``update``,
    ``epochs``, ``C`` or ``l2`` is a grid searched on held-out training data
    (``select``)."""

    update: str | tuple = ("mira", "perceptron", "logistic")
    epochs: int | tuple | None = None     # None: 5 for perceptron and MIRA, 3 walks for logistic
    C: float | tuple = 1.0                # MIRA's largest step
    margin: float = 1.0
    learning_rate: float = 1.0            # perceptron
    l2: float | tuple = (0.1, 1.0)        # logistic: inverse regularisation (scikit-learn's C)
    follow: str = "model"
    average: bool = True
    calibrate: bool = True
    select: bool = True
    seed: int = 0
    max_seconds: float | None = None
    # which of the model's valued linkage features (link sum/max/mean/min) the cluster layer may use, a grid
    # chosen on held-out training data after the update rule: "all", or one kind alone ("max": the pair
    # scores' single link, LR + closure; "sum": correlation clustering; "mean": average link)
    linkage: str | tuple = ("all", "max", "sum", "mean")
    # how the linkage is chosen among those: "best", the highest held-out F1; "one-se", the first in the order max,
    # mean, sum, min, all (fewest weights, the pair layer's own decision first) whose held-out pairwise F1 is within
    # one standard error of the best's (the paired difference's, over resamples of the held-out gold clusters).
    # "best" since change 8 (examples/er/README.md): on author-like development data one-se's single link chained
    # (precision .70) on the folds where it overrode a better held-out choice
    linkage_rule: str = "best"
    # how a single training world is halved for held-out choices and the pair layer's cross-fitting:
    # "clusters" (halves of its gold clusters) or "components" (halves of the connected components of its
    # candidate graph: whole documents of a coreference corpus, each a sub-problem with all its mentions; halves
    # of gold clusters leave out the other half's mentions, an easier problem whose calibrated threshold
    # over-merges on the whole: measured on GUM, examples/coref/README.md)
    held_out: str = "clusters"
    # how two or more training worlds are split for the held-out choices (``WORLD_SPLITS``): "one-out" or "halves"
    world_splits: str = "one-out"
    # which pair formulas the pair layer may use, a grid chosen by the cross-fitted log-likelihood of the
    # training pairs' labels: "all", or "values" (similarities as values and exact comparisons, without the
    # formulas that threshold a similarity into bins: fewer weights, for small training data)
    pair_features: str | tuple = ("all", "values")
    # the pair layer the learned model carries (``PAIR_LAYER``): "mean" of the cross-fitted fits (each on all parts
    # but one), whose scores are those the linkage weights and the merge threshold were learned on; "refit" on all
    # parts gives more extreme scores (the same regularisation on more data) than the threshold was calibrated for
    pair_layer: str = "mean"
    # the set-level features (other than the per-cluster constant) "on", or "off" (the pair layer and the
    # linkage alone), a grid chosen on held-out training data after the linkage; a model without a learnable
    # set-level feature has nothing to choose
    set_features: str | tuple = ("on", "off")

    def check(self) -> "MergeRankOptions":
        for u in _grid(self.update):
            if u not in UPDATES:
                raise OptionError(f"unknown update {u!r}; choose one of {', '.join(UPDATES)}")
        for e in (() if self.epochs is None else _grid(self.epochs)):
            if isinstance(e, bool) or not isinstance(e, (int, np.integer)) or e < 1:
                raise OptionError(f"epochs must be a positive integer, got {e!r}")
        for name in ("C", "l2"):
            for v in _grid(getattr(self, name)):
                if not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0):
                    raise OptionError(f"{name} must be a positive number, got {v!r}")
        for name in ("margin", "learning_rate"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0):
                raise OptionError(f"{name.replace('_', ' ')} must be a positive number, got {v!r}")
        if self.follow not in FOLLOW:
            raise OptionError(f"follow must be one of {', '.join(FOLLOW)}, got {self.follow!r}")
        if self.max_seconds is not None and not (self.max_seconds > 0):
            raise OptionError(f"max_seconds must be positive, got {self.max_seconds!r}")
        for v in _grid(self.linkage):
            if v not in LINKAGES:
                raise OptionError(f"unknown linkage {v!r}; choose among {', '.join(LINKAGES)}")
        if self.linkage_rule not in LINKAGE_RULES:
            raise OptionError(f"linkage rule must be one of {', '.join(LINKAGE_RULES)}, got {self.linkage_rule!r}")
        if self.pair_layer not in PAIR_LAYER:
            raise OptionError(f"pair layer must be one of {', '.join(PAIR_LAYER)}, got {self.pair_layer!r}")
        if self.held_out not in HELD_OUT:
            raise OptionError(f"held-out must be one of {', '.join(HELD_OUT)}, got {self.held_out!r}")
        if self.world_splits not in WORLD_SPLITS:
            raise OptionError(f"world splits must be one of {', '.join(WORLD_SPLITS)}, got {self.world_splits!r}")
        for v in _grid(self.set_features):
            if v not in SET_FEATURES:
                raise OptionError(f"set features must be on or off, got {v!r}")
        for v in _grid(self.pair_features):
            if v not in PAIR_FEATURES:
                raise OptionError(f"unknown pair features {v!r}; choose among {', '.join(PAIR_FEATURES)}")
        return self


def _expit(s: np.ndarray) -> np.ndarray:
    """The logistic function without overflow warnings for large |s|."""
    from scipy.special import expit

    return expit(s)


def _grid(v) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,)


# ---------------------------------------------------------------- parameters


@dataclass
class MergeParameters:
    """How ``theta`` sets the kernel weights: quantity ``q`` takes
    ``theta[q_param[q]] * q_coef[q]``, set-level feature ``j`` takes
    ``theta[sf_param[j]]``, linkage feature ``k`` ``theta[lk_param[k]]``
    (-1: no parameter). ``const``: the parameter of the per-cluster constant
    (calibrated), -1 when the model has none."""

    names: list[str]
    q_param: np.ndarray
    q_coef: np.ndarray
    sf_param: np.ndarray
    lk_param: np.ndarray
    learnable: np.ndarray
    initial: np.ndarray
    const: int = -1
    formula_of: dict = field(default_factory=dict)   # parameter -> formula index (pair formulas)


def merge_parameters(model, mln) -> MergeParameters:
    """One parameter per pair formula (none when the model has a pair layer:
    those weights are learned first, see :func:`fit_pair_layer`), per
    set-level feature and per linkage feature."""
    names: list[str] = []
    keys: dict = {}
    Q = model.arrays.n_q
    q_param = np.full(Q, -1, np.int64)
    q_coef = np.zeros(Q)
    initial: list[float] = []
    learnable: list[bool] = []
    formula_of = {}
    if not model.pair_layer:
        for q, qty in enumerate(model.quantities):
            key = _param_key(qty)
            if key is None:
                continue
            if key not in keys:
                keys[key] = len(names)
                w, fixed = _initial(qty, mln)
                names.append(qty.name)
                initial.append(w)
                learnable.append(not fixed)
                formula_of[keys[key]] = key
            q_param[q] = keys[key]
            q_coef[q] = qty.sign * qty.scale
    J = len(model.arrays.sf_kind)
    sf_param = np.full(J, -1, np.int64)
    const = -1
    for j, f in enumerate(model.set_features):
        sf_param[j] = len(names)
        if _is_constant(f.spec) and const < 0 and not f.spec.fixed:
            const = len(names)
        names.append(f.spec.describe())
        initial.append(float(f.weight))
        learnable.append(not f.spec.fixed)
    K = len(model.arrays.lk_kind)
    lk_param = np.full(K, -1, np.int64)
    for k, f in enumerate(model.link_features):
        lk_param[k] = len(names)
        names.append(f.spec.describe())
        initial.append(float(f.weight))
        learnable.append(not f.spec.fixed)
    return MergeParameters(names, q_param, q_coef, sf_param, lk_param, np.array(learnable, bool),
                           np.array(initial, np.float64), const, formula_of)


def _is_constant(spec) -> bool:
    """``size(P) > 0`` (or ``>= 1``, ``>= 0``...): 1 on every cluster."""
    return spec.kind == "size" and not getattr(spec, "link", False) and (
        (spec.op == ">" and (spec.threshold or 0.0) < 1.0) or (spec.op == ">=" and (spec.threshold or 0.0) <= 1.0))


def _param_key(qty):
    """The parameter a pair quantity belongs to: its formula, or its similarity statement."""
    if qty.kind != "feature":
        return None
    if qty.spec is not None:
        return ("spec", qty.spec)
    if qty.formula >= 0:
        return ("formula", qty.formula)
    return None


def _initial(qty, mln) -> tuple[float, bool]:
    if qty.spec is not None:
        return float(qty.spec.weight or 0.0), bool(qty.spec.fixed)
    decl = mln.formulas[qty.formula]
    return (float(decl.weight) if decl.weight is not None else 0.0), bool(decl.fixed)


@nb.njit(cache=True)
def _theta_of(md, dphi, q_param, q_coef, sf_param, lk_param, out):
    """The feature change ``dphi`` (quantities, set-level, linkage) in parameter space:
    the clustering chain's map (``cluster.chain._to_theta``) plus the linkage features."""
    _to_theta(md, dphi, q_param, q_coef, sf_param, out)
    base = md.n_q + len(md.sf_kind)
    for j in range(len(md.lk_kind)):
        k = lk_param[j]
        if k >= 0:
            out[k] += dphi[base + j]


@nb.njit(cache=True)
def set_weights(md, theta, q_param, q_coef, sf_param, lk_param):
    """``cluster.chain._set_weights`` plus the linkage features' weights."""
    _set_weights(md, theta, q_param, q_coef, sf_param)
    for j in range(len(md.lk_kind)):
        k = lk_param[j]
        if k >= 0:
            md.w_lk[j] = theta[k]


# ---------------------------------------------------------------- the walk (numba)


@nb.njit(cache=True)
def _gain(st, A, B, gold, cnt, buf):
    """TP - FP of merging clusters ``A`` and ``B`` against the gold labels."""
    tp, pairs = _gain_pairs(st, A, B, gold, cnt, buf)
    return 2.0 * tp - pairs


@nb.njit(cache=True)
def _ensure(capacity_needed, ca, cb, va, vb, feat, score, gain):
    cap = len(ca)
    if capacity_needed <= cap:
        return ca, cb, va, vb, feat, score, gain
    new = max(2 * cap, capacity_needed)
    D = feat.shape[1]
    ca2 = np.empty(new, np.int64)
    cb2 = np.empty(new, np.int64)
    va2 = np.empty(new, np.int64)
    vb2 = np.empty(new, np.int64)
    f2 = np.empty((new, D))
    s2 = np.empty(new)
    g2 = np.empty(new)
    ca2[:cap] = ca
    cb2[:cap] = cb
    va2[:cap] = va
    vb2[:cap] = vb
    f2[:cap] = feat
    s2[:cap] = score
    g2[:cap] = gain
    return ca2, cb2, va2, vb2, f2, s2, g2


@nb.njit(cache=True)
def _dot(theta, feat, e):
    s = 0.0
    for k in range(len(theta)):
        s += theta[k] * feat[e, k]
    return s


@nb.njit(cache=True)
def _update(theta, g, v, learnable, update, margin, C, rate):
    """Move ``theta`` so that ``theta . g`` (now ``v``) reaches the margin;
    True when it moved."""
    nn = 0.0
    for k in range(len(theta)):
        if not learnable[k]:
            g[k] = 0.0
        nn += g[k] * g[k]
    if nn <= 0.0:
        return False
    if update == 0:
        if v > 0.0:
            return False
        for k in range(len(theta)):
            theta[k] += rate * g[k]
        return True
    if v >= margin:
        return False
    tau = min(C, (margin - v) / nn)
    for k in range(len(theta)):
        theta[k] += tau * g[k]
    return True


@nb.njit(cache=True, nogil=True)
def walk(md, st, sc, theta, theta_sum, learnable, q_param, q_coef, sf_param, lk_param, gold, n_gold,
         learn, update, follow, margin, C, rate, collect, inst_f, inst_g, stats, gold_pairs):
    """One walk of greedy agglomerative search on a training world from the
    state ``st``. With ``learn``, updates ``theta`` on errors (module
    docstring) and adds it to ``theta_sum`` after every step; with
    ``collect``, records every candidate merge met (features, gain) into
    ``inst_f``/``inst_g`` (grown as needed). ``stats``: steps, errors,
    merges, examples. Following the model, its wrong merges are taken (the
    states inference visits) while the wrong pairs joined stay at most
    ``gold_pairs``; beyond, a walk takes good merges only (a runaway model
    would otherwise build clusters no inference near the end of learning
    visits, at quadratic cost). Returns ``(inst_f, inst_g)``."""
    n = md.n
    D = len(theta)
    cap = 1024
    ca = np.empty(cap, np.int64)
    cb = np.empty(cap, np.int64)
    va = np.empty(cap, np.int64)
    vb = np.empty(cap, np.int64)
    feat = np.empty((cap, D))
    score = np.empty(cap)
    gain = np.empty(cap)
    E = 0
    version = np.zeros(n, np.int64)
    seen = np.full(n, -1, np.int64)
    cnt = np.zeros(max(n_gold, 1), np.int64)
    buf = np.zeros(n + 1, np.int64)
    fvec = np.zeros(D)
    g = np.zeros(D)
    n_inst = int(stats[3])
    wrong = 0.0
    stamp = 0
    set_weights(md, theta, q_param, q_coef, sf_param, lk_param)
    # initial candidates: every linked pair of clusters
    for t in range(st.counts[0]):
        K = st.active[t]
        stamp += 1
        seen[K] = stamp
        i = st.head[K]
        while i >= 0:
            for p in range(md.indptr[i], md.indptr[i + 1]):
                L = st.label[md.indices[p]]
                if L <= K or seen[L] == stamp:
                    continue
                seen[L] = stamp
                d = merge_delta(md, st, sc, K, L)
                if d == -np.inf:
                    continue
                ca, cb, va, vb, feat, score, gain = _ensure(E + 1, ca, cb, va, vb, feat, score, gain)
                _theta_of(md, sc.dphi, q_param, q_coef, sf_param, lk_param, fvec)
                ca[E] = K
                cb[E] = L
                va[E] = version[K]
                vb[E] = version[L]
                for k in range(D):
                    feat[E, k] = fvec[k]
                score[E] = _dot(theta, feat, E)
                gain[E] = _gain(st, K, L, gold, cnt, buf)
                if collect:
                    if n_inst >= inst_f.shape[0]:
                        nf = np.empty((2 * inst_f.shape[0] + 16, D))
                        ng = np.empty(2 * inst_f.shape[0] + 16)
                        nf[:n_inst] = inst_f[:n_inst]
                        ng[:n_inst] = inst_g[:n_inst]
                        inst_f = nf
                        inst_g = ng
                    for k in range(D):
                        inst_f[n_inst, k] = fvec[k]
                    inst_g[n_inst] = gain[E]
                    n_inst += 1
                E += 1
            i = st.nxt[i]
    rescore = False
    while True:
        # scan: the model's top, the best good
        top = -1
        best_good = -1
        live = 0
        for e in range(E):
            a = ca[e]
            b = cb[e]
            if st.size[a] == 0 or st.size[b] == 0 or version[a] != va[e] or version[b] != vb[e]:
                continue
            if rescore:
                score[e] = _dot(theta, feat, e)
            # compact in place
            ca[live] = a
            cb[live] = b
            va[live] = va[e]
            vb[live] = vb[e]
            if live != e:
                for k in range(D):
                    feat[live, k] = feat[e, k]
            score[live] = score[e]
            gain[live] = gain[e]
            if top < 0 or score[live] > score[top]:
                top = live
            if gain[live] > 0.0 and (best_good < 0 or score[live] > score[best_good]):
                best_good = live
            live += 1
        E = live
        rescore = False
        if E == 0:
            break
        stats[0] += 1
        top_score = score[top]
        if learn:
            err = False
            if top_score > 0.0 and gain[top] <= 0.0:
                # a bad merge: the best good one (or stopping) should win
                if best_good >= 0:
                    for k in range(D):
                        g[k] = feat[best_good, k] - feat[top, k]
                    v = score[best_good] - top_score
                else:
                    for k in range(D):
                        g[k] = -feat[top, k]
                    v = -top_score
                err = True
            elif top_score <= 0.0 and best_good >= 0:
                for k in range(D):
                    g[k] = feat[best_good, k]
                v = score[best_good]
                err = True
            if err:
                stats[1] += 1
                if _update(theta, g, v, learnable, update, margin, C, rate):
                    set_weights(md, theta, q_param, q_coef, sf_param, lk_param)
                    for e in range(E):
                        score[e] = _dot(theta, feat, e)
                    top = 0
                    best_good = -1
                    for e in range(E):
                        if score[e] > score[top]:
                            top = e
                        if gain[e] > 0.0 and (best_good < 0 or score[e] > score[best_good]):
                            best_good = e
                    top_score = score[top]
            for k in range(D):
                theta_sum[k] += theta[k]
        # the action
        pick = -1
        if follow == 0 and top_score > 0.0 and (gain[top] > 0.0 or wrong <= gold_pairs):
            pick = top
        elif best_good >= 0:
            pick = best_good
        if pick < 0:
            break
        A = ca[pick]
        B = cb[pick]
        sa = float(st.size[A])
        sb = float(st.size[B])
        wrong += (sa * sb - gain[pick]) / 2.0       # gain = TP - FP and TP + FP = |A||B|
        merge_delta(md, st, sc, A, B)      # the merged summary into slot 0
        Kc = apply_merge(md, st, sc, A, B)
        stats[2] += 1
        version[A] += 1
        version[B] += 1
        # new candidates of the merged cluster
        stamp += 1
        seen[Kc] = stamp
        i = st.head[Kc]
        while i >= 0:
            for p in range(md.indptr[i], md.indptr[i + 1]):
                L = st.label[md.indices[p]]
                if L == Kc or seen[L] == stamp:
                    continue
                seen[L] = stamp
                d = merge_delta(md, st, sc, Kc, L)
                if d == -np.inf:
                    continue
                ca, cb, va, vb, feat, score, gain = _ensure(E + 1, ca, cb, va, vb, feat, score, gain)
                _theta_of(md, sc.dphi, q_param, q_coef, sf_param, lk_param, fvec)
                ca[E] = Kc
                cb[E] = L
                va[E] = version[Kc]
                vb[E] = version[L]
                for k in range(D):
                    feat[E, k] = fvec[k]
                score[E] = _dot(theta, feat, E)
                gain[E] = _gain(st, Kc, L, gold, cnt, buf)
                if collect:
                    if n_inst >= inst_f.shape[0]:
                        nf = np.empty((2 * inst_f.shape[0] + 16, D))
                        ng = np.empty(2 * inst_f.shape[0] + 16)
                        nf[:n_inst] = inst_f[:n_inst]
                        ng[:n_inst] = inst_g[:n_inst]
                        inst_f = nf
                        inst_g = ng
                    for k in range(D):
                        inst_f[n_inst, k] = fvec[k]
                    inst_g[n_inst] = gain[E]
                    n_inst += 1
                E += 1
            i = st.nxt[i]
    stats[3] = n_inst
    return inst_f, inst_g


# ---------------------------------------------------------------- driver


def _agglomerative_labels(model, md) -> np.ndarray:
    """Greedy agglomerative MAP of ``model`` with the kernel arrays ``md``
    (no polishing: the merges the weights were trained for)."""
    from ..cluster.agglomerative import agglomerate

    st, sc = model.new_state()
    if md is not model.arrays:
        from ..cluster.kernels import init_state, make_scratch

        init_state(md, st, model.initial_labels)
        sc = make_scratch(md)
    agglomerate(md, st, sc, model.n)
    return st.label.copy()


def pair_counts(labels: np.ndarray, gold: np.ndarray) -> tuple[float, float, float]:
    """(TP, predicted, gold) unordered co-clustered pairs."""
    def pairs(x):
        _, c = np.unique(x, return_counts=True)
        return float(np.sum(c * (c - 1) / 2))
    key = labels.astype(np.int64) * (int(gold.max()) + 1 if len(gold) else 1) + gold
    return pairs(key), pairs(labels), pairs(gold)


def f1_of(counts) -> float:
    tp, pp, gp = counts
    if pp + gp == 0:
        return 1.0
    return 2.0 * tp / (pp + gp)


class _World:
    """A training part: its model, kernel arrays with their own weights, gold."""

    def __init__(self, model):
        self.model = model
        self.md = model.arrays._replace(w_q=model.arrays.w_q.copy(), w_sf=model.arrays.w_sf.copy(),
                                        w_lk=model.arrays.w_lk.copy())
        self.gold = np.asarray(model.gold_labels, np.int64)
        self.n_gold = int(self.gold.max()) + 1 if len(self.gold) else 1
        sizes = np.bincount(self.gold) if len(self.gold) else np.zeros(0)
        self.gold_pairs = float(np.sum(sizes * (sizes - 1) / 2.0))

    def labels(self, theta, params) -> np.ndarray:
        set_weights(self.md, theta, params.q_param, params.q_coef, params.sf_param, params.lk_param)
        return _agglomerative_labels(self.model, self.md)

    def counts(self, theta, params):
        return pair_counts(self.labels(theta, params), self.gold)


def _pooled_f1(worlds, theta, params) -> float:
    tp = pp = gp = 0.0
    for w in worlds:
        a, b, c = w.counts(theta, params)
        tp, pp, gp = tp + a, pp + b, gp + c
    return f1_of((tp, pp, gp))


def _train_online(worlds, params, update, epochs, opt, deadline) -> tuple[np.ndarray, dict]:
    theta = params.initial.copy()
    theta_sum = np.zeros_like(theta)
    stats = np.zeros(4, np.float64)
    D = len(theta)
    dummy_f = np.zeros((0, D))
    dummy_g = np.zeros(0)
    rng = np.random.default_rng(opt.seed)
    for epoch in range(epochs):
        for w_i in rng.permutation(len(worlds)):
            w = worlds[w_i]
            st, sc = w.model.new_state()
            walk(w.md, st, sc, theta, theta_sum, params.learnable, params.q_param, params.q_coef,
                 params.sf_param, params.lk_param, w.gold, w.n_gold, True, UPDATES[update], FOLLOW[opt.follow],
                 float(opt.margin), float(C_of(opt)), float(opt.learning_rate), False, dummy_f, dummy_g, stats,
                 w.gold_pairs)
        if deadline is not None and time.perf_counter() > deadline:
            break
    steps = max(stats[0], 1.0)
    final = theta_sum / steps if opt.average and stats[0] > 0 else theta.copy()
    final[~params.learnable] = params.initial[~params.learnable]
    return final, {"steps": int(stats[0]), "errors": int(stats[1]), "merges": int(stats[2])}


def C_of(opt) -> float:
    return opt.C if not isinstance(opt.C, (tuple, list)) else opt.C[0]


def _fit_logistic(x, y, sw, l2, learnable, initial) -> np.ndarray:
    """L2-regularised logistic regression on standardised columns, mapped back
    to raw weights; fixed parameters keep their value (an offset). The
    intercept goes to no parameter (the per-cluster constant is calibrated
    afterwards)."""
    from scipy.optimize import minimize

    free = np.flatnonzero(learnable)
    fixed = np.flatnonzero(~learnable)
    offset = x[:, fixed] @ initial[fixed] if len(fixed) else np.zeros(len(y))
    xf = x[:, free]
    mu = xf.mean(axis=0) if len(xf) else np.zeros(len(free))
    sd = xf.std(axis=0) if len(xf) else np.ones(len(free))
    sd[sd < 1e-12] = 1.0
    z = (xf - mu) / sd
    zb = np.hstack([z, np.ones((len(z), 1))])
    lam = 1.0 / l2

    def loss(w):
        s = zb @ w + offset
        value = np.sum(sw * (np.logaddexp(0.0, s) - y * s)) + 0.5 * lam * np.sum(w[:-1] ** 2)
        grad = zb.T @ (sw * (_expit(s) - y))
        grad[:-1] += lam * w[:-1]
        return value, grad

    w = minimize(loss, np.zeros(zb.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 2000}).x
    theta = initial.copy()
    theta[free] = w[:-1] / sd
    return theta


def _train_logistic(worlds, params, epochs, l2, opt, deadline) -> tuple[np.ndarray, dict]:
    theta = params.initial.copy()
    D = len(theta)
    xs, gs = [], []
    stats = np.zeros(4, np.float64)
    for epoch in range(max(epochs, 1)):
        follow = FOLLOW["oracle"] if epoch == 0 else FOLLOW["model"]
        for w in worlds:
            st, sc = w.model.new_state()
            stats[3] = 0
            f, g = walk(w.md, st, sc, theta, np.zeros(D), params.learnable, params.q_param, params.q_coef,
                        params.sf_param, params.lk_param, w.gold, w.n_gold, False, 0, follow, 1.0, 1.0, 1.0,
                        True, np.zeros((256, D)), np.zeros(256), stats, w.gold_pairs)
            k = int(stats[3])
            xs.append(f[:k].copy())
            gs.append(g[:k].copy())
        x = np.vstack(xs)
        g = np.concatenate(gs)
        if len(g) == 0 or not (g > 0).any() or (g > 0).all():
            break
        w = np.maximum(np.abs(g), 1.0)
        if len(g) > MAX_EXAMPLES:
            # every good merge, and a uniform sample of the others weighted up to stand for them all
            rng = np.random.default_rng(opt.seed + epoch)
            good = np.flatnonzero(g > 0)
            bad = np.flatnonzero(g <= 0)
            k = max(MAX_EXAMPLES - len(good), MAX_EXAMPLES // 4)
            if k < len(bad):
                pick = rng.choice(bad, size=k, replace=False)
                w = w.copy()
                w[pick] *= len(bad) / k
                keep = np.concatenate([good, pick])
                x, g, w = x[keep], g[keep], w[keep]
        theta = _fit_logistic(x, (g > 0).astype(np.float64), w, l2, params.learnable, params.initial)
        if deadline is not None and time.perf_counter() > deadline:
            break
    return theta, {"examples": int(sum(len(g) for g in gs)), "walks": int(stats[0])}


def _sequence(world, theta, params):
    """The merge sequence of greedy search run to the end on a training world
    (``cluster.agglomerative.merge_sequence``): per step its score and the
    co-referent and total pairs it joins; and the initial state's counts."""
    from ..cluster.agglomerative import merge_sequence
    from ..cluster.kernels import init_state, make_scratch

    md = world.md
    set_weights(md, theta, params.q_param, params.q_coef, params.sf_param, params.lk_param)
    st, _ = world.model.new_state()
    init_state(md, st, world.model.initial_labels)
    sc = make_scratch(md)
    n = world.model.n
    deltas = np.zeros(max(n, 1))
    tps = np.zeros(max(n, 1))
    pps = np.zeros(max(n, 1))
    tp0, pp0, gp = pair_counts(world.model.initial_labels, world.gold)
    k = merge_sequence(md, st, sc, world.gold, world.n_gold, deltas, tps, pps, tp0, pp0, gp)
    return deltas[:k], tps[:k], pps[:k], tp0, pp0, gp


def _calibrate(worlds, theta, params) -> tuple[np.ndarray, float, float]:
    """The per-cluster constant that maximises pooled training pairwise F1
    under greedy agglomerative inference, exactly: shifting that constant
    shifts every merge's score alike, so greedy search with the shift takes a
    prefix of the merges it takes without stopping, one run per world
    (``merge_sequence``). Of the shifts with the best F1, the middle one."""
    if params.const < 0 or not params.learnable[params.const]:
        return theta, _pooled_f1(worlds, theta, params), 0.0
    seqs = [_sequence(w, theta, params) for w in worlds]
    prefix_min = [np.minimum.accumulate(d) if len(d) else d for d, *_ in seqs]
    values = np.unique(np.concatenate([pm for pm in prefix_min if len(pm)] + [np.zeros(1)]))
    # thresholds t: a world merges until the first step whose score is <= t
    mids = (values[:-1] + values[1:]) / 2.0 if len(values) > 1 else np.zeros(0)
    thresholds = np.concatenate([[values[0] - 1.0], mids, [values[-1] + 1.0]])
    tp = np.zeros(len(thresholds))
    pp = np.zeros(len(thresholds))
    gp = 0.0
    for (d, tps, pps, tp0, pp0, g), pm in zip(seqs, prefix_min):
        ctp = np.concatenate([[0.0], np.cumsum(tps)])
        cpp = np.concatenate([[0.0], np.cumsum(pps)])
        stop = len(pm) - np.searchsorted(pm[::-1], thresholds, side="right") if len(pm) else \
            np.zeros(len(thresholds), np.int64)
        tp += tp0 + ctp[stop]
        pp += pp0 + cpp[stop]
        gp += g
    f1 = np.where(pp + gp > 0, 2.0 * tp / np.maximum(pp + gp, 1e-300), 1.0)
    best = f1.max()
    ties = np.flatnonzero(f1 >= best - 1e-12)
    t = float(thresholds[ties[len(ties) // 2]])
    out = theta.copy()
    out[params.const] += t          # a merge changes the constant's feature by -1: its score drops by t
    return out, float(best), t


def _train(worlds, params, setting, opt, deadline):
    update, epochs, C, l2 = setting
    o = replace(opt, C=C)
    if update == "logistic":
        theta, info = _train_logistic(worlds, params, epochs, l2, o, deadline)
    else:
        theta, info = _train_online(worlds, params, update, epochs, o, deadline)
    if opt.calibrate:
        theta, f1, shift = _calibrate(worlds, theta, params)
        info["calibration_shift"] = float(shift)
    else:
        f1 = _pooled_f1(worlds, theta, params)
    info["train_f1"] = float(f1)
    return theta, info


def settings_of(opt: MergeRankOptions) -> list[tuple]:
    out = []
    for u in _grid(opt.update):
        epochs = _grid(opt.epochs) if opt.epochs is not None else ((3,) if u == "logistic" else (5,))
        for e in epochs:
            if u == "logistic":
                for l2 in _grid(opt.l2):
                    out.append((u, e, None, l2))
            else:
                for C in (_grid(opt.C) if u == "mira" else (C_of(opt),)):
                    out.append((u, e, C, None))
    # the logistic learner's epochs are walks; keep distinct settings once
    seen, uniq = set(), []
    for s in out:
        if s not in seen:
            seen.add(s)
            uniq.append(s)
    return uniq


def _component_halves(model) -> tuple[np.ndarray, np.ndarray] | None:
    """Two halves of ``model``'s constants, each a union of connected
    components of its candidate graph (no linked pair is cut), balanced by
    size (largest components first, each to the smaller half; ties in a
    seeded random order); None when fewer than two components have a gold
    pair."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    md = model.arrays
    n = md.n
    g = csr_matrix((np.ones(len(md.indices)), md.indices.astype(np.int64), md.indptr), shape=(n, n))
    k, comp = connected_components(g, directed=False)
    gold = np.asarray(model.gold_labels, np.int64)
    # components holding a gold pair: a gold label seen twice within the component
    key = comp.astype(np.int64) * (int(gold.max()) + 1 if n else 1) + gold
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    with_pairs = np.unique(comp[first[counts > 1]])
    if len(with_pairs) < 2:
        return None
    sizes = np.bincount(comp, minlength=k)
    rng = np.random.default_rng(0)
    order = rng.permutation(k)
    order = order[np.argsort(-sizes[order], kind="stable")]
    side = np.zeros(k, np.int64)
    load = [0, 0]
    seen_pairs = [0, 0]
    has = np.zeros(k, bool)
    has[with_pairs] = True
    for c in order:
        # a component with gold pairs goes first to a half that has none yet, then to the lighter half
        if has[c] and min(seen_pairs) == 0:
            s = 0 if seen_pairs[0] == 0 else 1
        else:
            s = 0 if load[0] <= load[1] else 1
        side[c] = s
        load[s] += int(sizes[c])
        seen_pairs[s] += int(has[c])
    mask = side[comp] == 0
    return np.flatnonzero(mask), np.flatnonzero(~mask)


def held_out_parts(models, by: str = "clusters", worlds: str = "one-out") -> list[tuple[list, list]]:
    """(train, held-out) splits of the training worlds. With two or more
    worlds, the worlds themselves: each world held out in turn, trained on the
    others (``worlds='one-out'``, k splits of k worlds; with more than
    ``MAX_WORLD_SPLITS`` worlds, that many groups of consecutive worlds, each
    held out in turn), or each half of the
    worlds held out in turn (``worlds='halves'``; the same two splits when
    there are two worlds). With one world, two splits of its halves: of its
    gold clusters (``by='clusters'``) or of the connected components of its
    candidate graph (``by='components'``; halves of gold clusters when it has
    fewer than two components with a gold pair)."""
    from ..cluster.model import subset_model

    if worlds not in WORLD_SPLITS:
        raise OptionError(f"world splits must be one of {', '.join(WORLD_SPLITS)}, got {worlds!r}")
    if len(models) >= 3 and worlds == "one-out":
        # each world held out in turn; beyond MAX_WORLD_SPLITS worlds, as many groups of consecutive worlds
        groups = np.array_split(np.arange(len(models)), min(len(models), MAX_WORLD_SPLITS))
        out = []
        for g in groups:
            held = set(g.tolist())
            out.append(([w for j, w in enumerate(models) if j not in held], [models[j] for j in g]))
        return out
    if len(models) >= 2:
        half = len(models) // 2
        a, b = models[:half], models[half:]
        return [(a, b), (b, a)]
    m = models[0]
    halves = _component_halves(m) if by == "components" else None
    if halves is None:
        gold = m.gold_labels
        rng = np.random.default_rng(0)
        clusters = np.unique(gold)
        side = rng.permutation(len(clusters)) % 2
        mask = side[np.searchsorted(clusters, gold)] == 0
        halves = (np.flatnonzero(mask), np.flatnonzero(~mask))
    a = subset_model(m, halves[0])
    b = subset_model(m, halves[1])
    return [([a], [b]), ([b], [a])]


def _held_out_f1(splits, params, setting, opt, deadline, parts=None) -> float:
    """Pooled pairwise F1 on the held-out parts of ``splits`` of the model
    trained with ``setting`` on the other parts (``parts``, a list, receives
    each held-out world's ``eval.coref.cluster_contributions``)."""
    from ..eval.coref import cluster_contributions
    from ..parallel.tasks import each

    def one(split):
        # a split's own worlds (weight arrays and states): the splits run on the current call's threads (the
        # walks and the search are nogil kernels); the sums below are in split order, so the thread count
        # changes no result
        train, held = split
        theta, _ = _train([_World(m) for m in train], params, setting, opt, deadline)
        out = []
        for m in held:
            w = _World(m)
            labels = w.labels(theta, params)
            out.append((pair_counts(labels, w.gold), cluster_contributions(labels, w.gold)))
        return out

    tp = pp = gp = 0.0
    for got in each(one, splits):
        for (a, b, c), contribution in got:
            tp, pp, gp = tp + a, pp + b, gp + c
            if parts is not None:
                parts.append(contribution)
    return f1_of((tp, pp, gp))


def one_se_choice(names, contributions, order=SIMPLEST_FIRST, resamples: int = SE_RESAMPLES, seed: int = 0
                  ) -> tuple[int, dict]:
    """The one-standard-error rule over options ``names`` with held-out
    ``contributions`` (per option: a list of ``cluster_contributions`` arrays,
    one per held-out world, the same worlds for every option): the best
    option by pooled pairwise F1, then the first option in ``order`` whose F1
    is at least the best's minus the standard error of their paired
    difference over resamples of the held-out gold clusters (every option on
    the same resample). Returns the chosen index and, per option, its F1 and
    that standard error."""
    def f1(tp, pp, gp):
        return np.where(pp + gp > 0, 2.0 * tp / np.maximum(pp + gp, 1e-300), 1.0)

    rng = np.random.default_rng(seed)
    n_opt = len(names)
    point = np.zeros(n_opt)
    boot = np.zeros((n_opt, resamples))
    sums = [np.zeros((3, resamples)) for _ in range(n_opt)]
    totals = np.zeros((n_opt, 3))
    for w in range(len(contributions[0])):
        k = contributions[0][w].shape[1]
        idx = rng.integers(0, k, size=(resamples, k)) if k else np.zeros((resamples, 0), np.int64)
        for o in range(n_opt):
            c = np.asarray(contributions[o][w], np.float64)
            totals[o] += c.sum(axis=1)
            sums[o] += c[:, idx].sum(axis=2) if k else 0.0
    for o in range(n_opt):
        point[o] = f1(*totals[o])
        boot[o] = f1(*sums[o])
    best = int(max(range(n_opt), key=lambda o: (point[o], -o)))
    se = np.array([float(np.std(boot[best] - boot[o], ddof=1)) if resamples > 1 else 0.0 for o in range(n_opt)])
    rank = {v: i for i, v in enumerate(order)}
    ok = [o for o in range(n_opt) if point[o] >= point[best] - se[o] - 1e-12]
    chosen = min(ok, key=lambda o: (rank.get(names[o], len(order)), o))
    return chosen, {names[o]: {"held_out_f1": float(point[o]), "se": float(se[o])} for o in range(n_opt)}


def learn_merges(models, params, options: MergeRankOptions | None = None, *, log=None) -> tuple[np.ndarray, dict]:
    """Learn ``theta`` on the training worlds ``models`` (built with
    ``truth=True``; a pair layer already fit): hyperparameters chosen on
    held-out parts — the update rule and its setting, then with it the
    linkage family (by ``linkage_rule``), then whether the set-level
    features are on — then the
    chosen setting trained and calibrated on all."""
    opt = (options or MergeRankOptions()).check()
    start = time.perf_counter()
    deadline = None if opt.max_seconds is None else start + opt.max_seconds
    settings = settings_of(opt)
    chosen = settings[0]
    table = []
    cache = []

    def splits():
        if not cache:
            cache.append(held_out_parts(models, opt.held_out, opt.world_splits))
            if log is not None:
                log(f"  held-out choices on {len(cache[0])} splits of {len(models)} training part(s), each part "
                    "held out once" + (" (the others trained on)" if len(cache[0]) > 2 else ""))
        return cache[0]

    memo = {}

    def held_out(pv, setting, parts=None):
        # the same (setting, learnable weights, initial weights) is evaluated once: the linkage grid's "all" is
        # the update-rule grid's chosen model, and the set-level grid's "on" the chosen linkage (training is
        # deterministic: seeded walks, so a repeat would give the same F1 and contributions)
        key = (setting, pv.learnable.tobytes(), pv.initial.tobytes())
        if key not in memo:
            got = []
            memo[key] = (_held_out_f1(splits(), pv, setting, opt, deadline, parts=got), got)
        f, got = memo[key]
        if parts is not None:
            parts.extend(got)
        return f

    def row(setting, f, **extra):
        table.append({"update": setting[0], "epochs": setting[1], "C": setting[2], "l2": setting[3], **extra,
                      "held_out_f1": f, "seconds": time.perf_counter() - start})

    if opt.select and len(settings) > 1:
        for setting in settings:
            f = held_out(params, setting)
            row(setting, f)
            if log is not None:
                log(f"  held-out pairwise F1 {f:.4f}: update {setting[0]}, epochs {setting[1]}"
                    + (f", C {setting[2]}" if setting[2] is not None else "")
                    + (f", l2 {setting[3]}" if setting[3] is not None else ""))
        best = max(range(len(settings)), key=lambda i: (table[i]["held_out_f1"], -i))
        chosen = settings[best]
    # then the linkage family, then the set-level features on or off, each with the choices so far (ties: the
    # first of the grid, "all" and "on")
    picked = {}
    linkage_best = None
    for key, grid, restrict, label in (("linkage", opt.linkage, restrict_linkage, "linkage"),
                                       ("set_features", opt.set_features, restrict_set_features,
                                        "set-level features")):
        options_k = [(v, restrict(params, models[0], v)) for v in _grid(grid)]
        options_k = [(v, p) for v, p in options_k if p is not None]
        if not options_k:
            picked[key] = "all" if key == "linkage" else "on"
            continue
        if opt.select and len(options_k) > 1:
            scored, contributions = [], []
            for v, pv in options_k:
                parts = []
                f = held_out(pv, chosen, parts)
                scored.append(f)
                contributions.append(parts)
                row(chosen, f, **{k: w for k, w in picked.items()}, **{key: v})
                if log is not None:
                    log(f"  held-out pairwise F1 {f:.4f}: {label} {v}")
            best = max(range(len(options_k)), key=lambda i: (scored[i], -i))
            if key == "linkage":
                linkage_best = options_k[best][0]
            if key == "linkage" and opt.linkage_rule == "one-se":
                top = best
                best, table_se = one_se_choice([v for v, _ in options_k], contributions)
                if log is not None:
                    log(f"  linkage by the one-standard-error rule: best {options_k[top][0]} "
                        f"({scored[top]:.4f}); chosen {options_k[best][0]}, the first of "
                        f"{', '.join(SIMPLEST_FIRST)} within one standard error ("
                        + ", ".join(f"{v} {t['held_out_f1']:.4f} se {t['se']:.4f}" for v, t in table_se.items())
                        + ")")
            elif key == "linkage" and log is not None:
                log(f"  linkage by the highest held-out F1: {options_k[best][0]} ({scored[best]:.4f})")
        else:
            best = 0
        picked[key], params = options_k[best]
    linkage, sets = picked["linkage"], picked["set_features"]
    worlds = [_World(m) for m in models]
    theta, info = _train(worlds, params, chosen, opt, deadline)
    info.update({"update": chosen[0], "epochs": chosen[1], "C": chosen[2], "l2": chosen[3], "linkage": linkage,
                 "set_features": sets,
                 "linkage_rule": opt.linkage_rule if linkage_best is not None else None,
                 "linkage_held_out_best": linkage_best,
                 "held_out": opt.held_out,
                 "held_out_splits": len(cache[0]) if cache else 0,
                 "selection": table, "seconds": time.perf_counter() - start,
                 "timed_out": deadline is not None and time.perf_counter() > deadline})
    return theta, info


# ---------------------------------------------------------------- the pair layer


def _pair_design(model, param_of_q, coef_of_q, n_params):
    """Candidate pairs (i < j) of a model, their pair-layer features in
    parameter space, and their gold labels."""
    md = model.arrays
    rows = np.repeat(np.arange(md.n), np.diff(md.indptr))
    cols = md.indices.astype(np.int64)
    keep = rows < cols
    if md.cand_col >= 0:
        keep &= md.vals[:, md.cand_col] > 0
    p_idx = np.flatnonzero(keep)
    i, j = rows[p_idx], cols[p_idx]
    x = np.zeros((len(p_idx), n_params))
    if model.pair_terms is not None:
        vals, col_q, lr_q, lr_coef, lr_u, lr_v = model.pair_terms
    else:
        vals, col_q, lr_q, lr_coef, lr_u, lr_v = md.vals, md.col_q, md.lr_q, md.lr_coef, md.lr_u, md.lr_v
    for col, q in enumerate(col_q):
        k = param_of_q[q]
        if k >= 0:
            x[:, k] += coef_of_q[q] * vals[p_idx, col]
    for r, q in enumerate(lr_q):
        k = param_of_q[q]
        if k >= 0:
            x[:, k] += coef_of_q[q] * lr_coef[r] * (lr_u[r, i] * lr_v[r, j] + lr_u[r, j] * lr_v[r, i])
    y = (model.gold_labels[i] == model.gold_labels[j]).astype(np.float64)
    return x, y


def pair_layer_parameters(model, mln):
    """One parameter per pair formula of a pair-layer model: (names, param of
    each quantity, coefficient, initial values, learnable)."""
    Q = model.arrays.n_q
    param = np.full(Q, -1, np.int64)
    coef = np.zeros(Q)
    names, initial, learnable, keys, formula_of = [], [], [], {}, {}
    for q, qty in enumerate(model.quantities):
        key = _param_key(qty)
        if key is None:
            continue
        if key not in keys:
            keys[key] = len(names)
            w, fixed = _initial(qty, mln)
            names.append(qty.name)
            initial.append(w)
            learnable.append(not fixed)
            formula_of[keys[key]] = key
        param[q] = keys[key]
        coef[q] = qty.sign * qty.scale
    return names, param, coef, np.array(initial), np.array(learnable, bool), formula_of


PAIR_L2 = (0.03, 0.3, 3.0)     # inverse regularisation strengths the pair layer chooses from


PAIR_FEATURES = ("all", "values")


def _has_binned_similarity(node) -> bool:
    """Whether a formula compares a similarity builtin with a threshold
    (``jaccard(x, y, HasWordName) >= 0.4``: a bin of a similarity)."""
    from ..ground.similarity import is_similarity
    from ..lang.ast import Compare

    if isinstance(node, Compare):
        return is_similarity(node.left) or is_similarity(node.right)
    for name in ("body", "left", "right"):
        child = getattr(node, name, None)
        if child is not None and not isinstance(child, (str, int, float)) and _has_binned_similarity(child):
            return True
    return False


def pair_feature_masks(formula_of, mln, n_params: int) -> dict[str, np.ndarray]:
    """The pair parameters each ``pair_features`` choice may learn: "all", or
    "values" (every parameter but the formulas that bin a similarity)."""
    binned = np.zeros(n_params, bool)
    for k, key in formula_of.items():
        if key[0] == "formula" and _has_binned_similarity(mln.formulas[key[1]].formula):
            binned[k] = True
    return {"all": np.ones(n_params, bool), "values": ~binned}


def choose_pair_l2(parts, param, coef, initial, learnable, grid=PAIR_L2, *, fits: dict | None = None
                   ) -> tuple[float, dict]:
    """The pair layer's regularisation with the best cross-fitted
    log-likelihood of the candidate pairs' labels (each part scored by the
    model fit on the others); a best value at the grid's edge extends the
    search past it (Cora SameBib and cddb chose the smallest of the grid).
    ``fits``, a dict, receives per value the fits on each part's others."""
    n_params = len(initial)
    designs = [_pair_design(m, param, coef, n_params) for m in parts]
    table = {}

    def score(l2):
        thetas = []
        table[l2] = cross_fitted_log_likelihood(designs, initial, learnable, l2, fits=thetas)
        if fits is not None:
            fits[l2] = thetas

    for l2 in grid:
        score(l2)
    # a best value at an edge of the grid: go on past that edge, a factor of 10 at a time (at most 3 steps)
    for _ in range(3):
        best = max(table, key=lambda v: (table[v], -v))
        lo, hi = min(table), max(table)
        if best == lo:
            nxt = round(lo / 10.0, 12)
        elif best == hi:
            nxt = round(hi * 10.0, 12)
        else:
            break
        score(nxt)
    best = max(table, key=lambda v: (table[v], -v))
    return best, dict(sorted(table.items()))


def cross_fitted_log_likelihood(designs, initial, learnable, l2: float, *, fits: list | None = None) -> float:
    """The log-likelihood of each part's candidate-pair labels under the pair
    layer fit on the other parts, summed (``designs``: the parts' (x, y), from
    ``_pair_design``); ``fits``, a list, receives each part's fit."""
    ll = 0.0
    for k, (x, y) in enumerate(designs):
        others = [d for j, d in enumerate(designs) if j != k]
        th = fit_pair_layer(None, None, None, initial, learnable, l2, designs=others)
        if fits is not None:
            fits.append(th)
        s = x @ th
        ll += float(np.sum(y * s - np.logaddexp(0.0, s)))
    return ll


def choose_pair_layer(parts, param, coef, initial, learnable, masks: dict, choices, *, fits: list | None = None
                      ) -> tuple[str, float, dict]:
    """The pair features (a key of ``masks``) and regularisation with the best
    cross-fitted log-likelihood; a formula outside the chosen set has weight 0
    (its initial weight when it is fixed). Returns (choice, C, {choice: {C: ll}});
    ``fits``, a list, receives the chosen model's fit on each part's others."""
    tables, best = {}, None
    for name in _grid(choices):
        lm = learnable & masks[name]
        init = np.where(learnable & ~masks[name], 0.0, initial)
        if name != "all" and "all" in tables and lm.sum() == learnable.sum():
            continue                    # the same model as "all"
        got = {}
        c, table = choose_pair_l2(parts, param, coef, init, lm, fits=got)
        tables[name] = table
        if best is None or table[c] > best[2]:
            best = (name, c, table[c])
            if fits is not None:
                fits[:] = got[c]
    return best[0], best[1], tables


def fit_pair_layer(models, param, coef, initial, learnable, l2: float = 1.0, *, designs=None) -> np.ndarray:
    """The pair formulas' weights as an L2 logistic regression of "same
    entity" over the candidate pairs of ``models`` (a constant column, the
    prior ``!P(x, y)``, is the intercept), on standardised columns; ``l2``
    is the inverse strength (scikit-learn's C). ``designs``: the models'
    ``(x, y)`` already built (then ``models`` is not read)."""
    from scipy.optimize import minimize

    n_params = len(initial)
    if designs is None:
        designs = [_pair_design(m, param, coef, n_params) for m in models]
    xs = [x for x, _ in designs]
    ys = [y for _, y in designs]
    x = np.vstack(xs) if xs else np.zeros((0, n_params))
    y = np.concatenate(ys) if ys else np.zeros(0)
    if len(y) == 0 or y.min() == y.max():
        raise LearningError("the pair layer needs candidate pairs of both kinds (same entity and not) in the "
                            "training data")
    free = np.flatnonzero(learnable)
    fixed = np.flatnonzero(~learnable)
    offset = x[:, fixed] @ initial[fixed] if len(fixed) else np.zeros(len(y))
    xf = x[:, free]
    mu = xf.mean(axis=0)
    sd = xf.std(axis=0)
    const = np.flatnonzero(sd < 1e-12)
    sd[sd < 1e-12] = 1.0
    z = (xf - mu) / sd
    z[:, const] = 0.0
    zb = np.hstack([z, np.ones((len(z), 1))])
    lam = 1.0 / l2

    def loss(w):
        s = zb @ w + offset
        value = np.sum(np.logaddexp(0.0, s) - y * s) + 0.5 * lam * np.sum(w[:-1] ** 2)
        grad = zb.T @ (_expit(s) - y)
        grad[:-1] += lam * w[:-1]
        return value, grad

    w = minimize(loss, np.zeros(zb.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 5000}).x
    theta = initial.copy()
    raw = w[:-1] / sd
    theta[free] = raw
    intercept = w[-1] - np.sum(raw * mu)
    # the intercept goes to a constant feature (the prior) when there is one
    const_cols = free[const]
    if len(const_cols):
        k = const_cols[0]
        v = float(mu[const[0]])
        theta[k] = intercept / v if v != 0 else 0.0
    return theta


def apply_pair_layer(model, theta, param, coef) -> None:
    """Set a pair-layer model's pair weights from the formula weights ``theta``
    and recompute its scores (in place)."""
    pw = np.where(param >= 0, theta[np.maximum(param, 0)] * coef, 0.0)
    model.pair_weights = pw
    model.refresh_scores()


# ---------------------------------------------------------------- models


MH_ONLY = ("steps", "temperature", "accept", "start", "init", "trace_every")


def learn_merge_rank_options(kwargs: dict) -> MergeRankOptions:
    """``MergeRankOptions`` from the options of ``mln learn --method samplerank``
    (a fixed ``update`` or ``epochs`` narrows the held-out grid to it)."""
    bad = [k for k in MH_ONLY if kwargs.get(k) is not None]
    if bad:
        raise OptionError(f"{bad[0].replace('_', '-')} applies to samplerank --inference mh (the MH chain); "
                          "samplerank --inference agglomerative walks the agglomerative search")
    loss = kwargs.get("loss")
    if loss not in (None, "pairwise-f1"):
        raise OptionError(f"samplerank --inference agglomerative ranks merges by their pairwise gain (loss "
                          f"pairwise-f1); --loss {loss} applies to --inference mh")
    out = {}
    if kwargs.get("update") is not None:
        if kwargs["update"] not in UPDATES:
            raise OptionError(f"unknown update {kwargs['update']!r} for samplerank --inference agglomerative; "
                              f"choose one of {', '.join(UPDATES)}")
        out["update"] = kwargs["update"]
    for key in ("epochs", "C", "margin", "learning_rate", "average", "max_seconds", "linkage", "held_out",
                "pair_features", "set_features", "pair_layer", "linkage_rule", "world_splits"):
        if kwargs.get(key) is not None:
            out[key] = kwargs[key]
    return MergeRankOptions(**out).check()


def learn_merge_rank_model(mln, dbs, *, query_predicates=None, multiple_databases: bool = False, seed: int = 0,
                           callback=None, options: MergeRankOptions | None = None, log=None):
    """SampleRank over agglomerative states on training databases: a
    ``LearnedModel`` whose MLN carries the learned weights (pair formulas,
    set-level and linkage features)."""
    from ..cluster.api import cluster_predicates
    from ..cluster.model import build_cluster_model, subset_model
    from ..ground.network import WeightParam
    from ..lang.ast import Query
    from ..model import Database
    from .api import LearnedModel, _merge
    from .output import split_clauses
    from .result import LearnResult, TraceRow

    opt = options or MergeRankOptions()
    opt = replace(opt, seed=seed) if seed != opt.seed else opt
    opt.check()
    if isinstance(dbs, Database):
        dbs = [dbs]
    if not dbs:
        raise LearningError("no training database given")
    if isinstance(query_predicates, str):
        query_predicates = [q.strip() for q in query_predicates.split(",") if q.strip()]
    queries = [Query(q) for q in query_predicates] if query_predicates else None
    preds = cluster_predicates(mln, queries)
    if len(preds) != 1:
        raise LearningError(f"SampleRank learns one equivalence predicate at a time; got {', '.join(preds)} "
                            "(name one with --ne)")
    pred = preds[0]
    say = log or (lambda s: None)
    start = time.perf_counter()
    clausal = split_clauses(mln)
    cm = clausal.mln
    cm.set_features = list(getattr(mln, "set_features", []))
    added_const = None
    if opt.calibrate and not any(_is_constant(f) and f.predicate == pred and not f.fixed for f in cm.set_features):
        # the per-cluster constant the calibration sets (a merge changes it by -1); written into the result
        from ..lang.ast import SetFeature

        added_const = SetFeature(kind="size", predicate=pred, weight=0.0, op=">", threshold=0.0)
        cm.set_features.append(added_const)
        say(f"added size({pred}) > 0, a per-cluster constant, for the calibration of the merge threshold")
    worlds = list(dbs) if multiple_databases else [_merge(dbs)]
    models = [build_cluster_model(cm, db, pred, truth=True) for db in worlds]
    ground_seconds = time.perf_counter() - start
    say(f"compiled {len(models)} training world(s): {sum(m.n for m in models):,} constants, "
        f"{sum(int(m.arrays.indptr[-1]) // 2 for m in models):,} linked pairs ({ground_seconds:.1f} s)")
    info_pair = {}
    pair_theta = None
    if models[0].pair_layer:
        names_p, param_p, coef_p, init_p, learn_p, formula_of_p = pair_layer_parameters(models[0], cm)
        # parts: the worlds, or halves of the single world's gold clusters
        if len(models) >= 2:
            parts = models
        else:
            parts = [p for p, _ in held_out_parts(models, opt.held_out)]
            parts = [parts[0][0], parts[1][0]]
        masks = pair_feature_masks(formula_of_p, cm, len(names_p))
        chosen_fits = []
        pair_set, pair_l2, tables = choose_pair_layer(parts, param_p, coef_p, init_p, learn_p, masks,
                                                      opt.pair_features, fits=chosen_fits)
        init_p = np.where(learn_p & ~masks[pair_set], 0.0, init_p)
        learn_p = learn_p & masks[pair_set]
        for part, th in zip(parts, chosen_fits):
            # the fit on the other parts, made while choosing (the same data and options, so the same weights)
            apply_pair_layer(part, th, param_p, coef_p)
        if opt.pair_layer == "mean":
            # a linear score: the mean of the fits' weights scores a pair with the mean of their scores
            pair_theta = np.mean(chosen_fits, axis=0)
        else:
            pair_theta = fit_pair_layer(parts, param_p, coef_p, init_p, learn_p, pair_l2)
        info_pair = {"pair_layer_parameters": len(names_p), "pair_layer_cross_fitted_parts": len(parts),
                     "pair_layer_l2": pair_l2, "pair_layer_features": pair_set,
                     "pair_layer_learned": int(learn_p.sum()), "pair_layer": opt.pair_layer}
        say(f"pair layer: {int(learn_p.sum())} of {len(names_p)} formula weights ({pair_set}) by logistic "
            f"regression over candidate pairs, cross-fitted over {len(parts)} parts; the model carries "
            + ("the mean of those fits" if opt.pair_layer == "mean" else "one fit on all parts")
            + f" (regularisation C {pair_l2}; "
            "held-out log-likelihood " + "; ".join(
                f"{nm}: " + ", ".join(f"C {k} {v:.1f}" for k, v in t.items()) for nm, t in tables.items()) + ")")
        train_models = parts
    else:
        train_models = models
    params = merge_parameters(train_models[0], cm)
    if not params.learnable.any():
        raise LearningError("no learnable weight: every formula and feature of the cluster layer is fixed ('@')")
    theta, info = learn_merges(train_models, params, opt, log=say)
    # one world's halves are two parts, not worlds: the option applies to two or more training worlds only
    info["world_splits"] = opt.world_splits if len(models) >= 2 else None
    say(f"chosen: update {info['update']}, epochs {info['epochs']}, linkage {info['linkage']}, set-level features "
        f"{info['set_features']}; training pairwise F1 {info['train_f1']:.4f} "
        f"(calibration shift {info.get('calibration_shift', 0.0):+.3f})")
    # the returned model under the inference it runs with, on the whole training data
    final_models = models
    if pair_theta is not None:
        for m in final_models:
            apply_pair_layer(m, pair_theta, param_p, coef_p)
    tp = pp = gp = 0.0
    for m in final_models:
        a, b, c = _World(m).counts(theta, params)
        tp, pp, gp = tp + a, pp + b, gp + c
    train_f1 = f1_of((tp, pp, gp))
    learn_seconds = time.perf_counter() - start - ground_seconds
    learned = _learned_mln(cm, final_models[0], params, theta, pair_theta,
                           (param_p, coef_p, formula_of_p) if pair_theta is not None else None)
    text = learned.to_string()
    all_names = list(params.names)
    all_theta = theta.copy()
    if pair_theta is not None:
        all_names = list(names_p) + all_names
        all_theta = np.concatenate([pair_theta, theta])
    pinfo = tuple(WeightParam(name=nm, formula_index=-1, fixed=False) for nm in all_names)
    stats = dict(info, **info_pair)
    stats.pop("selection", None)
    if added_const is not None:
        stats["added_constant"] = f"size({pred}) > 0"
    stats.update({"final_train_loss": 1.0 - train_f1, "final_train_pairwise_f1": train_f1,
                  "loss": "pairwise-f1", "inference": "agglomerative", "worlds": len(models),
                  "mentions": int(sum(m.n for m in models))})
    if any("blocking_recall" in m.stats for m in models):
        stats["blocking_recall"] = float(np.mean([m.stats.get("blocking_recall", 1.0) for m in models]))
    result = LearnResult(params=all_theta, param_info=pinfo, method="samplerank",
                         objective_name="training loss (1 - pairwise F1 under agglomerative inference)",
                         # the held-out selection's rows (1 - held-out F1 of each setting tried), then the
                         # returned model's training loss: result.objective, what `mln learn` prints
                         trace=[TraceRow(iteration=i, objective=1.0 - r["held_out_f1"], params=np.zeros(0),
                                         seconds=r.get("seconds"),
                                         info={k: v for k, v in r.items() if k not in ("held_out_f1", "seconds")})
                                for i, r in enumerate(info.get("selection", []))]
                         + [TraceRow(iteration=len(info.get("selection", [])), objective=1.0 - train_f1,
                                     params=all_theta.copy(), seconds=learn_seconds, info={"final": True})],
                         iterations=int(info.get("steps", info.get("walks", 0))), converged=False,
                         seconds=learn_seconds, stats=stats)
    result.selection = info.get("selection", [])
    return LearnedModel(mln=learned, text=text, result=result, query_predicates=[pred], networks=[],
                        ground_seconds=ground_seconds, learn_seconds=learn_seconds)


def _learned_mln(mln, model, params: MergeParameters, theta, pair_theta, pair):
    """``mln`` with the learned weights on its formulas, set-level and linkage features."""
    from ..model import MLN

    formulas = list(mln.formulas)
    features = list(getattr(mln, "set_features", []))

    def put(key, w):
        kind, what = key
        if kind == "formula":
            formulas[what] = replace(formulas[what], weight=float(round(w, 6)))
        elif what in features:
            features[features.index(what)] = replace(what, weight=float(round(w, 6)))

    for k, key in params.formula_of.items():
        put(key, theta[k])
    if pair is not None:
        _, _, formula_of_p = pair
        for k, key in formula_of_p.items():
            put(key, pair_theta[k])
    for j, f in enumerate(model.set_features):
        k = params.sf_param[j]
        if k >= 0 and f.spec in features:
            features[features.index(f.spec)] = replace(f.spec, weight=float(round(theta[k], 6)))
    for j, f in enumerate(model.link_features):
        k = params.lk_param[j]
        if k >= 0 and f.spec in features:
            features[features.index(f.spec)] = replace(f.spec, weight=float(round(theta[k], 6)))
    out = MLN(types=dict(mln.types), predicates=dict(mln.predicates), functions=dict(mln.functions),
              formulas=formulas)
    if features:
        out.set_features = features
    return out
