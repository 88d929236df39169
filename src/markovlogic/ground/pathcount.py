"""Counting the evidence-only groundings of a two-step path template without SQL.

A template whose literals are all over closed predicates with every atom
known contributes only a constant: the number of its groundings that the
evidence falsifies (``Grounder.stream_template`` counts them and holds no
row). For the commonest such template, a rule over an observed relation like

    Friends(x, y) ^ Friends(y, z) => Friends(x, z)

(clause ``!A(x,y) v !B(y,z) [v C(x,z)]``), that number is the number of
2-paths ``x -A-> y -B-> z`` not closed by a ``C`` edge ``x -> z``. DuckDB
counts it by materialising the join (every 2-path: 10^8 rows at social N=1M,
3x10^8 at 3M; 13 s and 35 s here, under the 512 MB cap for counts). The
kernel below walks the adjacency lists (CSR: degrees by a GROUP BY, rows streamed into place) with a
mark array: for each ``x`` it marks the ``z`` with ``C(x, z)`` true, then
counts the ``z`` reached through ``A`` and ``B`` that are not marked. One
pass over the 2-paths, no hash table, memory O(atoms of A, B, C).

:func:`path_shape` recognises the shape from the template (anything else
keeps the SQL count): exactly two negative literals of arity 2 sharing one
variable, each with two distinct variables, plus at most one positive
literal over exactly the two other variables; no constants, functions,
comparisons, existential groups or ``+`` variables; every predicate closed,
with no unknown or false row (every listed atom true) and no training
labels. The count then equals the SQL's
(rows are joined as a multiset, as the SQL does; a ``C`` atom listed twice
marks once, as the left join's filter drops both copies).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..jit import kernel
from ..lang.ast import Var
from ..parallel.options import machine_cores

THREADS = 2                 # threads of the walk (at most the cores this process may use) ...
PARALLEL_EDGES = 10_000_000  # ... when the first relation's edges times ten (about the paths at degree 10) reach this


@dataclass(frozen=True)
class PathShape:
    """``(predicate, flip)`` per edge relation: ``flip`` reads the atom's
    arguments as (second, first); ``closing`` is None without a positive literal."""

    first: tuple[str, bool]        # x -> y
    second: tuple[str, bool]       # y -> z
    closing: tuple[str, bool] | None   # x -> z


def _vars(lit) -> tuple[str, str] | None:
    args = lit.atom.args
    if len(args) != 2 or not all(isinstance(a, Var) for a in args):
        return None
    a, b = args[0].name, args[1].name
    return None if a == b else (a, b)


def path_shape(t, store) -> PathShape | None:
    """The template's path shape, or None (see the module docstring)."""
    if t.comparisons or t.exists or t.plus_vars:
        return None
    neg = [lit for lit in t.literals if not lit.positive]
    pos = [lit for lit in t.literals if lit.positive]
    if len(neg) != 2 or len(pos) > 1:
        return None
    for lit in t.literals:
        info = store.preds.get(lit.atom.predicate)
        if info is None or not info.closed or info.labels or info.n_unknown or info.n_false or info.arity != 2:
            return None
    va, vb = _vars(neg[0]), _vars(neg[1])
    if va is None or vb is None:
        return None
    shared = set(va) & set(vb)
    if len(shared) != 1:
        return None
    (y,) = shared
    x = va[0] if va[1] == y else va[1]
    z = vb[0] if vb[1] == y else vb[1]
    names = {v for v, _ in t.var_types}
    if names and names != {x, y, z}:
        return None
    first = (neg[0].atom.predicate, va[0] == y)          # read as (x, y)
    second = (neg[1].atom.predicate, vb[0] == z)         # read as (y, z)
    closing = None
    if pos:
        vc = _vars(pos[0])
        if vc is None or set(vc) != {x, z}:
            return None
        closing = (pos[0].atom.predicate, vc[0] == z)    # read as (x, z)
    return PathShape(first, second, closing)


@kernel(cache=True)
def _fill(fill, out, src, dst):
    """Place the edges ``src -> dst`` in their nodes' adjacency lists."""
    for i in range(len(src)):
        s = src[i]
        out[fill[s]] = dst[i]
        fill[s] += 1


@kernel(cache=True, nogil=True)
def _open_paths(lo, hi, n, a_start, a_dst, b_start, b_dst, c_start, c_dst):
    """Number of (x, y, z) with ``lo <= x < hi``, edges x -A-> y, y -B-> z
    (with multiplicity) and no edge x -C-> z."""
    mark = np.full(n, -1, np.int32)
    total = 0
    for x in range(lo, hi):
        for e in range(c_start[x], c_start[x + 1]):
            mark[c_dst[e]] = x
        for e in range(a_start[x], a_start[x + 1]):
            y = a_dst[e]
            for f in range(b_start[y], b_start[y + 1]):
                if mark[b_dst[f]] != x:
                    total += 1
    return total


def adjacency(store, rel: tuple[str, bool] | None, n: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR adjacency (``start`` int64[n + 1], ``dst`` int32) of a binary
    predicate's rows read as ``(a0, a1)``, or ``(a1, a0)`` when flipped: the
    degrees by a GROUP BY, then the rows streamed into place (no copy of the
    whole table is held besides the lists)."""
    from contextlib import closing

    from .stream import fetch_chunks

    start = np.zeros(n + 1, np.int64)
    if rel is None:
        return start, np.zeros(0, np.int32)
    name, flip = rel
    table = store.preds[name].table
    src, dst = ("a1", "a0") if flip else ("a0", "a1")
    deg = store.con.execute(f"SELECT {src} AS v, count(*) AS k FROM {table} GROUP BY {src}").fetchnumpy()
    start[np.asarray(deg["v"], dtype=np.int64) + 1] = np.asarray(deg["k"], dtype=np.int64)
    del deg
    np.cumsum(start, out=start)
    out = np.empty(int(start[-1]), np.int32)
    fill = start[:-1].copy()
    with closing(fetch_chunks(store.con, f"SELECT {src} AS s, {dst} AS d FROM {table}")) as chunks:
        for cols in chunks:
            _fill(fill, out, np.asarray(cols["s"], dtype=np.int32), np.asarray(cols["d"], dtype=np.int32))
    return start, out


def count_open_paths(store, shape: PathShape) -> int:
    """The number of groundings of a path-shaped template that the evidence
    falsifies (see the module docstring)."""
    n = len(store.constants)
    cache: dict = {}

    def get(rel):
        if rel not in cache:
            cache[rel] = adjacency(store, rel, n)
        return cache[rel]

    a, b, c = get(shape.first), get(shape.second), get(shape.closing)
    args = (n, a[0], a[1], b[0], b[1], c[0], c[1])
    threads = min(machine_cores(), THREADS) if len(a[1]) * 10 >= PARALLEL_EDGES else 1
    if threads <= 1:
        return int(_open_paths(0, n, *args))
    # the sources split into ranges of about equal out-edges of A, one per thread (the kernel releases the
    # GIL; each range has its own mark array): social N=3M's 3x10^8 paths in half the time on two cores
    cuts = np.searchsorted(a[0], np.linspace(0, a[0][-1], threads + 1)).astype(np.int64)
    cuts[0], cuts[-1] = 0, n
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as pool:
        parts = pool.map(lambda k: int(_open_paths(int(cuts[k]), int(cuts[k + 1]), *args)), range(threads))
        return sum(parts)
