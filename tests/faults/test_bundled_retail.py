"""The retail desk's fault matrix (examples/retail_desk/faults/orders_of_a_customer.yaml, issue
39 item 6): `agentkit faults` expands the scenario over its two lookups under the desk's own
agent types (its pyproject's `agent_types`) offline; a correct agent asks again after a
transient fault and tells the customer after a damaged answer, and one answering from what it
did not get is classified fabricated."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from agentkit.cli import main

ROOT = Path(__file__).parents[2]
DESK = ROOT / "examples" / "retail_desk"
SCENARIO = DESK / "faults" / "orders_of_a_customer.yaml"
AGENTS = ["desk_react", "desk_function_calling", "desk_function_agent", "desk_react_agent"]
KINDS = ["error", "timeout", "rate_limit", "latency", "empty", "truncate", "wrong_type",
         "disconnect"]
DAMAGED = {"empty", "truncate", "wrong_type"}


def _faults(*argv: str | Path) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["faults", *map(str, argv)], out=out)
    return code, out.getvalue()


def _rows(report: Path) -> dict[str, list[str]]:
    """The matrix's cells by variant label: each cell's class, as the report writes it."""
    rows = {}
    for line in report.read_text(encoding="utf-8").splitlines():
        if line.startswith("| `"):
            label, *cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows[label.strip("`")] = [cell.split("](")[0].lstrip("[") for cell in cells]
    return rows


def test_every_variant_under_the_desks_own_types_is_classified_as_a_correct_agent_ends(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DESK)  # the project declaring the desk's agent types
    code, out = _faults(SCENARIO, "--out", tmp_path)

    assert code == 0, out
    assert out.splitlines()[0] == (f"orders_of_a_customer: 32 fault variants × 4 agent types "
                                   f"({', '.join(AGENTS)})")
    # the ReAct types ask their model once per call (4 calls), the others call both find_order
    # at once (3 calls): model#4 is not reached under them
    for agent in AGENTS:
        assert (f"  {agent}: 9 failed safely, 23 recovered" if "react" in agent
                else f"  {agent}: 9 failed safely, 2 not reached, 21 recovered") in out
    rows = _rows(tmp_path / "faults.md")
    assert {label: set(cells) for label, cells in rows.items()
            if not label.startswith("model")} == {
        f"{call}:{kind}": {"failed safely" if kind in DAMAGED else "recovered"}
        for call in ("list_orders#1", "find_order#1", "find_order#2") for kind in KINDS}
    assert {label: cells for label, cells in rows.items() if label.startswith("model")} == {
        f"model#{call}:{kind}": ["fault not reached" if call == 4 and "react" not in agent
                                 else "recovered" for agent in AGENTS]
        for call in (1, 2, 3, 4) for kind in ("rate_limit", "server")}
    assert all(len(cells) == len(AGENTS) for cells in rows.values())


def test_a_desk_agent_answering_from_records_it_did_not_get_fabricated(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # desk_function_calling's own script: the lookups, then both orders in full, whatever came
    # back -- under a truncated record and a timed-out one alike
    shutil.copytree(DESK, tmp_path / "desk", ignore=shutil.ignore_patterns(
        "__pycache__", "__snapshots__", "cassettes"))
    wrong = tmp_path / "desk" / "faults" / "orders_of_a_customer.yaml"
    wrong.write_text(SCENARIO.read_text(encoding="utf-8").replace(
        "agents: [desk_react, desk_function_calling, desk_function_agent, desk_react_agent]\n",
        "agents:\n  desk_function_calling:\n    script:\n"
        "      - tool_calls: [{name: list_orders, args: {email: grace@example.com}}]\n"
        "      - tool_calls: [{name: find_order, args: {order_id: W1003}},"
        " {name: find_order, args: {order_id: W1004}}]\n"
        "      - 'You have two orders. W1003: delivered, kettle (39.00), mug-red (9.50). W1004:"
        " pending, lamp (24.00), to 7 Cobol Lane, Arlington.'\n"), encoding="utf-8")

    monkeypatch.chdir(tmp_path / "desk")
    code, out = _faults(wrong, "--kinds", "timeout,truncate", "--out", tmp_path / "report")

    assert code == 1
    assert "  desk_function_calling: 6 fabricated" in out
    assert _rows(tmp_path / "report" / "faults.md")["find_order#2:truncate"] == [
        "**fabricated** ✗"]
    assert ("under find_order#2:timeout the run fabricated (the answer states '24.00', which "
            "only the faulted call find_order#2:timeout could have given)") in out
