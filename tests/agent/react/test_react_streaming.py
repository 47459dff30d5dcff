"""Streaming ReAct answers: only the answer is streamed, as soon as it starts (SPEC §5).

Every test runs through ``stream_chat`` (sync) and ``astream_chat`` (async).
"""

from collections.abc import Callable
from typing import Any

import pytest

from agentkit.agent.react import (
    PARSE_FAILURE_OBSERVATION,
    ReActAgent,
    ReActOutputParser,
    ResponseReasoningStep,
)
from agentkit.agent.types import StreamingAgentChatResponse
from agentkit.core.events import (
    AgentChatEndEvent,
    AgentChatStartEvent,
    AgentStepEndEvent,
    AgentStepStartEvent,
    Event,
    LLMCallEndEvent,
    LLMStreamChunkEvent,
)
from agentkit.core.sim import run_sync
from agentkit.instrumentation import collect_events
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse
from agentkit.llms.types import ChatMessage, MessageRole
from agentkit.tools import FunctionTool

ADD_2_3 = 'Thought: I add.\nAction: add\nAction Input: {"a": 2, "b": 3}'
HELLO = ScriptedResponse(chunks=["Thought: I can answer.\n", "Answer: Hel", "lo ", "world"])

OnOpen = Callable[[StreamingAgentChatResponse], None]
OnDelta = Callable[[str], None]


@pytest.fixture(params=["stream_chat", "astream_chat"])
def stream_mode(request: pytest.FixtureRequest) -> str:
    return request.param


def stream(agent: ReActAgent, message: str, mode: str, *, on_open: OnOpen | None = None,
           on_delta: OnDelta | None = None) -> tuple[StreamingAgentChatResponse, list[str]]:
    """Stream one chat to its end. ``on_open`` sees the response before any delta is read,
    ``on_delta`` sees each delta as it is handed out."""
    deltas: list[str] = []

    def seen(delta: str) -> None:
        if on_delta is not None:
            on_delta(delta)
        deltas.append(delta)

    if mode == "stream_chat":
        response = agent.stream_chat(message)
        if on_open is not None:
            on_open(response)
        for delta in response.response_gen:
            seen(delta)
        return response, deltas

    async def run() -> StreamingAgentChatResponse:
        response = await agent.astream_chat(message)
        if on_open is not None:
            on_open(response)
        async for delta in response.async_response_gen():
            seen(delta)
        return response

    return run_sync(run()), deltas


def first_only(record: Callable[[], Any]) -> tuple[list[Any], OnDelta]:
    """An ``on_delta`` that records ``record()`` when the first delta arrives."""
    snapshots: list[Any] = []

    def on_delta(_delta: str) -> None:
        if not snapshots:
            snapshots.append(record())

    return snapshots, on_delta


def names(events: list[Event], kind: type) -> int:
    return sum(isinstance(e, kind) for e in events)


def user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text)


def assistant(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


def test_only_the_answer_text_is_streamed(tools, stream_mode):
    llm = ScriptedLLM(["Thought: I know this one.\nAnswer: The answer is 42."])
    agent = ReActAgent.from_tools(tools, llm=llm)

    _, deltas = stream(agent, "What is the answer?", stream_mode)

    assert "".join(deltas) == "The answer is 42."
    assert len(deltas) > 1
    assert not any("Thought" in d or "Answer" in d for d in deltas)


def test_the_first_delta_is_handed_out_before_the_llm_stream_ends(tools, stream_mode):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([HELLO]))

    with collect_events() as events:
        at_first, on_delta = first_only(lambda: names(events, LLMCallEndEvent))
        stream(agent, "hi", stream_mode, on_delta=on_delta)

    assert at_first == [0]
    assert names(events, LLMCallEndEvent) == 1


def test_the_answer_is_detected_in_the_chunk_that_passes_the_answer_marker(tools, stream_mode):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([HELLO]))

    with collect_events() as events:
        at_first, on_delta = first_only(lambda: names(events, LLMStreamChunkEvent))
        _, deltas = stream(agent, "hi", stream_mode, on_delta=on_delta)

    assert deltas[0] == "Hel"
    assert at_first == [2]


