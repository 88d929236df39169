"""Data preparation for ``python -m bench.reproduce``: the splits and labels
the papers used, written as ordinary ``train.db`` / ``test-evidence.db`` /
``test-truth.db`` folds that the project's commands read.

* :func:`cora_cluster_folds` -- Poon's thesis, section 3.5.2: "we randomly
  split citations into three subsets so that they were distributed as evenly
  as possible and no cluster was broken apart". The 1,295 citations of
  ``../shared/data/cora_tokens`` (its 134 clusters, from ``records.tsv``) are
  split so: the clusters in a random order (``seed``), then each, largest
  first (a stable sort, so equal sizes keep the random order), to the subset
  with the fewest citations so far.
* ``thesis_labels``: "we took the original author and title fields and
  combined other fields such as booktitle, journal, pages, and publishers
  into venue": every token of a Cora citation without an ``InField`` atom
  (year, pages, publisher, editor, ... in ``cora_tokens``) gets
  ``InField(c, Fvenue, i)``.
"""

from __future__ import annotations

import csv
import random
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from bench.harness import Skip, data_dir

_ATOM = re.compile(r"^\s*(\w+)\(([^)]*)\)\s*$")
# argument holding the citation, per predicate of the citation schema (None: a global atom)
BIB_ARG = {"Token": 2, "InField": 0, "FollowBy": 0, "HasPunc": 0, "HasComma": 0, "FirstIn": 0,
           "FirstNonAuthorTitleTkn": 0, "LastInitial": 0, "Center": 0, "SameBib": 0}
TOKEN_ATOMS = ("IsAlphaChar", "IsDate", "IsDigit")      # about a token constant
QUERY = ("InField", "SameBib")


@dataclass(frozen=True)
class FoldFiles:
    name: str            # e.g. "fold1"
    train: Path
    evidence: Path
    truth: Path
    test_bibs: int
    train_bibs: int


def _atoms(path: Path):
    for line in path.read_text().splitlines():
        m = _ATOM.match(line)
        if m:
            yield m.group(1), tuple(a.strip() for a in m.group(2).split(","))


def _line(pred: str, args: tuple[str, ...]) -> str:
    return f"{pred}({','.join(args)})"


def read_citations(folder: Path) -> tuple[dict[str, list[tuple[str, tuple]]], list[tuple[str, tuple]]]:
    """Every atom of a dataset's fold (train + test evidence + test truth):
    per citation, and the global ones (positions; token kinds)."""
    per: dict[str, list] = defaultdict(list)
    glob: list = []
    seen = set()
    for name in ("train.db", "test-evidence.db", "test-truth.db"):
        for pred, args in _atoms(folder / name):
            if (pred, args) in seen:
                continue
            seen.add((pred, args))
            k = BIB_ARG.get(pred)
            if k is None:
                glob.append((pred, args))
            else:
                per[args[k]].append((pred, args))
    return per, glob


def cluster_split(clusters: dict[str, list[str]], k: int, seed: int) -> list[list[str]]:
    """Clusters (name -> citations) into ``k`` subsets of citations, whole
    clusters each, as even as possible (module docstring)."""
    names = sorted(clusters)
    random.Random(seed).shuffle(names)
    names.sort(key=lambda c: -len(clusters[c]))
    subsets: list[list[str]] = [[] for _ in range(k)]
    for c in names:
        smallest = min(range(k), key=lambda s: (len(subsets[s]), s))
        subsets[smallest].extend(clusters[c])
    return [sorted(s) for s in subsets]


def write_fold(out: Path, per: dict, glob: list, test: set[str], thesis_labels: bool,
               name: str) -> FoldFiles:
    """One fold's three files: train (every atom of the training citations),
    test evidence (the test citations' atoms but ``InField``/``SameBib``), test
    truth (their ``InField``/``SameBib``); positions, and the kinds of the
    tokens each side uses."""
    out.mkdir(parents=True, exist_ok=True)
    train_bibs = sorted(b for b in per if b not in test)
    test_bibs = sorted(b for b in per if b in test)

    def lines(bibs: list[str], query: bool, evidence: bool) -> tuple[list[str], set[str]]:
        inside = set(bibs)
        rows, tokens = [], set()
        for b in bibs:
            atoms = per[b]
            labelled = {(a[0], a[2]) for p, a in atoms if p == "InField"}
            for pred, args in atoms:
                if pred == "Token":
                    tokens.add(args[0])
                if pred in QUERY:
                    if query and (pred != "SameBib" or args[1] in inside):
                        rows.append(_line(pred, args))
                elif evidence:
                    rows.append(_line(pred, args))
            if thesis_labels and query:
                rows += [_line("InField", (args[2], "Fvenue", args[1])) for pred, args in atoms
                         if pred == "Token" and (args[2], args[1]) not in labelled]
        return rows, tokens

    train_rows, train_tokens = lines(train_bibs, True, True)
    ev_rows, test_tokens = lines(test_bibs, False, True)
    truth_rows, _ = lines(test_bibs, True, False)

    def global_rows(tokens):
        return [_line(p, a) for p, a in glob if p not in TOKEN_ATOMS or a[0] in tokens]

    files = {"train.db": global_rows(train_tokens) + train_rows,
             "test-evidence.db": global_rows(test_tokens) + ev_rows,
             "test-truth.db": truth_rows}
    for fname, rows in files.items():
        (out / fname).write_text("\n".join(rows) + "\n")
    return FoldFiles(name, out / "train.db", out / "test-evidence.db", out / "test-truth.db",
                     len(test_bibs), len(train_bibs))


