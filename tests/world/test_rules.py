"""`expect.never`: each kind of policy rule over a run's events -- a call at all, more than N
times, before or after another call, its successful result or a user message -- selected by
name, tag or arguments, ordered on the simulated clock; the message names the rule and the
call that broke it."""

from __future__ import annotations

from typing import Any

from agentkit.scenario._model import Expect, Turn
from agentkit.trace import StepTrace, ToolCallTrace, Trace, TurnTrace
from agentkit.verdict import check_expectations

TAGS = {"pay": frozenset({"payment", "mutating"}), "hold": frozenset({"mutating"})}


def _call(name: str, started: float, latency: float = 1.0, seq: int = 0, error: bool = False,
          **args: Any) -> ToolCallTrace:
    return ToolCallTrace(id=None, name=name, args=args, output="failed" if error else "ok",
                         is_error=error, latency=latency, started=started, issued=seq,
                         finished=seq + 1)


def _turn(user: str, *calls: ToolCallTrace) -> TurnTrace:
    step = StepTrace(index=0, input=None, is_last=True, output=None, tool_calls=list(calls))
    return TurnTrace(user=user, steps=[step], response="ok", error=None, memory=[],
                     wall_time=0.0, serial_time=0.0)


def _broken(rule: dict[str, Any], *turns: TurnTrace) -> list[str]:
    trace = Trace(scenario="s", agent="a", turns=list(turns))
    found = check_expectations(trace, [Turn(user=t.user) for t in turns],
                               Expect.model_validate({"never": [rule]}), tags=TAGS)
    return [str(problem) for problem in found if problem.kind == "rule"]


def test_a_call_at_all_breaks_a_rule_without_a_condition() -> None:
    assert _broken({"call": "pay"}, _turn("book", _call("pay", 2.0, card="4111"))) == [
        'rule never.0 (never pay at all) broken: pay({"card": "4111"}) (turn 1, started at '
        "2.00s) was made"]


def test_a_rule_about_a_call_never_made_holds() -> None:
    assert _broken({"call": "refund"}, _turn("book", _call("pay", 0.0))) == []


def test_more_calls_than_allowed_names_the_first_one_too_many() -> None:
    turn = _turn("book", _call("pay", 0.0), _call("pay", 1.0), _call("pay", 2.0))

    assert _broken({"call": "pay", "more_than": 1}, turn) == [
        "rule never.0 (never pay more than 1 time) broken: pay({}) (turn 1, started at 1.00s) "
        "is call 2 of pay, more than 1 (and 1 more call)"]


def test_as_many_calls_as_allowed_hold() -> None:
    assert _broken({"call": "pay", "more_than": 2}, _turn("x", _call("pay", 0), _call("pay", 1))
                   ) == []


def test_a_call_before_the_user_confirms_breaks_the_rule_named() -> None:
    rule = {"name": "confirm first", "call": "pay",
            "before": {"user": {"regex": "(?i)yes|confirm"}}}

    assert _broken(rule, _turn("Book 12A.", _call("pay", 1.0)), _turn("Yes.")) == [
        "rule 'confirm first' (never pay before the user said something matching regex "
        "'(?i)yes|confirm') broken: pay({}) (turn 1, started at 1.00s) came before the user "
        "said something matching regex '(?i)yes|confirm'"]


def test_a_call_after_the_user_confirmed_keeps_the_rule() -> None:
    rule = {"call": "pay", "before": {"user": {"contains": "yes"}}}

    assert _broken(rule, _turn("Book 12A."), _turn("yes, pay", _call("pay", 5.0))) == []


def test_a_call_before_another_call_started_breaks_the_rule() -> None:
    rule = {"call": "pay", "before": {"call": "hold"}}

    assert _broken(rule, _turn("x", _call("pay", 0.0), _call("hold", 1.0)))[0].endswith(
        "pay({}) (turn 1, started at 0.00s) came before a call of hold")
    assert _broken(rule, _turn("x", _call("hold", 0.0), _call("pay", 1.0))) == []


