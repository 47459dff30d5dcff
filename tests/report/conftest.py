"""Shared inputs for the report tests: the bundled scenarios and small scenario files."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from agentkit.report import Comparison, Row, run_comparison
from tests.scenario_text import adding_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"


def _quick_start_agent_types() -> list[str]:
    """The agent types of the README's Quick start report command (which CI runs): the
    committed example report is that report, so adding an agent type to it is one word in
    the README (and regenerating reports/example)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    command = re.search(r"agentkit report .*?--agents (\S+)", quick_start)
    assert command is not None, "README.md: the Quick start has no `agentkit report --agents`"
    return command.group(1).split(",")


AGENT_TYPES = _quick_start_agent_types()


def passing_scenario(name: str, answer: str = "5") -> str:
    """A one-call scenario under function_calling whose expected answer is ``answer``."""
    return adding_scenario(name, f"""\
expect:
  answer: {{contains: "{answer}"}}
agents:
  function_calling:
    script:
      - tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]
      - 2 + 3 = 5
""")


@pytest.fixture(scope="session")
def bundled() -> Comparison:
    """The bundled scenarios under every agent type, run once per test process and only read
    by the tests (it was run again for each module)."""
    return run_comparison(SCENARIOS, AGENT_TYPES)


@pytest.fixture
def write_scenario(tmp_path: Path) -> Callable[[str, str], Path]:
    def write(filename: str, text: str) -> Path:
        path = tmp_path / "scenarios" / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path
    return write


def make_row(scenario: str, agent_type: str | None = "react", status: str = "pass",
             **metrics: float) -> Row:
    """A row with every metric 1 (times 1.0), overridden by ``metrics``; error rows have none."""
    if status == "error":
        return Row(scenario=scenario, agent_type=agent_type, status="error",
                   problems=["it broke"])
    values: dict[str, float] = {"steps": 1, "llm_calls": 1, "tool_calls": 1, "tool_errors": 0,
                                "prompt_tokens": 1, "completion_tokens": 1, "wall_time": 1.0,
                                "serial_time": 1.0, "critical_path": 1.0, "speedup": 1.0}
    values.update(metrics)
    return Row(scenario=scenario, agent_type=agent_type, status=status,
               problems=[] if status == "pass" else ["the answer was wrong"], **values)


def make_comparison(*rows: Row) -> Comparison:
    types = list(dict.fromkeys(r.agent_type for r in rows if r.agent_type is not None))
    return Comparison(agent_types=types, rows=list(rows))


@pytest.fixture
def lone_react(write_scenario: Callable[[str, str], Path]) -> Comparison:
    """function_calling runs two scenarios, react a third alone: react shares none."""
    paths = [write_scenario(f"{name}.yaml", passing_scenario(name)) for name in ("one", "two")]
    paths.append(write_scenario("alone.yaml", passing_scenario("alone").split("agents:")[0]
                                + "agents:\n  react:\n    script: ['Answer: 5']\n"))
    return run_comparison(paths, ["function_calling", "react"])
