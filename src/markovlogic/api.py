"""Model-level inference: from an MLN and evidence to named answers.

``MLN.ground``, ``MLN.map`` and ``MLN.infer`` call these functions; the
``mln infer`` command does too. They ground, run an algorithm from ``infer/``
on the ground network, and wrap its arrays with atom names: a set and a pandas
DataFrame for MAP, a DataFrame and a dict for marginals.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from .checks import check_databases, check_model, check_sampling_options, check_world_arguments
from .errors import OptionError
from .ground.network import GroundNetwork
from .infer import EXACT_DEFAULT_SECONDS
from .infer.marginals import METHODS as _SAMPLER_METHODS

MARGINAL_METHODS = tuple(dict.fromkeys(_SAMPLER_METHODS + ("mh",)))
from .lang.ast import Query

if TYPE_CHECKING:
    import pandas as pd

    from .model import MLN, Database

MAP_METHODS = ("ilp", "maxwalksat", "cpi", "cpsat", "exact", "mh", "agglomerative", "sgmp", "multitask-mh")
CLUSTER_METHODS = ("mh", "agglomerative")    # inference over clusterings (cluster/api.py)


def _atom_arguments(net: GroundNetwork, atoms: np.ndarray) -> tuple[list[str], list[tuple[str, ...]]]:
    """Predicate names and argument-name tuples of the given atom ids."""
    preds = np.asarray(net.predicates, dtype=object)[net.atom_pred[atoms]].tolist()
    consts = np.asarray(net.constants + ("",), dtype=object)  # -1 pads map to ""
    args = net.atom_args[atoms]
    arg_names = consts[np.where(args < 0, len(net.constants), args)]
    arguments = [tuple(a for a in row if a != "") for row in arg_names.tolist()]
    return preds, arguments


def _format_atoms(preds: list[str], arguments: list[tuple[str, ...]]) -> list[str]:
    return [f"{p}({','.join(a)})" for p, a in zip(preds, arguments)]


def _atom_names(net: GroundNetwork, atoms: np.ndarray) -> list[str]:
    return _format_atoms(*_atom_arguments(net, atoms))


def _sorted_query_atoms(net: GroundNetwork) -> tuple[np.ndarray, list[str]]:
    """Query atom ids and their names, in name order (the order of results)."""
    q = np.flatnonzero(net.is_query)
    names = _atom_names(net, q)
    order = sorted(range(len(names)), key=names.__getitem__)
    return q[np.asarray(order, dtype=np.int64)], [names[i] for i in order]


def _atom_frame(net: GroundNetwork, atoms: np.ndarray) -> pd.DataFrame:
    """predicate and argument names of the given atom ids, one row each."""
    import pandas as pd  # on demand: importing pandas costs ~0.2 s, and the CLI never needs it

    preds, arguments = _atom_arguments(net, atoms)
    return pd.DataFrame({"atom": _format_atoms(preds, arguments), "predicate": preds, "arguments": arguments})


@dataclass
class MapAnswer:
    """The most likely world: true query atoms, score and (exact methods) bound."""

    network: GroundNetwork
    world: np.ndarray            # bool over network atoms
    score: float
    cost: float
    hard_violated: int
    method: str
    optimal: bool = False
    bound: float | None = None
    gap: float | None = None
    ground_seconds: float = 0.0
    infer_seconds: float = 0.0
    stats: dict = field(default_factory=dict)

    @property
    def frame(self) -> pd.DataFrame:
        """Every query atom with its value (True/False)."""
        q = np.flatnonzero(self.network.is_query)
        df = _atom_frame(self.network, q)
        df["value"] = self.world[q]
        return df.sort_values("atom", kind="stable").reset_index(drop=True)

    @property
    def atoms(self) -> set[str]:
        """The query atoms that are true in the MAP world."""
        q = np.flatnonzero(self.network.is_query & self.world)
        return set(_atom_names(self.network, q))

    def to_alchemy(self, all_atoms: bool = False) -> str:
        """Alchemy's result format: true atoms one per line, or every atom with 0/1."""
        ids, names = _sorted_query_atoms(self.network)
        values = self.world[ids].tolist()
        if all_atoms:
            lines = [f"{a} {int(v)}" for a, v in zip(names, values)]
        else:
            lines = [a for a, v in zip(names, values) if v]
        return "".join(line + "\n" for line in lines)


