"""Traces written by other tools (tests/otel/fixtures, made with the real packages) import into
scenarios that replay offline."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from agentkit.tools.recorded import load_recorded_tools
from otel_helpers import FIXTURES


def test_a_llamaindex_run_exported_from_phoenix_imports_and_replays(cli, tmp_path):
    shutil.copy(FIXTURES / "llamaindex_phoenix.json", tmp_path)

    imported = cli("import-trace", "llamaindex_phoenix.json", "--out", "refund_case.yaml")
    assert imported.code == 0, imported.out + imported.err
    assert "3 LLM calls, 2 tool calls" in imported.out
    replayed = cli("run", "refund_case.yaml")

    assert replayed.code == 0, replayed.out + replayed.err
    data = yaml.safe_load(Path("refund_case.yaml").read_text())
    assert data["turns"] == [{"user": "Order A17 arrived broken; please refund it."}]
    assert data["expect"]["tool_calls"]["calls"] == [
        {"name": "lookup_order", "args": {"order_id": "A17"}},
        {"name": "refund", "args": {"order_id": "A17", "amount": 42.5}}]
    assert data["expect"]["answer"] == {
        "equals": "I refunded 42.5 on order A17; sorry it arrived broken."}
    assert list(data["agents"]) == ["function_calling"]


def test_llamaindex_tool_outputs_are_what_the_model_was_told(cli, tmp_path):
    shutil.copy(FIXTURES / "llamaindex_phoenix.json", tmp_path)
    cli("import-trace", "llamaindex_phoenix.json", "--out", "refund_case.yaml")

    namespace = load_recorded_tools(Path("refund_case_tools.py"))
    assert namespace["lookup_order"].call(order_id="A17").content == \
        '{"order_id": "A17", "status": "delivered", "amount": 42.5}'
    assert namespace["refund"].metadata.get_parameters_dict()["required"] == ["order_id",
                                                                             "amount"]


def test_an_openai_agents_run_traced_by_the_genai_instrumentation_imports_and_replays(
        cli, tmp_path):
    shutil.copy(FIXTURES / "openai_agents_genai.json", tmp_path)

    imported = cli("import-trace", "openai_agents_genai.json", "--out", "umbrella_case.yaml")
    assert imported.code == 0, imported.out + imported.err
    replayed = cli("run", "umbrella_case.yaml")

    assert replayed.code == 0, replayed.out + replayed.err
    data = yaml.safe_load(Path("umbrella_case.yaml").read_text())
    assert data["turns"] == [{"user": "Do I need an umbrella in Lyon today?"}]
    assert data["expect"]["tool_calls"]["calls"] == [
        {"name": "get_forecast", "args": {"city": "Lyon"}},
        {"name": "umbrella_advice", "args": {"forecast": "Lyon: rain from noon, 14 C"}}]
    assert data["expect"]["answer"] == {
        "equals": "Yes: rain is forecast in Lyon from noon, so take an umbrella."}


def test_the_replayed_conversation_keeps_the_traced_usage(cli, tmp_path):
    shutil.copy(FIXTURES / "openai_agents_genai.json", tmp_path)
    cli("import-trace", "openai_agents_genai.json", "--out", "umbrella_case.yaml")

    cassette = yaml.safe_load(Path("cassettes/umbrella_case.function_calling.yaml").read_text())
    assert [e["response"]["usage"]["prompt_tokens"] for e in cassette["exchanges"]] == [30, 46,
                                                                                        58]
    assert cassette["model"] == "gpt-4o-mini"
