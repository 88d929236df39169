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

from ..errors import OptionError
from ..io import check_outputs
from .common import LazyConsole, _existing, load_inputs, peak_mb, split_list

console = LazyConsole(stderr=True, highlight=False)


def derive_command(
    input: Optional[str] = typer.Option(None, "-i", "--input", help="MLN file(s), comma-separated: the model that uses the derived predicates."),
    evidence: Optional[str] = typer.Option(None, "-e", "--evidence", help="Evidence .db file(s) with Token, Next, HasPunc, ... atoms."),
    output: Path = typer.Option(..., "-o", "--output", help="Output .db file of derived atoms."),
    records: Optional[Path] = typer.Option(
        None, "--records",
        help="Records to evidence: a CSV table, one row a record (then --id and --fields; no -i/-e)."),
    id_column: Optional[str] = typer.Option(None, "--id", help="--records: the column of record ids."),
    fields: Optional[str] = typer.Option(
        None, "--fields",
        help="--records: COLUMN[:KIND[:PREDICATE]],... with KIND text (HasWord<P>, <P>Text), value, number, year "
             "or digits (<P>, <P>Num); default: number if every value is one, else text."),
    source: Optional[str] = typer.Option(None, "--source", help="--records: the column naming each record's source (Source atoms)."),
    block: Optional[str] = typer.Option(
        None, "--block", help="--records: fields whose rare words are blocking keys (BlockKey atoms)."),
    max_df: Optional[float] = typer.Option(
        None, "--max-df", help="--records --block: a key is a word of at most this many records (default max(30, 1%))."),
    schema: Optional[Path] = typer.Option(None, "--schema", help="--records: also write the predicate declarations here."),
    clusters: Optional[str] = typer.Option(
        None, "--clusters", help="--records: a column naming each record's entity (training data): writes the true "
                                 "Same(a, b) atoms."),
    template: Optional[Path] = typer.Option(
        None, "--template", help="--records: a model template (examples/er/template.mln) to fill with the fields."),
    model: Optional[Path] = typer.Option(None, "--model", help="--records --template: write the filled model here."),
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
    sets HasTok, HasFront, HasBack, HasFirst, HasNum, HasTitle), turn a table of records into evidence
    (--records), or parsed text into coreference evidence (--conllu)."""
    if conllu is not None:
        if input or evidence or records is not None:
            raise OptionError("--conllu derives coreference evidence from text; it takes no -i/-e/--records")
        from ..derive.coref import derive_coref_command

        derive_coref_command(split_list(conllu), output, mentions=mentions, heads=heads, truth=truth,
                             entity_types=entity_types, mention_table=mention_table, console=console)
        return
    if records is not None:
        return _records_command(records, id_column, fields, source, block, max_df, schema, output, input, evidence,
                                template, model, clusters)
    for flag, value in (("--id", id_column), ("--fields", fields), ("--source", source), ("--block", block),
                        ("--max-df", max_df), ("--schema", schema), ("--template", template), ("--model", model),
                        ("--clusters", clusters)):
        if value is not None:
            raise OptionError(f"{flag} applies with --records")
    if input is None or evidence is None:
        raise OptionError("mln derive needs -i MODEL.mln and -e EVIDENCE.db (or --records FILE.csv, or --conllu FILES)")
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
    from .. import progress

    with progress.task(f"deriving {', '.join(declared)}"):
        out = derive_atoms(mln, dbs, DeriveOptions(predicates=cited, venue_pairs=venue_pairs, match=match,
                                                   min_fuzzy_length=min_fuzzy_length))
    counts = write_db(out, output)
    done = time.perf_counter()
    for name, n in counts.items():
        console.print(f"{name}: {n:,} atoms")
    console.print(f"wrote {output} (read {loaded - start:.2f} s, derive+write {done - loaded:.2f} s, "
                  f"peak {peak_mb():.0f} MiB)")


def _records_command(records, id_column, fields, source, block, max_df, schema, output, input, evidence,
                     template=None, model=None, clusters=None) -> None:
    from ..derive.records import Field, fill_template, infer_kinds, parse_fields, records_frame, records_to_db_text
    from ..io import write_text_atomic

    if input is not None or evidence is not None:
        raise OptionError("--records reads the records table alone: leave out -i and -e")
    if id_column is None:
        raise OptionError("--records needs --id COLUMN (the record ids)")
    if fields is None:
        raise OptionError("--records needs --fields COLUMN[:KIND[:PREDICATE]],...")
    if max_df is not None and not max_df >= 1:
        raise OptionError(f"--max-df must be at least 1, got {max_df}")
    if (template is None) != (model is None):
        raise OptionError("--template and --model go together (the template to fill, the model to write)")
    specs = parse_fields(fields)
    outputs = {"output": output}
    if schema is not None:
        outputs["schema"] = schema
    if model is not None:
        outputs["model"] = model
    inputs = [str(records)] + ([str(template)] if template is not None else [])
    check_outputs(outputs, inputs)
    paths = [Path(p).resolve() for p in outputs.values()]
    if len(set(paths)) != len(paths):
        raise OptionError("-o, --schema and --model must name different files")
    if template is not None:
        _existing([str(template)], "template")
    start = time.perf_counter()
    frame = records_frame(records)
    auto = [f.column for f in specs if f.kind is None]
    if auto:
        inferred = {f.column: f.kind for f in infer_kinds(frame, [c for c in auto if c in frame.columns])}
        specs = [Field(f.column, inferred.get(f.column), f.predicate) if f.kind is None else f for f in specs]
    text, counts, decls = records_to_db_text(frame, id_column, specs, source=source,
                                             block=split_list(block) if block else None, max_df=max_df,
                                             clusters=clusters, where=str(records))
    write_text_atomic(output, text)
    if schema is not None:
        write_text_atomic(schema, "// written by mln derive --records " + str(records) + "\n" + "\n".join(decls) + "\n")
    if template is not None:
        filled = fill_template(Path(template).read_text(encoding="utf-8"), specs, source=source is not None,
                               declarations=decls, frame=frame, where=str(template))
        write_text_atomic(model, filled + "\n")
        console.print(f"wrote {model} (the template filled with {len(specs)} fields)")
    for name, n in counts.items():
        console.print(f"{name}: {n:,} atoms")
    console.print(f"wrote {output} ({len(frame):,} records, {time.perf_counter() - start:.2f} s, "
                  f"peak {peak_mb():.0f} MiB)")


def register(app: typer.Typer) -> None:
    app.command("derive")(derive_command)
