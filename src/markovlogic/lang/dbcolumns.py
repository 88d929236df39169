"""Evidence files read into columns: one array per argument, per predicate.

A .db file of tens of millions of lines (a social network of a million
people) cannot become one Python object per line: that takes about 600 bytes
and several microseconds each. Here the bytes of the file are scanned by a
compiled kernel, a block of 32 MB at a time, and every line of the common
shape ``[!?]P(A, B, ...)`` becomes a row of integer columns: the predicate's
rows hold their constants as codes into one table of names per database
(:class:`EvidenceColumns`), their truth (1, 0, -1 for ``?``) and their line.
Names are interned by the kernel in an open-addressing hash table over the
bytes, so each distinct constant becomes a Python string once.

Every other line (function values, several atoms on a line, quoted strings,
trailing comments, anything unusual or wrong) goes, in runs of consecutive
lines, to the lark grammar, exactly as :mod:`.dbfast` does; the atoms it
returns join their predicate's columns at their line, with their exact
positions. The kernel accepts exactly the lines ``dbfast._ATOM_LINE`` matches
(and skips those ``dbfast._SKIP_LINE`` matches), so the result never depends
on which path read a line. A file with a block comment (``/*``) is read by
:mod:`.dbfast` as a whole.

Positions of the compiled path's rows are recovered on demand (an error names
file, line and column: the column is that of the line's first non-blank
character, as the regular expression's groups give it). ``Database.atoms``
stays available as a lazy sequence of :class:`~.ast.EvidenceAtom` built from
the columns; the evidence store and the checks read the columns directly.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..arrays import distinct
from ..jit import kernel
from .ast import EvidenceAtom, FunctionValue, GroundAtom, Pos

BLOCK = 32 << 20            # bytes scanned per kernel call
MAX_ARITY = 16              # wider atoms take the lark path
QUEUE = 512                 # argument names interned together (_flush)
TRUTH_CODE = {True: 1, False: 0, None: -1}
CODE_TRUTH = {1: True, 0: False, -1: None}


# ------------------------------------------------------------------ the kernel

@kernel(cache=True)
def _name_start(c):
    return (65 <= c <= 90) or (97 <= c <= 122) or c == 95


@kernel(cache=True)
def _name_char(c):
    return (65 <= c <= 90) or (97 <= c <= 122) or (48 <= c <= 57) or c == 95 or c == 39 or c == 45


@kernel(cache=True)
def _digit(c):
    return 48 <= c <= 57


@kernel(cache=True, inline="always")
def _same(data, s, e, ls, le):
    if ls < 0 or e - s != le - ls:
        return False
    for i in range(e - s):
        if data[s + i] != data[ls + i]:
            return False
    return True


@kernel(cache=True, inline="always")
def _key(data, s, e):
    """(hash, first eight bytes) of the name ``data[s:e]``: the bytes are taken
    eight at a time as little-endian words (names hold no zero byte, so a name
    of at most eight bytes is its first word)."""
    h = np.uint64(e - s) * np.uint64(0x9E3779B97F4A7C15)
    first = np.uint64(0)
    w = np.uint64(0)
    sh = np.uint64(0)
    for i in range(s, e):
        w = w | (np.uint64(data[i]) << sh)
        sh += np.uint64(8)
        if sh == np.uint64(64):
            if i - s == 7:
                first = w
            h = (h ^ w) * np.uint64(0xBF58476D1CE4E5B9)
            h = h ^ (h >> np.uint64(31))
            w = np.uint64(0)
            sh = np.uint64(0)
    if sh != np.uint64(0):
        if e - s < 8:
            first = w
        h = (h ^ w) * np.uint64(0xBF58476D1CE4E5B9)
        h = h ^ (h >> np.uint64(31))
    h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return h ^ (h >> np.uint64(31)), first


@kernel(cache=True)
def _intern(data, s, e, tab, offs, buf, counts):
    """Id of the bytes ``data[s:e]`` in an open-addressing table (new: added);
    see :func:`_intern_key`."""
    h, first = _key(data, s, e)
    return _intern_key(data, s, e, h, first, tab, offs, buf, counts)


@kernel(cache=True)
def _intern_key(data, s, e, h, first, tab, offs, buf, counts):
    """Id of the bytes ``data[s:e]``, whose ``_key`` is ``(h, first)``.

    A slot is two words, in one cache line: the id + 1 (0: empty) in the low
    32 bits of the first, a tag in its high 32 bits (24 bits of the hash and
    the length, capped at 255), the name's first eight bytes in the second. A
    name of at most eight bytes is found without reading ``buf``; a longer
    one compares its other bytes there. ``offs[t]:offs[t + 1]``: the bytes of
    name ``t`` in ``buf``."""
    n = e - s
    tag = ((h >> np.uint64(40)) << np.uint64(8)) | np.uint64(min(n, 255))
    mask = np.uint64(tab.shape[0] - 1)
    slot = h & mask
    while True:
        a = tab[slot, 0]
        if a == np.uint64(0):
            nid = counts[0]
            tab[slot, 0] = (tag << np.uint64(32)) | np.uint64(nid + 1)
            tab[slot, 1] = first
            off = counts[1]
            for i in range(n):
                buf[off + i] = data[s + i]
            offs[nid + 1] = off + n
            counts[1] = off + n
            counts[0] = nid + 1
            return nid
        if (a >> np.uint64(32)) == tag and tab[slot, 1] == first:
            t = np.int64(a & np.uint64(0xFFFFFFFF)) - 1
            if n <= 8:
                return t
            off = offs[t]
            if offs[t + 1] - off == n:
                same = True
                for i in range(8, n):
                    if buf[off + i] != data[s + i]:
                        same = False
                        break
                if same:
                    return t
        slot = (slot + np.uint64(1)) & mask


@kernel(cache=True)
def _flush(data, q, nq, qh, qfirst, qid, args, tab, offs, buf, counts):
    """Intern the queued argument names in order (their ids in first-appearance
    order, as one at a time). ``q[k]``: (start, end, line, place, the queue
    entry whose id it repeats or -1). The keys are computed first, then the
    lookups run in a short loop whose iterations are independent, so the
    processor keeps several of the table's cache misses in flight (10 M
    lookups of present names in a 128 MB table: 1.24 s here, 2.8 s with a
    call to :func:`_intern_key` per lookup, probably the reference counting
    of its array arguments, whose locked instructions wait for outstanding
    loads; so the lookup is written out). The table is :func:`_intern_key`'s."""
    for k in range(nq):
        if q[k, 4] < 0:
            qh[k], qfirst[k] = _key(data, q[k, 0], q[k, 1])
    mask = np.uint64(tab.shape[0] - 1)
    for k in range(nq):
        r = q[k, 4]
        if r >= 0:
            t = qid[r]
        else:
            s = q[k, 0]
            n = q[k, 1] - s
            h = qh[k]
            first = qfirst[k]
            tag = ((h >> np.uint64(40)) << np.uint64(8)) | np.uint64(min(n, 255))
            slot = h & mask
            while True:
                a = tab[slot, 0]
                if a == np.uint64(0):
                    t = counts[0]
                    tab[slot, 0] = (tag << np.uint64(32)) | np.uint64(t + 1)
                    tab[slot, 1] = first
                    off = counts[1]
                    for i in range(n):
                        buf[off + i] = data[s + i]
                    offs[t + 1] = off + n
                    counts[1] = off + n
                    counts[0] = t + 1
                    break
                if (a >> np.uint64(32)) == tag and tab[slot, 1] == first:
                    t = np.int64(a & np.uint64(0xFFFFFFFF)) - 1
                    if n <= 8:
                        break
                    off = offs[t]
                    if offs[t + 1] - off == n:
                        same = True
                        for i in range(8, n):
                            if buf[off + i] != data[s + i]:
                                same = False
                                break
                        if same:
                            break
                slot = (slot + np.uint64(1)) & mask
        qid[k] = t
        args[q[k, 2], q[k, 3]] = t


