"""USP from Python in a line or two::

    from markovlogic.usp import learn, USPOptions, OntoOptions
    model = learn(["train.conllu"], USPOptions(), onto=OntoOptions())
    model.save("model.usp")
    for a in model.knowledge_base().answer("What does Microsoft buy?"):
        print(a.text)
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Iterable

from ..text.conllu import Sentence, read_conllu_files
from .learn import Learner, USPOptions
from .model import USPModel
from .onto import OntoOptions, head_pairs, learn_ontology
from .qlf import QLFCorpus, build_qlf
from .state import Priors, USPState


def read_corpus(paths: Iterable[str | Path], dropped: tuple[str, ...] | None = None) -> QLFCorpus:
    """The QLFs of CoNLL-U files (``.gz`` too; a folder stands for its
    ``*.conllu`` files); ``dropped``: the relations whose words are not QLF
    nodes (default: Poon's, :data:`~markovlogic.usp.qlf.POON_DROPPED`; see
    :func:`build_qlf`). Errors name the file and line; an empty corpus is an
    error."""
    return build_qlf(read_conllu_files(list(paths)), dropped=dropped)


def learn(corpus: QLFCorpus | Iterable[str | Path] | Iterable[Sentence], options: USPOptions | None = None,
          onto: OntoOptions | None = None, progress: Callable[[str], None] | None = None) -> USPModel:
    """USP-Learn on a corpus (QLFs, CoNLL-U paths or sentences), then, with
    ``onto``, OntoUSP's ISA search over the result."""
    options = options or USPOptions()
    options.check()
    if onto is not None:
        onto.check()
    if not isinstance(corpus, QLFCorpus):
        items = list(corpus)
        corpus = build_qlf(items) if items and isinstance(items[0], Sentence) else read_corpus(items)
    t0 = time.perf_counter()
    state = USPState(corpus, Priors(options.alpha, options.beta))
    learner = Learner(state, options, (lambda msg, st: progress(msg)) if progress else None)
    stats = learner.run()
    info = {"usp": stats.as_dict(), "sentences": corpus.n_sentences, "nodes": corpus.n_nodes}
    model = USPModel.from_state(state, options=dict(options.__dict__), stats=info)
    if onto is not None:
        heads = head_pairs(model, onto.min_parts)
        _, ostats = learn_ontology(model, [heads, learner.merge_candidates()], onto, progress)
        info["onto"] = ostats.as_dict()
        info["onto_options"] = dict(onto.__dict__)
    info["seconds"] = time.perf_counter() - t0
    model.stats = info
    return model
