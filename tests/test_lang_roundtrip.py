"""Property: for generated models and databases, parse(print(m)) == m."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from markovlogic import MLN, Database
from markovlogic.lang.ast import (
    And,
    Atom,
    Compare,
    Const,
    EvidenceAtom,
    Exists,
    Forall,
    FormulaDecl,
    Func,
    FunctionDecl,
    FunctionValue,
    GroundAtom,
    Iff,
    Implies,
    Not,
    Or,
    PredicateDecl,
    Var,
)
from markovlogic.lang.postlex import KEYWORDS
from markovlogic.lang.printer import format_formula
from markovlogic.lang.transform import NAMED_COMPARISONS, NAMED_OPERATORS

RESERVED = set(KEYWORDS) | set(NAMED_COMPARISONS) | set(NAMED_OPERATORS) | {"substr", "succ", "concat"}

lower_names = st.from_regex(r"[a-z][A-Za-z0-9_'\-]{0,5}", fullmatch=True).filter(lambda s: s not in RESERVED)
any_names = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,5}", fullmatch=True).filter(lambda s: s not in RESERVED)
upper_consts = st.from_regex(r"[A-Z][A-Za-z0-9_'\-]{0,5}", fullmatch=True)
int_consts = st.integers(0, 10**6).map(str)
string_consts = st.from_regex(r'"[A-Za-z0-9 _.,:;!?*/+-]{0,8}"', fullmatch=True)
constants = st.one_of(upper_consts, int_consts, string_consts)
weights = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False, width=64)  # the allowed range (lang.checks.MAX_ABS_WEIGHT)


@st.composite
def signatures(draw):
    names = draw(st.lists(lower_names, min_size=1, max_size=3, unique=True))
    types = {}
    for name in names:
        types[name] = tuple(draw(st.lists(constants, max_size=4, unique=True)))
    pred_names = draw(st.lists(any_names, min_size=1, max_size=4, unique=True).filter(
        lambda ps: not set(ps) & set(names)))
    predicates = {}
    for p in pred_names:
        arg_types = tuple(draw(st.lists(st.sampled_from(names), min_size=1, max_size=3)))
        mutex = tuple(draw(st.lists(st.booleans(), min_size=len(arg_types), max_size=len(arg_types))))
        predicates[p] = PredicateDecl(p, arg_types, mutex, closed=draw(st.booleans()))
    fn_names = draw(st.lists(lower_names, max_size=2, unique=True).filter(
        lambda fs: not set(fs) & (set(names) | set(pred_names))))
    functions = {}
    for fn in fn_names:
        arg_types = tuple(draw(st.lists(st.sampled_from(names), min_size=1, max_size=2)))
        functions[fn] = FunctionDecl(fn, draw(st.sampled_from(names)), arg_types)
    # a typing predicate per type, so every variable can be given its type
    for name in names:
        predicates[f"Is_{name}"] = PredicateDecl(f"Is_{name}", (name,), (False,))
    return types, predicates, functions


def _var_pool(types) -> dict[str, list[str]]:
    return {t: [f"x{i}a", f"x{i}b"] for i, t in enumerate(types)}


@st.composite
def typed_term(draw, sig, type_name, depth=2):
    types, predicates, functions = sig
    pool = _var_pool(types)
    options = ["var"]
    if types[type_name]:
        options.append("const")
    returning = [f for f in functions.values() if f.return_type == type_name]
    if returning and depth > 0:
        options.append("func")
    kind = draw(st.sampled_from(options))
    if kind == "var":
        return Var(draw(st.sampled_from(pool[type_name])), plus=draw(st.booleans()))
    if kind == "const":
        return Const(draw(st.sampled_from(types[type_name])))
    fn = draw(st.sampled_from(returning))
    return Func(fn.name, tuple(draw(typed_term(sig, t, depth - 1)) for t in fn.arg_types))


@st.composite
def untyped_term(draw, sig, depth=2):
    types = sig[0]
    if depth > 0 and draw(st.booleans()):
        op = draw(st.sampled_from(["+", "-", "*", "/", "%", "succ", "concat"]))
        arity = 1 if op == "succ" else 2
        return Func(op, tuple(draw(untyped_term(sig, depth - 1)) for _ in range(arity)))
    if draw(st.booleans()):
        return Const(draw(int_consts))
    return draw(typed_term(sig, draw(st.sampled_from(list(types))), depth=0))


@st.composite
def leaves(draw, sig):
    types, predicates, functions = sig
    kind = draw(st.sampled_from(["atom", "atom", "eq", "cmp"]))
    if kind == "atom":
        p = draw(st.sampled_from(list(predicates.values())))
        args = tuple(draw(typed_term(sig, t)) for t in p.arg_types)
        return Atom(p.name, args, star=draw(st.booleans()))
    if kind == "eq":
        t = draw(st.sampled_from(list(types)))
        return Compare("=", draw(typed_term(sig, t)), draw(typed_term(sig, t)))
    op = draw(st.sampled_from(["<", ">", "<=", ">="]))
    return Compare(op, draw(untyped_term(sig)), draw(untyped_term(sig)))


def _variables(f, out: dict[str, None]) -> dict[str, None]:
    def term(t):
        if type(t) is Var:
            out.setdefault(t.name)
        elif type(t) is Func:
            for a in t.args:
                term(a)

    if type(f) is Atom:
        for a in f.args:
            term(a)
    elif type(f) is Compare:
        term(f.left)
        term(f.right)
    elif type(f) is Not:
        _variables(f.body, out)
    elif type(f) in (Forall, Exists):
        _variables(f.body, out)
    else:
        _variables(f.left, out)
        _variables(f.right, out)
    return out


@st.composite
def formulas(draw, sig):
    def extend(children):
        binary = st.tuples(st.sampled_from([And, Or, Implies, Iff]), children, children).map(lambda t: t[0](t[1], t[2]))
        return st.one_of(children.map(Not), binary, children.flatmap(lambda body: _quantified(body)))

    tree = draw(st.recursive(leaves(sig), extend, max_leaves=6))
    # give every variable its type through the typing predicates
    pool = _var_pool(sig[0])
    type_of = {v: t for t, vs in pool.items() for v in vs}
    for v in _variables(tree, {}):
        tree = And(tree, Atom(f"Is_{type_of[v]}", (Var(v),)))
    return tree


def _quantified(body):
    names = list(_variables(body, {}))
    if not names:
        return st.just(Not(body))
    return st.tuples(st.sampled_from([Forall, Exists]), st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True)).map(
        lambda t: t[0](tuple(t[1]), body)
    )


@st.composite
def mlns(draw):
    sig = draw(signatures())
    types, predicates, functions = sig
    decls = []
    for _ in range(draw(st.integers(0, 4))):
        f = draw(formulas(sig))
        kind = draw(st.sampled_from(["soft", "hard", "none", "fixed"]))
        if kind == "soft":
            decls.append(FormulaDecl(f, weight=draw(weights)))
        elif kind == "fixed":
            decls.append(FormulaDecl(f, weight=draw(weights), fixed=True))
        elif kind == "hard":
            decls.append(FormulaDecl(f, hard=True))
        else:
            decls.append(FormulaDecl(f))
    return MLN(types=dict(types), predicates=dict(predicates), functions=dict(functions), formulas=decls)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(mlns())
def test_print_then_parse_gives_the_same_mln(mln):
    text = mln.to_string()
    again = MLN.from_string(text)
    assert again == mln, text
    assert again.to_string() == text


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mlns())
def test_formulas_print_parse_one_by_one(mln):
    header_only = MLN(types=mln.types, predicates=mln.predicates, functions=mln.functions)
    header = header_only.to_string()
    for decl in mln.formulas:
        parsed = MLN.from_string(header + "1 " + format_formula(decl.formula) + "\n").formulas[0].formula
        assert parsed == decl.formula


db_consts = st.one_of(upper_consts, int_consts, string_consts, lower_names)


@st.composite
def databases(draw):
    atoms = []
    for _ in range(draw(st.integers(0, 6))):
        pred = draw(any_names)
        args = tuple(draw(st.lists(db_consts, min_size=1, max_size=3)))
        atoms.append(EvidenceAtom(GroundAtom(pred, args), draw(st.sampled_from([True, False, None]))))
    values = []
    for _ in range(draw(st.integers(0, 2))):
        values.append(FunctionValue(draw(lower_names), tuple(draw(st.lists(db_consts, min_size=1, max_size=2))), draw(db_consts)))
    return Database(atoms, values)


@settings(max_examples=150, deadline=None)
@given(databases())
def test_print_then_parse_gives_the_same_database(db):
    again = Database.from_string(db.to_string())
    assert again.atoms == db.atoms
    assert again.function_values == db.function_values
