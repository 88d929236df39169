"""The public model objects: ``MLN`` (declarations and weighted formulas) and
``Database`` (evidence).

They are plain containers with value equality; parsing lives in ``lang/`` and
printing back to Alchemy syntax in ``lang/printer.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Union

from .lang.ast import (
    EvidenceAtom,
    FormulaDecl,
    SetFeature,
    FunctionDecl,
    FunctionValue,
    PredicateDecl,
)


if TYPE_CHECKING:
    from .cluster.agglomerative import AgglomerativeOptions
    from .cluster.mh import MHOptions
    from .infer.lazy import LazyOptions
    from .infer.mcsat import MCSATOptions
    from .infer.mh import AtomMHOptions
    from .infer.multitask_mh import MultiTaskOptions
    from .infer.sgmp import SGMPOptions
    from .learn.piecewise import PiecewiseOptions
    from .learn.samplerank_core import SampleRankOptions
    from .options import (CPIOptions, CPSATOptions, DiscriminativeOptions, ExactMAPOptions, ExactMarginalsOptions,
                          GibbsOptions, ILPOptions, MaxWalkSATOptions, MIRAOptions, PerceptronOptions, PLLOptions)
    from .parallel.options import ParallelOptions

    MapOptions = Union[ILPOptions, MaxWalkSATOptions, CPIOptions, CPSATOptions, ExactMAPOptions, AtomMHOptions,
                       SGMPOptions, MultiTaskOptions, MHOptions, AgglomerativeOptions]
    MarginalOptions = Union[MCSATOptions, GibbsOptions, ExactMarginalsOptions, AtomMHOptions, MultiTaskOptions,
                            MHOptions]
    LearnOptions = Union[DiscriminativeOptions, PLLOptions, PerceptronOptions, MIRAOptions, SampleRankOptions,
                         PiecewiseOptions]


@dataclass
class MLN:
    """A Markov logic network: types, predicates, functions and weighted formulas.

    ``types`` maps a type name to the constants declared for it (in order;
    types that appear only in predicate declarations map to ``()``).
    """

    types: dict[str, tuple[str, ...]] = field(default_factory=dict)
    predicates: dict[str, PredicateDecl] = field(default_factory=dict)
    functions: dict[str, FunctionDecl] = field(default_factory=dict)
    formulas: list[FormulaDecl] = field(default_factory=list)
    set_features: list[SetFeature] = field(default_factory=list)
    # types declared with a constant list (``person = {Anna, Bob}``), as opposed
    # to types whose constants come from predicates, formulas and evidence
    declared_types: tuple[str, ...] = field(default=(), compare=False)
    # the text the model was read from, and a snapshot of what it held then:
    # ``save`` writes the text as written (comments and all) while the model
    # is unchanged
    source: str | None = field(default=None, compare=False, repr=False)
    _source_state: tuple | None = field(default=None, compare=False, repr=False)

    def _state(self) -> tuple:
        return (dict(self.types), dict(self.predicates), dict(self.functions), list(self.formulas),
                list(self.set_features))

    def remember_source(self, text: str) -> "MLN":
        """Record ``text`` as the model's source (see :meth:`save`); returns ``self``."""
        self.source = text
        self._source_state = self._state()
        return self

    # ------------------------------------------------------------ reading
    @classmethod
    def from_file(cls, path: str | Path | list[str | Path]) -> "MLN":
        """Parse one .mln file (or several, read as one program in order)."""
        from .checks import check_paths
        from .lang.parser import parse_mln_files

        paths = check_paths(path, "path")
        mln = parse_mln_files(paths)
        try:
            texts = [p.read_text(encoding="utf-8-sig") for p in paths]
        except (OSError, UnicodeDecodeError):
            return mln
        if not any("#include" in t for t in texts):     # an include's path is relative to its file
            mln.remember_source("\n".join(t if t.endswith("\n") else t + "\n" for t in texts))
        return mln

    @classmethod
    def from_string(cls, text: str, filename: str = "<string>") -> "MLN":
        from .checks import check_text
        from .lang.parser import parse_mln_text

        mln = parse_mln_text(check_text(text, "text"), filename=check_text(filename, "filename"))
        return mln.remember_source(text) if "#include" not in text else mln

    # ------------------------------------------------------------ inference
    def ground(self, db: "Database | list[Database]", queries=None, *, closed: Sequence[str] = (),
               open_: Sequence[str] = (), db_path: str | Path | None = None, **options):
        """The ground Markov network (``GroundNetwork``) for this evidence."""
        from .api import ground_model

        return ground_model(self, db, queries, closed=closed, open_=open_, db_path=db_path, **options)

    def map(self, db: "Database | list[Database]", queries=None, method: str | None = None,
            options: "MapOptions | None" = None, *, closed: Sequence[str] = (), open_: Sequence[str] = (),
            db_path: str | Path | None = None, parallel: "ParallelOptions | None" = None,
            lazy: "LazyOptions | bool | None" = None, **kwargs):
        """The most likely world (``MapAnswer``: ``.atoms``, ``.frame``, ``.score``, ``.bound``).

        ``options``: the method's options object (:mod:`markovlogic.options`:
        :class:`~markovlogic.options.ILPOptions`, ``MaxWalkSATOptions``,
        ``CPIOptions``, ``CPSATOptions``, ``ExactMAPOptions``, ``AtomMHOptions``,
        ``SGMPOptions``, ``MultiTaskOptions``, ``MHOptions`` and
        ``AgglomerativeOptions`` over clusterings); the method follows from it
        when not named. ``method`` defaults to ``"ilp"`` (``"maxwalksat"`` with
        ``lazy``). ``closed``/``open_``: predicates to treat as closed/open
        world; ``db_path``: keep the evidence in this DuckDB file; ``parallel``:
        threads and Ray; ``lazy``: lazy inference. Keyword options (the
        options' fields) are accepted too."""
        from .api import map_inference
        from .options import merge

        method, kwargs = merge("map", method, options, kwargs)
        if parallel is not None:
            kwargs["parallel"] = parallel
        if lazy is not None:
            kwargs["lazy"] = lazy
        return map_inference(self, db, queries, method=method, closed=closed, open_=open_, db_path=db_path,
                             **kwargs)

    def infer(self, db: "Database | list[Database]", queries=None, method: str | None = None,
              options: "MarginalOptions | None" = None, *, closed: Sequence[str] = (), open_: Sequence[str] = (),
              db_path: str | Path | None = None, parallel: "ParallelOptions | None" = None,
              lazy: "LazyOptions | bool | None" = None, **kwargs):
        """Marginal probabilities of the query atoms (``Marginals``: ``.frame``, ``.as_dict()``).

        ``options``: :class:`~markovlogic.options.MCSATOptions` (the default
        method, ``"mcsat"``), ``GibbsOptions``, ``ExactMarginalsOptions``,
        ``AtomMHOptions``, ``MultiTaskOptions`` or ``MHOptions`` over
        clusterings; the rest as for :meth:`map`."""
        from .api import marginal_inference
        from .options import merge

        method, kwargs = merge("marginals", method, options, kwargs)
        if parallel is not None:
            kwargs["parallel"] = parallel
        if lazy is not None:
            kwargs["lazy"] = lazy
        return marginal_inference(self, db, queries, method=method or "mcsat", closed=closed, open_=open_,
                                  db_path=db_path, **kwargs)

    def learn(self, db: "Database | list[Database]", query_predicates=None, method: str | None = None,
              options: "LearnOptions | None" = None, *, multiple_databases: bool = False, drop_hard: bool = False,
              hidden: Sequence[str] | str | None = None, em: str | None = None, callback=None,
              parallel: "ParallelOptions | None" = None, **kwargs) -> "MLN":
        """A new MLN with weights learned from the training database(s).

        ``options``: :class:`~markovlogic.options.DiscriminativeOptions`
        (``"dn"``, the default, or ``"scg"``), ``PLLOptions``,
        ``PerceptronOptions``, ``MIRAOptions``, ``SampleRankOptions`` or
        ``PiecewiseOptions``; the method follows from it when not named.
        ``multiple_databases``: each database an independent world;
        ``drop_hard``: learn without the hard formulas; ``hidden``/``em``:
        learning with unknown atoms; ``callback(row)`` per iteration (True
        stops). Keyword options are accepted too."""
        from .checks import check_databases
        from .learn.api import learn_weights
        from .options import merge

        method, kwargs = merge("learn", method, options, kwargs)
        check_databases(db)
        dbs = [db] if isinstance(db, Database) else list(db)
        for name, value, default in (("multiple_databases", multiple_databases, False), ("drop_hard", drop_hard, False),
                                     ("hidden", hidden, None), ("em", em, None), ("callback", callback, None),
                                     ("parallel", parallel, None)):
            if value is not default:
                kwargs[name] = value
        return learn_weights(self, dbs, query_predicates=query_predicates, method=method or "dn", **kwargs)

    # ------------------------------------------------------------ writing
    def to_string(self) -> str:
        from .lang.printer import print_mln

        return print_mln(self)

    def to_clauses(self) -> str:
        """The model with every formula as its CNF clauses, one per line, each
        with its share of the formula's weight (as Alchemy learns and writes
        them); hard clauses end with a period."""
        from .lang.printer import format_formula_decl, print_mln
        from .lang.ast import FormulaDecl
        from .learn.output import clause_formula
        from .logic.cnf import compile_mln_detailed

        header = MLN(types=dict(self.types), predicates=dict(self.predicates), functions=dict(self.functions),
                     declared_types=self.declared_types)
        lines = print_mln(header).rstrip("\n").split("\n") if (self.types or self.predicates) else []
        if lines and lines[-1] != "":
            lines.append("")
        for decl, comp in zip(self.formulas, compile_mln_detailed(self)):
            if len(comp.templates) != 1 or comp.templates[0].plus_vars:
                lines.append("// " + format_formula_decl(decl))
            for t in comp.templates:
                weight = None if t.hard else t.weight
                lines.append(format_formula_decl(FormulaDecl(clause_formula(t), weight=weight, hard=t.hard,
                                                             fixed=decl.fixed)))
        from .lang.printer import format_set_feature

        lines.extend(format_set_feature(f) for f in self.set_features)
        return "\n".join(lines).rstrip("\n") + "\n"

    def save(self, path: str | Path, *, clauses: bool = False) -> None:
        """Write the model to ``path`` (atomically) as the user wrote it: the
        text it was read from (comments and layout kept) while the model is
        unchanged, else every formula as written (not as CNF); a learned
        model's formulas keep their text where one weight was learned for
        them. ``clauses=True`` writes the CNF clauses instead (:meth:`to_clauses`)."""
        from .io import write_text_atomic

        if clauses:
            text = self.to_clauses()
        elif self.source is not None and self._source_state == self._state():
            text = self.source
        else:
            text = self.to_string()
        write_text_atomic(Path(path), text)

    def __str__(self) -> str:
        return self.to_string()


