"""OpenAI backend: missing keys, HTTP errors, timeouts and the retry schedule (virtual time)."""

import logging
import traceback

import httpx
import pytest

from agentkit.core.sim import run_sync
from agentkit.instrumentation import LLMCallEndEvent, collect_events
from agentkit.llms import errors
from agentkit.llms.mock import ScriptExhaustedError
from agentkit.llms.openai import (
    BACKOFF_INITIAL,
    BACKOFF_MAX,
    NO_KEY_PLACEHOLDER,
    RETRY_AFTER_MAX,
    OpenAI,
)
from agentkit.llms.types import ChatMessage
from mocks.openai_server import HTTPError
from tests.fake_keys import fake_key

USER = [ChatMessage(content="hi")]
SECRET = fake_key("proj-FAKEnotarealkey0000Q9zZ")
MODES = ["sync", "async", "stream", "astream"]


async def _drain(stream_awaitable):
    return [chunk async for chunk in await stream_awaitable]


def call(llm: OpenAI, mode: str = "sync") -> str:
    """One chat call in ``mode``; returns the final text."""
    if mode == "sync":
        return llm.chat(USER).message.content
    if mode == "async":
        return run_sync(llm.achat(USER)).message.content
    if mode == "stream":
        return list(llm.stream_chat(USER))[-1].message.content
    return run_sync(_drain(llm.astream_chat(USER)))[-1].message.content


def elapsed(sim, fn):
    """Virtual seconds ``fn()`` took, and its result or raised error."""
    start = sim.clock.now()
    try:
        outcome = fn()
    except Exception as exc:  # noqa: BLE001 - returned for the test to inspect
        outcome = exc
    return sim.clock.now() - start, outcome


# ----------------------------------------------------------------- API keys
def test_no_api_key_is_an_error_naming_the_environment_variable():
    with pytest.raises(errors.MissingAPIKeyError, match="OPENAI_API_KEY"):
        OpenAI("gpt-4o")


def test_a_missing_api_key_is_also_a_value_error():
    with pytest.raises(ValueError):
        OpenAI("gpt-4o", api_key="")


def test_an_explicit_openai_base_url_still_needs_a_key():
    with pytest.raises(errors.MissingAPIKeyError):
        OpenAI("gpt-4o", base_url="https://api.openai.com/v1")


