"""Pair features of an equivalence predicate, computed from clause templates
without grounding the pair atoms.

A clause template with exactly one literal of an equivalence predicate ``E``
(``E(x, y)`` with two variables) and otherwise evidence only, e.g. ::

    HasWordTitle(t1, w) ^ !HasWordTitle(t2, w) ^ Title(x, t1) ^ Title(y, t2) => !SameBib(x, y)

contributes, for an ordered pair of distinct constants ``(a, b)``, the number
``N(a, b)`` of bindings of its other variables under which every evidence
literal is false (the groundings the evidence does not satisfy): those
groundings are satisfied exactly when ``E(a, b)`` takes the literal's sign.
Under a clustering ``E(a, b)`` is true iff ``a`` and ``b`` share a cluster,
so the template's feature is ``sign * sum over co-clustered pairs of
N(a, b) + N(b, a)`` plus a constant.

``N`` is a count of solutions of a conjunctive query with ``x`` and ``y``
bound. It is computed in SQL over the evidence store, in a form whose size
follows the evidence, never the ``n^2`` pairs:

* the query's *conditions*: an evidence atom that must be true (a join), one
  that must be false (an anti-join), a comparison that must hold or fail;
  a variable no atom binds ranges over its type;
* conditions are grouped into *components* by shared variables. When ``x``
  and ``y`` fall into different components the count factorises:
  ``N(a, b) = c * u(a) * v(b)`` (a *low-rank* term, e.g. "the number of
  words of a's title" times 1). When a component holds both, it is a
  *sparse* term: ``GROUP BY x, y`` over the joins, non-zero only for pairs
  the evidence links (pairs sharing a word);
* a must-be-false condition that links the two sides (``!HasWordTitle(t2,
  w)`` above) would make the join dense. It is expanded by
  inclusion-exclusion: ``count(Q and not C) = count(Q) - count(Q and C)``,
  and each term is factorised again. The example becomes
  ``|words(a)| * 1 - shared(a, b)``: a low-rank term minus a sparse one.

The result, per template, is a list of low-rank terms ``(coef, u, v)`` and one
sparse matrix over mention positions (the positions of the constants in the
sorted domain of ``E``'s type).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..errors import MarkovLogicError, MLNSemanticError
from ..lang.ast import Const, Func, Var
from ..logic.clauses import ClauseTemplate, Comparison, Literal
from ..logic.nnf import term_vars
from ..store.store import EvidenceStore
from ..store.constants import constant_number, constant_value
from ..ground.similarity import is_similarity, parse_similarity, tables_of
from ..ground.terms import Scope
from ..logic.equivalence import is_equivalence_axiom  # noqa: F401  (used by cluster.model)

MAX_INCLUSION_EXCLUSION = 5        # linking must-be-false conditions per template (2^k queries)
DEFAULT_MAX_SPARSE = 200_000_000   # pair rows one sparse query may return
MAX_LOWRANK_VALUES = 32            # a join through a variable with at most this many values: low-rank terms
LOWRANK_MIN_PAIRS = 100_000       # ... and would join more pairs than this (else the sparse join is cheap)


@dataclass(frozen=True)
class Cond:
    """One condition of the conjunctive query of a template."""

    kind: str                       # 'atom', 'cmp', 'dom', 'sim'
    required: bool                  # True: the atom / comparison holds; False: it fails
    literal: Literal | None = None  # kind 'atom'
    comparison: Comparison | None = None   # kind 'cmp' (its op/left/right; 'positive' ignored)
    var: str | None = None          # kind 'dom'
    type_name: str | None = None    # kind 'dom'
    variables: frozenset[str] = frozenset()
    sim: object | None = None       # kind 'sim': a SimilarityCall, compared as ``sim op threshold``
    op: str | None = None           # kind 'sim' (chosen so that the comparison is false at 0)
    threshold: float = 0.0

    def flipped(self) -> "Cond":
        return Cond(self.kind, not self.required, self.literal, self.comparison, self.var, self.type_name,
                    self.variables, self.sim, self.op, self.threshold)


@dataclass
class PairTerms:
    """``N(a, b)`` for ordered pairs of mention positions: a sum of low-rank
    terms ``coef * u[a] * v[b]`` and a sparse matrix (diagonal dropped)."""

    n: int
    lowrank: list[tuple[float, np.ndarray, np.ndarray]] = field(default_factory=list)
    sparse: sp.csr_matrix | None = None

    def dense(self) -> np.ndarray:
        """The full ``n x n`` matrix (tests and tiny problems only)."""
        m = np.zeros((self.n, self.n))
        for c, u, v in self.lowrank:
            m += c * np.outer(u, v)
        if self.sparse is not None:
            m += self.sparse.toarray()
        np.fill_diagonal(m, 0.0)
        return m

    @property
    def is_sparse_only(self) -> bool:
        return not self.lowrank


def _atom_vars(lit: Literal) -> frozenset[str]:
    out: set[str] = set()
    for a in lit.atom.args:
        out |= {v.name for v in term_vars(a)}
    return frozenset(out)


def _cmp_vars(c: Comparison) -> frozenset[str]:
    return frozenset(v.name for t in (c.left, c.right) for v in term_vars(t))


_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "=": "="}
_NEGATE = {"<": ">=", ">=": "<", ">": "<=", "<=": ">"}


def _holds(op: str, a: float, b: float) -> bool:
    return {"=": a == b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]


def similarity_cond(c: Comparison, required: bool, predicates, describe: str) -> Cond:
    """A comparison of a similarity with a number as a ``sim`` condition whose
    comparison is false at 0 (so that, required, it is a sparse join)."""
    left, right, op = c.left, c.right, c.op
    if not is_similarity(left):
        left, right, op = right, left, _FLIP.get(op, op)
    if is_similarity(right) or not isinstance(right, Const) or constant_number(constant_value(right.name)) is None:
        raise MLNSemanticError(f"{describe}: a similarity can only be compared with a number here")
    if op not in _FLIP:
        raise MLNSemanticError(f"{describe}: unsupported comparison {op!r} of a similarity")
    thr = float(constant_number(constant_value(right.name)))
    call = parse_similarity(left, predicates)
    if _holds(op, call.absent, thr):
        # true for unrelated pairs (dense): keep the complement, sparse, and flip the requirement
        if op == "=":
            # similarities are >= 0: not (s = 0) is s > 0; a difference listed is below the absent value
            op = ">" if call.absent == 0.0 else "<"
            thr = 0.0 if call.absent == 0.0 else call.absent
        else:
            op = _NEGATE[op]
        required = not required
    variables = frozenset(v.name for t in (call.left, call.right) for v in term_vars(t))
    return Cond("sim", required, comparison=c, variables=variables, sim=call, op=op, threshold=thr)


class PairCompiler:
    """Compile templates over one equivalence predicate into ``PairTerms``."""

    def __init__(self, store: EvidenceStore, predicate: str, *, max_sparse: int = DEFAULT_MAX_SPARSE,
                 describe=None) -> None:
        self.store = store
        self.predicate = predicate
        info = store.preds[predicate]
        self.type_name = info.arg_types[0]
        self.domain = store.domain(self.type_name)          # sorted constant ids
        self.positions = store.positions(self.type_name)    # constant id -> mention position
        self.n = len(self.domain)
        self.max_sparse = max_sparse
        self.describe = describe or (lambda t: "a template")
        self.restrict_to: str | None = None   # a table (a, b) of candidate pairs that sparse queries keep to

    # ------------------------------------------------------------ analysis
    def conditions(self, t: ClauseTemplate) -> tuple[str, str, int, list[Cond]]:
        """``(x, y, sign, conditions)`` of a template with one literal of the
        equivalence predicate; ``sign`` is +1 when the literal is positive."""
        mine = [lit for lit in t.literals if lit.atom.predicate == self.predicate]
        if len(mine) != 1:
            raise MLNSemanticError(f"{self.describe(t)}: expected one literal of {self.predicate}")
        e = mine[0]
        args = e.atom.args
        if len(args) != 2 or not all(isinstance(a, Var) for a in args):
            raise MLNSemanticError(
                f"{self.describe(t)}: the arguments of the equivalence predicate {self.predicate} must be "
                "two variables here (a constant argument is not supported by cluster inference)"
            )
        x, y = args[0].name, args[1].name
        if t.exists:
            raise MLNSemanticError(f"{self.describe(t)}: existential quantifiers are not supported with "
                                   f"the equivalence predicate {self.predicate} (cluster inference)")
        if t.plus_vars:
            raise MLNSemanticError(f"{self.describe(t)}: per-constant weights ('+') are not supported with "
                                   f"the equivalence predicate {self.predicate} (cluster inference)")
        conds: list[Cond] = []
        for lit in t.literals:
            if lit is e:
                continue
            info = self.store.preds.get(lit.atom.predicate)
            if info is None:
                raise MLNSemanticError(f"{self.describe(t)}: unknown predicate {lit.atom.predicate}")
            if info.query or info.labels or not info.closed or info.n_unknown:
                raise MLNSemanticError(
                    f"{self.describe(t)}: with the equivalence predicate {self.predicate}, the other atoms of a "
                    f"formula must be closed-world evidence; {lit.atom.predicate} is not"
                )
            # the grounding is active when the literal is false
            conds.append(Cond("atom", required=not lit.positive, literal=lit, variables=_atom_vars(lit)))
        for c in t.comparisons:
            if is_similarity(c.left) or is_similarity(c.right):
                conds.append(similarity_cond(c, not c.positive, self.store.mln.predicates, self.describe(t)))
            else:
                conds.append(Cond("cmp", required=not c.positive, comparison=c, variables=_cmp_vars(c)))
        types = t.variable_types
        bound = set().union(*[c.variables for c in conds if c.kind in ("atom", "sim") and c.required]) \
            if conds else set()
        for v in sorted(set(types) - bound):
            conds.append(Cond("dom", True, var=v, type_name=types[v], variables=frozenset([v])))
        return x, y, (1 if e.positive else -1), conds

    @staticmethod
    def _components(conds: list[Cond]) -> list[set[str]]:
        """Variable components linked by the required conditions."""
        parent: dict[str, str] = {}

        def find(a: str) -> str:
            while parent.setdefault(a, a) != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        for c in conds:
            if not c.required:
                continue
            vs = sorted(c.variables)
            for v in vs:
                find(v)
            for v in vs[1:]:
                parent[find(v)] = find(vs[0])
        groups: dict[str, set[str]] = {}
        for v in list(parent):
            groups.setdefault(find(v), set()).add(v)
        return list(groups.values())

    # ------------------------------------------------------------ compiling
    def compile(self, t: ClauseTemplate) -> tuple[int, PairTerms]:
        """``(sign, N)`` of a template (see the module docstring)."""
        x, y, sign, conds = self.conditions(t)
        if x == y:
            return sign, PairTerms(self.n)          # E(x, x): always true in a clustering
        return sign, self.compile_conditions(x, y, conds, self.describe(t))

    def compile_conditions(self, x: str, y: str, conds: list[Cond], what: str) -> PairTerms:
        """``N(a, b)``: the number of solutions of the conditions with ``x = a``
        and ``y = b``, as low-rank terms plus a sparse matrix."""
        comps = self._components(conds)
        comp_of = {v: i for i, c in enumerate(comps) for v in c}
        linking = [c for c in conds if not c.required
                   and len({comp_of.get(v, -1) for v in c.variables}) > 1]
        if len(linking) > MAX_INCLUSION_EXCLUSION:
            raise MLNSemanticError(
                f"{what}: {len(linking)} negated conditions link the two sides of "
                f"{self.predicate}; at most {MAX_INCLUSION_EXCLUSION} are supported by cluster inference"
            )
        kept = [c for c in conds if c not in linking]
        out = PairTerms(self.n)
        sparse_parts: list[sp.coo_matrix] = []
        for k in range(len(linking) + 1):
            for subset in itertools.combinations(linking, k):
                coef = (-1.0) ** k
                term_conds = kept + [c.flipped() for c in subset]
                self._add_term(what, x, y, coef, term_conds, out, sparse_parts)
        if sparse_parts:
            m = sparse_parts[0].tocsr()
            for p in sparse_parts[1:]:
                m = m + p.tocsr()
            m.setdiag(0.0)
            m.eliminate_zeros()
            out.sparse = m.tocsr()
        return out

    def _add_term(self, what, x, y, coef, conds, out: PairTerms, sparse_parts) -> None:
        comps = self._components(conds)
        for v in (x, y):
            if not any(v in c for c in comps):       # cannot happen: every variable has a condition
                comps.append({v})
        groups: list[tuple[set[str], list[Cond]]] = []
        for comp in comps:
            groups.append((comp, [c for c in conds if c.variables and c.variables <= comp]))
        orphan = [c for c in conds if not c.variables]
        scalar = 1.0
        u = np.ones(self.n)
        v = np.ones(self.n)
        pair = None
        for comp, cs in groups:
            if x in comp and y in comp:
                split = self._few_valued(x, y, cs + orphan)
                pair = split if split is not None else self._pair_counts(what, x, y, cs + orphan)
                orphan = []
            elif x in comp:
                u = u * self._mention_counts(x, cs)
            elif y in comp:
                v = v * self._mention_counts(y, cs)
            else:
                scalar *= self._scalar_count(cs)
        if orphan:
            scalar *= self._scalar_count(orphan)
        if scalar == 0.0:
            return
        if isinstance(pair, list):
            # a join through a few-valued variable: low-rank terms, scaled by the other components
            for c, uu, vv in pair:
                out.lowrank.append((coef * scalar * c, uu * u, vv * v))
            return
        if pair is not None:
            sparse_parts.append(pair * (coef * scalar))
        elif u.any() and v.any():
            out.lowrank.append((coef * scalar, u, v))

    def _few_valued(self, x: str, y: str, conds: list[Cond]):
        """Low-rank terms ``[(1, u_v, w_v)]`` of ``N(a, b) = sum_v Nx(a, v) Ny(v, b)``
        when a variable ``v`` separates ``x`` from ``y`` in the conditions and
        takes at most ``MAX_LOWRANK_VALUES`` values over many pairs (``Source(x,
        s) ^ Source(y, s)``: two sources would join half of all pairs); else
        None (a sparse join)."""
        if self.restrict_to is not None:
            return None
        # "x = y must fail" holds for every pair of distinct mentions (the diagonal is dropped): vacuous here
        conds = [c for c in conds if not (c.kind == "cmp" and not c.required and c.variables == {x, y}
                                          and c.comparison.op == "=" and isinstance(c.comparison.left, Var)
                                          and isinstance(c.comparison.right, Var))]
        req = [c for c in conds if c.required and c.variables]
        variables = set().union(*[c.variables for c in conds]) if conds else set()
        for v in sorted(variables - {x, y}):
            # the variable graph of the required conditions without v
            parent: dict[str, str] = {}

            def find(a):
                while parent.setdefault(a, a) != a:
                    parent[a] = parent[parent[a]]
                    a = parent[a]
                return a

            for c in req:
                vs = sorted(c.variables - {v})
                for w in vs[1:]:
                    parent[find(w)] = find(vs[0])
            find(x)
            find(y)
            if find(x) == find(y):
                continue
            side_x = {w for w in variables if w != v and find(w) == find(x)}
            side_y = {w for w in variables if w != v and find(w) == find(y)}
            rest = variables - side_x - side_y - {v}
            xs, ys, ok = [], [], True
            for c in conds:
                cv = c.variables - {v}
                if cv <= side_x | rest and not (cv & side_y):
                    xs.append(c)
                elif cv <= side_y:
                    ys.append(c)
                else:
                    ok = False
                    break
            if not ok or not any(v in c.variables and c.required and c.kind in ("atom", "sim") for c in xs) \
                    or not any(v in c.variables and c.required and c.kind in ("atom", "sim") for c in ys):
                continue
            sx = self._scope(xs)
            sy = self._scope(ys)
            if v not in sx.homes or v not in sy.homes or x not in sx.homes or y not in sy.homes:
                continue
            qx = f"SELECT m, val, count(*) AS n FROM ({sx.select_sql([f'{sx.homes[x]} AS m', f'{sx.homes[v]} AS val'])}) q GROUP BY m, val"
            qy = f"SELECT m, val, count(*) AS n FROM ({sy.select_sql([f'{sy.homes[y]} AS m', f'{sy.homes[v]} AS val'])}) q GROUP BY m, val"
            stats = self.store.con.execute(
                f"WITH a AS ({qx}), b AS ({qy}), va AS (SELECT val, sum(n) AS n FROM a GROUP BY val), "
                f"vb AS (SELECT val, sum(n) AS n FROM b GROUP BY val) "
                f"SELECT count(*), coalesce(sum(va.n * vb.n), 0) FROM va JOIN vb ON va.val = vb.val").fetchall()[0]
            n_values, est = int(stats[0]), float(stats[1])
            if n_values == 0 or n_values > MAX_LOWRANK_VALUES or est <= max(4.0 * self.n, LOWRANK_MIN_PAIRS):
                return None
            ra = self._fetch(qx)
            rb = self._fetch(qy)
            values = np.intersect1d(np.unique(ra["val"]), np.unique(rb["val"]))
            terms = []
            for val in values:
                u = np.zeros(self.n)
                w = np.zeros(self.n)
                sel = ra["val"] == val
                pos = self.positions[ra["m"][sel].astype(np.int64)]
                okp = pos >= 0
                np.add.at(u, pos[okp], ra["n"][sel][okp].astype(np.float64))
                sel = rb["val"] == val
                pos = self.positions[rb["m"][sel].astype(np.int64)]
                okp = pos >= 0
                np.add.at(w, pos[okp], rb["n"][sel][okp].astype(np.float64))
                if u.any() and w.any():
                    terms.append((1.0, u, w))
            return terms
        return None

    # ------------------------------------------------------------ SQL
    def _scope(self, conds: list[Cond]) -> Scope:
        store = self.store
        s = Scope(store, prefix="q")
        atoms = [c for c in conds if c.kind == "atom" and c.required]
        for c in atoms:
            info = store.preds[c.literal.atom.predicate]
            alias = s.add_from(info.table, "p")
            s.conds.append(f"{alias}.t = 1")
            for j, arg in enumerate(c.literal.atom.args):
                if isinstance(arg, Var) and arg.name not in s.homes:
                    s.homes[arg.name] = f"{alias}.a{j}"
            c_alias = alias
            for j, arg in enumerate(c.literal.atom.args):
                expr = s.id_expr(arg, info.arg_types[j])
                if expr != f"{c_alias}.a{j}":
                    s.conds.append(f"{c_alias}.a{j} = {expr}")
        for c in conds:
            if c.kind == "sim" and c.required:
                table = tables_of(store).pair_table(c.sim.path, c.sim.family)
                alias = s.add_from(table, "s")
                s.conds.append(f"{alias}.{c.sim.column} {c.op} {c.threshold!r}")
                for col, term in (("a", c.sim.left), ("b", c.sim.right)):
                    if isinstance(term, Var) and term.name not in s.homes:
                        s.homes[term.name] = f"{alias}.{col}"
                    else:
                        s.conds.append(f"{alias}.{col} = {s.id_expr(term)}")
        for c in conds:
            if c.kind == "dom" and c.var not in s.homes:
                s.home_in_domain(c.var, c.type_name)
        for c in conds:
            if c.kind == "sim" and not c.required:
                table = tables_of(store).pair_table(c.sim.path, c.sim.family)
                s.conds.append(
                    f"NOT EXISTS (SELECT 1 FROM {table} AS y WHERE y.a = {s.id_expr(c.sim.left)} AND "
                    f"y.b = {s.id_expr(c.sim.right)} AND y.{c.sim.column} {c.op} {c.threshold!r})")
            elif c.kind == "cmp":
                expr = s.compare_expr(c.comparison.op, c.comparison.left, c.comparison.right)
                s.conds.append(expr if c.required else f"NOT {expr}")
            elif c.kind == "atom" and not c.required:
                info = store.preds[c.literal.atom.predicate]
                inner = []
                for j, arg in enumerate(c.literal.atom.args):
                    inner.append(f"y.a{j} = {s.id_expr(arg, info.arg_types[j])}")
                match = " AND ".join(inner + ["y.t = 1"])
                s.conds.append(f"NOT EXISTS (SELECT 1 FROM {info.table} AS y WHERE {match})")
        return s

    def _fetch(self, sql: str) -> dict[str, np.ndarray]:
        return self.store.con.execute(sql).fetchnumpy()

    def _scalar_count(self, conds: list[Cond]) -> float:
        s = self._scope(conds)
        return float(self.store.con.execute(f"SELECT count(*) FROM ({s.select_sql(['1 AS one'])}) AS q")
                     .fetchall()[0][0])

    def _mention_counts(self, var: str, conds: list[Cond]) -> np.ndarray:
        s = self._scope(conds)
        sql = s.select_sql([f"{s.homes[var]} AS m"])
        res = self._fetch(f"SELECT m, count(*) AS n FROM ({sql}) AS q GROUP BY m")
        counts = np.zeros(self.n)
        m = res["m"].astype(np.int64)
        pos = self.positions[m]
        ok = pos >= 0
        np.add.at(counts, pos[ok], res["n"][ok].astype(np.float64))
        return counts

    def _pair_counts(self, what: str, x: str, y: str, conds: list[Cond]) -> sp.coo_matrix:
        s = self._scope(conds)
        if self.restrict_to is not None:
            alias = s.add_from(self.restrict_to, "cand")
            s.conds.append(f"{alias}.a = {s.homes[x]}")
            s.conds.append(f"{alias}.b = {s.homes[y]}")
        sql = s.select_sql([f"{s.homes[x]} AS a", f"{s.homes[y]} AS b"])
        grouped = f"SELECT a, b, count(*) AS n FROM ({sql}) AS q WHERE a <> b GROUP BY a, b"
        rows = int(self.store.con.execute(f"SELECT count(*) FROM ({grouped}) AS g").fetchall()[0][0])
        if rows > self.max_sparse:
            raise MarkovLogicError(
                f"{what} links {rows:,} pairs of {self.predicate} constants through the evidence "
                f"(at most {self.max_sparse:,} are kept in memory): the formula is too unselective for cluster "
                "inference; add a more selective condition (a shared rare word, a similarity threshold)"
            )
        res = self._fetch(grouped)
        a = self.positions[res["a"].astype(np.int64)]
        b = self.positions[res["b"].astype(np.int64)]
        ok = (a >= 0) & (b >= 0)
        return sp.coo_matrix((res["n"][ok].astype(np.float64), (a[ok], b[ok])), shape=(self.n, self.n))
