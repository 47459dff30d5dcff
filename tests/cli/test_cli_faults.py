"""``agentkit faults``: a scenario's fault variants under its agent types offline, every cell
classified, the matrix report, traces that are the same bytes on every run."""

from __future__ import annotations

import io
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from agentkit.cli import main
from cli_helpers import Outcome

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "faults"
SCENARIO = EXAMPLE / "scenarios" / "order_support.yaml"


def _files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def _copy(tmp_path: Path, text: str) -> Path:
    shutil.copy(EXAMPLE / "order_desk.py", tmp_path / "order_desk.py")
    path = tmp_path / "order_support.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_small_matrix_is_classified_reported_and_the_same_bytes_twice(
        cli: Callable[..., Outcome], tmp_path: Path) -> None:
    options = ("--kinds", "timeout,truncate", "--agents", "react,function_calling")

    first = cli("faults", SCENARIO, *options, "--out", tmp_path / "a",
                "--junit-xml", tmp_path / "a" / "junit.xml")
    second = cli("faults", SCENARIO, *options, "--out", tmp_path / "b",
                 "--junit-xml", tmp_path / "b" / "junit.xml")

    assert first.code == 0 and second.code == 0, first.err
    assert "order_support: 6 fault variants × 2 agent types (react, function_calling)" in first.out
    assert "  react: 3 failed safely, 3 recovered" in first.out
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    report = (tmp_path / "a" / "faults.md").read_text(encoding="utf-8")
    assert ("| `lookup_order#1:timeout` | [recovered](traces/order_support/react/"
            "lookup_order-1-timeout.json) ([timeline](timelines/order_support/react/"
            "lookup_order-1-timeout.svg)) |") in report
    assert "| react | 3 | 3 | 0 | 0 | 0 | 0 |" in report
    assert (tmp_path / "a" / "traces" / "order_support" / "react" /
            "lookup_order-1-timeout.json").is_file()
    timeline = (tmp_path / "a" / "timelines" / "order_support" / "react" /
                "lookup_order-1-timeout.svg").read_text(encoding="utf-8")
    assert timeline.startswith("<svg") and "lookup_order" in timeline
    junit = (tmp_path / "a" / "junit.xml").read_text(encoding="utf-8")
    assert 'name="order_support[react]~lookup_order#1:truncate"' in junit
    assert '<property name="fault_class" value="failed_safely" />' in junit


@pytest.mark.slow
def test_a_three_tool_scenario_runs_33_variants_under_4_agent_types_byte_identically(
        cli: Callable[..., Outcome], tmp_path: Path) -> None:
    agents = ("--agents", "react,function_calling,llm_compiler,coa")

    first = cli("faults", SCENARIO, *agents, "--out", tmp_path / "a")
    second = cli("faults", SCENARIO, *agents, "--out", tmp_path / "b")

    assert first.code == 0 and second.code == 0, first.err
    assert "33 fault variants × 4 agent types" in first.out
    traces = [name for name in _files(tmp_path / "a") if name.startswith("traces")]
    assert len(traces) == 33 * 4
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    report = (tmp_path / "a" / "faults.md").read_text(encoding="utf-8")
    assert "could not run" in report and not re.search(r"\| error \|", report)


def test_a_class_the_scenario_does_not_allow_fails_naming_the_cell(
        cli: Callable[..., Outcome], tmp_path: Path) -> None:
    text = SCENARIO.read_text(encoding="utf-8").replace(
        "on_fault: [recovered, failed_safely]", "on_fault: [recovered]")
    path = _copy(tmp_path, text)

    result = cli("faults", path, "--kinds", "truncate", "--tools", "lookup_order",
                 "--agents", "react", "--out", tmp_path / "out")

    assert result.code == 1
    assert ("FAIL order_support[react]~lookup_order#1:truncate: under "
            "lookup_order#1:truncate the run failed safely") in result.out


def test_an_unknown_kind_is_a_usage_error(cli: Callable[..., Outcome], tmp_path: Path) -> None:
    result = cli("faults", SCENARIO, "--kinds", "timeout,explode", "--out", tmp_path)

    assert result.code == 2
    assert "`explode` is not a fault kind (kinds: error, timeout," in result.err


