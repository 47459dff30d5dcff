"""The pytest items of a resumed scenario (the bundled checkpoint_resume): they pass, a step
the recorded run lacks is a collection error at its line, and a changed recording fails the
resumed item saying so."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def resume(pytester: pytest.Pytester) -> Path:
    """The bundled scenario, its cassette and snapshots in the inner project."""
    for name in ("checkpoint_resume.yaml", "cassettes/checkpoint_resume.function_agent.yaml",
                 "__snapshots__/checkpoint_resume"):
        source, target = REPO / "scenarios" / name, pytester.path / "scenarios" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy)(source, target)
    return pytester.path / "scenarios" / "checkpoint_resume.yaml"


@pytest.mark.slow  # inner pytest sessions
def test_the_resumed_scenario_passes_as_pytest_items(pytester: pytest.Pytester, resume: Path):
    pytester.runpytest().assert_outcomes(passed=2)


def test_a_step_the_recorded_run_lacks_is_a_collection_error_at_its_line(
        pytester: pytest.Pytester, resume: Path):
    resume.write_text(resume.read_text().replace("step: 1}", "step: 3}"))

    result = pytester.runpytest()

    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*scenarios/checkpoint_resume.yaml:26: agents.agent_workflow."
                                 "resume_from.step: step 3 is out of range*"])


def test_a_changed_recording_fails_the_resumed_item_saying_so(
        pytester: pytest.Pytester, resume: Path):
    cassette = resume.parent / "cassettes" / "checkpoint_resume.function_agent.yaml"
    text = cassette.read_text()
    first = text.index("tool_kwargs:")
    cassette.write_text(text[:first] + text[first:].replace("b: 3", "b: 4", 1))

    result = pytester.runpytest("-k", "agent_workflow")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*- the recording of `function_agent` changed: replaying its "
                                 "first 1 step no longer gives its recorded trace*"])
