"""Derived citation evidence (markovlogic.derive): SimilarTitle, SimilarVenue,
JntInfCandidate on hand-made citations, one test per rule of their definitions,
against a direct loop-by-loop reading of the definitions on random citations,
and bad input (no Token evidence, non-consecutive positions) refused."""

from __future__ import annotations

import random
import re
from dataclasses import replace
from pathlib import Path

import pytest

from markovlogic.cli import main
from markovlogic.derive import DeriveOptions, derive, derive_atoms, venue_pairs_for
from markovlogic.derive.citations import VENUE_KINDS
from markovlogic.errors import EvidenceError, MLNSemanticError
from markovlogic.model import MLN, Database

DECLS = """\
Token(token,position,bib)
FollowBy(bib,position,token)
Next(position,position)
LessThan(position,position)
IsAlphaChar(token)
FirstNonAuthorTitleTkn(bib,position)
LastInitial(bib,position)
FirstIn(bib,position)
HasPunc(bib,position)
HasComma(bib,position)
SimilarTitle(bib,position,position,bib,position,position)
SimilarVenue(bib,bib)
JntInfCandidate(bib,position,bib)
InField(bib,field,position)
SameBib(bib,bib)
"""
RULES = """
1 SimilarTitle(c1,i1,j1,c2,i2,j2) ^ SimilarVenue(c1,c2) => SameBib(c1,c2)
1 Next(j,i) ^ !HasPunc(c,i) ^ InField(c,+f,i) ^ !(Exist c2 JntInfCandidate(c,i,c2)) => InField(c,+f,j)
"""
MODEL = MLN.from_string(DECLS + RULES)
P = lambda k: f"P{k:02d}"  # noqa: E731


def evidence(citations: dict[str, str], last_initial: dict[str, int] | None = None,
             first_keyword: dict[str, int] | None = None, first_in: dict[str, int] | None = None,
             npos: int = 40) -> str:
    """Evidence of whitespace-separated citations: a word's trailing ``.``, ``,``
    or ``:`` is the punctuation after it (no HasPunc for a period after a
    one-letter initial, as in the data)."""
    lines = [f"Next({P(k + 1)},{P(k)})" for k in range(npos - 1)]
    alpha = set()
    for bib, text in citations.items():
        for k, word in enumerate(text.split()):
            m = re.fullmatch(r"([A-Za-z0-9]+)([.,:]?)", word)
            assert m, word
            w, punc = m.groups()
            tok = "T" + w.upper()
            lines.append(f"Token({tok},{P(k)},{bib})")
            if len(w) == 1 and w.isalpha():
                alpha.add(tok)
            if punc:
                lines.append(f"FollowBy({bib},{P(k)},{ {'.': 'TPERIOD', ',': 'TCOMMA', ':': 'TCOLON'}[punc]})")
                if not (punc == "." and len(w) == 1 and w.isalpha()):
                    lines.append(f"HasPunc({bib},{P(k)})")
                if punc == ",":
                    lines.append(f"HasComma({bib},{P(k)})")
    lines += [f"IsAlphaChar({t})" for t in sorted(alpha)]
    lines += [f"LastInitial({b},{P(k)})" for b, k in (last_initial or {}).items()]
    lines += [f"FirstNonAuthorTitleTkn({b},{P(k)})" for b, k in (first_keyword or {}).items()]
    lines += [f"FirstIn({b},{P(k)})" for b, k in (first_in or {}).items()]
    return "\n".join(lines) + "\n"


EXACT = DeriveOptions(predicates=("SimilarTitle", "SimilarVenue", "JntInfCandidate"), venue_pairs="auto",
                      match="exact")


def run(citations, model=MODEL, options=EXACT, **kw):
    """The derived atoms (exact token matching unless ``options`` say otherwise)."""
    db = Database.from_string(evidence(citations, **kw), mln=model)
    out = derive_atoms(model, db, options)
    return {k: set(v) for k, v in out.items()}


def st(out):
    return {(a, int(b[1:]), int(c[1:]), d, int(e[1:]), int(f[1:])) for a, b, c, d, e, f in out["SimilarTitle"]}


