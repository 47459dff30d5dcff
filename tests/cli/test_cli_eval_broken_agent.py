"""``agentkit eval`` on a user's own agent type that a change broke: the samples recorded while
it worked are replayed offline against the changed agent, and the evaluation (and its report)
says the agent is wrong -- exit 1, the case failed and why, a regression against the report
of the working agent -- never "incomplete" or a pass."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentkit.llms.mock import tool_call
from cli_helpers import FAKE_URL, Outcome
from tests.scenario_text import FUNCTION_CALLING_AGENT, WRONG_ANSWER_AGENT, adding_scenario

PYPROJECT = """\
[project]
name = "my-project"

[tool.agentkit.agent_types]
my_agent = "my_project.agents:build"
"""

#: The change asks the model differently (a system prompt it did not have): the recorded
#: samples no longer fit the requests.
NEW_PROMPT = FUNCTION_CALLING_AGENT.replace("allow_parallel_tool_calls=False)",
                                            "allow_parallel_tool_calls=False,\n"
                                            "        system_prompt=\"Answer in French.\")")


@pytest.fixture
def my_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
               write: Callable[[str, str], Path]) -> Iterator[Path]:
    write("pyproject.toml", PYPROJECT)
    write("my_project/__init__.py", "")
    write("my_project/agents.py", FUNCTION_CALLING_AGENT)
    write("scenarios/adding.yaml", adding_scenario("adding", """\
expect:
  answer: {contains: "5"}
agents:
  my_agent:
    script: []
"""))
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    _forget_agents()


def _forget_agents() -> None:
    for name in [m for m in sys.modules if m == "my_project" or m.startswith("my_project.")]:
        del sys.modules[name]


def _change_agent(project: Path, text: str) -> None:
    (project / "my_project" / "agents.py").write_text(text, encoding="utf-8")
    _forget_agents()


def _eval(cli: Callable[..., Outcome], *options: str) -> Outcome:
    return cli("eval", "scenarios", "--agents", "my_agent", "--models", "m1", "--samples", "3",
               "--concurrency", "1", "--max-concurrency", "1", *options)


@pytest.fixture
def recorded(cli: Callable[..., Outcome], my_project: Path, fake_openai_endpoint) -> Path:
    """The working agent's 3 samples, recorded, and its report (reports/good)."""
    fake_openai_endpoint([item for _ in range(3)
                          for item in (tool_call("add", a=2, b=3), "2 + 3 = 5")])
    working = _eval(cli, "--base-url", FAKE_URL, "--out", "reports/good")
    assert working.code == 0, working.out + working.err
    assert "PASS  adding[my_agent@m1]" in working.out
    return my_project


def _said(result: Outcome) -> str:
    """The command's output, its column padding collapsed."""
    return " ".join(result.out.split())


def _row(project: Path, report: str) -> dict:
    return json.loads((project / report / "report.json").read_text("utf-8"))["rows"][0]


def test_an_agent_whose_requests_changed_fails_its_evaluation_saying_the_recording_no_longer_fits(
        cli: Callable[..., Outcome], recorded: Path) -> None:
    _change_agent(recorded, NEW_PROMPT)

    result = _eval(cli, "--out", "reports/now", "--baseline", "reports/good/report.json")

    assert result.code == 1, result.out + result.err
    assert ("FAIL adding[my_agent@m1] no sample replays to its end, so no pass rate"
            in _said(result))
    assert "sample 0: the recording no longer fits the agent" in result.out
    assert "first difference (recorded -> now), at messages[0]" in result.out
    assert ("record them anew: remove scenarios/cassettes/eval/adding.my_agent.m1.yaml and run "
            "this command again with --base-url") in result.out
    assert "REGRESSION  adding[my_agent@m1]: passed in the baseline; fails now" in result.out
    assert "INCOMPLETE" not in result.out
    row = _row(recorded, "reports/now")
    assert row["status"] == "fail" and row.get("pass_rate") is None
    assert row["problems"][0].startswith("sample 0: the recording no longer fits the agent")


def test_an_agent_that_now_answers_wrong_fails_every_sample_and_regresses_beyond_noise(
        cli: Callable[..., Outcome], recorded: Path) -> None:
    _change_agent(recorded, WRONG_ANSWER_AGENT)

    result = _eval(cli, "--out", "reports/now", "--baseline", "reports/good/report.json")

    assert result.code == 1, result.out + result.err
    assert ("FAIL adding[my_agent@m1] 3 samples: pass rate 0% (0/3, 95% interval 0%-56%) · "
            "stable_fail") in _said(result)
    assert "3 of 3 samples failed" in result.out
    assert ("REGRESSION  adding[my_agent@m1]: pass rate 100% (3/3) -> 0% (0/3): a drop this "
            "large happens by chance 5.0% of the time") in result.out
    row = _row(recorded, "reports/now")
    assert (row["status"], row["class"], row["pass_rate"]) == ("fail", "stable_fail", 0.0)
    summary = (recorded / "reports" / "now" / "summary.md").read_text("utf-8")
    assert "adding[my_agent@m1]" in summary and "failed" in summary
