"""FunctionAgent: the event flow, memory, parallel calls, return_direct, streaming."""

from __future__ import annotations

import pytest

from agentkit.agent.workflow import (
    AgentInput,
    AgentOutput,
    AgentStream,
    FunctionAgent,
    ToolCall,
    ToolCallResult,
)
from agentkit.core.sim import Stopwatch, asleep, run_sync
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse, tool_call
from agentkit.memory import ChatMemoryBuffer
from agentkit.tools import FunctionTool
from agentkit.workflow import StopEvent, WorkflowRuntimeError

from .helpers import add, roles, run_collect


def _agent(script: list, **kwargs) -> tuple[FunctionAgent, ScriptedLLM]:
    llm = ScriptedLLM(script)
    return FunctionAgent(tools=[add], llm=llm, system_prompt="SYS", **kwargs), llm


def test_event_flow_of_a_tool_call_then_an_answer() -> None:
    agent, _ = _agent([tool_call("add", a=2, b=3), "5 it is"])
    _, events, _ = run_sync(run_collect(agent, user_msg="What is 2 + 3?"))
    assert [type(e).__name__ for e in events] == [
        "AgentInput", "AgentOutput", "ToolCall", "ToolCallResult", "AgentInput", "AgentOutput",
        "StopEvent"]
    first, second = events[0], events[4]
    assert roles(first.input) == [("system", "SYS"), ("user", "What is 2 + 3?")]
    assert roles(second.input) == [("system", "SYS"), ("user", "What is 2 + 3?"),
                                   ("assistant", ""), ("tool", "5")]


def test_the_result_is_the_final_agent_output_with_every_tool_call_of_the_run() -> None:
    agent, _ = _agent([tool_call("add", a=2, b=3), tool_call("add", a=5, b=5), "10"])
    result = agent.run_sync(user_msg="go")
    assert isinstance(result, AgentOutput)
    assert str(result) == "10"
    assert [(c.tool_name, c.tool_kwargs) for c in result.tool_calls] == [
        ("add", {"a": 2, "b": 3}), ("add", {"a": 5, "b": 5})]


def test_memory_holds_the_exchange_without_the_system_prompt() -> None:
    call = tool_call("add", a=2, b=3)
    agent, _ = _agent([call, "5 it is"])
    memory = ChatMemoryBuffer.from_defaults()
    agent.run_sync(user_msg="hi", memory=memory)
    messages = memory.get_all()
    assert roles(messages) == [("user", "hi"), ("assistant", ""), ("tool", "5"),
                               ("assistant", "5 it is")]
    assert messages[2].additional_kwargs == {"tool_call_id": call.tool_id}


def test_parallel_calls_run_concurrently_and_give_one_tool_message_each_in_call_order() -> None:
    async def slow_add(a: int, b: int) -> int:
        """Add slowly."""
        await asleep(2.0 if a == 1 else 1.0)
        return a + b

    tool = FunctionTool.from_defaults(async_fn=slow_add, name="add")
    calls = [tool_call("add", a=1, b=1), tool_call("add", a=2, b=2)]
    llm = ScriptedLLM([calls, "done"])
    agent = FunctionAgent(tools=[tool], llm=llm)
    memory = ChatMemoryBuffer.from_defaults()
    watch = Stopwatch.start()
    agent.run_sync(user_msg="both", memory=memory)
    assert watch.wall == pytest.approx(2.0)
    tool_messages = [m for m in memory.get_all() if m.role.value == "tool"]
    assert [(m.content, m.additional_kwargs["tool_call_id"]) for m in tool_messages] == [
        ("2", calls[0].tool_id), ("4", calls[1].tool_id)]


def test_a_return_direct_tool_ends_the_run_with_its_output_stored_as_the_answer() -> None:
    tool = FunctionTool.from_defaults(add, return_direct=True)
    llm = ScriptedLLM([tool_call("add", a=2, b=3)])
    agent = FunctionAgent(tools=[tool], llm=llm)
    memory = ChatMemoryBuffer.from_defaults()
    result = agent.run_sync(user_msg="add", memory=memory)
    assert str(result) == "5"
    assert roles(memory.get_all()) == [("user", "add"), ("assistant", ""), ("tool", "5"),
                                       ("assistant", "5")]
    # issue 38 B6: as upstream 0.12.42, the stored answer carries the call's tool_call_id
    calls = memory.get_all()[1].additional_kwargs["tool_calls"]
    assert memory.get_all()[3].additional_kwargs == {"tool_call_id": calls[0].tool_id}


