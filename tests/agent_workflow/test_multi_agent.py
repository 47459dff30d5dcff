"""AgentWorkflow: validation (W5), hand-offs (W6, W7), from_tools_or_functions, prompts."""

from __future__ import annotations

import pytest

from agentkit.agent.workflow import (
    AgentInput,
    AgentOutput,
    AgentWorkflow,
    FunctionAgent,
    ReActAgent,
    ToolCallResult,
)
from agentkit.core.sim import run_sync
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.llms.prompts import PromptTemplate
from agentkit.memory import ChatMemoryBuffer
from agentkit.tools import FunctionTool

from .helpers import REACT_ADD, REACT_DONE, add, roles, run_collect, run_one_tool_call


def _fn(name: str = "retriever", script: list | None = None, **kwargs) -> FunctionAgent:
    return FunctionAgent(name=name, description=f"The {name}.", tools=[],
                         llm=ScriptedLLM(script or [], name=name), **kwargs)


def _react(name: str = "calculator", script: list | None = None, **kwargs) -> ReActAgent:
    return ReActAgent(name=name, description=f"The {name}.", tools=[add],
                      llm=ScriptedLLM(script or [], function_calling=False, name=name), **kwargs)


# ---------------------------------------------------------------- validation (W5)
@pytest.mark.parametrize(("build", "message"), [
    (lambda: AgentWorkflow(agents=[]), "At least one agent must be provided"),
    (lambda: AgentWorkflow(agents=[_fn(), _react()]), "Exactly one root agent must be provided"),
    (lambda: AgentWorkflow(agents=[_fn(), _react()], root_agent="nobody"),
     "Root agent nobody not found in provided agents"),
    (lambda: AgentWorkflow(agents=[_fn()], root_agent="nobody"),
     "Root agent nobody not found in provided agents"),
    (lambda: AgentWorkflow(agents=[FunctionAgent(description="d", llm=ScriptedLLM([])), _react()],
                           root_agent="calculator"),
     "All agents must have a name in a multi-agent workflow"),
    (lambda: AgentWorkflow(agents=[FunctionAgent(name="a", llm=ScriptedLLM([])), _react()],
                           root_agent="a"),
     "All agents must have a description in a multi-agent workflow"),
    (lambda: AgentWorkflow(agents=[_fn(initial_state={"x": 1})]),
     "Initial state is not supported per-agent in AgentWorkflow"),
    (lambda: AgentWorkflow(agents=[_fn()], handoff_prompt="no placeholder"),
     "Handoff prompt must contain {agent_info}"),
    (lambda: AgentWorkflow(agents=[_fn()], handoff_output_prompt="only {to_agent}"),
     "Handoff output prompt must contain {to_agent} and {reason}"),
    (lambda: AgentWorkflow(agents=[_fn()], state_prompt="only {state}"),
     "State prompt must contain {state} and {msg}"),
    (lambda: AgentWorkflow(agents=[_fn(), _fn()], root_agent="retriever"),
     "Agent names must be unique: two agents are named 'retriever'"),
    (lambda: AgentWorkflow(agents=[_fn(can_handoff_to=["ghost"]), _react()],
                           root_agent="retriever"),
     "Agent retriever can hand off to unknown agent(s) ghost"),
])
def test_a_malformed_workflow_is_refused_with_its_message(build, message) -> None:
    with pytest.raises(ValueError) as info:
        build()
    assert str(info.value).startswith(message)


def test_a_tool_named_handoff_is_refused() -> None:
    def handoff(x: int) -> int:
        """Not allowed."""
        return x

    with pytest.raises(ValueError, match=r"'handoff' is a reserved tool name\. Please use a "
                                         r"different name\."):
        FunctionAgent(tools=[handoff], llm=ScriptedLLM([]))


def test_agents_are_a_dict_by_name_and_root_agent_is_a_name() -> None:
    workflow = AgentWorkflow(agents=[_fn(), _react()], root_agent="retriever")
    assert list(workflow.agents) == ["retriever", "calculator"]
    assert workflow.root_agent == "retriever"


