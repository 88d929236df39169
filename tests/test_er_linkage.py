"""Entity resolution (issue 25): linkage features scored by hand, candidate
pairs, blocking as a hard exclusion, similarity builtins against reference
values, valued pair features, and SampleRank over the states agglomerative
inference visits."""

from __future__ import annotations

import random

import numpy as np
import pytest

from markovlogic import MLN, Database
from markovlogic.cli import main
from markovlogic.cluster.kernels import make_scratch, merge_delta, move_delta, split_delta, members
from markovlogic.cluster.model import build_cluster_model
from markovlogic.errors import OptionError
from markovlogic.learn.api import learn_model

WORDS = """
HasWord(rec, word)
Source(rec, src)
equivalence Same(rec, rec)
"""
# A B C D E: words make jaccard similarities; A, B share a source, C, D, E the other
EVIDENCE = """
HasWord(A, W1)
HasWord(A, W2)
HasWord(B, W1)
HasWord(B, W3)
HasWord(C, W1)
HasWord(C, W2)
HasWord(D, W4)
HasWord(D, W3)
HasWord(E, W5)
Source(A, S1)
Source(B, S1)
Source(C, S2)
Source(D, S2)
Source(E, S2)
"""


def _jaccard(words):
    names = sorted(words)
    n = len(names)
    m = np.zeros((n, n))
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i != j:
                u = words[a] | words[b]
                m[i, j] = len(words[a] & words[b]) / len(u) if u else 0.0
    return names, m


WORDSETS = {"A": {"W1", "W2"}, "B": {"W1", "W3"}, "C": {"W1", "W2"}, "D": {"W4", "W3"}, "E": {"W5"}}


def _model(text):
    mln = MLN.from_string(WORDS + text)
    return build_cluster_model(mln, Database.from_string(EVIDENCE, mln=mln), "Same")


def _link_values(model, labels, A_members, B_members):
    """Linkage feature values of merging the clusters holding A_members and B_members."""
    st, sc = model.new_state(np.array(labels))
    names = model.mention_names
    a = st.label[names.index(A_members[0])]
    b = st.label[names.index(B_members[0])]
    merge_delta(model.arrays, st, sc, a, b)
    base = model.arrays.n_q + len(model.arrays.sf_kind)
    return sc.dphi[base:base + len(model.arrays.lk_kind)].copy()


LINK = """
1 link sum(x, y in Same: jaccard(x, y, HasWord))
1 link max(x, y in Same: jaccard(x, y, HasWord))
1 link min(x, y in Same: jaccard(x, y, HasWord))
1 link mean(x, y in Same: jaccard(x, y, HasWord))
1 link fraction(x, y in Same: linked(x, y))
1 link count(x, y in Same: !linked(x, y))
1 link fraction(x, y in Same: HasWord(x, w) ^ HasWord(y, w) ^ Source(x, s) ^ Source(y, s))
"""


def test_each_linkage_feature_scored_by_hand():
    model = _model(LINK)
    names, jac = _jaccard(WORDSETS)
    assert model.mention_names == names
    idx = {nm: i for i, nm in enumerate(names)}
    # clusters {A, B} and {C, D}: cross pairs A-C (1.0), A-D (0), B-C (1/3), B-D (1/3)
    lab = [0, 0, 1, 1, 2]
    vals = _link_values(model, lab, ["A", "B"], ["C", "D"])
    cross = [(a, b) for a in "AB" for b in "CD"]
    linked = [jac[idx[a], idx[b]] for a, b in cross if jac[idx[a], idx[b]] > 0]   # pairs sharing a word
    assert vals[0] == pytest.approx(sum(linked))
    assert vals[1] == pytest.approx(max(linked))
    assert vals[2] == pytest.approx(min(linked))
    assert vals[3] == pytest.approx(sum(linked) / len(linked))
    assert vals[4] == pytest.approx(len(linked) / 4)                  # 3 of the 4 cross pairs are linked
    assert vals[5] == pytest.approx(4 - len(linked))                  # one is not (A-D)
    assert vals[6] == pytest.approx(0.0)                              # no cross pair shares a source
    # a split scores minus the merge of its parts; a move of B from {A, B} to {C, D}: its merge with {C, D}
    # minus its merge with {A}
    st, sc = model.new_state(np.array([0, 0, 0, 0, 2]))
    K = st.label[idx["A"]]
    k = members(st, K, st.buf)
    for t in range(k):
        st.side[st.buf[t]] = 0 if model.mention_names[st.buf[t]] in ("A", "B") else 1
    split_delta(model.arrays, st, sc, K, k)
    base = model.arrays.n_q + len(model.arrays.sf_kind)
    assert sc.dphi[base:base + 7] == pytest.approx(-vals)
    st, sc = model.new_state(np.array(lab))
    move_delta(model.arrays, st, sc, idx["B"], st.label[idx["C"]])
    b_cd = [jac[idx["B"], idx[c]] for c in "CD"]
    b_a = jac[idx["B"], idx["A"]]
    assert sc.dphi[base] == pytest.approx(sum(b_cd) - b_a)
    assert sc.dphi[base + 1] == pytest.approx(max(b_cd) - b_a)


def test_sum_linkage_with_a_per_pair_prior_is_correlation_clustering_with_an_offset():
    """``link count(x, y in Same: linked(x, y))`` counts a merge's candidate
    cross pairs: with the sum linkage it is the offset o of correlation
    clustering, a merge scoring the sum of (score + o) over its candidate cross
    pairs and the non-candidate pairs' penalty over the rest, exactly what the
    bench's "LR + correlation clustering" sums (examples/er/template.mln)."""
    o, w, pen = 0.7, 1.3, -5.0
    model = _model(f"""candidates(x, y in Same: HasWord(x, u) ^ HasWord(y, u))
{w} link sum(x, y in Same: jaccard(x, y, HasWord))
{o} link count(x, y in Same: linked(x, y))
{pen} link count(x, y in Same: !linked(x, y))
""")
    names, jac = _jaccard(WORDSETS)
    idx = {nm: i for i, nm in enumerate(names)}
    share = {(a, b): bool(WORDSETS[a] & WORDSETS[b]) for a in names for b in names}
    for labels, A, B in (([0, 0, 1, 1, 2], "AB", "CD"), ([0, 0, 1, 1, 2], "AB", "E"), ([0, 1, 1, 1, 2], "A", "BCD"),
                         ([0, 1, 2, 3, 4], "A", "C"), ([0, 0, 0, 1, 1], "ABC", "DE")):
        vals = _link_values(model, labels, list(A), list(B))
        cross = [(a, b) for a in A for b in B]
        linked = [(a, b) for a, b in cross if share[(a, b)]]
        # the sum, the candidate and the non-candidate cross pairs: weighted, sum(w * s + o) + pen * rest
        assert vals == pytest.approx([sum(jac[idx[a], idx[b]] for a, b in linked), len(linked),
                                      len(cross) - len(linked)])


