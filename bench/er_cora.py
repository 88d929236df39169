"""Cora's two entity-resolution tasks in the layout of ``../shared/data/er``,
so that ``bench/workloads/er.py`` runs its baselines and the recipe on them
with no code of their own:

* ``cora_samebib``: the citations (bibs) of ``../shared/data/cora``, fields
  ``author`` (the citation's author names), ``title``, ``venue`` (the words
  of their constants: ``Title_weakly_learning_...`` -> ``weakly learning
  ...``); gold clusters the connected components of the ``SameBib`` truth;
* ``cora_sameauthor``: author disambiguation, one record per author name
  constant of a fold (``Author_blum_a_`` -> ``blum a``), fields ``name``,
  ``coauthors`` (the other authors of its citations), ``titles`` and
  ``venues`` (of its citations); gold the components of ``SameAuthor``;
* ``cora_tokens``: the same 1,295 citations with the text of their fields
  (``../shared/data/cora_tokens/records.tsv``: Bilenko's field strings
  matched to Cora's bibs), fields ``author``, ``title``, ``venue`` (strings
  as published, lower-cased), ``year`` (its four digits) and ``pages`` (its
  numbers: ``pp. 322-331`` -> ``322-331``); gold
  its ``cluster`` column (the closure of Cora's ``SameBib``); the same folds.

Folds are Cora's five (a fold's records are the constants of its
``test-evidence.db``; the truth its ``test-truth.db``), so "train on the
other folds" means four. Cora's truth is not transitively closed; the
clusters here are its closure (so pairwise figures can differ from
``bench/workloads/cora_er.py``, which compares the pair sets as given).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from bench.harness import REPO_ROOT

CORA = REPO_ROOT.parent / "shared" / "data" / "cora"
CORA_TOKENS = REPO_ROOT.parent / "shared" / "data" / "cora_tokens"
TOKEN_FIELDS = ("author", "title", "venue", "year", "pages")
_ATOM = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\(([^,()]+),([^()]+)\)\s*$")


def _text(const: str) -> str:
    return re.sub(r"^(Author|Title|Venue|Word)_", "", const).replace("_", " ").strip()


def _atoms(path: Path) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _ATOM.match(line)
        if m:
            out.setdefault(m.group(1), []).append((m.group(2).strip(), m.group(3).strip()))
    return out


def _components(ids: list[str], pairs: list[tuple[str, str]]) -> list[str]:
    index = {r: i for i, r in enumerate(ids)}
    a = [index[x] for x, y in pairs if x in index and y in index]
    b = [index[y] for x, y in pairs if x in index and y in index]
    g = coo_matrix((np.ones(len(a)), (a, b)), shape=(len(ids), len(ids)))
    _, lab = connected_components(g, directed=False)
    return [f"C{k:05d}" for k in lab]


def _write(out: Path, records: pd.DataFrame, gold: list[str], folds: list[int], text_fields: list[str],
           value_fields: tuple[str, ...] = (), origin: str = "Cora in the layout of ../shared/data/er "
           "(bench/er_cora.py)") -> None:
    from markovlogic.derive.records import Field, records_to_db_text

    out.mkdir(parents=True, exist_ok=True)
    records.to_csv(out / "records.csv", index=False)
    pd.DataFrame({"id": records["id"], "cluster": gold}).to_csv(out / "gold.csv", index=False)
    pd.DataFrame({"id": records["id"], "fold": folds}).to_csv(out / "folds.csv", index=False)
    fields = [Field(c, "text", c[:1].upper() + c[1:]) for c in text_fields]
    values = [Field(c, "value", c[:1].upper() + c[1:]) for c in value_fields]
    schema = [f"// {origin}"]
    schema += [f"HasWord{f.predicate}(record, word)" for f in fields]
    schema += [f"{f.predicate}(record, {f.column})" for f in values] + ["equivalence Same(record, record)"]
    fields = fields + values
    (out / "schema.mln").write_text("\n".join(schema) + "\n", encoding="utf-8")
    folds = np.asarray(folds)
    for k in sorted(set(folds.tolist())):
        d = out / f"fold{k}"
        d.mkdir(exist_ok=True)
        text, _, _ = records_to_db_text(records[folds == k], "id", fields)
        (d / "test-evidence.db").write_text(text, encoding="utf-8")


def make_tokens(out: Path, src: Path = CORA_TOKENS) -> Path | None:
    """Write ``cora_tokens`` at ``out`` (once); None when the data is missing."""
    out = Path(out)
    if (out / "records.csv").exists():
        return out
    if not (src / "records.tsv").exists():
        return None
    t = pd.read_csv(src / "records.tsv", sep="\t", dtype=str, keep_default_na=False)
    recs = pd.DataFrame({"id": t["bib"]})
    for c in TOKEN_FIELDS:
        v = t[c].str.strip()
        if c == "year":
            v = v.str.extract(r"((?:18|19|20)\d\d)", expand=False).fillna("")
        elif c == "pages":          # the page numbers alone: "pp. 322-331" and "322--331" are one value
            v = v.str.findall(r"\d+").str.join("-")
        else:
            v = v.str.strip(" ,.;:'`\"()")
        recs[c] = v
    folds = [int(f[4:]) for f in t["fold"]]
    text = [c for c in TOKEN_FIELDS if c not in ("year", "pages")]
    _write(out, recs, t["cluster"].tolist(), folds, text, ("year", "pages"))
    return out


def make(out_root: Path, cora: Path = CORA) -> list[Path]:
    """Write ``cora_samebib``, ``cora_sameauthor`` and (when its data is
    there) ``cora_tokens`` under ``out_root`` (once)."""
    out_root = Path(out_root)
    done = [out_root / "cora_samebib", out_root / "cora_sameauthor"]
    tokens = make_tokens(out_root / "cora_tokens")
    if all((d / "records.csv").exists() for d in done):
        return done + ([tokens] if tokens else [])
    bib_rows, bib_gold_pairs, bib_folds = [], [], []
    au_rows, au_pairs, au_folds = [], [], []
    for fold_dir in sorted(cora.glob("fold*")):
        k = int(fold_dir.name[4:])
        ev = _atoms(fold_dir / "test-evidence.db")
        truth = _atoms(fold_dir / "test-truth.db")
        authors: dict[str, list[str]] = {}
        for b, a in ev.get("Author", []):
            authors.setdefault(b, []).append(a)
        titles = dict(ev.get("Title", []))
        venues = dict(ev.get("Venue", []))
        bibs = sorted(set(authors) | set(titles) | set(venues), key=lambda s: (len(s), s))
        for b in bibs:
            bib_rows.append({"id": b, "author": "; ".join(_text(a) for a in authors.get(b, [])),
                             "title": _text(titles.get(b, "")), "venue": _text(venues.get(b, ""))})
            bib_folds.append(k)
        bib_gold_pairs += truth.get("SameBib", [])
        # authors of this fold: one record per name constant
        by_author: dict[str, list[str]] = {}
        for b, names in authors.items():
            for a in names:
                by_author.setdefault(a, []).append(b)
        for a in sorted(by_author):
            bs = by_author[a]
            co = sorted({_text(x) for b in bs for x in authors.get(b, []) if x != a})
            au_rows.append({"id": f"F{k}_{a}", "name": _text(a), "coauthors": "; ".join(co),
                            "titles": " ".join(sorted({_text(titles.get(b, '')) for b in bs})),
                            "venues": " ".join(sorted({_text(venues.get(b, '')) for b in bs}))})
            au_folds.append(k)
        au_pairs += [(f"F{k}_{x}", f"F{k}_{y}") for x, y in truth.get("SameAuthor", [])]
    bib = pd.DataFrame(bib_rows)
    _write(done[0], bib, _components(bib["id"].tolist(), bib_gold_pairs), bib_folds, ["author", "title", "venue"])
    au = pd.DataFrame(au_rows)
    _write(done[1], au, _components(au["id"].tolist(), au_pairs), au_folds, ["name", "coauthors", "titles", "venues"])
    return done + ([tokens] if tokens else [])
