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
    """Names <-> ids, and type membership, built in a fixed order."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.ids: dict[str, int] = {}
        self.members: dict[str, dict[int, None]] = {}   # type -> ordered set of ids

    def intern(self, name: str) -> int:
        cid = self.ids.get(name)
        if cid is None:
            cid = len(self.names)
            self.ids[name] = cid
            self.names.append(name)
        return cid

    def add_type(self, type_name: str) -> None:
        self.members.setdefault(type_name, {})

    def add(self, type_name: str, name: str) -> int:
        cid = self.intern(name)
        self.members.setdefault(type_name, {})[cid] = None
        return cid

    def add_many(self, type_name: str, names) -> None:
        """Add every name of an iterable to a type (interning new ones)."""
        table = self.members.setdefault(type_name, {})
        ids = self.ids
        if isinstance(names, list) and len(names) > 64 and len(set(names)) == len(names):
            # distinct names (a column's constants in order of appearance): in bulk
            new = [n for n in names if n not in ids]
            start = len(self.names)
            ids.update(zip(new, range(start, start + len(new))))
            self.names.extend(new)
            table.update(dict.fromkeys(map(ids.__getitem__, names)))
            return
        for name in names:
            cid = ids.get(name)
            if cid is None:
                cid = len(self.names)
                ids[name] = cid
                self.names.append(name)
            table[cid] = None

    def ids_of(self, names: list[str]) -> np.ndarray:
        """int32 ids of interned names."""
        return np.fromiter(map(self.ids.__getitem__, names), dtype=np.int32, count=len(names))

    def __len__(self) -> int:
        return len(self.names)

    def domain(self, type_name: str) -> np.ndarray:
        """Sorted int32 ids of a type's constants."""
        ids = np.fromiter(self.members.get(type_name, {}).keys(), dtype=np.int32)
        ids.sort()
        return ids

    def value_columns(self) -> dict[str, np.ndarray]:
        """Columns of the ``consts`` table: id, name, sval, num, inum (NaN/None
        where a constant is not a number)."""
        n = len(self.names)
        names = np.array(self.names, dtype=object)
        # only names that start with '"' or with a character a number starts with
        # need per-name work (values and numbers); the rest are their own values
        first = np.array([x[:1] for x in self.names], dtype=object) if n else np.zeros(0, object)
        special = np.flatnonzero((first == '"') | np.isin(first, ["+", "-", "."])
                                 | np.fromiter((f.isdigit() for f in first), dtype=bool, count=n))
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
