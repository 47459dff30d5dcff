"""``agentkit coverage``: every tool of the suite with what its runs did with it, per agent
type, and what no scenario touches listed first."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from agentkit.cli import main
from agentkit.harness import load
from agentkit.quality import argument_shape, coverage_of, output_used
from tests.quality.scenarios import ARITHMETIC, WEATHER, write

TEAM = """\
format: 1
name: relay
tools:
  - ref: mocks.tools:population
turns:
  - user: How many people live in Paris?
expect:
  answer: {contains: "2102650"}
  never:
    - {name: not Lima, call: {name: population, args: {city: Lima}}}
agents:
  agent_workflow:
    root: researcher
    team:
      - name: researcher
        description: Looks things up.
        can_handoff_to: [writer]
        script:
          - tool_calls: [{name: population, args: {city: Paris}}]
          - tool_calls: [{name: handoff, args: {to_agent: writer, reason: "write it"}}]
      - name: writer
        description: Writes the answer.
        can_handoff_to: [researcher]
        script:
          - "Paris has 2102650 people."
"""

JUDGED = """\
format: 1
name: judged
tools:
  - ref: mocks.tools:add
turns:
  - user: What is 2 + 3?
expect:
  answer: {judge: "gives the sum"}
judge:
  script: ['{"verdict": "pass", "reason": "it gives 5"}']
agents:
  function_calling:
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
      - "5"
