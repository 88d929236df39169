"""Pseudo-likelihood terms counted while grounding, without the network.

``learn/pll.py`` builds, per training network, the sparse matrix Δn of the
events (one query atom flipped, or a block's true atom moved) against the
parameters: the change of each parameter's count of satisfied clauses. That
is a sum over ground clauses, so it can be accumulated as the grounder
produces the rows and each chunk dropped at once: learning memory then grows
with the events and parameters, not with the ground clauses (UW-CSE fold 1:
12.4 M ground rows, 6.06 M merged clauses, 52,441 events, 94 weights; peak
2.1 GB -> 0.36 GB, ``bench/workloads/pll_memory.py``).

:class:`PLLAccumulator` takes the place of the grounder's ``Merger``: the
streamed templates' rows reach it chunk by chunk (``Grounder.chunk_sink``,
``stream.TemplateRows`` with a sink: about 10^5-10^6 rows at a time), the
others (prefetched small templates, existential ones) as each template's
``Rows`` (``add``). A template with one parameter sums its counts in a dense
column over the events until its end; ``+`` templates keep theirs per
distinct binding until the template's parameters are registered (in binding
order, as without a sink, so parameter ids and the learned file's order are
the network path's).
The events are fixed before the first template: the query atoms are the
first atoms the grounder registers (their ids, hence the order of the events
and groups, are the network's, whose closure keeps every query atom and
renumbers atoms in order), and the exactly-one blocks come from the store.
Per row (a ground clause before merging) a compiled kernel counts its true
literals in the training world and, per event that flips one of its atoms,
whether the event changes its satisfaction; soft rows add
``dsat * coefficient`` to (event, parameter), hard rows whose satisfaction an
event breaks make the event infeasible. Summing rows instead of merged
clauses gives the same Δn: merged rows have the same literals (so the same
change), their coefficients add up, folded unit clauses differ from the
originals by a constant, and a soft row merged into a hard clause changes
only with it (the training world satisfies the hard clause, so an event that
changes it breaks it and is left out).

Networks whose clauses reach an unknown atom that is not a query atom (an
open predicate that is not learned) are not handled here: those atoms have
no training truth, and whether the old path refuses them depends on the
closure. :func:`stream_pll` returns None for them and the caller grounds the
network (``learn_pll``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import njit

from ..errors import LearningError, OptionError
from ..ground.assemble import PAD, Rows
from ..ground.network import WeightParam
from ..ground.stream import UnregisteredAtom
from .pll import PLLTerms

NON_QUERY = -2          # kernel status: a row reaches an atom that is not a query atom


class _NotStreamable(Exception):
    """A row reaches a non-query unknown atom: learn on the ground network instead."""


@njit(cache=True)
def _change(codes, r, a, world):
    """Change of row ``r``'s true-literal count when atom ``a`` flips."""
    ch = 0
    for k in range(codes.shape[1]):
        c = codes[r, k]
        if c == PAD or (c >> 1) != a:
            continue
        if world[a] == ((c & 1) == 0):
            ch -= 1
        else:
            ch += 1
    return ch


@njit(cache=True)
def _dsat(t, ch):
    return (1 if t + ch > 0 else 0) - (1 if t > 0 else 0)


