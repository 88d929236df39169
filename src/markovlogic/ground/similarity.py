"""Set similarities computed from the evidence: ``jaccard`` and ``overlap``.

``jaccard(x, y, P1, ..., Pk)`` is the Jaccard similarity of the sets of
elements reached from ``x`` and from ``y`` by following the binary evidence
predicates ``P1 ... Pk`` (first argument to second): with
``Title(bib, title)`` and ``HasWordTitle(title, word)``,
``jaccard(b1, b2, Title, HasWordTitle)`` compares the words of two bibs'
titles. ``overlap(...)`` is the number of shared elements. Both are 0 for
two constants that share no element (and ``jaccard`` of two empty sets is 0).
They are internal functions with numeric values, used in comparisons
(``jaccard(b1, b2, Title, HasWordTitle) >= 0.7``) and in set-level features.

They are derived evidence, computed in SQL over the store once per path:
``sim_e_<k>(o, e)`` lists each owner's elements and ``sim_p_<k>(a, b, shared,
jaccard)`` every pair of owners (``a = b`` included) that shares at least one
element. Its size is estimated before it is built (the sum over elements of
the square of their number of owners) and checked against a limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import MarkovLogicError, MLNSemanticError
from ..lang.ast import Const, Func, Term, Var

SIMILARITY_FUNCTIONS = ("jaccard", "overlap")
DEFAULT_MAX_PAIRS = 300_000_000


@dataclass(frozen=True)
class SimilarityCall:
    name: str                 # 'jaccard' or 'overlap'
    left: Term
    right: Term
    path: tuple[str, ...]     # predicate names

    @property
    def column(self) -> str:
        return "jac" if self.name == "jaccard" else "shared"


def is_similarity(term) -> bool:
    return isinstance(term, Func) and term.name in SIMILARITY_FUNCTIONS


def parse_similarity(f: Func, predicates) -> SimilarityCall:
    """Check a ``jaccard``/``overlap`` term against the declarations."""
    where = {}
    if f.pos is not None:
        where = dict(file=f.pos.file, line=f.pos.line, column=f.pos.column)
    if len(f.args) < 3:
        raise MLNSemanticError(
            f"{f.name} takes two terms and one or more predicate names: {f.name}(x, y, P1, ..., Pk)", **where)
    path = []
    for a in f.args[2:]:
        name = a.name if isinstance(a, (Const, Var)) else None
        decl = predicates.get(name) if name else None
        if decl is None:
            raise MLNSemanticError(f"{f.name}: {name or a!r} is not a declared predicate", **where)
        if decl.arity != 2:
            raise MLNSemanticError(f"{f.name}: predicate {name} must be binary (owner, element)", **where)
        path.append(name)
    for p, q in zip(path, path[1:]):
        if predicates[p].arg_types[1] != predicates[q].arg_types[0]:
            raise MLNSemanticError(
                f"{f.name}: the path {' -> '.join(path)} does not connect: {p} ends in "
                f"{predicates[p].arg_types[1]}, {q} starts with {predicates[q].arg_types[0]}", **where)
    return SimilarityCall(f.name, f.args[0], f.args[1], tuple(path))


def owner_type(call: SimilarityCall, predicates) -> str:
    return predicates[call.path[0]].arg_types[0]


class SimilarityTables:
    """The derived tables of one store, built on first use."""

    def __init__(self, store, max_pairs: int = DEFAULT_MAX_PAIRS) -> None:
        self.store = store
        self.max_pairs = max_pairs
        self._tables: dict[tuple[str, ...], str] = {}

    def pair_table(self, path: tuple[str, ...]) -> str:
        """``sim_p_<k>(a, b, shared, jac)`` for the path (built once)."""
        table = self._tables.get(path)
        if table is not None:
            return table
        store = self.store
        k = len(self._tables)
        for p in path:
            info = store.preds[p]
            if info.query or info.labels or not info.closed or info.n_unknown:
                raise MLNSemanticError(f"similarity over {p}: it must be closed-world evidence, not a query")
        parts = [f"(SELECT a0, a1 FROM {store.preds[p].table} WHERE t = 1) AS s{j}" for j, p in enumerate(path)]
        joins = " AND ".join(f"s{j}.a1 = s{j + 1}.a0" for j in range(len(path) - 1))
        elem = f"sim_e_{k}"
        store.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {elem} AS SELECT DISTINCT s0.a0 AS o, s{len(path) - 1}.a1 AS e "
            f"FROM {', '.join(parts)}{' WHERE ' + joins if joins else ''}"
        )
        est = store.con.execute(
            f"SELECT coalesce(sum(c * c), 0) FROM (SELECT count(*) AS c FROM {elem} GROUP BY e)"
        ).fetchall()[0][0]
        if est > self.max_pairs:
            raise MarkovLogicError(
                f"similarity over {' -> '.join(path)}: about {int(est):,} pairs share an element (at most "
                f"{self.max_pairs:,}); some elements are shared by too many constants (stop words?)"
            )
        table = f"sim_p_{k}"
        store.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {table} AS "
            f"WITH sz AS (SELECT o, count(*)::DOUBLE AS n FROM {elem} GROUP BY o), "
            f"sh AS (SELECT x.o AS a, y.o AS b, count(*)::DOUBLE AS shared FROM {elem} x JOIN {elem} y "
            f"ON x.e = y.e GROUP BY x.o, y.o) "
            f"SELECT sh.a, sh.b, sh.shared, sh.shared / (za.n + zb.n - sh.shared) AS jac "
            f"FROM sh JOIN sz za ON za.o = sh.a JOIN sz zb ON zb.o = sh.b"
        )
        self._tables[path] = table
        return table


def tables_of(store) -> SimilarityTables:
    """The store's similarity tables (one registry per store)."""
    t = getattr(store, "_similarity_tables", None)
    if t is None:
        t = SimilarityTables(store)
        store._similarity_tables = t
    return t
