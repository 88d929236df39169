"""The Splink baseline of the entity-resolution benchmark (protocol (d) of
``../shared/data/er/README.md``), reimplemented from the protocol.

    python -m bench.er_splink [--root DIR] [--datasets A,B] [--folds 1-3] [--json OUT.json]

Per fold, Splink 5 (DuckDB backend) is fitted on the fold's own records
without labels, its normal use:

* comparisons (Splink's default levels unless ``SplinkOptions`` says
  otherwise): ``JaroWinklerAtThresholds`` on the main field (its
  ``records.csv`` text as given, the main fields joined by a space:
  imdb_tmdb title + name), ``ArrayIntersectAtSizes`` on the main
  field's words (the ``HasWord`` constants), ``JaccardAtThresholds`` on every
  other text field (its text), ``ExactMatch`` on every value field (the
  evidence's value constants, e.g. imdb_tmdb ``Year`` = startYear |
  release_year);
* prediction blocking: the protocol's candidate rule, ``block_on("rare_toks",
  arrays_to_explode=["rare_toks"])``, ``rare_toks`` = a record's words of the
  blocking fields whose document frequency among the fold's records is
  between 2 and max(30, 1 %); clean-clean sets are linked (``link_only``, one
  input table per source: pairs across sources only), dirty sets
  deduplicated (``dedupe_only``). The predicted pairs are checked to be
  exactly ``er_data.candidates`` on every fold;
* u by random sampling (``max_pairs`` 1e7, seed 0);
* m by EM blocked on each record's rarest word (default: the word of
  ``rare_toks`` of lowest document frequency, ties by the word; Splink's EM
  refuses exploding rules); where EM drives an m probability to 0 (exactly 0,
  or below 1e-300, which Splink refuses with a ValueError mid-EM: Cora's
  SameBib, folds 3 and 4) the fold is refitted (u again, same seed) with EM
  blocked on the first 4 characters of the main field (Splink then trains no
  m for the main-field text comparison, which keeps its default m values);
* ``predict`` (every candidate pair), then
  ``cluster_pairwise_predictions_at_threshold`` at the match probability
  chosen on the training folds from ``GRID`` (0.01, 0.02, ..., 0.95, 0.99,
  0.999, ..., 0.999999) maximising the pooled pairwise F1 of the training
  folds, each clustered as a test fold is (connected components of the pairs
  at or above the threshold; ties go to the lowest threshold, as in
  ``bench/workloads/er.py``).

Splink's prior (``probability_two_random_records_match``) stays at its
default 1e-4: the protocol estimates nothing else, and the threshold grid
absorbs the calibration. The labels of the training folds only pick the
threshold; a fold's Splink model never depends on another fold, so fitted
folds are memoised in the caller's ``cache`` (keys ``("splink", options,
fold)``) and reused across test folds.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from bench import er_data as E

GRID = tuple(float(t) for t in np.round(np.arange(0.01, 0.9501, 0.01), 2)) + (
    0.99, 0.999, 0.9999, 0.99999, 0.999999)
SYSTEM = "splink"


@dataclass(frozen=True)
class SplinkOptions:
    """The Splink workflow's settings; the defaults are the protocol's
    (comparison levels: Splink 5's defaults)."""

    jaro_winkler_thresholds: tuple[float, ...] = (0.9, 0.7)
    array_intersect_sizes: tuple[int, ...] = (1,)
    jaccard_thresholds: tuple[float, ...] = (0.9, 0.7)
    # EM blocking: "shared" = the rarest of the record's rare_toks (words it shares with another record
    # of the fold, within the candidate rule's limit); "any" = its rarest blocking-field word, even one
    # no other record has (such a record then takes no part in EM)
    em_rarest: Literal["shared", "any"] = "shared"
    em_fallback_prefix: int = 4
    # the text of the main and other text fields: as given in records.csv (the protocol names no
    # normalisation), or lower-cased with whitespace collapsed
    lowercase: bool = False
    u_max_pairs: float = 1e7
    u_seed: int = 0
    grid: tuple[float, ...] = GRID


DEFAULT_OPTIONS = SplinkOptions()


@dataclass
class SplinkFold:
    """One fold's fitted Splink workflow: the linker (its DuckDB connection
    holds the predictions), every candidate pair's match probability
    (positions into the fold's records), and how EM went."""

    fold: int
    members: np.ndarray
    linker: Any
    predictions: Any                     # SplinkDataFrame of linker.inference.predict()
    i: np.ndarray
    j: np.ndarray
    p: np.ndarray
    em_blocking: str                     # "rarest_word" or "main_prefix4"
    em_zero_m: list[str] = field(default_factory=list)       # levels EM drove to m = 0 on the rarest-word rule
    # levels EM gave no m: no EM pair fell in them (Splink then uses m = 1e-6), or their comparison uses the
    # EM rule's column (the fallback's main_text: Splink's default m values)
    em_untrained: list[str] = field(default_factory=list)
    fit_cpu_s: float = 0.0               # table, u, EM, predict
    fit_wall_s: float = 0.0
    _labels: dict[float, np.ndarray] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.members)

    def closure(self, threshold: float) -> np.ndarray:
        """Connected components of the pairs with probability >= threshold:
        the partition Splink's clustering returns, computed on the fetched
        pairs (``run_splink`` checks it against Splink's at the chosen
        threshold)."""
        if threshold not in self._labels:
            keep = self.p >= threshold
            g = coo_matrix((np.ones(int(keep.sum())), (self.i[keep], self.j[keep])), shape=(self.n, self.n))
            self._labels[threshold] = connected_components(g, directed=False)[1].astype(np.int64)
        return self._labels[threshold]


