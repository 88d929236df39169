"""Generated workloads of growing size (issue 15's measurements).

``social(n)``: n people with 10 friends each; 10% smoke (evidence), cancer
unknown; ``Smokes => Cancer``, friends of smokers smoke, friends of friends
are friends (Friends is evidence, so that rule's groundings are constants).

``social_light(n)``: the same model with 2 friends each instead of 10:
4.4 ground clauses a person (social: 10.9), as the lighter social network
of issue 30 (4.5 M clauses at N=1M).

``social-no-transitivity`` (``write`` only): the social model without the
rule on observed friends, over the social evidence: the same ground network.

``classlike(n)``: n documents, 10 topics (``Topic(doc, topic!)``: exactly
one), 3 links and 5 words each from a vocabulary of 1000; 20% of the topics
known; linked documents share topics; each word votes for topics with a
per-(word, topic) weight (``+`` variables).

``write(kind, n, folder)`` writes ``prog.mln``, ``evidence.db`` and the query
predicates; files are cached under bench/results/synthetic. The evidence is
written in chunks of people/documents (the text of social N=3M is 300 MB),
with the same lines in the same order as ``social``/``classlike`` return.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from bench.harness import RESULTS_DIR

SOCIAL = """\
Smokes(person)
Cancer(person)
Friends(person, person)

1.5 Smokes(x) => Cancer(x)
1.1 Friends(x, y) ^ Smokes(x) => Smokes(y)
0.4 Friends(x, y) ^ Friends(y, z) => Friends(x, z)
-0.6 Smokes(x)
-1.2 Cancer(x)
"""

CLASSLIKE = """\
Topic(doc, topic!)
Link(doc, doc)
HasWord(doc, word)

0.8 Link(d1, d2) ^ Topic(d1, t) => Topic(d2, t)
0.1 HasWord(d, +w) => Topic(d, +t)
"""

CHUNK = 100_000


def _social_lines(n: int, seed: int, n_friends: int = 10) -> Iterator[str]:
    rng = np.random.default_rng(seed)
    friends = rng.integers(0, n, size=(n, n_friends))
    for lo in range(0, n, CHUNK):
        yield "".join(f"Friends(P{i},P{j})\n" for i in range(lo, min(n, lo + CHUNK)) for j in friends[i] if j != i)
    del friends
    yield "".join(f"Smokes(P{i})\n" for i in np.flatnonzero(rng.random(n) < 0.1))


def _class_lines(n: int, seed: int) -> Iterator[str]:
    rng = np.random.default_rng(seed)
    topics = rng.integers(0, 10, size=n)
    links = rng.integers(0, n, size=(n, 3))
    words = rng.integers(0, 1000, size=(n, 5))
    for lo in range(0, n, CHUNK):
        yield "".join(f"Link(D{i},D{j})\n" for i in range(lo, min(n, lo + CHUNK)) for j in links[i] if j != i)
    for lo in range(0, n, CHUNK):
        yield "".join(f"HasWord(D{i},W{w})\n" for i in range(lo, min(n, lo + CHUNK)) for w in set(words[i].tolist()))
    yield "".join(f"Topic(D{i},T{topics[i]})\n" for i in np.flatnonzero(rng.random(n) < 0.2))


def _class_model() -> str:
    return CLASSLIKE.replace("Topic(doc, topic!)", "topic = {" + ", ".join(f"T{k}" for k in range(10))
                             + "}\nTopic(doc, topic!)")


def social(n: int, seed: int = 0) -> tuple[str, str, str]:
    return SOCIAL, "".join(_social_lines(n, seed)), "Smokes,Cancer"


def _light_lines(n: int, seed: int) -> Iterator[str]:
    return _social_lines(n, seed, n_friends=2)


def social_light(n: int, seed: int = 0) -> tuple[str, str, str]:
    return SOCIAL, "".join(_light_lines(n, seed)), "Smokes,Cancer"


def classlike(n: int, seed: int = 0) -> tuple[str, str, str]:
    return _class_model(), "".join(_class_lines(n, seed)), "Topic"


GENERATORS = {"social": social, "social-light": social_light, "classlike": classlike}
_STREAMS = {"social": (SOCIAL, _social_lines), "social-light": (SOCIAL, _light_lines),
            "classlike": (None, _class_lines)}
QUERIES = {"social": "Smokes,Cancer", "social-light": "Smokes,Cancer", "classlike": "Topic"}


# the social model without its evidence-only rule (the transitivity of the observed ``Friends``): the same
# ground network (that rule's groundings are all constants, counted in SQL and never held), the same
# evidence file; at N=10M DuckDB's count of that rule (a join of 10^9 rows under the grounder's 512 MB
# cap for counts) runs out of memory, so the search state at 10^8 clauses is measured on this variant
VARIANTS = {"social-no-transitivity": ("social", SOCIAL.replace("0.4 Friends(x, y) ^ Friends(y, z) => Friends(x, z)\n",
                                                                 ""))}


def write(kind: str, n: int, seed: int = 0) -> tuple[Path, Path, str]:
    """``(model path, evidence path, queries)``, generated once and cached."""
    if kind in VARIANTS:
        base, text = VARIANTS[kind]
        _, evidence, queries = write(base, n, seed)
        model = RESULTS_DIR / "synthetic" / f"{kind}-{n}-{seed}.mln"
        if not model.exists():
            model.write_text(text)
        return model, evidence, queries
    if kind not in GENERATORS:
        raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(GENERATORS)}")
    folder = RESULTS_DIR / "synthetic" / f"{kind}-{n}-{seed}"
    model, evidence = folder / "prog.mln", folder / "evidence.db"
    if not (model.exists() and evidence.exists()):
        folder.mkdir(parents=True, exist_ok=True)
        text, lines = _STREAMS[kind]
        tmp = evidence.with_suffix(f".tmp{os.getpid()}")
        with open(tmp, "w") as fh:
            for chunk in lines(n, seed):
                fh.write(chunk)
        model.write_text(text if text is not None else _class_model())
        os.replace(tmp, evidence)
    return model, evidence, QUERIES[kind]