def test_the_key_is_read_from_openai_api_key(fake_openai, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", fake_key("from-the-environment"))
    server = fake_openai(["Hi"], api_key=fake_key("from-the-environment"))
    llm = server.llm(api_key=None)
    assert call(llm) == "Hi"


def test_a_base_url_server_works_without_a_key(fake_openai):
    server = fake_openai(["local"], base_url="http://localhost:8000/v1")
    llm = server.llm("qwen2.5", api_key=None)
    assert call(llm) == "local"
    assert server.http_requests[0].headers["authorization"] == f"Bearer {NO_KEY_PLACEHOLDER}"


def test_a_401_is_an_invalid_api_key_error_and_is_not_retried(fake_openai):
    server = fake_openai(["never served"], api_key=fake_key("the-right-key-000"), strict=False)
    with pytest.raises(errors.AuthenticationError, match="invalid API key") as caught:
        call(server.llm(api_key=SECRET))
    assert (caught.value.status_code, server.calls) == (401, 1)


@pytest.mark.parametrize("mode", MODES)
def test_a_401_error_never_shows_the_key(fake_openai, mode):
    server = fake_openai([], api_key=fake_key("the-right-key-000"))
    with pytest.raises(errors.AuthenticationError) as caught:
        call(server.llm(api_key=SECRET), mode)
    shown = str(caught.value) + repr(caught.value) + "".join(
        traceback.format_exception(caught.value))
    assert SECRET not in shown and SECRET[-4:] not in shown


def test_a_401_from_a_keyless_base_url_server_says_no_key_is_set(fake_openai):
    server = fake_openai([], base_url="http://localhost:8000/v1", api_key="sk-needed-key-1234")
    with pytest.raises(errors.AuthenticationError, match="no API key is set: set OPENAI_API_KEY"):
        call(server.llm("qwen2.5", api_key=None))


def test_a_server_message_echoing_the_key_is_redacted(fake_openai):
    server = fake_openai([HTTPError(400, f"bad request from key {SECRET}")])
    with pytest.raises(errors.BadRequestError) as caught:
        call(server.llm(api_key=SECRET))
    assert SECRET not in str(caught.value) and "bad request from key" in str(caught.value)


def test_retry_logs_never_show_the_key(fake_openai, caplog):
    server = fake_openai([HTTPError(500, f"oops {SECRET}"), "ok"])
    with caplog.at_level(logging.DEBUG):
        call(server.llm(api_key=SECRET))
    assert "retry 1 of 3" in caplog.text and SECRET not in caplog.text


# ----------------------------------------------------------------- retry schedule
@pytest.mark.parametrize("mode", MODES)
def test_5xx_is_retried_with_exponential_backoff_then_a_server_error(fake_openai, sim, mode):
    server = fake_openai([HTTPError(503, "busy")] * 4)
    spent, error = elapsed(sim, lambda: call(server.llm(), mode))
    assert isinstance(error, errors.ServerError)
    assert (error.status_code, error.attempts, server.calls) == (503, 4, 4)
    assert spent == BACKOFF_INITIAL * (1 + 2 + 4)


@pytest.mark.parametrize("mode", MODES)
def test_a_429_waits_retry_after_seconds_then_succeeds(fake_openai, sim, mode):
    server = fake_openai([HTTPError(429, retry_after=7), HTTPError(429, retry_after=2.5), "ok"])
    spent, text = elapsed(sim, lambda: call(server.llm(), mode))
    assert (text, server.calls, spent) == ("ok", 3, 9.5)


def test_retry_after_as_an_http_date_is_honoured(fake_openai, sim):
    server = fake_openai([HTTPError(429, retry_after=12, retry_after_format="http-date"), "ok"])
    spent, text = elapsed(sim, lambda: call(server.llm(), "async"))
    assert (text, spent) == ("ok", 12)


def test_retry_after_ms_is_honoured(fake_openai, sim):
    server = fake_openai([HTTPError(429, retry_after=0.25, retry_after_format="ms"), "ok"])
    spent, text = elapsed(sim, lambda: call(server.llm()))
    assert (text, spent) == ("ok", 0.25)


# the rules of the openai SDK's own retries (openai._base_client: _should_retry,
# _calculate_retry_timeout), which agentkit runs with max_retries=0 and replaces
@pytest.mark.parametrize("mode", ["sync", "astream"])
def test_a_retry_after_past_two_minutes_is_not_waited_and_the_error_carries_it(fake_openai,
                                                                                sim, mode):
    server = fake_openai([HTTPError(429, "slow down", retry_after=3600)])
    spent, error = elapsed(sim, lambda: call(server.llm(), mode))
    assert isinstance(error, errors.RateLimitError)
    assert (server.calls, spent, error.attempts, error.retry_after) == (1, 0, 1, 3600)


def test_a_retry_after_of_two_minutes_is_waited(fake_openai, sim):
    server = fake_openai([HTTPError(503, retry_after=RETRY_AFTER_MAX), "ok"])
    spent, text = elapsed(sim, lambda: call(server.llm(), "async"))
    assert (RETRY_AFTER_MAX, text, spent) == (120, "ok", 120)


def test_a_retry_after_of_zero_falls_back_to_the_back_off(fake_openai, sim):
    server = fake_openai([HTTPError(429, retry_after=0), "ok"])
    spent, text = elapsed(sim, lambda: call(server.llm()))
    assert (text, spent) == ("ok", BACKOFF_INITIAL)


@pytest.mark.parametrize("status", [429, 500, 503])
def test_x_should_retry_false_is_obeyed_on_a_status_that_is_retried_otherwise(fake_openai,
                                                                                status):
    server = fake_openai([HTTPError(status, headers={"x-should-retry": "false"})])
    with pytest.raises(errors.APIStatusError) as caught:
        call(server.llm())
    assert (server.calls, caught.value.status_code, caught.value.attempts) == (1, status, 1)


@pytest.mark.parametrize("status", [400, 403, 404])
def test_x_should_retry_true_is_obeyed_on_a_status_that_is_not_retried_otherwise(fake_openai,
                                                                                  sim, status):
    server = fake_openai([HTTPError(status, headers={"x-should-retry": "true"}), "ok"])
    spent, text = elapsed(sim, lambda: call(server.llm(), "stream"))
    assert (text, server.calls, spent) == ("ok", 2, BACKOFF_INITIAL)


def test_x_should_retry_true_does_not_wait_a_retry_after_past_two_minutes(fake_openai):
    server = fake_openai([HTTPError(503, retry_after=600, headers={"x-should-retry": "true"})])
    with pytest.raises(errors.ServerError):
        call(server.llm())
    assert server.calls == 1


def test_a_409_is_retried_as_the_sdk_retries_a_lock_timeout(fake_openai, sim):
    server = fake_openai([HTTPError(409, "lock timeout"), "ok"])
    spent, text = elapsed(sim, lambda: call(server.llm(), "async"))
    assert (text, server.calls, spent) == ("ok", 2, BACKOFF_INITIAL)


def test_a_409_that_outlasts_the_retries_is_a_conflict_error(fake_openai):
    server = fake_openai([HTTPError(409, "lock timeout")] * 2)
    with pytest.raises(errors.ConflictError, match=r"HTTP 409 \(2 attempts\): lock timeout"):
        call(server.llm(max_retries=1))
    assert issubclass(errors.ConflictError, errors.APIStatusError)


def test_backoff_doubles_up_to_its_cap(fake_openai, sim):
    server = fake_openai([HTTPError(502)] * 6 + ["ok"])
    spent, text = elapsed(sim, lambda: call(server.llm(max_retries=6), "async"))
    assert text == "ok"
    assert spent == sum(min(BACKOFF_INITIAL * 2 ** n, BACKOFF_MAX) for n in range(6))


def test_rate_limits_that_outlast_the_retries_raise_a_rate_limit_error(fake_openai):
    server = fake_openai([HTTPError(429, "slow down", retry_after=1)] * 3)
    with pytest.raises(errors.RateLimitError, match="HTTP 429 \\(3 attempts\\): slow down") as caught:
        call(server.llm(max_retries=2))
    assert (caught.value.attempts, caught.value.retry_after) == (3, 1.0)


def test_max_retries_zero_makes_a_single_attempt(fake_openai, sim):
    server = fake_openai([HTTPError(500)])
    spent, error = elapsed(sim, lambda: call(server.llm(max_retries=0), "async"))
    assert (type(error), server.calls, spent) == (errors.ServerError, 1, 0)


@pytest.mark.parametrize("mode", MODES)
def test_a_read_timeout_is_not_retried_the_server_may_still_be_serving_it(fake_openai, sim,
                                                                          mode):
    # the request reached the server, which may still be generating the answer: sent again,
    # it would queue behind it (issue 33: 3 retries against a busy one-slot server, 480 s)
    server = fake_openai([TimeoutError()])  # a retry would find the script spent
    spent, error = elapsed(sim, lambda: call(server.llm(max_retries=2, timeout=30), mode))
    assert isinstance(error, errors.APITimeoutError) and isinstance(error, TimeoutError)
    assert "did not answer within 30 s (1 attempt); not retried: the server may still be " \
           "generating that answer" in str(error)
    assert (server.calls, spent, error.retryable) == (1, 0, False)


@pytest.mark.parametrize("mode", MODES)
def test_a_connect_timeout_is_retried_then_an_api_timeout_error(fake_openai, sim, mode):
    server = fake_openai([httpx.ConnectTimeout("no answer to SYN")] * 3)
    spent, error = elapsed(sim, lambda: call(server.llm(max_retries=2, timeout=30), mode))
    assert isinstance(error, errors.APITimeoutError)
    assert str(error) == "could not connect to OpenAI within 30 s (3 attempts)"
    assert (server.calls, spent) == (3, BACKOFF_INITIAL * (1 + 2))


def test_a_connect_timeout_followed_by_an_answer_succeeds(fake_openai):
    server = fake_openai([httpx.ConnectTimeout("no answer to SYN"), "late but fine"])
    assert call(server.llm(), "async") == "late but fine"


def test_a_408_is_retried_as_a_timeout(fake_openai):
    server = fake_openai([HTTPError(408)] * 2)
    with pytest.raises(errors.APITimeoutError):
        call(server.llm(max_retries=1))
    assert server.calls == 2


@pytest.mark.parametrize("mode", MODES)
def test_connection_failures_are_retried_then_an_api_connection_error(fake_openai, mode):
    server = fake_openai([ConnectionError()] * 2)
    with pytest.raises(errors.APIConnectionError, match="could not reach OpenAI"):
        call(server.llm(max_retries=1), mode)
    assert server.calls == 2


def test_a_bad_request_is_not_retried(fake_openai):
    server = fake_openai([HTTPError(400, "messages must not be empty")])
    with pytest.raises(errors.BadRequestError, match="HTTP 400 \\(1 attempt\\): messages must "
                                                     "not be empty"):
        call(server.llm())
    assert server.calls == 1


def test_an_unknown_model_is_a_not_found_error(fake_openai):
    server = fake_openai([HTTPError(404, "The model `gpt-9` does not exist")])
    with pytest.raises(errors.NotFoundError, match="gpt-9"):
        call(server.llm("gpt-9"))


def test_an_exhausted_quota_is_not_retried(fake_openai):
    server = fake_openai([HTTPError(429, "You exceeded your current quota",
                                    code="insufficient_quota")])
    with pytest.raises(errors.QuotaExceededError):
        call(server.llm())
    assert server.calls == 1


def test_typed_errors_carry_the_request_id(fake_openai):
    server = fake_openai([HTTPError(400)])
    with pytest.raises(errors.BadRequestError) as caught:
        call(server.llm())
    assert caught.value.request_id == "req_1"


def test_errors_name_a_base_url_server(fake_openai):
    server = fake_openai([HTTPError(500)], base_url="http://localhost:9999/v1")
    with pytest.raises(errors.ServerError, match="the server at http://localhost:9999/v1"):
        call(server.llm("local-model", max_retries=0))


def test_an_exception_raised_inside_the_transport_reaches_the_caller_unchanged(fake_openai):
    server = fake_openai([KeyError("scripted bug")])
    with pytest.raises(KeyError, match="scripted bug"):
        call(server.llm())
    assert server.calls == 1


def test_running_out_of_script_raises_script_exhausted(fake_openai):
    server = fake_openai([])
    with pytest.raises(ScriptExhaustedError, match="request #1 has no scripted response"):
        call(server.llm())


def test_a_failed_call_emits_an_llm_call_end_event_with_the_error(fake_openai):
    server = fake_openai([HTTPError(400, "nope")])
    with collect_events() as events, pytest.raises(errors.BadRequestError):
        call(server.llm())
    [end] = [e for e in events if isinstance(e, LLMCallEndEvent)]
    assert end.error.startswith("BadRequestError: OpenAI answered HTTP 400")


# ----------------------------------------------------------------- constructor checks
@pytest.mark.parametrize(("kwargs", "message"), [
    ({"model": ""}, "model must be a non-empty model name"),
    ({"temperature": 3}, "temperature must be between 0 and 2"),
    ({"max_tokens": 0}, "max_tokens must be at least 1"),
    ({"timeout": 0}, "timeout must be > 0 seconds"),
    ({"timeout": None}, "timeout must be a number, got None"),
    ({"max_retries": -1}, "max_retries must be an integer >= 0"),
    ({"context_window": 0}, "context_window must be at least 1"),
])
def test_bad_constructor_arguments_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        OpenAI(**{"api_key": "sk-anything-123", **kwargs})
