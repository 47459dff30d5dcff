"""``Workflow``: a set of ``@step`` methods wired together by the events they accept and return."""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ValidationError

from agentkit.core.sim import run_sync
from agentkit.workflow.context import Context, stream_end
from agentkit.workflow.decorators import ServiceParam, step_mark
from agentkit.workflow.errors import WorkflowRuntimeError, WorkflowValidationError
from agentkit.workflow.events import (
    Event,
    HumanResponseEvent,
    InputRequiredEvent,
    StartEvent,
    StopEvent,
)
from agentkit.workflow.graph import (
    WorkflowGraph,
    forget_graphs,
    free_steps,
    graph_of,
    step_functions,
)
from agentkit.workflow.handler import WorkflowHandler
from agentkit.workflow.resource import ResourceManager
from agentkit.workflow.runtime import CheckpointCallback, Run, RunSlots
from agentkit.workflow.serialize import model_closure, models_in

if TYPE_CHECKING:
    from agentkit.workflow.checkpointer import Checkpoint

__all__ = ["Workflow"]

_log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 10.0  # upstream's default, in (virtual) seconds

_BUILTIN_EVENTS: tuple[type[Event], ...] = (Event, StartEvent, StopEvent, InputRequiredEvent,
                                            HumanResponseEvent)


