"""Poon's InClust coreference MLNs over clusterings (markovlogic.cluster.inclust),
checked against exact enumeration on a tiny document: the engine's score of
every clustering equals an independent computation from the formulas' meaning;
the Gibbs chain samples the clusterings with the exact probabilities; the
Rao-Blackwellised expected counts of the learning gradient equal the exact
expectations; the greedy MAP finds the best clustering; the formulas are
recognised (and a foreign one refused with its line); the CLI learns and infers."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from markovlogic.cli import main
from markovlogic.cluster.inclust import (
    FAMILIES, Params, _Doc, _gather, _kernel_args, compile_inclust, init_state, make_arrays, map_inclust,
    pronoun_vocabulary, read_documents, sweep, with_head_scale,
)
from markovlogic.errors import MLNSemanticError, OptionError
from markovlogic.model import MLN, Database

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "coref"

# John ... the president (apposition) ... he ... it ... the company ... she
EVIDENCE = """
InDoc(M1,D) MentionOrder(M1,1) Head(M1,L_John) Number(M1,Sing) Type(M1,Person)
InDoc(M2,D) MentionOrder(M2,2) Head(M2,L_president) Number(M2,Sing)
InDoc(M3,D) MentionOrder(M3,3) Head(M3,L_he) IsPrn(M3) Number(M3,Sing) Gender(M3,Masc) Type(M3,Person)
InDoc(M4,D) MentionOrder(M4,4) Head(M4,L_company) Number(M4,Sing) Type(M4,Organization)
InDoc(M5,D) MentionOrder(M5,5) Head(M5,L_it) IsPrn(M5) Number(M5,Sing) Gender(M5,Neut)
InDoc(M6,D) MentionOrder(M6,6) Head(M6,L_president) Number(M6,Sing)
Apposition(M1,M2)
"""


def evidence_db() -> Database:
    return Database.from_string("\n".join(EVIDENCE.split()) + "\n")


def partitions(items):
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in partitions(rest):
        yield [[first]] + p
        for k in range(len(p)):
            yield p[:k] + [[first] + p[k]] + p[k + 1:]


def labels_of(p, n):
    lab = np.zeros(n, np.int64)
    for k, c in enumerate(p):
        lab[c] = k
    return lab


def setup(model="full.mln", seed=0, head_scale=1.0):
    spec = with_head_scale(compile_inclust(MLN.from_file(EXAMPLES / model)), head_scale)
    (doc,) = read_documents(spec, evidence_db())
    vocab = pronoun_vocabulary(spec, [doc])
    params = Params.of(spec, vocab)
    params.theta = np.random.default_rng(seed).normal(0, 1, len(params.theta))
    ar = make_arrays(params)
    d = _Doc(doc, {t: i for i, t in enumerate(vocab)})
    return spec, doc, vocab, params, ar, d


def oracle(spec, doc, params, vocab, p, mode_sum=True, clamped=True):
    """The score of a clustering from the formulas' meaning, in plain Python."""
    theta = dict(zip(params.names, params.theta))
    fams = spec.families()
    values = {f: spec.values[f] for f in fams}
    combos = list(itertools.product(*[values[f] for f in fams]))
    n = len(doc.mentions)
    block = doc.block
    lab = labels_of(p, n)
    if any(lab[i] != lab[block[i]] for i in range(n)):
        return -math.inf                      # apposition is hard
    prn = doc.hd < 0

    def prior(a, N):
        return sum(theta.get(("attr", f, v), 0.0) for f, v in zip(fams, a)) * N

    def pron(t, a):
        return sum(theta.get(("prn", f, t, v), 0.0) for f, v in zip(fams, a))

    z_all = [prior(a, 0) for a in combos]
    z0 = math.log(sum(math.exp(x) for x in z_all)) if mode_sum else max(z_all)
    total = 0.0
    for c in p:
        c = sorted(c)
        total += spec.cluster_prior
        heads = [doc.hd[m] for m in c if not prn[m]]
        for t in set(heads):
            k = heads.count(t)
            total += spec.head_scale * k * math.log(k / len(heads))
        vals = []
        for a in combos:
            if clamped and any(doc.known[m, FAMILIES.index(f)] >= 0 and
                               spec.values[f][doc.known[m, FAMILIES.index(f)]] != v
                               for m in c for f, v in zip(fams, a)):
                continue
            s = prior(a, len(c))
            for m in c:
                if prn[m]:
                    if clamped:
                        s += pron(doc.prn_head[m], a)
                    else:
                        s += math.log(sum(math.exp(pron(t, a)) for t in vocab))
            vals.append(s)
        if not vals:
            return -math.inf
        total += (math.log(sum(math.exp(v) for v in vals)) if mode_sum else max(vals)) - z0
        for q, m in enumerate(c):
            if prn[m]:
                earlier = [a for a in c[:q] if not doc.nested[a, m]]
                total += spec.distance * ((m - earlier[-1] - 1) if earlier else m)
    return total


