"""A pure-Python grounder that enumerates every constant tuple: the test oracle.

It shares nothing with ``markovlogic.ground`` except the clause templates
(``logic.compile_mln``) and the rules for reading a constant as a number
(``store.constants``). It is slow on purpose: every binding of every
template's variables is evaluated in Python.

Semantics (the documented semantics of the SQL grounder):

* domains: declared constants, constants in formula atoms (at their argument
  type), evidence constants (at their argument type), function arguments and
  values;
* closed world (Alchemy): a predicate with listed atoms is closed unless
  queried or ``-o``; ``-c`` and Tuffy's ``*`` close a predicate; query
  predicates are open. By default atoms of query predicates listed in the
  evidence are evidence; with ``query_truth`` they are training labels (every
  atom of a query predicate is unknown);
* exactly-one predicates: a true value makes the other values of its key false;
* a grounding is skipped when a term is undefined; it is satisfied when a
  comparison disjunct or a literal is true by evidence; false literals are
  dropped; existential groups become disjunctions over their bindings
  (distributed when a disjunct keeps several literals, the weight divided
  among the resulting clauses);
* ground clauses equal as sets of literals are merged (weights summed, hard
  if any is hard); tautologies and empty clauses are dropped;
* closure: the connected components (clauses and blocks) holding a query atom.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from markovlogic.lang.ast import Const, Func, Var
from markovlogic.logic.clauses import ClauseTemplate, Comparison, Literal
from markovlogic.store.constants import constant_integer, constant_number, constant_value

ALIASES = {"plus": "+", "minus": "-", "times": "*", "dividedBy": "/", "mod": "%"}


@dataclass
class Reference:
    atoms: set[str] = field(default_factory=set)
    query_atoms: set[str] = field(default_factory=set)
    clauses: dict[tuple, list] = field(default_factory=dict)   # key -> [weight, hard]
    blocks: set[frozenset] = field(default_factory=set)
    truth: dict[str, int] = field(default_factory=dict)


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _c_mod(a: int, b: int) -> int:
    return a - b * _c_div(a, b)


class ReferenceGrounder:
    def __init__(self, mln, dbs, queries=None, templates=None, *, closed=(), open_=(),
                 query_truth=False, truth_closed_world=False, allow_unweighted=False):
        from markovlogic.logic.cnf import compile_mln

        self.mln = mln
        self.templates: list[ClauseTemplate] = list(templates) if templates is not None else compile_mln(mln)
        if not allow_unweighted:
            self.templates = [t for t in self.templates if t.hard or t.weight is not None]
        self.queries = list(queries or [])
        self.query_truth = query_truth or truth_closed_world
        self.truth_closed_world = truth_closed_world
        atoms = [a for d in dbs for a in d.atoms]
        fvals = [v for d in dbs for v in d.function_values]
        # ---- domains
        dom: dict[str, set[str]] = {t: set(c) for t, c in mln.types.items()}
        for p in mln.predicates.values():
            for t in p.arg_types:
                dom.setdefault(t, set())
        for f in mln.functions.values():
            dom.setdefault(f.return_type, set())
            for t in f.arg_types:
                dom.setdefault(t, set())
        self.all_constants: set[str] = set()
        for t in self.templates:
            for d in self._leaves(t):
                if isinstance(d, Literal):
                    decl = mln.predicates[d.atom.predicate]
                    for a, ty in zip(d.atom.args, decl.arg_types):
                        self._term_consts(a, ty, dom)
                else:
                    self._term_consts(d.left, None, dom)
                    self._term_consts(d.right, None, dom)
        for ev in atoms:
            decl = mln.predicates[ev.atom.predicate]
            for c, ty in zip(ev.atom.args, decl.arg_types):
                dom[ty].add(c)
        self.fvalues: dict[tuple, str] = {}
        for fv in fvals:
            decl = mln.functions[fv.function]
            for c, ty in zip(fv.args, decl.arg_types):
                dom[ty].add(c)
            dom[decl.return_type].add(fv.value)
            self.fvalues[(fv.function, tuple(fv.args))] = fv.value
        self.dom = {t: sorted(v) for t, v in dom.items()}
        for v in dom.values():
            self.all_constants |= v
        # ---- world
        qpreds = {q.predicate for q in self.queries}
        listed = {ev.atom.predicate for ev in atoms}
        self.closed = set()
        for name, decl in mln.predicates.items():
            if name in qpreds:
                continue
            if decl.closed or name in closed:
                self.closed.add(name)
            elif name in listed and name not in open_:
                self.closed.add(name)
        self.qpreds = qpreds
        self.listed: dict[tuple, bool | None] = {}
        self.labels: dict[tuple, bool | None] = {}
        for ev in atoms:
            key = (ev.atom.predicate, tuple(ev.atom.args))
            if self.query_truth and ev.atom.predicate in qpreds:
                self.labels[key] = ev.truth
            else:
                self.listed[key] = ev.truth
        # exactly-one completion
        for name, decl in mln.predicates.items():
            if not decl.has_block:
                continue
            keyc = [j for j, m in enumerate(decl.mutex) if not m]
            true_keys = {tuple(a[j] for j in keyc) for (p, a), v in self.listed.items() if p == name and v is True}
            for args in self.groundings(decl.arg_types):
                k = tuple(args[j] for j in keyc)
                if k in true_keys and self.listed.get((name, args)) is not True:
                    self.listed[(name, args)] = False

    # ------------------------------------------------------------ helpers
    @staticmethod
    def _leaves(t: ClauseTemplate):
        yield from t.literals
        yield from t.comparisons
        for g in t.exists:
            yield from g.conjuncts

    def _term_consts(self, term, ty, dom) -> None:
        if isinstance(term, Const):
            if ty is not None:
                dom.setdefault(ty, set()).add(term.name)
            self.all_constants.add(term.name)
        elif isinstance(term, Func):
            decl = self.mln.functions.get(term.name)
            for j, a in enumerate(term.args):
                self._term_consts(a, decl.arg_types[j] if decl is not None else None, dom)

    def groundings(self, types):
        return itertools.product(*[self.dom.get(t, []) for t in types])

    def truth_of(self, pred: str, args: tuple) -> bool | None:
        if self.query_truth and pred in self.qpreds:
            return None
        key = (pred, args)
        if key in self.listed:
            return self.listed[key]
        return False if pred in self.closed else None

    # ------------------------------------------------------------ terms
    def value(self, term, b):
        """A term's value: a constant name (str) or an int, or None (undefined)."""
        if isinstance(term, Var):
            return b[term.name]
        if isinstance(term, Const):
            return term.name
        name = ALIASES.get(term.name, term.name)
        if name in self.mln.functions:
            args = []
            for a in term.args:
                v = self.const_of(self.value(a, b))
                if v is None:
                    return None
                args.append(v)
            return self.fvalues.get((name, tuple(args)))
        vals = [self.value(a, b) for a in term.args]
        if any(v is None for v in vals):
            return None
        if name in ("+", "-", "*", "/", "%", "succ"):
            ints = [self.as_int(v) for v in vals]
            if any(i is None for i in ints):
                return None
            if name == "succ":
                return ints[0] + 1
            a, c = ints
            if name in ("/", "%") and c == 0:
                return None
            return {"+": a + c, "-": a - c, "*": a * c, "/": _c_div(a, c) if c else 0, "%": _c_mod(a, c) if c else 0}[name]
        if name == "concat":
            return "'" + self.as_str(vals[0]) + self.as_str(vals[1])
        raise ValueError(f"unsupported function {name}")

    @staticmethod
    def as_str(v) -> str:
        if isinstance(v, int):
            return str(v)
        if v.startswith("'"):
            return v[1:]
        return constant_value(v)

    def as_int(self, v):
        if isinstance(v, int):
            return v
        if v.startswith("'"):
            return None
        return constant_integer(constant_value(v))

    def as_num(self, v):
        if isinstance(v, int):
            return float(v)
        if v.startswith("'"):
            return None
        return constant_number(constant_value(v))

    def const_of(self, v, ty=None):
        """The constant a value names (None if none, or not of type ``ty``)."""
        if v is None:
            return None
        if isinstance(v, str) and not v.startswith("'"):
            name = v
        elif isinstance(v, int):
            cands = [c for c in self.all_constants if constant_integer(constant_value(c)) == v]
            if not cands:
                return None
            name = cands[0]
        else:
            s = v[1:]
            cands = [c for c in self.all_constants if constant_value(c) == s]
            if not cands:
                return None
            name = cands[0]
        if ty is not None and name not in self.dom.get(ty, ()):
            return None
        return name

    def compare(self, op, lv, rv) -> bool:
        if op == "=":
            li, ri = self.as_int(lv), self.as_int(rv)
            if li is not None and ri is not None:
                return li == ri
            return self.as_str(lv) == self.as_str(rv)
        if op == "substr":
            return self.as_str(lv) in self.as_str(rv)
        ln, rn = self.as_num(lv), self.as_num(rv)
        if ln is not None and rn is not None:
            a, c = ln, rn
        else:
            a, c = self.as_str(lv), self.as_str(rv)
        return {"<": a < c, ">": a > c, "<=": a <= c, ">=": a >= c}[op]

    def atom_of(self, lit: Literal, b):
        decl = self.mln.predicates[lit.atom.predicate]
        args = []
        for a, ty in zip(lit.atom.args, decl.arg_types):
            c = self.const_of(self.value(a, b), ty)
            if c is None:
                return None
            args.append(c)
        return lit.atom.predicate, tuple(args)

    # ------------------------------------------------------------ grounding
    def ground(self, closure: bool = True, blocks_as_clauses: bool = False, fold_units: bool = True) -> Reference:
        rows = []   # (literal tuple, weight or None)
        for t in self.templates:
            rows.extend(self._ground_template(t))
        out = Reference()
        blocks = self._blocks()
        if blocks_as_clauses:
            for blk in blocks:
                rows.append((tuple((a, True) for a in blk), None))
                for a, c in itertools.combinations(sorted(blk), 2):
                    rows.append((((a, False), (c, False)), None))
            blocks = []
        merged: dict[tuple, list] = {}
        for lits, w in rows:
            s = set(lits)
            if any((a, not p) in s for a, p in s):
                continue
            if not s:
                continue
            key = tuple(sorted(s))
            entry = merged.setdefault(key, [0.0, False])
            if w is None:
                entry[1] = True
            else:
                entry[0] += w
        for e in merged.values():
            if e[1]:
                e[0] = 0.0
        if fold_units:   # w1 [P] + w2 [!P] = (w1 - w2) [P] + constant
            for key in [k for k in merged if len(k) == 1 and not k[0][1]]:
                comp = ((key[0][0], True),)
                if comp in merged and not merged[key][1] and not merged[comp][1]:
                    merged[comp][0] -= merged.pop(key)[0]
        queries = self._query_atoms()
        atoms = set(queries)
        for key in merged:
            atoms |= {a for a, _ in key}
        for blk in blocks:
            atoms |= set(blk)
        if closure:
            parent = {a: a for a in atoms}

            def find(a):
                while parent[a] != a:
                    parent[a] = parent[parent[a]]
                    a = parent[a]
                return a

            def union(group):
                group = list(group)
                for x in group[1:]:
                    ra, rb = find(group[0]), find(x)
                    if ra != rb:
                        parent[ra] = rb

            for key in merged:
                union([a for a, _ in key])
            for blk in blocks:
                union(list(blk))
            good = {find(q) for q in queries}
            atoms = {a for a in atoms if find(a) in good}
            merged = {k: v for k, v in merged.items() if k[0][0] in atoms}
            blocks = [b for b in blocks if next(iter(b)) in atoms]
        out.atoms = atoms
        out.query_atoms = set(queries) & atoms
        out.clauses = merged
        out.blocks = {frozenset(b) for b in blocks}
        for a in atoms:
            out.truth[a] = self._truth_label(a)
        return out

    def _truth_label(self, name: str) -> int:
        pred = name[: name.index("(")] if "(" in name else name
        for (p, args), v in self.labels.items():
            if p == pred and f"{p}({','.join(args)})" == name:
                return -1 if v is None else int(v)
        if self.truth_closed_world and pred in self.qpreds:
            return 0
        return -1

    @staticmethod
    def name(pred: str, args: tuple) -> str:
        return f"{pred}({','.join(args)})"

    def _ground_template(self, t: ClauseTemplate):
        group_vars = {v for g in t.exists for v in g.variables}
        types = t.variable_types
        cvars = [v for v, _ in t.var_types if v not in group_vars]
        if t.hard:
            weight = None
        elif t.formula_index >= 0:
            w = self.mln.formulas[t.formula_index].weight
            weight = (0.0 if w is None else w) * t.weight_scale
        else:
            weight = 0.0 if t.weight is None else t.weight
        for combo in itertools.product(*[self.dom.get(types[v], []) for v in cvars]):
            b = dict(zip(cvars, combo))
            res = self._eval_clause(t, b)
            if res is None:
                continue
            singles, multis = res
            clauses = [list(singles)]
            for m in multis:
                clauses = [c + [lit] for c in clauses for lit in m]
            k = len(clauses)
            for c in clauses:
                yield tuple(c), None if weight is None else weight / k

    def _eval_clause(self, t: ClauseTemplate, b):
        """(single literals, multi-literal disjuncts) or None (skipped or satisfied)."""
        for c in t.comparisons:
            lv, rv = self.value(c.left, b), self.value(c.right, b)
            if lv is None or rv is None:
                return None
        for lit in t.literals:
            if self.atom_of(lit, b) is None:
                return None
        for c in t.comparisons:
            if self.compare(c.op, self.value(c.left, b), self.value(c.right, b)) == c.positive:
                return None
        singles = []
        for lit in t.literals:
            pred, args = self.atom_of(lit, b)
            v = self.truth_of(pred, args)
            if v is None:
                singles.append((self.name(pred, args), lit.positive))
            elif v == lit.positive:
                return None
        multis = []
        for g in t.exists:
            for combo in itertools.product(*[self.dom.get(t.variable_types[v], []) for v in g.variables]):
                gb = dict(b)
                gb.update(zip(g.variables, combo))
                keep = []
                ok = True
                for d in g.conjuncts:
                    if isinstance(d, Comparison):
                        lv, rv = self.value(d.left, gb), self.value(d.right, gb)
                        if lv is None or rv is None or self.compare(d.op, lv, rv) != d.positive:
                            ok = False
                            break
                    else:
                        atom = self.atom_of(d, gb)
                        if atom is None:
                            ok = False
                            break
                        v = self.truth_of(*atom)
                        if v is None:
                            keep.append((self.name(*atom), d.positive))
                        elif v != d.positive:
                            ok = False
                            break
                if not ok:
                    continue
                if not keep:
                    return None     # a disjunct true by evidence
                if len(keep) == 1:
                    singles.append(keep[0])
                else:
                    multis.append(keep)
        return singles, multis

    def _blocks(self) -> list[frozenset]:
        out = []
        for name, decl in self.mln.predicates.items():
            if not decl.has_block:
                continue
            keyc = [j for j, m in enumerate(decl.mutex) if not m]
            groups: dict[tuple, list] = {}
            for args in self.groundings(decl.arg_types):
                if self.truth_of(name, args) is None:
                    groups.setdefault(tuple(args[j] for j in keyc), []).append(self.name(name, args))
            out.extend(frozenset(v) for v in groups.values())
        return out

    def _query_atoms(self) -> set[str]:
        out = set()
        items = [(q.predicate, q.args) for q in self.queries] or [(p, None) for p in self.mln.predicates]
        for pred, pattern in items:
            decl = self.mln.predicates[pred]
            for args in self.groundings(decl.arg_types):
                if self.truth_of(pred, args) is not None:
                    continue
                if pattern is not None:
                    seen = {}
                    ok = True
                    for a, term in zip(args, pattern):
                        if isinstance(term, Const) and term.name != a:
                            ok = False
                        elif isinstance(term, Var):
                            if seen.setdefault(term.name, a) != a:
                                ok = False
                    if not ok:
                        continue
                out.add(self.name(pred, args))
        return out


