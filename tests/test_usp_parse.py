"""USP-Parse returns the MAP parse found by enumerating every semantic parse
(partition, clusters, argument types) of sentences small enough."""

import itertools

import numpy as np
import pytest

from markovlogic.text import read_conllu_lines
from markovlogic.usp import USPModel, USPOptions, USPState, build_qlf, learn_usp
from markovlogic.usp.parse import UNKNOWN, VIRTUAL, WILDCARD, Parser, Part, SemanticParse, assign_types, score_parse
from usp_corpus import COMPANIES, TARGETS, sentence, toy_corpus

TAKE_OVER = """# sent_id = x{i}
1\tGoogle\tGoogle\tPROPN\t_\t_\t2\tnsubj\t_\t_
2\ttook\ttake\tVERB\t_\t_\t0\troot\t_\t_
3\tover\tover\tADP\t_\t_\t2\tcompound:prt\t_\t_
4\tYouTube\tYouTube\tPROPN\t_\t_\t2\tobj\t_\t_

"""


@pytest.fixture(scope="module")
def model():
    varied = [TAKE_OVER.format(i=i).replace("Google", COMPANIES[i % 8]).replace("YouTube", TARGETS[i % 7])
              for i in range(60)]
    text = toy_corpus(n=200, seed=3) + "".join(varied)
    q = build_qlf(read_conllu_lines(text.splitlines(True), "toy.conllu"))
    st, _ = learn_usp(q, USPOptions(min_shared=2, min_compose=20, threshold=1.0))
    assert any("(" in st.core_forms[f] for c in st.F for f in st.F[c])      # a composite form to parse with
    return USPModel.from_state(st)


def enumerate_best(m: USPModel, q, s: int = 0) -> tuple[float, SemanticParse]:
    """Every parse of sentence s: cut or keep each edge, every cluster holding
    each part's core form, every type (or the unseen type) for each argument."""
    parser = Parser(m)
    lo, hi = int(q.sent_start[s]), int(q.sent_start[s + 1])
    n = hi - lo
    head = [int(h) - lo if h >= 0 else -1 for h in q.head[lo:hi]]
    kids = [[] for _ in range(n)]
    for v, h in enumerate(head):
        if h >= 0:
            kids[h].append(v)
    labels = [q.vocab.labels[x] if x >= 0 else "?" for x in q.label[lo:hi]]
    edges = [v for v in range(n) if head[v] >= 0]
    from markovlogic.usp.parse import _Local

    loc = _Local(q, lo, hi)
    best = (-np.inf, None)
    for cut in itertools.product([True, False], repeat=len(edges)):
        is_root = [head[v] < 0 for v in range(n)]
        for v, c in zip(edges, cut):
            is_root[v] = c
        root_of = list(range(n))

        def find(v):
            while not is_root[v]:
                v = head[v]
            return v
        root_of = [find(v) for v in range(n)]
        roots = [v for v in range(n) if is_root[v]]
        options = []
        for r in roots:
            members = {v for v in range(n) if root_of[v] == r}
            if len(members) == 1:
                f = int(loc.form[r])
                cl = [WILDCARD] if f == -2 else (m.form_clust.get(f, []) or [UNKNOWN]) if f >= 0 else [UNKNOWN]
                form = m.core_forms[f] if f >= 0 else loc.atom(r)
            else:
                text = parser._canon(loc, r, members, kids)
                fid = m.core_form_id(text) if text else -1
                cl = m.form_clust.get(fid, [])
                form = text
            if not cl:
                break
            options.append([(r, sorted(members), c, form) for c in cl])
        else:
            for choice in itertools.product(*options):
                index = {r: i for i, (r, *_rest) in enumerate(choice)}
                parts = []
                type_options = []
                for r, members, c, form in choice:
                    h = head[r]
                    if h < 0:
                        parts.append(Part(r, members, c, form))
                        type_options.append([-2])
                        continue
                    pr = root_of[h]
                    path, x = [], h
                    while x != pr:
                        path.append(labels[x])
                        x = head[x]
                    aform = "/".join(list(reversed(path)) + [labels[r]])
                    parts.append(Part(r, members, c, form, index[pr], -2, aform))
                    pc = choice[index[pr]][2]
                    type_options.append(list(m.types.get(pc, [])) + [VIRTUAL])
                for ts in itertools.product(*type_options):
                    ps = [Part(p.root, p.nodes, p.cluster, p.form, p.parent, t, p.aform) for p, t in zip(parts, ts)]
                    sp = SemanticParse(s, ps)
                    sc = score_parse(m, q, sp)
                    if sc > best[0]:
                        best = (sc, sp)
    return best


def qlf_for(m, text, wildcard=None):
    q = build_qlf(read_conllu_lines(text.splitlines(True), "new.conllu"), m.vocab)
    if wildcard is not None:
        q.form[wildcard] = WILDCARD
    return q


@pytest.mark.parametrize("text,wild", [
    (sentence("Microsoft", ("buy", "bought"), "Farecast", False), None),
    (sentence("Microsoft", ("acquire", "acquired"), "Farecast", True, when=True), None),
    (sentence("Mary", ("devour", "devoured"), "pizza", False, obj_upos="NOUN", when=True), None),
    (TAKE_OVER.format(i=0), None),
    (TAKE_OVER.format(i=0).replace("Google\tGoogle", "Zorg\tZorg"), None),        # an unknown word
    (sentence("What", ("buy", "bought"), "Farecast", False), 0),                     # the question wildcard
])
def test_parse_is_the_enumerated_map(model, text, wild):
    q = qlf_for(model, text, wild)
    p = Parser(model).parse_sentence(q, 0)
    assert p.score == pytest.approx(score_parse(model, q, p), abs=1e-9)
    best, bp = enumerate_best(model, q)
    assert p.score == pytest.approx(best, abs=1e-9)


def test_composite_forms_are_parsed_as_one_part(model):
    q = qlf_for(model, TAKE_OVER.format(i=0))
    p = Parser(model).parse_sentence(q, 0)
    root = next(x for x in p.parts if x.parent < 0)
    assert root.form == "take:VERB(compound:prt over:ADP)" and len(root.nodes) == 2


def test_type_assignment_matches_brute_force():
    rng = np.random.default_rng(0)
    for m in range(0, 6):
        for K in (0, 1, 3):
            val = rng.normal(size=(m, K + 1))
            num = rng.normal(size=(K, m + 1))
            s, out = assign_types(val, num)
            brute = max(sum(val[j, t] for j, t in enumerate(a)) +
                        sum(num[t, sum(1 for x in a if x == t)] for t in range(K))
                        for a in itertools.product(range(K + 1), repeat=m)) if m else (num[:, 0].sum() if K else 0.0)
            assert s == pytest.approx(brute)
            got = sum(val[j, t] for j, t in enumerate(out)) + sum(num[t, int(np.sum(out == t))] for t in range(K))
            assert got == pytest.approx(brute)
