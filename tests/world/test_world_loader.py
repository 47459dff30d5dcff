"""Malformed `world:`, `expect.state`, `expect.never` and tool `tags:` get errors naming the
file, the line and the field, like every loader error; planning checks what needs the tools'
code (the names a rule gives)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit.harness import load
from agentkit.scenario import ScenarioError

from .conftest import BOOKS, HEADER


def _error(path: Path) -> str:
    with pytest.raises(ScenarioError) as info:
        load(path)
    return str(info.value)


def test_a_world_with_both_a_factory_and_an_object_is_an_error_at_world(write):
    path = write(HEADER.replace('  ref: "desk:Desk"\n', '  ref: "desk:Desk"\n  object: "desk:X"\n')
                 + BOOKS)

    assert _error(path) == (f"{path}:7: world: give a world exactly one of `ref` (a factory "
                            "building a fresh world per run) or `object` (state your project "
                            "keeps, saved and restored around each run)")


def test_data_given_to_an_object_is_an_error(write):
    path = write(HEADER.replace('  ref: "desk:Desk"', '  object: "desk:LEDGER"') + BOOKS)

    assert "world: `data` is what the factory `ref` is called with" in _error(path)


def test_a_world_ref_that_is_not_an_import_ref_names_the_field(write):
    path = write(HEADER.replace('"desk:Desk"', '"desk.Desk"') + BOOKS)

    assert _error(path).startswith(f"{path}:7: world.ref: 'desk.Desk' is not an import ref")


def test_a_misspelt_world_field_gets_a_suggestion(write):
    path = write(HEADER.replace("  data:", "  dta:") + BOOKS)

    assert _error(path) == f"{path}:8: world.dta: unknown field `dta`; did you mean `data`?"


def test_expect_state_without_a_world_is_an_error_at_state(write):
    text = HEADER.replace('world:\n  ref: "desk:Desk"\n  data: {seats: {12A: free, 12B: sold}}\n',
                          "")
    path = write(text + "expect:\n  state:\n    paths: {seats.12A: {equals: sold}}\n" + BOOKS)

    assert _error(path).startswith(f"{path}:9: expect.state: `state` is read from the "
                                   "scenario's world, and it declares none")


def test_a_state_path_match_needs_exactly_one_kind(write):
    path = write(HEADER + "expect:\n  state:\n    paths:\n      holds: {equals: {}, "
                          "unchanged: true}\n" + BOOKS)

    assert _error(path) == (f"{path}:14: expect.state.paths.holds: give exactly one of "
                            "`equals`, `contains`, `regex` or `unchanged: true`")


def test_a_malformed_state_path_is_an_error_at_its_key(write):
    path = write(HEADER + "expect:\n  state:\n    paths:\n      seats..12A: {equals: sold}\n"
                 + BOOKS)

    assert _error(path) == (f"{path}:14: expect.state.paths.seats..12A: path 'seats..12A': "
                            "write keys and list indexes joined by dots (`bookings.0.status`), "
                            "without spaces or empty parts")


def test_a_state_expectation_saying_nothing_is_an_error(write):
    path = write(HEADER + "expect:\n  state: {turn: 1}\n" + BOOKS)

    assert _error(path) == (f"{path}:12: expect.state: say what the world must hold: `paths`, "
                            "`unchanged: true` or a `check` function")


def test_a_state_turn_the_scenario_does_not_have_is_an_error(write):
    path = write(HEADER + "expect:\n  state: {unchanged: true, turn: 2}\n" + BOOKS)

    assert _error(path) == f"{path}:12: expect.state.turn: turn 2: this scenario has 1 turn"


def test_an_invalid_regex_in_a_state_path_is_an_error(write):
    path = write(HEADER + "expect:\n  state:\n    paths:\n      holds: {regex: '('}\n" + BOOKS)

    assert _error(path).startswith(f"{path}:14: expect.state.paths.holds: invalid regex '('")


def test_a_rule_with_two_conditions_is_an_error(write):
    path = write(HEADER + "expect:\n  never:\n    - call: pay\n      before: hold_seat\n"
                          "      more_than: 1\n" + BOOKS)

    assert _error(path) == (f"{path}:13: expect.never.0: give at most one of `before`, `after` "
                            "or `more_than` (got before and more_than); write two rules for two "
                            "conditions")


def test_a_rule_naming_no_call_is_an_error(write):
    path = write(HEADER + "expect:\n  never:\n    - call: {}\n" + BOOKS)

    assert _error(path) == (f"{path}:13: expect.never.0.call: say which calls: give `name`, "
                            "`tag` or `args`")


def test_a_rule_event_of_two_kinds_is_an_error(write):
    path = write(HEADER + "expect:\n  never:\n    - call: pay\n      before: {call: hold_seat, "
                          "user: {contains: ok}}\n" + BOOKS)

    assert _error(path).startswith(f"{path}:14: expect.never.0.before: give exactly one of "
                                   "`call` (a call starts), `result` (a call succeeds) or `user`")


def test_a_misspelt_rule_event_gets_a_suggestion(write):
    path = write(HEADER + "expect:\n  never:\n    - call: pay\n      after: {reslt: hold_seat}\n"
                 + BOOKS)

    assert _error(path) == (f"{path}:14: expect.never.0.after.reslt: unknown field `reslt`; "
                            "did you mean `result`?")


def test_a_negative_more_than_is_an_error(write):
    path = write(HEADER + "expect:\n  never:\n    - {call: pay, more_than: -1}\n" + BOOKS)

    assert _error(path) == f"{path}:13: expect.never.0.more_than: must be >= 0, got -1"


def test_a_tag_no_tool_has_is_an_error_with_a_suggestion(write):
    path = write(HEADER + "expect:\n  never:\n    - call: {tag: paymnt}\n" + BOOKS)

    assert _error(path) == (f"{path}:13: expect.never.0.call.tag: no tool of the scenario is "
                            "tagged `paymnt`; did you mean `payment`?")


def test_a_tag_in_a_rule_event_is_checked_too(write):
    path = write(HEADER + "expect:\n  never:\n    - call: pay\n      after: {result: {tag: "
                          "refund}}\n" + BOOKS)

    assert _error(path) == (f"{path}:14: expect.never.0.after.result.tag: no tool of the "
                            "scenario is tagged `refund`; tags given: payment")


def test_a_malformed_tag_is_an_error(write):
    path = write(HEADER.replace("tags: [payment]", "tags: [pay ment]") + BOOKS)

    assert _error(path).startswith(f"{path}:5: tools.1.tags: tag 'pay ment': use letters")


def test_a_rule_naming_no_tool_of_the_scenario_is_an_error_when_planned(write):
    path = write(HEADER + "expect:\n  never:\n    - call: pya\n      before: {result: "
                          "hold_set}\n" + BOOKS)

    assert _error(path) == (
        f"{path}:13: expect.never.0.call.name: `pya` is not a tool of the scenario; did you "
        "mean `pay`?\n"
        f"{path}:14: expect.never.0.before.result.name: `hold_set` is not a tool of the "
        "scenario; did you mean `hold_seat`?")


def test_every_mistake_of_the_new_keys_is_reported_at_once(write):
    path = write(HEADER.replace("  data:", "  dta:") + "expect:\n  state: {turn: 3, unchanged: "
                 "true}\n  never:\n    - call: {tag: nope}\n" + BOOKS)

    assert [line.split(": ", 2)[1] for line in _error(path).splitlines()] == [
        "world.dta", "expect.state.turn", "expect.never.0.call.tag"]


def test_a_valid_world_and_rules_load(write):
    path = write(HEADER + "expect:\n  state:\n    paths: {seats.12A: {equals: sold}}\n"
                          "  never:\n    - name: pay once\n      call: pay\n      more_than: 1\n"
                 + BOOKS)

    scenario = load(path)

    assert scenario.world is not None and scenario.world.data == {
        "seats": {"12A": "free", "12B": "sold"}}
    assert scenario.expect.never is not None and scenario.expect.never[0].describe() == (
        "pay more than 1 time")
