"""Semantic checks: formulas against declarations (with type inference),
evidence against the model, queries against the model.

Type inference follows Alchemy: a variable's type is the type of the argument
positions it occupies (of predicates and of user functions); ``x = y`` between
variables requires one type; ``x = C`` and ``P(.., C, ..)`` make the constant a
member of that type ("constants from formulas join their argument's type", as
Alchemy does). Arguments of internal functions and of the comparisons
``< > <= >=`` carry no type.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..errors import EvidenceError, MLNSemanticError, QueryError
from .ast import (
    INTERNAL_FUNCTIONS,
    INTERNAL_PREDICATES,
    SIMILARITY_FUNCTIONS,
    And,
    Atom,
    Compare,
    Const,
    Exists,
    Forall,
    Formula,
    Func,
    FunctionDecl,
    Iff,
    Implies,
    Not,
    Or,
    Pos,
    PredicateDecl,
    Query,
    Term,
    Var,
)

# A weight beyond this is refused: sums of such weights over groundings lose
# every smaller weight to rounding and overflow float64 (write a hard formula
# instead: a final period).
MAX_ABS_WEIGHT = 1e12


def check_weight(weight, pos, what: str = "formula") -> None:
    """A finite weight within +-MAX_ABS_WEIGHT, or ``MLNSemanticError`` at ``pos``."""
    import math

    if weight is None:
        return
    if not math.isfinite(weight) or abs(weight) > MAX_ABS_WEIGHT:
        raise _err(
            MLNSemanticError,
            f"the weight {weight!r} of this {what} is out of range (at most {MAX_ABS_WEIGHT:g} in absolute "
            "value; for a constraint that must hold, write a hard formula ending with a period)", pos)


INTERNAL_ARITY = {"+": 2, "-": 2, "*": 2, "/": 2, "%": 2, "succ": 1, "concat": 2, "substr": 2}
INTERNAL_PREDICATE_ARITY = {"substr": 2}


def subformulas(formula: Formula) -> Iterator[Formula]:
    """Every subformula of ``formula`` (itself included) in pre-order, a left
    operand before its right one; iterative, so deep formulas do not recurse."""
    stack: list[Formula] = [formula]
    while stack:
        f = stack.pop()
        yield f
        kind = type(f)
        if kind is Not or kind is Forall or kind is Exists:
            stack.append(f.body)
        elif kind is And or kind is Or or kind is Implies or kind is Iff:
            stack.append(f.right)
            stack.append(f.left)


def _err(cls, message: str, pos: Pos | None):
    if pos is None:
        return cls(message)
    return cls(message, file=pos.file, line=pos.line, column=pos.column)


def _arity_message(kind: str, name: str, decl: PredicateDecl | FunctionDecl, given: int) -> str:
    """``predicate 'R' takes 2 arguments (t, t), not 1``."""
    return (
        f"{kind} '{name}' takes {decl.arity} argument{'s' * (decl.arity != 1)} "
        f"({', '.join(decl.arg_types)}), not {given}"
    )


def _where(pos: Pos | None) -> str:
    return f"line {pos.line}, column {pos.column}" if pos is not None else "elsewhere"


# ------------------------------------------------------------------ formulas


@dataclass
class FormulaAnalysis:
    """What a formula needs from its model: variable types (in order of first
    appearance) and the constants it names, with the type each joins."""

    var_types: dict[str, str] = field(default_factory=dict)
    constants: list[tuple[str, str]] = field(default_factory=list)


class _Typing:
    def __init__(self, predicates: Mapping[str, PredicateDecl], functions: Mapping[str, FunctionDecl]) -> None:
        self.predicates = predicates
        self.functions = functions
        self.order: dict[str, Pos | None] = {}                   # variable -> first position
        self.typed: dict[str, tuple[str, Pos | None]] = {}       # variable -> (type, where it was fixed)
        self.equal: list[tuple[str, str, Compare]] = []           # x = y
        self.var_const: list[tuple[str, str]] = []               # x = C
        self.constants: list[tuple[str, str]] = []

    # -------------------------------------------------------------- terms
    def see_var(self, var: Var, expected: str | None) -> None:
        if var.name not in self.order:
            self.order[var.name] = var.pos
        if expected is None:
            return
        known = self.typed.get(var.name)
        if known is None:
            self.typed[var.name] = (expected, var.pos)
        elif known[0] != expected:
            raise _err(
                MLNSemanticError,
                f"variable '{var.name}' is used here as type '{expected}' but as type "
                f"'{known[0]}' at {_where(known[1])}",
                var.pos,
            )

    def term(self, term: Term, expected: str | None) -> None:
        stack: list[tuple[Term, str | None]] = [(term, expected)]
        while stack:
            t, want = stack.pop()
            kind = type(t)
            if kind is Var:
                self.see_var(t, want)
            elif kind is Const:
                if want is not None:
                    self.constants.append((want, t.name))
            elif kind is Func:
                decl = self.functions.get(t.name)
                if decl is None:
                    if t.name not in INTERNAL_FUNCTIONS:
                        raise _err(MLNSemanticError, f"undeclared function '{t.name}'", t.pos)
                    if t.name in SIMILARITY_FUNCTIONS:
                        self.similarity(t)
                        continue
                    arity = INTERNAL_ARITY[t.name]
                    if len(t.args) != arity:
                        raise _err(
                            MLNSemanticError,
                            f"internal function '{t.name}' takes {arity} argument{'s' * (arity != 1)}, "
                            f"not {len(t.args)}",
                            t.pos,
                        )
                    for arg in reversed(t.args):
                        stack.append((arg, None))
                    continue
                if len(t.args) != decl.arity:
                    raise _err(
                        MLNSemanticError,
                        _arity_message("function", t.name, decl, len(t.args)),
                        t.pos,
                    )
                if want is not None and decl.return_type != want:
                    raise _err(
                        MLNSemanticError,
                        f"function '{t.name}' returns type '{decl.return_type}' where type '{want}' is expected",
                        t.pos,
                    )
                for arg, arg_type in reversed(list(zip(t.args, decl.arg_types))):
                    stack.append((arg, arg_type))
            else:  # pragma: no cover - the parser builds only these terms
                raise _err(MLNSemanticError, f"unexpected term {t!r}", getattr(t, "pos", None))

    def similarity(self, t: Func) -> None:
        """``jaccard(x, y, P1, ..., Pk)``: two terms of the path's first type and a
        chain of binary predicates (first argument to second)."""
        if len(t.args) < 3:
            raise _err(MLNSemanticError,
                       f"{t.name} takes two terms and one or more predicate names: {t.name}(x, y, P1, ..., Pk)",
                       t.pos)
        path = []
        for a in t.args[2:]:
            decl = self.predicates.get(a.name) if type(a) in (Const, Var) else None
            if decl is None:
                raise _err(MLNSemanticError, f"{t.name}: '{getattr(a, 'name', a)}' is not a declared predicate",
                           getattr(a, "pos", None) or t.pos)
            if decl.arity != 2:
                raise _err(MLNSemanticError, f"{t.name}: predicate '{a.name}' must be binary (owner, element)",
                           getattr(a, "pos", None) or t.pos)
            path.append(decl)
        for p, q in zip(path, path[1:]):
            if p.arg_types[1] != q.arg_types[0]:
                raise _err(MLNSemanticError,
                           f"{t.name}: '{p.name}' ends in type '{p.arg_types[1]}' but '{q.name}' starts with "
                           f"type '{q.arg_types[0]}'", t.pos)
        owner = path[0].arg_types[0]
        self.term(t.args[0], owner)
        self.term(t.args[1], owner)

    def static_type(self, term: Term) -> str | None:
        if type(term) is Func and term.name in self.functions:
            return self.functions[term.name].return_type
        return None

    # -------------------------------------------------------------- formulas
    def atom(self, atom: Atom) -> None:
        decl = self.predicates.get(atom.predicate)
        if decl is None:
            if atom.predicate in INTERNAL_PREDICATES:
                arity = INTERNAL_PREDICATE_ARITY[atom.predicate]
                if len(atom.args) != arity:
                    raise _err(
                        MLNSemanticError,
                        f"internal predicate '{atom.predicate}' takes {arity} arguments, not {len(atom.args)}",
                        atom.pos,
                    )
                for arg in atom.args:
                    self._no_mutex(arg)
                    self.term(arg, None)
                return
            if atom.predicate in self.functions:
                raise _err(MLNSemanticError, f"'{atom.predicate}' is a function, not a predicate", atom.pos)
            raise _err(MLNSemanticError, f"undeclared predicate '{atom.predicate}'", atom.pos)
        if len(atom.args) != decl.arity:
            raise _err(
                MLNSemanticError,
                _arity_message("predicate", atom.predicate, decl, len(atom.args)),
                atom.pos,
            )
        for arg, arg_type in zip(atom.args, decl.arg_types):
            self._no_mutex(arg)
            self.term(arg, arg_type)

    @staticmethod
    def _no_mutex(arg) -> None:
        if not isinstance(arg, (Var, Const, Func)):
            pos = getattr(arg, "pos", None)
            raise _err(
                MLNSemanticError,
                "'!' after an argument marks a mutually exclusive argument in a predicate declaration; "
                "it cannot appear in a formula",
                pos,
            )

    def compare(self, cmp: Compare) -> None:
        left, right = cmp.left, cmp.right
        if cmp.op == "=":
            lt, rt = self.static_type(left), self.static_type(right)
            lv, rv = type(left) is Var, type(right) is Var
            if lv and rv:
                self.see_var(left, None)
                self.see_var(right, None)
                self.equal.append((left.name, right.name, cmp))
            elif lv and rt is not None:
                self.see_var(left, rt)
            elif rv and lt is not None:
                self.see_var(right, lt)
            elif lv and type(right) is Const:
                self.see_var(left, None)
                self.var_const.append((left.name, right.name))
            elif rv and type(left) is Const:
                self.see_var(right, None)
                self.var_const.append((right.name, left.name))
            elif lt is not None and type(right) is Const:
                self.constants.append((lt, right.name))
            elif rt is not None and type(left) is Const:
                self.constants.append((rt, left.name))
            elif lt is not None and rt is not None and lt != rt:
                raise _err(
                    MLNSemanticError,
                    f"'=' compares a '{lt}' with a '{rt}'",
                    cmp.pos,
                )
        self.term(left, None)
        self.term(right, None)

    def formula(self, formula: Formula) -> list[tuple[str, Pos | None]]:
        quantified: list[tuple[str, Pos | None]] = []
        for f in subformulas(formula):
            kind = type(f)
            if kind is Atom:
                self.atom(f)
            elif kind is Compare:
                self.compare(f)
            elif kind in (Forall, Exists):
                for name in f.variables:
                    quantified.append((name, f.pos))
            elif kind not in (Not, And, Or, Implies, Iff):  # pragma: no cover
                raise _err(MLNSemanticError, f"unexpected formula {f!r}", getattr(f, "pos", None))
        return quantified

    # -------------------------------------------------------------- solve
    def solve(self, quantified: list[tuple[str, Pos | None]]) -> dict[str, str]:
        for name, pos in quantified:
            if name not in self.order:
                raise _err(MLNSemanticError, f"quantified variable '{name}' does not occur in its formula", pos)
        # x = y: variables of one class share a type
        parent = {name: name for name in self.order}

        def find(x: str) -> str:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for a, b, cmp in self.equal:
            ta, tb = self.typed.get(a), self.typed.get(b)
            ra, rb = find(a), find(b)
            ca, cb = self.typed.get(ra), self.typed.get(rb)
            if ca is not None and cb is not None and ca[0] != cb[0]:
                raise _err(
                    MLNSemanticError,
                    f"'{a} = {b}' compares variables of different types "
                    f"('{(ta or ca)[0]}' and '{(tb or cb)[0]}')",
                    cmp.pos,
                )
            parent[rb] = ra
            if ca is None and cb is not None:
                self.typed[ra] = cb
        types: dict[str, str] = {}
        for name, pos in self.order.items():
            known = self.typed.get(name) or self.typed.get(find(name))
            if known is None:
                raise _err(
                    MLNSemanticError,
                    f"cannot infer the type of variable '{name}': it is not an argument of any predicate "
                    "or function",
                    pos,
                )
            types[name] = known[0]
        for var, const in self.var_const:
            self.constants.append((types[var], const))
        return types


def analyze_formula(
    formula: Formula,
    predicates: Mapping[str, PredicateDecl],
    functions: Mapping[str, FunctionDecl] | None = None,
) -> FormulaAnalysis:
    """Check a formula against the declarations and infer its variables' types.

    Raises ``MLNSemanticError`` (with the position of the culprit) for an
    undeclared predicate or function, a wrong arity, a variable used at two
    types, ``x = y`` across types, or a variable whose type cannot be inferred.
    """
    typing = _Typing(predicates, functions or {})
    quantified = typing.formula(formula)
    var_types = typing.solve(quantified)
    return FormulaAnalysis(var_types, typing.constants)


def infer_variable_types(formula: Formula, mln) -> dict[str, str]:
    """The type of every variable of ``formula`` (free and quantified) in ``mln``."""
    return analyze_formula(formula, mln.predicates, mln.functions).var_types


# ------------------------------------------------------------------ weights


def unweighted_formulas(mln) -> list[int]:
    """Indices of the formulas written with neither a weight nor a period."""
    return [i for i, f in enumerate(mln.formulas) if not f.has_weight]


def require_weights(mln, purpose: str = "inference") -> None:
    """Raise ``MLNSemanticError`` at the first formula that has no weight
    (Alchemy's ``infer`` refuses such formulas; ``learn`` gives them a prior)."""
    for i in unweighted_formulas(mln):
        f = mln.formulas[i]
        raise _err(
            MLNSemanticError,
            f"formula has no weight, which {purpose} requires: write a weight before it, "
            "or a period after it for a hard formula",
            f.pos,
        )


# ------------------------------------------------------------------ evidence


def check_database(db, mln) -> None:
    """Check evidence against the model; raise ``EvidenceError`` at the first
    problem: an undeclared predicate or function, a wrong arity, an atom given
    both true and false, two true atoms of one ``!`` (mutually exclusive) block,
    or a function value given twice with different values.

    Constants never seen before are fine: they join their argument's type.
    """
    from .dbfast import no_gc

    with no_gc():
        _check_database(db, mln)


def _check_database(db, mln) -> None:
    from .dbcolumns import EvidenceColumns

    cols = db.columns if getattr(db, "columns", None) is not None else EvidenceColumns.from_atoms(db.atoms)
    predicates = mln.predicates
    first_bad = None          # (order key, kind, rows, row, other row)

    def consider(key, *what):
        nonlocal first_bad
        if first_bad is None or key < first_bad[0]:
            first_bad = (key, *what)

    for (name, arity), rows in cols.preds.items():
        if not len(rows):
            continue
        decl = predicates.get(name)
        keys = rows.order_keys()
        if decl is None or decl.arity != arity:
            consider(int(keys[0]), "signature", rows, 0, None)
            continue
        if len(rows) < 2 or rows.truth.min() == rows.truth.max():
            continue                    # one truth value: no contradiction possible
        code = _row_codes(rows.args)
        _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        bad = np.flatnonzero(rows.truth != rows.truth[first[inverse]])
        if len(bad):
            i = int(bad[np.argmin(keys[bad])])
            consider(int(keys[i]), "contradiction", rows, i, int(first[inverse[i]]))
    if first_bad is not None:
        _, kind, rows, i, j = first_bad
        atom = cols.atom(rows, i)
        if kind == "signature":
            _signature_error(atom, mln)
        old = cols.atom(rows, j)
        raise _err(
            EvidenceError,
            f"contradictory evidence: {atom.atom} is given as {_truth_word(atom.truth)} here and as "
            f"{_truth_word(old.truth)} at {_where(old.pos)}",
            atom.pos,
        )
    _check_block_columns(cols, {n: d for n, d in predicates.items() if d.has_block})
    _check_unknown_variables(cols)
    _check_reflexive(cols, predicates)
    _check_function_values(db.function_values, mln.functions)


def _check_reflexive(cols, predicates: Mapping[str, PredicateDecl]) -> None:
    """``!Same(M4,M4)`` for a declared ``equivalence Same``: an equivalence is
    reflexive, so the atom cannot be false (it was silently taken as true)."""
    found = None
    for (name, arity), rows in cols.preds.items():
        decl = predicates.get(name)
        if decl is None or not getattr(decl, "equivalence", False) or arity != 2 or not len(rows):
            continue
        bad = np.flatnonzero((rows.truth == 0) & (rows.args[:, 0] == rows.args[:, 1]))
        if len(bad):
            keys = rows.order_keys()
            i = int(bad[np.argmin(keys[bad])])
            if found is None or keys[i] < found[0]:
                found = (int(keys[i]), rows, i)
    if found is None:
        return
    _, rows, i = found
    atom = cols.atom(rows, i)
    raise _err(
        EvidenceError,
        f"the evidence contradicts the equivalence {rows.name}: {atom.atom} is given as false, but an equivalence "
        f"is reflexive ({rows.name}(x, x) holds for every x); remove the line",
        atom.pos,
    )


def _check_unknown_variables(cols) -> None:
    """``?Smokes(x)`` reads like "every Smokes atom is unknown", but evidence
    atoms are ground: ``x`` would be a constant. Refused, with the ways to say
    what was meant (a lower-case constant elsewhere stays a constant)."""
    unknown = [(name, rows) for (name, _), rows in cols.preds.items() if len(rows) and (rows.truth == -1).any()]
    if not unknown:
        return
    lower = np.fromiter((c[:1].islower() for c in cols.consts), dtype=bool, count=len(cols.consts))
    if not lower.any():
        return
    found = None
    for name, rows in unknown:
        bad = np.flatnonzero((rows.truth == -1) & lower[rows.args].any(axis=1)) if rows.args.shape[1] else []
        if len(bad):
            keys = rows.order_keys()
            i = int(bad[np.argmin(keys[bad])])
            if found is None or keys[i] < found[0]:
                found = (int(keys[i]), name, rows, i)
    if found is None:
        return
    _, name, rows, i = found
    atom = cols.atom(rows, i)
    var = next(a for a in atom.atom.args if a[:1].islower())
    raise _err(
        EvidenceError,
        f"?{atom.atom}: '{var}' starts with a lower-case letter, as a variable does, but evidence atoms are ground "
        f"('?' marks one atom unknown, and '{var}' would be a constant). To leave every {name} atom unknown, list "
        f"none of them (open world) or name the predicate with --hidden {name} (mln learn); if '{var}' is a "
        f"constant, capitalise it or quote it (\"{var}\")",
        atom.pos,
    )


def _row_codes(args: np.ndarray) -> np.ndarray:
    """One int64 per row of an int32 matrix of codes, equal exactly when the rows are."""
    n, k = args.shape
    if k == 0:
        return np.zeros(n, dtype=np.int64)
    if k == 1:
        return args[:, 0].astype(np.int64)
    bits = [max(1, int(args[:, j].max(initial=0)).bit_length()) for j in range(k)]
    if sum(bits) <= 63:
        key = args[:, 0].astype(np.int64)
        for j in range(1, k):
            key <<= bits[j]
            key |= args[:, j]
        return key
    _, inverse = np.unique(args, axis=0, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64)


def _check_block_columns(cols, block_preds: Mapping[str, PredicateDecl]) -> None:
    """Two different true atoms of one ``!`` block: the first such atom in
    the input's order is reported, with the other."""
    first_bad = None
    for (name, arity), rows in cols.preds.items():
        decl = block_preds.get(name)
        if decl is None or decl.arity != arity:
            continue
        true_rows = np.flatnonzero(rows.truth == 1)
        if len(true_rows) < 2:
            continue
        key_cols = [j for j, m in enumerate(decl.mutex) if not m]
        args = rows.args[true_rows]
        owner_key = _row_codes(args[:, key_cols]) if key_cols else np.zeros(len(args), np.int64)
        _, first, inverse = np.unique(owner_key, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        full = _row_codes(args)
        bad = np.flatnonzero(full != full[first[inverse]])
        if len(bad):
            keys = rows.order_keys()[true_rows]
            b = int(bad[np.argmin(keys[bad])])
            k = int(keys[b])
            if first_bad is None or k < first_bad[0]:
                first_bad = (k, rows, int(true_rows[b]), int(true_rows[first[inverse[b]]]))
    if first_bad is not None:
        _, rows, i, j = first_bad
        atom, old = cols.atom(rows, i), cols.atom(rows, j)
        ga = atom.atom
        raise _err(
            EvidenceError,
            f"{ga} and {old.atom} are both true, but '{ga.predicate}' allows one true value per block "
            f"(its '!' arguments); the other is at {_where(old.pos)}",
            atom.pos,
        )


def _signature_error(atom, mln) -> None:
    g = atom.atom
    decl = mln.predicates.get(g.predicate)
    if decl is None:
        hint = " (it is a function: write 'Value = f(Args)')" if g.predicate in mln.functions else ""
        raise _err(EvidenceError, f"undeclared predicate '{g.predicate}'{hint}", atom.pos)
    raise _err(
        EvidenceError,
        _arity_message("predicate", g.predicate, decl, len(g.args)),
        atom.pos,
    )


def _truth_word(truth: bool | None) -> str:
    return "true" if truth is True else "false" if truth is False else "unknown"


def _check_blocks(atoms, block_preds: Mapping[str, PredicateDecl]) -> None:
    if not block_preds:
        return
    owners: dict = {}
    for atom in atoms:
        ga = atom.atom
        decl = block_preds.get(ga.predicate)
        if decl is None or atom.truth is not True:
            continue
        key = (ga.predicate, tuple(a for a, m in zip(ga.args, decl.mutex) if not m))
        old = owners.setdefault(key, atom)
        if old is not atom and old.atom != ga:
            raise _err(
                EvidenceError,
                f"{ga} and {old.atom} are both true, but '{ga.predicate}' allows one true value per block "
                f"(its '!' arguments); the other is at {_where(old.pos)}",
                atom.pos,
            )


def _check_function_values(values, functions: Mapping[str, FunctionDecl]) -> None:
    given: dict = {}
    for fv in values:
        decl = functions.get(fv.function)
        if decl is None:
            raise _err(EvidenceError, f"undeclared function '{fv.function}'", fv.pos)
        if len(fv.args) != decl.arity:
            raise _err(
                EvidenceError,
                _arity_message("function", fv.function, decl, len(fv.args)),
                fv.pos,
            )
        key = (fv.function, fv.args)
        old = given.setdefault(key, fv)
        if old is not fv:
            call = f"{fv.function}({','.join(fv.args)})"
            if old.value != fv.value:
                raise _err(
                    EvidenceError,
                    f"function value {call} given twice: {old.value} at {_where(old.pos)}, {fv.value} here",
                    fv.pos,
                )


def evidence_domains(mln, db=None) -> dict[str, tuple[str, ...]]:
    """Every type with its constants: those of the model (declared, or named in
    formulas) followed by those first seen in the evidence, in order of
    appearance (Alchemy: a constant first seen in a .db file joins its
    argument's type)."""
    domains = {name: list(consts) for name, consts in mln.types.items()}
    members = {name: set(consts) for name, consts in mln.types.items()}
    if db is None:
        return {k: tuple(v) for k, v in domains.items()}

    def add(type_name: str, const: str) -> None:
        bucket = members.setdefault(type_name, set())
        if const not in bucket:
            bucket.add(const)
            domains.setdefault(type_name, []).append(const)

    predicates = mln.predicates
    for atom in db.atoms:
        decl = predicates.get(atom.atom.predicate)
        if decl is None:
            continue
        for const, type_name in zip(atom.atom.args, decl.arg_types):
            add(type_name, const)
    for fv in db.function_values:
        decl = mln.functions.get(fv.function)
        if decl is None:
            continue
        add(decl.return_type, fv.value)
        for const, type_name in zip(fv.args, decl.arg_types):
            add(type_name, const)
    return {k: tuple(v) for k, v in domains.items()}


# ------------------------------------------------------------------ queries


def check_queries(queries: Iterable[Query], mln) -> None:
    """Every query names a declared predicate with the right number of arguments."""
    for q in queries:
        decl = mln.predicates.get(q.predicate)
        if decl is None:
            known = ", ".join(sorted(mln.predicates)) or "none"
            raise _err(QueryError, f"unknown query predicate '{q.predicate}' (declared: {known})", q.pos)
        if q.args is not None and len(q.args) != decl.arity:
            raise _err(
                QueryError,
                _arity_message("predicate", q.predicate, decl, len(q.args)),
                q.pos,
            )
