"""Entity-resolution benchmark data in the layout of ``../shared/data/er``
(``records.csv``, ``gold.csv``, ``folds.csv``, ``schema.mln``, ``foldN/``),
the protocol's candidate pairs and pair features, and the scores, for the
baselines of ``bench/workloads/er.py`` (reimplemented from
``../shared/data/er/README.md``, not from the scripts that produced its
table).

A dataset is read from its schema and its evidence alone: text fields are
the ``HasWord<F>`` predicates (field ``F`` of ``records.csv``, matched
case-insensitively, ``_`` ignored), value fields every other binary
predicate over the record type but ``Source``; the word and value atoms come
from the folds' ``test-evidence.db`` files (each record's evidence once).
The protocol's main and blocking fields per dataset are in ``PROTOCOL``;
another dataset under ``--root`` takes its first text field as the main one
and every text field for blocking.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from markovlogic.eval.coref import cluster_contributions

PROTOCOL = {
    "restaurants": {"main": ["name"], "block": ["name", "street"]},
    "abt_buy": {"main": ["name"], "block": ["name"]},
    "dblp_acm": {"main": ["title"], "block": ["title"]},
    "imdb_tmdb": {"main": ["title", "name"], "block": ["title", "name"]},
    "cddb": {"main": ["title"], "block": ["title", "artist"]},
    # Cora in this layout (bench/er_cora.py)
    # a paper is cited 40-54 times in every Cora fold (training folds included), so the protocol's cap of
    # max(30, 1 %) on a blocking word's document frequency would keep the title words of its largest
    # clusters out of blocking by construction: no cap here (any shared word; ~33,000 pairs a fold)
    "cora_samebib": {"main": ["title"], "block": ["title", "author"], "max_df": 1.0},
    "cora_sameauthor": {"main": ["name"], "block": ["name"]},
    "cora_tokens": {"main": ["title"], "block": ["title", "author"], "max_df": 1.0},
}
NONCANDIDATE_SCORE = -5.0

_ATOM = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\(([^,()]+),([^()]+)\)\s*$")


@dataclass
class Dataset:
    name: str
    root: Path
    ids: np.ndarray                   # record ids (str), in records.csv order
    source: np.ndarray                # int source code per record
    cluster: np.ndarray               # int gold cluster per record
    fold: np.ndarray                  # int fold per record
    text_fields: list[str]            # field names as in HasWord<F> (e.g. 'Name')
    words: dict[str, sp.csr_matrix]   # field -> record x word incidence (binary)
    vocab: dict[str, int]
    value_fields: list[str]           # predicate names (e.g. 'Price')
    values: dict[str, np.ndarray]     # predicate -> value string per record ('' missing)
    main: list[str]
    block: list[str]
    columns: dict[str, str] = field(default_factory=dict)   # text field -> records.csv column
    records: pd.DataFrame | None = None
    clean_clean: bool = False

    @property
    def n(self) -> int:
        return len(self.ids)

    def folds(self) -> list[int]:
        return sorted(int(f) for f in np.unique(self.fold))


def _schema_predicates(path: Path) -> list[tuple[str, list[str]]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("//")[0].strip()
        if not line:
            continue
        m = re.match(r"^(?:equivalence\s+)?\*?([A-Za-z_][A-Za-z0-9_]*)\(([^)]*)\)$", line)
        if m:
            out.append((m.group(1), [a.strip() for a in m.group(2).split(",")]))
    return out


def _norm(name: str) -> str:
    return name.replace("_", "").lower()


def load(root: Path, name: str | None = None) -> Dataset:
    root = Path(root)
    name = name or root.name
    records = pd.read_csv(root / "records.csv", dtype=str, keep_default_na=False)
    gold = pd.read_csv(root / "gold.csv", dtype=str, keep_default_na=False)
    folds = pd.read_csv(root / "folds.csv", dtype=str, keep_default_na=False)
    ids = records["id"].to_numpy()
    index = {r: i for i, r in enumerate(ids)}
    cluster = pd.Series(gold["cluster"].to_numpy(), index=gold["id"]).reindex(ids)
    cl_codes = pd.factorize(cluster.to_numpy())[0].astype(np.int64)
    fold = pd.Series(folds["fold"].to_numpy(), index=folds["id"]).reindex(ids).astype(int).to_numpy()
    preds = _schema_predicates(root / "schema.mln")
    record_type = None
    for p, args in preds:
        if p == "Source" or p.startswith("HasWord"):
            record_type = args[0]
            break
    text_fields = [p[len("HasWord"):] for p, a in preds if p.startswith("HasWord") and len(a) == 2]
    value_fields = [p for p, a in preds if len(a) == 2 and a[0] == record_type and not p.startswith("HasWord")
                    and p != "Source" and a[1] != record_type]
    cols = {_norm(c): c for c in records.columns}
    columns = {f: cols[_norm(f)] for f in text_fields if _norm(f) in cols}
    # evidence atoms of every record: the folds' test evidence
    rows: dict[str, list[tuple[int, str]]] = {}
    for f in sorted(root.glob("fold*/test-evidence.db")):
        for line in f.read_text(encoding="utf-8").splitlines():
            m = _ATOM.match(line)
            if not m:
                continue
            p, a, b = m.group(1), m.group(2).strip(), m.group(3).strip()
            i = index.get(a)
            if i is not None:
                rows.setdefault(p, []).append((i, b))
    vocab: dict[str, int] = {}
    words = {}
    for f in text_fields:
        pairs = rows.get("HasWord" + f, [])
        r = np.array([i for i, _ in pairs], np.int64)
        c = np.array([vocab.setdefault(w, len(vocab)) for _, w in pairs], np.int64)
        words[f] = (r, c)
    V = len(vocab)
    words = {f: sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(len(ids), V)) for f, (r, c) in words.items()}
    for f in words:
        words[f].data[:] = 1.0
    values = {}
    for p in value_fields:
        v = np.full(len(ids), "", dtype=object)
        for i, b in rows.get(p, []):
            v[i] = b
        values[p] = v
    src = np.zeros(len(ids), np.int64)
    if "Source" in dict(preds):
        s = np.full(len(ids), "", dtype=object)
        for i, b in rows.get("Source", []):
            s[i] = b
        src = pd.factorize(s)[0].astype(np.int64)
    proto = PROTOCOL.get(name, {})
    by_norm = {_norm(f): f for f in text_fields}
    main = [by_norm[_norm(f)] for f in proto.get("main", text_fields[:1]) if _norm(f) in by_norm]
    block = [by_norm[_norm(f)] for f in proto.get("block", text_fields) if _norm(f) in by_norm]
    return Dataset(name, root, ids, src, cl_codes, fold, text_fields, words, vocab, value_fields, values,
                   main or text_fields[:1], block or text_fields, columns, records,
                   clean_clean=len(np.unique(src)) > 1)


def parse_folds(text: str) -> list[int]:
    """``--folds`` of the ER benches: ``1-3``, ``1,3`` or both mixed."""
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        elif part:
            out.append(int(part))
    return out


# ---------------------------------------------------------------- candidates


def df_limit(ds: "Dataset", n: int) -> float:
    """The largest document frequency of a blocking word among ``n`` records:
    max(30, 1 %) by the protocol; a dataset's ``max_df`` (a share of ``n``)
    in ``PROTOCOL`` overrides it."""
    share = PROTOCOL.get(ds.name, {}).get("max_df")
    return max(30.0, 0.01 * n) if share is None else float(share) * n


def candidates(ds: Dataset, members: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Candidate pairs (positions into ``members``, i < j) of a set of records:
    they share a word of the blocking fields whose document frequency among
    these records is at most max(30, 1 %) (``df_limit``); clean-clean: across sources."""
    n = len(members)
    inc = None
    for f in ds.block:
        m = ds.words[f][members]
        inc = m if inc is None else inc + m
    inc = (inc > 0).astype(np.float64).tocsc()
    df = np.asarray(inc.sum(axis=0)).ravel()
    limit = df_limit(ds, n)
    keep = np.flatnonzero((df >= 2) & (df <= limit))
    inc = inc[:, keep].tocsr()
    co = (inc @ inc.T).tocoo()
    sel = co.row < co.col
    i, j = co.row[sel].astype(np.int64), co.col[sel].astype(np.int64)
    if ds.clean_clean:
        s = ds.source[members]
        ok = s[i] != s[j]
        i, j = i[ok], j[ok]
    order = np.lexsort((j, i))
    return i[order], j[order]


