"""Helpers for the harness tests: scenario files written into ``tmp_path``."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentkit.harness._agent_types import AGENT_TYPES
from tests.scenario_text import adding_scenario

MINIMAL = adding_scenario("demo", """\
agents:
  function_calling:
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
      - 2 + 3 = 5
""")

#: One `add` call and its answer as a trajectory, for an agent type named `mine`.
TRAJECTORY_SCENARIO = adding_scenario("traj", """\
trajectory:
  - call: add
    args: {a: 2, b: 3}
  - answer: "2 + 3 = {$1}"
agents: [mine]
""")


@pytest.fixture
def write_file(tmp_path: Path) -> Callable[[str, str], Path]:
    """``write_file(name, text)``: write dedented ``text`` to ``tmp_path / name``."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


@pytest.fixture
def restore_agent_types() -> Iterator[None]:
    """Agent types registered by the test are gone after it."""
    with AGENT_TYPES.scoped():
        yield