def jic(out):
    return {(a, int(b[1:]), c) for a, b, c in out["JntInfCandidate"]}


# ----------------------------------------------------------------- SimilarTitle

def test_similar_title_same_trigram_same_end_with_punctuation_around():
    out = run({"A": "Minton. Integrating heuristics for constraint satisfaction. In AAAI",
               "B": "Minton Integrating heuristics for constraint satisfaction. In AAAI"})
    # A's title 1..5 is preceded and followed by punctuation; B's 1..5 is followed by it
    assert (("A", 1, 5, "B", 1, 5)) in st(out) and ("B", 1, 5, "A", 1, 5) in st(out)
    # B's string may start anywhere its trigram matches A's: 'Minton Integrating heuristics'
    # is not in A (punctuation after Minton), so only spans starting at 1
    assert {r[1] for r in st(out) if r[0] == "B"} == {1}


def test_similar_title_needs_same_end_token():
    out = run({"A": "xx. alpha beta gamma delta. zz", "B": "xx. alpha beta gamma epsilon. zz"})
    assert ("A", 1, 4, "B", 1, 4) not in st(out)
    # the shorter strings ending at 'gamma' share the trigram and the end token, but neither is
    # followed by punctuation
    assert ("A", 1, 3, "B", 1, 3) not in st(out)
    assert st(out) == set()


def test_similar_title_one_side_enough_for_each_boundary():
    # A preceded by punctuation but not followed; B followed but not preceded
    cits = {"A": "xx. alpha beta gamma delta eta", "B": "xx yy alpha beta gamma delta. zz"}
    out = run(cits, options=replace(EXACT, title_delimited="either"))
    assert ("A", 1, 4, "B", 2, 5) in st(out)
    assert ("B", 2, 5, "A", 1, 4) in st(out)
    # the default reading: one of the strings is delimited on both sides
    assert st(run(cits)) == set()
    out = run({"A": "xx. alpha beta gamma delta. eta", "B": "xx yy alpha beta gamma delta eta zz"})
    assert ("A", 1, 4, "B", 2, 5) in st(out) and ("B", 2, 5, "A", 1, 4) in st(out)


def test_similar_title_needs_preceding_punctuation_somewhere():
    out = run({"A": "xx alpha beta gamma delta. zz", "B": "yy alpha beta gamma delta. zz"})
    assert st(out) == set()


def test_similar_title_needs_following_punctuation_somewhere():
    out = run({"A": "xx. alpha beta gamma delta zz", "B": "yy. alpha beta gamma delta ww"})
    assert st(out) == set()


def test_similar_title_string_has_no_inner_punctuation():
    out = run({"A": "xx. alpha beta, gamma delta. zz", "B": "yy. alpha beta gamma delta. zz"})
    assert st(out) == set()                      # A's 'alpha beta' run is too short for a trigram
    out = run({"A": "xx. alpha beta gamma, delta. zz", "B": "yy. alpha beta gamma, delta. zz"})
    assert st(out) == {("A", 1, 3, "B", 1, 3), ("B", 1, 3, "A", 1, 3)}


def test_similar_title_at_least_three_tokens_and_different_citations():
    out = run({"A": "xx. alpha beta. zz", "B": "yy. alpha beta. zz"})
    assert st(out) == set()
    out = run({"A": "xx. alpha beta gamma. alpha beta gamma. zz"})
    assert st(out) == set()                      # never a citation with itself


def test_title_exclusion_initials():
    # 'J.' (IsAlphaChar followed by a period) cannot be in a title-like string
    out = run({"A": "xx. alpha beta J. gamma. zz", "B": "yy. alpha beta J. gamma. zz"})
    assert st(out) == set()
    # a one-letter word without a period is not an initial
    out = run({"A": "xx. alpha beta J gamma. zz", "B": "yy. alpha beta J gamma. zz"})
    assert ("A", 1, 4, "B", 1, 4) in st(out)


