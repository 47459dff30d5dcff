"""The errors a workflow raises (names as in ``llama_index.core.workflow.errors``)."""

from __future__ import annotations

__all__ = [
    "WorkflowError",
    "WorkflowValidationError",
    "WorkflowConfigurationError",
    "WorkflowRuntimeError",
    "WorkflowStepDoesNotExistError",
    "WorkflowTimeoutError",
    "WorkflowCancelledByUser",
    "ContextSerdeError",
]


class WorkflowError(Exception):
    """Base of every workflow error."""


class WorkflowValidationError(WorkflowError):
    """A workflow or step is wrongly shaped (bad annotations, events nobody handles)."""


class WorkflowConfigurationError(WorkflowValidationError):
    """The start or stop event types of a workflow are ambiguous or missing (upstream's name;
    a WorkflowValidationError here, so one ``except`` catches every wiring problem)."""


class WorkflowStepDoesNotExistError(WorkflowError):
    """A checkpointer was asked about a step the workflow does not have."""


class WorkflowRuntimeError(WorkflowError):
    """A run failed: a step raised, or an event could not be delivered."""


class WorkflowTimeoutError(WorkflowError):
    """A run took longer than the workflow's timeout (virtual seconds on a virtual loop)."""


class WorkflowCancelledByUser(WorkflowError):
    """Awaiting a run that ``handler.cancel_run()`` stopped."""


class ContextSerdeError(WorkflowError, ValueError):
    """A context cannot be saved with ``to_dict`` or restored with ``Context.from_dict``."""
