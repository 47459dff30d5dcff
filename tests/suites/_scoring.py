"""Scoring a model's answers to BFCL cases with agentkit: the answer's calls are the reply of a
scripted function-calling model, run against the case's scenario, whose expectations judge
them (the same expectations every agent type's run is judged by)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from agentkit.harness import Case, run_case
from agentkit.scenario import load_scenario
from agentkit.verdict import SnapshotFiles

__all__ = ["agentkit_passes"]


def agentkit_passes(scenario_file: Path, calls: list[dict[str, Any]], folder: Path) -> bool:
    """Whether agentkit's expectations pass a model's ``calls`` (BFCL's decoded form: one
    ``{name: args}`` mapping per call) on the scenario written for the case."""
    data = yaml.safe_load(scenario_file.read_text(encoding="utf-8"))
    data.pop("trajectory")
    reply: Any = {"tool_calls": [{"name": name, "args": args}
                                 for call in calls for name, args in call.items()]}
    data["agents"] = {"function_calling": {
        "script": [reply, "Done."] if calls else ["None of these functions can help."]}}
    path = folder / f"{data['name']}.answer.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return run_case(Case(load_scenario(path), "function_calling"), SnapshotFiles("off")).passed