def slice_fold(fold: FoldFiles, out: Path, n: int) -> FoldFiles:
    """The first ``n`` training and ``n`` test citations of a fold (smoke tests)."""
    per, glob = read_citations(fold.train.parent)
    test_all = sorted({a[2] for p, a in _atoms(fold.evidence) if p == "Token"})
    train_all = sorted(b for b in per if b not in set(test_all))
    keep = set(train_all[:n]) | set(test_all[:n])
    return write_fold(out, {b: a for b, a in per.items() if b in keep}, glob, set(test_all[:n]), False, fold.name)


def cora_clusters() -> dict[str, list[str]]:
    path = data_dir() / "cora_tokens" / "records.tsv"
    if not path.is_file():
        raise Skip(f"missing {path}")
    clusters: dict[str, list[str]] = defaultdict(list)
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            clusters[row["cluster"]].append(row["bib"])
    return clusters


def cora_cluster_folds(out: Path, k: int = 3, seed: int = 0, thesis_labels: bool = True,
                       limit: int | None = None) -> list[FoldFiles]:
    """Poon's three cluster-split folds of ``cora_tokens`` (module docstring),
    written under ``out``. ``limit``: keep only the first clusters of each
    subset up to about that many citations per subset (smoke tests)."""
    folder = data_dir() / "cora_tokens" / "fold1"
    if not (folder / "train.db").is_file():
        raise Skip(f"missing {folder}")
    clusters = cora_clusters()
    subsets = cluster_split(clusters, k, seed)
    per, glob = read_citations(folder)
    if limit is not None:
        of = {b: c for c, bs in clusters.items() for b in bs}
        kept = []
        for s in subsets:
            keep, n = [], 0
            for c in sorted({of[b] for b in s}, key=lambda c: (len(clusters[c]), c)):
                if n >= limit:
                    break
                keep += clusters[c]
                n += len(clusters[c])
            kept.append(sorted(keep))
        subsets = kept
        allowed = {b for s in subsets for b in s}
        per = {b: a for b, a in per.items() if b in allowed}
    missing = {b for s in subsets for b in s} - set(per)
    if missing:
        raise RuntimeError(f"{len(missing)} citations of records.tsv have no atoms in {folder}")
    return [write_fold(out / f"fold{n + 1}", per, glob, set(s), thesis_labels, f"fold{n + 1}")
            for n, s in enumerate(subsets)]


def given_folds(dataset: str, folds: int) -> list[FoldFiles]:
    """A dataset's own folds (``../shared/data/<dataset>/foldN``)."""
    out = []
    for n in range(1, folds + 1):
        folder = data_dir() / dataset / f"fold{n}"
        for name in ("train.db", "test-evidence.db", "test-truth.db"):
            if not (folder / name).is_file():
                raise Skip(f"missing {folder / name}")
        out.append(FoldFiles(f"fold{n}", folder / "train.db", folder / "test-evidence.db",
                             folder / "test-truth.db", -1, -1))
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.reproduce.data cora3 OUT``: write Poon's three
    cluster-split folds of ``cora_tokens`` with the thesis's labels (OUT/fold1
    ... fold3, each train.db, test-evidence.db, test-truth.db; about 2 s);
    ``--original-labels`` keeps cora_tokens' own fields."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m bench.reproduce.data", description=main.__doc__.split("\n\n")[0])
    ap.add_argument("which", choices=["cora3"])
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--original-labels", action="store_true")
    args = ap.parse_args(argv)
    try:
        folds = cora_cluster_folds(args.out, seed=args.seed, thesis_labels=not args.original_labels)
    except Skip as why:
        print(f"error: {why}", file=sys.stderr)
        return 2
    for f in folds:
        print(f"{f.name}: {f.train_bibs} training, {f.test_bibs} test citations in {f.train.parent}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
