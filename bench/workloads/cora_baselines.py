"""Workload ``cora-baselines``: the simple things a Markov logic model for
Cora entity resolution must beat, scored like the model.

``python -m bench.workloads.cora_baselines --folds 1-5`` prints a markdown
table (per fold and mean) and writes it to ``bench/results/cora_baselines.md``
(with the figures in ``cora_baselines.json`` and every prediction as a
clusters file under ``bench/results/cora_baselines/``).

Data: ``cora/foldN/{train.db, test-evidence.db, test-truth.db}``; pair
similarities from ``bench/cora_features.py``. Every threshold is chosen on
the fold's **training** data only (pairwise F1 of the training clustering
against the training truth); the test clusterings are written as clusters
files and scored against ``test-truth.db`` by ``markovlogic.eval.evaluate``,
the code behind ``mln eval`` (pairwise figures compare the pair sets as
given; the truth files are not transitively closed; B-cubed, MUC and CEAF-e
use connected components; every test citation or author string is in the
universe, singletons included).

``SameBib`` (mentions: citations):

- ``identical title``: citations with the same ``Title`` constant together.
- ``title jaccard``: pairs whose title-word Jaccard is at least t, then
  transitive closure (connected components); t from 0.05, 0.10, ..., 1.
- ``LR + greedy CC``: an L2 logistic regression (numpy/scipy, lambda 1, the
  bias not penalised) on six pair similarities -- identical title, author,
  venue constant; title-, author-, venue-word Jaccard -- fit on every pair of
  training citations labelled by the training truth as given, then greedy
  agglomerative correlation clustering on its log-odds plus an offset (the
  merge of two clusters whose summed pair scores is largest, while positive);
  the offset from -2, -1, ..., 4 on the training data.
- ``cora-pairwise.mln (CPI)``: the example model as shipped (weights learned
  on fold 1's training data), ``mln infer --map --method cpi`` on the test
  evidence (``--no-model`` skips it).

``SameAuthor`` (mentions: author strings): ``identical name words`` (the
same set of name words, any order), ``name jaccard`` (name-word Jaccard >= t,
closure) and ``LR + greedy CC`` on six similarities: name-word Jaccard and
shared name words, initials Jaccard, and the Jaccard of the title words, the
venue words and the title constants of the citations each string is on.

``cora_tokens`` ``SameBib`` (citations as token sets, no field labels at
test time; its truth is transitively closed): ``identical front tokens``
(the same token set before Poon's first venue keyword), ``tokens jaccard``
(whole-citation token Jaccard >= t, closure) and ``LR + greedy CC`` on
token Jaccard, TF-IDF cosine, and the Jaccard of the front, back, first five
and numeric tokens.

Measured 2026-11-24, ``python -m bench.workloads.cora_baselines --folds 1-5``
(74 s for cora, ~100 s with cora_tokens, CPI included), mean over 5 folds:

    data         predicate   method                   pairP  pairR  pairF1  B3 F1  MUC F1  CEAF-e F1
    cora         SameBib     identical title          .982   .807   .885    .885   .942    .615
    cora         SameBib     title jaccard (t=.7)     .971   .952   .961    .961   .980    .816
    cora         SameBib     LR + greedy CC           .979   .957   .968    .967   .983    .852
    cora         SameBib     cora-pairwise.mln (CPI)  .974   .790   .870    .891   .959    .701
    cora         SameAuthor  identical name words     1.00   .219   .358    .616   .652    .437
    cora         SameAuthor  name jaccard (t=.35)     .966   .845   .899    .916   .923    .766
    cora         SameAuthor  LR + greedy CC           .963   .976   .969    .980   .984    .944
    cora_tokens  SameBib     identical front tokens   .997   .119   .210    .363   .671    .206
    cora_tokens  SameBib     tokens jaccard           .995   .852   .913    .920   .969    .748
    cora_tokens  SameBib     LR + greedy CC           .996   .909   .949    .950   .980    .827

The example model's weights were learned on fold 1's training data, which
holds the test citations of folds 2-5: its figures there are not held out.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from bench.cora_features import (
    Mentions,
    all_pairs,
    author_mentions,
    bib_mentions,
    pair_similarities,
    read_atoms,
    token_mentions,
    truth_pairs,
)
from bench.harness import REPO_ROOT, RESULTS_DIR, Skip, data_dir, workload



@dataclass(frozen=True)
class Task:
    """One entity-resolution task: its mentions, the field whose identical
    constant (``const``) or identical word set (``words``) is baseline (a),
    the Jaccard column of baseline (b), the features of baseline (c)."""

    dataset: str
    predicate: str
    mentions: Callable[[dict], Mentions]
    identical: tuple[str, str]
    identical_name: str
    jaccard: str
    features: tuple[str, ...]


TASKS = {
    ("cora", "SameBib"): Task(
        "cora", "SameBib", bib_mentions, ("const", "title"), "identical title", "title_jaccard",
        ("title_same", "author_same", "venue_same", "title_jaccard", "author_jaccard", "venue_jaccard")),
    ("cora", "SameAuthor"): Task(
        "cora", "SameAuthor", author_mentions, ("words", "name"), "identical name words", "name_jaccard",
        ("name_jaccard", "name_shared", "initials_jaccard", "title_jaccard", "venue_jaccard", "titles_jaccard")),
    ("cora_tokens", "SameBib"): Task(
        "cora_tokens", "SameBib", token_mentions, ("words", "front"), "identical front tokens", "tokens_jaccard",
        ("tokens_jaccard", "tokens_cosine", "front_jaccard", "back_jaccard", "first5_jaccard", "numbers_jaccard")),
}
THRESHOLDS = np.round(np.arange(0.05, 1.0001, 0.05), 2)
OFFSETS = np.arange(-2.0, 4.01, 1.0)
MODEL_PATH = REPO_ROOT / "examples" / "cora-er" / "cora-pairwise.mln"
OUT_DIR = RESULTS_DIR / "cora_baselines"
METRICS = ("pairwise", "b3", "muc", "ceafe")


# ------------------------------------------------------------------ clustering


def closure(n: int, i: np.ndarray, j: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Connected components of the pairs ``keep`` selects."""
    from markovlogic.eval.coref import clusters_from_pairs

    return clusters_from_pairs(n, i[keep], j[keep])


