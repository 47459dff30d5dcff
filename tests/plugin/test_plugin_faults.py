"""A scenario with ``faults:`` gives one pytest item per fault variant and agent type, judged by
its outcome class, the class a property of the item in pytest's JUnit XML."""

from __future__ import annotations

from pathlib import Path

import pytest

from plugin_project import collected, write

EXAMPLE = Path(__file__).parents[2] / "examples" / "faults"


@pytest.fixture
def faulted(pytester: pytest.Pytester) -> pytest.Pytester:
    """The example's scenario under react and function_calling, faulted by timeouts and
    truncations of lookup_order."""
    text = (EXAMPLE / "scenarios" / "order_support.yaml").read_text(encoding="utf-8")
    text = text.replace("tags: [faults]\n", "agents: [react, function_calling]\n").replace(
        "faults:\n  on_fault:", "faults:\n  kinds: [timeout, truncate]\n  on_fault:").replace(
        "  tools: [find_customer, lookup_order, return_window]", "  tools: [lookup_order]")
    write(pytester, "order_desk.py", (EXAMPLE / "order_desk.py").read_text("utf-8"))
    write(pytester, "scenarios/order_support.yaml", text)
    pytester.syspathinsert()
    return pytester


def test_each_variant_and_agent_type_is_an_item(faulted: pytest.Pytester) -> None:
    assert collected(faulted) == [
        "scenarios/order_support.yaml::react", "scenarios/order_support.yaml::function_calling",
        "scenarios/order_support.yaml::react~lookup_order#1:timeout",
        "scenarios/order_support.yaml::function_calling~lookup_order#1:timeout",
        "scenarios/order_support.yaml::react~lookup_order#1:truncate",
        "scenarios/order_support.yaml::function_calling~lookup_order#1:truncate"]


def test_a_variant_item_passes_on_an_allowed_class_and_reports_it(
        faulted: pytest.Pytester) -> None:
    result = faulted.runpytest("-k", "lookup_order", "--junitxml=junit.xml")

    result.assert_outcomes(passed=4)
    junit = (faulted.path / "junit.xml").read_text(encoding="utf-8")
    assert '<property name="fault" value="lookup_order#1:timeout" />' in junit
    assert '<property name="fault_class" value="failed_safely" />' in junit


def test_a_variant_item_fails_on_a_class_the_scenario_does_not_allow(
        faulted: pytest.Pytester) -> None:
    path = faulted.path / "scenarios" / "order_support.yaml"
    path.write_text(path.read_text("utf-8").replace("on_fault: [recovered, failed_safely]",
                                                    "on_fault: [recovered]"), encoding="utf-8")

    result = faulted.runpytest("-k", "truncate and react")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*scenario order_support?react?~lookup_order#1:truncate failed:",
                                 "*under lookup_order#1:truncate the run failed safely*"])


def test_a_variant_item_of_an_agent_wrong_after_a_late_output_fails_with_its_problem(
        pytester: pytest.Pytester) -> None:
    # a latency fault withholds nothing: the wrong answer fails as the agent's own, not as a
    # class (on_fault allows every other class here)
    write(pytester, "order_desk.py", (EXAMPLE / "order_desk.py").read_text("utf-8"))
    write(pytester, "scenarios/order.yaml", """\
        format: 1
        name: order
        tools:
          - ref: order_desk:lookup_order
        turns:
          - user: Where is my order A-1001?
        expect:
          answer: {contains: "2026-11-05"}
          on_fault: [recovered, failed_safely, fabricated]
        faults: {kinds: [latency]}
        agents:
          function_calling:
            script:
              - tool_calls: [{name: lookup_order, args: {order_id: A-1001}}]
              - Your order A-1001 arrives next week.
        """)
    pytester.syspathinsert()

    result = pytester.runpytest("-k", "latency", "--junitxml=junit.xml")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*does not match contains '2026-11-05'*"])
    assert '<property name="fault_class" value="failed" />' in (
        pytester.path / "junit.xml").read_text(encoding="utf-8")
