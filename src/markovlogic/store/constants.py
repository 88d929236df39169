"""Constants: interning to integer ids, and their values for internal functions.

Every constant name gets one global integer id (``ConstantTable.intern``); a
type's domain is the set of ids that belong to it. Internal functions and
comparisons need the *value* of a constant: its name without surrounding
double quotes (``sval``), read as a number when it looks like one (``num``;
``inum`` for integers). The same rules are used by the SQL grounder (which
reads them from the ``consts`` table) and by the test oracle.
"""

from __future__ import annotations

import re

import numpy as np

from ..arrays import distinct

_INT_RE = re.compile(r"^[+-]?\d+$")
_NUM_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")

INT64_MAX = 2**63 - 1


def constant_value(name: str) -> str:
    """The string value of a constant: its name, double quotes removed."""
    if len(name) >= 2 and name[0] == '"' and name[-1] == '"':
        return name[1:-1]
    return name


def constant_number(sval: str) -> float | None:
    """The numeric value of a constant's string value, or None."""
    if _NUM_RE.match(sval):
        return float(sval)
    return None


def constant_integer(sval: str) -> int | None:
    """The integer value of a constant's string value (None unless it is an
    integer that fits in 64 bits)."""
    if _INT_RE.match(sval):
        v = int(sval)
        if -INT64_MAX - 1 <= v <= INT64_MAX:
            return v
    return None


def integer_name(value: int) -> str:
    """The constant name an integer result of an internal function maps to."""
    return str(int(value))


