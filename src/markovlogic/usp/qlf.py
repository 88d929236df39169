"""Quasi-logical forms from dependency trees (Poon's thesis, §5.3.1).

Every word of a sentence becomes a unary atom ``lemma:UPOS(n_i)`` and every
dependency edge a binary atom ``label(n_h, n_i)``; the QLF of a sentence is
their conjunction. Here a whole corpus is one set of integer arrays, one entry
per QLF node (``form``, ``head``, ``label``, ``sent``), so that learning and
parsing never hold a Python object per word.

The edges are those of Stanford *collapsed* dependencies, which the thesis
used, written in UD terms (as UD's enhanced dependencies write them): a
preposition or subordinator (``case``, ``mark``) is folded into the label of
the word it marks when that word is an ``obl``, ``nmod``, ``acl`` or
``advcl`` (``obl`` + "by" -> ``obl:by``), a coordinator into its ``conj``
(``conj:and``); those function words and punctuation are not nodes of the
QLF (their own dependents, rare, hang from the nearest kept ancestor). By
default, as Poon's reader (``StanfordParseReader.ignored_deps``), auxiliaries
(``aux``, ``aux:pass``), copulas, determiners (``det``, ``det:predet``),
expletives and pre-conjunctions are not nodes either: the passive is seen in
``nsubj:pass``/``obl:by``, and COMPOSE cannot fuse "was" or "is" into the
verb's or predicate's part (which split one verb's instances into several
clusters with separate argument types: role-induction F1 on up_ewt dev 80.75
with them as nodes, 82.31 without). ``dropped=DROPPED`` keeps them. PropBank
columns (``Token.extra``) are never read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ..text.conllu import Sentence, TextError

DROPPED = ("punct", "case", "mark", "cc")
# the dependencies Poon's reader (StanfordParseReader.ignored_deps: aux, auxpass, det, cop, complm, preconj,
# predet, punct, quantmod, expl, mark) leaves out of the QLF, in UD's names
FUNCTION_WORDS = ("aux", "aux:pass", "cop", "det", "det:predet", "expl", "cc:preconj")
POON_DROPPED = DROPPED + FUNCTION_WORDS
CASE_HOSTS = ("obl", "nmod", "acl", "advcl")
MARK_HOSTS = ("advcl", "acl")


@dataclass
class Vocab:
    """String <-> id tables for atomic forms (``lemma:UPOS``) and edge labels.
    ``frozen`` vocabularies (a learned model's) map unknown strings to -1.
    ``dropped``: the dependency relations whose words are left out of the QLF
    (a model keeps its own, so new sentences are read as its corpus was)."""

    forms: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    frozen: bool = False
    dropped: tuple[str, ...] = DROPPED      # relations whose words are not QLF nodes

    def __post_init__(self) -> None:
        self._form_id = {f: i for i, f in enumerate(self.forms)}
        self._label_id = {x: i for i, x in enumerate(self.labels)}

    def form_ids(self, strings: np.ndarray) -> np.ndarray:
        return self._ids(strings, self.forms, self._form_id)

    def label_ids(self, strings: np.ndarray) -> np.ndarray:
        return self._ids(strings, self.labels, self._label_id)

    def form_id(self, s: str) -> int:
        return int(self.form_ids(np.array([s], dtype=object))[0])

    def label_id(self, s: str) -> int:
        return int(self.label_ids(np.array([s], dtype=object))[0])

    def _ids(self, strings, table, index) -> np.ndarray:
        if len(strings) == 0:
            return np.zeros(0, dtype=np.int32)
        # factorize the objects (astype(str) would make a fixed-width array as wide as the longest string)
        inverse, uniq = pd.factorize(pd.Series(strings, dtype=object), sort=True)
        ids = np.empty(len(uniq), dtype=np.int32)
        for k, s in enumerate(uniq.tolist()):       # one entry per distinct string
            i = index.get(s)
            if i is None:
                if self.frozen:
                    i = -1
                else:
                    i = len(table)
                    table.append(s)
                    index[s] = i
            ids[k] = i
        return ids[inverse]


@dataclass
class QLFCorpus:
    """The QLFs of a corpus as arrays. Nodes are numbered sentence by sentence
    in word order; ``head`` is a node index (-1 for a sentence's root) and
    ``label`` the (collapsed) label of the edge from the head (-1 at roots).
    ``tok_*`` keep every word of the input (dropped ones too) for printing
    answers; ``node_tok`` maps a node to its word."""

    vocab: Vocab
    form: np.ndarray            # int32 [n_nodes] atomic form id (-1: unknown to a frozen vocabulary)
    head: np.ndarray            # int32 [n_nodes]
    label: np.ndarray           # int32 [n_nodes]
    sent: np.ndarray            # int32 [n_nodes]
    node_tok: np.ndarray        # int64 [n_nodes] global word index
    sent_start: np.ndarray      # int64 [n_sent + 1] first node of each sentence
    tok_start: np.ndarray       # int64 [n_sent + 1] first word of each sentence
    tok_form: np.ndarray        # object [n_words]
    tok_lemma: np.ndarray       # object [n_words]
    tok_upos: np.ndarray        # object [n_words]
    tok_head: np.ndarray        # int32 [n_words] 1-based head within the sentence (0: root)
    tok_deprel: np.ndarray      # object [n_words]
    sent_ids: list[str]
    files: list[str]
    sent_file: np.ndarray       # int32 [n_sent] index into files

    @property
    def n_nodes(self) -> int:
        return len(self.form)

    @property
    def n_sentences(self) -> int:
        return len(self.sent_ids)

    def tok_of(self, sent: int, word: int) -> int:
        """Global word index of word ``word`` (1-based) of sentence ``sent``."""
        return int(self.tok_start[sent]) + word - 1

    def node_of_tok(self) -> np.ndarray:
        """``out[w]``: the node of word ``w``, -1 for words that are not QLF nodes."""
        out = np.full(len(self.tok_form), -1, dtype=np.int64)
        out[self.node_tok] = np.arange(self.n_nodes)
        return out

    def atoms(self, s: int) -> list[str]:
        """The QLF of sentence ``s`` as atoms, for printing and tests:
        ``buy:VERB(n2)``, ``nsubj(n2, n1)`` (n = word number)."""
        out = []
        lo, hi = int(self.sent_start[s]), int(self.sent_start[s + 1])
        words = self.node_tok[lo:hi] - self.tok_start[s] + 1
        for i in range(lo, hi):
            f = self.form[i]
            name = self.vocab.forms[f] if f >= 0 else f"{self.tok_lemma[self.node_tok[i]]}:{self.tok_upos[self.node_tok[i]]}"
            out.append(f"{name}(n{words[i - lo]})")
        for i in range(lo, hi):
            if self.head[i] >= 0:
                out.append(f"{self.vocab.labels[self.label[i]]}(n{words[self.head[i] - lo]}, n{words[i - lo]})")
        return out


def _object(values: Sequence[str]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def build_qlf(sentences: Iterable[Sentence], vocab: Vocab | None = None,
              dropped: tuple[str, ...] | None = None) -> QLFCorpus:
    """The QLFs of ``sentences`` (see the module text). With a frozen ``vocab``
    (a learned model's), forms it does not know get id -1 and the words of its
    ``dropped`` relations are left out; a new vocabulary drops ``dropped``
    (default :data:`DROPPED`; :data:`POON_DROPPED` also leaves out auxiliaries,
    copulas, determiners and expletives, as Poon's reader). An empty corpus is
    a :class:`TextError`."""
    if vocab is None:
        vocab = Vocab(dropped=tuple(dropped) if dropped is not None else POON_DROPPED)
    elif dropped is not None and tuple(dropped) != tuple(vocab.dropped):
        raise ValueError("build_qlf: a vocabulary's QLFs drop its own relations")
    forms: list[str] = []
    lemmas: list[str] = []
    upos: list[str] = []
    heads: list[int] = []
    deprels: list[str] = []
    lens: list[int] = []
    sent_ids: list[str] = []
    files: list[str] = []
    file_index: dict[str, int] = {}
    sent_file: list[int] = []
    for s in sentences:              # the reader's tokens, flattened once
        for t in s.tokens:
            forms.append(t.form)
            lemmas.append(t.lemma)
            upos.append(t.upos)
            heads.append(t.head)
            deprels.append(t.deprel)
        lens.append(len(s.tokens))
        sent_ids.append(s.sent_id or f"{s.file}:{s.line}")
        if s.file not in file_index:
            file_index[s.file] = len(files)
            files.append(s.file)
        sent_file.append(file_index[s.file])
    if not lens:
        raise TextError("the corpus has no sentences (a USP corpus needs at least one dependency tree)")
    n_words = len(forms)
    tok_start = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(np.asarray(lens, dtype=np.int64), out=tok_start[1:])
    tok_sent = np.repeat(np.arange(len(lens), dtype=np.int32), lens)
    tok_head = np.asarray(heads, dtype=np.int32)
    deprel = _object(deprels)
    lemma = _object(lemmas)
    upos_a = _object(upos)
    # global head index of every word (-1 at roots)
    ghead = np.where(tok_head > 0, tok_start[tok_sent] + tok_head - 1, -1).astype(np.int64)
    base = _object([d.split(":", 1)[0] for d in deprels])
    has_sub = np.fromiter((":" in d for d in deprels), dtype=bool, count=n_words)
    drop = np.isin(deprel, list(vocab.dropped))
    # fixed parts of a dropped marker ("because of") go with it
    fixed = (deprel == "fixed") & (ghead >= 0)
    drop[fixed] |= drop[ghead[fixed]]
    # markers folded into the label of the word they mark
    marker = np.isin(deprel, ("case", "mark", "cc")) & (ghead >= 0)
    mk = np.nonzero(marker)[0]
    host = ghead[mk]
    hb = base[host]
    ok = np.where(deprel[mk] == "case", np.isin(hb, CASE_HOSTS),
                  np.where(deprel[mk] == "mark", np.isin(hb, MARK_HOSTS), hb == "conj")) & ~has_sub[host]
    mk, host = mk[ok], host[ok]
    label_text = deprel.copy()
    if len(mk):
        text = _object([str(x).lower() for x in lemma[mk]])
        fx = np.nonzero(fixed & drop)[0]            # "because" + fixed "of" -> "because_of"
        if len(fx):
            fixed_words: dict[int, list[str]] = {}
            for w, h in zip(fx.tolist(), ghead[fx].tolist()):
                fixed_words.setdefault(h, []).append(str(lemma[w]).lower())
            text = _object([t + "".join("_" + f for f in fixed_words.get(m, ())) for t, m in zip(text, mk.tolist())])
        order = np.lexsort((mk, host))
        mk, host, text = mk[order], host[order], text[order]
        starts = np.r_[0, np.nonzero(np.diff(host))[0] + 1]
        joined = ["_".join(text[a:b]) for a, b in zip(starts, np.r_[starts[1:], len(host)])]
        hosts = host[starts]
        label_text[hosts] = _object([f"{d}:{j}" for d, j in zip(deprel[hosts], joined)])
    # kept words hang from their nearest kept ancestor
    keep = ~drop
    keep[ghead < 0] = True                           # a sentence's root is always kept
    nh = ghead.copy()
    for _ in range(n_words):
        bad = (nh >= 0) & ~keep[np.maximum(nh, 0)]
        if not bad.any():
            break
        nh[bad] = ghead[nh[bad]]
    node_tok = np.nonzero(keep)[0]
    tok_node = np.full(n_words, -1, dtype=np.int64)
    tok_node[node_tok] = np.arange(len(node_tok))
    h = nh[node_tok]
    head = np.where(h >= 0, tok_node[np.maximum(h, 0)], -1).astype(np.int32)
    form_text = _object([f"{lemma[w]}:{upos_a[w]}" for w in node_tok.tolist()])
    form = vocab.form_ids(form_text)
    lab = np.full(len(node_tok), -1, dtype=np.int32)
    nonroot = head >= 0
    lab[nonroot] = vocab.label_ids(label_text[node_tok[nonroot]])
    sent = tok_sent[node_tok].astype(np.int32)
    sent_start = np.searchsorted(sent, np.arange(len(lens) + 1)).astype(np.int64)
    return QLFCorpus(
        vocab=vocab, form=form.astype(np.int32), head=head, label=lab, sent=sent, node_tok=node_tok,
        sent_start=sent_start, tok_start=tok_start, tok_form=_object(forms), tok_lemma=lemma, tok_upos=upos_a,
        tok_head=tok_head, tok_deprel=deprel, sent_ids=sent_ids, files=files,
        sent_file=np.asarray(sent_file, dtype=np.int32))
