"""The frameworks' own tool objects as scenario `ref:`s: LangChain's `@tool`, pydantic-ai's
`Tool` and LlamaIndex's `FunctionTool` are used by the function each keeps, under the tool's
name; an Agents SDK `FunctionTool`, which keeps none, is an error saying what to ref instead."""

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
                                 "llama_index_add"])
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


def test_an_agents_sdk_function_tool_says_what_to_ref_instead():
    with pytest.raises(TypeError) as caught:
        build_tool(ToolSpec(ref=f"{OBJECTS}:sdk_add"), Path(__file__).parent)

    assert str(caught.value) == (
        f"`{OBJECTS}:sdk_add` is a FunctionTool, not a function, a tool or a tool class; an "
        "Agents SDK FunctionTool keeps no reference to the function it was made from: ref that "
        "function (define it undecorated and give the agent `function_tool(<function>)`), "
        "named as the agent's tool")
