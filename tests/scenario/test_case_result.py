"""What the faces (the commands, the pytest plugin) say of a case, defined once on the case
(:mod:`agentkit.harness`): the cassettes it cannot run without, and the warning of a
``min_pass_rate`` that cannot fail at its sample count."""

from __future__ import annotations

from agentkit.harness import Case, run_case
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.scenario.record import record_scenario
from agentkit.scenario.runner import load
from tests.scenario.conftest import MINIMAL

SCRIPT = "    script:\n      - tool_calls: [{name: add, args: {a: 2, b: 3}}]\n      - 2 + 3 = 5\n"
RECORDED = MINIMAL.replace(SCRIPT, "    recording: cassettes/rec.yaml\n")


def test_a_case_names_the_cassette_it_cannot_run_without_until_it_is_recorded(write_file):
    path = write_file("rec.yaml", RECORDED)

    assert Case(load(path), "function_calling").missing_cassettes() == [
        path.parent / "cassettes" / "rec.yaml"]

    live = ScriptedLLM([tool_call("add", a=2, b=3), "2 + 3 = 5"])
    assert record_scenario(path, "function_calling", live).written
    assert Case(load(path), "function_calling").missing_cassettes() == []


def test_a_scripted_case_needs_no_cassette(write_file):
    path = write_file("scripted.yaml", MINIMAL)

    assert Case(load(path), "function_calling").missing_cassettes() == []


def test_a_case_warns_of_a_min_pass_rate_its_sample_count_cannot_fail_and_only_then(write_file):
    weak = run_case(Case(load(write_file("weak.yaml", MINIMAL + "min_pass_rate: 0.5\n")),
                         "function_calling"))
    ungated = run_case(Case(load(write_file("ungated.yaml", MINIMAL)), "function_calling"))

    assert weak.gate_warning is not None
    assert weak.gate_warning.startswith("min_pass_rate 50% cannot fail at 1 sample")
    assert weak.gate_warning.endswith("give at least 4 samples for a pass rate below it to fail")
    assert ungated.gate_warning is None