# ---------------------------------------------------------------- the hand-off tool
def _tool_names(workflow: AgentWorkflow, agent: str) -> list[str]:
    return [t.metadata.name for t in run_sync(workflow.get_tools(agent, "q"))]


def test_a_single_agent_gets_no_handoff_tool() -> None:
    assert _tool_names(AgentWorkflow(agents=[_react()]), "calculator") == ["add"]


def test_each_agent_of_a_team_gets_a_handoff_tool_listing_the_others() -> None:
    workflow = AgentWorkflow(agents=[_fn(), _react()], root_agent="retriever")
    tools = run_sync(workflow.get_tools("retriever", "q"))
    handoff = tools[-1]
    assert handoff.metadata.name == "handoff" and handoff.metadata.return_direct
    assert handoff.metadata.description == (
        "Useful for handing off to another agent.\nIf you are currently not equipped to handle "
        "the user's request, or another agent is better suited to handle the request, please "
        "hand off to the appropriate agent.\n\nCurrently available agents:\n"
        "{'calculator': 'The calculator.'}\n")
    assert set(handoff.metadata.get_parameters_dict()["properties"]) == {"to_agent", "reason"}
    assert handoff.metadata.get_parameters_dict()["required"] == ["to_agent", "reason"]


def test_an_agent_that_may_hand_off_to_nobody_gets_no_handoff_tool() -> None:
    workflow = AgentWorkflow(agents=[_fn(can_handoff_to=[]), _react()], root_agent="retriever")
    assert _tool_names(workflow, "retriever") == []


# ---------------------------------------------------------------- hand-offs (W6, W7)
def _team(retriever_script: list, calculator_script: list, **kwargs) -> AgentWorkflow:
    return AgentWorkflow(agents=[_fn(script=retriever_script, **kwargs),
                                 _react(script=calculator_script)], root_agent="retriever")


def test_a_handoff_passes_the_conversation_on_and_the_run_continues() -> None:
    handoff = tool_call("handoff", to_agent="calculator", reason="it adds")
    workflow = _team([handoff], [REACT_ADD, REACT_DONE])
    result, events, _ = run_sync(run_collect(workflow, user_msg="What is 5 + 3?"))
    assert "8" in str(result)
    assert [c.tool_name for c in result.tool_calls] == ["handoff", "add"]
    handed = next(e for e in events if isinstance(e, ToolCallResult))
    assert handed.return_direct and not handed.tool_output.is_error
    calculator_input = next(e for e in events if isinstance(e, AgentInput)
                            and e.current_agent_name == "calculator").input
    assert roles(calculator_input[1:]) == [
        ("user", "What is 5 + 3?"), ("assistant", ""),
        ("tool", "Agent calculator is now handling the request due to the following reason: "
                 "it adds.\nPlease continue with the current request.")]
    assert {e.current_agent_name for e in events if isinstance(e, AgentOutput)} == {
        "retriever", "calculator"}


def test_memory_after_a_handoff_holds_both_agents_work() -> None:
    handoff = tool_call("handoff", to_agent="calculator", reason="it adds")
    workflow = _team([handoff], [REACT_ADD, REACT_DONE])
    memory = ChatMemoryBuffer.from_defaults()
    workflow.run_sync(user_msg="What is 5 + 3?", memory=memory)
    assert [m.role.value for m in memory.get_all()] == ["user", "assistant", "tool", "assistant"]
    assert memory.get_all()[-1].content.endswith("Answer: The sum is 8")


def test_a_handoff_to_an_unknown_agent_is_an_error_result_and_the_run_goes_on() -> None:
    workflow = _team([tool_call("handoff", to_agent="invalid_agent", reason="?"), "done"], [])
    result, refused = run_one_tool_call(workflow, user_msg="go")
    assert refused.tool_output.is_error
    assert refused.tool_output.content == (
        "Agent invalid_agent not found. Please select a valid agent to hand off to. "
        "Valid agents: calculator")
    assert str(result) == "done"


