"""Every scenario or cassette file, however broken, loads or is the documented error with
file and line -- never another exception (hypothesis mutates the bundled files), each line
once and inside the file; any set of mistakes in one file is reported in one pass, each
exactly once, in file order; a script's raw tool-call arguments are a call or a call carrying
its arguments error."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkit.core.yamlsafe import parse_yaml
from agentkit.harness import load
from agentkit.harness._agent_types import UnknownAgentTypeError, check_agent_type
from agentkit.llms.cassette import Cassette, CassetteError
from agentkit.scenario import ScenarioError
from agentkit.scenario._script import parse_tool_arguments
from tests.fuzz import JSON, mutated

ROOT = Path(__file__).parents[2]
SCENARIO = parse_yaml((ROOT / "scenarios" / "error_schedule.yaml").read_text("utf-8"))[0]
TRAJECTORY = parse_yaml((ROOT / "scenarios" / "trajectory_parallel_lookups.yaml")
                        .read_text("utf-8"))[0]
CASSETTE = parse_yaml((ROOT / "scenarios" / "live" / "cassettes" /
                       "live_function_calling.function_calling.yaml").read_text("utf-8"))[0]
_FOLDER = Path(tempfile.mkdtemp(prefix="agentkit-fuzz-"))
_LOCATED = re.compile(r"^.+:\d+(:\d+)?: ", re.MULTILINE)
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")
FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def _write(name: str, text: str | bytes) -> Path:
    path = _FOLDER / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, "utf-8")
    return path


def _dump(value: object) -> str:
    return yaml.safe_dump(value, allow_unicode=True, sort_keys=False)


def _line_count(path: Path) -> int:
    """How many lines the file has, as YAML counts them (NEL and the Unicode separators
    break lines too; a problem at the end of a last line is on the line after it)."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    return len(_LINE_BREAK.findall(text)) + 1


def _assert_located(message: str, path: Path) -> None:
    lines = message.splitlines()
    for line in lines:
        if line.startswith(str(path)):
            assert _LOCATED.match(line), line
            assert 1 <= int(line[len(str(path)) + 1:].split(":")[0]) <= _line_count(path), line
    assert message.startswith(f"{path}:"), message
    assert len(lines) == len(set(lines)), message


def _load_scenario(path: Path) -> None:
    try:
        load(path)
    except ScenarioError as exc:
        _assert_located(str(exc), path)


def _load_cassette(path: Path) -> None:
    try:
        Cassette.load(path)
    except CassetteError as exc:
        _assert_located(str(exc), path)


@pytest.mark.slow  # property test at full size
@FUZZ
@given(mutated(SCENARIO))
def test_a_mutated_scenario_loads_or_is_an_error_with_file_and_line(document):
    _load_scenario(_write("s.yaml", _dump(document)))


@pytest.mark.slow  # property test at full size
@FUZZ
@given(mutated(TRAJECTORY))
def test_a_mutated_trajectory_scenario_loads_or_is_an_error_with_file_and_line(document):
    _load_scenario(_write("tr.yaml", _dump(document)))


@pytest.mark.slow  # a property test at full size
@FUZZ
@given(st.text(max_size=80), st.integers(0, 2000))
def test_a_scenario_with_text_spliced_in_loads_or_is_an_error_with_file_and_line(text, at):
    original = (ROOT / "scenarios" / "error_schedule.yaml").read_text("utf-8")
    _load_scenario(_write("t.yaml", original[:at] + text + original[at:]))


@FUZZ
@given(st.binary(max_size=60))
def test_any_bytes_as_a_scenario_load_or_are_an_error_with_file_and_line(data):
    _load_scenario(_write("b.yaml", data))


@pytest.mark.slow  # property test at full size
@FUZZ
@given(mutated(CASSETTE))
def test_a_mutated_cassette_loads_or_is_a_cassette_error_with_file_and_line(document):
    _load_cassette(_write("c.yaml", _dump(document)))


@FUZZ
@given(st.binary(max_size=60))
def test_any_bytes_as_a_cassette_load_or_are_a_cassette_error_with_file_and_line(data):
    _load_cassette(_write("d.yaml", data))


@pytest.mark.slow  # property test at full size
@settings(max_examples=200)
@given(st.one_of(st.text(max_size=30), JSON.map(json.dumps)))
def test_any_raw_tool_arguments_are_a_call_or_a_call_with_its_arguments_error(raw):
    call = parse_tool_arguments("add", raw)

    assert isinstance(call.tool_kwargs, dict)
    assert call.arguments_error is None or (call.tool_kwargs == {}
                                            and "the arguments of `add`" in call.arguments_error)