def test_title_exclusion_before_last_initial():
    cits = {"A": "xx. alpha beta gamma. zz", "B": "yy. alpha beta gamma. zz"}
    assert not any(r[0] == "A" for r in st(run(cits, last_initial={"A": 3})))   # 1, 2 before 3: excluded
    assert not any(r[0] == "A" for r in st(run(cits, last_initial={"A": 2})))
    assert ("A", 1, 3, "B", 1, 3) in st(run(cits, last_initial={"A": 1}))        # strict: 1 itself not excluded


def test_title_exclusion_editor_initial_is_a_venue_initial():
    # Cora: "R. Musick, J. Catlett and S. Russell. Decision theoretic subsampling for induction on large
    # databases. In ML93, pages 212-219. Editor Paul E. Utgoff." The data's LastInitial is the editor's
    # E. (after the first "In"): the thesis's "last non-venue initial" is S., so the title stays title-like
    text = ("R. Musick, J. Catlett and S. Russell. Decision theoretic subsampling for induction on large "
            "databases. In ML93, pages 212219. Editor Paul E. Utgoff.")
    words = text.split()
    first_in, last = words.index("In"), words.index("E.")
    title = (words.index("Decision"), words.index("databases."))
    cits = {"A": text, "B": text}
    marks = dict(last_initial={"A": last, "B": last}, first_in={"A": first_in, "B": first_in})
    assert ("A", *title, "B", *title) in st(run(cits, **marks))
    # without FirstIn the editor's initial bounds the authors, as the data say: no title
    assert not any(r[1] == title[0] for r in st(run(cits, last_initial={"A": last, "B": last})))
    # the authors before S. (rank 4) stay excluded: 'Catlett and S' is no title-like string
    out = st(run(cits, **marks))
    assert all(r[1] > words.index("S.") for r in out)
    # what follows the editor's initial is venue
    cits = {"A": "xx. alpha beta gamma. In zz Q. delta eta theta. ww",
            "B": "yy. delta eta theta. ww"}
    assert not any(r[0] == "A" and r[1] == 7 for r in st(run(cits, last_initial={"A": 6}, first_in={"A": 4})))
    assert ("A", 7, 9, "B", 1, 3) in st(run(cits, last_initial={"A": 3}, first_in={"A": 4}))
    # an initial before the first "in" is the authors' last: the rule as before
    assert not any(r[0] == "A" and r[1] == 1 for r in st(run(cits, last_initial={"A": 2}, first_in={"A": 4})))


def test_title_exclusion_after_first_venue_keyword():
    cits = {"A": "xx. alpha beta gamma. zz", "B": "yy. alpha beta gamma. zz"}
    # the default reading excludes the keyword itself too (keyword_exclusion="from")
    assert ("A", 1, 3, "B", 1, 3) in st(run(cits, first_keyword={"A": 4}))
    assert not any(r[0] == "A" for r in st(run(cits, first_keyword={"A": 3})))
    # the clause's strictness: the keyword itself is allowed
    after = DeriveOptions(keyword_exclusion="after")
    assert ("A", 1, 3, "B", 1, 3) in st(run(cits, first_keyword={"A": 3}, options=after))
    assert not any(r[0] == "A" for r in st(run(cits, first_keyword={"A": 2}, options=after)))


def test_title_start_reading_admits_an_initial_before_the_string():
    # "schapire r. the strength of weak learnability." -- a period after an initial is no HasPunc
    cits = {"A": "schapire r. the strength of weak learnability. ml",
            "B": "schapire r. e. the strength of weak learnability. ml"}
    assert ("A", 2, 6, "B", 3, 7) in st(run(cits))                              # default: an initial counts
    strict = DeriveOptions(title_start="punctuation")
    assert not any(r[0] == "A" and r[1] == 2 for r in st(run(cits, options=strict)))


def test_jnt_inf_candidate_after_an_initial_in_the_other_citation():
    # in B the trigram follows an initial (a clear boundary); in A it follows a word without punctuation
    cits = {"A": "xx yy the strength of zz.", "B": "schapire r. the strength of zz."}
    assert ("A", 1, "B") in jic(run(cits))
    assert jic(run(cits, options=DeriveOptions(title_start="punctuation"))) == set()
    # the text's reading puts i on the trigram's first token instead of before it
    assert ("A", 2, "B") in jic(run(cits, options=DeriveOptions(jic_position="start")))


