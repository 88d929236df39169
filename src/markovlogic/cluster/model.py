"""A Markov logic network over one equivalence predicate, compiled for
inference over clusterings.

``build_cluster_model(mln, db, predicate)`` reads the evidence into the store
and turns every formula into one of:

* an equivalence axiom (reflexivity, symmetry, transitivity of the
  predicate, hard or soft): always satisfied by a clustering, dropped;
* a *pair feature*: one literal of the predicate, the rest evidence
  (:mod:`.pairs`); hard ones become must-link / cannot-link constraints;
* a constant (evidence only), dropped;
* a set-level feature (:mod:`.setfeatures`), evaluated on clusters.

Evidence atoms of the predicate itself are constraints as well: a true atom
links two constants for good, a false one keeps them apart; a contradiction
(``a = b``, ``b = c``, ``a != c``) is an error naming the atoms.

The result holds the arrays of :mod:`.kernels` and the names needed to report
a clustering as atoms or as clusters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..errors import EvidenceError, MLNSemanticError
from ..lang.ast import Query
from ..logic.clauses import ClauseTemplate
from ..model import MLN, Database
from ..store.store import EvidenceStore
from .kernels import ModelArrays, Scratch, StateArrays, init_state, make_scratch, total_score, feature_vector
from .pairs import PairCompiler, PairTerms, is_equivalence_axiom


@dataclass
class Quantity:
    """A pair quantity: its name, terms, weight (0 for a relation used only by
    set-level features) and the template it came from."""

    name: str
    terms: PairTerms
    weight: float = 0.0
    template: int = -1
    formula: int = -1
    kind: str = "feature"        # feature, relation, numeric, listed, must, cannot, truth
    sign: float = 1.0            # +1: the formula's literal of the predicate is positive
    scale: float = 1.0           # the clause's share of its formula's weight (weight_scale)


@dataclass
class ClusterModel:
    predicate: str
    type_name: str
    mention_ids: np.ndarray          # constant ids, in mention order
    mention_names: list[str]
    quantities: list[Quantity]
    set_features: list               # compiled set-level features (setfeatures.CompiledSetFeature)
    arrays: ModelArrays
    initial_labels: np.ndarray       # singletons, with must-linked mentions together
    stats: dict = field(default_factory=dict)
    truth_q: int = -1                # quantity of the training truth's co-clustered pairs (truth=True)
    gold_labels: np.ndarray | None = None   # the training truth's clusters (truth=True)

    @property
    def n(self) -> int:
        return len(self.mention_ids)

    # ------------------------------------------------------------ state
    def new_state(self, labels: np.ndarray | None = None) -> tuple[StateArrays, Scratch]:
        md = self.arrays
        n = md.n
        R, Q, M, A = len(md.lr_q), md.n_q, len(md.num_col), len(md.attr_nval)
        max_nval = int(md.attr_nval.max()) if A else 1
        st = StateArrays(
            label=np.zeros(n, np.int64), nxt=np.full(n, -1, np.int64), prv=np.full(n, -1, np.int64),
            head=np.full(n, -1, np.int64), size=np.zeros(n, np.int64),
            active=np.zeros(n, np.int64), active_pos=np.full(n, -1, np.int64),
            multi=np.zeros(n, np.int64), multi_pos=np.full(n, -1, np.int64),
            free=np.zeros(n, np.int64), counts=np.zeros(3, np.int64),
            su=np.zeros((R, n)), sv=np.zeros((R, n)), suv=np.zeros((R, n)), w=np.zeros((Q, n)),
            mx=np.full((M, n), -np.inf), mn=np.full((M, n), np.inf), dist=np.zeros((A, n)),
            marker=np.zeros(max_nval + 1, np.int64), stamp=np.zeros(1, np.int64),
            side=np.zeros(n, np.int64), buf=np.zeros(n + 1, np.int64),
        )
        lab = self.initial_labels if labels is None else np.asarray(labels, dtype=np.int64)
        if n:
            init_state(md, st, lab)
        return st, make_scratch(md)

    def score(self, labels: np.ndarray) -> float:
        """The score (log-potential up to a constant) of a clustering."""
        st, sc = self.new_state(labels)
        return float(total_score(self.arrays, st, sc.wq))

    def features(self, labels: np.ndarray) -> np.ndarray:
        """Feature values of a clustering: each quantity's co-clustered sum,
        then each set-level feature's sum over clusters."""
        st, sc = self.new_state(labels)
        out = np.zeros(self.arrays.n_q + len(self.arrays.sf_kind))
        feature_vector(self.arrays, st, sc.wq, out)
        return out

    def weights(self) -> np.ndarray:
        return np.concatenate([self.arrays.w_q, self.arrays.w_sf])

    def with_weights(self, w: np.ndarray) -> "ClusterModel":
        """The same model with new weights (quantities, then set features)."""
        w = np.asarray(w, dtype=np.float64)
        Q = self.arrays.n_q
        arrays = self.arrays._replace(w_q=w[:Q].copy(), w_sf=w[Q:].copy())
        return ClusterModel(self.predicate, self.type_name, self.mention_ids, self.mention_names,
                            self.quantities, self.set_features, arrays, self.initial_labels, dict(self.stats),
                            self.truth_q, self.gold_labels)

    # ------------------------------------------------------------ answers
    def clusters(self, labels: np.ndarray) -> list[list[str]]:
        """Clusters as lists of constant names (each sorted; clusters ordered by
        their first name)."""
        labels = np.asarray(labels)
        order = np.argsort(labels, kind="stable")
        bounds = np.flatnonzero(np.diff(labels[order])) + 1
        out = []
        for part in np.split(order, bounds):
            if len(part):
                out.append(sorted(self.mention_names[i] for i in part))
        out.sort(key=lambda c: c[0])
        return out

    def pair_atoms(self, labels: np.ndarray, reflexive: bool = True) -> list[str]:
        """The true atoms of the predicate: every ordered pair of co-clustered
        constants (with ``P(a,a)`` when ``reflexive``)."""
        out = []
        p = self.predicate
        for members in self.clusters(labels):
            for a in members:
                for b in members:
                    if a != b or reflexive:
                        out.append(f"{p}({a},{b})")
        out.sort()
        return out


