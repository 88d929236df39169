"""Compare a result file with a truth ``.db``: what ``mln eval`` computes.

The truth is closed-world for the evaluated predicates: an atom it does not
list as true is false. Each predicate is evaluated in one of two ways.

**Ordinary predicates** (atoms): precision, recall and F1 of the atoms
predicted true (a MAP result's atoms; ``-a``'s atoms with 1; marginals at or
above 0.5) against the true atoms; for marginals also ``auc_pr`` (average
precision, :func:`~markovlogic.eval.binary.auc_pr`) and ``cll`` (mean log
probability of the true value, probabilities clipped to [1e-4, 1 - 1e-4])
over the atoms the result lists and the true atoms it does not list (those
count as probability 0).

**Equivalence predicates** (clusterings): a binary predicate is one when
``equivalence`` names it, or when the model (``mln``) holds its hard
reflexivity, symmetry and transitivity rules
(:func:`markovlogic.logic.equivalence.equivalence_predicates`), or, without a
model, when its true atoms in the truth file are symmetric; the predicates of
a clusters file always are.

- Pairs: an atom ``P(a, b)`` with ``a != b`` stands for the unordered pair
  ``{a, b}`` (either orientation, or both); reflexive atoms name their
  constant but no pair. ``precision``, ``recall`` and ``f1`` are the pairwise
  figures (also written ``pairwise_*``), comparing the pair sets as given:
  the truth's pairs need not be transitively closed, nor the result's (for
  marginals a pair's probability is the larger of its two orientations; the
  pair is predicted at >= 0.5; ``auc_pr`` and ``cll`` range over the listed
  pairs and the true ones). A clusters file predicts every pair inside a
  cluster.
- Clusters: the connected components of each side's pairs (or the clusters
  file's clusters), over one universe of constants: every constant in the
  predicate's atoms of the truth file (true or not, reflexive included) or of
  the result (for ``-a`` and marginals every listed atom, for a clusters file
  every member). A constant in no pair is a singleton; singletons count in
  B-cubed and CEAF-e (MUC ignores them). Figures ``b3_*``, ``muc_*``,
  ``ceafe_*`` (precision, recall, f1 each); ``closure_pairwise_*``, the
  pairwise figures of the clusters (the result's pairs after transitive
  closure; equal to ``pairwise_*`` when the result is closed);
  ``cluster_recall``, the fraction of true clusters that are predicted
  exactly (Poon & Domingos' measure; singletons count), and
  ``cluster_precision``, the fraction of predicted clusters that are true
  ones (``clusters_exact`` of them).

The output of :func:`evaluate` (the JSON of ``mln eval --stats-json``)::

    {"result": PATH, "truth": PATH, "format": "map" | "map-all" | "marginals" | "clusters",
     "predicates": {"SameBib": {"kind": "equivalence", "equivalence_from": "model" | "option" |
                                 "symmetric truth" | "clusters file",
                                "precision": .., "recall": .., "f1": ..,
                                "pairwise_precision": .., "pairwise_recall": .., "pairwise_f1": ..,
                                "b3_precision": .., "b3_recall": .., "b3_f1": ..,
                                "muc_precision": .., ..., "ceafe_f1": ..,
                                "closure_pairwise_precision": .., ..., "closure_pairwise_f1": ..,
                                "cluster_recall": .., "cluster_precision": .., "clusters_exact": ..,
                                "auc_pr": .., "cll": ..,            (marginals only)
                                "constants": .., "true_clusters": .., "predicted_clusters": ..,
                                "pairs_true": .., "pairs_predicted": .., "pairs_common": ..,
                                "truth_atoms": .., "result_atoms": ..},
                    "advisedBy": {"kind": "atoms", "precision": .., "recall": .., "f1": ..,
                                  "auc_pr": .., "cll": ..,          (marginals only)
                                  "true": .., "predicted": .., "common": ..,
                                  "truth_atoms": .., "result_atoms": ..}},
     "predicate": FIRST, ...every figure of the first predicate, repeated at the top level}
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ..errors import EvidenceError, MLNSyntaxError, OptionError, QueryError
from ..lang.ast import EvidenceAtom
from .binary import THRESHOLD, auc_pr, average_cll, prf_from_counts
from .coref import Pairs, clusters_from_pairs, coreference_scores
from .resultfile import AtomTable, ResultFile, read_result


def evaluate(result: str | Path | ResultFile, truth: str | Path, predicates: Sequence[str],
             equivalence: Iterable[str] = (), mln=None) -> dict:
    """Scores of ``result`` against ``truth`` for each predicate (see the module docstring)."""
    from ..model import Database

    res = result if isinstance(result, ResultFile) else read_result(result)
    if not predicates:
        raise OptionError("no predicate to evaluate (-q)")
    if not Path(truth).is_file():
        raise OptionError(f"truth file not found: {truth}")
    if mln is not None:
        for p in predicates:
            if p not in mln.predicates:
                raise QueryError(f"predicate {p} is not declared in the model")
    db = Database.from_file(Path(truth), mln=mln)
    wanted = set(predicates)
    truth_atoms: dict[str, list[EvidenceAtom]] = {p: [] for p in predicates}
    for a in db.atoms:
        if a.atom.predicate in wanted:
            truth_atoms[a.atom.predicate].append(a)
    declared_equiv = set(equivalence)
    model_equiv = set()
    if mln is not None:
        from ..logic.equivalence import equivalence_predicates

        model_equiv = equivalence_predicates(mln)

    out: dict = {"result": str(res.path), "truth": str(truth), "format": res.format, "predicates": {}}
    for pred in predicates:
        atoms = truth_atoms[pred]
        if not atoms:
            raise QueryError(f"predicate {pred} has no atom in the truth file {truth}")
        arity = _check_arity(pred, atoms, res)
        t_args = [a.atom.args for a in atoms]
        t_true = np.fromiter((a.truth is True for a in atoms), dtype=bool, count=len(atoms))
        source = None
        if res.format == "clusters":
            source = "clusters file"
        elif pred in declared_equiv:
            source = "option"
        elif mln is not None:
            source = "model" if pred in model_equiv else None
        elif arity == 2 and _symmetric(t_args, t_true):
            source = "symmetric truth"
        if source is not None and arity != 2:
            raise QueryError(f"{pred} takes {arity} arguments: only a binary predicate can be an equivalence relation")
        if source is None:
            figures = _atom_scores(t_args, t_true, res.atoms.get(pred, AtomTable()), res.format)
        else:
            figures = _equivalence_scores(pred, t_args, t_true, res)
            figures = {"kind": "equivalence", "equivalence_from": source, **figures}
        figures["truth_atoms"] = len(atoms)
        out["predicates"][pred] = figures
    first = predicates[0]
    out["predicate"] = first
    out.update(out["predicates"][first])
    return out


def _check_arity(pred: str, atoms: list[EvidenceAtom], res: ResultFile) -> int:
    arity = len(atoms[0].atom.args)
    for a in atoms:
        if len(a.atom.args) != arity:
            pos = a.pos
            raise EvidenceError(
                f"{a.atom} has {len(a.atom.args)} arguments; {pred} has {arity} elsewhere in the truth file",
                file=pos.file if pos else None, line=pos.line if pos else None, column=pos.column if pos else None)
    table = res.atoms.get(pred)
    if table is not None:
        for args, line in zip(table.args, table.lines):
            if len(args) != arity:
                raise MLNSyntaxError(f"{pred} has {len(args)} arguments here and {arity} in the truth file",
                                     file=res.path, line=line, column=1)
    if pred in res.clusters and arity != 2:
        raise MLNSyntaxError(f"{pred} has clusters in the result but {arity} arguments in the truth file",
                             file=res.path)
    return arity


def _symmetric(args: list[tuple[str, ...]], true: np.ndarray) -> bool:
    pairs = {a for a, t in zip(args, true) if t and a[0] != a[1]}
    return bool(pairs) and all((b, a) in pairs for a, b in pairs)


def _keys(args: list[tuple[str, ...]]) -> np.ndarray:
    return np.array(["\x1f".join(a) for a in args], dtype=object)


def _atom_scores(t_args, t_true: np.ndarray, table: AtomTable, fmt: str) -> dict:
    """Precision/recall/F1 over atoms (and AUC-PR, CLL for marginals)."""
    keys = np.concatenate([_keys(t_args), _keys(table.args)]) if table.args else _keys(t_args)
    import pandas as pd  # on demand: `markovlogic.eval` is imported by learning, which never needs pandas

    codes, uniques = pd.factorize(keys)
    n = len(uniques)
    is_true = np.zeros(n, dtype=bool)
    is_true[codes[: len(t_args)][t_true]] = True
    listed = np.zeros(n, dtype=bool)
    prob = np.zeros(n)
    if table.args:
        r_codes = codes[len(t_args):]
        listed[r_codes] = True
        np.maximum.at(prob, r_codes, table.value_array)
    predicted = listed & (prob >= THRESHOLD)
    common = int(np.count_nonzero(predicted & is_true))
    p, r, f = prf_from_counts(common, int(predicted.sum()), int(is_true.sum()))
    out = {"kind": "atoms", "precision": p, "recall": r, "f1": f}
    if fmt == "marginals":
        scope = listed | is_true
        out["auc_pr"] = auc_pr(prob[scope], is_true[scope])
        out["cll"] = average_cll(prob[scope], is_true[scope])
    out.update(true=int(is_true.sum()), predicted=int(predicted.sum()), common=common,
               result_atoms=len(table.args))
    return out


def _equivalence_scores(pred: str, t_args, t_true: np.ndarray, res: ResultFile) -> dict:
    """Pairwise and cluster figures of an equivalence predicate."""
    t_a = np.array([a[0] for a in t_args], dtype=object)
    t_b = np.array([a[1] for a in t_args], dtype=object)
    if res.format == "clusters":
        groups = res.clusters.get(pred, [])
        members = np.array([c for g in groups for c in g], dtype=object)
        group_of = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
        table = None
        r_a = r_b = np.empty(0, dtype=object)
    else:
        table = res.atoms.get(pred, AtomTable())
        members = np.empty(0, dtype=object)
        r_a = np.array([a[0] for a in table.args], dtype=object)
        r_b = np.array([a[1] for a in table.args], dtype=object)
    import pandas as pd

    codes, names = pd.factorize(np.concatenate([t_a, t_b, members, r_a, r_b]))
    n = len(names)
    k = len(t_a)
    ta, tb = codes[:k], codes[k:2 * k]
    m = codes[2 * k: 2 * k + len(members)]
    ra, rb = np.split(codes[2 * k + len(members):], 2)
    true_pairs = Pairs.from_arrays(n, ta[t_true], tb[t_true])
    truth_labels = true_pairs.clusters()
    out: dict = {}
    if table is None:
        # a clusters file: constants in no cluster are singletons
        labels = np.arange(n, dtype=np.int64) + len(groups)
        labels[m] = group_of
        scores = coreference_scores(labels, truth_labels, None, true_pairs)
        predicted_clusters = len(np.unique(labels))
        result_atoms = int(len(members))
    else:
        values = table.value_array
        chosen = values >= THRESHOLD
        pred_pairs = Pairs.from_arrays(n, ra[chosen], rb[chosen])
        labels = clusters_from_pairs(n, pred_pairs.i, pred_pairs.j)
        scores = coreference_scores(labels, truth_labels, pred_pairs, true_pairs)
        predicted_clusters = int(labels.max()) + 1 if n else 0
        result_atoms = len(table.args)
        if res.format == "marginals":
            out.update(_pair_ranking(n, ra, rb, values, true_pairs))
    out = {"precision": scores["pairwise_precision"], "recall": scores["pairwise_recall"],
           "f1": scores["pairwise_f1"], **scores, **out}
    out.update(constants=n, true_clusters=int(truth_labels.max()) + 1 if n else 0,
               predicted_clusters=predicted_clusters, result_atoms=result_atoms)
    return out


def _pair_ranking(n: int, ra: np.ndarray, rb: np.ndarray, values: np.ndarray, true_pairs: Pairs) -> dict:
    """AUC-PR and CLL over unordered pairs: the listed ones (probability: the
    larger of the two orientations) and the true ones (0 if not listed)."""
    keep = ra != rb
    lo = np.minimum(ra[keep], rb[keep]).astype(np.int64)
    hi = np.maximum(ra[keep], rb[keep]).astype(np.int64)
    keys, inverse = np.unique(lo * np.int64(n) + hi, return_inverse=True)
    prob = np.zeros(len(keys))
    np.maximum.at(prob, inverse.ravel(), values[keep])
    all_keys = np.union1d(keys, true_pairs.keys)
    p = np.zeros(len(all_keys))
    p[np.searchsorted(all_keys, keys)] = prob
    y = np.isin(all_keys, true_pairs.keys, assume_unique=True)
    return {"auc_pr": auc_pr(p, y), "cll": average_cll(p, y)}
