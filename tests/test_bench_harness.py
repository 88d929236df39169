"""The benchmark harness: registration, fresh-process runs, medians, JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import harness  # noqa: E402
from bench.peers import PEERS, peer_figures  # noqa: E402


def test_summary_medians_and_json(tmp_path):
    s = harness.Summary("demo", "a demo")
    s.runs = [
        {"wall_s": 3.0, "cpu_s": 2.0, "peak_rss_mb": 10.0, "figures": {"atoms": 5, "rate": 1.0, "note": "a"}},
        {"wall_s": 1.0, "cpu_s": 1.0, "peak_rss_mb": 30.0, "figures": {"atoms": 5, "rate": 3.0, "note": "b"}},
        {"wall_s": 2.0, "cpu_s": 4.0, "peak_rss_mb": 20.0, "figures": {"atoms": 5, "rate": 2.0, "note": "c"}},
    ]
    assert s.median("wall_s") == 2.0
    assert s.figures() == {"atoms": 5, "rate": 2.0, "note": "c"}
    data = s.to_json()
    assert data["median_wall_s"] == 2.0 and data["median_cpu_s"] == 2.0 and data["peak_rss_mb"] == 30.0
    path = harness.save_result(s, tmp_path)
    assert json.loads(path.read_text())["workload"] == "demo"
    assert harness.previous_result("demo", tmp_path)["figures"]["atoms"] == 5


def test_registration_and_in_process_run(monkeypatch):
    monkeypatch.setattr(harness, "REGISTRY", {})
    monkeypatch.setattr(harness, "load_workloads", lambda: harness.REGISTRY)

    @harness.workload("tiny", "a tiny workload")
    def tiny():
        return {"answer": 42}

    @harness.workload("skipper")
    def skipper():
        raise harness.Skip("nothing to do here")

    result = harness.run_once_here("tiny")
    assert result["figures"] == {"answer": 42} and result["wall_s"] >= 0 and result["peak_rss_mb"] > 0
    summary = harness.run_workload(harness.REGISTRY["tiny"], 2, in_process=True)
    assert len(summary.runs) == 2 and summary.figures() == {"answer": 42}
    skipped = harness.run_workload(harness.REGISTRY["skipper"], 3, in_process=True)
    assert skipped.skipped == "nothing to do here" and not skipped.runs


def test_workloads_are_listed():
    out = subprocess.run([sys.executable, "-m", "bench", "--list"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "load" in out.stdout


def test_fresh_process_run_of_load():
    if not harness.data_dir().is_dir():
        pytest.skip(f"shared data folder not found: {harness.data_dir()}")
    harness.load_workloads()
    result = harness.run_once("load", timeout=300)
    assert "error" not in result, result
    figures = result["figures"]
    assert figures["class_atoms"] == 82684 and figures["atoms"] > 200_000
    assert result["peak_rss_mb"] > 0


def test_peers_transcribed():
    assert peer_figures("load")[0].value == 115.0
    assert any(p.value == 3080.9 for p in PEERS["cse-map"])
    assert peer_figures("no-such-key") == []
