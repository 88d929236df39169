"""The grounder: evidence store + clause templates -> ``GroundNetwork``.

``ground(mln, db, queries)`` is the one-call API. ``Grounder`` keeps the
store, the compiled templates and two registries (atoms and weight
parameters, both with ids that only grow) so that later questions reuse
them:

* :meth:`Grounder.network` grounds every template (one SQL query each),
  merges duplicate ground clauses, builds the exactly-one blocks and keeps the
  connected components that contain a query atom;
* :meth:`Grounder.violated_groundings` is cutting-plane inference's
  separation step: the ground clauses violated (positive weight, hard) or
  satisfied (negative weight) by a world of the unknown atoms, as clauses
  over the same atom ids; :meth:`Grounder.assemble` turns accumulated clauses
  into a network over every registered atom;
* lazy inference ("ground the clauses that these active atoms can reach")
  is the same SQL with a condition per literal: ``lazysql`` compiles it,
  ``activation.Activation`` asks it over a grounder's store and registry.

Semantics of evidence and query atoms (``query_truth``): by default, as in
Alchemy and Tuffy, an atom of a query predicate listed in the evidence is
evidence (certain), and the query atoms are the other groundings. For
learning (``query_truth=True``, implied by ``truth_closed_world=True``) the
listed atoms of query predicates are training labels: every grounding of a
query predicate stays unknown and the labels go to ``GroundNetwork.truth``
(1 true, 0 false; an atom not listed is 0 with ``truth_closed_world`` and
-1 otherwise).
"""

from __future__ import annotations

import math
import resource
import time
from contextlib import closing
from typing import Sequence

import numpy as np

from ..arrays import distinct
from ..errors import MLNSemanticError, ResourceError
from ..lang.ast import Const, Func, Query
from ..logic.clauses import ClauseTemplate, Literal
from ..logic.nnf import leaf_terms, term_vars
from ..model import MLN, Database
from ..store.store import EvidenceStore
from .assemble import PAD, GroundClauses, Merger, Rows, block_pairs, distribute, merge
from .kernels import compact_csr, components, reverse_index
from .network import GroundNetwork
from .registry import AtomRegistry, ParamRegistry
from .sqlgen import GroupCompiler, TemplateCompiler, clause_variables
from .stream import TemplateRows, fetch_chunks
from .terms import Scope, is_internal

MAX_DISTRIBUTION = 4096
ROW_BYTES = 100          # estimated peak bytes per held ground row, plus LITERAL_BYTES per literal
LITERAL_BYTES = 20       # (see _row_bytes)
NETWORK_CLAUSE_BYTES = 120   # estimated peak bytes per distinct clause while merging and building the network
ATOM_BYTES = 64          # estimated bytes per registered ground atom
DUCKDB_SHARE = 0.25       # of the memory budget, DuckDB's own limit for its joins (beyond it they spill to disk)
DUCKDB_MIN = 256 << 20
COUNT_SECONDS = 10.0     # longest a template's groundings are counted before it is called too big
COUNT_MEMORY = 512 << 20  # DuckDB's memory while it only counts rows (see Grounder._count_lean)
IDLE_MEMORY = 16 << 20    # DuckDB's memory, briefly, once the queries are done (see Grounder._give_back)
IDLE_GIVE_BACK = 64 << 20     # ... when it holds more than this
PREFETCH = 128          # templates grounded by one query (see Grounder._prefetch)
PREFETCH_MAX_ROWS = 1 << 18     # larger templates are streamed on their own (stream.py)


def duckdb_share(budget: int) -> int:
    """DuckDB's memory limit under a memory budget (bytes)."""
    return max(DUCKDB_MIN, int(budget * DUCKDB_SHARE))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _term_constants(term, type_name, store_functions, mln, out) -> None:
    if isinstance(term, Const):
        out.append((type_name, term.name))
    elif isinstance(term, Func):
        decl = mln.functions.get(term.name)
        for j, a in enumerate(term.args):
            t = decl.arg_types[j] if decl is not None and j < decl.arity else None
            _term_constants(a, t, store_functions, mln, out)


def formula_constants(mln: MLN, templates: list[ClauseTemplate]) -> list[tuple[str | None, str]]:
    """(type, constant) for every constant in the templates: atom arguments join
    their predicate's argument type; constants elsewhere only get an id."""
    out: list[tuple[str | None, str]] = []

    def leaf(d) -> None:
        if isinstance(d, Literal):
            decl = mln.predicates.get(d.atom.predicate)
            for j, a in enumerate(d.atom.args):
                t = decl.arg_types[j] if decl is not None and j < decl.arity else None
                _term_constants(a, t, None, mln, out)
        else:
            _term_constants(d.left, None, None, mln, out)
            _term_constants(d.right, None, None, mln, out)

    for t in templates:
        for d in t.literals:
            leaf(d)
        for d in t.comparisons:
            leaf(d)
        for g in t.exists:
            for d in g.conjuncts:
                leaf(d)
    return out


def _func_terms(t: ClauseTemplate):
    """(term, type or None) of every function term in the template's literals
    and comparisons (not in existential groups)."""
    def walk(term, type_name):
        if isinstance(term, Func):
            yield term, type_name
    for d in t.literals:
        for a in d.atom.args:
            yield from walk(a, None)
    for c in t.comparisons:
        yield from walk(c.left, None)
        yield from walk(c.right, None)


