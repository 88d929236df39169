"""Inference over clusterings: the compiled model against the ground network
and against set-level features scored by hand; bad input."""

from __future__ import annotations

import numpy as np
import pytest

from markovlogic import MLN, Database
from markovlogic.cluster.model import build_cluster_model
from markovlogic.cluster.setfeatures import SetFeature
from markovlogic.errors import EvidenceError, MLNSemanticError
from markovlogic.ground import ground
from markovlogic.lang.ast import Atom, Var

DECLS = """
Title(bib, title)
HasWord(title, word)
Venue(bib, venue)
Same(bib, bib)
"""

PAIR_FORMULAS = """
1.3 Title(x, t) ^ Title(y, t) => Same(x, y)
0.7 HasWord(t1, w) ^ HasWord(t2, w) ^ Title(x, t1) ^ Title(y, t2) => Same(x, y)
-0.4 HasWord(t1, w) ^ !HasWord(t2, w) ^ Title(x, t1) ^ Title(y, t2) => Same(x, y)
0.9 !Same(x, y)
2.0 jaccard(x, y, Title, HasWord) >= 0.5 => Same(x, y)
-1.1 jaccard(x, y, Title, HasWord) < 0.2 => Same(x, y)
0.6 Venue(x, z) ^ !Venue(y, z) => !Same(x, y)
"""

EVIDENCE = """
Title(A, T1)
Title(B, T1)
Title(C, T2)
Title(D, T3)
Title(E, T4)
Title(F, T4)
HasWord(T1, W1)
HasWord(T1, W2)
HasWord(T2, W2)
HasWord(T2, W3)
HasWord(T3, W3)
HasWord(T4, W4)
HasWord(T4, W1)
HasWord(T4, W2)
Venue(A, V1)
Venue(B, V2)
Venue(C, V1)
Venue(D, V1)
Venue(E, V2)
"""


def partitions(n: int):
    """Every partition of range(n) as a label list (restricted growth strings)."""
    def rec(i, labels, k):
        if i == n:
            yield list(labels)
            return
        for c in range(k + 1):
            labels.append(c)
            yield from rec(i + 1, labels, max(k, c + 1))
            labels.pop()
    yield from rec(0, [], 0)


def _model(extra: str = "", **kw):
    mln = MLN.from_string(DECLS + PAIR_FORMULAS + extra)
    db = Database.from_string(EVIDENCE, mln=mln)
    return mln, db, build_cluster_model(mln, db, "Same", **kw)


def test_pair_features_match_the_ground_network_on_every_clustering():
    mln, db, model = _model()
    net = ground(mln, [db], None)
    index = {name: i for i, name in enumerate(net.atom_names())}
    names = model.mention_names
    diffs = []
    for labels in partitions(model.n):
        lab = np.array(labels)
        world = np.zeros(net.n_atoms, bool)
        for i, a in enumerate(names):
            for j, b in enumerate(names):
                k = index.get(f"Same({a},{b})")
                if k is not None:
                    world[k] = lab[i] == lab[j]
        diffs.append(net.score(world) - model.score(lab))
    diffs = np.array(diffs)
    assert len(diffs) == 203
    assert diffs.max() - diffs.min() < 1e-9      # equal up to one constant


def test_the_missing_word_formula_is_low_rank_minus_sparse():
    # 'a word of x's title missing from y's' is |words(x)| - shared(x, y): no n^2 join
    mln = MLN.from_string(DECLS + "1 HasWord(t1, w) ^ !HasWord(t2, w) ^ Title(x, t1) ^ Title(y, t2) => Same(x, y)\n")
    model = build_cluster_model(mln, Database.from_string(EVIDENCE, mln=mln), "Same")
    (q,) = model.quantities
    assert len(q.terms.lowrank) == 1 and q.terms.sparse is not None
    m = q.terms.dense()
    names = model.mention_names
    words = {"A": 2, "B": 2, "C": 2, "D": 1, "E": 3, "F": 3, }
    assert m[names.index("A"), names.index("D")] == words["A"]           # nothing shared
    assert m[names.index("E"), names.index("A")] == 1                    # W4 of T4 is missing from T1


def _phi(model, labels):
    """Set-level feature values (summed over clusters) of a clustering."""
    f = model.features(np.array(labels))
    return f[model.arrays.n_q:]


def _body(text: str):
    return MLN.from_string(DECLS + "1 " + text + "\n").formulas[-1].formula


def _term(text: str):
    return _body(text + " >= 0").left


