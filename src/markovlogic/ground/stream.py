"""One template's ground rows, streamed from DuckDB into compact arrays.

A template's grounding query can return far more rows than the clauses they
become (social N=1M: 100 M groundings of a formula over evidence alone, all
constant). Fetching them whole costs several copies of every row; here they
arrive in chunks of about a million rows (DuckDB runs the query as a stream
of Arrow batches, read by ``nanoarrow``, and holds one batch at a time), and
each chunk is reduced at once:

* per literal, the rows where the literal is still unknown give int64 atom
  keys (:meth:`AtomRegistry.keys`, mixed radix over the constants' positions:
  int32 where the predicate's key space fits);
* a row with no unknown literal is a constant (false by evidence) and a row
  with a literal and its negation is a tautology: both are only counted (a
  soft one's weight is its template's weight, since every parameter of a
  template starts at the formula's weight);
* the other rows keep one key per literal (``-1``: the literal is dropped)
  and, for ``+`` variables, the constants they bind.

At the end of the template (:meth:`TemplateRows.finish`) the atoms are
registered literal by literal in key order and the parameters in binding
order, which is what registering every row at once did: atom and parameter
ids, hence the network, do not depend on the order in which DuckDB's threads
return the rows. The result is an ordinary :class:`~.assemble.Rows` of the
live rows, with the counts of the dropped ones for :func:`~.assemble.merge`.

The rows of one template can be produced in parts (for instance one range of
a join variable per worker) and the parts' :class:`TemplateRows` concatenated
before :meth:`finish` (:meth:`TemplateRows.extend`): the result is the same.

With a ``sink`` (a consumer that needs no clause kept: generative learning's
counts, ``learn/pll_stream.py``) the live rows of each chunk go to the sink at
once as literal codes over atoms registered before the template (an atom not
registered yet raises :class:`UnregisteredAtom`), with the ``+`` bindings, and
are not held; :meth:`finish` then registers the parameters as without a sink
and returns the dropped rows' counts only.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..arrays import distinct
from .assemble import PAD, Rows

CHUNK_ROWS = 1 << 17          # rows per chunk: one Arrow batch of DuckDB (64 vectors of 2,048 rows)

# Arrow types read straight from their data buffer
_FIXED = frozenset({"INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16", "UINT32", "UINT64", "FLOAT", "DOUBLE"})


def _column(ch, name: str) -> np.ndarray:
    """One Arrow column of a batch as a numpy array over its buffer (no copy
    for fixed-width numbers; booleans unpacked from their bitmap)."""
    import nanoarrow as na

    c = na.c_array(ch)
    if c.null_count:
        # grounding queries COALESCE every status column and join constant ids only: a NULL is a bug
        raise ValueError(f"column {name!r} of a grounding query has {c.null_count} NULL values")
    lo, n = c.offset, c.length
    if ch.schema.type == na.Type.BOOL:
        return np.unpackbits(np.asarray(ch.buffers[1]), count=lo + n, bitorder="little")[lo:].astype(bool)
    if ch.schema.type.name not in _FIXED:
        raise TypeError(f"column {name!r} of a grounding query has Arrow type {ch.schema.type.name}")
    return np.asarray(ch.buffers[1])[lo:lo + n]


def fetch_chunks(con, sql: str, rows: int | None = None) -> Iterator[dict[str, np.ndarray]]:
    """The result of ``sql`` as dictionaries of numpy columns, a chunk of about
    ``rows`` rows (default ``CHUNK_ROWS``) at a time.

    DuckDB streams the result as Arrow batches (its C stream interface, read
    by ``nanoarrow``: no pandas or pyarrow, which would cost ~70 MB of
    imports and a converted copy of every chunk); batches are gathered up to
    ``rows`` rows. A consumer that stops early closes the generator
    (``contextlib.closing``), which releases DuckDB's stream at once: DuckDB
    refuses other work on the connection while a result is unfinished."""
    import nanoarrow as na

    rows = CHUNK_ROWS if rows is None else int(rows)
    stream = na.ArrayStream(con.sql(sql))
    names = [stream.schema.field(i).name for i in range(stream.schema.n_fields)]
    pending: list[dict[str, np.ndarray]] = []
    held = 0

    def gathered() -> dict[str, np.ndarray]:
        if len(pending) == 1:
            return pending[0]
        return {c: np.concatenate([p[c] for p in pending]) for c in names}

    try:
        for batch in stream:
            n = na.c_array(batch).length
            if n == 0:
                continue
            cols = {c: _column(batch.child(i), c) for i, c in enumerate(names)}
            while n > rows - held:            # a batch larger than what is still wanted (tests' small chunks)
                take = rows - held
                pending.append({c: v[:take] for c, v in cols.items()})
                cols = {c: v[take:] for c, v in cols.items()}
                n -= take
                yield gathered()
                pending, held = [], 0
            if n:
                pending.append(cols)
                held += n
            if held == rows:
                yield gathered()
                pending, held = [], 0
        if pending:
            yield gathered()
    finally:
        stream.close()


def _unique_rows(b: np.ndarray) -> np.ndarray:
    """Distinct rows of an int32 matrix (any order)."""
    if b.shape[1] == 1:
        return distinct(b[:, 0]).reshape(-1, 1)
    if b.shape[1] == 2:
        packed = (b[:, 0].astype(np.int64) << 32) | b[:, 1].astype(np.int64)      # constant ids are >= 0
        u = distinct(packed)
        return np.stack([(u >> 32).astype(np.int32), (u & 0xFFFFFFFF).astype(np.int32)], axis=1)
    return np.unique(b, axis=0)


class UnregisteredAtom(LookupError):
    """A row of a template streamed to a sink reaches an atom not registered before it."""


class TemplateRows:
    """The compact rows of one template, accumulated chunk by chunk."""

    def __init__(self, registry, query, plus_cols: list[str], sink=None) -> None:
        self.registry = registry
        self.sink = sink
        self.q = query
        self.plus_cols = plus_cols
        lits = query.literals
        self.n_lits = len(lits)
        self._reg: list[list[np.ndarray]] = [[] for _ in lits]       # unique kept keys per chunk
        self._live: list[list[np.ndarray]] = [[] for _ in lits]      # keys of live rows (-1: dropped)
        self._bind_seen: list[np.ndarray] = []                        # distinct bindings per chunk
        self._bind_live: list[np.ndarray] = []                        # bindings of live rows
        self.rows = 0
        self.empty = 0
        self.tautologies = 0
        self.live = 0
        # pairs of literals of one predicate and opposite signs: a tautology when on one atom
        self._opposite = [(a, b) for a in range(len(lits)) for b in range(a + 1, len(lits))
                          if lits[a].pred == lits[b].pred and lits[a].positive != lits[b].positive]

    def nbytes(self) -> int:
        """Bytes held so far."""
        n = 0
        for parts in (*self._reg, *self._live, self._bind_seen, self._bind_live):
            n += sum(p.nbytes for p in parts)
        return n

    def add(self, cols: dict[str, np.ndarray]) -> None:
        n = len(next(iter(cols.values()))) if cols else 0
        if n == 0:
            return
        self.rows += n
        reg = self.registry
        full: list[np.ndarray] = []
        any_kept = np.zeros(n, dtype=bool)
        for li, out in enumerate(self.q.literals):
            args = (np.stack([np.asarray(cols[c], dtype=np.int32) for c in out.arg_cols], axis=1)
                    if out.arg_cols else np.zeros((n, 0), np.int32))
            if out.status_col is not None:
                kept = np.asarray(cols[out.status_col]) == -1
                keys = reg.keys(out.pred, args[kept])
                f = np.full(n, -1, dtype=keys.dtype)
                f[kept] = keys
                any_kept |= kept
            else:
                keys = reg.keys(out.pred, args)
                f = keys
                any_kept[:] = True
            del args
            if len(keys) and self.sink is None:
                self._reg[li].append(distinct(keys))
            full.append(f)
        live = any_kept
        self.empty += int(n - any_kept.sum())
        if self._opposite:
            taut = np.zeros(n, dtype=bool)
            for a, b in self._opposite:
                taut |= (full[a] == full[b]) & (full[a] >= 0)
            self.tautologies += int(taut.sum())
            live = live & ~taut
        if self.plus_cols:
            binding = np.stack([np.asarray(cols[c], dtype=np.int32) for c in self.plus_cols], axis=1)
            self._bind_seen.append(_unique_rows(binding))
        all_live = bool(live.all())
        if self.sink is not None:
            self._to_sink(full, live, all_live, binding if self.plus_cols else None)
            self.live += int(live.sum()) if not all_live else n
            return
        for li in range(self.n_lits):
            self._live[li].append(full[li] if all_live else full[li][live])
        if self.plus_cols:
            self._bind_live.append(binding if all_live else binding[live])
        self.live += int(live.sum()) if not all_live else n

    def _to_sink(self, full: list[np.ndarray], live: np.ndarray, all_live: bool, binding) -> None:
        """The live rows of a chunk as literal codes, to the sink."""
        n_live = len(live) if all_live else int(live.sum())
        if n_live == 0:
            return
        codes = np.full((n_live, self.n_lits), PAD, dtype=np.int32)
        for li, out in enumerate(self.q.literals):
            keys = full[li] if all_live else full[li][live]
            kept = keys >= 0
            ids = self.registry.find_keys(out.pred, keys[kept])
            if (ids < 0).any():
                raise UnregisteredAtom(out.pred)
            codes[kept, li] = 2 * ids + (0 if out.positive else 1)
            del keys, kept, ids
        self.sink(codes, None if binding is None else (binding if all_live else binding[live]))

    def extend(self, other: "TemplateRows") -> None:
        """Add the rows of another part of the same template."""
        for li in range(self.n_lits):
            self._reg[li].extend(other._reg[li])
            self._live[li].extend(other._live[li])
        self._bind_seen.extend(other._bind_seen)
        self._bind_live.extend(other._bind_live)
        self.rows += other.rows
        self.empty += other.empty
        self.tautologies += other.tautologies
        self.live += other.live

    def finish(self, params, index: int, template) -> Rows | None:
        """Register atoms and parameters (see the module docstring) and return
        the live rows as literal codes, with the dropped rows' counts."""
        reg = self.registry
        for li, out in enumerate(self.q.literals):
            parts = self._reg[li]
            if parts:
                keys = distinct(np.concatenate(parts)) if len(parts) > 1 else parts[0]
                self._reg[li] = []
                reg.register_keys(out.pred, keys)
                del keys
        param = None
        if not template.hard:
            if self.plus_cols:
                seen = np.concatenate(self._bind_seen) if self._bind_seen else np.zeros((0, len(self.plus_cols)), np.int32)
                self._bind_seen = []
                if len(seen):
                    params.ids(index, template, _unique_rows(seen))
                del seen
                live_b = (np.concatenate(self._bind_live) if self._bind_live
                          else np.zeros((0, len(self.plus_cols)), np.int32))
                self._bind_live = []
                param = params.ids(index, template, live_b) if len(live_b) else np.zeros(0, np.int32)
                del live_b
            else:
                param = np.full(self.live if self.sink is None else 0, params.ids(index, template, None)[0],
                                dtype=np.int32)
        coef = params.coefficient(template)
        if self.sink is not None:             # the live rows went to the sink: only the dropped ones' counts
            dropped = {"rows": self.rows - self.live, "tautologies": self.tautologies, "empty": self.empty,
                       "weight": 0.0 if template.hard else coef * params.initial_value(template)}
            return Rows(codes=np.zeros((0, self.n_lits), np.int32), template=index, param=param, coef=coef,
                        dropped=dropped)
        codes = np.full((self.live, self.n_lits), PAD, dtype=np.int32)
        for li, out in enumerate(self.q.literals):
            parts = self._live[li]
            self._live[li] = []
            if not parts:
                continue
            keys = np.concatenate(parts) if len(parts) > 1 else parts[0]
            del parts
            kept = keys >= 0
            if kept.all():
                codes[:, li] = 2 * reg.find_keys(out.pred, keys) + (0 if out.positive else 1)
            else:
                codes[kept, li] = 2 * reg.find_keys(out.pred, keys[kept]) + (0 if out.positive else 1)
            del keys, kept
        dropped = {"rows": self.rows - self.live, "tautologies": self.tautologies, "empty": self.empty,
                   "weight": 0.0 if template.hard else coef * params.initial_value(template)}
        if self.live == 0 and dropped["rows"] == 0:
            return None
        return Rows(codes=codes, template=index, param=param, coef=coef, dropped=dropped)