def test_candidates_restrict_pairs_and_similarities():
    # candidates: records sharing W1 only; the pair feature then holds for those pairs alone
    model = _model("candidates(x, y in Same: HasWord(x, W1) ^ HasWord(y, W1))\n"
                   "1 similarity(x, y in Same: jaccard(x, y, HasWord))\n"
                   "1 jaccard(x, y, HasWord) >= 0.3 => Same(x, y)\n")
    assert model.candidate_pairs == 3                          # A-B, A-C, B-C
    names = model.mention_names
    q = model.quantities[0]
    dense = q.terms.sparse.toarray()
    i, j = names.index("B"), names.index("D")                  # share W3 but are no candidates
    assert dense[i, j] == 0.0
    assert dense[names.index("A"), names.index("C")] == pytest.approx(1.0)


def test_blocking_as_a_hard_exclusion_is_not_refused_and_holds():
    # every record in one block; different blocks never co-cluster (a dense exclusion kept low-rank)
    text = WORDS + "InBlock(rec, blk)\n1 jaccard(x, y, HasWord) >= 0.1 => Same(x, y)\n" \
        "InBlock(x, b1) ^ InBlock(y, b2) ^ !(b1 = b2) => !Same(x, y).\n"
    ev = EVIDENCE + "InBlock(A, K1)\nInBlock(B, K1)\nInBlock(C, K2)\nInBlock(D, K1)\nInBlock(E, K2)\n"
    mln = MLN.from_string(text)
    model = build_cluster_model(mln, Database.from_string(ev, mln=mln), "Same")
    answer = mln.map(Database.from_string(ev, mln=mln), queries="Same", method="agglomerative")
    (part,) = answer.parts
    lab = dict(zip(part.model.mention_names, part.labels))
    assert lab["A"] == lab["B"] and lab["A"] != lab["C"]       # A-C share W1 and W2 but not a block
    q = model.quantities[model.arrays.hard_cannot_q]
    assert q.terms.lowrank                                      # not n^2 pairs


def test_clean_clean_rule_is_low_rank_and_enforced():
    text = "1 jaccard(x, y, HasWord) >= 0.1 => Same(x, y)\nSource(x, s) ^ Source(y, s) ^ !(x = y) => !Same(x, y).\n"
    mln = MLN.from_string(WORDS + text)
    answer = mln.map(Database.from_string(EVIDENCE, mln=mln), queries="Same", method="agglomerative")
    (part,) = answer.parts
    src = {"A": 1, "B": 1, "C": 2, "D": 2, "E": 2}
    for c in part.clusters:
        assert len({src[m] for m in c}) == len(c)


@pytest.mark.parametrize("a, b, jw, lev", [
    ("MARTHA", "MARHTA", 0.961111, 1 - 2 / 6),
    ("DWAYNE", "DUANE", 0.84, 1 - 2 / 6),
    ("DIXON", "DICKSONX", 0.813333, 1 - 4 / 8),
    ("kitten", "sitting", 0.746032, 1 - 3 / 7),
])
def test_string_similarities_against_reference_values(a, b, jw, lev):
    mln = MLN.from_string("NameText(rec, text)\nequivalence Same(rec, rec)\n"
                          "1 max(x, y in Same: jarowinkler(x, y, NameText))\n"
                          "1 max(x, y in Same: levenshtein(x, y, NameText))\n")
    db = Database.from_string(f'NameText(R1, "{a}")\nNameText(R2, "{b}")\n', mln=mln)
    model = build_cluster_model(mln, db, "Same")
    phi = model.features(np.array([0, 0]))[model.arrays.n_q:]
    assert phi[0] == pytest.approx(jw, abs=1e-5)
    assert phi[1] == pytest.approx(lev, abs=1e-9)


def test_set_similarities_and_differences():
    mln = MLN.from_string("HasWord(rec, word)\nPriceNum(rec, num)\nequivalence Same(rec, rec)\n"
                          "1 max(x, y in Same: cosine(x, y, HasWord))\n"
                          "1 max(x, y in Same: containment(x, y, HasWord))\n"
                          "1 numdiff(x, y, PriceNum) <= 0.1 => Same(x, y)\n")
    ev = ("HasWord(R1, A)\nHasWord(R1, B)\nHasWord(R2, A)\nHasWord(R2, B)\nHasWord(R2, C)\nHasWord(R3, C)\n"
          'PriceNum(R1, "100")\nPriceNum(R2, "95")\nPriceNum(R3, "50")\n')
    model = build_cluster_model(mln, Database.from_string(ev, mln=mln), "Same")
    phi = model.features(np.array([0, 0, 1]))
    # idf over the 3 owners: A, B in 2 (ln(4/3)+1), C in 2 as well; R1 = {A, B}, R2 = {A, B, C}
    w = np.log(4 / 3) + 1
    assert phi[model.arrays.n_q] == pytest.approx(2 * w * w / (np.sqrt(2) * w * np.sqrt(3) * w))
    assert phi[model.arrays.n_q + 1] == pytest.approx(1.0)          # R1's words are all in R2
    q = model.quantities[0]
    assert q.terms.sparse.toarray()[0, 1] > 0                         # |100 - 95| / 100 <= 0.1
    assert q.terms.sparse.toarray()[0, 2] == 0                        # 0.5


