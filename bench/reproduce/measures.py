"""The measures of Poon's thesis, chapter 3 (section 3.5.2), computed from
result files the project's commands write.

*Segmentation*: "F1 for InField" -- precision and recall of the predicted
``InField(c, f, i)`` atoms against the truth's, micro-averaged over the
atoms of a subset of citations ("Total": the three fields; or one field).
Subsets (Tables 3.3-3.4): **All** citations; **Nontrivial**, the citations of
clusters with more than one citation ("a nontrivial cluster contains more
than one citation"; needs the clusters, so not on CiteSeer here);
**Potential**, "citations with poor author-title boundary": here, a citation
whose truth has an author token directly followed by a title token with no
``HasPunc`` between them (the boundary the punctuation rules cannot see; the
thesis gives no rule, only the shares, about 9 % of CiteSeer and 21 % of
Cora).

How this differs from the citation bench's token F1
(``bench/workloads/citations.py``): the same atoms and the same micro F1, but
(1) on Cora the thesis's labels put every token of no author/title field in
the venue (``bench/reproduce/data.py``), so there is no "no field" token a
model can be penalised for labelling; (2) the subsets above; (3) MC-SAT rows
read marginals at >= 0.5 (the thesis: "we predict an atom is true if its
probability is at least 0.5").

*Entity resolution*: pairwise recall and precision of the predicted
``SameBib`` pairs (as predicted, no closure: the thesis's MLN has no
transitivity rule), and **cluster recall**, "the fraction of clusters that are
correctly output by the system after taking transitive closure from pairwise
decisions" -- ``markovlogic.eval.evaluate`` (``mln eval``) computes both.

*Error reduction* (Table 3.6): ``(F1_joint - F1_isolated) / (1 - F1_isolated)``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

FIELDS = ("Fauthor", "Ftitle", "Fvenue")
FIELD_NAMES = {"total": FIELDS, "author": ("Fauthor",), "title": ("Ftitle",), "venue": ("Fvenue",)}
_ATOM = re.compile(r"^\s*(\w+)\(([^)]*)\)\s*$")


def read_atoms(path: Path, predicates: tuple[str, ...]) -> dict[str, list[tuple[str, ...]]]:
    out: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    with open(path) as handle:
        for line in handle:
            m = _ATOM.match(line)
            if m and m.group(1) in predicates:
                out[m.group(1)].append(tuple(a.strip() for a in m.group(2).split(",")))
    return out


def result_infield(path: Path, threshold: float = 0.5) -> set[tuple[str, str, str]]:
    """InField atoms a result file predicts: a MAP result's atoms, or a
    marginals file's atoms with probability >= ``threshold``."""
    out = set()
    for line in path.read_text().splitlines():
        parts = line.split()
        if not parts:
            continue
        if len(parts) == 2 and float(parts[1]) < threshold:
            continue
        m = _ATOM.match(parts[0])
        if m and m.group(1) == "InField":
            out.add(tuple(a.strip() for a in m.group(2).split(",")))
    return out


def thresholded(marginals: Path, out: Path, threshold: float = 0.5) -> None:
    """A marginals file as a MAP-like file of its atoms at or above ``threshold``."""
    keep = [parts[0] for parts in (line.split() for line in marginals.read_text().splitlines())
            if len(parts) == 2 and float(parts[1]) >= threshold]
    out.write_text("".join(a + "\n" for a in keep))


def positions(evidence: Path) -> dict[str, list[str]]:
    """Citation -> its positions in order (along ``Next``)."""
    from markovlogic.derive.citations import position_ranks

    atoms = read_atoms(evidence, ("Token", "Next"))
    ranks = position_ranks(atoms["Next"], {p for _, p, _ in atoms["Token"]})
    per: dict[str, list[str]] = defaultdict(list)
    for _, p, c in atoms["Token"]:
        per[c].append(p)
    return {c: sorted(ps, key=ranks.__getitem__) for c, ps in per.items()}


def potential_citations(evidence: Path, truth: set[tuple[str, str, str]]) -> set[str]:
    """Citations whose true author field is followed directly by the title
    with no ``HasPunc`` at the author's last token (module docstring)."""
    order = positions(evidence)
    punc = {(c, p) for c, p in read_atoms(evidence, ("HasPunc",))["HasPunc"]}
    field = {(c, p): f for c, f, p in truth}
    out = set()
    for c, ps in order.items():
        for a, b in zip(ps, ps[1:]):
            if field.get((c, a)) == "Fauthor" and field.get((c, b)) == "Ftitle" and (c, a) not in punc:
                out.add(c)
                break
    return out


def nontrivial_citations(truth_db: Path) -> set[str] | None:
    """Citations in clusters of more than one (None without SameBib truth)."""
    pairs = read_atoms(truth_db, ("SameBib",))["SameBib"]
    if not pairs:
        return None
    return {a for a, b in pairs if a != b} | {b for a, b in pairs if a != b}


def f1_scores(predicted: set, truth: set, bibs: set[str] | None) -> dict[str, dict[str, float]]:
    """Precision/recall/F1 per field group over the atoms of ``bibs`` (all when None)."""
    out = {}
    for name, fields in FIELD_NAMES.items():
        p = {a for a in predicted if a[1] in fields and (bibs is None or a[0] in bibs)}
        t = {a for a in truth if a[1] in fields and (bibs is None or a[0] in bibs)}
        tp = len(p & t)
        prec = tp / len(p) if p else 0.0
        rec = tp / len(t) if t else 0.0
        out[name] = {"p": prec, "r": rec, "f1": 2 * prec * rec / (prec + rec) if prec + rec else 0.0,
                     "predicted": len(p), "true": len(t)}
    return out


def segmentation(result: Path, evidence: Path, truth_db: Path) -> dict:
    """F1 of InField per subset and field (the thesis's Tables 3.3-3.4)."""
    truth = {tuple(a) for a in read_atoms(truth_db, ("InField",))["InField"]}
    predicted = result_infield(result)
    subsets = {"all": None, "nontrivial": nontrivial_citations(truth_db),
               "potential": potential_citations(evidence, truth)}
    out: dict = {}
    for name, bibs in subsets.items():
        if name != "all" and bibs is None:
            out[name] = None
            continue
        out[name] = {k: v["f1"] for k, v in f1_scores(predicted, truth, bibs).items()}
        out[name]["citations"] = len(bibs) if bibs is not None else len({a[0] for a in truth})
    return out


def entity_resolution(result: Path, truth_db: Path) -> dict:
    """Pairwise recall/precision (as predicted) and cluster recall (after closure), by ``mln eval``'s code."""
    from markovlogic.eval import evaluate

    f = evaluate(result, truth_db, ["SameBib"], equivalence=["SameBib"])["predicates"]["SameBib"]
    return {"pairwise_recall": f["pairwise_recall"], "pairwise_precision": f["pairwise_precision"],
            "pairwise_f1": f["pairwise_f1"], "cluster_recall": f["cluster_recall"],
            "closure_pairwise_recall": f["closure_pairwise_recall"],
            "closure_pairwise_precision": f["closure_pairwise_precision"],
            "true_clusters": f["true_clusters"], "pairs_predicted": f["pairs_predicted"]}


def error_reduction(joint: float | None, isolated: float | None) -> float | None:
    if joint is None or isolated is None or isolated >= 1.0:
        return None
    return (joint - isolated) / (1.0 - isolated)
