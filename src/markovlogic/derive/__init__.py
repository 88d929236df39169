"""Derived evidence: predicates a model needs that are computed from other evidence.

Today: the citation predicates of Poon & Domingos' joint segmentation and
entity-resolution MLNs (``SimilarTitle``, ``SimilarVenue``, ``JntInfCandidate``;
definitions in :mod:`.citations`) and the citations' token sets of the
set-level entity-resolution model (``HasTok``, ``HasFront``, ``HasBack``,
``HasFirst``, ``HasNum``, ``HasTitle``; :mod:`.tokensets`), and the similarity
bins of Singla & Domingos' Cora MLNs (``AuthorScore0`` ... ``VenueScore100``
from ``HasWordAuthor`` ...; :mod:`.scorebins`). ``mln derive -i
MODEL.mln -e EVIDENCE.db -o DERIVED.db`` writes the ones the model declares;
from Python::

    from markovlogic.derive import derive
    derived = derive(mln, db)            # a Database of true atoms
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import EvidenceError, MLNSemanticError
from ..lang.ast import EvidenceAtom, GroundAtom
from ..model import MLN, Database
from .citations import ARITY as CITATION_ARITY
from .citations import DERIVED as CITATION_PREDICATES
from .citations import TITLE_PREDICATE, VENUE_PREDICATE, DeriveOptions, derive_citations, group_atoms
from .scorebins import derive_score_bins, score_families
from .tokensets import TOKEN_SETS, derive_token_sets

DERIVED = CITATION_PREDICATES + TOKEN_SETS
ARITY = {**CITATION_ARITY, **{name: 2 for name in TOKEN_SETS}}

__all__ = ["DeriveOptions", "derive", "derive_atoms", "venue_pairs_for", "DERIVED"]


def _declared(mln: MLN) -> tuple[str, ...]:
    """The derived predicates the model declares (the fixed families, then
    the ``<F>Score<K>`` similarity bins)."""
    found = []
    for name in DERIVED:
        decl = mln.predicates.get(name)
        if decl is None:
            continue
        if len(decl.arg_types) != ARITY[name]:
            raise MLNSemanticError(f"{name} is declared with {len(decl.arg_types)} arguments; "
                                   f"the derived predicate has {ARITY[name]}")
        found.append(name)
    found += [name for bins in score_families(mln.predicates).values() for _, name in bins]
    return tuple(found)


def venue_pairs_for(mln: MLN) -> str:
    """``"titled"`` when every clause of ``mln`` holding ``SimilarVenue(x,y)`` also
    holds ``!SimilarTitle(x,_,_,y,_,_)`` (so SimilarVenue matters only for pairs
    with a SimilarTitle atom), else ``"all"``."""
    from ..logic.cnf import compile_mln

    if TITLE_PREDICATE not in mln.predicates:
        return "all"
    for t in compile_mln(mln):
        if any(getattr(getattr(c, "atom", None), "predicate", None) == VENUE_PREDICATE
               for g in t.exists for c in g.conjuncts):
            return "all"
        sv = [lit for lit in t.literals if lit.atom.predicate == VENUE_PREDICATE]
        if not sv:
            continue
        guards = {(lit.atom.args[0], lit.atom.args[3]) for lit in t.literals
                  if lit.atom.predicate == TITLE_PREDICATE and not lit.positive}
        if not all((lit.atom.args[0], lit.atom.args[1]) in guards for lit in sv):
            return "all"
    return "titled"


def derive_atoms(mln: MLN, db: Database | list[Database], options: DeriveOptions | None = None
                 ) -> dict[str, list[tuple[str, ...]]]:
    """Predicate -> arguments of its true atoms, for the derived predicates
    ``mln`` declares (or, for the citation predicates, ``options.predicates``
    if given; the token sets are those ``mln`` declares)."""
    dbs = db if isinstance(db, list) else [db]
    declared = _declared(mln)
    sets = tuple(p for p in declared if p in TOKEN_SETS)
    if options is None:
        if not declared:
            raise MLNSemanticError(f"the model declares none of the derived predicates ({', '.join(DERIVED)}); "
                                   "nothing to derive")
        options = DeriveOptions(predicates=tuple(p for p in declared if p in CITATION_PREDICATES),
                                venue_pairs=venue_pairs_for(mln))
    elif options.venue_pairs == "auto":
        options = replace(options, venue_pairs=venue_pairs_for(mln))
    atoms = group_atoms(a for d in dbs for a in d.atoms)
    families = score_families(mln.predicates)
    for name in DERIVED + tuple(n for bins in families.values() for _, n in bins):
        if atoms.get(name):
            raise EvidenceError(f"the evidence already has {name} atoms; derive from evidence without them "
                                "(the derived file would contradict or duplicate them)")
    out = derive_citations(atoms, options) if options.predicates else {}
    if sets:
        out.update(derive_token_sets(atoms, sets))
    if families:
        out.update(derive_score_bins(atoms, families))
    return out


def derive(mln: MLN, db: Database | list[Database], options: DeriveOptions | None = None) -> Database:
    """The derived evidence as a :class:`Database` of true atoms (closed world:
    atoms not listed are false)."""
    out = derive_atoms(mln, db, options)
    return Database(atoms=[EvidenceAtom(GroundAtom(name, tuple(args)), True)
                           for name in _order(out) for args in sorted(out[name])])


def _order(derived: dict) -> list[str]:
    return [n for n in DERIVED if n in derived] + sorted(n for n in derived if n not in DERIVED)


def write_db(derived: dict[str, list[tuple[str, ...]]], path) -> dict[str, int]:
    """Write the derived atoms as a .db file, atomically; returns counts per predicate."""
    from ..io import open_text_atomic

    counts = {}
    with open_text_atomic(path) as handle:
        for name in _order(derived):
            rows = sorted(derived[name])
            counts[name] = len(rows)
            handle.write(f"// {name}: {len(rows)} true atoms (derived by mln derive; closed world)\n")
            handle.writelines(f"{name}({','.join(r)})\n" for r in rows)
    return counts

