"""Cassette format 2: MCP exchanges beside the LLM exchanges; format 1 is still read and
still written when there are none; a malformed MCP exchange is an error at its line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agentkit.llms.cassette import Cassette, CassetteError, Exchange
from tests.mcp_tools import toy


def test_a_cassette_with_mcp_exchanges_is_written_as_format_2_and_read_back(tmp_path):
    cassette = Cassette(path=tmp_path / "c.yaml")
    cassette.mcp_exchanges.append(Exchange(request={"server": "toy", "method": "tools/list"},
                                           request_hash="abc", response={"tools": []},
                                           latency=0.5))
    cassette.save()
    data = yaml.safe_load(cassette.path.read_text())
    assert data["format"] == 2
    loaded = Cassette.load(cassette.path)
    assert [(e.request, e.response, e.latency) for e in loaded.mcp_exchanges] == [
        ({"server": "toy", "method": "tools/list"}, {"tools": []}, 0.5)]


def test_a_cassette_without_mcp_exchanges_is_still_written_as_format_1(tmp_path):
    path = Cassette(path=tmp_path / "c.yaml").save()
    text = path.read_text()
    assert text.startswith("format: 1\n")
    assert "mcp_exchanges" not in text


def test_a_format_1_cassette_is_read(tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text("format: 1\nexchanges: []\n")
    assert Cassette.load(path).mcp_exchanges == []


def test_an_unknown_format_names_the_formats_read(tmp_path):
    path = tmp_path / "new.yaml"
    path.write_text("format: 6\nexchanges: []\n")
    with pytest.raises(CassetteError, match=r"new.yaml:1: format: unsupported cassette format 6 "
                                            r"\(this agentkit reads formats 1, 2, 3, 4, 5\)"):
        Cassette.load(path)


def test_mcp_exchanges_in_a_format_1_cassette_are_an_error(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"format": 1, "exchanges": [],
                                    "mcp_exchanges": [toy.listing()]}))
    with pytest.raises(CassetteError, match="`mcp_exchanges` are cassette format 2"):
        Cassette.load(path)


def _broken(tmp_path: Path, exchange: dict) -> str:
    path = toy.write_cassette(tmp_path / "c.yaml", [toy.listing(), exchange])
    with pytest.raises(CassetteError) as caught:
        Cassette.load(path)
    return str(caught.value)


def test_a_call_result_without_a_content_list_is_an_error_at_its_line(tmp_path):
    exchange = toy.call("echo", {"text": "x"}, "x")
    exchange["response"] = {"content": "not a list"}
    message = _broken(tmp_path, exchange)
    assert "c.yaml:" in message and "mcp_exchanges.1" in message
    assert "a `tools/call` result needs `content` (a list of blocks)" in message


def test_a_misspelt_key_of_an_mcp_exchange_gets_a_did_you_mean(tmp_path):
    exchange = toy.call("echo", {"text": "x"}, "x")
    exchange["lantecy"] = exchange.pop("latency")
    assert "unknown field `lantecy`; did you mean `latency`?" in _broken(tmp_path, exchange)


def test_a_tools_call_without_a_tool_name_is_an_error(tmp_path):
    exchange = toy.call("echo", {"text": "x"}, "x")
    del exchange["request"]["params"]["name"]
    assert "a `tools/call` request needs `params.name`" in _broken(tmp_path, exchange)


def test_an_exchange_with_both_result_and_error_is_an_error(tmp_path):
    exchange = toy.call("echo", {"text": "x"}, "x")
    exchange["error"] = {"code": -1, "message": "no"}
    assert "needs exactly one of `response` (the result) or `error`" in _broken(tmp_path, exchange)


def test_an_unknown_mcp_method_names_the_methods_recorded(tmp_path):
    exchange = toy.call("echo", {"text": "x"}, "x")
    exchange["request"]["method"] = "sampling/createMessage"
    message = _broken(tmp_path, exchange)
    assert "mcp_exchanges.1.request.method" in message
    assert "tools/list" in message and "prompts/get" in message and "resources/read" in message


def _exchange(method: str, params: dict | None, response: dict, **more) -> dict:
    request = {"server": "toy", "method": method, **({"params": params} if params else {})}
    return {"request": request, "response": response, "latency": 0.0, **more}


RESOURCES_AND_PROMPTS = [
    _exchange("resources/list", None, {"resources": [{"uri": "test://a", "name": "a"}]}),
    _exchange("resources/templates/list", None,
              {"resourceTemplates": [{"uriTemplate": "test://t/{id}", "name": "t"}]}),
    _exchange("resources/read", {"uri": "test://a"},
              {"contents": [{"uri": "test://a", "mimeType": "text/plain", "text": "A"}]}),
    _exchange("resources/read", {"uri": "test://b"},
              {"contents": [{"uri": "test://b", "mimeType": "image/png", "blob": "iVBO"}]}),
    _exchange("prompts/list", None, {"prompts": [{"name": "greet"}]}),
    _exchange("prompts/get", {"name": "greet", "arguments": {"who": "Ada"}},
              {"messages": [{"role": "user", "content": {"type": "text", "text": "Hi Ada"}}]}),
    _exchange("completion/complete",
              {"ref": {"type": "ref/prompt", "name": "greet"},
               "argument": {"name": "who", "value": "A"}},
              {"completion": {"values": ["Ada", "Alan"]}}),
    _exchange("logging/setLevel", {"level": "info"}, {}),
    _exchange("resources/subscribe", {"uri": "test://a"}, {}),
    _exchange("tools/call", {"name": "slow", "arguments": {}},
              {"content": [{"type": "text", "text": "done"}]},
              notifications=[{"method": "notifications/progress",
                              "params": {"progressToken": 1, "progress": 50, "total": 100}},
                             {"method": "notifications/message",
                              "params": {"level": "info", "data": "half way"}}]),
]


def test_resources_prompts_completions_and_notifications_are_read_back_as_written(tmp_path):
    path = toy.write_cassette(tmp_path / "c.yaml", [toy.listing(), *RESOURCES_AND_PROMPTS])
    loaded = Cassette.load(path)
    assert [(e.request["method"], e.response) for e in loaded.mcp_exchanges[1:]] == [
        (e["request"]["method"], e["response"]) for e in RESOURCES_AND_PROMPTS]
    assert loaded.mcp_exchanges[-1].notifications == RESOURCES_AND_PROMPTS[-1]["notifications"]
    loaded.save()
    again = yaml.safe_load(path.read_text())["mcp_exchanges"]
    assert again[-1]["notifications"] == RESOURCES_AND_PROMPTS[-1]["notifications"]
    assert list(again[-1]) == ["request_hash", "request", "notifications", "response", "latency"]
    assert "notifications" not in again[1]


@pytest.mark.parametrize(("method", "params", "response", "said"), [
    ("resources/list", None, {"resources": [{"uri": "test://a"}]},
     "`resources[0]` of a `resources/list` result needs `name` (text)"),
    ("resources/templates/list", None, {"templates": []},
     "a `resources/templates/list` result needs `resourceTemplates` (a list)"),
    ("resources/read", {"uri": "test://a"}, {"contents": [{"uri": "test://a"}]},
     "`contents[0]` of a `resources/read` result needs `text` or `blob`"),
    ("resources/read", None, {"contents": []},
     "a `resources/read` request needs `params.uri` (the resource)"),
    ("prompts/get", {"name": "p"}, {"messages": [{"role": "user", "content": {}}]},
     "`messages[0]` of a `prompts/get` result needs `content` (a block with a `type`)"),
    ("prompts/get", {"arguments": {}}, {"messages": []},
     "a `prompts/get` request needs `params.name` (the prompt)"),
    ("completion/complete", {"ref": {}}, {"completion": {"values": []}},
     "a `completion/complete` request needs `params.ref` and `params.argument`"),
    ("completion/complete", {"ref": {}, "argument": {}}, {"completion": {}},
     "a `completion/complete` result needs `completion.values` (a list)"),
    ("logging/setLevel", {}, {}, "a `logging/setLevel` request needs `params.level`"),
])
def test_a_malformed_resource_prompt_or_completion_exchange_is_an_error_naming_it(
        tmp_path, method, params, response, said):
    message = _broken(tmp_path, _exchange(method, params, response))
    assert "c.yaml:" in message and "mcp_exchanges.1" in message
    assert said in message


def test_a_recorded_notification_must_be_a_notification(tmp_path):
    exchange = toy.call("echo", {"text": "x"}, "x")
    exchange["notifications"] = [{"method": "sampling/createMessage", "params": {}}]
    message = _broken(tmp_path, exchange)
    assert "`sampling/createMessage` is not a notification (`notifications/...`)" in message


def test_an_input_required_call_result_needs_its_requests_or_state(tmp_path):
    asking = toy.call("echo", {"text": "x"}, "x")
    asking["response"] = {"resultType": "input_required",
                          "inputRequests": {"ok": {"method": "elicitation/create"}}}
    path = toy.write_cassette(tmp_path / "ok.yaml", [toy.listing(), asking])
    assert Cassette.load(path).mcp_exchanges[1].response == asking["response"]

    asking["response"] = {"resultType": "input_required"}
    message = _broken(tmp_path, asking)
    assert ("an input-required `tools/call` result needs `inputRequests` (an object) or "
            "`requestState` (text)") in message