def test_before_a_result_waits_for_the_call_to_finish_on_the_simulated_clock() -> None:
    rule = {"call": "pay", "before": {"result": "hold"}}
    # hold runs 0-2 s: a pay started at 1 s came before its result
    concurrent = _turn("x", _call("hold", 0.0, latency=2.0), _call("pay", 1.0))
    after = _turn("x", _call("hold", 0.0, latency=2.0), _call("pay", 2.0, seq=5))

    assert _broken(rule, concurrent)[0].endswith(
        "pay({}) (turn 1, started at 1.00s) came before a successful result of hold")
    assert _broken(rule, after) == []


def test_a_failed_call_is_no_successful_result() -> None:
    rule = {"call": "pay", "before": {"result": "hold"}}

    assert _broken(rule, _turn("x", _call("hold", 0.0, error=True), _call("pay", 2.0))) != []


def test_at_the_same_simulated_time_the_order_of_events_decides() -> None:
    rule = {"call": "pay", "before": {"result": "hold"}}
    # both at 0 s (no latency): the hold ended (event 1) before the pay was issued (event 2)
    ordered = _turn("x", _call("hold", 0.0, latency=0.0, seq=0), _call("pay", 0.0, 0.0, seq=2))
    reversed_ = _turn("x", _call("pay", 0.0, 0.0, seq=0), _call("hold", 0.0, 0.0, seq=2))

    assert _broken(rule, ordered) == []
    assert _broken(rule, reversed_) != []


def test_a_call_after_an_event_names_the_event_that_came_first() -> None:
    rule = {"call": "hold", "after": {"result": "pay"}}

    assert _broken(rule, _turn("x", _call("pay", 0.0)), _turn("y", _call("hold", 0.0))) == [
        "rule never.0 (never hold after a successful result of pay) broken: hold({}) (turn 2, "
        "started at 0.00s) came after a successful result of pay: pay({}) (turn 1, started at "
        "0.00s)"]


def test_a_call_after_a_user_message_breaks_the_rule() -> None:
    rule = {"call": "pay", "after": {"user": {"contains": "stop"}}}

    assert _broken(rule, _turn("please stop"), _turn("ok", _call("pay", 0.0))) != []
    assert _broken(rule, _turn("go", _call("pay", 0.0)), _turn("please stop")) == []


def test_a_tag_selects_every_tool_given_it() -> None:
    rule = {"call": {"tag": "mutating"}, "before": {"user": {"contains": "yes"}}}

    found = _broken(rule, _turn("book", _call("hold", 0.0), _call("pay", 1.0)))

    assert found[0].startswith("rule never.0 (never a `mutating` call before the user said ")
    assert found[0].endswith("hold({}) (turn 1, started at 0.00s) came before the user said "
                             "something matching contains 'yes' (and 1 more call)")


def test_args_select_calls_by_value_or_by_a_text_match() -> None:
    turn = _turn("x", _call("pay", 0.0, card="4111 1111", amount=10),
                 _call("pay", 1.0, card="5500", amount=900))

    assert _broken({"call": {"name": "pay", "args": {"amount": 900}}}, turn)[0].endswith(
        'pay({"amount": 900, "card": "5500"}) (turn 1, started at 1.00s) was made')
    assert _broken({"call": {"args": {"card": {"regex": "^4111"}}}}, turn)[0].endswith(
        'pay({"amount": 10, "card": "4111 1111"}) (turn 1, started at 0.00s) was made')
    assert _broken({"call": {"name": "pay", "args": {"amount": 5}}}, turn) == []


def test_every_broken_rule_is_one_problem() -> None:
    trace = Trace(scenario="s", agent="a", turns=[_turn("x", _call("pay", 0), _call("pay", 1))])
    expect = Expect.model_validate({"never": [{"call": "pay", "more_than": 1},
                                              {"call": "hold"}, {"call": {"tag": "payment"}}]})

    found = check_expectations(trace, [Turn(user="x")], expect, tags=TAGS)

    assert [problem.split(" broken")[0] for problem in found] == [
        "rule never.0 (never pay more than 1 time)",
        "rule never.2 (never a `payment` call at all)"]
