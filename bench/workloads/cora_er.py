"""Cora entity resolution over clusters: the set-level Markov logic model
against trivial baselines, per fold, scored by the same code
(``markovlogic.eval``).

    python -m bench.workloads.cora_er [--folds 1-5] [--seeds 0] [--task bib|author|both]

SameBib (citations), for each fold of ``../shared/data/cora``:

* ``identical title``: two citations match when their title constants are
  equal (then transitive closure);
* ``title Jaccard >= t``: the Jaccard similarity of their title words at
  least ``t``, then transitive closure; ``t`` maximises pairwise F1 on the
  fold's training citations;
* ``LR + CC``: a logistic regression (L2, numpy/scipy) on six pair
  similarities (identical title/author/venue constants, Jaccard of
  title/author/venue words) trained on the training pairs, then greedy
  correlation clustering of the test citations on its log-odds (merge the
  two clusters with the largest positive sum until none is positive);
  ``LR + CC (offset)`` adds to the log-odds the constant, among 0..4, that
  maximises pairwise F1 of the clustering of the training citations;
* ``pairwise MLN + CPI``: ``examples/cora-er/cora-pairwise.mln`` as shipped
  (weights from fold 1), exact MAP by cutting planes;
* ``set-level MLN``: the structure of ``examples/cora-er/cora-sets.mln``,
  weights learned by SampleRank on the fold's training data (seeds given),
  greedy agglomerative MAP.

SameAuthor (author strings): ``author Jaccard >= t`` (closure, ``t`` from
training data) against a set-level model (``AUTHOR_MODEL`` below) learned by
SampleRank.

Metrics: ``f1`` etc. over unordered pairs as the truth gives them (Cora's
truth is not transitively closed), B-cubed, MUC and CEAF-e over clusters.
Thresholds and offsets are chosen on training data only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize

from bench.harness import REPO_ROOT, RESULTS_DIR, Skip, data_dir, workload

SETS_MODEL = REPO_ROOT / "examples" / "cora-er" / "cora-sets.mln"
PAIRWISE_MODEL = REPO_ROOT / "examples" / "cora-er" / "cora-pairwise.mln"

AUTHOR_MODEL = """\
Author(bib, author)
Title(bib, title)
Venue(bib, venue)
HasWordAuthor(author, word)
HasWordTitle(title, word)
HasWordVenue(venue, word)
SameBib(bib, bib)
equivalence SameAuthor(author, author)
SameTitle(title, title)
SameVenue(venue, venue)

