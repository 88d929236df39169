"""Pair similarities for Cora entity resolution, read from the ``.db`` files.

Mentions are citations (``SameBib``: the bib constants) or author strings
(``SameAuthor``: the ``Author_...`` constants). Each mention has
**fields**; a field gives a mention at most one constant (``Title(bib, t)``)
and a set of words (``HasWordTitle(t, w)``), held as a sparse
mention x vocabulary incidence matrix. :func:`pair_similarities` computes,
for any list of pairs (all pairs, or candidate pairs from blocking), per
field: identical constant, shared words, words of one missing from the other,
Jaccard similarity, TF-IDF cosine; vectorised (sparse row products), no loop over pairs.

- :func:`bib_mentions`: fields ``title``, ``author``, ``venue`` (the
  ``Title``/``Author``/``Venue`` constants and their ``HasWord*`` words; Cora's
  folds give each citation one author string).
- :func:`token_mentions`: ``cora_tokens`` citations as token sets
  (``tokens``, ``front``, ``back``, ``first5``, ``numbers``).
- :func:`author_mentions`: fields ``name`` (the author string's words),
  ``initials`` (first letters of those words), ``title`` and ``venue`` (the
  words of the titles and venues of every citation the author string is on),
  ``titles`` (the title constants of those citations, as "words": their
  Jaccard is the overlap of the two authors' papers).

Use as evidence for a model: ``pair_similarities(...)`` is a pandas frame
``i, j, <field>_same, <field>_shared, <field>_missing, <field>_jaccard,
<field>_cosine``;
:func:`similarity_atoms` writes chosen columns, thresholded, as ``.db`` lines
(``TitleJaccardAtLeast70(b1, b2)``...).

Used by ``bench/workloads/cora_baselines.py``; the same data as
``examples/cora-er/cora-pairwise.mln``'s formulas see.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix

_ATOM = re.compile(r"^\s*(\w+)\(([^()]*)\)\s*$")


def read_atoms(path: str | Path) -> dict[str, pd.DataFrame]:
    """The true atoms of a Cora ``.db`` file (these files hold only true atoms
    with plain constants), per predicate, as frames with columns ``a, b, c...``
    (one per argument)."""
    rows: dict[str, list[tuple[str, ...]]] = {}
    for line in Path(path).read_text().splitlines():
        m = _ATOM.match(line)
        if m:
            rows.setdefault(m.group(1), []).append(tuple(x.strip() for x in m.group(2).split(",")))
    return {p: pd.DataFrame(r, columns=list("abcdefgh")[:len(r[0])]) for p, r in rows.items()}


def _bib_order(name: str) -> tuple[int, str]:
    m = re.search(r"(\d+)$", name)
    return (int(m.group(1)) if m else -1, name)


@dataclass
class Field:
    """One field of every mention: a constant (or None) and a set of words."""

    const: np.ndarray                 # object array, one constant (or None) per mention
    words: csr_matrix                 # mentions x vocabulary, 0/1
    vocabulary: list[str] = field(default_factory=list)


@dataclass
class Mentions:
    names: np.ndarray                 # object array of constants
    fields: dict[str, Field]

    def __len__(self) -> int:
        return len(self.names)

    def index(self) -> dict[str, int]:
        return {n: i for i, n in enumerate(self.names)}


def _incidence(n: int, rows: np.ndarray, words: np.ndarray) -> tuple[csr_matrix, list[str]]:
    codes, vocab = pd.factorize(pd.Series(words, dtype=object))
    m = csr_matrix((np.ones(len(rows)), (rows, codes)), shape=(n, max(len(vocab), 1)))
    m.data[:] = 1.0                   # a word listed twice counts once
    return m, list(vocab)


def _field_from_const(names_index: dict[str, int], n: int, holder: pd.DataFrame,
                      has_word: pd.DataFrame | None) -> Field:
    """``holder``: (mention, constant) rows; ``has_word``: (constant, word) rows."""
    const = np.full(n, None, dtype=object)
    idx = holder["a"].map(names_index)
    ok = idx.notna()
    const[idx[ok].astype(int).to_numpy()] = holder["b"][ok].to_numpy()
    if has_word is None or has_word.empty:
        return Field(const, csr_matrix((n, 1)))
    joined = pd.DataFrame({"m": np.flatnonzero(const != None), "c": const[const != None]}).merge(  # noqa: E711
        has_word.rename(columns={"a": "c", "b": "w"}), on="c")
    words, vocab = _incidence(n, joined["m"].to_numpy(), joined["w"].to_numpy())
    return Field(const, words, vocab)


def bib_mentions(atoms: dict[str, pd.DataFrame]) -> Mentions:
    """Citations with fields ``title``, ``author``, ``venue``."""
    bibs = set()
    for p in ("Title", "Author", "Venue"):
        if p in atoms:
            bibs.update(atoms[p]["a"])
    names = np.array(sorted(bibs, key=_bib_order), dtype=object)
    index = {n: i for i, n in enumerate(names)}
    empty = pd.DataFrame(columns=["a", "b"])
    fields = {f.lower(): _field_from_const(index, len(names), atoms.get(f, empty), atoms.get(f"HasWord{f}"))
              for f in ("Title", "Author", "Venue")}
    return Mentions(names, fields)


def author_mentions(atoms: dict[str, pd.DataFrame]) -> Mentions:
    """Author strings with fields ``name``, ``initials``, ``title``, ``venue``, ``titles``."""
    empty = pd.DataFrame(columns=["a", "b"])
    author = atoms.get("Author", empty)
    names = np.array(sorted(set(author["b"])), dtype=object)
    index = {n: i for i, n in enumerate(names)}
    n = len(names)
    words = atoms.get("HasWordAuthor", empty)
    words = words[words["a"].isin(index)]
    rows = words["a"].map(index).to_numpy()
    name_words, vocab = _incidence(n, rows, words["b"].to_numpy())
    initials = words["b"].str.replace(r"^Word_", "", regex=True).str[:1].to_numpy()
    initial_words, ivocab = _incidence(n, rows, initials)
    fields = {
        "name": Field(np.full(n, None, dtype=object), name_words, vocab),
        "initials": Field(np.full(n, None, dtype=object), initial_words, ivocab),
    }
    # context: the citations each author string is on
    bib_author = author.rename(columns={"a": "bib", "b": "author"})
    for f in ("Title", "Venue"):
        holder = atoms.get(f, empty).rename(columns={"a": "bib", "b": "c"})
        on = bib_author.merge(holder, on="bib")
        hw = atoms.get(f"HasWord{f}", empty).rename(columns={"a": "c", "b": "w"})
        ctx = on.merge(hw, on="c")
        m, v = _incidence(n, ctx["author"].map(index).to_numpy(), ctx["w"].to_numpy())
        fields[f.lower()] = Field(np.full(n, None, dtype=object), m, v)
        if f == "Title":
            m2, v2 = _incidence(n, on["author"].map(index).to_numpy(), on["c"].to_numpy())
            fields["titles"] = Field(np.full(n, None, dtype=object), m2, v2)
    return Mentions(names, fields)


def token_mentions(atoms: dict[str, pd.DataFrame]) -> Mentions:
    """Citations of ``cora_tokens`` (``Token(token, position, bib)``), with
    fields of token sets: ``tokens`` (all), ``front`` (before
    ``FirstNonAuthorTitleTkn``, Poon's first venue keyword: authors and
    title), ``back`` (from there on: venue, year...), ``first5`` (positions
    0-4: mostly author names), ``numbers`` (``IsDigit``/``IsDate`` tokens)."""
    empty = pd.DataFrame(columns=["a", "b", "c"])
    tok = atoms.get("Token", empty)
    names = np.array(sorted(set(tok["c"]), key=_bib_order), dtype=object)
    index = {n: i for i, n in enumerate(names)}
    n = len(names)
    rows = tok["c"].map(index).to_numpy()
    pos = tok["b"].str.extract(r"(\d+)$")[0].astype(int).to_numpy()
    first = atoms.get("FirstNonAuthorTitleTkn", pd.DataFrame(columns=["a", "b"]))
    boundary = np.full(n, 10**6)
    fb = first["a"].map(index)
    ok = fb.notna().to_numpy()
    boundary[fb[ok].astype(int).to_numpy()] = first["b"][ok].str.extract(r"(\d+)$")[0].astype(int).to_numpy()
    numeric = set(atoms.get("IsDigit", empty)["a"]) | set(atoms.get("IsDate", empty)["a"])
    token = tok["a"].to_numpy()
    none = np.full(n, None, dtype=object)
    fields = {}
    for name, keep in (("tokens", np.ones(len(tok), bool)), ("front", pos < boundary[rows]),
                       ("back", pos >= boundary[rows]), ("first5", pos < 5),
                       ("numbers", tok["a"].isin(numeric).to_numpy())):
        m, v = _incidence(n, rows[keep], token[keep])
        fields[name] = Field(none.copy(), m, v)
    return Mentions(names, fields)


def truth_pairs(atoms: dict[str, pd.DataFrame], predicate: str, mentions: Mentions) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs ``(i, j)`` of the predicate's true atoms among the mentions
    (as listed: reflexive atoms and both orientations included)."""
    frame = atoms.get(predicate)
    if frame is None:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    index = mentions.index()
    a, b = frame["a"].map(index), frame["b"].map(index)
    ok = a.notna() & b.notna()
    return a[ok].astype(np.int64).to_numpy(), b[ok].astype(np.int64).to_numpy()


