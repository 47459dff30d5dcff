"""MCP tools in scenarios, offline: declared and checked at load, built for every agent type
from the agent type's cassette (the server is never started), failure schedules applied,
and the harness's own trouble inside a tool stops the run with its kind."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agentkit.harness import load as plan
from agentkit.llms.cassette import CassetteError
from agentkit.report._timeline import lanes, spans_of
from agentkit.scenario import load_scenario, run_scenario
from agentkit.scenario._layout import recording_files, records
from agentkit.scenario._loader import ScenarioError
from tests.mcp_tools import toy

BUNDLED = Path(__file__).resolve().parents[2] / "scenarios" / "mcp_time_git.yaml"
AGENT_TYPES = ["react", "function_calling", "llm_compiler", "coa", "function_agent",
               "react_agent", "react_multimodal"]


def _world(tmp_path: Path, *exchanges: dict, text: str = toy.SCENARIO,
           agent_type: str = "function_calling") -> Path:
    path = toy.write_scenario(tmp_path, text)
    toy.write_cassette(tmp_path / "cassettes" / f"toy.{agent_type}.yaml",
                       [toy.listing(), *exchanges])
    return path


def _load_error(tmp_path: Path, tools: str, *, load: Callable[[Path], object] = load_scenario,
                ) -> str:
    text = toy.SCENARIO.replace("tools:\n  - mcp: {name: toy, command: no-such-mcp-server-anywhere}\n",
                                f"tools:\n{tools}")
    path = toy.write_scenario(tmp_path, text)
    with pytest.raises(ScenarioError) as caught:
        load(path)
    return str(caught.value)


@pytest.mark.parametrize("agent_type", AGENT_TYPES)
def test_mcp_tools_replay_under_every_agent_type(tmp_path, agent_type):
    text = toy.SCENARIO.replace("agents: [function_calling]", f"agents: [{agent_type}]")
    path = _world(tmp_path, toy.call("echo", {"text": "hello"}, "HELLO", latency=1.5),
                  text=text, agent_type=agent_type)

    result = run_scenario(path, agent_type)

    assert result.passed, result.verdict.lines()
    calls = [call for step in result.trace.turns[0].steps for call in step.tool_calls]
    assert [(c.name, c.args, c.output) for c in calls] == [("echo", {"text": "hello"}, "HELLO")]
    assert result.trace.turns[0].response == "It said HELLO."
    assert result.trace.totals().serial_time >= 1.5


def test_the_trace_lists_the_mcp_tools_with_the_servers_schemas(tmp_path):
    path = _world(tmp_path, toy.call("echo", {"text": "hello"}, "HELLO"))
    trace = run_scenario(path).trace.to_dict()
    assert [(t["name"], t["parameters"]) for t in trace["tools"]] == [
        ("echo", toy.ECHO["inputSchema"]), ("add", toy.ADD["inputSchema"])]


def test_a_failure_schedule_applies_to_mcp_tools_without_asking_the_server(tmp_path):
    text = toy.SCENARIO.replace("command: no-such-mcp-server-anywhere}",
                                "command: no-such-mcp-server-anywhere}\n    failures: [1]")
    text = text.replace("agents: [function_calling]", """agents:
  function_calling:
    script:
      - tool_calls: [{name: echo, args: {text: hello}}]
      - tool_calls: [{name: echo, args: {text: hello}}]
      - It said HELLO.
