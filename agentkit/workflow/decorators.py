"""``@step``: mark a function as a workflow step, routed by the annotation of its event.

A step has exactly one *event parameter*, annotated with the event type(s) it accepts (a
union accepts several), optionally a parameter annotated ``Context``, optionally parameters
annotated with a ``Workflow`` class (*services*: nested workflows added with
``workflow.add_workflows(name=wf)``, passed by parameter name; the parameter's default is
used when none was added), optionally *resources* (``n: Annotated[T, Resource(factory)]``,
:mod:`agentkit.workflow.resource`), and a return annotation naming every event it returns *or sends*
with ``ctx.send_event`` (``-> None`` when it emits nothing). The annotations are the
workflow's wiring: validation, routing and ``draw_workflow`` all read them. Any other
parameter is an error (upstream took it as a service request).

``@step(retry_policy=...)`` runs a failing step again as the policy says
(:mod:`agentkit.workflow.retry_policy`). A free function (not a method) is a step of the
workflow class named by ``@step(workflow=...)``; without it, decorating is an error, as
upstream.

The signature is checked when the decorator runs, unless an annotation cannot be resolved
yet (an event class defined further down the module, or inside a function under
``from __future__ import annotations``); then it is checked when the workflow is built.
Either way a malformed step is a ``WorkflowValidationError`` naming the step.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, overload

from agentkit.workflow.context import Context
from agentkit.workflow.errors import WorkflowValidationError
from agentkit.workflow.events import Event
from agentkit.workflow.resource import ResourceDefinition, _Resource
from agentkit.workflow.retry_policy import RetryPolicy

if TYPE_CHECKING:
    from agentkit.workflow.workflow import Workflow

__all__ = ["step", "StepSpec", "ServiceParam", "inspect_step", "step_mark"]

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_NUM_WORKERS = 4  # upstream's default: a step handles up to 4 events at once


_NO_DEFAULT: Any = inspect.Parameter.empty


@dataclass(frozen=True)
class ServiceParam:
    """A step parameter that receives a nested workflow (a *service*) by its name."""

    name: str
    workflow_type: type
    default: Any = _NO_DEFAULT

    @property
    def required(self) -> bool:
        """True when the step has no default for it: the workflow must have it added."""
        return self.default is _NO_DEFAULT


@dataclass(frozen=True)
class StepSpec:
    """What a step accepts, returns and needs, read from its signature."""

    name: str
    fn: Callable[..., Any]
    event_param: str
    accepts: tuple[type[Event], ...]
    returns: tuple[type[Event], ...]  # without None
    ctx_param: str | None
    num_workers: int
    is_method: bool = True  # False for free functions added with @step(workflow=...)
    retry_policy: RetryPolicy | None = None
    services: tuple[ServiceParam, ...] = ()
    resources: tuple[ResourceDefinition, ...] = ()

    def accepts_event(self, event: Event) -> bool:
        """True when ``event`` is an instance of one of the accepted types."""
        return isinstance(event, self.accepts)

    def accepts_type(self, event_type: type[Event]) -> bool:
        """True when events of ``event_type`` are routed to this step."""
        return any(issubclass(event_type, accepted) for accepted in self.accepts)


@dataclass(frozen=True)
class _StepMark:
    num_workers: int
    retry_policy: RetryPolicy | None
    spec: StepSpec | None  # None: annotations unresolved at decoration time


_MARK = "__agentkit_step__"


def step_mark(fn: Any) -> _StepMark | None:
    """The ``@step`` mark of ``fn`` (None when it is not a step)."""
    return getattr(fn, _MARK, None)


@overload
def step(func: F, *, workflow: type[Workflow] | None = None,
         num_workers: int = DEFAULT_NUM_WORKERS, retry_policy: RetryPolicy | None = None) -> F: ...


@overload
def step(func: None = None, *, workflow: type[Workflow] | None = None,
         num_workers: int = DEFAULT_NUM_WORKERS,
         retry_policy: RetryPolicy | None = None) -> Callable[[F], F]: ...


def step(func: F | None = None, *, workflow: type[Workflow] | None = None,
         num_workers: int = DEFAULT_NUM_WORKERS,
         retry_policy: RetryPolicy | None = None) -> F | Callable[[F], F]:
    """Mark ``func`` as a step: ``@step``, ``@step(num_workers=2)``,
    ``@step(retry_policy=ConstantDelayRetryPolicy(delay=1))``, or
    ``@step(workflow=MyWorkflow)`` to add a free function to a workflow class."""
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
        raise WorkflowValidationError(
            f"@step(num_workers={num_workers!r}): num_workers must be an int >= 1")
    if retry_policy is not None and not isinstance(retry_policy, RetryPolicy):
        raise WorkflowValidationError(
            f"@step(retry_policy={retry_policy!r}): a retry policy has a method "
            "next(elapsed_time, attempts, error) -> float | None")

    def decorate(fn: F) -> F:
        if not inspect.isfunction(fn):
            raise WorkflowValidationError(f"@step decorates a function, got {fn!r}")
        try:
            spec: StepSpec | None = inspect_step(fn, num_workers, retry_policy)
        except _Unresolved:
            spec = None
        if workflow is None and _is_free_function(fn.__qualname__):
            raise WorkflowValidationError(f"To decorate {fn.__name__} please pass a workflow "
                                          "class to the @step decorator.")
        setattr(fn, _MARK, _StepMark(num_workers, retry_policy, spec))
        if workflow is not None:
            workflow.add_step(fn)
        return fn

    return decorate(func) if func is not None else decorate


def _is_free_function(qualname: str) -> bool:
    """A module-level or nested function, not a method (read from ``__qualname__``)."""
    parts = qualname.split(".")
    return len(parts) == 1 or parts[-2] == "<locals>"


class _Unresolved(WorkflowValidationError):
    """An annotation names something that does not exist (yet)."""


def inspect_step(fn: Callable[..., Any], num_workers: int = DEFAULT_NUM_WORKERS,
                 retry_policy: RetryPolicy | None = None) -> StepSpec:
    """Read a step's wiring from its signature; a malformed one is a WorkflowValidationError."""
    from agentkit.workflow.workflow import Workflow  # services are workflows: a cycle
    name = fn.__name__
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except NameError as exc:
        raise _Unresolved(
            f"Step '{name}': cannot resolve its annotations ({exc}); define the event classes "
            "where the step's module can see them") from None
    event_param: str | None = None
    accepts: tuple[type[Event], ...] = ()
    ctx_param: str | None = None
    services: list[ServiceParam] = []
    resources: list[ResourceDefinition] = []
    for index, param in enumerate(inspect.signature(fn).parameters.values()):
        if index == 0 and param.name == "self":
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            stars = "*" if param.kind is param.VAR_POSITIONAL else "**"
            raise WorkflowValidationError(
                f"Step '{name}': {stars}{param.name} is not allowed; a step takes its event "
                "and, optionally, `ctx: Context`")
        if param.name not in hints:
            raise WorkflowValidationError(
                f"Step '{name}': parameter '{param.name}' has no annotation; annotate the event "
                "parameter with the Event type it accepts (`ev: MyEvent`) and the context as "
                "`ctx: Context`")
        annotation = hints[param.name]
        if typing.get_origin(annotation) is typing.Annotated:
            declared = [m for m in annotation.__metadata__ if isinstance(m, _Resource)]
            if len(declared) > 1:
                raise WorkflowValidationError(
                    f"Step '{name}': parameter '{param.name}' declares {len(declared)} "
                    "Resource()s; a resource parameter receives exactly one")
            if declared:
                resources.append(ResourceDefinition(param.name, declared[0]))
                continue
            annotation = annotation.__origin__  # other metadata says nothing to the engine
        if inspect.isclass(annotation) and issubclass(annotation, Context):
            if ctx_param is not None:
                raise WorkflowValidationError(
                    f"Step '{name}' has two Context parameters ('{ctx_param}', '{param.name}')")
            ctx_param = param.name
            continue
        if inspect.isclass(annotation) and issubclass(annotation, Workflow):
            services.append(ServiceParam(param.name, annotation, param.default))
            continue
        event_types = _event_types(annotation)
        if event_types is None:
            raise WorkflowValidationError(
                f"Step '{name}': parameter '{param.name}' is annotated {_show(annotation)}, "
                "which is neither an Event type (or a union of them), Context, a Workflow "
                "(a nested workflow) nor Annotated[T, Resource(factory)] (a resource)")
        if event_param is not None:
            raise WorkflowValidationError(
                f"Step '{name}' has two event parameters ('{event_param}', '{param.name}'); "
                "a step receives exactly one event (annotate it with a union to accept several "
                "types)")
        event_param, accepts = param.name, event_types
    if event_param is None:
        raise WorkflowValidationError(
            f"Step '{name}' has no event parameter: annotate one parameter with the Event "
            "type(s) it accepts, e.g. `ev: StartEvent`")
    if "return" not in hints:
        raise WorkflowValidationError(
            f"Step '{name}' has no return annotation: annotate the events it returns or sends "
            "(`-> MyEvent | None`), or `-> None` when it emits nothing")
    returns = _return_types(name, _strip_annotated(hints["return"]))
    return StepSpec(name=name, fn=fn, event_param=event_param, accepts=accepts,
                    returns=returns, ctx_param=ctx_param, num_workers=num_workers,
                    retry_policy=retry_policy, services=tuple(services),
                    resources=tuple(resources))


def _strip_annotated(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = annotation.__origin__
    return annotation


def _union_members(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def _is_event_type(candidate: Any) -> bool:
    return inspect.isclass(candidate) and issubclass(candidate, Event)


def _event_types(annotation: Any) -> tuple[type[Event], ...] | None:
    members = [m for m in _union_members(annotation) if m is not type(None)]
    if not members or not all(_is_event_type(m) for m in members):
        return None
    return tuple(members)


def _return_types(name: str, annotation: Any) -> tuple[type[Event], ...]:
    returns: list[type[Event]] = []
    for member in _union_members(annotation):
        if member is None or member is type(None):
            continue
        if not _is_event_type(member):
            raise WorkflowValidationError(
                f"Step '{name}' is annotated to return {_show(member)}, which is not an Event "
                "type; a step returns events (or None)")
        returns.append(member)
    return tuple(returns)


def _show(annotation: Any) -> str:
    return annotation.__name__ if inspect.isclass(annotation) else repr(annotation)
