"""The adaptive concurrency controller, the budget and the live model wrapper, on a clock of
the test's own (no real time passes)."""

from __future__ import annotations

import threading

import pytest

from agentkit.core.sim import run, simulation
from agentkit.eval._live import (
    AdaptiveConcurrency,
    Budget,
    BudgetExhaustedError,
    LiveModel,
    StoppedError,
)
from agentkit.llms.errors import APITimeoutError, BadRequestError, RateLimitError
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.types import ChatMessage


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _controller(start: int = 4, **options) -> tuple[AdaptiveConcurrency, Clock]:
    clock = Clock()
    return AdaptiveConcurrency(start, clock=clock, **options), clock


def _round(controller: AdaptiveConcurrency, *, saturated: bool = True,
           retried: bool = False) -> None:
    """One round of successes: as many as the limit, with the limit's worth in flight."""
    busy = controller.limit if saturated else 1
    generations = [controller.acquire() for _ in range(busy)]
    for _ in generations:
        controller.release()
    for index in range(max(controller.limit, 4)):
        controller.success(generations[index % len(generations)], retried=retried)


def _busy(controller: AdaptiveConcurrency, count: int) -> None:
    """``count`` requests in flight (the server took them: they have not come back)."""
    for _ in range(count):
        controller.acquire()


def test_it_starts_at_the_given_number_of_requests_in_flight():
    controller, _ = _controller(start=20)
    assert controller.limit == 20


def test_before_the_first_rate_limit_each_clean_round_doubles_the_limit():
    controller, _ = _controller(start=4, maximum=100)

    _round(controller)
    _round(controller)

    assert controller.limit == 16
    assert [c.reason for c in controller.history] == ["slow_start", "slow_start"]


def test_a_rate_limit_cuts_the_limit_to_eight_tenths():
    controller, _ = _controller(start=20)
    _busy(controller, 19)

    controller.rate_limited()

    assert (controller.limit, controller.episodes) == (16, 1)


def test_a_rate_limit_brings_the_limit_down_to_the_requests_still_in_flight():
    controller, _ = _controller(start=20)
    _busy(controller, 9)

    controller.rate_limited()

    assert controller.limit == 9


def test_the_many_429s_of_one_episode_make_one_cut():
    controller, clock = _controller(start=20, cooldown=15)
    _busy(controller, 19)

    for _ in range(10):
        controller.rate_limited()
        clock.now += 1

    assert (controller.limit, controller.episodes, controller.rate_limits) == (16, 1, 10)


def test_after_the_cooldown_a_new_rate_limit_cuts_again():
    controller, clock = _controller(start=20, cooldown=15)
    _busy(controller, 19)
    controller.rate_limited()
    clock.now = 16

    controller.rate_limited()

    assert (controller.limit, controller.episodes) == (12, 2)


def test_a_retry_after_longer_than_the_cooldown_extends_it():
    controller, clock = _controller(start=20, cooldown=5)
    _busy(controller, 19)
    controller.rate_limited(retry_after=30)
    clock.now = 10

    controller.rate_limited()

    assert controller.episodes == 1


def _cut(controller: AdaptiveConcurrency, taken: int) -> None:
    """A rate limit while ``taken`` requests were in flight (they then come back)."""
    _busy(controller, taken)
    controller.rate_limited()
    for _ in range(taken):
        controller.release()


def test_a_429_with_nothing_else_in_flight_brings_the_limit_to_the_minimum():
    controller, _ = _controller(start=20, cooldown=15)
    _cut(controller, 15)

    controller.rate_limited()  # the same episode, nothing in flight

    assert controller.limit == 1


def test_below_what_the_server_took_clean_rounds_grow_back_even_while_cooling_down():
    controller, _ = _controller(start=10, cooldown=15)
    _cut(controller, 9)  # the server took 9: the cut to 8 is below it
    assert controller.limit == 8

    _round(controller)
    _round(controller)

    assert controller.limit == 9  # back to 9 at once, no further while cooling down


def test_at_what_the_server_took_it_grows_only_once_per_cooldown():
    controller, clock = _controller(start=20, cooldown=15)
    _cut(controller, 12)

    _round(controller)
    assert controller.limit == 12  # cooling down, at the level the server took
    clock.now = 16
    _round(controller)
    _round(controller)

    assert controller.limit == 13  # one step per cooldown above it


def test_successes_of_requests_sent_before_a_cut_are_not_counted():
    controller, clock = _controller(start=8, cooldown=1)
    stale = controller.acquire()
    _busy(controller, 6)
    controller.rate_limited()
    clock.now = 2

    for _ in range(50):
        controller.success(stale)

    assert controller.limit == 6


