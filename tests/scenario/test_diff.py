"""Step-aligned trace diffs: inserted, dropped and changed steps, then deep paths."""

from __future__ import annotations

import copy
import json
from typing import Any

from agentkit.core.textdiff import ANSI
from agentkit.trace._diff import diff_traces, step_signature


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
        "      tool_calls[0] (add).args.b: 3 -> 4",
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
        "        ~Rule 13: answer in [-full-]{+short+} sentences about topic 13.",
        "         Rule 14: answer in full sentences about topic 14.",
    ]


def test_a_changed_word_in_one_long_line_is_marked_among_the_words_around_it():
    before = "word " * 80 + "the answer is five " + "word " * 80
    new = _changed(lambda t: t["turns"][0]["steps"][1].update(output=before))
    newer = _changed(lambda t: t["turns"][0]["steps"][1].update(
        output=before.replace("five", "six")))

    lines = diff_traces(new, newer)

    assert lines[2:] == [
        "      output:",
        "        ~…word word word word word the answer is [-five-]{+six+} word word word word "
        "word word word word…",
    ]


def test_a_change_every_request_repeats_is_shown_once_with_where_else_it_is():
    changed = PROMPT.replace("topic 13.", "topic thirteen.")

    lines = diff_traces(_prompted(PROMPT), _prompted(changed))

    assert lines == [
        'turn 1 ("question 1"):',
        "    step 1: changed",
        "      llm_calls[0].messages[0].content:",
        "        also in: requests of steps 2-3",
        "        @@ -12,3 +12,3 @@",
        "         Rule 12: answer in full sentences about topic 12.",
        "        ~Rule 13: answer in full sentences about topic [-13-]{+thirteen+}.",
        "         Rule 14: answer in full sentences about topic 14.",
    ]


def test_a_step_with_a_new_change_besides_a_repeated_one_shows_the_new_one():
    changed = PROMPT.replace("topic 13.", "topic thirteen.")
    new = _prompted(changed)
    new["turns"][0]["steps"][1]["llm_calls"][0]["latency"] = 2.0

    lines = diff_traces(_prompted(PROMPT), new)

    assert lines[-2:] == ["    step 2: changed", "      llm_calls[0].latency: 0.5 -> 2.0"]


def test_a_change_repeated_in_a_later_turn_names_the_turn():
    changed = PROMPT.replace("topic 13.", "topic thirteen.")

    lines = diff_traces(_prompted(PROMPT, steps=1, turns=2),
                        _prompted(changed, steps=1, turns=2))

    assert lines[3] == "        also in: turn 2 step 1 request"
    assert not any(line.startswith("turn 2") for line in lines)


REPORT = ("Order A-1001: two items, paid by card on 2026-11-02, shipped from the Lyon "
          "warehouse; the refund request was approved by the support desk and will be credited "
          "in 5 days.")


def _support(report: str) -> dict[str, Any]:
    """A function-calling trace: look the order up, answer; the tool's report goes on to the
    next request, the memory and (quoted) the answer."""
    question = {"role": "user", "content": "Where is my refund?"}
    asked = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_1", "name": "lookup_order", "args": {"order_id": "A-1001"}}]}
    told = {"role": "tool", "content": report, "name": "lookup_order"}
    answer = f"The desk says: {report}"
    first = {"index": 0, "input": "Where is my refund?", "is_last": False, "output": "",
             "llm_calls": [{"kind": "chat", "messages": [question],
                            "response": {"content": "", "tool_calls": asked["tool_calls"]},
                            "usage": {"prompt_tokens": 120, "completion_tokens": 20},
                            "latency": 0.0}],
             "tool_calls": [{"id": "call_1", "name": "lookup_order",
                             "args": {"order_id": "A-1001"}, "output": report,
                             "is_error": False, "latency": 0.0}]}
    second = {"index": 1, "input": None, "is_last": True, "output": answer,
              "llm_calls": [{"kind": "chat", "messages": [question, asked, told],
                             "response": {"content": answer},
                             "usage": {"prompt_tokens": 160, "completion_tokens": 40},
                             "latency": 0.0}],
              "tool_calls": []}
    turn = {"user": "Where is my refund?", "steps": [first, second], "response": answer,
            "memory": [question, asked, told, {"role": "assistant", "content": answer}],
            "time": {"wall": 0.0, "serial": 0.0}}
    return {"format": 2, "scenario": "support", "agent": "function_calling", "tools": [],
            "turns": [turn], "totals": {"steps": 2, "llm_calls": 2, "prompt_tokens": 280,
                                        "completion_tokens": 60}}


