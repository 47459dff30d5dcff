"""``agentkit eval``'s progress on stderr: done/total, the pass rate so far, calls and tokens
spent, the concurrency limit and rate limits met, and the time left.

On a terminal it is one line, rewritten after each recorded sample and cleared at the end.
Elsewhere (a CI log, a ``| tee``) a rewritten line would be noise, and no line at all leaves a
long evaluation silent for minutes: it prints a plain line every ``every`` samples (a tenth of
the evaluation by default) or every ``interval`` seconds, whichever comes first, and the last.
"""

from __future__ import annotations

import math
import shutil
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from agentkit.core import fmt

if TYPE_CHECKING:
    from agentkit.eval._matrix import Evaluation

__all__ = ["EvalProgress"]


class EvalProgress:
    """A :data:`~agentkit.eval._matrix.Progress` callback writing to ``stream`` (module
    docstring); ``clock`` (real seconds) decides when a plain line is due."""

    def __init__(self, stream: TextIO, *, interval: float = 10.0, every: int | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.terminal = stream.isatty()
        self.interval = interval
        self.every = every
        self.clock = clock
        self.shown = False
        self.first: int | None = None
        self._last_done: int | None = None
        self._last_at = -math.inf
        self._lock = threading.Lock()  # samples finish on several threads

    def line(self, evaluation: Evaluation) -> str:
        """``[12/40] pass 83% · 24 calls · 1,520 tokens · limit 4 (0 rate limits) · ETA 2m``."""
        done = evaluation.recorded
        if self.first is None:
            self.first = done
        rate = (f"pass {evaluation.passed / evaluation.judged:.0%}" if evaluation.judged
                else "pass —")
        new = done - self.first
        elapsed = time.monotonic() - evaluation.started_at
        left = evaluation.total - done
        eta = (f"ETA {fmt.seconds(elapsed / new * left)}" if new and left else "ETA —")
        return (f"[{done:>{len(str(evaluation.total))}}/{evaluation.total}] {rate} · "
                f"{evaluation.budget.calls:,} calls · {evaluation.budget.tokens:,} tokens · "
                f"limit {evaluation.limiter.limit} ({evaluation.limiter.rate_limits} rate "
                f"limits) · {eta}")

    def __call__(self, evaluation: Evaluation) -> None:
        with self._lock:
            self._show(evaluation)

    def _show(self, evaluation: Evaluation) -> None:
        done, now = evaluation.recorded, self.clock()
        if self.terminal:
            if self.shown and done == self._last_done:
                return  # a tick of the waiting loop: the line moves with the samples
            self._last_done = done
            columns = shutil.get_terminal_size().columns - 1
            self.stream.write(f"\r\x1b[K{self.line(evaluation)[:columns]}")
            self.stream.flush()
            self.shown = True
            return
        text = self.line(evaluation)
        if self._last_done is None:  # the first call, before any sample: nothing to say yet
            self._last_done = done
            self._last_at = now
            return
        every = self.every or max(1, math.ceil(evaluation.total / 10))
        moved = done - self._last_done
        if (moved > 0 and (moved >= every or done == evaluation.total)) or (
                now - self._last_at >= self.interval):
            self._last_done, self._last_at = done, now
            self.stream.write(f"agentkit eval: {text}\n")
            self.stream.flush()

    def close(self) -> None:
        """Clear the terminal's line (a plain log keeps its lines)."""
        if self.terminal and self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False