def test_linkage_models_refuse_sampling():
    mln = MLN.from_string(WORDS + LINK)
    db = Database.from_string(EVIDENCE, mln=mln)
    with pytest.raises(OptionError, match="scores merges"):
        mln.infer(db, queries="Same", method="mh")
    assert mln.map(db, queries="Same").parts[0].stats["merges"] >= 1    # agglomerative, the default


# ---------------------------------------------------------------- learning


def _chains(seed=0, n_ent=10, size=8, weak_per=2):
    """Entities are chains of strongly linked mentions; each mention has weak links
    to mentions of other entities."""
    rnd = random.Random(seed)
    lines, truth, ents = [], [], []
    rid = 0
    for _ in range(n_ent):
        mem = [f"M{rid + k}" for k in range(size)]
        rid += size
        ents.append(mem)
        lines += [f"Strong({a},{b})" for a, b in zip(mem, mem[1:])]
        truth += [f"Same({mem[i]},{mem[j]})" for i in range(size) for j in range(i + 1, size)]
    ent_of = {m: i for i, mem in enumerate(ents) for m in mem}
    allm = list(ent_of)
    for m in allm:
        for _ in range(weak_per):
            o = rnd.choice(allm)
            if ent_of[o] != ent_of[m]:
                lines.append(f"Weak({m},{o})")
    return "\n".join(lines + truth) + "\n"


CHAIN_MODEL = """Strong(m, m)
Weak(m, m)
equivalence Same(m, m)
0 Strong(x, y) => Same(x, y)
0 Weak(x, y) => Same(x, y)
0 !Same(x, y)
"""


def _agglomerative_f1(learned, text):
    from markovlogic.learn.merge_rank import f1_of, pair_counts

    mln = learned.mln
    db = Database.from_string("\n".join(l for l in text.splitlines() if not l.startswith("Same")) + "\n", mln=mln)
    (part,) = mln.map(db, queries="Same", method="agglomerative").parts
    gold = {}
    for line in text.splitlines():
        if line.startswith("Same("):
            a, b = line[5:-1].split(",")
            gold.setdefault(a, a)
    truth = Database.from_string(text, mln=mln)
    model = build_cluster_model(mln, truth, "Same", truth=True)
    order = {nm: i for i, nm in enumerate(model.mention_names)}
    labels = np.zeros(model.n, np.int64)
    for i, nm in enumerate(part.model.mention_names):
        labels[order[nm]] = part.labels[i]
    return f1_of(pair_counts(labels, model.gold_labels))


def test_merge_ranking_reaches_zero_training_loss_where_mh_samplerank_does_not():
    text = _chains()
    mln = MLN.from_string(CHAIN_MODEL)
    db = Database.from_string(text, mln=mln)
    new = learn_model(mln, db, query_predicates=["Same"], method="samplerank", inference="agglomerative")
    assert new.result.stats["final_train_loss"] == pytest.approx(0.0)
    assert _agglomerative_f1(new, text) == pytest.approx(1.0)
    old = learn_model(mln, db, query_predicates=["Same"], method="samplerank", inference="mh")
    assert _agglomerative_f1(old, text) < 0.9


def test_merge_ranking_reports_the_loss_of_the_model_it_returns():
    text = _chains(seed=1, n_ent=6, size=5)
    mln = MLN.from_string(CHAIN_MODEL)
    for update in ("perceptron", "mira", "logistic"):
        learned = learn_model(mln, Database.from_string(text, mln=mln), query_predicates=["Same"], method="samplerank",
                              inference="agglomerative", update=update, epochs=2)
        f1 = _agglomerative_f1(learned, text)
        assert learned.result.stats["final_train_pairwise_f1"] == pytest.approx(f1, abs=1e-9)


def test_pair_layer_is_a_logistic_model_and_linkage_weights_are_learned(tmp_path):
    text = _chains(seed=2, n_ent=8, size=6)
    model = CHAIN_MODEL + "0 link max(x, y in Same: score(x, y))\n0 link sum(x, y in Same: score(x, y))\n" \
        "0 size(Same) > 0\n"
    mln = MLN.from_string(model)
    learned = learn_model(mln, Database.from_string(text, mln=mln), query_predicates=["Same"], method="samplerank")
    stats = learned.result.stats
    assert stats["pair_layer_parameters"] == 3
    assert stats["final_train_loss"] == pytest.approx(0.0)
    weights = {f.kind: f.weight for f in learned.mln.set_features if f.link}
    assert set(weights) == {"max", "sum"}
    strong = [f for f in learned.mln.formulas if "Strong" in str(f.formula)][0]
    assert strong.weight > 0


def test_merge_rank_options_checked():
    mln = MLN.from_string(CHAIN_MODEL)
    db = Database.from_string(_chains(n_ent=3, size=3), mln=mln)
    with pytest.raises(OptionError, match="applies to samplerank --inference mh"):
        learn_model(mln, db, query_predicates=["Same"], method="samplerank", inference="agglomerative", temperature=0.5)
    with pytest.raises(OptionError, match="unknown update"):
        learn_model(mln, db, query_predicates=["Same"], method="samplerank", inference="agglomerative", update="mira++")
    with pytest.raises(OptionError, match="unknown linkage"):
        learn_model(mln, db, query_predicates=["Same"], method="samplerank", inference="agglomerative",
                    linkage="single")
    with pytest.raises(OptionError, match="agglomerative .* or mh"):
        learn_model(mln, db, query_predicates=["Same"], method="samplerank", inference="gibbs")


# ---------------------------------------------------------------- records to evidence


CSV = '''id,source,name,price,phone,when
R1,shop a,"Caf\u00e9 ""Le Monde""",12.65,404/231-1368,1999-01-02
R2,shop b,"cafe le monde, bar","$1,200",404-231-1368,
R3,shop a,,,,2001
'''


