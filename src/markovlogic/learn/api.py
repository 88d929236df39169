"""Weight learning for models: from an ``MLN`` and training databases to a new
``MLN`` with learned weights.

Each training database is grounded with the learned predicates as queries,
every formula admitted even without a weight (``allow_unweighted``), and the
training truth of the query atoms read closed-world (an atom not listed is
false). Discriminative methods learn P(query predicates | the rest): the
query predicates are those named (``--ne``), or, when none are named, the
predicates not declared closed-world with Tuffy's ``*``. Generative learning
(``pll``) follows Alchemy's ``-g``: the named predicates enter the
pseudo-likelihood, all predicates when none are named.

Several databases are one world (their atoms together, shared constants)
unless ``multiple_databases`` is set: then each is an independent world and
their counts add up.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from ..errors import LearningError, OptionError, QueryError
from ..ground.network import GroundNetwork
from ..lang.ast import Query
from .result import Callback, LearnResult

if TYPE_CHECKING:
    from ..model import MLN, Database

METHODS = ("pll", "perceptron", "dn", "scg", "mira", "samplerank", "piecewise")
DISCRIMINATIVE = ("perceptron", "dn", "scg", "mira")

# options each learner takes besides (iterations, prior_stddev, seed, callback)
_METHOD_OPTIONS = {
    "pll": {"tolerance"},
    "dn": {"inference", "samples", "burn_in", "init", "initial_lambda", "max_lambda", "max_step", "tolerance",
           "max_seconds", "average", "final_samples"},
    "scg": {"inference", "samples", "burn_in", "init", "initial_lambda", "max_lambda", "max_step", "tolerance",
            "max_seconds", "average", "final_samples"},
    "perceptron": {"map_method", "learning_rate", "per_weight", "init", "max_seconds", "expectations", "samples",
                   "burn_in"},
    "mira": {"map_method", "C", "init", "max_seconds"},
    "piecewise": {"subsets", "negatives", "max_examples"},
    "samplerank": {"loss", "update", "steps", "epochs", "temperature", "accept", "margin", "C", "learning_rate",
                   "proposals", "max_seconds", "average", "start", "init", "trace_every", "inference", "log",
                   "linkage", "held_out", "pair_features", "set_features", "pair_layer", "linkage_rule",
                   "world_splits"},
}


# samplerank's options for the merge-ranking learner (--inference agglomerative) alone, refused by the MH chain,
# with what the model needs for them
AGGLOMERATIVE_ONLY = {"linkage": "a model with linkage features", "held_out": "", "set_features": "",
                      "linkage_rule": "a model with linkage features", "world_splits": "",
                      "pair_layer": "a model with a pair layer", "pair_features": "a model with a pair layer"}


@dataclass
class LearnedModel:
    mln: "MLN"                      # the model with learned weights
    text: str                       # its .mln text, split formulas commented as Alchemy does
    result: LearnResult             # parameters and trace
    query_predicates: list[str]
    networks: list[GroundNetwork] = field(repr=False, default_factory=list)
    ground_seconds: float = 0.0
    learn_seconds: float = 0.0


def learned_predicates(mln: "MLN", query_predicates: Sequence[str] | str | None, method: str) -> list[str]:
    """The predicates whose atoms are learned (see module docstring)."""
    if isinstance(query_predicates, str):
        query_predicates = [q.strip() for q in query_predicates.split(",") if q.strip()]
    if query_predicates:
        names = list(dict.fromkeys(query_predicates))
        unknown = [q for q in names if q not in mln.predicates]
        if unknown:
            raise QueryError(
                f"unknown query predicate{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                f"(the model declares {', '.join(mln.predicates) or 'none'})"
            )
        return names
    if method == "pll":
        return list(mln.predicates)
    open_preds = [name for name, decl in mln.predicates.items() if not decl.closed]
    if open_preds and len(open_preds) < len(mln.predicates):
        return open_preds
    raise OptionError(
        "discriminative learning needs the query (non-evidence) predicates: name them with --ne "
        "(query_predicates=[...])"
    )


def _merge(dbs: Sequence["Database"]) -> "Database":
    from ..model import Database

    return Database(
        atoms=[a for db in dbs for a in db.atoms],
        function_values=[v for db in dbs for v in db.function_values],
    )


def _learner_options(method: str, options: dict) -> dict:
    allowed = _METHOD_OPTIONS[method]
    bad = sorted(k for k, v in options.items() if v is not None and k not in allowed)
    if bad:
        raise OptionError(
            f"option{'s' if len(bad) > 1 else ''} {', '.join(b.replace('_', '-') for b in bad)} "
            f"do{'es' if len(bad) == 1 else ''} not apply to --method {method}"
        )
    return {k: v for k, v in options.items() if v is not None}


def _check_numbers(iterations: int | None, prior_stddev: float | None) -> None:
    if iterations is not None and (isinstance(iterations, bool) or int(iterations) != iterations or iterations < 1):
        raise OptionError(f"iterations must be a positive integer, got {iterations!r}")
    if prior_stddev is not None and not (prior_stddev > 0):
        raise OptionError(f"prior-stddev must be positive, got {prior_stddev!r}")


LEARNER_CLAUSE_BYTES = 400       # a learner's arrays per training clause beyond the network: the chains or
                                 # searches of its inference (MC-SAT, MaxWalkSAT) and per-clause counts


def _check_learner_memory(nets: Sequence[GroundNetwork], method: str) -> None:
    """Stop with the estimate before a learner would outgrow the memory budget."""
    from ..resources import _limit, check_budget

    clauses = sum(n.n_clauses for n in nets)
    need = LEARNER_CLAUSE_BYTES * clauses + (sum(n.nbytes() for n in nets) if _limit is not None else 0)
    check_budget(f"learning ({method}) on {clauses:,} ground training clauses", need,
                 "Ways out: smaller training databases (several .db files with --multiple-databases), "
                 "--drop-hard, --method pll (the leanest), a machine with more memory, or a larger --memory-limit.")


def ground_training(
    mln: "MLN",
    dbs: Sequence["Database"],
    predicates: list[str],
    multiple_databases: bool,
) -> list[GroundNetwork]:
    """One ground network per training world, with training truth values."""

    if not dbs:
        raise LearningError("no training database given")
    worlds = list(dbs) if multiple_databases else [_merge(dbs)]
    queries = [Query(p) for p in predicates]
    from ..parallel.options import current

    if current().on_ray and len(worlds) > 1:
        from ..distributed.learn import ground_databases

        return ground_databases(mln, worlds, queries, current())
    from .. import progress
    from ..parallel.grounding import ground_network
    from ..parallel.tasks import each

    # one training world per thread (DuckDB's queries and the numpy work release the GIL)
    with progress.task(f"grounding {len(worlds)} training database{'s' if len(worlds) > 1 else ''}"):
        return each(lambda db: ground_network(mln, [db], queries, allow_unweighted=True, truth_closed_world=True),
                    worlds)


def learn_model(mln: "MLN", dbs: "Sequence[Database] | Database", **options) -> "LearnedModel":
    """Ground, learn, and build the learned model: :func:`_learn_model` with
    ``threads`` / ``ray_address`` (:class:`~markovlogic.parallel.ParallelOptions`)
    in force: several training databases (``multiple_databases``) are ground
    and sampled in parallel, one per thread (or their grounding one per Ray
    task)."""
    from ..parallel.options import pop_options, using

    parallel = pop_options(options)
    if parallel.on_ray:
        from ..model import Database

        several = not isinstance(dbs, Database) and len(list(dbs)) > 1
        if not (options.get("multiple_databases") and several):
            raise OptionError("ray_address: learning and its inference run on this machine; only the grounding of "
                              "several training databases (multiple_databases=True, two or more databases) goes "
                              "to a Ray cluster")
    from .. import jit

    jit.watch()
    before = jit.compile_seconds()
    with using(parallel):
        model = _learn_model(mln, dbs, **options)
    spent = jit.compile_seconds() - before
    if spent > 0:            # kernel compilation (first run) is not learning time
        model.result.stats["compile_seconds"] = spent
        take = min(spent, model.learn_seconds)
        model.learn_seconds -= take
        model.ground_seconds = max(0.0, model.ground_seconds - (spent - take))
    return model


def _learn_model(
    mln: "MLN",
    dbs: "Sequence[Database] | Database",
    *,
    query_predicates: Sequence[str] | str | None = None,
    method: str = "dn",
    multiple_databases: bool = False,
    iterations: int | None = None,
    prior_stddev: float | None = None,
    seed: int = 0,
    callback: Callback | None = None,
    networks: Sequence[GroundNetwork] | None = None,
    drop_hard: bool = False,
    hidden: Sequence[str] | str | None = None,
    em: str | None = None,
    **options,
) -> LearnedModel:
    """Ground, learn, and build the learned model (see module docstring).

    ``networks``: the training networks of an earlier call with the same
    model, databases, predicates and ``multiple_databases`` (its
    ``LearnedModel.networks``), reused instead of grounding again (several
    methods or seeds on one training set; ``ground_seconds`` then counts
    only the splitting of formulas into clauses).

    ``options`` go to the learner: ``inference`` ("mcsat" or "exact"),
    ``samples``, ``burn_in``, ``init``, ``tolerance``, ``average``,
    ``max_seconds``, ``final_samples`` (dn, scg); ``map_method``,
    ``learning_rate``, ``init``, ``expectations``, ``samples``, ``burn_in``
    (perceptron); ``map_method``, ``C``, ``init`` (mira); the fields of
    ``SampleRankOptions`` (samplerank: over the clusterings of equivalence
    query predicates, learn/samplerank.py, else over the query atoms of the
    ground networks, learn/samplerank_atoms.py; ``iterations`` counts its
    epochs). ``map_method="cpi"``
    (MIRA's default): the hard formulas are not ground but separated by
    cutting planes at each MAP call, over the soft clauses ground in full
    (``learn/lazy.py``). Every
    discriminative learner but samplerank starts from the pseudo-likelihood
    optimum unless ``init="model"`` (samplerank: from the model's weights
    unless ``init="pll"``).

    ``drop_hard``: learn without the hard formulas (and without the axioms of
    declared equivalences), which can be too large to ground (transitivity over
    every triple); the learned model keeps them unchanged. Learning soft weights
    this way is exact when the hard formulas hold in the training data and the
    soft ones do not interact through them (pseudo-likelihood of a pairwise
    model, for instance).

    ``hidden``: predicates whose atoms are all unknown in the training data
    (absent from it); with them, or with ``?`` atoms in the databases, dn and
    scg maximise the observed-data likelihood, and ``em`` ("hard" or "soft")
    chooses EM instead (``learn/hidden.py``)."""
    from ..model import Database
    from . import LEARNERS
    from .output import learned_mln_text, param_coefficients, split_clauses

    from ..checks import check_databases, check_model, check_seconds, check_seed

    check_model(mln)
    check_databases(dbs)
    check_seed(seed)
    check_seconds(options.get("max_seconds"))
    if method not in METHODS:
        raise OptionError(f"unknown learning method {method!r}; choose one of {', '.join(METHODS)}")
    _check_numbers(iterations, prior_stddev)
    if (em is not None or hidden) and method not in ("dn", "scg"):
        # checked before samplerank and piecewise branch off: they would ignore them
        given = " and ".join(f for f, v in (("--hidden", hidden), (f"--em {em}", em)) if v)
        raise OptionError(f"{given}: --hidden and --em apply to --method dn or scg (learning with unknown atoms), "
                          f"not {method}")
    kwargs = _learner_options(method, options)
    if method == "piecewise":
        from .piecewise import PiecewiseOptions, learn_piecewise_model

        if networks is not None:
            raise OptionError("piecewise training builds its own cluster models: do not pass networks=")
        if iterations is not None:
            kwargs["iterations"] = int(iterations)
        if prior_stddev is not None:
            kwargs["prior_stddev"] = float(prior_stddev)
        return learn_piecewise_model(mln, dbs, query_predicates=query_predicates,
                                     multiple_databases=multiple_databases, seed=seed, callback=callback,
                                     options=PiecewiseOptions(**kwargs))
    if method == "samplerank":
        from .samplerank_core import SampleRankOptions

        if iterations is not None:
            kwargs.setdefault("epochs", int(iterations))
        if prior_stddev is not None:
            raise OptionError("--prior-stddev does not apply to samplerank (its margin and C bound the steps)")
        inference = kwargs.pop("inference", None)
        log = kwargs.pop("log", None)
        kind, chosen = samplerank_kind(mln, query_predicates)
        if kind == "clusters" and inference is None:
            # linkage features score merges (MH refuses them): train for the agglomerative search.
            # A model of summed pair and set features keeps the MH chain's SampleRank: measured on
            # examples/cora-er/cora-sets.mln, fold 1 (README's learn command), its weights cluster test
            # SameBib at pairwise F1 .974 under agglomerative MAP, the merge-ranking learner's at .823
            # (it under-merges a sum-only model).
            inference = "agglomerative" if any(f.link for f in mln.set_features) else "mh"
        if kind == "clusters" and inference == "agglomerative":
            from .merge_rank import learn_merge_rank_options, learn_merge_rank_model

            _check_truth(dbs, chosen, multiple_databases)
            return learn_merge_rank_model(mln, dbs, query_predicates=query_predicates,
                                          multiple_databases=multiple_databases, seed=seed, callback=callback,
                                          options=learn_merge_rank_options(kwargs), log=log)
        if inference not in (None, "mh"):
            raise OptionError(f"samplerank trains for the inference it serves: --inference agglomerative (the default "
                              f"for a model with linkage features) or mh (the default otherwise), not {inference!r}"
                              + ("" if kind == "clusters" else " (over ordinary atoms it walks MH chains: leave "
                                 "--inference out)"))
        if kind != "clusters" and inference is not None:
            raise OptionError("--inference applies to samplerank over an equivalence predicate (agglomerative or mh)")
        for key, needs in AGGLOMERATIVE_ONLY.items():
            if kwargs.pop(key, None) is not None:
                raise OptionError(f"--{key.replace('_', '-')} applies to samplerank --inference agglomerative"
                                  + (f" ({needs})" if needs else ""))
        options_sr = SampleRankOptions(**kwargs).check()
        _check_truth(dbs, chosen, multiple_databases)
        if kind == "clusters":
            from .samplerank import learn_samplerank_model

            if networks is not None:
                raise OptionError("samplerank over an equivalence predicate builds its own cluster models: "
                                  "do not pass networks=")
            return learn_samplerank_model(mln, dbs, query_predicates=query_predicates,
                                          multiple_databases=multiple_databases, seed=seed, callback=callback,
                                          options=options_sr)
        from .samplerank_atoms import check_atom_options

        check_atom_options(options_sr, chosen)
        query_predicates = chosen
        kwargs = {"options": options_sr}
        iterations = None
    if iterations is not None:
        kwargs["iterations"] = int(iterations)
    if prior_stddev is not None:
        kwargs["prior_stddev"] = float(prior_stddev)
    if isinstance(dbs, Database):
        dbs = [dbs]
    original = mln
    if drop_hard:
        mln = _without_hard(mln)
    predicates = learned_predicates(mln, query_predicates, method)
    hidden_preds = _hidden_predicates(mln, hidden, method, em)
    predicates += [p for p in hidden_preds if p not in predicates]

    start = time.perf_counter()
    clausal = split_clauses(mln)
    lazies = []
    if method == "mira" and "map_method" not in kwargs:
        kwargs["map_method"] = "cpi"
    cutting_planes = method in ("perceptron", "mira") and kwargs.get("map_method") == "cpi"
    streamed = None
    if networks is not None:
        nets = list(networks)
        if not nets:
            raise LearningError("no training network given")
        if cutting_planes:
            raise OptionError("map_method='cpi' grounds its own training networks: do not pass networks=")
    elif cutting_planes:
        from .lazy import cutting_plane_factory, ground_training_lazy

        nets, lazies = ground_training_lazy(clausal.mln, dbs, predicates, multiple_databases)
        kwargs["map_method"] = cutting_plane_factory(lazies)
    elif method == "pll" and not hidden_preds and (streamed := _stream_pll(clausal.mln, dbs, predicates,
                                                                             multiple_databases)) is not None:
        nets = []
    else:
        nets = ground_training(clausal.mln, dbs, predicates, multiple_databases)
    if hidden_preds:
        nets = [_hide(net, hidden_preds) for net in nets]
    ground_seconds = time.perf_counter() - start
    if streamed is None:                    # streamed: no network was kept
        _check_learner_memory(nets, method)
    from .hidden import has_unknown

    unknown = has_unknown(nets)
    if em is not None and not unknown:
        raise OptionError(f"--em {em} learns with unknown atoms, and the training data has none "
                          "(name hidden predicates with --hidden, or mark atoms unknown with '?')")
    if unknown and method not in ("dn", "scg"):
        raise OptionError(f"the training data leaves query atoms unknown ('?' atoms or --hidden): --method {method} "
                          "needs every truth value; use --method dn or scg (observed-data likelihood) or --em hard|soft")
    try:
        if unknown:
            result = _learn_hidden(nets, kwargs, em, seed, callback)
        elif streamed is not None:
            result = _learn_streamed(streamed, kwargs, callback)
        else:
            result = LEARNERS[method](nets, seed=seed, callback=callback, **kwargs)
    finally:
        for lazy in lazies:
            lazy.close()
    if lazies:
        result.stats["truth_hard_violated"] = sum(lazy.truth_hard_violated for lazy in lazies)
        result.stats["hard_groundings"] = sum(p.n_clauses for lazy in lazies for p in lazy.hard_parts)
    learn_seconds = time.perf_counter() - start - ground_seconds

    from ..lang.parser import parse_mln_text

    coefficients = streamed.coefficients if streamed is not None else param_coefficients(nets, len(result.params))
    text = learned_mln_text(clausal, result.param_info, result.params, coefficients)
    learned = parse_mln_text(text, filename="<learned>")
    if drop_hard:
        learned = _with_hard(learned, original)
        text = learned.to_string()
    learned.remember_source(text)       # MLN.save writes it as it is (split formulas' comments kept)
    return LearnedModel(
        mln=learned,
        text=text,
        result=result,
        query_predicates=predicates,
        networks=nets,
        ground_seconds=ground_seconds,
        learn_seconds=learn_seconds,
    )


def _stream_pll(mln: "MLN", dbs, predicates: list[str], multiple_databases: bool):
    """Generative learning's terms counted while grounding, without keeping the
    networks (``learn/pll_stream.py``); None when a training world needs its
    network (then it is ground as for the other learners) or its grounding
    goes to a Ray cluster."""
    from ..parallel.options import current

    worlds = list(dbs) if multiple_databases else [_merge(dbs)]
    if current().on_ray and len(worlds) > 1:
        return None
    from .. import progress
    from .pll_stream import stream_pll

    with progress.task(f"grounding {len(worlds)} training database{'s' if len(worlds) > 1 else ''}"):
        return stream_pll(mln, worlds, predicates)


def _learn_streamed(streamed, kwargs: dict, callback) -> LearnResult:
    """Learn on streamed PLL terms (``learn/pll_stream.py``)."""
    import numpy as np

    from .pll import learn_pll_terms

    options = {k: v for k, v in kwargs.items() if k in ("iterations", "prior_stddev", "tolerance")}
    learnable = np.array([not p.fixed for p in streamed.param_info], dtype=bool)
    result = learn_pll_terms(streamed.terms, streamed.params, learnable, streamed.param_info, callback=callback,
                             **options)
    result.stats.update(streamed.stats)
    result.stats["streamed"] = True
    return result


def _hidden_predicates(mln: "MLN", hidden, method: str, em: str | None) -> list[str]:
    """Check ``hidden`` (names or a comma-separated string) against the model."""
    if hidden is None:
        names: list[str] = []
    elif isinstance(hidden, str):
        names = [h.strip() for h in hidden.split(",") if h.strip()]
    else:
        names = list(hidden)
    if em is not None and em not in ("hard", "soft"):
        raise OptionError(f"unknown --em {em!r}; choose hard or soft")
    if (names or em is not None) and method not in ("dn", "scg"):
        raise OptionError(f"--hidden and --em apply to --method dn or scg, not {method}")
    from ..lang.parser import _predicates_in

    mentioned = {p for f in mln.formulas for p in _predicates_in(f.formula)}
    for name in names:
        if name not in mln.predicates:
            raise OptionError(f"--hidden names an undeclared predicate {name!r}")
        if name not in mentioned:
            raise OptionError(f"hidden predicate {name} is not mentioned by any formula: nothing could be learned about it")
    return names


def _hide(net: GroundNetwork, predicates: list[str]) -> GroundNetwork:
    """Every atom of ``predicates`` unknown (truth -1)."""
    from dataclasses import replace

    import numpy as np

    ids = [net.predicates.index(p) for p in predicates if p in net.predicates]
    truth = np.full(net.n_atoms, 1, dtype=np.int8) if net.truth is None else net.truth.copy()
    truth[np.isin(net.atom_pred, ids) & net.is_query] = -1
    return replace(net, truth=truth)


def _learn_hidden(nets, kwargs: dict, em: str | None, seed: int, callback) -> LearnResult:
    from .hidden import HiddenOptions, learn_hidden

    allowed = {"inference", "samples", "burn_in", "iterations", "prior_stddev", "max_seconds", "tolerance", "init"}
    bad = sorted(k for k in kwargs if k not in allowed)
    if bad:
        raise OptionError(f"option{'s' if len(bad) > 1 else ''} {', '.join(b.replace('_', '-') for b in bad)} "
                          "do not apply to learning with hidden atoms")
    opt = {k: v for k, v in kwargs.items() if k not in ("init", "tolerance")}
    if "tolerance" in kwargs:
        opt["tolerance"] = float(kwargs["tolerance"])
    init = kwargs.get("init")
    if isinstance(init, str):
        if init not in ("model", "pll"):
            raise OptionError(f"unknown init {init!r}; choose pll or model")
        init = None            # the model's weights (pll needs every truth value)
    return learn_hidden(nets, options=HiddenOptions(em=em, **opt), seed=seed, init=init, callback=callback)


def samplerank_kind(mln: "MLN", query_predicates: Sequence[str] | str | None) -> tuple[str, list[str]]:
    """Which SampleRank learns these query predicates: ``("clusters", preds)``
    when they are equivalence predicates (learn/samplerank.py; with none
    named, any equivalence predicate of the model), ``("atoms", preds)``
    when none is (learn/samplerank_atoms.py). Both at once is refused."""
    from ..logic.equivalence import equivalence_predicates

    eq = equivalence_predicates(mln)
    if isinstance(query_predicates, str):
        query_predicates = [q.strip() for q in query_predicates.split(",") if q.strip()]
    if not query_predicates and eq:
        return "clusters", sorted(eq)
    preds = learned_predicates(mln, query_predicates, "samplerank")
    clusters = [p for p in preds if p in eq]
    if not clusters:
        if getattr(mln, "set_features", None):
            raise LearningError("set-level features are learned over the clusterings of an equivalence "
                                "predicate; no query predicate is one")
        return "atoms", preds
    others = [p for p in preds if p not in eq]
    if others:
        raise LearningError(
            f"SampleRank learns either equivalence predicates (over clusterings) or ordinary query predicates "
            f"(over atoms), not both in one run: {', '.join(clusters)} "
            f"{'is an equivalence' if len(clusters) == 1 else 'are equivalences'}, {', '.join(others)} "
            f"{'is' if len(others) == 1 else 'are'} not; learn them in separate runs (--ne)")
    return "clusters", clusters


def _check_truth(dbs, predicates: list[str], multiple_databases: bool) -> None:
    """SampleRank's loss needs the training truth: every query predicate must
    have atoms listed in every training world."""
    from ..model import Database

    worlds = [dbs] if isinstance(dbs, Database) else list(dbs)
    if not worlds:
        raise LearningError("no training database given")
    if not multiple_databases:
        worlds = [_merge(worlds)]
    for k, db in enumerate(worlds):
        listed = {a.atom.predicate for a in db.atoms if a.truth is not None}
        missing = [p for p in predicates if p not in listed]
        if missing:
            where = f"training database {k + 1}" if len(worlds) > 1 else "the training data"
            raise LearningError(
                f"{where} give{'s' if len(worlds) > 1 else ''} no truth for the query predicate"
                f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}: no atom of "
                f"{'them' if len(missing) > 1 else 'it'} is listed. SampleRank ranks worlds by their loss "
                "against the training truth: list the true atoms (unlisted ones are then false)")


def _without_hard(mln: "MLN") -> "MLN":
    """The model without its hard formulas and with equivalence declarations
    turned into plain predicates (their axioms are hard)."""
    from dataclasses import replace

    from ..model import MLN

    preds = {n: replace(d, equivalence=False) if getattr(d, "equivalence", False) else d
             for n, d in mln.predicates.items()}
    return MLN(types=dict(mln.types), predicates=preds, functions=dict(mln.functions),
               formulas=[f for f in mln.formulas if not f.hard], set_features=list(mln.set_features),
               declared_types=mln.declared_types)


def _with_hard(learned: "MLN", original: "MLN") -> "MLN":
    """The learned model with the original's hard formulas and declarations back."""
    from ..model import MLN

    return MLN(types=dict(learned.types), predicates=dict(original.predicates), functions=dict(learned.functions),
               formulas=list(learned.formulas) + [f for f in original.formulas if f.hard],
               set_features=list(learned.set_features), declared_types=original.declared_types)


def learn_weights(
    mln: "MLN",
    dbs: "Sequence[Database] | Database",
    *,
    query_predicates: Sequence[str] | str | None = None,
    method: str = "dn",
    multiple_databases: bool = False,
    iterations: int | None = None,
    prior_stddev: float | None = None,
    seed: int = 0,
    callback: Callback | None = None,
    **options,
) -> "MLN":
    """A new ``MLN`` whose formulas carry weights learned from ``dbs``
    (:func:`learn_model` gives the trace and the .mln text too)."""
    return learn_model(
        mln, dbs, query_predicates=query_predicates, method=method, multiple_databases=multiple_databases,
        iterations=iterations, prior_stddev=prior_stddev, seed=seed, callback=callback, **options,
    ).mln