def test_a_handoff_outside_can_handoff_to_is_refused_naming_the_current_agent_first() -> None:
    third = _fn(name="writer")
    workflow = AgentWorkflow(
        agents=[_fn(script=[tool_call("handoff", to_agent="writer", reason="x"), "stayed"],
                    can_handoff_to=["calculator"]), _react(), third], root_agent="retriever")
    _, refused = run_one_tool_call(workflow, user_msg="go")
    assert refused.tool_output.is_error
    assert refused.tool_output.content == (
        "Agent retriever cannot hand off to writer. Please select a valid agent to hand off to.")


def test_a_handoff_to_oneself_is_refused() -> None:
    workflow = _team([tool_call("handoff", to_agent="retriever", reason="me"), "still me"], [])
    _, refused = run_one_tool_call(workflow, user_msg="go")
    assert refused.tool_output.is_error
    assert refused.tool_output.content.startswith("Agent retriever cannot hand off to retriever.")


def test_a_react_agent_handing_off_leaves_its_transcript_in_memory_not_in_the_scratch() -> None:
    react = ReActAgent(name="planner", description="Plans.", tools=[], llm=ScriptedLLM(
        ['Thought: the writer does this.\nAction: handoff\nAction Input: {"to_agent": "writer", '
         '"reason": "writing"}'], function_calling=False))
    writer = _fn(name="writer", script=["written"])
    workflow = AgentWorkflow(agents=[react, writer], root_agent="planner")
    memory = ChatMemoryBuffer.from_defaults()
    result = workflow.run_sync(user_msg="write", memory=memory)
    assert str(result) == "written"
    transcript = memory.get_all()[1].content
    assert transcript.startswith("Thought: the writer does this.\nAction: handoff")
    assert "Observation: Agent writer is now handling the request" in transcript


def test_a_custom_handoff_output_prompt_is_what_the_next_agent_reads() -> None:
    workflow = AgentWorkflow(
        agents=[_fn(script=[tool_call("handoff", to_agent="calculator", reason="sums")]),
                _react(script=[REACT_DONE])],
        root_agent="retriever", handoff_output_prompt="Now {to_agent} ({reason}).")
    _, result = run_one_tool_call(workflow, user_msg="go")
    assert result.tool_output.content == "Now calculator (sums)."


# ---------------------------------------------------------------- building, prompts
def test_from_tools_or_functions_picks_a_function_agent_for_a_function_calling_llm() -> None:
    workflow = AgentWorkflow.from_tools_or_functions([add], llm=ScriptedLLM([]),
                                                     system_prompt="S")
    (agent,) = workflow.agents.values()
    assert isinstance(agent, FunctionAgent) and agent.system_prompt == "S"
    assert isinstance(agent.tools[0], FunctionTool)


def test_from_tools_or_functions_picks_a_react_agent_otherwise() -> None:
    workflow = AgentWorkflow.from_tools_or_functions(
        [add], llm=ScriptedLLM([], function_calling=False), initial_state={"n": 1},
        state_prompt="S {state} M {msg}")
    assert isinstance(workflow.agents["Agent"], ReActAgent)
    assert workflow.initial_state == {"n": 1}
    assert workflow.state_prompt == PromptTemplate("S {state} M {msg}")


def test_get_prompts_lists_the_workflow_prompts_and_each_agents() -> None:
    workflow = AgentWorkflow(agents=[_fn(), _react()], root_agent="retriever")
    assert list(workflow.get_prompts()) == ["handoff_prompt", "handoff_output_prompt",
                                            "state_prompt", "calculator:react_header"]


def test_update_prompts_rebuilds_the_handoff_tool_and_reaches_the_agents() -> None:
    workflow = AgentWorkflow(agents=[_fn(), _react()], root_agent="retriever")
    workflow.update_prompts({"handoff_prompt": "Pick one of {agent_info}",
                             "calculator:react_header": "NEW HEADER"})
    tools = run_sync(workflow.get_tools("retriever", "q"))
    assert tools[-1].metadata.description == "Pick one of {'calculator': 'The calculator.'}"
    assert workflow.agents["calculator"].formatter.system_header == "NEW HEADER"
    with pytest.raises(ValueError, match="Handoff prompt must contain"):
        workflow.update_prompts({"handoff_prompt": "nothing"})
