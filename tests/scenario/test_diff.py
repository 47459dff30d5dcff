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


PROMPT = "\n".join(f"Rule {n}: answer in full sentences about topic {n}." for n in range(1, 30))


def _prompted(prompt: str, steps: int = 3, turns: int = 1) -> dict[str, Any]:
    """A trace whose every LLM call sends ``prompt`` as its system message."""
    def step(index: int) -> dict[str, Any]:
        item = _step(index, (), f"thought {index}", last=index == steps - 1)
        item["llm_calls"][0]["messages"] = [{"role": "system", "content": prompt},
                                            {"role": "user", "content": "hi"}]
        return item
    return _trace(*(_turn(f"question {t}", *(step(i) for i in range(steps)))
                    for t in range(1, turns + 1)))


def test_a_changed_word_in_line_13_of_a_prompt_shows_line_13_with_its_neighbours():
    changed = PROMPT.replace("Rule 13: answer in full", "Rule 13: answer in short")

    lines = diff_traces(_prompted(PROMPT, steps=1), _prompted(changed, steps=1))

    assert lines == [
        'turn 1 ("question 1"):',
        "    step 1: changed",
        "      llm_calls[0].messages[0].content:",
        "        @@ -12,3 +12,3 @@",
        "         Rule 12: answer in full sentences about topic 12.",
        "        -Rule 13: answer in full sentences about topic 13.",
        "        +Rule 13: answer in short sentences about topic 13.",
        "         Rule 14: answer in full sentences about topic 14.",
    ]


def test_a_changed_word_in_one_long_line_shows_the_words_around_it():
    before = "word " * 80 + "the answer is five " + "word " * 80
    new = _changed(lambda t: t["turns"][0]["steps"][1].update(output=before))
    newer = _changed(lambda t: t["turns"][0]["steps"][1].update(
        output=before.replace("five", "six")))

    lines = diff_traces(new, newer)

    assert lines[2:] == [
        "      output:",
        "        -…word word word word word the answer is five word word word word word word "
        "word word…",
        "        +…word word word word word the answer is six word word word word word word "
        "word word…",
    ]


def test_the_same_change_in_later_steps_is_folded_into_one_line():
    changed = PROMPT.replace("topic 13.", "topic thirteen.")

    lines = diff_traces(_prompted(PROMPT), _prompted(changed))

    assert lines[1] == "    step 1: changed"
    assert lines[-1] == "    steps 2-3: same change as step 1"
    assert sum("topic thirteen" in line for line in lines) == 1


def test_a_step_with_a_new_change_shows_it_and_names_the_repeated_one():
    changed = PROMPT.replace("topic 13.", "topic thirteen.")
    new = _prompted(changed)
    new["turns"][0]["steps"][1]["llm_calls"][0]["latency"] = 2.0

    lines = diff_traces(_prompted(PROMPT), new)

    assert lines[-4:] == [
        "    step 2: changed",
        "      llm_calls[0].latency: 0.5 -> 2.0",
        "      same change as step 1: llm_calls[0].messages[0].content",
        "    step 3: same change as step 1",
    ]


def test_a_change_repeated_in_a_later_turn_names_the_turn_it_was_shown_in():
    changed = PROMPT.replace("topic 13.", "topic thirteen.")

    lines = diff_traces(_prompted(PROMPT, steps=1, turns=2),
                        _prompted(changed, steps=1, turns=2))

    assert lines[-2:] == ['turn 2 ("question 2"):', "    step 1: same change as turn 1 step 1"]


def test_a_changed_tool_description_is_named_after_the_tool():
    def tools(description: str) -> list[dict[str, Any]]:
        return [{"name": "add", "description": "add(a: int, b: int) -> int\nAdd two numbers.",
                 "parameters": {"type": "object"}},
                {"name": "mul", "description": description, "parameters": {"type": "object"}}]

    old = {**BASE, "tools": tools("mul(a: int) -> int\nMultiply a number.")}
    new = {**BASE, "tools": tools("mul(a: int) -> int\nMultiply a number by two.")}

    assert diff_traces(old, new) == [
        "tools.mul.description:",
        "  @@ -1,2 +1,2 @@",
        "   mul(a: int) -> int",
        "  -Multiply a number.",
        "  +Multiply a number by two.",
    ]


def test_summaries_of_inserted_steps_are_shortened():
    step = copy.deepcopy(MUL_STEP)
    step["tool_calls"][0]["output"] = "x" * 500

    inserted = diff_traces(BASE, _changed(lambda t: _insert_step(t, 1, step)))[1]

    assert inserted.endswith('..."') is False and inserted.endswith("...")
    assert len(inserted) < 260


def test_a_steps_signature_is_its_tool_calls_requested_calls_and_whether_it_ended():
    step = _step(0, (("add", {}, "1"),))
    step["llm_calls"][0]["response"]["tool_calls"] = [{"name": "add"}]

    assert step_signature(step) == (("add",), (("add",),), False)
