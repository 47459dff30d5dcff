"""`expect.state` read on the world the trace recorded: each kind of path match, the whole
world unchanged, a user's check function, a turn's state; each failure names the path, what
was expected and found, and what changed since the start."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.scenario._model import Expect, Turn
from agentkit.trace import StepTrace, ToolCallTrace, Trace, TurnTrace, state_changes
from agentkit.verdict import check_expectations

START = {"seats": {"12A": "free", "12B": "sold"}, "payments": [], "note": "open"}
AFTER_1 = {"seats": {"12A": "held", "12B": "sold"}, "payments": [], "note": "open"}
AFTER_2 = {"seats": {"12A": "sold", "12B": "sold"},
           "payments": [{"hold": "H-12A", "amount": 120.0}], "note": "paid 12A"}


def _trace(*states: Any) -> Trace:
    turns = [TurnTrace(user=f"turn {n}", steps=[], response="ok", error=None, memory=[],
                       wall_time=0.0, serial_time=0.0,
                       world={"state": state, "changes": state_changes(START, state)})
             for n, state in enumerate(states, start=1)]
    return Trace(scenario="s", agent="a", turns=turns, world={"start": START})


def _problems(state: dict[str, Any], checks: dict[str, Any] | None = None,
              trace: Trace | None = None) -> list[str]:
    trace = trace or _trace(AFTER_1, AFTER_2)
    found = check_expectations(trace, [Turn(user="a"), Turn(user="b")],
                               Expect.model_validate({"state": state}), state_checks=checks)
    return [str(problem) for problem in found if problem.kind == "state"]


def _paths(**paths: Any) -> dict[str, Any]:
    return {"paths": {path.replace("__", "."): match for path, match in paths.items()}}


@pytest.mark.parametrize("match", [{"equals": "sold"}, {"contains": "ol"}, {"regex": "^s.ld$"}])
def test_a_path_that_matches_passes(match: dict[str, Any]) -> None:
    assert _problems(_paths(seats__12A=match)) == []


def test_equals_compares_whole_data() -> None:
    assert _problems(_paths(payments={"equals": [{"hold": "H-12A", "amount": 120.0}]})) == []


def test_contains_finds_a_mapping_in_a_list_by_the_keys_it_gives() -> None:
    assert _problems(_paths(payments={"contains": {"hold": "H-12A"}})) == []


def test_contains_finds_a_key_of_a_mapping() -> None:
    assert _problems(_paths(seats={"contains": "12B"})) == []


def test_regex_searches_the_json_of_data_that_is_not_text() -> None:
    assert _problems(_paths(payments={"regex": '"amount": 120'})) == []


def test_a_list_index_reads_an_item_from_either_end() -> None:
    assert _problems({"paths": {"payments.0.hold": {"equals": "H-12A"},
                                "payments.-1.amount": {"equals": 120.0}}}) == []


def test_a_path_that_does_not_match_names_the_path_and_what_changed() -> None:
    assert _problems(_paths(seats__12A={"equals": "held"})) == [
        'state after the run: seats.12A: expected equals "held", got "sold"\n'
        "  what changed since the start of the run:\n"
        '    note: "open" -> "paid 12A"\n'
        '    payments.0: added {"amount": 120.0, "hold": "H-12A"}\n'
        '    seats.12A: "free" -> "sold"']


def test_a_path_the_world_does_not_have_is_none() -> None:
    assert _problems(_paths(refunds={"equals": []}))[0].startswith(
        "state after the run: refunds: expected equals [], got (none)")


def test_unchanged_on_a_changed_path_shows_the_start() -> None:
    assert _problems(_paths(note={"unchanged": True}))[0].startswith(
        'state after the run: note: expected unchanged, got "paid 12A" (at the start: "open")')


def test_unchanged_on_a_path_as_it_was_passes() -> None:
    assert _problems(_paths(seats__12B={"unchanged": True})) == []


def test_the_whole_world_unchanged_counts_the_changed_places() -> None:
    assert _problems({"unchanged": True})[0].startswith(
        "state after the run: expected the world unchanged, and 3 places were changed")


def test_the_state_after_a_turn_is_read_with_turn() -> None:
    assert _problems({"turn": 1, **_paths(seats__12A={"equals": "held"})}) == []
    assert _problems({"turn": 1, **_paths(payments={"equals": []})}) == []


def test_a_turn_that_did_not_run_is_not_checked() -> None:
    assert _problems({"turn": 2, "unchanged": True}, trace=_trace(AFTER_1)) == []


def _no_double_sale(state: dict[str, Any]) -> list[str]:
    holds = [p["hold"] for p in state["payments"]]
    return [f"{hold} paid twice" for hold in set(holds) if holds.count(hold) > 1]


def test_a_check_function_that_finds_nothing_passes() -> None:
    assert _problems({"check": "m:f"}, {"m:f": _no_double_sale}) == []


@pytest.mark.parametrize(("result", "problem"), [
    (False, "it returned False"), ("12A is oversold", "12A is oversold"),
    (["one", "two"], "one")])
def test_what_a_check_function_returns_is_its_problems(result: Any, problem: str) -> None:
    found = _problems({"check": "m:f"}, {"m:f": lambda state: result})

    assert found[0].split("\n")[0] == f"state after the run: check m:f: {problem}"


def test_an_assertion_of_a_check_function_is_its_problem() -> None:
    def check(state: dict[str, Any]) -> None:
        assert state["note"] == "open", "the note changed"

    assert _problems({"check": "m:f"}, {"m:f": check})[0].startswith(
        "state after the run: check m:f: the note changed\n")


def test_a_check_function_that_raises_is_a_problem_naming_the_error() -> None:
    assert _problems({"check": "m:f"}, {"m:f": lambda state: state["nope"]})[0].startswith(
        "state after the run: check m:f: it raised KeyError: 'nope'")


def test_a_check_function_cannot_change_the_recorded_state() -> None:
    trace = _trace(AFTER_1, AFTER_2)

    _problems({"check": "m:f"}, {"m:f": lambda state: state.clear()}, trace=trace)

    assert trace.turns[-1].world is not None and trace.turns[-1].world["state"] == AFTER_2


def _calling_trace() -> Trace:
    trace = _trace(AFTER_1, AFTER_2)
    trace.turns[0].response = "held 12A"
    trace.turns[1].response = "paid for 12A"
    trace.turns[0].steps = [StepTrace(index=0, input=None, is_last=False, output=None, tool_calls=[
        ToolCallTrace(id="c1", name="hold", args={"seat": "12A"}, output="H-12A",
                      is_error=False, latency=0.0)])]
    trace.turns[1].steps = [StepTrace(index=0, input=None, is_last=False, output=None, tool_calls=[
        ToolCallTrace(id="c2", name="pay", args={"hold": "H-12A"}, output="no such hold",
                      is_error=True, latency=0.0)])]
    return trace


def test_a_check_function_gets_the_start_the_answer_and_the_calls_it_names() -> None:
    seen: dict[str, Any] = {}

    def check(state: dict[str, Any], *, start: Any, answer: str, calls: list[Any]) -> None:
        seen.update(state=state, start=start, answer=answer, calls=calls)

    assert _problems({"check": "m:f"}, {"m:f": check}, trace=_calling_trace()) == []
    assert seen == {"state": AFTER_2, "start": START, "answer": "paid for 12A", "calls": [
        {"name": "hold", "args": {"seat": "12A"}, "output": "H-12A", "error": False},
        {"name": "pay", "args": {"hold": "H-12A"}, "output": "no such hold", "error": True}]}


def test_a_check_function_read_after_a_turn_gets_that_turns_answer_and_calls() -> None:
    seen: dict[str, Any] = {}

    def check(state: dict[str, Any], **extras: Any) -> None:
        seen.update(extras)

    _problems({"check": "m:f", "turn": 1}, {"m:f": check}, trace=_calling_trace())

    assert seen["answer"] == "held 12A" and [c["name"] for c in seen["calls"]] == ["hold"]


def test_a_check_function_of_the_state_alone_gets_only_the_state() -> None:
    assert _problems({"check": "m:f"}, {"m:f": lambda state: None if state == AFTER_2
                                        else "not the state"}, trace=_calling_trace()) == []