def test_venue_conflict_readings():
    cits = {"A": "xx. alpha beta gamma. Journal of zz", "B": "yy. alpha beta gamma. Proceedings of zz",
            "C": "ww. alpha beta gamma. Journal and Proceedings of zz"}

    def pairs(conflict):
        return {tuple(r) for r in run(cits, options=DeriveOptions(venue_pairs="all", venue_conflict=conflict))[
            "SimilarVenue"]}

    assert ("A", "B") not in pairs("exclusive") and ("A", "C") in pairs("exclusive")
    assert ("A", "C") not in pairs("differ") and ("A", "B") not in pairs("differ")
    assert {("A", "B"), ("A", "C"), ("B", "C")} <= pairs("none")


def test_readings_are_checked():
    from markovlogic.errors import OptionError

    for bad in ({"title_start": "comma"}, {"venue_conflict": "some"}, {"jic_position": "after"}, {"title_delimited": "x"},
                {"keyword_exclusion": "before"}):
        with pytest.raises(OptionError, match=next(iter(bad))):
            DeriveOptions(**bad).check()


# ----------------------------------------------------------------- SimilarVenue

def sv_all(cits):
    return run(cits, options=DeriveOptions(venue_pairs="all"))["SimilarVenue"]


def test_similar_venue_conflicting_keywords():
    out = sv_all({"A": "t. Journal of ML", "B": "t. Proceedings of ICML", "C": "t. Some venue"})
    assert ("A", "B") not in out and ("B", "A") not in out         # journal vs proceedings
    assert {("A", "C"), ("C", "A"), ("B", "C"), ("C", "B")} <= out   # no keyword: no conflict
    assert not any(a == b for a, b in out)


def test_similar_venue_same_kind_and_subset_do_not_conflict():
    out = sv_all({"A": "t. Proc of ICML", "B": "t. Conference ICML", "C": "t. Journal Proceedings"})
    assert {("A", "B"), ("A", "C"), ("C", "B")} <= out               # same kind; C has both kinds
    out = sv_all({"A": "t. Tech Report 5", "B": "t. PhD Thesis"})
    assert out == set()


def test_similar_venue_titled_pairs_and_auto():
    cits = {"A": "xx. alpha beta gamma. Journal", "B": "yy. alpha beta gamma. Proceedings",
            "C": "yy. alpha beta gamma. Journal", "D": "zz. other words here. Journal"}
    out = run(cits, options=DeriveOptions(venue_pairs="titled"))
    assert out["SimilarVenue"] == {("A", "C"), ("C", "A")}              # B conflicts; D has no SimilarTitle
    assert venue_pairs_for(MODEL) == "titled"
    alone = MLN.from_string(DECLS + "1 SimilarVenue(c1,c2) => SameBib(c1,c2)\n")
    assert venue_pairs_for(alone) == "all"
    assert ("A", "D") in run(cits, model=alone)["SimilarVenue"]


def test_venue_kinds_cover_the_example():
    assert VENUE_KINDS["TJOURNAL"] != VENUE_KINDS["TPROCEEDINGS"]


# ----------------------------------------------------------------- JntInfCandidate

def test_jnt_inf_candidate_schapire_example():
    # thesis: 'The strength of' is preceded by punctuation in B, not in A
    out = run({"A": "R. Schapire. On the strength of weak learnability. Proceedings",
               "B": "Robert E. Schapire. 5, The strength of weak learnability. Machine Learning"})
    # A: R0 Schapire1 On2 the3 strength4 ...: the trigram at 3 follows position 2 ('On')
    assert ("A", 2, "B") in jic(out)
    # B's trigram 'The strength of' is preceded by punctuation in B itself: not a candidate of B
    assert not any(r[0] == "B" and r[1] == 4 for r in jic(out))


