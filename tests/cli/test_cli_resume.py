"""A resumed scenario made wrong on purpose -- a step the recorded run does not have, a
recording that changed -- and what every command says about it."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from cli_helpers import Outcome

REPO = Path(__file__).resolve().parents[2]
STEP_ERROR = ("agents.agent_workflow.resume_from.step: step 7 is out of range: the recorded "
              "run of `function_agent` has 3 steps")
CHANGED = "the recording of `function_agent` changed: replaying its first 1 step no longer " \
          "gives its recorded trace"


@pytest.fixture
def resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled checkpoint_resume scenario, its cassette and snapshots, in ``tmp_path``
    (the current folder)."""
    for name in ("checkpoint_resume.yaml", "cassettes/checkpoint_resume.function_agent.yaml",
                 "__snapshots__/checkpoint_resume"):
        source, target = REPO / "scenarios" / name, tmp_path / "scenarios" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy)(source, target)
    monkeypatch.chdir(tmp_path)
    return Path("scenarios/checkpoint_resume.yaml")


def _wrong_step(path: Path) -> None:
    path.write_text(path.read_text().replace("step: 1}", "step: 7}"))


def _changed_recording(path: Path) -> None:
    cassette = path.parent / "cassettes" / "checkpoint_resume.function_agent.yaml"
    text = cassette.read_text()
    first = text.index("tool_kwargs:")  # the recorded add call: b 3 -> 4
    cassette.write_text(text[:first] + text[first:].replace("b: 3", "b: 4", 1))


@pytest.mark.parametrize("command", [
    ["list"], ["run"], ["replay"], ["record", "--agent", "agent_workflow", "--base-url",
                                    "http://127.0.0.1:9/v1"]])
def test_a_step_the_recorded_run_lacks_stops_the_command_at_its_line(
        cli: Callable[..., Outcome], resume: Path, command: list[str]):
    _wrong_step(resume)

    outcome = cli(command[0], resume, *command[1:])

    assert outcome.code == 2
    assert f"{resume}:26: {STEP_ERROR}" in outcome.err


def test_a_step_the_recorded_run_lacks_is_an_error_row_of_the_report(
        cli: Callable[..., Outcome], resume: Path):
    _wrong_step(resume)

    outcome = cli("report", resume, "--out", "out")

    assert outcome.code == 2  # bad input, as for the other commands
    assert STEP_ERROR in outcome.out
    assert STEP_ERROR in Path("out/report.md").read_text()


def test_a_changed_recording_fails_the_resumed_run_of_agentkit_run(
        cli: Callable[..., Outcome], resume: Path):
    _changed_recording(resume)

    outcome = cli("run", resume, "--agents", "agent_workflow")

    assert outcome.code == 1
    problems = outcome.out.split("FAIL  checkpoint_resume[agent_workflow]")[1].splitlines()
    assert problems[1].strip().startswith(f"- {CHANGED}")  # the root cause comes first
    assert "args.b: 3 -> 4" in problems[4]


def test_a_changed_recording_fails_the_resumed_row_of_the_report(
        cli: Callable[..., Outcome], resume: Path):
    _changed_recording(resume)

    outcome = cli("report", resume, "--out", "out")

    assert outcome.code == 1
    assert CHANGED in outcome.out
    assert CHANGED in Path("out/report.md").read_text()


def test_a_changed_recording_fails_its_replay(cli: Callable[..., Outcome], resume: Path):
    _changed_recording(resume)

    outcome = cli("replay", resume)

    assert outcome.code == 1
    assert "no recorded exchange matches this request" in outcome.out


def test_the_report_puts_the_two_continuations_side_by_side(
        cli: Callable[..., Outcome], resume: Path):
    assert cli("report", resume, "--out", "out").code == 0

    markdown = Path("out/report.md").read_text()
    html = Path("out/report.html").read_text()

    assert ("| Step | function_agent (recorded) | agent_workflow (resumed) |\n"
            "| ---: | --- | --- |\n"
            '| 2 | multiply(a=5, b=4) → "20" | multiply(a=5, b=4) → "20" |\n'
            '| 3 | answer: "(2 + 3) * 4 = 20" | answer: "5 times 4 is 20." |') in markdown
    assert "checkpoint_resume[agent_workflow] replayed step 1 of the recorded run of " \
           "function_agent" in markdown
    assert "<h2>Resumed runs</h2>" in html
    assert "<td>answer: &quot;5 times 4 is 20.&quot;</td>" in html


def test_a_report_without_the_recorded_run_says_where_its_continuation_is(
        cli: Callable[..., Outcome], resume: Path):
    assert cli("report", resume, "--agents", "agent_workflow", "--out", "out").code == 0

    markdown = Path("out/report.md").read_text()

    assert "The recorded run of function_agent is not in this report (add function_agent " \
           "to --agents to see its continuation)." in markdown
    assert '| 3 | — | answer: "5 times 4 is 20." |' in markdown
