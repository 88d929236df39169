"""Poon & Domingos' joint unsupervised coreference MLN (Poon's thesis,
chapter 4) over clusterings: the ``InClust(m, c!)`` mixture models of
``examples/coref/{base,full,rule}.mln``, compiled into a score of a clustering
of each document's mentions, learned without labels by the observed-data
gradient, and clustered by a two-pass greedy search.

**Why not ground it.** ``InClust(m, c!)`` over every mention and cluster name
is ``n^2`` atoms per document (320,000 for GUM's largest), and the head
prediction rule ``InClust(m, +c) ^ Head(m, +t)`` with ``Head`` free (it is
in Y, the observed query atoms whose likelihood is maximised) is ``n^2 |V|``
ground clauses. As the thesis does (it names each non-empty cluster after
its earliest mention), the state here is the clustering itself; every
formula of the model is one term of the clustering's score:

=====================================================  ==========================================================
formula                                                 term of a cluster ``C`` (``N = |C|``)
=====================================================  ==========================================================
``@-1 EXIST m InClust(m, c)``                           ``-1`` per non-empty cluster
``!IsPrn(m) ^ InClust(m, +c) ^ Head(m, +t)``            ``sum_t n_t log(n_t / N')`` over the non-pronouns'
                                                        heads: the per-cluster weights at their maximum-likelihood
                                                        values (each cluster's head distribution; see below),
                                                        times the head scale (1 in learning; with_head_scale)
``InClust(+m, +c)``                                     0 (per mention-and-cluster weights; see below)
``Type(x, +e)`` (and Number, Gender)                    ``w_e N``: the members' atoms (one weight per value, tied
                                                        over the mentions; the cluster constant's own atom has a
                                                        per-cluster weight, kept at 0 as the mixture priors)
hard agreement ``InClust(m,c) => (Type(m,e) <=>       a cluster's members share each known value (else the
Type(c,e))``                                             clustering is impossible); the cluster's value is summed
                                                        out: ``log sum_(e,n,g) exp(...)`` over allowed values
``IsPrn(m) ^ InClust(m,c) ^ Head(m,+t) ^ Type(c,+e)``   ``w_(t,e)`` for each pronoun of ``C`` with head ``t``
the distance prior (a formula with EXIST)               ``-1`` per mention between a pronoun and its antecedent,
                                                        the nearest earlier member of its cluster that does not
                                                        contain it (all earlier mentions if it has none)
``w IsPrn(m) ^ InClust(m,c) ^ !(EXIST a ...)``          ``w`` per pronoun without an antecedent
hard ``Apposition(x,y) => (InClust(x,c) <=>           the two mentions always share a cluster
InClust(y,c))`` (PredNom alike)
RULE's ``... => (c1 = c2 <=> h1 = h2)``, weight W       ``W`` per pair of non-pronouns that agrees: same cluster
                                                        and same head, or neither
=====================================================  ==========================================================

The per-cluster weights (``+c``) are parameters of one document's clusters,
which the thesis learns on the documents it clusters (MLN-30 is trained on
the 30 test documents). The head prediction weights of a cluster, learned to
convergence with ``Head`` free, reproduce the cluster's head distribution:
the term above is the log-likelihood of its heads at those weights (the
profile likelihood), so they are set, not sampled. The mixture priors
``InClust(+m, +c)`` one per mention and cluster would, at their
maximum-likelihood values, cancel the head term's preference for pure
clusters exactly (``sum_C sum_t n log(n/N) + sum_C N log(N/n_doc)`` depends
only on the head groups); they are kept at 0, the prior mean.

**Learning** (section 4.4): the weights of the type/number/gender formulas and
of the pronoun rules maximise ``log P(Y = y | X = x)`` with the clustering and
the unknown attribute atoms hidden (Z). The gradient ``E_(Z|y)[n] -
E_(Y,Z)[n]`` comes from two Markov chains over clusterings per document,
kept across iterations: the *clamped* chain (Y observed: heads, known
attributes) and the *free* chain (Y summed out: pronoun heads over the
pronoun vocabulary and the attributes with no known value). Both chains are
Gibbs samplers over each mention's (or apposition block's) cluster, and the
expected counts are Rao-Blackwellised: given a clustering, the cluster
attributes and (free chain) pronoun heads are summed exactly. Steps: the
gradient preconditioned by ``1 / (|Var_clamped - Var_free| + 1)`` (the
thesis's preconditioner), the step size of PSCG ``alpha = d.g / (d.|H| d +
lambda d.d)``, no weight moving by more than 0.5 per step, a Gaussian prior
(sigma 2); the result is the mean of the second half of the iterates.
Initialisation (4.5.1): weights 0, and a first phase in which the
non-pronouns are clamped to their head clusters. Documents are processed in
parallel threads (the chains are compiled with numba and release the GIL).

**Inference** (the final clustering): the thesis's two MaxWalkSAT passes,
here greedy searches over clusterings (each mention or block to its best
cluster, then the best merges of two clusters, until neither raises the
score): a first pass with the finite-weight formulas only (no agreement, no
apposition), a second with all of them, started from the first pass's
clusters made consistent. The head mixture term can be scaled at MAP
(``with_head_scale``; ``mln coref infer --head-scale``): the thesis's
per-cluster weights, learned on the head clusters and held fixed, give
"only clusters mentions with the same head" (4.3.1), which the profile
likelihood at scale 1 does not (measured on GUM dev: scale 1 lets pronoun
and distance terms merge clusters of different heads, CoNLL F1 68.2;
scale 1000 keeps them apart, 72.1, against RULE-HAN's 71.4).
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numba as nb
import numpy as np

from ..errors import LearningError, MLNSemanticError, OptionError
from ..lang.ast import And, Atom, Compare, Const, Exists, Iff, Implies, Not, Var
from .setfeatures import _conjuncts

FAMILIES = ("Type", "Number", "Gender")
DEFAULT_VALUES = {"Type": ("Person", "Organization", "Location", "Other"), "Number": ("Sing", "Plur"),
                  "Gender": ("Masc", "Fem", "Neut")}
RELATIONS = ("Apposition", "PredNom")


# ====================================================================== the model

@dataclass
class InClustSpec:
    """The model of an InClust MLN: which terms it has and their weights."""

    values: dict[str, tuple[str, ...]]
    cluster_prior: float = 0.0
    head_mixture: bool = False
    rule_weight: float = 0.0
    agree: dict[str, bool] = field(default_factory=dict)
    attr_prior: dict[str, bool] = field(default_factory=dict)       # the family has Type(x, +e)
    prn_pref: dict[str, bool] = field(default_factory=dict)         # the family has the pronoun rule
    distance: float = 0.0
    no_antecedent: float = 0.0
    must: tuple[str, ...] = ()
    head_scale: float = 1.0         # the strength of the head mixture at MAP (see with_head_scale)
    # learned weights: per family, value -> weight; (head, value) -> weight
    w_attr: dict[str, dict[str, float]] = field(default_factory=dict)
    w_prn: dict[str, dict[tuple[str, str], float]] = field(default_factory=dict)
    formulas: dict[str, int] = field(default_factory=dict)          # role -> formula index
    source: object = None

    def families(self) -> list[str]:
        return [f for f in FAMILIES if self.agree.get(f) or self.attr_prior.get(f) or self.prn_pref.get(f)]


def _lit(g):
    """(predicate, positive, args) of a literal, else None."""
    if isinstance(g, Not) and isinstance(g.body, Atom):
        return g.body.predicate, False, g.body.args
    if isinstance(g, Atom):
        return g.predicate, True, g.args
    return None


def _name(t) -> str | None:
    return t.name if isinstance(t, Const) else None


def _err(decl, message: str) -> MLNSemanticError:
    pos = decl.pos
    where = dict(file=pos.file, line=pos.line, column=pos.column) if pos is not None else {}
    return MLNSemanticError(message, **where)


SHAPES = """the formulas of Poon's coreference MLNs (examples/coref/README.md): InClust(+m, +c);
!IsPrn(m) ^ InClust(m, +c) ^ Head(m, +t); EXIST m InClust(m, c); Type(x, +e) (Number, Gender);
InClust(m, c) => (Type(m, e) <=> Type(c, e)). (Number, Gender); IsPrn(m) ^ InClust(m, c) ^ Head(m, +t) ^
Type(c, +e) (Number, Gender; or with constants); the distance prior and the no-antecedent formula;
Apposition(x, y) => (InClust(x, c) <=> InClust(y, c)). (PredNom); RULE's head rule"""


