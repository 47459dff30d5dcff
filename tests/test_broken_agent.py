"""A test tool's first duty: a broken agent fails -- under `agentkit run`, `agentkit report` and
pytest alike, with a message naming the call.

A user's support project (tools `lookup_order`, `refund`, `escalate`; the refunds written to
the project's own ledger) is broken six ways: a tool removed from the agent, a tool
parameter renamed, the refund called by the agent's own code around its steps (through the
tool object), the refund function called directly by the agent's factory (a side effect no
tool object sees: the ledger, read as the scenario's world, names it), a tool the agent brings
instead of the scenario's, and the refund made concurrently with the look-ups it must follow.
Each command passes the working project and fails each broken one."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from pathlib import Path

import pytest

from agentkit.cli import main

TOOLS = '''
LEDGER = {"refunds": []}


def lookup_order(order_id: str) -> str:
    """The order's total and status."""
    return f"{order_id}: total 40.0, delivered"


def lookup_customer(order_id: str) -> str:
    """Who placed the order."""
    return f"{order_id}: Ada, customer since 2019"


def refund(order_id: str, amount: float) -> str:
    """Refund part or all of an order."""
    LEDGER["refunds"].append({"order_id": order_id, "amount": amount})
    return f"refunded {amount} on {order_id}"


def escalate(reason: str) -> str:
    """Hand the case to a person."""
    return f"ticket T-7: {reason}"
