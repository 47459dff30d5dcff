"""What every live call of an evaluation goes through: adaptive concurrency, budgets, retries.

:class:`AdaptiveConcurrency` limits how many requests are in flight at once and finds a
server's sustainable load by itself (inspect_ai's adaptive connections are the model; the
rules below are re-derived, with two additions measured in ``benchmarks/bench_rate_limit.py``):
it starts at ``start`` requests, and

* **grows** when calls succeed: each *clean round* -- as many successes in a row as the
  limit, none of them retried, while the requests in flight reached 80 % of the limit (a
  limit the workload never used proves nothing) -- doubles the limit until the first rate
  limit (slow start), then adds one -- quickly back up to the number of requests the server
  had taken when the last rate limit came, then slowly: one step up per ``cooldown`` at most,
  so the limit rests at the server's rate instead of knocking on it every few seconds;
* **backs off** on a rate limit (HTTP 429): the limit is multiplied by ``decrease`` (0.8)
  once per *episode*: the many 429s of one burst make one cut, because after a cut a
  ``cooldown`` (``cooldown`` seconds, longer if the server's ``Retry-After`` says so) passes
  before the next cut or any growth beyond the requests the server had taken; successes of
  requests sent before the cut say nothing about the new limit and are not counted. Every
  429 also brings the limit down to the requests still in flight (a refused request comes
  back at once, so those are the ones the server took): new requests then start only as
  accepted ones finish, which ends a burst of 429s within one round trip instead of one
  cooldown;
* **holds** every new request until the time a ``Retry-After`` names, so the requests queued
  behind a 429 do not meet the same wall;
* **watches latency** (the delay-based rule of TCP Vegas and of gradient concurrency
  limiters): a server that queues requests instead of refusing them -- llama.cpp with one
  slot answers one request at a time and never sends a 429 -- shows more requests in flight as
  longer waits, not as errors. Each round's answers are compared with the fastest answer ever
  seen (the server's latency without a queue): the limit grows only while the round's median
  answer took at most ``GROW_WITHIN`` (1.5x) that; when even the round's *fastest* answer took
  more than ``SHRINK_ABOVE`` (2x), every request waited behind others, and the limit falls to
  what the server serves at once (Little's law: the limit over the median's inflation; one
  request against a one-slot server), slow start ends, and requests sent before that cut are
  not counted. Between the two the limit holds. Shrinking asks the fastest answer, so that
  answers of different lengths do not look like a queue; growing asks the median, so that one
  answer that met no queue does not let the limit grow into one. (Answers whose lengths
  differ more than twofold across a whole round can still read as a queue and cut the limit
  needlessly: the price of never drowning a server that queues.)

The limit never goes above ``maximum``, which is ``start`` unless given: the limiter finds a
lower load by itself, but grows beyond the number of requests the user asked for only when
allowed to (``agentkit eval --max-concurrency``).

:class:`Budget` counts live calls and tokens against ``--max-calls`` / ``--max-tokens``; a
call the budget no longer covers is refused before it is sent
(:class:`~agentkit.llms.errors.NotSentError`), so a spent budget stops a run cleanly and
never reaches a cassette. :class:`LiveModel` is the LLM an evaluation records through: the
backend (sent a per-sample ``seed``) behind the limiter, the budget and a retry loop of its
own (the backend runs with ``max_retries=0``, so every 429 reaches the limiter).

Times are real (``time.monotonic``; tests pass a clock of their own); waits happen off the
run's event loop, so a run on agentkit's virtual-time loop records the server's latency,
not its own queueing.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

from agentkit.core.sim import wait
from agentkit.llms import errors as llm_errors
from agentkit.llms.base import LLM, LLMRequest, WrappingLLM
from agentkit.llms.types import ChatResponse

__all__ = ["AdaptiveConcurrency", "LimitChange", "Budget", "BudgetExhaustedError",
           "StoppedError", "LostCallError", "LiveModel"]

#: A round counts toward growth only when the requests in flight reached this share of the
#: limit during it.
SATURATION = 0.8
#: The fewest successes that make a round, however low the limit.
ROUND_FLOOR = 4
#: The limit grows only while a round's median answer took at most this many times the
#: fastest answer ever seen.
GROW_WITHIN = 1.5
#: When a round's fastest answer took more than this many times the fastest ever seen,
#: requests are queueing: the limit falls.
SHRINK_ABOVE = 2.0


@dataclass(frozen=True)
class LimitChange:
    """One change of the concurrency limit: when (seconds since the start), from, to, why
    (``slow_start``, ``grow``, ``rate_limit``, ``in_flight``: down to the requests in
    flight, on a 429 within an episode, or ``latency``: answers slowed by queueing)."""

    at: float
    old: int
    new: int
    reason: str


class AdaptiveConcurrency:
    """A thread-safe limit on requests in flight that adapts to the server (module
    docstring). ``acquire``/``release`` bracket each request; ``success`` and
    ``rate_limited`` report how it went. ``maximum`` (default: ``start``) is the most
    requests in flight it ever allows."""

    def __init__(self, start: int = 20, *, minimum: int = 1, maximum: int | None = None,
                 decrease: float = 0.8, cooldown: float = 15.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        maximum = start if maximum is None else maximum
        if not 1 <= minimum <= start <= maximum:
            raise ValueError(f"need 1 <= minimum <= start <= maximum, got minimum={minimum}, "
                             f"start={start}, maximum={maximum}")
        if not 0 < decrease < 1:
            raise ValueError(f"decrease is a factor between 0 and 1, got {decrease}")
        self.limit = start
        self.minimum, self.maximum = minimum, maximum
        self.decrease, self.cooldown = decrease, cooldown
        self.clock = clock
        self.in_flight = 0
        self.rate_limits = 0
        """Every 429 seen (an episode counts many)."""
        self.episodes = 0
        self.history: list[LimitChange] = []
        self.fastest: float | None = None
        """The fastest answer seen, in seconds: the server's latency without a queue."""
        self._began = clock()
        self._condition = threading.Condition()
        self._slow_start = True
        self._ceiling: int | None = None  # requests the server took at the last rate limit
        self._last_change = clock()
        self._cool_until = -math.inf
        self._hold_until = -math.inf
        self._generation = 0  # bumped by every cut: requests sent before it are stale
        self._round = 0
        self._peak = 0
        self._latencies: list[float] = []  # of this round's successes

    # -- the request path ---------------------------------------------------------------
    def acquire(self, stop: threading.Event | None = None) -> int:
        """Wait for a free slot (and for a ``Retry-After`` hold to pass); returns the
        generation the request is sent in (give it to :meth:`success`). Raises
        :class:`StoppedError` when ``stop`` is set while waiting."""
        with self._condition:
            while True:
                if stop is not None and stop.is_set():
                    raise StoppedError("the evaluation is stopping: no new request is sent")
                held = self._hold_until - self.clock()
                if self.in_flight < self.limit and held <= 0:
                    self.in_flight += 1
                    self._peak = max(self._peak, self.in_flight)
                    return self._generation
                self._condition.wait(timeout=min(max(held, 0.01), 0.25))

    def release(self) -> None:
        with self._condition:
            self.in_flight -= 1
            self._condition.notify_all()

    def success(self, generation: int, *, retried: bool = False,
                latency: float | None = None) -> None:
        """A request sent in ``generation`` succeeded (after ``retried`` attempts, if any), its
        last attempt answered ``latency`` seconds after it was sent (None: not measured)."""
        with self._condition:
            now = self.clock()
            if latency is not None:
                self.fastest = latency if self.fastest is None else min(self.fastest, latency)
            if retried or generation != self._generation:
                return  # neutral: retried, or sent before the last cut
            below = self._ceiling is not None and self.limit < self._ceiling
            if now < self._cool_until and not below:
                return  # cooling down (back up to what the server took is allowed)
            if latency is not None:
                self._latencies.append(latency)
            self._round += 1
            if self._round < max(self.limit, ROUND_FLOOR):
                return
            saturated = self._peak >= SATURATION * self.limit
            fastest, median = self._inflation()
            self._round, self._peak, self._latencies = 0, self.in_flight, []
            if fastest > SHRINK_ABOVE:
                self._generation += 1  # what was sent at the old limit waited behind it
                self._slow_start = False
                served = math.floor(self.limit / median)
                self._change(max(self.minimum, min(served, self.limit - 1)), "latency", now)
                return
            if not saturated or self.limit >= self.maximum or median > GROW_WITHIN:
                return
            near = self._ceiling is not None and self.limit >= self._ceiling
            if near and now - self._last_change < self.cooldown:
                return  # above where the last rate limit left it: probe slowly
            new = min(self.maximum, self.limit * 2 if self._slow_start else self.limit + 1)
            self._change(new, "slow_start" if self._slow_start else "grow", now)

    def _inflation(self) -> tuple[float, float]:
        """How many times the fastest answer ever seen this round's fastest and median
        answers took (1.0 each when latencies were not measured, or are zero)."""
        if not self._latencies or not self.fastest:
            return 1.0, 1.0
        ordered = sorted(self._latencies)
        return ordered[0] / self.fastest, ordered[len(ordered) // 2] / self.fastest

    def rate_limited(self, retry_after: float | None = None) -> None:
        """A request met a rate limit (429), the server asking to wait ``retry_after`` s."""
        with self._condition:
            now = self.clock()
            self.rate_limits += 1
            wait_for = max(retry_after or 0.0, 0.0)
            self._hold_until = max(self._hold_until, now + wait_for)
            taken = max(self.minimum, self.in_flight)
            if now < self._cool_until:  # the same episode
                self._cool_until = max(self._cool_until, now + wait_for)
                if taken < self.limit:
                    self._change(taken, "in_flight", now)
                self._ceiling = min(self._ceiling or taken, taken)
                return
            self.episodes += 1
            self._slow_start = False
            self._generation += 1
            self._round, self._peak, self._latencies = 0, self.in_flight, []
            self._cool_until = now + max(self.cooldown, wait_for)
            cut = max(self.minimum, math.floor(self.limit * self.decrease))
            self._change(min(cut, taken), "rate_limit", now)
            self._ceiling = taken

    def _change(self, new: int, reason: str, now: float) -> None:
        if new != self.limit:
            self.history.append(LimitChange(round(now - self._began, 3), self.limit, new,
                                            reason))
            self.limit = new
            self._last_change = now
            self._condition.notify_all()


class StoppedError(llm_errors.NotSentError):
    """The evaluation is stopping (Ctrl-C, a spent budget): the request was not sent."""


class LostCallError(llm_errors.NotSentError):
    """agentkit's own machinery failed around a live call -- an executor shut down under it
    (the process exiting), its task cancelled: whatever the model answered is not kept, and
    the sample asks again when the evaluation resumes. Never the model's or the agent's
    error, so never recorded as one."""


class BudgetExhaustedError(llm_errors.NotSentError):
    """The call or token budget is spent: the request was not sent."""


@dataclass
class Budget:
    """Live calls and tokens spent, against optional maxima (``--max-calls``,
    ``--max-tokens``). A call is let through while both are below their maximum, so the last
    call may overshoot ``max_tokens`` by its own answer."""

    max_calls: int | None = None
    max_tokens: int | None = None
    calls: int = 0
    tokens: int = 0
    refused: int = 0
    retried: int = 0
    """Of ``calls``, the attempts that failed and were made again (a 429, a 5xx, a timeout)."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def exhausted(self) -> bool:
        return ((self.max_calls is not None and self.calls >= self.max_calls)
                or (self.max_tokens is not None and self.tokens >= self.max_tokens))

    def take(self) -> None:
        """Count one call, or refuse it (:class:`BudgetExhaustedError`) when spent."""
        with self._lock:
            if self.exhausted:
                self.refused += 1
                raise BudgetExhaustedError(f"the budget is spent ({self.describe()})")
            self.calls += 1

    def count_retry(self) -> None:
        """The last call failed and is made again."""
        with self._lock:
            self.retried += 1

    def spend_tokens(self, count: int) -> None:
        with self._lock:
            self.tokens += count

    def describe(self) -> str:
        calls = f"{self.calls:,} calls" + (f" of {self.max_calls:,}" if self.max_calls else "")
        tokens = (f"{self.tokens:,} tokens"
                  + (f" of {self.max_tokens:,}" if self.max_tokens else ""))
        return f"{calls}, {tokens}"


class LiveModel(WrappingLLM):
    """The live backend an evaluation records through (module docstring): each attempt takes
    a slot of ``limiter`` and a call of ``budget``, and a 429 or another retryable error (not a
    timeout: the server may still be serving it) is retried here, up to ``retries`` times,
    after the server's ``Retry-After`` or an exponential back-off (give ``llm``
    ``max_retries=0``, so that every 429 comes here)."""

    def __init__(self, llm: LLM, limiter: AdaptiveConcurrency, budget: Budget, *,
                 stop: threading.Event | None = None, retries: int = 6,
                 backoff: float = 0.5) -> None:
        super().__init__(llm)
        self.limiter = limiter
        self.budget = budget
        self.stop = stop
        self.retries = retries
        self.backoff = backoff
        self.refused = 0
        """Calls this model refused without an answer reaching the run
        (:class:`~agentkit.llms.errors.NotSentError`: a spent budget, a stopping evaluation, a
        call agentkit lost): a run that saw one was cut short by agentkit, not ended by the
        agent or the model."""

    async def _slot(self) -> int:
        """A slot of the limiter, waited for off the event loop."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(None, self.limiter.acquire, self.stop)
        except llm_errors.LLMError:
            raise
        except Exception as error:  # the executor itself failed: a shutdown
            raise _lost(error) from error

    async def _after(self, error: llm_errors.LLMError, attempt: int) -> None:
        """Report ``error`` and wait before the next attempt, or raise it. A stopping
        evaluation does not wait to retry: the call is left to the next run."""
        if isinstance(error, llm_errors.RateLimitError) and error.retryable:
            self.limiter.rate_limited(error.retry_after)
        if not error.retryable or attempt >= self.retries:
            raise error
        if isinstance(error, llm_errors.APITimeoutError):
            # the server may still be working on it (a local model answers one request at a
            # time): asking again would queue a second copy behind the first. The sample ends
            # on an infrastructure error and is asked again by the next run
            raise error
        if self.stop is not None and self.stop.is_set():
            raise StoppedError("the evaluation is stopping: the call is not retried") from error
        self.budget.count_retry()
        delay = error.retry_after if error.retry_after else self.backoff * 2 ** attempt
        await wait(min(delay, 60.0))

    def _count(self, response: ChatResponse) -> None:
        if response.usage is not None:
            self.budget.spend_tokens(response.usage.total_tokens
                                     or response.usage.prompt_tokens
                                     + response.usage.completion_tokens)

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        try:
            return await self._achat_counted(request)
        except llm_errors.NotSentError:
            self.refused += 1
            raise

    async def _achat_counted(self, request: LLMRequest) -> ChatResponse:
        answers = [answer async for answer in
                   self._attempts(lambda: _one(self.llm._achat(request)))]
        return answers[-1]  # a call that ends without raising gave its one answer

    async def _astream_chat(self, request: LLMRequest) -> AsyncIterator[ChatResponse]:
        try:
            async for chunk in self._attempts(lambda: self.llm._astream_chat(request)):
                yield chunk
        except llm_errors.NotSentError:
            self.refused += 1
            raise

    async def _attempts(self, call: Callable[[], AsyncIterator[ChatResponse]]
                        ) -> AsyncIterator[ChatResponse]:
        """The chunks of ``call()`` (a plain call is a stream of one answer), attempted up to
        ``retries`` more times while nothing was handed out yet: each attempt takes a call of
        the budget and a slot of the limiter, and gives the slot back however it ends."""
        for attempt in range(self.retries + 1):
            self.budget.take()
            generation = await self._slot()
            sent = self.limiter.clock()
            last: ChatResponse | None = None
            try:
                async for chunk in call():
                    last = chunk
                    yield chunk
            except llm_errors.LLMError as error:
                self.limiter.release()
                if last is not None:  # chunks were handed out: the call cannot be retried
                    raise
                await self._after(error, attempt)
                continue
            except _UNWINDING:  # Ctrl-C, a cancelled task, a reader that stopped early
                self.limiter.release()
                raise
            except Exception as error:  # not the model's: see _lost
                self.limiter.release()
                raise _lost(error) from error
            self.limiter.release()
            self.limiter.success(generation, retried=attempt > 0,
                                 latency=self.limiter.clock() - sent)
            if last is not None:
                self._count(last)
            return
        raise AssertionError("unreachable")

    def __repr__(self) -> str:
        return f"LiveModel({self.llm!r})"


#: What unwinds through a live call as it is (a recording never keeps it either).
_UNWINDING = (KeyboardInterrupt, SystemExit, GeneratorExit, asyncio.CancelledError)


async def _one(answer: Awaitable[ChatResponse]) -> AsyncIterator[ChatResponse]:
    """A plain call's answer as a stream of one chunk."""
    yield await answer


def _lost(error: Exception) -> LostCallError:
    """What a live call raises when ``error`` came from around the model rather than from it:
    the backend turns everything a server does into an ``LLMError``, so anything else (a
    ``RuntimeError`` of an executor shut down by the exiting process) is agentkit's own."""
    return LostCallError(f"agentkit lost the call's answer ({type(error).__name__}: {error}); "
                         "the sample asks it again when the evaluation resumes")