def test_a_retried_success_is_neutral():
    controller, _ = _controller(start=4)

    _round(controller, retried=True)

    assert controller.limit == 4


def test_a_round_the_workload_did_not_saturate_does_not_grow_the_limit():
    controller, _ = _controller(start=8)

    _round(controller, saturated=False)

    assert controller.limit == 8


def test_the_limit_never_leaves_its_bounds():
    controller, clock = _controller(start=2, minimum=2, maximum=3, cooldown=0)
    _round(controller)
    assert controller.limit == 3
    for _ in range(5):
        clock.now += 1
        controller.rate_limited()  # nothing in flight: as low as the minimum allows
    assert controller.limit == 2


def test_no_request_starts_while_a_retry_after_holds_and_one_does_after():
    controller, clock = _controller(start=4)
    controller.rate_limited(retry_after=3)
    started = threading.Event()

    thread = threading.Thread(target=lambda: (controller.acquire(), started.set()))
    thread.start()
    assert not started.wait(0.3)
    clock.now = 3.5
    thread.join(timeout=5)

    assert started.is_set() and controller.in_flight == 1


def test_a_full_limiter_makes_the_next_request_wait_for_a_release():
    controller, _ = _controller(start=1)
    controller.acquire()
    started = threading.Event()
    thread = threading.Thread(target=lambda: (controller.acquire(), started.set()))
    thread.start()
    assert not started.wait(0.3)

    controller.release()
    thread.join(timeout=5)

    assert started.is_set()


def test_a_set_stop_refuses_new_requests():
    controller, _ = _controller(start=1)
    stop = threading.Event()
    stop.set()

    with pytest.raises(StoppedError, match="stopping"):
        controller.acquire(stop)


@pytest.mark.parametrize("options", [{"start": 0}, {"start": 5, "maximum": 4},
                                     {"start": 4, "decrease": 1.5}])
def test_impossible_settings_are_an_error(options):
    with pytest.raises(ValueError):
        AdaptiveConcurrency(**options)


def test_a_budget_refuses_the_call_past_its_maximum_and_says_what_was_spent():
    budget = Budget(max_calls=2)
    budget.take()
    budget.take()

    with pytest.raises(BudgetExhaustedError, match="2 calls of 2"):
        budget.take()
    assert (budget.calls, budget.refused, budget.exhausted) == (2, 1, True)


def test_a_token_budget_is_spent_by_the_answers():
    budget = Budget(max_tokens=100)
    budget.spend_tokens(120)

    assert budget.exhausted


def _chat(model: LiveModel) -> str:
    async def go() -> str:
        return str((await model.achat([ChatMessage(role="user", content="hi")])).message.content)

    with simulation():
        return run(go())


def test_the_live_model_retries_a_429_reports_it_and_counts_every_attempt():
    limiter, _ = _controller(start=4)
    budget = Budget()
    backend = ScriptedLLM([RateLimitError("429", retry_after=0.0), "hello"], max_retries=0)

    answer = _chat(LiveModel(backend, limiter, budget, backoff=0.0))

    assert (answer, budget.calls, budget.retried, limiter.rate_limits, limiter.in_flight) == (
        "hello", 2, 1, 1, 0)


def test_the_live_model_does_not_retry_what_cannot_succeed():
    limiter, _ = _controller()
    backend = ScriptedLLM([BadRequestError("400: bad"), "never"], strict=False)

    with pytest.raises(BadRequestError):
        _chat(LiveModel(backend, limiter, Budget(), backoff=0.0))
    assert limiter.in_flight == 0


def test_the_live_model_does_not_ask_again_a_request_that_timed_out():
    # the server may still be answering it: a second copy would queue behind the first
    limiter, _ = _controller()
    budget = Budget()
    backend = ScriptedLLM([APITimeoutError("timed out"), "late"], strict=False, max_retries=0)

    with pytest.raises(APITimeoutError):
        _chat(LiveModel(backend, limiter, budget, retries=3, backoff=0.0))
    assert (backend.calls, budget.calls, budget.retried, limiter.in_flight) == (1, 1, 0, 0)


def test_the_live_model_gives_up_after_its_retries_with_the_last_error():
    limiter, _ = _controller()
    error = RateLimitError("429", retry_after=0.0)
    backend = ScriptedLLM([error, error, error], strict=False, max_retries=0)

    with pytest.raises(RateLimitError):
        _chat(LiveModel(backend, limiter, Budget(), retries=2, backoff=0.0))
    assert limiter.rate_limits == 3


def test_the_live_model_refuses_a_call_the_budget_no_longer_covers():
    backend = ScriptedLLM(["never"], strict=False)

    with pytest.raises(BudgetExhaustedError):
        _chat(LiveModel(backend, _controller()[0], Budget(max_calls=0)))
    assert backend.calls == 0
