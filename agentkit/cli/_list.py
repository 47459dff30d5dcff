"""``agentkit list``: the scenario files with their agent types and where their models' answers
come from."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from agentkit.cli._common import EXIT_OK, load_scenario, scenario_paths

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    for path in scenario_paths(args):
        scenario = load_scenario(path)
        tags = f"  [{', '.join(scenario.tags)}]" if scenario.tags else ""
        print(f"{scenario.name}  ({path}){tags}", file=out)
        for name, spec in scenario.agents.items():
            source = (_source(spec) if spec.team is None else "team: " + ", ".join(
                f"{agent.name} ({_source(agent)})" for agent in spec.team))
            print(f"  - {name}: {source}", file=out)
        if scenario.description:
            print(f"    {scenario.description}", file=out)
    return EXIT_OK


def _source(spec: Any) -> str:
    """Where an agent's model answers come from (an agent type's or a team agent's)."""
    source = (f"recording {spec.recording}" if spec.recording else
              "script rendered from the trajectory" if spec.script is None
              else f"script, {len(spec.script)} replies")
    return source + (f", backend {spec.backend}" if spec.backend != "scripted" else "")