def network_as_reference(net) -> Reference:
    """The same canonical form, read off a ``GroundNetwork``."""
    out = Reference()
    names = net.atom_names()
    out.atoms = set(names)
    out.query_atoms = {names[i] for i in range(net.n_atoms) if net.is_query[i]}
    for c in range(net.n_clauses):
        key = tuple(sorted({(names[a], bool(p)) for a, p in net.clause_literals(c)}))
        assert key not in out.clauses, f"clause {key} appears twice"
        out.clauses[key] = [0.0 if net.is_hard[c] else float(net.weight[c]), bool(net.is_hard[c])]
    for b in range(net.n_blocks):
        out.blocks.add(frozenset(names[a] for a in net.block_atoms[net.block_start[b]:net.block_start[b + 1]]))
    if net.truth is not None:
        out.truth = {names[i]: int(net.truth[i]) for i in range(net.n_atoms)}
    return out


def assert_same(got: Reference, want: Reference, tol: float = 1e-6) -> None:
    assert got.atoms == want.atoms, (
        f"atoms differ: only SQL {sorted(got.atoms - want.atoms)[:10]}, only reference {sorted(want.atoms - got.atoms)[:10]}"
    )
    assert got.query_atoms == want.query_atoms
    gk, wk = set(got.clauses), set(want.clauses)
    assert gk == wk, f"clauses differ: only SQL {sorted(gk - wk)[:5]}, only reference {sorted(wk - gk)[:5]}"
    for k in gk:
        g, w = got.clauses[k], want.clauses[k]
        assert g[1] == w[1], f"hard flag differs for {k}"
        assert abs(g[0] - w[0]) <= tol * max(1.0, abs(w[0])), f"weight differs for {k}: {g[0]} vs {w[0]}"
    assert got.blocks == want.blocks