def canon(lab) -> tuple:
    """A clustering's labels renumbered in order of first appearance."""
    seen: dict = {}
    return tuple(seen.setdefault(int(x), len(seen)) for x in lab)


def engine_score(d, ar, p, mode, maxed):
    args = _kernel_args(d, ar, mode, True, maxed)
    lab = labels_of(p, d.n)
    if any(lab[i] != lab[d.data.block[i]] for i in range(d.n)):
        return -math.inf
    return float(init_state(lab, *args)[3].sum())


@pytest.mark.parametrize("mode,maxed,scale", [(1.0, False, 1.0), (1.0, True, 1.0), (0.0, False, 1.0),
                                              (1.0, True, 7.5), (0.0, False, 7.5)])
def test_score_of_every_clustering_matches_the_formulas(mode, maxed, scale):
    spec, doc, vocab, params, ar, d = setup(head_scale=scale)
    parts = list(partitions(list(range(d.n))))
    assert len(parts) == 203
    for p in parts:
        want = oracle(spec, doc, params, vocab, p, mode_sum=not maxed, clamped=mode > 0.5)
        got = engine_score(d, ar, p, mode, maxed)
        if want == -math.inf:
            assert got == -math.inf
        else:
            assert got == pytest.approx(want, abs=1e-9)


def _exact(d, ar, mode):
    parts = list(partitions(list(range(d.n))))
    scores = np.array([engine_score(d, ar, p, mode, False) for p in parts])
    keys = [canon(labels_of(p, d.n)) for p in parts]
    prob = np.exp(scores - scores[np.isfinite(scores)].max())
    return dict(zip(keys, prob / prob.sum())), parts


@pytest.mark.parametrize("mode", [1.0, 0.0])
def test_gibbs_chain_samples_the_exact_distribution(mode):
    spec, doc, vocab, params, ar, d = setup(seed=1)
    exact, _ = _exact(d, ar, mode)
    args = _kernel_args(d, ar, mode, True, False)
    label, size, mem, cs = init_state(d.block_labels(d.head_labels), *args)
    from markovlogic.cluster.inclust import _seed
    _seed(3)
    counts: dict = {}
    ca, cp = np.zeros((3, 4)), np.zeros((3, max(len(vocab), 1), 4))
    n = 30000
    for _ in range(n):
        sweep(label, size, mem, cs, d.blocks, d.bstart, d.all_movable, *args, 1.0, ca, cp, ar.ptk, False)
        key = canon(label)
        counts[key] = counts.get(key, 0) + 1
    tv = 0.5 * sum(abs(counts.get(k, 0) / n - q) for k, q in exact.items())
    assert tv < 0.03


