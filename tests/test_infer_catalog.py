"""The table of inference methods and their flags (infer/catalog.py) is the
one the command line checks, README prints and the API accepts."""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

import pytest
import typer

from markovlogic.cli import app, main
from markovlogic.errors import OptionError
from markovlogic.infer import catalog

ROOT = Path(__file__).resolve().parents[1]
SMOKERS = ROOT / "examples" / "smokers"
BASE = ["-i", str(SMOKERS / "smokers.mln"), "-e", str(SMOKERS / "evidence.db"), "-q", "Smokes,Cancer"]
CLI_ONLY = {"clusters"}          # a file the command writes, not an option of inference


def _infer_flags() -> set[str]:
    command = typer.main.get_command(app).commands["infer"]
    flags = set()
    for p in command.params:
        flags.update(getattr(p, "opts", []) + getattr(p, "secondary_opts", []))
    return flags


def test_every_flag_of_the_table_is_a_flag_of_mln_infer():
    missing = set(catalog.FLAGS) - _infer_flags()
    assert not missing


def _accepted(m: catalog.Method) -> set[str]:
    """What the API of ``m`` takes, from its options class or function."""
    from markovlogic.cluster.agglomerative import AgglomerativeOptions
    from markovlogic.cluster.mh import MHOptions
    from markovlogic.infer.cpi import cpi_map
    from markovlogic.infer.gibbs import gibbs
    from markovlogic.infer.lazy.options import LazyOptions
    from markovlogic.infer.maxwalksat import maxwalksat
    from markovlogic.infer.mcsat import MCSATOptions
    from markovlogic.infer.mh import AtomMHOptions
    from markovlogic.infer.multitask_mh import MultiTaskOptions
    from markovlogic.infer.sgmp import SGMPOptions

    fields = lambda cls: {f.name for f in dataclasses.fields(cls)}          # noqa: E731
    params = lambda fn: set(inspect.signature(fn).parameters)               # noqa: E731
    api = {"hard_weight"} if "--hard-weight" in m.flags else set()         # the API softens the network itself
    if m.over == catalog.CLUSTERINGS:
        return api | fields(MHOptions if m.name == "mh" else AgglomerativeOptions)
    by_name = {
        ("map", "maxwalksat"): params(maxwalksat), ("map", "cpi"): params(cpi_map) | params(maxwalksat),
        ("map", "mh"): fields(AtomMHOptions), ("map", "sgmp"): fields(SGMPOptions),
        ("map", "multitask-mh"): fields(MultiTaskOptions),
        ("marginals", "mcsat"): fields(MCSATOptions) | fields(LazyOptions), ("marginals", "gibbs"): params(gibbs),
        ("marginals", "mh"): fields(AtomMHOptions), ("marginals", "multitask-mh"): fields(MultiTaskOptions),
    }
    return api | by_name.get((m.task, m.name), set())


@pytest.mark.parametrize("m", catalog.METHODS, ids=lambda m: f"{m.task}-{m.name}-{m.over}")
def test_every_flag_of_a_method_is_an_option_its_api_takes(m):
    wanted = {m.option(f) for f in m.flags} - CLI_ONLY
    assert wanted <= _accepted(m), wanted - _accepted(m)
    if m.seeded:
        assert m.over == catalog.CLUSTERINGS or "seed" in _accepted(m) or m.name == "cpi"


def test_the_method_names_are_the_apis():
    from markovlogic.api import MAP_METHODS, MARGINAL_METHODS

    assert set(catalog.names("map")) == set(MAP_METHODS)
    assert set(catalog.names("marginals")) == set(MARGINAL_METHODS)


def test_readme_prints_the_table():
    text = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- catalog:[^\n]*-->\n(.*?)<!-- /catalog -->", text, re.S)
    assert block and block.group(1) == catalog.markdown(), "run python -m markovlogic.infer.catalog"


def test_a_flag_the_method_does_not_take_names_where_it_applies():
    with pytest.raises(OptionError, match=r"--chains does not apply to --method mcsat; it applies to --method gibbs"):
        catalog.options(catalog.method("marginals", "mcsat"), {"--chains": 2})
    with pytest.raises(OptionError, match=r"--max-flips applies to --method cpi only with --cpi-base maxwalksat"):
        catalog.options(catalog.method("map", "cpi"), {"--max-flips": 10})
    got = catalog.options(catalog.method("map", "cpi"), {"--max-flips": 10, "--cpi-base": "maxwalksat",
                                                         "--noise": None})
    assert got == {"max_flips": 10, "base": "maxwalksat"}
    assert catalog.options(catalog.method("map", "sgmp"), {"--max-flips": 7}) == {"flips": 7}
    with pytest.raises(OptionError, match="unknown MAP method 'mcsat'"):
        catalog.method("map", "mcsat")


@pytest.mark.parametrize("extra, message", [
    (["--map", "--method", "cpi", "--noise", "0.2"], "--noise applies to --method cpi only with --cpi-base maxwalksat"),
    (["--map", "--cpi-base", "exact"], "--cpi-base does not apply to --map --method ilp; it applies to --map --method cpi"),
    (["--map", "--method", "mh", "--thin", "3"], "--thin does not apply to --map --method mh; it applies to --method mh"),
    (["--method", "mh", "--steps", "3"], "--steps does not apply to --method mh; it applies to --map --method mh"),
    (["--map", "--clusters", "c.txt"], "--clusters does not apply to --map --method ilp; it applies to --map --method "
                                       "mh (over clusterings), agglomerative"),
    (["--map", "--method", "multitask-mh", "--restarts", "2"], "--restarts does not apply to --map --method multitask-mh"),
])
def test_cli_refuses_a_flag_before_any_work(tmp_path, capsys, extra, message):
    result = tmp_path / "out.result"
    result.write_text("previous\n")
    assert main(["infer", *BASE, *extra, "-r", str(result)]) == 2
    assert message in capsys.readouterr().err
    assert result.read_text() == "previous\n"


def test_cpi_with_a_maxwalksat_base_takes_its_flags(tmp_path):
    out = tmp_path / "cpi.result"
    assert main(["infer", *BASE, "--map", "--method", "cpi", "--cpi-base", "maxwalksat", "--max-flips", "2000",
                 "--tries", "2", "--seed", "4", "-r", str(out)]) == 0
    assert out.read_text().strip()
