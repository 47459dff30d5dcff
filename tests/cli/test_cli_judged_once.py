"""Every run is judged exactly once, whichever command runs it: a spy on the judgement (the
checks every verdict runs) sees one call per run -- one for a single case, one per sample
for a sampled case, which is then judged once on its samples."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import agentkit.verdict._verdict as verdict_module
from agentkit.llms.mock import tool_call
from cli_helpers import FAKE_URL, Outcome
from mocks.openai_server import FakeOpenAIServer


@pytest.fixture
def judgements(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often a run and a sampled case were judged."""
    counts = {"runs": 0, "cases": 0}
    run_checks, judge_samples = verdict_module.run_checks, verdict_module.judge_samples

    def checked(*args: object, **kwargs: object) -> object:
        counts["runs"] += 1
        return run_checks(*args, **kwargs)  # type: ignore[arg-type]

    def judged(*args: object, **kwargs: object) -> object:
        counts["cases"] += 1
        return judge_samples(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(verdict_module, "run_checks", checked)
    monkeypatch.setattr(verdict_module, "judge_samples", judged)
    import agentkit.harness._case as case_module
    monkeypatch.setattr(case_module, "judge_samples", judged)
    return counts


@pytest.mark.parametrize("command", [["run", "--snapshot-update"], ["run"], ["report"]])
def test_a_single_run_is_judged_once(cli: Callable[..., Outcome], adding: Path,
                                     judgements: dict[str, int], tmp_path: Path,
                                     command: list[str]) -> None:
    out = ["--out", str(tmp_path / "report")] if command[0] == "report" else []
    cli(command[0], adding, "--agents", "react", *command[1:], *out)
    assert judgements == {"runs": 1, "cases": 0}


@pytest.mark.slow  # a whole sampled evaluation
def test_each_sample_is_judged_once_and_the_case_once(
        cli: Callable[..., Outcome], adding: Path, judgements: dict[str, int],
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    fake_openai_endpoint([item for answer in ["2 + 3 = 5"] * 3
                          for item in (tool_call("add", a=2, b=3), answer)])
    recorded = cli("record", adding, "--agent", "function_calling", "--base-url", FAKE_URL,
                   "--temperature", "0.8", "--samples", "3")
    assert recorded.code == 0, recorded.out
    judgements.update(runs=0, cases=0)

    result = cli("run", adding, "--agents", "function_calling", "--snapshot-update")

    assert result.code == 0, result.out
    assert judgements == {"runs": 3, "cases": 1}
