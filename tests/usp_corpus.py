"""A toy corpus for the USP tests: companies acquire firms (three synonymous
verbs, active and passive voice), people eat food (two synonymous verbs),
as CoNLL-U dependency trees."""

import random

COMPANIES = ["Microsoft", "Google", "Apple", "IBM", "Oracle", "Intel", "Amazon", "Yahoo"]
TARGETS = ["Farecast", "YouTube", "Siri", "Lotus", "Sun", "Altera", "Zappos", "Flickr"]
PEOPLE = ["John", "Mary", "Sue", "Tom", "Ann", "Bob"]
FOODS = ["pizza", "bread", "soup", "rice", "cake", "salad"]
BUY = [("buy", "bought"), ("acquire", "acquired"), ("purchase", "purchased")]
EAT = [("eat", "ate"), ("devour", "devoured")]


def _row(i, form, lemma, upos, head, rel):
    return "\t".join([str(i), form, lemma, upos, "_", "_", str(head), rel, "_", "_"])


def sentence(subj, verb, obj, passive, obj_upos="PROPN", sid="s", when=False):
    lemma, past = verb
    rows = []
    if not passive:                     # subj V obj [yesterday] .
        rows += [(subj, subj, "PROPN", 2, "nsubj"), (past, lemma, "VERB", 0, "root"), (obj, obj, obj_upos, 2, "obj")]
        if when:
            rows.append(("yesterday", "yesterday", "NOUN", 2, "obl:tmod"))
        rows.append((".", ".", "PUNCT", 2, "punct"))
    else:                               # obj was V-ed by subj [yesterday] .
        rows += [(obj, obj, obj_upos, 3, "nsubj:pass"), ("was", "be", "AUX", 3, "aux:pass"),
                 (past, lemma, "VERB", 0, "root"), ("by", "by", "ADP", 5, "case"), (subj, subj, "PROPN", 3, "obl")]
        if when:
            rows.append(("yesterday", "yesterday", "NOUN", 3, "obl:tmod"))
        rows.append((".", ".", "PUNCT", 3, "punct"))
    text = " ".join(r[0] for r in rows)
    lines = [f"# sent_id = {sid}", f"# text = {text}"]
    lines += [_row(i, *r) for i, r in enumerate(rows, 1)]
    return "\n".join(lines) + "\n\n"


def toy_corpus(n=240, seed=0, passive_share=0.3):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        passive = rng.random() < passive_share
        when = rng.random() < 0.3
        if rng.random() < 0.6:
            out.append(sentence(rng.choice(COMPANIES), rng.choice(BUY), rng.choice(TARGETS), passive,
                                sid=f"c{i}", when=when))
        else:
            out.append(sentence(rng.choice(PEOPLE), rng.choice(EAT), rng.choice(FOODS), passive, obj_upos="NOUN",
                                sid=f"p{i}", when=when))
    return "".join(out)
