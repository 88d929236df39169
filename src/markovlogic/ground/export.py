"""Writing a ground network out: a readable dump and weighted MaxSAT (WCNF).

Both build the text with numpy over whole arrays (one string piece per
literal, joined once); no Python loop runs per clause.

Dump: one ground clause per line, ``<weight> <literal> v <literal> ...``,
weight ``hard`` for hard clauses, literals such as ``!Smokes(Anna)``; merged
duplicates appear once with their summed weight. Exactly-one blocks follow as
``block <atom> <atom> ...`` lines.

WCNF: the 2022 MaxSAT Evaluation format (``h l1 l2 0`` hard, ``w l1 l2 0``
soft, no ``p`` line). Variable ``i+1`` is atom ``i``. Weights must be positive
integers, so every weight is multiplied by ``scale`` (default 10^6) and
rounded; clauses whose scaled weight rounds to 0 are left out (stated in a
comment). A clause with negative weight ``w`` (a reward for being false) is
encoded exactly with one auxiliary variable ``z``: hard ``!l v z`` for each
of its literals (the clause true forces ``z``) and soft ``!z`` with weight
``|w|``. Blocks become hard clauses (at least one value; no two values).
For any assignment of the atoms, the minimum WCNF cost is
``(sum of positive soft weights - score) * scale`` up to rounding, so a
MaxSAT optimum is a MAP world.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..io import write_text_atomic
from .assemble import block_pairs
from .network import GroundNetwork


def atom_names(net: GroundNetwork) -> np.ndarray:
    """Names ``P(A,B)`` of every atom, as an object array."""
    preds = np.array(net.predicates, dtype=object)
    consts = np.array(list(net.constants) + [""], dtype=object)
    args = net.atom_args
    names = preds[net.atom_pred] + "("
    for j in range(args.shape[1]):
        col = consts[np.where(args[:, j] >= 0, args[:, j], len(consts) - 1)]
        sep = np.where((args[:, j] >= 0) & (j > 0), ",", "")
        names = names + sep + col
    return names + ")"


def _join_clauses(head: np.ndarray, clause_start: np.ndarray, lit_text: np.ndarray, sep: str) -> str:
    """``head[c] + lit + sep + lit ... + "\\n"`` for every clause, built in one join."""
    n = len(head)
    sizes = np.diff(clause_start)
    n_lits = int(clause_start[-1])
    pieces = np.empty(n + 2 * n_lits, dtype=object)
    # piece layout per clause: head, then (literal, separator) per literal
    start = np.arange(n) + 2 * clause_start[:-1]
    pieces[start] = head
    clause_of_lit = np.repeat(np.arange(n), sizes)
    k = np.arange(n_lits) - clause_start[:-1][clause_of_lit]
    pos = start[clause_of_lit] + 1 + 2 * k
    pieces[pos] = lit_text
    last = k == sizes[clause_of_lit] - 1
    pieces[pos + 1] = np.where(last, "\n", sep)
    empty = sizes == 0
    if empty.any():   # (never produced by the grounder)
        pieces[start[empty]] = head[empty] + "\n"
    return "".join(pieces.tolist())


def dump_text(net: GroundNetwork) -> str:
    names = atom_names(net)
    lit_text = np.where(net.lit_positive, "", "!") + names[net.lit_atom]
    weights = np.char.mod("%.10g", net.weight).astype(object)
    head = np.where(net.is_hard, "hard", weights) + " "
    text = _join_clauses(head.astype(object), net.clause_start, lit_text, " v ")
    if net.n_blocks:
        bhead = np.full(net.n_blocks, "block ", dtype=object)
        text += _join_clauses(bhead, net.block_start, names[net.block_atoms], " ")
    return text


def write_dump(net: GroundNetwork, path: str | Path) -> None:
    """Every ground clause, one per line (see module docstring)."""
    write_text_atomic(path, dump_text(net))


def wcnf_text(net: GroundNetwork, scale: float = 1e6, names: bool = True) -> str:
    n = net.n_atoms
    var = net.lit_atom.astype(np.int64) + 1
    lit = np.where(net.lit_positive, var, -var).astype(np.int64)
    lit_text = np.char.mod("%d", lit).astype(object)
    soft = ~net.is_hard
    w = np.rint(np.abs(net.weight) * scale).astype(np.int64)
    pos = soft & (net.weight > 0) & (w > 0)
    neg = soft & (net.weight < 0) & (w > 0)
    dropped = int((soft & (w == 0)).sum())
    out: list[str] = []
    out.append("c markovlogic ground network, 2022 MaxSAT Evaluation WCNF format\n")
    out.append(f"c atoms {n}, clauses {net.n_clauses}, blocks {net.n_blocks}; variable i+1 is atom i\n")
    out.append(f"c weights multiplied by {scale:g} and rounded; {dropped} soft clause(s) with weight rounding to 0 left out\n")
    offset = float(net.weight[soft & (net.weight > 0)].sum())
    out.append(f"c score = {offset!r} - cost / {scale:g} (plus the network's constant_score {net.constant_score!r})\n")
    if names:
        an = atom_names(net)
        out.append("".join(("c atom " + np.char.mod("%d", np.arange(1, n + 1)).astype(object) + " " + an + "\n").tolist()))
    sizes = np.diff(net.clause_start)
    # hard and positive-weight clauses as they are
    keep = net.is_hard | pos
    if keep.any():
        sel = np.flatnonzero(keep)
        cs = np.zeros(len(sel) + 1, np.int64)
        np.cumsum(sizes[sel], out=cs[1:])
        lk = np.repeat(keep, sizes)
        head = np.where(net.is_hard[sel], "h ", np.char.mod("%d ", w[sel]).astype(object)).astype(object)
        body = _join_clauses(head, cs, lit_text[lk], " ")
        out.append(body.replace("\n", " 0\n"))
    # negative weights: auxiliary z per clause; hard (!l v z) per literal, soft (!z) with |w|
    if neg.any():
        sel = np.flatnonzero(neg)
        z = n + 1 + np.arange(len(sel), dtype=np.int64)
        lk = np.repeat(neg, sizes)
        zl = np.repeat(z, sizes[sel])
        neg_lits = -lit[lk]
        out.append("".join(("h " + np.char.mod("%d", neg_lits).astype(object) + " "
                            + np.char.mod("%d", zl).astype(object) + " 0\n").tolist()))
        out.append("".join((np.char.mod("%d", w[sel]).astype(object) + " -"
                            + np.char.mod("%d", z).astype(object) + " 0\n").tolist()))
    # blocks: at least one, at most one
    if net.n_blocks:
        bvar = np.char.mod("%d", net.block_atoms.astype(np.int64) + 1).astype(object)
        body = _join_clauses(np.full(net.n_blocks, "h ", dtype=object), net.block_start, bvar, " ")
        out.append(body.replace("\n", " 0\n"))
        a, b = block_pairs(net.block_start, net.block_atoms)
        if len(a):
            a = a.astype(np.int64) + 1
            b = b.astype(np.int64) + 1
            out.append("".join(("h -" + np.char.mod("%d", a).astype(object) + " -"
                                + np.char.mod("%d", b).astype(object) + " 0\n").tolist()))
    return "".join(out)


def write_wcnf(net: GroundNetwork, path: str | Path, scale: float = 1e6, names: bool = True) -> None:
    """The network as weighted MaxSAT (see module docstring)."""
    write_text_atomic(path, wcnf_text(net, scale=scale, names=names))
