"""The `otel` lane (``pytest -m otel``): a real OTLP receiver, Arize Phoenix on loopback.

A report run is sent to Phoenix with ``--otlp-endpoint``; the spans are read back through
Phoenix's REST API and their tree checked (runs, agents, LLM calls, tools, parents, virtual
timings). Phoenix's own OTLP export of a run is then imported back into a scenario that
replays offline.

Phoenix runs from ``scripts/phoenix`` (its own venv, installed on first use): the lane starts
it when none is running and stops what it started. Without it these tests skip, saying so;
with AGENTKIT_PHOENIX_REQUIRED=1 (as in CI) they fail instead.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentkit.cli import main

pytestmark = [pytest.mark.otel, pytest.mark.agentkit_allow_loopback]

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "phoenix"
EPOCH = datetime.fromisoformat("2026-01-01T00:00:00+00:00")


def _script(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), command], capture_output=True, text=True)


@pytest.fixture(scope="module")
def phoenix() -> Iterator[str]:
    url = os.environ.get("AGENTKIT_PHOENIX_URL") or _script("url").stdout.strip()
    started = False
    if not url:
        result = _script("start")
        if result.returncode == 0:
            url, started = result.stdout.strip(), True
        else:
            reason = f"Phoenix could not be started: {result.stderr.strip()[-800:]}"
            if os.environ.get("AGENTKIT_PHOENIX_REQUIRED"):
                pytest.fail(f"AGENTKIT_PHOENIX_REQUIRED is set but {reason}")
            pytest.skip(reason)
    yield url
    if started:
        _script("stop")


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def _spans(phoenix: str, trace_ids: list[str], expected: int) -> list[dict[str, Any]]:
    """The spans of these traces once Phoenix has taken in ``expected`` of them (it ingests in
    the background: asked again up to 60 times, half a second apart)."""
    query = urllib.parse.urlencode([("trace_id", t) for t in trace_ids] + [("limit", 1000)])
    found: list[dict[str, Any]] = []
    for _ in range(60):
        found = _get(f"{phoenix}/v1/projects/default/spans?{query}")["data"]
        if len(found) >= expected:
            return found
        time.sleep(0.5)
    return found


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def _seconds(stamp: str, since: str | None = None) -> float:
    """Seconds from ``since`` (a span's start; default the fixed epoch of stable exports)."""
    base = EPOCH if since is None else datetime.fromisoformat(since)
    return round((datetime.fromisoformat(stamp) - base).total_seconds(), 6)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("parallel_lookups", "team_handoff", "single_tool_call"):
        shutil.copy(ROOT / "scenarios" / f"{name}.yaml", tmp_path / f"{name}.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_report_run_sent_to_phoenix_reads_back_as_agent_llm_and_tool_span_trees(
        phoenix: str, project: Path) -> None:
    code, out = _run("report", ".", "--agents", "react,llm_compiler,agent_workflow",
                     "--out", "report", "--snapshots", "off", "--otel-out", "sent.json",
                     "--otlp-endpoint", f"{phoenix}/v1/traces")
    assert code == 0, out
    assert f"sent 4 runs to {phoenix}/v1/traces" in out
    sent = [s for rs in json.loads(Path("sent.json").read_text())["resourceSpans"]
            for ss in rs["scopeSpans"] for s in ss["spans"]]

    spans = _spans(phoenix, sorted({s["traceId"] for s in sent}), len(sent))

    assert len(spans) == len(sent)
    by_id = {s["context"]["span_id"]: s for s in spans}
    roots = sorted(s["name"] for s in spans if s["parent_id"] is None)
    assert roots == ["parallel_lookups[llm_compiler]", "parallel_lookups[react]",
                     "single_tool_call[react]", "team_handoff[agent_workflow]"]
    for span in spans:  # every parent arrived, and holds its children in time
        if span["parent_id"] is not None:
            parent = by_id[span["parent_id"]]
            assert _seconds(parent["start_time"]) <= _seconds(span["start_time"])
            assert _seconds(span["end_time"]) <= _seconds(parent["end_time"])
    kinds = {s["name"].split(" ")[0]: s["span_kind"] for s in spans}
    assert (kinds["invoke_agent"], kinds["chat"], kinds["execute_tool"]) == ("AGENT", "LLM",
                                                                             "TOOL")
    compiler = next(s for s in spans if s["name"] == "parallel_lookups[llm_compiler]")
    tree = [s for s in spans if s["context"]["trace_id"] == compiler["context"]["trace_id"]]
    plan = next(s for s in tree if s["name"] == "plan (round 1)")
    lookups = [s for s in tree if s["parent_id"] == plan["context"]["span_id"]
               and s["span_kind"] == "TOOL"]
    began = compiler["start_time"]  # the run ends at the export's moment, on real time
    assert [(_seconds(s["start_time"], began), _seconds(s["end_time"], began))
            for s in lookups] == [(0.0, 1.0)] * 4  # they overlap, as on agentkit's timeline
    assert abs(datetime.now(UTC) - datetime.fromisoformat(compiler["end_time"])
               ) < timedelta(minutes=10)  # in the backend's default time window
    team = [s for s in spans if s["name"].startswith("invoke_agent ")
            and by_id.get(s["parent_id"] or "", {}).get("name") == "invoke_workflow agent_workflow"]
    assert sorted(s["name"] for s in team) == ["invoke_agent calculator",
                                                "invoke_agent researcher"]
    chat = next(s for s in spans if s["span_kind"] == "LLM")
    assert chat["attributes"]["gen_ai.usage.input_tokens"] > 0


def test_a_run_exported_from_phoenix_imports_into_a_scenario_that_replays(
        phoenix: str, project: Path) -> None:
    code, out = _run("run", "single_tool_call.yaml", "--agents", "function_calling",
                     "--snapshots", "off", "--otel-out", "sent.json", "--otel-content",
                     "--otlp-endpoint", f"{phoenix}/v1/traces")
    assert code == 0, out
    sent = [s for rs in json.loads(Path("sent.json").read_text())["resourceSpans"]
            for ss in rs["scopeSpans"] for s in ss["spans"]]
    trace = sent[0]["traceId"]
    _spans(phoenix, [trace], len(sent))
    query = urllib.parse.urlencode({"trace_id": trace, "limit": 1000})
    with urllib.request.urlopen(f"{phoenix}/v1/projects/default/spans/otlpv1?{query}",
                                timeout=30) as response:
        Path("from_phoenix.json").write_bytes(response.read())

    code, out = _run("import-trace", "from_phoenix.json", "--out", "from_phoenix_case.yaml")
    assert code == 0, out
    code, out = _run("run", "from_phoenix_case.yaml")
    assert code == 0, out
    assert "1 passed, 0 failed" in out


def test_a_run_sent_again_is_a_trace_of_its_own_in_phoenix(phoenix: str, project: Path) -> None:
    traces = []
    for name in ("first.json", "again.json"):
        code, out = _run("run", "single_tool_call.yaml", "--agents", "react", "--snapshots",
                         "off", "--otel-out", name, "--otlp-endpoint", f"{phoenix}/v1/traces")
        assert code == 0, out
        sent = [s for rs in json.loads(Path(name).read_text())["resourceSpans"]
                for ss in rs["scopeSpans"] for s in ss["spans"]]
        traces.append((sent[0]["traceId"], len(sent)))

    assert traces[0][0] != traces[1][0]
    for trace, count in traces:  # both arrived whole: the second did not land on the first
        assert len(_spans(phoenix, [trace], count)) == count


def test_the_guides_phoenix_commands_run(phoenix: str, tmp_path: Path) -> None:
    # last in this module: the guide's `scripts/phoenix stop` stops the server the lane started
    from tests.otel.test_otel_doc import doc_commands, needs_phoenix, run_in_copy

    commands = [c for c in doc_commands() if needs_phoenix(c)]
    run_in_copy([*commands[:-1], 'test "$url" = "' + phoenix + '"', commands[-1]], tmp_path)

    assert (tmp_path / "reports" / "latest" / "report.md").is_file()