@dataclass
class Marginals:
    """P(atom = true) for every query atom."""

    network: GroundNetwork
    probabilities: np.ndarray    # over network atoms
    method: str
    samples: int = 0
    ground_seconds: float = 0.0
    infer_seconds: float = 0.0
    stats: dict = field(default_factory=dict)

    @property
    def frame(self) -> pd.DataFrame:
        q = np.flatnonzero(self.network.is_query)
        df = _atom_frame(self.network, q)
        df["probability"] = self.probabilities[q]
        return df.sort_values("atom", kind="stable").reset_index(drop=True)

    def as_dict(self) -> dict[str, float]:
        df = self.frame
        return dict(zip(df["atom"], df["probability"].astype(float)))

    def to_alchemy(self) -> str:
        ids, names = _sorted_query_atoms(self.network)
        return "".join(f"{a} {p:.4f}\n" for a, p in zip(names, self.probabilities[ids].tolist()))


def normalize_queries(mln: "MLN", queries: Sequence[str | Query] | str | None) -> list[Query] | None:
    """Accept ``"Smokes,Cancer"``, ``["Smokes", "advisedBy(x,Ida)"]`` or Query objects."""
    if queries is None:
        return None
    from .lang.parser import parse_queries

    if isinstance(queries, str):
        queries = [queries]
    out: list[Query] = []
    for q in queries:
        if isinstance(q, Query):
            out.append(q)
        else:
            out.extend(parse_queries(q, mln))
    return out


def _as_list(db: "Database | Sequence[Database]") -> list["Database"]:
    from .model import Database

    return [db] if isinstance(db, Database) else list(db)


def _no_set_features(mln: "MLN", method: str) -> None:
    """Set-level features are evaluated on clusterings only."""
    features = getattr(mln, "set_features", None)
    if features:
        f = features[0]
        where = dict(file=f.pos.file, line=f.pos.line, column=f.pos.column) if f.pos is not None else {}
        raise OptionError(
            f"the model has set-level features, which only inference over clusterings evaluates: use "
            f"--method mh or agglomerative (not {method})", **where)


def ground_model(
    mln: "MLN",
    db: "Database | Sequence[Database]",
    queries: Sequence[str | Query] | str | None = None,
    *,
    closed: Sequence[str] = (),
    open_: Sequence[str] = (),
    db_path: str | None = None,
    **options,
) -> GroundNetwork:
    from .parallel.grounding import ground_network

    check_model(mln)
    check_databases(db)
    check_world_arguments(closed, open_, db_path)
    return ground_network(
        mln,
        _as_list(db),
        normalize_queries(mln, queries),
        closed=closed,
        open_=open_,
        db_path=db_path,
        **options,
    )