'''

SUPPORT = """\
format: 1
name: support
tools:
  - {ref: "support_tools:lookup_order", latency: 0.5}
  - {ref: "support_tools:refund", latency: 0.5}
  - {ref: "support_tools:escalate", latency: 2.0}
world: {object: "support_tools:LEDGER"}
turns:
  - user: Order A-1 arrived broken. Refund it and tell a person.
expect:
  answer: {contains: "Refunded"}
  state:
    paths:
      refunds: {equals: [{order_id: A-1, amount: 40.0}]}
  tool_calls:
    args: subset
    calls:
      - {name: lookup_order}
      - {name: refund, args: {order_id: A-1}}
      - {name: escalate}
agents:
  function_calling:
    script:
      - tool_calls: [{name: lookup_order, args: {order_id: A-1}}]
      - tool_calls: [{name: refund, args: {order_id: A-1, amount: 40.0}}]
      - tool_calls: [{name: escalate, args: {reason: broken on arrival}}]
      - Refunded 40.0 on A-1 and opened ticket T-7.
"""

# two independent look-ups, then the refund, which must wait for both (no value flows to it)
ORDERED = """\
format: 1
name: ordered
tools:
  - {ref: "ordering_tools:lookup_order", latency: 1.0}
  - {ref: "ordering_tools:lookup_customer", latency: 1.0}
  - {ref: "ordering_tools:refund", latency: 0.5}
turns:
  - user: Check order A-1 and its customer, then refund it.
trajectory:
  - parallel:
      - {call: lookup_order, args: {order_id: A-1}}
      - {call: lookup_customer, args: {order_id: A-1}}
  - call: refund
    args: {order_id: A-1, amount: 40.0}
    after: [1, 2]
  - answer: Refunded 40.0 on A-1.
agents: [function_calling]
"""


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


NO_ESCALATE_AGENT = """\
from agentkit.agent import FunctionCallingAgent


def build(context):
    # the bug: escalate was dropped from the agent's tools
    tools = [t for t in context.tools if t.metadata.name != "escalate"]
    return FunctionCallingAgent.from_tools(tools, llm=context.llm)
"""


def _remove_escalate(root: Path) -> None:
    # from the agent (a scenario expecting a call of a tool it does not give is bad input,
    # reported where the call is expected)
    _write(root, "no_escalate_agent.py", NO_ESCALATE_AGENT)
    _write(root, "pyproject.toml", '[tool.agentkit.agent_types]\nfunction_calling = '
           '{ ref = "no_escalate_agent:build", trajectory = "function_calling" }\n')


def _rename_refund_amount(root: Path) -> None:
    text = (root / "support_tools.py").read_text(encoding="utf-8")
    _write(root, "support_tools.py", text.replace("amount: float", "amount_cents: float")
           .replace("refunded {amount}", "refunded {amount_cents}"))


def _refund_concurrently(root: Path) -> None:
    # LLMCompiler plans the three calls at once: the refund no longer waits for the look-ups
    text = (root / "scenarios/ordered.yaml").read_text(encoding="utf-8")
    _write(root, "scenarios/ordered.yaml",
           text.replace("agents: [function_calling]", "agents: [llm_compiler]"))


EAGER_AGENT = """\
from agentkit.agent import FunctionCallingAgent


class EagerRefund(FunctionCallingAgent):
    # the bug: a broken order is refunded before the model has looked it up
    def chat(self, message, *args, **kwargs):
        if "broken" in message:
            refund = next(t for t in self.eager_tools if t.metadata.name == "refund")
            refund.call(order_id="A-1", amount=40.0)
        return super().chat(message, *args, **kwargs)


def build(context):
    agent = EagerRefund.from_tools(list(context.tools), llm=context.llm)
    agent.eager_tools = list(context.tools)
    return agent
"""


def _refund_called_directly(root: Path) -> None:
    # the project's own function_calling type (a name the project declares wins), its
    # trajectories rendered as the built-in type's
    _write(root, "eager_agent.py", EAGER_AGENT)
    _write(root, "pyproject.toml", '[tool.agentkit.agent_types]\nfunction_calling = '
           '{ ref = "eager_agent:build", trajectory = "function_calling" }\n')


DIRECT_AGENT = """\
from agentkit.agent import FunctionCallingAgent

import support_tools


def build(context):
    # the bug: the factory refunds by calling the tool's function, no tool object involved
    support_tools.refund("A-1", 40.0)
    return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm)
"""


def _refund_function_called_directly(root: Path) -> None:
    _write(root, "direct_agent.py", DIRECT_AGENT)
    _write(root, "pyproject.toml", '[tool.agentkit.agent_types]\nfunction_calling = '
           '{ ref = "direct_agent:build", trajectory = "function_calling" }\n')


OWN_TOOL_AGENT = """\
from agentkit.agent import FunctionCallingAgent
from agentkit.tools import FunctionTool

import support_tools


def build(context):
    # the bug: the agent escalates through a tool of its own, not the scenario's
    tools = [FunctionTool.from_defaults(support_tools.escalate)
             if t.metadata.name == "escalate" else t for t in context.tools]
    return FunctionCallingAgent.from_tools(tools, llm=context.llm)
"""


def _escalate_through_its_own_tool(root: Path) -> None:
    _write(root, "own_tool_agent.py", OWN_TOOL_AGENT)
    _write(root, "pyproject.toml", '[tool.agentkit.agent_types]\nfunction_calling = '
           '{ ref = "own_tool_agent:build", trajectory = "function_calling" }\n')


BREAKAGES: dict[str, tuple[Callable[[Path], None], str]] = {
    "a tool removed": (_remove_escalate,
                       'tool call 3 escalate({"reason": "broken on arrival"}) failed '
                       "unexpectedly: \"Tool with name escalate not found, please double "
                       "check.\""),
    "a parameter renamed": (_rename_refund_amount,
                            'tool call 2 refund({"amount": 40.0, "order_id": "A-1"}) failed '
                            "unexpectedly"),
    "a tool called around the agent's steps": (_refund_called_directly,
                                               "`refund` ran 2 times, but the agent's steps "
                                               "show 1 call of it"),
    "the tool function called directly": (_refund_function_called_directly,
                                          'state after the run: refunds: expected equals '
                                          '[{"amount": 40.0, "order_id": "A-1"}], got '
                                          '[{"amount": 40.0, "order_id": "A-1"}, {"amount": '
                                          '40.0, "order_id": "A-1"}'),
    "a tool of the agent's own": (_escalate_through_its_own_tool,
                                  "the trace shows 1 call of `escalate`, but the scenario's "
                                  "`escalate` never ran"),
    "the refund made concurrently": (_refund_concurrently,
                                     "trajectory call 3 refund(order_id=\"A-1\", amount=40.0) "
                                     "started at 0.00s, before call 1"),
}


@pytest.fixture(scope="module")
def working_snapshots() -> dict[str, bytes]:
    """The working project's snapshots by path, taken by the first test that needs them (an
    inner pytest session per test was most of this module's time)."""
    return {}


@pytest.fixture
def support(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
            working_snapshots: dict[str, bytes]) -> Path:
    """The working project, its snapshots taken."""
    root = pytester.path
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    _write(root, "support_tools.py", TOOLS)
    _write(root, "ordering_tools.py", TOOLS)
    _write(root, "scenarios/support.yaml", SUPPORT)
    _write(root, "scenarios/ordered.yaml", ORDERED)
    pytester.syspathinsert()
    monkeypatch.chdir(root)
    if not working_snapshots:
        pytester.runpytest("--snapshot-update").assert_outcomes(passed=2)
        working_snapshots.update(_snapshots(root))
        assert len(working_snapshots) == 2, working_snapshots
    for relative, content in working_snapshots.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(content)
    return root


def _agentkit(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stderr(out):
        code = main(list(argv), out=out)
    return code, out.getvalue()


def _llm_compiler_snapshot(root: Path) -> None:
    """The concurrent version runs under another agent type: give it a snapshot of its own
    (taken from the working trajectory rendered for it), so only the ordering is at fault."""
    snapshot = root / "scenarios/__snapshots__/ordered/function_calling.json"
    snapshot.rename(snapshot.with_name("llm_compiler.json"))


@pytest.mark.parametrize("command", ["run", "report"])
def test_the_working_project_passes_every_command(support: Path, command: str) -> None:
    argv = ["run", "scenarios"] if command == "run" else ["report", "scenarios", "--out", "out"]

    code, output = _agentkit(*argv)

    assert code == 0, output


@pytest.mark.parametrize("breakage", BREAKAGES, ids=list(BREAKAGES))
def test_agentkit_run_fails_a_broken_agent_naming_the_call(support: Path, breakage: str) -> None:
    breaking, message = BREAKAGES[breakage]
    breaking(support)

    code, output = _agentkit("run", "scenarios")

    assert code == 1
    assert message in output


@pytest.mark.parametrize("breakage", BREAKAGES, ids=list(BREAKAGES))
def test_agentkit_report_fails_a_broken_agent_naming_the_call(support: Path,
                                                             breakage: str) -> None:
    breaking, message = BREAKAGES[breakage]
    breaking(support)

    code, output = _agentkit("report", "scenarios", "--out", "out")

    assert code == 1
    assert message in output
    totals = next(line for line in output.splitlines() if " runs: " in line)
    assert "1 failed" in totals


@pytest.mark.parametrize("breakage", BREAKAGES, ids=list(BREAKAGES))
def test_the_report_page_never_badges_a_broken_run_pass(support: Path, breakage: str) -> None:
    breaking, _ = BREAKAGES[breakage]
    breaking(support)
    _agentkit("report", "scenarios", "--out", "out", "--snapshots", "off")

    page = (support / "out" / "report.html").read_text(encoding="utf-8")

    broken = "support[function_calling]" if breakage != "the refund made concurrently" \
        else "ordered[llm_compiler]"
    section = page[page.index(f"<h3>{broken} "):]
    assert section.split("</h3>", 1)[0].endswith('<span class="badge b-fail">fail</span>')


@pytest.mark.slow  # inner pytest sessions over a project
@pytest.mark.parametrize("breakage", BREAKAGES, ids=list(BREAKAGES))
def test_pytest_fails_a_broken_agent_naming_the_call(support: Path, pytester: pytest.Pytester,
                                                     breakage: str) -> None:
    breaking, message = BREAKAGES[breakage]
    breaking(support)
    if breakage == "the refund made concurrently":
        _llm_compiler_snapshot(support)

    result = pytester.runpytest()

    result.assert_outcomes(passed=1, failed=1)
    assert message in result.stdout.str()


def _snapshots(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes()
            for path in sorted((root / "scenarios").rglob("__snapshots__/**/*.json"))}


@pytest.mark.parametrize("breakage", BREAKAGES, ids=list(BREAKAGES))
def test_agentkit_run_snapshot_update_keeps_every_snapshot_of_a_broken_agent(
        support: Path, breakage: str) -> None:
    breaking, message = BREAKAGES[breakage]
    breaking(support)
    if breakage == "the refund made concurrently":
        _llm_compiler_snapshot(support)
    before = _snapshots(support)

    code, output = _agentkit("run", "scenarios", "--snapshot-update")

    assert code == 1 and message in output
    assert _snapshots(support) == before


@pytest.mark.slow  # inner pytest sessions over a project
@pytest.mark.parametrize("breakage", BREAKAGES, ids=list(BREAKAGES))
def test_pytest_snapshot_update_keeps_every_snapshot_of_a_broken_agent(
        support: Path, pytester: pytest.Pytester, breakage: str) -> None:
    breaking, message = BREAKAGES[breakage]
    breaking(support)
    if breakage == "the refund made concurrently":
        _llm_compiler_snapshot(support)
    before = _snapshots(support)

    result = pytester.runpytest("--snapshot-update")

    result.assert_outcomes(passed=1, failed=1)
    assert message in result.stdout.str()
    assert _snapshots(support) == before
