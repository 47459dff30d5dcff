"""SchemaLLM: a model that calls every tool once with arguments made up from its schema, then
answers with the results -- through the tool-calling API or in ReAct text, as it is shown the
tools."""

from __future__ import annotations

import json

import pytest

from agentkit.agent import FunctionCallingAgent, ReActAgent
from agentkit.agent.react import ReActChatFormatter, ReActOutputParser
from agentkit.agent.workflow import AgentWorkflow, FunctionAgent
from agentkit.agent.workflow import ReActAgent as WorkflowReActAgent
from agentkit.core.sim import simulation
from agentkit.llms import ListedTools
from agentkit.llms.mock import SchemaLLM
from agentkit.llms.types import ChatMessage, MessageRole
from agentkit.tools import FunctionTool

calls: list[tuple[str, dict]] = []


def greet(name: str, times: int = 1) -> str:
    """Greet someone."""
    calls.append(("greet", {"name": name, "times": times}))
    return f"hello {name} x{times}"


def is_even(number: int) -> bool:
    """Whether a number is even."""
    calls.append(("is_even", {"number": number}))
    return number % 2 == 0


TOOLS = [FunctionTool.from_defaults(greet), FunctionTool.from_defaults(is_even)]
ANSWER = {"greet": "hello name x1", "is_even": "False"}


@pytest.fixture(autouse=True)
def _fresh_calls():
    calls.clear()


def test_under_a_function_calling_agent_it_calls_every_tool_in_one_reply_then_answers():
    llm = SchemaLLM()
    response = FunctionCallingAgent.from_tools(TOOLS, llm=llm).chat("smoke")

    assert json.loads(str(response)) == ANSWER
    assert calls == [("greet", {"name": "name", "times": 1}), ("is_even", {"number": 1})]
    assert len(llm.requests) == 2
    first = llm.requests[0]
    assert first.tools is not None  # the tools came through the tool-calling API


def test_under_a_react_agent_it_writes_one_action_per_tool_then_the_answer():
    llm = SchemaLLM()
    response = ReActAgent.from_tools(TOOLS, llm=llm).chat("smoke")

    assert json.loads(str(response)) == ANSWER
    assert calls == [("greet", {"name": "name", "times": 1}), ("is_even", {"number": 1})]
    assert all(request.tools is None for request in llm.requests)  # tools only in the prompt


def test_its_react_replies_parse_with_the_react_parser():
    llm = SchemaLLM()
    prompt = ReActChatFormatter().format(TOOLS, [ChatMessage(role=MessageRole.USER, content="go")])

    reply = llm.chat(prompt, listed_tools=ListedTools.of("react", TOOLS))
    step = ReActOutputParser().parse(reply.message.content)

    assert (step.action, step.action_input) == ("greet", {"name": "name", "times": 1})


def test_under_a_workflow_function_agent_it_calls_every_tool_then_answers():
    workflow = AgentWorkflow(agents=[FunctionAgent(tools=TOOLS, llm=SchemaLLM())])

    output = workflow.run_sync(user_msg="smoke")

    assert json.loads(str(output)) == ANSWER
    assert [name for name, _ in calls] == ["greet", "is_even"]


def test_under_a_workflow_react_agent_it_calls_every_tool_then_answers():
    workflow = AgentWorkflow(agents=[WorkflowReActAgent(tools=TOOLS, llm=SchemaLLM())])

    assert json.loads(str(workflow.run_sync(user_msg="smoke"))) == ANSWER


def test_a_tool_that_fails_is_reported_in_the_answer():
    def broken(city: str) -> str:
        """Always fails."""
        raise RuntimeError(f"no data for {city}")

    response = FunctionCallingAgent.from_tools([FunctionTool.from_defaults(broken)],
                                               llm=SchemaLLM()).chat("smoke")

    assert json.loads(str(response)) == {"broken": "Encountered error: no data for city"}


def test_it_calls_only_the_tools_it_is_told_to():
    response = FunctionCallingAgent.from_tools(TOOLS, llm=SchemaLLM(tools=["is_even"])).chat("go")

    assert json.loads(str(response)) == {"is_even": "False"}
    assert calls == [("is_even", {"number": 1})]


def test_a_tool_it_is_told_to_call_but_not_offered_is_an_error():
    agent = FunctionCallingAgent.from_tools(TOOLS, llm=SchemaLLM(tools=["nope"]))

    with pytest.raises(ValueError, match=r"asked to call nope, which the agent does not offer "
                                         r"\(offered: greet, is_even\)"):
        agent.chat("go")


def test_without_tools_it_answers_an_empty_object():
    llm = SchemaLLM()

    assert llm.chat([ChatMessage(role=MessageRole.USER, content="hi")]).message.content == "{}"


def test_every_turn_calls_every_tool_again():
    agent = FunctionCallingAgent.from_tools(TOOLS, llm=SchemaLLM())
    agent.chat("one")
    agent.chat("two")

    assert [name for name, _ in calls] == ["greet", "is_even", "greet", "is_even"]


def test_the_same_run_gives_the_same_requests_and_answers():
    def run() -> list[str]:
        with simulation(seed=0):
            llm = SchemaLLM()
            FunctionCallingAgent.from_tools(TOOLS, llm=llm).chat("smoke")
            return [json.dumps([m.model_dump(mode="json") for m in r.messages]) for r in
                    llm.requests]

    assert run() == run()
