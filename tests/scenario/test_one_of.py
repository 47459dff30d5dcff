"""Argument matchers of expected tool calls (``{one_of: [...], optional, loose}``) and a tool's
``parameters`` (a JSON schema told to the model): loaded with located errors, matched with
JSON types kept, failures told with the matcher as written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentkit.harness import Case, build_tools, run_case
from agentkit.scenario import ScenarioError, load_scenario
from agentkit.scenario._arg_match import OneOf, args_match, with_matchers
from agentkit.verdict import SnapshotFiles
from tests.scenario_text import adding_scenario


def _matches(expected: dict[str, Any], actual: dict[str, Any], mode: str = "exact") -> bool:
    return args_match(mode, with_matchers(expected), actual)


def test_an_argument_may_be_any_of_the_values():
    expected = {"city": {"one_of": ["Oslo", "Lima"]}}

    assert _matches(expected, {"city": "Lima"})
    assert not _matches(expected, {"city": "Rome"})


def test_an_optional_argument_may_be_left_out_in_every_mode():
    expected = {"a": 1, "unit": {"one_of": ["m"], "optional": True}}

    assert _matches(expected, {"a": 1})
    assert _matches(expected, {"a": 1}, mode="subset")
    assert not _matches({"a": 1, "unit": {"one_of": ["m"]}}, {"a": 1})


def test_loose_texts_ignore_case_spaces_and_some_punctuation():
    expected = {"when": {"one_of": ["April 1, 2024"], "loose": True}}

    assert _matches(expected, {"when": "april 1 2024"})
    assert not _matches({"when": {"one_of": ["April 1, 2024"]}}, {"when": "april 1 2024"})
    assert not _matches(expected, {"when": "April 2, 2024"})


def test_json_types_are_kept_but_an_integer_equals_a_float_at_the_top():
    assert _matches({"x": {"one_of": [2.0]}}, {"x": 2})
    assert not _matches({"x": {"one_of": [1]}}, {"x": True})
    assert not _matches({"x": {"one_of": [1]}}, {"x": 1.0})
    assert not _matches({"x": {"one_of": [[1.0, 2.0]]}}, {"x": [1, 2]})
    assert not _matches({"x": {"one_of": ["1"]}}, {"x": 1})


def test_a_mapping_value_holds_matchers_of_its_own_keys():
    expected = {"party": {"one_of": [{"adults": {"one_of": [2]},
                                       "kids": {"one_of": [0], "optional": True}}]}}

    assert _matches(expected, {"party": {"adults": 2}})
    assert not _matches(expected, {"party": {"adults": 2, "pets": 1}})
    assert not _matches(expected, {"party": {}})


def test_plain_values_keep_plain_equality():
    assert _matches({"a": 2, "b": [1, 2]}, {"a": 2, "b": [1, 2]})
    assert not _matches({"a": 2}, {"a": 2, "b": 1})


def test_a_matcher_is_parsed_once_as_one_of():
    assert with_matchers({"one_of": [1], "optional": True}) == OneOf(one_of=[1], optional=True)


def _scenario(tmp_path: Path, args: str) -> Path:
    path = tmp_path / "matcher.yaml"
    path.write_text(adding_scenario("matcher", f"""\
expect:
  tool_calls:
    calls:
      - name: add
        args: {args}
agents:
  function_calling:
    script:
      - tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]
      - "5"
"""), encoding="utf-8")
    return path


@pytest.mark.parametrize(("args", "problem"), [
    ("{a: {one_of: [2], exactly: true}, b: 3}",
     "argument `a`: a `one_of` matcher takes `one_of`, `optional` and `loose`, not `exactly`"),
    ("{a: {one_of: []}, b: 3}", "argument `a`: `one_of` is a non-empty list"),
    ("{a: {one_of: [2], optional: maybe}, b: 3}",
     "argument `a`: `optional`: Input should be a valid boolean"),
])
def test_a_malformed_matcher_is_an_error_at_its_line(tmp_path: Path, args: str, problem: str):
    path = _scenario(tmp_path, args)

    with pytest.raises(ScenarioError) as info:
        load_scenario(path)

    assert f"{path}:11: expect.tool_calls.calls.0.args: " in str(info.value)
    assert problem in str(info.value)


def test_a_run_passes_when_each_argument_is_one_of_its_values(tmp_path: Path):
    scenario = load_scenario(_scenario(tmp_path, "{a: {one_of: [1, 2]}, b: {one_of: [3]}}"))

    assert run_case(Case(scenario, "function_calling"), SnapshotFiles("off")).passed


def test_a_failure_shows_the_matcher_as_written(tmp_path: Path):
    scenario = load_scenario(_scenario(tmp_path, "{a: {one_of: [7, 8]}, b: 3}"))

    case = run_case(Case(scenario, "function_calling"), SnapshotFiles("off"))

    assert not case.passed
    shown = "\n".join(case.verdict.problems)
    assert 'add({"a": {"one_of": [7, 8]}, "b": 3})' in shown
    assert "the args differ (args: exact): `a`" in shown


def test_a_tools_parameters_are_the_schema_the_model_is_told(tmp_path: Path):
    path = tmp_path / "schema.yaml"
    path.write_text("""\
format: 1
name: schema
tools:
  - ref: agentkit.suites.bfcl:stand_in
    name: lookup
    description: Look a word up.
    parameters: {type: object, properties: {word: {type: string}}, required: [word]}
turns:
  - user: Define "tool".
agents: [function_calling]
trajectory:
  - {call: lookup, args: {word: tool}}
  - answer: done
""", encoding="utf-8")
    scenario = load_scenario(path)

    tool, = build_tools(scenario)

    assert tool.metadata.get_parameters_dict() == {
        "type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}
    assert tool.metadata.description == "Look a word up."
    assert run_case(Case(scenario, "function_calling"), SnapshotFiles("off")).passed


def test_parameters_that_are_not_an_object_schema_are_an_error(tmp_path: Path):
    path = tmp_path / "bad.yaml"
    path.write_text(adding_scenario("bad", "agents: [function_calling]\ntrajectory:\n"
                                           "  - answer: '5'\n").replace(
        "  - ref: mocks.tools:add\n", "  - ref: mocks.tools:add\n    parameters: {type: string}\n"),
        encoding="utf-8")

    with pytest.raises(ScenarioError, match=r"bad.yaml:5: tools.0.parameters: .*`type: object`"):
        load_scenario(path)
