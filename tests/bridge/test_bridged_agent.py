"""An agent tested through the bridge (``bridged``): registered like any agent type, its trace
built from the wire -- steps, tool calls with the outputs the next request carries, answer,
memory -- so expectations, trajectories, snapshots and reports work as for agentkit's own."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkit.bridge import BridgeContext, bridged
from agentkit.core.errors import AgentFailedError
from agentkit.core.sim import run
from agentkit.harness._agent_types import AGENT_TYPES
from agentkit.harness._record import cassette_miss, record_scenario
from agentkit.llms.mock import tool_call
from agentkit.llms.tool_calling import call_tool
from agentkit.report import run_comparison
from agentkit.scenario import register_agent_type, run_scenario
from agentkit.scenario.judge import SnapshotFiles
from agentkit.trace._read import expand_trace
from examples.tool_loop_agent import SCHEMAS, ToolLoopAgent
from mocks.openai_server import FakeOpenAIServer
from tests.scenario_text import adding_scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _scoped_types() -> Iterator[None]:
    with AGENT_TYPES.scoped():
        yield


def _write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _sdk_agent(context: BridgeContext) -> ToolLoopAgent:
    return ToolLoopAgent(context.client, context.model, **context.params)


def _steps(result: Any, turn: int = 0) -> list[dict[str, Any]]:
    return result.trace.to_dict()["turns"][turn]["steps"]


ADDING = adding_scenario("adding", """\
expect:
  answer: {contains: "5"}
  tool_calls:
    match: strict
    calls: [{name: add, args: {a: 2, b: 3}}]
agents:
  wire_agent:
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
      - 2 + 3 = 5
""")


# ----------------------------------------------------------------- the trace from the wire
@pytest.mark.slow  # a whole project through the bridge
def test_a_bridged_agent_registered_in_a_few_lines_runs_a_scenario(tmp_path):
    register_agent_type("wire_agent", bridged(_sdk_agent))

    result = run_scenario(_write(tmp_path, ADDING), "wire_agent")

    assert result.passed, result.verdict.lines()
    assert result.trace.turns[0].response == "2 + 3 = 5"


@pytest.mark.slow  # an SDK client through the bridge
def test_each_model_call_is_a_step_holding_the_tool_calls_its_reply_asked_for(tmp_path):
    register_agent_type("wire_agent", bridged(_sdk_agent))

    steps = _steps(run_scenario(_write(tmp_path, ADDING), "wire_agent"))

    assert [(s["index"], s["input"], s["is_last"], s["output"]) for s in steps] == [
        (0, "What is 2 + 3?", False, ""), (1, None, True, "2 + 3 = 5")]
    assert [len(s["llm_calls"]) for s in steps] == [1, 1]
    assert steps[0]["tool_calls"] == [{"id": "call_1", "name": "add", "args": {"a": 2, "b": 3},
                                       "output": "5", "is_error": False, "latency": 0.0}]
    assert steps[1]["tool_calls"] == []


class _Reversed(ToolLoopAgent):
    """Sends the results of parallel calls back in the reverse order."""

    def chat(self, message: str) -> str:
        self.messages.append({"role": "user", "content": message})
        reply = self.client.chat.completions.create(model=self.model, messages=self.messages,
                                                    tools=self.schemas).choices[0].message
        calls = reply.tool_calls or []
        self.messages.append({"role": "assistant", "content": "",
                              "tool_calls": [c.model_dump() for c in calls]})
        for call in reversed(calls):
            self.messages.append({"role": "tool", "tool_call_id": call.id,
                                  "content": self._run(call.function.name,
                                                       call.function.arguments)})
        return self.client.chat.completions.create(
            model=self.model, messages=self.messages).choices[0].message.content or ""


def test_outputs_are_matched_to_their_calls_by_tool_call_id(tmp_path):
    register_agent_type("wire_agent", bridged(
        lambda context: _Reversed(context.client, context.model)))
    path = _write(tmp_path, adding_scenario("parallel", """\