@dataclass
class Database:
    """Evidence: ground atoms with truth values and function values.

    A database read from files keeps its atoms as columns (``columns``, see
    ``lang/dbcolumns.py``); ``atoms`` is then a read-only sequence that makes
    the atom objects when iterated."""

    atoms: list[EvidenceAtom] = field(default_factory=list)
    function_values: list[FunctionValue] = field(default_factory=list)
    columns: object = field(default=None, compare=False, repr=False)

    @classmethod
    def from_file(cls, path: str | Path | list[str | Path], mln: MLN | None = None) -> "Database":
        """Parse one .db file (or several, concatenated). With ``mln``, check
        every atom against its declarations."""
        from .checks import check_model, check_paths
        from .lang.parser import parse_db_files

        if mln is not None:
            check_model(mln)
        return parse_db_files(check_paths(path, "path"), mln=mln)

    @classmethod
    def from_files(cls, paths: "list[str | Path]", mln: MLN | None = None) -> "Database":
        """Parse several .db files into one database (one world: their atoms
        together), as ``mln infer -e a.db,b.db`` does. With ``mln``, check every
        atom against its declarations."""
        from .checks import ArgumentTypeError

        if isinstance(paths, (str, Path)):
            raise ArgumentTypeError("from_files takes a list of paths; for one file use Database.from_file(path)")
        return cls.from_file(list(paths), mln=mln)

    @classmethod
    def from_frame(cls, frame, predicate: str, *, mln: MLN | None = None, columns: "list[str] | None" = None,
                   truth: str | None = "truth") -> "Database":
        """Evidence atoms of ``predicate`` from a pandas DataFrame: one atom per
        row, its arguments the values of ``columns`` in order (default: every
        column but ``truth``), written as constants (numbers as they print,
        other values quoted when they are not plain names). The ``truth``
        column, if present, holds True (the atom is true), False (false) or a
        missing value (unknown, ``?``); without it every atom is true.
        Errors name the row (``<frame P>:ROW``). With ``mln``, the atoms are
        checked against its declarations. Several predicates: one frame each,
        then ``Database.concat``."""
        from .checks import ArgumentTypeError, check_text

        check_text(predicate, "predicate")
        if not hasattr(frame, "columns") or not hasattr(frame, "itertuples"):
            raise ArgumentTypeError(f"from_frame takes a pandas DataFrame, got {type(frame).__name__}")
        names = [c for c in frame.columns if c != truth] if columns is None else list(columns)
        missing = [c for c in names if c not in frame.columns]
        if missing:
            from .errors import OptionError

            raise OptionError(f"from_frame: no column {missing[0]!r} in the frame (it has "
                              f"{', '.join(map(str, frame.columns))})")
        if not names:
            from .errors import OptionError

            raise OptionError("from_frame: the frame has no argument column")
        import pandas as pd

        args = [frame[c].map(_constant_text) for c in names]
        joined = args[0].astype(str)
        for a in args[1:]:
            joined = joined + "," + a.astype(str)
        if truth is not None and truth in frame.columns:
            t = frame[truth]
            sign = pd.Series("?", index=frame.index, dtype=object)
            known = t.notna()
            sign[known] = t[known].map(lambda v: "" if _truth_value(v, truth) else "!")
        else:
            sign = pd.Series("", index=frame.index, dtype=object)
        text = "".join((sign + predicate + "(" + joined + ")\n").tolist())
        return cls.from_string(text, filename=f"<frame {predicate}>", mln=mln)

    @classmethod
    def concat(cls, databases: "list[Database]", mln: MLN | None = None) -> "Database":
        """One database (one world) of several, e.g. one ``from_frame`` per predicate."""
        text = "".join(d.to_string() if d.to_string().endswith("\n") or not len(d) else d.to_string() + "\n"
                       for d in databases)
        return cls.from_string(text, filename="<concat>", mln=mln)

    @classmethod
    def from_string(cls, text: str, filename: str = "<string>", mln: MLN | None = None) -> "Database":
        from .checks import check_model, check_text
        from .lang.parser import parse_db_text

        if mln is not None:
            check_model(mln)
        return parse_db_text(check_text(text, "text"), filename=check_text(filename, "filename"), mln=mln)

    def to_string(self) -> str:
        from .lang.printer import print_db

        return print_db(self)

    def __len__(self) -> int:
        return len(self.atoms) + len(self.function_values)


_PLAIN = None


def _constant_text(value) -> str:
    """A frame value as a constant of the .db syntax."""
    global _PLAIN
    import re

    if _PLAIN is None:
        _PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_'\-]*\Z|[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")
    if isinstance(value, bool):
        text = str(value)
    elif isinstance(value, float) and value.is_integer():
        text = str(int(value))
    else:
        text = str(value)
    if _PLAIN.match(text):
        return text
    if '"' in text or "\n" in text:
        from .errors import EvidenceError

        raise EvidenceError(f"the value {text!r} cannot be a constant (a double quote or a line break)")
    return '"' + text + '"'


def _truth_value(value, column: str) -> bool:
    import numpy as np

    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):
        return bool(value)
    from .errors import EvidenceError

    raise EvidenceError(f"the {column!r} column holds {value!r}: True, False, or a missing value (unknown)")
