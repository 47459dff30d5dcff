"""``agentkit list`` and ``agentkit run``."""

from __future__ import annotations

import errno
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from agentkit.core import files
from cli_helpers import Outcome

BUNDLED = Path(__file__).resolve().parents[2] / "scenarios"


def _only_react(adding: Path) -> Path:
    """`adding` without its (unrecorded) function_calling recording."""
    text = adding.read_text(encoding="utf-8")
    adding.write_text(text[:text.index("  function_calling:")], encoding="utf-8")
    return adding


def test_list_shows_scenarios_with_their_agent_types(cli: Callable[..., Outcome],
                                                     adding: Path) -> None:
    result = cli("list", adding)

    assert result.code == 0
    assert result.out.splitlines() == [
        f"adding  ({adding})",
        "  - react: script, 2 replies",
        "  - function_calling: recording cassettes/adding.function_calling.yaml"]


@pytest.mark.slow  # every bundled scenario under every agent type
def test_run_passes_on_the_bundled_scenarios(cli: Callable[..., Outcome]) -> None:
    result = cli("run", BUNDLED)

    assert result.code == 0
    assert result.out.endswith(" passed, 0 failed\n")
    assert "FAIL" not in result.out


def test_run_prints_the_problems_and_exits_1_when_a_scenario_fails(
        cli: Callable[..., Outcome], adding: Path) -> None:
    _only_react(adding)
    adding.write_text(adding.read_text(encoding="utf-8").replace("Answer: 2 + 3 = 5",
                                                                 "Answer: 6"), encoding="utf-8")

    result = cli("run", adding, "--snapshots", "off")

    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0].startswith("FAIL  adding[react] ")
    assert lines[1:] == ["      - final answer '6' does not match contains '5'",
                         "      failure attributed to the agent: no other component is shown "
                         "at fault",
                         "0 passed, 1 failed"]


def test_run_agents_filter_runs_only_those_agent_types(cli: Callable[..., Outcome],
                                                       adding: Path) -> None:
    result = cli("run", adding, "--agents", "react", "--snapshots", "off")

    assert result.code == 0
    assert [line.split()[1] for line in result.out.splitlines()[:-1]] == ["adding[react]"]


def test_run_with_an_unknown_agent_type_is_a_usage_error(cli: Callable[..., Outcome],
                                                         adding: Path) -> None:
    result = cli("run", adding, "--agents", "reakt")

    assert result.code == 2
    assert "agentkit: error: --agents: unknown agent type `reakt`; did you mean `react`?" in \
        result.err
    assert result.out == ""


def test_run_with_agent_types_no_scenario_declares_is_a_usage_error(
        cli: Callable[..., Outcome], adding: Path) -> None:
    result = cli("run", _only_react(adding), "--agents", "function_calling")

    assert result.code == 2
    assert "no scenario declares the agent type(s) function_calling" in result.err


def test_run_trace_dir_writes_one_trace_per_scenario_and_agent_type(
        cli: Callable[..., Outcome], adding: Path, tmp_path: Path) -> None:
    result = cli("run", _only_react(adding), "--trace-dir", tmp_path / "traces",
                 "--snapshots", "off")

    assert result.code == 0
    assert [p.name for p in (tmp_path / "traces").iterdir()] == ["adding.react.json"]
    trace = json.loads((tmp_path / "traces" / "adding.react.json").read_text(encoding="utf-8"))
    assert (trace["scenario"], trace["agent"]) == ("adding", "react")
    assert trace["turns"][0]["response"] == "2 + 3 = 5"


def test_run_without_the_cassette_of_a_recording_says_how_to_record(
        cli: Callable[..., Outcome], adding: Path) -> None:
    result = cli("run", adding, "--agents", "function_calling")

    assert result.code == 2
    assert "adding.function_calling.yaml: cannot read cassette" in result.err
    assert f"fix: record it with `agentkit record {adding} --agent function_calling`" in \
        result.err