def map_inference(
    mln: "MLN",
    db: "Database | Sequence[Database]",
    queries: Sequence[str | Query] | str | None = None,
    *,
    method: str | None = None,
    closed: Sequence[str] = (),
    open_: Sequence[str] = (),
    db_path: str | None = None,
    **options,
) -> MapAnswer:
    """The most likely world of the query atoms given the evidence.

    ``hard_weight=W`` (not with ``cpi``) solves the network with every hard
    clause made soft with weight ``W``, as Alchemy and Tuffy do when hard
    formulas contradict the evidence; the answer's ``hard_violated`` counts
    the hard clauses the world breaks, and its cost includes ``W`` for each.

    ``threads=N`` (default: the machine's cores) and ``ray_address=...``
    (:class:`~markovlogic.parallel.ParallelOptions`) say where the work runs
    (:mod:`markovlogic.parallel.map`, :mod:`markovlogic.distributed`).

    ``lazy=True`` (or a dict of :class:`~markovlogic.infer.lazy.LazyOptions`
    fields) runs lazy MaxWalkSAT (the default method then), which grounds
    only the clauses its search can reach (``infer/lazy/maxwalksat.py``).
    """
    from . import jit
    from .parallel.options import pop_options, using

    check_world_arguments(closed, open_, db_path)
    if method is None:
        lazy_on = options.get("lazy") not in (None, False)
        if not lazy_on:
            # models over clusterings (declared equivalences, set-level features): agglomerative, as the CLI
            from .cluster.api import default_method

            try:
                method = default_method(mln, normalize_queries(mln, queries), True)
            except Exception:       # bad queries: reported below with the method's own checks
                method = None
        method = method or ("maxwalksat" if lazy_on else "ilp")
    parallel = pop_options(options)
    jit.watch()
    before = jit.compile_seconds()
    if parallel.on_ray and method not in CLUSTER_METHODS and method != "cpi":
        if options.get("lazy") not in (None, False):
            raise OptionError("lazy inference runs on one machine; drop --lazy or --ray-address")
        from .distributed.infer import distributed_map

        check_model(mln)
        check_databases(db)
        check_sampling_options(options)
        answer = distributed_map(mln, _as_list(db), normalize_queries(mln, queries), method=method, closed=closed,
                                 open_=open_, db_path=db_path, parallel=parallel, **options)
    else:
        with using(parallel):
            answer = _map_inference(mln, db, queries, method=method, closed=closed, open_=open_, db_path=db_path,
                                    **options)
    jit.book(answer, before)
    return answer


def _map_inference(mln, db, queries, *, method, closed, open_, db_path, **options) -> MapAnswer:
    check_model(mln)
    check_databases(db)
    check_sampling_options(options)
    if method not in MAP_METHODS:
        raise OptionError(f"unknown MAP method {method!r}; choose one of {', '.join(MAP_METHODS)}")
    lazy = options.pop("lazy", None)
    if lazy is not None and lazy is not False:
        return _lazy_map(mln, db, queries, method, closed, open_, db_path, lazy, options)
    if method in CLUSTER_METHODS:
        from .cluster.api import cluster_map, clusters_queried

        # mh over the clusterings of equivalence predicates; on other models mh
        # runs over the atoms of the ground network (infer/mh.py)
        if method == "agglomerative" or clusters_queried(mln, normalize_queries(mln, queries)):
            from . import progress

            with progress.task(f"MAP over clusterings ({method})"):
                return cluster_map(mln, _as_list(db), normalize_queries(mln, queries), method=method,
                                   closed=closed, open_=open_, db_path=db_path, **options)
    _no_set_features(mln, method)
    hard_weight = options.pop("hard_weight", None)
    if hard_weight is not None:
        if method == "cpi":
            raise OptionError("hard_weight is not supported with cpi; use ilp, cpsat, maxwalksat or exact")
        if isinstance(hard_weight, bool) or not isinstance(hard_weight, (int, float)) \
                or not np.isfinite(hard_weight) or hard_weight <= 0:
            raise OptionError(f"hard_weight must be a positive number, got {hard_weight!r}")
    if method in ("ilp", "cpi", "cpsat") and "max_seconds" not in options:
        options["max_seconds"] = EXACT_DEFAULT_SECONDS
    from .jit import Stages

    stages = Stages()
    start = time.perf_counter()
    if method == "cpi":
        from .infer.cpi import cpi_map

        result, net, ground_seconds = cpi_map(
            mln, _as_list(db), normalize_queries(mln, queries),
            closed=closed, open_=open_, db_path=db_path, **options,
        )
    else:
        net = ground_model(mln, db, queries, closed=closed, open_=open_, db_path=db_path)
        ground_seconds = stages.lap()          # kernel compilation (first run) booked apart
        from .parallel.map import solve_map_parallel
        from .parallel.options import current

        if options.get("max_seconds") is not None:
            # the limit covers the whole method: grounding took part of it (the
            # solver keeps at least a second to return a world)
            options["max_seconds"] = max(1.0, float(options["max_seconds"]) - ground_seconds)
        hard_net = net
        if hard_weight is not None:
            net = net.softened(float(hard_weight))
        from .infer.plan import approximate_map, check_memory, exact_fits, exact_share, exact_then_approximate

        if method == "ilp" and not exact_fits(net, options.get("max_seconds")):
            # too large to set the exact model up within the limit: LP dual bound, then MaxWalkSAT (infer/plan.py)
            check_memory(net, "lp")             # MaxWalkSAT's need is checked if it is needed (infer/plan.py)
            result = approximate_map(net, float(options["max_seconds"]), int(options.get("seed", 0)), current())
        elif method == "ilp" and exact_share(net, options.get("max_seconds")) is not None:
            # large: the exact ILP for part of the limit, the approximate path for the rest if it proves nothing
            check_memory(net, method)
            from . import progress

            def solve_exact(limit: float):
                with progress.task(f"MAP (ilp) on {net.n_atoms:,} atoms, {net.n_clauses:,} clauses"):
                    return solve_map_parallel(net, method, dict(options, max_seconds=limit), current())

            result = exact_then_approximate(net, float(options["max_seconds"]), solve_exact,
                                            int(options.get("seed", 0)), current())
        else:
            check_memory(net, method)
            from . import progress

            with progress.task(f"MAP ({method}) on {net.n_atoms:,} atoms, {net.n_clauses:,} clauses"):
                result = solve_map_parallel(net, method, options, current())
            result.stats.setdefault("path", method)
        if hard_weight is not None:
            result.hard_violated = hard_net.hard_violated(result.world)
            result.stats["hard_violated"] = result.hard_violated
            result.stats["hard_weight"] = float(hard_weight)
        if result.hard_violated == 0:
            # ties toward false; not for CPI, whose network is only the part
            # it instantiated (a flip there could break a clause left out)
            from .infer.settle import settle_false

            world, flipped = settle_false(net, result.world)
            if flipped:
                result.world = world
                result.score, result.cost = net.score(world), net.cost(world)
                result.stats["ties_set_false"] = flipped
        net = hard_net          # names and hard flags of the model as written
    if method == "cpi":
        total = time.perf_counter() - start
        infer_seconds = total - ground_seconds      # jit.book takes compile time out (map_inference)
    else:
        infer_seconds = stages.lap()
        if stages.compile > 0:
            result.stats["compile_seconds"] = stages.compile
    return MapAnswer(
        network=net,
        world=result.world,
        score=result.score,
        cost=result.cost,
        hard_violated=result.hard_violated,
        method=method,
        optimal=result.optimal,
        bound=result.bound,
        gap=result.gap,
        ground_seconds=ground_seconds,
        infer_seconds=infer_seconds,
        stats=dict(result.stats),
    )


