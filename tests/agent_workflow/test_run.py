"""Runs: max iterations (W4), state (W9), human in the loop (W10), tool errors (W11), inputs
(W13), failed runs leave memory alone, timeouts, contexts."""

from __future__ import annotations

import pytest

from agentkit.agent.workflow import (
    AgentInput,
    AgentWorkflow,
    FunctionAgent,
    ReActAgent,
    ToolCallResult,
)
from agentkit.core.sim import asleep, run_sync
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.llms.types import ChatMessage, MessageRole
from agentkit.memory import ChatMemoryBuffer
from agentkit.workflow import (
    Context,
    ContextSerdeError,
    HumanResponseEvent,
    InputRequiredEvent,
    StartEvent,
    StopEvent,
    Workflow,
    WorkflowHandler,
    WorkflowRuntimeError,
    WorkflowTimeoutError,
    step,
)

from .helpers import (
    REACT_DONE,
    add,
    explode,
    increment_counter,
    roles,
    run_collect,
    run_one_tool_call,
)


def _looping(n: int) -> FunctionAgent:
    return FunctionAgent(tools=[add], llm=ScriptedLLM(
        [tool_call("add", a=i, b=1) for i in range(n)], strict=False))


# ---------------------------------------------------------------- max iterations (W4)
def test_a_tool_call_every_step_fails_at_the_default_limit_of_20_outputs() -> None:
    with pytest.raises(WorkflowRuntimeError, match=(
            r"Max iterations of 20 reached! Either something went wrong, or you can increase "
            r"the max iterations with `\.run\(\.\., max_iterations=\.\.\.\)`")):
        _looping(30).run_sync(user_msg="loop")


def test_max_iterations_counts_agent_outputs() -> None:
    agent = _looping(10)
    with pytest.raises(WorkflowRuntimeError, match="Max iterations of 3 reached!"):
        agent.run_sync(user_msg="loop", max_iterations=3)
    assert agent.llm.calls == 3


def test_a_direct_answer_succeeds_with_max_iterations_1() -> None:
    agent = FunctionAgent(tools=[add], llm=ScriptedLLM(["right away"]))
    assert str(agent.run_sync(user_msg="q", max_iterations=1)) == "right away"


def test_the_last_allowed_output_may_be_the_answer() -> None:
    agent = FunctionAgent(tools=[add], llm=ScriptedLLM([tool_call("add", a=1, b=1), "2"]))
    assert str(agent.run_sync(user_msg="q", max_iterations=2)) == "2"


def test_a_large_max_iterations_is_accepted() -> None:
    agent = FunctionAgent(tools=[add], llm=ScriptedLLM(["ok"]))
    assert str(agent.run_sync(user_msg="q", max_iterations=101)) == "ok"


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_max_iterations_must_be_a_positive_int(bad) -> None:
    agent = FunctionAgent(tools=[add], llm=ScriptedLLM([]))
    with pytest.raises(ValueError, match=f"max_iterations must be an int >= 1, got {bad!r}"):
        agent.run_sync(user_msg="q", max_iterations=bad)


# ---------------------------------------------------------------- state (W9)
def _stateful(script: list) -> tuple[AgentWorkflow, ScriptedLLM]:
    llm = ScriptedLLM(script)
    agent = FunctionAgent(tools=[increment_counter], llm=llm)
    return AgentWorkflow(agents=[agent], initial_state={"counter": 0},
                         state_prompt="Current state: {state}. User message: {msg}"), llm


def test_a_ctx_tool_changes_the_shared_state() -> None:
    workflow, _ = _stateful([tool_call("increment_counter"), "done"])
    _, _, handler = run_sync(run_collect(workflow, user_msg="count"))
    assert run_sync(handler.ctx.store.get("state")) == {"counter": 1}


