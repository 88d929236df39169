"""Set-level (aggregate) features over the clusters of an equivalence
predicate (Culotta & McCallum 2006; Culotta's thesis, chapter 8).

A set-level feature has a weight and a value ``phi(C)`` on each cluster
``C``; the clustering's score adds ``weight * sum over clusters of phi(C)``.
They are evaluated on the current clustering, never ground. Kinds:

=============  ============================================================
``all``        1 if every ordered pair of distinct members satisfies ``F``
``some``       1 if some pair satisfies ``F``
``most``       1 if more than half of the pairs satisfy ``F``
``most_not``   1 if fewer than half do ("most do not")
``count``      the number of ordered pairs satisfying ``F`` (or a comparison)
``max``/``min``  the largest / smallest value over pairs of a numeric pair
               term (a similarity such as ``jaccard(x, y, Title,
               HasWordTitle)``; pairs without a value count as 0), or a
               comparison of it with a threshold (1 or 0)
``size``       the cluster's size compared with a threshold (1 or 0), or the
               size itself
``distinct``   the number of distinct values ``v`` with ``A(x, v)`` for some
               member ``x``, or its comparison with a threshold
=============  ============================================================

Pair kinds are 0 on singletons (a singleton has no pairs); ``size`` and
``distinct`` apply to every cluster. ``F`` is a conjunction of evidence
literals and comparisons over the pair variables; other variables in it are
existential ("some title t with Title(x, t) and Title(y, t)"); a leading
``!`` before the whole conjunction negates it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import MLNSemanticError
from ..lang.ast import And, Atom, Compare, Formula, Not, SetFeature, Var
from ..logic.clauses import Comparison, Literal
from ..store.constants import constant_number, constant_value
from .kernels import (
    LK_COUNT, LK_FRAC, LK_MAX, LK_MEAN, LK_MIN, LK_SUM,
    OP_EQ, OP_GE, OP_GT, OP_LE, OP_LT, OP_NE, OP_NONE,
    SF_ALL, SF_COUNT, SF_DISTINCT, SF_MAX, SF_MIN, SF_MOST, SF_MOST_NOT, SF_SIZE, SF_SOME,
)
from .pairs import Cond, PairTerms, _atom_vars, _cmp_vars, similarity_cond

KINDS = {"all": SF_ALL, "some": SF_SOME, "most": SF_MOST, "most_not": SF_MOST_NOT, "count": SF_COUNT,
         "max": SF_MAX, "min": SF_MIN, "size": SF_SIZE, "distinct": SF_DISTINCT}
OPS = {None: OP_NONE, "=": OP_EQ, "<": OP_LT, ">": OP_GT, "<=": OP_LE, ">=": OP_GE, "!=": OP_NE}
PAIR_KINDS = ("all", "some", "most", "most_not", "count")
LINK_KINDS = {"sum": LK_SUM, "max": LK_MAX, "min": LK_MIN, "mean": LK_MEAN, "fraction": LK_FRAC, "count": LK_COUNT}


@dataclass
class CompiledSetFeature:
    spec: SetFeature
    kind: int
    arg: int            # quantity (pair kinds), numeric quantity index (max/min), attribute index (distinct)
    op: int
    threshold: float
    weight: float


def declared_set_features(mln, predicate: str) -> list[SetFeature]:
    """The set-level features an MLN declares for ``predicate`` (linkage features and
    the candidate pairs included)."""
    return [f for f in getattr(mln, "set_features", ()) if f.predicate == predicate]


def is_cluster_feature(spec: SetFeature) -> bool:
    """A feature of clusters (not a linkage feature, not the candidate pairs)."""
    return not getattr(spec, "link", False) and spec.kind not in ("candidates", "similarity")


@dataclass
class CompiledLinkFeature:
    """A linkage feature: its kind (``LK_*``), what it aggregates over the
    candidate cross pairs (``score``: the pair layer's score; ``linked``: 1
    per candidate pair; ``quantity``: the values or indicator of the
    quantity ``quantity``), the complement flag of fraction/count and its
    weight."""

    spec: SetFeature
    kind: int
    source: str
    quantity: object | None
    neg: bool
    weight: float


def compile_pair_values(specs, store, compiler, mln, allow_unweighted: bool = False):
    """Quantities of ``similarity(x, y in P: T)`` features: a pair feature
    valued by the similarity ``T`` (0 where the evidence relates nothing),
    summed over co-clustered pairs like a formula's count."""
    from ..ground.similarity import is_similarity
    from .model import Quantity

    out = []
    for spec in specs:
        if spec.weight is None and not allow_unweighted:
            raise _err(spec, "a similarity feature needs a weight for inference (weights can be learned: "
                             "mln learn --method samplerank)")
        if spec.term is None or not is_similarity(spec.term):
            raise _err(spec, "similarity(x, y in P: T) takes a similarity such as cosine(x, y, HasWordName)")
        from ..ground.similarity import parse_similarity

        if parse_similarity(spec.term, mln.predicates).family == "numeric":
            raise _err(spec, "numdiff and absdiff are differences (0: equal; no value: none), not similarities; "
                             "use them in formulas with a threshold, numdiff(x, y, P) <= 0.1 => Same(x, y)")
        values = _numeric(spec, compiler, mln, store)
        values = values.maximum(values.T).tocsr()
        values.setdiag(0.0)
        values.eliminate_zeros()
        out.append(Quantity(spec.describe(), PairTerms(compiler.n, [], values), float(spec.weight or 0.0),
                            kind="feature", spec=spec))
    return out