def test_an_answer_marker_split_across_chunks_is_still_found(tools, stream_mode):
    llm = ScriptedLLM([ScriptedResponse(chunks=["Thought: ok\nAns", "wer", ": fi", "ne"])])
    agent = ReActAgent.from_tools(tools, llm=llm)

    _, deltas = stream(agent, "hi", stream_mode)

    assert deltas == ["fi", "ne"]


def test_a_thought_marker_split_across_chunks_is_not_taken_for_an_answer(tools, stream_mode):
    llm = ScriptedLLM([ScriptedResponse(chunks=["Th", "ought: I ", "can say\n", "Answer: yes"])])
    agent = ReActAgent.from_tools(tools, llm=llm)

    _, deltas = stream(agent, "hi", stream_mode)

    assert "".join(deltas) == "yes"


def test_an_implicit_answer_streams_in_its_chunks_once_the_model_has_finished(tools, stream_mode):
    # a later "Thought:"/"Action:" would make the text a tool call, so only its end decides
    llm = ScriptedLLM([ScriptedResponse(chunks=["The capital ", "of France ", "is Paris."])])
    agent = ReActAgent.from_tools(tools, llm=llm)

    with collect_events() as events:
        at_first, on_delta = first_only(lambda: names(events, LLMCallEndEvent))
        response, deltas = stream(agent, "Capital of France?", stream_mode, on_delta=on_delta)

    assert deltas == ["The capital", " of France", " is Paris."]
    assert at_first == [1]
    assert response.response == "The capital of France is Paris."


def test_a_preamble_before_an_action_calls_the_tool_as_chat_does(tools, stream_mode):
    preamble_action = ScriptedResponse(chunks=[
        "Sure, let me work that out.\n", "Thought: I add.\n", "Action: add\n",
        'Action Input: {"a": 2, "b": 3}'])
    llm = ScriptedLLM([preamble_action, "Thought: done\nAnswer: 5"])
    agent = ReActAgent.from_tools(tools, llm=llm)

    response, deltas = stream(agent, "What is 2 + 3?", stream_mode)

    assert "".join(deltas) == "5"
    assert [(s.tool_name, s.content) for s in response.sources] == [("add", "5")]


def test_an_answer_mentioning_action_is_streamed_as_the_answer(tools, stream_mode):
    llm = ScriptedLLM(["Thought: easy\nAnswer: use the Action: menu, then 5"])
    agent = ReActAgent.from_tools(tools, llm=llm)

    response, deltas = stream(agent, "How?", stream_mode)

    assert "".join(deltas) == "use the Action: menu, then 5" == response.response
    assert llm.calls == 1


def test_a_short_implicit_answer_is_streamed_whole(tools, stream_mode):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM(["Paris"]))

    _response, deltas = stream(agent, "Capital of France?", stream_mode)

    assert deltas == ["Paris"]
    assert agent.chat_history == [user("Capital of France?"), assistant("Paris")]


def test_an_answer_without_a_thought_streams_only_the_text_after_the_marker(tools, stream_mode):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM(["Answer: only this"]))

    _, deltas = stream(agent, "hi", stream_mode)

    assert "".join(deltas) == "only this"


def test_trailing_whitespace_of_the_answer_is_not_streamed(tools, stream_mode):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM(["Thought: t\nAnswer: done  \n\n"]))

    response, deltas = stream(agent, "hi", stream_mode)

    assert "".join(deltas) == "done" == response.response


def test_tool_steps_before_the_answer_run_normally(tools, stream_mode):
    llm = ScriptedLLM([ADD_2_3, "Thought: I know it.\nAnswer: 2 + 3 = 5"])
    agent = ReActAgent.from_tools(tools, llm=llm)

    response, deltas = stream(agent, "What is 2 + 3?", stream_mode)

    assert "".join(deltas) == "2 + 3 = 5"
    assert llm.requests[1].messages[-2:] == [assistant(ADD_2_3), user("Observation: 5")]
    assert [(s.tool_name, s.content) for s in response.sources] == [("add", "5")]


