"""Ctrl-C at random moments of an evaluation, in this process: a real SIGINT sent to the main
thread (as a terminal's Ctrl-C is delivered) while a live request is in flight, then the same
evaluation resumed, again and again until every sample is recorded. What it ends with must
equal an evaluation that was never interrupted, with not one call asked twice or lost."""

from __future__ import annotations

import random
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agentkit.eval._live import AdaptiveConcurrency
from agentkit.eval._matrix import Evaluation, plan
from agentkit.llms.mock import FunctionLLM, tool_call
from tests.scenario_text import adding_scenario

__all__ = ["Campaign", "ctrl_c_delivered", "uninterrupted", "evaluate", "outcome", "write_suite",
           "Live"]

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: Calls each sample makes: the `add` call, then the answer.
CALLS = 2


def write_suite(folder: Path, scenarios: int) -> Path:
    """``scenarios`` scenarios asking 2 + 3 of a function-calling agent, expecting 5 (each
    case's samples in a cassette of its own: several small cassettes save faster than one
    large one)."""
    suite = folder / "scenarios"
    suite.mkdir(parents=True)
    for number in range(scenarios):
        name = f"s{number}"
        (suite / f"{name}.yaml").write_text(adding_scenario(name, """\
expect:
  answer: {contains: "5"}
agents:
  function_calling:
    script: []
"""), "utf-8")
    return suite


class Live:
    """Live models, one per sample: each request takes a little real time (so requests
    overlap); sample i answers 5, except every third sample, which answers 6. The
    ``interrupt_at``-th request (over all samples) sends SIGINT to the main thread."""

    def __init__(self, interrupt_at: int | None, jitter: random.Random) -> None:
        self.interrupt_at = interrupt_at
        self.requests = 0
        self.interrupted = False
        self.hold = threading.Event()
        """Cleared: the interrupting request is answered only once it is set again."""
        self.hold.set()
        self._lock = threading.Lock()
        self._pauses = [jitter.uniform(0.0005, 0.003) for _ in range(64)]

    def __call__(self, model: str, seed: int) -> FunctionLLM:
        def reply(messages: list[Any], tools: Any) -> Any:
            with self._lock:
                self.requests += 1
                number = self.requests
            if number == self.interrupt_at:
                self.interrupted = True
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
                assert self.hold.wait(60)
            time.sleep(self._pauses[number % len(self._pauses)])
            if not any(m.role == "tool" for m in messages):
                return tool_call("add", a=2, b=3)
            return "2 + 3 = 6" if seed % 3 == 2 else "2 + 3 = 5"

        return FunctionLLM(reply, name=model)


def evaluate(suite: Path, live: Any, samples: int, concurrency: int) -> Evaluation:
    cases = plan([suite], ["function_calling"], ["m1"])
    evaluation = Evaluation(cases, samples, live, sampling={"temperature": 0.8, "seed": 0},
                            limiter=AdaptiveConcurrency(concurrency, maximum=concurrency),
                            workers=concurrency, backoff=0.0)
    evaluation.open()
    return evaluation


@contextmanager
def ctrl_c_delivered() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt in the main thread, as in a terminal (a runner may
    have set it to be ignored)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@dataclass
class Outcome:
    """What an evaluation ended with: per case, each sample's outcome and answer; per
    cassette, each sample's exchanges (requests and answers, not their timing)."""

    results: list[tuple[str, int, int, list[tuple[int, str | None, str | None]]]]
    cassettes: dict[str, dict[int, list[Any]]]


def outcome(evaluation: Evaluation) -> Outcome:
    results = []
    for result in evaluation.results():
        sampled = result.sampled
        runs = [(run.index, run.outcome,
                 run.result.trace.turns[-1].response if run.result is not None else None)
                for run in sampled.runs]
        results.append((result.case.key, sampled.stats.passed, sampled.stats.judged, runs))
    cassettes: dict[str, dict[int, list[Any]]] = {}
    for case in evaluation.cases:
        data = yaml.load(case.cassette.read_text("utf-8"), Loader=_LOADER)
        by_sample: dict[int, list[Any]] = {}
        for exchange in data["exchanges"]:
            kept = {k: v for k, v in exchange.items() if k not in ("latency",)}
            by_sample.setdefault(exchange.get("sample", 0), []).append(kept)
        assert data["complete"] == list(range(evaluation.samples)), case.cassette
        cassettes[case.key] = by_sample
    return Outcome(results, cassettes)


def uninterrupted(folder: Path, scenarios: int, samples: int,
                  concurrency: int) -> tuple[Outcome, int]:
    """The outcome of an evaluation never interrupted, and the calls it made."""
    live = Live(None, random.Random(0))
    evaluation = evaluate(write_suite(folder, scenarios), live, samples, concurrency)
    evaluation.record()
    return outcome(evaluation), live.requests


@dataclass
class Campaign:
    """One evaluation interrupted at random moments (seeded) and resumed until it is done."""

    folder: Path
    scenarios: int
    samples: int
    concurrency: int
    rng: random.Random
    interrupts: int = 0
    calls: int = 0
    runs: int = 0

    def run(self, *, most: int | None = None) -> Outcome:
        """Interrupt at most ``most`` times (None: every run), then resume without
        interrupting until every sample is recorded."""
        suite = write_suite(self.folder, self.scenarios)
        while True:
            probe = evaluate(suite, None, self.samples, self.concurrency)
            left = sum(CALLS for _ in probe.todo)
            if not left:
                return outcome(probe)
            stop = most is None or self.interrupts < most
            live = Live(self.rng.randint(1, left) if stop else None, self.rng)
            evaluation = evaluate(suite, live, self.samples, self.concurrency)
            self.runs += 1
            try:
                evaluation.record()
            except KeyboardInterrupt:
                self.interrupts += 1
            else:
                assert not live.interrupted, "a Ctrl-C did not reach record()"
                assert not evaluation.missing(), "an uninterrupted run left samples"
            self.calls += live.requests
