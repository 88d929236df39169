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
from .kernels import (ModelArrays, Scratch, StateArrays, feature_vector, init_state, make_scratch, pair_scores,
                      total_score)
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
    spec: object = None          # the similarity(...) statement of a valued pair feature


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
    link_features: list = field(default_factory=list)   # compiled linkage features (setfeatures.CompiledLinkFeature)
    pair_layer: bool = False         # pair formulas define score(x, y) and count only through linkage features
    pair_weights: np.ndarray | None = None  # float64[Q]: the pair layer's weight per quantity
    score_col: int = -1              # value column of the pair score (pair layer)
    candidate_pairs: int = -1        # declared candidate pairs (unordered; -1: none declared)
    pair_terms: tuple | None = None  # pair layer: (vals, col_q, lr_q, lr_coef, lr_u, lr_v) of its formulas, kept
                                     # out of the kernel arrays (they count through the score column only)

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
        """Quantities (the pair layer's weights when there is one), then set-level
        features, then linkage features."""
        wq = self.pair_weights if self.pair_layer else self.arrays.w_q
        return np.concatenate([wq, self.arrays.w_sf, self.arrays.w_lk])

    def with_weights(self, w: np.ndarray) -> "ClusterModel":
        """The same model with new weights (laid out as :meth:`weights`)."""
        from dataclasses import replace

        w = np.asarray(w, dtype=np.float64)
        Q, J = self.arrays.n_q, len(self.arrays.sf_kind)
        K = len(self.arrays.w_lk)
        if len(w) == Q + J:
            w = np.concatenate([w, self.arrays.w_lk])
        if len(w) != Q + J + K:
            raise ValueError(f"expected {Q + J + K} weights, got {len(w)}")
        if self.pair_layer:
            arrays = self.arrays._replace(vals=self.arrays.vals.copy(), w_sf=w[Q:Q + J].copy(),
                                          w_lk=w[Q + J:].copy())
            out = replace(self, arrays=arrays, stats=dict(self.stats), pair_weights=w[:Q].copy())
            out.refresh_scores()
            return out
        arrays = self.arrays._replace(w_q=w[:Q].copy(), w_sf=w[Q:Q + J].copy(), w_lk=w[Q + J:].copy())
        return replace(self, arrays=arrays, stats=dict(self.stats))

    def refresh_scores(self) -> None:
        """Recompute the pair score column from the pair layer's weights."""
        if self.score_col >= 0 and self.pair_terms is not None:
            vals, col_q, lr_q, lr_coef, lr_u, lr_v = self.pair_terms
            md = self.arrays
            pair_scores(md.indptr, md.indices, md.vals, vals, col_q, lr_q, lr_coef, lr_u, lr_v,
                        self.pair_weights, self.score_col)

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
    from .setfeatures import compile_link_features, compile_pair_values, compile_set_features, declared_set_features

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
    specs = list(declared_set_features(mln, predicate)) + list(set_features)
    cand_specs = [f for f in specs if f.kind == "candidates"]
    if len(cand_specs) > 1:
        raise MLNSemanticError(f"{cand_specs[1].describe()}: {predicate} declares its candidate pairs twice "
                               f"(first at {cand_specs[0].describe()})")
    cand_mask, cand_table = declare_candidates(cand_specs[0], compiler, store, mln) if cand_specs else (None, None)
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
        compiler.restrict_to = None if t.hard else cand_table     # soft pair features: candidate pairs only
        sign, terms = compiler.compile(t)
        compiler.restrict_to = None
        if t.hard:
            if terms.lowrank and sign > 0:
                raise MLNSemanticError(
                    f"{describe(t)}: a hard formula that links {predicate} pairs must hold for few pairs (pairs "
                    "the evidence relates); this one would link almost every pair")
            (must_terms if sign > 0 else cannot_terms).append(terms)
            continue
        if cand_mask is not None and terms.sparse is not None:
            terms.sparse = terms.sparse.multiply(cand_mask).tocsr()
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
        # a count of the formula's false groundings per pair (>= 0): the co-clustered sum is 0 iff no pair
        # breaks it, low-rank parts included (a hard cross-block exclusion is blocking)
        cannot.lowrank.extend(t_.lowrank)
        if t_.sparse is not None:
            cannot.sparse = (cannot.sparse + t_.sparse).tocsr()
    # valued pair features similarity(x, y in P: T), on candidate pairs
    value_specs = [f for f in specs if f.kind == "similarity" and not getattr(f, "link", False)]
    quantities.extend(compile_pair_values(value_specs, store, compiler, mln, allow_unweighted=truth))
    # set-level features: declared in the MLN and given from Python
    compiled_sf, extra_q = compile_set_features(specs, store, compiler, mln, describe, allow_unweighted=truth)
    quantities.extend(extra_q)
    link_specs = [f for f in specs if getattr(f, "link", False)]
    compiler.restrict_to = cand_table          # linkage features read candidate pairs only
    compiled_lk, extra_lk = compile_link_features(link_specs, store, compiler, mln, allow_unweighted=truth)
    compiler.restrict_to = None
    quantities.extend(extra_lk)
    pair_layer = any(f.source == "score" for f in compiled_lk)
    score_q = cand_q = -1
    if pair_layer:
        pattern = None
        for q in quantities:
            if q.kind == "feature" and q.terms.sparse is not None and q.terms.sparse.nnz:
                m = (abs(q.terms.sparse) > 0).astype(np.float64)
                pattern = m if pattern is None else pattern + m
        if cand_mask is not None:
            pattern = cand_mask if pattern is None else pattern + cand_mask
        if pattern is None:
            pattern = sp.csr_matrix((n, n))
        pattern = ((pattern + pattern.T) > 0).astype(np.float64).tocsr()
        pattern.setdiag(0.0)
        pattern.eliminate_zeros()
        score_q = len(quantities)
        quantities.append(Quantity("pair score", PairTerms(n, [], pattern), 0.0, kind="score"))
    if cand_mask is not None:
        cand_q = len(quantities)
        quantities.append(Quantity("candidate pairs", PairTerms(n, [], cand_mask), 0.0, kind="candidates"))
    hard_must_q = hard_cannot_q = -1
    if must.sparse.nnz:
        must.sparse.data[:] = 1.0
        hard_must_q = len(quantities)
        quantities.append(Quantity("must-link", must, 0.0, kind="must"))
    if cannot.sparse.nnz or cannot.lowrank:
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
    if pair_layer:
        # the pair formulas count through score(x, y) only
        pair_weights = np.array([q.weight if q.kind == "feature" else 0.0 for q in quantities], np.float64)
        for q in quantities:
            if q.kind == "feature":
                q.weight = 0.0
    arrays = assemble_arrays(n, quantities, compiled_sf, hard_must_q, hard_cannot_q, compiled_lk, cand_q)
    # initial clustering: singletons, with must-linked mentions together
    g = sp.coo_matrix((np.ones(len(ma)), (ma, mb)), shape=(n, n))
    if must.sparse.nnz:
        g = g + must.sparse
    _, initial = connected_components(g, directed=False)
    store.close()
    model = ClusterModel(
        predicate=predicate, type_name=compiler.type_name, mention_ids=np.asarray(compiler.domain),
        mention_names=mention_names, quantities=quantities, set_features=compiled_sf, arrays=arrays,
        initial_labels=initial.astype(np.int64),
        stats={"mentions": n, "pair_features": sum(q.kind == "feature" for q in quantities),
               "set_features": len(compiled_sf), "linkage_features": len(compiled_lk),
               "linked_pairs": int((arrays.indptr[-1]) // 2)},
        truth_q=truth_q, gold_labels=gold, link_features=compiled_lk, pair_layer=pair_layer,
        pair_weights=pair_weights if pair_layer else None,
        score_col=_column_of(quantities, arrays, score_q) if pair_layer else -1,
        candidate_pairs=int(cand_mask.nnz // 2) if cand_mask is not None else -1,
    )
    if cand_mask is not None:
        model.stats["candidate_pairs"] = int(cand_mask.nnz // 2)
    if truth and cand_mask is not None and gold is not None:
        model.stats["blocking_recall"] = blocking_recall(cand_mask, gold)
    if pair_layer:
        _split_pair_terms(model)
    model.refresh_scores()
    return model


def _split_pair_terms(model: ClusterModel) -> None:
    """Move the pair formulas' columns and low-rank terms out of the kernel
    arrays into ``model.pair_terms``: with a pair layer they count through the
    score column only, and every merge would otherwise sum them for nothing."""
    md = model.arrays
    is_feature = np.array([q.kind == "feature" for q in model.quantities], np.bool_)
    fcols = np.flatnonzero(is_feature[md.col_q]) if len(md.col_q) else np.zeros(0, np.int64)
    keep = np.flatnonzero(~is_feature[md.col_q]) if len(md.col_q) else np.zeros(0, np.int64)
    remap = np.full(len(md.col_q), -1, np.int64)
    remap[keep] = np.arange(len(keep))
    flr = np.flatnonzero(is_feature[md.lr_q]) if len(md.lr_q) else np.zeros(0, np.int64)
    klr = np.flatnonzero(~is_feature[md.lr_q]) if len(md.lr_q) else np.zeros(0, np.int64)
    model.pair_terms = (np.ascontiguousarray(md.vals[:, fcols]), md.col_q[fcols].copy(), md.lr_q[flr].copy(),
                        md.lr_coef[flr].copy(), np.ascontiguousarray(md.lr_u[flr]),
                        np.ascontiguousarray(md.lr_v[flr]))

    def col(c):
        return int(remap[c]) if c >= 0 else int(c)

    model.arrays = md._replace(
        vals=np.ascontiguousarray(md.vals[:, keep]) if len(keep) else np.zeros((len(md.indices), 0)),
        col_q=md.col_q[keep].copy(), num_col=np.array([col(c) for c in md.num_col], np.int64),
        lr_q=md.lr_q[klr].copy(), lr_coef=md.lr_coef[klr].copy(),
        lr_u=np.ascontiguousarray(md.lr_u[klr]) if len(klr) else np.zeros((0, md.n)),
        lr_v=np.ascontiguousarray(md.lr_v[klr]) if len(klr) else np.zeros((0, md.n)),
        lk_col=np.array([col(c) for c in md.lk_col], np.int64), cand_col=col(md.cand_col))
    model.score_col = col(model.score_col)


def _column_of(quantities, arrays: ModelArrays, q: int) -> int:
    """The value column of quantity ``q`` (-1: it has no sparse part)."""
    cols = np.flatnonzero(arrays.col_q == q)
    return int(cols[0]) if len(cols) else -1


def blocking_recall(cand_mask: sp.csr_matrix, gold: np.ndarray) -> float:
    """The share of the truth's co-clustered pairs that are candidate pairs."""
    order = np.argsort(gold, kind="stable")
    _, counts = np.unique(gold, return_counts=True)
    total = float(np.sum(counts * (counts - 1) / 2))
    if total == 0:
        return 1.0
    coo = sp.triu(cand_mask, k=1).tocoo()
    hit = float(np.sum(gold[coo.row] == gold[coo.col]))
    return hit / total


MAX_CANDIDATES = 50_000_000      # candidate pairs a declaration may produce


def declare_candidates(spec, compiler: PairCompiler, store: EvidenceStore, mln) -> tuple[sp.csr_matrix, str]:
    """The candidate pairs of ``candidates(x, y in P: condition)``: a symmetric
    indicator over mention positions; every similarity of the store is then
    computed over these pairs only (``SimilarityTables.restrict``)."""
    from ..ground.similarity import tables_of
    from .setfeatures import _body_conditions, _err

    x, y = spec.variables
    known = {x: compiler.type_name, y: compiler.type_name}
    conds = _body_conditions(spec, spec.body, mln, store, known)
    terms = compiler.compile_conditions(x, y, conds, spec.describe())
    n = compiler.n
    m = terms.sparse if terms.sparse is not None else sp.csr_matrix((n, n))
    for c, u, v in terms.lowrank:
        # a product of two sides (x's condition times y's): as pairs when they are few
        su, sv = np.flatnonzero(u), np.flatnonzero(v)
        if len(su) * len(sv) > MAX_CANDIDATES:
            raise _err(spec, f"the candidate pairs must be few (pairs the evidence relates, such as records "
                             f"sharing a rare word); this condition holds for {len(su) * len(sv):,} pairs")
        r, q = np.meshgrid(su, sv, indexing="ij")
        m = m + sp.coo_matrix((c * np.outer(u[su], v[sv]).ravel(), (r.ravel(), q.ravel())), shape=(n, n)).tocsr()
    m = ((abs(m) + abs(m).T) > 0).astype(np.float64).tocsr()
    m.setdiag(0.0)
    m.eliminate_zeros()
    coo = m.tocoo()
    ids = np.asarray(compiler.domain, np.int64)
    import pandas as pd

    frame = pd.DataFrame({"a": ids[coo.row].astype(np.int32), "b": ids[coo.col].astype(np.int32)})
    table = f"cand_{abs(hash(spec.predicate)) % 10_000}"
    store.con.register("_cand_frame", frame)
    try:
        store.con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT a, b FROM _cand_frame")
    finally:
        store.con.unregister("_cand_frame")
    tables_of(store).restrict(compiler.type_name, table)
    return m, table


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


def assemble_arrays(n: int, quantities: list[Quantity], compiled_sf, hard_must_q: int, hard_cannot_q: int,
                    compiled_lk=(), cand_q: int = -1) -> ModelArrays:
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
            if qty.kind in ("numeric", "linkterm", "score", "candidates"):
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
    col_of = {q: c for c, q in enumerate(col_q)}
    score_q = next((q for q, qty in enumerate(quantities) if qty.kind == "score"), -1)
    lk_col = []
    for f in compiled_lk:
        if f.source == "linked":
            lk_col.append(-1)
        elif f.source == "score":
            lk_col.append(col_of.get(score_q, -1))
        else:
            q = next(k for k, qty in enumerate(quantities) if qty is f.quantity)
            lk_col.append(col_of.get(q, -2))           # -2: no pair has a value (the term is 0)
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
        lk_kind=np.array([f.kind for f in compiled_lk], np.int64),
        lk_col=np.array(lk_col, np.int64),
        lk_neg=np.array([1 if f.neg else 0 for f in compiled_lk], np.int64),
        w_lk=np.array([f.weight for f in compiled_lk], np.float64),
        cand_col=col_of.get(cand_q, -1) if cand_q >= 0 else -1,
    )


def subset_model(model: ClusterModel, idx: np.ndarray) -> ClusterModel:
    """The model restricted to the mentions ``idx`` (their pairs, low-rank
    terms and attributes; gold labels and the initial clustering kept): a
    held-out part of a training world."""
    from dataclasses import replace

    idx = np.sort(np.asarray(idx, np.int64))
    md = model.arrays
    n = md.n
    pos = np.full(n, -1, np.int64)
    pos[idx] = np.arange(len(idx))
    rows = np.repeat(np.arange(n), np.diff(md.indptr))
    keep = (pos[rows] >= 0) & (pos[md.indices.astype(np.int64)] >= 0)
    new_rows = pos[rows[keep]]
    indptr = np.zeros(len(idx) + 1, np.int64)
    np.add.at(indptr, new_rows + 1, 1)
    indptr = np.cumsum(indptr)
    indices = pos[md.indices[keep].astype(np.int64)].astype(np.int32)
    A = len(md.attr_nval)
    if A:
        aptr = np.zeros((A, len(idx) + 1), np.int64)
        avals = []
        offset = 0
        for a in range(A):
            starts, ends = md.attr_indptr[a, idx], md.attr_indptr[a, idx + 1]
            lens = ends - starts
            vals = np.concatenate([md.attr_vals[s:e] for s, e in zip(starts, ends)]) if len(idx) else \
                np.zeros(0, np.int64)
            aptr[a] = offset + np.concatenate([[0], np.cumsum(lens)])
            offset += len(vals)
            avals.append(vals)
        attr_vals = np.concatenate(avals).astype(np.int64) if avals else np.zeros(0, np.int64)
    else:
        aptr = np.zeros((0, len(idx) + 1), np.int64)
        attr_vals = md.attr_vals
    arrays = md._replace(n=len(idx), indptr=indptr, indices=indices, vals=np.ascontiguousarray(md.vals[keep]),
                         lr_u=np.ascontiguousarray(md.lr_u[:, idx]), lr_v=np.ascontiguousarray(md.lr_v[:, idx]),
                         w_q=md.w_q.copy(), w_sf=md.w_sf.copy(), w_lk=md.w_lk.copy(),
                         attr_indptr=aptr, attr_vals=attr_vals)
    pair_terms = model.pair_terms
    if pair_terms is not None:
        pv, pcq, plq, plc, plu, plv = pair_terms
        pair_terms = (np.ascontiguousarray(pv[keep]), pcq, plq, plc, np.ascontiguousarray(plu[:, idx]),
                      np.ascontiguousarray(plv[:, idx]))
    _, initial = np.unique(model.initial_labels[idx], return_inverse=True)
    gold = None
    if model.gold_labels is not None:
        _, gold = np.unique(model.gold_labels[idx], return_inverse=True)
        gold = gold.astype(np.int64)
    return replace(model, mention_ids=model.mention_ids[idx], mention_names=[model.mention_names[i] for i in idx],
                   arrays=arrays, initial_labels=initial.astype(np.int64), gold_labels=gold,
                   stats=dict(model.stats), pair_weights=None if model.pair_weights is None
                   else model.pair_weights.copy(), pair_terms=pair_terms)