class ConstantTable:
    """Names <-> ids, and type membership, built in a fixed order.

    ``names`` lists the names in id order. ``ids`` (name -> id) and
    ``members`` (type -> ordered set of ids, as a dict) are built when first
    asked for: the evidence store adds the constants of big evidence in bulk
    (:meth:`extend_new`, :meth:`add_ids`: numpy arrays of ids, no dict), and
    its own lookups go by :meth:`id_of`, :meth:`is_member` and :meth:`domain`.
    """

    def __init__(self) -> None:
        self.names: list[str] = []
        self._ids: dict[str, int] = {}          # name -> id of names[:self._n_indexed]
        self._n_indexed = 0
        # type -> ids in order of addition (chunks: int lists or int32 arrays, repeats allowed)
        self._parts: dict[str, list] = {}
        self._domains: dict[str, tuple[int, int, np.ndarray]] = {}   # type -> (parts, last len, sorted ids)
        self._members: dict[str, dict[int, None]] | None = None

    # ---------------------------------------------------------------- names
    @property
    def ids(self) -> dict[str, int]:
        """name -> id of every constant (indexed in bulk when first needed)."""
        n = len(self.names)
        if self._n_indexed < n:
            k = self._n_indexed
            self._ids.update(zip(self.names[k:] if k else self.names, range(k, n)))
            self._n_indexed = n
        return self._ids

    def id_of(self, name: str) -> int | None:
        """The id of a name (None if not interned); names added one by one
        before a bulk addition are found without indexing the bulk."""
        cid = self._ids.get(name)
        if cid is None and self._n_indexed < len(self.names):
            cid = self.ids.get(name)
        return cid

    def intern(self, name: str) -> int:
        ids = self.ids
        cid = ids.get(name)
        if cid is None:
            cid = len(self.names)
            ids[name] = cid
            self.names.append(name)
            self._n_indexed = len(self.names)
        return cid

    def extend_new(self, names: list[str]) -> int:
        """Append names that are not interned yet and distinct (the caller
        knows: no check); returns the id of the first. The name -> id index
        covers them only when next asked for."""
        start = len(self.names)
        self.names.extend(names)
        return start

    # ---------------------------------------------------------------- types
    def _touch(self, type_name: str) -> list:
        self._members = None
        parts = self._parts.get(type_name)
        if parts is None:
            parts = self._parts[type_name] = []
        return parts

    def add_type(self, type_name: str) -> None:
        if type_name not in self._parts:
            self._touch(type_name)

    def add(self, type_name: str, name: str) -> int:
        cid = self.intern(name)
        parts = self._touch(type_name)
        if parts and isinstance(parts[-1], list):
            parts[-1].append(cid)
        else:
            parts.append([cid])
        return cid

    def add_ids(self, type_name: str, ids: np.ndarray) -> None:
        """Make interned ids members of a type (in this order; repeats and
        members already there are fine)."""
        parts = self._touch(type_name)
        if len(ids):
            parts.append(np.array(ids, dtype=np.int32))

    def add_many(self, type_name: str, names) -> None:
        """Add every name of an iterable to a type (interning new ones)."""
        ids = self.ids
        if isinstance(names, list) and len(names) > 64 and len(set(names)) == len(names):
            # distinct names (a column's constants in order of appearance): in bulk
            new = [n for n in names if n not in ids]
            start = len(self.names)
            ids.update(zip(new, range(start, start + len(new))))
            self.names.extend(new)
            self._n_indexed = len(self.names)
            self.add_ids(type_name, np.fromiter(map(ids.__getitem__, names), dtype=np.int32, count=len(names)))
            return
        cids = []
        for name in names:
            cid = ids.get(name)
            if cid is None:
                cid = len(self.names)
                ids[name] = cid
                self.names.append(name)
            cids.append(cid)
        self._n_indexed = len(self.names)
        self.add_ids(type_name, np.array(cids, dtype=np.int32))

    def __len__(self) -> int:
        return len(self.names)

    def type_names(self) -> list[str]:
        """The types, in the order they were first added."""
        return list(self._parts)

    def _chunks(self, type_name: str) -> np.ndarray:
        parts = self._parts.get(type_name, ())
        arrays = [np.asarray(p, dtype=np.int32) for p in parts]
        if not arrays:
            return np.zeros(0, np.int32)
        return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)

    def domain(self, type_name: str) -> np.ndarray:
        """Sorted int32 ids of a type's constants."""
        parts = self._parts.get(type_name, ())
        state = (len(parts), len(parts[-1]) if parts else 0)
        cached = self._domains.get(type_name)
        if cached is not None and cached[:2] == state:
            return cached[2].copy()
        ids = distinct(self._chunks(type_name))
        self._domains[type_name] = (*state, ids)
        return ids.copy()

    def is_member(self, type_name: str, cid: int) -> bool:
        dom = self.domain(type_name) if type_name in self._parts else np.zeros(0, np.int32)
        k = int(np.searchsorted(dom, cid))
        return k < len(dom) and int(dom[k]) == cid

    @property
    def members(self) -> dict[str, dict[int, None]]:
        """type -> ordered set of ids (a dict, in order of addition); built when
        asked for (a copy: changing it changes nothing here)."""
        if self._members is None:
            out = {}
            for tname in self._parts:
                ids = self._chunks(tname)
                if len(ids):
                    _, first = np.unique(ids, return_index=True)
                    ids = ids[np.sort(first)]
                out[tname] = dict.fromkeys(ids.tolist())
            self._members = out
        return self._members

    def value_columns(self) -> dict[str, np.ndarray]:
        """Columns of the ``consts`` table: id, name, sval, num, inum (NaN/None
        where a constant is not a number)."""
        n = len(self.names)
        names = np.array(self.names, dtype=object)
        # only names that start with '"' or with a character a number starts with
        # need per-name work (values and numbers); the rest are their own values
        first = _first_chars(self.names)
        special = np.flatnonzero((first == ord('"')) | (first == ord("+")) | (first == ord("-"))
                                 | (first == ord(".")) | _is_digit(first))
        svals = names.copy()
        num = np.full(n, np.nan)
        inum = np.zeros(n, dtype=np.int64)
        has_inum = np.zeros(n, dtype=bool)
        for i in special.tolist():
            s = svals[i] = constant_value(self.names[i])
            if s and (s[0].isdigit() or s[0] in "+-."):
                f = constant_number(s)
                if f is not None:
                    num[i] = f
                    iv = constant_integer(s)
                    if iv is not None:
                        inum[i] = iv
                        has_inum[i] = True
        return {
            "id": np.arange(n, dtype=np.int32),
            "name": names,
            "sval": svals,
            "num": num,
            "inum": inum,
            "has_inum": has_inum,
        }


def _first_chars(names: list[str], chunk: int = 1 << 20) -> np.ndarray:
    """The code point of each name's first character (-1 for an empty name),
    without a Python step per name: the names joined and read as UTF-32."""
    n = len(names)
    out = np.full(n, -1, dtype=np.int64)
    for lo in range(0, n, chunk):
        part = names[lo:lo + chunk]
        lens = np.fromiter(map(len, part), dtype=np.int64, count=len(part))
        if not lens.any():
            continue
        buf = np.frombuffer("".join(part).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        starts = np.cumsum(lens) - lens
        nz = lens > 0
        out[lo:lo + len(part)][nz] = buf[starts[nz]]
    return out


def _is_digit(first: np.ndarray) -> np.ndarray:
    """``str.isdigit`` of the first characters (code points; -1: none)."""
    out = (first >= 48) & (first <= 57)
    wide = np.flatnonzero(first >= 128)
    if len(wide):
        codes = np.unique(first[wide])
        digit = np.array([chr(int(c)).isdigit() for c in codes.tolist()], dtype=bool)
        out[wide] = digit[np.searchsorted(codes, first[wide])]
    return out