def compile_inclust(mln) -> InClustSpec:
    """Recognise each formula of an InClust coreference MLN (see the module
    docstring); anything else is an error naming the formula's line."""
    if "InClust" not in mln.predicates:
        raise MLNSemanticError("not an InClust coreference model: it declares no InClust(ment, ment!)")
    values = {}
    for fam in FAMILIES:
        decl = mln.predicates.get(fam)
        if decl is not None and mln.types.get(decl.arg_types[1]):
            values[fam] = tuple(mln.types[decl.arg_types[1]])
        else:
            values[fam] = DEFAULT_VALUES[fam]
    spec = InClustSpec(values=values, source=mln)
    for fam in FAMILIES:
        spec.w_attr[fam] = {}
        spec.w_prn[fam] = {}
    for k, decl in enumerate(mln.formulas):
        f = decl.formula
        w = 0.0 if decl.weight is None else float(decl.weight)
        role = None
        if isinstance(f, Exists):
            body = _lit(f.body)
            if body and body[0] == "InClust" and body[1]:
                role = "cluster_prior"
                spec.cluster_prior = w
        elif isinstance(f, Atom):
            if f.predicate == "InClust":
                role = "mixture_prior"
                if w != 0.0:
                    raise _err(decl, "InClust(+m, +c): per mention-and-cluster weights are kept at 0 by this "
                                     "engine (their maximum-likelihood values undo the head mixture); write 0")
            elif f.predicate in FAMILIES and len(f.args) == 2:
                fam = f.predicate
                role = f"attr_prior:{fam}"
                spec.attr_prior[fam] = True
                v = _name(f.args[1])
                if v is not None:
                    spec.w_attr[fam][v] = w
        elif isinstance(f, Implies) and isinstance(f.right, Iff):
            left = _lit(f.left)
            a, b = _lit(f.right.left), _lit(f.right.right)
            if left and a and b and decl.hard:
                if left[0] == "InClust" and a[0] == b[0] and a[0] in FAMILIES:
                    role = f"agree:{a[0]}"
                    spec.agree[a[0]] = True
                elif left[0] in RELATIONS and a[0] == b[0] == "InClust":
                    role = f"must:{left[0]}"
                    spec.must = spec.must + (left[0],)
            elif isinstance(f.right.left, Compare) and isinstance(f.right.right, Compare):
                preds = sorted(x[0] for x in map(_lit, _conjuncts(f.left)) if x)
                if preds == sorted(["IsPrn", "IsPrn", "Head", "Head", "InClust", "InClust"]):
                    role = "rule"
                    spec.rule_weight = float("inf") if decl.hard else w
        elif isinstance(f, And):
            parts = _conjuncts(f)
            lits = [_lit(g) for g in parts]
            has_exists = any(isinstance(g, Not) and isinstance(g.body, Exists) for g in parts)
            preds = {x[0]: x for x in lits if x}
            if has_exists and "IsPrn" in preds and "MentionOrder" in preds:
                role = "distance"
                spec.distance = w
            elif has_exists and "IsPrn" in preds:
                role = "no_antecedent"
                spec.no_antecedent = w
            elif all(lits) and set(preds) == {"IsPrn", "InClust", "Head"} and not preds["IsPrn"][1]:
                role = "head_mixture"
                spec.head_mixture = True
            elif all(lits) and len(lits) == 4 and "IsPrn" in preds and preds["IsPrn"][1] and \
                    "Head" in preds and "InClust" in preds and any(p in FAMILIES for p in preds):
                fam = next(p for p in preds if p in FAMILIES)
                role = f"prn:{fam}"
                spec.prn_pref[fam] = True
                t, v = _name(preds["Head"][2][1]), _name(preds[fam][2][1])
                if t is not None and v is not None:
                    spec.w_prn[fam][(t, v)] = w
                elif (t is None) != (v is None):
                    raise _err(decl, "the pronoun rule takes +t and +value, or two constants")
        if role is None:
            raise _err(decl, "this formula is not one of " + SHAPES)
        spec.formulas.setdefault(role, k)
    if not spec.head_mixture and not spec.rule_weight:
        raise MLNSemanticError("an InClust model needs the head prediction rule or RULE's head rule")
    return spec


# ====================================================================== documents

@dataclass
class DocData:
    """One document's mentions as arrays."""

    name: str
    mentions: list[str]
    hd: np.ndarray          # int64[n]: local head id of a non-pronoun, -1 for a pronoun
    heads: list[str]        # local head vocabulary
    prn_head: list[str]     # head constant of each mention ('' for non-pronouns)
    pr: np.ndarray          # int64[n]: pronoun vocabulary id (-1 non-pronouns; P: unseen)
    known: np.ndarray       # int64[n, 3]: known value per family (-1 unknown)
    nested: np.ndarray      # bool[n, n]: nested[j, m] = j contains m
    block: np.ndarray       # int64[n]: apposition block (mention index of its first member)
    must_pairs: list[tuple[int, int]] = field(default_factory=list)


def read_documents(spec: InClustSpec, dbs) -> list[DocData]:
    """Documents from evidence databases (InDoc, MentionOrder, Head, IsPrn,
    Type, Number, Gender, Nested, Apposition, PredNom atoms)."""
    from ..model import Database

    if isinstance(dbs, Database):
        dbs = [dbs]
    cols: dict[str, list[tuple]] = {}
    for db in dbs:
        for a in db.atoms:
            if a.truth is True:
                cols.setdefault(a.atom.predicate, []).append(a.atom.args)
    if not cols.get("InDoc"):
        raise LearningError("the evidence has no InDoc(mention, doc) atoms: write it with mln derive --conllu")
    doc_of = {m: d for m, d in cols["InDoc"]}
    order = {m: int(k) for m, k in cols.get("MentionOrder", [])}
    missing = [m for m in doc_of if m not in order]
    if missing:
        raise LearningError(f"mention {missing[0]} has no MentionOrder atom (mln derive --conllu writes them)")
    head = {m: t for m, t in cols.get("Head", [])}
    prn = {m for (m,) in cols.get("IsPrn", [])}
    by_doc: dict[str, list[str]] = {}
    for m, d in doc_of.items():
        by_doc.setdefault(d, []).append(m)
    known = {fam: {m: v for m, v in cols.get(fam, [])} for fam in FAMILIES}
    nested = cols.get("Nested", [])
    rels = {r: cols.get(r, []) for r in RELATIONS}
    out = []
    for d in sorted(by_doc):
        ms = sorted(by_doc[d], key=lambda m: order[m])
        idx = {m: i for i, m in enumerate(ms)}
        n = len(ms)
        vocab: dict[str, int] = {}
        hd = np.full(n, -1, np.int64)
        for i, m in enumerate(ms):
            if m not in head:
                raise LearningError(f"mention {m} has no Head atom")
            if m not in prn:
                hd[i] = vocab.setdefault(head[m], len(vocab))
        kn = np.full((n, 3), -1, np.int64)
        for a, fam in enumerate(FAMILIES):
            vals = spec.values[fam]
            for i, m in enumerate(ms):
                v = known[fam].get(m)
                if v is not None and v in vals:
                    kn[i, a] = vals.index(v)
        out.append(DocData(d, ms, hd, list(vocab), [head[m] if m in prn else "" for m in ms],
                           np.full(n, -1, np.int64), kn, np.zeros((n, n), np.bool_), np.arange(n)))
    where = {m: (k, idx) for k, doc in enumerate(out) for idx, m in enumerate(doc.mentions)}
    for a, b in nested:
        if a in where and b in where and where[a][0] == where[b][0]:
            out[where[a][0]].nested[where[a][1], where[b][1]] = True
    for r in spec.must:
        for a, b in rels[r]:
            if a in where and b in where and where[a][0] == where[b][0]:
                out[where[a][0]].must_pairs.append((where[a][1], where[b][1]))
    for doc in out:
        parent = list(range(len(doc.mentions)))

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x
        for a, b in doc.must_pairs:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
        doc.block = np.array([find(i) for i in range(len(doc.mentions))], np.int64)
    return out


