"""Expectations: every mode passes when it should, and a failure says what differed."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.scenario._model import Expect, Turn
from agentkit.scenario.check import check_expectations
from agentkit.trace._trace import LLMCallTrace, StepTrace, ToolCallTrace, Trace, TurnTrace


def _turn(response: str | None = "done", *, calls: list[tuple[str, dict[str, Any]]] = (),
          error: str | None = None, memory: list[dict[str, Any]] | None = None,
          steps: int = 1, llm_calls: int = 1, wall: float = 0.0, serial: float = 0.0,
          user: str = "q") -> TurnTrace:
    tool_calls = [ToolCallTrace(id=f"call_{i + 1}", name=name, args=args, output="ok",
                                is_error=False, latency=0.0)
                  for i, (name, args) in enumerate(calls)]
    step_list = [StepTrace(index=i, input=None, is_last=i == steps - 1, output=None)
                 for i in range(steps)]
    step_list[0].tool_calls = tool_calls
    step_list[0].llm_calls = [LLMCallTrace(kind="chat", messages=[], response=None, usage=None,
                                           latency=0.0) for _ in range(llm_calls)]
    return TurnTrace(user=user, steps=step_list, response=response, error=error,
                     memory=memory or [], wall_time=wall, serial_time=serial)


def _trace(*turns: TurnTrace) -> Trace:
    return Trace(scenario="s", agent="a", turns=list(turns))


def _check(trace: Trace, expect: dict[str, Any], turns: list[dict[str, Any]] | None = None
           ) -> list[str]:
    specs = [Turn.model_validate(t) for t in (turns or [{"user": "q"}] * len(trace.turns))]
    return check_expectations(trace, specs, Expect.model_validate(expect))


def _calls(match: str, args: str, *calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": {"match": match, "args": args,
                           "calls": [{"name": n, "args": a} for n, a in calls]}}


ADD = ("add", {"a": 1, "b": 2})
MUL = ("mul", {"a": 3, "b": 4})


# ----------------------------------------------------------------- tool calls: strict
def test_strict_passes_when_the_calls_are_the_same_in_order():
    assert _check(_trace(_turn(calls=[ADD, MUL])), _calls("strict", "exact", ADD, MUL)) == []


def test_strict_fails_on_the_first_call_out_of_order_naming_the_order():
    problems = _check(_trace(_turn(calls=[MUL, ADD])), _calls("strict", "exact", ADD, MUL))

    assert problems == ['tool calls (strict, args exact): call 1: expected add({"a": 1, "b": 2}), '
                        'got mul({"a": 3, "b": 4}): the order differs (it was made as call 2)']


def test_strict_fails_when_an_expected_call_was_not_made():
    problems = _check(_trace(_turn(calls=[ADD])), _calls("strict", "exact", ADD, MUL))

    assert problems == ['tool calls (strict, args exact): call 2: expected mul({"a": 3, "b": 4}), '
                        'got no call']


def test_strict_fails_when_an_extra_call_was_made():
    problems = _check(_trace(_turn(calls=[ADD, MUL])), _calls("strict", "exact", ADD))

    assert problems == ['tool calls (strict, args exact): call 2: expected no call, got '
                        'mul({"a": 3, "b": 4})']


# ----------------------------------------------------------------- tool calls: unordered
def test_unordered_passes_with_the_same_calls_in_any_order():
    assert _check(_trace(_turn(calls=[MUL, ADD])), _calls("unordered", "exact", ADD, MUL)) == []


def test_unordered_fails_naming_a_missing_call_and_what_was_made():
    problems = _check(_trace(_turn(calls=[MUL])), _calls("unordered", "exact", ADD, MUL))

    assert problems == ['tool calls (unordered, args exact): expected add({"a": 1, "b": 2}) but it '
                        'was not made (made: mul({"a": 3, "b": 4}))']


def test_unordered_fails_naming_an_unexpected_call():
    problems = _check(_trace(_turn(calls=[MUL, ADD])), _calls("unordered", "exact", ADD))

    assert problems == ['tool calls (unordered, args exact): unexpected mul({"a": 3, "b": 4})']


def test_unordered_counts_repeated_calls():
    problems = _check(_trace(_turn(calls=[ADD])), _calls("unordered", "exact", ADD, ADD))

    assert problems == ['tool calls (unordered, args exact): expected add({"a": 1, "b": 2}) but it '
                        'was not made (made: add({"a": 1, "b": 2}))']


def test_unordered_names_what_differs_in_the_call_of_that_name_that_was_made():
    made = [("add", {"a": 1, "b": 3})]

    assert _check(_trace(_turn(calls=made)), _calls("unordered", "exact", ADD)) == [
        'tool calls (unordered, args exact): expected add({"a": 1, "b": 2}) but it was not made '
        '(made: add({"a": 1, "b": 3})); the call of add made differs: the args differ (args: '
        'exact): `b`', 'tool calls (unordered, args exact): unexpected add({"a": 1, "b": 3})']


def test_unordered_matching_lets_a_loose_spec_yield_a_call_to_a_stricter_one():
    made = [("add", {"a": 1}), ("add", {"a": 2})]
    expect = {"tool_calls": {"match": "unordered", "args": "subset",
                             "calls": [{"name": "add"}, {"name": "add", "args": {"a": 1}}]}}

    assert _check(_trace(_turn(calls=made)), expect) == []


# ----------------------------------------------------------------- tool calls: subset/superset
def test_subset_passes_when_extra_calls_were_made():
    assert _check(_trace(_turn(calls=[MUL, ADD, MUL])), _calls("subset", "exact", ADD)) == []


def test_subset_fails_when_an_expected_call_was_not_made():
    problems = _check(_trace(_turn(calls=[MUL])), _calls("subset", "exact", ADD))

    assert problems == ['tool calls (subset, args exact): expected add({"a": 1, "b": 2}) but it '
                        'was not made (made: mul({"a": 3, "b": 4}))']


def test_superset_passes_when_expected_calls_were_left_out():
    assert _check(_trace(_turn(calls=[ADD])), _calls("superset", "exact", ADD, MUL)) == []


def test_superset_fails_when_an_unexpected_call_was_made():
    made = [ADD, ("div", {})]

    problems = _check(_trace(_turn(calls=made)), _calls("superset", "exact", ADD, MUL))

    assert problems == ["tool calls (superset, args exact): unexpected div({})"]


def test_tool_calls_of_every_turn_are_checked_together():
    trace = _trace(_turn(calls=[ADD]), _turn(calls=[MUL]))

    assert _check(trace, _calls("strict", "exact", ADD, MUL)) == []


# ----------------------------------------------------------------- tool calls: args modes
def test_exact_args_fail_on_an_extra_argument_naming_it():
    made = [("add", {"a": 1, "b": 2, "c": 0})]

    assert _check(_trace(_turn(calls=made)), _calls("strict", "exact", ADD)) == [
        'tool calls (strict, args exact): call 1: expected add({"a": 1, "b": 2}), got '
        'add({"a": 1, "b": 2, "c": 0}): the args differ (args: exact): `c`']


def test_exact_args_with_none_given_say_that_the_entry_gives_none():
    made = [("add", {"a": 1, "b": 2})]

    assert _check(_trace(_turn(calls=made)), _calls("strict", "exact", ("add", {}))) == [
        'tool calls (strict, args exact): call 1: expected add({}), got add({"a": 1, "b": 2}): '
        "the args differ (args: exact, and the entry gives none, so the call must have none; it "
        "has `a`, `b`): give its args, or `args: subset` to check only those given"]


def test_ignored_args_pass_whatever_the_arguments_were():
    made = [("add", {"a": 7})]

    assert _check(_trace(_turn(calls=made)), _calls("strict", "ignore", ADD)) == []


def test_ignored_args_still_compare_tool_names_naming_the_name():
    problems = _check(_trace(_turn(calls=[MUL])), _calls("strict", "ignore", ADD))

    assert problems == ['tool calls (strict, args ignore): call 1: expected add({"a": 1, "b": 2}), '
                        'got mul({"a": 3, "b": 4}): the name differs (mul, expected add)']


def test_subset_args_pass_when_the_expected_ones_are_given_among_others():
    made = [("add", {"a": 1, "b": 2, "c": 3})]

    assert _check(_trace(_turn(calls=made)), _calls("strict", "subset", ("add", {"a": 1}))) == []


def test_subset_args_fail_when_an_expected_value_differs_naming_it():
    problems = _check(_trace(_turn(calls=[ADD])), _calls("strict", "subset", ("add", {"a": 9})))

    assert problems == ['tool calls (strict, args subset): call 1: expected add({"a": 9}), got '
                        'add({"a": 1, "b": 2}): the args differ (args: subset): `a` 1 (expected 9)']


def test_an_expected_error_that_did_not_happen_is_named_as_the_part_that_differs():
    expect = {"tool_calls": {"calls": [{"name": "add", "args": ADD[1],
                                        "error": {"contains": "declined"}}]}}

    assert _check(_trace(_turn(calls=[ADD])), expect) == [
        'tool calls (strict, args exact): call 1: expected add({"a": 1, "b": 2}) -> error '
        "contains 'declined', got add({\"a\": 1, \"b\": 2}): it did not fail (it returned \"ok\")"]


def test_an_output_that_differs_is_named_as_the_part_that_differs():
    expect = {"tool_calls": {"calls": [{"name": "add", "args": ADD[1],
                                        "output": {"contains": "3"}}]}}

    assert _check(_trace(_turn(calls=[ADD])), expect) == [
        'tool calls (strict, args exact): call 1: expected add({"a": 1, "b": 2}) -> output '
        "contains '3', got add({\"a\": 1, \"b\": 2}): its output \"ok\" does not match "
        "contains '3'"]


# ----------------------------------------------------------------- answers
@pytest.mark.parametrize("match", [{"equals": "Paris"}, {"contains": "ari"}, {"regex": "^P.r"}])
def test_a_turn_answer_passes_in_each_mode(match):
    assert _check(_trace(_turn("Paris")), {}, [{"user": "q", "answer": match}]) == []


@pytest.mark.parametrize(("match", "described"), [
    ({"equals": "Rome"}, "equals 'Rome'"), ({"contains": "Ro"}, "contains 'Ro'"),
    ({"regex": "^R"}, "regex '^R'")])
def test_a_turn_answer_failure_names_the_turn_the_answer_and_the_match(match, described):
    trace = _trace(_turn("Paris"), _turn("Paris"))

    problems = _check(trace, {}, [{"user": "a"}, {"user": "b", "answer": match}])

    assert problems == [f"turn 2: answer 'Paris' does not match {described}"]


def test_the_final_answer_is_the_last_turns():
    trace = _trace(_turn("first"), _turn("second"))

    assert _check(trace, {"answer": {"equals": "second"}}) == []
    assert _check(trace, {"answer": {"equals": "first"}}) == [
        "final answer 'second' does not match equals 'first'"]


# ----------------------------------------------------------------- errors
def test_an_expected_error_that_happened_passes():
    trace = _trace(_turn(None, error="ValueError: Reached max iterations."))

    assert _check(trace, {"error": {"contains": "max iterations"}}) == []


def test_an_expected_error_with_other_text_says_both():
    trace = _trace(_turn(None, error="ServerError: boom"))

    assert _check(trace, {"error": {"contains": "timeout"}}) == [
        "error 'ServerError: boom' does not match contains 'timeout'"]


def test_an_unexpected_error_fails_naming_the_turn():
    trace = _trace(_turn("ok"), _turn(None, error="ServerError: boom"))

    assert _check(trace, {}, [{"user": "a"}, {"user": "b"}]) == ["turn 2 failed: ServerError: boom"]


def test_an_expected_error_that_did_not_happen_fails():
    assert _check(_trace(_turn("fine")), {"error": {"contains": "boom"}}) == [
        "expected the run to fail with an error matching contains 'boom', but it succeeded"]


# ----------------------------------------------------------------- limits
def test_steps_up_to_max_steps_pass_and_more_fail():
    trace = _trace(_turn(steps=3))

    assert _check(trace, {"max_steps": 3}) == []
    assert _check(trace, {"max_steps": 2}) == ["3 steps, more than max_steps 2"]


def test_llm_calls_up_to_max_llm_calls_pass_and_more_fail():
    trace = _trace(_turn(llm_calls=2))

    assert _check(trace, {"max_llm_calls": 2}) == []
    assert _check(trace, {"max_llm_calls": 1}) == ["2 LLM calls, more than max_llm_calls 1"]


def test_wall_time_up_to_max_wall_time_passes_and_more_fails_showing_serial_time():
    trace = _trace(_turn(wall=2.0, serial=3.0), _turn(wall=1.5, serial=1.5))

    assert _check(trace, {"max_wall_time": 3.5}) == []
    assert _check(trace, {"max_wall_time": 3}) == [
        "simulated wall time 3.50s is over max_wall_time 3.00s (serial time 4.50s)"]


# ----------------------------------------------------------------- memory
MEMORY = [{"role": "user", "content": "What is 2 + 3?"},
          {"role": "assistant", "content": "2 + 3 = 5"}]


def test_memory_matching_role_content_and_contains_passes():
    expect = {"memory": [{"role": "user", "content": "What is 2 + 3?"},
                         {"role": "assistant", "contains": "= 5"}]}

    assert _check(_trace(_turn(memory=MEMORY)), expect) == []


def test_memory_with_a_role_only_accepts_any_content():
    assert _check(_trace(_turn(memory=MEMORY)), {"memory": [{"role": "user"},
                                                            {"role": "assistant"}]}) == []


def test_memory_of_another_length_fails_listing_the_roles():
    problems = _check(_trace(_turn(memory=MEMORY)), {"memory": [{"role": "user"}]})

    assert problems == ["memory: expected 1 messages, got 2 (user > assistant)"]


def test_memory_with_another_role_fails_naming_the_index():
    problems = _check(_trace(_turn(memory=MEMORY)), {"memory": [{"role": "user"},
                                                                {"role": "tool"}]})

    assert problems == ["memory[1]: expected role tool, got assistant"]


def test_memory_with_other_content_fails_showing_both():
    expect = {"memory": [{"role": "user", "content": "What is 2 + 2?"}, {"role": "assistant"}]}

    assert _check(_trace(_turn(memory=MEMORY)), expect) == [
        "memory[0]: expected content 'What is 2 + 2?', got 'What is 2 + 3?'"]


def test_memory_without_the_expected_text_fails_showing_the_content():
    expect = {"memory": [{"role": "user"}, {"role": "assistant", "contains": "six"}]}

    assert _check(_trace(_turn(memory=MEMORY)), expect) == [
        "memory[1]: expected content containing 'six', got '2 + 3 = 5'"]


def test_memory_is_checked_after_the_last_turn():
    trace = _trace(_turn(memory=MEMORY[:1]), _turn(memory=MEMORY))

    assert _check(trace, {"memory": [{"role": "user"}, {"role": "assistant"}]}) == []


def test_every_failed_expectation_is_reported():
    trace = _trace(_turn("no", calls=[MUL], llm_calls=3))

    problems = _check(trace, {"answer": {"equals": "yes"}, "max_llm_calls": 1,
                              **_calls("strict", "exact", ADD)})

    assert len(problems) == 3


@pytest.mark.slow  # waits out the regex budget
def test_a_regex_that_backtracks_without_end_is_one_problem_naming_it_not_a_hang():
    trace = _trace(_turn("a" * 60 + "b"))

    problems = _check(trace, {"answer": {"regex": "^(a|aa)+$"}})

    assert problems == [
        "an expectation could not be checked: regex '^(a|aa)+$' took more than 2 s on a "
        "61-character text (nested repetition such as `(a+)+` backtracks without end); write "
        "it without a repetition inside a repetition"]


def test_a_nested_repetition_that_hangs_python_re_is_matched_as_written():
    # `(a+)+$` backtracks for minutes in `re` on this text; the regex engine answers it
    trace = _trace(_turn("a" * 40 + "b"))

    assert _check(trace, {"answer": {"regex": "^(a+)+$"}}) == [
        f"final answer {'a' * 40 + 'b'!r} does not match regex '^(a+)+$'"]


# ----------------------------------------------------------------- tool calls: outputs
@pytest.mark.parametrize("match", ["strict", "unordered"])
def test_an_output_expectations_failure_shows_the_output_the_call_had(match):
    expect = {"tool_calls": {"match": match, "calls": [
        {"name": "add", "args": {"a": 1, "b": 2}, "output": {"equals": "3"}}]}}

    problems = _check(_trace(_turn(calls=[ADD])), expect)

    # expected `-> output equals '3'`; what the call answered is shown beside it (strict
    # order names the output as the part that differs: `its output "ok" does not match`)
    assert 'add({"a": 1, "b": 2})' in problems[0] and 'output "ok"' in problems[0]
