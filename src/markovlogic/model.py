"""The public model objects: ``MLN`` (declarations and weighted formulas) and
``Database`` (evidence).

They are plain containers with value equality; parsing lives in ``lang/`` and
printing back to Alchemy syntax in ``lang/printer.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .lang.ast import (
    EvidenceAtom,
    FormulaDecl,
    SetFeature,
    FunctionDecl,
    FunctionValue,
    PredicateDecl,
)


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

    # ------------------------------------------------------------ reading
    @classmethod
    def from_file(cls, path: str | Path | list[str | Path]) -> "MLN":
        """Parse one .mln file (or several, read as one program in order)."""
        from .checks import check_paths
        from .lang.parser import parse_mln_files

        return parse_mln_files(check_paths(path, "path"))

    @classmethod
    def from_string(cls, text: str, filename: str = "<string>") -> "MLN":
        from .checks import check_text
        from .lang.parser import parse_mln_text

        return parse_mln_text(check_text(text, "text"), filename=check_text(filename, "filename"))

    # ------------------------------------------------------------ inference
    def ground(self, db: "Database | list[Database]", queries=None, **options):
        """The ground Markov network (``GroundNetwork``) for this evidence."""
        from .api import ground_model

        return ground_model(self, db, queries, **options)

    def map(self, db: "Database | list[Database]", queries=None, method: str | None = None, **options):
        """The most likely world (``MapAnswer``: ``.atoms``, ``.frame``, ``.score``, ``.bound``);
        ``method`` defaults to ``"ilp"`` (``"maxwalksat"`` with ``lazy=True``)."""
        from .api import map_inference

        return map_inference(self, db, queries, method=method, **options)

    def infer(self, db: "Database | list[Database]", queries=None, method: str = "mcsat", **options):
        """Marginal probabilities of the query atoms (``Marginals``: ``.frame``, ``.as_dict()``)."""
        from .api import marginal_inference

        return marginal_inference(self, db, queries, method=method, **options)

    def learn(self, db: "Database | list[Database]", query_predicates=None, method: str = "dn", **options) -> "MLN":
        """A new MLN with weights learned from the training database(s)."""
        from .checks import check_databases
        from .learn.api import learn_weights

        check_databases(db)
        dbs = [db] if isinstance(db, Database) else list(db)
        return learn_weights(self, dbs, query_predicates=query_predicates, method=method, **options)

    # ------------------------------------------------------------ writing
    def to_string(self) -> str:
        from .lang.printer import print_mln

        return print_mln(self)

    def save(self, path: str | Path) -> None:
        from .io import write_text_atomic

        write_text_atomic(Path(path), self.to_string())

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
