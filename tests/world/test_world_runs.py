"""A world per run: built fresh by its factory (or the project's own object, restored after
each run), handed to the tools through a parameter the model never sees, to the factory as
`context.world` and to a test that passes its own; its state recorded in the trace at the
start and after each turn, as sorted plain data with the changes as lines."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentkit.harness import AGENT_TYPES, register_agent_type, run_scenario
from agentkit.scenario import ScenarioError
from agentkit.trace import diff_traces, state_changes, state_data
from tests.world import ledger

from .conftest import BOOKS, HEADER


def test_the_tools_act_on_a_world_built_from_the_data(write):
    result = run_scenario(write(HEADER + BOOKS))

    assert result.passed, result.problems
    assert result.world.seats == {"12A": "sold", "12B": "sold"}
    assert result.world.payments == [{"hold": "H-12A", "amount": 120.0}]


def test_every_run_gets_a_fresh_world(write):
    path = write(HEADER + BOOKS)

    first, second = run_scenario(path), run_scenario(path)

    assert first.world is not second.world
    assert second.trace.world == {"start": {"holds": {}, "payments": [], "price": 120.0,
                                            "seats": {"12A": "free", "12B": "sold"}}}


def test_the_world_parameter_is_hidden_from_the_model(write):
    result = run_scenario(write(HEADER + BOOKS))

    hold = next(tool for tool in result.trace.tools if tool["name"] == "hold_seat")
    assert hold["parameters"]["properties"].keys() == {"seat"}
    assert hold["description"].startswith("hold_seat(seat: str) -> str")


def test_the_trace_records_the_state_after_each_turn_and_its_changes(write):
    text = HEADER.replace("  - user: Book seat 12A and pay.\n",
                          "  - user: Hold 12A.\n  - user: Pay.\n")
    script = BOOKS.replace("      - tool_calls: [{name: pay",
                           "      - Held.\n      - tool_calls: [{name: pay")

    trace = run_scenario(write(text + script)).trace.to_dict()

    assert [turn["world"]["changes"] for turn in trace["turns"]] == [
        ['holds.H-12A: added "12A"', 'seats.12A: "free" -> "held"'],
        ['payments.0: added {"amount": 120.0, "hold": "H-12A"}',
         'seats.12A: "free" -> "sold"']]
    assert trace["turns"][1]["world"]["state"]["holds"] == {}


def test_a_trace_with_a_world_is_byte_identical_across_runs(write):
    path = write(HEADER + BOOKS)

    assert run_scenario(path).trace.to_json() == run_scenario(path).trace.to_json()


def test_a_trace_without_a_world_keeps_its_shape(write):
    text = HEADER.replace('world:\n  ref: "desk:Desk"\n  data: {seats: {12A: free, 12B: sold}}\n',
                          "").replace("desk:hold_seat", "ledger_tools:hold").replace(
        "desk:pay", "ledger_tools:pay")
    tools = Path(write("", "ledger_tools.py")).with_name("ledger_tools.py")
    tools.write_text("def hold(seat: str) -> str:\n    return 'H-' + seat\n\n"
                     "def pay(hold_id: str) -> str:\n    return 'paid'\n", encoding="utf-8")
    script = BOOKS.replace("name: hold_seat", "name: hold")

    trace = run_scenario(write(text + script)).trace.to_dict()

    assert "world" not in trace and all("world" not in turn for turn in trace["turns"])


def test_a_test_can_pass_its_own_world(write):
    from desk import Desk  # the example's module, importable in these tests

    mine = Desk(seats={"12A": "free"})

    result = run_scenario(write(HEADER + BOOKS), world=mine)

    assert result.world is mine and mine.seats == {"12A": "sold"}
    assert result.trace.world == {"start": {"holds": {}, "payments": [], "price": 120.0,
                                            "seats": {"12A": "free"}}}


def test_a_world_given_to_a_scenario_without_one_is_an_error(write):
    text = HEADER.replace('world:\n  ref: "desk:Desk"\n  data: {seats: {12A: free, 12B: sold}}\n',
                          "")
    path = write(text + BOOKS)

    with pytest.raises(ScenarioError, match="world= is given, and scenario `desk` declares no "
                                            "`world:`"):
        run_scenario(path, world={})


def test_a_factory_that_raises_is_an_error_at_world_ref(write):
    path = write(HEADER.replace("{seats: {12A: free, 12B: sold}}", "{rows: 3}") + BOOKS)

    with pytest.raises(ScenarioError) as info:
        run_scenario(path)

    assert str(info.value).startswith(f"{path}:7: world.ref: the factory `desk:Desk` raised "
                                      "TypeError: ")
    assert str(info.value).endswith("(called with `data` as keyword arguments)")


def test_the_agent_factory_gets_the_world(write):
    seen: list[Any] = []

    def factory(context):  # type: ignore[no-untyped-def]
        seen.append(context.world)
        from agentkit.agent import FunctionCallingAgent

        return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm)

    with AGENT_TYPES.scoped():
        register_agent_type("function_calling", factory)
        result = run_scenario(write(HEADER + BOOKS))

    assert seen == [result.world]


OBJECT_SCENARIO = """\
format: 1
name: ledger
tools:
  - {ref: "tests.world.ledger:charge"}
