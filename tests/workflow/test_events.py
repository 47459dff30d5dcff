"""Workflow events: pydantic models that read like dicts."""

from collections.abc import KeysView

import pytest
from pydantic import PrivateAttr

from agentkit.workflow import Event, HumanResponseEvent, StartEvent, StopEvent


class Scored(Event):
    score: int = 0


def test_an_extra_keyword_reads_as_an_attribute():
    assert Event(answer=42).answer == 42


def test_a_declared_field_is_validated():
    assert Scored(score="7").score == 7


def test_a_field_and_an_extra_both_read_by_key():
    ev = Scored(score=1, note="hi")
    assert (ev["score"], ev["note"]) == (1, "hi")


def test_a_missing_key_is_a_key_error():
    with pytest.raises(KeyError, match="nope"):
        Event()["nope"]


def test_a_missing_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="nope"):
        Event().nope


def test_get_returns_the_default_for_a_missing_key():
    assert Event().get("nope", "fallback") == "fallback"


def test_in_sees_fields_and_extras():
    ev = Scored(note="x")
    assert ("score" in ev, "note" in ev, "other" in ev) == (True, True, False)


def test_setting_an_unknown_key_adds_an_extra():
    ev = Event()
    ev["late"] = 1
    ev.later = 2
    assert ev.to_dict() == {"late": 1, "later": 2}


def test_keys_is_a_view_of_the_extras_as_upstream():
    ev = Scored(b=1, a=2)
    keys = ev.keys()
    ev["c"] = 3
    assert (isinstance(keys, KeysView), list(keys), list(ev)) == (True, ["b", "a", "c"],
                                                                  ["b", "a", "c"])


def test_values_items_and_len_cover_the_extras_only():
    ev = Scored(score=3, a=1)
    assert (list(ev.values()), list(ev.items()), len(ev)) == ([1], [("a", 1)], 1)


def test_to_dict_holds_fields_then_extras():
    assert Scored(score=3, a=1).to_dict() == {"score": 3, "a": 1}


def test_a_private_attribute_passed_to_the_constructor_is_set():
    class Secretive(Event):
        _token: str = PrivateAttr(default="none")

    ev = Secretive(_token="abc", shown=1)
    assert (ev._token, list(ev.keys())) == ("abc", ["shown"])


def test_an_empty_event_is_truthy():
    assert bool(Event())


def test_start_event_is_a_keyword_bag():
    ev = StartEvent(user_msg="hi", n=2)
    assert (ev.user_msg, ev["n"]) == ("hi", 2)


def test_stop_event_takes_its_result_positionally():
    assert StopEvent("done").result == "done"


def test_stop_event_result_defaults_to_none():
    assert StopEvent().result is None


def test_human_response_event_carries_any_keywords():
    assert HumanResponseEvent(response="John Doe").response == "John Doe"


def test_equal_payloads_make_equal_events():
    assert Scored(score=1, a=2) == Scored(score=1, a=2)
