"""Lazy grounding: the ground clauses that a set of active atoms can reach
(Singla & Domingos' LazySAT, AAAI 2006; Poon, Domingos & Sumner, AAAI 2008).

Unknown atoms default to false. A set ``A`` of *active* atoms (those a lazy
algorithm may change) determines which ground clauses it must hold: the ones
whose state can change when atoms of ``A`` change, or that are not in their
wanted state in the default world. With ``G`` the full ground network
(evidence-simplified, as :class:`.grounder.Grounder` makes it), a ground
clause ``c`` of two or more literals is in ``M(A)`` when

* ``c`` is hard or has positive weight, and every negative literal of ``c``
  is on an atom of ``A`` (so ``c`` can be made false by changing atoms of
  ``A``; with no negative literal ``c`` is false in the default world);
* ``c`` has negative weight, and ``c`` has a negative literal (it is true,
  so not as wanted, in the default world) or an atom of ``A``.

Unit ground clauses are fetched per atom: ``U(S)`` holds every unit clause
on an atom of ``S``, so that ``P`` and ``!P`` are always folded together as
the full grounding folds them (``assemble.merge``). The lazy algorithms hold
``M(A)`` plus ``U`` of every atom that occurs in a clause they hold, plus
``U`` of the atoms whose unit clauses are not as wanted in the default world
(:meth:`Activation.seeds`).

**Claim.** Let ``x`` be a world in which every atom outside ``A`` is false.
A ground clause of ``G`` that is not held is in its wanted state in ``x``,
and stays so whatever values the atoms of ``A`` take. (A hard or positive
clause not in ``M(A)`` has a negative literal on an atom outside ``A``,
which is true; a negative clause not held has only positive literals, on
atoms outside ``A``, all false; a unit clause not held is on an atom that
occurs in no held clause, hence outside ``A``, and in its wanted state by
the choice of the seeds.) The lazy algorithms build their proofs of
exactness on this (``infer/lazy/``).

Every question is SQL over the evidence store, one query per template and
literal position (:class:`.lazysql.LiteralCompiler`), never one per atom:

* :meth:`Activation.initial` -- ``M(empty)`` and the seeds' unit clauses;
* :meth:`Activation.activate` -- ``M(A + B) - M(A)`` for a batch ``B`` of
  newly active atoms (the branch of literal ``i`` takes the groundings whose
  first literal on ``B`` is ``i``, so no clause comes twice), and the unit
  clauses of the atoms that appear for the first time;
* :meth:`Activation.flip_gains` -- for a world whose true atoms are ``T``
  (inside ``A``), the change of score that flipping each atom outside ``A``
  would bring, summed in numpy over the groundings in which every other
  literal is false (lazy MC-SAT's activation test);
* :meth:`Activation.held_gains` -- the same summed per atom in SQL, only for
  the atoms that can pass lazy MC-SAT's check (models whose soft templates
  have one weight each);
* :meth:`Activation.count_total` -- the ground clauses of ``G`` (rows not
  satisfied by evidence, as ``mln ground`` counts them), counted in SQL.

The active atoms live in DuckDB tables ``_lza_<k>``, one per predicate,
appended to batch by batch; a batch is registered as ``_lzb_<k>``.

What it does not do: templates with existential quantifiers are refused
(their groundings are disjunctions over constants, not one row each).
Ground clauses with the same literals from templates of opposite signs are
merged by the full grounding but may be fetched at different times here;
they are then two clauses (the score is the same up to a constant).
"""

from __future__ import annotations

import time

import numpy as np

from ..logic.clauses import ClauseTemplate
from .assemble import GroundClauses, Rows, merge
from .lazysql import Any, Dropped, DroppedOrSame, FalseIn, In, LiteralCompiler, Unknown

SIGNS = ("hard", "pos", "neg", "mixed", "zero", "eager")
PER_STATEMENT = 128         # queries sent to DuckDB as one UNION ALL statement
# peak bytes per row of flip_gains (fetch, codes, registry, sums): measured on the
# friends network of bench/workloads/lazy.py, N = 600: 1.68 M rows, 840 MB
FLIP_ROW_BYTES = 512


class RowCapExceeded(Exception):
    """A query of :meth:`Activation._run_all` returned more rows than its cap."""


