"""Test doubles behind one protocol (ModelDouble), the typed request a model function is handed
(RequestInfo), and the tools a prompt-only agent lists, carried on the request (ListedTools)
instead of being read back from the prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkit.agent import ReActAgent
from agentkit.agent.coa import CoAAgentWorker
from agentkit.agent.llm_compiler import LLMCompilerAgentWorker
from agentkit.agent.react import ReActChatFormatter
from agentkit.agent.workflow import AgentWorkflow
from agentkit.agent.workflow import ReActAgent as WorkflowReActAgent
from agentkit.llms import ChatMessage, ListedTools, MessageRole
from agentkit.llms.base import LLMRequest
from agentkit.llms.doubles import ModelDouble, excuse_all
from agentkit.llms.mock import (
    FunctionLLM,
    MockLLM,
    RequestInfo,
    SchemaLLM,
    ScriptedLLM,
    tool_call,
)
from agentkit.recording import Cassette, CassetteLLM, FakeOpenAIServer, canonical_request
from agentkit.tools import FunctionTool

USER = [ChatMessage(role=MessageRole.USER, content="hi")]


def greet(name: str) -> str:
    """Greet someone."""
    return f"hello {name}"


def is_even(number: int) -> bool:
    """Whether a number is even."""
    return number % 2 == 0


TOOLS = [FunctionTool.from_defaults(greet), FunctionTool.from_defaults(is_even)]


# ---------------------------------------------------------------- the protocol
def test_every_built_in_double_is_a_model_double(tmp_path: Path) -> None:
    cassette = Cassette(path=tmp_path / "c.yaml")
    doubles = [ScriptedLLM([]), FunctionLLM(lambda m, t: "x"), SchemaLLM(), MockLLM(),
               CassetteLLM(cassette), FakeOpenAIServer([])]

    assert all(isinstance(double, ModelDouble) for double in doubles)
    assert [double.leftovers() for double in doubles] == [[]] * len(doubles)


def test_a_script_reports_its_unused_replies_as_leftovers() -> None:
    llm = ScriptedLLM(["one", "two", "three"], strict=False)
    llm.chat(USER)

    assert llm.leftovers() == ["the script has 2 unused replies (the agent made 1 LLM calls)"]


def test_a_fake_endpoint_reports_its_unused_replies_as_leftovers() -> None:
    server = FakeOpenAIServer(["one", "two"], strict=False)
    server.llm().chat(USER)

    assert server.leftovers() == ["the script has 1 unused reply (the endpoint got 1 requests)"]


@pytest.mark.agentkit_allow_unused_script
def test_an_excused_strict_script_passes_its_completeness_check_and_says_why() -> None:
    llm = ScriptedLLM(["one", "two"])

    llm.excuse("the run stopped")

    llm.assert_complete()
    assert llm.excused == "the run stopped" and llm.strict
    llm.reset()
    assert llm.excused is None
    with pytest.raises(AssertionError, match="left 2 scripted response"):
        llm.assert_complete()


def test_excuse_all_excuses_the_doubles_and_skips_other_models() -> None:
    script, other = ScriptedLLM(["a"]), object()

    excuse_all([script, other], "never started")

    assert script.excused == "never started"


# ---------------------------------------------------------------- the function model
def test_a_model_function_is_handed_the_offered_tools_and_keywords_as_request_info() -> None:
    seen: list[RequestInfo] = []

    def answer(messages: list[ChatMessage], info: RequestInfo) -> str:
        seen.append(info)
        return f"{len(messages)} message(s)"

    llm = FunctionLLM(function=answer)
    response = llm.chat_with_tools(TOOLS, "hi", temperature=0.5)

    [info] = seen
    assert response.message.content == "1 message(s)"
    assert [spec["name"] for spec in info.tools] == ["greet", "is_even"] and info.offered
    assert info.tool_choice == "auto" and info.kwargs == {"temperature": 0.5}
    assert (info.kind, info.stream, info.listed_tools) == ("chat", False, None)


def test_a_model_function_may_be_async_and_answer_with_tool_calls() -> None:
    async def answer(messages: list[ChatMessage], info: RequestInfo) -> object:
        return tool_call(info.tools[0]["name"], name="x")

    response = FunctionLLM(function=answer).chat_with_tools(TOOLS, "hi")

    assert [(c.tool_name, c.tool_kwargs) for c in response.message.tool_calls] == [
        ("greet", {"name": "x"})]


def test_a_function_llm_takes_one_function() -> None:
    with pytest.raises(TypeError, match="not both"):
        FunctionLLM(lambda m, t: "x", function=lambda m, i: "y")
    with pytest.raises(TypeError, match="not neither"):
        FunctionLLM()


# ---------------------------------------------------------------- tools listed in a prompt
def _listed(build) -> list[ListedTools | None]:  # type: ignore[no-untyped-def]
    """The listed tools of each request a prompt-only agent makes of a model function."""
    seen: list[ListedTools | None] = []

    def answer(messages: list[ChatMessage], info: RequestInfo) -> str:
        seen.append(info.listed_tools)
        return "Thought: done\nAnswer: ok"

    build(FunctionLLM(function=answer))
    return seen


def test_a_react_agent_lists_its_tools_on_the_request() -> None:
    [listed] = _listed(lambda llm: ReActAgent.from_tools(TOOLS, llm=llm).chat("go"))

    assert listed is not None and listed.format == "react"
    assert [spec["name"] for spec in listed.specs] == ["greet", "is_even"]
    assert listed.specs[1]["parameters"]["properties"] == {"number": {"title": "Number",
                                                                      "type": "integer"}}


def test_a_streaming_react_agent_lists_its_tools_on_the_request() -> None:
    def stream(llm: FunctionLLM) -> None:
        list(ReActAgent.from_tools(TOOLS, llm=llm).stream_chat("go").response_gen)

    [listed] = _listed(stream)

    assert listed is not None and listed.format == "react"


def test_a_workflow_react_agent_lists_its_tools_on_the_request() -> None:
    [listed] = _listed(lambda llm: AgentWorkflow(
        agents=[WorkflowReActAgent(tools=TOOLS, llm=llm)]).run_sync(user_msg="go"))

    assert listed is not None and listed.format == "react"
    assert [spec["name"] for spec in listed.specs][:2] == ["greet", "is_even"]


def test_the_coa_and_llm_compiler_planners_list_their_tools_in_their_own_formats() -> None:
    coa = _listed(lambda llm: CoAAgentWorker.from_tools(TOOLS, llm=llm).as_agent().chat("go"))
    compiler = _listed(lambda llm: LLMCompilerAgentWorker.from_tools(
        TOOLS, llm=llm, max_replans=0).as_agent().chat("go"))

    assert coa[0] is not None and coa[0].format == "coa"
    assert compiler[0] is not None and compiler[0].format == "llm_compiler"
    assert [spec["name"] for spec in compiler[0].specs] == ["greet", "is_even"]


def test_schema_llm_knows_a_react_agents_tools_though_the_prompt_does_not_list_them() -> None:
    formatter = ReActChatFormatter.from_defaults(
        system_header="Reply with Thought, Action and Action Input lines, or an Answer.")
    llm = SchemaLLM()

    response = ReActAgent.from_tools(TOOLS, llm=llm, react_chat_formatter=formatter).chat("go")

    assert "greet" not in (llm.requests[0].messages[0].content or "")
    assert json.loads(str(response)) == {"greet": "hello name", "is_even": "False"}


def test_schema_llm_does_not_read_tools_from_a_prompts_text() -> None:
    prompt = ReActChatFormatter().format(TOOLS, USER)
    assert "> Tool Name: greet" in (prompt[0].content or "")

    assert SchemaLLM().chat(prompt).message.content == "{}"


def test_listed_tools_are_not_sent_to_the_openai_endpoint() -> None:
    server = FakeOpenAIServer(["Thought: done\nAnswer: ok"])

    ReActAgent.from_tools(TOOLS, llm=server.llm()).chat("go")

    [body] = server.requests
    assert "tools" not in body and "listed_tools" not in body
    assert set(body) <= {"model", "messages", "stream", "stream_options", "temperature",
                         "max_tokens", "max_completion_tokens"}


def test_listed_tools_do_not_change_how_a_cassette_keys_a_request() -> None:
    plain = LLMRequest(kind="chat", messages=USER)
    listed = LLMRequest(kind="chat", messages=USER, listed_tools=ListedTools.of("react", TOOLS))

    assert canonical_request(listed) == canonical_request(plain)


@pytest.mark.agentkit_allow_unused_script
def test_listed_tools_of_another_type_are_an_error() -> None:
    with pytest.raises(TypeError, match=r"listed_tools must be an agentkit\.llms\.ListedTools, "
                                        r"got list"):
        ScriptedLLM(["x"]).chat(USER, listed_tools=["greet"])
