"""The knowledge base of a learned USP model and question answering
(Poon's thesis, §5.5.2).

The MAP parses of the training corpus are the knowledge base: every part is
an assertion ``C(e)`` of its cluster with its arguments ``A_t(e, x)`` by
argument type. A question "What does X V?" (or "What Vs X?", "What is X
V-ed by?", "What is V-ed by X?") becomes a small dependency tree, is parsed
by USP-Parse with the learned model (its "what" is a wildcard that prefers no
cluster, as the thesis's dummy word), and matches every part of the
question relation's cluster (with OntoUSP also of its ISA descendants) that
has an argument of X's type headed by X's word; the answer is that part's
argument of the type the question asks for. So "bought" answers "acquired"
when the two are in one cluster, and a passive question finds active
sentences when the passive subject and the object share an argument type.

With OntoUSP (``ontology=True``) the search also covers the question
cluster's ISA descendants (thesis §6.5.2) and, because the hierarchy learned
here has two levels (the question's cluster is usually a leaf), the ISA
siblings that hold the question's verb in another lambda form (``use`` and
``use(aux:pass be)``), their types matched through the generic roles.

Deviation: the thesis matches X by subsumption of X's logical form; here X
matches an argument whose head word has X's head lemma (a cluster of nouns
would otherwise answer a question about one noun with facts about others).
By default an answer must be headed by a noun, proper noun or number ("what"
asks for a thing; a pronoun or an adverb is not an answer).

Negation (``skip_negated``, on by default): a part whose head word is negated
("The staff will *not* answer the phone") asserts no fact and answers nothing.
This is the rule of Poon's released question-answering code (``eval.USP``:
a matched part with an argument of dependency ``neg`` is skipped); UD has no
``neg`` relation, so a negated head is one with an ``advmod`` (or ``neg``)
dependent whose lemma is *not*, *n't* or *never* (the words the Stanford
converter labelled ``neg``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..errors import MarkovLogicError
from ..text.conllu import read_conllu_lines
from .model import USPModel
from .parse import VIRTUAL, WILDCARD, Parser
from .qlf import build_qlf
from .vectors import ppmi

KINDS = ("active_obj", "active_subj", "passive_subj", "passive_obj")


NEGATION_LEMMAS = ("not", "n't", "never")


def negated_words(q) -> np.ndarray:
    """``out[w]``: word ``w`` of the corpus has a negating dependent (an
    ``advmod``/``neg`` dependent with lemma *not*, *n't* or *never*)."""
    lemma = np.array([str(x).lower() for x in q.tok_lemma], dtype=object)
    deprel = np.asarray(q.tok_deprel, dtype=object)
    head = np.asarray(q.tok_head, dtype=np.int64)
    t = np.nonzero(np.isin(lemma, NEGATION_LEMMAS) & np.isin(deprel, ("advmod", "neg")) & (head > 0))[0]
    sent = np.searchsorted(q.tok_start, t, side="right") - 1
    out = np.zeros(len(lemma), dtype=bool)
    out[np.asarray(q.tok_start, dtype=np.int64)[sent] + head[t] - 1] = True
    return out


@dataclass
class AnswerOptions:
    """How the knowledge base answers.

    * ``answer_upos``: an answer's head must have one of these UPOS tags
      ("what" asks for a thing); ``None`` accepts any.
    * ``skip_negated``: a part whose head word is negated answers nothing
      (Poon's ``eval.USP``).
    * ``same_verb``: answer only from parts headed by the question's own verb
      lemma; the cluster still decides which argument types match (so a
      passive question finds active sentences), but another verb of the
      cluster ("acquired" for "bought") gives no answer. Off by default (the
      thesis answers through the whole cluster); see examples/usp/README.md for
      what dev questions say about it.
    * ``min_verb_similarity``: answer through another verb of the cluster only
      when that verb and the question's verb are distributional neighbours:
      the cosine of their PPMI-weighted vectors of (relation, argument word)
      pairs counted over the knowledge base's own (unlabelled) trees is at
      least this (:func:`verb_similarity`). 0 (the default): every verb of the
      cluster answers, as in the thesis; above 1: only the question's verb,
      as ``same_verb``. The cluster still decides the argument types."""

    answer_upos: tuple[str, ...] | None = ("NOUN", "PROPN", "NUM")
    skip_negated: bool = True
    same_verb: bool = False
    min_verb_similarity: float = 0.0

    def __post_init__(self) -> None:
        if not self.min_verb_similarity >= 0:
            raise QuestionError(f"min_verb_similarity must be >= 0, not {self.min_verb_similarity!r}")


class QuestionError(MarkovLogicError):
    """A question that is not of a form USP answers."""


def argument_vectors(q, lemma_of_node: np.ndarray, n_lemmas: int) -> sp.csr_matrix:
    """Row ``l``: the L2-normalised PPMI vector of lemma ``l`` over the
    (relation, argument form) pairs of its words' dependents in the QLF corpus
    ``q`` (collapsed labels, ``lemma:UPOS`` forms): the distributional
    profile of a predicate by who fills which of its argument slots. Read from
    the trees only."""
    c = np.nonzero(np.asarray(q.head) >= 0)[0]
    shape0 = int(n_lemmas)
    if len(c) == 0:
        return sp.csr_matrix((shape0, 1), dtype=np.float64)
    rows = np.asarray(lemma_of_node, dtype=np.int64)[np.asarray(q.head, dtype=np.int64)[c]]
    nf = int(np.max(q.form)) + 2
    feat = np.asarray(q.label, dtype=np.int64)[c] * nf + (np.asarray(q.form, dtype=np.int64)[c] + 1)
    fid, finv = np.unique(feat, return_inverse=True)
    return ppmi(sp.csr_matrix((np.ones(len(c)), (rows, finv)), shape=(shape0, len(fid))))


def verb_similarity(vectors: sp.csr_matrix, a: int, b: int) -> float:
    """Cosine of the argument vectors of lemmas ``a`` and ``b`` (1 for a == b)."""
    if a == b:
        return 1.0
    return float(vectors[a].multiply(vectors[b]).sum())


@dataclass
class Question:
    """A question about one relation: ``kind`` says which argument is given
    (X) and which is asked (what):

    * ``active_obj``   "What does X V?"      X subject, asks the object
    * ``active_subj``  "What Vs X?"           X object, asks the subject
    * ``passive_subj`` "What is X V-ed by?"   X passive subject, asks the agent
    * ``passive_obj``  "What is V-ed by X?"   X agent, asks the passive subject

    ``verb`` and the words of ``x`` are (form, lemma, UPOS); X's head is its
    last word."""

    kind: str
    verb: tuple[str, str, str]
    x: list[tuple[str, str, str]]
    text: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise QuestionError(f"unknown question kind {self.kind!r} (one of {', '.join(KINDS)})")
        if not self.x:
            raise QuestionError("a question needs a given argument X")
        if not self.text:
            self.text = self.render()

    def render(self) -> str:
        xs = " ".join(w[0] for w in self.x)
        v = self.verb[0]
        return {"active_obj": f"What does {xs} {v}?", "active_subj": f"What {v} {xs}?",
                "passive_subj": f"What is {xs} {v} by?", "passive_obj": f"What is {v} by {xs}?"}[self.kind]

    def conllu(self) -> str:
        """The question's dependency tree (UD), as CoNLL-U."""
        return self.tree()[0]

    def tree(self) -> tuple[str, int, int, int]:
        """(CoNLL-U text, row of the verb, of X's head, of "what"), rows 0-based."""
        rows: list[list] = []            # form, lemma, upos, head (index into rows or -1), deprel

        def add(form, lemma, upos, head, rel):
            rows.append([form, lemma, upos, head, rel])
            return len(rows) - 1

        def add_x(verb_idx, rel, case_by=False):
            first = len(rows)
            if case_by:
                add("by", "by", "ADP", None, "case")
            idx = [add(f, l, u, None, "") for f, l, u in self.x]
            h = idx[-1]
            rows[h][3], rows[h][4] = verb_idx, rel
            for i in idx[:-1]:
                rows[i][3] = h
                rows[i][4] = "det" if rows[i][2] == "DET" else "amod" if rows[i][2] == "ADJ" else \
                    "nmod:poss" if rows[i][2] == "PRON" else "compound"
            if case_by:
                rows[first][3] = h
            return h

        V = -10                                   # placeholder for the verb's row
        vf, vl, vu = self.verb
        if self.kind == "active_obj":            # What does X V ?
            add("What", "what", "PRON", V, "obj")
            add("does", "do", "AUX", V, "aux")
            add_x(V, "nsubj")
            add(vf, vl, vu, -1, "root")
        elif self.kind == "active_subj":         # What Vs X ?
            add("What", "what", "PRON", V, "nsubj")
            add(vf, vl, vu, -1, "root")
            add_x(V, "obj")
        elif self.kind == "passive_subj":        # What is X V-ed by ?
            w = add("What", "what", "PRON", V, "obl")
            add("is", "be", "AUX", V, "aux:pass")
            add_x(V, "nsubj:pass")
            add(vf, vl, vu, -1, "root")
            add("by", "by", "ADP", w, "case")
        else:                                    # What is V-ed by X ?
            add("What", "what", "PRON", V, "nsubj:pass")
            add("is", "be", "AUX", V, "aux:pass")
            add(vf, vl, vu, -1, "root")
            add_x(V, "obl", case_by=True)
        add("?", "?", "PUNCT", V, "punct")
        vi = next(i for i, r in enumerate(rows) if r[4] == "root")
        xi = next(i for i, r in enumerate(rows) if r[3] == V and r[4] in ("nsubj", "obj", "nsubj:pass", "obl")
                  and r[1] != "what")
        wi = next(i for i, r in enumerate(rows) if r[1] == "what")
        lines = [f"# text = {self.text}"]
        for i, (form, lemma, upos, head, rel) in enumerate(rows):
            h = 0 if head == -1 else (vi + 1 if head == V else head + 1)
            lines.append("\t".join([str(i + 1), form, lemma, upos, "_", "_", str(h), rel, "_", "_"]))
        return "\n".join(lines) + "\n\n", vi, xi, wi


@dataclass
class Answer:
    question: str
    lemma: str              # head word of the answer (lemma)
    text: str               # the answer's words in its sentence
    sent_id: str
    sentence: int
    word: int               # 1-based word of the head in its sentence
    via: str = ""           # lemma of the head of the matched part (the verb that gave the answer)
    via_word: int = 0       # its 1-based word in the sentence


_PATTERNS = [
    ("passive_obj", re.compile(r"^what\s+(?:is|was|are|were)\s+(\S+)\s+by\s+(.+?)\s*\?*$", re.I)),
    ("passive_subj", re.compile(r"^what\s+(?:is|was|are|were)\s+(.+?)\s+(\S+)\s+by\s*\?*$", re.I)),
    ("active_obj", re.compile(r"^what\s+(?:does|do|did)\s+(.+?)\s+(\S+?)\s*\?*$", re.I)),
    ("active_subj", re.compile(r"^what\s+(\S+)\s+(.+?)\s*\?*$", re.I)),
]


class KnowledgeBase:
    """The MAP parses of a model's corpus, indexed for questions."""

    def __init__(self, model: USPModel, ontology: bool = False, options: AnswerOptions | None = None) -> None:
        if model.qlf is None:
            raise QuestionError("the model holds no corpus parses to answer from")
        options = options or AnswerOptions()
        self.options = options
        self.model = model
        self.use_ontology = ontology
        self.answer_upos = set(options.answer_upos) if options.answer_upos else None
        self.parser = Parser(model)
        q = model.qlf
        kb = model.kb
        self.q = q
        n = len(kb["root"])
        u = np.nonzero((kb["root"] == np.arange(n)) & (kb["ppart"] >= 0))[0]
        lemma_of_node = pd.Series([str(x).lower() for x in q.tok_lemma[q.node_tok]], dtype=object)
        lemma_id, uniq = pd.factorize(lemma_of_node, sort=True)
        self._lemmas = np.asarray(uniq, dtype=object)
        self._lemma_of_node = lemma_id
        self._lemma_index = {x: i for i, x in enumerate(self._lemmas.tolist())}
        self.arg_child = u
        self.arg_parent = kb["ppart"][u]
        self.arg_type = kb["atype"][u]
        self.arg_lemma = lemma_id[u]
        self.arg_pclust = kb["clust"][self.arg_parent]
        # parts whose head word is negated assert nothing (Poon's eval.USP skips a part with a `neg` argument)
        self._negated_node = negated_words(q)[q.node_tok] if options.skip_negated else np.zeros(q.n_nodes, dtype=bool)
        # index 1: (parent cluster, type, child lemma) -> argument rows
        self._k1 = self._key(self.arg_pclust, self.arg_type, self.arg_lemma)
        self._o1 = np.argsort(self._k1, kind="stable")
        self._s1 = self._k1[self._o1]
        # index 2: (parent part, type) -> argument rows
        self._k2 = self.arg_parent.astype(np.int64) * (self._ntypes() + 1) + self.arg_type
        self._o2 = np.argsort(self._k2, kind="stable")
        self._s2 = self._k2[self._o2]
        self._lexicon: dict | None = None
        self._vectors: sp.csr_matrix | None = None
        self._sim_cache: dict[tuple[int, int], float] = {}

    def _ntypes(self) -> int:
        return int(max(self.model.owner, default=0)) + 2

    def _key(self, c, t, l):
        nt = self._ntypes() + 1
        nl = len(self._lemmas) + 1
        return (np.asarray(c, dtype=np.int64) * nt + np.asarray(t, dtype=np.int64)) * nl + np.asarray(l, dtype=np.int64)

    # -------------------------------------------------------------- questions
    def lexicon(self) -> dict[str, tuple[str, str]]:
        """Word form (lower case) -> its most frequent (lemma, UPOS) in the corpus."""
        if self._lexicon is None:
            count: dict[tuple[str, str, str], int] = {}
            for f, l, u in zip(self.q.tok_form.tolist(), self.q.tok_lemma.tolist(), self.q.tok_upos.tolist()):
                k = (str(f).lower(), str(l), str(u))
                count[k] = count.get(k, 0) + 1
            best: dict[str, tuple[int, str, str]] = {}
            for (f, l, u), k in count.items():
                if f not in best or k > best[f][0]:
                    best[f] = (k, l, u)
            self._lexicon = {f: (l, u) for f, (k, l, u) in best.items()}
        return self._lexicon

    def question_from_text(self, text: str) -> Question:
        """"What does X V?", "What Vs X?", "What is X V-ed by?", "What is V-ed
        by X?" -> a :class:`Question` (lemmas and POS from the corpus)."""
        t = " ".join(text.strip().split())
        lex = self.lexicon()
        for kind, pat in _PATTERNS:
            m = pat.match(t)
            if not m:
                continue
            if kind in ("active_obj", "passive_subj"):
                xs, v = m.group(1), m.group(2)
            else:
                v, xs = m.group(1), m.group(2)
            words = xs.split()
            if not words:
                continue
            x = []
            for wd in words:
                lemma, upos = lex.get(wd.lower(), (wd, "PROPN" if wd[:1].isupper() else "NOUN"))
                x.append((wd, lemma, upos))
            vl, vu = self._verb(v)
            return Question(kind, (v, vl, vu), x, text=t)
        raise QuestionError(f"cannot read the question {text!r}: USP answers \"What does X V?\", \"What Vs X?\", "
                            "\"What is X V-ed by?\" and \"What is V-ed by X?\"")

    def _verb(self, form: str) -> tuple[str, str]:
        """(lemma, VERB) of a verb form: as the corpus tags it, else the first
        of form, form - s/es/ed/d/ing that the corpus knows as a verb lemma."""
        f = form.lower()
        lex = self.lexicon()
        hit = lex.get(f)
        if hit is not None and hit[1] in ("VERB", "AUX"):
            return hit[0], "VERB"
        verbs = self.verb_lemmas()
        for cut in ("", "s", "es", "ed", "d", "ing"):
            if cut and not f.endswith(cut):
                continue
            stem = f[: len(f) - len(cut)] if cut else f
            for cand in (stem, stem + "e"):
                if cand in verbs:
                    return cand, "VERB"
        return f, "VERB"

    def verb_lemmas(self) -> set[str]:
        if not hasattr(self, "_verbs"):
            up = self.q.tok_upos
            self._verbs = {str(x) for x in self.q.tok_lemma[up == "VERB"].tolist()}
        return self._verbs

    # -------------------------------------------------------------- answering
    def parse_question(self, question: Question):
        """(QLF, MAP parse, node of the verb, of X's head, of "what")."""
        text, vi, xi, wi = question.tree()
        qlf = build_qlf(list(read_conllu_lines(text.splitlines(True), "<question>")), self.model.vocab)
        node = qlf.node_of_tok()
        verb, x, what = int(node[vi]), int(node[xi]), int(node[wi])
        # "what" is the wildcard (Poon: "the question slot is replaced by a dummy word")
        qlf.form[what] = WILDCARD
        return qlf, self.parser.parse_sentence(qlf, 0), verb, x, what

    def answer(self, question: Question | str) -> list[Answer]:
        """All answers the knowledge base gives to ``question``, one per
        matching assertion (several sentences may give the same answer)."""
        if isinstance(question, str):
            question = self.question_from_text(question)
        qlf, parse, verb_node, x_node, what = self.parse_question(question)
        part_of = parse.part_of()
        pv, px, pw = part_of[verb_node], part_of[x_node], part_of[what]
        if px == pv or pw == pv:
            return []
        P = parse.parts
        if P[px].parent != pv or P[pw].parent != pv or P[px].root != x_node or P[pw].root != what:
            return []
        tx, tq, cq = P[px].atype, P[pw].atype, P[pv].cluster
        if tx == VIRTUAL or tq == VIRTUAL or cq < 0 or tx == tq:
            return []
        x_lemma = question.x[-1][1].lower()
        lid = self._lemma_index.get(x_lemma)
        if lid is None:
            return []
        onto = self.model.ontology
        clusters = [cq]
        if self.use_ontology:
            clusters += onto.descendants(cq)
            # the question verb in its other lambda forms (with an auxiliary, a negation, ...): the ISA
            # siblings whose parts have the verb as head, matched through the generic roles
            heads = self.head_clusters().get(question.verb[1].lower(), set())
            clusters += [c for c in onto.siblings(cq) if c in heads and c not in clusters]
        verb_lemma = -1                            # with same_verb: the lemma a matching part's head must have
        if self.options.same_verb:
            verb_lemma = self._lemma_index.get(question.verb[1].lower(), -2)
        sim_lemma = None                           # with min_verb_similarity: the question verb's lemma (-1: unknown)
        if not self.options.same_verb and self.options.min_verb_similarity > 0:
            sim_lemma = self._lemma_index.get(question.verb[1].lower(), -1)
        out: list[Answer] = []
        for c in clusters:
            if c == cq:
                pairs = [(tx, tq)]
            else:                                  # the sub-cluster's types of the same generic roles
                rx, rq = onto.role(tx), onto.role(tq)
                ts = self.model.types.get(c, [])
                pairs = [(a, b) for a in ts if onto.role(a) == rx for b in ts if onto.role(b) == rq and a != b]
            for ta, tb in pairs:
                out += self._lookup(question, c, ta, tb, lid, verb_lemma, sim_lemma)
        return out

    def similar_verbs(self, qlemma: int, lemma: int) -> bool:
        """Does a part headed by ``lemma`` answer a question about ``qlemma``
        under ``min_verb_similarity``? (``qlemma`` -1: a verb the corpus lacks.)"""
        if qlemma == lemma:
            return True
        if qlemma < 0:
            return False
        key = (qlemma, lemma)
        hit = self._sim_cache.get(key)
        if hit is None:
            if self._vectors is None:
                self._vectors = argument_vectors(self.q, self._lemma_of_node, len(self._lemmas))
            hit = self._sim_cache[key] = verb_similarity(self._vectors, qlemma, lemma)
        return hit >= self.options.min_verb_similarity

    def verb_similarity(self, a: str, b: str) -> float:
        """The distributional similarity :attr:`AnswerOptions.min_verb_similarity`
        compares, of two lemmas of the corpus (0 when either is unknown)."""
        ia, ib = self._lemma_index.get(a.lower()), self._lemma_index.get(b.lower())
        if ia is None or ib is None:
            return 0.0
        if self._vectors is None:
            self._vectors = argument_vectors(self.q, self._lemma_of_node, len(self._lemmas))
        return verb_similarity(self._vectors, ia, ib)

    def head_clusters(self) -> dict[str, set[int]]:
        """Lemma -> the clusters of the parts headed by a word of that lemma."""
        if not hasattr(self, "_heads"):
            kb, q = self.model.kb, self.q
            r = np.nonzero(kb["root"] == np.arange(len(kb["root"])))[0]
            lem = self._lemmas[self._lemma_of_node[r]]
            out: dict[str, set[int]] = {}
            for x, c in set(zip(lem.tolist(), kb["clust"][r].tolist())):
                out.setdefault(x, set()).add(int(c))
            self._heads = out
        return self._heads

    def _lookup(self, question: Question, c: int, tx: int, tq: int, lid: int, verb_lemma: int = -1,
                sim_lemma: int | None = None) -> list[Answer]:
        key = self._key(c, tx, lid)
        lo, hi = np.searchsorted(self._s1, key), np.searchsorted(self._s1, key, side="right")
        out = []
        q = self.q
        for row in self._o1[lo:hi].tolist():
            parent = int(self.arg_parent[row])
            if self._negated_node[parent]:
                continue                           # "X does not V Y" answers no question
            if verb_lemma != -1 and self._lemma_of_node[parent] != verb_lemma:
                continue                           # same_verb: another verb of the cluster
            if sim_lemma is not None and not self.similar_verbs(sim_lemma, int(self._lemma_of_node[parent])):
                continue                           # another verb of the cluster, not a distributional neighbour
            x_child = int(self.arg_child[row])
            k2 = parent * (self._ntypes() + 1) + tq
            a, b = np.searchsorted(self._s2, k2), np.searchsorted(self._s2, k2, side="right")
            for r2 in self._o2[a:b].tolist():
                child = int(self.arg_child[r2])
                if child == x_child:
                    continue
                tok = int(q.node_tok[child])
                if self.answer_upos is not None and str(q.tok_upos[tok]) not in self.answer_upos:
                    continue                       # "what" asks for a thing: a nominal head
                s = int(q.sent[child])
                ptok = int(q.node_tok[parent])
                out.append(Answer(question.text, str(q.tok_lemma[tok]).lower(), self.phrase(tok), q.sent_ids[s], s,
                                  tok - int(q.tok_start[s]) + 1, str(self._lemmas[self._lemma_of_node[parent]]),
                                  ptok - int(q.tok_start[s]) + 1))
        return out

    def phrase(self, tok: int) -> str:
        """The words of the subtree of word ``tok`` in its sentence."""
        q = self.q
        s = int(np.searchsorted(q.tok_start, tok, side="right") - 1)
        lo, hi = int(q.tok_start[s]), int(q.tok_start[s + 1])
        heads = q.tok_head[lo:hi]
        inside = np.zeros(hi - lo, dtype=bool)
        inside[tok - lo] = True
        for _ in range(hi - lo):
            parent_in = np.zeros(hi - lo, dtype=bool)
            has = heads > 0
            parent_in[has] = inside[heads[has] - 1]
            new = inside | parent_in
            if (new == inside).all():
                break
            inside = new
        idx = np.nonzero(inside)[0]
        words = [str(q.tok_form[lo + i]) for i in range(int(idx.min()), int(idx.max()) + 1)]
        return " ".join(words)
