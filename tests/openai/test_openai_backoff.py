"""Retry back-off against a real (loopback) HTTP server: real outside a simulation; what
the server's retry-after headers may say."""

from __future__ import annotations

import contextvars

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit.llms import ChatMessage, errors
from agentkit.llms.openai import BACKOFF_INITIAL, RETRY_AFTER_MAX, OpenAI, parse_retry_after
from mocks.loopback_server import LoopbackServer, Reply, completion

pytestmark = pytest.mark.agentkit_allow_loopback

USER = [ChatMessage(role="user", content="hi")]
RETRY_AFTER = 0.3


def test_sync_chat_outside_a_simulation_really_waits_retry_after_between_attempts() -> None:
    with LoopbackServer([Reply(429, {"error": {"message": "slow down"}},
                               headers={"retry-after": str(RETRY_AFTER)}),
                         Reply(200, completion("done"))]) as server:
        llm = OpenAI(base_url=server.url, max_retries=1)

        # a fresh context: none of this test's simulation (tests/conftest.py) is active
        response = contextvars.Context().run(llm.chat, USER)

    first, second = server.requests
    assert response.message.content == "done"
    assert second.at - first.at >= RETRY_AFTER


def test_sync_chat_inside_a_simulation_waits_retry_after_on_the_virtual_clock(sim) -> None:
    with LoopbackServer([Reply(429, {"error": {"message": "slow down"}},
                               headers={"retry-after": "30"}),
                         Reply(200, completion("done"))]) as server:
        llm = OpenAI(base_url=server.url, max_retries=1)

        response = llm.chat(USER)

    assert response.message.content == "done"
    assert len(server.requests) == 2 and sim.clock.now() >= 30.0


@pytest.mark.parametrize("header", [{"retry-after": "nan"}, {"retry-after-ms": "NaN"}])
def test_a_retry_after_that_is_not_a_number_of_seconds_falls_back_to_the_back_off(
        sim, header: dict[str, str]) -> None:
    with LoopbackServer([Reply(429, {"error": {"message": "slow down"}}, headers=header),
                         Reply(200, completion("done"))]) as server:
        llm = OpenAI(base_url=server.url, max_retries=1)

        response = llm.chat(USER)

    assert response.message.content == "done"
    assert len(server.requests) == 2 and sim.clock.now() == pytest.approx(BACKOFF_INITIAL)


@pytest.mark.parametrize("value", ["inf", "1e999", "121"])
def test_a_retry_after_that_is_infinite_or_past_two_minutes_is_not_retried(sim, value) -> None:
    with LoopbackServer([Reply(429, {"error": {"message": "slow down"}},
                               headers={"retry-after": value})]) as server:
        llm = OpenAI(base_url=server.url, max_retries=3)

        with pytest.raises(errors.RateLimitError) as caught:
            llm.chat(USER)

    assert len(server.requests) == 1 and sim.clock.now() == 0
    assert caught.value.retry_after is not None and caught.value.retry_after > RETRY_AFTER_MAX


_HEADER_VALUES = st.one_of(
    st.sampled_from(["nan", "NaN", "-nan", "inf", "-inf", "1e999", "-1", "0", "2.5", " 3 ", "1_0",
                     "Wed, 21 Oct 2015 07:28:00 GMT", "Mon, 01 Jan 0001 00:00:00 GMT", ""]),
    st.text(max_size=12), st.floats().map(str))


@pytest.mark.slow  # property test at full size
@settings(max_examples=300)
@given(st.dictionaries(st.sampled_from(["retry-after", "retry-after-ms", "date"]), _HEADER_VALUES))
def test_any_retry_after_headers_give_no_wait_or_one_of_at_least_zero_seconds(headers):
    seconds = parse_retry_after(headers)

    assert seconds is None or seconds >= 0  # nan is neither