"""


def _coverage(tmp_path: Path, *texts: str):
    folder = write(tmp_path / "scenarios", *texts)
    return coverage_of([load(path) for path in sorted(folder.glob("*.yaml"))])


def _cli(*argv: str | Path) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["coverage", *map(str, argv)], out=out)
    return code, out.getvalue()


def test_a_tool_no_scenario_calls_is_listed_first_as_never_called(tmp_path: Path):
    coverage = _coverage(tmp_path, ARITHMETIC)

    assert coverage.untested()[0] == "tool multiply (scenario): never called"


def test_each_tool_counts_calls_argument_shapes_failures_time_outs_and_recoveries(tmp_path: Path):
    add = _coverage(tmp_path, ARITHMETIC).tools["add"].total()

    assert (add.calls, add.failed, add.timed_out, add.after_failure) == (2, 1, 1, 1)
    assert add.shapes == {"a: int, b: int", "a: number, b: number"}


def test_an_output_is_used_when_its_numbers_or_words_show_in_an_answer(tmp_path: Path):
    weather = _coverage(tmp_path, WEATHER).tools["weather"]

    assert weather.total().output_used == 2
    assert weather.missing() == ["failed", "after_failure"]
    assert output_used("Rome: 21°C", ["It is 21 degrees"], given='{"city": "Rome"}')
    assert not output_used("Rome", ["Rome is sunny"], given='{"city": "Rome"} Rome?')


def test_argument_shapes_name_each_argument_with_its_json_type():
    assert argument_shape({"b": [1], "a": "x", "c": True}) == "a: str, b: list, c: bool"


def test_coverage_is_kept_per_agent_type(tmp_path: Path):
    text = ARITHMETIC.replace("agents:\n", "agents:\n  react:\n    script:\n"
                              "      - \"Thought: done.\\nAnswer: 5\"\n")
    coverage = _coverage(tmp_path, text)

    assert set(coverage.tools["add"].by_agent) == {"function_calling"}
    assert coverage.tools["add"].offered == {"function_calling", "react"}
    assert coverage.by_agent_type() == {"function_calling": (1, 2), "react": (0, 2)}


def test_a_hand_off_never_taken_and_a_rule_never_exercised_are_untested(tmp_path: Path):
    coverage = _coverage(tmp_path, TEAM)
    untested = coverage.untested()

    assert "handoff relay[agent_workflow]: writer -> researcher: never taken" in untested
    assert ('rule relay: not Lima (never population with {"city": "Lima"} at all): no run '
            "made the calls it is about") in untested
    assert coverage.others[("handoff", "relay[agent_workflow]: researcher -> writer")].exercised == 1
    assert coverage.tools["handoff"].source == "agent"


def test_a_judge_that_never_fails_a_run_is_named(tmp_path: Path):
    coverage = _coverage(tmp_path, JUDGED)
    judge = coverage.others[("judge", "judged: expect.answer.judge")]

    assert (judge.runs, judge.exercised, judge.failed) == (1, 1, 0)
    assert any(line.startswith("judge judged: expect.answer.judge: never failed")
               for line in coverage.untested())


def test_the_behaviour_percentage_counts_four_behaviours_per_tool_and_each_other_item(
        tmp_path: Path):
    coverage = _coverage(tmp_path, ARITHMETIC)

    # add: called, failed, after a failure, output used ("5" in the answer); multiply: none
    assert coverage.behaviours() == (4, 8)
    assert coverage.percent == 50.0


def test_the_command_prints_untested_first_and_fails_under_the_gate(tmp_path: Path):
    folder = write(tmp_path / "scenarios", ARITHMETIC)

    code, out = _cli(folder, "--fail-under", "60")

    assert code == 1
    assert out.startswith("untested (1):\n  tool multiply (scenario): never called\n")
    assert "behaviours covered: 4 of 8 (50%)" in out
    assert "FAIL  behaviour coverage 50% is under --fail-under 60%" in out
    assert _cli(folder, "--fail-under", "50")[0] == 0


def test_the_command_writes_the_coverage_as_json(tmp_path: Path):
    folder = write(tmp_path / "scenarios", ARITHMETIC)

    code, _ = _cli(folder, "--json", tmp_path / "coverage.json")
    data = json.loads((tmp_path / "coverage.json").read_text(encoding="utf-8"))

    assert code == 0
    assert data["behaviours"] == {"covered": 4, "total": 8, "percent": 50.0}
    assert [t["name"] for t in data["tools"]] == ["add", "multiply"]


def test_json_is_never_written_over_something_that_is_not_a_file(tmp_path: Path):
    folder = write(tmp_path / "scenarios", ARITHMETIC)

    os.mkfifo(tmp_path / "pipe")  # stands for a device such as /dev/null

    assert _cli(folder, "--json", tmp_path)[0] == 2
    assert _cli(folder, "--json", tmp_path / "pipe")[0] == 2
    assert not (tmp_path / "pipe").is_file()


@pytest.mark.parametrize("value", ["101", "-1", "lots"])
def test_fail_under_is_a_percentage(value: str, tmp_path: Path):
    assert _cli(write(tmp_path, ARITHMETIC), "--fail-under", value)[0] == 2


def test_on_the_bundled_mcp_scenario_every_tool_the_servers_list_is_counted():
    code, out = _cli(Path("scenarios/mcp_time_git.yaml"))

    assert code == 0
    assert "tool git_commit (mcp git (listed, not offered)): never called" in out
    assert "tool git_status (mcp git): never called" in out
    assert "tool convert_time (mcp time): never fails, never called after a failure" in out


@pytest.mark.slow  # every bundled scenario under every agent type (~100 runs)
def test_on_the_bundled_scenarios_every_tool_is_listed_with_its_counts():
    code, out = _cli()

    table = out.split("\ntools called: ", 1)[1]
    for tool in ("add", "multiply", "capital", "weather", "population", "divide",
                 "lookup_order", "add_to_cart", "ask_human", "convert_time", "git_log",
                 "handoff"):
        assert f"\n{tool} " in table
    assert code == 0
    assert out.startswith("untested (")
    assert "tool git_status (mcp git): never called" in out


def test_by_agent_type_the_command_gives_a_row_per_tool_and_agent_type_that_called_it(
        tmp_path: Path):
    text = ARITHMETIC.replace("agents:\n", "agents:\n  react:\n    script:\n"
                              "      - \"Thought: done.\\nAnswer: 5\"\n")
    folder = write(tmp_path / "scenarios", text)

    code, out = _cli(folder, "--by-agent-type")
    rows = [line.split() for line in out.splitlines() if line.startswith(("add ", "multiply "))]

    assert code == 0
    assert rows == [["add", "scenario", "function_calling", "2", "2", "1", "1", "1", "1"]]
