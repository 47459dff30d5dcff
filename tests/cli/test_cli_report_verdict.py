"""``agentkit report`` on the console: the verdict sentence first, a case under its
min_pass_rate counted as undecided."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentkit.eval._samples import record_samples
from agentkit.llms.mock import ScriptedLLM, tool_call
from cli_helpers import Outcome
from tests.scenario_text import adding_scenario

TWO_TYPES = adding_scenario("adding", """\
expect:
  answer: {contains: "5"}
agents:
  react:
    script:
      - |-
        Thought: I can answer without using any more tools.
        Answer: 2 + 3 = 6
  function_calling:
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
      - 2 + 3 = 5
""")


def test_report_prints_the_verdict_sentence_first(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path], tmp_path: Path) -> None:
    scenario = write("scenarios/adding.yaml", TWO_TYPES)

    result = cli("report", scenario, "--out", tmp_path / "out", "--snapshots", "off")

    assert result.code == 1
    assert result.out.splitlines()[0] == (
        "verdict: function_calling passes the 1 scenario it ran; react passes 0 of the 1 "
        "scenario it ran (fails adding).")


def test_report_counts_a_case_under_its_min_pass_rate_as_undecided_with_the_samples_to_decide(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path], tmp_path: Path) -> None:
    scenario = write("scenarios/sam.yaml", adding_scenario("sam", """\
expect:
  answer: {contains: "5"}
min_pass_rate: 0.6
agents:
  function_calling:
    recording: cassettes/sam.yaml
"""))
    answers = ["2 + 3 = 5", "2 + 3 = 6", "2 + 3 = 6", "2 + 3 = 5", "2 + 3 = 6"]
    record_samples(scenario, "function_calling",
                   lambda i: ScriptedLLM([tool_call("add", a=2, b=3), answers[i]],
                                         strict=False, name="m"), 5)

    result = cli("report", scenario, "--out", tmp_path / "out", "--snapshots", "off")

    assert result.code == 0  # the gate is met within noise: not a failure, not a pass
    assert ("UNDECIDED  sam[function_calling]: pass rate 40% (2/5; 12-77%) is under its "
            "min_pass_rate 60%, but within noise; about 25 samples at this rate would put it "
            "under beyond noise") in result.out.splitlines()
    assert "1 runs: 0 passed, 0 failed, 0 could not run, 1 undecided, 0 regressed" in result.out