def test_records_to_evidence_quoting_missing_values_and_unicode(tmp_path):
    src = tmp_path / "records.csv"
    src.write_text(CSV, encoding="utf-8")
    out = tmp_path / "ev.db"
    schema = tmp_path / "schema.mln"
    assert main(["derive", "--records", str(src), "--id", "id", "--fields",
                 "name,price:number,phone:digits:Phone,when:year", "--source", "source",
                 "--block", "name", "--max-df", "5", "--schema", str(schema), "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "HasWordName(R1,W_cafe)" in text and "HasWordName(R2,W_cafe)" in text     # é folded to e
    assert 'NameText(R1,"Caf\u00e9 \\"Le Monde\\"")' in text                            # quotes escaped
    assert "Price(R1,V_12_65)" in text and 'PriceNum(R1,"12.65")' in text
    assert "Price(R2,V_1200)" in text                                                  # $ and , dropped
    assert "Phone(R1,V_4042311368)" in text and "Phone(R2,V_4042311368)" in text
    assert "When(R1,V_1999)" in text and "When(R3,V_2001)" in text
    assert "R3" not in "".join(l for l in text.splitlines() if l.startswith(("HasWordName", "Price", "Phone")))
    assert "Source(R1,S_shop_a)" in text
    assert "BlockKey(R1,W_cafe)" in text and "BlockKey(R2,W_bar)" not in text          # df 1: no pair
    # the evidence and the declarations load together
    mln = MLN.from_string(schema.read_text(encoding="utf-8") + "equivalence Same(record, record)\n")
    Database.from_string(text, mln=mln)


def test_records_to_evidence_errors(tmp_path, capsys):
    src = tmp_path / "records.csv"
    src.write_text("id,name\nR1,a\nR1,b\n", encoding="utf-8")
    out = tmp_path / "ev.db"
    assert main(["derive", "--records", str(src), "--id", "id", "--fields", "name", "-o", str(out)]) == 2
    assert "duplicate record id 'R1'" in capsys.readouterr().err and not out.exists()
    assert main(["derive", "--records", str(src), "--id", "id", "--fields", "nom", "-o", str(out)]) == 2
    assert "no column 'nom'" in capsys.readouterr().err
    assert main(["derive", "--records", str(src), "--id", "id", "--fields", "name:colour", "-o", str(out)]) == 2
    assert "unknown kind 'colour'" in capsys.readouterr().err
    assert main(["derive", "--records", str(tmp_path / "none.csv"), "--id", "id", "--fields", "name",
                 "-o", str(out)]) == 2
    assert main(["derive", "--records", str(src), "--id", "id", "--fields", "name", "-o", str(src)]) == 2
    assert src.read_text(encoding="utf-8").startswith("id,name")                       # never overwritten


def test_the_recipe_template_fills_and_parses(tmp_path):
    from pathlib import Path

    src = tmp_path / "records.csv"
    src.write_text(CSV, encoding="utf-8")
    template = Path(__file__).resolve().parents[1] / "examples" / "er" / "template.mln"
    model = tmp_path / "model.mln"
    assert main(["derive", "--records", str(src), "--id", "id", "--fields", "name,price,phone,when",
                 "--source", "source", "--block", "name", "--template", str(template), "--model", str(model),
                 "-o", str(tmp_path / "ev.db")]) == 0
    text = model.read_text(encoding="utf-8")
    assert not any(line.startswith("//@") for line in text.splitlines()) and "{F}(" not in text
    assert "similarity(x, y in Same: jarowinkler(x, y, NameText))" in text
    assert "numdiff(x, y, PriceNum) <= 0.05" in text and "absdiff(x, y, WhenNum) <= 1" in text
    assert "Source(x, s) ^ Source(y, s) ^ !(x = y) => !Same(x, y)." in text
    mln = MLN.from_file(str(model))
    Database.from_string((tmp_path / "ev.db").read_text(encoding="utf-8"), mln=mln)
    assert any(f.link and f.kind == "max" for f in mln.set_features)


def test_linkage_family_is_chosen_on_held_out_data_and_can_be_fixed():
    text = _chains(seed=2, n_ent=8, size=6)
    model = CHAIN_MODEL + "0 link max(x, y in Same: score(x, y))\n0 link sum(x, y in Same: score(x, y))\n" \
        "0 size(Same) > 0\n"
    mln = MLN.from_string(model)
    db = Database.from_string(text, mln=mln)
    learned = learn_model(mln, db, query_predicates=["Same"], method="samplerank", linkage="max")
    assert learned.result.stats["linkage"] == "max"
    weights = {f.kind: f.weight for f in learned.mln.set_features if f.link}
    assert weights["sum"] == 0.0
    with pytest.raises(OptionError, match="--linkage applies"):
        learn_model(MLN.from_string(CHAIN_MODEL), Database.from_string(text, mln=MLN.from_string(CHAIN_MODEL)),
                    query_predicates=["Same"], method="samplerank", inference="mh", linkage="max")


def test_mh_samplerank_reports_the_returned_model_under_agglomerative_map():
    """Its training figures are the returned weights' under the search they serve,
    not the loss of the training chain's last state in one world."""
    text = _chains(seed=1, n_ent=6, size=5)
    mln = MLN.from_string(CHAIN_MODEL)
    learned = learn_model(mln, Database.from_string(text, mln=mln), query_predicates=["Same"], method="samplerank",
                          inference="mh", epochs=2)
    stats = learned.result.stats
    assert stats["final_train_pairwise_f1"] == pytest.approx(_agglomerative_f1(learned, text), abs=1e-9)
    assert stats["final_train_loss"] == pytest.approx(1.0 - stats["final_train_pairwise_f1"])
    assert "final_chain_loss" in stats


def test_clustering_learners_time_their_trace_rows():
    # issue 29: `--trace` wrote no seconds for the learners over clusterings
    text = _chains(seed=3, n_ent=4, size=4)
    mln = MLN.from_string(CHAIN_MODEL)
    for inference in ("agglomerative", "mh"):
        learned = learn_model(mln, Database.from_string(text, mln=mln), query_predicates=["Same"],
                              method="samplerank", inference=inference, epochs=2)
        secs = [r.seconds for r in learned.result.trace]
        assert secs and all(s is not None and s >= 0 for s in secs), inference
        assert secs == sorted(secs), inference


def _documents(n_docs=6, seed=3):
    """Documents of chained mentions: weak links between entities of one
    document, none across documents (each document a component)."""
    rnd = random.Random(seed)
    lines, truth = [], []
    rid = 0
    for _ in range(n_docs):
        ents = []
        for _ in range(3):
            size = rnd.randint(2, 4)
            mem = [f"M{rid + k}" for k in range(size)]
            rid += size
            ents.append(mem)
            lines += [f"Strong({a},{b})" for a, b in zip(mem, mem[1:])]
            truth += [f"Same({mem[i]},{mem[j]})" for i in range(size) for j in range(i + 1, size)]
        for a, b in zip(ents, ents[1:]):
            lines.append(f"Weak({a[0]},{b[-1]})")
    return "\n".join(lines + truth) + "\n"


def test_held_out_halves_by_components_keep_documents_whole():
    from markovlogic.learn.merge_rank import held_out_parts

    text = _documents()
    mln = MLN.from_string(CHAIN_MODEL)
    model = build_cluster_model(mln, Database.from_string(text, mln=mln), "Same", truth=True)
    (a, b), _ = held_out_parts([model], "components")
    a, b = a[0], b[0]
    assert a.n + b.n == model.n and abs(a.n - b.n) <= 4
    # no candidate pair is cut: each half keeps all its linked pairs, and each has gold pairs
    assert int(a.arrays.indptr[-1]) + int(b.arrays.indptr[-1]) == int(model.arrays.indptr[-1])
    for part in (a, b):
        assert len(np.unique(part.gold_labels)) < part.n
    # halves of gold clusters cut linked pairs (the weak links between entities)
    (c, d), _ = held_out_parts([model], "clusters")
    assert int(c[0].arrays.indptr[-1]) + int(d[0].arrays.indptr[-1]) < int(model.arrays.indptr[-1])
    linked = MLN.from_string(CHAIN_MODEL + "0 link max(x, y in Same: score(x, y))\n")
    learned = learn_model(linked, Database.from_string(text, mln=linked), query_predicates=["Same"],
                          method="samplerank", held_out="components", update="mira", epochs=2)
    assert learned.result.stats["held_out"] == "components"
    assert learned.result.stats["final_train_pairwise_f1"] == pytest.approx(1.0)
    # what `mln learn` prints as the training loss is the returned model's, after the held-out selection's rows
    assert len(learned.result.trace) > 1
    assert learned.result.objective == pytest.approx(learned.result.stats["final_train_loss"])
    with pytest.raises(OptionError, match="held-out must be one of"):
        learn_model(mln, Database.from_string(text, mln=mln), query_predicates=["Same"], method="samplerank",
                    inference="agglomerative", held_out="documents")


@pytest.mark.parametrize("const", [-0.4, -3.5])
def test_max_linkage_alone_is_logistic_pairs_plus_transitive_closure(const):
    """With the set-level weights at 0, max linkage and the per-cluster constant
    make greedy agglomerative MAP the transitive closure of the pairs whose
    score passes -const / w_max: the pairwise baseline is in the family
    (examples/coref/first-order.mln)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    text = _documents(n_docs=4)
    model = (CHAIN_MODEL.replace("0 Strong", "2 Strong").replace("0 Weak", "-1 Weak").replace("0 !Same", "0.5 !Same")
             + f"1.5 link max(x, y in Same: score(x, y))\n0 size(Same) > 3\n{const} size(Same) > 0\n")
    mln = MLN.from_string(model)
    evidence = "\n".join(l for l in text.splitlines() if not l.startswith("Same")) + "\n"
    (part,) = mln.map(Database.from_string(evidence, mln=mln), queries="Same", method="agglomerative").parts
    names = part.model.mention_names
    index = {nm: i for i, nm in enumerate(names)}
    score = {}
    for line in evidence.split():
        kind, args = line[:-1].split("(")
        a, b = sorted(args.split(","))
        # the prior !Same(x, y) holds for both orders of a pair: -0.5 twice
        score[(a, b)] = score.get((a, b), -1.0) + (2.0 if kind == "Strong" else -1.0)
    keep = [(index[a], index[b]) for (a, b), s in score.items() if 1.5 * s - const > 0]
    rows, cols = zip(*keep) if keep else ((), ())
    g = coo_matrix((np.ones(len(keep)), (rows, cols)), shape=(len(names), len(names)))
    _, closure = connected_components(g, directed=False)
    same = part.labels[:, None] == part.labels[None, :]
    assert (same == (closure[:, None] == closure[None, :])).all()
    assert len(np.unique(part.labels)) == (12 if const == -0.4 else 4)     # entities; documents


# ---------------------------------------------------------------- the pair layer's feature sets


def _records(seed=0, n_ent=12, size=3):
    """Mentions of entities, each a noisy subset of its entity's name words, with
    an uninformative `Tag` value (random among 2)."""
    rnd = random.Random(seed)
    lines, truth = [], []
    rid = 0
    for e in range(n_ent):
        words = [f"E{e}W{k}" for k in range(5)] + [f"C{rnd.randrange(3)}"]
        mem = []
        for _ in range(size):
            m = f"M{rid}"
            rid += 1
            mem.append(m)
            for w in rnd.sample(words, 4):
                lines.append(f"HasWord({m}, {w})")
            lines.append(f"Tag({m}, T{rnd.randrange(2)})")
        truth += [f"Same({mem[i]}, {mem[j]})" for i in range(size) for j in range(i + 1, size)]
    return "\n".join(lines + truth) + "\n"


BINNED = """HasWord(rec, word)
Tag(rec, tag)
equivalence Same(rec, rec)
candidates(x, y in Same: HasWord(x, w) ^ HasWord(y, w))
0 !Same(x, y)
0 similarity(x, y in Same: jaccard(x, y, HasWord))
0 jaccard(x, y, HasWord) >= 0.2 => Same(x, y)
0 jaccard(x, y, HasWord) >= 0.5 => Same(x, y)
0 Tag(x, a) ^ Tag(y, a) => Same(x, y)
0 link max(x, y in Same: score(x, y))
0 size(Same) > 0
"""


def test_pair_feature_sets_mask_the_formulas_that_bin_a_similarity():
    from markovlogic.learn.merge_rank import pair_feature_masks, pair_layer_parameters
    from markovlogic.learn.output import split_clauses

    mln = MLN.from_string(BINNED)
    cm = split_clauses(mln).mln
    cm.set_features = list(mln.set_features)
    model = build_cluster_model(cm, Database.from_string(_records(), mln=mln), "Same", truth=True)
    names, param, coef, init, learnable, formula_of = pair_layer_parameters(model, cm)
    masks = pair_feature_masks(formula_of, cm, len(names))
    binned = [n for n, keep in zip(names, masks["values"]) if not keep]
    assert len(binned) == 2 and all("jaccard" in n and ">=" in n for n in binned)
    assert masks["all"].all() and masks["values"].sum() == len(names) - 2


@pytest.mark.parametrize("choice", ["all", "values"])
def test_pair_features_fixed_or_chosen_by_cross_fitted_likelihood(choice):
    mln = MLN.from_string(BINNED)
    dbs = [Database.from_string(_records(seed=s), mln=mln) for s in (1, 2)]
    fixed = learn_model(mln, dbs, query_predicates=["Same"], method="samplerank", multiple_databases=True,
                        pair_features=choice)
    stats = fixed.result.stats
    assert stats["pair_layer_features"] == choice
    bins = [f.weight for f in fixed.mln.formulas if ">=" in str(f.formula)]
    assert len(bins) == 2
    if choice == "values":
        assert bins == [0.0, 0.0] and stats["pair_layer_learned"] == stats["pair_layer_parameters"] - 2
    else:
        assert any(w != 0.0 for w in bins) and stats["pair_layer_learned"] == stats["pair_layer_parameters"]
    logs = []
    chosen = learn_model(mln, dbs, query_predicates=["Same"], method="samplerank", multiple_databases=True,
                         log=logs.append)
    assert chosen.result.stats["pair_layer_features"] in ("all", "values")
    assert any("held-out log-likelihood all:" in line and "values:" in line for line in logs)
    with pytest.raises(OptionError, match="unknown pair features"):
        learn_model(mln, dbs, query_predicates=["Same"], method="samplerank", multiple_databases=True,
                    pair_features="bins")


def test_choose_pair_layer_takes_the_best_cross_fitted_likelihood():
    from markovlogic.learn.merge_rank import (_pair_design, choose_pair_layer, cross_fitted_log_likelihood,
                                              pair_feature_masks, pair_layer_parameters)
    from markovlogic.learn.output import split_clauses

    mln = MLN.from_string(BINNED)
    cm = split_clauses(mln).mln
    cm.set_features = list(mln.set_features)
    parts = [build_cluster_model(cm, Database.from_string(_records(seed=s), mln=mln), "Same", truth=True)
             for s in (3, 4, 5)]
    names, param, coef, init, learnable, formula_of = pair_layer_parameters(parts[0], cm)
    masks = pair_feature_masks(formula_of, cm, len(names))
    name, C, tables = choose_pair_layer(parts, param, coef, init, learnable, masks, ("all", "values"))
    assert set(tables) == {"all", "values"}
    best = max((ll, nm, c) for nm, t in tables.items() for c, ll in t.items())
    assert (best[1], best[2]) == (name, C)
    designs = [_pair_design(m, param, coef, len(init)) for m in parts]
    lm = learnable & masks[name]
    again = cross_fitted_log_likelihood(designs, np.where(lm, init, 0.0), lm, C)
    assert again == pytest.approx(tables[name][C])


def test_set_level_features_switched_off_on_held_out_choice_or_by_option():
    text = _chains(seed=2, n_ent=8, size=6)
    model = CHAIN_MODEL + "0 link max(x, y in Same: score(x, y))\n0 size(Same) > 0\n0 size(Same) > 7\n"
    mln = MLN.from_string(model)
    db = Database.from_string(text, mln=mln)
    off = learn_model(mln, db, query_predicates=["Same"], method="samplerank", set_features="off")
    assert off.result.stats["set_features"] == "off"
    sizes = {f.threshold: f.weight for f in off.mln.set_features if f.kind == "size" and not f.link}
    assert sizes[7.0] == 0.0                      # switched off
    logs = []
    chosen = learn_model(mln, db, query_predicates=["Same"], method="samplerank", log=logs.append)
    assert chosen.result.stats["set_features"] in ("on", "off")
    assert any("set-level features on" in line for line in logs) and any("set-level features off" in line
                                                                          for line in logs)
    # a model whose only set-level feature is the constant has nothing to switch
    plain = MLN.from_string(CHAIN_MODEL + "0 link max(x, y in Same: score(x, y))\n0 size(Same) > 0\n")
    learned = learn_model(plain, Database.from_string(text, mln=plain), query_predicates=["Same"],
                          method="samplerank")
    assert learned.result.stats["set_features"] == "on"
    with pytest.raises(OptionError, match="set features must be on or off"):
        learn_model(mln, db, query_predicates=["Same"], method="samplerank", set_features="maybe")


@pytest.mark.parametrize("which", ["mean", "refit"])
def test_pair_layer_carried_is_the_mean_of_the_cross_fitted_fits_or_a_refit(which):
    """The learned model's pair weights: by default the mean of the fits the
    cluster layer was trained on (each on the other part), else one fit on
    both parts; recomputed here from the learner's own functions."""
    from markovlogic.learn.merge_rank import (fit_pair_layer, pair_feature_masks, pair_layer_parameters)
    from markovlogic.learn.output import split_clauses

    mln = MLN.from_string(BINNED)
    dbs = [Database.from_string(_records(seed=s), mln=mln) for s in (1, 2)]
    kw = {} if which == "mean" else {"pair_layer": "refit"}
    learned = learn_model(mln, dbs, query_predicates=["Same"], method="samplerank", multiple_databases=True,
                          pair_features="all", **kw)
    stats = learned.result.stats
    assert stats["pair_layer"] == which
    cm = split_clauses(mln).mln
    cm.set_features = list(mln.set_features)
    parts = [build_cluster_model(cm, db, "Same", truth=True) for db in dbs]
    names, param, coef, init, learnable, formula_of = pair_layer_parameters(parts[0], cm)
    l2 = stats["pair_layer_l2"]
    if which == "mean":
        expect = (fit_pair_layer([parts[1]], param, coef, init, learnable, l2)
                  + fit_pair_layer([parts[0]], param, coef, init, learnable, l2)) / 2.0
    else:
        expect = fit_pair_layer(parts, param, coef, init, learnable, l2)
    got = np.asarray(learned.result.params[:len(names)])
    assert got == pytest.approx(expect, rel=1e-6, abs=1e-9)
    with pytest.raises(OptionError, match="pair layer must be one of"):
        learn_model(mln, dbs, query_predicates=["Same"], method="samplerank", multiple_databases=True,
                    pair_layer="median")
    with pytest.raises(OptionError, match="--pair-layer applies to samplerank --inference agglomerative"):
        learn_model(MLN.from_string(CHAIN_MODEL), Database.from_string(_chains(n_ent=3, size=3),
                    mln=MLN.from_string(CHAIN_MODEL)), query_predicates=["Same"], method="samplerank",
                    inference="mh", pair_layer="mean")
    with pytest.raises(OptionError, match="--linkage-rule applies to samplerank --inference agglomerative"):
        learn_model(MLN.from_string(CHAIN_MODEL), Database.from_string(_chains(n_ent=3, size=3),
                    mln=MLN.from_string(CHAIN_MODEL)), query_predicates=["Same"], method="samplerank",
                    inference="mh", linkage_rule="best")


def test_one_standard_error_rule_prefers_the_simplest_linkage_within_noise():
    from markovlogic.eval.coref import cluster_contributions
    from markovlogic.learn.merge_rank import one_se_choice, pair_counts

    rng = np.random.default_rng(0)
    gold = np.repeat(np.arange(40), 3)
    perfect = gold.copy()
    # a clustering that splits one gold cluster: slightly worse, well within the noise of 40 clusters
    near = gold.copy()
    near[0] = 1000
    # one that merges everything pairwise wrong: far worse
    bad = rng.permutation(gold)
    for labels in (perfect, near, bad):
        c = cluster_contributions(labels, gold)
        assert np.allclose(c.sum(axis=1), pair_counts(labels, gold))
    contrib = {k: [cluster_contributions(v, gold)] for k, v in (("all", perfect), ("max", near), ("sum", bad))}
    names = ["all", "max", "sum"]
    i, table = one_se_choice(names, [contrib[n] for n in names])
    assert names[i] == "max"                     # within one SE of the best, and first in the order
    assert table["all"]["held_out_f1"] == 1.0 and table["all"]["se"] == 0.0 and table["max"]["se"] > 0.0
    assert table["sum"]["held_out_f1"] < table["all"]["held_out_f1"] - table["sum"]["se"]
    # a clear winner is kept: "max" far worse than "all"
    contrib2 = [[cluster_contributions(perfect, gold)], [cluster_contributions(bad, gold)]]
    i, _ = one_se_choice(["all", "max"], contrib2)
    assert i == 0
    # equal options: the order decides, whatever the grid's order
    same = [[cluster_contributions(near, gold)]] * 3
    i, _ = one_se_choice(["sum", "all", "mean"], same)
    assert i == 2


def test_linkage_rule_option_logged_and_checked():
    text = _chains(seed=2, n_ent=8, size=6)
    model = CHAIN_MODEL + "0 link max(x, y in Same: score(x, y))\n0 link sum(x, y in Same: score(x, y))\n" \
        "0 size(Same) > 0\n"
    mln = MLN.from_string(model)
    db = Database.from_string(text, mln=mln)
    logs = []
    learned = learn_model(mln, db, query_predicates=["Same"], method="samplerank", log=logs.append,
                          linkage_rule="one-se")
    stats = learned.result.stats
    assert stats["linkage_rule"] == "one-se" and stats["linkage_held_out_best"] in ("all", "max", "sum")
    assert any("one-standard-error rule" in line for line in logs)
    logs = []
    best = learn_model(mln, db, query_predicates=["Same"], method="samplerank", log=logs.append)   # the default
    assert best.result.stats["linkage_rule"] == "best"
    assert best.result.stats["linkage"] == best.result.stats["linkage_held_out_best"] or \
        best.result.stats["linkage_held_out_best"] is None
    assert any(f"linkage by the highest held-out F1: {best.result.stats['linkage']}" in line for line in logs)
    with pytest.raises(OptionError, match="linkage rule must be one of"):
        learn_model(mln, db, query_predicates=["Same"], method="samplerank", linkage_rule="median")


def test_world_splits_leave_one_world_out_from_three_worlds():
    """With three or more training worlds the held-out choices hold out each
    world in turn (trained on all the others); with two, halves and one-out are
    the same two splits; the choice is recorded and checked, and MH refuses it."""
    from markovlogic.learn.merge_rank import held_out_parts

    mln = MLN.from_string(CHAIN_MODEL + "0 link max(x, y in Same: score(x, y))\n")
    texts = [_chains(seed=s, n_ent=3, size=3) for s in range(4)]
    models = [build_cluster_model(mln, Database.from_string(t, mln=mln), "Same", truth=True) for t in texts]
    two = [held_out_parts(models[:2], worlds=w) for w in ("one-out", "halves")]
    assert [[[id(m) for m in side] for side in split] for split in two[0]] == \
        [[[id(m) for m in side] for side in split] for split in two[1]]
    out = held_out_parts(models, worlds="one-out")
    assert len(out) == 4
    for k, (train, held) in enumerate(out):
        assert held == [models[k]] and train == [m for j, m in enumerate(models) if j != k]
    # more worlds than MAX_WORLD_SPLITS: five groups, each world held out exactly once
    many = models + models[:3]
    groups = held_out_parts(many, worlds="one-out")
    assert len(groups) == 5
    assert sorted(id(m) for _, held in groups for m in held) == sorted(id(m) for m in many)
    assert all(len(train) + len(held) == len(many) for train, held in groups)
    halves = held_out_parts(models, worlds="halves")
    assert [len(t) for t, _ in halves] == [2, 2]
    with pytest.raises(OptionError, match="world splits must be one of"):
        held_out_parts(models, worlds="thirds")
    dbs = [Database.from_string(t, mln=mln) for t in texts[:3]]
    for ws, n in ((None, 3), ("halves", 2)):      # the default is one-out
        logs = []
        learned = learn_model(mln, dbs, query_predicates=["Same"], method="samplerank", multiple_databases=True,
                              update="mira", epochs=2, log=logs.append, **({"world_splits": ws} if ws else {}))
        assert any(f"held-out choices on {n} splits of 3 training part(s)" in line for line in logs)
        assert learned.result.stats["world_splits"] == (ws or "one-out")
        assert learned.result.stats["held_out_splits"] == n
    single = learn_model(mln, Database.from_string(_chains(seed=5, n_ent=8, size=4), mln=mln),
                         query_predicates=["Same"], method="samplerank", update="mira", epochs=2)
    assert single.result.stats["world_splits"] is None and single.result.stats["held_out_splits"] == 2
    with pytest.raises(OptionError, match="world splits must be one of"):
        learn_model(mln, dbs, query_predicates=["Same"], method="samplerank", multiple_databases=True,
                    world_splits="thirds")
    with pytest.raises(OptionError, match="--world-splits applies to samplerank --inference agglomerative"):
        learn_model(MLN.from_string(CHAIN_MODEL), Database.from_string(_chains(n_ent=3, size=3),
                    mln=MLN.from_string(CHAIN_MODEL)), query_predicates=["Same"], method="samplerank",
                    inference="mh", world_splits="one-out")


@pytest.mark.parametrize("key", ["linkage", "held_out", "set_features", "linkage_rule", "world_splits", "pair_layer",
                                 "pair_features"])
def test_mh_samplerank_refuses_every_merge_ranking_option_by_name(key):
    from markovlogic.learn.api import AGGLOMERATIVE_ONLY

    assert key in AGGLOMERATIVE_ONLY
    mln = MLN.from_string(CHAIN_MODEL)
    db = Database.from_string(_chains(n_ent=3, size=3), mln=mln)
    flag = "--" + key.replace("_", "-")
    with pytest.raises(OptionError, match=f"^{flag} applies to samplerank --inference agglomerative"):
        learn_model(mln, db, query_predicates=["Same"], method="samplerank", inference="mh", **{key: "x"})


def test_held_out_splits_on_threads_give_the_serial_answer(monkeypatch):
    """The held-out choices' splits run on the call's threads (``threads=``):
    with one thread or two, the same selection table, hyperparameters and
    weights, bit for bit; and no (setting, weights) is evaluated on them twice
    (the linkage grid's "all" is the update-rule grid's chosen model)."""
    from markovlogic.learn import merge_rank
    from markovlogic.parallel import tasks

    mapped, evaluated = [], []

    class Recording(tasks.ThreadExecutor):
        def map(self, fn, args):
            mapped.append((self.workers, len(list(args))))
            return super().map(fn, args)

    real = merge_rank._held_out_f1

    def counted(splits, params, setting, *a, **k):
        evaluated.append((setting, params.learnable.tobytes(), params.initial.tobytes()))
        return real(splits, params, setting, *a, **k)

    monkeypatch.setattr(tasks, "ThreadExecutor", Recording)
    monkeypatch.setattr(merge_rank, "_held_out_f1", counted)
    mln = MLN.from_string(CHAIN_MODEL + "0 link max(x, y in Same: score(x, y))\n"
                          "0 link sum(x, y in Same: score(x, y))\n0 size(Same) > 0\n")
    texts = [_chains(seed=s, n_ent=4, size=4) for s in range(4)]
    results = []
    for threads in (1, 2):
        dbs = [Database.from_string(t, mln=mln) for t in texts]
        mapped.clear()
        evaluated.clear()
        learned = learn_model(mln, dbs, query_predicates=["Same"], method="samplerank", multiple_databases=True,
                              threads=threads)
        assert (threads, 4) in mapped               # the four held-out splits, on the call's threads
        assert len(evaluated) == len(set(evaluated)) > 1
        stats = learned.result.stats
        table = [{k: v for k, v in row.items() if k != "seconds"} for row in learned.result.selection]
        results.append((table, stats["update"], stats["linkage"], stats["held_out_splits"],
                         [(f.kind, f.weight) for f in learned.mln.set_features],
                         [f.weight for f in learned.mln.formulas]))
    assert results[0][3] == 4
    assert results[0] == results[1]


def test_tf_idf_sums_do_not_depend_on_the_order_duckdb_adds_them():
    """A pair's TF-IDF dot product adds one term per shared word in whatever
    order the join delivers them; DOUBLE sums then differ in their last bits
    between builds (measured on Cora: up to 2e-15), which learning amplifies.
    The sums are exact (DECIMAL terms), so every build gives the same bits."""
    from markovlogic.cluster.model import build_cluster_model
    from markovlogic.learn.merge_rank import _pair_design, pair_layer_parameters
    from markovlogic.learn.output import split_clauses
    from markovlogic.parallel.options import ParallelOptions, using

    rnd = random.Random(7)
    lines = []
    for r in range(1500):
        for w in rnd.sample(range(400), 14):
            lines.append(f"HasWord(M{r}, W{w % (40 + r % 360)})")
    model = ("HasWord(rec, word)\nequivalence Same(rec, rec)\n"
             "candidates(x, y in Same: HasWord(x, w) ^ HasWord(y, w))\n0 !Same(x, y)\n"
             "0 similarity(x, y in Same: cosine(x, y, HasWord))\n0 link max(x, y in Same: score(x, y))\n")
    mln = MLN.from_string(model)
    cm = split_clauses(mln).mln
    cm.set_features = list(mln.set_features)
    text = "\n".join(lines) + "\n"
    designs = []
    with using(ParallelOptions(threads=2).check()):
        for _ in range(4):
            m = build_cluster_model(cm, Database.from_string(text, mln=mln), "Same", truth=True)
            names, param, coef, init, learnable, _ = pair_layer_parameters(m, cm)
            designs.append(_pair_design(m, param, coef, len(init))[0])
    assert designs[0].shape[0] > 100_000
    assert all(np.array_equal(d, designs[0]) for d in designs[1:])
