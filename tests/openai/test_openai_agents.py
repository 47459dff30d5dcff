"""Whole agent loops over the OpenAI backend and respx, and their parity with ScriptedLLM."""

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from agentkit.agent import FunctionCallingAgent, ReActAgent
from agentkit.core.events import (
    AgentChatEndEvent,
    AgentChatStartEvent,
    AgentStepEndEvent,
    AgentStepStartEvent,
    LLMCallEndEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from agentkit.core.sim import run_sync, simulation
from agentkit.instrumentation import collect_events
from agentkit.llms import errors
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse, tool_call
from agentkit.tools import FunctionTool
from mocks.openai_server import FakeOpenAIServer, HTTPError, RawToolCall


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def divide(a: int, b: int) -> float:
    """Divide a by b."""
    return a / b


def tools() -> list[FunctionTool]:
    return [FunctionTool.from_defaults(fn) for fn in (add, multiply, divide)]


# ----------------------------------------------------------------- agent loops over respx
def test_function_calling_agent_runs_parallel_tool_calls_over_http(fake_openai):
    server = fake_openai([[tool_call("add", a=2, b=3), tool_call("multiply", a=4, b=5)],
                          "2 + 3 = 5 and 4 * 5 = 20."])
    agent = FunctionCallingAgent.from_tools(tools(), llm=server.llm())
    response = agent.chat("What are 2 + 3 and 4 * 5?")
    assert str(response) == "2 + 3 = 5 and 4 * 5 = 20."
    assert [(s.tool_name, s.content) for s in response.sources] == [("add", "5"),
                                                                     ("multiply", "20")]


def test_function_calling_agent_sends_tool_results_back_with_their_call_ids(fake_openai):
    first, second = tool_call("add", a=2, b=3), tool_call("multiply", a=4, b=5)
    server = fake_openai([[first, second], "done"])
    FunctionCallingAgent.from_tools(tools(), llm=server.llm()).chat("go")
    messages = server.requests[1]["messages"]
    assert messages[-3]["role"] == "assistant" and messages[-3]["content"] == ""
    assert [m["tool_call_id"] for m in messages[-2:]] == [first.tool_id, second.tool_id]
    assert [m["content"] for m in messages[-2:]] == ["5", "20"]


def test_function_calling_agent_streams_its_answer_over_sse(fake_openai):
    server = fake_openai([tool_call("add", a=1, b=1), ScriptedResponse(chunks=["It ", "is ", "2."])])
    agent = FunctionCallingAgent.from_tools(tools(), llm=server.llm())
    response = agent.stream_chat("1 + 1?")
    assert list(response.response_gen) == ["It ", "is ", "2."]
    assert all(r["stream"] for r in server.requests)


def test_invalid_json_arguments_reach_the_model_as_an_error_observation(fake_openai):
    server = fake_openai([RawToolCall("add", '{"a": 1,', id="call_x"), "Sorry, let me stop."])
    agent = FunctionCallingAgent.from_tools(tools(), llm=server.llm())
    response = agent.chat("1 + ?")
    tool_message = server.requests[1]["messages"][-1]
    assert tool_message["tool_call_id"] == "call_x"
    assert tool_message["content"].startswith(
        "Encountered error: Could not read the arguments of tool `add`")  # upstream's prefix
    assert str(response) == "Sorry, let me stop."


def test_a_tool_error_is_sent_to_the_model_as_the_tool_result(fake_openai):
    server = fake_openai([tool_call("divide", a=1, b=0), "Cannot divide by zero."])
    FunctionCallingAgent.from_tools(tools(), llm=server.llm()).chat("1/0?")
    # llama-index-core 0.12.42's call_tool words (issue 38 B2)
    assert server.requests[1]["messages"][-1]["content"] == "Encountered error: division by zero"


def test_react_agent_runs_its_loop_over_http(fake_openai):
    server = fake_openai(['Thought: add.\nAction: add\nAction Input: {"a": 2, "b": 3}',
                          "Thought: done.\nAnswer: 5"])
    agent = ReActAgent.from_tools(tools(), llm=server.llm())
    assert str(agent.chat("2 + 3?")) == "5"
    assert server.requests[1]["messages"][-1] == {"role": "user", "content": "Observation: 5"}
    assert "tools" not in server.requests[0]


def test_react_agent_streams_its_answer_over_sse(fake_openai):
    server = fake_openai(['Thought: add.\nAction: add\nAction Input: {"a": 2, "b": 3}',
                          "Thought: done.\nAnswer: The sum is 5."])
    agent = ReActAgent.from_tools(tools(), llm=server.llm())
    response = agent.stream_chat("2 + 3?")
    assert "".join(response.response_gen) == "The sum is 5."
    assert agent.chat_history[-1].content == "The sum is 5."


def test_react_agent_rides_out_a_rate_limit_in_virtual_time(fake_openai, sim):
    server = fake_openai([HTTPError(429, retry_after=4), "Thought: easy.\nAnswer: 4"])
    agent = ReActAgent.from_tools(tools(), llm=server.llm())
    assert str(run_sync(agent.achat("2 + 2?"))) == "4"
    assert (server.calls, sim.clock.now()) == (2, 4)


def test_an_agent_surfaces_the_typed_error_once_retries_are_spent(fake_openai):
    server = fake_openai([HTTPError(500)] * 2)
    agent = FunctionCallingAgent.from_tools(tools(), llm=server.llm(max_retries=1))
    with pytest.raises(errors.ServerError):
        agent.chat("hi")


# ----------------------------------------------------------------- parity with ScriptedLLM
def function_calling_script() -> list[Any]:
    return [[tool_call("add", a=2, b=3), tool_call("multiply", a=4, b=5)],
            tool_call("divide", a=1, b=0),
            tool_call("add", a=5, b=20, c=1),
            ScriptedResponse("5, 20, no division, and the last call failed.",
                             usage={"prompt_tokens": 1, "completion_tokens": 1}),
            tool_call("multiply", a=5, b=5),
            "25."]


def react_script() -> list[Any]:
    return ['Thought: add first.\nAction: add\nAction Input: {"a": 2, "b": 3}',
            "Thought: I am confused.\nAction: add\nAction Input: not json at all",
            'Thought: try a missing tool.\nAction: power\nAction Input: {"a": 2}',
            'Thought: divide.\nAction: divide\nAction Input: {"a": 1, "b": 0}',
            "Thought: I know it.\nAnswer: 5, and 1/0 fails.",
            'Thought: square.\nAction: multiply\nAction Input: {"a": 5, "b": 5}',
            "Thought: done.\nAnswer: 25."]


AGENTS: dict[str, tuple[Callable[..., Any], Callable[[], list[Any]]]] = {
    "function_calling": (FunctionCallingAgent.from_tools, function_calling_script),
    "react": (ReActAgent.from_tools, react_script),
}
QUESTIONS = ["What are 2 + 3, 4 * 5 and 1 / 0?", "And 5 squared?"]
_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[a-z]+_[0-9a-f]{24}")


def _ask(agent: Any, question: str, mode: str) -> str:
    if mode == "chat":
        return str(agent.chat(question))
    if mode == "achat":
        return str(run_sync(agent.achat(question)))
    return "".join(agent.stream_chat(question).response_gen)


def _trace(events: list[Any], agent: Any, answers: list[str]) -> list[Any]:
    """Step inputs/outputs, LLM inputs and replies, tool calls and outputs, final memory."""
    trace: list[Any] = []
    for event in events:
        if isinstance(event, AgentChatStartEvent):
            trace.append(["chat", event.user_msg])
        elif isinstance(event, AgentChatEndEvent):
            trace.append(["chat_end", event.error])
        elif isinstance(event, AgentStepStartEvent):
            trace.append(["step", event.task_id, event.step_id, event.input])
        elif isinstance(event, AgentStepEndEvent):
            output = event.output.output if event.output is not None else None
            trace.append(["step_end", event.step_id, getattr(output, "response", None),
                          event.is_last, event.error])
        elif isinstance(event, LLMCallEndEvent):
            trace.append(["llm", event.kind, [m.to_dict() for m in event.messages],
                          event.response.message.to_dict(), event.error])
        elif isinstance(event, ToolCallStartEvent):
            trace.append(["tool", event.tool_name, event.tool_id, event.arguments])
        elif isinstance(event, ToolCallEndEvent):
            trace.append(["tool_end", event.tool_name, event.tool_id, event.output.content,
                          event.is_error])
    trace.append(["answers", answers])
    trace.append(["memory", [m.to_dict() for m in agent.memory.get_all()]])
    return trace


def _normalised(trace: list[Any]) -> list[Any]:
    """The trace with every id replaced by its order of first appearance."""
    names: dict[str, str] = {}
    text = _ID.sub(lambda m: names.setdefault(m.group(), f"<id{len(names) + 1}>"),
                   json.dumps(trace, default=str))
    return json.loads(text)


def _run(kind: str, mode: str, backend: str) -> list[Any]:
    build, script = AGENTS[kind]
    with simulation(seed=0):
        items = script()
        if backend == "scripted":
            llm, server = ScriptedLLM(items, name="gpt-4o-mini"), None
        else:
            server = FakeOpenAIServer(items).start()
            llm = server.llm("gpt-4o-mini", context_window=3900)
        try:
            agent = build(tools(), llm=llm)
            with collect_events() as events:
                answers = [_ask(agent, question, mode) for question in QUESTIONS]
        finally:
            if server is not None:
                server.stop()
        (server or llm).assert_complete()
        return _normalised(_trace(events, agent, answers))


@pytest.mark.parametrize("mode", ["chat", "achat", "stream_chat"])
@pytest.mark.parametrize("kind", sorted(AGENTS))
def test_openai_backend_gives_the_same_agent_trace_as_scripted_llm(kind, mode):
    scripted = _run(kind, mode, "scripted")
    over_http = _run(kind, mode, "openai")
    assert over_http == scripted


def test_the_parity_trace_covers_tool_errors_and_both_turns():
    trace = _run("react", "chat", "scripted")
    tool_outputs = [entry[3] for entry in trace if entry[0] == "tool_end"]
    assert "Error: division by zero" in tool_outputs
    assert "Error: No such tool named `power`." in tool_outputs
    assert trace[-2] == ["answers", ["5, and 1/0 fails.", "25."]]
