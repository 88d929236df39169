"""USP-Parse: the MAP semantic parse of a new sentence under a learned model.

The score of a parse L of a QLF is the MLN's sum of weights (Poon's thesis,
§5.4, Algorithm 2): for every part, the core-form weight of its cluster;
for every sentence root part, the root weight of its cluster; for every
argument, the argument-form and argument-cluster weights of its type; for
every part and every argument type of its cluster, the number weight of how
many of its arguments have that type. A value the model never saw scores
``UNSEEN`` (a log-probability floor), except an argument form a type never
saw: that type cannot take the argument (weight -inf, as a zero count is in
the MLN; Poon's parser, too, offers an argument only the types holding its
form). The unseen type every cluster has (``VIRTUAL``) takes any argument at
``UNSEEN``, so every parse has a finite score; with OntoUSP, smoothing gives a
type the argument forms its abstract property holds. (Measured on the dev
questions: flooring unseen forms too lets the number formula put a passive
argument into a verb's subject or object slot, 233 correct answers at 84.7 %
instead of 204 at 88.7 %.)

The thesis searches for the MAP parse by hill-climbing over lambda
reductions and assigns each argument its best type independently. Here the
search is exact: a part is a connected piece of the tree, so the best parse
of a subtree given its root part's cluster is a dynamic program over the
tree, and the assignment of a part's arguments to its cluster's types, which
the number formula couples, is solved exactly by a dynamic program over
subsets of arguments (a numba kernel; more than ``EXACT_ARGS`` arguments fall
back to the thesis's independent assignment, then the number terms).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from .model import USPModel
from .qlf import QLFCorpus

UNSEEN = -20.0        # log-probability of a value the model never saw
UNKNOWN = -1          # cluster of a word whose form no cluster holds
WILDCARD = -2         # cluster of a question's "what": no preference
VIRTUAL = -1          # the argument type every cluster has for unseen arguments
EXACT_ARGS = 12


@dataclass
class Part:
    root: int                       # node (index within the sentence)
    nodes: list[int]
    cluster: int
    form: str
    parent: int = -1                # index of the parent part in SemanticParse.parts
    atype: int = -2                 # argument type in the parent's cluster (VIRTUAL: unseen), -2 at the root
    aform: str = ""


@dataclass
class SemanticParse:
    sentence: int
    parts: list[Part] = field(default_factory=list)
    score: float = 0.0

    def part_of(self) -> dict[int, int]:
        return {v: i for i, p in enumerate(self.parts) for v in p.nodes}


# --------------------------------------------------------------------- weights
def _w(x: float | None) -> float:
    return UNSEEN if x is None else x


class Weights:
    """Weight look-ups with the floor and the special clusters."""

    def __init__(self, model: USPModel) -> None:
        self.m = model

    def form(self, c: int, f: int) -> float:
        if c < 0:
            return 0.0
        return _w(self.m.w_form(c, f))

    def root(self, c: int) -> float:
        if c == WILDCARD:
            return 0.0
        if c < 0:
            return UNSEEN
        return _w(self.m.w_root(c))

    def aform(self, t: int, f: int) -> float:
        if t == VIRTUAL:
            return UNSEEN
        x = self.m.w_aform(t, f) if f >= 0 else None
        return -np.inf if x is None else x      # a type takes only the argument forms it has seen

    def aclust(self, t: int, c: int) -> float:
        if c == WILDCARD:
            return 0.0
        if t == VIRTUAL or c < 0:
            return UNSEEN
        return _w(self.m.w_aclust(t, c))

    def num(self, t: int, k: int) -> float:
        return _w(self.m.w_num(t, k))

    def types(self, c: int) -> list[int]:
        return self.m.types.get(c, []) if c >= 0 else []


# ---------------------------------------------------------------- assignment
@njit(cache=True)
def _assign_exact(val: np.ndarray, num: np.ndarray) -> tuple:
    """Best assignment of m arguments to K real types (columns 0..K-1 of
    ``val``) or the virtual type (column K): maximise the sum of the chosen
    ``val`` plus, for every real type, ``num[t, number of its arguments]``.
    Dynamic program over subsets (3^m K). Returns (score, type of each arg)."""
    m = val.shape[0]
    K = val.shape[1] - 1
    full = 1 << m
    NEG = -1e300
    sums = np.zeros((K + 1, full))
    pop = np.zeros(full, dtype=np.int64)
    for s in range(1, full):
        low = s & (-s)
        j = 0
        while (1 << j) != low:
            j += 1
        pop[s] = pop[s ^ low] + 1
        for t in range(K + 1):
            sums[t, s] = sums[t, s ^ low] + val[j, t]
    dp = np.full(full, NEG)
    dp[0] = 0.0
    choice = np.zeros((K, full), dtype=np.int64)
    for t in range(K):
        new = np.full(full, NEG)
        for mask in range(full):
            if dp[mask] == NEG:
                continue
            rest = (full - 1) ^ mask
            sub = rest
            while True:
                v = dp[mask] + sums[t, sub] + num[t, pop[sub]]
                tgt = mask | sub
                if v > new[tgt]:
                    new[tgt] = v
                    choice[t, tgt] = sub
                if sub == 0:
                    break
                sub = (sub - 1) & rest
        dp = new
    best = NEG
    best_mask = 0
    for mask in range(full):
        if dp[mask] == NEG:
            continue
        v = dp[mask] + sums[K, (full - 1) ^ mask]
        if v > best:
            best = v
            best_mask = mask
    out = np.full(m, K, dtype=np.int64)
    mask = best_mask
    for t in range(K - 1, -1, -1):
        sub = choice[t, mask]
        for j in range(m):
            if sub & (1 << j):
                out[j] = t
        mask ^= sub
    return best, out


def assign_types(val: np.ndarray, num: np.ndarray) -> tuple[float, np.ndarray]:
    """Exact for up to EXACT_ARGS arguments; beyond, each argument takes its
    best type on its own (the thesis's approximation), then the number terms."""
    m, K1 = val.shape
    K = K1 - 1
    if m == 0:
        return float(num[:, 0].sum()) if K else 0.0, np.zeros(0, dtype=np.int64)
    if m <= EXACT_ARGS:
        s, out = _assign_exact(np.ascontiguousarray(val, dtype=np.float64), np.ascontiguousarray(num, dtype=np.float64))
        return float(s), out
    out = np.argmax(val, axis=1)
    counts = np.bincount(out, minlength=K1)
    s = float(val[np.arange(m), out].sum()) + float(sum(num[t, counts[t]] for t in range(K)))
    return s, out


# ------------------------------------------------------------------- parsing
class Parser:
    """USP-Parse with a learned model (see the module text)."""

    def __init__(self, model: USPModel) -> None:
        self.model = model
        self.w = Weights(model)

    def _canon(self, q: QLFCorpus, v: int, members: set[int], kids: list[list[int]]) -> str | None:
        f = q.form[v]
        if f < 0:
            return None
        atom = q.vocab.forms[f]
        ks = [k for k in kids[v] if k in members]
        if not ks:
            return atom
        parts = []
        for k in ks:
            if q.label[k] < 0:
                return None
            sub = self._canon(q, k, members, kids)
            if sub is None:
                return None
            parts.append(q.vocab.labels[q.label[k]] + " " + sub)
        return atom + "(" + " ".join(sorted(parts)) + ")"

    def _subsets(self, v: int, kids: list[list[int]], limit: int) -> list[list[int]]:
        """Connected node sets rooted at ``v`` of at most ``limit`` nodes."""
        out = [[v]]
        if limit <= 1:
            return out
        for k in kids[v]:
            grown = []
            for s in out:
                if len(s) >= limit:
                    continue
                for sub in self._subsets(k, kids, limit - len(s)):
                    grown.append(s + sub)
            out += grown
        return out

    def parse_sentence(self, q: QLFCorpus, s: int) -> SemanticParse:
        lo, hi = int(q.sent_start[s]), int(q.sent_start[s + 1])
        n = hi - lo
        head = [int(h) - lo if h >= 0 else -1 for h in q.head[lo:hi]]
        kids: list[list[int]] = [[] for _ in range(n)]
        for v, h in enumerate(head):
            if h >= 0:
                kids[h].append(v)
        # local copy of the sentence's arrays (node ids relative to lo)
        loc = _Local(q, lo, hi)
        depth = [0] * n
        order = []
        roots = [v for v in range(n) if head[v] < 0]
        todo = list(roots)
        while todo:
            v = todo.pop()
            order.append(v)
            for k in kids[v]:
                depth[k] = depth[v] + 1
                todo.append(k)
        best: list[dict[int, tuple]] = [dict() for _ in range(n)]
        w = self.w
        model = self.model
        for v in reversed(order):
            for nodes in self._subsets(v, kids, model.max_part_size):
                members = set(nodes)
                if len(nodes) == 1:
                    f = int(loc.form[v])
                    if f == -2:
                        clusters, fid = [WILDCARD], -1
                    else:
                        clusters = model.form_clust.get(f, []) if f >= 0 else []
                        fid = f
                        if not clusters:
                            clusters = [UNKNOWN]
                else:
                    text = self._canon(loc, v, members, kids)
                    fid = model.core_form_id(text) if text is not None else -1
                    clusters = model.form_clust.get(fid, []) if fid >= 0 else []
                    if not clusters:
                        continue
                # boundary arguments and their argument forms (label paths from v)
                path = {v: ""}
                args = []
                for x in nodes:                     # nodes are listed parents first
                    for y in kids[x]:
                        lab = loc.labels[y]
                        if y in members:
                            path[y] = (path[x] + "/" if path[x] else "") + lab
                        else:
                            text = (path[x] + "/" if path[x] else "") + lab
                            args.append((y, model.arg_form_id(text), text))
                for c in clusters:
                    types = w.types(c)
                    K = len(types)
                    val = np.empty((len(args), K + 1))
                    pick = [[None] * (K + 1) for _ in args]
                    for j, (y, af, _) in enumerate(args):
                        for ti, t in enumerate(types + [VIRTUAL]):
                            b, bc = -np.inf, None
                            for c2, (sc, _) in best[y].items():
                                x = w.aclust(t, c2) + sc
                                if x > b:
                                    b, bc = x, c2
                            val[j, ti] = w.aform(t, af) + b
                            pick[j][ti] = bc
                    num = np.empty((K, len(args) + 1))
                    for ti, t in enumerate(types):
                        for k in range(len(args) + 1):
                            num[ti, k] = w.num(t, k)
                    sc, out = assign_types(val, num)
                    total = w.form(c, fid) + sc
                    prev = best[v].get(c)
                    if prev is None or total > prev[0] + 1e-12:
                        assigned = [(args[j][0], (types + [VIRTUAL])[int(out[j])], pick[j][int(out[j])],
                                     args[j][2]) for j in range(len(args))]
                        form = model.core_forms[fid] if fid >= 0 else (loc.atom(v))
                        best[v][c] = (total, (nodes, form, assigned))
        parse = SemanticParse(s)
        total = 0.0
        for r in roots:
            bc, bs = None, -np.inf
            for c, (sc, _) in best[r].items():
                x = sc + w.root(c)
                if x > bs:
                    bc, bs = c, x
            total += bs
            self._emit(parse, best, r, bc, -1, -2, "")
        parse.score = total
        return parse

    def _emit(self, parse, best, v, c, parent, atype, aform) -> None:
        nodes, form, assigned = best[v][c][1]
        idx = len(parse.parts)
        parse.parts.append(Part(v, list(nodes), c, form, parent, atype, aform))
        for y, t, c2, text in assigned:
            self._emit(parse, best, y, c2, idx, t, text)

    def parse(self, q: QLFCorpus) -> list[SemanticParse]:
        return [self.parse_sentence(q, s) for s in range(q.n_sentences)]


class _Local:
    """One sentence's arrays with node ids starting at 0."""

    def __init__(self, q: QLFCorpus, lo: int, hi: int) -> None:
        self.vocab = q.vocab
        self.form = q.form[lo:hi]
        self.label = q.label[lo:hi]
        self.labels = [q.vocab.labels[x] if x >= 0 else "?" for x in self.label.tolist()]
        self.tok = q.node_tok[lo:hi]
        self.q = q

    def atom(self, v: int) -> str:
        f = self.form[v]
        if f >= 0:
            return self.vocab.forms[f]
        t = self.tok[v]
        return f"{self.q.tok_lemma[t]}:{self.q.tok_upos[t]}"


def score_parse(model: USPModel, q: QLFCorpus, parse: SemanticParse) -> float:
    """The MLN score of a given parse, term by term (the oracle USP-Parse's
    tests compare with)."""
    w = Weights(model)
    s = 0.0
    lo = int(q.sent_start[parse.sentence])
    for i, p in enumerate(parse.parts):
        if len(p.nodes) == 1 and q.form[lo + p.root] == -2:
            fid = -1
        elif len(p.nodes) == 1:
            fid = int(q.form[lo + p.root])
        else:
            fid = model.core_form_id(p.form)
        s += w.form(p.cluster, fid)
        if p.parent < 0:
            s += w.root(p.cluster)
        else:
            s += w.aform(p.atype, model.arg_form_id(p.aform)) + w.aclust(p.atype, p.cluster)
        counts: dict[int, int] = {}
        for q2 in parse.parts:
            if q2.parent == i and q2.atype != VIRTUAL:
                counts[q2.atype] = counts.get(q2.atype, 0) + 1
        for t in w.types(p.cluster):
            s += w.num(t, counts.get(t, 0))
    return s
