"""``mln eval``: a result file against a truth database, per query predicate.

The truth is closed-world for the predicates evaluated: an atom the truth
database does not list as true is false.

Ordinary predicates: precision, recall and F1 of the true atoms (MAP; for
marginals, the atoms with probability >= 0.5), and for marginals the area
under the precision-recall curve and the average conditional log-likelihood
over the atoms the result lists.

Equivalence predicates (clusterings): ``precision``/``recall``/``f1`` over
unordered pairs of distinct constants as the files give them (Cora's truth
is not transitively closed; the pairs are compared as written), and the
cluster metrics over the clusters of each side (connected components of
its pairs; a clusters file gives them directly; for marginals, the pairs
with probability >= 0.5): ``pairwise_*`` (over the clusters), ``b3_*``,
``muc_*``, ``ceafe_*``. The constants are those of either side for the
predicate; a constant in no pair is a singleton.

The JSON holds one object per predicate under ``predicates`` and, at the top
level, the figures of the first predicate.
"""

from __future__ import annotations

import numpy as np

from ..errors import OptionError
from .atoms import auc_pr, average_cll, prf_sets
from .clusters import coreference_scores, labels_from_pairs, pairwise_sets
from .files import ResultFile


def _pairs(atoms) -> set[tuple[str, str]]:
    return {tuple(sorted(args)) for _, args in atoms if len(args) == 2 and args[0] != args[1]}


def evaluate_predicate(result: ResultFile, truth_true: set, predicate: str, equivalence: bool) -> dict:
    truth = {a for a in truth_true if a[0] == predicate}
    out: dict = {"predicate": predicate, "equivalence": bool(equivalence), "result_format": result.kind}
    if result.kind == "clusters":
        if not equivalence:
            raise OptionError(f"{result.path} is a clusters file, but {predicate} is not evaluated as an "
                              "equivalence predicate (add --equivalence {predicate})")
        clusters = result.clusters.get(predicate, [])
        predicted = {(predicate, (a, b)) for c in clusters for a in c for b in c}
    elif result.kind == "marginals":
        listed = {a: v for a, v in result.listed.items() if a[0] == predicate}
        predicted = {a for a, v in listed.items() if v >= 0.5}
        atoms = list(listed)
        probs = np.array([listed[a] for a in atoms])
        y = np.array([a in truth for a in atoms])
        out["auc_pr"] = auc_pr(probs, y)
        out["cll"] = average_cll(probs, y)
        out["atoms_scored"] = len(atoms)
    else:
        predicted = {a for a in result.true_atoms if a[0] == predicate}
    if not equivalence:
        out.update(prf_sets(truth, predicted))
        return out
    gold_pairs, pred_pairs = _pairs(truth), _pairs(predicted)
    s = pairwise_sets(gold_pairs, pred_pairs)
    out.update(precision=s["precision"], recall=s["recall"], f1=s["f1"],
               predicted_pairs=s["predicted_pairs"], true_pairs=s["true_pairs"])
    constants = sorted({c for _, args in truth | predicted for c in args}
                       | {c for cl in (result.clusters.get(predicate, []) if result.kind == "clusters" else [])
                          for c in cl})
    index = {c: i for i, c in enumerate(constants)}
    n = len(constants)

    def labels(pairs):
        if not pairs:
            return np.arange(n)
        r = np.array([index[a] for a, _ in pairs])
        c = np.array([index[b] for _, b in pairs])
        return labels_from_pairs(n, r, c)

    if result.kind == "clusters":
        lab = np.arange(n)
        for k, cl in enumerate(result.clusters.get(predicate, [])):
            for c in cl:
                lab[index[c]] = n + k
        pred_labels = lab
    else:
        pred_labels = labels(pred_pairs)
    out.update(coreference_scores(labels(gold_pairs), pred_labels))
    out["constants"] = n
    return out


def evaluate(result: ResultFile, truth_true: set, predicates: list[str], equivalences: set[str]) -> dict:
    if not predicates:
        raise OptionError("name the predicates to evaluate (-q)")
    known = {a[0] for a in truth_true} | result.predicates()
    for p in predicates:
        if p not in known:
            raise OptionError(f"predicate {p} is in neither the result nor the truth")
    per = {p: evaluate_predicate(result, truth_true, p, p in equivalences) for p in predicates}
    out = dict(per[predicates[0]])
    out["predicates"] = per
    return out


def symmetric_truth(truth_true: set, predicate: str) -> bool:
    """Is the predicate binary with a symmetric set of true atoms (then, with no
    model given, it is evaluated as an equivalence relation)?"""
    atoms = [args for p, args in truth_true if p == predicate]
    if not atoms or any(len(a) != 2 for a in atoms):
        return False
    s = set(atoms)
    return all((b, a) in s for a, b in s)