def test_the_ctx_parameter_is_not_in_the_tool_schema() -> None:
    workflow, llm = _stateful(["nothing to do"])
    workflow.run_sync(user_msg="hi")
    assert llm.requests[0].tool_specs()[0]["parameters"]["properties"] == {}


def test_every_llm_input_shows_the_current_state_once_in_the_user_message() -> None:
    workflow, llm = _stateful([tool_call("increment_counter"), "done"])
    workflow.run_sync(user_msg="count")
    users = [[m.content for m in r.messages if m.role == MessageRole.USER] for r in llm.requests]
    assert users == [["Current state: {'counter': 0}. User message: count"],
                     ["Current state: {'counter': 1}. User message: count"]]


def test_the_state_prompt_never_changes_the_stored_user_message() -> None:
    workflow, _ = _stateful(["done"])
    memory = ChatMemoryBuffer.from_defaults()
    workflow.run_sync(user_msg="count", memory=memory)
    assert roles(memory.get_all())[0] == ("user", "count")


def test_the_default_state_prompt_frames_state_and_message() -> None:
    llm = ScriptedLLM(["ok"])
    workflow = AgentWorkflow(agents=[FunctionAgent(llm=llm)], initial_state={"k": "v"})
    workflow.run_sync(user_msg="hi")
    assert llm.requests[0].messages[-1].content == (
        "Current state:\n{'k': 'v'}\n\nCurrent message:\nhi\n")


def test_without_state_the_user_message_reaches_the_llm_unchanged() -> None:
    llm = ScriptedLLM(["ok"])
    FunctionAgent(llm=llm).run_sync(user_msg="hi")
    assert llm.requests[0].messages[-1].content == "hi"


# ---------------------------------------------------------------- human in the loop (W10)
async def ask_name(ctx: Context) -> str:
    """Ask the user for their name."""
    answer = await ctx.wait_for_event(HumanResponseEvent,
                                      waiter_event=InputRequiredEvent(prefix="Your name?"))
    return f"Your name is {answer.response}"


async def _asking(workflow: AgentWorkflow) -> WorkflowHandler:
    """A run of ``workflow`` on "Who am I?", once it has asked for input."""
    handler = workflow.run(user_msg="Who am I?")
    async for event in handler.stream_events():
        if isinstance(event, InputRequiredEvent):
            break
    return handler


def test_a_paused_run_resumes_from_a_saved_context_with_the_human_answer() -> None:
    llm = ScriptedLLM([tool_call("ask_name"), "HITL successful"])
    workflow = AgentWorkflow(agents=[FunctionAgent(tools=[ask_name], llm=llm)])

    async def go() -> tuple[str, list]:
        handler = await _asking(workflow)
        data = handler.ctx.to_dict()
        await handler.cancel_run()
        restored = Context.from_dict(workflow, data)
        handler = workflow.run(ctx=restored)
        handler.ctx.send_event(HumanResponseEvent(response="John Doe"))
        results = [e async for e in handler.stream_events() if isinstance(e, ToolCallResult)]
        return str(await handler), results

    response, results = run_sync(go())
    assert "HITL successful" in response
    assert results[0].tool_output.content == "Your name is John Doe"


def test_resuming_takes_no_new_arguments() -> None:
    llm = ScriptedLLM([tool_call("ask_name")], strict=False)
    workflow = AgentWorkflow(agents=[FunctionAgent(tools=[ask_name], llm=llm)])

    async def go() -> None:
        handler = await _asking(workflow)
        await handler.cancel_run()
        workflow.run(ctx=handler.ctx, user_msg="again")

    with pytest.raises(WorkflowRuntimeError, match=r"resume it with run\(ctx=ctx\) alone "
                                                   r"\(got user_msg\)"):
        run_sync(go())


def test_a_human_who_never_answers_ends_at_the_workflow_timeout() -> None:
    llm = ScriptedLLM([tool_call("ask_name")])
    workflow = AgentWorkflow(agents=[FunctionAgent(tools=[ask_name], llm=llm)], timeout=30)
    with pytest.raises(WorkflowTimeoutError):
        workflow.run_sync(user_msg="Who am I?")


