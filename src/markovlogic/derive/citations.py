"""Derived evidence of Poon & Domingos' joint citation segmentation MLNs.

Poon's thesis (ch. 3; Poon & Domingos, AAAI 2007) feeds its segmentation and
entity-resolution MLNs (``ie_base``, ``ie_jntseg``, ``ie_erseg``) three
predicates computed from the token evidence before inference. This module
computes them, vectorised (pandas joins over position tables), from
``Token(token, position, bib)``, ``Next(position, position)`` (``Next(j,i)``:
``j = i+1``), ``HasPunc``, ``FollowBy``, ``IsAlphaChar``, ``LastInitial`` and
``FirstNonAuthorTitleTkn``.

**Title exclusion.** The thesis calls a string *title-like* if it "does not
contain punctuation and does not match the title exclusion rules" of its
isolated segmentation model (section 3.3.1). Of those rules, three exclude a
position from the title field using evidence alone; a position ``k`` of
citation ``c`` is *excluded* when

1. it holds an initial: ``Token(w,k,c) ^ IsAlphaChar(w) ^ FollowBy(c,k,TPERIOD)``
   ("initials tend to appear in either the author or the venue field");
2. it precedes the last initial: ``LastInitial(c,i) ^ LessThan(k,i)``
   ("positions preceding the last non-venue initial are usually not part of
   the title or venue"). The data's ``LastInitial`` is the last initial
   before the first venue keyword, and in a quarter of ``cora_refs``'s
   citations it is an editor's (``... In ML93, pages 212-219. Editor Paul E.
   Utgoff``): a venue initial, which would exclude the whole title. So when
   ``LastInitial(c,i)`` comes after ``FirstIn(c,f)`` (the first ``in``), the
   initial is read as the venue's: the bound is the last initial (rule 1)
   before ``f``, and the positions after ``i`` (the rest of the venue) are
   excluded. Chosen on training data: on the eight training sets of
   ``cora_refs`` (3 folds) and ``cora_tokens`` (5), the pairwise F1 of
   ``SimilarTitle ^ SimilarVenue`` as a matcher rose on every one (``cora_refs``
   .70/.86/.86 -> .79/.89/.92); excluding the venue after the editor's initial
   too was better on five of the eight than not;
3. it follows the first venue keyword: ``FirstNonAuthorTitleTkn(c,i) ^ LessThan(i,k)``
   ("positions after the first venue keyword are usually not part of the
   author or title").

The strictness of 2 and 3 (the keyword itself and the last initial are not
excluded by them) is that of the MLN clauses. The rules about digits and
dates are per-field (``+f``) and learned, not exclusions, so they are not used.

**SimilarTitle(c,i,j,c',i',j')**, ``c != c'``: positions ``i..j`` of ``c`` and
``i'..j'`` of ``c'`` are title-like strings (every position not excluded, no
``HasPunc`` at ``i..j-1``), at least three tokens long, that start with the same
trigram and end with the same token; at least one of them is immediately
preceded by punctuation (``HasPunc(c,i-1)`` or ``HasPunc(c',i'-1)``) and at
least one is immediately followed by it (``HasPunc(c,j)`` or ``HasPunc(c',j')``);
by default (``title_delimited="same"``) one and the same string is both (it
is delimited by punctuation on both sides), the other may start or end
inside a field. Symmetric by construction. The reading that lets one string
start a field and the other end one (``"either"``) admits pairs such as
``lower bound on the number of examples needed for learning.`` / ``. bounds on
the sample complexity of bayesian learning using ...``: on the three Cora
training folds of ``python -m bench.reproduce --only poon3`` it gave the same
recall of ``SimilarTitle ^ SimilarVenue`` as a matcher and 4-7 points less
precision (``"same"``: 93.8 / 66.0, 98.9 / 72.0, 92.9 / 77.7 R / P against
93.8 / 61.9, 98.9 / 64.8, 92.9 / 70.6).

**SimilarVenue(c,c')**, ``c != c'``: ``c`` and ``c'`` do not contain conflicting
venue keywords. Each keyword belongs to a venue kind (journal, proceedings,
technical report, thesis: :data:`VENUE_KINDS`); two citations conflict when each
has a kind the other lacks (``Journal`` in one, ``Proceedings`` in the other; a
citation without keywords conflicts with none). Written for every ordered pair
(``pairs="all"``) or, when every clause of the model that holds ``SimilarVenue(x,y)``
also holds ``!SimilarTitle(x,_,_,y,_,_)`` (true of the three MLNs), only for the
pairs that have a ``SimilarTitle`` atom (``pairs="titled"``): the other pairs'
values cannot change any ground clause, and the full relation is quadratic
(1.5 million atoms for 1,252 citations).

**JntInfCandidate(c,i,c')**, ``c != c'``: the trigram that follows position
``i`` in ``c`` (positions ``i+1..i+3``) also appears in ``c'`` at ``i'..i'+2``;
neither trigram holds an excluded position or inner punctuation; the trigram
is not preceded by punctuation in ``c`` (``!HasPunc(c,i)``) and is in ``c'``
(``HasPunc(c',i'-1)``). The thesis text says "the trigram starting at position
``i``", but its rule ``InField(i,+f,c) ^ !HasPunc(c,i) ^ !(Exist c' JIC(c,i,c'))
=> InField(i+1,+f,c)`` (and the MLN files' comment "(c,i) matches punc in c'")
uses ``i`` as the position *before* the trigram, where the field boundary is to
be introduced; we follow the rule, which is what the models use.

**Token matching.** With ``match="exact"`` two tokens match when they are
the same constant. ``match="fuzzy"`` (the default) is the thesis's
preprocessing and matching (section 3.5.2): words are lower-cased and
stemmed with Harman's (1991) S-stemmer ("simple stemming": ``-ies`` -> ``-y``,
``-es`` -> ``-e``, ``-s`` dropped, with its exceptions; hyphens are already
removed inside the token constants); two words match when their edit
distance is at most one (only for words of at least ``min_fuzzy_length``
characters: below that, one edit turns ``of`` into ``on`` and most numbers
into each other, so short words must be equal); and a bigram matches the
unigram formed by concatenating it: two adjacent tokens without punctuation
between them whose concatenation is a word of the same evidence
(``concept learning`` / ``conceptlearning``) are also read as one *unit*.
Trigrams and end tokens above are then sequences of units, each a token or
such a bigram, in every way the tokens allow (``in advances in`` and, where
``inadvances`` is a word, ``inadvances in neural``); a string starts at its
first unit's first position and ends at its last unit's last one.

Inputs that cannot give these predicates are refused with an ``EvidenceError``:
no ``Token`` evidence, a position holding two tokens, ``Next`` atoms that do not
form chains, or a citation whose positions are not consecutive in ``Next``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import EvidenceError

TITLE_PREDICATE = "SimilarTitle"
VENUE_PREDICATE = "SimilarVenue"
JIC_PREDICATE = "JntInfCandidate"
DERIVED = (TITLE_PREDICATE, VENUE_PREDICATE, JIC_PREDICATE)
ARITY = {TITLE_PREDICATE: 6, VENUE_PREDICATE: 2, JIC_PREDICATE: 3}

# venue keyword -> kind (token constants of the schema: 'T' + upper-cased word)
VENUE_KINDS: dict[str, str] = {
    **{t: "journal" for t in ("TJOURNAL", "TTRANSACTIONS", "TTRANS")},
    **{t: "proceedings" for t in ("TPROCEEDINGS", "TPROCEEDING", "TPROC", "TCONFERENCE", "TCONF",
                                   "TSYMPOSIUM", "TSYMP", "TWORKSHOP", "TCONGRESS")},
    **{t: "report" for t in ("TTECHNICAL", "TTECH", "TREPORT", "TRPT", "TTR", "TMEMO")},
    **{t: "thesis" for t in ("TTHESIS", "TDISSERTATION", "TPHD")},
}


MATCHES = ("exact", "fuzzy")
TITLE_STARTS = ("punctuation-or-initial", "punctuation")
VENUE_CONFLICTS = ("exclusive", "differ", "none")
JIC_POSITIONS = ("before", "start")
KEYWORD_EXCLUSIONS = ("after", "from")
TITLE_DELIMITED = ("either", "same")


@dataclass
class DeriveOptions:
    """Options of :func:`derive_citations` (``mln derive``).

    ``predicates``: which of the three to compute (default: all three).
    ``venue_pairs``: ``"all"`` every ordered pair without conflict, ``"titled"``
    only pairs with a SimilarTitle atom, ``"auto"`` (``derive`` decides from the model).
    ``period``: the token constant of a period (initials are followed by it).
    ``venue_kinds``: venue keyword token -> kind, for SimilarVenue.
    ``match``: ``"exact"`` or ``"fuzzy"`` token matching (module docstring);
    ``min_fuzzy_length``: the shortest word matched within edit distance one.

    Readings of the thesis's text (module docstring, "Readings"; the defaults
    were chosen on training folds by ``python -m bench.reproduce --only poon3``):
    ``title_start``: what "immediately preceded by punctuation" admits --
    ``"punctuation-or-initial"`` (``HasPunc`` before the string, or an
    initial with its period right before it) or ``"punctuation"`` (``HasPunc``
    only); ``venue_conflict``: when two citations' venue keywords conflict --
    ``"exclusive"`` (each has a kind the other lacks), ``"differ"`` (both have
    keywords and their kinds differ) or ``"none"`` (never: SimilarVenue holds
    for every pair); ``jic_position``: the position ``i`` of
    ``JntInfCandidate(c,i,c')`` -- ``"before"`` the trigram (the rule's reading)
    or its ``"start"`` (the text's); ``keyword_exclusion``: title-like positions
    end ``"after"`` the first venue keyword (the clause) or ``"from"`` it (the
    keyword itself excluded too); ``title_delimited``: SimilarTitle's "at least
    one of the strings is immediately preceded by punctuation, and at least one
    is immediately followed by punctuation" -- ``"either"`` (the two "at least
    one" independent: one string may start a field and the other end one) or
    ``"same"`` (one of the strings is delimited on both sides).
    """

    predicates: tuple[str, ...] = DERIVED
    venue_pairs: str = "all"
    period: str = "TPERIOD"
    venue_kinds: dict[str, str] = field(default_factory=lambda: dict(VENUE_KINDS))
    match: str = "fuzzy"
    min_fuzzy_length: int = 4
    title_start: str = "punctuation-or-initial"
    venue_conflict: str = "exclusive"
    jic_position: str = "before"
    keyword_exclusion: str = "from"
    title_delimited: str = "same"

    def check(self) -> "DeriveOptions":
        from ..errors import OptionError

        unknown = set(self.predicates) - set(DERIVED)
        if unknown:
            raise OptionError(f"cannot derive {', '.join(sorted(unknown))}; derived predicates: {', '.join(DERIVED)}")
        if self.venue_pairs not in ("all", "titled"):
            raise OptionError(f"venue_pairs must be 'all' or 'titled', not {self.venue_pairs!r}")
        if self.match not in MATCHES:
            raise OptionError(f"match must be one of {', '.join(MATCHES)}, not {self.match!r}")
        for name, allowed in (("title_start", TITLE_STARTS), ("venue_conflict", VENUE_CONFLICTS),
                              ("jic_position", JIC_POSITIONS), ("keyword_exclusion", KEYWORD_EXCLUSIONS),
                              ("title_delimited", TITLE_DELIMITED)):
            if getattr(self, name) not in allowed:
                raise OptionError(f"{name} must be one of {', '.join(allowed)}, not {getattr(self, name)!r}")
        n = self.min_fuzzy_length
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise OptionError(f"min_fuzzy_length must be a positive integer, not {n!r}")
        return self


@dataclass
class Positions:
    """One row per token: citation, rank of its position along ``Next``,
    token, punctuation after it, excluded from titles; plus the name tables."""

    table: pd.DataFrame          # bib, rank, pos, token, punc, excluded (sorted by bib, rank)
    position_of_rank: dict[int, str]


def _rows(atoms: dict[str, list[tuple[str, ...]]], name: str, arity: int) -> pd.DataFrame:
    rows = atoms.get(name, [])
    return pd.DataFrame(rows, columns=[f"a{k}" for k in range(arity)], dtype=object)


def position_ranks(next_rows: list[tuple[str, str]], extra: set[str]) -> dict[str, int]:
    """Rank of every position along the ``Next(j,i)`` chains (``j = i+1``).
    Each chain gets its own range of ranks, with a gap between chains, so
    positions of different chains are never consecutive. Positions of
    ``extra`` not in any ``Next`` atom get a chain of their own."""
    succ: dict[str, str] = {}
    pred: dict[str, str] = {}
    for j, i in next_rows:
        if i == j:
            raise EvidenceError(f"Next({j},{i}): a position cannot follow itself")
        if succ.get(i, j) != j:
            raise EvidenceError(f"positions are not a sequence: {i} has two successors in Next "
                                f"({succ[i]} and {j})")
        if pred.get(j, i) != i:
            raise EvidenceError(f"positions are not a sequence: {j} follows two positions in Next "
                                f"({pred[j]} and {i})")
        succ[i] = j
        pred[j] = i
    ranks: dict[str, int] = {}
    nxt = 0
    heads = sorted(p for p in set(succ) | set(pred) if p not in pred)
    for head in heads:
        p: str | None = head
        while p is not None:
            ranks[p] = nxt
            nxt += 1
            p = succ.get(p)
        nxt += 1                 # a gap: the next chain is not consecutive with this one
    if len(ranks) < len(set(succ) | set(pred)):
        raise EvidenceError("positions are not a sequence: the Next atoms form a cycle")
    for p in sorted(extra - set(ranks)):
        ranks[p] = nxt
        nxt += 2
    return ranks


def positions_table(atoms: dict[str, list[tuple[str, ...]]], period: str = "TPERIOD",
                    keyword_exclusion: str = "after") -> Positions:
    """The per-token table, with the checks of the module docstring."""
    tok = _rows(atoms, "Token", 3).rename(columns={"a0": "token", "a1": "pos", "a2": "bib"})
    if tok.empty:
        raise EvidenceError("no Token evidence: SimilarTitle, SimilarVenue and JntInfCandidate are computed "
                            "from Token(token, position, bib) atoms, and the evidence has none")
    dup = tok.duplicated(["bib", "pos"], keep=False)
    if dup.any():
        b, p = tok.loc[dup, ["bib", "pos"]].iloc[0]
        words = sorted(tok.loc[dup & (tok.bib == b) & (tok.pos == p), "token"])
        raise EvidenceError(f"citation {b} has several tokens at position {p} ({', '.join(words)}); "
                            "each position holds one token")
    ranks = position_ranks(atoms.get("Next", []), set(tok["pos"]))
    tok["rank"] = tok["pos"].map(ranks).astype(np.int64)
    tok = tok.sort_values(["bib", "rank"], kind="stable").reset_index(drop=True)
    g = tok.groupby("bib", sort=False)["rank"]
    span = g.transform("max") - g.transform("min") + 1
    size = g.transform("size")
    bad = span != size
    if bad.any():
        b = tok.loc[bad, "bib"].iloc[0]
        ps = ", ".join(tok.loc[tok.bib == b, "pos"])
        raise EvidenceError(f"the positions of citation {b} are not consecutive in Next ({ps}); "
                            "SimilarTitle and JntInfCandidate need each citation's tokens at consecutive "
                            "positions (Next(j,i): j = i+1)")

    punc = _rows(atoms, "HasPunc", 2)
    key = pd.MultiIndex.from_frame(tok[["bib", "pos"]])
    tok["punc"] = key.isin(pd.MultiIndex.from_frame(punc[["a0", "a1"]])) if not punc.empty else False

    # exclusion 1: initials (an IsAlphaChar token followed by a period)
    alpha = {r[0] for r in atoms.get("IsAlphaChar", [])}
    fb = _rows(atoms, "FollowBy", 3)
    fb = fb[fb.a2 == period]
    followed = key.isin(pd.MultiIndex.from_frame(fb[["a0", "a1"]])) if not fb.empty else np.zeros(len(tok), bool)
    excluded = tok["token"].isin(alpha).to_numpy() & np.asarray(followed, bool)
    initial = excluded.copy()
    # exclusions 2 and 3: before the last non-venue initial, after the first venue keyword
    inf = 1 << 62                    # past every rank, exact as a float (pandas' fillna)
    rank = tok["rank"].to_numpy()
    first_in = _bound(atoms, "FirstIn", ranks, tok, min, inf)
    for name, side in (("LastInitial", "before"), ("FirstNonAuthorTitleTkn", "after")):
        if not atoms.get(name):
            continue
        if side == "after":          # an unknown position (one past every chain) excludes nothing
            bound = _bound(atoms, name, ranks, tok, min, inf)
            excluded |= (rank >= bound) if keyword_exclusion == "from" else (rank > bound)
        else:
            b = _bound(atoms, name, ranks, tok, max, -1)
            # an initial after the first "in" is an editor's (a venue initial): the last
            # initial before that "in" bounds the authors instead, and what follows the
            # editor's initial is venue
            venue = b > first_in
            if venue.any():
                before_in = pd.Series(np.where(initial & (rank < first_in), rank, -1)).groupby(
                    tok["bib"].to_numpy()).transform("max").to_numpy()
                excluded |= venue & (rank > b)
                b = np.where(venue, before_in, b)
            excluded |= rank < b
    tok["excluded"] = excluded
    tok["initial"] = initial
    tok["punc"] = tok["punc"].astype(bool)
    return Positions(tok[["bib", "rank", "pos", "token", "punc", "excluded", "initial"]],
                     {v: k for k, v in ranks.items()})


def _bound(atoms, name: str, ranks: dict[str, int], tok: pd.DataFrame, how, missing: int) -> np.ndarray:
    """Per token, the rank of its citation's ``name(bib, position)`` atom (the
    ``how`` of several; ``missing`` where the citation has none or the position
    is in no chain)."""
    rows = _rows(atoms, name, 2)
    if rows.empty:
        return np.full(len(tok), missing, np.int64)
    r = rows.a1.map(ranks).fillna(missing)
    g = pd.Series(r.to_numpy(), index=rows.a0).groupby(level=0)
    bound = g.min() if how is min else g.max()
    return tok["bib"].map(bound).fillna(missing).to_numpy().astype(np.int64)


def _neighbours(t: pd.DataFrame, title_start: str = "punctuation") -> pd.DataFrame:
    """Per token, facts about its neighbours in the same citation (numpy
    shifts): ``has_prev``; ``pre``, punctuation right before it (with
    ``title_start="punctuation-or-initial"`` also an initial and its period);
    ``pre_punc``, ``HasPunc`` right before it."""
    bib = t["bib"].to_numpy()
    n = len(t)
    same_next = np.zeros(n, bool)
    same_next[:-1] = bib[:-1] == bib[1:]
    t = t.copy()
    t["has_prev"] = np.r_[False, same_next[:-1]]
    prev_punc = np.r_[False, t["punc"].to_numpy()[:-1]]
    t["pre_punc"] = t["has_prev"].to_numpy() & prev_punc
    pre = prev_punc
    if title_start == "punctuation-or-initial" and "initial" in t:
        pre = pre | np.r_[False, t["initial"].to_numpy()[:-1]]
    t["pre"] = t["has_prev"].to_numpy() & pre
    return t


# ------------------------------------------------------------------ token matching

def s_stem(word: str) -> str:
    """Harman's S-stemmer (JASIS 1991): ``-ies`` -> ``-y`` (not ``-eies``,
    ``-aies``), ``-es`` -> ``-e`` (not ``-aes``, ``-ees``, ``-oes``), ``-s`` dropped
    (not ``-us``, ``-ss``); the first rule that applies wins."""
    if len(word) > 3 and word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if len(word) > 2 and word.endswith("s") and not word.endswith(("us", "ss")):
        return word[:-1]
    return word


def word_of(token: str) -> str:
    """The lower-cased word of a token constant (``TLEARNING`` -> ``learning``)."""
    return (token[1:] if len(token) > 1 and token[0] == "T" else token).lower()


def within_one_edit(a: str, b: str) -> bool:
    """Levenshtein distance of ``a`` and ``b`` at most one."""
    if a == b:
        return True
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la > lb:
        a, b, la, lb = b, a, lb, la
    i = 0
    while i < la and a[i] == b[i]:
        i += 1
    return a[i + 1:] == b[i + 1:] if la == lb else a[i:] == b[i + 1:]


def fuzzy_pairs(keys: np.ndarray, min_length: int) -> tuple[np.ndarray, np.ndarray]:
    """All ordered pairs ``(x, y)`` of indices into ``keys`` (unique words) that
    match: equal, or both at least ``min_length`` long and one edit apart.
    Candidates share a one-deletion variant (Garbe's symmetric delete), then
    are verified; the work is per distinct word, not per token."""
    n = len(keys)
    ids = np.arange(n)
    variants: dict[str, list[int]] = defaultdict(list)
    for k, w in enumerate(keys):
        if len(w) < min_length:
            continue
        variants[w].append(k)
        for d in {w[:j] + w[j + 1:] for j in range(len(w))}:
            variants[d].append(k)
    xs, ys = [ids], [ids]
    seen: set[tuple[int, int]] = set()
    for group in variants.values():
        if len(group) < 2:
            continue
        for a in group:
            for b in group:
                if a < b and (a, b) not in seen:
                    seen.add((a, b))
                    if len(keys[a]) >= min_length and len(keys[b]) >= min_length and within_one_edit(keys[a], keys[b]):
                        xs += [np.array([a, b])]
                        ys += [np.array([b, a])]
    return np.concatenate(xs), np.concatenate(ys)


def units_table(t: pd.DataFrame, options: "DeriveOptions") -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The units strings are read over (module docstring): one row per unit,
    columns first, last (token indices into ``t``), key; the units ``0..n-1``
    are the tokens themselves, then (fuzzy matching) one unit per bigram
    whose concatenation is a word of the evidence. Also, for fuzzy matching,
    the table of matching keys (columns ``x``, ``y``, both orders, every key
    with itself); None for exact matching."""
    n = len(t)
    idx = np.arange(n)
    if options.match == "exact":
        return pd.DataFrame({"first": idx, "last": idx, "key": t["token"].to_numpy()}), None
    words = np.array([word_of(w) for w in t["token"].to_numpy()], dtype=object)
    bib = t["bib"].to_numpy()
    punc = t["punc"].to_numpy()
    vocab = set(words.tolist())
    cand = np.zeros(n, bool)
    if n > 1:
        cat = words[:-1] + words[1:]
        cand[:-1] = (bib[:-1] == bib[1:]) & ~punc[:-1] & np.fromiter((c in vocab for c in cat), bool, n - 1)
    pair = idx[cand]
    first = np.r_[idx, pair]
    last = np.r_[idx, pair + 1]
    raw = np.r_[words, words[pair] + words[pair + 1]] if pair.size else words
    stems = {w: s_stem(w) for w in set(raw.tolist())}
    keys = np.array([stems[w] for w in raw], dtype=object)
    u = pd.DataFrame({"first": first, "last": last, "key": keys})
    uniq = np.array(sorted(set(keys.tolist())), dtype=object)
    x, y = fuzzy_pairs(uniq, options.min_fuzzy_length)
    return u, pd.DataFrame({"x": uniq[x], "y": uniq[y]})


def _expand(left: pd.DataFrame, columns: list[str], matches: pd.DataFrame | None) -> pd.DataFrame:
    """``left`` with each key column replaced by every key that matches it
    (one row per combination); unchanged for exact matching."""
    if matches is None:
        return left
    for c in columns:
        left = left.merge(matches.rename(columns={"x": c}), on=c).drop(columns=c).rename(columns={"y": c})
    return left


def _runs(t: pd.DataFrame) -> np.ndarray:
    """For each token, the last index of its title-like run (positions not
    excluded, no punctuation before the run's last token); -1 if excluded."""
    ok = ~t["excluded"].to_numpy()
    bib = t["bib"].to_numpy()
    punc = t["punc"].to_numpy()
    n = len(t)
    # a run continues from k to k+1 when both are title-like, same citation, no punc after k
    cont = np.zeros(n, bool)
    cont[:-1] = ok[:-1] & ok[1:] & (bib[:-1] == bib[1:]) & ~punc[:-1]
    # run end = first index e >= k with cont[e] False
    idx = np.arange(n)
    stop = np.where(~cont, idx, n)
    end = np.minimum.accumulate(stop[::-1])[::-1]
    return np.where(ok, end, -1)


def _following(units: np.ndarray, first: np.ndarray, last: np.ndarray, starting: tuple[np.ndarray, ...],
               n: int) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (row, unit) of each unit in ``units`` with every unit that starts
    right after it (``starting[j][p]``: the j-th unit starting at token p, or -1)."""
    p = last[units] + 1
    rows, nxt = [], []
    ok = p < n
    for table in starting:
        cand = np.full(len(units), -1)
        cand[ok] = table[p[ok]]
        keep = cand >= 0
        rows.append(np.flatnonzero(keep))
        nxt.append(cand[keep])
    return np.concatenate(rows), np.concatenate(nxt)


def trigram_starts(t: pd.DataFrame, u: pd.DataFrame | None = None) -> pd.DataFrame:
    """Title-like trigrams: three consecutive units inside one title-like run.
    Columns: start (token index of the first unit's first token), third
    (unit id of the third unit), bib, t0, t1, t2 (keys), end (the run's last
    token), pre, has_prev (of the start token)."""
    n = len(t)
    if u is None:
        u = pd.DataFrame({"first": np.arange(n), "last": np.arange(n), "key": t["token"].to_numpy()})
    first, last, key = u["first"].to_numpy(), u["last"].to_numpy(), u["key"].to_numpy()
    end = _runs(t)
    single = np.arange(n)                           # units 0..n-1 are the tokens
    merged = np.full(n, -1)
    merged[first[n:]] = np.arange(n, len(u))       # the bigram unit starting at a token
    starting = (single, merged) if len(u) > n else (single,)
    u0 = np.flatnonzero(end[first] >= 0)
    r1, u1 = _following(u0, first, last, starting, n)
    u0 = u0[r1]
    r2, u2 = _following(u1, first, last, starting, n)
    u0, u1 = u0[r2], u1[r2]
    ok = end[first[u0]] >= last[u2]               # the three units inside one title-like run
    u0, u1, u2 = u0[ok], u1[ok], u2[ok]
    k = first[u0]
    return pd.DataFrame({
        "start": k, "third": u2, "bib": t["bib"].to_numpy()[k],
        "t0": key[u0], "t1": key[u1], "t2": key[u2],
        "end": end[k], "pre": t["pre"].to_numpy()[k], "has_prev": t["has_prev"].to_numpy()[k],
        "pre_punc": t["pre_punc"].to_numpy()[k] if "pre_punc" in t else t["pre"].to_numpy()[k],
    })


def similar_title(t: pd.DataFrame, starts: pd.DataFrame, matches: pd.DataFrame | None = None,
                  u: pd.DataFrame | None = None, delimited: str = "either") -> pd.DataFrame:
    """SimilarTitle as rows of token indices (k1, e1, k2, e2), both orders:
    a string is a trigram and an end unit (its third unit, or a unit after it
    inside the run). ``delimited``: ``"either"``, punctuation before one
    string and after one (possibly the other); ``"same"``, one string has
    both (``DeriveOptions.title_delimited``)."""
    n = len(t)
    if u is None:
        u = pd.DataFrame({"first": np.arange(n), "last": np.arange(n), "key": t["token"].to_numpy()})
    first, last, key = u["first"].to_numpy(), u["last"].to_numpy(), u["key"].to_numpy()
    punc = t["punc"].to_numpy()
    third = starts["third"].to_numpy()
    after = last[third] + 1                        # end units start at a token in after..end
    lens = np.maximum(starts["end"].to_numpy() - after + 1, 0)
    rep = np.repeat(np.arange(len(starts)), lens)
    offset = np.arange(rep.size) - np.repeat(np.cumsum(lens) - lens, lens)
    tok_start = after[rep] + offset                # a token after the trigram, inside the run
    end_units = [np.arange(len(starts)), rep]      # the third unit itself; single tokens after it
    end_ids = [third, tok_start]
    if len(u) > n:                                 # bigram units after the trigram, inside the run
        merged = np.full(n, -1)
        merged[first[n:]] = np.arange(n, len(u))
        m = merged[tok_start]
        keep = (m >= 0) & (last[np.maximum(m, 0)] <= starts["end"].to_numpy()[rep])
        end_units.append(rep[keep])
        end_ids.append(m[keep])
    rows = np.concatenate(end_units)
    ue = np.concatenate(end_ids)
    e = last[ue]
    col = lambda c: starts[c].to_numpy()[rows]     # noqa: E731
    spans = pd.DataFrame({
        "k": col("start"), "e": e, "bib": col("bib"), "t0": col("t0"), "t1": col("t1"), "t2": col("t2"),
        "last": key[ue], "pre": col("pre"), "post": punc[e] if e.size else np.array([], bool),
    })
    keys = ["t0", "t1", "t2", "last"]
    cols = ["k", "e", "bib"]
    # (pre or pre') and (post or post'): one side has both, or one has pre and the other post
    both = spans[spans.pre & spans.post]
    parts = [
        _expand(both[keys + cols], keys, matches).merge(spans[keys + cols], on=keys, suffixes=("1", "2")),
        _expand(spans.loc[spans.pre, keys + cols], keys, matches).merge(
            spans.loc[spans.post, keys + cols], on=keys, suffixes=("1", "2")),
    ]
    if delimited == "same":
        parts = parts[:1]
    pairs = pd.concat(parts, ignore_index=True)
    pairs = pairs[pairs.bib1 != pairs.bib2]
    a = pairs[["k1", "e1", "k2", "e2"]].to_numpy(np.int64)
    allp = np.vstack([a, a[:, [2, 3, 0, 1]]]) if a.size else a.reshape(0, 4)
    return pd.DataFrame(np.unique(allp, axis=0) if allp.size else allp, columns=["k1", "e1", "k2", "e2"])


def jnt_inf_candidate(t: pd.DataFrame, starts: pd.DataFrame, matches: pd.DataFrame | None = None,
                      position: str = "before") -> pd.DataFrame:
    """JntInfCandidate as rows (k, bib2): k the token index before the trigram
    in c (``position="before"``) or its first token (``"start"``). In c the
    trigram has no ``HasPunc`` right before it (the rule's ``!HasPunc(c,i)``);
    in c' it is preceded by punctuation (``pre``: with the
    ``punctuation-or-initial`` reading an initial's period counts)."""
    keys = ["t0", "t1", "t2"]
    left = starts[starts.has_prev & ~starts.pre_punc]
    right = starts[starts.pre]
    m = _expand(left[keys + ["start", "bib"]], keys, matches).merge(right[keys + ["bib"]], on=keys,
                                                                   suffixes=("", "2"))
    m = m[m.bib != m.bib2]
    shift = 1 if position == "before" else 0
    out = pd.DataFrame({"k": m["start"].to_numpy() - shift, "bib2": m["bib2"].to_numpy()})
    return out.drop_duplicates().reset_index(drop=True)


def venue_kinds(t: pd.DataFrame, kinds: dict[str, str]) -> pd.DataFrame:
    """Citation x kind incidence (bool), one row per citation."""
    k = t.assign(kind=t["token"].map(kinds)).dropna(subset=["kind"])
    table = pd.crosstab(k["bib"], k["kind"]).astype(bool)
    bibs = pd.unique(t["bib"])
    return table.reindex(bibs, fill_value=False)


def similar_venue(t: pd.DataFrame, kinds: dict[str, str], pairs: pd.DataFrame | None,
                  conflict: str = "exclusive") -> pd.DataFrame:
    """SimilarVenue rows (bib1, bib2), bib1 != bib2: every pair (``pairs`` None)
    or the given pairs, without conflicting keywords (``conflict``: see
    :class:`DeriveOptions`)."""
    inc = venue_kinds(t, kinds)
    bibs = inc.index.to_numpy()
    m = inc.to_numpy()
    code = m.astype(np.int64) @ (1 << np.arange(m.shape[1], dtype=np.int64)) if m.shape[1] else np.zeros(len(bibs), np.int64)
    if pairs is None:
        a, b = np.nonzero(~np.eye(len(bibs), dtype=bool))
    else:
        pos = {x: i for i, x in enumerate(bibs)}
        p = pairs.drop_duplicates()
        a = p["bib1"].map(pos).to_numpy(np.int64)
        b = p["bib2"].map(pos).to_numpy(np.int64)
    ca, cb = code[a], code[b]
    if conflict == "exclusive":
        clash = ((ca & ~cb) != 0) & ((cb & ~ca) != 0)
    elif conflict == "differ":
        clash = (ca != 0) & (cb != 0) & (ca != cb)
    else:
        clash = np.zeros(len(a), bool)
    return pd.DataFrame({"bib1": bibs[a[~clash]], "bib2": bibs[b[~clash]]})


def derive_citations(atoms: dict[str, list[tuple[str, ...]]], options: DeriveOptions | None = None
                     ) -> dict[str, list[tuple[str, ...]]]:
    """The derived predicates from evidence atoms grouped by predicate
    (``{"Token": [(token, position, bib), ...], ...}``): predicate -> true atoms' arguments."""
    options = (options or DeriveOptions()).check()
    pos = positions_table(atoms, options.period, options.keyword_exclusion)
    t = _neighbours(pos.table, options.title_start)
    u, matches = units_table(t, options)
    starts = trigram_starts(t, u)
    bib = t["bib"].to_numpy()
    name = t["pos"].to_numpy()
    out: dict[str, list[tuple[str, ...]]] = {}
    st = None
    if TITLE_PREDICATE in options.predicates or (
            VENUE_PREDICATE in options.predicates and options.venue_pairs == "titled"):
        st = similar_title(t, starts, matches, u, options.title_delimited)
    if TITLE_PREDICATE in options.predicates:
        k1, e1, k2, e2 = (st[c].to_numpy() for c in ("k1", "e1", "k2", "e2"))
        out[TITLE_PREDICATE] = list(zip(bib[k1], name[k1], name[e1], bib[k2], name[k2], name[e2]))
    if VENUE_PREDICATE in options.predicates:
        pairs = None
        if options.venue_pairs == "titled":
            pairs = pd.DataFrame({"bib1": bib[st["k1"].to_numpy()], "bib2": bib[st["k2"].to_numpy()]})
        sv = similar_venue(t, options.venue_kinds, pairs, options.venue_conflict)
        out[VENUE_PREDICATE] = list(zip(sv["bib1"], sv["bib2"]))
    if JIC_PREDICATE in options.predicates:
        j = jnt_inf_candidate(t, starts, matches, options.jic_position)
        k = j["k"].to_numpy()
        out[JIC_PREDICATE] = list(zip(bib[k], name[k], j["bib2"]))
    return out


def group_atoms(atoms) -> dict[str, list[tuple[str, ...]]]:
    """True evidence atoms by predicate (false and unknown ones are left out)."""
    grouped: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for a in atoms:
        if a.truth is True:
            grouped[a.atom.predicate].append(a.atom.args)
    return grouped
