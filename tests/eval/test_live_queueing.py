"""The adaptive limiter against simulated servers, on a virtual clock: a server that queues
requests (llama.cpp with one slot: one answer at a time, never a 429) and a server with a rate
limit that answers 429 beyond it. Workers call the server through the limiter the way
``LiveModel`` does (a slot, the request, release, then ``success`` with the answer's latency
or ``rate_limited`` and a retry after the server's ``Retry-After``); every event happens at a
virtual time, so no real time passes and every figure is a count."""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field

import pytest

from agentkit.core.sim import run, simulation
from agentkit.eval._live import AdaptiveConcurrency, Budget, LiveModel
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.types import ChatMessage

RTT = 0.01  # seconds of network each way and back, for an answer and for a 429


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class QueueingServer:
    """``slots`` requests served at once for ``service`` s each; the rest wait their turn."""

    def __init__(self, slots: int, service: float) -> None:
        self.free = [0.0] * slots  # when each slot is free next
        self.service = service

    def answer(self, now: float) -> tuple[float, float | None]:
        """(when the answer arrives, None: never refused)."""
        start = max(now, heapq.heappop(self.free))
        heapq.heappush(self.free, start + self.service)
        return start + self.service + RTT, None


class RateLimitedServer:
    """A token bucket of ``rate`` requests a second holding ``burst``; an admitted request is
    answered after ``latency`` s, another gets a 429 saying when to come back."""

    def __init__(self, rate: float, burst: float, latency: float) -> None:
        self.rate, self.burst, self.latency = rate, burst, latency
        self.tokens, self.stamp = burst, 0.0

    def answer(self, now: float) -> tuple[float, float | None]:
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return now + self.latency + RTT, None
        return now + RTT, (1 - self.tokens) / self.rate


@dataclass
class Outcome:
    answered: list[float] = field(default_factory=list)  # when each answer came
    latencies: list[float] = field(default_factory=list)
    timed_out: int = 0
    refused: int = 0
    peak: int = 0  # the most requests in flight at once


@dataclass(order=True)
class Event:
    at: float
    order: int
    kind: str = field(compare=False)  # "answer", "timeout" or "wake"
    worker: int = field(compare=False)
    generation: int = field(compare=False, default=0)
    sent: float = field(compare=False, default=0.0)
    retry_after: float | None = field(compare=False, default=None)  # a 429's


def drive(server: QueueingServer | RateLimitedServer, limiter: AdaptiveConcurrency,
          clock: Clock, *, workers: int, requests: int | None = None, seconds: float = 1e9,
          timeout: float = 120.0) -> Outcome:
    """``workers`` callers, each making one request after another until ``requests`` were
    sent (or ``seconds`` passed); a request not answered within ``timeout`` is given up (the
    server still serves it, as a real one would) and not asked again; a 429 is asked again
    after its ``Retry-After``, as a retry."""
    outcome = Outcome()
    events: list[Event] = []
    ready = dict.fromkeys(range(workers), 0.0)  # idle callers: when they may send
    retrying: set[int] = set()
    sent_count = 0

    order = itertools.count()

    def schedule(at: float, kind: str, worker: int, generation: int = 0, sent: float = 0.0,
                 retry_after: float | None = None) -> None:
        heapq.heappush(events, Event(at, next(order), kind, worker, generation, sent,
                                     retry_after))

    def dispatch() -> None:
        nonlocal sent_count
        for worker, at in sorted(ready.items(), key=lambda item: (item[1], item[0])):
            if requests is not None and sent_count >= requests and worker not in retrying:
                continue
            if at > clock.now or limiter.in_flight >= limiter.limit:
                continue
            if limiter._hold_until > clock.now:  # a Retry-After holds every new request
                schedule(limiter._hold_until, "wake", worker)
                return
            generation = limiter.acquire()
            outcome.peak = max(outcome.peak, limiter.in_flight)
            del ready[worker]
            if worker not in retrying:
                sent_count += 1
            arrives, retry_after = server.answer(clock.now)
            if arrives - clock.now > timeout:
                schedule(clock.now + timeout, "timeout", worker)
            else:
                schedule(arrives, "answer", worker, generation=generation, sent=clock.now,
                         retry_after=retry_after)

    dispatch()
    while events:
        event = heapq.heappop(events)
        if event.at > seconds:
            break
        clock.now = event.at
        if event.kind == "answer" and event.retry_after is not None:
            limiter.release()
            outcome.refused += 1
            limiter.rate_limited(event.retry_after)
            retrying.add(event.worker)
            ready[event.worker] = event.at + event.retry_after
            schedule(ready[event.worker], "wake", event.worker)
        elif event.kind == "answer":
            limiter.release()
            outcome.answered.append(event.at)
            outcome.latencies.append(event.at - event.sent)
            limiter.success(event.generation, retried=event.worker in retrying,
                            latency=event.at - event.sent)
            retrying.discard(event.worker)
            ready[event.worker] = event.at
        elif event.kind == "timeout":
            limiter.release()
            outcome.timed_out += 1
            retrying.discard(event.worker)
            ready[event.worker] = event.at
        dispatch()
    return outcome


def _limiter(start: int, maximum: int | None = None,
             **options: float) -> tuple[AdaptiveConcurrency, Clock]:
    clock = Clock()
    return AdaptiveConcurrency(start, maximum=maximum, clock=clock, **options), clock


