"""A generated corpus of bad inputs (issue 16): mutations of good models,
evidence and options, run through ``mln check``, ``mln ground``, ``mln
infer`` and ``mln learn``. Every case must end with exit status 0 (the
mutation happened to be valid) or 2 (a clear error), never an internal error
(``MLN_TRACEBACK=1`` makes one raise here with its traceback), and within a
bounded time.

The corpus is drawn from a seeded generator, so it is the same on every run;
``CORPUS_SEED`` changes it."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest

from markovlogic.cli import main

CORPUS_SEED = int(os.environ.get("MLN_CORPUS_SEED", "20261124"))
CASE_SECONDS = 60.0        # a hang check, not a speed measurement

MODELS = {
    "smokers": (
        "person = {Anna, Bob, Chris, Dan}\n"
        "Smokes(person)\nCancer(person)\nFriends(person, person)\n\n"
        "1.5 Smokes(x) => Cancer(x)\n"
        "1.1 Friends(x, y) ^ Smokes(x) => Smokes(y)\n"
        "Friends(x, y) => Friends(y, x).\n"
        "-0.5 Cancer(x)\n",
        "Smokes(Anna)\nFriends(Anna, Bob)\nFriends(Bob, Chris)\n!Smokes(Dan)\nCancer(Anna)\n",
        "Cancer,Smokes",
    ),
    "blocks": (
        "Topic(doc, topic!)\nLink(doc, doc)\nWord(doc, word)\n\n"
        "0.8 Link(d, e) ^ Topic(d, t) => Topic(e, t)\n"
        "0.3 Word(d, +w) ^ Topic(d, +t)\n"
        "@-0.1 Topic(d, T1)\n",
        "Link(D1, D2)\nLink(D2, D3)\nWord(D1, W1)\nWord(D2, W2)\nWord(D3, W1)\nTopic(D1, T1)\nTopic(D2, T2)\n"
        "Topic(D3, T1)\n",
        "Topic",
    ),
    "exist": (
        "Paper(paper)\nAuthor(person, paper)\nProf(person)\nStudent(person)\n\n"
        "1.2 Prof(x) => EXIST p Author(x, p)\n"
        "0.7 Student(x) ^ Author(x, p) ^ Author(y, p) ^ x != y => Prof(y)\n"
        "Prof(x) => !Student(x).\n",
        "Author(Ann, P1)\nAuthor(Bea, P1)\nAuthor(Bea, P2)\nStudent(Ann)\nProf(Bea)\nPaper(P1)\nPaper(P2)\n",
        "Prof,Student",
    ),
}

INSERTS = list("()!^v=>,.@+*?{}\"'0123456789 \t\n#/\\-:;[]<|&%$") + ["=>", "<=>", "EXIST", "FORALL", "\u00e9", "\x00"]
BAD_NUMBERS = ["1e999", "nan", "-inf", "1e13", "0x1F", "1.2.3", "--1", "1e-400", "99999999999999999999999"]


def _mutate_text(rng: random.Random, text: str) -> str | bytes:
    kind = rng.randrange(12)
    if kind == 0 and text:                                   # delete a character
        i = rng.randrange(len(text))
        return text[:i] + text[i + 1:]
    if kind == 1:                                            # insert something
        i = rng.randrange(len(text) + 1)
        return text[:i] + rng.choice(INSERTS) + text[i:]
    if kind == 2 and text:                                   # truncate
        return text[:rng.randrange(len(text))]
    if kind == 3:                                            # duplicate a line
        lines = text.splitlines()
        k = rng.randrange(len(lines))
        return "\n".join(lines[:k] + [lines[k]] + lines[k:]) + "\n"
    if kind == 4:                                            # swap two tokens
        toks = text.replace("(", " ( ").replace(")", " ) ").replace(",", " , ").split(" ")
        a, b = rng.randrange(len(toks)), rng.randrange(len(toks))
        toks[a], toks[b] = toks[b], toks[a]
        return " ".join(toks)
    if kind == 5:                                            # a bad number where a number is
        import re

        nums = list(re.finditer(r"(?<![A-Za-z_])-?\d+(\.\d+)?", text))
        if nums:
            m = rng.choice(nums)
            return text[:m.start()] + rng.choice(BAD_NUMBERS) + text[m.end():]
        return rng.choice(BAD_NUMBERS) + " " + text
    if kind == 6:                                            # unknown predicate / changed arity
        import re

        atoms = list(re.finditer(r"([A-Z][A-Za-z]*)\(([^()]*)\)", text))
        if atoms:
            m = rng.choice(atoms)
            repl = rng.choice([f"Nope{m.group(1)}({m.group(2)})", f"{m.group(1)}({m.group(2)}, x)",
                               f"{m.group(1)}()", f"{m.group(1)}({m.group(2)}, Zed, Zed)"])
            return text[:m.start()] + repl + text[m.end():]
        return text + "Nope(x)\n"
    if kind == 7:                                            # bytes that are not UTF-8
        i = rng.randrange(len(text) + 1)
        return text[:i].encode() + bytes([rng.choice([0xff, 0xfe, 0xc3, 0x80])]) + text[i:].encode()
    if kind == 8:                                            # empty, whitespace, binary garbage
        return rng.choice(["", "\n\n  \t\n", bytes(rng.randrange(256) for _ in range(64))])
    if kind == 9:                                            # deep nesting or a very long line
        return text + rng.choice(["1 " + "!" * 3000 + "Smokes(x)\n",
                                  "1 " + "(" * 800 + "Smokes(x)" + ")" * 800 + "\n",
                                  "1 " + " v ".join(f"Smokes(x{i})" for i in range(300)) + "\n",
                                  "1 " + " <=> ".join(["Smokes(x)"] * 30) + "\n"])
    if kind == 10:                                           # unbalanced brackets, stray quotes
        return text + rng.choice(["1 (Smokes(x)\n", "1 Smokes(x))\n", "\"unterminated\n", "person = {A, B\n",
                                  "1 Smokes(\"x)\n", "include \"missing.mln\"\n"])
    return text.replace(" ", "", 1) if " " in text else text + "?"


def _cases():
    rng = random.Random(CORPUS_SEED)
    cases = []
    for k in range(64):
        name = rng.choice(sorted(MODELS))
        mln, db, queries = MODELS[name]
        target = rng.choice(["mln", "mln", "db"])
        if target == "mln":
            mln = _mutate_text(rng, mln)
        else:
            db = _mutate_text(rng, db)
        cases.append((f"{k}-{name}-{target}", mln, db, queries, []))
    bad_options = [["--seed", "-1"], ["--samples", "0"], ["--max-seconds", "-3"], ["--max-seconds", "nan"],
                   ["--method", "nope"], ["-q", "Nope"], ["-q", "Smokes(Anna, Bob)"], ["--memory-limit", "12Q"],
                   ["--max-cnf-clauses", "0"], ["--samples", "1000000000000"], ["--seed", "x"]]
    for k, opts in enumerate(bad_options):
        mln, db, queries = MODELS["smokers"]
        cases.append((f"opt{k}", mln, db, queries, opts))
    return cases


def _write(path: Path, content: str | bytes) -> Path:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def _commands(m: Path, d: Path, queries: str, out: Path, opts: list[str]) -> list[list[str]]:
    """The four commands on the case's files; option cases append their
    options to each (an option a command does not take is a usage error,
    exit 2, which is right too)."""
    q = [] if "-q" in opts else ["-q", queries]
    samples = [] if "--samples" in opts else ["--samples", "50"]
    return [
        ["check", "-i", str(m), "-e", str(d)] + opts,
        ["ground", "-i", str(m), "-e", str(d)] + q + opts,
        ["infer", "-i", str(m), "-e", str(d), "--map", "-r", str(out)] + q + opts,
        ["infer", "-i", str(m), "-e", str(d), "-r", str(out)] + samples + q + opts,
        ["learn", "-i", str(m), "-t", str(d), "-o", str(out.with_suffix(".mln")), "--iterations", "2",
         "--ne", queries] + opts,
    ]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
def test_bad_input_gives_a_clear_error_or_a_result(case, tmp_path, monkeypatch, capsys):
    name, mln, db, queries, opts = case
    monkeypatch.setenv("MLN_TRACEBACK", "1")        # an internal error raises here, with its traceback
    m = _write(tmp_path / "model.mln", mln)
    d = _write(tmp_path / "evidence.db", db)
    out = tmp_path / "result.txt"
    for argv in _commands(m, d, queries, out, opts):
        start = time.perf_counter()
        rc = main(argv)
        seconds = time.perf_counter() - start
        err = capsys.readouterr().err
        assert rc in (0, 2), f"{argv[0]} exit {rc}: {err}"
        assert "Traceback" not in err
        assert seconds < CASE_SECONDS, f"{argv[0]} took {seconds:.1f} s"
        if rc == 2:
            assert err.strip(), f"{argv[0]} failed without a message"
