"""A small event-driven workflow engine with the public shape of ``llama_index.core.workflow``.

Steps are methods of a ``Workflow`` subclass decorated with ``@step``; the annotation of a
step's event parameter says which events it receives, its return annotation which events
it emits::

    class Greet(Workflow):
        @step
        async def hello(self, ctx: Context, ev: StartEvent) -> StopEvent:
            await ctx.store.set("greeted", ev.name)
            return StopEvent(result=f"hello {ev.name}")

    result = await Greet(timeout=10).run(name="Ada")      # "hello Ada"
    result = Greet().run_sync(name="Ada")                  # from sync code

The API (see each module for details):

* Events (``events``): ``Event`` is a pydantic model whose extra keywords are kept;
  fields and extras read as attributes and like a dict (``ev["k"]``, ``ev.get("k", d)``,
  ``"k" in ev``). ``StartEvent`` (the run's keyword arguments), ``StopEvent(result)``,
  ``InputRequiredEvent`` (to the caller), ``HumanResponseEvent`` (from the caller).
* ``@step`` / ``@step(num_workers=4)`` / ``@step(retry_policy=ConstantDelayRetryPolicy(...))``
  (``retry_policy``) / ``@step(workflow=W)`` for a free function (``decorators``); a step
  parameter annotated with a Workflow class receives a nested workflow
  (``wf.add_workflows(name=other)``); ``n: Annotated[T, Resource(factory, cache=True)]``
  receives a resource (``resource``), made once per workflow instance unless
  ``cache=False``. One event parameter (a union accepts several types; subclasses are
  delivered too), an optional ``ctx: Context`` parameter, a return annotation naming every
  event the step returns or sends (``-> None`` for none). A step returning None emits
  nothing; a returned ``InputRequiredEvent`` goes to the stream; a ``StopEvent`` ends the
  run. Sync step functions run inline on the loop (upstream uses a thread; inline keeps
  runs deterministic). ``num_workers`` (default 4, as upstream) bounds how many events one
  step handles at once.
* ``Context`` (``context``): ``await ctx.store.get(key, default=...)`` /
  ``await ctx.store.set(key, value)``, or 0.12's ``await ctx.get/set`` on the same data (a
  missing key without a default is a ValueError); ``ctx.clear()``;
  ``ctx.send_event(ev, step=None)``; ``ctx.collect_events(ev, [T, ...])`` (None until one
  of each is in, then the list in that order); ``ctx.write_event_to_stream(ev)`` (any
  object, as upstream); ``ctx.get_result()``; ``ctx.get_holding_events()`` (stepwise);
  ``await ctx.wait_for_event(T, waiter_event=..., requirements={...}, timeout=None)``;
  ``ctx.to_dict()`` / ``Context.from_dict(workflow, data)`` to save a paused run and resume
  it with ``workflow.run(ctx=restored)`` (checked completely: a digest, no imports, the
  workflow's ``restorable_types()`` and ``context_store_schema()``); ``ctx.is_running``;
  ``ctx.lock``. A context passed to several runs keeps its store across them.
* ``Workflow(timeout=10.0, disable_validation=False, verbose=False, num_concurrent_runs=None,
  resource_manager=None)``
  (``workflow``): built = validated, unless ``disable_validation`` (a
  ``WorkflowValidationError`` names the step and event for: no step taking StartEvent, a
  returned event no step accepts, an accepted event no step returns, no path from
  StartEvent to StopEvent, a malformed step signature). ``run(ctx=None, stepwise=False,
  checkpoint_callback=None, start_event=None, **kwargs)`` returns a ``WorkflowHandler``;
  ``run_from(checkpoint)`` resumes a checkpoint; ``run_sync(**kwargs)`` returns the result;
  ``is_done()``, ``stream_events()``; ``graph`` is the validated shape; ``add_step(fn)`` adds
  a free ``@step`` function. A run that cannot progress ends with a WorkflowRuntimeError.
* ``WorkflowCheckpointer`` / ``Checkpoint`` (``checkpointer``): a checkpoint after each
  completed step, JSON round trip, resume from any of them (with another LLM, say).
* ``WorkflowHandler`` (``handler``): ``await handler`` gives the StopEvent's ``result`` (a
  StopEvent subclass is returned itself, as upstream); ``handler.stream_events()`` yields the
  streamed events then the StopEvent;
  ``handler.ctx``; ``await handler.run_step()`` (stepwise runs); ``await
  handler.cancel_run()`` pauses the run in its context. It is an ``asyncio.Future`` of the
  result, as upstream (``str(handler)``, ``handler.result()``); a failing or timed-out run
  ends its stream with a plain ``StopEvent()`` and ``await handler`` raises the error.
* Errors (``errors``): a step that raises ends the run with ``WorkflowRuntimeError("Error in
  step '<name>': <msg>")`` chained to the cause; the timeout (virtual seconds on agentkit's
  loop) with ``WorkflowTimeoutError``; a cancelled run with ``WorkflowCancelledByUser``;
  saving/restoring problems with ``ContextSerdeError`` (e.g. a context restored into a
  different workflow).
* ``draw_workflow(wf)`` (``draw``): a Mermaid flowchart of the steps and events.
* The bus (``bus``): ``WorkflowRunStartEvent``/``WorkflowRunEndEvent`` around a run and
  ``WorkflowStepStartEvent``/``WorkflowStepEndEvent`` around each step attempt
  (``WorkflowStepRetryEvent`` between retried attempts), in spans,
  on virtual time, so traces can show workflow steps.
"""