@kernel(cache=True)
def _scan(data, lo, hi, kind, sign, pred, nargs, args, ptab, poffs, pbuf, pcounts, ctab, coffs, cbuf, ccounts, qu):
    """Classify and parse the lines of ``data[lo:hi]`` (whole lines).

    Per line: ``kind`` 0 skip (blank or comment), 1 atom (``sign`` 1 true,
    0 false, -1 unknown; ``pred``; ``nargs`` and ``args``: interned ids), 2
    another line. Stops early when an intern table would need to grow, or
    when a line has more arguments than ``args`` has columns (and fewer than
    ``MAX_ARITY``); returns (lines done, position reached, 1 if it stopped
    for a wide line else 0). ``qu``: scratch for the queue of argument
    names (:func:`_flush`; at least ``MAX_ARITY + 1`` rows)."""
    p = lo
    line = 0
    maxa = args.shape[1]
    starts = np.empty(maxa, np.int64)
    ends = np.empty(maxa, np.int64)
    # the previous line's names, per place: sorted files repeat them (Friends(P7, ...)
    # ten times), and comparing with bytes still in cache skips the hash table
    last_s = np.full(maxa + 1, -1, np.int64)
    last_e = np.full(maxa + 1, -1, np.int64)
    last_id = np.zeros(maxa + 1, np.int64)
    # argument names wait in a queue for _flush (last_q[j]: the queue entry of the
    # previous line's name at place j, or -1: its id is last_id[j])
    size = qu.shape[0]
    qh = np.empty(size, np.uint64)
    qfirst = np.empty(size, np.uint64)
    qid = np.empty(size, np.int64)
    last_q = np.full(maxa, -1, np.int64)
    nq = 0
    qbytes = 0
    while p < hi:
        le = p
        while le < hi and data[le] != 10:
            le += 1
        n = le - p
        grow_p = (pcounts[0] + 2) * 2 > len(ptab) or pcounts[1] + n > len(pbuf)
        if grow_p or nq + maxa > size or (ccounts[0] + nq + maxa + 1) * 2 > len(ctab) \
                or ccounts[1] + qbytes + n > len(cbuf):
            _flush(data, qu, nq, qh, qfirst, qid, args, ctab, coffs, cbuf, ccounts)
            for j in range(maxa):
                if last_q[j] >= 0:
                    last_id[j] = qid[last_q[j]]
                    last_q[j] = -1
            nq = 0
            qbytes = 0
        if grow_p or (ccounts[0] + maxa + 1) * 2 > len(ctab) or ccounts[1] + n > len(cbuf):
            return line, p, 0           # (the queue is empty: flushed above)
        # ---- an atom line?
        q = p
        ok = True
        while q < le and (data[q] == 32 or data[q] == 9):
            q += 1
        sg = 1
        if q < le and data[q] == 33:
            sg = 0
            q += 1
        elif q < le and data[q] == 63:
            sg = -1
            q += 1
        while q < le and (data[q] == 32 or data[q] == 9):
            q += 1
        ns = q
        if q < le and _name_start(data[q]):
            q += 1
            while q < le and _name_char(data[q]):
                q += 1
        else:
            ok = False
        ne = q
        if ok:
            while q < le and (data[q] == 32 or data[q] == 9):
                q += 1
            if q < le and data[q] == 40:
                q += 1
            else:
                ok = False
        k = 0
        if ok:
            while True:
                while q < le and (data[q] == 32 or data[q] == 9):
                    q += 1
                s = q
                if q < le and _name_start(data[q]):
                    q += 1
                    while q < le and _name_char(data[q]):
                        q += 1
                elif q < le and _digit(data[q]):
                    while q < le and _digit(data[q]):
                        q += 1
                    if q + 1 < le and data[q] == 46 and _digit(data[q + 1]):
                        q += 1
                        while q < le and _digit(data[q]):
                            q += 1
                    if q < le and (data[q] == 101 or data[q] == 69):
                        r = q + 1
                        if r < le and (data[r] == 43 or data[r] == 45):
                            r += 1
                        if r < le and _digit(data[r]):
                            q = r
                            while q < le and _digit(data[q]):
                                q += 1
                else:
                    ok = False
                    break
                if k == maxa:
                    if maxa < MAX_ARITY:         # a wider line: the caller widens ``args`` and scans again
                        _flush(data, qu, nq, qh, qfirst, qid, args, ctab, coffs, cbuf, ccounts)
                        return line, p, 1
                    ok = False
                    break
                starts[k] = s
                ends[k] = q
                k += 1
                while q < le and (data[q] == 32 or data[q] == 9):
                    q += 1
                if q < le and data[q] == 44:
                    q += 1
                    continue
                if q < le and data[q] == 41:
                    q += 1
                    break
                ok = False
                break
        if ok:
            while q < le and (data[q] == 32 or data[q] == 9 or data[q] == 13):
                q += 1
            ok = q == le
        if ok:
            kind[line] = 1
            sign[line] = sg
            if _same(data, ns, ne, last_s[maxa], last_e[maxa]):
                pred[line] = last_id[maxa]
            else:
                pred[line] = _intern(data, ns, ne, ptab, poffs, pbuf, pcounts)
                last_s[maxa], last_e[maxa], last_id[maxa] = ns, ne, pred[line]
            nargs[line] = k
            for j in range(k):
                if _same(data, starts[j], ends[j], last_s[j], last_e[j]):
                    if last_q[j] < 0:
                        args[line, j] = last_id[j]
                        continue
                    ref = last_q[j]
                else:
                    ref = -1
                    last_s[j], last_e[j], last_q[j] = starts[j], ends[j], nq
                    qbytes += ends[j] - starts[j]
                qu[nq, 0], qu[nq, 1], qu[nq, 2], qu[nq, 3], qu[nq, 4] = starts[j], ends[j], line, j, ref
                nq += 1
        else:
            # ---- a blank or comment line?
            q = p
            while q < le and (data[q] == 32 or data[q] == 9 or data[q] == 13 or data[q] == 12):
                q += 1
            if q == le or (q + 1 < le and data[q] == 47 and data[q + 1] == 47):
                kind[line] = 0
            else:
                kind[line] = 2
        line += 1
        p = le + 1
    _flush(data, qu, nq, qh, qfirst, qid, args, ctab, coffs, cbuf, ccounts)
    return line, hi, 0


