"""The four framework integrations against the real frameworks, at the versions the extras pin
(the frameworks lane: `pip install -e ".[frameworks]"`, then `pytest -m frameworks`, run by
.ci/run after the default suite). Each built-in agent type runs scripted scenarios, records a
cassette through the bridge and replays it offline; a tool that fails, a tool the agent does
not have and a factory that returns something else are each reported as such."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit.core.errors import BadInputError
from agentkit.harness._agent_types import AGENT_TYPES
from agentkit.harness._record import cassette_miss, record_scenario
from agentkit.integrations._framework import FactoryResultError
from agentkit.integrations.langgraph import langgraph_agent
from agentkit.integrations.llama_index import llama_index_agent
from agentkit.integrations.openai_agents import openai_agents_agent
from agentkit.integrations.pydantic_ai import pydantic_ai_agent
from agentkit.llms.mock import tool_call
from agentkit.scenario import register_agent_type, run_scenario
from mocks.openai_server import FakeOpenAIServer
from tests.scenario_text import adding_scenario

pytestmark = pytest.mark.frameworks

FRAMEWORK_TYPES = ["li_function", "pydantic_ai", "openai_agents", "langgraph"]
DECORATORS = {"li_function": llama_index_agent, "pydantic_ai": pydantic_ai_agent,
              "openai_agents": openai_agents_agent, "langgraph": langgraph_agent}


@pytest.fixture(autouse=True)
def _scoped_types() -> Iterator[None]:
    with AGENT_TYPES.scoped():
        yield


def _write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _calls(result: Any) -> list[dict[str, Any]]:
    return [call for turn in result.trace.to_dict()["turns"] for step in turn["steps"]
            for call in step["tool_calls"]]


@pytest.mark.parametrize("agent", FRAMEWORK_TYPES)
def test_a_scripted_run_passes_its_tool_call_expectations(tmp_path, agent):
    path = _write(tmp_path, adding_scenario("adds", f"""\
expect:
  answer: {{contains: "5"}}
  tool_calls:
    calls: [{{name: add, args: {{a: 2, b: 3}}, output: {{equals: "5"}}}}]
agents:
  {agent}:
    script:
      - tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]
      - 2 + 3 = 5
"""))

    result = run_scenario(path, agent)

    assert result.passed, result.problems
    (turn,) = result.trace.turns
    assert len(turn.steps) == 2


@pytest.mark.parametrize("agent", FRAMEWORK_TYPES)
def test_a_tool_that_raises_fails_the_run_naming_the_call(tmp_path, agent):
    path = _write(tmp_path, adding_scenario("divides", f"""\
agents:
  {agent}:
    script:
      - tool_calls: [{{name: divide, args: {{a: 10, b: 0}}}}]
      - It is undefined.
""", tool="mocks.tools:divide"))

    result = run_scenario(path, agent)

    assert not result.passed
    (call,) = _calls(result)
    assert call["is_error"] and "division by zero" in call["output"]
    assert any("divide" in f and "failed unexpectedly" in f for f in result.problems)


@pytest.mark.parametrize("agent", FRAMEWORK_TYPES)
def test_a_scheduled_failure_runs_through_agentkits_tool_runner(tmp_path, agent):
    path = _write(tmp_path, adding_scenario("flaky", f"""\
expect:
  tool_calls:
    calls:
      - {{name: add, args: {{a: 2, b: 3}}, error: true}}
      - {{name: add, args: {{a: 2, b: 3}}}}
agents:
  {agent}:
    script:
      - tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]
      - tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]
      - 2 + 3 = 5
""", tool="mocks.tools:add\n    latency: 0.5\n    failures: [1]"))

    result = run_scenario(path, agent)

    assert result.passed, result.problems
    first, second = (call for step in result.trace.turns[0].steps for call in step.tool_calls)
    assert first.is_error and first.scheduled and not second.is_error
    assert first.latency == second.latency == 0.5  # the virtual clock's, not the wall's


@pytest.mark.parametrize("agent", ["li_function", "pydantic_ai", "langgraph"])
def test_a_call_of_a_tool_the_agent_does_not_have_fails_the_run_saying_so(tmp_path, agent):
    path = _write(tmp_path, adding_scenario("teleports", f"""\