def pronoun_vocabulary(spec: InClustSpec, docs: Sequence[DocData]) -> list[str]:
    """The pronoun heads: those of the documents and those with weights."""
    seen = {t for d in docs for t in d.prn_head if t}
    for fam in FAMILIES:
        seen |= {t for t, _ in spec.w_prn[fam]}
    return sorted(seen)


# ====================================================================== parameters

@dataclass
class Params:
    """The learnable weights, flat: per family the value weights of
    ``Type(x, +e)``, then per family the pronoun weights ``(t, value)``."""

    spec: InClustSpec
    vocab: list[str]
    names: list[tuple]
    theta: np.ndarray

    @classmethod
    def of(cls, spec: InClustSpec, vocab: list[str]) -> "Params":
        names, theta = [], []
        for fam in FAMILIES:
            if spec.attr_prior.get(fam):
                for v in spec.values[fam]:
                    names.append(("attr", fam, v))
                    theta.append(spec.w_attr[fam].get(v, 0.0))
        for fam in FAMILIES:
            if spec.prn_pref.get(fam):
                for t in vocab:
                    for v in spec.values[fam]:
                        names.append(("prn", fam, t, v))
                        theta.append(spec.w_prn[fam].get((t, v), 0.0))
        return cls(spec, vocab, names, np.array(theta, np.float64))


@dataclass
class Arrays:
    """What the kernels read: combos of the families' values and their weights."""

    cv: np.ndarray          # int64[K, 3]: value of each family per combo (-1 absent)
    prior: np.ndarray       # float64[K]: sum of the value weights (times N)
    sp: np.ndarray          # float64[P + 1, K]: pronoun term per pronoun head (row P: unseen, 0)
    sp_free: np.ndarray     # float64[K]: log sum_t exp(sp[t, k]) (free chain)
    ptk: np.ndarray         # float64[P, K]: P(head t | combo k) (free chain)
    agree: np.ndarray       # bool[3]
    scal: np.ndarray        # float64[7]: cluster prior, head mixture (0/1), rule weight, distance, no-antecedent,
                            # mode (1 clamped, 0 free), the empty cluster's attribute term
    # parameter index maps
    attr_idx: np.ndarray    # int64[3, 4]: parameter of (family, value), -1 none
    prn_idx: np.ndarray     # int64[3, P, 4]


def make_arrays(params: Params, theta: np.ndarray | None = None) -> Arrays:
    spec = params.spec
    theta = params.theta if theta is None else theta
    fams = spec.families()
    sizes = [len(spec.values[f]) if f in fams else 1 for f in FAMILIES]
    K = int(np.prod(sizes))
    cv = np.full((K, 3), -1, np.int64)
    for k in range(K):
        r = k
        for a in range(3):
            if FAMILIES[a] in fams:
                cv[k, a] = r % sizes[a]
            r //= sizes[a]
    P = len(params.vocab)
    attr_idx = np.full((3, 4), -1, np.int64)
    prn_idx = np.full((3, max(P, 1), 4), -1, np.int64)
    tpos = {t: i for i, t in enumerate(params.vocab)}
    for p, name in enumerate(params.names):
        a = FAMILIES.index(name[1])
        if name[0] == "attr":
            attr_idx[a, spec.values[name[1]].index(name[2])] = p
        else:
            prn_idx[a, tpos[name[2]], spec.values[name[1]].index(name[3])] = p
    prior = np.zeros(K)
    sp = np.zeros((P + 1, K))
    for k in range(K):
        for a in range(3):
            v = cv[k, a]
            if v < 0:
                continue
            if attr_idx[a, v] >= 0:
                prior[k] += theta[attr_idx[a, v]]
            for t in range(P):
                if prn_idx[a, t, v] >= 0:
                    sp[t, k] += theta[prn_idx[a, t, v]]
    if P:
        mx = sp[:P].max(axis=0)
        sp_free = mx + np.log(np.exp(sp[:P] - mx).sum(axis=0))
        ptk = np.exp(sp[:P] - sp_free)
    else:
        sp_free = np.zeros(K)
        ptk = np.zeros((0, K))
    # the attribute atoms of a cluster name exist whether or not the cluster is
    # empty; an empty one's sum out to logsumexp(prior): a non-empty cluster's
    # term is counted relative to it
    z0 = float(np.log(len(prior)))         # an empty cluster: its attribute atoms unweighted
    scal = np.array([spec.cluster_prior, spec.head_scale if spec.head_mixture else 0.0,
                     spec.rule_weight if math.isfinite(spec.rule_weight) else 1e4,
                     spec.distance, spec.no_antecedent, 1.0, z0, 0.0, 0.0])
    agree = np.array([bool(spec.agree.get(f)) for f in FAMILIES])
    return Arrays(cv, prior, sp, sp_free, ptk, agree, scal, attr_idx, prn_idx)


# ====================================================================== kernels

@nb.njit(cache=True, nogil=True)
def _xlogx(x):
    return x * math.log(x) if x > 0 else 0.0


@nb.njit(cache=True, nogil=True)
def _insert(mem, size, C, i):
    k = size[C]
    j = k
    while j > 0 and mem[C, j - 1] > i:
        mem[C, j] = mem[C, j - 1]
        j -= 1
    mem[C, j] = i
    size[C] = k + 1


@nb.njit(cache=True, nogil=True)
def _remove(mem, size, C, i):
    k = size[C]
    j = 0
    while mem[C, j] != i:
        j += 1
    while j < k - 1:
        mem[C, j] = mem[C, j + 1]
        j += 1
    size[C] = k - 1


@nb.njit(cache=True, nogil=True)
def _dist_terms(ms, k, prn, nested):
    """(sum of distances, pronouns without antecedent) over the pronouns of
    the sorted member list ms[:k]."""
    total = 0.0
    none = 0.0
    for p in range(k):
        m = ms[p]
        if not prn[m]:
            continue
        q = p - 1
        while q >= 0 and nested[ms[q], m]:
            q -= 1
        if q >= 0:
            total += m - ms[q] - 1
        else:
            total += m
            none += 1.0
    return total, none


@nb.njit(cache=True, nogil=True)
def _attr_term(kc, N, S, ar_cv, ar_prior, agree, mode, post, maxed=False):
    """log sum over allowed combos of exp(prior N + S); fills ``post``
    with the posterior over combos. -inf when nothing is allowed."""
    K = ar_cv.shape[0]
    best = -np.inf
    for k in range(K):
        ok = True
        if mode > 0.5:
            for a in range(3):
                v = ar_cv[k, a]
                if v < 0 or not agree[a]:
                    continue
                for u in range(4):
                    if u != v and kc[a, u] > 0:
                        ok = False
                        break
                if not ok:
                    break
        else:
            ok = True
        if ok:
            post[k] = ar_prior[k] * N + S[k]
            if post[k] > best:
                best = post[k]
        else:
            post[k] = -np.inf
    if best == -np.inf:
        return -np.inf
    if maxed:
        return best
    s = 0.0
    for k in range(K):
        if post[k] > -np.inf:
            post[k] = math.exp(post[k] - best)
            s += post[k]
        else:
            post[k] = 0.0
    for k in range(K):
        post[k] /= s
    return best + math.log(s)


