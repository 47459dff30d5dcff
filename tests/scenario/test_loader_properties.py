"""Every scenario or cassette file, however broken, loads or is the documented error with
file and line -- never another exception (hypothesis mutates the bundled files); a script's raw
tool-call arguments are a call or a call carrying its arguments error."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkit.core.yamlsafe import parse_yaml
from agentkit.llms.cassette import Cassette, CassetteError
from agentkit.scenario import ScenarioError, load_scenario
from agentkit.scenario.script import parse_tool_arguments
from tests.fuzz import JSON, mutated

ROOT = Path(__file__).parents[2]
SCENARIO = parse_yaml((ROOT / "scenarios" / "error_schedule.yaml").read_text("utf-8"))[0]
TRAJECTORY = parse_yaml((ROOT / "scenarios" / "trajectory_parallel_lookups.yaml")
                        .read_text("utf-8"))[0]
CASSETTE = parse_yaml((ROOT / "scenarios" / "live" / "cassettes" /
                       "live_function_calling.function_calling.yaml").read_text("utf-8"))[0]
_FOLDER = Path(tempfile.mkdtemp(prefix="agentkit-fuzz-"))
_LOCATED = re.compile(r"^.+:\d+(:\d+)?: ", re.MULTILINE)
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


def _assert_located(message: str, path: Path) -> None:
    for line in message.splitlines():
        if line.startswith(str(path)):
            assert _LOCATED.match(line), line
    assert message.startswith(f"{path}:"), message


def _load_scenario(path: Path) -> None:
    try:
        load_scenario(path, check_agent_types=True)
    except ScenarioError as exc:
        _assert_located(str(exc), path)


def _load_cassette(path: Path) -> None:
    try:
        Cassette.load(path)
    except CassetteError as exc:
        _assert_located(str(exc), path)


@FUZZ
@given(mutated(SCENARIO))
def test_a_mutated_scenario_loads_or_is_an_error_with_file_and_line(document):
    _load_scenario(_write("s.yaml", _dump(document)))


@FUZZ
@given(mutated(TRAJECTORY))
def test_a_mutated_trajectory_scenario_loads_or_is_an_error_with_file_and_line(document):
    _load_scenario(_write("tr.yaml", _dump(document)))


@FUZZ
@given(st.text(max_size=80), st.integers(0, 2000))
def test_a_scenario_with_text_spliced_in_loads_or_is_an_error_with_file_and_line(text, at):
    original = (ROOT / "scenarios" / "error_schedule.yaml").read_text("utf-8")
    _load_scenario(_write("t.yaml", original[:at] + text + original[at:]))


@FUZZ
@given(st.binary(max_size=60))
def test_any_bytes_as_a_scenario_load_or_are_an_error_with_file_and_line(data):
    _load_scenario(_write("b.yaml", data))


@FUZZ
@given(mutated(CASSETTE))
def test_a_mutated_cassette_loads_or_is_a_cassette_error_with_file_and_line(document):
    _load_cassette(_write("c.yaml", _dump(document)))


@FUZZ
@given(st.binary(max_size=60))
def test_any_bytes_as_a_cassette_load_or_are_a_cassette_error_with_file_and_line(data):
    _load_cassette(_write("d.yaml", data))


@settings(max_examples=200)
@given(st.one_of(st.text(max_size=30), JSON.map(json.dumps)))
def test_any_raw_tool_arguments_are_a_call_or_a_call_with_its_arguments_error(raw):
    call = parse_tool_arguments("add", raw)

    assert isinstance(call.tool_kwargs, dict)
    assert call.arguments_error is None or (call.tool_kwargs == {}
                                            and "the arguments of `add`" in call.arguments_error)
