"""The static shape of a workflow class: its steps, the events between them, and validation.

Built once per class when the first instance is made (``Workflow.__init__``), so a wrongly
wired workflow fails at construction, before anything runs (upstream validates at ``run()``).
``Workflow(disable_validation=True)`` skips the wiring checks (events nobody accepts or
returns, no path to StopEvent); a malformed step signature and the start/stop event types
(exactly one of each, as upstream: ``WorkflowConfigurationError``) are checked always.
Steps come in definition order:
methods along the MRO (a subclass overriding a step keeps its place; overriding it with a
plain method removes it), then free functions added with ``@step(workflow=...)``.

Routing is by ``isinstance``: a step receives every event that is an instance of a type its
event parameter names (subclasses included). Two kinds of event cross the workflow's edge and
are exempt from the produced/consumed checks, as upstream: ``InputRequiredEvent`` (a step
returns it to the caller, through the event stream) and ``HumanResponseEvent`` (the caller
sends it in).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any
from weakref import WeakKeyDictionary

from agentkit.workflow.decorators import StepSpec, inspect_step, step_mark
from agentkit.workflow.errors import WorkflowConfigurationError, WorkflowValidationError
from agentkit.workflow.events import (
    Event,
    HumanResponseEvent,
    InputRequiredEvent,
    StartEvent,
    StopEvent,
)
from agentkit.workflow.serialize import type_path

__all__ = ["WorkflowGraph", "graph_of", "forget_graphs", "free_steps", "step_functions"]

_EDGE_EVENTS = (InputRequiredEvent, HumanResponseEvent)


@dataclass(frozen=True)
class WorkflowGraph:
    """Steps (in definition order) and the start event type of one workflow class."""

    workflow_name: str
    steps: dict[str, StepSpec]
    start_event_type: type[StartEvent]
    stop_event_type: type[StopEvent]
    _accepting: dict[type[Event], tuple[StepSpec, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    """The steps accepting each event type met so far (:meth:`accepting`)."""

    def accepting(self, event: Event) -> list[StepSpec]:
        """The steps an event is delivered to, in definition order."""
        return list(self.routes(event))

    def routes(self, event: Event) -> tuple[StepSpec, ...]:
        """:meth:`accepting` as the graph keeps it: worked out once per event type (a step
        accepts an event by its type, and the steps of a graph never change)."""
        found = self._accepting.get(type(event))
        if found is None:
            found = tuple(spec for spec in self.steps.values() if spec.accepts_event(event))
            self._accepting[type(event)] = found
        return found

    @functools.cached_property
    def takes_caller_input(self) -> bool:
        """Some step accepts a HumanResponseEvent: the caller may feed a run (worked out once
        per graph, not once per run)."""
        return any(issubclass(t, HumanResponseEvent)
                   for spec in self.steps.values() for t in spec.accepts)

    @functools.cached_property
    def required_services(self) -> frozenset[str]:
        """The nested workflows the steps need added (worked out once per graph, not per
        run)."""
        return frozenset(service.name for spec in self.steps.values()
                         for service in spec.services if service.required)

    @functools.cached_property
    def named_types(self) -> tuple[type[Event], ...]:
        """The event types the steps accept and return, step by step (worked out once per
        graph: each restore of a saved context asks)."""
        return tuple(self._named_types())

    def event_types(self) -> dict[str, type[Event]]:
        """Every event type the steps name, plus the built-in ones, by ``type_path``."""
        types: dict[str, type[Event]] = {}
        builtins: tuple[type[Event], ...] = (Event, StartEvent, StopEvent, InputRequiredEvent,
                                             HumanResponseEvent)
        for event_type in (*builtins, *self._named_types()):
            types[type_path(event_type)] = event_type
        return types

    def _named_types(self) -> Iterator[type[Event]]:
        for spec in self.steps.values():
            yield from spec.accepts
            yield from spec.returns

    def consumers(self, event_type: type[Event]) -> list[StepSpec]:
        """The steps that events of ``event_type`` are routed to."""
        return [spec for spec in self.steps.values() if spec.accepts_type(event_type)]

    def describe_steps(self) -> str:
        return ", ".join(f"'{name}'" for name in self.steps) or "none"


_graphs: WeakKeyDictionary[type, WorkflowGraph] = WeakKeyDictionary()
_validated: WeakKeyDictionary[type, WorkflowGraph] = WeakKeyDictionary()


def graph_of(workflow_cls: type, *, validate: bool = True) -> WorkflowGraph:
    """The graph of ``workflow_cls`` (built on first use, then cached), validated unless
    ``validate`` is False."""
    graph = _graphs.get(workflow_cls)
    if graph is None:
        graph = _build(workflow_cls)
        _graphs[workflow_cls] = graph
    if validate and _validated.get(workflow_cls) is not graph:
        _validate(graph)
        _validated[workflow_cls] = graph
    return graph


def forget_graphs() -> None:
    """Drop cached graphs (a step was added to some class; subclasses see it too)."""
    _graphs.clear()
    _validated.clear()


def free_steps(workflow_cls: type) -> dict[str, Any]:
    """A copy of the free-function steps added to ``workflow_cls`` itself (not its bases)."""
    registry: dict[str, Any] = dict(workflow_cls.__dict__.get("_free_steps", {}))
    return registry


def step_functions(workflow_cls: type) -> dict[str, tuple[Any, bool]]:
    """Every step function of ``workflow_cls`` by name, with whether it is a method."""
    found: dict[str, tuple[Any, bool]] = {}  # name -> (function, is_method)
    for klass in reversed(workflow_cls.__mro__):
        for name, attr in vars(klass).items():
            if step_mark(attr) is not None:
                found[name] = (attr, True)
            elif name in found and found[name][1]:
                del found[name]  # overridden by a plain method
    for klass in reversed(workflow_cls.__mro__):
        for name, fn in free_steps(klass).items():
            found[name] = (fn, False)
    return found


def _build(workflow_cls: type) -> WorkflowGraph:
    steps: dict[str, StepSpec] = {}
    for name, (fn, is_method) in step_functions(workflow_cls).items():
        mark = step_mark(fn)
        assert mark is not None
        spec = mark.spec or inspect_step(fn, mark.num_workers, mark.retry_policy)
        steps[name] = replace(spec, name=name, is_method=is_method)
    return WorkflowGraph(workflow_cls.__name__, steps, _start_event_type(workflow_cls, steps),
                         _stop_event_type(workflow_cls, steps))


def _start_event_type(workflow_cls: type, steps: dict[str, StepSpec]) -> type[StartEvent]:
    found: dict[type[StartEvent], str] = {}
    for spec in steps.values():
        for accepted in spec.accepts:
            if issubclass(accepted, StartEvent):
                found.setdefault(accepted, spec.name)
    if not found:
        steps_text = ", ".join(f"'{n}'" for n in steps) or "none"
        raise WorkflowConfigurationError(
            "At least one Event of type StartEvent must be received by any step. "
            f"(No step of {workflow_cls.__name__} accepts StartEvent: a run begins with a "
            f"StartEvent, so one step needs a parameter annotated with it; steps: {steps_text})")
    if len(found) > 1:
        listed = ", ".join(f"{t.__name__} in '{s}'" for t, s in found.items())
        raise WorkflowConfigurationError(
            f"Only one type of StartEvent is allowed per workflow, found {len(found)}: "
            f"{listed}. (A run of {workflow_cls.__name__} sends exactly one StartEvent type.)")
    return next(iter(found))


def _stop_event_type(workflow_cls: type, steps: dict[str, StepSpec]) -> type[StopEvent]:
    found: dict[type[StopEvent], str] = {}
    for spec in steps.values():
        for returned in spec.returns:
            if issubclass(returned, StopEvent):
                found.setdefault(returned, spec.name)
    if len(found) > 1:
        listed = ", ".join(f"{t.__name__} from '{s}'" for t, s in found.items())
        raise WorkflowConfigurationError(
            f"Only one type of StopEvent is allowed per workflow, found {len(found)}: "
            f"{listed}. (The type of the StopEvent is the type of {workflow_cls.__name__}'s "
            "result.)")
    if not found:  # checked even with validation disabled, as upstream
        raise WorkflowConfigurationError(
            "At least one Event of type StopEvent must be returned by any step. "
            f"(No step of {workflow_cls.__name__} returns StopEvent, so a run could never "
            f"end; steps: {', '.join(repr(n) for n in steps) or 'none'})")
    return next(iter(found))


def _validate(graph: WorkflowGraph) -> None:
    steps = graph.steps.values()
    for spec in steps:
        for accepted in spec.accepts:
            if issubclass(accepted, StopEvent):
                raise WorkflowValidationError(
                    f"Step '{spec.name}' accepts {accepted.__name__}: StopEvent ends the run and "
                    "is never delivered to a step; accept another event type")
    for spec in steps:
        for returned in spec.returns:
            if issubclass(returned, (StopEvent, *_EDGE_EVENTS)):
                continue
            if not graph.consumers(returned):
                raise WorkflowValidationError(
                    f"Step '{spec.name}' returns {returned.__name__}, but no step accepts "
                    f"{returned.__name__}")
    produced = [graph.start_event_type, *(r for s in steps for r in s.returns)]
    for spec in steps:
        for accepted in spec.accepts:
            if issubclass(accepted, _EDGE_EVENTS):
                continue
            if not any(issubclass(p, accepted) for p in produced):
                raise WorkflowValidationError(
                    f"Step '{spec.name}' accepts {accepted.__name__}, but no step returns "
                    f"{accepted.__name__}: declare it in the return annotation of the step that "
                    "returns or sends it")
    _check_path_to_stop(graph)


def _check_path_to_stop(graph: WorkflowGraph) -> None:
    start = graph.start_event_type.__name__
    stoppers = [s.name for s in graph.steps.values()
                if any(issubclass(r, StopEvent) for r in s.returns)]
    sources: list[type[Event]] = [graph.start_event_type]
    sources += [a for s in graph.steps.values() for a in s.accepts if issubclass(a, _EDGE_EVENTS)]
    reached: dict[str, None] = {}
    frontier = sources
    while frontier:
        fresh = [s for t in frontier for s in graph.consumers(t) if s.name not in reached]
        reached.update((s.name, None) for s in fresh)
        frontier = [r for s in fresh for r in s.returns]
    if not any(name in reached for name in stoppers):
        stop_text = ", ".join(f"'{n}'" for n in stoppers)
        reached_text = ", ".join(f"'{n}'" for n in reached) or "none"
        raise WorkflowValidationError(
            f"No path from {start} to StopEvent: {stop_text} return(s) StopEvent but no chain of "
            f"events from {start} reaches it (steps reached: {reached_text})")
