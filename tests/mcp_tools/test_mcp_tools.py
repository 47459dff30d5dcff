"""agentkit.tools.mcp offline: a server's tools as agentkit tools, replayed from a cassette
without starting the server (which does not even exist here)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentkit.core.errors import InfrastructureError, RecordingMismatchError, kind_of
from agentkit.core.sim import now, run
from agentkit.llms.cassette import CassetteMissError
from agentkit.tools.mcp import (
    MCPCallError,
    MCPProtocolError,
    MCPServer,
    MCPServerError,
    MCPToolset,
    canonical_mcp_request,
    result_text,
)
from tests.mcp_tools import toy

NOWHERE = MCPServer(name="toy", command="no-such-mcp-server-anywhere")


def _cassette(tmp_path: Path, *exchanges: dict) -> Path:
    return toy.write_cassette(tmp_path / "toy.yaml", [toy.listing(), *exchanges])


def test_a_servers_tools_become_tools_with_its_names_descriptions_and_schemas(tmp_path):
    with MCPToolset(NOWHERE, cassette=_cassette(tmp_path)) as tools:
        assert [t.metadata.name for t in tools] == ["echo", "add"]
        assert tools[0].metadata.description == "Answer the text given."
        assert tools[1].metadata.get_parameters_dict() == toy.ADD["inputSchema"]
        assert tools[1].metadata.to_openai_tool()["function"]["parameters"] == toy.ADD["inputSchema"]


def test_only_picks_tools_in_the_order_given(tmp_path):
    with MCPToolset(NOWHERE, ["add", "echo"], cassette=_cassette(tmp_path)) as tools:
        assert [t.metadata.name for t in tools] == ["add", "echo"]


def test_a_tool_the_server_does_not_offer_is_an_error_naming_server_and_nearest_tool(tmp_path):
    with pytest.raises(LookupError, match=r"MCP server `toy` offers no tool `ech`; did you mean "
                                          r"`echo`\? \(it offers: echo, add\)"):
        MCPToolset(NOWHERE, ["ech"], cassette=_cassette(tmp_path)).__enter__()


def test_a_replayed_call_answers_from_the_cassette_without_starting_the_server(tmp_path):
    path = _cassette(tmp_path, toy.call("echo", {"text": "hi"}, "hi!"))
    with MCPToolset(NOWHERE, cassette=path) as tools:
        output = tools[0].call(text="hi")
    assert (output.content, output.is_error, output.tool_name) == ("hi!", False, "echo")
    assert output.raw_output == {"content": [{"type": "text", "text": "hi!"}]}


def test_a_function_calling_agent_records_an_mcp_calls_raw_input_by_keyword(tmp_path):
    # issue 38 B3: upstream's MCP tools take **kwargs only, so 0.12.42's call_tool, whose
    # positional call of a one-parameter tool fails, calls them by keyword
    from agentkit.agent import FunctionCallingAgent
    from agentkit.llms.mock import ScriptedLLM, tool_call

    path = _cassette(tmp_path, toy.call("echo", {"text": "hi"}, "hi!"))
    with MCPToolset(NOWHERE, ["echo"], cassette=path) as tools:
        llm = ScriptedLLM([tool_call("echo", text="hi"), "done"])
        (output,) = FunctionCallingAgent.from_tools(tools, llm=llm).chat("echo hi").sources
    assert (output.content, output.raw_input) == ("hi!", {"args": (), "kwargs": {"text": "hi"}})


def test_the_async_call_replays_the_same(tmp_path):
    path = _cassette(tmp_path, toy.call("echo", {"text": "hi"}, "hi!"))
    with MCPToolset(NOWHERE, cassette=path) as tools:
        output = run(tools[0].acall(text="hi"))
    assert output.content == "hi!"


def test_a_recorded_calls_latency_passes_on_the_virtual_clock(tmp_path):
    path = _cassette(tmp_path, toy.call("echo", {"text": "hi"}, "hi!", latency=2.5))
    with MCPToolset(NOWHERE, cassette=path) as tools:
        before = now()
        tools[0].call(text="hi")
        assert now() - before == pytest.approx(2.5)


def test_concurrent_replayed_calls_overlap_on_the_virtual_clock(tmp_path):
    path = _cassette(tmp_path, toy.call("echo", {"text": "a"}, "a", latency=1.0),
                     toy.call("echo", {"text": "b"}, "b", latency=1.0))

    async def both(tools):
        return await asyncio.gather(tools[0].acall(text="a"), tools[0].acall(text="b"))

    with MCPToolset(NOWHERE, cassette=path) as tools:
        before = now()
        outputs = run(both(tools))
        assert now() - before == pytest.approx(1.0)
    assert [o.content for o in outputs] == ["a", "b"]


def test_a_call_not_on_the_cassette_is_a_miss_naming_the_nearest_call_and_the_difference(
        tmp_path):
    path = _cassette(tmp_path, toy.call("add", {"a": 1, "b": 2}, "3"))
    with MCPToolset(NOWHERE, cassette=path) as tools, pytest.raises(CassetteMissError) as caught:
        tools[1].call(a=1, b=5)
    message = str(caught.value)
    assert "MCP server toy: tools/call add" in message
    assert "nearest recorded: mcp_exchanges[1]" in message
    assert "first difference (recorded -> now), at params.arguments.b" in message
    assert kind_of(caught.value) == "recording"


def test_a_call_made_more_often_than_recorded_is_a_miss_saying_so(tmp_path):
    path = _cassette(tmp_path, toy.call("echo", {"text": "a"}, "a"))
    with MCPToolset(NOWHERE, cassette=path) as tools:
        tools[0].call(text="a")
        with pytest.raises(CassetteMissError, match="was recorded 1 time"):
            tools[0].call(text="a")


def test_repeated_calls_replay_their_answers_in_recorded_order(tmp_path):
    path = _cassette(tmp_path, toy.call("echo", {"text": "n"}, "1"),
                     toy.call("echo", {"text": "n"}, "2"))
    with MCPToolset(NOWHERE, cassette=path) as tools:
        assert [tools[0].call(text="n").content for _ in range(2)] == ["1", "2"]


def test_an_error_result_is_an_error_output(tmp_path):
    path = _cassette(tmp_path, toy.call("echo", {"text": "x"}, "it broke", is_error=True))
    with MCPToolset(NOWHERE, cassette=path) as tools:
        output = tools[0].call(text="x")
    assert (output.content, output.is_error) == ("it broke", True)


def test_a_recorded_json_rpc_error_is_raised_as_the_tools_error(tmp_path):
    path = _cassette(tmp_path, toy.refused("echo", {"text": "x"}, "not allowed"))
    with MCPToolset(NOWHERE, cassette=path) as tools, pytest.raises(MCPCallError) as caught:
        tools[0].call(text="x")
    assert str(caught.value) == ("MCP server `toy` refused `echo` (JSON-RPC error -32602): not "
                                 "allowed")
    assert kind_of(caught.value) == "agent"  # an answer of the tool, for the agent to see


def test_requests_are_kept_without_json_rpc_ids_and_in_one_spelling():
    one = canonical_mcp_request("toy", "tools/call", {"name": "add", "arguments": {"b": 2, "a": 1}})
    other = canonical_mcp_request("toy", "tools/call", {"arguments": {"a": 1, "b": 2}, "name": "add"})
    assert one == other == {"method": "tools/call", "params": {"arguments": {"a": 1, "b": 2},
                                                               "name": "add"}, "server": "toy"}
    assert list(one) == sorted(one)


def test_keys_in_a_request_are_redacted():
    key = "sk-" + "a" * 30
    request = canonical_mcp_request("toy", "tools/call", {"name": "echo",
                                                          "arguments": {"text": key}})
    assert key not in str(request)


def test_result_text_joins_text_blocks_and_names_other_blocks():
    result = {"content": [{"type": "text", "text": "one"}, {"type": "image", "data": "AAAA",
                                                           "mimeType": "image/png"},
                          {"type": "resource_link", "uri": "file:///x", "name": "x"}]}
    assert result_text(result) == "one\n[image image/png]\n[resource file:///x]"


def test_result_text_of_structured_content_only_is_its_json():
    assert result_text({"content": [], "structuredContent": {"b": 1, "a": 2}}) == '{"a": 2, "b": 1}'


def test_a_malformed_listing_in_the_cassette_is_an_error_naming_server_and_tool(tmp_path):
    bad = {**toy.ECHO, "inputSchema": {"type": "string"}}
    path = toy.write_cassette(tmp_path / "toy.yaml", [toy.listing(tools=[bad])])
    with pytest.raises(MCPProtocolError, match=r"MCP server `toy` \(no-such-mcp-server-anywhere\) "
                                               r"offers tool `echo` with a malformed input schema "
                                               r"\(its `type` is not `object`"):
        MCPToolset(NOWHERE, cassette=path).__enter__()


def test_a_command_that_does_not_exist_is_an_infrastructure_error_naming_it(tmp_path):
    with pytest.raises(MCPServerError) as caught:
        MCPToolset(NOWHERE).__enter__()  # no cassette: live
    assert "MCP server `toy`: cannot start `no-such-mcp-server-anywhere`: command " \
           "`no-such-mcp-server-anywhere` not found" in str(caught.value)
    assert isinstance(caught.value, InfrastructureError)


def test_a_cassette_miss_is_a_recording_mismatch():
    assert issubclass(CassetteMissError, RecordingMismatchError)


def test_a_server_is_stdio_or_http_not_both():
    with pytest.raises(ValueError, match="exactly one of `command`"):
        MCPServer(name="x", command="a", url="http://127.0.0.1:1/mcp")


def test_describe_names_the_command_line_or_the_url_without_credentials():
    assert MCPServer(name="t", command="mcp-server-time", args=("--local-timezone", "UTC"),
                     env={"TOKEN": "secret"}).describe() == "mcp-server-time --local-timezone UTC"
    assert MCPServer(name="h", url="http://u:p@127.0.0.1:8000/mcp?k=1").describe() == \
        "http://127.0.0.1:8000/mcp"


def test_a_live_server_without_the_sdk_installed_says_how_to_install_it(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mcp" else real(name, *a))
    with pytest.raises(MCPServerError, match=r"the MCP SDK is not installed; pip install "
                                             r"'agentkit\[mcp\]'"):
        MCPToolset(NOWHERE).__enter__()


def test_a_replay_matches_whatever_secrets_this_machines_environment_holds(tmp_path, monkeypatch):
    monkeypatch.setenv("SOME_API_TOKEN", "hello-there-value")  # a secret-looking variable
    path = _cassette(tmp_path, toy.call("echo", {"text": "hello-there-value"}, "ok"))
    with MCPToolset(NOWHERE, cassette=path) as tools:
        assert tools[0].call(text="hello-there-value").content == "ok"