jaccard(x, y, HasWordAuthor) >= 0.2 => SameAuthor(x, y)
jaccard(x, y, HasWordAuthor) >= 0.4 => SameAuthor(x, y)
jaccard(x, y, HasWordAuthor) >= 0.6 => SameAuthor(x, y)
jaccard(x, y, HasWordAuthor) >= 0.8 => SameAuthor(x, y)
Author(b1, x) ^ Author(b2, y) ^ Title(b1, t) ^ Title(b2, t) => SameAuthor(x, y)
Author(b1, x) ^ Author(b2, y) ^ jaccard(b1, b2, Title, HasWordTitle) >= 0.6 => SameAuthor(x, y)
!SameAuthor(x, y)
some(x, y in SameAuthor: jaccard(x, y, HasWordAuthor) < 0.1)
"""

_ATOM = re.compile(r"^(\w+)\(([^,()]+),([^,()]+)\)\s*$")


# ---------------------------------------------------------------- data

def _read(path: Path) -> dict[str, list[tuple[str, str]]]:
    rel: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        m = _ATOM.match(line.strip())
        if m:
            rel[m.group(1)].append((m.group(2), m.group(3)))
    return rel


class Pool:
    """The citations (or author strings) of one side of a fold: fields, words,
    truth pairs and clusters."""

    def __init__(self, rel: dict, task: str) -> None:
        self.task = task
        if task == "bib":
            names = sorted({b for f in ("Title", "Author", "Venue") for b, _ in rel[f]})
            self.names = names
            index = {b: i for i, b in enumerate(names)}
            self.consts = {}
            self.words = {}
            for field in ("Title", "Author", "Venue"):
                const = np.full(len(names), -1)
                cmap: dict[str, int] = {}
                for b, c in rel[field]:
                    const[index[b]] = cmap.setdefault(c, len(cmap))
                self.consts[field] = const
                words = defaultdict(set)
                for c, w in rel["HasWord" + field]:
                    words[c].add(w)
                by_const = {c: words.get(c, set()) for c in cmap}
                rows, cols, vocab = [], [], {}
                for b, c in rel[field]:
                    for w in by_const[c]:
                        rows.append(index[b])
                        cols.append(vocab.setdefault(w, len(vocab)))
                self.words[field] = sp.csr_matrix((np.ones(len(rows)), (rows, cols)),
                                                  shape=(len(names), max(1, len(vocab))))
            truth = rel["SameBib"]
        else:
            names = sorted({a for _, a in rel["Author"]} | {a for a, _ in rel["SameAuthor"]})
            self.names = names
            index = {a: i for i, a in enumerate(names)}
            rows, cols, vocab = [], [], {}
            for a, w in rel["HasWordAuthor"]:
                if a in index:
                    rows.append(index[a])
                    cols.append(vocab.setdefault(w, len(vocab)))
            self.words = {"Author": sp.csr_matrix((np.ones(len(rows)), (rows, cols)),
                                                  shape=(len(names), max(1, len(vocab))))}
            self.consts = {}
            truth = rel["SameAuthor"]
        index = {b: i for i, b in enumerate(self.names)}
        self.truth_pairs = {tuple(sorted((a, b))) for a, b in truth if a != b and a in index and b in index}
        from markovlogic.eval.clusters import labels_from_pairs

        pr = [(index[a], index[b]) for a, b in self.truth_pairs]
        self.gold = labels_from_pairs(len(self.names), np.array([p[0] for p in pr], int),
                                      np.array([p[1] for p in pr], int))

    @property
    def n(self) -> int:
        return len(self.names)

    def jaccard(self, field: str) -> np.ndarray:
        """Dense n x n Jaccard of a field's words (the pools are small)."""
        w = self.words[field]
        w = (w > 0).astype(np.float64)
        shared = (w @ w.T).toarray()
        size = np.asarray(w.sum(axis=1)).ravel()
        union = size[:, None] + size[None, :] - shared
        with np.errstate(divide="ignore", invalid="ignore"):
            j = np.where(union > 0, shared / np.maximum(union, 1), 0.0)
        return j

    def same(self, field: str) -> np.ndarray:
        c = self.consts[field]
        return ((c[:, None] == c[None, :]) & (c[:, None] >= 0)).astype(np.float64)


def _pools(fold: int, task: str) -> tuple[Pool, Pool]:
    folder = data_dir() / "cora" / f"fold{fold}"
    for name in ("train.db", "test-evidence.db", "test-truth.db"):
        if not (folder / name).is_file():
            raise Skip(f"missing {folder / name}")
    train = _read(folder / "train.db")
    test = _read(folder / "test-evidence.db")
    for k, v in _read(folder / "test-truth.db").items():
        test[k] += v
    return Pool(train, task), Pool(test, task)


# ---------------------------------------------------------------- scoring

def _score(pool: Pool, labels: np.ndarray) -> dict:
    from markovlogic.eval.clusters import coreference_scores, pairwise_sets

    n = pool.n
    pred_pairs = set()
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    for part in np.split(order, bounds):
        names = sorted(pool.names[i] for i in part)
        for a in range(len(names)):
            for b in range(a + 1, len(names)):
                pred_pairs.add((names[a], names[b]))
    s = pairwise_sets(pool.truth_pairs, pred_pairs)
    out = {"precision": s["precision"], "recall": s["recall"], "f1": s["f1"]}
    out.update(coreference_scores(pool.gold, np.asarray(labels)[:n]))
    return out


def _closure(n: int, mask: np.ndarray) -> np.ndarray:
    from markovlogic.eval.clusters import labels_from_pairs

    r, c = np.nonzero(np.triu(mask, 1))
    return labels_from_pairs(n, r, c)


def _train_f1(pool: Pool, labels: np.ndarray) -> float:
    return _score(pool, labels)["f1"]


# ---------------------------------------------------------------- baselines

def identical_title(train: Pool, test: Pool) -> np.ndarray:
    return _closure(test.n, test.same("Title") > 0)


def jaccard_threshold(train: Pool, test: Pool, field: str) -> tuple[np.ndarray, float]:
    jt = train.jaccard(field)
    best = max(np.arange(0.1, 0.96, 0.05), key=lambda t: (_train_f1(train, _closure(train.n, jt >= t)), -t))
    return _closure(test.n, test.jaccard(field) >= best), float(round(best, 2))


