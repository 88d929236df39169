"""Printing models back to Alchemy syntax, such that parse(print(m)) == m.

``format_formula`` prints with the fewest parentheses that keep the tree:
connectives by precedence (``!`` > ``^`` > ``v`` > ``=>`` > ``<=>``), a right
operand of the same level in parentheses (the parser groups left to right),
and a quantifier in parentheses whenever it is an operand (its body would
otherwise swallow what follows). Terms likewise (``*`` ``/`` ``%`` bind tighter
than ``+`` ``-``).
"""

from __future__ import annotations

from .ast import (
    ARITHMETIC_OPERATORS,
    And,
    Atom,
    Compare,
    Const,
    EvidenceAtom,
    Exists,
    Forall,
    Formula,
    Func,
    FunctionValue,
    Iff,
    Implies,
    Not,
    Or,
    Query,
    Term,
    Var,
)

_BINARY = {Iff: ("<=>", 1), Implies: ("=>", 2), Or: ("v", 3), And: ("^", 4)}
_UNARY_LEVEL = 5
_QUANT_LEVEL = 0
_TERM_LEVEL = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2}


# ------------------------------------------------------------------ terms


def format_term(term: Term) -> str:
    """A term in Alchemy syntax (``x``, ``+x``, ``Anna``, ``motherOf(x)``, ``x + 1``)."""
    kind = type(term)
    if kind is Var:
        return ("+" if term.plus else "") + term.name
    if kind is Const:
        return term.name
    if kind is Func:
        if term.name in ARITHMETIC_OPERATORS and len(term.args) == 2:
            level = _TERM_LEVEL[term.name]
            left, right = term.args
            ls = format_term(left)
            rs = format_term(right)
            if _term_level(left) < level:
                ls = f"({ls})"
            if _term_level(right) <= level:
                rs = f"({rs})"
            return f"{ls} {term.name} {rs}"
        return f"{term.name}({', '.join(format_term(a) for a in term.args)})"
    raise TypeError(f"not a term: {term!r}")


def _term_level(term: Term) -> int:
    if type(term) is Func and term.name in ARITHMETIC_OPERATORS and len(term.args) == 2:
        return _TERM_LEVEL[term.name]
    return 3


# ------------------------------------------------------------------ formulas


def _level(f: Formula) -> int:
    kind = type(f)
    if kind in _BINARY:
        return _BINARY[kind][1]
    if kind in (Forall, Exists):
        return _QUANT_LEVEL
    return _UNARY_LEVEL + 1 if kind in (Atom, Compare) else _UNARY_LEVEL


def format_formula(f: Formula) -> str:
    """A formula in Alchemy syntax, e.g. ``Friends(x, y) ^ Smokes(x) => Smokes(y)``."""
    kind = type(f)
    if kind is Atom:
        return f"{'*' if f.star else ''}{f.predicate}({', '.join(format_term(a) for a in f.args)})"
    if kind is Compare:
        return f"{format_term(f.left)} {f.op} {format_term(f.right)}"
    if kind is Not:
        depth = 0
        body = f
        while type(body) is Not:            # a chain of negations prints without recursion
            depth += 1
            body = body.body
        inner = format_formula(body)
        if _level(body) < _UNARY_LEVEL or type(body) is Compare:
            inner = f"({inner})"
        return "!" * depth + inner
    if kind in (Forall, Exists):
        word = "FORALL" if kind is Forall else "EXIST"
        return f"{word} {', '.join(f.variables)} {format_formula(f.body)}"
    if kind in _BINARY:
        op, level = _BINARY[kind]
        # a left-deep chain of one connective prints without recursion
        chain = [f.right]
        left = f.left
        while type(left) is kind:
            chain.append(left.right)
            left = left.left
        parts = [_operand(left, level, right_side=False)]
        parts.extend(_operand(r, level, right_side=True) for r in reversed(chain))
        return f" {op} ".join(parts)
    raise TypeError(f"not a formula: {f!r}")


def _operand(f: Formula, level: int, right_side: bool) -> str:
    text = format_formula(f)
    sub = _level(f)
    if sub == _QUANT_LEVEL or sub < level or (right_side and sub == level):
        return f"({text})"
    return text


# ------------------------------------------------------------------ declarations