def all_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Every unordered pair ``i < j`` of ``n`` mentions."""
    return np.triu_indices(n, 1)


def _row_overlap(m: csr_matrix, i: np.ndarray, j: np.ndarray, chunk: int = 500_000) -> np.ndarray:
    """``|words(i[k]) & words(j[k])|`` for each k (sparse elementwise products, in chunks)."""
    out = np.empty(len(i))
    for s in range(0, len(i), chunk):
        out[s:s + chunk] = np.asarray(m[i[s:s + chunk]].multiply(m[j[s:s + chunk]]).sum(axis=1)).ravel()
    return out


def pair_similarities(mentions: Mentions, i: np.ndarray, j: np.ndarray,
                      fields: Iterable[str] | None = None) -> pd.DataFrame:
    """Per pair ``(i[k], j[k])`` and field: ``_same`` (same constant, both
    present), ``_shared`` (words in both), ``_missing`` (words in one only),
    ``_jaccard`` (shared / union, 0 when both are empty), ``_cosine`` (of the
    TF-IDF vectors, idf over these mentions)."""
    i = np.asarray(i, dtype=np.int64)
    j = np.asarray(j, dtype=np.int64)
    out = {"i": i, "j": j}
    for name in (fields or mentions.fields):
        f = mentions.fields[name]
        c = f.const
        has = c != None  # noqa: E711
        out[f"{name}_same"] = (has[i] & has[j] & (c[i] == c[j])).astype(np.float64)
        size = np.asarray(f.words.sum(axis=1)).ravel()
        shared = _row_overlap(f.words, i, j)
        union = size[i] + size[j] - shared
        out[f"{name}_shared"] = shared
        out[f"{name}_missing"] = union - shared
        out[f"{name}_jaccard"] = np.divide(shared, union, out=np.zeros(len(i)), where=union > 0)
        out[f"{name}_cosine"] = _row_overlap(_tfidf(f.words), i, j)
    return pd.DataFrame(out)


def _tfidf(words: csr_matrix) -> csr_matrix:
    """Rows of 0/1 word incidence weighted by idf = log(1 + mentions / mentions with
    the word), scaled to unit length (empty rows stay 0)."""
    n = words.shape[0]
    df = np.asarray((words > 0).sum(axis=0)).ravel()
    idf = np.log1p(n / np.maximum(df, 1))
    m = csr_matrix(words.multiply(idf[None, :]))
    norm = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    scale = np.divide(1.0, norm, out=np.zeros(n), where=norm > 0)
    return csr_matrix(m.multiply(scale[:, None]))


def similarity_atoms(frame: pd.DataFrame, names: np.ndarray, column: str, threshold: float,
                     predicate: str) -> list[str]:
    """``predicate(a, b)`` and ``predicate(b, a)`` for each pair whose
    ``column`` is at least ``threshold``: evidence lines for a ``.db`` file."""
    hit = frame[frame[column] >= threshold]
    a, b = names[hit["i"].to_numpy()], names[hit["j"].to_numpy()]
    return [f"{predicate}({x},{y})" for x, y in zip(np.r_[a, b], np.r_[b, a])]
