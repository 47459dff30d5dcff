"""RecordedTool: a tool that answers from a table of recorded calls, matched by arguments."""

from __future__ import annotations

import pytest

from agentkit.core.sim import Stopwatch, simulation
from agentkit.tools.recorded import RecordedTool, RecordedToolError, UnrecordedCallError

PARAMETERS = {"type": "object", "properties": {"order": {"type": "string"},
                                               "full": {"type": "boolean"}},
              "required": ["order"]}


def _tool() -> RecordedTool:
    return RecordedTool("lookup", "Look an order up.", parameters=PARAMETERS, calls=[
        {"args": {"order": "A1"}, "output": "shipped", "latency": 2.0},
        {"args": {"order": "B2"}, "error": "order B2 is locked"},
        {"args": {"order": "A1"}, "output": "delivered"}])


def test_a_call_gets_the_output_recorded_for_its_arguments():
    assert _tool().call(order="A1").content == "shipped"


def test_calls_with_the_same_arguments_get_their_answers_in_recorded_order_then_the_last():
    tool = _tool()

    assert [tool.call(order="A1").content for _ in range(3)] == ["shipped", "delivered",
                                                                "delivered"]


def test_a_recorded_error_is_raised_again():
    with pytest.raises(RecordedToolError, match="order B2 is locked"):
        _tool().call(order="B2")


def test_arguments_the_table_does_not_have_name_the_recorded_ones():
    with pytest.raises(UnrecordedCallError, match=r'with arguments \{"order": "C3"\}.*'
                                                  r'recorded: \{"order": "A1"\}'):
        _tool().call(order="C3")


def test_a_call_takes_its_recorded_latency_on_the_virtual_clock():
    with simulation():
        watch = Stopwatch.start()
        _tool().call(order="A1")
        assert watch.wall == 2.0


def test_the_schema_shows_the_recorded_parameters_in_their_order():
    schema = _tool().metadata.get_parameters_dict()

    assert list(schema["properties"]) == ["order", "full"]
    assert schema["required"] == ["order"]
    assert schema["properties"]["order"]["type"] == "string"


def test_positional_arguments_bind_in_schema_order():
    assert _tool().call("A1").content == "shipped"
