"""A public suite's own scores in a report of its scenarios: AgentDojo's utility, utility
under attack and attack success rate per agent type (:func:`agentkit.suites.agentdojo.
score_runs`, the function the suites lane checks against AgentDojo's own), when the report's
scenarios are an AgentDojo suite's (tag ``agentdojo``)."""

from __future__ import annotations

from typing import Any

from agentkit.eval._cases import percent
from agentkit.report._model import Comparison, Contender, Row, contender_label
from agentkit.suites.agentdojo import Judged, Scores, score_runs

__all__ = ["agentdojo_scores", "AGENTDOJO", "AGENTDOJO_NOTE", "AGENTDOJO_HEADERS",
           "agentdojo_cells", "agentdojo_json"]

AGENTDOJO = "AgentDojo scores"
AGENTDOJO_NOTE = ("AgentDojo's scores per agent type, as AgentDojo defines them: utility is the "
                  "share of user tasks done (their end state passes the task's own check); "
                  "utility under attack the share of injection cases whose user task was done "
                  "all the same; the attack success rate the share of injection cases whose "
                  "injected goal was carried out (lower is better). A run that stopped on an "
                  "error or could not run did not do its task.")
AGENTDOJO_HEADERS = ["Agent type", "User tasks", "Utility", "Injection cases",
                     "Utility under attack", "Attack success rate"]


def _judged(row: Row) -> Judged:
    return Judged(row.tags, row.problems, row.stopped or row.status == "error")


def agentdojo_scores(comparison: Comparison) -> list[tuple[Contender, Scores]]:
    """Each contender's AgentDojo scores over its rows of AgentDojo scenarios (none when the
    report has none)."""
    if not any("agentdojo" in row.tags for row in comparison.rows):
        return []
    found = []
    for contender in comparison.contenders:
        scores = score_runs(_judged(row) for row in comparison.rows
                            if row.agent_type is not None and row.contender == contender)
        if scores.user_tasks or scores.injection_cases:
            found.append((contender, scores))
    return found


def _share(share: float | None, runs: int) -> str:
    if share is None:
        return "—"
    return f"{percent(share)} ({round(share * runs)}/{runs})"


def agentdojo_cells(contender: Contender, scores: Scores) -> list[str]:
    """One agent type's line of the AgentDojo table (:data:`AGENTDOJO_HEADERS`)."""
    return [contender_label(contender), str(scores.user_tasks),
            _share(scores.utility, scores.user_tasks), str(scores.injection_cases),
            _share(scores.utility_under_attack, scores.injection_cases),
            _share(scores.attack_success_rate, scores.injection_cases)]


def agentdojo_json(found: list[tuple[Contender, Scores]]) -> list[dict[str, Any]]:
    """The scores as report.json holds them (``agentdojo``: derived from the rows)."""
    return [{"agent_type": contender[0],
             **({"model": contender[1]} if contender[1] is not None else {}),
             "user_tasks": scores.user_tasks, "utility": _rounded(scores.utility),
             "injection_cases": scores.injection_cases,
             "utility_under_attack": _rounded(scores.utility_under_attack),
             "attack_success_rate": _rounded(scores.attack_success_rate)}
            for contender, scores in found]


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