agents:
  wire_agent:
    script:
      - tool_calls: [{name: add, args: {a: 1, b: 2}}, {name: add, args: {a: 30, b: 40}}]
      - done
"""))

    calls = _steps(run_scenario(path, "wire_agent"))[0]["tool_calls"]

    assert [(c["args"], c["output"]) for c in calls] == [({"a": 1, "b": 2}, "3"),
                                                         ({"a": 30, "b": 40}, "70")]


class _AsksOnce:
    """Asks the model once and answers with the tool result itself (never sends it back)."""

    def __init__(self, context: BridgeContext) -> None:
        self.context = context

    def chat(self, message: str) -> str:
        self.context.client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": message}])
        return "answered without the model"


def test_a_call_whose_output_never_reaches_the_model_is_filed_when_the_turn_ends(tmp_path):
    register_agent_type("wire_agent", bridged(_AsksOnce))
    path = _write(tmp_path, adding_scenario("once", """\
agents:
  wire_agent:
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
"""))

    result = run_scenario(path, "wire_agent")

    (step,) = _steps(result)
    assert [(c["name"], c["output"]) for c in step["tool_calls"]] == [("add", "")]
    assert result.trace.turns[0].response == ""  # the model's last reply had no text


def test_the_answer_is_the_last_reply_and_memory_the_last_request_with_it(tmp_path):
    register_agent_type("wire_agent", bridged(_sdk_agent))

    trace = run_scenario(_write(tmp_path, ADDING), "wire_agent").trace.to_dict()
    turn = expand_trace(trace)["turns"][0]

    assert turn["response"] == "2 + 3 = 5"
    assert [(m["role"], m["content"]) for m in turn["memory"]] == [
        ("user", "What is 2 + 3?"), ("assistant", ""), ("tool", "5"), ("assistant", "2 + 3 = 5")]
    assert turn["memory"][2]["tool_call_id"] == turn["memory"][1]["tool_calls"][0]["id"]


class _NoModel:
    def __init__(self, context: BridgeContext) -> None:
        pass

    def chat(self, message: str) -> str:
        return "cached answer"


def test_a_turn_without_model_calls_answers_with_what_chat_returned(tmp_path):
    register_agent_type("wire_agent", bridged(_NoModel))
    path = _write(tmp_path, adding_scenario("cached", "agents:\n  wire_agent:\n    script: []\n"))

    result = run_scenario(path, "wire_agent")

    assert (result.trace.turns[0].response, result.trace.turns[0].steps) == ("cached answer", [])


class _ScenarioTools(ToolLoopAgent):
    """Runs the scenario's tools (with their simulated latency) instead of its own."""

    def __init__(self, context: BridgeContext) -> None:
        super().__init__(context.client, context.model)
        self.scenario_tools = {t.metadata.name: t for t in context.tools}

    def _run(self, name: str, arguments: str) -> str:
        return str(self.scenario_tools[name].call(**json.loads(arguments)))


def test_the_virtual_time_between_a_reply_and_the_request_with_its_output_is_the_calls_latency(
        tmp_path):
    register_agent_type("wire_agent", bridged(_ScenarioTools))
    path = _write(tmp_path, ADDING.replace("  - ref: mocks.tools:add",
                                           "  - {ref: mocks.tools:add, latency: 1.5}"))

    result = run_scenario(path, "wire_agent")

    (call,) = result.trace.tool_calls
    assert (call.latency, call.started) == (1.5, 0.0)
    assert result.trace.totals().wall_time == 1.5


