"""The scripted doubles retry as the OpenAI backend does: one policy (agentkit.llms.retries),
each attempt the next script item, the waits on the virtual clock."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from agentkit.core.sim import run_sync, simulation
from agentkit.llms import errors
from agentkit.llms.mock import FunctionLLM, ScriptedLLM, ScriptExhaustedError, StreamCut
from agentkit.llms.retries import BACKOFF_INITIAL, BACKOFF_MAX, DEFAULT_MAX_RETRIES
from agentkit.llms.types import ChatMessage
from agentkit.recording import FakeOpenAIServer

USER = [ChatMessage(role="user", content="hi")]


def _chat(llm: Any) -> tuple[str, float]:
    """The answer of one chat call, and the simulated seconds it took."""
    with simulation() as sim:
        answer = llm.chat(USER).message.content
        return answer, sim.clock.now()


def test_a_429_is_retried_after_its_retry_after_on_the_virtual_clock() -> None:
    llm = ScriptedLLM([errors.RateLimitError("slow down", retry_after=2), "ok"])

    assert _chat(llm) == ("ok", 2.0)
    assert (llm.calls, len(llm.requests), llm.remaining) == (2, 2, 0)


def test_server_errors_back_off_doubling_and_the_last_one_escapes_with_its_attempts() -> None:
    llm = ScriptedLLM([errors.ServerError("busy")] * 4)

    with simulation() as sim, pytest.raises(errors.ServerError, match="busy") as caught:
        llm.chat(USER)

    assert caught.value.attempts == 4 and llm.calls == 4
    assert sim.clock.now() == BACKOFF_INITIAL * (1 + 2 + 4)


def test_the_back_off_is_capped_as_the_openai_backends() -> None:
    llm = ScriptedLLM([errors.ServerError("busy")] * 7 + ["ok"], max_retries=7)

    assert _chat(llm) == ("ok", sum(min(BACKOFF_INITIAL * 2 ** n, BACKOFF_MAX)
                                    for n in range(7)))


def test_max_retries_0_raises_the_first_error_and_the_default_is_the_openai_backends() -> None:
    llm = ScriptedLLM([errors.RateLimitError("slow down"), "unused"], max_retries=0,
                      strict=False)

    with simulation(), pytest.raises(errors.RateLimitError):
        llm.chat(USER)

    assert llm.calls == 1
    assert ScriptedLLM([]).max_retries == DEFAULT_MAX_RETRIES == 3


@pytest.mark.parametrize("error", [errors.BadRequestError("no"), errors.QuotaExceededError("out"),
                                   errors.RateLimitError("later", retry_after=3600)])
def test_what_the_policy_does_not_retry_escapes_at_once(error: errors.LLMError) -> None:
    llm = ScriptedLLM([error, "unused"], strict=False)

    with simulation() as sim, pytest.raises(type(error)):
        llm.chat(USER)

    assert (llm.calls, sim.clock.now()) == (1, 0.0)


def test_a_scripted_timeout_is_a_read_timeout_not_retried() -> None:
    from agentkit.scenario import ErrorItem, error_for

    timeout = error_for(ErrorItem.model_validate({"error": {"type": "timeout"}}))
    llm = ScriptedLLM([timeout, "unused"], strict=False)

    with simulation(), pytest.raises(errors.APITimeoutError, match="Request timed out"):
        llm.chat(USER)
    assert llm.calls == 1


def test_a_cut_call_not_streamed_is_retried_a_cut_stream_is_not() -> None:
    assert _chat(ScriptedLLM([StreamCut("one two three four"), "whole"]))[0] == "whole"

    streamed = ScriptedLLM([StreamCut("one two three four"), "unused"], strict=False)
    with simulation(), pytest.raises(errors.APIConnectionError, match="mid-answer"):
        list(streamed.stream_chat(USER))
    assert streamed.calls == 1


def test_a_function_llm_is_asked_again_on_a_retry() -> None:
    asked: list[int] = []

    def answer(messages: Any, tools: Any) -> Any:
        asked.append(1)
        return errors.ServerError("busy") if len(asked) == 1 else "ok"

    assert _chat(FunctionLLM(answer)) == ("ok", BACKOFF_INITIAL)
    assert len(asked) == 2


def test_a_retry_the_script_has_no_answer_for_says_it_was_a_retry() -> None:
    llm = ScriptedLLM([errors.ServerError("busy")], name="m")

    with simulation(), pytest.raises(ScriptExhaustedError) as caught:
        llm.chat(USER)

    assert str(caught.value).endswith(
        "-- the call was a retry: its attempt 1 failed with ServerError ('busy'), which the "
        "retry policy retries (max_retries=3); script what the retry gets, or give "
        "max_retries=0")


def test_retries_are_logged_as_the_openai_backends(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="agentkit.llms.retries"):
        _chat(ScriptedLLM([errors.ServerError("busy"), "ok"]))

    assert "busy; retry 1 of 3 in 0.5 s" in caplog.text


@pytest.mark.parametrize("script", [
    [errors.RateLimitError("slow", retry_after=2), "ok"],
    [errors.ServerError("busy"), errors.ServerError("busy"), "ok"],
    [errors.ConflictError("locked"), "ok"],
    [errors.ServerError("busy")] * 4,
    [StreamCut("one two"), "ok"],
])
def test_the_scripted_model_and_the_openai_backend_make_the_same_attempts_in_the_same_time(
        script: list[Any]) -> None:
    def outcome(llm: Any, attempts: Any) -> tuple[str, int, float]:
        with simulation() as sim:
            try:
                answer = run_sync(llm.achat(USER)).message.content
            except errors.LLMError as exc:
                answer = type(exc).__name__
            return answer, attempts(), sim.clock.now()

    scripted = ScriptedLLM(script)
    server = FakeOpenAIServer(script)

    assert (outcome(scripted, lambda: scripted.calls)
            == outcome(server.llm(), lambda: server.calls))