def test_a_parse_failure_before_the_answer_is_fed_back_and_not_streamed(tools, stream_mode):
    llm = ScriptedLLM(["Thought: hmm, let me think", "Thought: ok\nAnswer: fine"])
    agent = ReActAgent.from_tools(tools, llm=llm)

    _, deltas = stream(agent, "hi", stream_mode)

    assert "".join(deltas) == "fine"
    assert llm.requests[1].messages[-1] == user(f"Observation: {PARSE_FAILURE_OBSERVATION}")


def test_response_holds_the_full_text_once_drained(tools, stream_mode):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([HELLO]))
    before: list[tuple[str, bool]] = []

    response, _ = stream(agent, "hi", stream_mode,
                         on_open=lambda r: before.append((r.response, r.is_done)))

    assert before == [("", False)]
    assert (response.response, response.is_done) == ("Hello world", True)
    assert str(response) == "Hello world"


def test_memory_is_written_only_when_the_stream_ends(tools, stream_mode):
    history = [user("hi"), assistant("hello")]
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([HELLO]), chat_history=history)
    when_opened: list[list[ChatMessage]] = []
    at_first, on_delta = first_only(lambda: agent.chat_history)

    stream(agent, "greet me", stream_mode, on_open=lambda _r: when_opened.append(agent.chat_history),
           on_delta=on_delta)

    assert when_opened == [history]
    assert at_first == [history]
    assert agent.chat_history == [*history, user("greet me"), assistant("Hello world")]


def test_a_return_direct_answer_is_streamed_without_another_llm_call(stream_mode):
    weather = FunctionTool.from_defaults(lambda city: f"Sunny in {city}", name="weather",
                                         description="Weather of a city.", return_direct=True)
    llm = ScriptedLLM(['Thought: t\nAction: weather\nAction Input: {"city": "Oslo"}'])
    agent = ReActAgent.from_tools([weather], llm=llm)

    response, deltas = stream(agent, "Weather in Oslo?", stream_mode)

    assert "".join(deltas) == "Sunny in Oslo" == response.response
    assert llm.calls == 1
    assert agent.chat_history == [user("Weather in Oslo?"), assistant("Sunny in Oslo")]


def test_a_streamed_chat_with_n_steps_emits_2_plus_2n_agent_events(tools, stream_mode):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([ADD_2_3, HELLO]))

    with collect_events() as events:
        stream(agent, "hi", stream_mode)

    agent_events = [type(e) for e in events if isinstance(
        e, (AgentChatStartEvent, AgentChatEndEvent, AgentStepStartEvent, AgentStepEndEvent))]
    assert agent_events == [AgentChatStartEvent, *[AgentStepStartEvent, AgentStepEndEvent] * 2,
                            AgentChatEndEvent]


def test_the_streamed_answer_step_is_recorded_in_the_reasoning(tools, stream_mode):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([HELLO]))
    task = agent.create_task("hi")

    output = (agent.stream_step(task.task_id) if stream_mode == "stream_chat"
              else run_sync(agent.astream_step(task.task_id)))
    output.output.get_response()

    answer = task.extra_state["current_reasoning"][-1]
    assert (answer.thought, answer.response, answer.is_streaming) == (
        "I can answer.", "Hello world", True)


def test_a_custom_output_parser_decides_the_streamed_answer(tools, stream_mode):
    class ShoutingParser(ReActOutputParser):
        def parse(self, output: str, is_streaming: bool = False) -> ResponseReasoningStep:
            return ResponseReasoningStep(thought="", response=output.upper(),
                                         is_streaming=is_streaming)

    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM(["quiet words here"]),
                                  output_parser=ShoutingParser())

    response, deltas = stream(agent, "hi", stream_mode)

    assert "".join(deltas) == "QUIET WORDS HERE" == response.response
    assert agent.chat_history[-1] == assistant("QUIET WORDS HERE")