def test_each_set_level_feature_kind_scored_by_hand():
    jac = _term("jaccard(x, y, Title, HasWord)")
    same_title = _body("Title(x, t) ^ Title(y, t)")
    same_venue = _body("Venue(x, z) ^ Venue(y, z)")
    features = [
        SetFeature("all", "Same", 1.0, ("x", "y"), same_title),
        SetFeature("some", "Same", 1.0, ("x", "y"), same_venue),
        SetFeature("most", "Same", 1.0, ("x", "y"), same_venue),
        SetFeature("most_not", "Same", 1.0, ("x", "y"), same_title),
        SetFeature("count", "Same", 1.0, ("x", "y"), same_venue),
        SetFeature("size", "Same", 1.0, (), op=">=", threshold=3),
        SetFeature("size", "Same", 1.0, ()),
        SetFeature("max", "Same", 1.0, ("x", "y"), term=jac),
        SetFeature("min", "Same", 1.0, ("x", "y"), term=jac),
        SetFeature("min", "Same", 1.0, ("x", "y"), term=jac, op="<", threshold=0.3),
        SetFeature("distinct", "Same", 1.0, ("x",), body=Atom("Venue", (Var("x"), Var("z"))), value_var="z"),
        SetFeature("distinct", "Same", 1.0, ("x",), body=Atom("Venue", (Var("x"), Var("z"))), value_var="z",
                   op=">=", threshold=2),
        SetFeature("some", "Same", 1.0, ("x", "y"), _body("!(Title(x, t) ^ Title(y, t))")),
    ]
    mln = MLN.from_string(DECLS)
    model = build_cluster_model(mln, Database.from_string(EVIDENCE, mln=mln), "Same", set_features=features)
    names = model.mention_names
    # clustering {A, B, C}, {D}, {E, F}
    groups = {"A": 0, "B": 0, "C": 0, "D": 1, "E": 2, "F": 2}
    phi = _phi(model, [groups[n] for n in names])
    # titles: A,B T1 {W1,W2}; C T2 {W2,W3}; D T3 {W3}; E,F T4 {W4,W1,W2}; venues A V1, B V2, C V1, D V1, E V2, F none
    # {A,B,C}: ordered pairs 6; same title: AB,BA (2); same venue: AC,CA (2)
    #   jaccard: AB 1, AC 1/3, BC 1/3 -> max 1, min 1/3; distinct venues {V1,V2} = 2
    # {D}: singleton: pair kinds 0; size 1; distinct 1
    # {E,F}: same title 2 of 2; same venue 0 of 2; jaccard EF 1; distinct {V2} = 1
    expected = [
        1,                  # all same title: {E,F} only
        1,                  # some same venue: {A,B,C}
        0,                  # most same venue: 2 of 6 in {A,B,C}, 0 of 2 in {E,F}
        1,                  # most not same title: {A,B,C} (2 of 6 < 3)
        2,                  # count of ordered same-venue pairs
        1,                  # size >= 3
        6,                  # size
        1 + 1,              # max jaccard: 1 in {A,B,C}, 1 in {E,F}
        1 / 3 + 1,          # min jaccard
        1,                  # min < 0.3: none ({A,B,C} min 1/3): 0 ... see below
        2 + 1 + 1,          # distinct venues
        1,                  # distinct venues >= 2: {A,B,C}
        1,                  # some pair with different titles: {A,B,C}
    ]
    expected[9] = 0
    assert phi == pytest.approx(expected)


def test_unlisted_pairs_count_as_zero_in_min_and_max():
    jac = _term("jaccard(x, y, Title, HasWord)")
    features = [SetFeature("min", "Same", 1.0, ("x", "y"), term=jac),
                SetFeature("max", "Same", 1.0, ("x", "y"), term=jac)]
    mln = MLN.from_string(DECLS)
    model = build_cluster_model(mln, Database.from_string(EVIDENCE, mln=mln), "Same", set_features=features)
    names = model.mention_names
    # {A, D}: titles share no word -> jaccard 0 (an unlisted pair)
    labels = [0 if n in ("A", "D") else i + 1 for i, n in enumerate(names)]
    assert _phi(model, labels) == pytest.approx([0.0, 0.0])


def test_evidence_of_the_predicate_links_and_separates():
    mln = MLN.from_string(DECLS + PAIR_FORMULAS)
    db = Database.from_string(EVIDENCE + "Same(A, D)\n!Same(E, F)\n", mln=mln)
    model = build_cluster_model(mln, db, "Same")
    names = model.mention_names
    lab = model.initial_labels
    assert lab[names.index("A")] == lab[names.index("D")]
    from markovlogic.cluster.mh import MHOptions, mh_map

    ans = mh_map(model, MHOptions(steps=20_000, anneal=2.0, temperature=0.01))
    assert ans.labels[names.index("A")] == ans.labels[names.index("D")]
    assert ans.labels[names.index("E")] != ans.labels[names.index("F")]


def test_contradicting_evidence_names_the_atoms():
    mln = MLN.from_string(DECLS + PAIR_FORMULAS)
    db = Database.from_string(EVIDENCE + "Same(A, B)\nSame(B, C)\n!Same(A, C)\n", mln=mln)
    with pytest.raises(EvidenceError, match=r"!Same\(A,C\).*Same\(A,B\) and Same\(B,C\)"):
        build_cluster_model(mln, db, "Same")


def test_an_equivalence_over_two_types_is_refused():
    mln = MLN.from_string("P(a, b)\nQ(a)\n1 Q(x) => P(x, y)\n")
    with pytest.raises(MLNSemanticError, match="two arguments of one type"):
        build_cluster_model(mln, Database(), "P")


def test_a_set_level_feature_over_a_query_predicate_is_refused():
    mln = MLN.from_string(DECLS + "Other(bib, bib)\n")
    feature = SetFeature("some", "Same", 1.0, ("x", "y"), Atom("Other", (Var("x"), Var("y"))))
    db = Database.from_string(EVIDENCE + "?Other(A, B)\n", mln=mln)
    with pytest.raises(MLNSemanticError, match="closed-world evidence"):
        build_cluster_model(mln, db, "Same", set_features=[feature])


def test_a_formula_with_two_atoms_of_the_predicate_is_refused():
    mln = MLN.from_string(DECLS + "1 Same(x, y) ^ Same(y, z) => Title(x, T1)\n")
    with pytest.raises(MLNSemanticError, match="several Same atoms"):
        build_cluster_model(mln, Database.from_string(EVIDENCE, mln=mln), "Same")
