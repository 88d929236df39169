"""A learned USP model: the MLN's weights (as the counts they are the log
relative frequencies of), the MAP semantic parses of the training corpus (the
knowledge base), saving and loading, and the clusters printed for people.

The file (``.usp``) is a NumPy ``.npz`` archive: the parse and text arrays,
and one JSON document with the vocabularies and the counts. It is written
atomically.
"""

from __future__ import annotations

import io as _io
import json
import os
import zipfile
from dataclasses import dataclass, field
from math import log
from pathlib import Path

import numpy as np

from ..errors import MarkovLogicError
from .qlf import DROPPED, QLFCorpus, Vocab
from .state import USPState

FORMAT = "markovlogic-usp-1"


class ModelError(MarkovLogicError):
    """A model file that cannot be read."""


def _pairs(d: dict) -> list:
    return [[int(k), int(v)] for k, v in d.items()]


def _unpairs(x: list) -> dict:
    return {int(k): int(v) for k, v in x}


@dataclass
class Ontology:
    """OntoUSP's ISA hierarchy (empty for plain USP): ``parent[c]`` the ISA
    parent of a cluster (concrete or abstract), ``tparent[t]`` the abstract
    property an argument type smooths toward; abstract clusters and
    properties have ids of their own (negative, so no clash)."""

    parent: dict[int, int] = field(default_factory=dict)
    tparent: dict[int, int] = field(default_factory=dict)
    abstract: dict[int, list[int]] = field(default_factory=dict)       # abstract cluster -> its properties
    prop_children: dict[int, list[int]] = field(default_factory=dict)  # abstract property -> child types
    m: float = 0.0
    dist: dict[int, list] = field(default_factory=dict)   # abstract property -> [forms, clusters, numbers] [[value, prob]]

    def __post_init__(self) -> None:
        self._q = {p: [dict((int(k), float(v)) for k, v in d) for d in ds] for p, ds in self.dist.items()}

    def q(self, t: int, which: int) -> dict | None:
        """The parent property's distribution over multinomial ``which``
        (0 forms, 1 clusters, 2 numbers) of type ``t``, or None."""
        p = self.tparent.get(t)
        return None if p is None else self._q[p][which]

    def children(self) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for c, p in self.parent.items():
            out.setdefault(p, []).append(c)
        return out

    def siblings(self, c: int) -> list[int]:
        """The other children of ``c``'s abstract parent."""
        p = self.parent.get(c)
        return [] if p is None else [k for k in self.children().get(p, []) if k != c]

    def descendants(self, c: int) -> list[int]:
        kids = self.children()
        out, todo = [], [c]
        while todo:
            x = todo.pop()
            for k in kids.get(x, ()):
                out.append(k)
                todo.append(k)
        return out

    def role(self, t: int) -> int:
        """The generic role of argument type ``t``: the top of its property
        ISA chain (``t`` itself without a parent)."""
        while t in self.tparent:
            t = self.tparent[t]
        return t

    def to_json(self) -> dict:
        return {"parent": _pairs(self.parent), "tparent": _pairs(self.tparent),
                "abstract": [[k, v] for k, v in self.abstract.items()],
                "prop_children": [[k, v] for k, v in self.prop_children.items()], "m": self.m,
                "dist": [[p, d] for p, d in self.dist.items()]}

    @classmethod
    def from_json(cls, d: dict) -> "Ontology":
        return cls(_unpairs(d["parent"]), _unpairs(d["tparent"]), {int(k): list(v) for k, v in d["abstract"]},
                   {int(k): list(v) for k, v in d["prop_children"]}, float(d["m"]),
                   {int(p): v for p, v in d.get("dist", [])})


