"""Similarities computed from the evidence, in SQL (DuckDB).

``f(x, y, P1, ..., Pk)`` compares what ``x`` and ``y`` reach by following
the binary evidence predicates ``P1 ... Pk`` (first argument to second):
with ``Title(bib, title)`` and ``HasWordTitle(title, word)``,
``jaccard(b1, b2, Title, HasWordTitle)`` compares the words of two bibs'
titles. Three families:

* sets of elements: ``jaccard`` (shared / union), ``overlap`` (number
  shared), ``cosine`` (TF-IDF cosine: each element weighted by its inverse
  document frequency ``ln((1 + N) / (1 + df)) + 1`` over the ``N`` owners
  that have elements), ``containment`` (shared / size of the smaller set);
  0 for two owners that share no element;
* strings (the elements' values, e.g. ``Name(record, "la grotta")``):
  ``jarowinkler`` (Jaro-Winkler similarity) and ``levenshtein`` (1 - edit
  distance / length of the longer string), the best over the two owners'
  values; 0 when one has none;
* numbers (the elements' numeric values): ``numdiff`` (relative
  difference ``|a - b| / max(|a|, |b|)``, 0 when both are 0) and
  ``absdiff`` (``|a - b|``), the smallest over the two owners' values; a
  pair without values has no difference (it compares as +infinity: never
  ``<= t``).

They are internal functions with numeric values, used in comparisons
(``jaccard(b1, b2, Title, HasWordTitle) >= 0.7``) and in set-level and
linkage features. Each is derived evidence, computed once per path and
family: ``sim_e_<k>(o, e)`` lists each owner's elements and
``sim_p_<k>(a, b, ...)`` holds the values of the pairs that have one. When
the clustered equivalence predicate declares its *candidate pairs*
(``candidates(x, y in P: ...)``), every table is computed over those pairs
only (``restrict``); otherwise set similarities cover the pairs sharing an
element (its size estimated first and checked against a limit) and string
and numeric ones every pair of owners (checked against the same limit).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import MarkovLogicError, MLNSemanticError
from ..lang.ast import Const, Func, Term, Var

SET_FUNCTIONS = ("jaccard", "overlap", "cosine", "containment")
STRING_FUNCTIONS = ("jarowinkler", "levenshtein")
NUMERIC_FUNCTIONS = ("numdiff", "absdiff")
SIMILARITY_FUNCTIONS = SET_FUNCTIONS + STRING_FUNCTIONS + NUMERIC_FUNCTIONS
DEFAULT_MAX_PAIRS = 300_000_000
_COLUMNS = {"jaccard": "jac", "overlap": "shared", "cosine": "cos", "containment": "cont",
            "jarowinkler": "jw", "levenshtein": "lev", "numdiff": "rel", "absdiff": "dif"}
NO_DIFFERENCE = 1e300     # the value of numdiff/absdiff for a pair without numbers


@dataclass(frozen=True)
class SimilarityCall:
    name: str                 # one of SIMILARITY_FUNCTIONS
    left: Term
    right: Term
    path: tuple[str, ...]     # predicate names

    @property
    def column(self) -> str:
        return _COLUMNS[self.name]

    @property
    def family(self) -> str:
        if self.name in STRING_FUNCTIONS:
            return "string"
        if self.name in NUMERIC_FUNCTIONS:
            return "numeric"
        return "set"

    @property
    def absent(self) -> float:
        """The value of a pair the table does not list."""
        return NO_DIFFERENCE if self.family == "numeric" else 0.0


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


# a sum of squared TF-IDF weights that is exact: DECIMAL terms (each rounded to 18 places) add without rounding, so
# the result is the same whatever order DuckDB's join delivers the terms in (a DOUBLE sum's last bits depend on it)
EXACT_DOT = "sum((df.w * df.w)::DECIMAL(38, 18))::DOUBLE"


class SimilarityTables:
    """The derived tables of one store, built on first use."""

    def __init__(self, store, max_pairs: int = DEFAULT_MAX_PAIRS) -> None:
        self.store = store
        self.max_pairs = max_pairs
        self._tables: dict[tuple, str] = {}
        self._elements: dict[tuple[str, ...], str] = {}
        self.candidates: dict[str, str] = {}      # owner type -> table (a, b) of candidate pairs, both orders

    def restrict(self, type_name: str, table: str) -> None:
        """Compute every similarity over owners of ``type_name`` on the pairs of
        ``table`` (columns ``a``, ``b``; both orders) only."""
        if self._tables:
            raise MarkovLogicError("candidate pairs must be declared before any similarity is computed")
        self.candidates[type_name] = table

    def _elements_table(self, path: tuple[str, ...]) -> str:
        elem = self._elements.get(path)
        if elem is not None:
            return elem
        store = self.store
        for p in path:
            info = store.preds[p]
            if info.query or info.labels or not info.closed or info.n_unknown:
                raise MLNSemanticError(f"similarity over {p}: it must be closed-world evidence, not a query")
        parts = [f"(SELECT a0, a1 FROM {store.preds[p].table} WHERE t = 1) AS s{j}" for j, p in enumerate(path)]
        joins = " AND ".join(f"s{j}.a1 = s{j + 1}.a0" for j in range(len(path) - 1))
        elem = f"sim_e_{len(self._elements)}"
        store.con.execute(
            f"CREATE OR REPLACE TEMP TABLE {elem} AS SELECT DISTINCT s0.a0 AS o, s{len(path) - 1}.a1 AS e "
            f"FROM {', '.join(parts)}{' WHERE ' + joins if joins else ''}"
        )
        self._elements[path] = elem
        return elem

    def _owner_type(self, path: tuple[str, ...]) -> str:
        return self.store.preds[path[0]].arg_types[0]

    def _check_size(self, path, est) -> None:
        if est > self.max_pairs:
            raise MarkovLogicError(
                f"similarity over {' -> '.join(path)}: about {int(est):,} pairs would be compared (at most "
                f"{self.max_pairs:,}); declare the candidate pairs of the clustered predicate "
                "(candidates(x, y in P: ...)) or leave out elements shared by too many constants (stop words?)"
            )

    def pair_table(self, path: tuple[str, ...], family: str = "set") -> str:
        """The table of pair values of ``path`` for a family of functions
        (``set``: shared, jac, cos, cont; ``string``: jw, lev; ``numeric``:
        rel, dif), built once."""
        key = (family, path)
        table = self._tables.get(key)
        if table is not None:
            return table
        store = self.store
        elem = self._elements_table(path)
        cand = self.candidates.get(self._owner_type(path))
        table = f"sim_p_{len(self._tables)}"
        if family == "set":
            # the TF-IDF sums are exact (EXACT_DOT): the same bits in every build, as learning needs to be reproducible
            if cand is None:
                est = store.con.execute(
                    f"SELECT coalesce(sum(c * c), 0) FROM (SELECT count(*) AS c FROM {elem} GROUP BY e)"
                ).fetchall()[0][0]
                self._check_size(path, est)
                shared = (f"SELECT x.o AS a, y.o AS b, count(*)::DOUBLE AS shared, {EXACT_DOT} AS dot "
                          f"FROM {elem} x JOIN {elem} y ON x.e = y.e JOIN df ON df.e = x.e GROUP BY x.o, y.o")
            else:
                shared = (f"SELECT c.a, c.b, count(*)::DOUBLE AS shared, {EXACT_DOT} AS dot FROM {cand} c "
                          f"JOIN {elem} x ON x.o = c.a JOIN {elem} y ON y.o = c.b AND y.e = x.e "
                          f"JOIN df ON df.e = x.e GROUP BY c.a, c.b")
            store.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {table} AS "
                f"WITH n AS (SELECT count(DISTINCT o)::DOUBLE AS n FROM {elem}), "
                f"df AS (SELECT e, ln((1 + (SELECT n FROM n)) / (1 + count(*))) + 1 AS w FROM {elem} GROUP BY e), "
                f"sz AS (SELECT x.o, count(*)::DOUBLE AS n, sqrt({EXACT_DOT}) AS norm FROM {elem} x "
                f"JOIN df ON df.e = x.e GROUP BY x.o), "
                f"sh AS ({shared}) "
                f"SELECT sh.a, sh.b, sh.shared, sh.shared / (za.n + zb.n - sh.shared) AS jac, "
                f"sh.dot / (za.norm * zb.norm) AS cos, sh.shared / least(za.n, zb.n) AS cont "
                f"FROM sh JOIN sz za ON za.o = sh.a JOIN sz zb ON zb.o = sh.b"
            )
        else:
            if family == "string":
                vals = (f"SELECT DISTINCT x.o, c.sval AS v FROM {elem} x JOIN consts c ON c.id = x.e")
                agg = ("max(jaro_winkler_similarity(x.v, y.v)) AS jw, "
                       "max(CASE WHEN greatest(length(x.v), length(y.v)) = 0 THEN 1.0 ELSE "
                       "1.0 - levenshtein(x.v, y.v)::DOUBLE / greatest(length(x.v), length(y.v)) END) AS lev")
            else:
                vals = (f"SELECT DISTINCT x.o, c.num AS v FROM {elem} x JOIN consts c ON c.id = x.e "
                        "WHERE c.num IS NOT NULL")
                agg = ("min(CASE WHEN greatest(abs(x.v), abs(y.v)) = 0 THEN 0.0 ELSE "
                       "abs(x.v - y.v) / greatest(abs(x.v), abs(y.v)) END) AS rel, min(abs(x.v - y.v)) AS dif")
            if cand is None:
                n_owners = store.con.execute(f"SELECT count(DISTINCT o) FROM ({vals})").fetchall()[0][0]
                self._check_size(path, n_owners * n_owners)
                pairs = f"(SELECT x.o AS a, y.o AS b FROM (SELECT DISTINCT o FROM ({vals})) x, " \
                        f"(SELECT DISTINCT o FROM ({vals})) y)"
            else:
                pairs = cand
            store.con.execute(
                f"CREATE OR REPLACE TEMP TABLE {table} AS WITH v AS ({vals}) "
                f"SELECT p.a, p.b, {agg} FROM {pairs} p JOIN v x ON x.o = p.a JOIN v y ON y.o = p.b "
                f"GROUP BY p.a, p.b"
            )
        self._tables[key] = table
        return table


def tables_of(store) -> SimilarityTables:
    """The store's similarity tables (one registry per store)."""
    t = getattr(store, "_similarity_tables", None)
    if t is None:
        t = SimilarityTables(store)
        store._similarity_tables = t
    return t