agents:
  {agent}:
    script:
      - tool_calls: [{{name: teleport, args: {{to: Mars}}}}]
      - I cannot.
"""))

    result = run_scenario(path, agent)

    assert not result.passed
    (call,) = _calls(result)
    assert call["is_error"]
    assert call["output"].startswith("the model asked for tool 'teleport', which the agent did "
                                     "not offer")


def test_the_agents_sdk_stops_the_run_on_a_tool_it_does_not_have(tmp_path):
    path = _write(tmp_path, adding_scenario("teleports", """\
agents:
  openai_agents:
    script:
      - tool_calls: [{name: teleport, args: {to: Mars}}]
      - I cannot.
"""))

    result = run_scenario(path, "openai_agents")

    assert not result.passed
    assert "Tool teleport not found" in (result.trace.turns[0].error or "")


@pytest.mark.parametrize("agent", FRAMEWORK_TYPES)
def test_a_factory_returning_something_else_is_bad_input_naming_it(tmp_path, agent):
    def not_an_agent(context):
        return "an agent, honestly"

    register_agent_type("wrong", DECORATORS[agent](not_an_agent))
    path = _write(tmp_path, adding_scenario("wrong", """\
agents:
  wrong:
    script: [hi]
"""))

    with pytest.raises(BadInputError) as caught:
        run_scenario(path, "wrong")

    cause = caught.value if isinstance(caught.value, FactoryResultError) else caught.value.__cause__
    message = str(caught.value)
    assert "not_an_agent" in message and "returned str ('an agent, honestly')" in message, cause


@pytest.mark.parametrize("agent", FRAMEWORK_TYPES)
def test_a_streamed_turn_streams_from_the_framework_over_the_wire(tmp_path, agent):
    path = _write(tmp_path, f"""\
format: 1
name: streams
tools:
  - ref: mocks.tools:capital
turns:
  - user: What is the capital of Kenya?
    stream: true
expect:
  answer: {{equals: The capital of Kenya is Nairobi.}}
agents:
  {agent}:
    script:
      - tool_calls: [{{name: capital, args: {{country: Kenya}}}}]
      - text: The capital of Kenya is Nairobi.
        chunks: ["The capital ", "of Kenya ", "is Nairobi."]
""")

    result = run_scenario(path, agent)

    assert result.passed, result.problems
    (turn,) = result.trace.to_dict()["turns"]
    assert [c["kind"] for s in turn["steps"] for c in s["llm_calls"]] == ["stream_chat"] * 2
    assert turn["response"] == "The capital of Kenya is Nairobi."


@pytest.mark.parametrize("agent", FRAMEWORK_TYPES)
def test_history_reaches_the_frameworks_memory(tmp_path, agent):
    path = _write(tmp_path, adding_scenario("remembers", f"""\
history:
  - {{role: user, content: My name is Ada.}}
  - {{role: assistant, content: Hello Ada.}}
agents:
  {agent}:
    script: ["5"]
"""))

    result = run_scenario(path, agent)

    assert result.passed, result.problems
    (turn,) = result.trace.to_dict()["turns"]
    (call,) = turn["steps"][0]["llm_calls"]
    said = [(m["role"], m["content"]) for m in call["messages"] if m["role"] != "system"]
    assert said == [("user", "My name is Ada."), ("assistant", "Hello Ada."),
                    ("user", "What is 2 + 3?")]


@pytest.mark.parametrize("agent", FRAMEWORK_TYPES)
def test_a_recording_through_the_bridge_replays_offline(tmp_path, agent):
    path = _write(tmp_path, adding_scenario("recorded", f"""\
expect:
  answer: {{contains: "5"}}
  tool_calls:
    calls: [{{name: add, args: {{a: 2, b: 3}}}}]
agents:
  {agent}:
    recording: cassettes/recorded.{agent}.yaml
