"""SampleRank over clusterings (Culotta's thesis, Algorithm 4): learning
weights from the ranking of neighbouring worlds that the Metropolis-Hastings
chain over an equivalence predicate's clusterings visits (the same learner
over ordinary query atoms: :mod:`.samplerank_atoms`; the update rules and
options they share: :mod:`.samplerank_core`).

For each proposal ``y -> y'`` the chain evaluates anyway, the feature change
``dphi = Phi(y') - Phi(y)`` and the change of a loss against the training
truth are known. When the model ranks the two worlds against the loss (or
within the margin), the weights move toward the better one:

perceptron, MIRA (1-best, closed form) or MIRA++ (Hildreth), see
:func:`.samplerank_core.rank_update`.

The next state follows the model (MH acceptance at the chain's temperature;
Culotta's "predicted") or the loss ("truth"). The returned weights are the
average over all steps. Losses over an equivalence predicate: ``hamming``
(pairs wrong), ``pairwise-f1`` (1 - F1 over co-clustered pairs) and ``b3``
(1 - B-cubed F1); all are computed incrementally from the clusters a
proposal changes.

The step loop is the generic SampleRank loop of :mod:`markovlogic.onestate`
bound to the clusterings' state kind (:mod:`..cluster.chain`, which holds
the loss, feature and score changes of a move); this module prepares the
training worlds and reads the results.

Parameters are per formula (a formula whose CNF has several clauses is split
into them first, as the other learners do) and per set-level feature;
relation, must-link and truth quantities carry no parameter.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import LearningError, OptionError
from ..cluster.chain import GREEDY_MIN, LOOPS, _set_weights, _to_theta, seed_rng
from ..cluster.kernels import feature_vector
from ..cluster.model import ClusterModel
from ..onestate import SR_ACCEPTED, SR_STATS, SR_UPDATES, sr_work
from .samplerank_core import ACCEPT, LOSSES, UPDATES, SampleRankOptions

__all__ = ["ACCEPT", "LOSSES", "UPDATES", "Parameters", "SampleRankOptions", "SampleRankResult",
           "learn_samplerank_model", "parameters_of", "samplerank"]


@dataclass
class Parameters:
    """How the learned parameters ``theta`` set the kernel weights:
    ``w_q[q] = theta[q_param[q]] * q_coef[q]`` and ``w_sf[j] = theta[sf_param[j]]``
    (index -1: no parameter, weight kept)."""

    names: list[str]
    q_param: np.ndarray
    q_coef: np.ndarray
    sf_param: np.ndarray
    learnable: np.ndarray     # bool per parameter (False: fixed '@')
    initial: np.ndarray


@dataclass
class SampleRankResult:
    theta: np.ndarray
    parameters: Parameters
    trace: list[dict] = field(default_factory=list)
    stats: dict = field(default_factory=dict)


# ---------------------------------------------------------------- driver

def parameters_of(model: ClusterModel, mln) -> Parameters:
    """One parameter per formula with a pair feature and per set-level
    feature; initial values from the model's weights."""
    names: list[str] = []
    keys: dict = {}
    Q = model.arrays.n_q
    q_param = np.full(Q, -1, np.int64)
    q_coef = np.zeros(Q)
    initial: list[float] = []
    learnable: list[bool] = []
    from .merge_rank import _initial, _param_key

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
        k = keys[key]
        q_param[q] = k
        # w_q = theta * coef: the template's sign and its share of the formula's
        # weight (1 once formulas are split into clauses, as learning does)
        q_coef[q] = qty.sign * qty.scale
    J = len(model.arrays.sf_kind)
    sf_param = np.full(J, -1, np.int64)
    for j, f in enumerate(model.set_features):
        sf_param[j] = len(names)
        names.append(f.spec.describe())
        initial.append(float(f.weight))
        learnable.append(not f.spec.fixed)
    return Parameters(names, q_param, q_coef, sf_param, np.array(learnable, bool), np.array(initial, np.float64))