def test_run_malformed_scenario_exits_2_naming_file_line_and_field(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path]) -> None:
    broken = write("scenarios/broken.yaml", """\
        format: 1
        turns:
          - user: hi
        agents:
          react:
            scrip: [hello]
        """)

    result = cli("run", broken)

    assert result.code == 2
    assert f"{broken}:6: agents.react.scrip: unknown field `scrip`; did you mean `script`?" in \
        result.err
    assert "Traceback" not in result.err


def test_run_missing_path_exits_2(cli: Callable[..., Outcome], tmp_path: Path) -> None:
    result = cli("run", tmp_path / "nowhere")

    assert result.code == 2
    assert f"agentkit: error: {tmp_path / 'nowhere'}: no such scenario file or directory" in \
        result.err


def test_run_trace_dir_that_cannot_be_a_folder_exits_2_before_running(
        cli: Callable[..., Outcome], adding: Path, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# a file", encoding="utf-8")

    result = cli("run", _only_react(adding), "--trace-dir", tmp_path / "README.md" / "traces")

    assert result.code == 2 and "PASS" not in result.out
    assert (f"--trace-dir {tmp_path / 'README.md' / 'traces'}: cannot write there "
            f"({tmp_path / 'README.md'} is not a writable folder)") in result.err


@pytest.mark.parametrize("command, option", [("run", "--trace-dir"), ("report", "--out")])
def test_an_output_folder_named_longer_than_the_file_system_allows_exits_2_before_running(
        cli: Callable[..., Outcome], adding: Path, tmp_path: Path, command: str,
        option: str) -> None:
    folder = tmp_path / "missing" / ("a" * 300) / "out"

    result = cli(command, _only_react(adding), option, folder)

    assert result.code == 2 and "PASS" not in result.out
    assert f"{option} {folder}: cannot be a folder: File name too long" in result.err


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize("command, option", [("run", "--trace-dir"), ("report", "--out")])
def test_an_output_folder_the_file_system_refuses_exits_2_before_running(
        cli: Callable[..., Outcome], adding: Path, command: str, option: str) -> None:
    # /proc accepts no new folders, though access() says it is writable to root (as in CI
    # containers): the check must try, not ask.
    folder = Path("/proc") / "agentkit-out" / "traces"

    result = cli(command, _only_react(adding), option, folder)

    assert result.code == 2 and "PASS" not in result.out
    assert f"{option} {folder}: cannot write there (/proc refuses new folders:" in result.err


def test_report_out_that_is_a_file_exits_2_before_running_and_leaves_it(
        cli: Callable[..., Outcome], adding: Path, tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# keep me", encoding="utf-8")

    result = cli("report", _only_react(adding), "--agents", "react", "--out", readme)

    assert result.code == 2 and result.out == ""
    assert f"--out {readme}: is a file, not a folder" in result.err
    assert readme.read_text(encoding="utf-8") == "# keep me"


def test_run_with_a_malformed_cassette_exits_2_as_a_cassette_error_not_an_agent_failure(
        cli: Callable[..., Outcome], adding: Path) -> None:
    cassette = adding.parent / "cassettes" / "adding.function_calling.yaml"
    cassette.parent.mkdir()
    cassette.write_text("format: 1\nexchanges:\n  - request: {}\n    response:\n"
                        "      usage: {prompt_tokens: many}\n", encoding="utf-8")

    result = cli("run", adding, "--agents", "function_calling")

    assert result.code == 2 and "FAIL" not in result.out
    assert re.search(rf"{re.escape(str(cassette))}:5: exchanges\.0\.response\.usage\."
                     r"prompt_tokens: .+, got 'many'$", result.err, re.MULTILINE), result.err


def test_run_prints_times_in_the_one_seconds_format(cli: Callable[..., Outcome],
                                                    adding: Path) -> None:
    text = _only_react(adding).read_text(encoding="utf-8")
    adding.write_text(text.replace("  react:\n", "  react:\n    latency: 0.333333\n"),
                      encoding="utf-8")

    result = cli("run", adding)

    assert "wall=0.67s serial=0.67s" in result.out.splitlines()[0]


def test_report_against_a_baseline_exits_1_on_a_cost_regression_naming_it(
        cli: Callable[..., Outcome], adding: Path, tmp_path: Path) -> None:
    scenario = _only_react(adding)
    assert cli("report", scenario, "--out", tmp_path / "old", "--snapshots", "off").code == 0
    scenario.write_text(scenario.read_text(encoding="utf-8").replace(
        "  react:\n", "  react:\n    latency: 2.0\n"), encoding="utf-8")

    result = cli("report", scenario, "--out", tmp_path / "new", "--baseline",
                 tmp_path / "old" / "report.json", "--snapshots", "off")

    assert result.code == 1
    assert ("REGRESSION  adding[react]: wall time 0.00s → 4.00s (+4.00s; allowed: +10% or "
            "+0.25s, whichever is more)") in result.out.splitlines()


def test_report_against_a_baseline_within_the_thresholds_exits_0(
        cli: Callable[..., Outcome], adding: Path, tmp_path: Path) -> None:
    scenario = _only_react(adding)
    cli("report", scenario, "--out", tmp_path / "old", "--snapshots", "off")
    scenario.write_text(scenario.read_text(encoding="utf-8").replace(
        "  react:\n", "  react:\n    latency: 2.0\n") + "thresholds:\n  wall_time: {absolute: 5}\n",
        encoding="utf-8")

    result = cli("report", scenario, "--out", tmp_path / "new", "--baseline",
                 tmp_path / "old" / "report.json", "--snapshots", "off")

    assert result.code == 0 and "REGRESSION" not in result.out


def test_report_against_a_baseline_with_a_5000_digit_integer_exits_2_naming_its_place(
        cli: Callable[..., Outcome], adding: Path, tmp_path: Path) -> None:
    scenario = _only_react(adding)
    assert cli("report", scenario, "--out", tmp_path / "old", "--snapshots", "off").code == 0
    baseline = tmp_path / "old" / "report.json"
    text = baseline.read_text(encoding="utf-8")
    baseline.write_text(text.replace('"steps": 2', '"steps": ' + "9" * 5_000, 1),
                        encoding="utf-8")
    line = next(i for i, t in enumerate(baseline.read_text().splitlines(), 1) if "999" in t)

    result = cli("report", scenario, "--out", tmp_path / "new", "--baseline", baseline,
                 "--snapshots", "off")

    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.startswith(f"agentkit: error: {baseline}:{line}:")
    assert "an integer of 5,000 digits, more than the 4,300 agentkit reads" in result.err


@pytest.mark.parametrize("kind", ["scenario", "cassette"])
def test_a_5000_digit_integer_in_a_scenario_or_cassette_exits_2_naming_its_line(
        cli: Callable[..., Outcome], tmp_path: Path, kind: str) -> None:
    scenario = tmp_path / "s.yaml"
    cassette = tmp_path / "c.yaml"
    scenario.write_text("format: 1\nname: s\nturns:\n  - user: hi\nagents:\n  function_calling:\n"
                        "    recording: c.yaml\n" + (f"    unknown: {'9' * 5_000}\n"
                                                     if kind == "scenario" else ""))
    cassette.write_text(f"format: 3\nexchanges: []\nunknown: {'9' * 5_000}\n")
    path, line = (scenario, 8) if kind == "scenario" else (cassette, 3)

    result = cli("run", scenario, "--snapshots", "off")

    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.startswith(f"agentkit: error: {path}:{line}:")
    assert "an integer of 5,000 digits, more than the 4,300 agentkit reads" in result.err


def test_a_full_disk_is_one_error_line_exit_2_and_nothing_written(
        cli: Callable[..., Outcome], adding: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    def full(path: Path, text: str, *, mode_of: Path) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files, "_write_synced", full)

    result = cli("run", _only_react(adding), "--trace-dir", tmp_path / "traces",
                 "--snapshots", "off")

    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.startswith("agentkit: error: ")
    assert result.err.endswith(": cannot write it: no space left on device (nothing written)\n")
    assert not [p for p in (tmp_path / "traces").rglob("*") if p.is_file()]
