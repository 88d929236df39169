"""Issue 29, item 1: kernel compilation (the first run after an install) is
booked apart from grounding and inference time, and announced once."""

from __future__ import annotations

import time

import numba

from markovlogic import jit


def test_compile_time_is_counted_and_left_out_of_the_stage():
    jit.watch()
    calls = []
    jit.on_first_compile(lambda: calls.append(1))
    try:
        stages = jit.Stages()

        @numba.njit(cache=False)
        def fresh(x):                      # a new function: compiled on its first call
            s = 0.0
            for i in range(x):
                s += i * 0.5
            return s

        start = time.perf_counter()
        assert fresh(10) == 22.5
        spent = time.perf_counter() - start
        lap = stages.lap()
        assert stages.compile > 0.0
        assert lap <= spent - stages.compile + 0.05
        assert fresh(10) == 22.5           # compiled: no new event
        before = jit.compile_seconds()
        fresh(20)
        assert jit.compile_seconds() == before
    finally:
        jit.on_first_compile(None)
    assert calls in ([], [1])              # once per process at most (an earlier test may have compiled first)


def test_book_takes_compile_time_out_of_an_answer():
    class Answer:
        def __init__(self):
            self.stats, self.ground_seconds, self.infer_seconds = {}, 2.0, 1.0

    jit.watch()
    answer = Answer()
    jit._total += 1.5                      # as if 1.5 s of compilation happened during the call
    try:
        jit.book(answer, jit.compile_seconds() - 1.5)
    finally:
        jit._total -= 1.5
    assert answer.stats["compile_seconds"] == 1.5
    assert (answer.infer_seconds, answer.ground_seconds) == (0.0, 1.5)