# ---------------------------------------------------------------- building

def _describe(mln: MLN):
    from ..logic.format import format_clause

    def describe(t: ClauseTemplate) -> str:
        text = format_clause(t)
        decl = mln.formulas[t.formula_index] if 0 <= t.formula_index < len(mln.formulas) else None
        if decl is not None and decl.pos is not None:
            return f"{decl.pos.file}:{decl.pos.line}: formula {text!r}"
        return f"formula {text!r}"
    return describe


def _evidence_constraints(store: EvidenceStore, predicate: str, positions: np.ndarray, n: int,
                          mention_names: list[str]):
    """Must-link and cannot-link pairs from the predicate's evidence atoms;
    an error for a contradiction."""
    info = store.preds[predicate]
    res = store.con.execute(f"SELECT a0, a1, t FROM {info.table} WHERE t <> -1").fetchnumpy()
    a = positions[res["a0"].astype(np.int64)]
    b = positions[res["a1"].astype(np.int64)]
    t = res["t"].astype(np.int64)
    ok = (a >= 0) & (b >= 0) & (a != b)
    a, b, t = a[ok], b[ok], t[ok]
    must = t == 1
    g = sp.coo_matrix((np.ones(int(must.sum())), (a[must], b[must])), shape=(n, n))
    _, comp = connected_components(g, directed=False)
    bad = ~must & (comp[a] == comp[b])
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        x, y = mention_names[a[k]], mention_names[b[k]]
        path = _link_path(g.tocsr(), int(a[k]), int(b[k]), mention_names)
        raise EvidenceError(
            f"the evidence contradicts the equivalence {predicate}: !{predicate}({x},{y}) but "
            + " and ".join(f"{predicate}({u},{v})" for u, v in path)
        )
    return (a[must], b[must]), (a[~must], b[~must]), comp


