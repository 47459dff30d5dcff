"""Where spans go: an OTLP-JSON file and an OTLP/HTTP endpoint, from `agentkit run` and
`agentkit report`; a collector that is down costs one warning, never the run."""

from __future__ import annotations

import shutil
import socket
import sys
from pathlib import Path

import pytest

from agentkit.otel import OtelMissingError, require_sdk
from agentkit.otel.settings import resolve_endpoint
from otel_helpers import REPO, Receiver, attrs, spans_of


@pytest.mark.agentkit_allow_loopback
def test_run_sends_every_runs_spans_to_the_endpoint(cli, bundled, receiver):
    outcome = cli("run", bundled("single_tool_call"), "--snapshots", "off",
                  "--otlp-endpoint", receiver.url)

    assert outcome.code == 0
    assert len(receiver.requests) == 1
    assert receiver.requests[0]["path"] == "/v1/traces"
    roots = sorted(s.name for s in receiver.spans() if not s.parent_span_id)
    assert roots == ["single_tool_call[function_agent]", "single_tool_call[function_calling]",
                     "single_tool_call[react]", "single_tool_call[react_agent]"]
    assert f"sent 4 runs to {receiver.url}" in outcome.out


@pytest.mark.agentkit_allow_loopback
def test_the_standard_endpoint_variable_is_a_base_url(cli, bundled, receiver, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url.removesuffix("/v1/traces"))
    outcome = cli("run", bundled("single_tool_call"), "--agents", "react", "--snapshots", "off")

    assert outcome.code == 0
    assert [r["path"] for r in receiver.requests] == ["/v1/traces"]


def test_an_endpoint_without_a_path_gets_the_traces_path():
    assert resolve_endpoint("http://127.0.0.1:6006", {}) == "http://127.0.0.1:6006/v1/traces"
    assert resolve_endpoint(None, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://h/x"}) == \
        "http://h/x"
    assert resolve_endpoint(None, {}) is None


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow  # waits for a refused collector
@pytest.mark.agentkit_allow_loopback
def test_a_collector_that_is_down_warns_once_and_the_run_still_passes(cli, bundled):
    outcome = cli("run", bundled("single_tool_call"), "--snapshots", "off", "--otlp-endpoint",
                  f"http://127.0.0.1:{_closed_port()}/v1/traces", "--otel-out", "s.json")

    assert outcome.code == 0
    assert outcome.err.count("warning") == 1
    assert "could not send the spans of 4 runs" in outcome.err
    assert "Connection refused" in outcome.err
    assert len(spans_of(Path("s.json"))) == 20  # the file is written all the same


@pytest.mark.slow  # spans sent to a loopback collector
@pytest.mark.agentkit_allow_loopback
def test_a_collector_that_refuses_is_asked_once_and_warned_about_once(cli, bundled):
    refusing = Receiver(status=400)
    try:
        outcome = cli("run", bundled("single_tool_call"), "--snapshots", "off",
                      "--otlp-endpoint", refusing.url)
    finally:
        refusing.close()

    assert outcome.code == 0
    assert len(refusing.requests) == 1
    assert outcome.err.count("warning") == 1


def test_a_failing_run_keeps_its_exit_code_and_is_exported(cli, bundled):
    scenario = bundled("single_tool_call")
    scenario.write_text(scenario.read_text().replace('contains: "5"', 'contains: "6"'))
    outcome = cli("run", scenario, "--agents", "react", "--snapshots", "off", "--otel-out",
                  "s.json")

    assert outcome.code == 1
    assert spans_of(Path("s.json"))[0]["name"] == "single_tool_call[react]"


def test_report_exports_each_run_it_compares(cli, bundled):
    bundled("single_tool_call", "parallel_lookups")
    outcome = cli("report", "scenarios", "--agents", "react,llm_compiler", "--out", "report",
                  "--snapshots", "off", "--otel-out", "spans.json")

    assert outcome.code == 0, outcome.out + outcome.err
    roots = [s["name"] for s in spans_of(Path("spans.json")) if "parentSpanId" not in s]
    assert roots == ["parallel_lookups[llm_compiler]", "parallel_lookups[react]",
                     "single_tool_call[react]"]


def test_otel_out_that_is_a_folder_is_a_usage_error_before_anything_runs(cli, bundled):
    Path("spans").mkdir()
    outcome = cli("run", bundled("single_tool_call"), "--otel-out", "spans")

    assert outcome.code == 2
    assert "--otel-out spans: is a folder" in outcome.err
    assert "PASS" not in outcome.out


def test_without_the_otel_extra_exporting_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)

    with pytest.raises(OtelMissingError, match=r"pip install 'agentkit\[otel\]'"):
        require_sdk("--otel-out")


def test_a_run_that_could_not_start_is_not_exported(cli, tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("format: 1\nname: broken\ntools:\n  - ref: nowhere_at_all:add\n"
                      "turns:\n  - user: hi\nagents:\n  react:\n    script: [\"Answer: hi\"]\n")
    outcome = cli("run", broken, "--snapshots", "off", "--otel-out", "s.json")

    assert outcome.code == 2
    assert not Path("s.json").exists()


def test_eval_exports_every_sample_it_judges_as_a_trace_with_its_sample(cli):
    shutil.copytree(REPO / "scenarios" / "live", "live",
                    ignore=shutil.ignore_patterns("__pycache__"))

    outcome = cli("eval", "live/live_compare.yaml", "--agents", "function_calling", "--models",
                  "smollm2-135m-instruct", "--samples", "10", "--out", "reports/eval",
                  "--otel-out", "eval.json")

    assert outcome.code == 0, outcome.out + outcome.err
    assert "wrote " in outcome.out and " spans of 10 runs to eval.json" in outcome.out
    roots = [s for s in spans_of(Path("eval.json")) if "parentSpanId" not in s]
    assert [attrs(r)["agentkit.sample"] for r in roots] == list(range(10))
    assert {r["name"] for r in roots} == {"live_compare[function_calling]"}
