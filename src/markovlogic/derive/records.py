"""Records to evidence: a table of records (one row a record, one column a
field) as the evidence an entity-resolution model reads, with the predicate
names of ``../shared/data/er``.

    mln derive --records records.csv --id id --fields name,phone_number:digits:Phone,street \\
               [--source source] [--block name,street] [--max-df 30] [--schema schema.mln] -o evidence.db

A field is ``COLUMN[:KIND[:PREDICATE]]``; the predicate defaults to the
column in CamelCase (``phone_number`` -> ``PhoneNumber``). Kinds:

==========  ==============================================================
``text``    ``HasWord<P>(record, word)``: one atom per distinct word (NFKD
            folded to ASCII, lower-cased, maximal runs of ``[a-z0-9]``,
            constant ``W_<word>``); and ``<P>Text(record, "the string")``,
            the field as written (for ``jarowinkler``, ``levenshtein``)
``value``   ``<P>(record, V_<value>)``: lower-cased alphanumeric words
            joined by ``_``, cut at 80 characters
``number``  ``<P>(record, V_<number>)`` (``$`` and ``,`` dropped, a
            trailing ``.0`` dropped, ``.`` -> ``_``) and ``<P>Num(record,
            "12.65")`` (for ``numdiff``, ``absdiff``)
``year``    the first 4-digit year 18xx-20xx: ``<P>(record, V_1999)`` and
            ``<P>Num(record, "1999")``
``digits``  digits only (telephone numbers): ``<P>(record, V_4042311368)``
==========  ==============================================================

Every field also writes ``Has<P>(record)`` for the records that have a value
(so a model can tell "both present and different" from "missing").

Without a kind, a field is ``number`` when every non-empty value is a
number, else ``text``. An empty cell writes nothing (a missing value). With
``--source COLUMN``, ``Source(record, S_<value>)`` (clean-clean data: the
model can keep one record per source in a cluster). With ``--block``, the
blocking keys: ``BlockKey(record, W_<word>)`` for the words of those fields
whose document frequency among these records is at most ``max-df`` (default
max(30, 1 % of the records)) and at least 2: records sharing a key are the
candidate pairs of ``examples/er/template.mln``.

The work is vectorised with pandas; nothing loops over records in Python
but the final text join.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import EvidenceError, OptionError

KINDS = ("text", "value", "number", "year", "digits")
_IDENT = re.compile(r"^[A-Z][A-Za-z0-9_]*$")
_PRED = re.compile(r"^[A-Z][A-Za-z0-9_]*$")
_NUMBER = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$")


@dataclass(frozen=True)
class Field:
    column: str
    kind: str | None
    predicate: str


def camel(name: str) -> str:
    parts = re.findall(r"[A-Za-z0-9]+", name)
    out = "".join(p[:1].upper() + p[1:] for p in parts)
    if not out or not out[0].isalpha():
        out = "F" + out
    return out


def parse_fields(text: str) -> list[Field]:
    """``name,price:number,phone_number:digits:Phone`` as fields."""
    out = []
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        bits = part.split(":")
        if len(bits) > 3:
            raise OptionError(f"--fields: {part!r} is COLUMN[:KIND[:PREDICATE]]")
        column = bits[0]
        kind = bits[1] if len(bits) > 1 and bits[1] else None
        if kind is not None and kind not in KINDS:
            raise OptionError(f"--fields: unknown kind {kind!r} in {part!r}; choose one of {', '.join(KINDS)}")
        pred = bits[2] if len(bits) > 2 and bits[2] else camel(column)
        if not _PRED.match(pred):
            raise OptionError(f"--fields: {pred!r} is not a predicate name (a capital letter, then letters, "
                              "digits or '_')")
        out.append(Field(column, kind, pred))
    if not out:
        raise OptionError("--fields names no column")
    return out


def _quote(s):
    return '"' + s.str.replace("\\", "\\\\", regex=False).str.replace('"', '\\"', regex=False) \
        .str.replace("\n", " ", regex=False).str.replace("\r", " ", regex=False) + '"'


def _ascii_lower(s):
    return s.str.normalize("NFKD").str.encode("ascii", "ignore").str.decode("ascii").str.lower()


def _words(s):
    """(row index, word) of every distinct word of every value."""
    w = _ascii_lower(s).str.findall(r"[a-z0-9]+").explode().dropna()
    w = w[w != ""]
    frame = w.reset_index()
    frame.columns = ["row", "word"]
    return frame.drop_duplicates()


def _value(s):
    return _ascii_lower(s).str.findall(r"[a-z0-9]+").str.join("_").str.slice(0, 80)


def _number_text(s):
    t = s.str.replace("$", "", regex=False).str.replace(",", "", regex=False).str.strip()
    t = t.str.replace(r"\.0+$", "", regex=True)
    return t


def records_frame(path: str | Path):
    """A records CSV as strings (empty cells ''), with errors naming the file."""
    import pandas as pd

    p = Path(path)
    if not p.exists():
        raise OptionError(f"no such records file: {p}")
    if p.is_dir():
        raise OptionError(f"{p} is a folder, not a records file")
    try:
        return pd.read_csv(p, dtype=str, keep_default_na=False, encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise EvidenceError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=str(p)) from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        line = None
        m = re.search(r"line (\d+)", str(exc))
        if m:
            line = int(m.group(1))
        raise EvidenceError(f"not a CSV table: {str(exc).strip()}", file=str(p), line=line) from None


def records_to_db_text(frame, id_column: str, fields: list[Field], *, source: str | None = None,
                       block: list[str] | None = None, max_df: float | None = None,
                       clusters: str | None = None, where: str = "records") -> tuple[str, dict[str, int], list[str]]:
    """``(db text, atoms per predicate, declarations)`` of a records table.
    ``clusters``: a column naming each record's entity (training data): the
    true ``Same(a, b)`` atoms of every two records of one entity (``a < b``)."""
    import pandas as pd

    frame = frame.reset_index(drop=True)
    cols = list(frame.columns)
    for c in [id_column] + [f.column for f in fields] + ([source] if source else []) + list(block or []) + \
            ([clusters] if clusters else []):
        if c not in cols:
            raise OptionError(f"{where} has no column {c!r} (it has {', '.join(cols)})")
    ids = frame[id_column].astype(str).str.strip()
    if (ids == "").any():
        row = int(np.flatnonzero((ids == "").to_numpy())[0]) + 2
        raise EvidenceError(f"record without an id in column {id_column!r}", file=where, line=row)
    dup = ids.duplicated()
    if dup.any():
        row = int(np.flatnonzero(dup.to_numpy())[0]) + 2
        raise EvidenceError(f"duplicate record id {ids[dup].iloc[0]!r} in column {id_column!r}", file=where,
                            line=row)
    const = ids.where(ids.str.match(_IDENT), _quote(ids))
    parts: list[pd.Series] = []
    counts: dict[str, int] = {}
    decls: list[str] = []

    def emit(pred: str, rows, values, decl: str, unary: bool = False):
        rows = np.asarray(rows)
        if unary:
            text = pred + "(" + const.to_numpy()[rows] + ")"
            decl = f"{pred}(record)"
        else:
            text = pred + "(" + const.to_numpy()[rows] + "," + np.asarray(values, dtype=object) + ")"
        parts.append(pd.Series(text))
        counts[pred] = counts.get(pred, 0) + len(rows)
        if decl not in decls:
            decls.append(decl)

    if source:
        s = frame[source].astype(str)
        keep = (s.str.strip() != "").to_numpy()
        emit("Source", np.flatnonzero(keep), ("S_" + _value(s[keep])).to_numpy(), "Source(record, source)")
    used = {}
    for f in fields:
        for name in ([f"HasWord{f.predicate}", f"{f.predicate}Text", f"Has{f.predicate}"]
                     if (f.kind or "text") == "text" else [f.predicate, f"{f.predicate}Num", f"Has{f.predicate}"]):
            if name in used:
                raise OptionError(f"--fields: {f.column} and {used[name]} both write {name}")
            used[name] = f.column
        s = frame[f.column].astype(str)
        present = s.str.strip() != ""
        if present.any():
            emit(f"Has{f.predicate}", np.flatnonzero(present.to_numpy()), np.array([], dtype=object), "",
                 unary=True)
        kind = f.kind
        if kind is None:
            vals = s[present].str.strip()
            kind = "number" if len(vals) and vals.map(lambda v: bool(_NUMBER.match(
                v.replace("$", "").replace(",", "")))).all() else "text"
        if kind == "text":
            w = _words(s[present])
            emit(f"HasWord{f.predicate}", w["row"].to_numpy(), ("W_" + w["word"]).to_numpy(),
                 f"HasWord{f.predicate}(record, word)")
            idx = np.flatnonzero(present.to_numpy())
            emit(f"{f.predicate}Text", idx, _quote(s[present].str.strip()).to_numpy(),
                 f"{f.predicate}Text(record, text)")
        elif kind == "value" or kind == "digits":
            v = _value(s) if kind == "value" else s.str.replace(r"\D", "", regex=True)
            ok = (v != "").to_numpy() & present.to_numpy()
            emit(f.predicate, np.flatnonzero(ok), ("V_" + v[ok]).to_numpy(), f"{f.predicate}(record, {f.column.lower()})")
        else:
            if kind == "year":
                t = s.str.extract(r"((?:18|19|20)\d\d)", expand=False).fillna("")
            else:
                t = _number_text(s)
            ok = (t != "").to_numpy() & present.to_numpy()
            if kind == "number":
                ok &= t.str.match(_NUMBER).to_numpy()
            emit(f.predicate, np.flatnonzero(ok), ("V_" + t[ok].str.replace(".", "_", regex=False)
                                                   .str.replace("-", "m", regex=False)).to_numpy(),
                 f"{f.predicate}(record, {f.column.lower()})")
            emit(f"{f.predicate}Num", np.flatnonzero(ok), ('"' + t[ok] + '"').to_numpy(),
                 f"{f.predicate}Num(record, number)")
    text_fields = [f for f in fields if (f.kind or "text") == "text" and f.column in cols]
    if len(text_fields) >= 2:
        # all text fields' words together (for cosine over all the text)
        w = pd.concat([_words(frame[f.column].astype(str)) for f in text_fields]).drop_duplicates()
        emit("HasWord", w["row"].to_numpy(), ("W_" + w["word"]).to_numpy(), "HasWord(record, word)")
    if block:
        n = len(frame)
        limit = max(30.0, 0.01 * n) if max_df is None else float(max_df)
        ws = []
        for c in block:
            s = frame[c].astype(str)
            ws.append(_words(s))
        w = pd.concat(ws).drop_duplicates() if ws else pd.DataFrame({"row": [], "word": []})
        df = w.groupby("word")["row"].transform("size")
        w = w[(df >= 2) & (df <= limit)]
        emit("BlockKey", w["row"].to_numpy(), ("W_" + w["word"]).to_numpy(), "BlockKey(record, word)")
    if clusters:
        ent = frame[clusters].astype(str).str.strip()
        if (ent == "").any():
            row = int(np.flatnonzero((ent == "").to_numpy())[0]) + 2
            raise EvidenceError(f"record without an entity in column {clusters!r}", file=where, line=row)
        names = const.to_numpy()
        order = np.lexsort((ids.to_numpy(), ent.to_numpy()))
        e_sorted = ent.to_numpy()[order]
        bounds = np.flatnonzero(e_sorted[1:] != e_sorted[:-1]) + 1
        pairs = []
        for part in np.split(order, bounds):
            if len(part) > 1:
                i, j = np.triu_indices(len(part), 1)
                pairs.append("Same(" + names[part[i]] + "," + names[part[j]] + ")")
        if pairs:
            parts.append(pd.Series(np.concatenate(pairs)))
            counts["Same"] = int(sum(len(p) for p in pairs))
    text = "\n".join(pd.concat(parts, ignore_index=True).tolist()) + "\n" if parts else ""
    return text, counts, decls


# ---------------------------------------------------------------- the recipe's template

LONG_TEXT = 50          # mean characters: longer text fields get no string similarities
_YEARISH = re.compile(r"^\s*(?:18|19|20)\d\d(?:[-/.]\d{1,2}(?:[-/.]\d{1,2})?)?\s*$")
_DIGITS = re.compile(r"^[\d\s\-/().+]*\d[\d\s\-/().+]*$")


def infer_kinds(frame, columns: list[str]) -> list[Field]:
    """Fields for ``columns`` with their kind read from the values: ``year``
    when every non-empty value is a year or a date, ``number`` when every one
    is a number, ``digits`` when every one is digits with separators (a
    telephone number: ``404/231-1368``), else ``text``."""
    out = []
    for c in columns:
        s = frame[c].astype(str).str.strip()
        vals = s[s != ""]
        kind = "text"
        if len(vals):
            if vals.str.match(_YEARISH).all():
                kind = "year"
            elif vals.str.replace("$", "", regex=False).str.replace(",", "", regex=False).str.match(_NUMBER).all():
                kind = "number"
            elif vals.str.match(_DIGITS).all() and (vals.str.count(r"\d") >= 5).mean() > 0.9:
                kind = "digits"
        out.append(Field(c, kind, camel(c)))
    return out


def long_text(frame, field: Field) -> bool:
    s = frame[field.column].astype(str).str.strip()
    vals = s[s != ""]
    return bool(len(vals)) and float(vals.str.len().mean()) > LONG_TEXT


def fill_template(text: str, fields: list[Field], *, source: bool, declarations: list[str], frame=None,
                  where: str = "template") -> str:
    """The template with its ``//@`` blocks expanded (see examples/er/template.mln)."""
    kinds: dict[str, list[str]] = {"text": [], "short-text": [], "value": [], "number": [], "year": []}
    for f in fields:
        kind = f.kind or "text"
        if kind == "digits":
            kind = "value"
        kinds[kind].append(f.predicate)
        if kind == "text" and (frame is None or not long_text(frame, f)):
            kinds["short-text"].append(f.predicate)
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    conditions = {"source": source, "alltext": len(kinds["text"]) >= 2}

    def block_end(start: int) -> tuple[int, int | None]:
        depth = 0
        other = None
        for j in range(start + 1, len(lines)):
            d = lines[j].strip()
            if d.startswith("//@ each") or d.startswith("//@ if"):
                depth += 1
            elif d == "//@ else" and depth == 0:
                other = j
            elif d == "//@ end":
                if depth == 0:
                    return j, other
                depth -= 1
        raise OptionError(f"{where}:{start + 1}: '{lines[start].strip()}' has no '//@ end'")

    def expand(seg: list[str], base: int) -> list[str]:
        nonlocal lines
        saved = lines
        lines = seg
        res = []
        k = 0
        while k < len(lines):
            d = lines[k].strip()
            if d == "//@ declarations":
                res.extend(declarations)
                k += 1
            elif d.startswith("//@ each "):
                parts = d.split()
                if len(parts) != 4 or parts[2] not in kinds:
                    raise OptionError(f"{where}:{base + k + 1}: write '//@ each KIND F' with KIND one of "
                                      f"{', '.join(kinds)}")
                end, _ = block_end(k)
                body = lines[k + 1:end]
                var = "{" + parts[3] + "}"
                for pred in kinds[parts[2]]:
                    res.extend(line.replace(var, pred) for line in expand(body, base + k + 1))
                k = end + 1
            elif d.startswith("//@ if "):
                cond = d.split(None, 2)[2].strip()
                if cond not in conditions:
                    raise OptionError(f"{where}:{base + k + 1}: the conditions are "
                                      + ", ".join(f"'//@ if {c}'" for c in conditions))
                end, other = block_end(k)
                holds = conditions[cond]
                if other is None:
                    body = lines[k + 1:end] if holds else []
                else:
                    body = lines[k + 1:other] if holds else lines[other + 1:end]
                res.extend(expand(body, base + k + 1))
                k = end + 1
            elif d.startswith("//@"):
                raise OptionError(f"{where}:{base + k + 1}: unknown template line {d!r}")
            else:
                res.append(lines[k])
                k += 1
        lines = saved
        return res

    out = expand(lines, 0)
    return "\n".join(out)