class _ReportsItsTools(ToolLoopAgent):
    """An integration: it runs its tool calls through agentkit's tool calling inside
    ``context.step_of``, so the trace gets their errors and latency from their own events."""

    def __init__(self, context: BridgeContext) -> None:
        super().__init__(context.client, context.model)
        self.context = context
        self.scenario_tools = {t.metadata.name: t for t in context.tools}

    def chat(self, message: str) -> str:
        self.messages.append({"role": "user", "content": message})
        while True:
            reply = self.client.chat.completions.create(
                model=self.model, messages=self.messages, tools=self.schemas).choices[0].message
            if not reply.tool_calls:
                return reply.content or ""
            self.messages.append({"role": "assistant", "content": "", "tool_calls": [
                c.model_dump() for c in reply.tool_calls]})
            for call in reply.tool_calls:
                with self.context.step_of(call.id):
                    output = call_tool(self.scenario_tools[call.function.name],
                                       json.loads(call.function.arguments), tool_id=call.id)
                self.messages.append({"role": "tool", "tool_call_id": call.id,
                                      "content": output.content})


def test_tool_calls_an_integration_reports_carry_their_errors_and_latency(tmp_path):
    register_agent_type("wire_agent", bridged(_ReportsItsTools))
    path = _write(tmp_path, """\
format: 1
name: flaky
tools: [{ref: mocks.tools:add, latency: 0.5, failures: [1]}]
turns:
  - user: What is 2 + 3?
expect:
  tool_calls:
    match: strict
    args: ignore
    calls: [{name: add, error: true}, {name: add}]
agents:
  wire_agent:
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
      - 2 + 3 = 5
""")

    result = run_scenario(path, "wire_agent")

    assert result.passed, result.verdict.lines()
    steps = _steps(result)
    assert [[(c["is_error"], c["latency"]) for c in s["tool_calls"]] for s in steps] == [
        [(True, 0.5)], [(False, 0.5)], []]


def test_turns_continue_one_conversation_with_ids_numbered_across_them(tmp_path):
    register_agent_type("wire_agent", bridged(_sdk_agent))
    path = _write(tmp_path, """\
format: 1
name: two_turns
tools: [{ref: mocks.tools:add}]
turns:
  - user: What is 2 + 3?
  - user: And 5 + 5?
agents:
  wire_agent:
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
      - "5"
      - tool_calls: [{name: add, args: {a: 5, b: 5}}]
      - "10"
""")

    trace = run_scenario(path, "wire_agent").trace

    assert [t.response for t in trace.turns] == ["5", "10"]
    assert [[c.id for c in t.tool_calls] for t in trace.turns] == [["call_1"], ["call_2"]]
    assert [t.steps[0].input for t in trace.turns] == ["What is 2 + 3?", "And 5 + 5?"]
    assert len(trace.turns[1].memory) == 8  # the whole conversation so far


class _AsyncAgent:
    """The same loop on the async client, run on agentkit's virtual-time loop."""

    def __init__(self, context: BridgeContext) -> None:
        self.client = context.async_client

    def chat(self, message: str) -> str:
        return run(self._chat(message))

    async def _chat(self, message: str) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": message}]
        while True:
            reply = (await self.client.chat.completions.create(
                model="m", messages=messages, tools=SCHEMAS)).choices[0].message
            if not reply.tool_calls:
                return reply.content or ""
            messages.append({"role": "assistant", "content": "",
                             "tool_calls": [c.model_dump() for c in reply.tool_calls]})
            messages += [{"role": "tool", "tool_call_id": c.id, "content": "5"}
                         for c in reply.tool_calls]


class _ThreadedAgent(ToolLoopAgent):
    """Makes each model call from a thread of its own (as some SDK wrappers do)."""

    def chat(self, message: str) -> str:
        answer: list[str] = []
        worker = threading.Thread(target=lambda: answer.append(super(_ThreadedAgent, self)
                                                               .chat(message)))
        worker.start()
        worker.join()
        return answer[0]


@pytest.mark.parametrize("agent", [_AsyncAgent, lambda c: _ThreadedAgent(c.client, c.model)],
                         ids=["async client", "another thread"])