@njit(cache=True)
def _row_events(codes, hard, param, coef, world, event_of_atom, block_of_atom, true_of_block, ev_start, alt_atom,
                fill, out_event, out_param, out_value, infeasible):
    """Per row, the events that change its satisfaction (module docstring).

    ``fill`` False: count the soft entries; True: write them (``out_*``).
    Returns (entries, status, row): status 0 ok, -1 a hard row the training
    world violates (``row``), NON_QUERY a row on an atom without an event."""
    n_atoms = len(world)
    m = 0
    for r in range(codes.shape[0]):
        t = 0
        for k in range(codes.shape[1]):
            c = codes[r, k]
            if c == PAD:
                continue
            a = c >> 1
            if a >= n_atoms:
                return m, NON_QUERY, r
            if world[a] == ((c & 1) == 0):
                t += 1
        if hard and t == 0:
            return m, -1, r
        for k in range(codes.shape[1]):
            c = codes[r, k]
            if c == PAD:
                continue
            a = c >> 1
            first = True
            for k2 in range(k):
                if codes[r, k2] != PAD and (codes[r, k2] >> 1) == a:
                    first = False
                    break
            if not first:
                continue
            ch = _change(codes, r, a, world)
            b = block_of_atom[a]
            if b < 0:
                e = event_of_atom[a]
                if e < 0:
                    return m, NON_QUERY, r
                lo, hi, pair = e, e + 1, -1
            else:
                tb = true_of_block[b]
                if a == tb:
                    lo, hi, pair = ev_start[b], ev_start[b + 1], 1
                else:
                    has_true = False
                    for k2 in range(codes.shape[1]):
                        if codes[r, k2] != PAD and (codes[r, k2] >> 1) == tb:
                            has_true = True
                            break
                    if has_true:
                        continue            # counted with the block's true atom
                    e = event_of_atom[a]
                    lo, hi, pair = e, e + 1, -1
            for e in range(lo, hi):
                d = _dsat(t, ch + (_change(codes, r, alt_atom[e], world) if pair > 0 else 0))
                if d == 0:
                    continue
                if hard:
                    if d < 0:
                        infeasible[e] = True
                    continue
                if fill:
                    out_event[m] = e
                    out_param[m] = param[r]
                    out_value[m] = d * coef[r]
                m += 1
    return m, 0, 0


@dataclass
class WorldTerms:
    """The PLL terms of one training world, before the worlds are stacked."""

    delta: sp.csr_matrix           # [n_events, n_params of this world], feasible events only
    group: np.ndarray              # int64[n_feasible_events]
    group_pred: list[str]          # predicate name of each group
    params: np.ndarray             # float64[n_params]: initial values
    param_info: tuple[WeightParam, ...]
    coefficients: np.ndarray       # float64[n_params]: a parameter's coefficient in its rows (1 if none)
    stats: dict


