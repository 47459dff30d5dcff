"""``pytest --record-mode=... --samples N``: one item per scenario × agent type records N
samples, and every later run replays and judges all of them offline."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from plugin_project import FAKE_ENDPOINT_CONFTEST, FAKE_URL, RECORDED, write

CASSETTE = "scenarios/cassettes/recorded.function_calling.yaml"
SAMPLED_ENDPOINT = FAKE_ENDPOINT_CONFTEST.replace(
    'script = [tool_call("add", a=2, b=3), "2 + 3 = 5"]',
    'script = [tool_call("add", a=2, b=3), "2 + 3 = 5", tool_call("add", a=2, b=3), "2 + 3 = 6",'
    ' tool_call("add", a=2, b=3), "2 + 3 = 5"]')
RECORD = ("--record-mode=rewrite", f"--agentkit-base-url={FAKE_URL}", "--samples", "3")


@pytest.fixture(autouse=True)
def no_openai_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTKIT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    yield


@pytest.fixture
def sampled_project(project: pytest.Pytester) -> pytest.Pytester:
    assert SAMPLED_ENDPOINT != FAKE_ENDPOINT_CONFTEST
    write(project, "scenarios/recorded.yaml", RECORDED + "min_pass_rate: 0.5\n")
    write(project, "conftest.py", SAMPLED_ENDPOINT)
    return project


def test_samples_records_n_runs_into_the_cassette_in_one_item(
        sampled_project: pytest.Pytester) -> None:
    result = sampled_project.runpytest("scenarios/recorded.yaml", *RECORD)

    result.assert_outcomes(passed=1)
    cassette = yaml.safe_load((sampled_project.path / CASSETTE).read_text(encoding="utf-8"))
    assert (cassette["samples"], cassette["complete"]) == (3, [0, 1, 2])
    answers = [e["response"]["message"]["content"] for e in cassette["exchanges"]][1::2]
    assert answers == ["2 + 3 = 5", "2 + 3 = 6", "2 + 3 = 5"]


@pytest.mark.slow  # an inner pytest session (pytester)
def test_the_replay_item_judges_all_samples_offline(sampled_project: pytest.Pytester) -> None:
    sampled_project.runpytest("scenarios/recorded.yaml", *RECORD).assert_outcomes(passed=1)

    result = sampled_project.runpytest("scenarios/recorded.yaml", "-v")

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*recorded.yaml::function_calling PASSED*"])


@pytest.mark.slow  # an inner pytest session (pytester)
def test_the_replay_item_fails_when_the_samples_miss_min_pass_rate(
        sampled_project: pytest.Pytester) -> None:
    sampled_project.runpytest("scenarios/recorded.yaml", *RECORD).assert_outcomes(passed=1)
    scenario = sampled_project.path / "scenarios" / "recorded.yaml"
    scenario.write_text(scenario.read_text("utf-8").replace("min_pass_rate: 0.5",
                                                            "min_pass_rate: 0.99"), "utf-8")

    result = sampled_project.runpytest("scenarios/recorded.yaml")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*scenario recorded [[]function_calling[]] failed on its samples (67% (2/3, 95% "
        "interval 21-94%)):",
        "*below min_pass_rate 99% beyond noise*"])


def test_samples_zero_is_a_usage_error(sampled_project: pytest.Pytester) -> None:
    result = sampled_project.runpytest("scenarios/recorded.yaml", "--samples", "0")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--samples: give at least 1 sample, got 0*"])