def test_expected_counts_match_enumeration():
    """The gradient's Rao-Blackwellised counts, averaged over the chain, equal
    the exact expectations (clamped chain)."""
    spec, doc, vocab, params, ar, d = setup(seed=2)
    exact, parts = _exact(d, ar, 1.0)
    args = _kernel_args(d, ar, 1.0, True, False)
    P = max(len(vocab), 1)
    want_a, want_p = np.zeros((3, 4)), np.zeros((3, P, 4))
    for p in parts:
        lab = labels_of(p, d.n)
        key = canon(lab)
        if exact[key] == 0:
            continue
        label, size, mem, cs = init_state(lab, *args)
        a, q = np.zeros((3, 4)), np.zeros((3, P, 4))
        _gather(label, size, mem, *args, a, q, ar.ptk)
        want_a += exact[key] * a
        want_p += exact[key] * q
    label, size, mem, cs = init_state(d.block_labels(d.head_labels), *args)
    got_a, got_p = np.zeros((3, 4)), np.zeros((3, P, 4))
    from markovlogic.cluster.inclust import _seed
    _seed(5)
    n = 20000
    for _ in range(n):
        sweep(label, size, mem, cs, d.blocks, d.bstart, d.all_movable, *args, 1.0, got_a, got_p, ar.ptk, True)
    np.testing.assert_allclose(got_a / n, want_a, atol=0.05)
    np.testing.assert_allclose(got_p / n, want_p, atol=0.03)


@pytest.mark.parametrize("model", ["full.mln", "rule-han.mln"])
def test_greedy_map_finds_the_best_clustering(model):
    spec, doc, vocab, params, ar, d = setup(model)
    learned = spec  # rule-han has no weights; full keeps its zero weights
    ans = map_inclust(learned, [doc], workers=1)
    parts = list(partitions(list(range(d.n))))
    ar0 = make_arrays(Params.of(spec, pronoun_vocabulary(spec, [])))
    d0 = _Doc(doc, {t: i for i, t in enumerate(pronoun_vocabulary(spec, []))})
    best = max(engine_score(d0, ar0, p, 1.0, True) for p in parts)
    got = engine_score(d0, ar0, [list(np.flatnonzero(ans.labels[0] == c)) for c in set(ans.labels[0].tolist())],
                       1.0, True)
    assert got == pytest.approx(best)
    clusters = sorted(sorted(c) for c in ans.clusters())
    assert ["M1", "M2", "M3"] in clusters or ["M1", "M2", "M3", "M6"] in clusters


# a document where the head scale decides: Smith ... Smith ... he is the senator (a predicate
# nominal, hard: "he" and "the senator" share a cluster). At scale 1 the block joins the Smiths
# (the pronoun gets an antecedent, saving the distance prior's no-antecedent cost, and one cluster
# fewer pay for mixing two heads); at a large scale, as with the thesis's fixed per-cluster head
# weights, non-pronouns of different heads stay apart ("only clusters mentions with the same head")
SCALE_EVIDENCE = """
InDoc(M1,D) MentionOrder(M1,1) Head(M1,L_Smith) Number(M1,Sing)
InDoc(M2,D) MentionOrder(M2,2) Head(M2,L_Smith) Number(M2,Sing)
InDoc(M3,D) MentionOrder(M3,3) Head(M3,L_he) IsPrn(M3) Number(M3,Sing) Gender(M3,Masc) Type(M3,Person)
InDoc(M4,D) MentionOrder(M4,4) Head(M4,L_senator) Number(M4,Sing)
PredNom(M3,M4)
"""


