"""The frameworks' own tool objects as scenario `ref:`s: LangChain's `@tool`, pydantic-ai's
`Tool` and LlamaIndex's `FunctionTool` are used by the function each keeps, under the tool's
name; an Agents SDK `FunctionTool`, which keeps none, is called through the SDK, under its name
and JSON schema, its failures the call's errors; a tool the scenario cannot run (a hosted one)
is an error saying what to ref instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit.harness import build_tool
from agentkit.scenario import run_scenario
from agentkit.scenario._model import ToolSpec
from tests.scenario_text import adding_scenario

OBJECTS = "tests.integrations.tool_objects"
"""The frameworks' tool objects (imported by the scenarios' refs: the default run, without the
frameworks, collects this module too)."""

pytestmark = pytest.mark.frameworks


@pytest.mark.parametrize("ref", ["langchain_add", "langchain_async_add", "pydantic_ai_add",
                                 "llama_index_add", "sdk_add"])
def test_a_frameworks_tool_object_is_a_scenario_tool_under_its_name(tmp_path, ref):
    path = tmp_path / "s.yaml"
    path.write_text(adding_scenario("adds", """\
expect:
  answer: {contains: "5"}
  tool_calls:
    calls: [{name: add, args: {a: 2, b: 3}, output: {equals: "5"}}]
agents:
  function_agent:
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
      - 2 + 3 = 5
""", tool=f"{OBJECTS}:{ref}"))

    result = run_scenario(path, "function_agent")

    assert result.passed, result.problems


def test_an_agents_sdk_function_tool_offers_its_own_name_description_and_schema():
    tool = build_tool(ToolSpec(ref=f"{OBJECTS}:sdk_add"), Path(__file__).parent)

    assert tool.metadata.name == "add"
    assert tool.metadata.description == "Add two integers."
    assert tool.metadata.get_parameters_dict() == {
        "type": "object", "title": "add_args", "additionalProperties": False,
        "required": ["a", "b"],
        "properties": {"a": {"title": "A", "type": "integer"},
                       "b": {"title": "B", "type": "integer"}}}
    assert tool.call(a=2, b=3).content == "5"


@pytest.mark.parametrize("ref", ["sdk_divide", "sdk_divide_raising"])
def test_an_agents_sdk_tools_failure_is_the_calls_error(ref):
    # the exception itself, not the SDK's default failure text (which since 0.24 does not
    # carry the exception's message)
    tool = build_tool(ToolSpec(ref=f"{OBJECTS}:{ref}"), Path(__file__).parent)

    assert tool.call(a=6, b=3).content == "2.0"
    with pytest.raises(ZeroDivisionError, match=r"^division by zero$"):
        tool.call(a=1, b=0)


def test_an_agents_sdk_tools_own_failure_function_still_answers():
    tool = build_tool(ToolSpec(ref=f"{OBJECTS}:sdk_divide_answering"), Path(__file__).parent)

    assert tool.call(a=1, b=0).content == "cannot divide: division by zero"


def test_an_agents_sdk_tool_the_scenario_cannot_run_says_what_to_ref_instead():
    with pytest.raises(TypeError) as caught:
        build_tool(ToolSpec(ref=f"{OBJECTS}:sdk_web_search"), Path(__file__).parent)

    assert str(caught.value) == (
        f"`{OBJECTS}:sdk_web_search` is a WebSearchTool, not a function, a tool or a tool "
        "class; of the Agents SDK's tools a scenario runs its FunctionTools (`@function_tool`); "
        "a hosted tool (web search, file search, code interpreter...) runs at the model "
        "provider: ref a function of the same name that answers as the scenario needs")
