"""``bench/er_members.py``: every linkage member's held-out and test F1 on a
fold of a small generated author set, and its refusals of bad input."""

import json

import pytest

from bench import er_authors, er_members
from bench import er_data as E
from bench.er_cora import _write


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    # eight of the generator's 60 name blocks, its five folds by block folded into two (one training world)
    recs, gold, folds = er_authors.generate(0)
    keep = [i for i, g in enumerate(gold) if int(g[1:4]) < 8]
    out = tmp_path_factory.mktemp("er") / "authors_small"
    _write(out, recs.iloc[keep].reset_index(drop=True), [gold[i] for i in keep], [1 + folds[i] % 2 for i in keep],
           ["name", "coauthors", "title", "venue"], ("year",))
    return out


def test_every_member_is_scored_and_the_chosen_one_has_the_best_held_out_f1(small, tmp_path):
    out = tmp_path / "m.json"
    ds = E.load(small)
    fold = ds.folds()[0]
    er_members.main(["--root", str(small.parent), "--datasets", small.name, "--folds", str(fold),
                     "--json", str(out)])
    (row,) = json.loads(out.read_text())[small.name]
    members = row["members"]
    assert set(members) == {"all", "max", "sum", "mean"}
    for m in members.values():
        assert 0.0 <= m["pairwise_f1"] <= 1.0 and 0.0 <= m["held_out_f1"] <= 1.0
    held = {k: m["held_out_f1"] for k, m in members.items()}
    assert held[row["chosen"]] == max(held.values())


@pytest.mark.parametrize("args, message", [
    (["--root", "{root}", "--datasets", "nope"], "records.csv not found"),
    (["--root", "{root}", "--datasets", "{name}", "--folds", "9"], "has no fold 9"),
    (["--root", "{root}", "--datasets", "{name}", "--folds", "a-b-c"], "give test folds"),
])
def test_bad_input_exits_2_with_the_flag_named(small, tmp_path, capsys, args, message):
    argv = [a.format(root=small.parent, name=small.name) for a in args] + ["--json", str(tmp_path / "m.json")]
    with pytest.raises(SystemExit) as e:
        er_members.main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


def test_the_table_never_overwrites_an_input_file(small, capsys):
    gold = small / "gold.csv"
    before = gold.read_bytes()
    with pytest.raises(SystemExit) as e:
        er_members.main(["--root", str(small.parent), "--datasets", small.name, "--json", str(gold)])
    assert e.value.code == 2 and "input file" in capsys.readouterr().err
    assert gold.read_bytes() == before
