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
    exchange["request"]["method"] = "prompts/get"
    message = _broken(tmp_path, exchange)
    assert "mcp_exchanges.1.request.method" in message and "tools/list" in message
