"""OntoUSP: the scores of ABSTRACT and ADDCHILD are the exact changes of the
smoothed objective; smoothed weights are distributions; the ontology file."""

from math import exp

import pytest

from markovlogic.text import read_conllu_lines
from markovlogic.usp import OntoOptions, USPModel, USPOptions, build_qlf, learn_ontology, learn_usp, ontology_text
from markovlogic.usp.onto import OntoState, head_pairs
from usp_corpus import PEOPLE, sentence, toy_corpus

BOOKS = ["book", "novel", "poem", "letter", "paper"]


@pytest.fixture(scope="module")
def model():
    import random

    rng = random.Random(5)
    extra = "".join(sentence(rng.choice(PEOPLE), rng.choice([("read", "read"), ("peruse", "perused")]),
                             rng.choice(BOOKS), rng.random() < 0.3, obj_upos="NOUN", sid=f"r{i}",
                             when=rng.random() < 0.3) for i in range(80))
    q = build_qlf(read_conllu_lines((toy_corpus(n=240) + extra).splitlines(True), "toy.conllu"))
    st, _ = learn_usp(q, USPOptions(min_shared=2))
    return USPModel.from_state(st)


def verb_clusters(m):
    return sorted((c for c in m.n if len(m.F[c]) >= 2 and any(":VERB" in m.core_forms[f] for f in m.F[c])),
                  key=lambda c: -m.n[c])


def test_abstract_and_addchild_scores_are_exact(model):
    cs = verb_clusters(model)
    assert len(cs) == 3                                    # {buy, acquire, purchase}, {eat, devour}, {read, peruse}
    st = OntoState(model, OntoOptions(m=4.0, tp=0.05))
    before = st.objective()
    delta, pairs = st.score_abstract(cs[0], cs[1])
    assert pairs
    a = st.apply_abstract(cs[0], cs[1], pairs)
    mid = st.objective()
    assert mid - before == pytest.approx(delta, abs=1e-8)
    delta2, links = st.score_addchild(a, cs[2])
    assert links
    st.apply_addchild(a, cs[2], links)
    assert st.objective() - mid == pytest.approx(delta2, abs=1e-8)
    assert len(st.children[a]) == 3 and all(st.tparent[t] in st.props[a] for t, _ in links)


def test_learned_ontology_smooths_and_prints(model):
    cands = head_pairs(model, 2)
    cs = verb_clusters(model)
    cands += [(min(a, b), max(a, b)) for a in cs for b in cs if a < b]
    st, stats = learn_ontology(model, sorted(set(cands)), OntoOptions(min_parts=2))
    assert stats.abstracts >= 1 and stats.objective_end > stats.objective_start
    on = model.ontology
    t = next(iter(on.tparent))
    # the smoothed argument-form distribution of a child type sums to one over the values it can take
    values = set(model.AF[t]) | {int(k) for k, _ in on.dist[on.tparent[t]][0]}
    assert sum(exp(model.w_aform(t, f)) for f in values) == pytest.approx(1.0)
    model.smoothed = False
    flat = sum(exp(model.w_aform(t, f)) for f in model.AF[t])
    model.smoothed = True
    assert flat == pytest.approx(1.0)
    text = ontology_text(model)
    assert "CONCEPT A" in text and "  ISA {" in text and "PROPERTY P" in text and "CLUSTER" in text
    # roles: a child type's generic role is its property
    assert on.role(t) == on.tparent[t]