@nb.njit(cache=True, nogil=True)
def _conflict(kc, agree):
    for a in range(3):
        if not agree[a]:
            continue
        seen = 0
        for u in range(4):
            if kc[a, u] > 0:
                seen += 1
        if seen > 1:
            return True
    return False


@nb.njit(cache=True, nogil=True)
def _score_set(ms, k, hd, pr, prn, known, nested, cv, prior, sp, sp_free, agree, scal, hard, kc, S, hcount, post,
               has_attr):
    """The score of the set of mentions ms[:k] as one cluster (scratch:
    kc[3,4], S[K], hcount[V], post[K])."""
    if k == 0:
        return 0.0
    mode = scal[5]
    for a in range(3):
        for u in range(4):
            kc[a, u] = 0
    for q in range(S.shape[0]):
        S[q] = 0.0
    npn = 0
    fh = 0.0
    ph = 0.0
    for p in range(k):
        m = ms[p]
        if hd[m] >= 0:
            npn += 1
            hcount[hd[m]] += 1
        for a in range(3):
            v = known[m, a]
            if v >= 0:
                kc[a, v] += 1
        if prn[m]:
            t = pr[m]
            for q in range(S.shape[0]):
                S[q] += sp[t, q] if mode > 0.5 else sp_free[q]
    for p in range(k):
        m = ms[p]
        if hd[m] >= 0:
            c = hcount[hd[m]]
            if c > 0:
                fh += _xlogx(c)
                ph += c * (c - 1) / 2.0
                hcount[hd[m]] = 0
    if hard and mode > 0.5 and _conflict(kc, agree):
        return -np.inf
    sc = scal[0]
    if scal[1] > 0:
        sc += scal[1] * (fh - _xlogx(npn))
    if scal[2] != 0:
        sc += scal[2] * (2.0 * ph - npn * (npn - 1) / 2.0)
    if has_attr:
        maxed = scal[7] > 0.5
        at = _attr_term(kc, k, S, cv, prior, agree, mode if hard else 0.0, post, maxed)
        if at == -np.inf:
            return -np.inf
        sc += at - (scal[8] if maxed else scal[6])
    if scal[3] != 0 or scal[4] != 0:
        d, none = _dist_terms(ms, k, prn, nested)
        sc += scal[3] * d + scal[4] * none
    return sc


@nb.njit(cache=True, nogil=True)
def _union(mem, size, C, blk, kb, out):
    """Sorted merge of cluster C's members with blk[:kb] into out; returns the length."""
    i = 0
    j = 0
    k = 0
    sc = size[C] if C >= 0 else 0
    while i < sc or j < kb:
        if j >= kb or (i < sc and mem[C, i] < blk[j]):
            out[k] = mem[C, i]
            i += 1
        else:
            out[k] = blk[j]
            j += 1
        k += 1
    return k


@nb.njit(cache=True, nogil=True)
def _cluster_ids(size, n, out):
    k = 0
    for C in range(n):
        if size[C] > 0:
            out[k] = C
            k += 1
    return k


@nb.njit(cache=True, nogil=True)
def _free_slot(size, n):
    for C in range(n):
        if size[C] == 0:
            return C
    return -1


@nb.njit(cache=True, nogil=True)
def _ante(ms, k, pos, m, nested):
    """The nearest member of ms[:pos] (sorted) that does not contain m, or -1."""
    q = pos - 1
    while q >= 0 and nested[ms[q], m]:
        q -= 1
    return ms[q] if q >= 0 else -1