class USPModel:
    """The weights and the knowledge base of a learned USP (or OntoUSP) model.

    Weights are log relative frequencies: ``w_form(c, f) = log n_cf / n_c``,
    ``w_aform(t, f) = log n_tf / T_t``, ``w_aclust(t, c) = log n_tc / T_t``,
    ``w_num(t, k) = log m_tk / n_c`` and ``w_root(c) = log r_c / R``."""

    def __init__(self, *, vocab: Vocab, core_forms: list[str], arg_forms: list[str], n: dict, F: dict,
                 ROOT: dict, R: int, owner: dict, AF: dict, AC: dict, AN: dict, P: dict, T: dict,
                 kb: dict[str, np.ndarray], qlf: QLFCorpus | None, options: dict, stats: dict,
                 ontology: Ontology | None = None, core_size: dict | None = None) -> None:
        self.vocab = vocab
        self.core_forms = core_forms
        self.arg_forms = arg_forms
        self._arg_id = {f: i for i, f in enumerate(arg_forms)}
        self._core_id = {f: i for i, f in enumerate(core_forms)}
        self.n, self.F, self.ROOT, self.R = n, F, ROOT, R
        self.owner, self.AF, self.AC, self.AN, self.P, self.T = owner, AF, AC, AN, P, T
        self.types: dict[int, list[int]] = {c: [] for c in n}
        for t, c in owner.items():
            self.types[c].append(t)
        for c in self.types:
            self.types[c].sort(key=lambda t: -T[t])
        self.form_clust: dict[int, list[int]] = {}
        for c, fs in F.items():
            for f in fs:
                self.form_clust.setdefault(f, []).append(c)
        self.kb = kb
        self.qlf = qlf
        self.options = options
        self.stats = stats
        self.ontology = ontology or Ontology()
        self.smoothed = True                 # OntoUSP's weights when there is an ontology
        self.core_size = dict(core_size or {})
        self.max_part_size = max([1] + [self.core_size.get(f, 1) for f in self.form_clust])

    # ------------------------------------------------------------------ build
    @classmethod
    def from_state(cls, state: USPState, options: dict | None = None, stats: dict | None = None) -> "USPModel":
        s = state
        kb = {"root": s.root.copy(), "clust": s.clust.copy(), "pform": s.pform.copy(), "atype": s.atype.copy(),
              "aform": s.aform.copy(), "ppart": s.ppart.copy()}
        vocab = Vocab(list(s.qlf.vocab.forms), list(s.qlf.vocab.labels), frozen=True, dropped=s.qlf.vocab.dropped)
        return cls(vocab=vocab, core_forms=list(s.core_forms), arg_forms=list(s.arg_forms),
                   n=dict(s.n), F={c: dict(d) for c, d in s.F.items()}, ROOT=dict(s.ROOT), R=s.R,
                   owner=dict(s.owner), AF={t: dict(d) for t, d in s.AF.items()},
                   AC={t: dict(d) for t, d in s.AC.items()}, AN={t: dict(d) for t, d in s.AN.items()},
                   P=dict(s.P), T=dict(s.T), kb=kb, qlf=s.qlf, options=dict(options or {}), stats=dict(stats or {}),
                   core_size=dict(s.core_size))

    # ---------------------------------------------------------------- weights
    def w_form(self, c: int, f: int) -> float | None:
        x = self.F[c].get(f)
        return log(x / self.n[c]) if x else None

    def w_root(self, c: int) -> float | None:
        x = self.ROOT.get(c)
        return log(x / self.R) if x else None

    def _smooth(self, t: int, which: int, v: int, x: float, tot: float) -> float | None:
        """log P'(v|t): the relative frequency, or with OntoUSP the m-estimate
        toward the type's abstract property (thesis §6.4)."""
        q = self.ontology.q(t, which) if self.smoothed else None
        if q is not None:
            m = self.ontology.m
            y = m * q.get(v, 0.0) + x
            return log(y / (m + tot)) if y > 0 else None
        return log(x / tot) if x else None

    def w_aform(self, t: int, f: int) -> float | None:
        return self._smooth(t, 0, f, self.AF[t].get(f, 0), self.T[t])

    def w_aclust(self, t: int, c: int) -> float | None:
        return self._smooth(t, 1, c, self.AC[t].get(c, 0), self.T[t])

    def w_num(self, t: int, k: int) -> float | None:
        n = self.n[self.owner[t]]
        x = self.AN[t].get(k, 0) if k else n - self.P[t]
        return self._smooth(t, 2, k, x, n)

    def core_form_id(self, s: str) -> int:
        return self._core_id.get(s, -1)

    def arg_form_id(self, s: str) -> int:
        return self._arg_id.get(s, -1)

    # --------------------------------------------------------------- printing
    @staticmethod
    def _word(form: str) -> str:
        """``buy:VERB`` -> ``buy``; composite forms as they are."""
        if "(" in form:
            return form
        return form.rsplit(":", 1)[0]

    def cluster_words(self, c: int, k: int = 12) -> list[str]:
        fs = sorted(self.F[c].items(), key=lambda x: (-x[1], x[0]))
        return [self._word(self.core_forms[f]) for f, _ in fs[:k]]

    def type_forms(self, t: int, k: int = 6) -> list[str]:
        fs = sorted(self.AF[t].items(), key=lambda x: (-x[1], x[0]))
        return [self.arg_forms[f] for f, _ in fs[:k]]

    def multi_form_clusters(self) -> list[int]:
        """Clusters of more than one core form, largest first."""
        cs = [c for c in self.F if len(self.F[c]) > 1]
        return sorted(cs, key=lambda c: (-self.n[c], c))

    def clusters_text(self, limit: int = 0, types: int = 0) -> str:
        """The clusters as in §5.5.4 of the thesis, one per line:
        ``{buy, purchase, acquire}`` (core forms, most frequent first), with
        the number of parts; with ``types``, the largest argument types and
        their forms beneath."""
        lines = []
        for c in self.multi_form_clusters()[: limit or None]:
            lines.append(f"{self.n[c]:6d}  {{{', '.join(self.cluster_words(c))}}}")
            for t in self.types[c][:types]:
                lines.append(f"            {self.T[t]:6d}  {' | '.join(self.type_forms(t))}")
        return "\n".join(lines)

    # ------------------------------------------------------------------- save
    def to_json(self) -> dict:
        return {
            "format": FORMAT, "forms": self.vocab.forms, "labels": self.vocab.labels,
            "dropped": list(self.vocab.dropped),
            "core_forms": self.core_forms, "arg_forms": self.arg_forms,
            "n": _pairs(self.n), "F": [[c, _pairs(d)] for c, d in self.F.items()],
            "ROOT": _pairs(self.ROOT), "R": self.R,
            "types": [[t, self.owner[t], self.P[t], self.T[t], _pairs(self.AF[t]), _pairs(self.AC[t]),
                       _pairs(self.AN[t])] for t in self.owner],
            "options": self.options, "stats": self.stats, "ontology": self.ontology.to_json(),
            "core_size": _pairs(self.core_size),
            "sent_ids": self.qlf.sent_ids if self.qlf is not None else [],
            "files": self.qlf.files if self.qlf is not None else [],
        }

    def save(self, path: str | Path) -> None:
        """Write the model to ``path`` atomically (a temporary file in the same
        folder, renamed when complete)."""
        path = Path(path)
        from ..io import check_writable, open_binary_atomic

        check_writable(path, "model")
        arrays = {f"kb_{k}": v for k, v in self.kb.items()}
        q = self.qlf
        if q is not None:
            arrays.update(q_form=q.form, q_head=q.head, q_label=q.label, q_sent=q.sent, q_node_tok=q.node_tok,
                          q_sent_start=q.sent_start, q_tok_start=q.tok_start, q_tok_head=q.tok_head,
                          q_sent_file=q.sent_file)
            for name in ("tok_form", "tok_lemma", "tok_upos", "tok_deprel"):
                arrays["q_" + name] = np.array("\x1f".join(map(str, getattr(q, name))))
        arrays["meta"] = np.array(json.dumps(self.to_json()))
        with open_binary_atomic(path) as tmp:       # the umask's mode, stale temporaries removed
            with open(tmp, "wb") as fh:
                np.savez_compressed(fh, **arrays)
                fh.flush()
                os.fsync(fh.fileno())

    @classmethod
    def load(cls, path: str | Path) -> "USPModel":
        path = Path(path)
        if not path.is_file():
            raise ModelError(f"no such model file: {path}")
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            meta = json.loads(str(arrays["meta"]))
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
            raise ModelError(f"{path} is not a USP model file ({type(exc).__name__}: {exc})") from None
        if meta.get("format") != FORMAT:
            raise ModelError(f"{path} is not a USP model file (format {meta.get('format')!r})")
        vocab = Vocab(list(meta["forms"]), list(meta["labels"]), frozen=True,
                      dropped=tuple(meta.get("dropped", DROPPED)))   # models written before: the default
        qlf = None
        if "q_form" in arrays:
            def split(name):
                text = str(arrays["q_" + name])
                out = np.empty(0 if text == "" and len(arrays["q_tok_head"]) == 0 else len(arrays["q_tok_head"]),
                               dtype=object)
                out[:] = text.split("\x1f") if len(out) else []
                return out
            qlf = QLFCorpus(vocab=vocab, form=arrays["q_form"], head=arrays["q_head"], label=arrays["q_label"],
                            sent=arrays["q_sent"], node_tok=arrays["q_node_tok"], sent_start=arrays["q_sent_start"],
                            tok_start=arrays["q_tok_start"], tok_form=split("tok_form"),
                            tok_lemma=split("tok_lemma"), tok_upos=split("tok_upos"),
                            tok_head=arrays["q_tok_head"], tok_deprel=split("tok_deprel"),
                            sent_ids=list(meta["sent_ids"]), files=list(meta["files"]),
                            sent_file=arrays["q_sent_file"])
        owner, P, T, AF, AC, AN = {}, {}, {}, {}, {}, {}
        for t, c, p, tot, af, ac, an in meta["types"]:
            owner[t], P[t], T[t] = c, p, tot
            AF[t], AC[t], AN[t] = _unpairs(af), _unpairs(ac), _unpairs(an)
        kb = {k[3:]: v for k, v in arrays.items() if k.startswith("kb_")}
        return cls(vocab=vocab, core_forms=list(meta["core_forms"]), arg_forms=list(meta["arg_forms"]),
                   n=_unpairs(meta["n"]), F={int(c): _unpairs(d) for c, d in meta["F"]}, ROOT=_unpairs(meta["ROOT"]),
                   R=int(meta["R"]), owner=owner, AF=AF, AC=AC, AN=AN, P=P, T=T, kb=kb, qlf=qlf,
                   options=meta["options"], stats=meta["stats"], ontology=Ontology.from_json(meta["ontology"]),
                   core_size=_unpairs(meta["core_size"]))


