"""Scoring a model's answers to BFCL cases with agentkit: the answer's calls are the reply of a
scripted function-calling model, run against the case's scenario, whose expectations judge
them (the same expectations every agent type's run is judged by); and BFCL's scores of a
report: its AST accuracy per category, read from report.json's rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from agentkit.harness import Case, run_case
from agentkit.scenario import load_scenario
from agentkit.verdict import SnapshotFiles

__all__ = ["agentkit_passes", "bfcl_scores"]


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


def bfcl_scores(report: dict[str, Any]) -> dict[str, Any]:
    """BFCL's scores of a report (report.json as data) over BFCL scenarios: per category
    (the tag beside ``bfcl``) the cases that passed and the cases run -- its AST accuracy --
    and each case's result, with the calls that decided it."""
    accuracy: dict[str, list[int]] = {}
    cases: dict[str, dict[str, Any]] = {}
    for row in report["rows"]:
        category = next(tag for tag in row["tags"] if tag != "bfcl")
        counts = accuracy.setdefault(category, [0, 0])
        counts[0] += row["status"] == "pass"
        counts[1] += 1
        cases[row["scenario"]] = {key: row[key] for key in (
            "status", "sample_outcomes", "llm_calls", "tool_calls", "prompt_tokens",
            "completion_tokens")}
    return {"accuracy": dict(sorted(accuracy.items())), "cases": dict(sorted(cases.items()))}
