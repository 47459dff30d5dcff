"""``agentkit mutate``: deterministic mutants of a scenario's tool world, run against the
suite; which expectation killed each, the survivors named, a score per scenario and agent
type."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from agentkit.cli import main
from agentkit.harness import load
from agentkit.quality import Mutant, corrupted, mutate
from tests.quality.scenarios import WEATHER, WEATHER_CHECKED, write

SINGLE = """\
format: 1
name: single
tools:
  - ref: mocks.tools:add
  - ref: mocks.tools:multiply
turns:
  - user: What is 2 + 3, and 2 * 3?
expect:
  answer: {contains: "5"}
  tool_calls:
    calls:
      - {name: add, args: {a: 2, b: 3}}
      - {name: multiply, args: {a: 2, b: 3}}
agents:
  function_calling:
    script:
      - tool_calls:
          - {name: add, args: {a: 2, b: 3}}
          - {name: multiply, args: {a: 2, b: 3}}
      - "5 and 6"
  function_agent:
    recording: cassettes/single.function_agent.yaml
"""


def _mutation(tmp_path: Path, *texts: str, operators=None):
    folder = write(tmp_path / "scenarios", *texts)
    scenarios = [load(path) for path in sorted(folder.glob("*.yaml"))]
    if operators is None:
        return mutate(scenarios)
    return mutate(scenarios, operators=operators)


def _fate(mutation, mutant_id: str) -> str | None:
    result = next(r for r in mutation.results if r.mutant.id == mutant_id)
    return result.kills[0].by if result.killed else None


def test_corrupted_outputs_change_their_numbers_else_their_text():
    assert corrupted("Paris: 18°C") == "Paris: 63°C"
    assert corrupted("shipped") == "(corrupted output)"


def test_a_corrupted_output_survives_a_suite_that_checks_only_the_answer(tmp_path: Path):
    mutation = _mutation(tmp_path, WEATHER)

    assert _fate(mutation, "corrupt:weather") is None
    assert "corrupt:weather" in [r.mutant.id for r in mutation.survivors()]


def test_adding_a_scenario_that_kills_a_survivor_raises_the_score(tmp_path: Path):
    before = _mutation(tmp_path / "before", WEATHER)
    after = _mutation(tmp_path / "after", WEATHER, WEATHER_CHECKED)

    assert [r.mutant for r in after.results] == [r.mutant for r in before.results]
    assert _fate(after, "corrupt:weather").startswith("tool_calls: ")
    assert after.score()[0] > before.score()[0]
    assert after.percent > before.percent
    assert after.by_scenario()["weather_answer"] == before.by_scenario()["weather_answer"]


def test_a_dropped_tool_and_a_failing_tool_are_killed_by_the_unexpected_errors(tmp_path: Path):
    mutation = _mutation(tmp_path, WEATHER, operators=["drop", "error"])

    assert _fate(mutation, "drop:weather").startswith("tool_errors: tool call 1 ")
    assert _fate(mutation, "error:weather").startswith("tool_errors: tool call 1 ")


def test_a_changed_description_survives_scripted_models(tmp_path: Path):
    mutation = _mutation(tmp_path, WEATHER_CHECKED, operators=["describe"])

    assert [r.mutant.id for r in mutation.survivors()] == ["describe:weather"]


def test_swapped_outputs_are_killed_where_the_outputs_are_checked(tmp_path: Path):
    assert _fate(_mutation(tmp_path / "a", WEATHER), "swap:weather,weather") is None
    killer = _fate(_mutation(tmp_path / "b", WEATHER_CHECKED), "swap:weather,weather")
    assert killer is not None and killer.startswith("tool_calls: ")


def test_reordered_parallel_calls_are_killed_by_a_strict_order_only(tmp_path: Path):
    strict = _mutation(tmp_path / "a", WEATHER_CHECKED, operators=["reorder"])
    loose = WEATHER_CHECKED.replace("  tool_calls:\n", "  tool_calls:\n    match: unordered\n")

    assert _fate(strict, "reorder:function_calling").startswith("tool_calls: ")
    assert _fate(_mutation(tmp_path / "b", loose, operators=["reorder"]),
                 "reorder:function_calling") is None


def test_a_case_that_replays_a_recording_is_left_out(tmp_path: Path):
    mutation = _mutation(tmp_path, SINGLE, operators=["drop"])

    assert [(b.name, b.why.split(":")[0]) for b in mutation.left_out] == [
        ("single[function_agent]", "replays a recording")]
    assert all(r.cases == ["single[function_calling]"] for r in mutation.results)


def test_two_tools_swap_their_first_outputs(tmp_path: Path):
    mutation = _mutation(tmp_path, SINGLE, operators=["swap"])

    assert [r.mutant for r in mutation.results] == [Mutant("swap", ("add", "multiply"))]
    assert mutation.survivors()[0].mutant.describe() == (
        "`add` and `multiply` return each other's first output")


def test_scores_are_kept_per_scenario_and_agent_type(tmp_path: Path):
    mutation = _mutation(tmp_path, WEATHER, WEATHER_CHECKED)
    killed, total = mutation.score()

    assert mutation.by_agent_type() == {"function_calling": (killed, total)}
    assert set(mutation.by_scenario()) == {"weather_answer", "weather_checked"}
    assert mutation.by_scenario()["weather_checked"] == (killed, total)


def _cli(*argv: str | Path) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["mutate", *map(str, argv)], out=out)
    return code, out.getvalue()


def test_the_command_names_the_survivors_first_and_gates_on_the_score(tmp_path: Path):
    folder = write(tmp_path / "scenarios", WEATHER)
    mutation = _mutation(tmp_path / "again", WEATHER)

    code, out = _cli(folder, "--fail-under", "100")

    assert code == 1
    survivors = out.split("\nsurvivors (", 1)[1].split("\n\n", 1)[0]
    assert "\n  corrupt:weather: the first output of `weather` is corrupted" in survivors
    assert f"mutation score: {mutation.score()[0]} of {mutation.score()[1]} mutants killed" in out
    assert out.rstrip().endswith("is under --fail-under 100%")
    assert _cli(folder, "--fail-under", "0")[0] == 0


def test_the_command_writes_every_mutant_as_json(tmp_path: Path):
    folder = write(tmp_path / "scenarios", WEATHER)

    code, _ = _cli(folder, "--operators", "drop,corrupt", "--json", tmp_path / "m.json")
    data = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))

    assert code == 0
    assert [m["id"] for m in data["mutants"]] == ["drop:weather", "corrupt:weather",
                                                 "corrupt:weather#last"]
    assert data["survivors"] == ["corrupt:weather", "corrupt:weather#last"]


def test_an_unknown_kind_of_mutant_is_a_usage_error(tmp_path: Path):
    assert _cli(write(tmp_path, WEATHER), "--operators", "drop,prompt")[0] == 2


@pytest.mark.slow  # every bundled case, then every mutant against every case it changes
def test_on_the_bundled_scenarios_at_least_fifty_mutants_run_and_the_survivors_are_named():
    code, out = _cli()

    mutants = int(out.split(" mutants, run offline", 1)[0])
    survivors = out.split("\nsurvivors (", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert code == 0
    assert mutants >= 50
    assert survivors and all(line.startswith("  ") and ": " in line for line in survivors)