# ---------------------------------------------------------------- features


def _jaccard(m: sp.csr_matrix, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    a, b = m[i], m[j]
    inter = np.asarray(a.multiply(b).sum(axis=1)).ravel()
    na = np.asarray(a.sum(axis=1)).ravel()
    nb = np.asarray(b.sum(axis=1)).ravel()
    union = na + nb - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def _cosine(m: sp.csr_matrix, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    df = np.asarray((m > 0).sum(axis=0)).ravel()
    idf = np.log((1.0 + m.shape[0]) / (1.0 + df)) + 1.0
    w = m.multiply(idf[None, :]).tocsr()
    norm = np.sqrt(np.asarray(w.multiply(w).sum(axis=1)).ravel())
    norm[norm == 0] = 1.0
    w = sp.diags(1.0 / norm) @ w
    return np.asarray(w[i].multiply(w[j]).sum(axis=1)).ravel()


def _number(v: str) -> float:
    if not v:
        return math.nan
    t = v[2:] if v.startswith("V_") else v
    try:
        return float(t.replace("_", "."))
    except ValueError:
        return math.nan


def baseline_features(ds: Dataset, members: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """The protocol's pair features: per-field word Jaccard, TF-IDF cosine of
    the main field and of all text, exact equality and missing indicators of
    the value fields, relative numeric differences."""
    cols = []
    for f in ds.text_fields:
        cols.append(_jaccard(ds.words[f][members], i, j))
    main = None
    for f in ds.main:
        main = ds.words[f][members] if main is None else main + ds.words[f][members]
    cols.append(_cosine((main > 0).astype(np.float64), i, j))
    alltext = None
    for f in ds.text_fields:
        alltext = ds.words[f][members] if alltext is None else alltext + ds.words[f][members]
    cols.append(_cosine((alltext > 0).astype(np.float64), i, j))
    for p in ds.value_fields:
        v = ds.values[p][members]
        a, b = v[i], v[j]
        missing = (a == "") | (b == "")
        cols.append(((a == b) & ~missing).astype(np.float64))
        cols.append(missing.astype(np.float64))
        num = np.array([_number(x) for x in v])
        if np.isfinite(num).sum() > 0.5 * (v != "").sum() and (v != "").any():
            x, y = num[i], num[j]
            den = np.maximum(np.abs(x), np.abs(y))
            rel = np.where(np.isfinite(x) & np.isfinite(y) & (den > 0), np.abs(x - y) / np.where(den > 0, den, 1), 0.0)
            rel = np.where(np.isfinite(x) & np.isfinite(y) & (den == 0), 0.0, rel)
            cols.append(rel)
    return np.column_stack(cols) if cols else np.zeros((len(i), 0))


# ---------------------------------------------------------------- scores


def pair_counts(labels: np.ndarray, gold: np.ndarray) -> tuple[int, int, int]:
    """(TP, predicted pairs, gold pairs) over unordered pairs of records."""
    def pairs(x):
        _, c = np.unique(x, return_counts=True)
        return int(np.sum(c * (c - 1) // 2))
    key = labels.astype(np.int64) * (int(gold.max()) + 1) + gold
    return pairs(key), pairs(labels), pairs(gold)


def prf(tp: int, pp: int, gp: int) -> tuple[float, float, float]:
    p = tp / pp if pp else 1.0
    r = tp / gp if gp else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def b3_f1(labels: np.ndarray, gold: np.ndarray) -> float:
    key = labels.astype(np.int64) * (int(gold.max()) + 1) + gold
    _, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    inter = cnt[inv].astype(np.float64)
    cs = np.bincount(pd.factorize(labels)[0])[pd.factorize(labels)[0]]
    gs = np.bincount(pd.factorize(gold)[0])[pd.factorize(gold)[0]]
    p = np.mean(inter / cs)
    r = np.mean(inter / gs)
    return 2 * p * r / (p + r) if p + r else 0.0


def scores(labels: np.ndarray, gold: np.ndarray) -> dict:
    tp, pp, gp = pair_counts(labels, gold)
    p, r, f = prf(tp, pp, gp)
    return {"pairwise_precision": p, "pairwise_recall": r, "pairwise_f1": f, "b3_f1": b3_f1(labels, gold),
            "tp": tp, "pp": pp, "gp": gp, "per_gold_cluster": cluster_contributions(labels, gold).tolist()}


def bootstrap_difference(a: list, b: list, n: int = 2000, seed: int = 0) -> dict:
    """The mean-over-folds pairwise F1 of system ``a`` minus ``b`` with a 90 %
    interval from resampling each test fold's gold clusters (both systems on
    the same resample); ``a``, ``b``: per fold, :func:`cluster_contributions`."""
    rng = np.random.default_rng(seed)

    def f1(c):
        tp, pp, gp = c[..., 0, :].sum(-1), c[..., 1, :].sum(-1), c[..., 2, :].sum(-1)
        return np.where(pp + gp > 0, 2.0 * tp / np.maximum(pp + gp, 1e-300), 1.0)

    diffs = np.zeros(n)
    point = 0.0
    for ca, cb in zip(a, b):
        ca, cb = np.asarray(ca, np.float64), np.asarray(cb, np.float64)
        point += float(f1(ca) - f1(cb))
        k = ca.shape[1]
        idx = rng.integers(0, k, size=(n, k))
        diffs += f1(np.moveaxis(ca[:, idx], 0, 1)) - f1(np.moveaxis(cb[:, idx], 0, 1))
    m = max(len(a), 1)
    diffs /= m
    return {"difference": point / m, "ci90": [float(np.quantile(diffs, 0.05)), float(np.quantile(diffs, 0.95))],
            "share_above_zero": float(np.mean(diffs > 0)), "resamples": n}


# ---------------------------------------------------------------- clustering


def closure(n: int, i: np.ndarray, j: np.ndarray, keep: np.ndarray) -> np.ndarray:
    from scipy.sparse.csgraph import connected_components

    g = sp.coo_matrix((np.ones(int(keep.sum())), (i[keep], j[keep])), shape=(n, n))
    return connected_components(g, directed=False)[1].astype(np.int64)


def greedy_cc(n: int, i: np.ndarray, j: np.ndarray, s: np.ndarray, noncandidate: float = NONCANDIDATE_SCORE
              ) -> np.ndarray:
    """Greedy agglomerative correlation clustering over candidate pairs with
    scores ``s`` (every other pair scores ``noncandidate``): merge the two
    clusters of largest positive summed score until none is positive."""
    import heapq

    size = np.ones(n, np.int64)
    nbr: list[dict[int, list[float]]] = [dict() for _ in range(n)]
    for a, b, v in zip(i.tolist(), j.tolist(), s.tolist()):
        for x, y in ((a, b), (b, a)):
            e = nbr[x].get(y)
            if e is None:
                nbr[x][y] = [v, 1.0]
            else:
                e[0] += v
                e[1] += 1.0
    version = np.zeros(n, np.int64)
    alive = np.ones(n, bool)

    def total(a, b, e):
        return e[0] + noncandidate * (size[a] * size[b] - e[1])

    heap = []
    for a in range(n):
        for b, e in nbr[a].items():
            if a < b:
                t = total(a, b, e)
                if t > 0:
                    heap.append((-t, a, b, 0, 0))
    heapq.heapify(heap)
    parent = np.arange(n)
    while heap:
        negt, a, b, va, vb = heapq.heappop(heap)
        if not (alive[a] and alive[b]) or version[a] != va or version[b] != vb:
            continue
        if len(nbr[a]) < len(nbr[b]):
            a, b = b, a
        # merge b into a
        for c, e in nbr[b].items():
            if c == a:
                continue
            f = nbr[a].get(c)
            if f is None:
                nbr[a][c] = [e[0], e[1]]
            else:
                f[0] += e[0]
                f[1] += e[1]
            del nbr[c][b]
            nbr[c][a] = list(nbr[a][c])
        nbr[a].pop(b, None)
        nbr[b] = {}
        size[a] += size[b]
        alive[b] = False
        parent[b] = a
        version[a] += 1
        for c, e in nbr[a].items():
            t = total(a, c, e)
            if t > 0:
                x, y = (a, c) if a < c else (c, a)
                heapq.heappush(heap, (-t, x, y, version[x], version[y]))
    # resolve parents
    lab = parent.copy()
    for k in range(n):
        r = k
        while lab[r] != r:
            r = lab[r]
        lab[k] = r
    return lab
