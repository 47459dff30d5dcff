"""What a workflow run reports to the instrumentation bus (``agentkit.core.events``).

A run is a span holding one start and one end event; each step invocation is a child span
holding a step start and a step end, so LLM and tool calls made inside a step nest under it.
Times are virtual (the bus stamps them) and run ids come from the seeded id source's
counters, so two runs under the same seed report identical streams.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from agentkit.core.events import Event as BusEvent

__all__ = [
    "WorkflowRunStartEvent",
    "WorkflowRunEndEvent",
    "WorkflowStepStartEvent",
    "WorkflowStepEndEvent",
    "WorkflowStepRetryEvent",
]


@dataclass(kw_only=True, slots=True)
class WorkflowRunStartEvent(BusEvent):
    """A run began (``resumed``: it continues a paused context)."""

    workflow: str
    run_id: str
    resumed: bool = False


@dataclass(kw_only=True, slots=True)
class WorkflowRunEndEvent(BusEvent):
    """A run ended: ``outcome`` is stopped, failed, timed_out or cancelled."""

    workflow: str
    run_id: str
    outcome: str
    result: Any = None
    error: str | None = None


@dataclass(kw_only=True, slots=True)
class _StepEvent(BusEvent):
    workflow: str
    run_id: str
    step: str
    input_event: Any

    @property
    def event_in(self) -> str:
        """The type name of the event the step handles."""
        return type(self.input_event).__name__


@dataclass(kw_only=True, slots=True)
class WorkflowStepStartEvent(_StepEvent):
    """A step began handling ``input_event``."""


@dataclass(kw_only=True, slots=True)
class WorkflowStepEndEvent(_StepEvent):
    """A step finished: the events it emitted (returned or sent), or its error."""

    output_events: list[Any] = field(default_factory=list)
    error: str | None = None
    span_told: ClassVar[bool] = True  # the step's start event holds its span

    @property
    def events_out(self) -> list[str]:
        return [type(e).__name__ for e in self.output_events]


@dataclass(kw_only=True, slots=True)
class WorkflowStepRetryEvent(_StepEvent):
    """A step failed and its retry policy runs it again after ``delay`` seconds (``attempt``
    is the number of this retry: 1, 2, ...)."""

    attempt: int
    delay: float
    error: str
