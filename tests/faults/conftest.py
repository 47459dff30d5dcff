"""Fixtures of the fault tests: a scratch folder holding the example's tools, and agent types
registered for one test only."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentkit.harness._agent_types import AGENT_TYPES

EXAMPLE = Path(__file__).parents[2] / "examples" / "faults"


@pytest.fixture(autouse=True)
def _scoped_agent_types() -> Iterator[None]:
    with AGENT_TYPES.scoped():
        yield


@pytest.fixture
def support(tmp_path: Path) -> Callable[[str], Path]:
    """Writes a scenario file beside a copy of the example's tools; returns its path."""
    shutil.copy(EXAMPLE / "order_desk.py", tmp_path / "order_desk.py")

    def write(text: str, name: str = "support.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path
    return write