def test_a_context_of_another_workflow_cannot_be_restored() -> None:
    class Other(Workflow):
        @step
        async def only(self, ev: StartEvent) -> StopEvent:
            return StopEvent()

    agent = FunctionAgent(llm=ScriptedLLM([]))
    data = Context(Other()).to_dict()
    with pytest.raises(ContextSerdeError, match="restore it with the workflow that ran it"):
        Context.from_dict(agent, data)


# ---------------------------------------------------------------- tool errors (W11)
def _result_of(tool_calls: list, tools: list) -> ToolCallResult:
    llm = ScriptedLLM([tool_calls, "done"])
    return run_one_tool_call(FunctionAgent(tools=tools, llm=llm), user_msg="go")[1]


def test_an_unknown_tool_is_an_error_result() -> None:
    result = _result_of([tool_call("nope", x=1)], [add])
    assert result.tool_output.is_error
    assert result.tool_output.content == (
        "Tool nope not found. Please select a tool that is available.")


def test_a_raising_tool_is_an_error_result_with_its_message() -> None:
    result = _result_of([tool_call("explode", x=1)], [explode])
    assert result.tool_output.is_error and result.tool_output.content == "kaboom"
    # issue 38 B4: upstream 0.12.42's agent workflows keep str(e) as raw_output too
    assert result.tool_output.raw_output == "kaboom"


def test_a_missing_argument_is_an_error_result_with_pythons_message() -> None:
    result = _result_of([tool_call("add", a=1)], [add])
    assert result.tool_output.is_error
    assert result.tool_output.content == "add() missing 1 required positional argument: 'b'"


def test_after_a_tool_error_the_loop_continues() -> None:
    llm = ScriptedLLM([tool_call("nope"), "recovered"])
    assert str(FunctionAgent(tools=[add], llm=llm).run_sync(user_msg="go")) == "recovered"


# ---------------------------------------------------------------- inputs (W13)
def test_a_run_needs_a_user_message_or_a_chat_history() -> None:
    agent = FunctionAgent(llm=ScriptedLLM([]))
    with pytest.raises(WorkflowRuntimeError, match="Must provide either user_msg or chat_history"):
        agent.run_sync(chat_history=[ChatMessage(role=MessageRole.SYSTEM, content="sys")])


def test_with_only_a_chat_history_its_last_user_message_is_the_query() -> None:
    llm = ScriptedLLM(["answer"])
    workflow = AgentWorkflow(agents=[FunctionAgent(llm=llm)], initial_state={"s": 1})
    history = [ChatMessage(role=MessageRole.USER, content="first"),
               ChatMessage(role=MessageRole.ASSISTANT, content="reply"),
               ChatMessage(role=MessageRole.USER, content="second")]
    workflow.run_sync(chat_history=history)
    assert llm.requests[0].messages[-1].content.endswith("Current message:\nsecond\n")


def test_a_chat_history_replaces_the_memory() -> None:
    memory = ChatMemoryBuffer.from_defaults(
        chat_history=[ChatMessage(role=MessageRole.USER, content="old")])
    agent = FunctionAgent(llm=ScriptedLLM(["answer"]))
    agent.run_sync(chat_history=[ChatMessage(role=MessageRole.USER, content="new")],
                   memory=memory)
    assert roles(memory.get_all()) == [("user", "new"), ("assistant", "answer")]


def test_a_user_message_may_be_a_chat_message() -> None:
    llm = ScriptedLLM(["ok"])
    FunctionAgent(llm=llm).run_sync(user_msg=ChatMessage(role=MessageRole.USER, content="hey"))
    assert llm.requests[0].messages[-1].content == "hey"


