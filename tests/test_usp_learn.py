"""USP's objective and its operators: the change each operator's score
predicts equals the difference of the full log-likelihoods (recounted from
the parses alone) before and after, on small corpora; USP-Learn merges
synonyms and aligns active and passive argument forms."""

import random

import numpy as np
import pytest

from markovlogic.errors import OptionError
from markovlogic.text import read_conllu_lines
from markovlogic.usp import USPOptions, USPState, build_qlf, learn_usp
from markovlogic.usp.state import Priors
from usp_corpus import toy_corpus

COMPOSE_TREE = """# sent_id = x{i}
1\tthe\tthe\tDET\t_\t_\t2\tdet\t_\t_
2\tcompany\tcompany\tNOUN\t_\t_\t3\tnsubj\t_\t_
3\ttook\ttake\tVERB\t_\t_\t0\troot\t_\t_
4\tover\tover\tADP\t_\t_\t3\tcompound:prt\t_\t_
5\tthe\tthe\tDET\t_\t_\t6\tdet\t_\t_
6\tfirm\tfirm\tNOUN\t_\t_\t3\tobj\t_\t_
7\tand\tand\tCCONJ\t_\t_\t8\tcc\t_\t_
8\ttook\ttake\tVERB\t_\t_\t3\tconj\t_\t_
9\tit\tit\tPRON\t_\t_\t8\tobj\t_\t_
10\tover\tover\tADP\t_\t_\t8\tcompound:prt\t_\t_

"""


def corpus(extra: str = "", n: int = 120, seed: int = 0):
    text = toy_corpus(n=n, seed=seed) + extra
    return build_qlf(read_conllu_lines(text.splitlines(True), "toy.conllu"))


def random_op(st: USPState, rng: random.Random, kinds: str):
    for _ in range(50):
        kind = rng.choice(kinds)
        if kind == "M":
            cs = sorted(st.n)
            if len(cs) < 2:
                continue
            a, b = rng.sample(cs, 2)
            r = st.score_merge(a, b)
            if r:
                return kind, r
        elif kind == "R":
            cs = sorted(c for c in st.n if len(st.types[c]) >= 2)
            if not cs:
                continue
            c = rng.choice(cs)
            a, b = rng.sample(sorted(st.types[c]), 2)
            r = st.score_merge_role(c, a, b)
            if r:
                return kind, r
        else:
            u = np.nonzero((st.root == np.arange(len(st.root))) & (st.ppart >= 0))[0]
            x = int(rng.choice(u.tolist()))
            r = st.score_compose(int(st.clust[st.ppart[x]]), int(st.clust[x]))
            if r:
                return kind, r
    return None


def apply(st, kind, plan):
    {"M": st.apply_merge, "R": st.apply_merge_role, "C": st.apply_compose}[kind](plan)


def test_the_objective_from_statistics_is_the_recount_from_parses():
    st = USPState(corpus(COMPOSE_TREE.format(i=1)))
    assert st.objective() == pytest.approx(st.objective_from_parses(), abs=1e-8)


@pytest.mark.parametrize("kinds,seed", [("M", 1), ("C", 2), ("R", 3), ("MMCR", 4), ("CCMR", 5)])
def test_operator_scores_are_exact_changes_of_the_log_likelihood(kinds, seed):
    extra = "".join(COMPOSE_TREE.format(i=i) for i in range(4))
    st = USPState(corpus(extra, seed=seed), Priors(alpha=-3.0, beta=-7.0))
    rng = random.Random(seed)
    done = 0
    for _ in range(60):
        op = random_op(st, rng, kinds)
        if op is None:
            break
        kind, (delta, plan) = op
        before = st.objective_from_parses()
        apply(st, kind, plan)
        after = st.objective_from_parses()
        assert after - before == pytest.approx(delta, abs=1e-7), kind
        assert st.objective() == pytest.approx(after, abs=1e-7)
        done += 1
    assert done >= 20


def test_compose_builds_composite_forms_with_argument_paths():
    st = USPState(corpus("".join(COMPOSE_TREE.format(i=i) for i in range(3)), n=20))
    take = st.qlf.vocab.form_id("take:VERB")
    over = st.qlf.vocab.form_id("over:ADP")
    delta, plan = st.score_compose(take, over)
    c = st.apply_compose(plan)
    assert {st.core_forms[f] for f in st.F[c]} == {"take:VERB(compound:prt over:ADP)"}
    assert st.n[c] == 6 and take not in st.n            # every "take" had its particle
    forms = {st.arg_forms[f] for t in st.types[c] for f in st.AF[t]}
    assert {"nsubj", "obj", "conj:and"} <= forms
    assert st.objective() == pytest.approx(st.objective_from_parses(), abs=1e-8)


def test_conj_prior_counts_conjoined_parts_in_one_cluster():
    st = USPState(corpus(COMPOSE_TREE.format(i=1), n=10), Priors(alpha=-5.0, beta=-10.0))
    take = st.qlf.vocab.form_id("take:VERB")
    assert st.conj_same() == 1                           # "took ... and took"
    assert st.objective() == pytest.approx(st.objective_from_parses(), abs=1e-8)


