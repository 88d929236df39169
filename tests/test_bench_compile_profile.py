"""bench/compile_profile: a pytest run with numba's cache empty, each kernel's
first compilation booked to it and each test file's seconds, one report."""

from __future__ import annotations

import json

import pytest

from bench import compile_profile as cp


def test_a_kernel_compiled_in_a_test_is_booked_to_it(tmp_path, capsys):
    test = tmp_path / "test_tiny_kernel.py"
    test.write_text("import numba\n\n@numba.njit\ndef plus_one(x):\n    return x + 1\n\n"
                    "def test_it():\n    assert plus_one(1) == 2\n")
    out = tmp_path / "report.json"
    rc = cp.main(["--json", str(out), "--", str(test), "-p", "no:cacheprovider"])
    assert rc == 0
    report = json.loads(out.read_text())
    assert report["pytest_exit"] == 0 and len(report["workers"]) == 1
    kernel = [k for k in report["compile_by_kernel"] if k.endswith(".plus_one")]
    assert kernel and report["compile_by_kernel"][kernel[0]] > 0
    assert report["compile_s"] == pytest.approx(sum(report["compile_by_kernel"].values()))
    assert [k for k in report["test_files"] if k.endswith("test_tiny_kernel.py")]
    assert "compile seconds by kernel" in capsys.readouterr().out


def test_summary_leaves_out_the_controller_and_sums_the_workers():
    records = [{"worker": "main", "seconds": 9, "compile": {}, "compiles": {}, "files": {"t1.py": 6.0, "t2.py": 4.0}},
               {"worker": "gw0", "seconds": 9, "compile": {"a.b.k": 2.0, "a.b.j": 1.0}, "compiles": {},
                "files": {"t1.py": 5.0}},
               {"worker": "gw1", "seconds": 9, "compile": {"a.b.k": 1.5, "a.c.m": 0.5}, "compiles": {},
                "files": {"t2.py": 4.0, "t1.py": 1.0}}]
    r = cp.summarize(records, 10.0)
    assert [w["worker"] for w in r["workers"]] == ["gw0", "gw1"]
    assert r["compile_s"] == 5.0 and r["test_s"] == 10.0
    assert r["compile_by_module"] == {"a.b": 4.5, "a.c": 0.5}
    assert list(r["test_files"]) == ["t1.py", "t2.py"]


@pytest.mark.parametrize("args, flag", [(["--json", "/no/such/folder/r.json"], "--json"),
                                        (["--top", "0"], "--top")])
def test_bad_options_exit_2_before_running(args, flag, capsys):
    with pytest.raises(SystemExit) as e:
        cp.main(args)
    assert e.value.code == 2 and flag in capsys.readouterr().err


def test_an_existing_file_that_is_not_json_is_not_overwritten(tmp_path, capsys):
    keep = tmp_path / "model.mln"
    keep.write_text("P(x)\n")
    with pytest.raises(SystemExit) as e:
        cp.main(["--json", str(keep)])
    assert e.value.code == 2 and "not overwriting" in capsys.readouterr().err
    assert keep.read_text() == "P(x)\n"
