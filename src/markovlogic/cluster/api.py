"""Model-level inference over clusterings: from an MLN, evidence and query
predicates to named answers (``mln infer --method mh`` / ``--map --method
agglomerative``, and ``MLN.map`` / ``MLN.infer`` with those methods).

Each query predicate that is an equivalence relation (declared, or with its
hard reflexivity, symmetry and transitivity written out) gets its own model;
a formula that ties it to another query predicate is refused (a joint model
with other query atoms is not supported by these methods yet). The answer
reads as the other methods' answers do: the true atoms (every ordered pair
of co-clustered constants, ``P(a,a)`` included) in Alchemy's format, a pandas
frame, and the clusters themselves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..errors import MLNSemanticError, OptionError
from ..lang.ast import Query
from ..logic.equivalence import equivalence_predicates

if TYPE_CHECKING:
    from .model import ClusterModel

CLUSTER_MAP_METHODS = ("mh", "agglomerative")
CLUSTER_MARGINAL_METHODS = ("mh",)


def check_set_features(mln, eq: list[str] | None = None) -> None:
    """Every set-level feature is over an equivalence predicate."""
    if not getattr(mln, "set_features", None):
        return
    eq = equivalence_predicates(mln) if eq is None else eq
    for f in mln.set_features:
        if f.predicate not in eq:
            where = dict(file=f.pos.file, line=f.pos.line, column=f.pos.column) if f.pos is not None else {}
            raise MLNSemanticError(
                f"set-level feature over {f.predicate}, which is not an equivalence predicate: declare it "
                f"with 'equivalence {f.predicate}(...)' or write its hard reflexivity, symmetry and "
                "transitivity", **where)


def clusters_queried(mln, queries: Sequence[Query] | None) -> bool:
    """Whether a query predicate (any predicate when ``queries`` is None) is
    an equivalence predicate: ``method="mh"`` then samples clusterings
    (here), else possible worlds of the ground network (``infer/mh.py``)."""
    eq = set(equivalence_predicates(mln))
    if not eq:
        return False
    names = list(mln.predicates) if queries is None else [q.predicate for q in queries]
    return any(p in eq for p in names)


def cluster_predicates(mln, queries: Sequence[Query] | None) -> list[str]:
    """The query predicates to cluster (every equivalence predicate queried)."""
    eq = equivalence_predicates(mln)
    check_set_features(mln, eq)
    if queries is None:
        names = list(mln.predicates)
    else:
        names = list(dict.fromkeys(q.predicate for q in queries))
    chosen = [p for p in names if p in eq]
    if not chosen:
        raise MLNSemanticError(
            "methods mh and agglomerative cluster an equivalence predicate; no query predicate is one "
            f"(declare one with 'equivalence {names[0] if names else 'P'}(t, t)' or write its hard "
            "reflexivity, symmetry and transitivity)"
        )
    others = [p for p in names if p not in eq]
    if others and queries is not None:
        raise MLNSemanticError(
            f"methods mh and agglomerative infer equivalence predicates only; {', '.join(others)} "
            "is not one (query it with another method)"
        )
    return chosen


def default_method(mln, queries: Sequence[Query] | None, want_map: bool) -> str | None:
    """``agglomerative`` (MAP) / ``mh`` (marginals) when the model has set-level
    features or a query predicate declared an equivalence; else None."""
    names = list(mln.predicates) if queries is None else [q.predicate for q in queries]
    declared = any(getattr(mln.predicates.get(n), "equivalence", False) for n in names)
    if getattr(mln, "set_features", None) or declared:
        return "agglomerative" if want_map else "mh"
    return None


@dataclass
class ClusteringAnswer:
    """The answer over one or more equivalence predicates: per predicate a
    model and a clustering (MAP), or pair probabilities (marginals)."""

    method: str
    parts: list                     # mh.ClusterAnswer per predicate
    marginals: bool = False
    ground_seconds: float = 0.0
    infer_seconds: float = 0.0
    stats: dict = field(default_factory=dict)

    # the fields the command line reports for MAP answers
    @property
    def score(self) -> float:
        return float(sum(p.score for p in self.parts))

    @property
    def optimal(self) -> bool:
        return False

    @property
    def clusters(self) -> dict[str, list[list[str]]]:
        """Per predicate, its clusters (lists of constant names)."""
        return {p.model.predicate: p.clusters for p in self.parts}

    @property
    def atoms(self) -> set[str]:
        out: set[str] = set()
        for p in self.parts:
            out.update(p.pair_atoms())
        return out

    def to_alchemy(self, all_atoms: bool = False) -> str:
        if self.marginals:
            return self._marginals_text()
        lines: list[str] = []
        for p in self.parts:
            if all_atoms:
                m = p.model
                lab = p.labels
                names = m.mention_names
                order = np.argsort(np.asarray(names, dtype=object), kind="stable")
                for i in order:
                    for j in order:
                        lines.append(f"{m.predicate}({names[i]},{names[j]}) {int(lab[i] == lab[j])}")
            else:
                lines.extend(p.pair_atoms())
        return "".join(line + "\n" for line in sorted(lines))

    def _marginals_text(self) -> str:
        lines = []
        for p in self.parts:
            m = p.model
            names = m.mention_names
            pr = p.pair_probabilities
            if isinstance(pr, np.ndarray):
                full = pr.copy()
                np.fill_diagonal(full, 1.0)
                for i in range(m.n):
                    for j in range(m.n):
                        lines.append((f"{m.predicate}({names[i]},{names[j]})", full[i, j]))
            else:
                rows, cols, probs = pr
                for i in range(m.n):
                    lines.append((f"{m.predicate}({names[i]},{names[i]})", 1.0))
                for i, j, q in zip(rows.tolist(), cols.tolist(), probs.tolist()):
                    if q > 0:
                        lines.append((f"{m.predicate}({names[i]},{names[j]})", q))
        lines.sort()
        return "".join(f"{a} {q:.4f}\n" for a, q in lines)

    def clusters_text(self) -> str:
        """One line per cluster: the predicate, then its constants, tab-separated."""
        out = []
        for p in self.parts:
            for c in p.clusters:
                out.append("\t".join([p.model.predicate] + c))
        return "".join(line + "\n" for line in out)

    @property
    def frame(self):
        import pandas as pd

        rows = []
        for p in self.parts:
            m = p.model
            for k, c in enumerate(p.clusters):
                for name in c:
                    rows.append({"predicate": m.predicate, "constant": name, "cluster": k})
        return pd.DataFrame(rows, columns=["predicate", "constant", "cluster"])


def _models(mln, dbs, queries, closed, open_, db_path, set_features=()) -> tuple[list[ClusterModel], float]:
    start = time.perf_counter()
    preds = cluster_predicates(mln, queries)
    from .model import build_cluster_model     # numba and scipy: not for models without clusterings

    models = [build_cluster_model(mln, dbs, p, closed=closed, open_=open_, db_path=db_path,
                                  other_queries=[q for q in preds if q != p])
              for p in preds]
    return models, time.perf_counter() - start


def cluster_map(mln, dbs, queries, *, method: str, closed=(), open_=(), db_path=None, **options) -> ClusteringAnswer:
    """MAP over clusterings by ``method`` ("mh" or "agglomerative")."""
    from .agglomerative import AgglomerativeOptions, agglomerative_map
    from .mh import MHOptions, mh_map

    if method not in CLUSTER_MAP_METHODS:
        raise OptionError(f"unknown clustering MAP method {method!r}")
    opt_cls = MHOptions if method == "mh" else AgglomerativeOptions
    opts = _options(opt_cls, options, method)
    models, ground_seconds = _models(mln, dbs, queries, closed, open_, db_path)
    start = time.perf_counter()
    parts = [mh_map(m, opts) if method == "mh" else agglomerative_map(m, opts) for m in models]
    stats = {"mentions": int(sum(m.n for m in models)),
             "clusters": int(sum(len(set(p.labels.tolist())) for p in parts))}
    for p in parts:
        stats.update({k: v for k, v in p.stats.items() if isinstance(v, (int, float, bool))})
    return ClusteringAnswer(method, parts, False, ground_seconds, time.perf_counter() - start, stats)


def cluster_marginals(mln, dbs, queries, *, method: str = "mh", closed=(), open_=(), db_path=None,
                      **options) -> ClusteringAnswer:
    from .mh import MHOptions, mh_marginals

    if method not in CLUSTER_MARGINAL_METHODS:
        raise OptionError(f"unknown clustering marginal method {method!r}")
    opts = _options(MHOptions, options, method)
    models, ground_seconds = _models(mln, dbs, queries, closed, open_, db_path)
    start = time.perf_counter()
    parts = [mh_marginals(m, opts) for m in models]
    stats = {"mentions": int(sum(m.n for m in models))}
    for p in parts:
        stats.update({k: v for k, v in p.stats.items() if isinstance(v, (int, float, bool))})
    return ClusteringAnswer(method, parts, True, ground_seconds, time.perf_counter() - start, stats)


def _options(cls, options: dict, method: str):
    import dataclasses

    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(options) - names)
    if unknown:
        raise OptionError(
            f"method {method} does not take option(s) {', '.join(unknown)}; it takes {', '.join(sorted(names))}")
    return cls(**options).check()