expect:
  tool_errors: 1""")
    text = text.replace("trajectory:\n  - call: echo\n    args: {text: hello}\n"
                        "  - answer: \"It said {$1}.\"\n", "")
    path = _world(tmp_path, toy.call("echo", {"text": "hello"}, "HELLO"), text=text)

    result = run_scenario(path)

    assert result.passed, result.verdict.lines()
    calls = [call for step in result.trace.turns[0].steps for call in step.tool_calls]
    assert [(c.is_error, c.output) for c in calls] == [
        (True, "Encountered error: simulated tool failure (call 1 of `echo`)"), (False, "HELLO")]


def test_a_tool_call_the_cassette_lacks_stops_the_run_as_a_recording_mismatch(tmp_path):
    path = _world(tmp_path, toy.call("echo", {"text": "bye"}, "BYE"))
    result = run_scenario(path)
    assert not result.passed
    turn = result.trace.turns[0]
    assert turn.error.startswith("CassetteMissError: ")
    assert "first difference (recorded -> now), at params.arguments.text" in turn.error
    assert result.verdict.kind == "recording"


def test_a_cassette_miss_in_a_workflow_agent_stops_the_run_as_itself(tmp_path):
    text = toy.SCENARIO.replace("agents: [function_calling]", "agents: [function_agent]")
    path = _world(tmp_path, toy.call("echo", {"text": "bye"}, "BYE"), text=text,
                  agent_type="function_agent")
    result = run_scenario(path)
    assert result.trace.turns[0].error.startswith("CassetteMissError: ")
    assert result.verdict.kind == "recording"


def test_unused_recorded_mcp_exchanges_fail_the_run(tmp_path):
    path = _world(tmp_path, toy.call("echo", {"text": "hello"}, "HELLO"),
                  toy.call("add", {"a": 1, "b": 2}, "3"))
    result = run_scenario(path)
    assert "the recording has 1 MCP exchange(s) that were not replayed" in " ".join(result.problems)


def test_a_missing_cassette_says_how_to_record_it(tmp_path):
    path = toy.write_scenario(tmp_path)
    with pytest.raises(CassetteError, match=r"no cassette of the MCP servers' exchanges for agent "
                                            r"type `function_calling` yet; record it with "
                                            r"`agentkit record .*toy.yaml --agent function_calling`"):
        run_scenario(path)


def test_a_tool_in_only_the_server_does_not_offer_is_an_error_at_its_line(tmp_path):
    text = toy.SCENARIO.replace("command: no-such-mcp-server-anywhere}",
                                "command: no-such-mcp-server-anywhere}\n    only: [echo, ad]")
    path = _world(tmp_path, text=text)
    with pytest.raises(ScenarioError) as caught:
        run_scenario(path)
    assert str(caught.value) == (
        f"{path}:5: tools.0.only.1: MCP server `toy` offers no tool `ad`; did you mean `add`? "
        "(it offers: echo, add)")


def test_a_trajectory_naming_an_unknown_mcp_tool_is_an_error_at_its_line(tmp_path):
    path = _world(tmp_path, text=toy.SCENARIO.replace("- call: echo", "- call: ecko"))
    with pytest.raises(ScenarioError, match=r"toy.yaml:8: trajectory.0.call: unknown tool `ecko`; "
                                            r"did you mean `echo`\?"):
        run_scenario(path)


def test_an_mcp_tool_with_the_name_of_another_tool_is_an_error(tmp_path):
    text = toy.SCENARIO.replace("tools:\n", "tools:\n  - ref: mocks.tools:add\n")
    path = _world(tmp_path, toy.call("echo", {"text": "hello"}, "HELLO"), text=text)
    with pytest.raises(ScenarioError, match="the MCP tool `add` has the name of another tool"):
        run_scenario(path)


def test_a_renamed_mcp_tool_calls_the_servers_tool(tmp_path):
    text = toy.SCENARIO.replace("command: no-such-mcp-server-anywhere}",
                                "command: no-such-mcp-server-anywhere}\n    only: [echo]\n"
                                "    name: shout").replace("call: echo", "call: shout")
    path = _world(tmp_path, toy.call("echo", {"text": "hello"}, "HELLO"), text=text)
    result = run_scenario(path)
    assert result.passed, result.verdict.lines()
    assert result.trace.to_dict()["tools"][0]["name"] == "shout"


def test_an_agent_type_with_mcp_tools_has_a_recording_to_replace(tmp_path):
    scenario = load_scenario(toy.write_scenario(tmp_path))
    assert records(scenario, "function_calling")
    assert recording_files(scenario, "function_calling")[1] == (
        tmp_path / "cassettes" / "toy.function_calling.yaml")


@pytest.mark.parametrize(("tools", "message"), [
    ("  - mcp: {comand: x}\n", "tools.0.mcp.comand: unknown field `comand`; did you mean "
                               "`command`?"),
    ("  - mcp: {command: x, url: 'http://127.0.0.1:1/mcp'}\n",
     "tools.0.mcp: give exactly one of `command`"),
    ("  - mcp: {url: 'http://127.0.0.1:1/mcp', args: [a]}\n",
     "`args` is for a server started with `command`"),
    ("  - mcp: {url: 'ftp://x'}\n", "`url` must be an http:// or https:// URL"),
    ("  - {ref: 'mocks.tools:add', mcp: {command: x}}\n", "exactly one of `ref`"),
    ("  - {ref: 'mocks.tools:add', only: [add]}\n", "`only` picks an MCP server's tools"),
    ("  - {mcp: {command: x}, name: y}\n", "`name` renames one tool"),
    ("  - {mcp: {command: x}, only: [a, a]}\n", "`only` names a more than once"),
    ("  - {mcp: {command: x, lifetime: forever}}\n", "'forever' is not one of run, session"),
    ("  - {mcp: {command: x, timeout: 0}}\n", "tools.0.mcp.timeout: must be > 0"),
])
def test_malformed_mcp_entries_are_errors_at_their_line(tmp_path, tools, message):
    error = _load_error(tmp_path, tools)
    assert f"{tmp_path / 'toy.yaml'}:" in error
    assert message in error


def test_two_different_servers_under_one_name_are_an_error(tmp_path):
    # the file is well formed: telling the servers apart is planning's (before anything runs)
    error = _load_error(tmp_path, "  - mcp: {name: s, command: a}\n  - mcp: {name: s, command: b}\n",
                        load=plan)
    assert "tools.1.mcp.name: MCP server name `s` is already tools.0's, a different server (a)" \
           in error


def test_entries_naming_the_same_server_share_it(tmp_path):
    text = toy.SCENARIO.replace(
        "  - mcp: {name: toy, command: no-such-mcp-server-anywhere}\n",
        "  - {mcp: {name: toy, command: no-such-mcp-server-anywhere}, only: [echo]}\n"
        "  - {mcp: {name: toy, command: no-such-mcp-server-anywhere}, only: [add], failures: [1]}\n")
    path = _world(tmp_path, toy.call("echo", {"text": "hello"}, "HELLO"), text=text)
    result = run_scenario(path)  # one tools/list on the cassette serves both entries
    assert result.passed, result.verdict.lines()


def test_the_bundled_mcp_calls_run_side_by_side_in_the_llm_compiler_timeline():
    result = run_scenario(BUNDLED, "llm_compiler")
    tools = [span for span in spans_of(result.trace) if span.kind == "tool"]
    assert sorted(span.label for span in tools) == ["convert_time", "git_log"]
    assert len(set(lanes(tools))) == 2  # the two calls overlap on the simulated clock


def test_the_bundled_mcp_scenario_replays_without_starting_a_server(monkeypatch):
    from agentkit.tools.mcp import LiveConnection

    def refuse(self):
        raise AssertionError(f"a replay started MCP server `{self.server.name}`")

    monkeypatch.setattr(LiveConnection, "start", refuse)
    for agent_type in load_scenario(BUNDLED).agents:
        result = run_scenario(BUNDLED, agent_type)
        assert result.passed, (agent_type, result.verdict.lines())


def test_a_replay_of_a_session_lifetime_server_prepares_no_live_server(tmp_path, monkeypatch):
    from agentkit.tools.mcp import LiveConnection

    def refuse(self, server):
        raise AssertionError(f"a replay prepared live MCP server `{server.name}`")

    monkeypatch.setattr(LiveConnection, "__init__", refuse)
    text = toy.SCENARIO.replace("command: no-such-mcp-server-anywhere}",
                                "command: no-such-mcp-server-anywhere, lifetime: session}")
    path = _world(tmp_path, toy.call("echo", {"text": "hello"}, "HELLO"), text=text)
    result = run_scenario(path)
    assert result.passed, result.verdict.lines()


def test_an_entrys_latency_adds_to_the_recorded_one_and_its_error_names_scheduled_failures(
        tmp_path):
    text = toy.SCENARIO.replace("command: no-such-mcp-server-anywhere}",
                                "command: no-such-mcp-server-anywhere}\n    latency: 2\n"
                                "    failures: [1]\n    error: the toy server is busy")
    text = text.replace("agents: [function_calling]", """agents:
  function_calling:
    script:
      - tool_calls: [{name: echo, args: {text: hello}}]
      - tool_calls: [{name: echo, args: {text: hello}}]
      - It said HELLO.
