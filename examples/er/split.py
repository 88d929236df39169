"""Write one records CSV per fold of a dataset in the layout of
../shared/data/er (records.csv, gold.csv, folds.csv), each with its gold
``cluster`` column, for the commands of examples/er/README.md:

    python examples/er/split.py ../shared/data/er/restaurants /tmp/er-restaurants

writes fold1.csv, fold2.csv, fold3.csv there (~1 s).
"""

import sys
from pathlib import Path

import pandas as pd


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-2].strip(), file=sys.stderr)
        return 2
    src, out = Path(argv[0]), Path(argv[1])
    for name in ("records.csv", "gold.csv", "folds.csv"):
        if not (src / name).exists():
            print(f"{src / name}: no such file (the er layout has records.csv, gold.csv, folds.csv)", file=sys.stderr)
            return 2
    out.mkdir(parents=True, exist_ok=True)
    rec = pd.read_csv(src / "records.csv", dtype=str, keep_default_na=False)
    gold = pd.read_csv(src / "gold.csv", dtype=str, keep_default_na=False)
    folds = pd.read_csv(src / "folds.csv", dtype=str, keep_default_na=False)
    table = rec.merge(gold, on="id").merge(folds, on="id")
    for k, part in table.groupby("fold"):
        part.drop(columns=["fold"]).to_csv(out / f"fold{k}.csv", index=False)
        print(f"{out / f'fold{k}.csv'}: {len(part):,} records")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