def test_the_trace_is_built_whichever_client_or_thread_the_agent_calls_from(tmp_path, agent):
    register_agent_type("wire_agent", bridged(agent))

    result = run_scenario(_write(tmp_path, ADDING), "wire_agent")

    assert result.passed, result.verdict.lines()
    assert [len(s["llm_calls"]) for s in _steps(result)] == [1, 1]
    assert [(c.name, c.output) for c in result.trace.tool_calls] == [("add", "5")]


# ----------------------------------------------------------------- failures
def test_a_request_the_script_cannot_answer_fails_the_run_as_it_fails_agentkits_own(tmp_path):
    register_agent_type("wire_agent", bridged(_sdk_agent))
    short = "    script:\n      - tool_calls: [{name: add, args: {a: 2, b: 3}}]\n"
    path = _write(tmp_path, adding_scenario("short", f"agents:\n  wire_agent:\n{short}"
                                                     f"  function_calling:\n{short}"))

    bridged_run = run_scenario(path, "wire_agent")
    own_run = run_scenario(path, "function_calling")

    assert bridged_run.verdict.kind == own_run.verdict.kind == "recording"
    assert bridged_run.verdict.stopped_by.startswith("ScriptExhaustedError: ScriptedLLM")
    assert bridged_run.verdict.stopped_by.replace("wire_agent", "function_calling") == \
        own_run.verdict.stopped_by


def test_the_agents_own_exception_is_the_turns_error_naming_where_it_raised(tmp_path):
    class Broken:
        def __init__(self, context: BridgeContext) -> None:
            pass

        def chat(self, message: str) -> str:
            raise RuntimeError("my agent broke")

    register_agent_type("wire_agent", bridged(Broken))
    path = _write(tmp_path, adding_scenario("broken", "agents:\n  wire_agent:\n    script: []\n"))
    line = Broken.chat.__code__.co_firstlineno + 1

    verdict = run_scenario(path, "wire_agent").verdict

    assert (verdict.stopped_by, verdict.kind) == (
        f"RuntimeError: my agent broke (raised at {Path(__file__).relative_to(Path.cwd())}:"
        f"{line} in chat)", "agent")
    assert verdict.tracebacks[0].endswith("RuntimeError: my agent broke")


def test_a_factory_returning_no_chat_agent_is_an_error_naming_the_factory(tmp_path):
    def build_nothing(context: BridgeContext) -> object:
        return object()

    register_agent_type("wire_agent", bridged(build_nothing))  # type: ignore[arg-type]
    path = _write(tmp_path, adding_scenario("none", "agents:\n  wire_agent:\n    script: []\n"))

    with pytest.raises(AgentFailedError, match=r"build_nothing raised TypeError: .*build_nothing "
                                               r"returned object, which has no chat\(message\)"):
        run_scenario(path, "wire_agent")


# ----------------------------------------------------------------- recording, reports
def test_a_bridged_agent_records_through_the_bridge_and_replays_offline(tmp_path):
    register_agent_type("wire_agent", bridged(_sdk_agent))
    path = _write(tmp_path, adding_scenario("recorded", """\
expect:
  answer: {contains: "5"}
agents:
  wire_agent:
    recording: cassettes/recorded.wire_agent.yaml
"""))
    live = FakeOpenAIServer([tool_call("add", a=2, b=3), "2 + 3 = 5"]).llm("gpt-4o-mini")

    recording = record_scenario(path, "wire_agent", live, "once")

    assert recording.ok and recording.written, recording.problems
    exchanges = (tmp_path / "cassettes" / "recorded.wire_agent.yaml").read_text()
    assert "2 + 3 = 5" in exchanges
    replay = run_scenario(path, "wire_agent")
    assert replay.passed and cassette_miss(replay) is None


