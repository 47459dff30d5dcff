"""Step-aligned trace diffs: inserted, dropped and changed steps, then deep paths."""

from __future__ import annotations

import copy
from typing import Any

from agentkit.scenario.diff import diff_traces, step_signature


def _step(index: int, tools: tuple[tuple[str, dict[str, Any], str], ...] = (), said: str = "",
          last: bool = False) -> dict[str, Any]:
    return {"index": index, "input": None, "is_last": last, "output": said if last else None,
            "llm_calls": [{"kind": "chat", "messages": [], "response": {"content": said},
                           "latency": 0.5}],
            "tool_calls": [{"id": f"call_{index + 1}", "name": name, "args": args,
                            "output": output, "is_error": False, "latency": 1.0}
                           for name, args, output in tools]}


def _turn(user: str, *steps: dict[str, Any], response: str = "5") -> dict[str, Any]:
    return {"user": user, "steps": list(steps), "response": response,
            "memory": [{"role": "user", "content": user}], "time": {"wall": 1.0, "serial": 1.0}}


def _trace(*turns: dict[str, Any]) -> dict[str, Any]:
    return {"format": 1, "scenario": "s", "agent": "react", "turns": list(turns),
            "totals": {"steps": 2, "llm_calls": 2}}


BASE = _trace(_turn("What is 2 + 3?",
                    _step(0, (("add", {"a": 2, "b": 3}, "5"),), "Thought: add"),
                    _step(1, (), "2 + 3 = 5", last=True)))
MUL_STEP = _step(1, (("mul", {"a": 1}, "1"),), "Thought: mul")


def _changed(edit) -> dict[str, Any]:
    new = copy.deepcopy(BASE)
    edit(new)
    return new


def _insert_step(trace: dict[str, Any], position: int, step: dict[str, Any]) -> None:
    steps = trace["turns"][0]["steps"]
    steps.insert(position, copy.deepcopy(step))
    for index, item in enumerate(steps):
        item["index"] = index


def test_identical_traces_give_no_lines():
    assert diff_traces(BASE, copy.deepcopy(BASE)) == []


def test_a_changed_step_is_shown_with_the_deep_path_of_each_change():
    new = _changed(lambda t: t["turns"][0]["steps"][0]["tool_calls"][0]["args"].update(b=4))

    assert diff_traces(BASE, new) == [
        'turn 1 ("What is 2 + 3?"):',
        "    step 1: changed",
        "      tool_calls[0].args.b: 3 -> 4",
    ]


def test_a_step_calling_another_tool_is_shown_as_changed_in_place():
    new = _changed(lambda t: t["turns"][0]["steps"][0]["tool_calls"][0].update(name="plus"))

    assert diff_traces(BASE, new) == [
        'turn 1 ("What is 2 + 3?"):',
        "    step 1: changed",
        '      tool_calls[0].name: "add" -> "plus"',
    ]


def test_an_inserted_step_is_summarised_and_later_steps_stay_aligned():
    new = _changed(lambda t: _insert_step(t, 1, MUL_STEP))

    assert diff_traces(BASE, new) == [
        'turn 1 ("What is 2 + 3?"):',
        '    step 2: inserted + llm: "Thought: mul"; tool: mul({"a": 1}) -> "1"',
    ]


def test_a_dropped_step_is_summarised():
    old = _changed(lambda t: _insert_step(t, 1, MUL_STEP))

    assert diff_traces(old, BASE) == [
        'turn 1 ("What is 2 + 3?"):',
        '    step 2: dropped  - llm: "Thought: mul"; tool: mul({"a": 1}) -> "1"',
    ]


def test_a_changed_step_after_an_insertion_names_its_old_and_new_number():
    def edit(trace):
        _insert_step(trace, 0, MUL_STEP)
        trace["turns"][0]["steps"][2]["output"] = "five"

    assert diff_traces(BASE, _changed(edit)) == [
        'turn 1 ("What is 2 + 3?"):',
        '    step 1: inserted + llm: "Thought: mul"; tool: mul({"a": 1}) -> "1"',
        "    step 2 (now step 3): changed",
        '      output: "2 + 3 = 5" -> "five"',
    ]


def test_an_erroring_tool_call_is_flagged_in_a_step_summary():
    step = copy.deepcopy(MUL_STEP)
    step["tool_calls"][0]["is_error"] = True

    lines = diff_traces(BASE, _changed(lambda t: _insert_step(t, 1, step)))

    assert lines[1].endswith('tool: mul({"a": 1}) -> "1" (error)')


def test_an_inserted_turn_names_its_user_message():
    new = _changed(lambda t: t["turns"].append(_turn("And 3 + 4?", _step(0, (), "7", True))))

    assert diff_traces(BASE, new) == ['turn 2: inserted + "And 3 + 4?"']


def test_a_dropped_turn_names_its_user_message():
    old = _changed(lambda t: t["turns"].append(_turn("And 3 + 4?", _step(0, (), "7", True))))

    assert diff_traces(old, BASE) == ['turn 2: dropped - "And 3 + 4?"']


def test_turn_level_changes_follow_the_step_changes():
    def edit(trace):
        trace["turns"][0]["response"] = "five"
        trace["turns"][0]["memory"].append({"role": "assistant", "content": "five"})

    assert diff_traces(BASE, _changed(edit)) == [
        'turn 1 ("What is 2 + 3?"):',
        '    memory[1]: added {"role": "assistant", "content": "five"}',
        '    response: "5" -> "five"',
    ]


def test_header_and_totals_changes_are_listed_after_the_turns():
    def edit(trace):
        trace["agent"] = "function_calling"
        trace["totals"]["llm_calls"] = 3

    assert diff_traces(BASE, _changed(edit)) == [
        'agent: "react" -> "function_calling"',
        "totals.llm_calls: 2 -> 3",
    ]


def test_long_values_are_shortened():
    new = _changed(lambda t: t["turns"][0]["steps"][1].update(output="x" * 500))

    changed = diff_traces(BASE, new)[2]

    assert changed.startswith('      output: "2 + 3 = 5" -> "xxx') and changed.endswith('...')
    assert len(changed) < 200


def test_a_steps_signature_is_its_tool_calls_requested_calls_and_whether_it_ended():
    step = _step(0, (("add", {}, "1"),))
    step["llm_calls"][0]["response"]["tool_calls"] = [{"name": "add"}]

    assert step_signature(step) == (("add",), (("add",),), False)
