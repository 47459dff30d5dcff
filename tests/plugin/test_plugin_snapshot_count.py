"""Each scenario item is judged once, so syrupy counts one snapshot per item: generated,
updated or passed -- never two for one item."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

import agentkit.verdict._verdict as verdict_module
from plugin_project import FAKE_ENDPOINT_CONFTEST, FAKE_URL, RECORDED, write

SNAPSHOT = "scenarios/__snapshots__/adding/react.json"


@pytest.fixture(autouse=True)
def no_openai_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # under xdist, syrupy in the inner session would take itself for a worker and not report
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTKIT_MODEL", "PYTEST_XDIST_WORKER"):
        monkeypatch.delenv(name, raising=False)
    yield


def _counted(result: pytest.RunResult) -> str:
    """syrupy's report line: ``1 snapshot passed. 1 snapshot generated.`` and the like."""
    lines = [line for line in result.outlines if re.fullmatch(r"(\d+ snapshots? \w+\. ?)+",
                                                              line.strip())]
    assert len(lines) == 1, [line for line in result.outlines if "snapshot" in line]
    return lines[0].strip()


def test_a_missing_snapshot_is_counted_once_as_generated(project: pytest.Pytester) -> None:
    result = project.runpytest("scenarios/adding.yaml::react", "--snapshot-update")

    result.assert_outcomes(passed=1)
    assert _counted(result) == "1 snapshot generated."
    assert (project.path / SNAPSHOT).is_file()


def test_a_changed_snapshot_is_counted_once_as_updated(project: pytest.Pytester) -> None:
    project.runpytest("scenarios/adding.yaml::react", "--snapshot-update")
    scenario = project.path / "scenarios" / "adding.yaml"
    scenario.write_text(scenario.read_text("utf-8").replace("Answer: 2 + 3 = 5",
                                                            "Answer: the sum is 5"), "utf-8")

    result = project.runpytest("scenarios/adding.yaml::react", "--snapshot-update")

    result.assert_outcomes(passed=1)
    assert _counted(result) == "1 snapshot updated."


@pytest.mark.slow  # an inner pytest session (pytester)
def test_an_unchanged_snapshot_is_counted_once_as_passed(project: pytest.Pytester) -> None:
    project.runpytest("scenarios/adding.yaml::react", "--snapshot-update")

    result = project.runpytest("scenarios/adding.yaml::react")

    result.assert_outcomes(passed=1)
    assert _counted(result) == "1 snapshot passed."


SAMPLED_ENDPOINT = FAKE_ENDPOINT_CONFTEST.replace(
    'script = [tool_call("add", a=2, b=3), "2 + 3 = 5"]',
    'script = [tool_call("add", a=2, b=3), "2 + 3 = 5"] * 3')


def test_a_sampled_item_is_judged_once_per_sample_and_counts_one_snapshot(
        project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    assert SAMPLED_ENDPOINT != FAKE_ENDPOINT_CONFTEST
    write(project, "scenarios/recorded.yaml", RECORDED)
    write(project, "conftest.py", SAMPLED_ENDPOINT)
    project.runpytest("scenarios/recorded.yaml", "--record-mode=rewrite",
                      f"--agentkit-base-url={FAKE_URL}", "--samples", "3"
                      ).assert_outcomes(passed=1)
    snapshot = project.path / "scenarios" / "__snapshots__" / "recorded" / "function_calling.json"
    snapshot.unlink()
    runs = []
    run_checks = verdict_module.run_checks

    def checked(run: object) -> object:
        runs.append(run)
        return run_checks(run)  # type: ignore[arg-type]

    monkeypatch.setattr(verdict_module, "run_checks", checked)

    result = project.runpytest("scenarios/recorded.yaml", "--snapshot-update")

    result.assert_outcomes(passed=1)
    assert len(runs) == 3
    assert _counted(result) == "1 snapshot generated."
    assert snapshot.is_file()


@pytest.mark.parametrize("answer", ["the sum is 5", "the sum is six"],
                         ids=["passing-its-checks", "failing-its-checks"])
def test_a_trace_that_differs_from_its_snapshot_is_counted_once_as_failed(
        project: pytest.Pytester, answer: str) -> None:
    # the item says the trace differs; syrupy's footer must not say its snapshot passed, also
    # when the run fails its own checks (its snapshot is kept, not written)
    project.runpytest("scenarios/adding.yaml::react", "--snapshot-update")
    scenario = project.path / "scenarios" / "adding.yaml"
    scenario.write_text(scenario.read_text("utf-8").replace("Answer: 2 + 3 = 5",
                                                            f"Answer: {answer}"), "utf-8")

    result = project.runpytest("scenarios/adding.yaml::react")

    result.assert_outcomes(failed=1)
    assert "differs from its snapshot" in result.stdout.str()
    assert _counted(result) == "1 snapshot failed."