# -- a server that queues: one slot, one answer at a time, never a 429 -------------------------
@pytest.mark.parametrize("maximum", [None, 64], ids=["as-asked", "growth-allowed"])
def test_against_a_one_slot_server_at_most_two_requests_are_in_flight_and_none_times_out(
        maximum):
    # the live evaluation that met this: --concurrency 2 against llama.cpp, 30 samples of
    # two calls each; the limit grew to 64 and 46 of the 60 calls timed out at 120 s
    limiter, clock = _limiter(2, maximum)

    outcome = drive(QueueingServer(slots=1, service=3.0), limiter, clock, workers=64,
                    requests=60)

    assert outcome.peak <= 2 and limiter.limit <= 2
    assert (len(outcome.answered), outcome.timed_out) == (60, 0)


def test_too_many_requests_in_flight_for_a_one_slot_server_fall_to_one():
    limiter, clock = _limiter(20)

    outcome = drive(QueueingServer(slots=1, service=3.0), limiter, clock, workers=20,
                    requests=120)

    assert [change.reason for change in limiter.history][:1] == ["latency"]
    assert limiter.history[0].new == 1
    assert (len(outcome.answered), outcome.timed_out) == (120, 0)
    assert limiter.limit <= 2


def test_against_a_server_of_eight_slots_the_limit_stops_growing_once_answers_wait():
    limiter, clock = _limiter(2, 64)

    outcome = drive(QueueingServer(slots=8, service=1.0), limiter, clock, workers=64,
                    requests=2000)

    # slow start doubles 2, 4, 8 (no answer waits) and 16 (each waits one turn): no further
    assert [change.new for change in limiter.history] == [4, 8, 16]
    assert outcome.peak == 16 and outcome.timed_out == 0
    assert max(outcome.latencies) < 2 * 1.0 + 2 * RTT


def test_an_answer_that_met_no_queue_does_not_let_the_limit_grow_into_one():
    # the first answer of a round at 2 in flight met an idle server; the other three waited
    limiter, _ = _limiter(2, 64)
    generation = limiter.acquire()
    limiter.acquire()  # the limit's worth in flight
    limiter.release()
    limiter.release()
    for latency in (1.0, 2.0, 2.0, 2.0):
        limiter.success(generation, latency=latency)

    assert limiter.limit == 2


def test_answers_of_different_lengths_without_a_queue_do_not_cut_the_limit():
    limiter, _ = _limiter(4, 64)
    for _ in range(3):
        for latency in (0.5, 6.0, 3.0, 9.0):  # short and long answers, none waited
            limiter.success(0, latency=latency)

    assert [change.reason for change in limiter.history] == []


def test_answers_that_all_waited_cut_the_limit_to_what_the_server_serves_at_once():
    limiter, _ = _limiter(16, 64)
    for _ in range(16):
        limiter.success(0, latency=1.0)  # the server without a queue
    for _ in range(16):
        limiter.success(0, latency=4.0)  # four times that: 16 in flight, 4 served at once

    assert (limiter.history[-1].reason, limiter.limit) == ("latency", 4)


def test_requests_sent_before_a_latency_cut_are_not_counted():
    limiter, _ = _limiter(4, 64)
    generation = limiter.acquire()
    for _ in range(4):
        limiter.success(generation, latency=1.0)
    for _ in range(4):
        limiter.success(generation, latency=3.0)
    assert limiter.limit == 1
    for _ in range(8):
        limiter.success(generation, latency=9.0)  # sent at 4 in flight: they waited

    assert limiter.limit == 1 and len(limiter.history) == 1


# -- a server with a rate limit: 429s beyond it (what the limiter was built for) --------------
def test_against_a_rate_limit_it_still_holds_nearly_all_of_it():
    # bench_rate_limit.py's default, on the virtual clock: 20 requests a second of 0.5 s each
    limiter, clock = _limiter(20, 40, cooldown=15.0)

    outcome = drive(RateLimitedServer(rate=20, burst=20, latency=0.5), limiter, clock,
                    workers=40, seconds=60.0)

    settled = [at for at in outcome.answered if at >= 15.0]
    assert len(settled) / 45.0 / 20 >= 0.95
    assert outcome.timed_out == 0
    assert not any(change.reason == "latency" for change in limiter.history)


def test_without_growth_allowed_the_limit_never_passes_the_concurrency_asked_for():
    limiter, clock = _limiter(4)

    outcome = drive(QueueingServer(slots=32, service=1.0), limiter, clock, workers=64,
                    requests=400)

    assert outcome.peak == 4 and limiter.limit == 4 and limiter.maximum == 4


def test_the_live_model_reports_each_answers_latency_to_the_limiter():
    clock = Clock()
    limiter = AdaptiveConcurrency(2, clock=clock)

    class Slow(ScriptedLLM):
        async def _achat(self, request):  # type: ignore[no-untyped-def]
            clock.now += 2.5
            return await super()._achat(request)

    model = LiveModel(Slow(["hello"]), limiter, Budget())

    async def go() -> None:
        await model.achat([ChatMessage(role="user", content="hi")])

    with simulation():
        run(go())
    assert limiter.fastest == pytest.approx(2.5)
    assert math.isfinite(limiter.fastest)