def ontology_text(model: USPModel, top: int = 4) -> str:
    """The learned ontology as a readable text file: every abstract concept
    with its ISA children and its abstract properties (generic argument
    types), then the flat clusters of more than one core form."""
    on = model.ontology
    kids = on.children()
    lines = ["# USP/OntoUSP ontology written by markovlogic (mln usp learn --ontology)",
             f"# {len(kids)} abstract concepts over {sum(len(v) for v in kids.values())} clusters; "
             f"{len(model.n):,} clusters in all; m = {on.m:g}",
             "# CONCEPT: an abstract cluster; ISA: a child cluster {its core forms, most frequent first} (parts);",
             "# PROPERTY: an abstract argument type, its most probable argument forms, argument clusters and",
             "# numbers, then '<-' the argument type of each child that ISA this property (its forms, count).", ""]

    def cl(c: int) -> str:
        return "{" + ", ".join(model.cluster_words(c, 6)) + "}"

    def fmt(which: int, d: list) -> str:
        items = sorted(((int(k), float(v)) for k, v in d), key=lambda x: -x[1])[:top]
        if which == 0:
            return ", ".join(f"{model.arg_forms[k]} {v:.2f}" for k, v in items)
        if which == 1:
            return ", ".join(f"{cl(k) if k in model.n else k} {v:.2f}" for k, v in items)
        return ", ".join(f"{k} {v:.2f}" for k, v in items)

    for a in sorted(kids, key=lambda a: (-sum(model.n[c] for c in kids[a]), a)):
        total = sum(model.n[c] for c in kids[a])
        lines.append(f"CONCEPT A{-a}: {len(kids[a])} clusters, {total:,} parts")
        for c in sorted(kids[a], key=lambda c: -model.n[c]):
            lines.append(f"  ISA {cl(c)}  ({model.n[c]:,})")
        for p in on.abstract.get(a, []):
            d = on.dist.get(p, [[], [], []])
            lines.append(f"  PROPERTY P{-p}  forms: {fmt(0, d[0])}")
            lines.append(f"      arguments: {fmt(1, d[1])}")
            lines.append(f"      numbers: {fmt(2, d[2])}")
            for t in on.prop_children.get(p, []):
                lines.append(f"    <- {cl(model.owner[t])} type {t}: {' | '.join(model.type_forms(t, 4))} ({model.T[t]:,})")
        lines.append("")
    flat = model.multi_form_clusters()
    lines.append(f"# {len(flat):,} clusters of more than one core form (USP's lambda-form clusters), largest first")
    for c in flat:
        parent = on.parent.get(c)
        lines.append(f"CLUSTER {c}  ({model.n[c]:,}){'  ISA A' + str(-parent) if parent is not None else ''}  {cl(c)}")
    return "\n".join(lines) + "\n"