def test_the_cli_reference_shows_the_help_verbatim(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    out = io.StringIO()
    assert main(["faults", "--help"], out=out) == 0
    page = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    section = page.split("### `agentkit faults`\n", 1)[1].split("\n### ", 1)[0]

    assert f"```text\n{out.getvalue()}```" in section


_RECORDED = """\
format: 1
name: order
tools:
  - ref: order_desk:lookup_order
turns:
  - user: {question}
expect:
  answer: {{contains: "2026-11-05"}}
  on_fault: [recovered, failed_safely]
agents:
  function_calling:
    params: {{max_function_calls: 1}}
    recording: cassettes/order.function_calling.yaml
"""


def _answering(messages: list[dict], tools: list[dict]) -> object:
    """A model that looks the order up, then answers from what the tool said."""
    from agentkit.llms.mock import tool_call

    if messages[-1]["role"] == "user":
        return tool_call("lookup_order", order_id="A-1001")
    if "2026-11-05" in str(messages[-1].get("content")):
        return "Your order A-1001 arrives on 2026-11-05."
    return "Sorry, I could not look up your order right now."


def test_base_url_records_each_variants_continuation_then_the_matrix_replays_offline(
        cli: Callable[..., Outcome], tmp_path: Path, fake_openai_endpoint) -> None:
    from cli_helpers import FAKE_URL

    path = _copy(tmp_path, _RECORDED.format(question="Where is my order A-1001?"))
    live = fake_openai_endpoint([_answering] * 6)
    assert cli("record", path, "--agent", "function_calling", "--base-url", FAKE_URL).code == 0
    assert live.calls == 2
    options = ("--kinds", "error,timeout,empty,truncate", "--tools", "lookup_order", "--out",
               tmp_path / "report")

    recorded = cli("faults", path, *options, "--base-url", FAKE_URL, "--model", "m1")
    offline = cli("faults", path, *options)

    assert recorded.code == 0, recorded.out + recorded.err
    assert live.calls == 2 + 4  # one continuation per variant; the shared prefix replayed
    assert ("order [function_calling]: recording each fault variant's continuation with m1 at "
            f"{FAKE_URL} (from the recorded run up to its fault)") in recorded.out
    assert "  lookup_order#1:truncate: 1 call recorded" in recorded.out
    assert ("order.function_calling.yaml: 2 exchanges of the recorded run, shared; 4 recorded "
            "after faults") in recorded.out
    assert offline.code == 0, offline.out
    assert "order: 4 fault variants × 1 agent types (function_calling)" in offline.out
    assert "  function_calling: 4 failed safely" in offline.out


def test_base_url_over_a_changed_prefix_says_the_recording_no_longer_matches(
        cli: Callable[..., Outcome], tmp_path: Path, fake_openai_endpoint) -> None:
    from cli_helpers import FAKE_URL

    path = _copy(tmp_path, _RECORDED.format(question="Where is my order A-1001?"))
    live = fake_openai_endpoint([_answering] * 2)
    assert cli("record", path, "--agent", "function_calling", "--base-url", FAKE_URL).code == 0
    path.write_text(_RECORDED.format(question="Where's order A-1001?"), encoding="utf-8")

    result = cli("faults", path, "--kinds", "error", "--out", tmp_path / "report",
                 "--base-url", FAKE_URL)

    assert result.code == 2 and live.calls == 2  # the recording's; nothing since
    assert (f"{path}:12: agents.function_calling: the recorded prefix no longer matches: the "
            "run of `order` under function_calling does not replay its recording, which the "
            "fault variants continue from; re-record it (agentkit record") in result.err
    assert 'first difference (recorded -> now), at messages[0].content: "Where is my order ' \
           'A-1001?" -> "Where\'s order A-1001?"' in result.err


_WRONG_AFTER_A_LATE_OUTPUT = """\
format: 1
name: order
tools:
  - ref: order_desk:lookup_order
    faults: [{fault}]
turns:
  - user: Where is my order A-1001?
expect:
  answer: {{contains: "2026-11-05"}}
  on_fault: [recovered, failed_safely, fabricated]
agents:
  function_calling:
    script:
      - tool_calls: [{{name: lookup_order, args: {{order_id: A-1001}}}}]
      - Your order A-1001 arrives next week.
"""


def test_an_agent_wrong_after_a_late_output_failed_in_faults_and_report(
        cli: Callable[..., Outcome], tmp_path: Path) -> None:
    # a latency fault withholds nothing: the wrong answer is the agent's own failure, which
    # fails the run with its ordinary problem though on_fault allows every other class
    matrix = cli("faults", _copy(tmp_path, _WRONG_AFTER_A_LATE_OUTPUT.format(fault="")),
                 "--kinds", "latency", "--out", tmp_path / "matrix")
    report = cli("report", _copy(tmp_path, _WRONG_AFTER_A_LATE_OUTPUT.format(
        fault="{call: 1, kind: latency, after: 5}")), "--out", tmp_path / "report")

    assert matrix.code == 1
    assert "  function_calling: 1 failed" in matrix.out
    assert ("FAIL order[function_calling]~lookup_order#1:latency: final answer 'Your order "
            "A-1001 arrives next week.' does not match contains '2026-11-05'") in matrix.out
    assert "| function_calling | 0 | 0 | 0 | 0 | 1 | 0 | 0 |" in (
        tmp_path / "matrix" / "faults.md").read_text(encoding="utf-8")
    assert report.code == 1
    assert "FAIL  order[function_calling]" in report.out
    assert "does not match contains '2026-11-05'" in report.out