expect:
  tool_errors: 1""")
    text = text.replace("trajectory:\n  - call: echo\n    args: {text: hello}\n"
                        "  - answer: \"It said {$1}.\"\n", "")
    path = _world(tmp_path, toy.call("echo", {"text": "hello"}, "HELLO", latency=0.5), text=text)

    result = run_scenario(path)

    assert result.passed, result.verdict.lines()
    calls = [call for step in result.trace.turns[0].steps for call in step.tool_calls]
    assert [c.output for c in calls] == [
        "Encountered error: the toy server is busy (call 1 of `echo`)", "HELLO"]
    assert calls[1].latency == pytest.approx(2.5)


def test_a_replayed_mcp_cassette_is_built_once_per_text_not_per_run(tmp_path, monkeypatch):
    from agentkit.recording import ReplayedCassettes, _cassette

    replays = ReplayedCassettes(text_bytes=1024 * 1024)
    monkeypatch.setattr(_cassette, "REPLAYED", replays)
    path = _world(tmp_path, toy.call("echo", {"text": "hello"}, "HELLO"))

    first, second = run_scenario(path), run_scenario(path)

    assert first.passed and second.passed
    assert first.trace.to_dict() == second.trace.to_dict()
    assert (replays.built, replays.hits) == (1, 1)