class Grounder:
    """Evidence store, clause templates and atom/parameter registries of one
    grounding problem. See the module docstring."""

    def __init__(
        self,
        mln: MLN,
        db: Database | Sequence[Database] | None = None,
        queries: Sequence[Query] | None = None,
        *,
        closed: Sequence[str] = (),
        open_: Sequence[str] = (),
        db_path: str | None = None,
        allow_unweighted: bool = False,
        truth_closed_world: bool = False,
        query_truth: bool | None = None,
        max_clauses: int | None = None,
        progress: bool = False,
        templates: list[ClauseTemplate] | None = None,
        memory_limit: int | str | None = None,
    ) -> None:
        start = time.perf_counter()
        self.mln = mln
        self.timings: dict[str, float] = {}
        if templates is None:
            from ..logic.cnf import compile_mln

            templates = compile_mln(mln)
        self.templates, self.skipped_templates = self._check_weights(mln, list(templates), allow_unweighted)
        self.allow_unweighted = allow_unweighted
        self.truth_closed_world = truth_closed_world
        self.query_truth = bool(truth_closed_world if query_truth is None else query_truth)
        self.max_clauses = max_clauses
        # template id -> (ks, parts): ground only parts ks of that template's rows
        # (split by a hash of its first output column, :meth:`part_sql`): the
        # units of work of a template split across grounding workers
        # (distributed/infer.py); the template's evidence constant goes with part 0
        self.row_parts: dict[int, tuple[tuple[int, ...], int]] = {}
        from ..resources import memory_budget, parse_size

        self.memory_limit = parse_size(memory_limit) if memory_limit is not None else memory_budget()
        self.bytes_used = 0          # estimated bytes of the rows fetched so far
        self.progress = progress
        self.queries = list(queries or [])
        self.store = EvidenceStore(
            mln,
            db,
            self.queries,
            closed=closed,
            open_=open_,
            db_path=db_path,
            query_truth=self.query_truth,
            formula_constants=formula_constants(mln, self.templates),
            memory_limit=f"{duckdb_share(self.memory_limit) >> 20}MB",
        )
        self.timings["store"] = time.perf_counter() - start
        self.registry = AtomRegistry(self.store)
        self.params = ParamRegistry(self.store, mln, self.templates)
        for i, t in enumerate(self.templates):
            self.params.ensure(i, t)
        t0 = time.perf_counter()
        self.query_atoms = self._register_query_atoms()
        self._blocks: tuple[np.ndarray, np.ndarray, dict] | None = None
        self._row_cache: dict[int, Rows] = {}
        self._emitted: np.ndarray = np.zeros(0, dtype=np.uint64)
        # (template id, template) -> callable(codes, bindings) that takes each streamed
        # chunk's live rows instead of the template's Rows (stream.py; learn/pll_stream.py)
        self.chunk_sink = None
        self.timings["query_atoms"] = time.perf_counter() - t0

    # ------------------------------------------------------------ checks
    @staticmethod
    def _check_weights(mln: MLN, templates: list[ClauseTemplate], allow_unweighted: bool):
        if allow_unweighted:
            return templates, []
        from ..logic.cnf import needs_weight

        kept, skipped = [], []
        for t in templates:
            if t.hard or t.weight is not None:
                kept.append(t)
                continue
            if needs_weight(t, mln):
                decl = mln.formulas[t.formula_index] if 0 <= t.formula_index < len(mln.formulas) else None
                pos = decl.pos if decl is not None else None
                where = dict(file=pos.file, line=pos.line, column=pos.column) if pos else {}
                raise MLNSemanticError(
                    "formula has no weight: give it a weight, or end it with a period to make it hard "
                    "(weights can also be learned: mln learn)",
                    **where,
                )
            skipped.append(t)   # unweighted unit clause of a '!' predicate: the block says it
        return kept, skipped

    # ------------------------------------------------------------ helpers
    def _fetch(self, sql: str) -> dict[str, np.ndarray]:
        return self.store.con.execute(sql).fetchnumpy()

    def _count(self, sql: str) -> int:
        return int(self.store.con.execute(f"SELECT count(*) FROM ({sql}) AS q").fetchall()[0][0])

    def _count_lean(self, sql: str) -> int:
        """:meth:`_count` with DuckDB's memory capped at ``COUNT_MEMORY``
        (its hash tables spill beyond it): a count returns nothing, and the
        count of an evidence-only template can be the grounding's peak (social
        N=1M: the transitivity of ``Friends``, 100 M rows, 0.85 GB of hash
        tables; capped, the peak falls from 186 to 126 bytes a ground clause,
        the grounding takes 15 s instead of 12)."""
        return self._lean(lambda: self._count(sql))

    def _lean(self, work):
        """``work()`` with DuckDB's memory capped at ``COUNT_MEMORY`` (lowering
        the cap also makes DuckDB give back the buffers it keeps)."""
        return self._capped(COUNT_MEMORY, work)

    def _capped(self, cap: int, work, best_effort: bool = False):
        """``work()`` with DuckDB's memory limit lowered to ``cap`` bytes, then
        restored (nothing to lower when its share is not above ``cap``).
        ``best_effort``: a cap DuckDB cannot meet is not an error."""
        full = duckdb_share(self.memory_limit) >> 20
        if full <= cap >> 20:
            return work()
        con = self.store.con
        try:
            try:
                con.execute(f"SET memory_limit='{cap >> 20}MB'")
            except Exception:          # noqa: BLE001 -- what cannot be written out stays
                if not best_effort:
                    raise
            return work()
        finally:
            con.execute(f"SET memory_limit='{full}MB'")

    def _give_back(self) -> None:
        """Once every template is ground, before the merge and the network's
        arrays (the grounding's peak): DuckDB's cap lowered to ``IDLE_MEMORY``
        and restored, which makes it write the evidence tables it holds in
        memory out to its temporary directory and give their memory back (a
        later query reads them back as it needs them). Before the evidence-
        only transitivity of social N=1M was counted by a walk (pathcount.py),
        its SQL count under ``COUNT_MEMORY`` did this as a side effect; without
        it the peak was 0.16 GB higher (1.57 vs 1.41 GB; 0.2 s)."""
        try:
            held = self.store.con.execute(
                "SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory()").fetchall()[0][0]
        except Exception:          # noqa: BLE001 -- a DuckDB without duckdb_memory(): nothing given back
            return
        if int(held) > IDLE_GIVE_BACK:
            self._capped(IDLE_MEMORY, lambda: None, best_effort=True)

    def _count_evidence_only(self, t: ClauseTemplate, q) -> int:
        """The groundings of an evidence-only template (every one false by
        evidence): walked by a compiled kernel for a two-step path over
        observed relations (``pathcount``: the transitivity of ``Friends``,
        3x10^8 rows at social N=3M, 35 s in DuckDB, 2 s walked), counted in
        SQL otherwise."""
        from .pathcount import count_open_paths, path_shape

        shape = path_shape(t, self.store)
        if shape is not None:
            return self._lean(lambda: count_open_paths(self.store, shape))
        return self._count_lean(q.sql)

    def _template_text(self, i: int) -> str:
        from ..logic.format import format_clause

        t = self.templates[i]
        text = format_clause(t)
        decl = self.mln.formulas[t.formula_index] if 0 <= t.formula_index < len(self.mln.formulas) else None
        if decl is not None and decl.pos is not None:
            return f"{text!r} ({decl.pos.file}:{decl.pos.line})"
        return repr(text)

    def _register_query_atoms(self) -> np.ndarray:
        store = self.store
        chunks = []
        if self.queries:
            items = [(q.predicate, q.args) for q in self.queries]
        else:
            items = [(name, None) for name in store.preds]
        for name, pattern in items:
            info = store.preds[name]
            sql = store.unknown_atoms_sql(name, pattern)
            self._check_query_atoms(name, sql, pattern is None)
            order = ", ".join(f"a{j}" for j in range(info.arity))
            if order:
                sql += f" ORDER BY {order}"
            res = self._fetch(sql)
            args = np.stack([res[f"a{j}"] for j in range(info.arity)], axis=1) if info.arity else np.zeros((len(res.get("one", [])), 0), np.int32)
            if info.arity == 0 and len(args) > 1:
                args = args[:1]
            if len(args):
                chunks.append(self.registry.ids(info.index, args))
        return distinct(np.concatenate(chunks)) if chunks else np.zeros(0, np.int32)

    # ------------------------------------------------------------ templates
    def _literal_codes(self, res: dict, q, n: int) -> np.ndarray:
        codes = np.full((n, len(q.literals)), PAD, dtype=np.int32)
        for li, out in enumerate(q.literals):
            if out.arg_cols:
                args = np.stack([res[c] for c in out.arg_cols], axis=1).astype(np.int32)
            else:
                args = np.zeros((n, 0), np.int32)
            if out.status_col is not None:
                keep = res[out.status_col] == -1
                atoms = self.registry.ids(out.pred, args[keep])
                codes[keep, li] = 2 * atoms + (0 if out.positive else 1)
            else:
                atoms = self.registry.ids(out.pred, args)
                codes[:, li] = 2 * atoms + (0 if out.positive else 1)
        return codes

    def _group_vars(self, t: ClauseTemplate) -> list[str]:
        cvars = set(clause_variables(t))
        used: list[str] = []
        for g in t.exists:
            for d in g.conjuncts:
                for v in sorted({var.name for term in leaf_terms(d) for var in term_vars(term)}):
                    if v in cvars and v not in used:
                        used.append(v)
        return used

    def _check_query_atoms(self, name: str, sql: str, whole: bool) -> None:
        """Stop before registering more query atoms than the budget holds."""
        from ..resources import format_bytes

        info = self.store.preds[name]
        bound = 1.0
        for t in info.arg_types:
            bound *= float(len(self.store.domain(t)))
        remaining = self.memory_limit - self.bytes_used
        if bound * ATOM_BYTES <= remaining:
            self.bytes_used += int(bound * ATOM_BYTES)
            return
        if whole:            # every grounding of the predicate: no need to count
            n = int(info.n_unknown if info.closed else bound - info.n_true - info.n_false)
        else:
            n = self._count_bounded(sql, COUNT_SECONDS)
        if n is None or n * ATOM_BYTES > remaining:
            count = f"{n:,}" if n is not None else f"up to {bound:.3g}"
            raise ResourceError(
                f"query predicate {name} has {count} unknown ground atoms, about "
                f"{format_bytes((n if n is not None else bound) * ATOM_BYTES)}; the memory budget is "
                f"{format_bytes(self.memory_limit)}. Ways out: query fewer atoms (-q {name}(...) with constants), "
                "give more evidence, or a larger --memory-limit.")
        self.bytes_used += n * ATOM_BYTES

    def _row_bytes(self, i: int) -> int:
        """Estimated peak bytes per held ground row of template ``i`` (its keys
        while it streams, its distinct clauses until the merge, the merge and
        the network). Measured peaks of the whole grounding, per clause: 60-75
        on class-like N=100k-1M, 130-200 on social and Cora (1.8 literals per
        clause); the estimate is rounded up."""
        return ROW_BYTES + LITERAL_BYTES * max(1, len(self.templates[i].literals))

    def _grounding_bound(self, i: int) -> float:
        """An upper bound of template ``i``'s groundings: the product of its
        clause variables' domain sizes."""
        t = self.templates[i]
        bound = 1.0
        for v in clause_variables(t):
            bound *= float(len(self.store.domain(t.variable_types[v])))
        return bound

    def _count_bounded(self, sql: str, seconds: float) -> int | None:
        """``count(*)`` of the query, or None if it takes longer than ``seconds``."""
        import threading

        fired = threading.Event()

        def stop() -> None:
            fired.set()
            self.store.con.interrupt()

        timer = threading.Timer(seconds, stop)
        timer.start()
        try:
            return self._count(sql)
        except Exception:
            if fired.is_set():
                return None
            raise
        finally:
            timer.cancel()

    def _live_sql(self, q) -> str:
        """The grounding query restricted to the rows that keep a literal (the
        others are constants: counted, never held)."""
        conds = []
        for out in q.literals:
            if out.status_col is None:
                return q.sql
            conds.append(f"s.{out.status_col} = -1")
        return f"SELECT * FROM ({q.sql}) AS s WHERE {' OR '.join(conds) or 'FALSE'}"

    def _check_budget(self, i: int, q, used: int, streamed: bool = False) -> None:
        """Stop before a template's rows would exceed the memory budget (or
        ``max_clauses``): a cheap bound first, the exact count of the rows that
        will be held (those with an unknown literal) when needed. ``streamed``:
        the rows are streamed with a check of the rows held as they come
        (:meth:`stream_template`), so a count that does not finish in
        ``COUNT_SECONDS`` lets the template go on instead of refusing it (at
        social N=10M counting the 10^8 live rows of one template takes longer
        than grounding them)."""
        per_row = self._row_bytes(i)
        remaining = self.memory_limit - self.bytes_used
        bound = self._grounding_bound(i)
        if self.max_clauses is not None:
            n = self._count_bounded(q.sql, COUNT_SECONDS)
            if n is None:
                self._too_big(i, bound, per_row, counted=False)
            if used + n > self.max_clauses:
                raise ResourceError(
                    f"template {i} {self._template_text(i)} would produce {n:,} ground clauses "
                    f"({used:,} already grounded; max_clauses={self.max_clauses:,}). "
                    "Ground a smaller part (narrower queries, more evidence), or use cutting-plane "
                    "inference (--method cpi), which grounds only the clauses a solution violates."
                )
        if not q.literals or bound * per_row <= remaining:
            return
        n = self._count_bounded(self._live_sql(q), COUNT_SECONDS)
        if n is None:
            if streamed:
                return
            self._too_big(i, bound, per_row, counted=False)
        if n * per_row > remaining:
            self._too_big(i, float(n), per_row, counted=True)

    def _too_big(self, i: int, rows: float, per_row: int, counted: bool, partial: bool = False) -> None:
        from ..resources import format_bytes

        t = self.templates[i]
        if partial:
            estimate = f"more than {rows:,.0f}"
        elif counted:
            estimate = f"{rows:,.0f}"
        else:
            estimate = f"up to {rows:.3g} (counting them did not finish in {COUNT_SECONDS:g} s)"
        hard = " It is a hard formula: --method cpi separates only the groundings a solution violates, and " \
               "learning can leave hard formulas out (mln learn --drop-hard)." if t.hard else ""
        raise ResourceError(
            f"template {i} {self._template_text(i)} would produce {estimate} ground clauses, about "
            f"{format_bytes(rows * per_row)}; the memory budget is {format_bytes(self.memory_limit)} "
            f"({format_bytes(self.bytes_used)} used by the templates before it).{hard} {self._ways_out()}"
        )

    def _ways_out(self) -> str:
        if self.query_truth:        # learning: the training data are ground in full
            return ("Ways out: learn on smaller training databases (several .db files with "
                    "--multiple-databases), leave hard formulas out (--drop-hard), a machine with more memory, "
                    "or a larger --memory-limit.")
        return ("Ways out: ground less (narrower queries, more evidence), lazy inference (--lazy: only the "
                "clauses a search touches), --method cpi (cutting planes), inference over clusterings for an "
                "equivalence predicate (--method agglomerative or mh), a machine or cluster with more memory, or "
                "a larger --memory-limit.")

    def _check_merge(self, merger: Merger) -> None:
        """Stop before merging the ground rows and building the network would
        exceed the budget (the templates' estimates are checked as they are
        ground; this is the check on the real number of distinct clauses)."""
        from ..resources import format_bytes

        n = merger.n_distinct
        need = merger.nbytes() + n * NETWORK_CLAUSE_BYTES
        if need > self.memory_limit:
            raise ResourceError(
                f"the ground network would have up to {n:,} clauses; merging them and building the network "
                f"needs about {format_bytes(need)}, over the memory budget of {format_bytes(self.memory_limit)}. "
                + self._ways_out())

    def _query(self, i: int):
        t = self.templates[i]
        group_vars = self._group_vars(t) if t.exists else []
        export = list(t.plus_vars) + [v for v in group_vars if v not in t.plus_vars]
        return TemplateCompiler(self.store, t, export_vars=export).build()

    def _prefetch(self, ids: list[int]) -> dict[int, tuple]:
        """The rows of several templates from one query (``UNION ALL`` with a
        template column): a model of many small formulas pays DuckDB's
        per-statement cost once per batch instead of once per formula.
        Templates with existential groups, and those whose cheap size bound
        does not fit what is left of the budget, are left to
        :meth:`ground_template` (which counts them exactly first)."""
        if self.max_clauses is not None:
            return {}
        parts, layout = [], []
        remaining = self.memory_limit - self.bytes_used
        for i in ids:
            t = self.templates[i]
            if t.exists or i in self.row_parts:
                continue
            q = self._query(i)
            if q.empty:
                continue
            bound = self._grounding_bound(i)
            need = bound * self._row_bytes(i)
            if need > remaining or bound > PREFETCH_MAX_ROWS:
                continue            # streamed on its own
            cols = list(dict.fromkeys(
                [c for out in q.literals for c in out.arg_cols]
                + [out.status_col for out in q.literals if out.status_col is not None]
                + list(q.var_cols.values())))
            if not cols:
                continue            # only a row count (ground literals of 0-ary atoms): one query of its own
            remaining -= need
            layout.append((i, q, cols))
        if len(layout) < 2:
            return {}
        width = max(len(cols) for _, _, cols in layout)
        for k, (i, q, cols) in enumerate(layout):
            select = [f"{k} AS _t"] + [f"CAST(s.{c} AS BIGINT) AS x{j}" for j, c in enumerate(cols)]
            select += [f"CAST(NULL AS BIGINT) AS x{j}" for j in range(len(cols), width)]
            parts.append(f"SELECT {', '.join(select)} FROM ({q.sql}) AS s")
        res = self._fetch("\nUNION ALL\n".join(parts))
        tid = np.asarray(res["_t"])
        order = np.argsort(tid, kind="stable")
        bounds = np.searchsorted(tid[order], np.arange(len(layout) + 1))
        out = {}
        for k, (i, q, cols) in enumerate(layout):
            rows = order[bounds[k]:bounds[k + 1]]
            # int32, as the single query returns them (constant ids and statuses;
            # parameter bindings are keyed by their bytes)
            out[i] = (q, {c: np.asarray(np.ma.getdata(res[f"x{j}"]))[rows].astype(np.int32)
                          for j, c in enumerate(cols)})
        return out

    def stream_template(self, i: int, used: int = 0, parts: int = 1) -> tuple[Rows | None, dict]:
        """Like :meth:`ground_template` (templates without existential groups),
        with the rows streamed in chunks (``stream.py``): constant rows (false
        by evidence) and tautologies are counted in ``Rows.dropped`` instead of
        returned, and only the live rows are held, as compact keys.

        ``parts``: ground the template as that many disjoint queries (rows split
        by a hash of their first column, see :meth:`part_sql`), each into its own
        :class:`TemplateRows`, concatenated before registration: the result is
        the same. This is the unit of work for grounding on several workers."""
        t = self.templates[i]
        info = {"rows": 0, "satisfied_by_groups": 0}
        q = self._query(i)
        if q.empty:
            return None, info
        if self.chunk_sink is None:      # (a sink holds no row)
            self._check_budget(i, q, used, streamed=True)
        coef = self.params.coefficient(t)
        if not q.literals and not t.plus_vars:       # every grounding is false by evidence: count them
            if 0 not in self.row_parts.get(i, ((0,), 1))[0]:
                return None, info                   # counted once, by part 0
            n = self._count_evidence_only(t, q)
            info["rows"] = n
            if n == 0:
                return None, info
            dropped = {"rows": n, "tautologies": 0, "empty": n,
                       "weight": 0.0 if t.hard else coef * self.params.initial_value(t)}
            param = None if t.hard else np.zeros(0, np.int32)
            return Rows(np.zeros((0, 0), np.int32), i, param, coef, dropped), info
        plus_cols = [q.var_cols[v] for v in t.plus_vars]
        sink = self.chunk_sink(i, t) if self.chunk_sink is not None else None
        acc = TemplateRows(self.registry, q, plus_cols, sink)
        remaining = self.memory_limit - self.bytes_used
        per_row = self._row_bytes(i)
        ks = range(max(1, int(parts)))
        if i in self.row_parts:
            only, parts = self.row_parts[i]
            ks = sorted(only)
        for k in ks:
            part = acc if k == ks[0] else TemplateRows(self.registry, q, plus_cols, sink)
            with closing(fetch_chunks(self.store.con, self.part_sql(q, k, parts))) as chunks:
                for cols in chunks:
                    part.add(cols)
                    if sink is None and (acc.live + (part.live if part is not acc else 0)) * per_row > remaining:
                        # the count was skipped or wrong: stop now
                        self._too_big(i, float(acc.live + part.live), per_row, counted=True, partial=True)
            if part is not acc:
                acc.extend(part)
        info["rows"] = acc.rows
        rows = acc.finish(self.params, i, t)
        if rows is not None:
            self.bytes_used += len(rows) * self._row_bytes(i)
        return rows, info

    @staticmethod
    def part_sql(q, k: int, parts: int) -> str:
        """Part ``k`` of ``parts`` of a template's grounding query: the rows whose
        first output column hashes to ``k`` (all rows when ``parts`` is 1)."""
        if parts <= 1:
            return q.sql
        cols = [c for out in q.literals for c in out.arg_cols] + list(q.var_cols.values())
        if not cols:
            return q.sql if k == 0 else f"SELECT * FROM ({q.sql}) AS s WHERE FALSE"
        return f"SELECT * FROM ({q.sql}) AS s WHERE hash(s.{cols[0]}) % {int(parts)} = {int(k)}"

    def ground_template(self, i: int, used: int = 0, prefetched: tuple | None = None) -> tuple[Rows | None, dict]:
        """The ground rows of template ``i`` (evidence-simplified, not merged)
        and counts: ``rows`` (groundings not satisfied by evidence and
        comparisons), ``satisfied_by_groups``. ``prefetched``: its query and
        rows from :meth:`_prefetch`."""
        t = self.templates[i]
        store = self.store
        info = {"rows": 0, "satisfied_by_groups": 0}
        if prefetched is not None:
            q, res = prefetched
            return self._rows(i, t, q, res, info)
        q = self._query(i)
        if q.empty:
            return None, info
        self._check_budget(i, q, used)
        if t.exists:
            store.con.execute(
                f"CREATE OR REPLACE TEMP TABLE _grows AS SELECT (row_number() OVER ()) - 1 AS rid, * FROM ({q.sql}) AS s"
            )
            res = self._fetch("SELECT * FROM _grows ORDER BY rid")
        else:
            res = self._fetch(q.sql)
        return self._rows(i, t, q, res, info)

    def _rows(self, i: int, t: ClauseTemplate, q, res: dict, info: dict) -> tuple[Rows | None, dict]:
        store = self.store
        n = len(next(iter(res.values()))) if res else 0
        info["rows"] = n
        self.bytes_used += n * self._row_bytes(i)
        if n == 0:
            return None, info
        codes = self._literal_codes(res, q, n)
        binding = (
            np.stack([res[q.var_cols[v]] for v in t.plus_vars], axis=1).astype(np.int32)
            if t.plus_vars else None
        )
        param = None if t.hard else self.params.ids(i, t, binding)
        if param is not None and binding is None:
            param = np.full(n, param[0], dtype=np.int32)
        coef: np.ndarray | float = self.params.coefficient(t)
        if t.exists:
            codes, row_of, k_per_row, satisfied = self._expand_groups(i, t, q, codes, n)
            info["satisfied_by_groups"] = int(satisfied.sum())
            store.con.execute("DROP TABLE IF EXISTS _grows")
            if param is not None:
                param = param[row_of]
                coef = coef / k_per_row[row_of].astype(np.float64)
        return Rows(codes=codes, template=i, param=param, coef=coef), info

    def _expand_groups(self, i: int, t: ClauseTemplate, q, codes: np.ndarray, n: int):
        """Add the existential groups' disjuncts to each grounding (distributing
        conjunctions); groundings a group makes true are removed."""
        satisfied = np.zeros(n, dtype=bool)
        single_rows = [np.repeat(np.arange(n), codes.shape[1])]
        single_codes = [codes.reshape(-1)]
        multi_rows, multi_codes = [], []
        for g in t.exists:
            var_cols = {v: q.var_cols[v] for v in q.var_cols if v in self._group_vars(t)}
            gq = GroupCompiler(self.store, t, g, "_grows", var_cols).build()
            if gq.empty:
                continue
            res = self._fetch(gq.sql)
            rid = res["rid"].astype(np.int64)
            m = len(rid)
            if m == 0:
                continue
            gcodes = self._literal_codes(res, gq, m)
            if gcodes.shape[1] == 0:
                satisfied[rid] = True          # every conjunct true by evidence
                continue
            gcodes.sort(axis=1)
            size = (gcodes != PAD).sum(axis=1)
            satisfied[rid[size == 0]] = True
            one = size == 1
            single_rows.append(rid[one])
            single_codes.append(gcodes[one, 0])
            many = size > 1
            multi_rows.append(rid[many])
            multi_codes.append(gcodes[many])
        s_row = np.concatenate(single_rows)
        s_code = np.concatenate(single_codes)
        keep = s_code != PAD
        s_row, s_code = s_row[keep], s_code[keep]
        width = max([c.shape[1] for c in multi_codes] + [1])
        m_row = np.concatenate(multi_rows) if multi_rows else np.zeros(0, np.int64)
        m_codes = (
            np.concatenate([np.pad(c, ((0, 0), (0, width - c.shape[1])), constant_values=PAD) for c in multi_codes])
            if multi_codes else np.zeros((0, width), np.int32)
        )
        # drop the groundings some group satisfies, renumber rows
        live = np.flatnonzero(~satisfied)
        new_id = np.full(n, -1, dtype=np.int64)
        new_id[live] = np.arange(len(live))
        ks = ~satisfied[s_row]
        km = ~satisfied[m_row] if len(m_row) else np.zeros(0, bool)
        clause_row, out, k_per_row = distribute(
            len(live), new_id[s_row[ks]], s_code[ks], new_id[m_row[km]], m_codes[km],
            MAX_DISTRIBUTION, f"template {i} {self._template_text(i)}",
        )
        return out, live[clause_row], self._k_full(n, live, k_per_row), satisfied

    @staticmethod
    def _k_full(n: int, live: np.ndarray, k_per_row: np.ndarray) -> np.ndarray:
        k = np.ones(n, dtype=np.int64)
        k[live] = k_per_row
        return k

    def count_groundings(self, i: int) -> int:
        """Number of groundings of template ``i``'s clause variables (bindings
        where every function term is defined)."""
        t = self.templates[i]
        types = t.variable_types
        cvars = clause_variables(t)
        funcs = list(_func_terms(t))
        fvars: set[str] = set()
        for term, _ in funcs:
            fvars.update(v.name for v in term_vars(term))
        total = 1
        for v in cvars:
            if v not in fvars:
                total *= len(self.store.domain(types[v]))
        if not funcs or total == 0:
            return total
        scope = Scope(self.store, prefix="n")
        for v in cvars:
            if v in fvars:
                scope.home_in_domain(v, types[v])
        for d in t.literals:
            decl = self.store.preds[d.atom.predicate]
            for j, a in enumerate(d.atom.args):
                if isinstance(a, Func):
                    scope.id_expr(a, decl.arg_types[j])
        for c in t.comparisons:
            for side in (c.left, c.right):
                if isinstance(side, Func):
                    if is_internal(side, self.store):
                        scope.conds.append(f"({scope.value_expr(side)[1]}) IS NOT NULL")
                    else:
                        scope.id_expr(side)
        n = int(self.store.con.execute(f"SELECT count(*) FROM ({scope.select_sql([])}) AS q").fetchall()[0][0])
        return total * n

    # ------------------------------------------------------------ blocks
    def blocks(self) -> tuple[np.ndarray, np.ndarray, dict]:
        """Exactly-one blocks over registry atoms: (block_start, block_atoms, stats)."""
        if self._blocks is not None:
            return self._blocks
        store = self.store
        starts = [np.zeros(1, np.int64)]
        atoms_list = []
        offset = 0
        violated = 0
        for name, info in store.preds.items():
            if not info.has_block:
                continue
            key = [j for j, m in enumerate(info.mutex) if not m]
            mut = [j for j, m in enumerate(info.mutex) if m]
            sql = store.unknown_atoms_sql(name) + " ORDER BY " + ", ".join(f"a{j}" for j in key + mut)
            res = self._fetch(sql)
            args = np.stack([res[f"a{j}"] for j in range(info.arity)], axis=1).astype(np.int32)
            n_keys_total = math.prod(len(store.domain(info.arg_types[j])) for j in key)
            true_keys = 0
            if info.n_true and not info.labels:
                cols = ", ".join(f"a{j}" for j in key) or "1"
                true_keys = int(store.con.execute(
                    f"SELECT count(*) FROM (SELECT DISTINCT {cols} FROM {info.table} WHERE t = 1) AS k"
                ).fetchall()[0][0])
            if len(args) == 0:
                violated += n_keys_total - true_keys
                continue
            ids = self.registry.ids(info.index, args)
            keys = args[:, key]
            if keys.shape[1]:
                new = np.r_[True, (keys[1:] != keys[:-1]).any(axis=1)]
            else:
                new = np.zeros(len(keys), bool)
                new[0] = True
            first = np.flatnonzero(new)
            atoms_list.append(ids)
            starts.append(first[1:].astype(np.int64) + offset)
            offset += len(ids)
            starts.append(np.array([offset], np.int64))
            violated += n_keys_total - true_keys - len(first)
        block_atoms = np.concatenate(atoms_list) if atoms_list else np.zeros(0, np.int32)
        block_start = np.unique(np.concatenate(starts)) if atoms_list else np.zeros(1, np.int64)
        self._blocks = (block_start.astype(np.int64), block_atoms.astype(np.int32),
                        {"blocks_violated_by_evidence": int(violated)})
        return self._blocks

    @staticmethod
    def block_rows(block_start: np.ndarray, block_atoms: np.ndarray) -> Rows | None:
        """The blocks as hard clauses: at least one value, and no two values."""
        sizes = np.diff(block_start)
        if len(sizes) == 0:
            return None
        w = int(sizes.max())
        nb = len(sizes)
        least = np.full((nb, max(w, 2)), PAD, dtype=np.int32)
        pos = np.arange(len(block_atoms)) - np.repeat(block_start[:-1], sizes)
        least[np.repeat(np.arange(nb), sizes), pos] = 2 * block_atoms
        a, b = block_pairs(block_start, block_atoms)
        if len(a):
            pair = np.full((len(a), max(w, 2)), PAD, dtype=np.int32)
            pair[:, 0] = 2 * a + 1
            pair[:, 1] = 2 * b + 1
            codes = np.concatenate([least, pair])
        else:
            codes = least
        return Rows(codes=codes, template=-1, param=None, coef=0.0)

    # ------------------------------------------------------------ network
    def _ground_all(self, template_ids, merger: Merger | None = None) -> tuple[list[Rows], dict]:
        """Ground the templates in order; their rows are returned, or given to
        ``merger`` as each template is done (then only its distinct clauses are
        held)."""
        ids = range(len(self.templates)) if template_ids is None else template_ids
        rows: list[Rows] = []
        per_template = []
        used = 0
        constant = 0.0
        values, _ = self.params.arrays()
        iterator = list(ids)
        from .. import progress

        # per template, on a terminal (``progress`` is kept for callers; the display decides)
        bar = progress.task("grounding templates", total=len(iterator))
        try:
            prefetched: dict[int, tuple] = {}
            for pos, i in enumerate(iterator):
                t0 = time.perf_counter()
                if pos % PREFETCH == 0:
                    prefetched = self._prefetch(iterator[pos:pos + PREFETCH])
                pre = prefetched.pop(i, None)
                if i in self.row_parts and self.templates[i].exists:
                    raise ValueError(f"template {i} has existential groups: its rows cannot be split")
                if pre is None and not self.templates[i].exists:
                    r, info = self.stream_template(i, used)
                else:
                    r, info = self.ground_template(i, used, pre)
                used += info["rows"]
                if r is not None:
                    if merger is not None:
                        merger.add(r)
                    else:
                        rows.append(r)
                    del r
                t = self.templates[i]
                if not t.hard:
                    total = self.count_groundings(i)
                    if i in self.row_parts and 0 not in self.row_parts[i][0]:
                        total = 0       # the template's whole count goes with its part 0
                    sat = total - info["rows"] + info["satisfied_by_groups"]
                    w = self.params.initial_value(t) * self.params.coefficient(t)
                    constant += w * sat
                    info["satisfied_by_evidence"] = int(sat)
                info["seconds"] = round(time.perf_counter() - t0, 6)
                per_template.append({"template": int(i), **info})
                bar.advance(detail=f"{used:,} rows")
        finally:
            bar.close()
        return rows, {"templates": per_template, "evidence_constant": constant}

    def truth(self, atom_ids: np.ndarray) -> np.ndarray:
        """Training truth of registry atoms: 1/0 from labels, else 0 (query
        predicates, ``truth_closed_world``) or -1."""
        truth = np.full(self.registry.n_atoms, -1, dtype=np.int8)
        pred, _ = self.registry.arrays()
        if self.truth_closed_world:
            for name in self.store.world.query_predicates:
                truth[pred == self.store.preds[name].index] = 0
        for name, (args, values) in self.store.labels.items():
            if len(args) == 0:
                continue
            ids = self.registry.ids(self.store.preds[name].index, args, add=False)
            hit = ids >= 0
            truth[ids[hit]] = values[hit]     # 1, 0, or -1 for a '?' label
        return truth[atom_ids]

    def network(
        self,
        *,
        blocks_as_clauses: bool = False,
        closure: bool = True,
        template_ids: Sequence[int] | None = None,
        fold_units: bool = True,
        clauses_out: list | None = None,
    ) -> GroundNetwork:
        """Ground every template (or ``template_ids``) and build the network.

        ``clauses_out``: a list that receives the merged ``GroundClauses``
        (registry atom ids) the network was built from, for callers that add
        clauses later through :meth:`assemble` (lazily separated hard clauses).

        ``closure``: keep only the connected components (through clauses and
        blocks) that contain a query atom; otherwise every registered atom is
        an atom of the network, with its registry id. ``fold_units``: merge
        the soft unit clauses ``P`` and ``!P`` into one (see ``assemble.merge``).
        """
        start = time.perf_counter()
        merger = Merger(self.params.values, fold_units=fold_units)
        _, ginfo = self._ground_all(template_ids, merger)
        t_sql = time.perf_counter() - start
        block_start, block_atoms, binfo = self.blocks()
        if blocks_as_clauses:
            br = self.block_rows(block_start, block_atoms)
            if br is not None:
                merger.add(br)
            block_start, block_atoms = np.zeros(1, np.int64), np.zeros(0, np.int32)
        values, info = self.params.arrays()
        t1 = time.perf_counter()
        self._give_back()
        self._check_merge(merger)
        hard_false = sorted(merger.hard_false_templates)
        gc = merger.finish()
        del merger
        if hard_false:
            self._warn_hard_false(hard_false, int(gc.stats.get("hard_violated_by_evidence", 0)))
        t_merge = time.perf_counter() - t1
        if clauses_out is not None:
            clauses_out.append(gc)
        stats = dict(gc.stats)
        stats.update(binfo)
        stats["evidence_constant_score"] = ginfo["evidence_constant"]
        stats["templates"] = ginfo["templates"]
        stats["registered_atoms"] = self.registry.n_atoms
        net = self._build(gc, block_start, block_atoms, values, info, closure, stats)
        seconds = time.perf_counter() - start
        net.stats.update(
            ground_seconds=round(seconds + sum(self.timings.values()), 6),
            seconds={**{k: round(v, 6) for k, v in self.timings.items()},
                     "sql": round(t_sql, 6), "merge": round(t_merge, 6),
                     "network": round(seconds - t_sql - t_merge, 6)},
            peak_mb=round(_peak_mb(), 1),
        )
        return net

    def _warn_hard_false(self, template_ids: list[int], n: int) -> None:
        """Evidence that falsifies groundings of a hard formula has probability
        zero under the model: say so (the answer keeps the evidence as given,
        and those groundings are not counted in ``hard_violated``)."""
        import warnings

        from ..logic.format import format_clause

        names = []
        for i in template_ids[:3]:
            t = self.templates[i]
            decl = self.mln.formulas[t.formula_index] if 0 <= t.formula_index < len(self.mln.formulas) else None
            where = f"{decl.pos.file}:{decl.pos.line}: " if decl is not None and decl.pos is not None else ""
            names.append(f"{where}{format_clause(t)!r}")
        more = f" and {len(template_ids) - 3} more" if len(template_ids) > 3 else ""
        warnings.warn(f"the evidence falsifies {n} grounding(s) of hard formula(s) {'; '.join(names)}{more}: "
                      "under the model such evidence has probability zero. The answer keeps the evidence as given "
                      "and does not count those groundings in 'hard violated' (stats: hard_violated_by_evidence); "
                      "check the evidence or make the formula soft.", stacklevel=3)

    def _build(self, gc: GroundClauses, block_start, block_atoms, values, info, closure: bool, stats: dict) -> GroundNetwork:
        """The network of the merged clauses: components (compiled union-find),
        the closure from the query atoms, the reverse index. When the closure
        keeps every atom, the clause arrays are used as they are (no copy)."""
        n = self.registry.n_atoms
        is_query = np.zeros(n, dtype=bool)
        is_query[self.query_atoms] = True
        clause_start, lit_atom = gc.clause_start, gc.lit_atom
        n_clauses = gc.n_clauses
        labels, n_comp = components(n, clause_start, lit_atom, block_start, block_atoms)
        atom_ids = None                       # None: every registered atom is kept, ids unchanged
        keep_clause = keep_block = None
        if closure:
            good = np.zeros(n_comp, dtype=bool)
            good[labels[self.query_atoms]] = True
            keep_atom = good[labels] if n else np.zeros(0, bool)
            del good
            if not keep_atom.all():
                atom_ids = np.flatnonzero(keep_atom)
                sizes = np.diff(clause_start)
                keep_clause = np.zeros(n_clauses, dtype=bool)
                nonempty = sizes > 0
                keep_clause[nonempty] = keep_atom[lit_atom[clause_start[:-1][nonempty]]]
                del sizes, nonempty
                bsizes = np.diff(block_start)
                keep_block = keep_atom[block_atoms[block_start[:-1]]] if len(bsizes) else np.ones(0, bool)
            del keep_atom
            stats["pruned_atoms"] = int(n - (n if atom_ids is None else len(atom_ids)))
            stats["pruned_clauses"] = int(0 if keep_clause is None else n_clauses - keep_clause.sum())
        pred, args = self.registry.arrays()
        if atom_ids is None:
            new_start, new_lit_atom, new_lit_pos = clause_start, lit_atom, gc.lit_positive
            is_hard, template_id = gc.is_hard, gc.template_id
            new_pstart, param_index, param_coef = gc.param_start, gc.param_index, gc.param_coef
            new_bstart, new_batoms = block_start, block_atoms
            kept_labels = labels
            truth = self.truth(slice(None))
            atom_pred, atom_args, query = pred, args, is_query
            n_kept = n
        else:
            remap = np.full(n, -1, dtype=np.int32)
            remap[atom_ids] = np.arange(len(atom_ids), dtype=np.int32)
            new_start, lits = compact_csr(clause_start, keep_clause, lit_atom, gc.lit_positive)
            new_lit_atom, new_lit_pos = remap[lits[0]], lits[1]
            del lits
            new_pstart, (param_index, param_coef) = compact_csr(gc.param_start, keep_clause, gc.param_index,
                                                                gc.param_coef)
            new_bstart, (new_batoms,) = compact_csr(block_start, keep_block, block_atoms)
            new_batoms = remap[new_batoms]
            del remap
            is_hard, template_id = gc.is_hard[keep_clause], gc.template_id[keep_clause]
            truth = self.truth(atom_ids)
            uniq, kept_labels = np.unique(labels[atom_ids], return_inverse=True)
            n_comp = len(uniq)
            atom_pred, atom_args, query = pred[atom_ids], args[atom_ids], is_query[atom_ids]
            n_kept = len(atom_ids)
        del labels
        comps = (kept_labels.astype(np.int32, copy=False).reshape(-1), int(n_comp))
        rev = reverse_index(n_kept, new_start, new_lit_atom)
        n_kept_clauses = len(new_start) - 1
        n_hard = int(is_hard.sum())
        stats.update(
            atoms=int(n_kept),
            query_atoms=int(query.sum()),
            clauses=int(n_kept_clauses),
            hard_clauses=n_hard,
            soft_clauses=int(n_kept_clauses) - n_hard,
            blocks=int(len(new_bstart) - 1),
            evidence_atoms=int(self.store.n_evidence_atoms),
            constant_score=float(gc.constant_score + stats["evidence_constant_score"]),
        )
        net = GroundNetwork.from_arrays(
            n_atoms=n_kept,
            clause_start=new_start,
            lit_atom=new_lit_atom,
            lit_positive=new_lit_pos,
            is_hard=is_hard,
            param_start=new_pstart,
            param_index=param_index,
            param_coef=param_coef,
            params=values,
            param_info=info,
            block_start=new_bstart,
            block_atoms=new_batoms,
            template_id=template_id,
            atom_pred=atom_pred,
            atom_args=atom_args,
            predicates=self.store.pred_names,
            constants=self.store.constant_names(),
            is_query=query,
            constant_score=stats["constant_score"],
            truth=truth,
            stats=stats,
            components=comps,
            reverse_index=rev,
        )
        net.stats["components"] = int(net.n_components)
        net.stats["bytes"] = int(net.nbytes())
        return net

    # ------------------------------------------------------------ cutting planes
    def _world_tables(self, true_ids: np.ndarray) -> dict[int, str]:
        pred, args = self.registry.arrays()
        tables: dict[int, str] = {}
        p = pred[true_ids]
        for k in np.unique(p):
            info = self.store.preds[self.store.pred_names[k]]
            sel = true_ids[p == k]
            frame = {f"a{j}": args[sel, j] for j in range(info.arity)} or {"one": np.ones(len(sel), np.int32)}
            name = f"_w{int(k)}"
            self.store.con.register(name, frame)
            tables[int(k)] = name
        return tables

    def _cached_rows(self, i: int) -> Rows | None:
        if i not in self._row_cache:
            r, _ = self.ground_template(i)
            self._row_cache[i] = r if r is not None else Rows(np.zeros((0, 1), np.int32), i, None, 0.0)
        r = self._row_cache[i]
        return r if len(r) else None

    def violated_groundings(
        self,
        world_true_atoms: np.ndarray,
        template_ids: Sequence[int] | None = None,
        *,
        params: np.ndarray | None = None,
        new_only: bool = False,
    ) -> GroundClauses:
        """Cutting-plane separation: the ground clauses that the world violates
        (hard, or positive weight: every literal false) or satisfies (negative
        weight: some literal true), evidence-simplified and merged, over
        registry atom ids.

        ``world_true_atoms``: the ids of the registry atoms that are true (or a
        bool mask over them); every other unknown atom is false. ``params``:
        the current weights (default: the registry's initial values), which
        decide each clause's sign. ``new_only``: leave out clauses returned by
        an earlier call. Templates with existential groups and negative-weight
        templates are answered from their full (cached) grounding; the others
        run one SQL query each with the world joined in.
        """
        w = np.asarray(world_true_atoms)
        if w.dtype == bool:
            true_ids = np.flatnonzero(w).astype(np.int64)
        else:
            true_ids = np.unique(w.astype(np.int64))
        values = self.params.arrays()[0] if params is None else np.asarray(params, dtype=np.float64)
        ids = range(len(self.templates)) if template_ids is None else template_ids
        tables = self._world_tables(true_ids)
        rows: list[Rows] = []
        try:
            for i in ids:
                t = self.templates[i]
                sign_pos, sign_neg = True, False
                if not t.hard:
                    w0 = self.params.coefficient(t)
                    if t.plus_vars:
                        sign_neg = True
                    else:
                        pid = self.params.ids(i, t, None)[0]
                        val = w0 * (values[pid] if pid < len(values) else self.params.values[pid])
                        sign_pos, sign_neg = val > 0, val < 0
                if sign_pos:
                    if t.exists:
                        r = self._from_cache(i, true_ids, violated=True, values=values)
                    else:
                        r = self._violated_sql(i, t, tables, values)
                    if r is not None:
                        rows.append(r)
                if sign_neg:
                    r = self._from_cache(i, true_ids, violated=False, values=values)
                    if r is not None:
                        rows.append(r)
        finally:
            for name in tables.values():
                self.store.con.unregister(name)
        all_values = self.params.arrays()[0] if params is None else np.asarray(params, dtype=np.float64)
        if len(all_values) < len(self.params.values):   # parameters registered during this call
            all_values = np.concatenate([all_values, np.asarray(self.params.values[len(all_values):])])
        gc = merge(rows, all_values)
        if new_only:
            gc = self._only_new(gc)
        return gc

    def _violated_sql(self, i: int, t: ClauseTemplate, tables: dict[int, str], values) -> Rows | None:
        export = list(t.plus_vars)
        q = TemplateCompiler(self.store, t, mode="violated", world=tables, export_vars=export).build()
        if q.empty:
            return None
        res = self._fetch(q.sql)
        n = len(next(iter(res.values()))) if res else 0
        if n == 0:
            return None
        codes = self._literal_codes(res, q, n)
        if t.hard:
            return Rows(codes, i, None, 0.0)
        binding = np.stack([res[q.var_cols[v]] for v in t.plus_vars], axis=1).astype(np.int32) if t.plus_vars else None
        param = self.params.ids(i, t, binding)
        if binding is None:
            param = np.full(n, param[0], dtype=np.int32)
        coef = self.params.coefficient(t)
        vals = np.asarray(self.params.values)[param] if len(values) < len(self.params.values) else values[param]
        keep = coef * vals > 0
        if not keep.all():
            codes, param = codes[keep], param[keep]
        return Rows(codes, i, param, coef) if len(codes) else None

    def _from_cache(self, i: int, true_ids: np.ndarray, *, violated: bool, values) -> Rows | None:
        r = self._cached_rows(i)
        if r is None:
            return None
        world = np.zeros(max(self.registry.n_atoms, 1), dtype=bool)
        world[true_ids[true_ids < self.registry.n_atoms]] = True
        codes = r.codes
        valid = codes != PAD
        atom = np.where(valid, codes >> 1, 0)
        lit_true = valid & (world[atom] != (codes & 1).astype(bool))
        any_true = lit_true.any(axis=1)
        keep = ~any_true if violated else any_true
        if r.param is not None:
            allv = np.asarray(self.params.values)
            v = values if len(values) >= len(allv) else allv
            coef = r.coef if np.isscalar(r.coef) else r.coef
            w = (coef * v[r.param])
            keep &= (w > 0) if violated else (w < 0)
        if not keep.any():
            return None
        coef = r.coef if np.isscalar(r.coef) else r.coef[keep]
        return Rows(codes[keep], i, None if r.param is None else r.param[keep], coef)

    def _only_new(self, gc: GroundClauses) -> GroundClauses:
        """Drop clauses already returned by earlier calls (by a 64-bit hash of
        the clause's literals)."""
        clause, code = gc.codes()
        h = (code.astype(np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
        h ^= h >> np.uint64(29)
        hashes = np.zeros(gc.n_clauses, dtype=np.uint64)
        np.add.at(hashes, clause, h)
        hashes ^= np.diff(gc.clause_start).astype(np.uint64) * np.uint64(0xBF58476D1CE4E5B9)
        seen = np.isin(hashes, self._emitted)
        self._emitted = np.union1d(self._emitted, hashes[~seen])
        if not seen.any():
            return gc
        return select_clauses(gc, ~seen)

    def assemble(self, clauses: GroundClauses | Sequence[GroundClauses], *, blocks: bool = True) -> GroundNetwork:
        """A network over every registered atom (ids = registry ids) with the
        given clauses (merged again if several are given) and the blocks."""
        if isinstance(clauses, GroundClauses):
            parts = [clauses]
        else:
            parts = list(clauses)
        gc = concat_clauses(parts) if len(parts) != 1 else parts[0]
        values, info = self.params.arrays()
        if blocks:
            block_start, block_atoms, binfo = self.blocks()
        else:
            block_start, block_atoms, binfo = np.zeros(1, np.int64), np.zeros(0, np.int32), {}
        return self._build(gc, block_start, block_atoms, values, info, False,
                           {**gc.stats, **binfo, "evidence_constant_score": 0.0})

    def close(self) -> None:
        self.store.close()


def select_clauses(gc: GroundClauses, keep: np.ndarray) -> GroundClauses:
    sizes = np.diff(gc.clause_start)
    psizes = np.diff(gc.param_start)
    cs = np.zeros(int(keep.sum()) + 1, np.int64)
    np.cumsum(sizes[keep], out=cs[1:])
    ps = np.zeros(int(keep.sum()) + 1, np.int64)
    np.cumsum(psizes[keep], out=ps[1:])
    lk = np.repeat(keep, sizes)
    pk = np.repeat(keep, psizes)
    return GroundClauses(cs, gc.lit_atom[lk], gc.lit_positive[lk], gc.is_hard[keep], gc.template_id[keep],
                         ps, gc.param_index[pk], gc.param_coef[pk], gc.constant_score, dict(gc.stats))


def concat_clauses(parts: Sequence[GroundClauses]) -> GroundClauses:
    """Several clause sets as one (no merging across them)."""
    if not parts:
        return GroundClauses.empty()
    cs = [np.zeros(1, np.int64)]
    ps = [np.zeros(1, np.int64)]
    off = poff = 0
    for p in parts:
        cs.append(p.clause_start[1:] + off)
        ps.append(p.param_start[1:] + poff)
        off += int(p.clause_start[-1])
        poff += int(p.param_start[-1])
    return GroundClauses(
        np.concatenate(cs), np.concatenate([p.lit_atom for p in parts]),
        np.concatenate([p.lit_positive for p in parts]), np.concatenate([p.is_hard for p in parts]),
        np.concatenate([p.template_id for p in parts]), np.concatenate(ps),
        np.concatenate([p.param_index for p in parts]), np.concatenate([p.param_coef for p in parts]),
        float(sum(p.constant_score for p in parts)), {},
    )


def ground(
    mln: MLN,
    db: Database | list[Database],
    queries: list[Query] | None = None,
    *,
    closed: Sequence[str] = (),
    open_: Sequence[str] = (),
    db_path: str | None = None,
    allow_unweighted: bool = False,
    truth_closed_world: bool = False,
    blocks_as_clauses: bool = False,
    max_clauses: int | None = None,
    progress: bool = False,
    query_truth: bool | None = None,
    fold_units: bool = True,
    memory_limit: int | str | None = None,
) -> GroundNetwork:
    """The ground Markov network of ``mln`` with evidence ``db`` for ``queries``.

    See :class:`Grounder` for the semantics of the options; ``query_truth``
    (default: ``truth_closed_world``) makes listed atoms of query predicates
    training labels instead of evidence; ``fold_units`` merges the soft unit
    clauses ``P`` and ``!P`` as Alchemy does.
    """
    g = Grounder(
        mln, db, queries,
        closed=closed, open_=open_, db_path=db_path, allow_unweighted=allow_unweighted,
        truth_closed_world=truth_closed_world, query_truth=query_truth,
        max_clauses=max_clauses, progress=progress, memory_limit=memory_limit,
    )
    try:
        return g.network(blocks_as_clauses=blocks_as_clauses, fold_units=fold_units)
    finally:
        g.close()