class PLLAccumulator:
    """Δn of one training world, template by template (module docstring): a
    ``Merger`` for ``Grounder._ground_all`` that keeps no clause."""

    def __init__(self, grounder) -> None:
        from .data import _EXAMPLES

        g = self.grounder = grounder
        self._examples = _EXAMPLES
        query = np.asarray(g.query_atoms, dtype=np.int64)
        block_start, block_atoms, _ = g.blocks()
        n = g.registry.n_atoms
        truth = g.truth(slice(None))
        unknown = query[truth[query] < 0]
        if len(unknown):
            raise OptionError("the training data leaves query atoms unknown ('?' atoms or --hidden): --method pll "
                              "needs every truth value; use --method dn or scg (observed-data likelihood) or "
                              "--em hard|soft")
        self.world = truth == 1
        is_query = np.zeros(n, dtype=bool)
        is_query[query] = True
        sizes = np.diff(block_start)
        block_of = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
        in_query = np.zeros(len(sizes), dtype=bool)
        in_query[block_of] = is_query[block_atoms]
        used = np.flatnonzero(in_query & (sizes > 0))
        # the blocks' training truth: exactly one true atom (as learn/data.py checks)
        per_block = np.bincount(block_of, weights=self.world[block_atoms], minlength=len(sizes)).astype(np.int64)
        bad = used[per_block[used] != 1]
        if len(bad):
            b = int(bad[0])
            atoms = block_atoms[block_start[b]:block_start[b + 1]]
            names = ", ".join(self.atom_name(int(a)) for a in atoms[:self._examples])
            raise LearningError(
                f"the training world has {per_block[b]} true atom(s) in the mutually exclusive "
                f"block {{{names}{', ...' if len(atoms) > self._examples else ''}}} (exactly one must be true), "
                f"and {len(bad)} such block(s) in all")
        in_block = np.zeros(n, dtype=bool)
        in_block[block_atoms[in_query[block_of]]] = True
        singles = np.flatnonzero(is_query & ~in_block)
        # events: singles in atom order, then per used block its false atoms in block order
        self.block_of_atom = np.full(n, -1, dtype=np.int64)
        local = np.full(len(sizes), -1, dtype=np.int64)
        local[used] = np.arange(len(used))
        keep = in_query[block_of]
        self.block_of_atom[block_atoms[keep]] = local[block_of[keep]]
        is_true = self.world[block_atoms]
        self.true_of_block = np.full(len(used), -1, dtype=np.int64)
        sel = keep & is_true
        self.true_of_block[local[block_of[sel]]] = block_atoms[sel]
        alt = keep & ~is_true
        alt_atom = block_atoms[alt].astype(np.int64)
        alt_block = local[block_of[alt]]
        self.n_single = len(singles)
        self.alt_atom = np.concatenate([singles, alt_atom]).astype(np.int64)      # the atom each event makes flip
        self.ev_start = self.n_single + np.searchsorted(alt_block, np.arange(len(used) + 1))
        self.n_events = len(self.alt_atom)
        self.event_of_atom = np.full(n, -1, dtype=np.int64)
        self.event_of_atom[self.alt_atom] = np.arange(self.n_events)
        self.group = np.concatenate([np.arange(self.n_single, dtype=np.int64), self.n_single + alt_block])
        pred, _ = g.registry.arrays()
        first_atoms = block_atoms[block_start[used]] if len(used) else np.zeros(0, np.int64)
        self.group_pred_ids = np.concatenate([pred[singles], pred[first_atoms]]).astype(np.int64)
        self.infeasible = np.zeros(self.n_events, dtype=bool)
        self.blocks = int(len(used))
        self._parts: list[sp.csr_matrix] = []
        self._pending = 0
        self.delta: sp.csr_matrix | None = None
        self.coef: dict[int, float] = {}
        self.rows = 0
        self.bytes_before = g.bytes_used
        self.hard_false_templates: set[int] = set()
        self.hard_violated_by_evidence = 0
        self._pending_plus: dict[int, list] = {}
        self._columns: dict[int, np.ndarray] = {}      # parameter -> its Δn column, within a template

    def atom_name(self, a: int) -> str:
        pred, args = self.grounder.registry.arrays()
        names = self.grounder.store.constant_names()
        arg_text = ",".join(names[c] for c in args[a] if c >= 0)
        return f"{self.grounder.store.pred_names[pred[a]]}({arg_text})"

    # the grounder's Merger interface: a template's rows (those not streamed) or its dropped rows' counts
    def add(self, r: Rows) -> None:
        d = getattr(r, "dropped", None)
        hard = r.param is None
        if d and hard and d["empty"]:
            self.hard_false_templates.add(int(r.template))
            self.hard_violated_by_evidence += int(d["empty"])
        self.grounder.bytes_used = self.bytes_before       # rows are dropped here: the budget holds only the counts
        pending = self._pending_plus.pop(int(r.template), None)
        if pending:                     # chunks of a '+' template: its parameters are registered now
            g = self.grounder
            t = g.templates[int(r.template)]
            for binding, part in pending:
                ids = g.params.ids(int(r.template), t, binding)
                coo = part.tocoo()
                self._add_part(coo.data, coo.row, ids[coo.col])
        if len(r) == 0 or r.codes.shape[1] == 0:
            self._flush_columns()
            return
        codes = r.codes
        if hard:
            empty = (codes == PAD).all(axis=1)
            if empty.any():              # false by evidence once merged (ground_template's rows)
                self.hard_false_templates.add(int(r.template))
                self.hard_violated_by_evidence += int(empty.sum())
                codes = codes[~empty]
        param = None if hard else np.asarray(r.param, dtype=np.int32)
        coef = None if hard else np.broadcast_to(np.asarray(r.coef, dtype=np.float64), (len(codes),))
        self._rows(codes, param, coef)
        self._flush_columns()

    def chunk_sink(self, i: int, t):
        """The grounder's ``chunk_sink``: each streamed chunk of template ``i``'s live rows."""
        g = self.grounder
        if t.hard:
            return lambda codes, binding: self._rows(codes, None, None)
        coef = g.params.coefficient(t)
        if not t.plus_vars:
            p = int(g.params.ids(i, t, None)[0])
            return lambda codes, binding: self._rows(codes, np.full(len(codes), p, np.int32),
                                                     np.full(len(codes), coef))

        def plus(codes, binding):
            # parameters are registered at the end of the template (in binding order, stream.py):
            # until then the chunk's counts are kept per distinct binding
            uniq, local = np.unique(binding, axis=0, return_inverse=True)
            ev, pa, va = self._entries(codes, local.reshape(-1).astype(np.int32), np.full(len(codes), coef))
            if len(ev):
                part = sp.csr_matrix((va, (ev, pa)), shape=(self.n_events, len(uniq)))
                part.sum_duplicates()
                self._pending_plus.setdefault(i, []).append((uniq, part))
        return plus

    def _rows(self, codes: np.ndarray, param, coef) -> None:
        ev, pa, va = self._entries(codes, param, coef)
        if not len(ev):
            return
        p = int(pa[0])
        if (pa == p).all():     # one parameter (a template without '+'): a dense column over the events
            column = self._columns.get(p)
            if column is None:
                column = self._columns[p] = np.zeros(self.n_events)
            column += np.bincount(ev, weights=va, minlength=self.n_events)
        else:
            self._add_part(va, ev, pa)

    def _flush_columns(self) -> None:
        """The dense columns of the template just ground, as sparse entries."""
        for p, column in self._columns.items():
            nz = np.flatnonzero(column)
            if len(nz):
                self._add_part(column[nz], nz, np.full(len(nz), p, np.int32))
        self._columns = {}

    def _entries(self, codes: np.ndarray, param, coef):
        """(event, parameter, value) of the rows' soft entries; marks the events hard rows forbid."""
        hard = param is None
        n = len(codes)
        self.rows += n
        if hard:
            param, coef = np.zeros(n, np.int32), np.zeros(n)
        else:
            param, coef = np.ascontiguousarray(param, dtype=np.int32), np.ascontiguousarray(coef, dtype=np.float64)
            if len(param):
                last = np.unique(param[::-1], return_index=True)
                for p, k in zip(last[0].tolist(), (n - 1 - last[1]).tolist()):
                    self.coef[p] = float(coef[k])
        codes = np.ascontiguousarray(codes, dtype=np.int32)
        args = (codes, hard, param, coef, self.world, self.event_of_atom, self.block_of_atom, self.true_of_block,
                self.ev_start, self.alt_atom)
        m, status, row = _row_events(*args, False, np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0),
                                     self.infeasible)
        self._check(status, row, codes)
        ev = np.empty(m, np.int64)
        pa = np.empty(m, np.int32)
        va = np.empty(m, np.float64)
        if m and not hard:
            _row_events(*args, True, ev, pa, va, self.infeasible)
        return ev, pa, va

    def _add_part(self, values, events, params) -> None:
        n_params = max(len(self.grounder.params.values), int(params.max()) + 1)
        part = sp.csr_matrix((values, (events, params)), shape=(self.n_events, n_params))
        part.sum_duplicates()
        self._parts.append(part)
        self._pending += part.nnz
        if self._pending > 4 * max(1 << 16, 0 if self.delta is None else self.delta.nnz):
            self._collapse()

    def _check(self, status: int, row: int, codes: np.ndarray) -> None:
        if status == NON_QUERY:
            raise _NotStreamable()
        if status == -1:
            lits = " v ".join(("" if (c & 1) == 0 else "!") + self.atom_name(int(c >> 1))
                              for c in codes[row].tolist() if c != PAD)
            raise LearningError(
                f"the training world violates a ground hard clause, e.g. {lits}: "
                "its probability is zero under the model; make the formula soft (give it a weight) "
                "or correct the data")

    def _collapse(self) -> None:
        n_params = max([p.shape[1] for p in self._parts] + [0 if self.delta is None else self.delta.shape[1]])
        total = sp.csr_matrix((self.n_events, n_params))
        if self.delta is not None:
            total = total + _widen(self.delta, n_params)
        for p in self._parts:
            total = total + _widen(p, n_params)
        total.sum_duplicates()
        self.delta = total.tocsr()
        self._parts = []
        self._pending = 0

    def finish(self) -> WorldTerms:
        self._flush_columns()
        self._collapse()
        g = self.grounder
        values, info = g.params.arrays()
        delta = _widen(self.delta, len(values))
        delta.eliminate_zeros()
        feasible = ~self.infeasible
        coefficients = np.ones(len(values))
        for p, c in self.coef.items():
            coefficients[p] = c
        preds = [g.store.pred_names[p] for p in self.group_pred_ids.tolist()]
        return WorldTerms(delta=delta[feasible].tocsr(), group=self.group[feasible], group_pred=preds,
                          params=values, param_info=info, coefficients=coefficients,
                          stats={"query_atoms": int(len(g.query_atoms)), "ground_rows": int(self.rows),
                                 "blocks": self.blocks})