def _features(pool: Pool) -> np.ndarray:
    return np.stack([pool.same("Title"), pool.same("Author"), pool.same("Venue"),
                     pool.jaccard("Title"), pool.jaccard("Author"), pool.jaccard("Venue")], axis=-1)


def _logreg(X: np.ndarray, y: np.ndarray, l2: float = 1.0) -> np.ndarray:
    Xb = np.hstack([X, np.ones((len(X), 1))])

    def f(w):
        z = Xb @ w
        loss = np.sum(np.logaddexp(0, z) - y * z) + 0.5 * l2 * np.sum(w[:-1] ** 2)
        g = Xb.T @ (1 / (1 + np.exp(-z)) - y)
        g[:-1] += l2 * w[:-1]
        return loss, g

    return minimize(f, np.zeros(Xb.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 2000}).x


def greedy_cc(S: np.ndarray) -> np.ndarray:
    """Greedy correlation clustering: merge the two clusters whose summed
    pair score is largest while it is positive."""
    n = len(S)
    S = S.astype(np.float64).copy()
    np.fill_diagonal(S, -np.inf)
    alive = np.ones(n, bool)
    label = np.arange(n)
    while True:
        M = np.where(alive[:, None] & alive[None, :], S, -np.inf)
        k = int(np.argmax(M))
        i, j = divmod(k, n)
        if not M[i, j] > 0:
            break
        S[i, :] += S[j, :]
        S[:, i] += S[:, j]
        S[i, i] = -np.inf
        alive[j] = False
        label[label == j] = i
    return label


def lr_cc(train: Pool, test: Pool, offsets=(0.0,)) -> tuple[np.ndarray, float]:
    F = _features(train)
    iu = np.triu_indices(train.n, 1)
    y = (train.gold[iu[0]] == train.gold[iu[1]]).astype(np.float64)
    w = _logreg(F[iu], y)

    def scores(pool: Pool, off: float) -> np.ndarray:
        return _features(pool) @ w[:-1] + w[-1] + off

    best = offsets[0]
    if len(offsets) > 1:
        best = max(offsets, key=lambda o: _train_f1(train, greedy_cc(scores(train, o))))
    return greedy_cc(scores(test, best)), float(best)


# ---------------------------------------------------------------- Markov logic

def _mln_sets(fold: int, seed: int, model_text: str, predicate: str) -> tuple[dict, dict]:
    """Learn the model's weights by SampleRank on the fold's training data and
    run agglomerative MAP on its test evidence; (labels by name, figures)."""
    from markovlogic import MLN, Database
    from markovlogic.learn.samplerank import SampleRankOptions, learn_samplerank_model

    folder = data_dir() / "cora" / f"fold{fold}"
    mln = MLN.from_string(model_text, filename=f"<{predicate} model>")
    start = time.perf_counter()
    lm = learn_samplerank_model(mln, [Database.from_file(folder / "train.db", mln=mln)],
                                query_predicates=[predicate], seed=seed, options=SampleRankOptions(seed=seed))
    learn_s = time.perf_counter() - start
    start = time.perf_counter()
    ans = lm.mln.map(Database.from_file(folder / "test-evidence.db", mln=lm.mln), [predicate],
                     method="agglomerative")
    infer_s = time.perf_counter() - start
    (part,) = ans.parts
    labels = {name: int(l) for name, l in zip(part.model.mention_names, part.labels)}
    return labels, {"learn_s": round(learn_s, 2), "infer_s": round(infer_s, 2),
                    "train_loss": round(lm.result.stats["final_train_loss"], 4)}


def _mln_pairwise_cpi(fold: int) -> tuple[dict, dict]:
    from markovlogic import MLN, Database

    folder = data_dir() / "cora" / f"fold{fold}"
    mln = MLN.from_file(PAIRWISE_MODEL)
    start = time.perf_counter()
    ans = mln.map(Database.from_file(folder / "test-evidence.db", mln=mln), ["SameBib"], method="cpi")
    pairs = [tuple(a[len("SameBib("):-1].split(",")) for a in ans.atoms]
    names = sorted({x for p in pairs for x in p})
    from markovlogic.eval.clusters import labels_from_pairs

    index = {b: i for i, b in enumerate(names)}
    lab = labels_from_pairs(len(names), np.array([index[a] for a, _ in pairs]),
                            np.array([index[b] for _, b in pairs]))
    return {b: int(lab[index[b]]) for b in names}, {"infer_s": round(time.perf_counter() - start, 2),
                                                     "optimal": bool(ans.optimal)}