class Workflow:
    """An event-driven workflow; subclass it and declare steps with ``@step``.

    ``timeout`` is in seconds of the running loop's clock, which is virtual time on
    agentkit's loop (``run_sync``, the harness); ``None`` means no limit. A run that can no
    longer progress (no step running, no event waiting, no step taking the caller's input)
    ends with a WorkflowRuntimeError rather than waiting out the timeout. ``verbose`` prints
    each step as it runs. The workflow is validated when it is built (upstream: at ``run()``):
    a wrongly wired one raises WorkflowValidationError here, unless ``disable_validation``.
    ``num_concurrent_runs`` bounds how many runs of this instance go on at once (later ones
    wait for a free slot before their first step). ``resource_manager`` holds the cached
    step resources (a fresh one per instance by default; pass one to share them).

    Saved contexts and checkpoints restore only the classes in ``restorable_types()``: the
    workflow's events, ``context_types`` (a class attribute for the types a subclass keeps
    in its store), the models named by ``context_store_schema()`` (the types of store keys a
    restored context is checked against), types registered on the instance with
    ``register_context_types``, and the models all of their fields name.
    """

    context_types: ClassVar[tuple[type, ...]] = ()

    # the instance's state, set by __init__ and _reset_runtime
    _timeout: float | None
    _verbose: bool
    _disable_validation: bool
    _num_concurrent_runs: int | None
    _graph: WorkflowGraph
    _services: dict[str, Workflow]
    _registered_types: list[type]
    _resource_manager: ResourceManager | None
    _slots: RunSlots
    _live: set[Run]
    _streamable: weakref.WeakSet[Run] | None

    def __init__(self, timeout: float | None = DEFAULT_TIMEOUT, disable_validation: bool = False,
                 verbose: bool = False, num_concurrent_runs: int | None = None,
                 resource_manager: ResourceManager | None = None) -> None:
        if timeout is not None and not timeout > 0:
            raise ValueError(f"Workflow timeout must be > 0 seconds or None, got {timeout!r}")
        if num_concurrent_runs is not None and (
                isinstance(num_concurrent_runs, bool) or not isinstance(num_concurrent_runs, int)
                or num_concurrent_runs < 1):
            raise ValueError(f"num_concurrent_runs must be an int >= 1 or None, got "
                             f"{num_concurrent_runs!r}")
        graph = graph_of(type(self), validate=not disable_validation)
        # set at once: an agent (a pydantic model) runs a Python __setattr__ per assignment
        vars(self).update(_timeout=timeout, _verbose=verbose,
                          _disable_validation=disable_validation,
                          _num_concurrent_runs=num_concurrent_runs, _graph=graph,
                          _services={}, _registered_types=[],
                          _resource_manager=resource_manager)  # None: made when first asked for
        self._reset_runtime()

    def _copy_runtime_from(self, other: Workflow) -> None:
        """After a copy: the original's nested workflows, registered types and resources,
        fresh runs."""
        self._services = dict(other._services)
        self._registered_types = list(other._registered_types)
        self._resource_manager = other.resource_manager
        self._reset_runtime()

    def _reset_runtime(self) -> None:
        """Fresh bookkeeping of runs (a copied agent must not share its original's); the set
        of runs ``stream_events`` looks in is made by the first run (many agents never run
        as workflows of their own)."""
        vars(self).update(_slots=RunSlots(self._num_concurrent_runs), _live=set(),
                          _streamable=None)

    @property
    def timeout(self) -> float | None:
        """Seconds a run may take (the running loop's clock), or None for no limit."""
        return self._timeout

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self._timeout = value

    @property
    def verbose(self) -> bool:
        """Print each step as it runs."""
        return self._verbose

    @verbose.setter
    def verbose(self, value: bool) -> None:
        self._verbose = value

    @property
    def resource_manager(self) -> ResourceManager:
        """The cached values of this instance's step resources (``Annotated[T,
        Resource(factory)]`` parameters)."""
        if self._resource_manager is None:
            self._resource_manager = ResourceManager()
        return self._resource_manager

    @property
    def graph(self) -> WorkflowGraph:
        """The steps and the events they accept and return (what validation checked)."""
        return self._graph

    # ------------------------------------------------------------------ building
    @classmethod
    def add_step(cls, func: Callable[..., Any]) -> None:
        """Add a free ``@step`` function to this workflow class (``@step(workflow=cls)``)."""
        if step_mark(func) is None:
            raise WorkflowValidationError(
                f"Step function {func.__name__} is missing the `@step` decorator.")
        if func.__name__ in step_functions(cls):
            raise WorkflowValidationError(
                f"A step {func.__name__} is already part of this workflow, please choose "
                f"another name. ({cls.__name__} has a step named '{func.__name__}'.)")
        registry = free_steps(cls)
        registry[func.__name__] = func
        cls._free_steps = registry  # type: ignore[attr-defined]
        forget_graphs()

    def add_workflows(self, **workflows: Workflow) -> None:
        """Make nested workflows available to steps: a step parameter named ``name`` and
        annotated with a Workflow class receives ``workflows[name]``."""
        for name, workflow in workflows.items():
            if not isinstance(workflow, Workflow):
                raise TypeError(f"add_workflows({name}=...) takes a Workflow, got "
                                f"{type(workflow).__name__}")
            self._services[name] = workflow

    def _service(self, param: ServiceParam) -> Any:
        """The nested workflow a step parameter receives."""
        if param.name in self._services:
            return self._services[param.name]
        if not param.required:
            return param.default
        raise WorkflowRuntimeError(f"Service {param.name} not found")

    def _check_services(self) -> None:
        required = self._graph.required_services
        if required and (missing := sorted(required - self._services.keys())):
            raise WorkflowValidationError(
                f"The following services are not available: {', '.join(missing)} (add them "
                "with workflow.add_workflows(name=...))")

    # ------------------------------------------------------------------ saved contexts
    def register_context_types(self, *types: type) -> None:
        """Let saved contexts and checkpoints of this instance restore ``types`` (and the
        models their fields name): classes a step or tool keeps in the store."""
        for cls in types:
            if not isinstance(cls, type):
                raise TypeError(f"register_context_types takes classes, got {cls!r}")
        self._registered_types.extend(types)

    def restorable_types(self) -> dict[str, type]:
        """Every class a saved context of this workflow may name, by ``module:qualname``."""
        declared = [t for klass in type(self).__mro__
                    for t in vars(klass).get("context_types", ())]
        named = self._graph.named_types
        stored = [m for annotation in self.context_store_schema().values()
                  for m in models_in(annotation)]
        return model_closure([*_BUILTIN_EVENTS, *named, *declared, *stored,
                              *self._registered_types])

    def context_store_schema(self) -> dict[str, Any]:
        """Store keys and the types a restored context must hold under them (none by
        default; agent workflows declare theirs)."""
        return {}

    # ------------------------------------------------------------------ running
    def run(self, ctx: Context | None = None, stepwise: bool = False,
            checkpoint_callback: CheckpointCallback | None = None,
            start_event: StartEvent | None = None, **kwargs: Any) -> WorkflowHandler:
        """Start a run and return its handler (call it inside a running event loop).

        The start event is ``start_event`` or the workflow's StartEvent type built from
        ``kwargs``. With ``ctx``, the run shares that context's store; if the context holds
        a paused run (cancelled, or restored with ``Context.from_dict``), the run resumes it
        instead of starting anew. ``stepwise``: nothing runs until ``handler.run_step()``
        (one step per call). ``checkpoint_callback`` is awaited after each completed step.
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError("Workflow.run() needs a running event loop: await it in async "
                               "code, or call run_sync()") from None
        if not self._disable_validation:
            self._check_services()
            if stepwise and self._uses_hitl():
                raise WorkflowRuntimeError(
                    "Human-in-the-loop is not supported with stepwise execution")
        ctx = ctx if ctx is not None else Context(self)
        if not isinstance(ctx, Context):
            raise TypeError(f"run(ctx=...) takes a Context, got {type(ctx).__name__}")
        if ctx._graph is not self._graph:
            raise WorkflowRuntimeError(
                f"This Context belongs to workflow {ctx._graph.workflow_name}, not "
                f"{type(self).__name__}")
        if ctx._run is not None:
            raise WorkflowRuntimeError("This Context is already running a workflow; await or "
                                       "cancel that run first")
        first = None
        if ctx.is_running:
            if start_event is not None or kwargs:
                raise WorkflowRuntimeError(
                    "This Context holds a paused run; resume it with run(ctx=ctx) and no start "
                    "event or keyword arguments")
        else:
            first = self._start_event(start_event, kwargs)
        run = Run(self, ctx, first, stepwise=stepwise, checkpoint_callback=checkpoint_callback)
        run.task = loop.create_task(run.main())
        self._live.add(run)
        if self._streamable is None:
            self._streamable = weakref.WeakSet()
        self._streamable.add(run)
        return WorkflowHandler._of(run, run.task)

    def run_from(self, checkpoint: Checkpoint, stepwise: bool = False,
                 checkpoint_callback: CheckpointCallback | None = None) -> WorkflowHandler:
        """A new run that goes on from ``checkpoint`` (taken by a run of this workflow class;
        this instance may differ, e.g. hold another LLM): its saved context is restored and
        the checkpointed step's returned event delivered."""
        ctx = Context.from_dict(self, checkpoint.ctx_state)
        handler = self.run(ctx=ctx, stepwise=stepwise, checkpoint_callback=checkpoint_callback)
        if checkpoint.output_event is not None:
            ctx.send_event(checkpoint.output_event)
        return handler

    def _uses_hitl(self) -> bool:
        steps = self._graph.steps.values()
        return (any(issubclass(t, InputRequiredEvent) for s in steps for t in s.returns)
                or any(issubclass(t, HumanResponseEvent) for s in steps for t in s.accepts))

    def _run_ended(self, run: Run) -> None:
        self._live.discard(run)

    def is_done(self) -> bool:
        """True when no run of this workflow is in progress (upstream's always answered
        True: it checked an attribute nothing set)."""
        return not self._live

    async def stream_events(self) -> AsyncIterator[Any]:
        """The events of this workflow's one run, up to (not including) the StopEvent, as
        upstream's workflow-level stream; ``handler.stream_events()`` is the per-run one."""
        await asyncio.sleep(0)  # let a run just created start
        runs = [r for r in self._streamable or () if not r.ended or r.stream.pending()]
        if len(runs) > 1:
            raise WorkflowRuntimeError(
                "This workflow has multiple concurrent runs in progress and cannot stream "
                "events. To be able to stream events, make sure you call `run()` on this "
                "workflow only once.")
        if not runs:
            raise WorkflowRuntimeError("This workflow has no run to stream events from: call "
                                       "run() first")
        run = runs[0]
        try:
            while (event := await run.stream.get()) is not stream_end:
                if isinstance(event, StopEvent):
                    break
                yield event
        finally:
            assert self._streamable is not None
            self._streamable.discard(run)

    async def _on_run_end(self, ctx: Context, error: BaseException | None) -> None:
        """Subclass hook: a run ended (stopped, failed or timed out -- not paused), with
        ``error`` if it failed; the context keeps its store. The handler completes after it
        returns (agent workflows put back the memory a failed run changed)."""

    def run_sync(self, ctx: Context | None = None, start_event: StartEvent | None = None,
                 **kwargs: Any) -> Any:
        """``run`` from sync code: the StopEvent's result (or the run's error)."""
        async def _run() -> Any:
            return await self.run(ctx=ctx, start_event=start_event, **kwargs)

        return run_sync(_run())

    def _start_event(self, start_event: StartEvent | None, kwargs: dict[str, Any]) -> StartEvent:
        expected = self._graph.start_event_type
        if start_event is not None:
            if kwargs:  # upstream's warning, word for word; the run goes on
                _log.warning(
                    "Keyword arguments are not supported when 'run()' is invoked with the "
                    "'start_event' parameter. These keyword arguments will be ignored: %s",
                    kwargs)
            if not isinstance(start_event, expected):
                raise WorkflowRuntimeError(f"run(start_event=...) must be a {expected.__name__}, "
                                           f"got {type(start_event).__name__}")
            return start_event
        try:
            return expected(**kwargs)
        except ValidationError as exc:
            raise WorkflowRuntimeError(
                f"Failed creating a start event of type '{expected.__name__}' with the keyword "
                f"arguments {sorted(kwargs)}: {exc}") from None