class Activation:
    """Lazy grounding over a :class:`.grounder.Grounder` (module docstring)."""

    def __init__(self, grounder) -> None:
        self.g = grounder
        self.store = grounder.store
        self.con = grounder.store.con
        self.templates = grounder.templates
        values = np.asarray(grounder.params.arrays()[0], dtype=np.float64)
        self.sign = [self._sign(i, t, values) for i, t in enumerate(self.templates)]
        # templates with existential groups are ground in full and held from the start
        self.eager = [i for i, t in enumerate(self.templates) if t.exists and self.sign[i] != "zero"]
        for i in self.eager:
            self.sign[i] = "eager"
        self.eager_clauses = GroundClauses.empty()
        self.active = np.zeros(0, dtype=bool)         # per registry atom: in A
        self.seen = np.zeros(0, dtype=bool)           # per registry atom: its unit clauses were fetched
        self._tables: dict[int, str] = {}             # predicate -> _lza_<k>, once it has atoms
        self.queries = 0
        self.seconds = 0.0
        self.rounds = 0
        self.rows = 0                                 # ground rows fetched (before merging)

    # ------------------------------------------------------------ helpers
    def _sign(self, i: int, t: ClauseTemplate, values: np.ndarray) -> str:
        if t.hard:
            return "hard"
        if t.plus_vars:
            return "mixed"
        pid = self.g.params.ids(i, t, None)[0]
        w = self.g.params.coefficient(t) * values[pid]
        return "pos" if w > 0 else ("neg" if w < 0 else "zero")

    def _grow(self) -> None:
        n = self.g.registry.n_atoms
        if len(self.active) < n:
            self.active = np.concatenate([self.active, np.zeros(n - len(self.active), bool)])
            self.seen = np.concatenate([self.seen, np.zeros(n - len(self.seen), bool)])

    def _frames(self, ids: np.ndarray) -> dict[int, dict]:
        """Per predicate: the argument columns of the given registry atoms."""
        pred, args = self.g.registry.arrays()
        out = {}
        p = pred[ids]
        for k in np.unique(p):
            info = self.store.preds[self.store.pred_names[k]]
            sel = ids[p == k]
            out[int(k)] = {f"a{j}": np.ascontiguousarray(args[sel, j]) for j in range(info.arity)} \
                or {"one": np.ones(len(sel), np.int32)}
        return out

    def _register(self, stem: str, ids: np.ndarray) -> dict[int, str]:
        names = {}
        for k, frame in self._frames(ids).items():
            name = f"_{stem}{k}"
            self.con.register(name, frame)
            names[k] = name
        return names

    def _unregister(self, names: dict[int, str]) -> None:
        for name in names.values():
            self.con.unregister(name)

    def _append_active(self, batch: dict[int, str]) -> None:
        for k, name in batch.items():
            info = self.store.preds[self.store.pred_names[k]]
            if k not in self._tables:
                table = f"_lza_{k}"
                cols = ", ".join(f"a{j} INTEGER" for j in range(info.arity)) or "one INTEGER"
                self.con.execute(f"CREATE OR REPLACE TEMP TABLE {table} ({cols})")
                self._tables[k] = table
            self.con.execute(f"INSERT INTO {self._tables[k]} SELECT * FROM {name}")

    def _union(self, *tables: str | None) -> str | None:
        parts = [t for t in tables if t is not None]
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0]
        return "(" + " UNION ALL ".join(f"SELECT * FROM {t}" for t in parts) + ")"

    def _pred(self, t: ClauseTemplate, lit) -> int:
        return self.store.preds[lit.atom.predicate].index

    def _fetch_capped(self, sql: str, cap: int | None) -> dict[str, np.ndarray]:
        """The query's rows, at most ``cap`` of them (None: all): one more
        row raises :class:`RowCapExceeded` before anything larger is read."""
        if cap is None:
            return self.g._fetch(sql)
        res = self.g._fetch(f"SELECT * FROM ({sql}) AS capped LIMIT {max(int(cap), 0) + 1}")
        n = len(next(iter(res.values()))) if res else 0
        if n > cap:
            raise RowCapExceeded(n)
        return res

    def _run_all(self, specs: list[tuple], max_rows: int | None = None) -> list[tuple]:
        """Several queries in one statement (``UNION ALL`` with a tag column,
        as :meth:`.grounder.Grounder._prefetch` does): DuckDB's cost per
        statement is paid once per round instead of once per template and
        literal. ``specs``: ``(template, conditions, min_unknown, extra)``;
        returns ``(template, query, result, rows, extra)`` for each spec
        whose query is not empty."""
        layout = []
        for i, conds, min_unknown, extra in specs:
            t = self.templates[i]
            q = LiteralCompiler(self.store, t, conds, export_vars=list(t.plus_vars),
                                min_unknown=min_unknown).build()
            if q.empty:
                continue
            cols = list(dict.fromkeys([c for out in q.literals for c in out.arg_cols]
                                      + [out.status_col for out in q.literals if out.status_col is not None]
                                      + list(q.var_cols.values())))
            layout.append((i, q, cols, extra))
        if not layout:
            return []
        if len(layout) > PER_STATEMENT:
            # DuckDB plans a UNION ALL of thousands of parts slowly (a model of
            # one formula per token and field: 34 s a statement); the grounder
            # batches 128 templates a query for the same reason
            out = []
            for k in range(0, len(specs), PER_STATEMENT):
                left = None if max_rows is None else max_rows - sum(o[3] for o in out)
                out += self._run_all(specs[k:k + PER_STATEMENT], left)
            return out
        self.queries += len(layout)
        if len(layout) == 1 or any(not cols for _, _, cols, _ in layout):
            out = []
            total = 0
            for i, q, cols, extra in layout:
                res = self._fetch_capped(q.sql, None if max_rows is None else max_rows - total)
                n = len(next(iter(res.values()))) if res else 0
                total += n
                out.append((i, q, res, n, extra))
            return out
        width = max(len(cols) for _, _, cols, _ in layout)
        parts = []
        for k, (i, q, cols, _) in enumerate(layout):
            select = [f"{k} AS _q"] + [f"CAST(s.{c} AS BIGINT) AS x{j}" for j, c in enumerate(cols)]
            select += [f"CAST(NULL AS BIGINT) AS x{j}" for j in range(len(cols), width)]
            parts.append(f"SELECT {', '.join(select)} FROM ({q.sql}) AS s")
        res = self._fetch_capped("\nUNION ALL\n".join(parts), max_rows)
        tag = np.asarray(res["_q"])
        order = np.argsort(tag, kind="stable")
        bounds = np.searchsorted(tag[order], np.arange(len(layout) + 1))
        out = []
        for k, (i, q, cols, extra) in enumerate(layout):
            sel = order[bounds[k]:bounds[k + 1]]
            part = {c: np.asarray(np.ma.getdata(res[f"x{j}"]))[sel].astype(np.int32) for j, c in enumerate(cols)}
            out.append((i, q, part, len(sel), extra))
        return out

    def _rows(self, i: int, q, res, n: int, want: str) -> Rows | None:
        """Ground rows of template ``i`` from a result; ``want``: keep the
        rows of this weight sign (``"pos"``: hard or positive, ``"neg"``,
        ``"any"``: every non-zero one)."""
        if n == 0:
            return None
        t = self.templates[i]
        codes = self.g._literal_codes(res, q, n)
        if t.hard:
            return Rows(codes, i, None, 0.0) if want in ("pos", "any") else None
        binding = np.stack([res[q.var_cols[v]] for v in t.plus_vars], axis=1).astype(np.int32) \
            if t.plus_vars else None
        param = self.g.params.ids(i, t, binding)
        if binding is None:
            param = np.full(n, param[0], dtype=np.int32)
        coef = self.g.params.coefficient(t)
        w = coef * np.asarray(self.g.params.arrays()[0], dtype=np.float64)[param]
        keep = (w > 0) if want == "pos" else ((w < 0) if want == "neg" else (w != 0))
        if not keep.all():
            codes, param = codes[keep], param[keep]
        return Rows(codes, i, param, coef) if len(codes) else None

    @staticmethod
    def _unit_conditions(t: ClauseTemplate, li: int, head) -> list:
        """Conditions for the ground unit clauses whose (first) literal is
        template literal ``li``: it gets ``head``, every other literal is
        dropped by evidence, or (after ``li``) repeats ``li``'s atom."""
        lit = t.literals[li]
        conds = []
        for j, other in enumerate(t.literals):
            if j == li:
                conds.append(head)
            elif j > li and other.positive == lit.positive and other.atom.predicate == lit.atom.predicate:
                conds.append(DroppedOrSame(li))
            else:
                conds.append(Dropped())
        return conds

    @staticmethod
    def _no_units(r: Rows | None) -> Rows | None:
        """``r`` without the rows that are unit clauses (a repeated atom) or
        tautologies after canonicalisation: units come from :meth:`units`."""
        if r is None:
            return None
        from .assemble import canonical

        _, length, taut = canonical(r.codes.copy())
        keep = (length >= 2) & ~taut
        if keep.all():
            return r
        if not keep.any():
            return None
        coef = r.coef if np.isscalar(r.coef) else np.asarray(r.coef)[keep]
        return Rows(r.codes[keep], r.template, None if r.param is None else r.param[keep], coef)

    def _merge(self, rows: list[Rows]) -> GroundClauses:
        values = np.asarray(self.g.params.arrays()[0], dtype=np.float64)
        return merge(rows, values, fold_units=True)

    def _new_atoms(self, rows: list[Rows]) -> np.ndarray:
        """Registry atoms of ``rows`` whose unit clauses were not fetched yet."""
        self._grow()
        if not rows:
            return np.zeros(0, np.int64)
        codes = np.concatenate([r.codes.reshape(-1) for r in rows])
        from .assemble import PAD

        atoms = np.unique(codes[codes != PAD] >> 1).astype(np.int64)
        return atoms[~self.seen[atoms]]

    # ------------------------------------------------------------ questions
    def _held_literals(self):
        """``(template index, template, literal index, literal)`` of every
        literal of the templates grounded lazily (not the eager or zero ones)."""
        for i, t in enumerate(self.templates):
            if self.sign[i] in ("zero", "eager"):
                continue
            for li, lit in enumerate(t.literals):
                yield i, t, li, lit

    def seeds(self) -> np.ndarray:
        """Registry atoms with a unit clause that is not as wanted in the
        default world: ``P`` hard or of positive weight, ``!P`` of negative
        weight."""
        specs = []
        for i, t, li, lit in self._held_literals():
            if lit.positive and self.sign[i] == "neg":
                continue
            if not lit.positive and self.sign[i] in ("hard", "pos"):
                continue
            specs.append((i, self._unit_conditions(t, li, Unknown()), 0, "pos" if lit.positive else "neg"))
        found = []
        for i, q, res, n, want in self._run_all(specs):
            r = self._rows(i, q, res, n, want)
            if r is not None:
                found.append(r.codes[:, 0] >> 1)
        self._grow()
        return np.unique(np.concatenate(found)).astype(np.int64) if found else np.zeros(0, np.int64)

    def units(self, atoms: np.ndarray) -> list[Rows]:
        """Every unit ground clause on the given registry atoms (marks them seen)."""
        atoms = np.unique(np.asarray(atoms, dtype=np.int64))
        self._grow()
        atoms = atoms[~self.seen[atoms]]
        if len(atoms) == 0:
            return []
        self.seen[atoms] = True
        names = self._register("lzs", atoms)
        rows: list[Rows] = []
        try:
            specs = []
            for i, t, li, lit in self._held_literals():
                k = self._pred(t, lit)
                if k in names:
                    specs.append((i, self._unit_conditions(t, li, In(names[k])), 0, "any"))
            for i, q, res, n, want in self._run_all(specs):
                r = self._rows(i, q, res, n, want)
                if r is not None:
                    rows.append(r)
        finally:
            self._unregister(names)
        self._grow()
        return rows

    def initial(self, active: np.ndarray | None = None) -> GroundClauses:
        """``M(empty)``, the seeds' unit clauses and the unit clauses of every
        atom they mention, then :meth:`activate` of ``active`` (e.g. the atoms
        of exactly-one blocks), merged."""
        start = time.perf_counter()
        specs = []
        for i, t in enumerate(self.templates):
            s = self.sign[i]
            if s in ("hard", "pos", "mixed"):
                conds = [Any() if lit.positive else FalseIn(None) for lit in t.literals]
                specs.append((i, conds, 2, "pos"))
            if s in ("neg", "mixed"):
                neg = [li for li, lit in enumerate(t.literals) if not lit.positive]
                for li in neg:
                    conds = []
                    for j, lit in enumerate(t.literals):
                        if j == li:
                            conds.append(Unknown())
                        elif not lit.positive and j < li:
                            conds.append(Dropped())
                        else:
                            conds.append(Any())
                    specs.append((i, conds, 2, "neg"))
        rows: list[Rows] = []
        for i, q, res, n, want in self._run_all(specs):
            r = self._no_units(self._rows(i, q, res, n, want))
            if r is not None:
                rows.append(r)
        eager = []
        for i in self.eager:
            r, _ = self.g.ground_template(i)
            if r is not None:
                eager.append(r)
        self.eager_clauses = self._merge(eager)
        rows += eager
        seeds = self.seeds()
        rows += self.units(np.concatenate([seeds, self._new_atoms(rows)]))
        rows += self.units(self._new_atoms(rows))
        self.seconds += time.perf_counter() - start
        self.rows += sum(len(r) for r in rows)
        gc = self._merge(rows)
        if active is not None and len(active):
            return concat([gc, self.activate(active)])
        return gc

    def activate(self, atoms: np.ndarray) -> GroundClauses:
        """Make ``atoms`` (registry ids) active; return ``M(A + atoms) - M(A)``
        and the unit clauses of the atoms that appear for the first time."""
        start = time.perf_counter()
        self._grow()
        atoms = np.unique(np.asarray(atoms, dtype=np.int64))
        atoms = atoms[~self.active[atoms]]
        if len(atoms) == 0:
            return GroundClauses.empty()
        self.rounds += 1
        batch = self._register("lzb", atoms)
        rows: list[Rows] = []
        try:
            specs = []
            for i, t in enumerate(self.templates):
                s = self.sign[i]
                if s in ("hard", "pos", "mixed"):
                    specs += self._positive_batch(i, t, batch)
                if s in ("neg", "mixed"):
                    specs += self._negative_batch(i, t, batch)
            for i, q, res, n, want in self._run_all(specs):
                r = self._no_units(self._rows(i, q, res, n, want))
                if r is not None:
                    rows.append(r)
            self._append_active(batch)
        finally:
            self._unregister(batch)
        self.active[atoms] = True
        new = self._new_atoms(rows)
        units = self.units(np.concatenate([atoms, new]))
        self.seconds += time.perf_counter() - start
        self.rows += sum(len(r) for r in rows + units)
        return self._merge(rows + units)

    def _positive_batch(self, i: int, t: ClauseTemplate, batch: dict[int, str]) -> list[tuple]:
        specs = []
        for li, lit in enumerate(t.literals):
            k = self._pred(t, lit)
            if lit.positive or k not in batch:
                continue
            conds = []
            for j, other in enumerate(t.literals):
                kj = self._pred(t, other)
                if j == li:
                    conds.append(In(batch[k]))
                elif other.positive:
                    conds.append(Any())
                elif j < li:
                    conds.append(FalseIn(self._tables.get(kj)))
                else:
                    conds.append(FalseIn(self._union(self._tables.get(kj), batch.get(kj))))
            specs.append((i, conds, 2, "pos"))
        return specs

    def _negative_batch(self, i: int, t: ClauseTemplate, batch: dict[int, str]) -> list[tuple]:
        specs = []
        for li, lit in enumerate(t.literals):
            k = self._pred(t, lit)
            if not lit.positive or k not in batch:
                continue
            conds = []
            for j, other in enumerate(t.literals):
                kj = self._pred(t, other)
                if not other.positive:
                    conds.append(Dropped())
                elif j == li:
                    conds.append(In(batch[k]))
                else:
                    excl = [self._tables.get(kj)] + ([batch.get(kj)] if j < li else [])
                    conds.append(Any(tuple(x for x in excl if x is not None)))
            specs.append((i, conds, 2, "neg"))
        return specs

    def _flip_specs(self, world: dict[int, str]) -> list[tuple]:
        """One query per template literal: the groundings in which flipping
        that literal's atom (unknown, outside ``A``) to true changes the
        clause -- every other literal false in ``world`` (the true atoms'
        tables by predicate)."""
        specs = []
        for i, t, li, lit in self._held_literals():
            k = self._pred(t, lit)
            conds = []
            for j, other in enumerate(t.literals):
                kj = self._pred(t, other)
                if j == li:
                    excl = self._tables.get(k)
                    conds.append(Unknown(() if excl is None else (excl,)))
                elif kj != k:
                    conds.append(FalseIn(world.get(kj)))
                else:
                    # a literal on the flipped atom itself: a repeat of it (counted
                    # once, in the branch of its first occurrence), never its negation
                    repeat = j > li and other.positive == lit.positive
                    conds.append(FalseIn(world.get(kj), same=li, allow_same=repeat))
            specs.append((i, conds, 0, li))
        return specs

    @staticmethod
    def _too_many_rows(max_rows: int):
        from ..errors import ResourceError
        from ..resources import format_bytes

        return ResourceError(
            f"lazy MC-SAT: checking the held atoms in one sampled world reads over {max_rows:,} rows "
            f"(held atoms, or the ground clauses that their flips would change), about "
            f"{format_bytes(max_rows * FLIP_ROW_BYTES)}, more than the memory budget leaves. Ways out: a "
            "larger --memory-limit, more evidence (fewer unknown atoms), or marginals without --lazy "
            "where the network can be ground.")

    @property
    def summable(self) -> bool:
        """Whether :meth:`held_gains` can sum the flip rows in SQL: every
        soft template that is not ground eagerly has one weight (no ``+``
        variables) and no predicate has arity 0."""
        for i, t in enumerate(self.templates):
            if self.sign[i] in ("zero", "eager"):
                continue
            if (not t.hard and t.plus_vars) or any(
                    self.store.preds[lit.atom.predicate].arity == 0 for lit in t.literals):
                return False
        return True

    def held_gains(self, true_atoms: np.ndarray, above: float, registered: np.ndarray,
                   max_bytes: int | None = None) -> tuple[np.ndarray, ...]:
        """:meth:`flip_gains` summed per atom in SQL (needs :attr:`summable`)
        and returned only for the atoms that can pass lazy MC-SAT's checks --
        no broken hard clause, or only ones another unknown atom could
        satisfy again, and a hard clause satisfied or a soft change above
        ``above`` --, for every atom of a query predicate and for the atoms of
        ``registered`` (registry ids outside ``A``; those of query predicates
        need not be listed), so that an atom left out
        is one that cannot pass. A check then reads one row per such atom
        instead of one per ground clause (friends network, N = 2,000: 8
        million rows a check)."""
        start = time.perf_counter()
        max_rows = None if max_bytes is None else max(int(max_bytes), 0) // FLIP_ROW_BYTES
        true_atoms = np.unique(np.asarray(true_atoms, dtype=np.int64))
        world = self._register("lzt", true_atoms) if len(true_atoms) else {}
        reg = self._register("lzr", np.unique(np.asarray(registered, dtype=np.int64))) if len(registered) else {}
        pred_arr, _ = self.g.registry.arrays()
        query_preds = set(np.unique(pred_arr[self.g.query_atoms]).tolist()) if len(self.g.query_atoms) else set()
        values = np.asarray(self.g.params.arrays()[0])
        by_pred: dict[int, list[str]] = {}
        try:
            for i, conds, _, li in self._flip_specs(world):
                t = self.templates[i]
                q = LiteralCompiler(self.store, t, conds, export_vars=list(t.plus_vars)).build()
                if q.empty:
                    continue
                f = q.kept.index(li)
                out = q.literals[f]
                lit = t.literals[li]
                if t.hard:
                    c, fixed, broken = 0.0, int(lit.positive), int(not lit.positive)
                else:
                    w = self.g.params.coefficient(t) * float(values[self.g.params.ids(i, t, None)[0]])
                    c, fixed, broken = (w if lit.positive else -w), 0, 0
                rescue = "0"
                if broken:
                    ways = []
                    for j, other in enumerate(q.literals):
                        if j == f:
                            continue
                        unknown = "TRUE" if other.status_col is None else f"s.{other.status_col} = -1"
                        if other.pred == out.pred:
                            differ = "NOT (" + " AND ".join(f"s.{a} = s.{b}" for a, b in
                                                            zip(other.arg_cols, out.arg_cols)) + ")"
                        else:
                            differ = "TRUE"
                        ways.append(f"({unknown} AND {differ})")
                    if ways:
                        rescue = f"CASE WHEN {' OR '.join(ways)} THEN 1 ELSE 0 END"
                cols = ", ".join(f"CAST(s.{a} AS INTEGER) AS a{j}" for j, a in enumerate(out.arg_cols))
                by_pred.setdefault(out.pred, []).append(
                    f"SELECT {cols}, CAST({c!r} AS DOUBLE) AS w, {fixed} AS f, {broken} AS b, {rescue} AS r "
                    f"FROM ({q.sql}) AS s")
            ids, soft, fixed_n, broken_n, rescue_n = [], [], [], [], []
            total = 0
            for k, parts in by_pred.items():
                arity = self.store.preds[self.store.pred_names[k]].arity
                keys = ", ".join(f"a{j}" for j in range(arity))
                summed = (f"SELECT {keys}, SUM(w) AS w, CAST(SUM(f) AS BIGINT) AS f, CAST(SUM(b) AS BIGINT) AS b, "
                          "CAST(SUM(r) AS BIGINT) AS r FROM ("
                          + "\nUNION ALL\n".join(parts) + f") AS u GROUP BY {keys}")
                if k not in query_preds:
                    keep = f"((g.b = 0 OR g.r >= g.b) AND (g.f > 0 OR g.w > {float(above)!r}))"
                    if k in reg:
                        on = " AND ".join(f"g.a{j} = z.a{j}" for j in range(arity))
                        summed = (f"SELECT g.* FROM ({summed}) AS g LEFT JOIN {reg[k]} AS z ON {on} "
                                  f"WHERE {keep} OR z.a0 IS NOT NULL")
                    else:
                        summed = f"SELECT g.* FROM ({summed}) AS g WHERE {keep}"
                self.queries += 1
                try:
                    res = self._fetch_capped(summed, None if max_rows is None else max_rows - total)
                except RowCapExceeded:
                    raise self._too_many_rows(max_rows) from None
                n = len(res["w"])
                total += n
                if n == 0:
                    continue
                args = np.stack([np.asarray(res[f"a{j}"]) for j in range(arity)], axis=1).astype(np.int32)
                ids.append(self.g.registry.ids(k, args).astype(np.int64))
                soft.append(np.asarray(res["w"], dtype=np.float64))
                fixed_n.append(np.asarray(res["f"], dtype=np.int64))
                broken_n.append(np.asarray(res["b"], dtype=np.int64))
                rescue_n.append(np.asarray(res["r"], dtype=np.int64))
        finally:
            self._unregister(world)
            self._unregister(reg)
        self._grow()
        self.seconds += time.perf_counter() - start
        if not ids:
            z = np.zeros(0, np.int64)
            return z, np.zeros(0), z.copy(), z.copy(), z.copy()
        return (np.concatenate(ids), np.concatenate(soft), np.concatenate(fixed_n), np.concatenate(broken_n),
                np.concatenate(rescue_n))

    def flip_gains(self, true_atoms: np.ndarray, max_bytes: int | None = None) -> tuple[np.ndarray, ...]:
        """For the world whose true unknown atoms are ``true_atoms`` (active
        registry atoms; every other unknown atom false): the atoms outside
        ``A`` whose flip changes the state of some ground clause, with the
        soft score change of flipping each (``sum`` of ``+w`` over the false
        clauses where it is a positive literal, ``-w`` over the clauses where
        its negative literal is the only true one) and the numbers of hard
        ground rows such a flip would satisfy and break (duplicates counted
        each time: only "none" and "some" matter), and of the broken rows
        those that another unknown atom could satisfy again (a literal on
        it: flipping both keeps the hard clause). Returns
        ``(atoms, soft_gain, hard_fixed, hard_broken, hard_rescuable)``; an
        atom outside ``A`` that is not listed changes nothing when
        flipped. ``max_bytes``: stop with a :class:`ResourceError` before
        reading more rows than about that much memory holds
        (``FLIP_ROW_BYTES`` a row)."""
        start = time.perf_counter()
        max_rows = None if max_bytes is None else max(int(max_bytes), 0) // FLIP_ROW_BYTES
        true_atoms = np.unique(np.asarray(true_atoms, dtype=np.int64))
        world = self._register("lzt", true_atoms) if len(true_atoms) else {}
        atoms, soft, hard, rescue = [], [], [], []
        try:
            try:
                results = self._run_all(self._flip_specs(world), max_rows)
            except RowCapExceeded:
                raise self._too_many_rows(max_rows) from None
            for i, q, res, n, li in results:
                if n == 0:
                    continue
                t = self.templates[i]
                lit = t.literals[li]
                codes = self.g._literal_codes(res, q, n)
                a = (codes[:, q.kept.index(li)] >> 1).astype(np.int64)
                sgn = 1.0 if lit.positive else -1.0
                atoms.append(a)
                if t.hard:
                    soft.append(np.zeros(n))
                    hard.append(np.full(n, 1 if lit.positive else 1 << 20, dtype=np.int64))
                    rescue.append(np.zeros(n, dtype=np.int64) if lit.positive
                                  else self._rescuable(codes, a).astype(np.int64))
                    continue
                binding = np.stack([res[q.var_cols[v]] for v in t.plus_vars], axis=1).astype(np.int32) \
                    if t.plus_vars else None
                param = self.g.params.ids(i, t, binding)
                if binding is None:
                    param = np.full(n, param[0], dtype=np.int32)
                w = self.g.params.coefficient(t) * np.asarray(self.g.params.arrays()[0])[param]
                soft.append(sgn * w)
                hard.append(np.zeros(n, dtype=np.int64))
                rescue.append(np.zeros(n, dtype=np.int64))
        finally:
            self._unregister(world)
        self._grow()
        self.seconds += time.perf_counter() - start
        if not atoms:
            z = np.zeros(0, np.int64)
            return z, np.zeros(0), z.copy(), z.copy(), z.copy()
        a = np.concatenate(atoms)
        uniq, inv = np.unique(a, return_inverse=True)
        h = np.zeros(len(uniq), np.int64)
        np.add.at(h, inv, np.concatenate(hard))
        r = np.zeros(len(uniq), np.int64)
        np.add.at(r, inv, np.concatenate(rescue))
        return (uniq, np.bincount(inv, weights=np.concatenate(soft), minlength=len(uniq)),
                h & ((1 << 20) - 1), h >> 20, r)

    def _rescuable(self, codes: np.ndarray, flipped: np.ndarray) -> np.ndarray:
        """Per row of literal codes (``PAD`` for a literal fixed by evidence):
        whether some other literal is on an unknown atom. Every other literal
        of a row the flip breaks is false in the checked world, so flipping
        that atom satisfies the row again: a positive literal's atom is false
        (held or active), a negative literal's is true (hence active)."""
        from .assemble import PAD

        atom = codes.astype(np.int64) >> 1
        ok = (codes != PAD) & (atom != flipped[:, None])
        return ok.any(axis=1)

    def count_total(self, seconds: float = 30.0) -> int | None:
        """Ground rows of the full network before merging (groundings not
        satisfied by evidence that keep an unknown literal, units included:
        what ``rows`` counts for the held part), counted in SQL without
        fetching them; None if counting takes longer than ``seconds``."""
        total = 0
        deadline = time.perf_counter() + seconds
        for i, t in enumerate(self.templates):
            if self.sign[i] == "zero":
                continue
            if t.exists:
                q = self.g._query(i)
            else:
                q = LiteralCompiler(self.store, t, [Any() for _ in t.literals], min_unknown=1).build()
            if q.empty:
                continue
            left = deadline - time.perf_counter()
            if left <= 0:
                return None
            n = self.g._count_bounded(q.sql, left)
            if n is None:
                return None
            total += n
        return total

    def close(self) -> None:
        for table in self._tables.values():
            self.con.execute(f"DROP TABLE IF EXISTS {table}")
        self._tables.clear()