def _labels_for(pool: Pool, by_name: dict) -> np.ndarray:
    """Labels over the pool's constants; one missing from the answer is a singleton."""
    out = np.empty(pool.n, np.int64)
    nxt = max(by_name.values(), default=0) + 1
    for i, name in enumerate(pool.names):
        if name in by_name:
            out[i] = by_name[name]
        else:
            out[i] = nxt
            nxt += 1
    return out


# ---------------------------------------------------------------- run

def run_fold(fold: int, seeds: list[int], task: str) -> list[dict]:
    rows: list[dict] = []
    if task == "bib":
        train, test = _pools(fold, "bib")
        rows.append({"system": "identical title", **_score(test, identical_title(train, test))})
        lab, t = jaccard_threshold(train, test, "Title")
        rows.append({"system": "title Jaccard >= t", "t": t, **_score(test, lab)})
        lab, _ = lr_cc(train, test)
        rows.append({"system": "LR + CC", **_score(test, lab)})
        lab, off = lr_cc(train, test, offsets=(0.0, 1.0, 2.0, 3.0, 4.0))
        rows.append({"system": "LR + CC (offset)", "offset": off, **_score(test, lab)})
        by_name, fig = _mln_pairwise_cpi(fold)
        rows.append({"system": "pairwise MLN + CPI", **fig, **_score(test, _labels_for(test, by_name))})
        text = _structure(SETS_MODEL.read_text())
        for seed in seeds:
            by_name, fig = _mln_sets(fold, seed, text, "SameBib")
            rows.append({"system": "set-level MLN", "seed": seed, **fig, **_score(test, _labels_for(test, by_name))})
    else:
        train, test = _pools(fold, "author")
        lab, t = jaccard_threshold(train, test, "Author")
        rows.append({"system": "author Jaccard >= t", "t": t, **_score(test, lab)})
        for seed in seeds:
            by_name, fig = _mln_sets(fold, seed, AUTHOR_MODEL, "SameAuthor")
            rows.append({"system": "set-level MLN", "seed": seed, **fig, **_score(test, _labels_for(test, by_name))})
    for r in rows:
        r["fold"] = fold
        r["task"] = task
    return rows


def _structure(text: str) -> str:
    """A model's text with its weights removed (the structure that is learned)."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^(\s*)@?[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s+(.*)$", line)
        out.append(m.group(1) + m.group(2) if m and not line.lstrip().startswith("//") else line)
    return "\n".join(out) + "\n"


def table(rows: list[dict]) -> str:
    systems = list(dict.fromkeys(r["system"] for r in rows))
    cols = ["precision", "recall", "f1", "b3_f1", "muc_f1", "ceafe_f1"]
    lines = ["| system | folds | " + " | ".join(cols) + " | F1 per fold |", "|---" * (len(cols) + 3) + "|"]
    for s in systems:
        rs = [r for r in rows if r["system"] == s]
        folds = sorted({r["fold"] for r in rs})
        means = [np.mean([r[c] for r in rs]) for c in cols]
        per = " ".join(f"{np.mean([r['f1'] for r in rs if r['fold'] == f]):.4f}" for f in folds)
        lines.append(f"| {s} | {len(folds)} | " + " | ".join(f"{m:.4f}" for m in means) + f" | {per} |")
    return "\n".join(lines)


def _folds(text: str) -> list[int]:
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in text.split(",")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.workloads.cora_er", description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", default="1-5")
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--task", default="both", choices=("bib", "author", "both"))
    args = parser.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    tasks = ["bib", "author"] if args.task == "both" else [args.task]
    rows: list[dict] = []
    for task in tasks:
        for fold in _folds(args.folds):
            fold_rows = run_fold(fold, seeds, task)
            for r in fold_rows:
                print(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()}), flush=True)
            rows.extend(fold_rows)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "cora_er.json").write_text(json.dumps(rows, indent=1, default=float))
    for task in tasks:
        print(f"\n{'SameBib' if task == 'bib' else 'SameAuthor'}:")
        print(table([r for r in rows if r["task"] == task]))


@workload("cora-er-fold1", "Cora fold 1: set-level MLN (SampleRank + agglomerative) against the baselines")
def cora_er_fold1() -> dict:
    rows = run_fold(1, [0], "bib")
    return {r["system"].replace(" ", "_"): round(r["f1"], 4) for r in rows}


if __name__ == "__main__":
    sys.exit(main())