@pytest.mark.parametrize("scale", [1.0, 3.0, 1000.0])
def test_head_scale_map_against_enumeration(scale):
    """The greedy MAP at each head scale finds the best of all clusterings
    (enumerated); at scale 1 the best clustering mixes two non-pronoun
    heads, at 3 and 1000 none does."""
    spec = with_head_scale(compile_inclust(MLN.from_file(EXAMPLES / "full.mln")), scale)
    (doc,) = read_documents(spec, Database.from_string("\n".join(SCALE_EVIDENCE.split()) + "\n"))
    ans = map_inclust(spec, [doc], workers=1)
    vocab = pronoun_vocabulary(spec, [])
    ar = make_arrays(Params.of(spec, vocab))
    d = _Doc(doc, {t: i for i, t in enumerate(vocab)})
    parts = list(partitions(list(range(d.n))))
    scores = [engine_score(d, ar, p, 1.0, True) for p in parts]
    best = parts[int(np.argmax(scores))]
    got = [list(np.flatnonzero(ans.labels[0] == c)) for c in set(ans.labels[0].tolist())]
    assert engine_score(d, ar, got, 1.0, True) == pytest.approx(max(scores))
    # by hand: together -1 + (2 log 2/3 + log 1/3) * scale; apart -2 - 2 (the pronoun, third mention, alone)
    together = -1 + scale * (2 * math.log(2 / 3) + math.log(1 / 3))
    assert max(scores) == pytest.approx(max(together, -4.0))
    want = [["M1", "M2", "M3", "M4"]] if scale == 1.0 else [["M1", "M2"], ["M3", "M4"]]
    assert sorted(sorted(c) for c in ans.clusters()) == want


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), True])
def test_head_scale_is_checked(bad):
    spec = compile_inclust(MLN.from_file(EXAMPLES / "base.mln"))
    with pytest.raises(OptionError):
        with_head_scale(spec, bad)


def test_formulas_are_recognised_and_others_refused(tmp_path):
    spec = compile_inclust(MLN.from_file(EXAMPLES / "full.mln"))
    assert spec.head_mixture and spec.cluster_prior == -1 and spec.distance == -1
    assert spec.must == ("Apposition", "PredNom") and all(spec.agree[f] for f in FAMILIES)
    rule = compile_inclust(MLN.from_file(EXAMPLES / "rule.mln"))
    assert rule.rule_weight == 100 and not rule.head_mixture
    bad = tmp_path / "bad.mln"
    bad.write_text((EXAMPLES / "base.mln").read_text() + "\n0 Head(m, t) => IsPrn(m)\n")
    with pytest.raises(MLNSemanticError) as exc:
        compile_inclust(MLN.from_file(bad))
    assert exc.value.line == len((EXAMPLES / "base.mln").read_text().splitlines()) + 2


def test_cli_learn_and_infer(tmp_path):
    ev = tmp_path / "ev.db"
    ev.write_text("\n".join(EVIDENCE.split()) + "\n")
    learned, res = tmp_path / "learned.mln", tmp_path / "out.clusters"
    assert main(["coref", "learn", "-i", str(EXAMPLES / "full.mln"), "-e", str(ev), "-o", str(learned),
                 "--iterations", "3", "--samples", "2", "--workers", "1"]) == 0
    text = learned.read_text()
    assert "IsPrn(m) ^ InClust(m, c) ^ Head(m, L_he) ^ Gender(c, Masc)" in text
    compile_inclust(MLN.from_file(learned))            # the learned model reads back
    assert main(["coref", "infer", "-i", str(learned), "-e", str(ev), "-r", str(res)]) == 0
    lines = res.read_text().splitlines()
    assert sum(len(line.split("\t")) - 1 for line in lines) == 6
    scaled = tmp_path / "scaled.clusters"
    assert main(["coref", "infer", "-i", str(learned), "-e", str(ev), "-r", str(scaled), "--head-scale", "1000"]) == 0
    assert sum(len(line.split("\t")) - 1 for line in scaled.read_text().splitlines()) == 6
    # a bad scale: exit 2, nothing written
    assert main(["coref", "infer", "-i", str(learned), "-e", str(ev), "-r", str(tmp_path / "y.clusters"),
                 "--head-scale", "0"]) == 2
    assert not (tmp_path / "y.clusters").exists()
    # nothing to learn in a rule-based model: a clear error, exit 2, nothing written
    assert main(["coref", "learn", "-i", str(EXAMPLES / "rule.mln"), "-e", str(ev), "-o",
                 str(tmp_path / "x.mln")]) == 2
    assert not (tmp_path / "x.mln").exists()