def _link_condition(spec: SetFeature, compiler, mln, store) -> tuple[PairTerms, bool]:
    """Indicator (one per unordered pair) of a linkage condition, and whether
    the condition was negated as a whole."""
    x, y = spec.variables
    body = spec.body
    neg = False
    if isinstance(body, Not):
        neg, body = True, body.body
    known = {x: compiler.type_name, y: compiler.type_name}
    conds = _body_conditions(spec, body, mln, store, known)
    terms = compiler.compile_conditions(x, y, conds, spec.describe())
    if terms.lowrank:
        raise _err(spec, "the condition holds for most pairs; write its negation with a leading '!' "
                         "(link fraction of !C is 1 - the fraction of C)")
    m = terms.sparse if terms.sparse is not None else sp.csr_matrix((compiler.n, compiler.n))
    m = ((m + m.T) > 0).astype(np.float64).tocsr()
    m.setdiag(0.0)
    m.eliminate_zeros()
    return PairTerms(compiler.n, [], m), neg


def compile_link_features(specs, store, compiler, mln, allow_unweighted: bool = False):
    """``(compiled linkage features, extra quantities)``; each aggregated
    similarity or condition becomes a quantity of weight 0 (kind
    ``linkterm``) whose column the kernels read."""
    from ..ground.similarity import is_similarity
    from .model import Quantity

    compiled: list[CompiledLinkFeature] = []
    extra = []
    for spec in specs:
        if spec.weight is None and not allow_unweighted:
            raise _err(spec, "a linkage feature needs a weight for inference (weights can be learned: "
                             "mln learn --method samplerank)")
        kind = LINK_KINDS[spec.kind]
        neg = False
        quantity = None
        if spec.kind in ("sum", "max", "min", "mean"):
            term = spec.term
            if term is None:
                raise _err(spec, f"link {spec.kind} needs a numeric pair term: score(x, y) or a similarity")
            if getattr(term, "name", None) == "score" and not is_similarity(term):
                source = "score"
            elif is_similarity(term):
                values = _numeric(spec, compiler, mln, store)
                values = values.maximum(values.T).tocsr()
                quantity = Quantity(f"{spec.describe()} values", PairTerms(compiler.n, [], values), 0.0,
                                    kind="linkterm")
                extra.append(quantity)
                source = "quantity"
            else:
                raise _err(spec, f"link {spec.kind} takes score(x, y) or a similarity such as "
                                 "jaccard(x, y, HasWordName)")
        else:
            body = spec.body
            inner = body.body if isinstance(body, Not) else body
            if isinstance(inner, Atom) and inner.predicate == "linked" and "linked" not in mln.predicates:
                source = "linked"
                neg = isinstance(body, Not)
            else:
                terms, neg = _link_condition(spec, compiler, mln, store)
                quantity = Quantity(f"{spec.describe()} condition", terms, 0.0, kind="linkterm")
                extra.append(quantity)
                source = "quantity"
        compiled.append(CompiledLinkFeature(spec, kind, source, quantity, neg, float(spec.weight or 0.0)))
    return compiled, extra