@nb.njit(cache=True, nogil=True)
def _lower(ms, k, x):
    """The number of members of ms[:k] below x."""
    lo = 0
    hi = k
    while lo < hi:
        mid = (lo + hi) // 2
        if ms[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@nb.njit(cache=True, nogil=True)
def _dist_of(m, a):
    return (m - a - 1.0, 0.0) if a >= 0 else (float(m), 1.0)


@nb.njit(cache=True, nogil=True)
def _dist_change(mem, size, C, blk, kb, prn, nested):
    """(change of the distance sum, change of the pronouns without
    antecedent) when the sorted block blk[:kb] joins cluster C, relative to
    C and the block apart."""
    dd = 0.0
    dn = 0.0
    k = size[C]
    ms = mem[C]
    # the block's pronouns: antecedent in C and the block together
    for j in range(kb):
        m = blk[j]
        if not prn[m]:
            continue
        a_blk = _ante(blk, kb, j, m, nested)
        pos = _lower(ms, k, m)
        a_c = _ante(ms, k, pos, m, nested)
        a_new = a_blk if a_blk > a_c else a_c
        d0, n0 = _dist_of(m, a_blk)
        d1, n1 = _dist_of(m, a_new)
        dd += d1 - d0
        dn += n1 - n0
    # C's pronouns after the block's first member whose antecedent moves
    lo = blk[0]
    hi = blk[kb - 1]
    pos = _lower(ms, k, lo)
    for q in range(pos, k):
        m = ms[q]
        a_c = _ante(ms, k, q, m, nested)
        if a_c > hi:
            break
        if not prn[m]:
            continue
        jb = _lower(blk, kb, m)
        a_b = _ante(blk, kb, jb, m, nested)
        if a_b > a_c:
            d0, n0 = _dist_of(m, a_c)
            d1, n1 = _dist_of(m, a_b)
            dd += d1 - d0
            dn += n1 - n0
    return dd, dn


@nb.njit(cache=True, nogil=True)
def _stats(ms, k, hd, pr, prn, known, sp, sp_free, mode, hcnt_row, kc, S):
    """Fill a cluster's caches from its members; returns (npn, fh, ph)."""
    for a in range(3):
        for u in range(4):
            kc[a, u] = 0
    for q in range(S.shape[0]):
        S[q] = 0.0
    npn = 0
    for p in range(k):
        m = ms[p]
        if hd[m] >= 0:
            npn += 1
            hcnt_row[hd[m]] += 1
        for a in range(3):
            v = known[m, a]
            if v >= 0:
                kc[a, v] += 1
        if prn[m]:
            for q in range(S.shape[0]):
                S[q] += sp[pr[m], q] if mode > 0.5 else sp_free[q]
    fh = 0.0
    ph = 0.0
    for p in range(k):
        m = ms[p]
        t = hd[m]
        if t >= 0 and hcnt_row[t] > 0:
            # count each head once: mark by negating after use
            c = hcnt_row[t]
            fh += _xlogx(c)
            ph += c * (c - 1) / 2.0
            hcnt_row[t] = -c
    for p in range(k):
        t = hd[ms[p]]
        if t >= 0 and hcnt_row[t] < 0:
            hcnt_row[t] = -hcnt_row[t]
    return npn, fh, ph


@nb.njit(cache=True, nogil=True)
def sweep(label, size, mem, cscore, blocks, bstart, movable, hd, pr, prn, known, nested, cv, prior, sp, sp_free,
          agree, scal, hard, has_attr, temp, counts_attr, counts_prn, ptk, gather):
    """One Gibbs sweep (``temp`` 1: blocks drawn at random, each moved to a
    cluster drawn from its conditional) or greedy sweep (``temp`` 0: each
    block to its best cluster if that raises the score); returns the number
    of blocks moved. With ``gather`` the expected counts of the final state
    are added to counts_attr[3, 4] and counts_prn[3, P, 4]. Per-cluster
    caches (head counts, known values, pronoun terms) make the score change
    of a candidate cluster cost O(combos + log |C|)."""
    n = label.shape[0]
    K = cv.shape[0]
    mode = scal[5]
    maxed = scal[7] > 0.5
    V = 1
    for m in range(n):
        if hd[m] + 1 > V:
            V = hd[m] + 1
    hcnt = np.zeros((n, V), np.int64)
    kcc = np.zeros((n, 3, 4), np.int64)
    Sc = np.zeros((n, K))
    npn = np.zeros(n, np.int64)
    fh = np.zeros(n)
    ph = np.zeros(n)
    at = np.zeros(n)
    kc = np.zeros((3, 4), np.int64)
    S = np.zeros(K)
    kcb = np.zeros((3, 4), np.int64)
    Sb = np.zeros(K)
    hcount = np.zeros(V, np.int64)
    post = np.zeros(K)
    buf = np.zeros(n, np.int64)
    blk = np.zeros(n, np.int64)
    ids = np.zeros(n, np.int64)
    cand = np.zeros(n + 1)
    amode = mode if hard else 0.0
    for C in range(n):
        if size[C] > 0:
            npn[C], fh[C], ph[C] = _stats(mem[C], size[C], hd, pr, prn, known, sp, sp_free, mode, hcnt[C], kcc[C],
                                          Sc[C])
            if has_attr:
                at[C] = _attr_term(kcc[C], size[C], Sc[C], cv, prior, agree, amode, post, maxed)
    moved = 0
    nblocks = bstart.shape[0] - 1
    for bb in range(nblocks):
        b = bb if temp == 0.0 else np.random.randint(nblocks)
        if not movable[b]:
            continue
        kb = 0
        for p in range(bstart[b], bstart[b + 1]):
            blk[kb] = blocks[p]
            kb += 1
        C0 = label[blk[0]]
        # take the block out of C0: its caches become those of the rest
        for p in range(kb):
            _remove(mem, size, C0, blk[p])
            label[blk[p]] = -1
        rest = size[C0]
        for t in range(V):
            hcnt[C0, t] = 0
        if rest > 0:
            npn[C0], fh[C0], ph[C0] = _stats(mem[C0], rest, hd, pr, prn, known, sp, sp_free, mode, hcnt[C0],
                                             kcc[C0], Sc[C0])
            if has_attr:
                at[C0] = _attr_term(kcc[C0], rest, Sc[C0], cv, prior, agree, amode, post, maxed)
            cscore[C0] = _score_set(mem[C0], rest, hd, pr, prn, known, nested, cv, prior, sp, sp_free, agree, scal,
                                    hard, kc, S, hcount, post, has_attr)
        else:
            npn[C0] = 0
            fh[C0] = 0.0
            ph[C0] = 0.0
            cscore[C0] = 0.0
        # the block's own statistics
        npb, fhb, phb = _stats(blk, kb, hd, pr, prn, known, sp, sp_free, mode, hcount, kcb, Sb)
        for p in range(kb):
            if hd[blk[p]] >= 0:
                hcount[hd[blk[p]]] = 0
        s_alone = _score_set(blk, kb, hd, pr, prn, known, nested, cv, prior, sp, sp_free, agree, scal, hard, kc, S,
                             hcount, post, has_attr)
        nc = _cluster_ids(size, n, ids)
        best = s_alone
        cur = s_alone
        for q in range(nc):
            C = ids[q]
            d = 0.0
            # head mixture and RULE's head rule
            if scal[1] != 0.0 or scal[2] != 0.0:
                f1 = fh[C]
                p1 = ph[C]
                n1 = npn[C]
                for p in range(kb):
                    t = hd[blk[p]]
                    if t < 0:
                        continue
                    c = hcnt[C, t]
                    for r in range(p):
                        if hd[blk[r]] == t:
                            c += 1
                    f1 += _xlogx(c + 1) - _xlogx(c)
                    p1 += c
                    n1 += 1
                n0 = npn[C]
                d += scal[1] * ((f1 - _xlogx(n1)) - (fh[C] - _xlogx(n0)) - (fhb - _xlogx(npb)))
                d += scal[2] * ((2.0 * p1 - n1 * (n1 - 1) / 2.0) - (2.0 * ph[C] - n0 * (n0 - 1) / 2.0)
                                - (2.0 * phb - npb * (npb - 1) / 2.0))
            if has_attr:
                for a in range(3):
                    for u in range(4):
                        kc[a, u] = kcc[C, a, u] + kcb[a, u]
                for r in range(K):
                    S[r] = Sc[C, r] + Sb[r]
                a1 = _attr_term(kc, size[C] + kb, S, cv, prior, agree, amode, post, maxed)
                if a1 == -np.inf:
                    cand[q] = -np.inf
                    continue
                ab = _attr_term(kcb, kb, Sb, cv, prior, agree, amode, post, maxed)
                d += a1 - at[C] - ab + (scal[8] if maxed else scal[6])
            elif hard and mode > 0.5:
                for a in range(3):
                    for u in range(4):
                        kc[a, u] = kcc[C, a, u] + kcb[a, u]
                if _conflict(kc, agree):
                    cand[q] = -np.inf
                    continue
            if scal[3] != 0.0 or scal[4] != 0.0:
                dd, dn = _dist_change(mem, size, C, blk, kb, prn, nested)
                d += scal[3] * dd + scal[4] * dn
            # the cluster prior: one cluster fewer than apart
            d -= scal[0]
            cand[q] = s_alone + d
            if C == C0:
                cur = cand[q]
            if cand[q] > best:
                best = cand[q]
        cand[nc] = s_alone
        choice = -1
        if best == -np.inf:
            # nowhere allowed (contradictory hard formulas): the block stays
            choice = _index_of(ids, nc, C0) if rest > 0 else nc
        elif temp == 0.0:
            for q in range(nc + 1):
                if cand[q] > cur + 1e-9 and (choice < 0 or cand[q] > cand[choice]):
                    choice = q
            if choice < 0:
                choice = _index_of(ids, nc, C0) if rest > 0 else nc
        else:
            tot = 0.0
            for q in range(nc + 1):
                cand[q] = math.exp((cand[q] - best) / temp) if cand[q] > -np.inf else 0.0
                tot += cand[q]
            r = np.random.random() * tot
            acc = 0.0
            choice = nc
            for q in range(nc + 1):
                acc += cand[q]
                if r < acc:
                    choice = q
                    break
        target = -1 if choice == nc else ids[choice]
        if target != C0:
            moved += 1
        if target == -1:
            target = _free_slot(size, n)
            for t in range(V):
                hcnt[target, t] = 0
        for p in range(kb):
            _insert(mem, size, target, blk[p])
            label[blk[p]] = target
        for t in range(V):
            hcnt[target, t] = 0
        npn[target], fh[target], ph[target] = _stats(mem[target], size[target], hd, pr, prn, known, sp, sp_free,
                                                     mode, hcnt[target], kcc[target], Sc[target])
        if has_attr:
            at[target] = _attr_term(kcc[target], size[target], Sc[target], cv, prior, agree, amode, post, maxed)
        cscore[target] = _score_set(mem[target], size[target], hd, pr, prn, known, nested, cv, prior, sp, sp_free,
                                    agree, scal, hard, kc, S, hcount, post, has_attr)
    if gather:
        _gather(label, size, mem, hd, pr, prn, known, nested, cv, prior, sp, sp_free, agree, scal, hard, has_attr,
                counts_attr, counts_prn, ptk)
    return moved


@nb.njit(cache=True, nogil=True)
def _index_of(ids, nc, C):
    for q in range(nc):
        if ids[q] == C:
            return q
    return -1


@nb.njit(cache=True, nogil=True)
def _gather(label, size, mem, hd, pr, prn, known, nested, cv, prior, sp, sp_free, agree, scal, hard, has_attr,
            counts_attr, counts_prn, ptk):
    """Add the expected counts of the current clustering (attributes, and in
    the free chain pronoun heads, summed out exactly)."""
    n = label.shape[0]
    K = cv.shape[0]
    mode = scal[5]
    kc = np.zeros((3, 4), np.int64)
    S = np.zeros(K)
    post = np.zeros(K)
    marg = np.zeros((3, 4))
    for C in range(n):
        k = size[C]
        if k == 0:
            continue
        for a in range(3):
            for u in range(4):
                kc[a, u] = 0
        for q in range(K):
            S[q] = 0.0
        for p in range(k):
            m = mem[C, p]
            for a in range(3):
                v = known[m, a]
                if v >= 0:
                    kc[a, v] += 1
            if prn[m]:
                for q in range(K):
                    S[q] += sp[pr[m], q] if mode > 0.5 else sp_free[q]
        at = _attr_term(kc, k, S, cv, prior, agree, mode if hard else 0.0, post)
        if at == -np.inf:
            continue
        for a in range(3):
            for u in range(4):
                marg[a, u] = 0.0
        for q in range(K):
            for a in range(3):
                v = cv[q, a]
                if v >= 0:
                    marg[a, v] += post[q]
        for a in range(3):
            for u in range(4):
                counts_attr[a, u] += marg[a, u] * k
        for p in range(k):
            m = mem[C, p]
            if not prn[m]:
                continue
            if mode > 0.5:
                t = pr[m]
                if t < counts_prn.shape[1]:
                    for a in range(3):
                        for u in range(4):
                            counts_prn[a, t, u] += marg[a, u]
            else:
                for q in range(K):
                    if post[q] == 0.0:
                        continue
                    for t in range(ptk.shape[0]):
                        w = post[q] * ptk[t, q]
                        for a in range(3):
                            v = cv[q, a]
                            if v >= 0:
                                counts_prn[a, t, v] += w


@nb.njit(cache=True, nogil=True)
def merge_pass(label, size, mem, cscore, hd, pr, prn, known, nested, cv, prior, sp, sp_free, agree, scal, hard,
               has_attr):
    """Greedy merges: repeatedly merge the pair of clusters whose merge
    raises the score most; returns the number of merges."""
    n = label.shape[0]
    K = cv.shape[0]
    V = 1
    for m in range(n):
        if hd[m] + 1 > V:
            V = hd[m] + 1
    kc = np.zeros((3, 4), np.int64)
    S = np.zeros(K)
    hcount = np.zeros(V, np.int64)
    post = np.zeros(K)
    buf = np.zeros(n, np.int64)
    ids = np.zeros(n, np.int64)
    merges = 0
    while True:
        nc = _cluster_ids(size, n, ids)
        bestd = 1e-9
        ba = -1
        bb = -1
        for x in range(nc):
            A = ids[x]
            for y in range(x + 1, nc):
                B = ids[y]
                k = 0
                i = 0
                j = 0
                while i < size[A] or j < size[B]:
                    if j >= size[B] or (i < size[A] and mem[A, i] < mem[B, j]):
                        buf[k] = mem[A, i]
                        i += 1
                    else:
                        buf[k] = mem[B, j]
                        j += 1
                    k += 1
                sc = _score_set(buf, k, hd, pr, prn, known, nested, cv, prior, sp, sp_free, agree, scal, hard, kc,
                                S, hcount, post, has_attr)
                d = sc - cscore[A] - cscore[B]
                if d > bestd:
                    bestd = d
                    ba = A
                    bb = B
        if ba < 0:
            return merges
        for i in range(size[bb]):
            m = mem[bb, i]
            _insert(mem, size, ba, m)
            label[m] = ba
        size[bb] = 0
        cscore[bb] = 0.0
        cscore[ba] = _score_set(mem[ba], size[ba], hd, pr, prn, known, nested, cv, prior, sp, sp_free, agree, scal,
                                hard, kc, S, hcount, post, has_attr)
        merges += 1


@nb.njit(cache=True, nogil=True)
def init_state(labels, hd, pr, prn, known, nested, cv, prior, sp, sp_free, agree, scal, hard, has_attr):
    """(label, size, mem, cscore) of a clustering (labels: any ints < n)."""
    n = labels.shape[0]
    K = cv.shape[0]
    V = 1
    for m in range(n):
        if hd[m] + 1 > V:
            V = hd[m] + 1
    label = labels.copy()
    size = np.zeros(n, np.int64)
    mem = np.zeros((n, n), np.int64)
    for m in range(n):
        C = label[m]
        mem[C, size[C]] = m
        size[C] += 1
    cscore = np.zeros(n)
    kc = np.zeros((3, 4), np.int64)
    S = np.zeros(K)
    hcount = np.zeros(V, np.int64)
    post = np.zeros(K)
    for C in range(n):
        if size[C] > 0:
            cscore[C] = _score_set(mem[C], size[C], hd, pr, prn, known, nested, cv, prior, sp, sp_free, agree, scal,
                                   hard, kc, S, hcount, post, has_attr)
    return label, size, mem, cscore


# ====================================================================== driver

@dataclass
class InClustOptions:
    """Options of learning and inference with an InClust model (``mln coref``)."""

    iterations: int = 30            # gradient steps (the thesis: 30 PSCG iterations)
    init_iterations: int = 5        # of which the first ones clamp the non-pronouns to head clusters (4.5.1)
    samples: int = 5                # Gibbs sweeps per chain per document per iteration
    burn_in: int = 2                # sweeps before the first iteration
    prior_stddev: float = 2.0
    max_step: float = 0.5
    workers: int = 2                # documents in parallel (threads)
    free: str = "chain"             # E_(Y,Z): a free chain ("chain"), or Y summed out given the clamped
                                    # chain's clusterings ("conditional")
    seed: int = 0
    max_seconds: float | None = None

    def check(self) -> "InClustOptions":
        for name in ("iterations", "samples", "workers"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise OptionError(f"{name} must be a positive integer, got {v!r}")
        for name in ("init_iterations", "burn_in", "seed"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise OptionError(f"{name} must be a non-negative integer, got {v!r}")
        if self.free not in ("chain", "conditional"):
            raise OptionError(f"free must be chain or conditional, got {self.free!r}")
        if not (self.prior_stddev > 0):
            raise OptionError(f"prior_stddev must be positive, got {self.prior_stddev!r}")
        if self.max_seconds is not None and not (self.max_seconds > 0):
            raise OptionError(f"max_seconds must be positive, got {self.max_seconds!r}")
        return self


class _Doc:
    """One document's arrays for the kernels."""

    def __init__(self, d: DocData, vocab: dict[str, int]):
        self.data = d
        n = len(d.mentions)
        self.n = n
        self.hd = d.hd
        self.prn = d.hd < 0
        P = len(vocab)
        self.pr = np.array([vocab.get(t, P) if t else -1 for t in d.prn_head], np.int64)
        self.known = d.known
        self.nested = d.nested
        roots = sorted(set(d.block.tolist()))
        members = [[i for i in range(n) if d.block[i] == r] for r in roots]
        # a block whose members' known values contradict each other cannot be one
        # cluster under the agreement rules: its apposition links are dropped
        split = []
        for g in members:
            vals = {}
            bad = False
            for i in g:
                for a in range(3):
                    v = int(d.known[i, a])
                    if v >= 0 and vals.setdefault(a, v) != v:
                        bad = True
            split.extend([[i] for i in g] if bad else [g])
        members = sorted(split, key=lambda g: g[0])
        self.dropped_links = sum(len(g) for g in members) - len(members)
        self.blocks = np.array([i for g in members for i in g], np.int64)
        self.bstart = np.cumsum([0] + [len(g) for g in members]).astype(np.int64)
        self.all_movable = np.ones(len(members), np.bool_)
        self.prn_movable = np.array([all(self.prn[i] for i in g) for g in members], np.bool_)
        # head clusters (non-pronouns by head; pronouns alone), blocks together
        lab = np.arange(n, dtype=np.int64)
        first: dict[int, int] = {}
        for i in range(n):
            if d.hd[i] >= 0:
                lab[i] = first.setdefault(int(d.hd[i]), i)
        self.head_labels = lab
        self.state = None

    def block_labels(self, labels: np.ndarray) -> np.ndarray:
        """``labels`` with each block moved into the cluster of its first member."""
        lab = labels.copy()
        for b in range(len(self.bstart) - 1):
            g = self.blocks[self.bstart[b]:self.bstart[b + 1]]
            lab[g] = lab[g[0]]
        return _compact(lab)


def _compact(labels: np.ndarray) -> np.ndarray:
    return np.unique(labels, return_inverse=True)[1].astype(np.int64).ravel()


def _kernel_args(doc: _Doc, ar: Arrays, mode: float, hard: bool, maxed: bool = False):
    scal = ar.scal.copy()
    scal[5] = mode
    scal[7] = 1.0 if maxed else 0.0
    return (doc.hd, doc.pr, doc.prn, doc.known, doc.nested, ar.cv, ar.prior, ar.sp, ar.sp_free, ar.agree, scal,
            hard, bool(ar.cv.shape[0] > 1 or ar.prior.any() or ar.sp.any()))


def _run_chain(doc: _Doc, key: str, ar: Arrays, mode: float, sweeps: int, movable: np.ndarray, gather: bool,
               P: int, seed: int):
    """``sweeps`` Gibbs sweeps of the chain ``key`` of a document; returns
    (mean counts, mean squared counts) over the sweeps when ``gather``."""
    label, size, mem, cscore = doc.state[key]
    args = _kernel_args(doc, ar, mode, True)
    ca_sum = np.zeros((3, 4))
    cp_sum = np.zeros((3, max(P, 1), 4))
    sq = None
    _seed(seed)
    for s in range(sweeps):
        ca = np.zeros((3, 4))
        cp = np.zeros((3, max(P, 1), 4))
        sweep(label, size, mem, cscore, doc.blocks, doc.bstart, movable, *args, 1.0, ca, cp, ar.ptk, gather)
        if gather:
            ca_sum += ca
            cp_sum += cp
            v = np.concatenate([ca.ravel(), cp.ravel()])
            sq = v * v if sq is None else sq + v * v
    if not gather:
        return None
    k = max(sweeps, 1)
    return np.concatenate([ca_sum.ravel(), cp_sum.ravel()]) / k, sq / k


def _run_conditional(doc: _Doc, ar: Arrays, sweeps: int, movable: np.ndarray, P: int, seed: int):
    """The clamped chain's sweeps; after each, the expected counts of its
    clustering twice: clamped (Y observed) and free (Y summed out given the
    clustering). Returns the two (mean, mean square) pairs."""
    label, size, mem, cscore = doc.state["clamped"]
    args = _kernel_args(doc, ar, 1.0, True)
    fargs = _kernel_args(doc, ar, 0.0, True)
    sums = [np.zeros(12 + 12 * max(P, 1)), np.zeros(12 + 12 * max(P, 1))]
    sqs = [np.zeros_like(sums[0]), np.zeros_like(sums[0])]
    _seed(seed)
    for s in range(sweeps):
        ca, cp = np.zeros((3, 4)), np.zeros((3, max(P, 1), 4))
        sweep(label, size, mem, cscore, doc.blocks, doc.bstart, movable, *args, 1.0, ca, cp, ar.ptk, True)
        fa, fp = np.zeros((3, 4)), np.zeros((3, max(P, 1), 4))
        _gather(label, size, mem, *fargs, fa, fp, ar.ptk)
        for k, (a, b) in enumerate(((ca, cp), (fa, fp))):
            v = np.concatenate([a.ravel(), b.ravel()])
            sums[k] += v
            sqs[k] += v * v
    k = max(sweeps, 1)
    return (sums[0] / k, sqs[0] / k), (sums[1] / k, sqs[1] / k)


@nb.njit(cache=True)
def _seed(seed):
    np.random.seed(seed)


def _flat_index(params: Params, ar: Arrays) -> np.ndarray:
    """For each parameter, its position in the flat (counts_attr, counts_prn) vector."""
    P = max(len(params.vocab), 1)
    out = np.zeros(len(params.names), np.int64)
    vocab = {t: i for i, t in enumerate(params.vocab)}
    for p, name in enumerate(params.names):
        a = FAMILIES.index(name[1])
        if name[0] == "attr":
            out[p] = a * 4 + params.spec.values[name[1]].index(name[2])
        else:
            out[p] = 12 + (a * P + vocab[name[2]]) * 4 + params.spec.values[name[1]].index(name[3])
    return out


@dataclass
class InClustLearnResult:
    params: Params
    theta: np.ndarray
    trace: list[dict]
    seconds: float
    stats: dict


def learn_inclust(spec: InClustSpec, docs: Sequence[DocData], options: InClustOptions | None = None,
                  callback=None) -> InClustLearnResult:
    """Unsupervised learning of the model's weights (see the module docstring)."""
    opt = (options or InClustOptions()).check()
    start = time.perf_counter()
    vocab = pronoun_vocabulary(spec, docs)
    params = Params.of(spec, vocab)
    if not len(params.theta):
        raise LearningError("the model has no learnable weight (no Type/Number/Gender or pronoun formula)")
    learnable = np.ones(len(params.theta), bool)
    P = len(vocab)
    vpos = {t: i for i, t in enumerate(vocab)}
    ds = [_Doc(d, vpos) for d in docs]
    theta = np.zeros(len(params.theta))            # 4.5.1: all weights start at zero
    ar = make_arrays(params, theta)
    flat = _flat_index(params, ar)
    for k, d in enumerate(ds):
        lab = d.block_labels(d.head_labels)
        d.state = {key: init_state(lab, *_kernel_args(d, ar, mode, True)[:-2], True,
                                   _kernel_args(d, ar, mode, True)[-1])
                   for key, mode in (("clamped", 1.0), ("free", 0.0))}
    sigma2 = opt.prior_stddev ** 2
    lam = 1.0
    trace = []
    history = []
    pool = ThreadPoolExecutor(max_workers=opt.workers) if opt.workers > 1 else None

    def run_all(ar, sweeps, gather, it):
        if opt.free == "conditional":
            jobs = [(d, ar, sweeps, d.prn_movable if it < opt.init_iterations else d.all_movable, P,
                     (opt.seed * 1_000_003 + it * 7919 + k * 31) % (2 ** 31)) for k, d in enumerate(ds)]
            out = [_run_conditional(*j) for j in jobs] if pool is None else \
                list(pool.map(lambda j: _run_conditional(*j), jobs))
            return [r for pair in out for r in pair]
        jobs = []
        for k, d in enumerate(ds):
            clamp_mov = d.prn_movable if it < opt.init_iterations else d.all_movable
            for key, mode, mov in (("clamped", 1.0, clamp_mov), ("free", 0.0, d.all_movable)):
                seed = (opt.seed * 1_000_003 + it * 7919 + k * 31 + (key == "free")) % (2 ** 31)
                jobs.append((d, key, ar, mode, sweeps, mov, gather, P, seed))
        if pool is None:
            return [_run_chain(*j) for j in jobs]
        return list(pool.map(lambda j: _run_chain(*j), jobs))

    run_all(ar, opt.burn_in, False, 0)
    timed_out = False
    for it in range(opt.iterations):
        res = run_all(ar, opt.samples, True, it)
        e_cl = sum(r[0] for r in res[0::2])
        e_fr = sum(r[0] for r in res[1::2])
        v_cl = sum(r[1] - r[0] ** 2 for r in res[0::2])
        v_fr = sum(r[1] - r[0] ** 2 for r in res[1::2])
        g = (e_cl - e_fr)[flat] - theta / sigma2
        h = np.abs((v_cl - v_fr)[flat]) + 1.0 / sigma2
        d = g / (h + 1.0)
        denom = float(d @ (h * d) + lam * (d @ d))
        alpha = float(d @ g) / denom if denom > 0 else 0.0
        step = np.clip(alpha * d, -opt.max_step, opt.max_step)
        theta = theta + step * learnable
        ar = make_arrays(params, theta)
        history.append(theta.copy())
        row = {"iteration": it + 1, "gradient_norm": float(np.linalg.norm(g)), "step": float(np.abs(step).max()),
               "seconds": time.perf_counter() - start}
        trace.append(row)
        if callback is not None:
            callback(row, theta)
        if opt.max_seconds is not None and time.perf_counter() - start > opt.max_seconds:
            timed_out = True
            break
    if pool is not None:
        pool.shutdown()
    half = history[len(history) // 2:] if history else [theta]
    final = np.mean(half, axis=0)
    params.theta = final
    return InClustLearnResult(params, final, trace, time.perf_counter() - start,
                              {"documents": len(ds), "mentions": int(sum(d.n for d in ds)), "pronoun_heads": P,
                               "parameters": len(final), "timed_out": timed_out})


def with_weights(spec: InClustSpec, params: Params, theta: np.ndarray) -> InClustSpec:
    """A copy of ``spec`` with the learned weights."""
    from copy import deepcopy

    out = deepcopy(spec)
    out.source = spec.source
    for p, name in enumerate(params.names):
        if name[0] == "attr":
            out.w_attr[name[1]][name[2]] = float(theta[p])
        else:
            out.w_prn[name[1]][(name[2], name[3])] = float(theta[p])
    return out


def with_head_scale(spec: InClustSpec, scale: float) -> InClustSpec:
    """A copy of ``spec`` whose head mixture term is multiplied by ``scale``
    (the strength of the head prediction rule at MAP inference; 1 is the
    profile likelihood of the per-cluster weights). Why a scale: in the
    thesis the per-cluster head weights are learned from the head-cluster
    initialisation (4.5.1) with a softmax over the whole head vocabulary and
    then held fixed, so a non-pronoun put into a cluster of another head
    loses its whole learned weight (sigma^2 N for a small head group N,
    a few units above log |V| for a large one), and the
    base model "only clusters mentions with the same head" (4.3.1); the
    profile likelihood, re-estimated for every clustering, charges it only
    ``log`` of the cluster's size. A large scale restores that property
    (different heads share a cluster only through the hard apposition and
    predicate-nominal rules); ``mln coref infer --head-scale``, and the
    bench chooses it on dev."""
    from dataclasses import replace

    if isinstance(scale, bool) or not isinstance(scale, (int, float, np.floating, np.integer)) or \
            not (math.isfinite(float(scale)) and float(scale) > 0):
        raise OptionError(f"head scale must be a positive finite number, got {scale!r}")
    return replace(spec, head_scale=float(scale))


def learned_mln_text(spec: InClustSpec) -> str:
    """The model's text with the learned weights: each '+' formula of the
    attribute and pronoun rules written out once per value (and head)."""
    from ..lang.printer import format_formula_decl

    mln = spec.source
    lines = ["// learned by mln coref learn (markovlogic.cluster.inclust): unsupervised, observed-data gradient"]
    for name, d in mln.predicates.items():
        lines.append(_decl_text(mln, d))
    roles = {k: r for r, k in spec.formulas.items()}
    for k, decl in enumerate(mln.formulas):
        role = roles.get(k, "")
        if role.startswith("attr_prior:"):
            fam = role.split(":")[1]
            for v in spec.values[fam]:
                lines.append(f"{spec.w_attr[fam].get(v, 0.0):.6g} {fam}(x, {v})")
            continue
        if role.startswith("prn:"):
            fam = role.split(":")[1]
            for (t, v), w in sorted(spec.w_prn[fam].items()):
                lines.append(f"{w:.6g} IsPrn(m) ^ InClust(m, c) ^ Head(m, {t}) ^ {fam}(c, {v})")
            continue
        lines.append(format_formula_decl(decl))
    return "\n".join(lines) + "\n"


def _decl_text(mln, d) -> str:
    args = ", ".join(t + ("!" if m else "") for t, m in zip(d.arg_types, d.mutex))
    return f"{d.name}({args})"


@dataclass
class InClustAnswer:
    labels: list[np.ndarray]        # per document, cluster labels in mention order
    docs: list[DocData]
    seconds: float
    stats: dict

    def clusters(self) -> list[list[str]]:
        out = []
        for d, lab in zip(self.docs, self.labels):
            groups: dict[int, list[str]] = {}
            for m, c in zip(d.mentions, lab.tolist()):
                groups.setdefault(c, []).append(m)
            out.extend(groups.values())
        return out

    def clusters_text(self, predicate: str = "SameEntity") -> str:
        return "".join("\t".join([predicate] + c) + "\n" for c in self.clusters())


def map_inclust(spec: InClustSpec, docs: Sequence[DocData], workers: int = 2) -> InClustAnswer:
    """The final clustering of each document: two greedy passes (finite
    weights only, then all formulas), each alternating block moves and
    cluster merges until neither raises the score."""
    start = time.perf_counter()
    vocab = pronoun_vocabulary(spec, [])
    params = Params.of(spec, vocab)
    ar = make_arrays(params)
    vpos = {t: i for i, t in enumerate(vocab)}

    def one(d: DocData) -> np.ndarray:
        doc = _Doc(d, vpos)
        # pass 1: finite weights only: no agreement, no apposition blocks
        single = _Doc.__new__(_Doc)
        single.__dict__.update(doc.__dict__)
        single.blocks = np.arange(doc.n, dtype=np.int64)
        single.bstart = np.arange(doc.n + 1, dtype=np.int64)
        lab = _greedy(single, ar, doc.head_labels.copy(), hard=False,
                      movable=np.ones(doc.n, np.bool_))
        # pass 2: every formula, from pass 1 made consistent
        lab = _repair(doc, lab)
        return _greedy(doc, ar, lab, hard=True, movable=doc.all_movable)

    if workers > 1 and len(docs) > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            labels = list(pool.map(one, docs))
    else:
        labels = [one(d) for d in docs]
    return InClustAnswer(labels, list(docs), time.perf_counter() - start,
                         {"documents": len(docs), "mentions": int(sum(len(d.mentions) for d in docs)),
                          "clusters": int(sum(len(set(l.tolist())) for l in labels))})


def _greedy(doc: _Doc, ar: Arrays, labels: np.ndarray, hard: bool, movable: np.ndarray) -> np.ndarray:
    args = _kernel_args(doc, ar, 1.0, hard, maxed=True)
    label, size, mem, cscore = init_state(_compact(labels), *args)
    ca = np.zeros((3, 4))
    cp = np.zeros((3, 1, 4))
    for _ in range(50):
        moved = 0
        for _ in range(20):
            m = sweep(label, size, mem, cscore, doc.blocks, doc.bstart, movable, *args, 0.0, ca, cp, ar.ptk, False)
            moved += m
            if m == 0:
                break
        merged = merge_pass(label, size, mem, cscore, *args)
        if merged == 0:
            break
    return _compact(label)


def _repair(doc: _Doc, labels: np.ndarray) -> np.ndarray:
    """Pass 1's clusters made consistent with the hard formulas: blocks
    joined (into the cluster of their first member), and a block whose known
    values conflict with the earlier members of its cluster moved out to a
    cluster of its own."""
    lab = doc.block_labels(labels)
    nxt = int(lab.max()) + 1 if doc.n else 0
    seen: dict[tuple[int, int], int] = {}
    for b in range(len(doc.bstart) - 1):
        g = doc.blocks[doc.bstart[b]:doc.bstart[b + 1]]
        c = int(lab[g[0]])
        vals = {(a, int(doc.known[i, a])) for i in g for a in range(3) if doc.known[i, a] >= 0}
        if any(seen.get((c, a), v) != v for a, v in vals):
            c = nxt
            nxt += 1
            lab[g] = c
        for a, v in vals:
            seen.setdefault((c, a), v)
    return _compact(lab)
