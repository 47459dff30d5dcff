"""A scenario item: one scenario × agent type run as a case (:func:`agentkit.harness.run_case`:
recorded first with ``--record-mode``, its samples with ``--samples``), its trace compared with
its syrupy snapshot, and its failure told in one message without a Python traceback."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentkit._pytest.fixtures import RecordingFailed, record_first
from agentkit._pytest.options import is_recording
from agentkit._pytest.samples import note_samples, record_samples_first, warn_of_a_weak_gate
from agentkit._pytest.snapshots import SyrupySnapshots
from agentkit.core.errors import HarnessError
from agentkit.harness import Case, CaseResult, FaultVariant, run_case, variant_scenario
from agentkit.scenario._model import Scenario

__all__ = ["ScenarioFailure", "ScenarioItem", "fault_test", "scenario_test"]


class ScenarioFailure(AssertionError):
    """A scenario item failed: unmet expectations and/or a changed trace."""

    __module__ = "agentkit.pytest_plugin"  # where users import it from


class ScenarioItem(pytest.Function):
    """One scenario × agent type (a Function, so fixtures such as syrupy's work)."""

    __module__ = "agentkit.pytest_plugin"  # where users import it from

    def repr_failure(  # type: ignore[override]
            self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:
        if isinstance(excinfo.value, ScenarioFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario {self.path.stem} [{self.name}]"


def _record_hint(case: Case, nodeid: str) -> str | None:
    """For a run that could not start without its cassette: how to record it."""
    missing = case.missing_cassettes()
    if not missing:
        return None
    scenario, agent_type = case.scenario, case.agent_type
    spec = scenario.agents[agent_type]
    field = ("tools" if not spec.recorded() else "recording" if spec.team is None else "team")
    return (f"{scenario.path}: agents.{agent_type}.{field}: no cassette at "
            f"{', '.join(map(str, missing))}; record it once with "
            f"`pytest --record-mode=once {nodeid}` (then it replays offline)")


def scenario_test(scenario: Scenario, agent_type: str) -> Callable[..., None]:
    """The item's test function: run the case (recorded first with a record mode), note a
    sampled case's statistics, and fail with one message saying why."""

    def test(request: pytest.FixtureRequest, snapshot: Any) -> None:
        title = f"scenario {scenario.name} [{agent_type}]"
        snapshots = SyrupySnapshots(snapshot, request.config.rootpath, request.node,
                                     create=is_recording(request.config))
        sampled = _sampled(request, scenario, agent_type)
        record = (record_samples_first if sampled else record_first)
        case = Case(scenario, agent_type, samples=sampled,
                    prepare=lambda: record(request, scenario, agent_type, None))
        try:
            judged = run_case(case, snapshots)
        except RecordingFailed as exc:
            raise ScenarioFailure(f"{title} could not be recorded:\n{exc}") from None
        except HarnessError as exc:  # recording samples could not start
            raise ScenarioFailure(f"{title} could not run:\n{exc}") from None
        if judged.sampled:
            note_samples(request.node, judged)
            warn_of_a_weak_gate(title, judged)
        failure = _failure(title, judged, request)
        if failure is not None:
            raise ScenarioFailure(failure)

    test.__module__ = "agentkit.scenarios"
    test.__name__ = agent_type
    test.__doc__ = scenario.description or None
    return test


def fault_test(scenario: Scenario, variant: FaultVariant, agent_type: str) -> Callable[..., None]:
    """A fault variant's test function: the variant run as a case, judged by its outcome class
    (no snapshot), the class a property of the item (``fault_class`` in pytest's JUnit XML)."""
    faulted = variant_scenario(scenario, variant)

    def test(request: pytest.FixtureRequest) -> None:
        title = f"scenario {variant.name(scenario.name, agent_type)}"
        judged = run_case(Case(faulted, agent_type))
        fault = judged.verdict.fault
        request.node.user_properties += [("fault", variant.label),
                                         ("fault_class", fault.outcome if fault else "error")]
        failure = _failure(title, judged, request)
        if failure is not None:
            raise ScenarioFailure(failure)

    test.__module__ = "agentkit.scenarios"
    test.__name__ = f"{agent_type}~{variant.label}"
    test.__doc__ = scenario.description or None
    return test


def _failure(title: str, case: CaseResult, request: pytest.FixtureRequest) -> str | None:
    """Why the item fails (None: it passes): one header, then what the verdict says -- the
    root cause alone when the run stopped, a sampled case's statistics."""
    verdict, nodeid = case.verdict, request.node.nodeid
    verbose = request.config.get_verbosity() > 0
    if verdict.passed:
        return None
    if case.sampled:
        header = (f"{title} could not run:" if verdict.outcome == "error"
                  else f"{title} failed on its samples ({case.stats.describe()}):")
        body = verdict.lines() if verdict.stopped_by is None else [verdict.stopped_by]
        return "\n".join([header, *body])
    if verdict.outcome == "error":
        hint = (_record_hint(case.case, nodeid)
                if verdict.stopped_by is not None and not is_recording(request.config) else None)
        return f"{title} could not run:\n" + ("\n".join(verdict.lines(verbose)) if hint is None
                                               else hint)
    lines = verdict.lines(verbose)
    if verdict.stopped_by is not None:
        hint = case.rerecord_hint(pytest_node=nodeid)
        if hint is not None:
            lines.append(hint)
        lines.append("(expectations and the snapshot are checked once the run gets through)")
        return f"{title} failed: " + "\n".join(lines)
    return f"{title} failed:\n" + "\n".join(lines)


def _sampled(request: pytest.FixtureRequest, scenario: Scenario, agent_type: str) -> bool:
    """Whether the item records (``--samples``) or replays a sampled recording."""
    from agentkit.harness import sample_count

    spec = scenario.agents[agent_type]
    if spec.team is not None or spec.recording is None:
        return False
    if is_recording(request.config) and request.config.getoption("samples") is not None:
        return True
    return sample_count(scenario, agent_type) is not None