# ---------------------------------------------------------------- the input table


def _column(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def _text(series: pd.Series, lowercase: bool) -> pd.Series:
    s = series.astype(str)
    if lowercase:
        return s.str.lower().str.split().str.join(" ")
    return s.where(s.str.strip() != "", "")


def _or_none(values) -> list:
    return [v if len(v) else None for v in values]


def _incidence(ds: E.Dataset, fields: list[str], members: np.ndarray):
    inc = None
    for f in fields:
        m = ds.words[f][members]
        inc = m if inc is None else inc + m
    return (inc > 0).astype(np.float64).tocsr()


def _row_words(inc, names: np.ndarray, key: np.ndarray | None = None) -> list[list[str]]:
    """Per row, the names of its nonzero columns, ordered by ``key`` then
    name (or by name)."""
    inc = inc.tocsr()
    out = []
    for r in range(inc.shape[0]):
        cols = inc.indices[inc.indptr[r]:inc.indptr[r + 1]]
        if key is None:
            out.append(sorted(names[cols].tolist()))
        else:
            out.append([names[c] for c in sorted(cols.tolist(), key=lambda c: (key[c], names[c]))])
    return out


def splink_table(ds: E.Dataset, members: np.ndarray, options: SplinkOptions = DEFAULT_OPTIONS
                 ) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """Splink's input table for the records ``members`` of ``ds`` (one row
    each, ``unique_id`` = position in ``members``, missing values null) and
    its comparison columns by kind. Every field column is prefixed (``t_``,
    ``v_``) so that no field meets Splink's own names (``unique_id``,
    ``source_dataset``, ``match_probability``, ...)."""
    names = np.empty(len(ds.vocab), dtype=object)
    for w, k in ds.vocab.items():
        names[k] = w
    frame = pd.DataFrame({"unique_id": np.arange(len(members), dtype=np.int64)})
    rec = ds.records.iloc[members].reset_index(drop=True) if ds.records is not None else None

    def field_text(f: str) -> pd.Series:
        col = ds.columns.get(f)
        if rec is not None and col is not None:
            return _text(rec[col], options.lowercase)
        return pd.Series([" ".join(w) for w in _row_words(ds.words[f][members], names)], dtype=object)

    main = None
    for f in ds.main:
        t = field_text(f)
        main = t if main is None else (main + " " + t).where((main != "") & (t != ""), main + t)
    frame["main_text"] = _or_none(main.tolist())
    frame["main_words"] = _or_none(_row_words(_incidence(ds, ds.main, members), names))
    # the candidate rule's words (as er_data.candidates) and each record's rarest word
    inc = _incidence(ds, ds.block, members).tocsc()
    df = np.asarray(inc.sum(axis=0)).ravel()
    rare = (df >= 2) & (df <= E.df_limit(ds, len(members)))
    frame["rare_toks"] = _or_none(_row_words(inc[:, np.flatnonzero(rare)], names[rare]))
    if options.em_rarest == "shared":
        by_df = _row_words(inc[:, np.flatnonzero(rare)], names[rare], key=df[rare])
    elif options.em_rarest == "any":
        by_df = _row_words(inc, names, key=df)
    else:
        raise ValueError(f"SplinkOptions.em_rarest: {options.em_rarest!r} (expected 'shared' or 'any')")
    frame["rarest_word"] = [w[0] if w else None for w in by_df]
    cols: dict[str, list[str]] = {"jaro_winkler": ["main_text"], "array_intersect": ["main_words"],
                                  "jaccard": [], "exact": []}
    for f in ds.text_fields:
        if f not in ds.main:
            c = "t_" + _column(f)
            frame[c] = _or_none(field_text(f).tolist())
            cols["jaccard"].append(c)
    for v in ds.value_fields:
        c = "v_" + _column(v)
        frame[c] = _or_none(list(ds.values[v][members]))
        cols["exact"].append(c)
    return frame, cols


# ---------------------------------------------------------------- fitting one fold


def _settings(link_type: str, cols: dict[str, list[str]], options: SplinkOptions):
    import splink.comparison_library as cl
    from splink import SettingsCreator, block_on

    comparisons = ([cl.JaroWinklerAtThresholds(c, list(options.jaro_winkler_thresholds))
                    for c in cols["jaro_winkler"]]
                   + [cl.ArrayIntersectAtSizes(c, list(options.array_intersect_sizes))
                      for c in cols["array_intersect"]]
                   + [cl.JaccardAtThresholds(c, list(options.jaccard_thresholds)) for c in cols["jaccard"]]
                   + [cl.ExactMatch(c) for c in cols["exact"]])
    return SettingsCreator(
        link_type=link_type,
        comparisons=comparisons,
        blocking_rules_to_generate_predictions=[block_on("rare_toks", arrays_to_explode=["rare_toks"])],
        retain_matching_columns=False,
        retain_intermediate_calculation_columns=False,
    )


def _m_levels(linker, zero: bool) -> list[str]:
    """Comparison levels (null levels aside) whose m probability EM drove to
    exactly 0 (``zero``), or which EM left without an m (no pair of the EM
    blocking in the level, or a comparison of the EM rule's column)."""
    out = []
    for c in linker.misc.save_model_to_json()["comparisons"]:
        for lev in c["comparison_levels"]:
            if lev.get("is_null_level"):
                continue
            m = lev.get("m_probability")
            if (m == 0) if zero else (m is None or isinstance(m, str)):
                out.append(f"{c.get('output_column_name')}: {lev.get('label_for_charts')}")
    return out


def _linker(frame: pd.DataFrame, cols, link_type: str, source: np.ndarray, options: SplinkOptions):
    from splink import DuckDBAPI, Linker

    db = DuckDBAPI()
    if link_type == "link_only":
        tables = [db.register(frame[source == s].reset_index(drop=True), dataset_display_name=f"source_{s}")
                  for s in np.unique(source)]
    else:
        tables = db.register(frame, dataset_display_name="records")
    return Linker(tables, _settings(link_type, cols, options), log_level=logging.ERROR)


def _train(linker, em_rule, options: SplinkOptions) -> list[str]:
    """u by random sampling, m by EM; returns the levels EM drove to m = 0
    (exactly 0, or below Splink's floor of 1e-300, which Splink refuses with
    a ValueError in the middle of EM)."""
    linker.training.estimate_u_using_random_sampling(max_pairs=options.u_max_pairs, seed=options.u_seed)
    try:
        linker.training.estimate_parameters_using_expectation_maximisation(em_rule)
    except ValueError as e:
        if str(e).startswith("m_probability value") and "below the minimum" in str(e):
            return [str(e).split(" is below")[0]]
        raise
    return _m_levels(linker, zero=True)


def fit_fold(ds: E.Dataset, fold: int, options: SplinkOptions = DEFAULT_OPTIONS) -> SplinkFold:
    """Fit Splink on one fold's records (no labels) and predict every
    candidate pair."""
    from splink import block_on

    # Splink logs a warning per untrained level and for the default prior; the row says what matters
    logging.getLogger("splink").setLevel(logging.ERROR)
    c0, w0 = time.process_time(), time.perf_counter()
    members = np.flatnonzero(ds.fold == fold)
    frame, cols = splink_table(ds, members, options)
    source = ds.source[members]
    if ds.clean_clean and len(np.unique(source)) < 2:
        raise ValueError(f"splink on {ds.name} fold {fold}: a clean-clean fold with one source has no pairs")
    link_type = "link_only" if ds.clean_clean else "dedupe_only"
    linker = _linker(frame, cols, link_type, source, options)
    zero = _train(linker, block_on("rarest_word"), options)
    em = "rarest_word"
    if zero:
        k = options.em_fallback_prefix
        linker = _linker(frame, cols, link_type, source, options)
        still = _train(linker, block_on(f"substr(main_text, 1, {k})"), options)
        em = f"main_prefix{k}"
        if still:
            raise RuntimeError(f"splink on {ds.name} fold {fold}: EM drove m to 0 on both EM blocking rules "
                               f"({'; '.join(still)})")
    untrained = _m_levels(linker, zero=False)
    pred = linker.inference.predict(warning_mode="never")
    pdf = pred.as_pandas_dataframe()
    a = pdf["unique_id_l"].to_numpy(np.int64)
    b = pdf["unique_id_r"].to_numpy(np.int64)
    i, j = np.minimum(a, b), np.maximum(a, b)
    order = np.lexsort((j, i))
    sf = SplinkFold(fold, members, linker, pred, i[order], j[order],
                    pdf["match_probability"].to_numpy(np.float64)[order], em, zero, untrained)
    ci, cj = E.candidates(ds, members)
    if not (np.array_equal(ci, sf.i) and np.array_equal(cj, sf.j)):
        raise RuntimeError(f"splink on {ds.name} fold {fold}: {len(sf.i)} predicted pairs differ from the "
                           f"protocol's {len(ci)} candidate pairs")
    sf.fit_cpu_s = time.process_time() - c0
    sf.fit_wall_s = time.perf_counter() - w0
    return sf


def splink_clusters(sf: SplinkFold, threshold: float) -> np.ndarray:
    """Splink's ``cluster_pairwise_predictions_at_threshold``: a cluster label
    per record of the fold (positions as in ``sf.members``)."""
    out = sf.linker.clustering.cluster_pairwise_predictions_at_threshold(
        sf.predictions, threshold_match_probability=threshold).as_pandas_dataframe()
    labels = np.full(sf.n, -1, np.int64)
    labels[out["unique_id"].to_numpy(np.int64)] = pd.factorize(out["cluster_id"])[0]
    if (labels < 0).any():
        raise RuntimeError(f"splink clustering of fold {sf.fold} lost {(labels < 0).sum()} records")
    return labels


# ---------------------------------------------------------------- the protocol


def _pooled_f1(parts) -> float:
    tp = pp = gp = 0
    for labels, gold in parts:
        a, b, c = E.pair_counts(labels, gold)
        tp, pp, gp = tp + a, pp + b, gp + c
    return E.prf(tp, pp, gp)[2]


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    tp, pa, pb = E.pair_counts(a, b)
    return tp == pa == pb


def run_splink(ds: E.Dataset, test_fold: int, cache: dict, options: SplinkOptions = DEFAULT_OPTIONS) -> dict:
    """Splink on one test fold: every fold fitted on its own records, the
    threshold chosen on the other folds (pooled pairwise F1 of their
    clusterings), the test fold clustered by Splink at it. ``cache`` (one
    dict per dataset, e.g. the driver's) memoises fitted folds under
    ``("splink", options, fold)``. Returns one row of
    ``bench/workloads/er.py``: the scores, ``hyperparameters``
    ``{"threshold": t}``, ``cpu_s``/``wall_s`` of this call (fits of folds not
    yet cached included) and ``fold_cpu_s``/``fold_wall_s``, Splink's whole
    workflow on the test fold (table, u, EM, predict, clustering)."""
    c0, w0 = time.process_time(), time.perf_counter()

    def fold(k: int) -> SplinkFold:
        key = (SYSTEM, options, k)
        if key not in cache:
            cache[key] = fit_fold(ds, k, options)
        return cache[key]

    train = [k for k in ds.folds() if k != test_fold]
    if not train:
        raise ValueError(f"splink on {ds.name}: no training fold besides fold {test_fold}")
    parts = [(fold(k), ds.cluster[fold(k).members]) for k in train]
    best = max(options.grid, key=lambda t: (_pooled_f1([(f.closure(t), g) for f, g in parts]), -t))
    train_f1 = _pooled_f1([(f.closure(best), g) for f, g in parts])
    tf = fold(test_fold)
    c1, w1 = time.process_time(), time.perf_counter()
    labels = splink_clusters(tf, best)
    cluster_cpu, cluster_wall = time.process_time() - c1, time.perf_counter() - w1
    if not _same_partition(labels, tf.closure(best)):
        raise RuntimeError(f"splink on {ds.name} fold {test_fold}: Splink's clustering differs from the "
                           "connected components the threshold was chosen with")
    gold = ds.cluster[tf.members]
    _, _, gp = E.pair_counts(gold, gold)
    return {"dataset": ds.name, "fold": test_fold, "system": SYSTEM, **E.scores(labels, gold),
            "hyperparameters": {"threshold": float(best)},
            "train_pairwise_f1": train_f1,
            "blocking_recall": float(np.sum(gold[tf.i] == gold[tf.j])) / gp if gp else 1.0,
            "candidate_pairs": int(len(tf.i)),
            "em_blocking": tf.em_blocking, "em_zero_m": tf.em_zero_m, "em_untrained": tf.em_untrained,
            "cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0,
            "fold_cpu_s": tf.fit_cpu_s + cluster_cpu, "fold_wall_s": tf.fit_wall_s + cluster_wall}


# ---------------------------------------------------------------- standalone


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.er_splink", description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data" / "er"))
    ap.add_argument("--datasets", default="restaurants,abt_buy,dblp_acm,imdb_tmdb,cddb")
    ap.add_argument("--folds", default=None, help="test folds (default: every fold of the dataset)")
    ap.add_argument("--json", default=None, help="write the rows and the means here")
    args = ap.parse_args(argv)
    rows, means = [], {}
    for name in args.datasets.split(","):
        ds = E.load(Path(args.root) / name, name)
        cache: dict = {}
        out = []
        for k in (E.parse_folds(args.folds) if args.folds else ds.folds()):
            r = run_splink(ds, k, cache)
            out.append(r)
            print(f"{name} fold {k} splink P {r['pairwise_precision']:.3f} R {r['pairwise_recall']:.3f} "
                  f"F1 {r['pairwise_f1']:.3f} B3 {r['b3_f1']:.3f} t {r['hyperparameters']['threshold']} "
                  f"EM {r['em_blocking']} fold {r['fold_cpu_s']:.1f} s CPU / {r['fold_wall_s']:.1f} s wall",
                  flush=True)
        rows += out
        means[name] = {k: float(np.mean([r[k] for r in out])) for k in
                       ("pairwise_precision", "pairwise_recall", "pairwise_f1", "b3_f1", "blocking_recall",
                        "fold_cpu_s", "fold_wall_s")}
        means[name]["pairwise_f1_per_fold"] = [r["pairwise_f1"] for r in out]
        cache.clear()
    print("| dataset | pair P | pair R | pair F1 | B3 F1 | F1 per fold | blocking recall | fold s CPU / wall |")
    print("|---|---|---|---|---|---|---|---|")
    for name, m in means.items():
        per = " ".join(f"{f:.3f}" for f in m["pairwise_f1_per_fold"])
        print(f"| {name} | {m['pairwise_precision']:.3f} | {m['pairwise_recall']:.3f} | {m['pairwise_f1']:.3f} | "
              f"{m['b3_f1']:.3f} | {per} | {m['blocking_recall']:.3f} | {m['fold_cpu_s']:.1f} / "
              f"{m['fold_wall_s']:.1f} |")
    if args.json:
        def plain(v):
            return float(v) if isinstance(v, np.floating) else int(v) if isinstance(v, np.integer) else v
        Path(args.json).write_text(json.dumps({"options": asdict(DEFAULT_OPTIONS), "means": means,
                                               "rows": [{k: plain(v) for k, v in r.items()} for r in rows]},
                                              indent=1, default=plain))


if __name__ == "__main__":
    main(sys.argv[1:])
