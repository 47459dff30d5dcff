"""``agentkit eval``'s progress where stderr is not a terminal: a plain line every tenth of
the evaluation or every 10 s, whichever comes first, and the last -- never a silent log."""

from __future__ import annotations

import io
from types import SimpleNamespace

from agentkit.eval._progress import EvalProgress


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _evaluation(total: int) -> SimpleNamespace:
    return SimpleNamespace(recorded=0, passed=0, judged=0, total=total, started_at=0.0,
                           budget=SimpleNamespace(calls=0, tokens=0),
                           limiter=SimpleNamespace(limit=4, rate_limits=0))


def _shown(stream: io.StringIO) -> list[str]:
    return [line.split("] ")[0] + "]" for line in stream.getvalue().splitlines()]


def test_a_line_every_tenth_of_the_samples_and_the_last_one():
    stream, clock = io.StringIO(), _Clock()
    progress, evaluation = EvalProgress(stream, clock=clock), _evaluation(25)

    progress(evaluation)  # before the first sample: nothing to say yet
    for done in range(1, 26):
        evaluation.recorded = done
        progress(evaluation)

    assert _shown(stream) == [f"agentkit eval: [{n:>2}/25]" for n in (3, 6, 9, 12, 15, 18, 21,
                                                                      24, 25)]


def test_a_line_every_10_seconds_while_no_sample_finishes():
    stream, clock = io.StringIO(), _Clock()
    progress, evaluation = EvalProgress(stream, clock=clock), _evaluation(40)
    progress(evaluation)

    for second in range(1, 31):  # the waiting loop's ticks; 30 s, no sample done
        clock.now = float(second)
        evaluation.budget.calls = second
        progress(evaluation)

    assert _shown(stream) == ["agentkit eval: [ 0/40]"] * 3
    assert "· 10 calls ·" in stream.getvalue().splitlines()[0]


def test_a_terminals_line_is_rewritten_only_when_a_sample_finishes():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    progress, evaluation = EvalProgress(stream), _evaluation(2)

    progress(evaluation)
    progress(evaluation)  # a tick: the same sample count
    evaluation.recorded = 1
    progress(evaluation)
    progress.close()

    assert stream.getvalue().count("\r\x1b[K") == 3  # two lines, then cleared