# ----------------------------------------------------------------- many mistakes, one pass
#: A valid scenario using each part the loader checks (tools, images, a trajectory, the
#: expectations of tool calls) under two agent types; `dog.png` is written beside it.
MANY = """\
format: 1
name: many
description: many parts
tools:
  - ref: mocks.tools:add
    latency: 1
turns:
  - user: What is 2 + 3?
    images: [dog.png]
trajectory:
  - call: add
    args: {a: 2, b: 3}
  - answer: "2 + 3 = {$1}"
expect:
  max_steps: 4
  tool_errors: 0
  tool_calls:
    match: strict
    calls:
      - {name: add, error: false}
      - {name: add, after: [1], output: {contains: "5"}}
agents: [react, coa]
tags: [x]
"""
(_FOLDER / "dog.png").write_bytes(b"\x89PNG\r\n\x1a\n a dog")


def _known(name: str) -> str:
    try:
        check_agent_type(name)
    except UnknownAgentTypeError as exc:
        return str(exc)
    raise AssertionError(f"{name} is an agent type")


#: Independent mistakes, one line each (the line's text before and after, the line number and
#: the problem reported there); any of them together must each be reported once.
MISTAKES = [
    ("description: many parts", "descripton: many parts", 3,
     "descripton: unknown field `descripton`; did you mean `description`?"),
    ("    latency: 1", "    latency: -1", 6, "tools.0.latency: must be >= 0, got -1"),
    ("    images: [dog.png]", "    images: [cat.png]", 9,
     f"turns.0.images.0: no image file `cat.png` ({_FOLDER / 'cat.png'} does not exist; image "
     "paths are relative to the scenario file)"),
    ("  - call: add", "  - call: ad", 11, "trajectory.0.call: unknown tool `ad`; did you mean "
                                          "`add`? (the scenario's tools: add)"),
    ('  - answer: "2 + 3 = {$1}"', '  - answr: "2 + 3 = {$1}"', 13,
     "trajectory.1.answr: unknown field `answr`; did you mean `answer`?"),
    ("  max_steps: 4", "  max_step: 4", 15,
     "expect.max_step: unknown field `max_step`; did you mean `max_steps`?"),
    ("  tool_errors: 0", "  tool_errors: alow", 16, "expect.tool_errors: expected `allow` or a "
                                                    "whole number >= 0, got 'alow'; did you mean "
                                                    "`allow`?"),
    ("    match: strict", "    match: strct", 18,
     "expect.tool_calls.match: 'strct' is not one of strict, unordered, subset, superset; did "
     "you mean `strict`?"),
    ("      - {name: add, error: false}", "      - {name: add, error: fals}", 20,
     "expect.tool_calls.calls.0.error: expected `true`, `false` or what the error text must "
     "match (`{contains: ...}`, `{equals: ...}`, `{regex: ...}`), got 'fals'; did you mean "
     "`false`?"),
    ("after: [1]", "after: [3]", 21, "expect.tool_calls.calls.1.after.0: after: 3 names no "
                                     "entry of `calls` (entries are numbered from 1; this list "
                                     "has 2)"),
    ("agents: [react, coa]", "agents: [react, caa]", 22, f"agents.caa: {_known('caa')}"),
    ("tags: [x]", "name: again", 23,
     "name: duplicate key `name` (first at line 2); merge the two or remove one"),
]


#: the MISTAKES planning finds (it needs the scenario's tools and the agent-type registry)
PLANNED = {3, 10}
assert [MISTAKES[i][1] for i in sorted(PLANNED)] == ["  - call: ad", "agents: [react, caa]"]


def test_the_many_parts_scenario_loads_as_written():
    assert load(_write("many.yaml", MANY)).name == "many"


@pytest.mark.slow  # property test at full size
@settings(max_examples=120, deadline=None)
@given(st.sets(st.sampled_from(range(len(MISTAKES))), min_size=1))
def test_any_mistakes_together_are_each_reported_once_in_file_order(chosen):
    lines = MANY.splitlines()
    for index in chosen:
        old, new, number, _ = MISTAKES[index]
        assert old in lines[number - 1]
        lines[number - 1] = lines[number - 1].replace(old, new)
    path = _write("many.yaml", "\n".join(lines) + "\n")

    with pytest.raises(ScenarioError) as info:
        load(path)

    # MISTAKES are in file order. Reading the file reports its own mistakes first; the ones
    # only planning finds (a tool or an agent type that does not exist) come once the file is
    # right, all together
    found = sorted(i for i in chosen if i not in PLANNED) or sorted(chosen)
    assert str(info.value).splitlines() == [
        f"{path}:{MISTAKES[index][2]}: {MISTAKES[index][3]}" for index in found]


@pytest.mark.slow  # property test at full size
@FUZZ
@given(mutated(parse_yaml(MANY)[0]))
def test_a_mutated_scenario_with_every_part_loads_or_is_an_error_with_file_and_line(document):
    _load_scenario(_write("m.yaml", _dump(document)))
