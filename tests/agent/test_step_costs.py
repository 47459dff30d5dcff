"""What a chat's hot path does, counted (issue 36): the per-step work that a change could make
grow again without any test failing on behaviour. Counts, never time."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
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
from tests.python_calls import calls as calls_of
from tests.python_calls import python_calls


def population(city: str) -> str:
    """The population of a city."""
    return f"{city}: 1000"


TOOLS = [FunctionTool.from_defaults(population)]
CALLS = 10
ROOT = Path(__file__).resolve().parents[2]


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


@pytest.mark.agentkit_allow_unused_script  # the second task runs one step of its script
@pytest.mark.parametrize("build", [_react, _function_calling], ids=["react", "function_calling"])
def test_a_step_snapshot_copies_plain_state_without_the_generic_copier(build: Any) -> None:
    """A worker's state (dicts of records, lists of records and memories) is copied in each
    dict's own loop, no ``_Copier`` built: one call for the task's state; a step state of
    records only and a ``ChatMemoryBuffer``'s snapshot are taken inline, without one."""
    agent, llm = build()
    with simulation():
        agent.chat("first")  # meets every type the steps' states hold
        llm.reset()
        task = agent.create_task("second")
        agent.run_step(task.task_id)
    state = agent.state.task_dict[task.task_id]

    _, calls = python_calls(lambda: runner_base.StepSnapshot.take(task, state.step_queue))

    assert "copy" not in calls and "_memory" not in calls
    assert sorted(calls) == sorted(["<lambda>", "take", "_copy_dict"])


def _one_call(kind: str) -> tuple[AgentRunner, ScriptedLLM]:
    """The benchmark's chat (benchmarks/bench_agents.py): one tool call, then the answer."""
    if kind == "react":
        llm = ScriptedLLM(['Thought: look\nAction: population\nAction Input: {"city": "c0"}',
                           "Thought: done\nAnswer: one"], function_calling=False)
        return ReActAgent.from_tools(TOOLS, llm=llm), llm
    llm = ScriptedLLM([tool_call("population", city="c0"), "one"])
    return FunctionCallingAgent.from_tools(TOOLS, llm=llm), llm


# Per chat with one tool call (two steps), nobody listening: Python calls (the bus's
# `wants` left out: see test_nobody_listening_costs_no_python_call_per_event) and pydantic
# validations. Issue 36's second pass cut the calls from 285 / 253 (299 / 267 with `wants`)
# to 207 / 188, its third to 139 / 120 (models validated without BaseModel.__init__, spans and
# snapshots inline, the virtual loop's run in fewer frames).
CHAT_COSTS = {"react": (139, 18), "function_calling": (120, 13)}


@pytest.mark.parametrize("kind", list(CHAT_COSTS))
def test_a_chat_runs_no_more_python_than_it_did(kind: str) -> None:
    agent, llm = _one_call(kind)
    with simulation():
        agent.chat("warm up")  # types met once, schemas built
        llm.reset()
        agent.reset()
        response, called, c_called = calls_of(lambda: agent.chat("go"))

    assert response.response == "one" and len(response.sources) == 1
    python = [name for name in called if name not in ("wants", "_wants")]
    most_calls, most_validations = CHAT_COSTS[kind]
    assert len(python) <= most_calls
    assert c_called.count("validate_python") <= most_validations


_FRESH_PROCESS = """
    import json
    from agentkit.core.events import Dispatcher, dispatcher
    from tests.agent.test_step_costs import _one_call
    from tests.python_calls import python_calls

    agent, llm = _one_call("react")
    agent.chat("warm up")
    llm.reset(); agent.reset()
    _, quiet = python_calls(lambda: agent.chat("go"))
    llm.reset(); agent.reset()
    seen = []
    with dispatcher.listen(seen.append):
        agent.chat("go")
    llm.reset(); agent.reset()
    _, after = python_calls(lambda: agent.chat("go"))  # nobody listening, but someone did
    print(json.dumps({"quiet": quiet, "after": after, "seen": [e.name for e in seen],
                      "wants": Dispatcher.wants.__name__}))
"""


def test_nobody_listening_costs_no_python_call_per_event() -> None:
    """Until anyone in the process listens, ``dispatcher.wants`` answers from C (no Python
    call for each event a producer might build); a listener that comes later sees every
    event of a chat, in order, and from then on ``wants`` asks the listeners."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(_FRESH_PROCESS)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)

    assert "wants" not in result["quiet"] and "_wants" not in result["quiet"]
    assert len(result["quiet"]) <= CHAT_COSTS["react"][0]
    assert result["after"].count("_wants") == 14 and result["wants"] == "_wants"
    step = ["AgentStepStartEvent", "ToolsOfferedEvent", "LLMCallStartEvent",
            "LLMCallEndEvent"]
    assert result["seen"] == ["AgentChatStartEvent",
                              *step, "ToolCallStartEvent", "ToolCallEndEvent",
                              "AgentStepEndEvent",
                              *step, "AgentStepEndEvent", "AgentChatEndEvent"]