# ---------------------------------------------------------------- failed runs
def test_a_failed_run_leaves_the_memory_as_it_was() -> None:
    before = [ChatMessage(role=MessageRole.USER, content="earlier"),
              ChatMessage(role=MessageRole.ASSISTANT, content="reply")]
    memory = ChatMemoryBuffer.from_defaults(chat_history=before)
    with pytest.raises(WorkflowRuntimeError):
        _looping(5).run_sync(user_msg="loop", memory=memory, max_iterations=2)
    assert roles(memory.get_all()) == roles(before)


def test_an_llm_error_fails_the_run_and_leaves_the_memory_alone() -> None:
    memory = ChatMemoryBuffer.from_defaults()
    agent = FunctionAgent(llm=ScriptedLLM([RuntimeError("the model is down")]))
    with pytest.raises(WorkflowRuntimeError, match="the model is down"):
        agent.run_sync(user_msg="hi", memory=memory)
    assert memory.get_all() == []


def test_a_timed_out_run_leaves_the_memory_alone() -> None:
    async def slow(x: int) -> int:
        """Takes a minute."""
        await asleep(60)
        return x

    memory = ChatMemoryBuffer.from_defaults()
    agent = FunctionAgent(tools=[slow], llm=ScriptedLLM([tool_call("slow", x=1)]), timeout=10)
    with pytest.raises(WorkflowTimeoutError):
        agent.run_sync(user_msg="hi", memory=memory)
    assert memory.get_all() == []


def test_a_context_reused_after_a_failed_run_starts_clean() -> None:
    llm = ScriptedLLM([tool_call("add", a=1, b=1), tool_call("add", a=2, b=2), "fine"])
    agent = FunctionAgent(tools=[add], llm=llm)

    async def go() -> str:
        ctx = Context(agent)
        with pytest.raises(WorkflowRuntimeError):
            await agent.run(user_msg="first", ctx=ctx, max_iterations=1)
        assert roles((await ctx.store.get("memory")).get_all()) == []
        assert await ctx.store.get("scratchpad") == []
        return str(await agent.run(user_msg="second", ctx=ctx))

    assert run_sync(go()) == "fine"
    assert roles(llm.requests[1].messages) == [("user", "second")]


def test_a_context_shared_by_two_runs_keeps_the_conversation() -> None:
    llm = ScriptedLLM(["one", "two"])
    agent = FunctionAgent(llm=llm)

    async def go() -> None:
        ctx = Context(agent)
        await agent.run(user_msg="a", ctx=ctx)
        await agent.run(user_msg="b", ctx=ctx)

    run_sync(go())
    assert roles(llm.requests[1].messages) == [("user", "a"), ("assistant", "one"), ("user", "b")]


def test_a_react_agent_run_alone_reports_agent_input_first() -> None:
    agent = ReActAgent(tools=[add], llm=ScriptedLLM([REACT_DONE], function_calling=False))
    _, events, _ = run_sync(run_collect(agent, user_msg="sum?"))
    assert isinstance(events[0], AgentInput)
    assert events[0].input[0].role == MessageRole.SYSTEM


def test_the_start_events_model_dump_holds_the_message_and_history_only() -> None:
    # issue 38: upstream 0.12.42/0.12.52 dump {'user_msg', 'chat_history'}: no memory, no
    # max_iterations (and upstream fails with no chat_history; here it is None)
    from agentkit.agent.workflow.events import AgentWorkflowStartEvent

    history = [ChatMessage(role="user", content="a")]
    event = AgentWorkflowStartEvent(user_msg="hi", chat_history=history,
                                    memory=ChatMemoryBuffer.from_defaults(), max_iterations=5)
    assert event.model_dump() == {"user_msg": "hi", "chat_history": [history[0].model_dump()]}
    assert event.max_iterations == 5 and isinstance(event.memory, ChatMemoryBuffer)
    assert AgentWorkflowStartEvent(user_msg="hi").model_dump() == {"user_msg": "hi",
                                                                   "chat_history": None}
