"""The fault matrix: a scenario expanded into stably named variants, each run under the agent
types that run offline, scripts rendered from the trajectory plus what a correct agent does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentkit.harness import (
    NoFaultsError,
    fault_variants,
    load,
    run_fault_matrix,
    variant_scenario,
)
from agentkit.scenario import ScenarioError

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "faults" / "scenarios" / "order_support.yaml"
LOOKUPS = ROOT / "scenarios" / "trajectory_parallel_lookups.yaml"


def test_variants_are_one_per_tool_call_and_kind_named_stably() -> None:
    variants = fault_variants(EXAMPLE)

    assert len(variants) == 33
    assert [v.label for v in variants[:3]] == ["find_customer#1:error", "find_customer#1:timeout",
                                               "find_customer#1:rate_limit"]
    assert variants[12].name("order_support", "react") == \
        "order_support[react]~lookup_order#1:timeout"


def test_a_kind_that_cannot_apply_to_a_calls_output_makes_no_variant() -> None:
    kinds = {v.fault.kind for v in fault_variants(LOOKUPS, tools=["add"])}

    assert "drop_fields" not in kinds and "malformed_json" not in kinds  # add answers a number
    assert {"timeout", "truncate", "wrong_type"} <= kinds


def test_a_budget_keeps_a_deterministic_sample_in_order() -> None:
    every = [v.label for v in fault_variants(EXAMPLE)]
    first = [v.label for v in fault_variants(EXAMPLE, max_variants=10)]

    assert first == [v.label for v in fault_variants(EXAMPLE, max_variants=10)]
    assert len(first) == 10 and first == [label for label in every if label in first]


def test_a_tool_the_run_never_calls_is_named() -> None:
    with pytest.raises(NoFaultsError, match="makes no call of `refund`"):
        fault_variants(EXAMPLE, tools=["refund"])


def test_a_retry_renumbers_the_calls_after_it() -> None:
    scenario = load(LOOKUPS)
    variant = next(v for v in fault_variants(scenario, kinds=["timeout"])
                   if v.label == "population#1:timeout")

    steps = variant_scenario(scenario, variant).script_trajectory or []

    retry, add, answer = steps[1], steps[3], steps[4]
    assert (retry.call, retry.args, retry.after) == ("population", {"city": "Paris"}, [1])
    assert add.args == {"a": "$2", "b": "$3"}
    assert answer.answer == "Paris and Tokyo have {$5} people together; Lima has {$4}."


def test_a_variant_keeps_the_scenarios_trajectory_for_its_expectations() -> None:
    scenario = load(EXAMPLE)
    variant = next(v for v in fault_variants(scenario, kinds=["truncate"]))

    faulted = variant_scenario(scenario, variant)

    assert faulted.trajectory == scenario.trajectory
    assert (faulted.script_trajectory or [])[-1].answer == (
        "Sorry, I could not read your whole record just now; please try again later.")
    assert faulted.expect.on_fault == ["recovered", "failed_safely"]
    assert [f.kind for f in faulted.tools[0].faults] == ["truncate"]


def test_every_variant_runs_under_every_agent_type_each_classified() -> None:
    matrix = run_fault_matrix(EXAMPLE, kinds=["timeout", "truncate"],
                              agent_types=["react", "llm_compiler"])

    assert len(matrix.variants) == 6
    outcomes = {(v.fault.kind, a): matrix.outcome(v, a)
                for v in matrix.variants for a in matrix.agent_types}
    assert outcomes == {("timeout", "react"): "recovered", ("timeout", "llm_compiler"): "recovered",
                        ("truncate", "react"): "failed_safely",
                        ("truncate", "llm_compiler"): "failed_safely"}
    assert matrix.passed


def test_an_agent_type_whose_recording_is_missing_is_an_error_cell_saying_to_record_it(
        support: Any) -> None:
    # a recorded agent type runs its variants from its recording (tests/faults/
    # test_live_continuations.py); without the cassette each cell says so, unclassified
    text = EXAMPLE.read_text(encoding="utf-8").replace(
        "expect:\n  on_fault", "agents:\n  react:\n  function_calling:\n    recording: "
        "cassettes/none.json\nexpect:\n  on_fault")
    matrix = run_fault_matrix(support(text), kinds=["timeout"])

    assert matrix.agent_types == ["react", "function_calling"] and not matrix.left_out
    assert {matrix.outcome(v, "function_calling") for v in matrix.variants} == {"error"}
    assert all("none.json: cannot read cassette: no such file; record it first"
               in (matrix.cell(v, "function_calling").verdict.stopped_by or "")
               for v in matrix.variants)


def test_steps_after_a_fault_cannot_use_call_numbers(support: Any) -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace(
        "      - answer: Sorry, I could not read your whole record just now; please try again "
        "later.\n    drop_fields:", "      - answer: Sorry, all I got was {$2}.\n    drop_fields:")
    with pytest.raises(ScenarioError, match=r"support.yaml:30: faults.on_fault: `truncate`: "
                                            r"steps after a fault cannot use `\$N`"):
        load(support(text))


def test_a_renamed_tool_gets_its_variants_fault(support: Any) -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace(
        "  - ref: order_desk:lookup_order\n",
        "  - ref: order_desk:lookup_order\n    name: order_status\n").replace(
        "  - call: lookup_order\n", "  - call: order_status\n").replace(
        "[find_customer, lookup_order, return_window]", "[find_customer, order_status]")
    scenario = load(support(text))
    variant = next(v for v in fault_variants(scenario, kinds=["timeout"])
                   if v.tool == "order_status")

    faulted = variant_scenario(scenario, variant)

    assert [[f.kind for f in spec.faults] for spec in faulted.tools] == [[], ["timeout"], []]


def test_an_agent_that_never_makes_the_faulted_call_did_not_reach_the_fault(
        support: Any) -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace(
        "expect:\n  on_fault", "agents:\n  react:\n  function_calling:\n    script:\n"
        "      - I cannot look orders up.\nexpect:\n  on_fault")

    matrix = run_fault_matrix(support(text), kinds=["timeout"], tools=["lookup_order"])

    [variant] = matrix.variants
    assert matrix.outcome(variant, "react") == "recovered"
    assert matrix.outcome(variant, "function_calling") == "not_reached"


def test_the_models_calls_are_variants_too_named_like_a_tools() -> None:
    variants = fault_variants(EXAMPLE, tools=["model"])

    # react's run of the example asks its model 4 times: 4 calls x 5 kinds
    assert len(variants) == 20
    assert [v.label for v in variants[:5]] == ["model#1:rate_limit", "model#1:server",
                                               "model#1:timeout", "model#1:empty", "model#1:cut"]
    assert variants[9].name("order_support", "react") == "order_support[react]~model#2:cut"
    assert len(fault_variants(load(EXAMPLE).model_copy(update={"faults": None}))) == 33 + 20


def test_model_variants_are_classified_under_every_agent_type_offline(support: Any) -> None:
    # the scripted model retries a 429 and a cut reply as the OpenAI backend does (one policy):
    # both recover; an agent passing its model's empty reply on as the answer fabricated
    text = EXAMPLE.read_text(encoding="utf-8").replace(
        "expect:\n  on_fault", "agents:\n  react:\n  function_calling:\n    backend: openai\n"
        "expect:\n  on_fault").replace("  tools: [find_customer, lookup_order, return_window]",
                                       "  tools: [model]")

    matrix = run_fault_matrix(support(text), kinds=["rate_limit", "empty", "cut"])

    outcomes = {v.label: (matrix.outcome(v, "react"), matrix.outcome(v, "function_calling"))
                for v in matrix.variants if v.call == 2}
    assert outcomes == {"model#2:rate_limit": ("recovered", "recovered"),
                        "model#2:empty": ("fabricated", "fabricated"),
                        "model#2:cut": ("recovered", "recovered")}
    assert not matrix.passed


def test_model_kinds_narrow_the_models_kinds_apart_from_the_tools(support: Any) -> None:
    text = EXAMPLE.read_text(encoding="utf-8").replace(
        "  tools: [find_customer, lookup_order, return_window]",
        "  tools: [lookup_order, model]\n  model_kinds: [rate_limit, server]")
    path = support(text)

    every = fault_variants(path)
    asked = fault_variants(path, kinds=["timeout", "server"])

    # `timeout` of the tool, not of the model; `empty` neither: the model's are rate_limit, server
    assert sorted({v.fault.kind for v in every if v.of_model}) == ["rate_limit", "server"]
    assert {v.fault.kind for v in every if not v.of_model} >= {"timeout", "empty"}
    assert [v.label for v in asked if v.of_model][:2] == ["model#1:server", "model#2:server"]
    assert [v.label for v in asked if not v.of_model] == ["lookup_order#1:timeout"]
