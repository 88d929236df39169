"""``mln derive``: write the derived evidence a model uses.

    mln derive -i MODEL.mln -e EVIDENCE.db[,MORE.db] -o DERIVED.db [--venue-pairs auto|all|titled]
               [--match exact|fuzzy] [--min-fuzzy-length N]

Computes the derived predicates the model declares (today the citation
predicates ``SimilarTitle``, ``SimilarVenue``, ``JntInfCandidate`` of Poon &
Domingos, definitions in ``markovlogic.derive.citations``; and the citations'
token sets ``HasTok``, ``HasFront``, ``HasBack``, ``HasFirst``, ``HasNum``,
``HasTitle`` of the set-level entity-resolution model,
``markovlogic.derive.tokensets``) from the token evidence and writes their true atoms to DERIVED.db, atomically. Then
``mln infer -i MODEL.mln -e EVIDENCE.db,DERIVED.db ...``.

    mln derive --conllu FILES --mentions gold|MENTIONS.tsv -o EVIDENCE.db [--heads tree|rightmost]
               [--truth TRUTH.db] [--entity-types] [--mention-table MENTIONS.tsv]

Coreference evidence from parsed text (``markovlogic.derive.coref``): CoNLL-U
files or folders plus the mentions (the spans of the gold ``Entity=``
brackets, or a TSV of doc, sent, start, end) become InDoc, Head, IsPrn,
Number, Gender, Type, Apposition, PredNom, ... atoms. Gold entities and
entity types are read only for ``--truth`` and ``--entity-types``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from ..errors import OptionError
from ..io import check_outputs
from .common import _existing, load_inputs, peak_mb, split_list

console = Console(stderr=True, highlight=False)


def derive_command(
    input: Optional[str] = typer.Option(None, "-i", "--input", help="MLN file(s), comma-separated: the model that uses the derived predicates."),
    evidence: Optional[str] = typer.Option(None, "-e", "--evidence", help="Evidence .db file(s) with Token, Next, HasPunc, ... atoms."),
    output: Path = typer.Option(..., "-o", "--output", help="Output .db file of derived atoms."),
    venue_pairs: str = typer.Option(
        "auto", "--venue-pairs",
        help="SimilarVenue for every pair (all), only pairs with a SimilarTitle atom (titled), or titled when "
             "the model only uses SimilarVenue beside SimilarTitle (auto, the default)."),
    match: str = typer.Option(
        "fuzzy", "--match",
        help="Token matching in SimilarTitle and JntInfCandidate: fuzzy (the default, the thesis's: stemmed "
             "words within one edit, a bigram matching its concatenation) or exact (the same token)."),
    min_fuzzy_length: int = typer.Option(
        4, "--min-fuzzy-length",
        help="fuzzy: shorter words must be equal (after stemming) to match."),
    conllu: Optional[str] = typer.Option(
        None, "--conllu", help="Coreference evidence from CoNLL-U file(s) or folder(s), comma-separated (instead of -i/-e)."),
    mentions: str = typer.Option("gold", "--mentions", help="--conllu: gold (the spans of the Entity= brackets) or a "
                                                             "TSV file with columns doc, sent, start, end [, mention]."),
    heads: str = typer.Option("tree", "--heads", help="--conllu: head rules over the tree (tree) or the last word (rightmost)."),
    truth: Optional[Path] = typer.Option(None, "--truth", help="--conllu: also write the gold SameEntity atoms here (reads the gold entities)."),
    entity_types: bool = typer.Option(False, "--entity-types", help="--conllu: also write the gold EntityType atoms."),
    mention_table: Optional[Path] = typer.Option(None, "--mention-table", help="--conllu: also write the mentions and their features as TSV."),
) -> None:
    """Compute the derived evidence a model declares (SimilarTitle, SimilarVenue, JntInfCandidate; the token
    sets HasTok, HasFront, HasBack, HasFirst, HasNum, HasTitle)."""
    if conllu is not None:
        if input or evidence:
            raise OptionError("--conllu derives coreference evidence from text; it takes no -i/-e")
        from ..derive.coref import derive_coref_command

        derive_coref_command(split_list(conllu), output, mentions=mentions, heads=heads, truth=truth,
                             entity_types=entity_types, mention_table=mention_table, console=console)
        return
    if not input or not evidence:
        raise OptionError("mln derive needs -i MODEL.mln and -e EVIDENCE.db (or --conllu FILES)")
    from ..derive import DeriveOptions, _declared, derive_atoms, write_db

    if venue_pairs not in ("auto", "all", "titled"):
        raise OptionError(f"--venue-pairs must be auto, all or titled, not {venue_pairs!r}")
    DeriveOptions(match=match, min_fuzzy_length=min_fuzzy_length).check()
    _existing(split_list(evidence), "evidence")
    check_outputs({"output": output}, split_list(input) + split_list(evidence))
    start = time.perf_counter()
    mln, dbs, _ = load_inputs(input, evidence, None, None)
    declared = _declared(mln)
    if not declared:
        from ..derive import DERIVED
        from ..errors import MLNSemanticError

        raise MLNSemanticError(f"the model declares none of the derived predicates ({', '.join(DERIVED)}); "
                               "nothing to derive")
    loaded = time.perf_counter()
    from ..derive.citations import DERIVED as CITATION_PREDICATES

    cited = tuple(p for p in declared if p in CITATION_PREDICATES)
    out = derive_atoms(mln, dbs, DeriveOptions(predicates=cited, venue_pairs=venue_pairs, match=match,
                                                       min_fuzzy_length=min_fuzzy_length))
    counts = write_db(out, output)
    done = time.perf_counter()
    for name, n in counts.items():
        console.print(f"{name}: {n:,} atoms")
    console.print(f"wrote {output} (read {loaded - start:.2f} s, derive+write {done - loaded:.2f} s, "
                  f"peak {peak_mb():.0f} MiB)")


def register(app: typer.Typer) -> None:
    app.command("derive")(derive_command)