def test_a_cassette_miss_through_the_bridge_is_reported_as_a_cassette_miss(tmp_path):
    register_agent_type("wire_agent", bridged(_sdk_agent))
    path = _write(tmp_path, adding_scenario("recorded", """\
agents:
  wire_agent:
    recording: cassettes/recorded.wire_agent.yaml
"""))
    live = FakeOpenAIServer([tool_call("add", a=2, b=3), "2 + 3 = 5"]).llm("gpt-4o-mini")
    assert record_scenario(path, "wire_agent", live, "once").ok
    path.write_text(path.read_text().replace("What is 2 + 3?", "What is 2 + 4?"))

    miss = cassette_miss(run_scenario(path, "wire_agent"))

    assert miss is not None and "nearest recorded: exchanges[0]" in miss


def test_a_bridged_agent_gets_a_report_row_like_agentkits_own_types(tmp_path):
    register_agent_type("wire_agent", bridged(_sdk_agent))
    text = (ROOT / "scenarios" / "trajectory_parallel_lookups.yaml").read_text()
    path = _write(tmp_path, text + "agents:\n  wire_agent: {}\n  function_calling: {}\n")

    rows = {row.agent_type: row for row in run_comparison(
        path, None, snapshots=SnapshotFiles("off")).rows}

    assert rows["wire_agent"].status == rows["function_calling"].status == "pass"
    assert (rows["wire_agent"].steps, rows["wire_agent"].llm_calls,
            rows["wire_agent"].tool_calls) == (rows["function_calling"].steps,
                                               rows["function_calling"].llm_calls,
                                               rows["function_calling"].tool_calls) == (4, 4, 4)


class _OffersOtherTool:
    """Offers the model a `multiply` tool only, and answers a call of any other itself."""

    def __init__(self, context: BridgeContext) -> None:
        self.context = context

    def chat(self, message: str) -> str:
        tool = {"type": "function", "function": {"name": "multiply", "parameters": {
            "type": "object", "properties": {}}}}
        asked = [{"role": "user", "content": message}]
        reply = self.context.client.chat.completions.create(model="m", messages=asked,
                                                           tools=[tool])
        (call,) = reply.choices[0].message.tool_calls
        asked += [reply.choices[0].message.model_dump(exclude_none=True),
                  {"role": "tool", "tool_call_id": call.id, "content": "no such tool"}]
        self.context.client.chat.completions.create(model="m", messages=asked, tools=[tool])
        return "done"


def test_a_call_of_a_tool_the_request_did_not_offer_is_filed_as_failed(tmp_path):
    register_agent_type("wire_agent", bridged(_OffersOtherTool))
    path = _write(tmp_path, adding_scenario("missing", """\
agents:
  wire_agent:
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
      - done
"""))

    result = run_scenario(path, "wire_agent")

    first = _steps(result)[0]
    (call,) = first["tool_calls"]
    assert call["is_error"] is True
    assert call["output"] == ("the model asked for tool 'add', which the agent did not offer; "
                              "the agent answered: no such tool")
    assert not result.passed


def test_a_bridged_agents_clients_are_made_when_first_asked_for():
    # issue 36 (the harness's cost per replay): every run builds its agent anew, and an
    # agent uses one or two of the four clients its context offers
    import openai

    from agentkit.bridge import Bridge
    from agentkit.harness import AgentContext
    from agentkit.llms.mock import ScriptedLLM

    bridge = Bridge(ScriptedLLM(["5"], name="script", strict=False, max_retries=0))
    context = BridgeContext.of(bridge, AgentContext(agent_type="mine", llm=bridge.llm))
    assert not {"client", "async_client", "http_client", "async_http_client"} & set(vars(context))

    client = context.client
    assert context.client is client and set(vars(context)) & {"async_client"} == set()
    with pytest.raises(openai.ConflictError, match="no turn is running"):  # the bridge's answer
        client.chat.completions.create(model=context.model,
                                       messages=[{"role": "user", "content": "2 + 3?"}])
    assert context.http_client is context.http_client