world: {object: "tests.world.ledger:LEDGER"}
turns:
  - user: Charge order A-1.
agents:
  function_calling:
    script:
      - tool_calls: [{name: charge, args: {order_id: A-1, amount: 40.0}}]
      - Charged.
"""


@pytest.fixture
def empty_ledger():  # type: ignore[no-untyped-def]
    """The ledger module as a project starts it (what a run leaves beside its world is
    cleared after the test)."""
    yield
    ledger.LEDGER.clear()
    ledger.CHARGES = 0


def test_a_projects_own_object_is_read_after_the_run_and_restored(write, empty_ledger):
    ledger.LEDGER.append({"order": "earlier", "amount": 1.0})

    result = run_scenario(write(OBJECT_SCENARIO))

    assert result.trace.turns[0].world == {
        "state": [{"amount": 1.0, "order": "earlier"}, {"amount": 40.0, "order": "A-1"}],
        "changes": ['1: added {"amount": 40.0, "order": "A-1"}']}
    assert ledger.LEDGER == [{"order": "earlier", "amount": 1.0}]


def test_a_rebound_module_value_is_restored_under_its_name(write, empty_ledger):
    path = write(OBJECT_SCENARIO.replace("ledger:LEDGER", "ledger:CHARGES"))

    result = run_scenario(path)

    assert result.trace.turns[0].world == {"state": 1, "changes": ["(the world): 0 -> 1"]}
    assert ledger.CHARGES == 0


def test_a_projects_object_is_restored_when_the_run_fails(write, empty_ledger):
    path = write(OBJECT_SCENARIO.replace("      - Charged.\n", ""))  # the script runs out

    result = run_scenario(path)

    assert not result.passed and ledger.LEDGER == []


@dataclass
class _Row:
    tags: set[str]
    _cache: dict[str, Any] = field(default_factory=dict)


class _Model(BaseModel):
    name: str
    rows: list[int]


class _Database:
    def agentkit_state(self) -> dict[str, Any]:
        return {"tables": ["b", "a"]}


def test_state_data_is_plain_data_with_sorted_keys_and_sets():
    data = state_data({"z": _Row(tags={"b", "a"}), "a": _Model(name="m", rows=[2, 1]),
                       3: _Database()})

    assert json.dumps(data) == ('{"3": {"tables": ["b", "a"]}, "a": {"name": "m", "rows": '
                                '[2, 1]}, "z": {"_cache": {}, "tags": ["a", "b"]}}')


def test_state_changes_name_each_place_that_changed():
    assert state_changes({"a": [1], "b": {"x": 1}, "c": 1},
                         {"a": [1, 2], "b": {}, "c": 2, "d": None}) == [
        "a.1: added 2", 'b.x: removed 1', "c: 1 -> 2", "d: added null"]


def test_a_snapshot_diff_shows_a_changed_world(write):
    path = write(HEADER + BOOKS)
    before = run_scenario(path).trace.to_dict()
    after = json.loads(json.dumps(before))
    after["turns"][0]["world"]["state"]["seats"]["12A"] = "held"

    assert any("world.state.seats.12A" in line for line in diff_traces(before, after))


def test_state_data_shows_a_module_reference_by_name_without_walking_it():
    assert state_data({"codec": json}) == {"codec": "<module json>"}