def greedy_correlation_clustering(scores: np.ndarray) -> np.ndarray:
    """Greedy agglomerative correlation clustering of a symmetric score
    matrix (positive: together): start from singletons, merge the two clusters
    whose summed pair scores is largest while it is positive. Each cluster's
    row of summed scores and its best partner are kept up to date, so a merge
    costs O(n) plus the rows whose best partner was merged."""
    s = np.array(scores, dtype=np.float64)
    n = len(s)
    np.fill_diagonal(s, -np.inf)
    labels = np.arange(n)
    if n < 2:
        return labels
    best = s.max(axis=1)
    arg = s.argmax(axis=1)
    while True:
        a = int(np.argmax(best))
        if best[a] <= 0:
            break
        b = int(arg[a])
        s[a] += s[b]
        s[:, a] = s[a]
        s[a, a] = -np.inf
        s[b] = -np.inf
        s[:, b] = -np.inf
        best[b] = -np.inf
        labels[labels == b] = a
        stale = (arg == a) | (arg == b)
        stale[[a, b]] = False
        if stale.any():
            rows = np.flatnonzero(stale)
            best[rows] = s[rows].max(axis=1)
            arg[rows] = s[rows].argmax(axis=1)
        better = s[:, a] > best
        best[better], arg[better] = s[better, a], a
        best[a], arg[a] = s[a].max(), s[a].argmax()
    return labels