def marginal_inference(
    mln: "MLN",
    db: "Database | Sequence[Database]",
    queries: Sequence[str | Query] | str | None = None,
    *,
    method: str = "mcsat",
    closed: Sequence[str] = (),
    open_: Sequence[str] = (),
    db_path: str | None = None,
    **options,
) -> Marginals:
    """P(atom = true | evidence) for every query atom. ``threads`` and
    ``ray_address`` as for :func:`map_inference` (:mod:`markovlogic.parallel.marginals`).

    ``lazy=True`` (or a dict of :class:`~markovlogic.infer.lazy.LazyOptions`
    fields) runs lazy MC-SAT over the active atoms (``infer/lazy/mcsat.py``).
    """
    from . import jit
    from .parallel.options import pop_options, using

    check_world_arguments(closed, open_, db_path)
    parallel = pop_options(options)
    jit.watch()
    before = jit.compile_seconds()
    if parallel.on_ray and method in ("mcsat", "gibbs"):
        if options.get("lazy") not in (None, False):
            raise OptionError("lazy inference runs on one machine; drop --lazy or --ray-address")
        from .distributed.infer import distributed_marginals
        from .infer.marginals import check_options

        check_model(mln)
        check_databases(db)
        check_sampling_options(options)
        check_options(method, options)
        _no_set_features(mln, method)
        answer = distributed_marginals(mln, _as_list(db), normalize_queries(mln, queries), method=method,
                                       closed=closed, open_=open_, db_path=db_path, parallel=parallel, **options)
    else:
        with using(parallel):
            answer = _marginal_inference(mln, db, queries, method=method, closed=closed, open_=open_,
                                         db_path=db_path, **options)
    jit.book(answer, before)
    return answer


