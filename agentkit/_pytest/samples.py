"""A sampled scenario item (``--samples N`` with a record mode, or a sampled recording): its
samples recorded first, its statistics and judges' disagreements kept as ``user_properties``
(they travel with the reports under pytest-xdist), the terminal summary's section of judges
that disagree between samples, and the warning of a ``min_pass_rate`` that cannot fail."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import pytest

from agentkit._pytest.fixtures import kept
from agentkit.harness import CaseResult, RoleModels
from agentkit.llms.base import LLM
from agentkit.scenario._model import Scenario

__all__ = ["record_samples_first", "warn_of_a_weak_gate", "note_samples",
           "DisagreementSummary", "DISAGREEMENT_PROPERTY"]


def record_samples_first(request: pytest.FixtureRequest, scenario: Scenario, agent_type: str,
                         state: Mapping[str, Any] | None) -> None:
    """With ``--record-mode`` and ``--samples N``, record the item's N samples first, through
    the ``live_llm`` fixture with seed ``seed + i`` for sample i (its judges through
    ``judge_llm``, its simulated user through ``live_llm``, with the same seed); the item then
    replays and judges all of them."""
    from agentkit.eval import Seeded, record_samples

    mode = request.config.getoption("record_mode")
    samples = request.config.getoption("samples")
    if mode == "none" or samples is None:
        return
    live = request.getfixturevalue("live_llm")
    judge = request.getfixturevalue("judge_llm")
    base = int((getattr(live, "additional_kwargs", None) or {}).get("seed") or 0)

    def cast(index: int) -> RoleModels:
        # sample i's judges and simulated user draw with its seed, like its agent
        def judged_by(named: str | None) -> LLM:
            model = RoleModels(judge=judge).live("judge", named)
            assert model is not None
            return Seeded(model, base + index)

        return RoleModels(judge=judged_by, user=Seeded(live, base + index))

    kept(record_samples(
        scenario, agent_type, lambda index: Seeded(live, base + index), samples, mode,
        sampling={"temperature": getattr(live, "temperature", None), "seed": base},
        roles=cast, state=state))


def warn_of_a_weak_gate(title: str, case: CaseResult) -> None:
    """A ``min_pass_rate`` the item's sample count cannot fail on its interval, as a warning
    naming the samples needed (pytest's warnings summary shows it)."""
    from agentkit.eval import GateWarning

    weak = case.gate_warning
    if weak is not None:
        warnings.warn(f"{title}: {weak}", GateWarning, stacklevel=1)


def note_samples(item: pytest.Item, case: CaseResult) -> None:
    """A sampled item's statistics and judges' disagreements, as ``user_properties`` (they
    travel with the reports under xdist)."""
    item.user_properties += [("agentkit_samples", case.stats.samples),
                             ("agentkit_pass_rate", case.stats.pass_rate),
                             ("agentkit_class", case.stats.case_class)]
    _note_disagreements(item, case)


#: ``item.user_properties`` entry of a sampled item whose judges disagree between samples:
#: the lines the terminal summary prints (they travel with the reports under xdist)
DISAGREEMENT_PROPERTY = "agentkit_judges_disagree"


def _note_disagreements(item: pytest.Item, sampled: CaseResult) -> None:
    """Files the judged expectations whose verdict differs between the item's samples (the
    report's marks), for :class:`DisagreementSummary` -- a passing item prints nothing."""
    from agentkit.report import disagreement_lines

    lines = disagreement_lines(sampled)
    if lines:
        item.user_properties.append((DISAGREEMENT_PROPERTY, lines))


class DisagreementSummary:
    """The terminal summary's section of sampled items whose judges disagree between samples
    (runs where the reports arrive: the controller, under xdist)."""

    def __init__(self) -> None:
        self.found: list[tuple[str, list[str]]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.found += [(report.nodeid, [str(line) for line in lines])
                           for name, lines in report.user_properties
                           if name == DISAGREEMENT_PROPERTY and isinstance(lines, list)]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.found:
            terminalreporter.section("agentkit: judges disagree between samples")
            for nodeid, lines in self.found:
                terminalreporter.write_line(nodeid)
                for line in lines:
                    terminalreporter.write_line(f"  {line}")
