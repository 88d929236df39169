"""``python -m bench.reproduce``: each table's smoke run on a small slice
(``--quick``: the same code path as the full table, through the project's
commands, on a few citations / sequences / instances), the JSON nesting the
issue names, the markdown report, ``--from-cache`` and bad options. The full
tables are not part of the suite (``python -m bench.reproduce``, about an
hour). Tests that need ``../shared/data`` skip when it is missing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import data_dir  # noqa: E402
from bench.reproduce.__main__ import main  # noqa: E402

needs_data = pytest.mark.skipif(not (data_dir() / "cora_tokens").is_dir() or not (data_dir() / "citeseer").is_dir(),
                                reason="../shared/data is missing")


def quick(tmp_path: Path, table: str) -> tuple[dict, str]:
    cache, md, out = tmp_path / "cache.json", tmp_path / "R.md", tmp_path / "out.json"
    code = main(["--only", table, "--quick", "--cache", str(cache), "--markdown", str(md), "--json", str(out),
                 "--work", str(tmp_path / "work")])
    assert code == 0
    figures = json.loads(out.read_text())
    assert set(figures) == {table}
    cached = json.loads(cache.read_text())[table]
    assert cached["meta"]["quick"] and cached["meta"]["commands"]
    return figures[table], md.read_text()


@needs_data
def test_poon3_smoke(tmp_path):
    res, md = quick(tmp_path, "poon3")
    jse = res["cora"]["jnt_seg_er"]
    for key in ("segmentation_f1", "pairwise_recall", "pairwise_precision", "cluster_recall"):
        assert 0.0 <= jse[key] <= 1.0
    assert set(jse["segmentation"]["all"]) >= {"total", "author", "title", "venue"}
    assert 0.0 <= jse["map"]["segmentation_f1"] <= 1.0
    assert set(res["citeseer"]["jnt_seg"]["cluster_recall"]) == {"Constr.", "Face", "Reason.", "Reinfor."}
    assert res["readings"]["pick"].keys() == {"title_start", "venue_conflict", "keyword_exclusion", "jic_position",
                                            "title_delimited"}
    for title in ("Table 3.1", "Table 3.2", "Table 3.3", "Table 3.4", "Table 3.5", "Table 3.6", "QUICK SLICE"):
        assert title in md
    assert "mln learn" in md and "--expectations mcsat" in md
    assert "Data, folds, systems and what differs from the paper" in md and "shape: total - Isolated's" in md


@needs_data
def test_riedel2_smoke(tmp_path):
    res, md = quick(tmp_path, "riedel2")
    assert res["mean"]["C-ILP"]["delta_soft"] == 0.0          # the proven optimum is its own reference
    assert res["mean"]["C-ILP"]["violations"] == 0
    assert res["mean"]["M-100k"]["delta_soft"] <= 1e-6
    assert "Riedel" in md and "C-M-1k" in md


def test_transitivity_violations_count_every_triple():
    from bench.reproduce.riedel2 import transitivity_violations

    s = np.eye(3, dtype=bool)
    s[0, 1] = s[1, 0] = s[1, 2] = s[2, 1] = True           # 0-1-2 linked, 0-2 not
    # (0,1,2) and (2,1,0) break transitivity; (0,1,0) etc. need S(0,0), which holds
    assert transitivity_violations(s) == 2
    s[0, 2] = s[2, 0] = True
    assert transitivity_violations(s) == 0


@needs_data
def test_w06_smoke(tmp_path):
    res, md = quick(tmp_path, "w06")
    for s in ("objects", "pairs"):
        assert 0.0 <= res["cora"][s]["f1"] <= 1.0
    assert res["citeseer"]["objects"] is None
    assert "Objects" in md


def test_culotta6_smoke(tmp_path):
    res, md = quick(tmp_path, "culotta6")
    row = res["rows"][0]["mean"]
    assert set(row) == {"CRF1", "CRF2", "SampleRank-M++", "SampleRank-M", "SampleRank-P", "MIRA", "Perceptron",
                        "Rerank"}
    assert all(0.0 <= v <= 1.0 for v in row.values())
    assert "Figure 6.5" in md


def test_culotta6_exact_crf_gradient_and_viterbi():
    from bench.reproduce.culotta6 import ChainCRF, parameters, sample

    rng = np.random.default_rng(0)
    x, y = sample(parameters(5.0, rng), 3, rng)
    for second in (False, True):
        crf = ChainCRF(second)
        w = rng.normal(0, 0.3, crf._pack().size)
        _, g = crf.objective(w, x, y)
        eye = np.eye(w.size) * 1e-5
        num = np.array([(crf.objective(w + eye[i], x, y)[0] - crf.objective(w - eye[i], x, y)[0]) / 2e-5
                        for i in range(w.size)])
        assert np.abs(num - g).max() < 1e-5
    crf = ChainCRF(True)
    crf._unpack(rng.normal(0, 1, crf._pack().size))

    def score(xs, ys):
        return crf.E[ys, xs].sum() + crf.A[ys[:-1], ys[1:]].sum() + crf.B[ys[:-2], ys[2:]].sum()

    best = crf.viterbi(x)
    assert all(score(x[n], best[n]) >= score(x[n], y[n]) - 1e-9 for n in range(len(x)))


def test_culotta9_smoke(tmp_path):
    res, md = quick(tmp_path, "culotta9")
    assert {"fig_9_2", "fig_9_3", "fig_9_4", "fig_9_5"} <= set(res)
    assert all("n-best" in p and "univariate" in p for p in res["fig_9_2"])
    assert "Figure 9.5" in md


def test_from_cache_and_bad_options(tmp_path, capsys):
    cache, md = tmp_path / "c.json", tmp_path / "R.md"
    assert main(["--only", "nope", "--from-cache", "--cache", str(cache), "--markdown", str(md)]) == 2
    assert main(["--only", "w06", "--from-cache", "--cache", str(cache), "--markdown", str(md)]) == 2
    assert "no cached figures" in capsys.readouterr().err
    assert main(["--only", "culotta9", "--quick"]) == 2             # a slice must not overwrite the tables
    cache.write_text(json.dumps({"culotta9": {"meta": {"date": "d", "commit": "c", "command": "x", "wall_seconds": 1,
                                                       "cpu_seconds": 1, "children_cpu_seconds": 0,
                                                       "load_before": [0, 0, 0], "load_after": [0, 0, 0],
                                                       "machine": "m", "quick": False, "commands": ["mln x"]},
                                              "result": {"fig_9_2": [], "fig_9_3": {"points": [], "correlation": None},
                                                         "fig_9_4": [], "fig_9_5": [],
                                                         "settings": {"instances_per_point": 1, "n_best": 50}}}}))
    out = tmp_path / "o.json"
    assert main(["--only", "culotta9", "--from-cache", "--cache", str(cache), "--markdown", str(md),
                 "--json", str(out)]) == 0
    assert json.loads(out.read_text())["culotta9"]["fig_9_2"] == []
    text = md.read_text()
    assert "Culotta's thesis, chapter 9" in text and "Not run yet" in text     # the other tables


def test_set_makes_a_stated_subset(tmp_path, capsys):
    from bench.reproduce import culotta9
    from bench.reproduce.__main__ import apply_subset

    cache, md = tmp_path / "c.json", tmp_path / "R.md"
    for bad in ("culotta9.NOPE=1", "culotta9.INSTANCES=x", "riedel2.RUN_FOLDS=1", "culotta9"):
        assert main(["--only", "culotta9", "--set", bad, "--cache", str(cache), "--markdown", str(md)]) == 2
    assert "--set" in capsys.readouterr().err and not cache.exists()
    old = (culotta9.INSTANCES, culotta9.SGMP_SECONDS)
    try:
        applied = apply_subset(culotta9, "culotta9", ["culotta9.INSTANCES=1", "culotta9.SGMP_SECONDS=2.5",
                                                      "w06.FOLDS=2"])
        assert (culotta9.INSTANCES, culotta9.SGMP_SECONDS) == (1, 2.5)
        assert applied == ["INSTANCES=1 (table: 4)", "SGMP_SECONDS=2.5 (table: 20.0)"]
    finally:
        culotta9.INSTANCES, culotta9.SGMP_SECONDS = old


def test_tables_side_by_side_share_the_slots(tmp_path, monkeypatch, capsys):
    """``--jobs N`` with several tables: each table in its own process, at most N
    commands at once over all of them (the in-process tables hold a slot for
    their whole run), each table's entry handed back; a failing table is named
    and the others still finish. A fake ``run_table`` (the forked children
    inherit the patch) logs when each command starts and ends."""
    import time

    from bench.reproduce import __main__ as M
    from bench.reproduce.common import Run

    log = tmp_path / "events.log"

    def fake_run_table(name, work, jobs, quick, settings=None, subset=None, slots=None, command=None):
        if name == "w06":
            raise RuntimeError("w06 broke")
        run = Run(work=work, log=work / "commands.log", quick=quick, jobs=jobs, slots=slots)

        def unit(i):
            with run.slot():
                with open(log, "a") as f:
                    f.write(f"{time.perf_counter()} +1 {name}\n")
                time.sleep(0.2)
                with open(log, "a") as f:
                    f.write(f"{time.perf_counter()} -1 {name}\n")

        if name in M.IN_PROCESS:
            unit(0)         # (its slot is held around the whole run by the caller: no second one to take)
        else:
            run.map(unit, list(range(3)))
        return {"meta": {"wall_seconds": 0.2, "cpu_seconds": 0.0, "command": command, "jobs": jobs},
                "result": {"name": name}}

    monkeypatch.setattr(M, "run_table", fake_run_table)
    got = {}
    failed, wall = M.run_side_by_side(["poon3", "culotta9", "w06", "riedel2"], tmp_path / "work", 2, False, [],
                                      {}, "python -m bench.reproduce", lambda n, e: got.__setitem__(n, e))
    assert failed == ["w06"] and "w06 failed" in capsys.readouterr().err
    assert set(got) == {"poon3", "culotta9", "riedel2"}
    assert got["poon3"]["result"] == {"name": "poon3"} and got["poon3"]["meta"]["side_by_side"]["slots"] == 2
    assert got["riedel2"]["meta"]["command"] == "python -m bench.reproduce"
    events = sorted((float(t), int(d), n) for t, d, n in (line.split() for line in log.read_text().splitlines()))
    running = peak = 0
    for _, d, _ in events:
        running += d
        peak = max(peak, running)
    assert peak == 2 and wall > 0


def test_jobs_must_be_positive(tmp_path, capsys):
    assert main(["--only", "culotta9", "--jobs", "0", "--cache", str(tmp_path / "c.json"),
                 "--markdown", str(tmp_path / "R.md")]) == 2
    assert "--jobs" in capsys.readouterr().err
