"""No secret leaves: message content only when asked, then redacted like a cassette; API keys
and auth headers never."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_helpers import attrs, spans_of


def _scenario(tmp_path: Path, user: str, tool_output: str = "5") -> Path:
    # a module name of its own per test: a module imported by an earlier test stays imported
    module = f"leaky_tools_{tmp_path.name}"
    (tmp_path / f"{module}.py").write_text(
        "def add(a: int, b: int) -> str:\n"
        '    """Add two integers."""\n'
        f"    return {tool_output!r}\n", encoding="utf-8")
    path = tmp_path / "leaky.yaml"
    path.write_text(f"""\
format: 1
name: leaky
tools:
  - ref: {module}:add
turns:
  - user: {json.dumps(user)}
agents:
  function_calling:
    script:
      - tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]
      - "done"
""", encoding="utf-8")
    return path


def _all_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_message_content_is_not_exported_unless_asked(cli, tmp_path):
    scenario = _scenario(tmp_path, "What is 2 + 3? my note: tangerine")
    assert cli("run", scenario, "--snapshots", "off", "--otel-out", "s.json").code == 0

    text = _all_text(Path("s.json"))
    assert "tangerine" not in text
    assert "gen_ai.input.messages" not in text
    assert "gen_ai.output.messages" not in text


def test_with_otel_content_the_messages_are_exported_in_the_conventions_shape(cli, tmp_path):
    scenario = _scenario(tmp_path, "What is 2 + 3?")
    assert cli("run", scenario, "--snapshots", "off", "--otel-out", "s.json",
               "--otel-content").code == 0

    chat = next(s for s in spans_of(Path("s.json")) if s["name"].startswith("chat"))
    messages = json.loads(attrs(chat)["gen_ai.input.messages"])
    assert messages[-1] == {"role": "user", "parts": [{"type": "text",
                                                        "content": "What is 2 + 3?"}]}
    output = json.loads(attrs(chat)["gen_ai.output.messages"])
    assert output[0]["parts"][0]["type"] == "tool_call"
    assert output[0]["finish_reason"] == "tool_calls"


def test_the_standard_environment_variable_turns_content_on(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    scenario = _scenario(tmp_path, "What is 2 + 3? tangerine")
    cli("run", scenario, "--snapshots", "off", "--otel-out", "s.json")

    assert "tangerine" in _all_text(Path("s.json"))


def test_an_api_key_typed_into_a_turn_is_redacted_from_exported_content(cli, tmp_path):
    key = "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2"
    scenario = _scenario(tmp_path, f"What is 2 + 3? my key is {key}")
    cli("run", scenario, "--snapshots", "off", "--otel-out", "s.json", "--otel-content")

    text = _all_text(Path("s.json"))
    assert key not in text
    assert "<redacted:api-key>" in text


def test_a_secret_environment_value_in_a_tool_result_is_redacted(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SHOP_API_TOKEN", "tok-very-secret-123")
    scenario = _scenario(tmp_path, "What is 2 + 3?", tool_output="5 tok-very-secret-123")
    cli("run", scenario, "--snapshots", "off", "--otel-out", "s.json", "--otel-content")

    text = _all_text(Path("s.json"))
    assert "tok-very-secret-123" not in text
    assert "<redacted:SHOP_API_TOKEN>" in text


@pytest.mark.agentkit_allow_loopback
def test_the_auth_header_reaches_the_collector_and_nothing_else(cli, tmp_path, monkeypatch,
                                                                 receiver):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20collector-secret-99")
    scenario = _scenario(tmp_path, "What is 2 + 3?")
    outcome = cli("run", scenario, "--snapshots", "off", "--otel-out", "s.json",
                  "--otlp-endpoint", receiver.url, "--otel-content")

    assert receiver.requests[0]["headers"].get("authorization") == "Bearer collector-secret-99"
    assert "collector-secret-99" not in _all_text(Path("s.json"))
    assert "collector-secret-99" not in outcome.out + outcome.err
