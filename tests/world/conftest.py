"""Helpers for the world and policy-rule tests: the desk example's module importable, and
scenario files written into ``tmp_path``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

DESK = Path(__file__).parents[2] / "examples" / "world_state"

#: The desk's tools, its world and one turn, followed by the test's own fields.
HEADER = """\
format: 1
name: desk
tools:
  - {ref: "desk:hold_seat"}
  - {ref: "desk:pay", tags: [payment]}
world:
  ref: "desk:Desk"
  data: {seats: {12A: free, 12B: sold}}
turns:
  - user: Book seat 12A and pay.
"""

#: A function-calling script holding and paying for 12A.
BOOKS = """\
agents:
  function_calling:
    script:
      - tool_calls: [{name: hold_seat, args: {seat: 12A}}]
      - tool_calls: [{name: pay, args: {hold_id: H-12A}}]
      - Booked and paid.
"""


@pytest.fixture
def write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], Path]:
    """``write(text) -> path`` of a scenario file in ``tmp_path``; the desk is importable."""
    monkeypatch.syspath_prepend(str(DESK))

    def write_file(text: str, name: str = "desk.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write_file
