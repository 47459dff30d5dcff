"""pytest --agentkit-otel-out: scenario items and plain tests exported as spans, the same file
with and without pytest-xdist."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plugin_project import write

PLAIN_TEST = '''
from agentkit.agent import ReActAgent
from agentkit.llms.mock import ScriptedLLM
from agentkit.tools import FunctionTool
from calc_tools import add


def test_agent_adds():
    llm = ScriptedLLM(['Thought: add.\\nAction: add\\nAction Input: {"a": 2, "b": 3}',
                       "Thought: done.\\nAnswer: 5"], latency=0.5)
    agent = ReActAgent.from_tools([FunctionTool.from_defaults(add)], llm=llm)
    assert str(agent.chat("What is 2 + 3?")) == "5"


def test_without_agents():
    assert 1 + 1 == 2
'''


def _spans(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [s for rs in data["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]


def _roots(path: Path) -> list[str]:
    return [s["name"] for s in _spans(path) if "parentSpanId" not in s]


def test_scenario_items_and_plain_tests_are_exported(project: pytest.Pytester) -> None:
    write(project, "test_plain.py", PLAIN_TEST)

    result = project.runpytest("--agentkit-otel-out", "spans.json", "-p", "no:cacheprovider",
                               "--snapshot-update")

    result.assert_outcomes(passed=4)
    assert _roots(project.path / "spans.json") == [
        "adding[function_calling]", "adding[react]", "test_plain.py::test_agent_adds"]
    result.stdout.fnmatch_lines(["agentkit: wrote * spans of 3 runs to spans.json"])


def test_a_plain_tests_agent_chat_is_a_turn_and_its_outcome_an_evaluation(
        project: pytest.Pytester) -> None:
    write(project, "test_plain.py", PLAIN_TEST)
    project.runpytest("test_plain.py", "--agentkit-otel-out", "spans.json")

    spans = _spans(project.path / "spans.json")
    names = [s["name"] for s in spans]
    assert names == ["test_plain.py::test_agent_adds", "invoke_agent agent", "chat scripted",
                     "execute_tool add", "chat scripted"]
    event = spans[0]["events"][0]
    found = {a["key"]: next(iter(a["value"].values())) for a in event["attributes"]}
    assert found["gen_ai.evaluation.name"] == "test"
    assert found["gen_ai.evaluation.score.label"] == "pass"
    ends = [(int(s["endTimeUnixNano"]) - int(spans[0]["startTimeUnixNano"])) / 1e9
            for s in spans]
    assert ends[0] == 1.0  # two scripted calls of 0.5 s


def test_without_the_option_nothing_is_exported(project: pytest.Pytester) -> None:
    write(project, "test_plain.py", PLAIN_TEST)
    project.runpytest("test_plain.py")

    assert not list(project.path.glob("*.json"))


@pytest.mark.slow  # two inner sessions in processes of their own, one under xdist
def test_under_xdist_the_file_is_the_one_a_serial_run_writes(
        project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    write(project, "test_plain.py", PLAIN_TEST)
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTKIT_OTEL_STABLE", "1")  # byte for byte, as a snapshot would ask
    quiet = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:anyio")
    project.runpytest_subprocess("--agentkit-otel-out", "serial.json", "--snapshot-update",
                                 *quiet).assert_outcomes(passed=4)

    result = project.runpytest_subprocess("-n", "2", "--agentkit-otel-out", "spread.json", *quiet)

    result.assert_outcomes(passed=4)
    assert (project.path / "spread.json").read_bytes() == \
        (project.path / "serial.json").read_bytes()


@pytest.mark.slow  # waits for a refused collector
@pytest.mark.agentkit_allow_loopback
def test_a_collector_that_is_down_is_one_warning_in_the_summary(project: pytest.Pytester) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = project.runpytest("scenarios", "--snapshot-update", "--agentkit-otlp-endpoint",
                               f"http://127.0.0.1:{port}/v1/traces")

    result.assert_outcomes(passed=2)
    assert result.stdout.str().count("agentkit: warning: could not send the spans of 2 runs") == 1


def test_a_phoenix_export_imported_as_a_scenario_replays_offline_in_pytest(
        project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import shutil

    from agentkit.cli import main

    fixture = Path(__file__).parents[1] / "otel" / "fixtures" / "llamaindex_phoenix.json"
    shutil.copy(fixture, project.path / "phoenix_export.json")
    monkeypatch.chdir(project.path)
    assert main(["import-trace", "phoenix_export.json", "--out", "scenarios/phoenix_case.yaml"],
                out=io.StringIO()) == 0

    result = project.runpytest("scenarios/phoenix_case.yaml", "-v")

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*phoenix_case.yaml::function_calling PASSED*"])
