"""AgentRunner.undo_step (issue 38): the task's step queue, state and memory go back to what
they were before its last step, so the step can be run again with another reply or input.
Upstream 0.12.42 only declares the method (NotImplementedError)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentkit.agent import (
    AgentChatResponse,
    AgentRunner,
    CustomSimpleAgentWorker,
    FnAgentWorker,
    MultimodalReActAgentWorker,
    ParallelAgentRunner,
    QueryPipelineAgentWorker,
    Task,
)
from agentkit.agent.coa import CoAAgentWorker
from agentkit.agent.function_calling import FunctionCallingAgent
from agentkit.agent.llm_compiler import LLMCompilerAgentWorker
from agentkit.agent.react import ReActAgent
from agentkit.agent.types import StreamingAgentChatResponse, TaskStepOutput
from agentkit.core.sim import run_sync
from agentkit.llms import ChatMessage, ImageBlock, MessageRole
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.tools import FunctionTool


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


TOOLS = [FunctionTool.from_defaults(add)]
PLAN = "1. add(2, 3)\n2. join()<END_OF_PLAN>"


def _react(first: str, second: str) -> AgentRunner:
    return ReActAgent.from_tools(TOOLS, llm=ScriptedLLM([
        'Thought: add them\nAction: add\nAction Input: {"a": 2, "b": 3}',
        f"Thought: done\nAnswer: {first}", f"Thought: done\nAnswer: {second}"],
        function_calling=False))


def _function_calling(first: str, second: str) -> AgentRunner:
    return FunctionCallingAgent.from_tools(TOOLS, llm=ScriptedLLM([tool_call("add", a=2, b=3),
                                                                   first, second]))


def _llm_compiler(first: str, second: str) -> AgentRunner:
    llm = ScriptedLLM([PLAN, "Thought: not yet\nAction: Replan(check again)",
                       PLAN, f"Thought: ok\nAction: Finish({first})",
                       PLAN, f"Thought: ok\nAction: Finish({second})"])
    return LLMCompilerAgentWorker.from_tools(TOOLS, llm=llm).as_agent()


def _coa(first: str, second: str) -> AgentRunner:
    llm = ScriptedLLM(["It is [FUNC add(2, 3) = y1].", first, second])
    return CoAAgentWorker.from_tools(TOOLS, llm=llm).as_agent()


def _multimodal_react(first: str, second: str) -> AgentRunner:
    llm = ScriptedLLM(['Thought: add them\nAction: add\nAction Input: {"a": 2, "b": 3}',
                       f"Thought: done\nAnswer: {first}", f"Thought: done\nAnswer: {second}"],
                      function_calling=False)
    worker = MultimodalReActAgentWorker.from_tools(TOOLS, multi_modal_llm=llm)
    return worker.as_agent(init_task_state_kwargs={"image_docs": [ImageBlock(image=b"png")]})


AGENTS: dict[str, Callable[[str, str], AgentRunner]] = {
    "react": _react, "function_calling": _function_calling, "llm_compiler": _llm_compiler,
    "coa": _coa, "multimodal_react": _multimodal_react}


def _step(agent: AgentRunner, task_id: str, mode: str, **kwargs: Any) -> TaskStepOutput:
    if mode == "run":
        return agent.run_step(task_id, **kwargs)
    if mode == "arun":
        return run_sync(agent.arun_step(task_id, **kwargs))
    return agent.stream_step(task_id, **kwargs)


def _text(output: TaskStepOutput) -> str:
    response = output.output
    if isinstance(response, StreamingAgentChatResponse):
        for _ in response.response_gen:
            pass
    return str(response)


def _memory(agent: AgentRunner) -> list[tuple[str, str]]:
    return [(m.role.value, m.content or "") for m in agent.memory.get_all()]


@pytest.fixture(params=list(AGENTS))
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(params=["run", "arun", "stream"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


def test_undoing_the_last_step_lets_it_run_again_with_the_next_reply(kind, mode):
    agent = AGENTS[kind]("first answer", "second answer")
    task = agent.create_task("What is 2 + 3?")
    step_one = _step(agent, task.task_id, mode)
    assert not step_one.is_last
    upcoming = [s.step_id for s in agent.get_upcoming_steps(task.task_id)]
    sources = [s.content for s in task.extra_state["sources"]]

    first = _step(agent, task.task_id, mode)
    assert first.is_last and _text(first) == "first answer"
    assert agent.undo_step(task.task_id) is first

    assert agent.get_completed_steps(task.task_id) == [step_one]
    assert [s.step_id for s in agent.get_upcoming_steps(task.task_id)] == upcoming
    assert [s.content for s in task.extra_state["sources"]] == sources
    second = _step(agent, task.task_id, mode)
    assert second.is_last and _text(second) == "second answer"
    agent.finalize_response(task.task_id, second)
    memory = _memory(agent)
    assert memory[0] == ("user", "What is 2 + 3?") and memory[-1] == ("assistant", "second answer")
    assert not any("first answer" in content for _, content in memory)


@pytest.mark.parametrize("chat", ["chat", "achat", "stream_chat"])
def test_undo_after_the_answer_was_written_puts_the_conversation_back(kind, chat):
    agent = AGENTS[kind]("first answer", "second answer")
    if chat == "chat":
        agent.chat("What is 2 + 3?")
    elif chat == "achat":
        run_sync(agent.achat("What is 2 + 3?"))
    else:
        assert "".join(agent.stream_chat("What is 2 + 3?").response_gen) == "first answer"
    (task,) = [state.task for state in agent.list_tasks()]
    assert _memory(agent)[-1] == ("assistant", "first answer")

    agent.undo_step(task.task_id)

    assert agent.chat_history == []
    again = agent.run_step(task.task_id)
    agent.finalize_response(task.task_id, again)
    assert _memory(agent)[-1] == ("assistant", "second answer")


@pytest.mark.agentkit_allow_unused_script  # the agent's second answer is never asked for
def test_undo_goes_back_step_by_step_to_the_first_and_then_says_there_is_nothing_left(kind):
    agent = AGENTS[kind]("first answer", "second answer")
    task = agent.create_task("What is 2 + 3?")
    initial = [s.step_id for s in agent.get_upcoming_steps(task.task_id)]
    agent.run_step(task.task_id)
    agent.run_step(task.task_id)
    agent.undo_step(task.task_id)
    agent.undo_step(task.task_id)

    assert agent.get_completed_steps(task.task_id) == []
    assert [s.step_id for s in agent.get_upcoming_steps(task.task_id)] == initial
    assert task.extra_state["sources"] == []
    with pytest.raises(ValueError, match=rf"^Nothing to undo for task_id: {task.task_id} "):
        agent.undo_step(task.task_id)


@pytest.mark.agentkit_allow_unused_script  # the agent's second answer is never asked for
def test_a_step_undone_can_run_again_with_another_input():
    agent = AGENTS["function_calling"]("Paris", "Rome")
    task = agent.create_task("Capital of France?")
    agent.run_step(task.task_id)
    agent.undo_step(task.task_id)

    agent.run_step(task.task_id, input="Capital of Italy?")

    new_messages = task.extra_state["new_memory"].get_all()
    assert [m.content for m in new_messages if m.role.value == "user"] == ["Capital of Italy?"]


@pytest.mark.agentkit_allow_unused_script  # the agent's second answer is never asked for
def test_a_new_task_has_nothing_to_undo():
    agent = AGENTS["react"]("a", "b")
    task = agent.create_task("q")
    with pytest.raises(ValueError, match=r"^Nothing to undo for task_id: "):
        agent.undo_step(task.task_id)
    with pytest.raises(ValueError, match=r"^No task with task_id: nope$"):
        agent.undo_step("nope")


@pytest.mark.agentkit_allow_unused_script  # the agent's second answer is never asked for
def test_a_parallel_runner_refuses_to_undo():
    agent = ParallelAgentRunner(_function_calling("a", "b").agent_worker)
    task = agent.create_task("q")
    agent.run_steps_in_queue(task.task_id)
    with pytest.raises(NotImplementedError, match=r"steps of a round run concurrently"):
        agent.undo_step(task.task_id)


# ------------------------------------------------------------------ the custom workers
# Their state is the user's: a dict the step function changes in place (a count, a list of
# what it did) and, for the state-dict workers, the task's new-message buffer. Undo puts all
# of it back; the workers' answers come from ``answers``, so a step run again answers anew.
class _TwoSteps(CustomSimpleAgentWorker):
    answers: list[str]

    def _initialize_state(self, task: Task, **kwargs: Any) -> dict[str, Any]:
        return {"count": 0, "log": []}

    def _run_step(self, state: dict[str, Any], task: Task,
                  input: str | None = None) -> tuple[AgentChatResponse, bool]:
        state["count"] += 1
        state["log"].append(input)
        if state["count"] < 2:
            return AgentChatResponse(response="thinking"), False
        answer = self.answers.pop(0)
        state["memory"].put(ChatMessage(role=MessageRole.USER, content=task.input))
        state["memory"].put(ChatMessage(role=MessageRole.ASSISTANT, content=answer))
        return AgentChatResponse(response=answer), True


class _Pipeline:
    def __init__(self, answers: list[str]) -> None:
        self.worker = _TwoSteps(answers=answers)

    def run(self, state: dict[str, Any], task: Task) -> tuple[AgentChatResponse, bool]:
        state.setdefault("count", 0)
        state.setdefault("log", [])
        return self.worker._run_step(state, task, task.input)


def _fn_worker(answers: list[str]) -> AgentRunner:
    def fn(state: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        state["count"] += 1
        state["log"].append(state["count"])
        state["__output__"] = "thinking" if state["count"] < 2 else answers.pop(0)
        return state, state["count"] >= 2

    return FnAgentWorker(fn=fn, initial_state={"count": 0, "log": []}).as_agent()


def _custom(kind: str, answers: list[str]) -> AgentRunner:
    if kind == "custom_simple":
        return _TwoSteps(answers=answers).as_agent()
    if kind == "query_pipeline":
        with pytest.warns(DeprecationWarning):
            return QueryPipelineAgentWorker(_Pipeline(answers)).as_agent()
    return _fn_worker(answers)


@pytest.mark.parametrize("custom", ["custom_simple", "query_pipeline", "fn"])
def test_a_custom_workers_state_and_messages_go_back_with_its_last_step(custom, mode):
    agent = _custom(custom, ["first answer", "second answer"])
    task = agent.create_task("count twice")
    _step(agent, task.task_id, mode)
    (queued,) = agent.get_upcoming_steps(task.task_id)
    state_after_one = (queued.step_state["count"], list(queued.step_state["log"]))

    assert _text(_step(agent, task.task_id, mode)) == "first answer"
    agent.undo_step(task.task_id)

    (queued,) = agent.get_upcoming_steps(task.task_id)
    assert (queued.step_state["count"], queued.step_state["log"]) == state_after_one
    assert custom == "fn" or queued.step_state["memory"].get_all() == []
    again = _step(agent, task.task_id, mode)
    assert again.is_last and _text(again) == "second answer"
    agent.finalize_response(task.task_id, again)
    assert queued.step_state["count"] == 2 and len(queued.step_state["log"]) == 2
    # the state-dict workers write their messages at the end; FnAgentWorker writes none
    expected = [] if custom == "fn" else [("user", "count twice"),
                                          ("assistant", "second answer")]
    assert _memory(agent) == expected