def _format_weight(w: float) -> str:
    text = repr(float(w))
    if text in ("inf", "-inf", "nan"):
        raise ValueError(f"weight {w} cannot be written in an .mln file")
    return text


def format_formula_decl(decl) -> str:
    """One line of an .mln file: ``1.5 Smokes(x) => Cancer(x)``, ``P(x).``, ``@2.0 Q(x)``."""
    try:
        body = format_formula(decl.formula)
    except RecursionError:
        from ..errors import MLNSemanticError

        pos = decl.pos
        where = dict(file=pos.file, line=pos.line, column=pos.column) if pos is not None else {}
        raise MLNSemanticError("formula nested too deeply to print", **where) from None
    if body[:1].isdigit():  # would read as a weight
        body = f"({body})"
    if decl.hard:
        return body + "."
    if decl.weight is None:
        return body
    return f"{'@' if decl.fixed else ''}{_format_weight(decl.weight)} {body}"


def print_mln(mln) -> str:
    """The whole model as .mln text: types, predicates, functions, formulas."""
    used: set[str] = set()
    for p in mln.predicates.values():
        used.update(p.arg_types)
    for fn in mln.functions.values():
        used.add(fn.return_type)
        used.update(fn.arg_types)
    lines: list[str] = []
    for name, consts in mln.types.items():
        if consts or name not in used:
            lines.append(f"{name} = {{{', '.join(consts)}}}")
    if lines:
        lines.append("")
    for p in mln.predicates.values():
        args = ", ".join(t + ("!" if m else "") for t, m in zip(p.arg_types, p.mutex))
        prefix = "equivalence " if getattr(p, "equivalence", False) else ""
        lines.append(f"{prefix}{'*' if p.closed else ''}{p.name}({args})")
    for fn in mln.functions.values():
        lines.append(f"{fn.return_type} {fn.name}({', '.join(fn.arg_types)})")
    if mln.predicates or mln.functions:
        lines.append("")
    for decl in mln.formulas:
        lines.append(format_formula_decl(decl))
    for feature in getattr(mln, "set_features", ()):
        lines.append(format_set_feature(feature))
    return "\n".join(lines) + "\n"


def format_set_feature(f) -> str:
    """A set-level feature in the syntax of ``lang/aggregates.py``."""
    weight = ""
    if f.weight is not None:
        weight = ("@" if f.fixed else "") + _format_weight(f.weight) + " "
    if getattr(f, "link", False) or f.kind == "candidates":
        inner = format_term(f.term) if f.term is not None else format_formula(f.body)
        prefix = "link " if getattr(f, "link", False) else ""
        return f"{weight}{prefix}{f.kind}({', '.join(f.variables)} in {f.predicate}: {inner})"
    if f.kind == "size":
        head = f"size({f.predicate})"
    elif f.kind == "distinct":
        head = f"distinct({f.value_var}; {f.variables[0]} in {f.predicate}: {format_formula(f.body)})"
    elif f.kind in ("max", "min", "similarity"):
        head = f"{f.kind}({', '.join(f.variables)} in {f.predicate}: {format_term(f.term)})"
    else:
        kind, body = f.kind, f.body
        if kind == "most_not":
            from .ast import Not

            kind, body = "most", Not(body)
        head = f"{kind}({', '.join(f.variables)} in {f.predicate}: {format_formula(body)})"
    tail = "" if f.op is None else f" {f.op} {_format_weight(f.threshold)}"
    return f"{weight}{head}{tail}"


# ------------------------------------------------------------------ evidence, queries


def format_evidence_atom(atom: EvidenceAtom) -> str:
    prefix = "" if atom.truth is True else "!" if atom.truth is False else "?"
    return f"{prefix}{atom.atom.predicate}({','.join(atom.atom.args)})"


def format_function_value(fv: FunctionValue) -> str:
    return f"{fv.value} = {fv.function}({','.join(fv.args)})"


def print_db(db) -> str:
    """The database as .db text: one atom (or function value) per line."""
    lines = [format_evidence_atom(a) for a in db.atoms]
    lines.extend(format_function_value(v) for v in db.function_values)
    return "\n".join(lines) + ("\n" if lines else "")


def format_query(q: Query) -> str:
    if q.args is None:
        return q.predicate
    return f"{q.predicate}({','.join(format_term(a) for a in q.args)})"