from agentkit.workflow.bus import (
    WorkflowRunEndEvent,
    WorkflowRunStartEvent,
    WorkflowStepEndEvent,
    WorkflowStepRetryEvent,
    WorkflowStepStartEvent,
)
from agentkit.workflow.checkpointer import Checkpoint, CheckpointCallback, WorkflowCheckpointer
from agentkit.workflow.context import Context, ContextStore
from agentkit.workflow.decorators import StepSpec, step
from agentkit.workflow.draw import draw_workflow
from agentkit.workflow.errors import (
    ContextSerdeError,
    WorkflowCancelledByUser,
    WorkflowConfigurationError,
    WorkflowError,
    WorkflowRuntimeError,
    WorkflowStepDoesNotExistError,
    WorkflowTimeoutError,
    WorkflowValidationError,
)
from agentkit.workflow.events import (
    Event,
    HumanResponseEvent,
    InputRequiredEvent,
    StartEvent,
    StopEvent,
)
from agentkit.workflow.graph import WorkflowGraph
from agentkit.workflow.handler import WorkflowHandler
from agentkit.workflow.resource import Resource, ResourceManager
from agentkit.workflow.retry_policy import ConstantDelayRetryPolicy, RetryPolicy
from agentkit.workflow.workflow import Workflow

__all__ = [
    "Checkpoint",
    "CheckpointCallback",
    "ConstantDelayRetryPolicy",
    "Context",
    "ContextSerdeError",
    "ContextStore",
    "Event",
    "HumanResponseEvent",
    "InputRequiredEvent",
    "Resource",
    "ResourceManager",
    "RetryPolicy",
    "StartEvent",
    "StepSpec",
    "StopEvent",
    "Workflow",
    "WorkflowCancelledByUser",
    "WorkflowCheckpointer",
    "WorkflowConfigurationError",
    "WorkflowError",
    "WorkflowGraph",
    "WorkflowHandler",
    "WorkflowRunEndEvent",
    "WorkflowRunStartEvent",
    "WorkflowRuntimeError",
    "WorkflowStepDoesNotExistError",
    "WorkflowStepEndEvent",
    "WorkflowStepRetryEvent",
    "WorkflowStepStartEvent",
    "WorkflowTimeoutError",
    "WorkflowValidationError",
    "draw_workflow",
    "step",
]