def _err(spec: SetFeature, message: str) -> MLNSemanticError:
    pos = spec.pos
    where = dict(file=pos.file, line=pos.line, column=pos.column) if pos is not None else {}
    return MLNSemanticError(f"{spec.describe(where=pos is None)}: {message}", **where)


def _conjuncts(f: Formula) -> list[Formula]:
    out, stack = [], [f]
    while stack:
        g = stack.pop()
        if isinstance(g, And):
            stack.append(g.right)
            stack.append(g.left)
        else:
            out.append(g)
    return out


def _body_conditions(spec: SetFeature, body: Formula, mln, store, known: dict[str, str]) -> list[Cond]:
    """Conditions of a conjunction of evidence literals and comparisons; the
    type of every variable in ``known`` (completed from the atoms)."""
    conds: list[Cond] = []
    types = dict(known)
    for g in _conjuncts(body):
        positive = True
        if isinstance(g, Not):
            positive, g = False, g.body
        if isinstance(g, Atom):
            decl = mln.predicates.get(g.predicate)
            if decl is None:
                raise _err(spec, f"undeclared predicate {g.predicate}")
            info = store.preds.get(g.predicate)
            if info is None or info.query or info.labels or not info.closed or info.n_unknown:
                raise _err(spec, f"{g.predicate} is not closed-world evidence; set-level features read evidence only")
            if len(g.args) != decl.arity:
                raise _err(spec, f"{g.predicate} takes {decl.arity} arguments")
            for a, t in zip(g.args, decl.arg_types):
                if isinstance(a, Var):
                    if types.setdefault(a.name, t) != t:
                        raise _err(spec, f"variable {a.name} has types {types[a.name]} and {t}")
            lit = Literal(g, True)
            conds.append(Cond("atom", required=positive, literal=lit, variables=_atom_vars(lit)))
        elif isinstance(g, Compare):
            c = Comparison(g.op, g.left, g.right, True)
            from ..ground.similarity import is_similarity

            if is_similarity(g.left) or is_similarity(g.right):
                conds.append(similarity_cond(c, positive, mln.predicates, spec.describe()))
            else:
                conds.append(Cond("cmp", required=positive, comparison=c, variables=_cmp_vars(c)))
        else:
            raise _err(spec, "the condition must be a conjunction of literals and comparisons "
                             "(optionally negated as a whole with a leading '!')")
    bound = set()
    for c in conds:
        if c.required and c.kind in ("atom", "sim"):
            bound |= c.variables
    for c in conds:
        for v in c.variables:
            if v not in types:
                raise _err(spec, f"cannot tell the type of variable {v}: use it in an atom")
    for v in sorted(set(types) - bound):
        if any(v in c.variables for c in conds) or v in known:
            conds.append(Cond("dom", True, var=v, type_name=types[v], variables=frozenset([v])))
    return conds


def _relation(spec: SetFeature, compiler, mln, store) -> PairTerms:
    """Indicator counts of the pair condition ``F`` over ordered pairs."""
    x, y = spec.variables
    body = spec.body
    negated = False
    if isinstance(body, Not) and isinstance(body.body, And):
        negated, body = True, body.body
    known = {x: compiler.type_name, y: compiler.type_name}
    conds = _body_conditions(spec, body, mln, store, known)
    terms = compiler.compile_conditions(x, y, conds, spec.describe())
    extra = {v for c in conds for v in c.variables} - {x, y}
    if terms.lowrank:
        # with variables besides the pair's, a pair's value is a count, not an indicator: right for 'some'
        # (any positive count), not for the kinds that compare with the number of pairs
        if extra and not (spec.kind == "some" and not negated):
            raise _err(spec, "the condition holds for most pairs and has variables besides the pair's; "
                             "write its negation (it must hold for few pairs), e.g. most_not instead of most")
    elif terms.sparse is not None:
        terms.sparse = (terms.sparse > 0).astype(np.float64).tocsr()
    if negated:
        n = compiler.n
        neg = PairTerms(n, [(1.0, np.ones(n), np.ones(n))] + [(-c, u, v) for c, u, v in terms.lowrank],
                        None if terms.sparse is None else -terms.sparse)
        return neg
    return terms


