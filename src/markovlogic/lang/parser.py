"""Reading .mln, .db and query text into model objects.

Public functions (``model.MLN`` and ``model.Database`` call them):

* ``parse_mln_text(text, filename)`` / ``parse_mln_files(paths)``
* ``parse_db_text(text, filename, mln)`` / ``parse_db_files(paths, mln)``
* ``parse_queries(text, mln, filename)``

A .mln program is read statement by statement, in order, because the meaning
of a line can depend on what came before: ``Name(a, b)`` with neither weight
nor period is a predicate declaration (``a`` and ``b`` are type names) when
``Name`` is not yet declared, and a unit formula once it is.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import MarkovLogicError, MLNSemanticError, OptionError
from ..model import MLN, Database
from .aggregates import RawAggregate, extract_aggregates, parse_body
from .ast import (And, Atom, Compare, Const, FormulaDecl, Func, FunctionDecl, Not, Pos, PredicateDecl, Query,
                  SetFeature, Var)
from .checks import analyze_formula, check_database, check_queries, check_weight
from .dbfast import parse_db_lines
from .frontend import frontend
from .transform import (
    MutexArg,
    RawFormula,
    RawFunctionDecl,
    RawInclude,
    RawStatement,
    RawTypeDecl,
)

__all__ = [
    "parse_mln_text",
    "parse_mln_files",
    "parse_db_text",
    "parse_db_files",
    "parse_queries",
    "read_text",
]


# ------------------------------------------------------------------ files


def read_text(path: Path, pos: Pos | None = None) -> str:
    """A file's text (UTF-8, or Latin-1 if it is not valid UTF-8).

    A missing or unreadable file is an ``OptionError`` (or, for an
    ``#include``, an ``MLNSemanticError`` at the include's position).
    """
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise _file_error(f"file not found: {path}", pos) from None
    except IsADirectoryError:
        raise _file_error(f"is a directory, not a file: {path}", pos) from None
    except OSError as exc:
        raise _file_error(f"cannot read {path}: {exc.strerror or exc}", pos) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _check_readable(path: Path) -> None:
    """The errors of :func:`read_text` for a file that cannot be read, without reading it."""
    try:
        with open(path, "rb"):
            pass
    except FileNotFoundError:
        raise _file_error(f"file not found: {path}", None) from None
    except IsADirectoryError:
        raise _file_error(f"is a directory, not a file: {path}", None) from None
    except OSError as exc:
        raise _file_error(f"cannot read {path}: {exc.strerror or exc}", None) from None


def _file_error(message: str, pos: Pos | None) -> MarkovLogicError:
    if pos is None:
        return OptionError(message)
    return MLNSemanticError(message, file=pos.file, line=pos.line, column=pos.column)


class _Sources:
    """File name -> text lines, to attach the offending line to an error."""

    def __init__(self) -> None:
        self.lines: dict[str, list[str]] = {}

    def add(self, filename: str, text: str) -> None:
        self.lines[filename] = text.split("\n")

    def attach(self, err: MarkovLogicError) -> MarkovLogicError:
        if err.source_line is None and err.file in self.lines and err.line is not None:
            lines = self.lines[err.file]
            if 1 <= err.line <= len(lines):
                # a tab shown as one space keeps the caret under the column
                err.source_line = lines[err.line - 1].rstrip("\r").replace("\t", " ")
        return err


# ------------------------------------------------------------------ .mln


class MLNBuilder:
    """Accumulates declarations and formulas, statement by statement."""

    def __init__(self) -> None:
        self.types: dict[str, list[str]] = {}
        self._members: dict[str, set[str]] = {}
        self._declared: dict[str, tuple[frozenset[str], Pos]] = {}
        self.predicates: dict[str, PredicateDecl] = {}
        self.functions: dict[str, FunctionDecl] = {}
        self.formulas: list[FormulaDecl] = []
        self.aggregates: list[RawAggregate] = []
        self.sources = _Sources()
        self._including: list[Path] = []
        self._included: set[Path] = set()

    # -------------------------------------------------------------- input
    def add_file(self, path: Path, pos: Pos | None = None, shown: str | None = None) -> None:
        resolved = Path(path).resolve()
        if resolved in self._including:
            chain = " -> ".join(p.name for p in self._including[self._including.index(resolved):])
            raise MLNSemanticError(
                f"include cycle: {chain} -> {resolved.name}",
                file=pos.file if pos else str(path), line=pos.line if pos else None,
                column=pos.column if pos else None,
            )
        if resolved in self._included:
            return  # included before (diamond includes are read once)
        if pos is not None and not resolved.exists():
            raise MLNSemanticError(
                f"cannot include \"{shown or path}\": file not found ({resolved})",
                file=pos.file, line=pos.line, column=pos.column,
            )
        text = read_text(Path(path), pos)
        self._included.add(resolved)
        self._including.append(resolved)
        try:
            self.add_text(text, str(path), resolved.parent)
        finally:
            self._including.pop()

    def add_text(self, text: str, filename: str, base_dir: Path | None = None) -> None:
        self.sources.add(filename, text)
        text, aggregates = extract_aggregates(text, filename)
        self.aggregates.extend(aggregates)
        statements = frontend("mln").parse(text, filename)
        for stmt in statements:
            self.statement(stmt, base_dir)

    def statement(self, stmt: RawStatement, base_dir: Path | None) -> None:
        kind = type(stmt)
        if kind is RawFormula:
            self._formula(stmt)
        elif kind is RawTypeDecl:
            self._type_decl(stmt)
        elif kind is RawFunctionDecl:
            self._function_decl(stmt)
        elif kind is RawInclude:
            base = base_dir if base_dir is not None else Path.cwd()
            self.add_file(base / stmt.path, stmt.path_pos, shown=stmt.path)
        else:  # pragma: no cover
            raise MLNSemanticError(f"unexpected statement {stmt!r}")

    # -------------------------------------------------------------- types
    def _ensure_type(self, name: str) -> None:
        if name not in self.types:
            self.types[name] = []
            self._members[name] = set()

    def add_constant(self, type_name: str, const: str) -> None:
        self._ensure_type(type_name)
        members = self._members[type_name]
        if const not in members:
            members.add(const)
            self.types[type_name].append(const)

    def _type_decl(self, stmt: RawTypeDecl) -> None:
        constants = _expand_type_items(stmt)
        new = frozenset(constants)
        old = self._declared.get(stmt.name)
        if old is not None and old[0] != new:
            raise MLNSemanticError(
                f"type '{stmt.name}' is declared again with different constants "
                f"(first declared at line {old[1].line}, column {old[1].column})",
                file=stmt.pos.file, line=stmt.pos.line, column=stmt.pos.column,
            )
        if old is None:
            self._declared[stmt.name] = (new, stmt.pos)
        self._ensure_type(stmt.name)
        for const in constants:
            self.add_constant(stmt.name, const)

    # -------------------------------------------------------------- functions
    def _function_decl(self, stmt: RawFunctionDecl) -> None:
        decl = stmt.decl
        pos = decl.pos
        if decl.return_type == "equivalence":
            self._equivalence_decl(decl)
            return
        if decl.name in self.predicates:
            raise _semantic(f"'{decl.name}' is already declared as a predicate", pos)
        old = self.functions.get(decl.name)
        if old is not None:
            if (old.return_type, old.arg_types) != (decl.return_type, decl.arg_types):
                raise _semantic(
                    f"function '{decl.name}' is declared again differently (first at {_where(old.pos)})", pos
                )
            return
        for t in (decl.return_type, *decl.arg_types):
            self._ensure_type(t)
        self.functions[decl.name] = decl

    def _equivalence_decl(self, decl: FunctionDecl) -> None:
        """``equivalence P(t, t)``: a predicate that is an equivalence relation."""
        pos = decl.pos
        name = decl.name
        if len(decl.arg_types) != 2 or decl.arg_types[0] != decl.arg_types[1]:
            raise _semantic(
                f"an equivalence predicate takes two arguments of one type; '{name}' has "
                f"({', '.join(decl.arg_types)})", pos)
        if name in self.functions:
            raise _semantic(f"'{name}' is already declared as a function", pos)
        old = self.predicates.get(name)
        if old is not None:
            if old.arg_types != decl.arg_types or any(old.mutex):
                raise _semantic(f"predicate '{name}' is declared again differently (first at {_where(old.pos)})",
                                pos)
            if not old.equivalence:
                self.predicates[name] = PredicateDecl(name, old.arg_types, old.mutex, closed=old.closed,
                                                      pos=old.pos, equivalence=True)
            return
        self._ensure_type(decl.arg_types[0])
        self.predicates[name] = PredicateDecl(name, decl.arg_types, (False, False), pos=pos, equivalence=True)

    def _set_feature(self, raw: RawAggregate) -> SetFeature:
        """Check an aggregate statement against the declarations."""
        decl = self.predicates.get(raw.predicate)
        if decl is None:
            raise _semantic(f"undeclared predicate '{raw.predicate}'", raw.pred_pos)
        if decl.arity != 2 or decl.arg_types[0] != decl.arg_types[1]:
            raise _semantic(
                f"a set-level feature clusters an equivalence predicate; '{raw.predicate}' is not one "
                f"(it has arguments {', '.join(decl.arg_types) or 'none'})", raw.pred_pos)
        for word in ("all", "some", "most", "count", "max", "min", "distinct", "size", "candidates", "similarity"):
            if word in self.predicates:
                raise _semantic(f"'{word}' is declared as a predicate but also starts a set-level feature here; "
                                "rename the predicate", raw.pos)
        if raw.link or raw.kind == "candidates":
            return self._link_feature(raw, decl)
        kind = raw.kind
        if raw.op is not None and kind == "similarity":
            raise _semantic("similarity(...) is a pair feature valued by its similarity; it takes no comparison "
                            "(write a formula such as jaccard(x, y, P) >= 0.5 => Same(x, y) for a threshold)",
                            raw.pos)
        if raw.op is not None and kind in ("all", "some", "most"):
            raise _semantic(f"{kind}(...) is true or false already; a comparison applies to count, max, min, "
                            "size and distinct", raw.pos)
        check_weight(raw.weight, raw.pos, "set-level feature")
        body = term = None
        typ = decl.arg_types[0]
        if kind != "size":
            if kind != "distinct" and (len(raw.variables) != 2 or raw.variables[0] == raw.variables[1]):
                raise _semantic(f"{kind} ranges over pairs: write two different variables, "
                                f"{kind}(x, y in {raw.predicate}: ...)", raw.pos)
            if kind == "distinct" and raw.value_var == raw.variables[0]:
                raise _semantic("distinct counts a variable other than the member's: distinct(u; x in P: ...)",
                                raw.pos)
            body, term = parse_body(raw)
            # the pair (or member) variables take the predicate's type
            x = Var(raw.variables[0])
            y = Var(raw.variables[1]) if kind != "distinct" else x
            check = body if body is not None else Compare("=", term, Const("0"))
            check = And(Atom(raw.predicate, (x, y)), check)
            analysis = analyze_formula(check, self.predicates, self.functions)
            for type_name, const in analysis.constants:
                self.add_constant(type_name, const)
            used = _predicates_in(body) if body is not None else set()
            if raw.predicate in used:
                raise _semantic(f"the condition of a set-level feature cannot use {raw.predicate} itself "
                                "(it is what the clusters decide)", raw.body_pos)
            if kind == "distinct" and raw.value_var not in analysis.var_types:
                raise _semantic(f"distinct counts '{raw.value_var}', which the formula after ':' does not use",
                                raw.body_pos)
        return SetFeature(
            kind=kind, predicate=raw.predicate, weight=raw.weight, variables=tuple(raw.variables), body=body,
            term=term, value_var=raw.value_var, op=raw.op, threshold=raw.threshold, fixed=raw.fixed, pos=raw.pos,
        )

    def _link_feature(self, raw: RawAggregate, decl) -> SetFeature:
        """A linkage feature (``link sum|max|min|mean|fraction|count(x, y in P: ...)``) or the
        candidate pairs (``candidates(x, y in P: condition)``)."""
        kind = raw.kind
        what = f"link {kind}" if raw.link else kind
        if kind == "candidates":
            if raw.weight is not None:
                raise _semantic("candidates(...) declares the pairs compared at all; it takes no weight", raw.pos)
        else:
            check_weight(raw.weight, raw.pos, "linkage feature")
        if raw.op is not None:
            raise _semantic(f"{what}(...) takes no comparison; its value is the aggregate itself", raw.pos)
        if len(raw.variables) != 2 or raw.variables[0] == raw.variables[1]:
            raise _semantic(f"{what} ranges over pairs: write two different variables, "
                            f"{what}(x, y in {raw.predicate}: ...)", raw.pos)
        body, term = parse_body(raw)
        x, y = Var(raw.variables[0]), Var(raw.variables[1])
        special = None
        if term is not None and isinstance(term, Func) and term.name == "score":
            if len(term.args) != 2 or {getattr(a, "name", None) for a in term.args} != {x.name, y.name}:
                raise _semantic(f"score takes the pair's two variables: score({x.name}, {y.name})", raw.body_pos)
            special = "score"
        inner = body
        if isinstance(inner, Not):
            inner = inner.body
        if isinstance(inner, Atom) and inner.predicate == "linked" and "linked" not in self.predicates:
            if kind not in ("fraction", "count") or len(inner.args) != 2 or \
                    {getattr(a, "name", None) for a in inner.args} != {x.name, y.name}:
                raise _semantic(f"linked(x, y) (a candidate pair) is a condition of link fraction and link count, "
                                f"over the pair's two variables", raw.body_pos)
            special = "linked"
        if special is None:
            check = body if body is not None else Compare("=", term, Const("0"))
            check = And(Atom(raw.predicate, (x, y)), check)
            analysis = analyze_formula(check, self.predicates, self.functions)
            for type_name, const in analysis.constants:
                self.add_constant(type_name, const)
            used = _predicates_in(body) if body is not None else set()
            if raw.predicate in used:
                raise _semantic(f"the condition of {what} cannot use {raw.predicate} itself "
                                "(it is what the clusters decide)", raw.body_pos)
        return SetFeature(
            kind=kind, predicate=raw.predicate, weight=raw.weight, variables=tuple(raw.variables), body=body,
            term=term, value_var=None, op=None, threshold=None, fixed=raw.fixed, pos=raw.pos, link=raw.link,
        )

    # -------------------------------------------------------------- formulas
    def _formula(self, stmt: RawFormula) -> None:
        formula = stmt.formula
        if type(formula) is Atom and stmt.weight is None and stmt.period_pos is None:
            decl = self._as_declaration(formula)
            if decl is not None:
                return
        if stmt.weight is not None and stmt.period_pos is not None:
            raise _semantic(
                "a formula has either a weight (soft) or a final period (hard), not both", stmt.period_pos
            )
        check_weight(stmt.weight, stmt.pos)
        analysis = analyze_formula(formula, self.predicates, self.functions)
        for type_name, const in analysis.constants:
            self.add_constant(type_name, const)
        self.formulas.append(
            FormulaDecl(
                formula,
                weight=stmt.weight,
                hard=stmt.period_pos is not None,
                fixed=stmt.fixed,
                pos=stmt.pos,
            )
        )

    def _as_declaration(self, atom: Atom) -> PredicateDecl | None:
        """Declare ``atom``'s predicate if the line is a declaration, else None."""
        args = atom.args
        has_mutex = any(type(a) is MutexArg for a in args)
        looks_like_decl = all(
            (type(a) is Var and not a.plus) or type(a) is MutexArg for a in args
        )
        name = atom.predicate
        if name in self.predicates:
            old = self.predicates[name]
            if looks_like_decl and tuple(a.name for a in args) == old.arg_types:
                # The declaration again (a schema file, then a program that
                # repeats it): a later '!' or Tuffy '*' refines it.
                mutex = tuple(type(a) is MutexArg for a in args)
                if has_mutex and mutex != old.mutex and any(old.mutex):
                    raise _semantic(
                        f"predicate '{name}' is declared again with different '!' arguments "
                        f"(first at {_where(old.pos)})",
                        atom.pos,
                    )
                new = PredicateDecl(
                    name, old.arg_types, mutex if has_mutex else old.mutex,
                    closed=old.closed or atom.star, pos=old.pos,
                )
                if new != old:
                    self.predicates[name] = new
                return new
            if not has_mutex:
                return None  # a unit formula over a declared predicate
            raise _semantic(f"predicate '{name}' is already declared (at {_where(old.pos)})", atom.pos)
        if not looks_like_decl:
            if has_mutex:
                bad = next(a for a in args if not ((type(a) is Var and not a.plus) or type(a) is MutexArg))
                raise _semantic(
                    "a predicate declaration lists argument types (lower-case names)",
                    getattr(bad, "pos", atom.pos),
                )
            if (
                name not in self.predicates
                and args
                and all(type(a) is Const and a.name[:1].isupper() for a in args)
                and name not in self.functions
            ):
                raise _semantic(
                    f"undeclared predicate '{name}' (to declare it, write its argument types in lower case: "
                    f"{name}({', '.join(a.name[:1].lower() + a.name[1:] for a in args)}))",
                    atom.pos,
                )
            return None  # a formula; the analysis reports the undeclared predicate
        if name in self.functions:
            raise _semantic(f"'{name}' is already declared as a function", atom.pos)
        arg_types = tuple(a.name for a in args)
        mutex = tuple(type(a) is MutexArg for a in args)
        decl = PredicateDecl(name, arg_types, mutex, closed=atom.star, pos=atom.pos)
        for t in arg_types:
            self._ensure_type(t)
        self.predicates[name] = decl
        return decl

    # -------------------------------------------------------------- result
    def build(self) -> MLN:
        features = [self._set_feature(raw) for raw in self.aggregates]
        return MLN(
            types={name: tuple(consts) for name, consts in self.types.items()},
            predicates=dict(self.predicates),
            functions=dict(self.functions),
            formulas=list(self.formulas),
            set_features=features,
            declared_types=tuple(self._declared),
        )


def _predicates_in(formula) -> set[str]:
    from .checks import subformulas

    return {f.predicate for f in subformulas(formula) if isinstance(f, Atom)}


def _expand_type_items(stmt: RawTypeDecl) -> list[str]:
    items = stmt.items
    if not any(t.type == "ELLIPSIS" for t in items):
        return [str(t) for t in items]
    if (
        len(items) == 3
        and items[1].type == "ELLIPSIS"
        and items[0].type == "NUMBER"
        and items[2].type == "NUMBER"
        and items[0].isdigit()
        and items[2].isdigit()
    ):
        lo, hi = int(items[0]), int(items[2])
        if lo > hi:
            raise MLNSemanticError(
                f"empty integer range {{{lo}, ..., {hi}}}: the first value exceeds the last",
                file=stmt.pos.file, line=items[0].line, column=items[0].column,
            )
        if hi - lo > 10_000_000:
            raise MLNSemanticError(
                f"integer range {{{lo}, ..., {hi}}} is too large", file=stmt.pos.file,
                line=stmt.pos.line, column=stmt.pos.column,
            )
        return [str(i) for i in range(lo, hi + 1)]
    bad = next(t for t in items if t.type == "ELLIPSIS")
    raise MLNSemanticError(
        "an integer range is written {first, ..., last} with two integers",
        file=stmt.pos.file, line=bad.line, column=bad.column,
    )


def _semantic(message: str, pos: Pos | None) -> MLNSemanticError:
    if pos is None:
        return MLNSemanticError(message)
    return MLNSemanticError(message, file=pos.file, line=pos.line, column=pos.column)


def _where(pos: Pos | None) -> str:
    return f"line {pos.line}, column {pos.column}" if pos is not None else "elsewhere"


def _guard(builder_sources: _Sources, fn, *args):
    try:
        return fn(*args)
    except MarkovLogicError as err:
        raise builder_sources.attach(err) from None
    except RecursionError:
        raise MLNSemanticError("formula nested too deeply") from None


def parse_mln_text(text: str, filename: str = "<string>") -> MLN:
    """Parse one .mln program given as text (includes resolve from the cwd)."""
    text = text.removeprefix("\ufeff")
    builder = MLNBuilder()
    _guard(builder.sources, builder.add_text, text, filename, None)
    return _guard(builder.sources, builder.build)


def parse_mln_files(paths: list[Path]) -> MLN:
    """Parse several .mln files as one program, in order."""
    check_model_size([Path(p) for p in paths])
    builder = MLNBuilder()
    for path in paths:
        _guard(builder.sources, builder.add_file, Path(path))
    return _guard(builder.sources, builder.build)


# peak memory of parsing and converting a model, per byte of .mln text
# (measured: 786 MB for a 5 MB file of 164,000 formulas, 188 MB for 1 MB)
PARSE_BYTES_PER_BYTE = 160


def check_model_size(paths: list[Path]) -> None:
    """Refuse, before reading them, model files whose parse would not fit the
    memory budget (``resources.memory_budget``)."""
    from ..errors import ResourceError
    from ..resources import format_bytes, memory_budget

    size = 0
    for p in paths:
        try:
            size += p.stat().st_size
        except OSError:
            pass                     # reported by add_file with its own message
    need = size * PARSE_BYTES_PER_BYTE
    budget = memory_budget()
    if need > budget:
        raise ResourceError(
            f"the model files hold {format_bytes(size)} of text; parsing and converting them needs about "
            f"{format_bytes(need)} ({PARSE_BYTES_PER_BYTE} bytes per byte), over the memory budget of "
            f"{format_bytes(budget)}: split the model, or raise the budget with --memory-limit")


# ------------------------------------------------------------------ .db


def parse_db_text(text: str, filename: str = "<string>", mln: MLN | None = None) -> Database:
    """Parse evidence text; with ``mln``, check it against the model."""
    from .dbcolumns import ColumnReader, LazyAtoms

    text = text.removeprefix("\ufeff")
    sources = _Sources()
    sources.add(filename, text)
    reader = ColumnReader()
    if _guard(sources, reader.read_text, text, filename):
        cols = reader.finish()
        db = Database(LazyAtoms(cols), reader.function_values, columns=cols)
    else:
        atoms, values = _guard(sources, parse_db_lines, text, filename)
        db = Database(atoms, values)
    if mln is not None:
        _guard(sources, check_database, db, mln)
    return db


class _FileSources(_Sources):
    """Attaches the offending line to an error by reading it again from its
    file (a large evidence file is never held as text)."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: dict[str, Path] = {}

    def attach(self, err: MarkovLogicError) -> MarkovLogicError:
        if err.source_line is None and err.file in self.paths and err.file not in self.lines and err.line:
            try:
                text = read_text(self.paths[err.file])
            except MarkovLogicError:
                return err
            self.add(err.file, text)
        return super().attach(err)


def parse_db_files(paths: list[Path], mln: MLN | None = None) -> Database:
    """Parse several .db files into one database (in order): atom lines into
    columns (``dbcolumns.py``), a file with a block comment as text."""
    from .dbcolumns import ColumnReader, EvidenceColumns, LazyAtoms

    sources = _FileSources()
    reader = ColumnReader()
    text_atoms: list = []
    text_values: list = []
    for path in paths:
        _check_readable(Path(path))
    # small evidence goes to the text path whole: the column scanner is compiled
    # code, which costs a process about 0.5 s to load (jit.SMALL_ELEMENTS)
    as_text = _total_bytes(paths) <= SMALL_DB_BYTES
    for path in paths:
        name = str(path)
        sources.paths[name] = Path(path)
        if not as_text and _guard(sources, reader.read_file, Path(path), name):
            continue
        text = read_text(Path(path))
        sources.add(name, text)
        a, v = _guard(sources, parse_db_lines, text, name)
        text_atoms.extend(a)
        text_values.extend(v)
    cols = reader.finish()
    values = reader.function_values
    if text_atoms or text_values:
        # files read as text join as parsed atoms (in file order)
        cols = _concat_columns(cols, EvidenceColumns.from_atoms(text_atoms)) if text_atoms else cols
        values = values + text_values
    db = Database(LazyAtoms(cols), values, columns=cols)
    if mln is not None:
        _guard(sources, check_database, db, mln)
    return db


SMALL_DB_BYTES = 1 << 16
"""Evidence files of at most this many bytes in all are read by :mod:`.dbfast`
(regular expression and lark, the same language), not by the compiled column
scanner of :mod:`.dbcolumns`. Measured (CPU): the text path reads 17 KB in
9 ms, 67 KB in 19 ms, 168 KB in 52 ms; the scanner 1-3 ms once numba is
loaded, but loading it costs a process about 0.5 s. At this size a run that
loads numba anyway loses under 20 ms; one that need not (a small network)
saves the 0.5 s."""


def _total_bytes(paths) -> int:
    total = 0
    for p in paths:
        try:
            total += Path(p).stat().st_size
        except OSError:
            return SMALL_DB_BYTES + 1        # let the reader report it
    return total


def _concat_columns(a, b):
    """Columns of two readings as one (b's files after a's)."""
    from .dbcolumns import EvidenceColumns, PredRows

    import numpy as np

    out = EvidenceColumns(files=a.files + b.files, consts=list(a.consts))
    ids = {c: k for k, c in enumerate(out.consts)}
    remap = np.zeros(len(b.consts), dtype=np.int32)
    for k, c in enumerate(b.consts):
        j = ids.get(c)
        if j is None:
            j = ids[c] = len(out.consts)
            out.consts.append(c)
        remap[k] = j
    out.texts = dict(a.texts)
    out.texts.update({f + len(a.files): t for f, t in b.texts.items()})
    for key in list(dict.fromkeys(list(a.preds) + list(b.preds))):
        ra, rb = a.preds.get(key), b.preds.get(key)
        if rb is None:
            out.preds[key] = ra
            continue
        rb = PredRows(rb.name, rb.arity, remap[rb.args] if len(rb.args) else rb.args, rb.truth, rb.line,
                      (rb.file + len(a.files)).astype(np.int16), dict(rb.exact_pos), rb.sub)
        if ra is None:
            out.preds[key] = rb
            continue
        n = len(ra)
        out.preds[key] = PredRows(ra.name, ra.arity, np.concatenate([ra.args, rb.args]),
                                  np.concatenate([ra.truth, rb.truth]), np.concatenate([ra.line, rb.line]),
                                  np.concatenate([ra.file, rb.file]),
                                  {**ra.exact_pos, **{n + i: p for i, p in rb.exact_pos.items()}},
                                  None if ra.sub is None and rb.sub is None else np.concatenate(
                                      [ra.sub if ra.sub is not None else np.zeros(n, np.int32),
                                       rb.sub if rb.sub is not None else np.zeros(len(rb), np.int32)]))
    return out


# ------------------------------------------------------------------ queries


def parse_queries(text: str, mln: MLN | None = None, filename: str = "<query>") -> list[Query]:
    """Parse queries: comma- or line-separated predicate names and atoms whose
    arguments are variables or constants (``Smokes,Cancer,advisedBy(x,Ida)``)."""
    sources = _Sources()
    sources.add(filename, text)
    queries = _guard(sources, frontend("queries").parse, text, filename)
    if mln is not None:
        _guard(sources, check_queries, queries, mln)
    return queries