def test_jnt_inf_candidate_needs_punctuation_in_the_other_citation():
    out = run({"A": "xx On the strength of it.", "B": "yy 5 The strength of it."})
    assert jic(out) == set()


def test_jnt_inf_candidate_not_when_preceded_by_punctuation_in_c():
    out = run({"A": "xx. the strength of it.", "B": "yy, the strength of it."})
    assert jic(out) == set()


def test_jnt_inf_candidate_trigram_title_like():
    # an initial inside the trigram, or inner punctuation, or excluded positions: no candidate
    assert jic(run({"A": "xx On the J. of it.", "B": "yy, the J. of it."})) == set()
    assert jic(run({"A": "xx On the strength, of it.", "B": "yy, the strength, of it."})) == set()
    cits = {"A": "xx On the strength of it.", "B": "yy, the strength of it."}
    assert ("A", 1, "B") in jic(run(cits))
    assert jic(run(cits, first_keyword={"A": 3})) == set()       # A's 4 is after the keyword
    assert jic(run(cits, last_initial={"B": 2})) == set()        # B's 1 is before the last initial
    # position 1 itself (before the trigram 2..4) may be excluded: the candidate stands
    assert jic(run(cits, last_initial={"A": 2})) == {("A", 1, "B")}


# ----------------------------------------------------------------- against the definitions, directly

def reference(cits: dict[str, list[tuple[str, bool]]], excluded: dict[str, set[int]], same=None,
              initials: dict[str, set[int]] | None = None, delimited: str = "same"):
    """SimilarTitle and JntInfCandidate by loops over the definitions;
    ``same(a, b)``: whether two tokens match (default: equal); ``initials``:
    the positions holding an initial and its period (a string right after one
    is "preceded by punctuation", the default ``title_start`` reading)."""
    same = same or (lambda a, b: a == b)
    initials = initials or {}

    def seq(a, b):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    def title_like(b, i, j):
        toks = cits[b]
        return (0 <= i and j < len(toks) and j - i >= 2 and not any(k in excluded[b] for k in range(i, j + 1))
                and not any(toks[k][1] for k in range(i, j)))

    def pre(b, i):
        return i > 0 and (cits[b][i - 1][1] or (i - 1) in initials.get(b, ()))

    sim, cand = set(), set()
    for b1 in cits:
        for b2 in cits:
            if b1 == b2:
                continue
            n1, n2 = len(cits[b1]), len(cits[b2])
            w1 = [t for t, _ in cits[b1]]
            w2 = [t for t, _ in cits[b2]]
            for i1 in range(n1):
                for j1 in range(i1 + 2, n1):
                    if not title_like(b1, i1, j1):
                        continue
                    for i2 in range(n2):
                        for j2 in range(i2 + 2, n2):
                            if (title_like(b2, i2, j2) and seq(w1[i1:i1 + 3], w2[i2:i2 + 3]) and same(w1[j1], w2[j2])
                                    and ((pre(b1, i1) or pre(b2, i2))
                                         and (cits[b1][j1][1] or cits[b2][j2][1]) if delimited == "either"
                                         else (pre(b1, i1) and cits[b1][j1][1])
                                         or (pre(b2, i2) and cits[b2][j2][1]))):
                                sim.add((b1, i1, j1, b2, i2, j2))
            for i in range(n1 - 3):
                if cits[b1][i][1] or not title_like(b1, i + 1, i + 3):
                    continue
                for i2 in range(1, n2 - 2):
                    if pre(b2, i2) and title_like(b2, i2, i2 + 2) and seq(w1[i + 1:i + 4], w2[i2:i2 + 3]):
                        cand.add((b1, i, b2))
    return sim, cand


