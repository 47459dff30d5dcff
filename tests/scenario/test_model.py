"""The scenario model: text matches, script items, expectations merged per agent type."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agentkit.scenario import load_scenario
from agentkit.scenario._model import (
    AgentSpec,
    ErrorItem,
    Expect,
    Scenario,
    ScriptReply,
    TextMatch,
    run_memo,
)

from .conftest import MINIMAL


def _scenario(**changes) -> Scenario:
    data = {"format": 1, "name": "m", "turns": [{"user": "hi"}],
            "agents": {"react": {"script": ["Answer: hi"]}}}
    data.update(changes)
    return Scenario.model_validate(data)


# ----------------------------------------------------------------- TextMatch
@pytest.mark.parametrize(("match", "text", "expected"), [
    ({"equals": "2 + 3 = 5"}, "2 + 3 = 5", True),
    ({"equals": "2 + 3 = 5"}, "2 + 3 = 5.", False),
    ({"contains": "5"}, "2 + 3 = 5", True),
    ({"contains": "6"}, "2 + 3 = 5", False),
    ({"regex": r"^\d \+ \d = \d$"}, "2 + 3 = 5", True),
    ({"regex": r"^\d+$"}, "2 + 3 = 5", False),
])
def test_a_text_match_compares_by_its_mode(match, text, expected):
    assert TextMatch(**match).matches(text) is expected


def test_a_text_match_treats_no_answer_as_empty_text():
    assert TextMatch(equals="").matches(None)
    assert not TextMatch(contains="x").matches(None)


def test_a_text_match_describes_itself_by_mode_and_value():
    assert TextMatch(regex="a+").describe() == "regex 'a+'"


def test_a_regex_match_searches_anywhere_in_the_text():
    assert TextMatch(regex="Nairobi").matches("The capital is Nairobi.")


# ----------------------------------------------------------------- script items
def test_script_items_are_parsed_by_their_shape():
    spec = AgentSpec.model_validate({"script": [
        "plain text",
        {"text": "t", "tool_calls": [{"name": "add", "args": {"a": 1}}]},
        {"error": {"type": "server"}},
    ]})

    assert [type(item) for item in spec.script] == [str, ScriptReply, ErrorItem]


def test_a_scripted_tool_call_cannot_have_both_args_and_raw_arguments():
    with pytest.raises(ValidationError, match="either `args` or raw `arguments`, not both"):
        ScriptReply.model_validate({"tool_calls": [{"name": "add", "args": {}, "arguments": "{}"}]})


def test_a_scripted_reply_latency_cannot_be_negative():
    with pytest.raises(ValidationError) as info:
        ScriptReply(latency=-1)

    assert [error["loc"] for error in info.value.errors()] == [("latency",)]
    assert ScriptReply(latency=0).latency == 0


# ----------------------------------------------------------------- expectations
def test_an_agent_types_expect_overrides_only_the_fields_it_sets():
    scenario = _scenario(
        expect={"answer": {"contains": "hi"}, "max_llm_calls": 1},
        agents={"react": {"script": ["Answer: hi"], "expect": {"max_llm_calls": 5}}})

    merged = scenario.expect_for("react")

    assert merged.max_llm_calls == 5
    assert merged.answer == TextMatch(contains="hi")


def test_an_agent_types_merged_expect_is_worked_out_once_per_pair_of_expects(monkeypatch):
    scenario = _scenario(
        expect={"answer": {"contains": "hi"}, "max_llm_calls": 1},
        agents={"react": {"script": ["Answer: hi"], "expect": {"max_llm_calls": 5}}})
    copies = []
    model_copy = Expect.model_copy
    monkeypatch.setattr(Expect, "model_copy",
                        lambda self, **kw: copies.append(self) or model_copy(self, **kw))

    first, again = scenario.expect_for("react"), scenario.expect_for("react")
    assert first is again and len(copies) == 1
    scenario.agents["react"].expect = Expect(max_llm_calls=7)  # another object: merged anew
    assert scenario.expect_for("react").max_llm_calls == 7 and len(copies) == 2


def test_a_run_memo_belongs_to_one_scenario_object_and_agent_type():
    # issue 36: what every run of a scenario x agent type works out the same way is kept
    # for the next run -- never for another agent type, a copy, or a changed field
    scenario = _scenario(agents={"react": {"script": ["Answer: hi"]},
                                 "function_calling": {"script": ["hi"]}})
    memo = run_memo(scenario, "react")
    memo["plan"] = "worked out"
    assert run_memo(scenario, "react") is memo
    assert run_memo(scenario, "function_calling") == {}
    assert run_memo(scenario.model_copy(), "react") == {}  # a copy (a mutant's): its own
    assert run_memo(scenario.model_copy(deep=True), "react") == {}  # a variant's
    assert run_memo(scenario, "react") is memo

    scenario.agents["react"].expect = Expect(max_llm_calls=7)  # the agent type's settings
    assert run_memo(scenario, "react") == {}
    run_memo(scenario, "react")["plan"] = "again"
    scenario.turns = [*scenario.turns]  # a field of the scenario given another object
    assert run_memo(scenario, "react") == {}


def test_a_run_memo_is_forgotten_with_its_scenario():
    import gc

    from agentkit.scenario import _model

    scenario = _scenario()
    run_memo(scenario, "react")["plan"] = "worked out"
    key = (id(scenario), "react")
    assert key in _model._MEMOS
    del scenario
    gc.collect()
    assert key not in _model._MEMOS


def test_an_agent_type_without_expect_uses_the_scenarios():
    scenario = _scenario(expect={"max_steps": 3})

    assert scenario.expect_for("react") == Expect(max_steps=3)


def test_an_agent_type_can_clear_a_scenario_expectation_with_null():
    scenario = _scenario(expect={"answer": {"contains": "hi"}},
                         agents={"react": {"script": ["x"], "expect": {"answer": None}}})

    assert scenario.expect_for("react").answer is None


def test_tool_call_expectations_default_to_strict_order_and_exact_args():
    expect = Expect.model_validate({"tool_calls": {"calls": [{"name": "add"}]}})

    assert (expect.tool_calls.match, expect.tool_calls.args) == ("strict", "exact")


# ----------------------------------------------------------------- locations
def test_a_loaded_scenario_knows_the_line_of_each_field(write_file):
    path = write_file("where.yaml", MINIMAL)

    scenario = load_scenario(path)

    assert scenario.where("tools", 0, "ref") == f"{path}:4"
    assert scenario.where("agents", "function_calling") == f"{path}:9"


def test_a_scenario_built_in_code_is_located_by_its_name():
    assert _scenario().where("tools", 0) == "m"