@kernel(cache=True)
def _has_high_byte(data, n):
    for i in range(n):
        if data[i] >= 128:
            return True
    return False


class _Interner:
    """An open-addressing table of byte strings (see :func:`_intern`), grown by
    doubling; at most half full."""

    def __init__(self, capacity: int = 1 << 12, buf: int = 1 << 16) -> None:
        self.tab = np.zeros((capacity, 2), dtype=np.uint64)
        self.offs = np.zeros(capacity // 2 + 2, dtype=np.int64)
        self.buf = np.zeros(buf, dtype=np.uint8)
        self.counts = np.zeros(2, dtype=np.int64)

    def grow(self, line_bytes: int, extra_ids: int) -> None:
        n, used = int(self.counts[0]), int(self.counts[1])
        if (n + extra_ids) * 2 > len(self.tab):
            cap = len(self.tab) * 2
            while (n + extra_ids) * 2 > cap:
                cap *= 2
            offs = np.zeros(cap // 2 + 2, dtype=np.int64)
            offs[:n + 1] = self.offs[:n + 1]
            self.offs = offs
            self.tab = np.zeros((cap, 2), dtype=np.uint64)
            _rehash(self.tab, self.offs, self.buf, n)
        if used + line_bytes > len(self.buf):
            size = len(self.buf) * 2
            while used + line_bytes > size:
                size *= 2
            buf = np.zeros(size, dtype=np.uint8)
            buf[:used] = self.buf[:used]
            self.buf = buf

    def names(self, start: int = 0) -> list[str]:
        n = int(self.counts[0])
        raw = self.buf[:int(self.counts[1])].tobytes()
        offs = self.offs[start:n + 1].tolist()
        return [raw[o:k].decode("ascii") for o, k in zip(offs[:-1], offs[1:])]


@kernel(cache=True)
def _rehash(tab, offs, buf, n):
    mask = np.uint64(tab.shape[0] - 1)
    for t in range(n):
        s, e = offs[t], offs[t + 1]
        h, first = _key(buf, s, e)
        tag = ((h >> np.uint64(40)) << np.uint64(8)) | np.uint64(min(e - s, 255))
        slot = h & mask
        while tab[slot, 0] != np.uint64(0):
            slot = (slot + np.uint64(1)) & mask
        tab[slot, 0] = (tag << np.uint64(32)) | np.uint64(t + 1)
        tab[slot, 1] = first


# ------------------------------------------------------------------ columns

@dataclass
class PredRows:
    """The evidence rows of one predicate name with one number of arguments."""

    name: str
    arity: int
    args: np.ndarray                 # int32[n, arity]: codes into EvidenceColumns.consts
    truth: np.ndarray                # int8[n]: 1 true, 0 false, -1 unknown
    line: np.ndarray                 # int32[n]: 1-based line
    file: np.ndarray                 # int16[n]: index into EvidenceColumns.files
    exact_pos: dict = field(default_factory=dict)     # row -> Pos (rows read by the grammar)
    sub: np.ndarray | None = None    # int32[n]: order among the atoms of one line (None: 0)

    def __len__(self) -> int:
        return len(self.truth)

    def order_keys(self) -> np.ndarray:
        """int64 (file, line) of each row: rows of different predicates compare
        by place in the input."""
        return (self.file.astype(np.int64) << 32) | self.line.astype(np.int64)


@dataclass
class EvidenceColumns:
    """The atoms of some .db text(s) as columns (see the module docstring)."""

    files: list[str] = field(default_factory=list)
    consts: list[str] = field(default_factory=list)
    preds: dict[tuple[str, int], PredRows] = field(default_factory=dict)
    texts: dict[int, str] = field(default_factory=dict)          # file index -> text, when read from a string

    def __len__(self) -> int:
        return sum(len(r) for r in self.preds.values())

    def pos(self, rows: PredRows, i: int, lines: dict | None = None) -> Pos:
        """The position of row ``i`` of ``rows``: file, line and the column of the
        line's first non-blank character (or the grammar's exact position).
        ``lines``: a cache of file texts split into lines, for many calls."""
        if int(i) in rows.exact_pos:
            return rows.exact_pos[int(i)]
        f, line = int(rows.file[i]), int(rows.line[i])
        if lines is not None:
            if f not in lines:
                lines[f] = self.file_lines(f)
            file_lines = lines[f]
            text = file_lines[line - 1] if file_lines is not None and 1 <= line <= len(file_lines) else None
        else:
            text = self.line_text(f, line)
        col = 1 + (len(text) - len(text.lstrip(" \t"))) if text is not None else 1
        return Pos(self.files[f], line, col)

    def file_lines(self, f: int) -> list[str] | None:
        if f in self.texts:
            return self.texts[f].split("\n")
        try:
            data = Path(self.files[f]).read_bytes()
        except OSError:
            return None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = data.decode("latin-1")
        return text.split("\n")

    def line_text(self, f: int, line: int) -> str | None:
        """The text of a line of file ``f`` (read again from the file)."""
        if f in self.texts:
            lines = self.texts[f].split("\n")
            return lines[line - 1] if 1 <= line <= len(lines) else None
        try:
            with open(self.files[f], "rb") as fh:
                for k, raw in enumerate(fh, 1):
                    if k == line:
                        text = raw.rstrip(b"\n")
                        if k == 1:
                            text = text.removeprefix(b"\xef\xbb\xbf")
                        try:
                            return text.decode("utf-8")
                        except UnicodeDecodeError:
                            return text.decode("latin-1")
        except OSError:
            return None
        return None

    def atom(self, rows: PredRows, i: int, lines: dict | None = None) -> EvidenceAtom:
        consts = self.consts
        args = tuple(consts[c] for c in rows.args[i].tolist())
        return EvidenceAtom(GroundAtom(rows.name, args), CODE_TRUTH[int(rows.truth[i])], self.pos(rows, i, lines))

    def iter_atoms(self) -> Iterator[EvidenceAtom]:
        """Every atom, in the order of the input."""
        groups = list(self.preds.values())
        if not groups:
            return
        keys = np.concatenate([g.order_keys() for g in groups])
        sub = np.concatenate([g.sub if g.sub is not None else np.zeros(len(g), np.int32) for g in groups])
        which = np.concatenate([np.full(len(g), k, np.int32) for k, g in enumerate(groups)])
        row = np.concatenate([np.arange(len(g)) for g in groups])
        order = np.lexsort((sub, keys))
        lines: dict = {}
        for k, i in zip(which[order].tolist(), row[order].tolist()):
            yield self.atom(groups[k], i, lines)

    @classmethod
    def from_atoms(cls, atoms: Sequence[EvidenceAtom]) -> "EvidenceColumns":
        """Columns of a list of parsed atoms (their positions kept exactly)."""
        out = cls()
        ids: dict[str, int] = {}
        files: dict[str, int] = {}
        parts: dict[tuple[str, int], list] = {}
        parts_seq: list = []
        for a in atoms:
            g = a.atom
            codes = []
            for c in g.args:
                k = ids.get(c)
                if k is None:
                    k = ids[c] = len(out.consts)
                    out.consts.append(c)
                codes.append(k)
            pos = a.pos
            f = files.setdefault(pos.file if pos is not None else "<string>", len(files))
            parts.setdefault((g.predicate, len(g.args)), []).append((codes, TRUTH_CODE[a.truth], pos, f, len(parts_seq)))
            parts_seq.append(None)
        out.files = list(files)
        for (name, arity), items in parts.items():
            rows = PredRows(
                name, arity,
                np.array([c for c, _, _, _, _ in items], dtype=np.int32).reshape(len(items), arity),
                np.array([t for _, t, _, _, _ in items], dtype=np.int8),
                np.array([p.line if p is not None else 0 for _, _, p, _, _ in items], dtype=np.int32),
                np.array([f for _, _, _, f, _ in items], dtype=np.int16),
            )
            rows.sub = np.array([k for _, _, _, _, k in items], dtype=np.int32)
            rows.exact_pos = {i: p for i, (_, _, p, _, _) in enumerate(items) if p is not None}
            if any(p is None for _, _, p, _, _ in items):
                rows.exact_pos.update({i: None for i, (_, _, p, _, _) in enumerate(items) if p is None})
            out.preds[(name, arity)] = rows
        return out


class LazyAtoms(Sequence):
    """``Database.atoms`` of a database read into columns: the atoms are made
    when asked for (iterating makes each once; nothing is kept)."""

    def __init__(self, columns: EvidenceColumns) -> None:
        self.columns = columns

    def __len__(self) -> int:
        return len(self.columns)

    def __iter__(self):
        return self.columns.iter_atoms()

    def __getitem__(self, i):
        items = list(self.columns.iter_atoms())
        return items[i]

    def __eq__(self, other) -> bool:
        return list(self) == list(other)

    def __repr__(self) -> str:
        return f"LazyAtoms({len(self)} atoms)"


# ------------------------------------------------------------------ reading

def _blocks(fh, buf: bytearray) -> Iterator[tuple[np.ndarray, int]]:
    """Whole-line blocks of a binary stream, read into ``buf`` (reused, so no
    block costs fresh pages; a line longer than it gets a bigger one):
    (uint8 view of the block, number of lines before). A view is valid until
    the next block is asked for."""
    have = 0
    lines_before = 0
    while True:
        if have == len(buf):
            bigger = bytearray(2 * len(buf))
            bigger[:have] = buf
            buf = bigger
        with memoryview(buf) as mv:
            got = fh.readinto(mv[have:])
        end = have + got
        if not got:
            if have:
                data = np.frombuffer(buf, np.uint8, count=have)
                data.flags.writeable = False
                yield data, lines_before
            return
        cut = buf.rfind(b"\n", 0, end)
        if cut < 0:
            have = end
            continue
        data = np.frombuffer(buf, np.uint8, count=cut + 1)
        data.flags.writeable = False         # the kernels see one array type (as from bytes)
        yield data, lines_before
        lines_before += _count_byte(data, 10)
        del data
        rest = end - cut - 1
        buf[:rest] = buf[cut + 1:end]
        have = rest


@kernel(cache=True)
def _count_byte(data, b):
    k = 0
    for i in range(len(data)):
        if data[i] == b:
            k += 1
    return k


@kernel(cache=True)
def _find_byte(data, start, b):
    """The first place of byte ``b`` at or after ``start`` (``len(data)``: none)."""
    for i in range(start, len(data)):
        if data[i] == b:
            return i
    return len(data)


class ColumnReader:
    """Reads .db texts into one :class:`EvidenceColumns`, file by file."""

    def __init__(self) -> None:
        self.cols = EvidenceColumns()
        self._p = _Interner(1 << 8, 1 << 12)
        self._c = _Interner()
        self._parts: dict[tuple[int, int], list] = {}       # (pred id, arity) -> [(args, truth, line, file)]
        self._slow: list[tuple] = []                         # (file, EvidenceAtom)
        self._width = 4                                      # argument columns of the kernel's output
        self._buf: bytearray | None = None                   # the file reading buffer (BLOCK bytes)
        self._lines: tuple | None = None                     # the kernel's per-line outputs (_line_arrays)
        self._queue = np.zeros((max(QUEUE, MAX_ARITY + 1), 5), np.int64)    # argument names waiting (_flush)
        self.function_values: list[FunctionValue] = []

    def read_file(self, path: Path, filename: str) -> bool:
        """Read one file; False (nothing read) if it must go to the text path
        (it has a block comment)."""
        if self._buf is None:
            self._buf = bytearray(BLOCK)
        with open(path, "rb") as fh:
            skip = 3 if fh.read(3) == b"\xef\xbb\xbf" else 0
            fh.seek(skip)
            encoding = self._survey(fh, self._buf)
            if encoding is None:
                return False
            fh.seek(skip)
            f = len(self.cols.files)
            self.cols.files.append(filename)
            for data, before in _blocks(fh, self._buf):
                self._read_block(data, before, f, filename, encoding)
        return True

    def read_text(self, text: str, filename: str) -> bool:
        if "/*" in text:
            return False
        f = len(self.cols.files)
        self.cols.files.append(filename)
        self.cols.texts[f] = text
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as err:    # a lone surrogate: no file can hold it
            from ..errors import MLNSyntaxError

            line = text.count("\n", 0, err.start) + 1
            column = err.start - (text.rfind("\n", 0, err.start) + 1) + 1
            raise MLNSyntaxError(f"character U+{ord(text[err.start]):04X} (an unpaired surrogate) cannot be "
                                 "evidence text", file=filename, line=line, column=column) from None
        start = 0
        before = 0
        while start < len(data):
            cut = data.rfind(b"\n", start, start + BLOCK)
            stop = len(data) if cut < 0 or start + BLOCK >= len(data) else cut + 1
            block = data[start:stop]
            self._read_block(np.frombuffer(block, np.uint8), before, f, filename, "utf-8")
            before += block.count(b"\n")
            start = stop
        return True

    @staticmethod
    def _survey(fh, buf: bytearray) -> str | None:
        """One pass over the stream: None if it has a block comment (``/*``),
        else its encoding: utf-8, or latin-1 if it is not valid UTF-8 (as
        ``read_text``)."""
        arr = np.frombuffer(buf, np.uint8)
        arr.flags.writeable = False
        dec = codecs.getincrementaldecoder("utf-8")()
        high = bad = False
        last = 0
        while True:
            with memoryview(buf) as mv:
                got = fh.readinto(mv)
                if not got:
                    break
                if buf.find(b"/*", 0, got) >= 0 or (last == 47 and buf[0] == 42):
                    return None
                last = buf[got - 1]
                if not bad and (high or _has_high_byte(arr, got)):
                    high = True
                    try:
                        dec.decode(mv[:got])
                    except UnicodeDecodeError:
                        bad = True
        if high and not bad:
            try:
                dec.decode(b"", final=True)
            except UnicodeDecodeError:
                bad = True
        return "latin-1" if bad else "utf-8"

    def _read_block(self, data: np.ndarray, before: int, f: int, filename: str, encoding: str) -> None:
        """Scan the whole lines ``data`` (uint8) of file ``f``."""
        n_lines = _count_byte(data, 10) + (0 if not len(data) or data[-1] == 10 else 1)
        kind, sign, pred, nargs, args = self._line_arrays(n_lines)
        p, c = self._p, self._c
        pos, line = 0, 0
        with np.errstate(over="ignore"):     # the hashes' products wrap (run as Python on tiny input)
            while pos < len(data):
                done, reached, wide = _scan(data, pos, len(data), kind[line:], sign[line:], pred[line:],
                                            nargs[line:], args[line:], p.tab, p.offs, p.buf, p.counts,
                                            c.tab, c.offs, c.buf, c.counts, self._queue)
                if wide:
                    self._width = MAX_ARITY
                    kind, sign, pred, nargs, args = self._line_arrays(n_lines, args)
                line += done
                pos = reached
                if pos < len(data) and not wide:
                    width = _find_byte(data, pos, 10) - pos
                    p.grow(width, 2)
                    c.grow(width, MAX_ARITY + 1)
        lines = np.arange(before + 1, before + 1 + n_lines, dtype=np.int32)
        fast = np.flatnonzero(kind == 1)
        if len(fast):
            key = pred[fast].astype(np.int64) * (MAX_ARITY + 1) + nargs[fast]
            for k in distinct(key).tolist():
                sel = fast[key == k]
                pid, arity = divmod(k, MAX_ARITY + 1)
                self._parts.setdefault((pid, arity), []).append(
                    (args[sel, :arity].copy(), sign[sel].copy(), lines[sel], np.full(len(sel), f, np.int16)))
        slow = np.flatnonzero(kind == 2)
        if len(slow):
            self._read_slow(data, kind, slow, before, filename, f, encoding)

    def _line_arrays(self, n_lines: int, args: np.ndarray | None = None) -> tuple:
        """The kernel's per-line outputs for a block of ``n_lines`` lines: views of
        buffers kept from block to block (the kernel sets each line's ``kind``,
        and the rest of the atom lines it sets). With ``args`` (the block's
        argument columns so far): widen them to ``self._width``, values kept."""
        have = self._lines
        if have is None or len(have[0]) < n_lines:
            have = (np.zeros(n_lines, np.int8), np.zeros(n_lines, np.int8), np.zeros(n_lines, np.int32),
                    np.zeros(n_lines, np.int8), np.zeros((n_lines, self._width), np.int32))
        elif have[4].shape[1] < self._width:
            wider = np.zeros((len(have[0]), self._width), np.int32)
            if args is not None:
                wider[:len(args), :args.shape[1]] = args
            have = have[:4] + (wider,)
        self._lines = have
        kind, sign, pred, nargs, args = (a[:n_lines] for a in have)
        return kind, sign, pred, nargs, args

    def _read_slow(self, data: np.ndarray, kind: np.ndarray, slow: np.ndarray, before: int, filename: str, f: int,
                   encoding: str) -> None:
        """Runs of lines the kernel did not read: from a slow line up to the next
        atom line, parsed by the grammar (as dbfast does)."""
        from .frontend import frontend

        offsets = np.zeros(len(kind) + 1, dtype=np.int64)
        nl = np.flatnonzero(data == 10)
        offsets[1:len(nl) + 1] = nl + 1
        if len(nl) < len(kind):
            offsets[len(kind)] = len(data) + 1
        is_atom = kind == 1
        slow_set = slow.tolist()
        k = 0
        while k < len(slow_set):
            start = slow_set[k]
            stop = start + 1
            while stop < len(kind) and not is_atom[stop]:
                stop += 1
            chunk = data[offsets[start]:offsets[stop] - 1].tobytes().decode(encoding)
            for item in frontend("db").parse(chunk, filename, line_offset=before + start):
                if type(item) is EvidenceAtom:
                    self._slow.append((f, item))
                else:
                    self.function_values.append(item)
            while k < len(slow_set) and slow_set[k] < stop:
                k += 1

    def finish(self) -> EvidenceColumns:
        cols = self.cols
        cols.consts = self._c.names()
        pred_names = self._p.names()
        groups: dict[tuple[str, int], list] = {}
        for (pid, arity), parts in self._parts.items():
            groups[(pred_names[pid], arity)] = parts
        self._parts = {}
        exact: dict[tuple[str, int], list] = {}
        seq = 1
        if self._slow:
            ids = {name: k for k, name in enumerate(cols.consts)}
            for f, a in self._slow:
                g = a.atom
                codes = []
                for cname in g.args:
                    k = ids.get(cname)
                    if k is None:
                        k = ids[cname] = len(cols.consts)
                        cols.consts.append(cname)
                    codes.append(k)
                key = (g.predicate, len(g.args))
                exact.setdefault(key, []).append((codes, TRUTH_CODE[a.truth], a.pos, f, seq))
                seq += 1
            self._slow = []
        for key in list(groups) + [k for k in exact if k not in groups]:
            name, arity = key
            parts = groups.get(key, [])
            a_parts = [p[0] for p in parts]
            t_parts = [p[1] for p in parts]
            l_parts = [p[2] for p in parts]
            f_parts = [p[3] for p in parts]
            extra = exact.get(key, [])
            n_fast = sum(len(t) for t in t_parts)
            if extra:
                a_parts.append(np.array([c for c, _, _, _, _ in extra], dtype=np.int32).reshape(len(extra), arity))
                t_parts.append(np.array([t for _, t, _, _, _ in extra], dtype=np.int8))
                l_parts.append(np.array([p.line for _, _, p, _, _ in extra], dtype=np.int32))
                f_parts.append(np.array([f for _, _, _, f, _ in extra], dtype=np.int16))
            rows = PredRows(name, arity, _cat(a_parts, (0, arity), np.int32), _cat(t_parts, (0,), np.int8),
                            _cat(l_parts, (0,), np.int32), _cat(f_parts, (0,), np.int16))
            if extra:
                exact_rows = {n_fast + i: p for i, (_, _, p, _, _) in enumerate(extra)}
                sub = np.zeros(len(rows), np.int32)
                sub[n_fast:] = [k for _, _, _, _, k in extra]
                order = np.lexsort((sub, rows.order_keys()))
                if not np.array_equal(order, np.arange(len(order))):
                    rows.args, rows.truth = rows.args[order], rows.truth[order]
                    rows.line, rows.file, sub = rows.line[order], rows.file[order], sub[order]
                    where = np.empty(len(order), dtype=np.int64)
                    where[order] = np.arange(len(order))
                    exact_rows = {int(where[i]): p for i, p in exact_rows.items()}
                rows.exact_pos = exact_rows
                rows.sub = sub
            cols.preds[key] = rows
        return cols


@kernel(cache=True)
def _first_seen(codes, n_codes, out):
    seen = np.zeros(n_codes, np.bool_)
    k = 0
    for i in range(len(codes)):
        c = codes[i]
        if not seen[c]:
            seen[c] = True
            out[k] = c
            k += 1
    return k


def first_appearance(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """The distinct values of ``codes`` (in ``0..n_codes-1``) in the order of
    their first appearance, in one pass."""
    out = np.empty(min(len(codes), n_codes), dtype=np.int64)
    k = _first_seen(np.asarray(codes), int(n_codes), out)
    return out[:k]


def _cat(parts: list[np.ndarray], empty_shape: tuple, dtype) -> np.ndarray:
    if not parts:
        return np.zeros(empty_shape, dtype=dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)
