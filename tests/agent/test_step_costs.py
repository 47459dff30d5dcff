"""What a chat's hot path does, counted (issue 36): the per-step work that a change could make
grow again without any test failing on behaviour. Counts, never time."""

from __future__ import annotations

from typing import Any

import pytest

import agentkit.agent.runner.base as runner_base
import agentkit.llms.mock as mock
from agentkit.agent.function_calling import FunctionCallingAgent
from agentkit.agent.react import ReActAgent
from agentkit.agent.runner import AgentRunner
from agentkit.core.sim import simulation
from agentkit.llms import errors
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.tools import FunctionTool


def population(city: str) -> str:
    """The population of a city."""
    return f"{city}: 1000"


TOOLS = [FunctionTool.from_defaults(population)]
CALLS = 10


def _react() -> tuple[AgentRunner, ScriptedLLM]:
    llm = ScriptedLLM([f'Thought: look\nAction: population\nAction Input: {{"city": "c{n}"}}'
                       for n in range(CALLS)] + ["Thought: done\nAnswer: ten"],
                      function_calling=False)
    return ReActAgent.from_tools(TOOLS, llm=llm, max_iterations=40), llm


def _function_calling() -> tuple[AgentRunner, ScriptedLLM]:
    llm = ScriptedLLM([tool_call("population", city=f"c{n}") for n in range(CALLS)] + ["ten"])
    return FunctionCallingAgent.from_tools(TOOLS, llm=llm, max_function_calls=40), llm


def _counting(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    calls = [0]
    original = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


@pytest.mark.parametrize("build", [_react, _function_calling], ids=["react", "function_calling"])
def test_step_snapshots_work_out_each_type_once_not_per_step(build: Any,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    agent, llm = build()
    with simulation():
        agent.chat("first")  # meets every type the steps' states hold
        llm.reset()
        agent.reset()
        kinds = _counting(monkeypatch, runner_base, "_kind")
        response = agent.chat("second")

    assert len(response.sources) == CALLS
    assert len(agent.state.task_dict[agent.list_tasks()[0].task.task_id].undo_stack) == CALLS + 1
    assert kinds[0] == 0


@pytest.mark.parametrize("build", [_react, _function_calling], ids=["react", "function_calling"])
def test_a_model_call_that_succeeds_at_once_does_not_enter_the_retry_loop(
        build: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    retries = _counting(monkeypatch, mock, "retrying")
    agent, llm = build()
    with simulation():
        assert agent.chat("go").response == "ten"

    assert (llm.calls, retries[0]) == (CALLS + 1, 0)


def test_a_first_attempt_that_fails_goes_on_through_the_retry_policy(
        monkeypatch: pytest.MonkeyPatch) -> None:
    retries = _counting(monkeypatch, mock, "retrying")
    llm = ScriptedLLM([errors.ServerError("busy"), errors.ServerError("busy"), "ok"])
    with simulation():
        assert llm.chat([]).message.content == "ok"

    assert (llm.calls, retries[0]) == (3, 1)


def _python_calls(fn: Any, *args: Any) -> list[str]:
    import sys

    calls: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return calls


@pytest.mark.agentkit_allow_unused_script  # the second task runs one step of its script
@pytest.mark.parametrize("build", [_react, _function_calling], ids=["react", "function_calling"])
def test_a_step_snapshot_copies_plain_state_without_the_generic_copier(build: Any) -> None:
    """A worker's state (dicts of records, lists of records and memories) is copied in each
    dict's own loop: one call per state dict and per memory, none through ``_Copier.copy``."""
    agent, llm = build()
    with simulation():
        agent.chat("first")  # meets every type the steps' states hold
        llm.reset()
        task = agent.create_task("second")
        agent.run_step(task.task_id)
    state = agent.state.task_dict[task.task_id]

    calls = _python_calls(runner_base.StepSnapshot.take, task, state.step_queue)

    assert "copy" not in calls and "_memory" not in calls
    assert sorted(calls) == sorted(["take", "__init__", "snapshot", "_dict", "_dict", "snapshot",
                                    "__init__"])