"""))
    live = FakeOpenAIServer([tool_call("add", a=2, b=3), "2 + 3 = 5"]).llm("gpt-4o-mini")

    recording = record_scenario(path, agent, live, "once")

    assert recording.ok and recording.written, recording.problems
    replay = run_scenario(path, agent)
    assert replay.passed and cassette_miss(replay) is None, replay.problems
    assert json.dumps(replay.trace.to_dict()["turns"][0]["steps"][0]["tool_calls"][0]["args"]) \
        == '{"a": 2, "b": 3}'


def test_agentkits_function_agent_and_llama_indexs_send_the_same_requests_but_tool_schemas(
        tmp_path):
    # one trajectory under both; each difference of their model requests is listed with why
    bundled = Path(__file__).resolve().parents[2] / "examples/frameworks/scenarios/trajectory.yaml"
    # the example's own tools are the test suite's mocks of the same names, run from here
    text = bundled.read_text().split("\nagents:\n")[0].replace("city_tools:", "mocks.tools:")
    path = _write(tmp_path, text + "\nagents:\n  function_agent: {}\n  li_function: {}\n")
    ours, theirs = (run_scenario(path, agent).trace.to_dict()
                    for agent in ("function_agent", "li_function"))

    def requests(trace: dict[str, Any]) -> list[Any]:
        return [(c["messages"], c["tools"]) for turn in trace["turns"]
                for step in turn["steps"] for c in step["llm_calls"]]

    assert requests(ours) == requests(theirs)  # the same messages, the same tools, 4 calls
    schemas = {t["name"]: t["parameters"] for t in ours["tools"]}
    # llama-index-llms-openai closes every tool's schema (additionalProperties: false, what
    # OpenAI's strict mode requires); agentkit's FunctionAgent sends get_parameters_dict() as
    # it is. Nothing else differs but the prompt tokens those schemas take.
    assert {t["name"]: t["parameters"] for t in theirs["tools"]} == {
        name: {**schema, "additionalProperties": False} for name, schema in schemas.items()}

    def rest(trace: dict[str, Any]) -> dict[str, Any]:
        totals = {k: v for k, v in trace["totals"].items() if k != "prompt_tokens"}
        return {**{k: v for k, v in trace.items() if k not in ("agent", "tools", "turns")},
                "totals": totals}

    assert rest(ours) == rest(theirs)
    assert ours["totals"]["prompt_tokens"] < theirs["totals"]["prompt_tokens"]


def test_pydantic_ais_allow_model_requests_false_fails_the_run_saying_what_to_do(
        tmp_path, monkeypatch):
    # pydantic-ai's docs recommend it in tests; agentkit's in-process model is refused too
    import pydantic_ai.models
    monkeypatch.setattr(pydantic_ai.models, "ALLOW_MODEL_REQUESTS", False)
    path = _write(tmp_path, adding_scenario("refused", """\
agents:
  pydantic_ai:
    script: ["5"]
"""))

    result = run_scenario(path, "pydantic_ai")

    assert not result.passed
    error = result.trace.turns[0].error or ""
    assert "ALLOW_MODEL_REQUESTS is False in this session" in error, error
    assert "override_allow_model_requests(True)" in error


@pytest.mark.parametrize(("api", "wire"), [("responses", "openai_responses"),
                                           ("chat_completions", None)])
def test_the_agents_sdk_speaks_the_responses_api_by_default_and_chat_completions_on_request(
        tmp_path, api, wire):
    from agents import Agent

    @openai_agents_agent(api=api)
    def support(context: Any) -> Any:
        return Agent(name="Assistant", instructions="Add numbers.", tools=context.tools)

    register_agent_type("sdk_agent", support)
    path = _write(tmp_path, adding_scenario("wired", """\
expect:
  answer: {contains: "5"}
  tool_calls:
    calls: [{name: add, args: {a: 2, b: 3}}]
agents:
  sdk_agent:
    recording: cassettes/wired.sdk_agent.yaml
"""))
    live = FakeOpenAIServer([tool_call("add", a=2, b=3), "2 + 3 = 5"]).llm("gpt-4o-mini")

    recording = record_scenario(path, "sdk_agent", live, "once")

    assert recording.ok and recording.written, recording.problems
    cassette = yaml.safe_load((tmp_path / "cassettes" / "wired.sdk_agent.yaml").read_text())
    assert [e.get("wire") for e in cassette["exchanges"]] == [wire, wire]
    first = cassette["exchanges"][0]["request"]["messages"][0]
    assert (first["role"], first["content"]) == ("system", "Add numbers.")
    replay = run_scenario(path, "sdk_agent")
    assert replay.passed and cassette_miss(replay) is None, replay.problems
