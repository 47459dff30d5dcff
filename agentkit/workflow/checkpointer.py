"""Checkpoints: the state of a run after each completed step, to resume a new run from any one.

``WorkflowCheckpointer(workflow).run(**kwargs)`` runs the workflow and records a
:class:`Checkpoint` after every completed step (``checkpoints[run_id]``, in order);
``checkpointer.run_from(checkpoint)`` (or ``workflow.run_from(checkpoint)`` on any instance of
the same workflow class -- built with another LLM, say) starts a new run from it. A checkpoint
is the context saved when the step returned, before its returned event was delivered
(``ctx_state``), plus that event (``output_event``), which the resumed run delivers first.
Upstream did not deliver it when another step was still running at the checkpoint, so such a
resume lost the step's output; here it is always delivered.

``checkpoint.to_dict()`` is JSON-ready and carries a digest, and
``Checkpoint.from_dict(workflow, data)`` validates all of it the way ``Context.from_dict``
does, so checkpoints can be written to disk and resumed later, in another process. Ids are
deterministic (``<run_id>:<n>``): a checkpointed run draws no random ids, so recording
checkpoints does not change the run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from agentkit.workflow.context import Context, check_seal, sealed
from agentkit.workflow.errors import ContextSerdeError, WorkflowStepDoesNotExistError
from agentkit.workflow.events import Event
from agentkit.workflow.runtime import CheckpointCallback
from agentkit.workflow.serialize import decode, encode

if TYPE_CHECKING:
    from agentkit.workflow.handler import WorkflowHandler
    from agentkit.workflow.workflow import Workflow

__all__ = ["Checkpoint", "CheckpointCallback", "WorkflowCheckpointer"]

_FORMAT = 1
_KEYS = ("format", "id_", "run_id", "last_completed_step", "input_event", "output_event",
         "ctx_state", "digest")


class Checkpoint(BaseModel):
    """A run's state after one completed step (fields as upstream, plus ``run_id``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    id_: str
    run_id: str
    last_completed_step: str | None
    input_event: Event | None
    output_event: Event | None
    ctx_state: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The checkpoint as JSON-ready data, with a digest of its content."""
        return sealed({
            "format": _FORMAT, "id_": self.id_, "run_id": self.run_id,
            "last_completed_step": self.last_completed_step,
            "input_event": encode(self.input_event, "input_event"),
            "output_event": encode(self.output_event, "output_event"),
            "ctx_state": self.ctx_state})

    @classmethod
    def from_dict(cls, workflow: Workflow, data: Any) -> Checkpoint:
        """A checkpoint saved by ``to_dict``, checked completely against ``workflow`` (a
        ContextSerdeError names the path of any problem)."""
        def fail(path: str, problem: str) -> ContextSerdeError:
            return ContextSerdeError(f"Checkpoint.from_dict: at {path}: {problem}")

        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise ContextSerdeError("Checkpoint.from_dict: not a saved checkpoint (expected the "
                                    f"dict Checkpoint.to_dict() returns, format {_FORMAT})")
        try:
            check_seal(data, "Checkpoint.from_dict", "checkpoint")
            unknown = sorted(set(data) - set(_KEYS))
            if unknown:
                raise fail(f"[{unknown[0]!r}]", "not part of a saved checkpoint")
            for key in ("id_", "run_id"):
                if not isinstance(data.get(key), str):
                    raise fail(f"[{key!r}]", "must be a string")
            step = data.get("last_completed_step")
            if step is not None and step not in workflow.graph.steps:
                raise fail("['last_completed_step']", f"{workflow.graph.workflow_name} has no "
                                                      f"step {step!r}")
            restorable = workflow.restorable_types()
            events: dict[str, Event | None] = {}
            for key in ("input_event", "output_event"):
                event = decode(data.get(key), f"[{key!r}]", restorable)
                if event is not None and not isinstance(event, Event):
                    raise fail(f"[{key!r}]", f"must be an Event or null, got "
                                             f"{type(event).__name__}")
                events[key] = event
            state = data.get("ctx_state")
            if not isinstance(state, dict) or state.get("is_running") is not True:
                raise fail("['ctx_state']", "must be the saved context of a run in progress")
        except RecursionError:
            raise ContextSerdeError("Checkpoint.from_dict: the saved checkpoint is nested too "
                                    "deeply to restore") from None
        Context.from_dict(workflow, state)  # every check of a saved context, now
        return cls(id_=data["id_"], run_id=data["run_id"], last_completed_step=step,
                   input_event=events["input_event"], output_event=events["output_event"],
                   ctx_state=state)


class WorkflowCheckpointer:
    """Runs ``workflow`` recording a checkpoint after each completed step of each run (all
    steps, or those enabled), and resumes new runs from them."""

    def __init__(self, workflow: Workflow, disabled_steps: Iterable[str] = ()) -> None:
        self.workflow = workflow
        self._checkpoints: dict[str, list[Checkpoint]] = {}
        self.enabled_checkpoints: set[str] = set(workflow.graph.steps)
        for name in disabled_steps:
            self.disable_checkpoint(name)

    @property
    def checkpoints(self) -> dict[str, list[Checkpoint]]:
        """The checkpoints recorded so far, by run id, in the order the steps completed."""
        return self._checkpoints

    def _check_step(self, step: str) -> None:
        if step not in self.workflow.graph.steps:
            raise WorkflowStepDoesNotExistError(
                f"This workflow does not contain a step with name {step}")

    def enable_checkpoint(self, step: str) -> None:
        """Record a checkpoint after ``step`` completes."""
        self._check_step(step)
        self.enabled_checkpoints.add(step)

    def disable_checkpoint(self, step: str) -> None:
        """Record no checkpoint after ``step``."""
        self._check_step(step)
        self.enabled_checkpoints.discard(step)

    def run(self, **kwargs: Any) -> WorkflowHandler:
        """``workflow.run(**kwargs)``, recording checkpoints."""
        return self.workflow.run(checkpoint_callback=self.new_checkpoint_callback_for_run(),
                                 **kwargs)

    def run_from(self, checkpoint: Checkpoint, **kwargs: Any) -> WorkflowHandler:
        """A new run of the workflow from ``checkpoint``, recording checkpoints."""
        return self.workflow.run_from(checkpoint,
                                      checkpoint_callback=self.new_checkpoint_callback_for_run(),
                                      **kwargs)

    def new_checkpoint_callback_for_run(self) -> CheckpointCallback:
        """A callback that records this checkpointer's checkpoints for one run."""
        async def record(run_id: str, last_completed_step: str | None, input_ev: Event | None,
                         output_ev: Event | None, ctx: Context) -> None:
            if last_completed_step not in self.enabled_checkpoints:
                return
            taken = self._checkpoints.setdefault(run_id, [])
            taken.append(Checkpoint(
                id_=f"{run_id}:{len(taken) + 1}", run_id=run_id,
                last_completed_step=last_completed_step, input_event=input_ev,
                output_event=output_ev, ctx_state=ctx.to_dict()))

        return record

    def filter_checkpoints(self, run_id: str | None = None, last_completed_step: str | None = None,
                           input_event_type: type[Event] | None = None,
                           output_event_type: type[Event] | None = None) -> list[Checkpoint]:
        """The checkpoints matching every filter given (event types match exactly, as
        upstream); at least one filter is needed."""
        if not (run_id or last_completed_step or input_event_type or output_event_type):
            raise ValueError("Please specify a filter.")
        candidates = (self._checkpoints.get(run_id, []) if run_id
                      else [c for taken in self._checkpoints.values() for c in taken])
        return [c for c in candidates
                if (not last_completed_step or c.last_completed_step == last_completed_step)
                and (not input_event_type or type(c.input_event) is input_event_type)
                and (not output_event_type or type(c.output_event) is output_event_type)]