def _link_path(g: sp.csr_matrix, s: int, t: int, names: list[str]) -> list[tuple[str, str]]:
    """A shortest chain of must-link atoms from ``s`` to ``t``."""
    g = ((g + g.T) > 0).tocsr()
    prev = {s: -1}
    frontier = [s]
    while frontier and t not in prev:
        nxt = []
        for u in frontier:
            for v in g.indices[g.indptr[u]:g.indptr[u + 1]]:
                v = int(v)
                if v not in prev:
                    prev[v] = u
                    nxt.append(v)
        frontier = nxt
    path = []
    v = t
    while prev.get(v, -1) != -1:
        path.append((names[prev[v]], names[v]))
        v = prev[v]
    return path[::-1]


def _indicator_terms(n: int, a: np.ndarray, b: np.ndarray) -> PairTerms:
    m = sp.coo_matrix((np.ones(len(a)), (a, b)), shape=(n, n)).tocsr()
    m.data[:] = 1.0
    m.setdiag(0.0)
    m.eliminate_zeros()
    return PairTerms(n, [], m)


def build_cluster_model(
    mln: MLN,
    db: Database | Sequence[Database] | None,
    predicate: str,
    *,
    set_features: Sequence = (),
    closed: Sequence[str] = (),
    open_: Sequence[str] = (),
    db_path: str | None = None,
    max_sparse: int | None = None,
    truth: bool = False,
    other_queries: Sequence[str] = (),
) -> ClusterModel:
    """Compile ``mln`` and the evidence for inference over clusterings of the
    equivalence predicate ``predicate``. With ``truth``, the listed atoms of
    the predicate are training labels (closed world: unlisted pairs are
    different), not evidence: their clusters (the transitive closure of the
    true atoms) are ``gold_labels`` and a quantity counts the co-clustered
    pairs they link (for learning). ``other_queries``: query predicates
    clustered by their own models; a formula over one of them and this
    predicate is refused, one over them alone is theirs."""
    from ..logic.cnf import compile_mln
    from .setfeatures import compile_set_features, declared_set_features

    decl = mln.predicates.get(predicate)
    if decl is None:
        raise MLNSemanticError(f"unknown predicate {predicate!r}")
    if decl.arity != 2 or decl.arg_types[0] != decl.arg_types[1]:
        where = dict(file=decl.pos.file, line=decl.pos.line, column=decl.pos.column) if decl.pos else {}
        raise MLNSemanticError(
            f"{predicate} cannot be an equivalence relation: it must have two arguments of one type "
            f"(it has {', '.join(decl.arg_types) or 'none'})", **where)
    templates = compile_mln(mln)
    store = EvidenceStore(mln, db, [Query(predicate)], closed=closed, open_=open_, db_path=db_path,
                          query_truth=truth)
    describe = _describe(mln)
    kw = {} if max_sparse is None else {"max_sparse": max_sparse}
    compiler = PairCompiler(store, predicate, describe=describe, **kw)
    n = compiler.n
    names_all = store.constant_names()
    mention_names = [names_all[i] for i in compiler.domain]
    quantities: list[Quantity] = []
    must_terms: list[PairTerms] = []
    cannot_terms: list[PairTerms] = []
    other_queries = set(other_queries)
    for i, t in enumerate(templates):
        preds = [lit.atom.predicate for lit in t.literals]
        mine = sum(p == predicate for p in preds)
        linked = [p for p in preds if p in other_queries]
        if mine and linked:
            raise MLNSemanticError(
                f"{describe(t)}: links {predicate} with the query predicate {linked[0]}; inference over "
                "clusterings handles one equivalence predicate per formula (query them one at a time, or "
                "use cpi for the joint model)")
        if mine == 0:
            if linked:
                continue
            others = [p for p in preds if store.preds[p].query or not store.preds[p].closed]
            if others:
                raise MLNSemanticError(
                    f"{describe(t)}: inference over clusterings of {predicate} handles models whose only "
                    f"query predicate is {predicate}; {others[0]} is open (use another method)")
            continue
        if is_equivalence_axiom(t, predicate):
            continue
        if mine > 1:
            raise MLNSemanticError(
                f"{describe(t)}: a formula with several {predicate} atoms that is not reflexivity, symmetry "
                "or transitivity is not supported by inference over clusterings (use cpi)")
        sign, terms = compiler.compile(t)
        if t.hard:
            if terms.lowrank:
                raise MLNSemanticError(
                    f"{describe(t)}: a hard formula over {predicate} must hold for few pairs (it links or "
                    "separates pairs the evidence relates); this one constrains almost every pair")
            (must_terms if sign > 0 else cannot_terms).append(terms)
            continue
        quantities.append(Quantity(name=describe(t), terms=terms, weight=float(t.weight or 0.0) * sign,
                                   template=i, formula=t.formula_index, sign=float(sign),
                                   scale=float(t.weight_scale)))
    (ma, mb), (ca, cb), comp = _evidence_constraints(store, predicate, compiler.positions, n, mention_names)
    # hard formulas and evidence: must-link / cannot-link indicator quantities
    must = _indicator_terms(n, ma, mb)
    for t_ in must_terms:
        must.sparse = (must.sparse + (t_.sparse > 0).astype(np.float64)).tocsr()
    cannot = _indicator_terms(n, ca, cb)
    for t_ in cannot_terms:
        cannot.sparse = (cannot.sparse + (t_.sparse > 0).astype(np.float64)).tocsr()
    # set-level features: declared in the MLN and given from Python
    specs = list(declared_set_features(mln, predicate)) + list(set_features)
    compiled_sf, extra_q = compile_set_features(specs, store, compiler, mln, describe, allow_unweighted=truth)
    quantities.extend(extra_q)
    hard_must_q = hard_cannot_q = -1
    if must.sparse.nnz:
        must.sparse.data[:] = 1.0
        hard_must_q = len(quantities)
        quantities.append(Quantity("must-link", must, 0.0, kind="must"))
    if cannot.sparse.nnz:
        cannot.sparse.data[:] = 1.0
        hard_cannot_q = len(quantities)
        quantities.append(Quantity("cannot-link", cannot, 0.0, kind="cannot"))
    truth_q = -1
    gold = None
    if truth:
        la, lb, lt = _labels(store, predicate, compiler.positions)
        keep = lt == 1
        g = sp.coo_matrix((np.ones(int(keep.sum())), (la[keep], lb[keep])), shape=(n, n))
        _, gold = connected_components(g, directed=False)
        gold = gold.astype(np.int64)
        truth_q = len(quantities)
        quantities.append(Quantity("training truth", _cluster_indicator(gold), 0.0, kind="truth"))
    arrays = assemble_arrays(n, quantities, compiled_sf, hard_must_q, hard_cannot_q)
    # initial clustering: singletons, with must-linked mentions together
    g = sp.coo_matrix((np.ones(len(ma)), (ma, mb)), shape=(n, n))
    if must.sparse.nnz:
        g = g + must.sparse
    _, initial = connected_components(g, directed=False)
    store.close()
    return ClusterModel(
        predicate=predicate, type_name=compiler.type_name, mention_ids=np.asarray(compiler.domain),
        mention_names=mention_names, quantities=quantities, set_features=compiled_sf, arrays=arrays,
        initial_labels=initial.astype(np.int64),
        stats={"mentions": n, "pair_features": sum(q.kind == "feature" for q in quantities),
               "set_features": len(compiled_sf), "linked_pairs": int((arrays.indptr[-1]) // 2)},
        truth_q=truth_q, gold_labels=gold,
    )


def _labels(store: EvidenceStore, predicate: str, positions: np.ndarray):
    """Training labels of the predicate as mention positions and truth."""
    args, truth = store.labels.get(predicate, (np.zeros((0, 2), np.int32), np.zeros(0, np.int8)))
    a = positions[np.asarray(args[:, 0], np.int64)] if len(args) else np.zeros(0, np.int64)
    b = positions[np.asarray(args[:, 1], np.int64)] if len(args) else np.zeros(0, np.int64)
    t = np.asarray(truth, np.int64)
    ok = (a >= 0) & (b >= 0) & (a != b)
    return a[ok], b[ok], t[ok]


def _cluster_indicator(labels: np.ndarray) -> PairTerms:
    """Indicator of ordered pairs of distinct mentions sharing a label."""
    n = len(labels)
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    rows, cols = [], []
    for part in np.split(order, bounds):
        if len(part) > 1:
            r, c = np.meshgrid(part, part, indexing="ij")
            keep = r != c
            rows.append(r[keep])
            cols.append(c[keep])
    r = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    c = np.concatenate(cols) if cols else np.zeros(0, np.int64)
    # both orders: the assembled value of a pair is 2, as ordered pairs count
    m = sp.coo_matrix((np.ones(len(r)), (r, c)), shape=(n, n)).tocsr()
    return PairTerms(n, [], m)


def assemble_arrays(n: int, quantities: list[Quantity], compiled_sf, hard_must_q: int, hard_cannot_q: int
                    ) -> ModelArrays:
    """The kernel arrays: one symmetric CSR over the union of the quantities'
    sparse parts (a value column per sparse quantity and per numeric value),
    the low-rank terms, weights and set-level feature descriptors."""
    from .setfeatures import sf_arrays

    cols_rows, cols_cols, cols_vals, col_q = [], [], [], []
    lr_q, lr_coef, lr_u, lr_v = [], [], [], []
    numeric_cols = []
    for q, qty in enumerate(quantities):
        t = qty.terms
        for coef, u, v in t.lowrank:
            lr_q.append(q)
            lr_coef.append(coef)
            lr_u.append(u)
            lr_v.append(v)
        if t.sparse is not None and t.sparse.nnz:
            m = t.sparse
            if qty.kind == "numeric":
                sym = m.maximum(m.T).tocoo()          # a value per unordered pair
            else:
                sym = (m + m.T).tocoo()               # N(a,b) + N(b,a)
            cols_rows.append(sym.row)
            cols_cols.append(sym.col)
            cols_vals.append(sym.data)
            col_q.append(q)
            if qty.kind == "numeric":
                numeric_cols.append((q, len(col_q) - 1))
    S = len(col_q)
    if S:
        rows = np.concatenate(cols_rows).astype(np.int64)
        cols = np.concatenate(cols_cols).astype(np.int64)
        which = np.concatenate([np.full(len(r), k, np.int64) for k, r in enumerate(cols_rows)])
        data = np.concatenate(cols_vals)
        key = rows * n + cols
        uniq, inv = np.unique(key, return_inverse=True)
        vals = np.zeros((len(uniq), S))
        np.add.at(vals, (inv, which), data)
        r = (uniq // n).astype(np.int64)
        indices = (uniq % n).astype(np.int32)
        indptr = np.zeros(n + 1, np.int64)
        np.add.at(indptr, r + 1, 1)
        indptr = np.cumsum(indptr)
    else:
        vals = np.zeros((0, 0))
        indices = np.zeros(0, np.int32)
        indptr = np.zeros(n + 1, np.int64)
    R = len(lr_q)
    sfa = sf_arrays(compiled_sf, quantities, numeric_cols, n)
    num_col = np.array([c for _, c in numeric_cols], np.int64)
    # a 'numeric' quantity's column holds values, not counts: it still adds into
    # its quantity (which no weight reads); the kernels read it through num_col
    return ModelArrays(
        n=n, indptr=indptr, indices=indices, vals=np.ascontiguousarray(vals),
        col_q=np.array(col_q, np.int64),
        lr_q=np.array(lr_q, np.int64), lr_coef=np.array(lr_coef, np.float64),
        lr_u=np.array(lr_u).reshape(R, n) if R else np.zeros((0, n)),
        lr_v=np.array(lr_v).reshape(R, n) if R else np.zeros((0, n)),
        n_q=len(quantities), w_q=np.array([q.weight for q in quantities], np.float64),
        num_col=num_col, num_listed_q=sfa["num_listed_q"],
        sf_kind=sfa["kind"], sf_arg=sfa["arg"], sf_op=sfa["op"], sf_thr=sfa["thr"], w_sf=sfa["weight"],
        attr_indptr=sfa["attr_indptr"], attr_vals=sfa["attr_vals"], attr_nval=sfa["attr_nval"],
        hard_cannot_q=hard_cannot_q, hard_must_q=hard_must_q,
        must_total=0.0,
    )