def samplerank(models: list[ClusterModel], params: Parameters, options: SampleRankOptions | None = None,
               callback=None) -> SampleRankResult:
    """Learn ``theta`` on the training worlds ``models`` (each built with
    ``truth=True``)."""
    opt = (options or SampleRankOptions()).check()
    if opt.start != "random" or opt.init != "model":
        raise OptionError("start and init apply to SampleRank over ordinary atoms; over clusterings the chain "
                          "starts from the model's clustering and the weights from the model's")
    loss = opt.loss or "pairwise-f1"
    if not models:
        raise LearningError("no training world given")
    for m in models:
        if m.truth_q < 0:
            raise LearningError("SampleRank needs training truth: build the models with truth=True")
    probs = np.asarray(opt.proposals, np.float64)
    probs = probs / probs.sum()
    theta = params.initial.copy()
    u_sum = np.zeros_like(theta)
    prop = np.zeros(5, np.int64)
    work = sr_work(len(theta))
    seed_rng(int(opt.seed))
    D = len(theta)
    total_steps = 0
    trace: list[dict] = []
    stats = np.zeros(SR_STATS, np.int64)
    start = time.perf_counter()
    timed_out = False
    states = []
    for m in models:
        md = m.arrays._replace(w_q=m.arrays.w_q.copy(), w_sf=m.arrays.w_sf.copy())
        st, sc = m.new_state()
        gold = m.gold_labels.astype(np.int64)
        gsize = np.bincount(gold).astype(np.float64)
        phi_q = np.zeros(md.n_q + len(md.sf_kind))
        feature_vector(md, st, sc.wq, phi_q)
        phi_cur = np.zeros(D)
        _to_theta(md, phi_q, params.q_param, params.q_coef, params.sf_param, phi_cur)
        stg, scg = m.new_state(gold)
        feature_vector(md, stg, scg.wq, phi_q)
        phi_gold = np.zeros(D)
        _to_theta(md, phi_q, params.q_param, params.q_coef, params.sf_param, phi_gold)
        gp = float(np.sum(gsize * (gsize - 1)))
        sizes = np.bincount(m.initial_labels)
        pp = float(np.sum(sizes * (sizes - 1.0)))
        # TP of the initial state: its within sum of the truth quantity
        phi0 = np.zeros(md.n_q + len(md.sf_kind))
        feature_vector(md, st, sc.wq, phi0)
        tp = float(phi0[m.truth_q])
        b3p, b3r = _b3_initial(m.initial_labels, gold, gsize)
        counts = np.array([tp, pp, gp, b3p, b3r])
        learn = (np.array([LOSSES[loss], m.truth_q], np.int64), gold, gsize, counts, np.zeros(4),
                 np.zeros(max(1, gsize.shape[0]), np.int64), np.zeros(m.n + 1, np.int64), params.q_param,
                 params.q_coef, params.sf_param)
        # the chain's score and best clustering are not kept (best_score +inf)
        track = (np.zeros(1), np.array([np.inf]), np.zeros(m.n, np.int64))
        S = (md, st, sc, probs, np.cumsum(probs), track, learn)
        states.append((m, md, S, phi_cur, phi_gold))
    for epoch in range(opt.epochs):
        for w_i, (m, md, S, phi_cur, phi_gold) in enumerate(states):
            _set_weights(md, theta, params.q_param, params.q_coef, params.sf_param)
            steps = opt.steps if opt.steps is not None else 100 * max(m.n, 1)
            every = opt.trace_every or max(1, steps // 50)
            tr = np.zeros((steps // every + 1, 2 + D))
            t_run = time.perf_counter() - start
            rows = LOOPS.samplerank(
                S, prop, work, steps, total_steps, 0, float(opt.temperature), GREEDY_MIN, UPDATES[opt.update],
                ACCEPT[opt.accept], float(opt.margin), float(opt.C), float(opt.learning_rate), theta, u_sum,
                params.learnable, phi_cur, phi_gold, every, tr, stats)
            # rows are written inside one compiled run: their times are spread over its duration by step
            t_end = time.perf_counter() - start
            for r in range(rows):
                trace.append({"epoch": epoch + 1, "world": w_i, "step": int(tr[r, 0]),
                              "loss": float(tr[r, 1]), "theta": tr[r, 2:].copy(),
                              "seconds": t_run + (t_end - t_run) * float(tr[r, 0] - total_steps) / max(steps, 1)})
            total_steps += steps
            if callback is not None:
                callback(epoch + 1, theta.copy(), trace[-1]["loss"] if trace else None)
            if opt.max_seconds is not None and time.perf_counter() - start > opt.max_seconds:
                timed_out = True
                break
        if timed_out:
            break
    final = theta - u_sum / total_steps if (opt.average and total_steps) else theta.copy()
    final[~params.learnable] = params.initial[~params.learnable]
    info = {"steps": int(total_steps), "updates": int(stats[SR_UPDATES]), "accepted": int(stats[SR_ACCEPTED]),
            "worlds": len(models), "mentions": int(sum(m.n for m in models)),
            "seconds": time.perf_counter() - start, "timed_out": timed_out,
            "final_train_loss": trace[-1]["loss"] if trace else None}
    return SampleRankResult(final, params, trace, info)


def _b3_initial(labels: np.ndarray, gold: np.ndarray, gsize: np.ndarray) -> tuple[float, float]:
    """B-cubed precision and recall sums of a clustering."""
    labels = np.asarray(labels)
    key = labels.astype(np.int64) * (gold.max() + 1) + gold
    _, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    csize = np.bincount(labels)
    inter = cnt[inv].astype(np.float64)
    return float(np.sum(inter / csize[labels])), float(np.sum(inter / gsize[gold]))


# ---------------------------------------------------------------- models

def learn_samplerank_model(mln, dbs, *, query_predicates=None, multiple_databases: bool = False,
                           seed: int = 0, callback=None, options: SampleRankOptions | None = None):
    """SampleRank on training databases: a ``LearnedModel`` (learn/api.py) whose
    MLN carries the learned weights of the formulas over the equivalence
    predicate and of the set-level features. Formulas with several CNF clauses
    are split into them first (one weight per clause, as Alchemy learns)."""
    from dataclasses import replace

    from ..cluster.api import cluster_predicates
    from ..cluster.model import build_cluster_model
    from ..ground.network import WeightParam
    from ..lang.ast import Query
    from ..model import Database
    from .api import LearnedModel, _merge
    from .output import split_clauses
    from .result import LearnResult, TraceRow

    opt = options or SampleRankOptions()
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
    start = time.perf_counter()
    clausal = split_clauses(mln)
    cm = clausal.mln
    if hasattr(mln, "set_features"):
        cm.set_features = list(mln.set_features)
    worlds = list(dbs) if multiple_databases else [_merge(dbs)]
    models = [build_cluster_model(cm, db, pred, truth=True) for db in worlds]
    params = parameters_of(models[0], cm)
    ground_seconds = time.perf_counter() - start
    report = None
    if callback is not None:
        def report(epoch, theta, loss):
            return callback(TraceRow(iteration=epoch, objective=float("nan") if loss is None else loss,
                                     params=theta))
    res = samplerank(models, params, opt, callback=report)
    learn_seconds = time.perf_counter() - start - ground_seconds
    res.stats.update(_returned_model_f1(models, params, res.theta, opt.loss or "pairwise-f1",
                                        res.stats.get("final_train_loss")))
    learned = _with_weights(cm, models[0], params, res.theta)
    text = learned.to_string()
    info = tuple(WeightParam(name=nm, formula_index=-1, fixed=not params.learnable[k])
                 for k, nm in enumerate(params.names))
    trace = [TraceRow(iteration=r["step"], objective=r["loss"], params=r["theta"], seconds=r["seconds"],
                      info={"epoch": r["epoch"]})
             for r in res.trace]
    result = LearnResult(params=res.theta, param_info=info, method="samplerank",
                         objective_name=f"training loss ({opt.loss or 'pairwise-f1'})", trace=trace,
                         iterations=int(res.stats["steps"]), converged=False, seconds=learn_seconds,
                         stats=dict(res.stats))
    return LearnedModel(mln=learned, text=text, result=result, query_predicates=[pred], networks=[],
                        ground_seconds=ground_seconds, learn_seconds=learn_seconds)


def _returned_model_f1(models, params: Parameters, theta: np.ndarray, loss: str, chain_loss) -> dict:
    """The training figures of the *returned* weights under the inference they
    serve (agglomerative MAP, as ``mln infer --map``), pooled over the
    training worlds: ``final_train_pairwise_f1``, and ``final_train_loss`` (1 -
    that F1 for the pairwise-F1 loss); ``final_chain_loss`` keeps the loss of
    the training chain's last state (one world's, not the model's)."""
    from ..cluster.agglomerative import agglomerative_map
    from .merge_rank import f1_of, pair_counts

    tp = pp = gp = 0.0
    for m in models:
        _set_weights(m.arrays, theta, params.q_param, params.q_coef, params.sf_param)
        labels = agglomerative_map(m).labels
        a, b, c = pair_counts(labels, m.gold_labels)
        tp, pp, gp = tp + a, pp + b, gp + c
    f1 = f1_of((tp, pp, gp))
    out = {"final_train_pairwise_f1": f1, "final_chain_loss": chain_loss}
    if loss == "pairwise-f1":
        out["final_train_loss"] = 1.0 - f1
    return out


def _with_weights(mln, model: ClusterModel, params: Parameters, theta: np.ndarray):
    """``mln`` with the learned weights on its formulas and set-level features."""
    from dataclasses import replace

    from ..model import MLN

    formulas = list(mln.formulas)
    features = list(getattr(mln, "set_features", []))
    for q, qty in enumerate(model.quantities):
        k = params.q_param[q]
        if k >= 0 and qty.spec is not None and qty.spec in features:
            features[features.index(qty.spec)] = replace(qty.spec, weight=float(round(theta[k], 6)))
        elif k >= 0 and qty.formula >= 0:
            formulas[qty.formula] = replace(formulas[qty.formula], weight=float(round(theta[k], 6)))
    for j, f in enumerate(model.set_features):
        k = params.sf_param[j]
        if k >= 0 and f.spec in features:
            features[features.index(f.spec)] = replace(f.spec, weight=float(round(theta[k], 6)))
    out = MLN(types=dict(mln.types), predicates=dict(mln.predicates), functions=dict(mln.functions),
              formulas=formulas)
    if features:
        out.set_features = features
    return out
