"""Set-level feature statements in .mln files (issue 11)::

    <weight> all(x, y in SameBib: <condition>)          also some, most, count
    <weight> max(x, y in SameBib: <numeric term>) [<op> <number>]     also min
    <weight> size(SameBib) [<op> <number>]
    <weight> distinct(u; x in SameBib: <formula over x and u>) [<op> <number>]
    <weight> link sum(x, y in SameBib: <numeric term>)      also link max, min, mean
    <weight> link fraction(x, y in SameBib: <condition>)    also link count
    candidates(x, y in SameBib: <condition>)                 (no weight)
    <weight> similarity(x, y in SameBib: <similarity>)       a pair feature valued by a similarity

Linkage features (``link ...``) score a merge by the cross pairs of the two
clusters it joins (``cluster/kernels.py``); their term may be ``score(x,
y)``, the pair layer's score (``cluster/setfeatures.py``), and their
condition ``linked(x, y)``, "a candidate pair". ``candidates`` declares the
pairs that are compared at all (blocking).

(``<op>``: one of ``= != < > <= >=``; ``@`` before the weight fixes it.) A
statement whose first word is one of these kinds followed by that header is
taken out of the text before the LALR parser sees it (its lines become
blank, so line numbers stay right) and parsed here; its condition or term is
parsed by the ordinary grammar at its own line and column, so every error
points into the file. The rest of the checks (declared predicates, types)
happen when the model is built (``MLNBuilder.build``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import MLNSemanticError, MLNSyntaxError
from .ast import Compare, Pos

KINDS = ("all", "some", "most", "count", "max", "min", "distinct", "size", "candidates", "similarity")
LINK_KINDS = ("sum", "max", "min", "mean", "fraction", "count")
COMPARISONS = ("<=", ">=", "!=", "=", "<", ">")

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_HEAD = re.compile(
    rf"^(?P<indent>[ \t]*)(?P<weight>@?[ \t]*{_NUMBER}[ \t]+)?(?P<link>link[ \t]+)?"
    rf"(?P<kind>{'|'.join(sorted(set(KINDS) | set(LINK_KINDS), key=len, reverse=True))})[ \t]*\("
)
_NAME = r"[A-Za-z_][A-Za-z0-9_'\-]*"
_PAIR = re.compile(rf"^\s*(?P<vars>{_NAME}(?:\s*,\s*{_NAME})*)\s+in\s+(?P<pred>{_NAME})\s*:", re.S)
_DISTINCT = re.compile(rf"^\s*(?P<value>{_NAME})\s*;\s*(?P<var>{_NAME})\s+in\s+(?P<pred>{_NAME})\s*:", re.S)
_SIZE = re.compile(rf"^\s*(?P<pred>{_NAME})\s*$", re.S)
_TAIL = re.compile(rf"^\s*(?:(?P<op><=|>=|!=|=|<|>)\s*(?P<num>{_NUMBER}))?\s*(?P<rest>.*)$", re.S)
_CONTINUES = ("^", "=>", "<=>", ",", " v")


@dataclass
class RawAggregate:
    """An aggregate statement as written; turned into ``SetFeature`` at build."""

    kind: str
    predicate: str
    weight: float | None
    fixed: bool
    variables: tuple[str, ...]
    value_var: str | None
    body_text: str | None          # the condition / term text (None for size)
    body_pos: Pos | None           # where it starts
    op: str | None
    threshold: float | None
    pos: Pos
    pred_pos: Pos
    link: bool = False


def _err(cls, message: str, pos: Pos):
    return cls(message, file=pos.file, line=pos.line, column=pos.column)


def _code(line: str, in_block: bool) -> tuple[str, bool]:
    """The line without comments (block comments may span lines), as columns:
    comment characters become spaces so positions stay."""
    out = []
    i = 0
    in_str = False
    while i < len(line):
        ch = line[i]
        if in_block:
            if line.startswith("*/", i):
                in_block = False
                out.append("  ")
                i += 2
            else:
                out.append(" ")
                i += 1
            continue
        if in_str:
            out.append(ch)
            if ch == "\\" and i + 1 < len(line):
                out.append(line[i + 1])
                i += 2
                continue
            if ch == '"':
                in_str = False
            i += 1
            continue
        if ch == '"':
            in_str = True
            out.append(ch)
        elif line.startswith("//", i):
            out.append(" " * (len(line) - i))
            break
        elif line.startswith("/*", i):
            in_block = True
            out.append("  ")
            i += 2
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out), in_block


def _matching_paren(lines: list[str], row: int, col: int) -> tuple[int, int] | None:
    """(row, col) of the parenthesis closing the one at (row, col)."""
    depth = 0
    r, c = row, col
    while r < len(lines):
        line = lines[r]
        while c < len(line):
            ch = line[c]
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    return r, c
            c += 1
        r += 1
        c = 0
    return None


def extract_aggregates(text: str, filename: str) -> tuple[str, list[RawAggregate]]:
    """The text with aggregate statements blanked out, and those statements."""
    raw_lines = text.split("\n")
    code_lines: list[str] = []
    in_block = False
    for line in raw_lines:
        code, in_block = _code(line, in_block)
        code_lines.append(code)
    blank = [False] * len(raw_lines)
    found: list[RawAggregate] = []
    prev = ""
    row = 0
    while row < len(code_lines):
        code = code_lines[row]
        stripped = code.strip()
        m = _HEAD.match(code) if stripped and not prev.endswith(_CONTINUES) else None
        if m is not None:
            agg = _parse_one(code_lines, row, m, filename)
            if agg is not None:
                raw, end_row = agg
                found.append(raw)
                for r in range(row, end_row + 1):
                    blank[r] = True
                prev = ""
                row = end_row + 1
                continue
        if stripped:
            prev = stripped
        row += 1
    if not found:
        return text, []
    out = ["" if blank[i] else raw_lines[i] for i in range(len(raw_lines))]
    return "\n".join(out), found


def _name_index(text: str, name: str) -> int:
    """Where the name ``name`` stands alone in ``text``."""
    m = re.search(rf"(?<![A-Za-z0-9_'\-]){re.escape(name)}(?![A-Za-z0-9_'\-])", text)
    return m.start() if m else 0


def _parse_one(lines: list[str], row: int, m: re.Match, filename: str):
    kind = m.group("kind")
    link = m.group("link") is not None
    if link and kind not in LINK_KINDS:
        raise _err(MLNSyntaxError, f"'link {kind}' is not a linkage feature; write link "
                   f"{', link '.join(LINK_KINDS)}", Pos(filename, row + 1, m.start("kind") + 1))
    if not link and kind not in KINDS:
        return None
    open_col = m.end() - 1
    pos = Pos(filename, row + 1, m.start("kind") + 1)
    close = _matching_paren(lines, row, open_col)
    # the header inside the parentheses, up to the colon (or the close)
    first = lines[row][open_col + 1:]
    if kind == "size":
        if close is None or close[0] != row:
            return None
        inside = lines[row][open_col + 1:close[1]]
        sm = _SIZE.match(inside)
        if sm is None:
            return None
        pred = sm.group("pred")
        pred_pos = Pos(filename, row + 1, open_col + 2 + inside.index(pred))
        tail_row, tail_col = close[0], close[1] + 1
        variables: tuple[str, ...] = ()
        value_var = None
        body_text = None
        body_pos = None
    else:
        hm = (_DISTINCT if kind == "distinct" else _PAIR).match(first)
        if hm is None and not first.split(":")[0].isascii():
            # a character no name may hold: the message the grammar gives everywhere else
            k = next(i for i, ch in enumerate(first) if not ch.isascii())
            raise _err(MLNSyntaxError, f"unexpected character '{first[k]}'",
                       Pos(filename, row + 1, open_col + 2 + k))
        if hm is None:
            other = _PAIR.match(first) if kind == "distinct" else _DISTINCT.match(first)
            if other is not None or re.match(rf"^\s*{_NAME}(\s*[,;]\s*{_NAME})*\s+in\s", first):
                usage = ("distinct(u; x in P: formula)" if kind == "distinct"
                         else f"{kind}(x, y in P: {'term' if kind in ('max', 'min') else 'condition'})")
                raise _err(MLNSyntaxError, f"a set-level feature is written {usage}", pos)
            return None            # an ordinary atom whose predicate is named like a kind
        if close is None:
            raise _err(MLNSyntaxError, f"the parenthesis of {kind}( is never closed", pos)
        pred = hm.group("pred")
        pred_pos = Pos(filename, row + 1, open_col + 2 + hm.start("pred"))
        names = [hm.group("value"), hm.group("var")] if kind == "distinct" else hm.group("vars").split(",")
        if "v" in (n.strip() for n in names):
            raise _err(MLNSyntaxError, "'v' is the disjunction (Alchemy's 'or') and cannot name a variable; rename "
                                       "it, e.g. distinct(u; x in P: A(x, u)) or all(x, y in P: ...)",
                       Pos(filename, row + 1, open_col + 2 + _name_index(first, "v")))
        if kind == "distinct":
            variables = (hm.group("var"),)
            value_var = hm.group("value")
        else:
            variables = tuple(v.strip() for v in hm.group("vars").split(","))
            value_var = None
        # the body: from after the colon to the closing parenthesis
        body_col = open_col + 1 + hm.end()
        parts = []
        r, c = row, body_col
        while True:
            if r == close[0]:
                parts.append(lines[r][c:close[1]])
                break
            parts.append(lines[r][c:])
            r += 1
            c = 0
        body_text = "\n".join(parts)
        if not body_text.strip():
            raise _err(MLNSyntaxError, f"{kind}: the part after ':' is empty", pos)
        body_pos = Pos(filename, row + 1, body_col + 1)
        tail_row, tail_col = close[0], close[1] + 1
    tail = lines[tail_row][tail_col:]
    tm = _TAIL.match(tail)
    op = tm.group("op") if tm else None
    threshold = float(tm.group("num")) if tm and tm.group("num") else None
    rest = tm.group("rest").strip() if tm else tail.strip()
    if rest:
        where = Pos(filename, tail_row + 1, tail_col + 1 + tail.index(rest[0]))
        if rest == ".":
            raise _err(MLNSemanticError, "a set-level feature cannot be hard (it has a weight, not a period)", where)
        if kind == "candidates":
            raise _err(MLNSyntaxError, f"unexpected {rest.split()[0]!r} after candidates(...)", where)
        raise _err(MLNSyntaxError, f"unexpected {rest.split()[0]!r} after the set-level feature "
                                   "(expected a comparison such as '>= 3', or the end of the line)", where)
    weight = None
    fixed = False
    w = m.group("weight")
    if w:
        w = w.strip()
        fixed = w.startswith("@")
        weight = float(w.lstrip("@").strip())
    return RawAggregate(kind, pred, weight, fixed, variables, value_var, body_text, body_pos, op, threshold, pos,
                        pred_pos, link), tail_row


def parse_body(raw: RawAggregate):
    """The condition (a formula) or, for max/min, the numeric term, parsed by
    the grammar at its own place in the file."""
    from .frontend import frontend
    from .transform import RawFormula

    pos = raw.body_pos
    pad = " " * (pos.column - 1)
    numeric = raw.kind in ("max", "min", "similarity") or (raw.link and raw.kind in ("sum", "mean"))
    if numeric:
        text = pad + raw.body_text + " = 0\n"
    else:
        text = pad + raw.body_text + "\n"
    stmts = frontend("mln").parse(text, pos.file, pos.line - 1)
    formulas = [s for s in stmts if isinstance(s, RawFormula)]
    if len(stmts) != 1 or len(formulas) != 1 or formulas[0].weight is not None or formulas[0].period_pos is not None:
        raise _err(MLNSyntaxError, f"{raw.kind}: expected one {'term' if numeric else 'formula'} "
                                   "after ':'", pos)
    f = formulas[0].formula
    if numeric:
        if not isinstance(f, Compare):
            raise _err(MLNSyntaxError, f"{raw.kind}: expected a numeric term after ':'", pos)
        return None, f.left
    return f, None