@pytest.mark.parametrize("delimited", ["same", "either"])
@pytest.mark.parametrize("seed", range(8))
def test_matches_direct_reading_of_the_definitions(seed, delimited):
    rng = random.Random(seed)
    vocab = ["ab", "cd", "ab", "cd", "ab", "J"]
    texts, cits, excluded, last, first, fin, inits = {}, {}, {}, {}, {}, {}, {}
    for n in range(8):
        b = f"B{n}"
        words = []
        for _ in range(rng.randint(4, 14)):
            w = rng.choice(vocab)
            p = rng.choice(["", "", "", "", "", ".", ","])
            words.append(w + p)
        texts[b] = " ".join(words)
        toks = []
        ex = set()
        for k, w in enumerate(words):
            m = re.fullmatch(r"([A-Za-z]+)([.,]?)", w)
            initial = m[1] == "J" and m[2] == "."
            toks.append(("T" + m[1].upper(), bool(m[2]) and not (m[2] == "." and len(m[1]) == 1)))
            if initial:
                ex.add(k)
        initials = set(ex)
        inits[b] = initials
        if rng.random() < 0.2:
            last[b] = rng.randrange(len(words))
            if rng.random() < 0.5:
                fin[b] = rng.randrange(len(words))
            if b in fin and last[b] > fin[b]:      # an editor's initial: venue after it,
                ex |= set(range(last[b] + 1, len(words)))   # the authors' last initial bounds
                ex |= set(range(max([k for k in range(fin[b]) if k in initials] or [-1])))
            else:
                ex |= set(range(last[b]))
        if rng.random() < 0.2:
            first[b] = rng.randrange(len(words))
            ex |= set(range(first[b], len(words)))          # keyword_exclusion="from": the keyword too
        cits[b], excluded[b] = toks, ex
    out = run(texts, options=replace(EXACT, title_delimited=delimited), last_initial=last,
              first_keyword=first, first_in=fin)
    sim, cand = reference(cits, excluded, initials=inits, delimited=delimited)
    assert st(out) == sim
    assert jic(out) == cand


# ----------------------------------------------------------------- fuzzy matching (thesis 3.5.2)

FUZZY = DeriveOptions(predicates=("SimilarTitle", "JntInfCandidate"), match="fuzzy")


def test_s_stemmer_and_one_edit():
    from markovlogic.derive.citations import s_stem, within_one_edit, word_of

    assert [s_stem(w) for w in ("queries", "heuristics", "processes", "does", "shoes", "focus",
                                "class", "is", "learning")] == \
        ["query", "heuristic", "processe", "doe", "shoe", "focus", "class", "is", "learning"]
    assert word_of("TLEARNING") == "learning"
    assert within_one_edit("knowledge", "knwledge") and within_one_edit("system", "systgem")
    assert within_one_edit("abc", "abd") and within_one_edit("abc", "abc")
    assert not within_one_edit("abcd", "abdc") and not within_one_edit("abc", "abcde")


def test_fuzzy_jnt_inf_candidate_tolerates_one_edit_and_plurals():
    cits = {"A": "xx On the strengh of heuristics.", "B": "yy, the strength of heuristic."}
    assert jic(run(cits)) == set()                               # exact: 'strengh' is not 'strength'
    assert jic(run(cits, options=FUZZY)) == {("A", 1, "B")}
    # short words must be equal: 'of' and 'on' are one edit apart
    cits = {"A": "xx On the strength it.", "B": "yy, of the strength it."}
    assert jic(run(cits, options=FUZZY)) == set()
    # ... unless the shortest fuzzy word is 2
    short = DeriveOptions(predicates=("SimilarTitle", "JntInfCandidate"), match="fuzzy", min_fuzzy_length=2)
    assert jic(run(cits, options=short)) == {("A", 0, "B")}


