"""Which predicates are closed-world, open-world, queried: checked before any work.

Alchemy's rules (user manual, section 3.4): a predicate with at least one
grounding in the evidence is closed-world (an atom not listed is false) unless
it is queried or listed open (``-o``); every other predicate is open-world
(an atom not listed is unknown) unless listed closed (``-c``). Tuffy's ``*``
before a declaration makes a predicate closed-world. Query predicates are
always open. Contradictory options are errors, not guesses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from ..errors import OptionError, QueryError
from ..lang.ast import Const, Query, Var
from ..model import MLN


@dataclass(frozen=True)
class WorldSpec:
    """The resolved options: query predicates and the closed-world set."""

    query_predicates: frozenset[str]
    closed: frozenset[str]          # closed-world predicates
    explicit_queries: bool          # False: no query given, every unknown atom is a query atom


def _names(option: Sequence[str] | str | None) -> list[str]:
    if option is None:
        return []
    if isinstance(option, str):
        option = [option]
    out: list[str] = []
    for item in option:
        out.extend(x.strip() for x in str(item).split(",") if x.strip())
    return out


def check_queries(mln: MLN, queries: Iterable[Query]) -> None:
    """Every query names a declared predicate with the right arity and only
    variables and constants as arguments."""
    for q in queries:
        pos = q.pos
        where = dict(file=pos.file, line=pos.line, column=pos.column) if pos else {}
        decl = mln.predicates.get(q.predicate)
        if decl is None:
            raise QueryError(f"query predicate {q.predicate!r} is not declared", **where)
        if q.args is not None:
            if len(q.args) != decl.arity:
                raise QueryError(
                    f"query atom {q.predicate} has {len(q.args)} argument(s); "
                    f"{q.predicate} is declared with {decl.arity}",
                    **where,
                )
            for t in q.args:
                if not isinstance(t, (Var, Const)):
                    raise QueryError(
                        f"query atom {q.predicate}: arguments must be variables or constants",
                        **where,
                    )


def resolve_world(
    mln: MLN,
    listed_predicates: set[str],
    queries: Sequence[Query] | None,
    closed: Sequence[str] | str | None = (),
    open_: Sequence[str] | str | None = (),
    query_truth: bool = False,
) -> WorldSpec:
    """Apply Alchemy's closed/open-world rules.

    ``listed_predicates``: predicates with at least one atom in the evidence
    (for ``query_truth``, the query predicates' atoms are labels, not evidence,
    but that does not change which predicates are open).
    """
    closed_opt = _names(closed)
    open_opt = _names(open_)
    for opt, names in (("-c", closed_opt), ("-o", open_opt)):
        for name in names:
            if name not in mln.predicates:
                hint = (" (-o/--open lists open-world predicates, as in Alchemy's infer; the result file is -r)"
                        if opt == "-o" else "")
                raise OptionError(f"{opt}: predicate {name!r} is not declared{hint}")
    both = sorted(set(closed_opt) & set(open_opt))
    if both:
        raise OptionError(f"predicate(s) {', '.join(both)} listed both closed-world (-c) and open-world (-o)")
    queries = list(queries or [])
    check_queries(mln, queries)
    query_preds = frozenset(q.predicate for q in queries)
    for name in closed_opt:
        if name in query_preds:
            raise OptionError(f"-c: {name} is a query predicate; query predicates are open-world")
    for name in sorted(query_preds):
        if mln.predicates[name].closed:
            raise OptionError(
                f"{name} is declared closed-world evidence (leading '*') and cannot be queried"
            )
    for name in open_opt:
        if mln.predicates[name].closed:
            raise OptionError(f"-o: {name} is declared closed-world evidence (leading '*')")
    closed_set = set()
    open_set = set(open_opt)
    for name, decl in mln.predicates.items():
        if name in query_preds:
            continue
        if decl.closed or name in closed_opt:
            closed_set.add(name)
        elif name in listed_predicates and name not in open_set:
            closed_set.add(name)
    return WorldSpec(
        query_predicates=query_preds,
        closed=frozenset(closed_set),
        explicit_queries=bool(queries),
    )
