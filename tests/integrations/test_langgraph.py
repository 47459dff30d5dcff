"""LangGraph under the harness, beyond what every framework shares (tests/integrations/
test_frameworks.py): the built-in type is LangChain's ``create_agent`` (what LangGraph 1.0
recommends), and a user's graph of the deprecated ``create_react_agent`` still runs."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit.harness._agent_types import AGENT_TYPES
from agentkit.integrations.langgraph import langgraph_agent
from agentkit.scenario import register_agent_type, run_scenario
from tests.scenario_text import adding_scenario

pytestmark = pytest.mark.frameworks

ADDS = """\
expect:
  answer: {{contains: "5"}}
  tool_calls:
    calls: [{{name: add, args: {{a: 2, b: 3}}, output: {{equals: "5"}}}}]
agents:
  {agent}:
    script:
      - tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]
      - 2 + 3 = 5
"""


@pytest.fixture(autouse=True)
def _scoped_types() -> Iterator[None]:
    with AGENT_TYPES.scoped():
        yield


def _write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_built_in_type_uses_no_api_langgraph_deprecated(tmp_path):
    from langgraph.warnings import LangGraphDeprecatedSinceV10

    path = _write(tmp_path, adding_scenario("adds", ADDS.format(agent="langgraph")))

    with warnings.catch_warnings():
        warnings.simplefilter("error", LangGraphDeprecatedSinceV10)
        result = run_scenario(path, "langgraph")

    assert result.passed, result.problems
    assert [call.name for turn in result.trace.turns for step in turn.steps
            for call in step.tool_calls] == ["add"]


def test_a_users_create_react_agent_graph_still_runs(tmp_path):
    from langchain_core.tools import tool
    from langgraph.warnings import LangGraphDeprecatedSinceV10

    from mocks.tools import add

    @langgraph_agent
    def old_graph(context):
        from langgraph.prebuilt import create_react_agent
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
            return create_react_agent(context.model, [tool(add)], name="adder")

    register_agent_type("old_graph", old_graph)
    path = _write(tmp_path, adding_scenario("adds", ADDS.format(agent="old_graph")))

    result = run_scenario(path, "old_graph")

    assert result.passed, result.problems
    (turn,) = result.trace.turns
    assert [step.details["agent"] for step in turn.steps] == ["adder", "adder"]
    assert [call.output for step in turn.steps for call in step.tool_calls] == ["5"]