def test_fuzzy_bigram_matches_its_concatenation():
    cits = {"A": "xx. Learning multiagent systems quickly. In Proc",
            "B": "yy. Learning multi agent systems quickly. In Proc"}
    assert st(run(cits)) == set()
    out = st(run(cits, options=FUZZY))
    # B's 'multi agent' is one unit: B's string spans positions 1..5, A's 1..4
    assert ("A", 1, 4, "B", 1, 5) in out and ("B", 1, 5, "A", 1, 4) in out
    # punctuation between the two tokens: no unit
    cits["B"] = "yy. Learning multi, agent systems quickly. In Proc"
    assert not any(r[0] == "A" for r in st(run(cits, options=FUZZY)))
    # the bigram is a unit as well as two tokens: where 'inadvances' is a word, 'In Advances in'
    # still matches token by token
    cits = {"A": "xx. The architecture. In Advances in Neural Systems", "B": "yy, editor, Advances in Neural Systems",
            "C": "zz. Inadvances in Neural"}
    assert ("A", 3, "B") in jic(run(cits, options=FUZZY)) and ("A", 3, "B") in jic(run(cits))
    # and an end unit can be a bigram: 'concept learning' ends one string, 'conceptlearning' the other
    cits = {"A": "xx. Incremental methods for concept learning. In Proc",
            "B": "yy. Incremental methods for conceptlearning. In Proc"}
    assert ("A", 1, 5, "B", 1, 4) in st(run(cits, options=FUZZY)) and st(run(cits)) == set()


@pytest.mark.parametrize("seed", range(6))
def test_fuzzy_matches_direct_reading(seed):
    """Random citations over words that are one edit (or a plural) apart and
    whose concatenations are not words: no bigram units, so the direct
    reading with the fuzzy token match applies."""
    from markovlogic.derive.citations import s_stem, within_one_edit, word_of

    rng = random.Random(100 + seed)
    vocab = ["alpha", "alphas", "alpka", "beta", "betas", "gamma", "on", "of", "J"]
    texts, cits, excluded = {}, {}, {}
    for n in range(7):
        b = f"B{n}"
        words = [rng.choice(vocab) + rng.choice(["", "", "", "", ".", ","]) for _ in range(rng.randint(4, 12))]
        texts[b] = " ".join(words)
        toks, ex = [], set()
        for k, w in enumerate(words):
            m = re.fullmatch(r"([A-Za-z]+)([.,]?)", w)
            toks.append(("T" + m[1].upper(), bool(m[2]) and not (m[2] == "." and len(m[1]) == 1)))
            if m[1] == "J" and m[2] == ".":
                ex.add(k)
        cits[b], excluded[b] = toks, ex

    def same(a, b):
        x, y = s_stem(word_of(a)), s_stem(word_of(b))
        return x == y or (min(len(x), len(y)) >= 4 and within_one_edit(x, y))

    out = run(texts, options=FUZZY)
    sim, cand = reference(cits, excluded, same)
    assert st(out) == sim
    assert jic(out) == cand


def test_fuzzy_options_checked():
    from markovlogic.errors import OptionError

    with pytest.raises(OptionError, match="match must be"):
        run({"A": "a b c"}, options=DeriveOptions(match="approximate"))
    with pytest.raises(OptionError, match="min_fuzzy_length"):
        run({"A": "a b c"}, options=DeriveOptions(match="fuzzy", min_fuzzy_length=0))


# ----------------------------------------------------------------- bad input

def test_no_token_evidence():
    db = Database.from_string("Next(P01,P00)\nHasPunc(A,P00)\n", mln=MODEL)
    with pytest.raises(EvidenceError, match="no Token evidence"):
        derive_atoms(MODEL, db)


def test_non_consecutive_positions():
    db = Database.from_string("Next(P01,P00)\nNext(P02,P01)\nNext(P03,P02)\n"
                              "Token(TA,P00,A)\nToken(TB,P01,A)\nToken(TC,P03,A)\n", mln=MODEL)
    with pytest.raises(EvidenceError, match="not consecutive"):
        derive_atoms(MODEL, db)
    db = Database.from_string("Token(TA,P00,A)\nToken(TB,P01,A)\n", mln=MODEL)   # no Next at all
    with pytest.raises(EvidenceError, match="not consecutive"):
        derive_atoms(MODEL, db)