def test_a_tool_output_seen_in_the_reply_the_memory_and_the_answer_is_shown_once():
    lines = diff_traces(_support(REPORT), _support(REPORT.replace("approved", "rejected")))

    assert lines == [
        'turn 1 ("Where is my refund?"):',
        "    step 1: changed",
        "      tool_calls[0] (lookup_order).output:",
        "        also in: next request, step 2 reply, step 2 output, memory, response",
        "        ~…Lyon warehouse; the refund request was [-approved-]{+rejected+} by the "
        "support desk and will be…",
    ]


def test_a_changed_user_message_is_shown_at_its_turn_with_where_the_steps_repeat_it():
    old = _support(REPORT)
    new = json.loads(json.dumps(old).replace("Where is my refund?", "Where is my refund now?"))

    assert diff_traces(old, new) == [
        'turn 1 ("Where is my refund now?"):',
        '    user: "Where is my refund?" -> "Where is my refund now?"',
        "      also in: step 1 input, requests of steps 1-2, memory",
    ]


def _tokens(trace: dict[str, Any], step: int, prompt: int, completion: int) -> None:
    trace["turns"][0]["steps"][step]["llm_calls"][0]["usage"] = {
        "prompt_tokens": prompt, "completion_tokens": completion}


def test_usage_changed_beside_other_changes_is_one_line_per_step():
    old, new = _support(REPORT), _support(REPORT.replace("5 days", "five working days"))
    _tokens(new, 1, 163, 43)
    new["totals"].update(prompt_tokens=283, completion_tokens=63)

    lines = diff_traces(old, new)

    assert lines[-2:] == ["    step 2: usage: 1 LLM call, tokens 160+40 -> 163+43",
                          "totals: tokens 280+60 -> 283+63"]


def test_usage_is_shown_field_by_field_when_it_is_all_that_changed():
    new = _support(REPORT)
    _tokens(new, 1, 163, 40)
    new["totals"]["prompt_tokens"] = 283

    assert diff_traces(_support(REPORT), new) == [
        'turn 1 ("Where is my refund?"):',
        "    step 2: changed",
        "      llm_calls[0].usage.prompt_tokens: 160 -> 163",
        "totals: tokens 280+60 -> 283+60",
    ]


def test_usage_of_a_step_is_summed_over_its_llm_calls():
    old, new = _support(REPORT), _support(REPORT)
    for trace, prompt in ((old, 100), (new, 104)):
        trace["turns"][0]["steps"][0]["llm_calls"].append(
            {"kind": "chat", "messages": [], "response": {"content": "retry"},
             "usage": {"prompt_tokens": prompt, "completion_tokens": 2}, "latency": 0.0})
    _tokens(new, 0, 125, 20)
    new["turns"][0]["steps"][0]["llm_calls"][1]["latency"] = 1.0

    assert diff_traces(old, new)[1:] == [
        "    step 1: changed",
        "      llm_calls[1].latency: 0.0 -> 1.0",
        "      usage: 2 LLM calls, tokens 220+22 -> 229+22",
    ]


def test_a_step_of_a_team_names_its_agent():
    old, new = _support(REPORT), _support(REPORT)
    for trace in (old, new):
        trace["turns"][0]["steps"][0]["agent"] = "triage"
        trace["turns"][0]["steps"][1]["agent"] = "researcher"
    new["turns"][0]["steps"][1]["llm_calls"][0]["latency"] = 1.0

    assert diff_traces(old, new)[1] == "    step 2 (researcher): changed"


def test_a_step_of_a_single_agent_does_not_name_it():
    old, new = _support(REPORT), _support(REPORT)
    for trace in (old, new):
        for step in trace["turns"][0]["steps"]:
            step["agent"] = "Agent"
    new["turns"][0]["steps"][1]["llm_calls"][0]["latency"] = 1.0

    assert diff_traces(old, new)[1] == "    step 2: changed"


def test_a_terminal_diff_colours_the_changed_words():
    lines = diff_traces(_support(REPORT), _support(REPORT.replace("approved", "rejected")),
                        ANSI)

    assert "was \x1b[31;9mapproved\x1b[0m\x1b[32;4mrejected\x1b[0m by" in lines[-1]


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
        "  ~Multiply a number{+ by two+}.",
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
