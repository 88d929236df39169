"""Coreference evidence from parsed text: CoNLL-U trees plus a mention list
become the evidence atoms a coreference MLN reads (``mln derive --conllu``).

Input: CoNLL-U files (:mod:`markovlogic.text.conllu`; a document per ``#
newdoc id``, else per file) and the mentions, either

* ``"gold"``: the spans of the CorefUD ``Entity=`` brackets in MISC (only the
  spans are read; the entity ids and types only when ``truth`` /
  ``entity_types`` ask for them), or
* a TSV file with a header naming at least ``doc sent start end`` (sentence
  index in the document from 1, first and last word id, inclusive) and
  optionally ``mention`` (the constant to use).

Per mention (mentions ordered by sentence, first word, longer span first;
constants ``DOC_mNNNN``, as in ``../shared/data/gum_coref``):

=====================  =====================================================
``InDoc(m, d)``        the document
``SentIndex(m, Sk)``   the sentence (k from 1)
``MentionOrder(m, k)`` the position of the mention in its document (from 1)
``Head(m, L_lemma)``   the head word's lemma (head rules below; escaped as the
                       data README does: ``co-op`` -> ``L_co_2d_op``)
``HeadForm(m, F_form)`` the head word's lower-cased form
``Text(m, X_text)``    the mention's words, lower-cased, joined by ``_``
``HasWord(m, W_w)``    each lower-cased word of the mention but punctuation
``MentionType(m, t)``  PRO (IsPrn), NAM (head PROPN) or NOM
``IsPrn(m)``           the head word is in the pronoun list (:data:`PRONOUNS`)
``Number(m, n)``       Sing / Plur: the head's ``Number`` feature (not for verb
                       heads), the pronoun lexicon, Plur for a coordination
                       (the head has a ``conj`` dependent inside the span)
``Gender(m, g)``       Masc / Fem / Neut: pronoun morphology and lexicon, an
                       honorific before the head (Mr., Mrs., ...) or a gendered
                       head noun (:data:`GENDERED_NOUNS`)
``Type(m, e)``         Person / Organization, from Poon's cues: personal
                       pronouns, honorifics (Mr., Ms., Jr., ...) and company
                       words (Inc., Corp., corporation, company, ...)
``Nested(m1, m2)``     m2 lies inside m1 (m1 != m2)
``Apposition(m1, m2)`` the head of m2 is attached to the head of m1 by appos
``PredNom(m1, m2)``    the head of m2 has a cop dependent and an nsubj (or
                       nsubj:outer) dependent that is the head of m1
``Near(m1, m2, Dk)``   m1 ends before m2 starts, k = 0..3 sentences before it,
                       and one of them is a pronoun (the candidate pairs of
                       pronoun resolution; ``near_window`` sentences, 3)
=====================  =====================================================

and, only when asked, ``EntityType(m, e)`` (the gold GUM type) and the truth
``SameEntity(m1, m2)`` (m1 < m2, same gold entity; a separate file).

**Head rule** (``heads="tree"``, the default): the candidates are the words of
the span whose syntactic head lies outside the span (or is 0); with several,
(1) punctuation is dropped, then (2) words attached by a function or loose
relation (punct, dep, det, case, cc, mark, discourse, reparandum, parataxis,
cop, aux, dislocated), each step only if a candidate is left; (3) a candidate
with another candidate among its ancestors is dropped; (4) the leftmost one
left is the head. ``heads="rightmost"``: the last word of the span (Poon's
MLN-1 and RULE baselines). **Apposition and predicate nominatives**: where
several mentions share a head word, m2 is the widest with its head that does
not contain the head of m1, m1 the widest with its head that does not overlap
m2; each tree edge gives at most one pair. These are the rules of the data
README, so the evidence of ``--mentions gold`` agrees with it.

Errors name the file and line: malformed CoNLL-U (the reader's), an
unbalanced or discontinuous ``Entity=`` bracket, a mention crossing a
sentence, a mention span outside its sentence, the same span or mention id
twice.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from ..errors import OptionError
from ..text.conllu import Sentence, TextError, read_conllu_files

HEAD_RULES = ("tree", "rightmost")

WEAK_DEPRELS = frozenset({"punct", "dep", "det", "case", "cc", "mark", "discourse", "reparandum",
                          "parataxis", "cop", "aux", "dislocated"})

# pronoun -> (number, gender, type); "" = unknown
PRONOUNS: dict[str, tuple[str, str, str]] = {}
for _forms, _num, _gen, _typ in (
    ("i me my mine myself", "Sing", "", "Person"),
    ("we us our ours ourselves", "Plur", "", "Person"),
    ("you your yours yourself ye", "", "", "Person"),
    ("yourselves", "Plur", "", "Person"),
    ("he him his himself", "Sing", "Masc", "Person"),
    ("she her hers herself", "Sing", "Fem", "Person"),
    ("it its itself", "Sing", "Neut", ""),
    ("they them their theirs themselves em 'em", "Plur", "", ""),
    ("s/he", "Sing", "", "Person"),
    ("this that", "Sing", "", ""),
    ("these those", "Plur", "", ""),
    ("who whom whose whoever", "", "", "Person"),
    ("which", "", "", ""),
):
    for _f in _forms.split():
        PRONOUNS[_f] = (_num, _gen, _typ)
DEMONSTRATIVES = frozenset({"this", "that", "these", "those", "which"})

HONORIFICS = {
    "mr": "Masc", "mr.": "Masc", "sir": "Masc", "lord": "Masc", "king": "Masc", "prince": "Masc",
    "mrs": "Fem", "mrs.": "Fem", "ms": "Fem", "ms.": "Fem", "miss": "Fem", "madam": "Fem", "lady": "Fem",
    "queen": "Fem", "princess": "Fem", "dame": "Fem",
}
PERSON_CUES = frozenset({"mr", "mr.", "mrs", "mrs.", "ms", "ms.", "miss", "dr", "dr.", "jr", "jr.", "sr", "sr.",
                         "sir", "madam", "prof", "prof.", "professor"})
ORGANIZATION_CUES = frozenset({"inc", "inc.", "corp", "corp.", "corporation", "company", "co.", "ltd", "ltd.",
                               "llc", "plc"})
GENDERED_NOUNS: dict[str, str] = {}
for _words, _g in (
    ("man men boy boys father fathers dad son sons brother brothers husband husbands king kings prince "
     "uncle nephew grandfather grandson gentleman gentlemen sir lord monk priest emperor duke count "
     "widower actor", "Masc"),
    ("woman women girl girls mother mothers mom mum daughter daughters sister sisters wife wives queen "
     "queens princess aunt niece grandmother granddaughter lady ladies madam nun empress duchess "
     "countess widow actress", "Fem"),
):
    for _w in _words.split():
        GENDERED_NOUNS[_w] = _g


@dataclass
class Mention:
    """A mention: its document, sentence (index from 1), first and last word id."""

    doc: str
    sent: int
    start: int
    end: int
    name: str = ""
    entity: str | None = None          # gold entity id (only read from Entity= brackets)
    etype: str | None = None           # gold entity type
    file: str = ""
    line: int = 0
    # derived
    head: int = 0
    head_lemma: str = ""
    head_form: str = ""
    head_upos: str = ""
    mtype: str = ""
    is_prn: bool = False
    number: str = ""
    gender: str = ""
    type: str = ""
    words: list[str] = field(default_factory=list)


@dataclass
class Document:
    name: str
    sentences: list[Sentence]
    mentions: list[Mention] = field(default_factory=list)
    relations: list[tuple[str, int, int]] = field(default_factory=list)   # (kind, mention index, mention index)

    @property
    def constant(self) -> str:
        return doc_constant(self.name)


@dataclass
class CorefDeriveOptions:
    """Options of :func:`derive_coref` (``mln derive --conllu``)."""

    mentions: str = "gold"              # "gold" or a mention TSV file
    heads: str = "tree"                 # "tree" or "rightmost"
    entity_types: bool = False          # write EntityType (gold) atoms
    truth: bool = False                 # read the gold entities (for a truth file)

    def check(self) -> "CorefDeriveOptions":
        if self.heads not in HEAD_RULES:
            raise OptionError(f"--heads must be {' or '.join(HEAD_RULES)}, not {self.heads!r}")
        if self.mentions != "gold":
            p = Path(self.mentions)
            if not p.is_file():
                raise OptionError(f"--mentions: no such file {self.mentions} (give 'gold' or a mention TSV file)")
            if self.truth or self.entity_types:
                raise OptionError("--truth and --entity-types read the gold Entity= annotation: they need "
                                  "--mentions gold")
        return self


# ------------------------------------------------------------------ constants

def escape(s: str) -> str:
    """ASCII letters and digits kept; every other character ``c`` becomes
    ``_xx_`` (xx its code point in hex), as in the GUM data README."""
    return "".join(ch if ("a" <= ch <= "z") or ("A" <= ch <= "Z") or ("0" <= ch <= "9") else f"_{ord(ch):x}_"
                   for ch in s)


def doc_constant(name: str) -> str:
    """A document name as a constant: kept when it is one already
    (``[A-Z][A-Za-z0-9_]*``, as GUM's names are), else escaped."""
    if re.fullmatch(r"[A-Z][A-Za-z0-9_]*", name):
        return name
    c = escape(name)
    return c if c[:1].isalpha() and c[:1].isupper() else "D" + c


def word_constant(lemma: str) -> str:
    return "L_" + escape(lemma)


# ------------------------------------------------------------------ documents

def read_documents(paths: Sequence[str | Path]) -> list[Document]:
    """The documents of CoNLL-U files (``# newdoc id``; a file without one is
    one document named after the file)."""
    docs: dict[str, Document] = {}
    order: list[str] = []
    for s in read_conllu_files(paths):
        name = s.doc_id or Path(s.file).name.split(".")[0]
        if name not in docs:
            docs[name] = Document(name, [])
            order.append(name)
        elif docs[name].sentences and docs[name].sentences[-1].file != s.file:
            raise TextError(f"document {name} appears again (it began in {docs[name].sentences[0].file})",
                            file=s.file, line=s.line)
        docs[name].sentences.append(s)
    if not order:
        raise TextError("the CoNLL-U input holds no sentence")
    return [docs[n] for n in order]


_GLOBAL = "global.Entity"


def _entity_fields(sentences: list[Sentence]) -> tuple[int, int]:
    """Positions of the entity id and the entity type in a bracket's
    attributes (from ``# global.Entity``; default GRP-etype)."""
    for s in sentences[:1]:
        spec = s.metadata.get(_GLOBAL)
        if spec:
            names = spec.split("-")
            eid = names.index("eid") if "eid" in names else (names.index("GRP") if "GRP" in names else 0)
            etype = names.index("etype") if "etype" in names else -1
            return eid, etype
    return 0, 1


def _bracket_events(value: str, path: str, line: int) -> list[tuple[str, str, list[str]]]:
    """``Entity=`` value -> ('open'|'close'|'single', eid, attributes)."""
    out = []
    i = 0
    n = len(value)
    while i < n:
        if value[i] == "(":
            j = i + 1
            while j < n and value[j] not in "()":
                j += 1
            attrs = value[i + 1:j].split("-")
            if not attrs[0]:
                raise TextError(f"Entity= bracket without an entity id: {value!r}", file=path, line=line)
            if j < n and value[j] == ")":
                out.append(("single", attrs[0], attrs))
                i = j + 1
            else:
                out.append(("open", attrs[0], attrs))
                i = j
        else:
            j = value.find(")", i)
            if j < 0:
                raise TextError(f"malformed Entity= value {value!r} (expected '(' or 'id)')", file=path, line=line)
            out.append(("close", value[i:j], []))
            i = j + 1
    return out


def gold_mentions(doc: Document) -> list[Mention]:
    """The mentions of the CorefUD ``Entity=`` brackets of a document."""
    eid_at, etype_at = _entity_fields(doc.sentences)
    out: list[Mention] = []
    for si, s in enumerate(doc.sentences, 1):
        opened: dict[str, list[tuple[int, list[str], int]]] = defaultdict(list)
        for t in s.tokens:
            value = t.misc.get("Entity")
            if value is None:
                continue
            for kind, key, attrs in _bracket_events(value, s.file, t.line):
                if "[" in key:
                    raise TextError(f"discontinuous mention {key!r} is not supported", file=s.file, line=t.line)
                if kind == "open":
                    opened[key].append((t.id, attrs, t.line))
                    continue
                if kind == "single":
                    start, a, line = t.id, attrs, t.line
                else:
                    if not opened[key]:
                        raise TextError(f"Entity= closes {key!r}, which no bracket in this sentence opened "
                                        "(a mention must not cross a sentence boundary)", file=s.file, line=t.line)
                    start, a, line = opened[key].pop()
                eid = a[eid_at] if eid_at < len(a) else a[0]
                etype = a[etype_at] if 0 <= etype_at < len(a) else None
                out.append(Mention(doc.name, si, start, t.id, entity=eid, etype=etype or None,
                                   file=s.file, line=line))
        for key, stack in opened.items():
            if stack:
                raise TextError(f"Entity= opens {key!r} but the sentence ends before it is closed (a mention "
                                "must not cross a sentence boundary)", file=s.file, line=stack[-1][2])
    return out


MENTION_COLUMNS = ("doc", "sent", "start", "end")


def file_mentions(path: str | Path, docs: list[Document]) -> dict[str, list[Mention]]:
    """Mentions from a TSV file (header with doc, sent, start, end; optional
    mention). Every error names the file and line."""
    path = str(path)
    by_name = {d.name: d for d in docs}
    out: dict[str, list[Mention]] = defaultdict(list)
    seen_ids: dict[str, int] = {}
    try:
        handle = open(path, encoding="utf-8", newline="")
    except OSError as exc:
        raise TextError(f"cannot read {path}: {exc.strerror or exc}") from None
    with handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = None
        for lineno, row in enumerate(reader, 1):
            if not row or (len(row) == 1 and not row[0].strip()) or row[0].startswith("#"):
                continue
            if header is None:
                header = [h.strip() for h in row]
                missing = [c for c in MENTION_COLUMNS if c not in header]
                if missing:
                    raise TextError(f"the mention file's header lacks column(s) {', '.join(missing)} (it needs "
                                    "doc, sent, start, end, tab-separated; mention is optional)",
                                    file=path, line=lineno, column=1)
                continue
            if len(row) != len(header):
                raise TextError(f"{len(row)} fields where the header has {len(header)}", file=path, line=lineno)
            rec = dict(zip(header, row))
            doc = rec["doc"]
            if doc not in by_name:
                raise TextError(f"document {doc!r} is not in the CoNLL-U input", file=path, line=lineno,
                                column=1 + sum(len(x) + 1 for x in row[:header.index('doc')]))
            nums = []
            for col in ("sent", "start", "end"):
                v = rec[col]
                if not v.isdigit() or int(v) < 1:
                    raise TextError(f"{col} must be a positive integer, not {v!r}", file=path, line=lineno,
                                    column=1 + sum(len(x) + 1 for x in row[:header.index(col)]))
                nums.append(int(v))
            sent, start, end = nums
            d = by_name[doc]
            if sent > len(d.sentences):
                raise TextError(f"sentence {sent} of {doc}: the document has {len(d.sentences)} sentences",
                                file=path, line=lineno)
            n = len(d.sentences[sent - 1].tokens)
            if start > end or end > n:
                raise TextError(f"span {start}-{end} lies outside sentence {sent} of {doc} (words 1-{n}) or is "
                                "empty", file=path, line=lineno)
            name = rec.get("mention", "").strip()
            if name:
                if not re.fullmatch(r"[A-Z][A-Za-z0-9_]*", name):
                    raise TextError(f"mention id {name!r} is not a constant ([A-Z][A-Za-z0-9_]*)", file=path,
                                    line=lineno)
                if name in seen_ids:
                    raise TextError(f"mention id {name} is already used on line {seen_ids[name]}", file=path,
                                    line=lineno)
                seen_ids[name] = lineno
            out[doc].append(Mention(doc, sent, start, end, name=name, file=path, line=lineno))
    if header is None:
        raise TextError("the mention file is empty (it needs a header: doc, sent, start, end)", file=path)
    return out


# ------------------------------------------------------------------ heads and features

def _ancestors(s: Sentence, i: int) -> set[int]:
    out = set()
    while i != 0:
        i = s.tokens[i - 1].head
        out.add(i)
    return out


def find_head(s: Sentence, start: int, end: int, rule: str = "tree") -> int:
    """The head word id of the span ``start..end`` (see the module docstring)."""
    if rule == "rightmost":
        return end
    toks = s.tokens
    cands = [i for i in range(start, end + 1) if not (start <= toks[i - 1].head <= end)]
    for keep in (lambda i: toks[i - 1].upos != "PUNCT",
                 lambda i: toks[i - 1].deprel.split(":")[0] not in WEAK_DEPRELS):
        kept = [i for i in cands if keep(i)]
        if kept:
            cands = kept
    if len(cands) > 1:
        cs = set(cands)
        cands = [i for i in cands if not (_ancestors(s, i) & cs)]
    return cands[0]


def _features(s: Sentence, m: Mention, rule: str, children: list[list[int]]) -> None:
    h = find_head(s, m.start, m.end, rule)
    tok = s.tokens[h - 1]
    m.head = h
    m.head_lemma = tok.lemma if tok.lemma not in ("", "_") else tok.form
    m.head_form = tok.form.lower()
    m.head_upos = tok.upos
    m.words = [t.form.lower() for t in s.tokens[m.start - 1:m.end]]
    prn = PRONOUNS.get(m.head_form)
    if prn is not None and m.head_form in DEMONSTRATIVES and tok.upos != "PRON":
        prn = None          # "that" as a determiner or complementiser heads no pronoun mention
    m.is_prn = prn is not None
    m.mtype = "PRO" if m.is_prn else ("NAM" if tok.upos == "PROPN" else "NOM")
    # number
    number = ""
    if tok.upos not in ("VERB", "AUX"):
        number = tok.feats.get("Number", "") if tok.feats.get("Number") in ("Sing", "Plur") else ""
    if prn is not None and prn[0]:
        number = prn[0]
    if not m.is_prn and any(s.tokens[c - 1].deprel.split(":")[0] == "conj" and m.start <= c <= m.end
                            for c in children[h]):
        number = "Plur"
    m.number = number
    # gender
    gender = ""
    if tok.upos == "PRON" and tok.feats.get("PronType") in ("Prs", "Emp") and \
            tok.feats.get("Gender") in ("Masc", "Fem", "Neut"):
        gender = tok.feats["Gender"]
    elif prn is not None and prn[1]:
        gender = prn[1]
    elif not m.is_prn:
        before = m.words[:h - m.start]
        for w in before:
            if w in HONORIFICS:
                gender = HONORIFICS[w]
        if not gender and number != "Plur":
            gender = GENDERED_NOUNS.get(m.head_form, GENDERED_NOUNS.get(m.head_lemma.lower(), ""))
            if gender and m.head_form not in GENDERED_NOUNS and tok.feats.get("Number") == "Plur":
                gender = ""
    m.gender = gender
    # type cues (Poon's footnote 1)
    typ = ""
    if prn is not None:
        typ = prn[2]
    elif any(w in PERSON_CUES for w in m.words):
        typ = "Person"
    elif any(w in ORGANIZATION_CUES for w in m.words):
        typ = "Organization"
    elif gender in ("Masc", "Fem"):
        typ = "Person"
    m.type = typ


def _relations(doc: Document) -> list[tuple[str, int, int]]:
    """Apposition and predicate-nominative pairs (mention indices)."""
    by_head: dict[tuple[int, int], list[int]] = defaultdict(list)
    ms = doc.mentions
    for k, m in enumerate(ms):
        by_head[(m.sent, m.head)].append(k)
    for v in by_head.values():
        v.sort(key=lambda k: (-(ms[k].end - ms[k].start), ms[k].start))

    def pick(sent: int, h1: int, h2: int):
        m2 = next((k for k in by_head.get((sent, h2), []) if not (ms[k].start <= h1 <= ms[k].end)), None)
        if m2 is None:
            return None
        m1 = next((k for k in by_head.get((sent, h1), [])
                   if ms[k].end < ms[m2].start or ms[k].start > ms[m2].end), None)
        return None if m1 is None else (m1, m2)

    out = []
    for si, s in enumerate(doc.sentences, 1):
        children = s.children()
        for t in s.tokens:
            if t.deprel == "appos":
                p = pick(si, t.head, t.id)
                if p:
                    out.append(("appos", *p))
            kids = children[t.id]
            if any(s.tokens[k - 1].deprel == "cop" for k in kids):
                for k in kids:
                    if s.tokens[k - 1].deprel in ("nsubj", "nsubj:outer"):
                        p = pick(si, k, t.id)
                        if p:
                            out.append(("prednom", *p))
    return out


def derive_coref(conllu: Sequence[str | Path], options: CorefDeriveOptions | None = None) -> list[Document]:
    """Documents with their mentions (ordered, named, with head and features)
    and apposition / predicate-nominative pairs."""
    opt = (options or CorefDeriveOptions()).check()
    docs = read_documents(conllu)
    listed = file_mentions(opt.mentions, docs) if opt.mentions != "gold" else None
    for d in docs:
        ms = gold_mentions(d) if listed is None else listed.get(d.name, [])
        seen: dict[tuple[int, int, int], Mention] = {}
        for m in ms:
            key = (m.sent, m.start, m.end)
            if key in seen:
                raise TextError(f"the mention span {m.start}-{m.end} of sentence {m.sent} of {d.name} is given "
                                f"twice (first at {seen[key].file}:{seen[key].line}); one mention per span",
                                file=m.file, line=m.line)
            seen[key] = m
        ms.sort(key=lambda m: (m.sent, m.start, -m.end))
        width = max(4, len(str(len(ms))))
        for k, m in enumerate(ms, 1):
            if not m.name:
                m.name = f"{d.constant}_m{k:0{width}d}"
        d.mentions = ms
        kids = [s.children() for s in d.sentences]
        for m in ms:
            _features(d.sentences[m.sent - 1], m, opt.heads, kids[m.sent - 1])
        d.relations = _relations(d)
    names: dict[str, str] = {}
    for d in docs:
        for m in d.mentions:
            if m.name in names:
                raise TextError(f"mention id {m.name} names mentions of {names[m.name]} and {d.name}",
                                file=m.file, line=m.line)
            names[m.name] = d.name
    return docs


# ------------------------------------------------------------------ evidence

EVIDENCE_PREDICATES = ("InDoc", "SentIndex", "MentionOrder", "Head", "HeadForm", "Text", "HasWord", "MentionType",
                       "IsPrn", "Number", "Gender", "Type", "Nested", "Apposition", "PredNom", "Near", "EntityType")
NEAR_WINDOW = 3

SCHEMA = """\
// Coreference evidence written by mln derive --conllu (markovlogic.derive.coref)
InDoc(mention, doc)
SentIndex(mention, sent)
MentionOrder(mention, int)
Head(mention, word)
HeadForm(mention, form)
Text(mention, text)
HasWord(mention, token)
MentionType(mention, mtype)
IsPrn(mention)
Number(mention, num)
Gender(mention, gender)
Type(mention, etype)
Nested(mention, mention)
Apposition(mention, mention)
PredNom(mention, mention)
Near(mention, mention, sdist)
EntityType(mention, gtype)
SameEntity(mention, mention)
"""

_PUNCT = re.compile(r"^\W+$")


def evidence_atoms(docs: Iterable[Document], entity_types: bool = False) -> Iterable[str]:
    """The evidence atoms, one line each (without the newline)."""
    for d in docs:
        dc = d.constant
        ms = d.mentions
        for k, m in enumerate(ms, 1):
            c = m.name
            yield f"InDoc({c},{dc})"
            yield f"SentIndex({c},S{m.sent})"
            yield f"MentionOrder({c},{k})"
            yield f"Head({c},{word_constant(m.head_lemma)})"
            yield f"HeadForm({c},F_{escape(m.head_form)})"
            yield f"Text({c},X_{escape('_'.join(w for w in m.words if not _PUNCT.match(w)))})"
            for w in sorted({w for w in m.words if not _PUNCT.match(w)}):
                yield f"HasWord({c},W_{escape(w)})"
            yield f"MentionType({c},{m.mtype})"
            if m.is_prn:
                yield f"IsPrn({c})"
            if m.number:
                yield f"Number({c},{m.number})"
            if m.gender:
                yield f"Gender({c},{m.gender})"
            if m.type:
                yield f"Type({c},{m.type})"
            if entity_types and m.etype:
                yield f"EntityType({c},{escape(m.etype.capitalize())})"
        by_sent: dict[int, list[Mention]] = defaultdict(list)
        for m in ms:
            by_sent[m.sent].append(m)
        for group in by_sent.values():
            for a in group:
                for b in group:
                    if a is not b and a.start <= b.start and b.end <= a.end:
                        yield f"Nested({a.name},{b.name})"
        for kind, i, j in d.relations:
            yield f"{'Apposition' if kind == 'appos' else 'PredNom'}({ms[i].name},{ms[j].name})"
        for i, j, k in near_pairs(d):
            yield f"Near({ms[i].name},{ms[j].name},D{k})"


def precedes(a: Mention, b: Mention) -> bool:
    """``a`` ends before ``b`` starts."""
    return a.sent < b.sent or (a.sent == b.sent and a.end < b.start)


def near_pairs(d: Document, window: int = NEAR_WINDOW) -> list[tuple[int, int, int]]:
    """(i, j, sentence distance) for mentions i before j at most ``window``
    sentences apart, one of them a pronoun."""
    ms = d.mentions
    out = []
    for j, b in enumerate(ms):
        for i in range(j - 1, -1, -1):
            a = ms[i]
            if b.sent - a.sent > window:
                break
            if (a.is_prn or b.is_prn) and precedes(a, b):
                out.append((i, j, b.sent - a.sent))
    out.sort()
    return out


def truth_atoms(docs: Iterable[Document]) -> Iterable[str]:
    """``SameEntity(m1,m2)`` for the pairs of one gold entity, m1 < m2 in document order."""
    for d in docs:
        groups: dict[str, list[str]] = defaultdict(list)
        for m in d.mentions:
            if m.entity is None:
                raise OptionError("the truth needs gold entities (--mentions gold)")
            groups[m.entity].append(m.name)
        pairs = []
        for g in groups.values():
            for i in range(len(g)):
                for j in range(i + 1, len(g)):
                    pairs.append((g[i], g[j]))
        for a, b in sorted(pairs):
            yield f"SameEntity({a},{b})"


def write_evidence(docs: list[Document], path: str | Path, *, entity_types: bool = False) -> int:
    """Write the evidence ``.db`` atomically; returns the number of atoms."""
    from ..io import open_text_atomic

    n = 0
    with open_text_atomic(path) as handle:
        handle.write("// coreference evidence (mln derive --conllu; closed world). Declarations:\n")
        handle.write("".join(f"//   {line}\n" for line in SCHEMA.splitlines()[1:]))
        for line in evidence_atoms(docs, entity_types):
            handle.write(line + "\n")
            n += 1
    return n


def write_truth(docs: list[Document], path: str | Path) -> int:
    from ..io import open_text_atomic

    n = 0
    with open_text_atomic(path) as handle:
        handle.write("// gold SameEntity(m1,m2) atoms, m1 < m2 (closed world)\n")
        for line in truth_atoms(docs):
            handle.write(line + "\n")
            n += 1
    return n


MENTION_TABLE_COLUMNS = ("doc", "mention", "sent", "start", "end", "text", "head", "head_form", "head_lemma",
                         "head_upos", "mtype", "is_prn", "number", "gender", "type")


def write_mention_table(docs: list[Document], path: str | Path) -> None:
    """The mentions with their derived features as a TSV (the columns of
    :data:`MENTION_TABLE_COLUMNS`; unknown values empty)."""
    from ..io import open_text_atomic

    with open_text_atomic(path) as handle:
        handle.write("\t".join(MENTION_TABLE_COLUMNS) + "\n")
        for d in docs:
            for m in d.mentions:
                s = d.sentences[m.sent - 1]
                text = " ".join(t.form for t in s.tokens[m.start - 1:m.end])
                row = (d.name, m.name, m.sent, m.start, m.end, text, m.head, m.head_form, m.head_lemma,
                       m.head_upos, m.mtype, int(m.is_prn), m.number, m.gender, m.type)
                handle.write("\t".join(str(x).replace("\t", " ") for x in row) + "\n")


def derive_coref_command(conllu: list[str], output: Path, *, mentions: str = "gold", heads: str = "tree",
                         truth: Path | None = None, entity_types: bool = False, mention_table: Path | None = None,
                         console=None) -> dict:
    """What ``mln derive --conllu`` does: read, derive, write (every output
    atomically, none when an input is bad); returns counts."""
    import time

    from ..io import check_outputs
    from ..commands.common import peak_mb

    if not conllu:
        raise OptionError("--conllu: no file given")
    for p in conllu:
        if not Path(p).exists():
            raise OptionError(f"--conllu: no such file or folder {p}")
    inputs = [p for p in conllu if Path(p).is_file()] + ([mentions] if mentions != "gold" else [])
    check_outputs({"output": output, "truth file": truth, "mention table": mention_table}, inputs)
    start = time.perf_counter()
    opt = CorefDeriveOptions(mentions=mentions, heads=heads, entity_types=entity_types, truth=truth is not None)
    docs = derive_coref(conllu, opt)
    n = write_evidence(docs, output, entity_types=entity_types)
    counts = {"documents": len(docs), "mentions": sum(len(d.mentions) for d in docs), "evidence_atoms": n,
              "apposition": sum(k == "appos" for d in docs for k, _, _ in d.relations),
              "prednom": sum(k == "prednom" for d in docs for k, _, _ in d.relations)}
    if truth is not None:
        counts["truth_atoms"] = write_truth(docs, truth)
    if mention_table is not None:
        write_mention_table(docs, mention_table)
    if console is not None:
        console.print(f"{counts['documents']} documents, {counts['mentions']:,} mentions, "
                      f"{counts['apposition']} apposition and {counts['prednom']} predicate-nominative pairs")
        console.print(f"wrote {output} ({n:,} atoms)" + (f", {truth} ({counts['truth_atoms']:,} atoms)" if truth else "")
                      + (f", {mention_table}" if mention_table else "")
                      + f" in {time.perf_counter() - start:.2f} s, peak {peak_mb():.0f} MiB")
    return counts


# ------------------------------------------------------------------ clusters back into CoNLL-U

ENTITY_SPEC = "eid-etype-head-other"
GOLD_MISC = ("Entity", "Bridge", "SplitAnte")


def _brackets(doc: Document, cluster_of: dict[str, str]) -> dict[tuple[int, int], str]:
    """(sentence, word id) -> the Entity= value of the clusters of a document.
    Clusters are numbered e1, e2, ... in order of their first mention."""
    ids: dict[str, int] = {}
    opens: dict[tuple[int, int], list[tuple[int, str]]] = defaultdict(list)
    closes: dict[tuple[int, int], list[tuple[int, str]]] = defaultdict(list)
    singles: dict[tuple[int, int], list[str]] = defaultdict(list)
    for m in doc.mentions:
        c = cluster_of.get(m.name, m.name)
        e = ids.setdefault(c, len(ids) + 1)
        head = m.head - m.start + 1
        if m.start == m.end:
            singles[(m.sent, m.start)].append(f"(e{e}--{head})")
        else:
            opens[(m.sent, m.start)].append((m.end, f"(e{e}--{head}"))
            closes[(m.sent, m.end)].append((m.start, f"e{e})"))
    out: dict[tuple[int, int], str] = {}
    for key in set(opens) | set(closes) | set(singles):
        # closings first (the one opened last first), then openings (longest first), then one-word mentions
        parts = [s for _, s in sorted(closes.get(key, []), key=lambda x: -x[0])]
        parts += [s for _, s in sorted(opens.get(key, []), key=lambda x: -x[0])]
        parts += singles.get(key, [])
        out[key] = "".join(parts)
    return out


def _misc_text(misc: dict[str, str], entity: str | None) -> str:
    items = [(k, v) for k, v in misc.items() if k not in GOLD_MISC]
    if entity:
        items.append(("Entity", entity))
    items.sort(key=lambda kv: kv[0].lower())
    return "|".join(k if v == "" and k != "Entity" else f"{k}={v}" for k, v in items) or "_"


def write_conllu_clusters(docs: list[Document], cluster_of: dict[str, str], output: str | Path) -> list[Path]:
    """Write the documents' CoNLL-U files again with the clusters as CorefUD
    ``Entity=`` brackets (``# global.Entity = eid-etype-head-other``; the gold
    Entity, Bridge and SplitAnte attributes are dropped). ``cluster_of``:
    mention constant -> cluster key (a mention not in it is a singleton).
    ``output`` is a file when the input was one file, else a folder (created)
    holding a file of the same name per input file. Atomic per file."""
    from ..io import open_text_atomic

    by_file: dict[str, list[tuple[Document, int, Sentence]]] = defaultdict(list)
    values: dict[tuple[str, int, int], str] = {}
    for d in docs:
        br = _brackets(d, cluster_of)
        for (si, wid), v in br.items():
            values[(d.name, si, wid)] = v
        for si, s in enumerate(d.sentences, 1):
            by_file[s.file].append((d, si, s))
    files = list(by_file)
    out = Path(output)
    if len(files) > 1 or out.is_dir():
        out.mkdir(parents=True, exist_ok=True)
        targets = {f: out / Path(f).name for f in files}
    else:
        targets = {files[0]: out}
    for f, target in targets.items():
        if Path(f).resolve() == target.resolve():
            raise OptionError(f"the output {target} would overwrite the input {f}")
    written = []
    for f, target in targets.items():
        with open(f, encoding="utf-8") as handle:
            lines = handle.read().split("\n")
        first_of_doc = {}
        for d, si, s in by_file[f]:
            for t in s.tokens:
                fields = lines[t.line - 1].split("\t")
                fields[9] = _misc_text(t.misc, values.get((d.name, si, t.id)))
                lines[t.line - 1] = "\t".join(fields)
            if si == 1:
                first_of_doc[s.line] = d
        # the global.Entity declaration: after the document's "# newdoc" line, else
        # before the first line of its first sentence
        after, before = set(), set()
        for start, d in first_of_doc.items():
            k = start
            while k <= len(lines) and lines[k - 1].startswith("#") and not lines[k - 1].startswith("# newdoc"):
                k += 1
            (after if k <= len(lines) and lines[k - 1].startswith("# newdoc") else before).add(
                k if k <= len(lines) and lines[k - 1].startswith("# newdoc") else start)
        out_lines = []
        for k, line in enumerate(lines, 1):
            if line.startswith("# global.Entity"):
                continue
            if k in before:
                out_lines.append(f"# global.Entity = {ENTITY_SPEC}")
            out_lines.append(line)
            if k in after:
                out_lines.append(f"# global.Entity = {ENTITY_SPEC}")
        with open_text_atomic(target) as handle:
            handle.write("\n".join(out_lines))
        written.append(target)
    return written


def conllu_entities(paths: Sequence[str | Path]) -> tuple[list[tuple[str, int, int, int]], list[str]]:
    """The mentions of CoNLL-U files with Entity= brackets: their spans
    ``(doc, sentence, start, end)`` and entity keys ``doc/eid``."""
    docs = derive_coref(paths, CorefDeriveOptions(truth=True))
    spans, ents = [], []
    for d in docs:
        for m in d.mentions:
            spans.append((d.name, m.sent, m.start, m.end))
            ents.append(f"{d.name}/{m.entity}")
    return spans, ents