def _numeric(spec: SetFeature, compiler, mln, store) -> sp.csr_matrix:
    """Values of the numeric pair term over pairs of mentions (absent: 0)."""
    from ..ground.similarity import is_similarity, parse_similarity, tables_of

    x, y = spec.variables
    term = spec.term
    if not is_similarity(term):
        raise _err(spec, "max/min take a similarity such as jaccard(x, y, P1, ..., Pk)")
    call = parse_similarity(term, mln.predicates)
    args = [a.name if isinstance(a, Var) else None for a in (call.left, call.right)]
    if sorted(args, key=str) != sorted([x, y]):
        raise _err(spec, f"the similarity must compare the pair's variables {x} and {y}")
    owner = mln.predicates[call.path[0]].arg_types[0]
    if owner != compiler.type_name:
        raise _err(spec, f"the similarity's path starts at type {owner}, not {compiler.type_name}")
    table = tables_of(store).pair_table(call.path, call.family)
    res = store.con.execute(f"SELECT a, b, {call.column} AS v FROM {table} WHERE a <> b").fetchnumpy()
    pa = compiler.positions[res["a"].astype(np.int64)]
    pb = compiler.positions[res["b"].astype(np.int64)]
    ok = (pa >= 0) & (pb >= 0)
    return sp.coo_matrix((res["v"][ok].astype(np.float64), (pa[ok], pb[ok])),
                         shape=(compiler.n, compiler.n)).tocsr()


def _attribute(spec: SetFeature, compiler, mln, store) -> tuple[np.ndarray, np.ndarray, int]:
    """CSR mention -> distinct value ids of the attribute formula."""
    (x,) = spec.variables
    v = spec.value_var
    known = {x: compiler.type_name}
    conds = _body_conditions(spec, spec.body, mln, store, known)
    if v is None or not any(v in c.variables for c in conds):
        raise _err(spec, f"the value variable {v} does not occur in the attribute formula")
    s = compiler._scope(conds)
    sql = s.select_sql([f"{s.homes[x]} AS m", f"{s.homes[v]} AS v"])
    res = store.con.execute(f"SELECT DISTINCT m, v FROM ({sql}) AS q").fetchnumpy()
    m = compiler.positions[res["m"].astype(np.int64)]
    ok = m >= 0
    m = m[ok]
    vals, inv = np.unique(res["v"][ok], return_inverse=True)
    order = np.argsort(m, kind="stable")
    indptr = np.zeros(compiler.n + 1, np.int64)
    np.add.at(indptr, m + 1, 1)
    return np.cumsum(indptr), inv[order].astype(np.int64), len(vals)


