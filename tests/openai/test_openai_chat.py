"""OpenAI backend: plain chat and completion through the SDK's HTTP path into respx."""

import httpx
import pytest

from agentkit.core.sim import run_sync
from agentkit.instrumentation import LLMCallEndEvent, collect_events
from agentkit.llms import errors
from agentkit.llms.mock import ScriptedResponse
from agentkit.llms.openai import BACKOFF_INITIAL, OpenAI
from agentkit.llms.types import ChatMessage, MessageRole, Usage
from mocks.openai_server import TEST_API_KEY, HTTPError
from tests.fake_keys import fake_key

USER = [ChatMessage(role=MessageRole.USER, content="Say hello")]


def test_chat_returns_the_assistant_text(fake_openai):
    server = fake_openai(["Hello!"])
    response = server.llm().chat(USER)
    assert response.message.role == MessageRole.ASSISTANT
    assert response.message.content == "Hello!"
    assert response.message.tool_calls == []


def test_achat_returns_the_assistant_text(fake_openai):
    server = fake_openai(["Hello, async!"])
    response = run_sync(server.llm().achat(USER))
    assert response.message.content == "Hello, async!"


def test_chat_reports_the_servers_usage(fake_openai):
    server = fake_openai([ScriptedResponse("Hi", usage={"prompt_tokens": 11,
                                                        "completion_tokens": 2})])
    assert server.llm().chat(USER).usage == Usage(prompt_tokens=11, completion_tokens=2,
                                                  total_tokens=13)


def test_chat_puts_the_finish_reason_in_additional_kwargs(fake_openai):
    server = fake_openai(["Hi"])
    assert server.llm().chat(USER).additional_kwargs["finish_reason"] == "stop"


def test_a_length_finish_reason_is_reported(fake_openai):
    server = fake_openai([httpx.Response(200, json={
        "id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": "length",
                     "message": {"role": "assistant", "content": "Hel"}}]})])
    response = server.llm().chat(USER)
    assert (response.message.content, response.additional_kwargs["finish_reason"]) == (
        "Hel", "length")


def test_the_finish_reason_stays_out_of_the_message(fake_openai):
    server = fake_openai(["Hi"])
    assert server.llm().chat(USER).message.additional_kwargs == {}


def test_chat_keeps_the_decoded_answer_as_raw(fake_openai):
    server = fake_openai(["Hi"])
    assert server.llm().chat(USER).raw["id"] == "chatcmpl-1"


def test_request_carries_model_temperature_max_tokens_and_messages(fake_openai):
    server = fake_openai(["Hi"])
    server.llm("gpt-4o", temperature=0.7, max_tokens=50).chat(USER)
    assert server.requests[0] == {"model": "gpt-4o", "temperature": 0.7, "max_tokens": 50,
                                  "messages": [{"role": "user", "content": "Say hello"}]}


def test_additional_kwargs_are_sent_with_every_request(fake_openai):
    server = fake_openai(["a", "b"])
    llm = server.llm(additional_kwargs={"seed": 7, "top_p": 0.5})
    llm.chat(USER)
    llm.chat(USER)
    assert [(r["seed"], r["top_p"]) for r in server.requests] == [(7, 0.5), (7, 0.5)]


def test_per_call_kwargs_are_sent_with_that_request(fake_openai):
    server = fake_openai(["a"])
    server.llm().chat(USER, seed=3)
    assert server.requests[0]["seed"] == 3


def test_reasoning_models_get_max_completion_tokens_and_no_temperature(fake_openai):
    server = fake_openai(["Hi"])
    server.llm("o3-mini", max_tokens=64).chat(USER)
    request = server.requests[0]
    assert request["max_completion_tokens"] == 64
    assert "max_tokens" not in request and "temperature" not in request


def test_the_api_key_is_sent_as_a_bearer_token(fake_openai):
    server = fake_openai(["Hi"])
    server.llm().chat(USER)
    assert server.http_requests[0].headers["authorization"] == f"Bearer {TEST_API_KEY}"


def test_retries_are_made_by_agentkit_not_by_the_sdk(fake_openai, sim):
    # an SDK retrying too would send more than one request per attempt, waiting in real time
    server = fake_openai([HTTPError(500)] * 2)
    start = sim.clock.now()
    with pytest.raises(errors.ServerError) as caught:
        server.llm(max_retries=1).chat(USER)
    assert (caught.value.attempts, server.calls) == (2, 2)
    assert sim.clock.now() - start == BACKOFF_INITIAL  # agentkit's one wait, on virtual time


def test_complete_goes_through_chat_as_one_user_message(fake_openai):
    server = fake_openai(["4"])
    response = server.llm().complete("2 + 2 =")
    assert response.text == "4"
    assert server.requests[0]["messages"] == [{"role": "user", "content": "2 + 2 ="}]


def test_acomplete_goes_through_chat(fake_openai):
    server = fake_openai(["4"])
    assert run_sync(server.llm().acomplete("2 + 2 =")).text == "4"


def test_system_prompt_is_sent_first(fake_openai):
    server = fake_openai(["Hi"])
    server.llm(system_prompt="Be brief.").chat(USER)
    assert server.requests[0]["messages"][0] == {"role": "system", "content": "Be brief."}


def test_a_message_name_is_passed_on(fake_openai):
    server = fake_openai(["Hi"])
    server.llm().chat([ChatMessage(role=MessageRole.USER, content="hi",
                                   additional_kwargs={"name": "alice"})])
    assert server.requests[0]["messages"][0]["name"] == "alice"


def test_base_url_sends_requests_to_that_server(fake_openai):
    server = fake_openai(["local answer"], base_url="http://localhost:8080/v1")
    response = server.llm("llama-3.1-8b-instruct").chat(USER)
    assert response.message.content == "local answer"
    assert str(server.http_requests[0].url) == "http://localhost:8080/v1/chat/completions"


def test_base_url_comes_from_openai_base_url_when_not_given(fake_openai, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    fake_openai(["from env url"], base_url="http://127.0.0.1:11434/v1")
    llm = OpenAI("llama3", api_key="x" * 10, http_client=httpx.Client())
    assert llm.chat(USER).message.content == "from env url"


def test_every_call_emits_one_llm_call_end_event_with_the_model_and_usage(fake_openai):
    server = fake_openai([ScriptedResponse("Hi", usage={"prompt_tokens": 3,
                                                        "completion_tokens": 1})])
    with collect_events() as events:
        server.llm("gpt-4o").chat(USER)
    ends = [e for e in events if isinstance(e, LLMCallEndEvent)]
    assert [(e.model, e.usage.total_tokens, e.error) for e in ends] == [("gpt-4o", 4, None)]


def test_repr_names_the_model_but_not_the_key():
    key = fake_key("very-secret-key-123")
    llm = OpenAI("gpt-4o", api_key=key)
    assert "gpt-4o" in repr(llm) and key not in repr(llm)