def _marginal_inference(mln, db, queries, *, method, closed, open_, db_path, **options) -> Marginals:
    from .infer.marginals import check_options
    from .parallel.marginals import solve_marginals_parallel
    from .parallel.options import current

    check_model(mln)
    check_databases(db)
    check_sampling_options(options)
    lazy = options.pop("lazy", None)
    if lazy is not None and lazy is not False:
        return _lazy_marginals(mln, db, queries, method, closed, open_, db_path, lazy, options)
    if method == "mh":
        from .cluster.api import cluster_marginals, clusters_queried

        if clusters_queried(mln, normalize_queries(mln, queries)):
            from . import progress

            with progress.task("marginals over clusterings (mh)"):
                return cluster_marginals(mln, _as_list(db), normalize_queries(mln, queries), method=method,
                                         closed=closed, open_=open_, db_path=db_path, **options)

    check_options(method, options)
    _no_set_features(mln, method)

    from .jit import Stages

    stages = Stages()
    net = ground_model(mln, db, queries, closed=closed, open_=open_, db_path=db_path)
    ground_seconds = stages.lap()          # kernel compilation (first run) booked apart
    from .infer.plan import check_memory

    check_memory(net, method)
    from . import progress

    with progress.task(f"marginals ({method}) on {net.n_atoms:,} atoms, {net.n_clauses:,} clauses"):
        result = solve_marginals_parallel(net, method, options, current())
    infer_seconds = stages.lap()
    stats = dict(result.stats)
    if stages.compile > 0:
        stats["compile_seconds"] = stages.compile
    return Marginals(
        network=net,
        probabilities=result.probabilities,
        method=method,
        samples=result.samples,
        ground_seconds=ground_seconds,
        infer_seconds=infer_seconds,
        stats=stats,
    )


def _lazy_map(mln, db, queries, method, closed, open_, db_path, lazy, options) -> MapAnswer:
    """``lazy=True`` (MaxWalkSAT over the active part, infer/lazy/)."""
    from .infer.lazy import lazy_options
    from .infer.lazy.run import check_lazy_method, lazy_map

    check_lazy_method("map", method)
    opts = lazy_options(lazy)
    _no_set_features(mln, method)
    if options.get("hard_weight") is not None:
        raise OptionError("hard_weight is not supported with lazy MAP inference; drop --lazy to soften hard clauses")
    options.pop("hard_weight", None)
    start = time.perf_counter()
    from . import progress

    with progress.task(f"lazy MAP ({method})"):
        result, held, setup = lazy_map(mln, _as_list(db), normalize_queries(mln, queries), closed=closed,
                                       open_=open_, db_path=db_path, lazy=opts, **options)
    if result.hard_violated == 0:
        from .infer.settle import settle_false

        world, flipped = settle_false(held, result.world)
        if flipped:
            result.world = world
            result.score, result.cost = held.score(world), held.cost(world)
            result.stats["ties_set_false"] = flipped
    total = time.perf_counter() - start
    return MapAnswer(network=held, world=result.world, score=result.score, cost=result.cost,
                     hard_violated=result.hard_violated, method=method, optimal=False, ground_seconds=setup,
                     infer_seconds=total - setup, stats=dict(result.stats))


def _lazy_marginals(mln, db, queries, method, closed, open_, db_path, lazy, options) -> Marginals:
    """``lazy=True`` (MC-SAT over the active part, infer/lazy/)."""
    from .infer.lazy import lazy_options
    from .infer.lazy.run import check_lazy_method, lazy_marginals

    check_lazy_method("marginals", method)
    opts = lazy_options(lazy)
    _no_set_features(mln, method)
    start = time.perf_counter()
    from . import progress

    with progress.task(f"lazy marginals ({method})"):
        result, held, setup = lazy_marginals(mln, _as_list(db), normalize_queries(mln, queries), closed=closed,
                                             open_=open_, db_path=db_path, lazy=opts, **options)
    return Marginals(network=held, probabilities=result.probabilities, method=method, samples=result.samples,
                     ground_seconds=setup, infer_seconds=time.perf_counter() - start - setup,
                     stats=dict(result.stats))