def _widen(m: sp.csr_matrix, n_params: int) -> sp.csr_matrix:
    if m.shape[1] == n_params:
        return m
    return sp.csr_matrix((m.data, m.indices, m.indptr), shape=(m.shape[0], n_params))


def stream_world(mln, db, queries) -> WorldTerms | None:
    """The PLL terms of one training database (None: learn on its network)."""
    from ..ground.grounder import Grounder
    from ..parallel.grounding import duckdb_threads, set_threads

    g = Grounder(mln, [db], queries, allow_unweighted=True, truth_closed_world=True)
    try:
        set_threads(g.store.con, duckdb_threads())
        acc = PLLAccumulator(g)
        g.chunk_sink = acc.chunk_sink
        try:
            g._ground_all(None, acc)
        except (_NotStreamable, UnregisteredAtom):
            return None
        if acc.hard_false_templates:
            g._warn_hard_false(sorted(acc.hard_false_templates), acc.hard_violated_by_evidence)
        return acc.finish()
    finally:
        g.close()


@dataclass
class StreamedTraining:
    """What ``learn_pll_terms`` needs, from every training world."""

    terms: PLLTerms
    params: np.ndarray
    param_info: tuple[WeightParam, ...]
    coefficients: np.ndarray
    stats: dict


def _key(p: WeightParam) -> tuple:
    return (p.name, p.formula_index, p.clause_index)


