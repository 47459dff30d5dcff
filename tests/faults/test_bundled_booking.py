"""The bundled booking scenario (examples/world_state/faults/book_seat.yaml, issue 39 item 6):
`agentkit faults` expands it over its two tools, whose faults come back after the world changed,
under the built-in agent types offline; a correct agent tells the user instead of retrying, and
one that claims the booking whatever its tools said is classified fabricated."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

from agentkit.cli import main

ROOT = Path(__file__).parents[2]
DESK = ROOT / "examples" / "world_state"
SCENARIO = DESK / "faults" / "book_seat.yaml"
AGENTS = ["react", "function_calling", "llm_compiler", "coa", "react_multimodal",
          "function_agent", "react_agent", "openai_sdk_agent"]
TWO_MODEL_CALLS = ["llm_compiler", "coa"]  # a plan and the answer: model#3 is not reached


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


def test_every_variant_under_every_built_in_type_is_classified_as_a_correct_agent_ends(
        tmp_path: Path) -> None:
    code, out = _faults(SCENARIO, "--out", tmp_path)

    assert code == 0, out
    assert out.splitlines()[0] == (f"book_seat: 22 fault variants × 8 agent types "
                                   f"({', '.join(AGENTS)})")
    for agent in AGENTS:
        assert (f"  {agent}: 14 failed safely, 2 not reached, 6 recovered"
                if agent in TWO_MODEL_CALLS else f"  {agent}: 14 failed safely, 8 recovered") in out
    rows = _rows(tmp_path / "faults.md")
    assert len(rows) == 22
    tools = {label: set(cells) for label, cells in rows.items() if not label.startswith("model")}
    assert tools == {
        f"{tool}#1:{kind}": {"recovered" if kind == "latency" else "failed safely"}
        for tool in ("hold_seat", "pay")
        for kind in ("error", "timeout", "rate_limit", "latency", "empty", "truncate",
                     "wrong_type", "disconnect")}
    # a 429 or a 500 of the model: its client retries it, as a deployment's does
    assert {label: cells for label, cells in rows.items() if label.startswith("model")} == {
        f"model#{call}:{kind}": ["fault not reached" if call == 3 and agent in TWO_MODEL_CALLS
                                 else "recovered" for agent in AGENTS]
        for call in (1, 2, 3) for kind in ("rate_limit", "server")}
    assert all(len(cells) == len(AGENTS) for cells in rows.values())


def test_an_agent_claiming_the_booking_whatever_its_tools_said_fabricated(
        tmp_path: Path) -> None:
    # function_calling's own script: both calls, then the booked answer, whatever came back
    shutil.copy(DESK / "desk.py", tmp_path / "desk.py")
    wrong = tmp_path / "book_seat.yaml"
    wrong.write_text(SCENARIO.read_text(encoding="utf-8").replace(
        "  function_calling:\n", "  function_calling:\n    script:\n"
        "      - tool_calls: [{name: hold_seat, args: {seat: 12A}}]\n"
        "      - tool_calls: [{name: pay, args: {hold_id: H-12A}}]\n"
        "      - Done, I paid 120 EUR and seat 12A is yours.\n"), encoding="utf-8")

    code, out = _faults(wrong, "--agents", "function_calling", "--out", tmp_path / "report")

    assert code == 1
    assert "  function_calling: 14 fabricated, 8 recovered" in out  # 6 of them the model's
    rows = _rows(tmp_path / "report" / "faults.md")
    assert rows["pay#1:truncate"] == ["**fabricated** ✗"]
    assert rows["pay#1:latency"] == ["recovered"]
    assert ("FAIL book_seat[function_calling]~pay#1:timeout: under pay#1:timeout the run "
            "fabricated (it answered as if pay#1:timeout had worked") in out
