"""examples/retail_desk in this process, cheaply (the default run): every scenario of its suite
passes offline against its committed snapshot, each under one of the four agent types in turn
so that every scenario and every type runs (the whole matrix, through the commands the README
shows: test_retail_desk_commands.py, in the slow lane); the written policy reaches each type's
model; the two broken agents fail, each for its own reason only; each is graded exactly as
the scenario of the suite it breaks; the README shows the rules as the scenarios have them."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from agentkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "retail_desk"
TYPES = ["desk_react", "desk_function_calling", "desk_function_agent", "desk_react_agent"]

Agentkit = Callable[..., tuple[int, str]]


@pytest.fixture
def agentkit() -> Iterator[Agentkit]:
    """``agentkit(*args) -> (exit code, output)``: the command, run in the example's folder."""
    before = set(sys.modules)

    def run(*args: str) -> tuple[int, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.chdir(EXAMPLE), contextlib.redirect_stderr(err):
            code = main(list(args), out=out)
        return code, out.getvalue() + err.getvalue()

    yield run
    for name in set(sys.modules) - before:  # the example's modules (retail, customers, ...)
        if (getattr(sys.modules[name], "__file__", None) or "").startswith(str(EXAMPLE)):
            del sys.modules[name]


def _load(relative: str) -> dict:
    return yaml.safe_load((EXAMPLE / relative).read_text(encoding="utf-8"))


def _runs(output: str) -> dict[str, str]:
    """Each run's line and the problems under it, by ``scenario[agent type]``."""
    return {m.group(1): m.group(0) for m in
            re.finditer(r"^(?:PASS|FAIL)  (\S+\[\w+\]).*\n(?:      .*\n)*", output, re.M)}


@pytest.mark.slow  # every scenario of the example under four agent types
def test_every_scenario_passes_offline_and_every_agent_type_gets_the_policy(
        agentkit: Agentkit, tmp_path: Path):
    scenarios = sorted((EXAMPLE / "scenarios").glob("*.yaml"))
    ran = set()
    for index, path in enumerate(scenarios):
        declared = _load(f"scenarios/{path.name}")["agents"]
        agent = TYPES[index % len(TYPES)] if TYPES[index % len(TYPES)] in declared \
            else next(iter(declared))
        code, output = agentkit("run", f"scenarios/{path.name}", "--agents", agent,
                                "--trace-dir", str(tmp_path))
        assert (code, output.splitlines()[-1]) == (0, "1 passed, 0 failed"), output
        ran.add(agent)

    assert len(scenarios) >= 10 and ran == set(TYPES)
    for agent in TYPES:
        trace = json.loads(next(tmp_path.glob(f"*.{agent}.json")).read_text(encoding="utf-8"))
        first_call = trace["turns"][0]["steps"][0]["llm_calls"][0]
        system = [m["content"] for m in first_call["messages"] if m["role"] == "system"]
        assert len(system) == 1 and "Change nothing without the customer's explicit yes" in \
            system[0], agent


def test_each_broken_agent_fails_for_its_own_reason_only(agentkit: Agentkit):
    code, output = agentkit("run", "broken", "--snapshots", "off")

    assert code == 1 and output.splitlines()[-1] == "0 passed, 4 failed", output
    runs = _runs(output)
    for agent in ("desk_react", "desk_function_calling"):
        eager = runs[f"cancels_before_confirming[{agent}]"]
        assert ("rule 'changes only after the customer says yes' (never a `mutating` call "
                "before the user said something matching regex '(?i)\\\\byes\\\\b') broken: "
                'cancel_order({"order_id": "W1001"}) (turn 1') in eager
        assert "turn 1: answer 'Order W1001 is cancelled" in eager  # it asked nothing
        assert "state after the run" not in eager  # the shop ends as it should
        careless = runs[f"forgets_the_database[{agent}]"]
        assert ('state after the run: orders.W1004.address: expected equals "1 Harvard Yard, '
                'Cambridge", got "7 Cobol Lane, Arlington"') in careless
        assert "(nothing)" in careless and "rule" not in careless and "answer" not in careless


@pytest.mark.parametrize("broken, scenario", [("cancels_before_confirming", "cancel_pending_order"),
                                              ("forgets_the_database", "change_address")])
def test_a_broken_agent_is_graded_as_the_scenario_it_breaks(broken: str, scenario: str):
    def graded(data: dict) -> dict:
        return {k: v for k, v in data.items() if k not in ("name", "description", "agents")}

    assert graded(_load(f"broken/{broken}.yaml")) == graded(_load(f"scenarios/{scenario}.yaml"))


def test_the_readme_shows_the_rules_every_changing_scenario_has():
    readme = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    shown = yaml.safe_load(re.search(r"```yaml\n(.*?)```", readme, re.S).group(1))["never"]
    changing = [path.stem for path in sorted((EXAMPLE / "scenarios").glob("*.yaml"))
                if _load(f"scenarios/{path.name}")["expect"].get("state") != {"unchanged": True}]

    assert len(changing) >= 5
    for name in changing:
        assert _load(f"scenarios/{name}.yaml")["expect"]["never"] == shown, name
