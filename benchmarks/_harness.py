"""The measuring loops, shared by both sides so agentkit and LlamaIndex are timed the same way.

A side builds an agent and its scripted LLM (both with ``reset()``, the agent with
``chat(message)`` and ``memory``) and supplies ``inspect(response) -> (answer, tool
outputs)``; plain Python only.

Chats are timed in CPU time of the benchmark process (``time.process_time``): the work is
CPU-bound and single-threaded, so on an idle machine it equals wall time, and on a busy one
(this 2-core box is shared) other processes do not inflate it.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from _conversation import (
    CALL_TIMES,
    LOOKUPS,
    PLANNING_ANSWER,
    planning_times,
    transcript_digest,
    user_message,
)
from _measure import rss_kib

clock = time.process_time
Chat = Callable[[int], Any]
Inspect = Callable[[Any], tuple[str, list[str]]]


class ScriptedChat:
    """Chat ``n`` with ``agent``, its one-chat script rewound first (so it never runs out);
    without ``keep_history`` each chat also starts from empty agent memory."""

    def __init__(self, agent: Any, llm: Any, keep_history: bool = False) -> None:
        self.agent = agent
        self.llm = llm
        self.keep_history = keep_history

    def __call__(self, n: int) -> Any:
        if not self.keep_history:
            self.agent.reset()
        self.llm.reset()
        return self.agent.chat(user_message(n))


def _checked(inspect: Inspect, response: Any, expected: str, calls: int) -> tuple[str, list[str]]:
    reply, observations = inspect(response)
    if reply != expected or len(observations) != calls:
        raise RuntimeError(f"the agent left the script: answered {reply!r} after "
                           f"{len(observations)} tool call(s); expected {expected!r} after {calls}")
    return reply, observations


class Throughput:
    """One scenario's chats, timed round by round, so that two stacks can take turns (load
    from other jobs on a shared machine then falls on both alike).

    Built after ``warmup`` untimed chats; a round is ``chats // calls`` chats (``chats``
    without tool calls), so every scenario makes about ``chats`` tool calls.
    """

    def __init__(self, chat: Chat, inspect: Inspect, expected: str, calls: int, *, chats: int,
                 warmup: int) -> None:
        self.chat, self.inspect, self.expected, self.calls = chat, inspect, expected, calls
        self.per_round = max(1, chats // max(1, calls))
        self.rounds: list[float] = []
        self.step_samples: dict[int, list[float]] = {}
        turns = []
        for n in range(warmup):
            reply, observations = _checked(inspect, chat(n), expected, calls)
            turns.append((user_message(n), reply, observations))
        self.digest = transcript_digest(turns)

    def round(self) -> float:
        """Time one round (CPU seconds)."""
        started = clock()
        for n in range(self.per_round):
            _checked(self.inspect, self.chat(n), self.expected, self.calls)
        self.rounds.append(clock() - started)
        return self.rounds[-1]

    def steps(self) -> None:
        """Time the steps of one round's chats from inside (see ``_conversation.SWEEP``): the
        CPU time from each tool call to the next, kept by the number of calls before it."""
        for n in range(self.per_round):
            CALL_TIMES.start()
            try:
                _checked(self.inspect, self.chat(n), self.expected, self.calls)
            finally:
                times = CALL_TIMES.stop()
            for before, (start, end) in enumerate(pairwise(times), start=1):
                self.step_samples.setdefault(before, []).append(end - start)

    def result(self) -> dict[str, Any]:
        """Chats per second (median round), chats per round and the warm-up chats' digest;
        after :meth:`steps`, the median CPU seconds of the step after k tool calls by k."""
        numbers: dict[str, Any] = {"digest": self.digest, "chats": self.per_round}
        if self.rounds:
            numbers["rate"] = self.per_round / statistics.median(self.rounds)
        if self.step_samples:
            numbers["steps"] = {before: statistics.median(samples)
                                for before, samples in sorted(self.step_samples.items())}
        return numbers


def throughput(chat: Chat, inspect: Inspect, expected: str, calls: int, *, chats: int,
               rounds: int, warmup: int) -> dict[str, Any]:
    """:class:`Throughput` of ``rounds`` rounds in a row."""
    measured = Throughput(chat, inspect, expected, calls, chats=chats, warmup=warmup)
    for _ in range(rounds):
        measured.round()
    return measured.result()


@dataclass
class Block:
    """``chats`` consecutive chats ending at chat ``last`` (1-based)."""

    last: int
    chats: int
    mean_ms: float
    rss_kib: int
    digest: str
    first_trim: int | None = None  # the chat whose memory window first dropped old messages


def long_conversation(chat: Chat, inspect: Inspect, expected: str, memory: Any, *, chats: int,
                      block: int, time_cap: float | None = None) -> Iterator[Block]:
    """Chat ``chats`` times on one agent; yield a :class:`Block` every ``block`` chats (and
    for the last, partial block). Stops early, after a block's chat, past ``time_cap`` s.

    Until ``memory`` (the agent's) first returns a window shorter than its history, each
    chat is followed by an untimed check of that.
    """
    started = time.perf_counter()
    spent, turns, trimmed, first_trim = 0.0, [], False, None
    for n in range(1, chats + 1):
        before = clock()
        response = chat(n)
        spent += clock() - before
        reply, observations = _checked(inspect, response, expected, 1)
        turns.append((user_message(n), reply, observations))
        if not trimmed and len(memory.get()) < len(memory.get_all()):
            trimmed = True
            first_trim = n
        over_time = time_cap is not None and time.perf_counter() - started > time_cap
        if len(turns) == block or n == chats or over_time:
            yield Block(last=n, chats=len(turns), mean_ms=spent / len(turns) * 1000,
                        rss_kib=rss_kib(), digest=transcript_digest(turns), first_trim=first_trim)
            spent, turns, first_trim = 0.0, [], None
        if over_time:
            return


#: One run of the planning question: ``(answer, cities looked up (sorted), LLM calls, wall,
#: serial)``, the times simulated seconds, or ``None`` when the run sleeps for real.
PlanningRun = Callable[[], tuple[str, list[str], int, float | None, float | None]]


def planning(run: PlanningRun, kind: str, llm_latency: float, *, runs: int,
             warmup: int) -> dict[str, Any]:
    """Run ``run`` ``warmup`` + ``runs`` times, each checked against the script (its answer,
    the four look-ups, the LLM calls); the median real time per timed run (ms, wall clock:
    the time a user waits) and the median wall and serial time (the simulated ones when the
    run reports them, else the real wall time and the latencies slept)."""
    ideal = planning_times(kind, llm_latency)
    real, wall, serial = [], [], []
    for n in range(warmup + runs):
        started = time.perf_counter()
        reply, looked_up, llm_calls, simulated_wall, simulated_serial = run()
        seconds = time.perf_counter() - started
        if (reply, looked_up, llm_calls) != (PLANNING_ANSWER, sorted(LOOKUPS), ideal["llm_calls"]):
            raise RuntimeError(
                f"{kind} left the script: answered {reply!r} after looking up {looked_up} in "
                f"{llm_calls} LLM call(s); expected {PLANNING_ANSWER!r} after "
                f"{sorted(LOOKUPS)} in {ideal['llm_calls']}")
        if n >= warmup:
            real.append(seconds)
            wall.append(seconds if simulated_wall is None else simulated_wall)
            serial.append(ideal["serial"] if simulated_serial is None else simulated_serial)
    return {"kind": kind, "llm_latency": llm_latency, "runs": runs,
            "real_ms": statistics.median(real) * 1000, "wall": statistics.median(wall),
            "serial": statistics.median(serial)}