def stack_worlds(worlds: list[WorldTerms]) -> StreamedTraining:
    """The worlds' terms over one parameter table (the union in order of first
    appearance, as ``learn/data.align_params``), stacked as ``pll_terms`` does."""
    index: dict[tuple, int] = {}
    info: list[WeightParam] = []
    values: list[float] = []
    coef: list[float] = []
    remaps = []
    for w in worlds:
        remap = np.empty(len(w.param_info), dtype=np.int64)
        for j, (p, v) in enumerate(zip(w.param_info, w.params.tolist())):
            k = _key(p)
            if k not in index:
                index[k] = len(info)
                info.append(p)
                values.append(v)
                coef.append(1.0)
            remap[j] = index[k]
        remaps.append(remap)
    coefficients = np.array(coef)
    for w, remap in zip(reversed(worlds), reversed(remaps)):          # the first world's wins, as param_coefficients
        used = w.coefficients != 1.0
        coefficients[remap[used]] = w.coefficients[used]
    n_params = len(info)
    deltas, groups, preds = [], [], []
    offset = 0
    for w, remap in zip(worlds, remaps):
        d = w.delta.tocoo()
        deltas.append(sp.csr_matrix((d.data, (d.row, remap[d.col])), shape=(d.shape[0], n_params)))
        groups.append(w.group + offset)
        preds.extend(w.group_pred)
        offset += len(w.group_pred)
    if preds:
        _, pred_index, per_pred = np.unique(np.array(preds, dtype=object).astype(str), return_inverse=True,
                                            return_counts=True)
        weight = 1.0 / per_pred[pred_index]
    else:
        weight = np.zeros(0)
    terms = PLLTerms(
        delta=sp.vstack(deltas).tocsr() if deltas else sp.csr_matrix((0, n_params)),
        group=np.concatenate(groups) if groups else np.zeros(0, np.int64),
        group_weight=np.asarray(weight, dtype=np.float64),
        group_pred=list(preds),
    )
    stats = {k: sum(w.stats[k] for w in worlds) for k in ("query_atoms", "ground_rows", "blocks")}
    stats["databases"] = len(worlds)
    return StreamedTraining(terms=terms, params=np.array(values, dtype=np.float64), param_info=tuple(info),
                            coefficients=coefficients, stats=stats)


def stream_pll(mln, dbs, predicates: list[str]) -> StreamedTraining | None:
    """The PLL terms of the training worlds ``dbs`` (one ``Database`` each),
    grounded one template at a time; None when a world needs its network
    (module docstring)."""
    from ..lang.ast import Query
    from ..parallel.tasks import each

    queries = [Query(p) for p in predicates]
    worlds = each(lambda db: stream_world(mln, db, queries), list(dbs))
    if any(w is None for w in worlds):
        return None
    return stack_worlds(worlds)