def concat(parts: list[GroundClauses]) -> GroundClauses:
    from .grounder import concat_clauses

    parts = [p for p in parts if p.n_clauses]
    if not parts:
        return GroundClauses.empty()
    return parts[0] if len(parts) == 1 else concat_clauses(parts)


def as_rows(gc: GroundClauses) -> list[Rows]:
    """Merged clauses back into ground rows (one per weight entry; hard
    clauses as hard rows), so that :func:`remerge` can merge them again."""
    from .assemble import PAD

    sizes = np.diff(gc.clause_start)
    if len(sizes) == 0:
        return []
    width = max(int(sizes.max()), 1)
    codes = np.full((len(sizes), width), PAD, dtype=np.int32)
    clause_of_lit = np.repeat(np.arange(len(sizes)), sizes)
    col = np.arange(len(gc.lit_atom)) - np.repeat(gc.clause_start[:-1], sizes)
    codes[clause_of_lit, col] = 2 * gc.lit_atom + (~gc.lit_positive).astype(np.int32)
    rows = []
    if gc.is_hard.any():
        rows.append(Rows(codes[gc.is_hard], -1, None, 0.0))
    clause_of_entry = np.repeat(np.arange(len(sizes)), np.diff(gc.param_start))
    if len(clause_of_entry):
        rows.append(Rows(codes[clause_of_entry], -1, gc.param_index.astype(np.int32), gc.param_coef))
    return rows


def remerge(parts: list[GroundClauses], values: np.ndarray) -> GroundClauses:
    """Several merged clause sets as one, clauses with the same literals
    merged again (e.g. a positive and a negative template's, fetched at
    different times) and soft unit clauses folded."""
    rows = [r for p in parts for r in as_rows(p)]
    return merge(rows, np.asarray(values, dtype=np.float64), fold_units=True)
