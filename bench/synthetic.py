"""Generated workloads of growing size (issue 15's measurements).

``social(n)``: n people with 10 friends each; 10% smoke (evidence), cancer
unknown; ``Smokes => Cancer``, friends of smokers smoke, friends of friends
are friends (Friends is evidence, so that rule's groundings are constants).

``classlike(n)``: n documents, 10 topics (``Topic(doc, topic!)``: exactly
one), 3 links and 5 words each from a vocabulary of 1000; 20% of the topics
known; linked documents share topics; each word votes for topics with a
per-(word, topic) weight (``+`` variables).

``write(kind, n, folder)`` writes ``prog.mln``, ``evidence.db`` and the query
predicates; files are cached under bench/results/synthetic.
"""

from __future__ import annotations

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


def social(n: int, seed: int = 0) -> tuple[str, str, str]:
    rng = np.random.default_rng(seed)
    friends = rng.integers(0, n, size=(n, 10))
    lines = [f"Friends(P{i},P{j})" for i in range(n) for j in friends[i] if j != i]
    lines += [f"Smokes(P{i})" for i in np.flatnonzero(rng.random(n) < 0.1)]
    return SOCIAL, "\n".join(lines) + "\n", "Smokes,Cancer"


def classlike(n: int, seed: int = 0) -> tuple[str, str, str]:
    rng = np.random.default_rng(seed)
    topics = rng.integers(0, 10, size=n)
    links = rng.integers(0, n, size=(n, 3))
    words = rng.integers(0, 1000, size=(n, 5))
    lines = [f"Link(D{i},D{j})" for i in range(n) for j in links[i] if j != i]
    lines += [f"HasWord(D{i},W{w})" for i in range(n) for w in set(words[i].tolist())]
    lines += [f"Topic(D{i},T{topics[i]})" for i in np.flatnonzero(rng.random(n) < 0.2)]
    text = CLASSLIKE.replace("Topic(doc, topic!)", "topic = {" + ", ".join(f"T{k}" for k in range(10))
                             + "}\nTopic(doc, topic!)")
    return text, "\n".join(lines) + "\n", "Topic"


GENERATORS = {"social": social, "classlike": classlike}


def write(kind: str, n: int, seed: int = 0) -> tuple[Path, Path, str]:
    """``(model path, evidence path, queries)``, generated once and cached."""
    folder = RESULTS_DIR / "synthetic" / f"{kind}-{n}-{seed}"
    model, evidence = folder / "prog.mln", folder / "evidence.db"
    if not (model.exists() and evidence.exists()):
        mln, db, queries = GENERATORS[kind](n, seed)
        folder.mkdir(parents=True, exist_ok=True)
        model.write_text(mln)
        evidence.write_text(db)
    return model, evidence, {"social": "Smokes,Cancer", "classlike": "Topic"}[kind]