def compile_set_features(specs, store, compiler, mln, describe, allow_unweighted: bool = False):
    """``(compiled features, extra quantities)``: each pair relation and
    numeric term becomes a quantity of weight 0 read by the features."""
    from .model import Quantity

    compiled: list[CompiledSetFeature] = []
    extra: list[Quantity] = []
    attrs: list[tuple[np.ndarray, np.ndarray, int]] = []
    base = None   # quantity indices are offsets; fixed by the caller's order (features come first)
    numeric_index = 0
    for spec in specs:
        if not is_cluster_feature(spec):
            continue
        if spec.kind not in KINDS:
            raise _err(spec, f"unknown kind {spec.kind!r}; choose one of {', '.join(KINDS)}")
        if spec.weight is None and not allow_unweighted:
            raise _err(spec, "a set-level feature needs a weight for inference (weights can be learned: "
                             "mln learn --method samplerank)")
        if spec.op not in OPS:
            raise _err(spec, f"unknown comparison {spec.op!r}")
        thr = 0.0 if spec.threshold is None else float(spec.threshold)
        if (spec.op is None) != (spec.threshold is None):
            raise _err(spec, "a comparison needs both an operator and a threshold")
        arg = -1
        if spec.kind in PAIR_KINDS:
            if len(spec.variables) != 2 or spec.body is None:
                raise _err(spec, "a pair kind needs two variables and a condition")
            if spec.op is not None and spec.kind != "count":
                raise _err(spec, f"{spec.kind} is already true or false; a comparison applies to count")
            terms = _relation(spec, compiler, mln, store)
            arg = ("relation", sum(q.kind == "relation" for q in extra))
            extra.append(Quantity(f"{spec.describe()} condition", terms, 0.0, kind="relation"))
        elif spec.kind in ("max", "min"):
            if len(spec.variables) != 2 or spec.term is None:
                raise _err(spec, "max/min need two variables and a numeric pair term")
            values = _numeric(spec, compiler, mln, store)
            listed = ((values + values.T) > 0).astype(np.float64).tocsr()
            listed.setdiag(0.0)
            listed.eliminate_zeros()
            arg = ("numeric", numeric_index)
            numeric_index += 1
            extra.append(Quantity(f"{spec.describe()} values", PairTerms(compiler.n, [], values), 0.0,
                                  kind="numeric"))
            extra.append(Quantity(f"{spec.describe()} listed", PairTerms(compiler.n, [], listed), 0.0,
                                  kind="listed"))
        elif spec.kind == "distinct":
            if len(spec.variables) != 1 or spec.body is None or spec.value_var is None:
                raise _err(spec, "distinct needs a member variable, a value variable and an attribute formula")
            arg = ("attr", len(attrs))
            attrs.append(_attribute(spec, compiler, mln, store))
        elif spec.kind == "size":
            arg = ("none", 0)
        compiled.append(CompiledSetFeature(spec, KINDS[spec.kind], arg, OPS[spec.op], thr,
                                           float(spec.weight or 0.0)))
    # attributes go along with the compiled list (read by sf_arrays)
    for f in compiled:
        f._attrs = attrs
    return compiled, extra


def sf_arrays(compiled: list[CompiledSetFeature], quantities, numeric_cols, n: int) -> dict:
    """Kernel arrays of the set-level features, with quantity indices resolved
    against the final quantity list."""
    rel_q = [i for i, q in enumerate(quantities) if q.kind == "relation"]
    listed_q = [i for i, q in enumerate(quantities) if q.kind == "listed"]
    J = len(compiled)
    kind = np.zeros(J, np.int64)
    arg = np.zeros(J, np.int64)
    op = np.zeros(J, np.int64)
    thr = np.zeros(J, np.float64)
    weight = np.zeros(J, np.float64)
    for j, f in enumerate(compiled):
        kind[j] = f.kind
        what, k = f.arg
        arg[j] = rel_q[k] if what == "relation" else k
        op[j] = f.op
        thr[j] = f.threshold
        weight[j] = f.weight
    attrs = compiled[0]._attrs if compiled else []
    A = len(attrs)
    if A:
        offsets = np.cumsum([0] + [len(a[1]) for a in attrs])
        attr_indptr = np.stack([a[0] + offsets[i] for i, a in enumerate(attrs)])
        attr_vals = np.concatenate([a[1] for a in attrs]).astype(np.int64)
        attr_nval = np.array([a[2] for a in attrs], np.int64)
    else:
        attr_indptr = np.zeros((0, n + 1), np.int64)
        attr_vals = np.zeros(0, np.int64)
        attr_nval = np.zeros(0, np.int64)
    return {
        "kind": kind, "arg": arg, "op": op, "thr": thr, "weight": weight,
        "num_listed_q": np.array(listed_q, np.int64),
        "attr_indptr": attr_indptr, "attr_vals": attr_vals, "attr_nval": attr_nval,
    }