def test_malformed_positions():
    with pytest.raises(EvidenceError, match="two successors"):
        derive_atoms(MODEL, Database.from_string("Next(P01,P00)\nNext(P02,P00)\nToken(TA,P00,A)\n", mln=MODEL))
    with pytest.raises(EvidenceError, match="cycle"):
        derive_atoms(MODEL, Database.from_string("Next(P01,P00)\nNext(P00,P01)\nToken(TA,P00,A)\n", mln=MODEL))
    with pytest.raises(EvidenceError, match="several tokens"):
        derive_atoms(MODEL, Database.from_string("Next(P01,P00)\nToken(TA,P00,A)\nToken(TB,P00,A)\n", mln=MODEL))


def test_model_without_derived_predicates_and_evidence_with_them():
    plain = MLN.from_string("Token(token,position,bib)\nNext(position,position)\n")
    with pytest.raises(MLNSemanticError, match="none of the derived"):
        derive_atoms(plain, Database.from_string("Token(TA,P00,A)\n", mln=plain))
    db = Database.from_string("Token(TA,P00,A)\nSimilarVenue(A,B)\n", mln=MODEL)
    with pytest.raises(EvidenceError, match="already has SimilarVenue"):
        derive_atoms(MODEL, db)


# ----------------------------------------------------------------- CLI and Python

def test_cli_writes_db_and_python_api_agrees(tmp_path: Path, capsys):
    cits = {"A": "Minton. Integrating heuristics for constraint satisfaction. In AAAI",
            "B": "Minton Integrating heuristics for constraint satisfaction. In AAAI"}
    model = tmp_path / "m.mln"
    ev = tmp_path / "e.db"
    out = tmp_path / "d.db"
    model.write_text(DECLS + RULES)
    ev.write_text(evidence(cits))
    assert main(["derive", "-i", str(model), "-e", str(ev), "-o", str(out)]) == 0
    written = Database.from_file(out, mln=MODEL)
    api = derive(MODEL, Database.from_file(ev, mln=MODEL))
    assert sorted(str(a.atom) for a in written.atoms) == sorted(str(a.atom) for a in api.atoms)
    assert any(a.atom.predicate == "SimilarTitle" for a in written.atoms)


def test_cli_bad_input_exit_2(tmp_path: Path, capsys):
    model = tmp_path / "m.mln"
    ev = tmp_path / "e.db"
    model.write_text(DECLS + RULES)
    ev.write_text("Next(P01,P00)\nHasPunc(A,P00)\n")
    out = tmp_path / "d.db"
    assert main(["derive", "-i", str(model), "-e", str(ev), "-o", str(out)]) == 2
    assert "no Token evidence" in capsys.readouterr().err
    assert not out.exists()
    ev.write_text("Next(P01,P00)\nNext(P02,P01)\nToken(TA,P00,A)\nToken(TB,P02,A)\n")
    assert main(["derive", "-i", str(model), "-e", str(ev), "-o", str(out)]) == 2
    assert "not consecutive" in capsys.readouterr().err
    assert main(["derive", "-i", str(model), "-e", str(ev), "-o", str(out), "--venue-pairs", "x"]) == 2


def test_cli_fuzzy_match(tmp_path: Path, capsys):
    cits = {"A": "xx On the strengh of heuristics.", "B": "yy, the strength of heuristic."}
    model = tmp_path / "m.mln"
    ev = tmp_path / "e.db"
    out = tmp_path / "d.db"
    model.write_text(DECLS + RULES)
    ev.write_text(evidence(cits))
    assert main(["derive", "-i", str(model), "-e", str(ev), "-o", str(out), "--match", "exact"]) == 0
    assert "JntInfCandidate(A,P01,B)" not in out.read_text()
    assert main(["derive", "-i", str(model), "-e", str(ev), "-o", str(out)]) == 0          # fuzzy by default
    assert "JntInfCandidate(A,P01,B)" in out.read_text()
    out.unlink()
    assert main(["derive", "-i", str(model), "-e", str(ev), "-o", str(out), "--match", "close"]) == 2
    assert "match must be one of exact, fuzzy" in capsys.readouterr().err
    assert main(["derive", "-i", str(model), "-e", str(ev), "-o", str(out), "--match", "fuzzy",
                 "--min-fuzzy-length", "0"]) == 2
    assert "min_fuzzy_length" in capsys.readouterr().err
    assert not out.exists()