def test_a_failing_return_direct_tool_does_not_end_the_run() -> None:
    def fragile(a: int) -> int:
        """Fails."""
        raise ValueError("no luck")

    tool = FunctionTool.from_defaults(fragile, return_direct=True)
    llm = ScriptedLLM([tool_call("fragile", a=1), "gave up"])
    agent = FunctionAgent(tools=[tool], llm=llm)
    memory = ChatMemoryBuffer.from_defaults()
    assert str(agent.run_sync(user_msg="try", memory=memory)) == "gave up"
    assert roles(memory.get_all()) == [("user", "try"), ("assistant", ""), ("tool", "no luck"),
                                       ("assistant", "gave up")]


def test_streaming_writes_the_deltas_of_astream_chat_with_tools() -> None:
    agent, llm = _agent(["five is the answer"])
    async def deltas() -> list[str]:
        handler = agent.run(user_msg="hi")
        found = [e.delta async for e in handler.stream_events() if isinstance(e, AgentStream)]
        await handler
        return found

    assert "".join(run_sync(deltas())) == "five is the answer"
    assert llm.requests[0].stream is True


def test_without_streaming_the_agent_calls_achat_with_tools_and_writes_no_deltas() -> None:
    agent, llm = _agent(["five"], streaming=False)
    _, events, _ = run_sync(run_collect(agent, user_msg="hi"))
    assert llm.requests[0].stream is False
    assert not any(isinstance(e, AgentStream) for e in events)


def test_initial_tool_choice_is_sent_on_the_first_call_only() -> None:
    agent, llm = _agent([tool_call("add", a=1, b=1), "2"], initial_tool_choice="add")
    agent.run_sync(user_msg="go")
    assert [r.tool_choice for r in llm.requests] == ["add", "auto"]


def test_a_non_function_calling_llm_fails_the_run() -> None:
    agent = FunctionAgent(tools=[add], llm=ScriptedLLM(["x"], function_calling=False, strict=False))
    with pytest.raises(WorkflowRuntimeError, match="LLM must be a FunctionCallingLLM"):
        agent.run_sync(user_msg="go")


def test_an_empty_reply_finishes_with_an_empty_response() -> None:
    agent, _ = _agent([ScriptedResponse(text="")])
    result = agent.run_sync(user_msg="say nothing")
    assert not result.response.content


def test_tools_may_be_plain_functions() -> None:
    agent = FunctionAgent(tools=[add], llm=ScriptedLLM([]))
    assert isinstance(agent.tools[0], FunctionTool)
    assert agent.tools[0].metadata.name == "add"


def test_an_agent_is_built_without_an_llm_and_its_first_step_names_it() -> None:
    agent = FunctionAgent(name="adder", tools=[add])
    with pytest.raises(WorkflowRuntimeError,
                       match=r"^Error in step 'run_agent_step': FunctionAgent 'adder' needs an llm: "
                             r"it was built without one"):
        agent.run_sync(user_msg="go")


def test_events_carry_the_agent_name() -> None:
    agent, _ = _agent([tool_call("add", a=1, b=1), "2"], name="adder")
    _, events, _ = run_sync(run_collect(agent, user_msg="go"))
    named = [e for e in events if isinstance(e, (AgentInput, AgentOutput))]
    assert {e.current_agent_name for e in named} == {"adder"}


def test_tool_call_events_carry_name_arguments_id_and_output() -> None:
    call = tool_call("add", a=2, b=3)
    agent, _ = _agent([call, "5"])
    _, events, _ = run_sync(run_collect(agent, user_msg="go"))
    (request,) = [e for e in events if isinstance(e, ToolCall) and not isinstance(e, StopEvent)]
    (result,) = [e for e in events if isinstance(e, ToolCallResult)]
    assert (request.tool_name, request.tool_kwargs, request.tool_id) == ("add", {"a": 2, "b": 3},
                                                                         call.tool_id)
    assert result.tool_output.content == "5" and result.return_direct is False