def logistic_regression(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> np.ndarray:
    """Weights (last: bias) of an L2-regularised logistic regression (L-BFGS)."""
    xb = np.hstack([x, np.ones((len(x), 1))])

    def loss(w):
        z = xb @ w
        value = np.sum(np.logaddexp(0.0, z) - y * z) + 0.5 * l2 * np.sum(w[:-1] ** 2)
        grad = xb.T @ (1.0 / (1.0 + np.exp(-z)) - y)
        grad[:-1] += l2 * w[:-1]
        return value, grad

    return minimize(loss, np.zeros(xb.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": 5000}).x


def score_matrix(n: int, i: np.ndarray, j: np.ndarray, z: np.ndarray) -> np.ndarray:
    s = np.zeros((n, n))
    s[i, j] = z
    s[j, i] = z
    return s


# ------------------------------------------------------------------ one fold


class Split:
    """Mentions, all their pairs, the pair similarities and the truth (pairs as listed)."""

    def __init__(self, atoms: dict, task: Task, truth_atoms: dict | None = None):
        from markovlogic.eval.coref import Pairs

        predicate = task.predicate
        self.mentions: Mentions = task.mentions(atoms)
        n = len(self.mentions)
        self.n = n
        self.i, self.j = all_pairs(n)
        self.frame = pair_similarities(self.mentions, self.i, self.j)
        ti, tj = truth_pairs(truth_atoms if truth_atoms is not None else atoms, predicate, self.mentions)
        self.truth = Pairs.from_arrays(n, ti, tj)
        self.y = np.isin(self.i * n + self.j, self.truth.keys)

    def pairwise_f1(self, labels: np.ndarray) -> float:
        from markovlogic.eval.coref import pairwise

        return pairwise(labels, self.truth).f1


def identical(split: Split, task: Task) -> np.ndarray:
    """Clusters of mentions with the same constant, or the same (non-empty) word set, in one field."""
    import pandas as pd

    kind, name = task.identical
    f = split.mentions.fields[name]
    if kind == "const":
        key = np.where(f.const == None, np.arange(split.n).astype(str), f.const)  # noqa: E711
    else:
        w = f.words.tocsr()
        key = np.array([",".join(map(str, sorted(w.indices[w.indptr[k]:w.indptr[k + 1]]))) or f"#{k}"
                        for k in range(split.n)], dtype=object)
    return pd.factorize(key)[0]


def choose(values, labels_of, split: Split) -> tuple[float, float]:
    """The value whose training clustering has the best pairwise F1 (first on ties)."""
    scored = [(split.pairwise_f1(labels_of(v)), float(v)) for v in values]
    f1, value = max(scored, key=lambda t: (t[0], -t[1]))
    return value, f1


def run_fold(fold: int, tasks=tuple(TASKS.values()), model: bool = True) -> list[dict]:
    """Every baseline of one fold: a row of figures per (dataset, predicate, method)."""
    from markovlogic.eval import clusters_from_labels, evaluate, write_clusters

    OUT_DIR.mkdir(parents=True, exist_ok=True)
    rows = []
    cache: dict[str, tuple] = {}
    for task in tasks:
        folder = data_dir() / task.dataset / f"fold{fold}"
        for name in ("train.db", "test-evidence.db", "test-truth.db"):
            if not (folder / name).is_file():
                raise Skip(f"missing {folder / name}")
        if task.dataset not in cache:
            cache[task.dataset] = (read_atoms(folder / "train.db"), read_atoms(folder / "test-evidence.db"),
                                   read_atoms(folder / "test-truth.db"))
        train_atoms, test_atoms, test_truth = cache[task.dataset]
        predicate = task.predicate

        def score(method: str, labels: np.ndarray, **extra) -> None:
            slug = method.split()[0].lower().replace("(", "").replace(".", "-")
            path = OUT_DIR / f"{task.dataset}.{predicate}.{slug}.fold{fold}.clusters"
            write_clusters(path, {predicate: clusters_from_labels(list(test.mentions.names), labels)})
            figures = evaluate(path, folder / "test-truth.db", [predicate], equivalence=[predicate])
            rows.append(_row(fold, task.dataset, predicate, method, figures, **extra))

        start = time.perf_counter()
        train = Split(train_atoms, task)
        test = Split(test_atoms, task, truth_atoms=test_truth)
        # (a) identical constant / word set
        score(task.identical_name, identical(test, task), train_f1=train.pairwise_f1(identical(train, task)))
        # (b) Jaccard threshold, then closure
        col = task.jaccard
        t, f1 = choose(THRESHOLDS, lambda v: closure(train.n, train.i, train.j, train.frame[col].to_numpy() >= v),
                       train)
        score(col.split("_")[0] + " jaccard", closure(test.n, test.i, test.j, test.frame[col].to_numpy() >= t),
              chosen=t, train_f1=f1)
        # (c) logistic regression on pair similarities, greedy correlation clustering
        cols = list(task.features)
        w = logistic_regression(train.frame[cols].to_numpy(), train.y.astype(float))
        z_train = train.frame[cols].to_numpy() @ w[:-1] + w[-1]
        s_train = score_matrix(train.n, train.i, train.j, z_train)
        off, f1 = choose(OFFSETS, lambda o: greedy_correlation_clustering(s_train + o * (1 - np.eye(train.n))), train)
        z_test = test.frame[cols].to_numpy() @ w[:-1] + w[-1] + off
        score("LR + greedy CC", greedy_correlation_clustering(score_matrix(test.n, test.i, test.j, z_test)),
              chosen=off, train_f1=f1, weights=[round(float(v), 3) for v in w])
        rows[-1]["seconds"] = round(time.perf_counter() - start, 2)
        if model and (task.dataset, predicate) == ("cora", "SameBib"):
            rows.append(run_model(fold, folder))
    return rows


def run_model(fold: int, folder: Path) -> dict:
    """The example model cora-pairwise.mln, CPI MAP on the test evidence, scored by mln eval's code."""
    from markovlogic import MLN, Database
    from markovlogic.eval import evaluate
    from markovlogic.io import write_text_atomic

    if not MODEL_PATH.is_file():
        raise Skip(f"missing {MODEL_PATH}")
    mln = MLN.from_file(MODEL_PATH)
    evidence = Database.from_file(folder / "test-evidence.db", mln=mln)
    start = time.perf_counter()
    answer = mln.map(evidence, queries="SameBib", method="cpi", max_seconds=600.0)
    seconds = time.perf_counter() - start
    path = OUT_DIR / f"cora.SameBib.cora-pairwise-cpi.fold{fold}.result"
    write_text_atomic(path, answer.to_alchemy())
    figures = evaluate(path, folder / "test-truth.db", ["SameBib"], mln=mln)
    return _row(fold, "cora", "SameBib", "cora-pairwise.mln (CPI)", figures, seconds=round(seconds, 2),
                optimal=bool(answer.optimal))


def _row(fold: int, dataset: str, predicate: str, method: str, figures: dict, **extra) -> dict:
    row = {"fold": fold, "dataset": dataset, "predicate": predicate, "method": method}
    for m in METRICS:
        for k in ("precision", "recall", "f1"):
            row[f"{m}_{k}"] = figures[f"{m}_{k}"]
    row.update(constants=figures["constants"], true_clusters=figures["true_clusters"],
               predicted_clusters=figures["predicted_clusters"])
    row.update(extra)
    return row


# ------------------------------------------------------------------ tables


def _key(r: dict) -> tuple[str, str, str]:
    return r["dataset"], r["predicate"], r["method"]


def markdown(rows: list[dict]) -> str:
    """The mean table (per fold pairwise F1 at the end), then every fold."""
    folds = sorted({r["fold"] for r in rows})
    order = list(dict.fromkeys(_key(r) for r in rows))
    means = ("pairwise_precision", "pairwise_recall", "pairwise_f1", "b3_precision", "b3_recall", "b3_f1",
             "muc_f1", "ceafe_f1")
    out = [f"Cora entity resolution: baselines with thresholds chosen on each fold's training data; "
           f"mean over folds {', '.join(map(str, folds))}", "",
           "| data | predicate | method | pairwise P | pairwise R | pairwise F1 | B3 P | B3 R | B3 F1 | MUC F1 "
           "| CEAF-e F1 |" + "".join(f" F1 fold{f} |" for f in folds),
           "|---|---|---|" + "---:|" * (len(means) + len(folds))]
    for key in order:
        mine = {r["fold"]: r for r in rows if _key(r) == key}
        cells = " | ".join(f"{np.mean([r[k] for r in mine.values()]):.3f}" for k in means)
        per_fold = "".join(f" {mine[f]['pairwise_f1']:.3f} |" if f in mine else " - |" for f in folds)
        out.append(f"| {' | '.join(key)} | {cells} |{per_fold}")
    out += ["", "Per fold (t: the Jaccard threshold or the log-odds offset chosen on the training data; "
            "train F1: the pairwise F1 it reached there)", "",
            "| data | predicate | method | fold | t | train F1 | pairwise P | pairwise R | pairwise F1 | B3 F1 "
            "| MUC F1 | CEAF-e F1 | clusters true/pred |",
            "|---|---|---|" + "---:|" * 10]
    for key in order:
        for r in sorted((r for r in rows if _key(r) == key), key=lambda r: r["fold"]):
            t = f"{r['chosen']:g}" if "chosen" in r else "-"
            tf = f"{r['train_f1']:.3f}" if "train_f1" in r else "-"
            out.append(f"| {' | '.join(key)} | {r['fold']} | {t} | {tf} | {r['pairwise_precision']:.3f} | "
                       f"{r['pairwise_recall']:.3f} | {r['pairwise_f1']:.3f} | {r['b3_f1']:.3f} | {r['muc_f1']:.3f} | "
                       f"{r['ceafe_f1']:.3f} | {r['true_clusters']}/{r['predicted_clusters']} |")
    return "\n".join(out) + "\n"


def _folds(text: str) -> list[int]:
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in text.split(",")]


def run_all(folds: list[int], datasets=("cora", "cora_tokens"), model: bool = True) -> list[dict]:
    tasks = tuple(t for t in TASKS.values() if t.dataset in datasets)
    rows = []
    for fold in folds:
        rows += run_fold(fold, tasks, model=model)
    return rows


@workload("cora-baselines", "Cora folds 1-5: identical title, title Jaccard + closure, LR + greedy correlation "
          "clustering (SameBib, SameAuthor; cora_tokens SameBib), thresholds from training data; mean "
          "pairwise/B3/MUC/CEAF-e F1", timeout=1800.0)
def cora_baselines() -> dict:
    rows = run_all([1, 2, 3, 4, 5], model=False)
    figures = {}
    for key in dict.fromkeys(_key(r) for r in rows):
        name = f"{key[0]}_{key[1]}_{key[2].split()[0].lower()}"
        for m in ("pairwise_f1", "b3_f1", "muc_f1", "ceafe_f1"):
            figures[f"{name}_{m}"] = round(float(np.mean([r[m] for r in rows if _key(r) == key])), 4)
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Cora entity resolution baselines")
    parser.add_argument("--folds", default="1-5", help="e.g. 1, 1-5, 1,3")
    parser.add_argument("--datasets", default="cora,cora_tokens", help="cora, cora_tokens or both")
    parser.add_argument("--no-model", action="store_true", help="skip the example model (CPI)")
    args = parser.parse_args(argv)
    rows = run_all(_folds(args.folds), datasets=tuple(args.datasets.split(",")), model=not args.no_model)
    text = markdown(rows)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / "cora_baselines.md").write_text(text)
    (RESULTS_DIR / "cora_baselines.json").write_text(json.dumps(rows, indent=1, default=float) + "\n")
    print(text)
    print(f"written to {RESULTS_DIR / 'cora_baselines.md'}")


if __name__ == "__main__":
    main()