def test_cached_scores_stay_valid_while_the_stamps_do():
    st = USPState(corpus("".join(COMPOSE_TREE.format(i=i) for i in range(3)), seed=7))
    rng = random.Random(7)
    cache = {}
    checked = 0
    for _ in range(40):
        for _ in range(10):
            op = random_op(st, rng, "MRC")
            if op is None:
                continue
            kind, (delta, plan) = op
            key = (kind,) + ((plan[0], plan[1]) if kind == "M" else (plan[0], plan[1], plan[2]) if kind == "R"
                             else (plan["cr"], plan["ca"]))
            names = key[1:3] if kind != "R" else key[1:2]
            cache[key] = (st.stamp(*names), delta)
        op = random_op(st, rng, "MRC")
        if op is None:
            break
        apply(st, op[0], op[1][1])
        for key, (stamp, delta) in list(cache.items()):
            kind = key[0]
            names = key[1:3] if kind != "R" else key[1:2]
            if any(c not in st.n for c in names) or st.stamp(*names) != stamp:
                del cache[key]
                continue
            r = (st.score_merge(*key[1:]) if kind == "M" else st.score_merge_role(*key[1:]) if kind == "R"
                 else st.score_compose(*key[1:]))
            if r is None:
                del cache[key]
                continue
            assert r[0] == pytest.approx(delta, abs=1e-8)
            checked += 1
    assert checked > 50


def test_learning_merges_synonyms_and_aligns_passive_with_active():
    st, stats = learn_usp(corpus(n=240), USPOptions(min_shared=2))
    assert stats.objective_end > stats.objective_start
    names = {frozenset(st.core_forms[f].split(":")[0] for f in st.F[c]) for c in st.n}
    assert frozenset({"buy", "acquire", "purchase"}) in names
    assert frozenset({"eat", "devour"}) in names
    buy = next(c for c in st.n if len(st.F[c]) == 3)
    type_forms = {frozenset(st.arg_forms[f] for f in st.AF[t]) for t in st.types[buy]}
    assert frozenset({"nsubj", "obl:by"}) in type_forms
    assert frozenset({"obj", "nsubj:pass"}) in type_forms
    assert st.objective() == pytest.approx(st.objective_from_parses(), abs=1e-6)


def test_options_are_checked():
    with pytest.raises(OptionError):
        USPOptions(alpha=1.0).check()
    with pytest.raises(OptionError):
        USPOptions(min_shared=-1).check()


def test_word_candidates_pair_verbs_that_share_argument_words_in_one_role():
    from markovlogic.usp.learn import argument_word_pairs

    q = corpus(n=240)
    st = USPState(q, Priors(-5.0, -10.0))
    pairs = argument_word_pairs(st.clust, st.ppart, st.aform, q.form, int(st.next_clust), 2, 20)
    name = {c: st.core_forms[c].split(":")[0] for c in st.n}
    named = {frozenset((name[a], name[b])) for a, b in pairs}
    assert {frozenset(p) for p in (("buy", "acquire"), ("buy", "purchase"), ("eat", "devour"))} <= named
    # companies never eat and people never buy: no such pair shares (relation, word) pairs
    assert not any({"buy", "eat"} <= p or {"acquire", "devour"} <= p for p in named)
    # a cluster left out by `eligible` is in no pair
    buy = next(c for c in st.n if name[c] == "buy")
    eligible = np.ones(int(st.next_clust) + 1, dtype=bool)
    eligible[buy] = False
    pairs2 = argument_word_pairs(st.clust, st.ppart, st.aform, q.form, int(st.next_clust), 2, 20, eligible)
    assert pairs2 and not any(buy in p for p in pairs2)


def test_learning_with_word_candidates_still_finds_the_synonyms():
    st, _ = learn_usp(corpus(n=240), USPOptions(min_shared=2, merge_candidates="words"))
    names = {frozenset(st.core_forms[f].split(":")[0] for f in st.F[c]) for c in st.n}
    assert frozenset({"buy", "acquire", "purchase"}) in names
    assert frozenset({"eat", "devour"}) in names


def test_min_merge_parts_keeps_rare_clusters_out_of_merges():
    q = corpus(n=240)
    st, _ = learn_usp(q, USPOptions(min_shared=2))
    devour = sum(1 for f in q.form.tolist() if st.core_forms[f].startswith("devour:"))
    eat = sum(1 for f in q.form.tolist() if st.core_forms[f].startswith("eat:"))
    assert 0 < devour and 0 < eat
    st2, stats = learn_usp(q, USPOptions(min_shared=2, min_merge_parts=max(devour, eat) + 1))
    names = {frozenset(st2.core_forms[f].split(":")[0] for f in st2.F[c]) for c in st2.n}
    assert frozenset({"eat", "devour"}) not in names and frozenset({"eat"}) in names
    with pytest.raises(OptionError):
        USPOptions(min_merge_parts=-1).check()
    with pytest.raises(OptionError):
        USPOptions(merge_candidates="lemmas").check()
