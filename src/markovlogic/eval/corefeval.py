"""Coreference evaluation by document (``mln eval --documents`` and CoNLL-U
results): MUC, B-cubed, CEAF-e, the CoNLL F1 (their mean), pairwise figures
and the mean absolute error in the number of clusters per document, with
singletons and without them (:func:`markovlogic.eval.coref.coref_report`).

Two inputs:

* a result over an equivalence predicate (a clusters file or pair atoms, as
  ``mln eval`` reads them), a truth ``.db`` of its true pair atoms, and an
  evidence ``.db`` whose ``InDoc(mention, doc)`` atoms give every mention and
  its document: a mention no pair names is a singleton on that side (the
  truth of the GUM data lists true pairs only, so without the documents the
  singletons would be unknown);
* CoNLL-U files (or folders) with CorefUD ``Entity=`` brackets on both sides:
  mentions are matched by document, sentence and span; a mention of one side
  only is a singleton on the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ..errors import OptionError, QueryError
from .coref import Pairs, coref_report
from .resultfile import ResultFile, read_result

SUMMARY = ("muc_f1", "b3_f1", "ceafe_f1", "conll_f1", "pairwise_f1", "cluster_count_mae")


def _both(pred: np.ndarray, key: np.ndarray, docs: np.ndarray) -> dict:
    return {"singletons": coref_report(pred, key, docs, singletons=True),
            "no_singletons": coref_report(pred, key, docs, singletons=False)}


def evaluate_coref_db(result: str | Path | ResultFile, truth: str | Path, predicate: str,
                      documents: str | Path, doc_predicate: str = "InDoc") -> dict:
    """Scores of a result over ``predicate`` against the truth, by document."""
    from ..model import Database

    res = result if isinstance(result, ResultFile) else read_result(result)
    for p, what in ((truth, "truth"), (documents, "documents")):
        if not Path(p).is_file():
            raise OptionError(f"{what} file not found: {p}")
    doc_of: dict[str, str] = {}
    for a in Database.from_file(Path(documents)).atoms:
        if a.atom.predicate == doc_predicate and a.truth is True and len(a.atom.args) == 2:
            doc_of.setdefault(a.atom.args[0], a.atom.args[1])
    if not doc_of:
        raise QueryError(f"the documents file {documents} has no {doc_predicate}(mention, doc) atom")
    names = sorted(doc_of)
    idx = {m: i for i, m in enumerate(names)}
    n = len(names)
    ta, tb = [], []
    for a in Database.from_file(Path(truth)).atoms:
        if a.atom.predicate == predicate and a.truth is True:
            x, y = a.atom.args
            if x not in idx or y not in idx:
                raise QueryError(f"{predicate}({x},{y}) of the truth names a mention without {doc_predicate}")
            ta.append(idx[x])
            tb.append(idx[y])
    key = Pairs.from_arrays(n, ta, tb).clusters()
    if res.format == "clusters":
        pred = np.arange(n, dtype=np.int64) + n
        for k, group in enumerate(res.clusters.get(predicate, [])):
            for m in group:
                if m not in idx:
                    raise QueryError(f"the result's cluster {k + 1} names {m}, which has no {doc_predicate} atom")
                pred[idx[m]] = k
    else:
        table = res.atoms.get(predicate)
        ra, rb = [], []
        if table is not None:
            for args, v in zip(table.args, table.values):
                if v >= 0.5:
                    for m in args:
                        if m not in idx:
                            raise QueryError(f"the result names {m}, which has no {doc_predicate} atom")
                    ra.append(idx[args[0]])
                    rb.append(idx[args[1]])
        pred = Pairs.from_arrays(n, ra, rb).clusters()
    docs = np.array([doc_of[m] for m in names], dtype=object)
    out = {"result": str(res.path), "truth": str(truth), "documents": str(documents), "predicate": predicate,
           **_both(pred, key, pd.factorize(docs)[0])}
    return out


def evaluate_coref_conllu(result: Sequence[str | Path], key: Sequence[str | Path]) -> dict:
    """Scores of CoNLL-U ``Entity=`` clusters against a CoNLL-U key."""
    from ..derive.coref import conllu_entities

    r_spans, r_ents = conllu_entities(result)
    k_spans, k_ents = conllu_entities(key)
    spans = list(dict.fromkeys(k_spans + r_spans))
    idx = {s: i for i, s in enumerate(spans)}
    n = len(spans)
    pred = np.arange(n, dtype=np.int64) + n
    keyl = np.arange(n, dtype=np.int64) + 2 * n
    rc = pd.factorize(np.array(r_ents, dtype=object))[0] if r_ents else np.zeros(0, np.int64)
    kc = pd.factorize(np.array(k_ents, dtype=object))[0] if k_ents else np.zeros(0, np.int64)
    for s, c in zip(r_spans, rc):
        pred[idx[s]] = c
    for s, c in zip(k_spans, kc):
        keyl[idx[s]] = c
    docs = pd.factorize(np.array([s[0] for s in spans], dtype=object))[0]
    return {"result": ",".join(map(str, result)), "truth": ",".join(map(str, key)),
            "key_mentions": len(k_spans), "result_mentions": len(r_spans), "common_mentions": len(set(k_spans) & set(r_spans)),
            **_both(pred, keyl, docs)}


def is_conllu(paths: Sequence[str | Path]) -> bool:
    return bool(paths) and all(str(p).endswith((".conllu", ".conllu.gz")) or Path(p).is_dir() for p in paths)


def format_report(figures: dict) -> str:
    lines = []
    for part, label in (("singletons", "with singletons"), ("no_singletons", "without singletons")):
        f = figures[part]
        lines.append(f"{label}: " + "  ".join(
            f"{m.upper()} {100 * f[m + '_precision']:.2f}/{100 * f[m + '_recall']:.2f}/{100 * f[m + '_f1']:.2f}"
            for m in ("muc", "b3", "ceafe", "pairwise")) + f"  CoNLL F1 {100 * f['conll_f1']:.2f}")
    f = figures["singletons"]
    if "cluster_count_mae" in f:
        lines.append(f"clusters per document: gold {f['gold_clusters_per_doc']:.1f}, mean absolute error "
                     f"{f['cluster_count_mae']:.1f} ({f['documents']} documents, {f['mentions']} mentions; "
                     "precision/recall/F1 in %)")
    return "\n".join(lines)
