"""Fault kinds: what each does to one call of a scenario tool, and what it withholds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit.core.sim import now, run_sync, simulation
from agentkit.harness import FaultNotApplicableError, SimulatedTool, SimulatedToolError, facts
from agentkit.scenario import Fault, ScenarioError, load_scenario
from agentkit.tools import FunctionTool

EXAMPLE = Path(__file__).parents[2] / "examples" / "faults"
ORDER = {"order_id": "A-1001", "status": "shipped", "eta": "2026-11-05", "carrier": "Parcelway"}


def _lookup(order_id: str) -> str:
    """Look up an order."""
    return json.dumps(ORDER)


def _plain(order_id: str) -> str:
    """Answer in plain text."""
    return "shipped on 2026-11-02"


def _call(fault: dict[str, Any], function: Any = _lookup) -> tuple[SimulatedTool, Any, float]:
    """Call 1 of a tool with ``fault``: the tool, what the call gave (or raised), the clock."""
    ran: list[str] = []

    def tool(order_id: str) -> str:
        """Look up an order."""
        ran.append(order_id)
        return str(function(order_id))

    simulated = SimulatedTool(FunctionTool.from_defaults(tool, name="lookup_order"),
                              faults=[Fault.model_validate({"call": 1, **fault})])
    with simulation(0):
        try:
            got: Any = run_sync(simulated.acall(order_id="A-1001"))
        except SimulatedToolError as exc:
            got = exc
        at = now()
    simulated.ran = ran  # type: ignore[attr-defined]
    return simulated, got, at


def test_a_truncated_output_keeps_its_first_characters_and_withholds_the_rest() -> None:
    tool, output, _ = _call({"kind": "truncate", "keep": 40})
    assert output.content == json.dumps(ORDER)[:40]
    injected = tool.injected[0]
    assert (injected.tool, injected.call) == ("lookup_order", 1)
    assert "2026-11-05" in injected.withheld and "Parcelway" in injected.withheld
    assert "A-1001" not in injected.withheld  # the agent got it


def test_a_timeout_fails_the_call_after_its_simulated_seconds() -> None:
    tool, error, at = _call({"kind": "timeout", "after": 30})
    assert isinstance(error, SimulatedToolError)
    assert str(error) == "timed out after 30 s (call 1 of `lookup_order`)"
    assert at == 30.0
    assert tool.ran == ["A-1001"]  # type: ignore[attr-defined]  # the work was done
    assert "2026-11-05" in tool.injected[0].withheld


def test_a_rate_limit_says_when_to_retry() -> None:
    _, error, _ = _call({"kind": "rate_limit", "retry_after": 2})
    assert "429" in str(error) and "retry after 2 s" in str(error)


def test_an_error_raises_its_message() -> None:
    _, error, _ = _call({"kind": "error", "message": "order service down"})
    assert str(error) == "order service down (call 1 of `lookup_order`)"


def test_a_disconnect_says_the_server_closed_the_connection() -> None:
    _, error, _ = _call({"kind": "disconnect"})
    assert "closed the connection mid-call" in str(error)


def test_latency_delivers_the_whole_output_late() -> None:
    tool, output, at = _call({"kind": "latency", "after": 12})
    assert json.loads(output.content) == ORDER and at == 12.0
    assert tool.injected[0].withheld == ()


def test_an_empty_output_is_empty() -> None:
    _, output, _ = _call({"kind": "empty"})
    assert output.content == ""


def test_dropped_fields_are_left_out_by_default_all_but_the_first() -> None:
    _, output, _ = _call({"kind": "drop_fields"})
    assert json.loads(output.content) == {"order_id": "A-1001"}


def test_named_fields_are_corrupted_to_null() -> None:
    tool, output, _ = _call({"kind": "corrupt_fields", "fields": ["eta"]})
    assert json.loads(output.content) == {**ORDER, "eta": None}
    assert tool.injected[0].withheld == ("2026-11-05",)


def test_malformed_json_is_cut_mid_value() -> None:
    _, output, _ = _call({"kind": "malformed_json"})
    with pytest.raises(ValueError):
        json.loads(output.content)
    assert json.dumps(ORDER).startswith(output.content)


def test_a_wrong_type_answers_an_objects_keys_instead_of_its_values() -> None:
    _, output, _ = _call({"kind": "wrong_type"})
    assert json.loads(output.content) == list(ORDER)


def test_a_field_fault_on_a_text_output_is_named() -> None:
    with pytest.raises(FaultNotApplicableError, match="needs a JSON object; call 1 of "
                                                      "`lookup_order`"):
        _call({"kind": "drop_fields"}, _plain)


def test_failures_stay_errors_before_the_tool_runs() -> None:
    ran: list[str] = []

    def tool(order_id: str) -> str:
        """Look up an order."""
        ran.append(order_id)
        return "x"

    simulated = SimulatedTool(FunctionTool.from_defaults(tool), failures=[1], error="down")
    with simulation(0), pytest.raises(SimulatedToolError, match=r"^down \(call 1 of `tool`\)$"):
        run_sync(simulated.acall(order_id="A-1001"))
    assert ran == []


def test_facts_are_texts_tokens_with_digits_and_numbers_not_keys_or_flags() -> None:
    assert facts({"id": "C-17", "name": "Ada Lovelace", "ok": True, "n": 2102650}) == [
        "C-17", "Ada Lovelace", "2102650", "2,102,650"]


def test_a_parameter_of_another_kind_is_a_located_error(tmp_path: Path) -> None:
    text = (EXAMPLE / "scenarios" / "order_support.yaml").read_text()
    text = text.replace("  - ref: order_desk:lookup_order\n",
                        "  - ref: order_desk:lookup_order\n"
                        "    faults: [{call: 1, kind: timeout, keep: 3}]\n")
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError, match=r"broken.yaml:13: tools.1.faults.0: `keep` is not "
                                            r"a parameter of a `timeout` fault"):
        load_scenario(path)


def test_a_call_with_two_faults_is_a_located_error(tmp_path: Path) -> None:
    text = (EXAMPLE / "scenarios" / "order_support.yaml").read_text()
    text = text.replace("  - ref: order_desk:lookup_order\n",
                        "  - ref: order_desk:lookup_order\n    failures: [1]\n"
                        "    faults: [{call: 1, kind: timeout}]\n")
    path = tmp_path / "twice.yaml"
    path.write_text(text)
    with pytest.raises(ScenarioError, match="call 1 has two faults"):
        load_scenario(path)
