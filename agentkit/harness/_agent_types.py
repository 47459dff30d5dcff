"""Agent types by name: the one registry and the one resolver every part of agentkit uses.

An agent type is a name (``react``, ``my_agent``) bound to an :class:`AgentType`: a *factory*
(a callable that gets an :class:`AgentContext` -- the run's LLM or LLMs, tools, params, images,
state -- and returns the agent a scenario talks to), the capabilities the harness must know
about (``images``, ``human``, ``team``), the type's *trajectory renderer* and its *trace
handlers*. A built-in type and a user's are declared alike: each built-in family is a module
of :mod:`agentkit.harness._families` holding its ``AgentType`` objects. Names come from, in
order of precedence:

1. :func:`register_agent_type` (e.g. in a ``conftest.py``) and the project's
   ``pyproject.toml`` table ``[tool.agentkit.agent_types]`` (``my_agent = "pkg.mod:factory"``,
   read by the pytest plugin and the ``agentkit`` command: :mod:`agentkit.scenario.project`);
2. the built-in families (:data:`agentkit.harness._families.BUILT_IN`, refs like a project's
   table), all imported the first time the registry is used;
3. entry points of installed packages in the group ``agentkit.agent_types`` (the entry
   point's name is the agent type): an installed package never overrides a name the project
   defines.

Import refs (pyproject entries, entry points) are imported when the type is first used, not
when its name is listed: a broken one fails only the scenarios that use it, with an error
naming where it was declared. A ref may name a factory or an :class:`AgentType`. A pyproject
entry may also give the type's trajectory renderer (``{ref = ..., trajectory = ...}``): the
import ref of its own (imported when it first renders) or the name of a bundled wire format or
agent type to render like (``trajectory = "function_calling"``; :func:`trajectory_renderer_for`).

Trace handlers (``AgentType(..., trace_handlers={MyEvent: handler})``) say how bus events of
the type's own go into traces: the trace builder hands those events to the registry, which
passes each to the handler its agent type declares, while the type is registered (a type
declared by a ref: once imported). An event goes into traces one way whichever agent emits
it, so two agent types cannot declare different handlers for one event class, and the core
events (steps, LLM calls, tool calls: :mod:`agentkit.core.events`) are the trace's own.

:func:`check_agent_type` (does the name exist?) and :func:`resolve_agent_type` (its factory,
imported) raise :class:`UnknownAgentTypeError` with the one message every caller shows.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib.metadata
import inspect
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from agentkit.core.errors import BadInputError
from agentkit.core.events import Event as BusEvent
from agentkit.harness._families import BUILT_IN, WIRE_FORMATS
from agentkit.harness._world import resolve_ref
from agentkit.llms.base import LLM
from agentkit.scenario._trajectory import RenderContext, TrajectoryError, TrajectoryRenderer
from agentkit.tools import BaseTool
from agentkit.trace._trace import TraceHandler, TurnBuilder, trace_handler

if TYPE_CHECKING:
    from agentkit.llms.types import ImageBlock
    from agentkit.scenario._model import Scenario

__all__ = ["AgentContext", "AgentFactory", "AgentType", "AgentTypeError", "ChatAgent",
           "UnknownAgentTypeError", "UnknownTrajectoryFormatError", "AGENT_TYPES",
           "ENTRY_POINT_GROUP", "agent_type_names", "build_agent", "check_agent_type",
           "named_renderer", "register_agent_type", "renderable_agent_types",
           "resolve_agent_type", "trajectory_renderer", "trajectory_renderer_for"]

ENTRY_POINT_GROUP = "agentkit.agent_types"
_CORE_EVENTS = BusEvent.__module__


class ChatAgent(Protocol):
    """What a factory returns: an agent the harness can chat with (every
    :class:`agentkit.agent.BaseAgent` is one). ``memory`` is used only by scenarios with
    ``history:`` (``memory.set(messages)``)."""

    def chat(self, message: str, *args: Any, **kwargs: Any) -> Any: ...

    def stream_chat(self, message: str, *args: Any, **kwargs: Any) -> Any: ...

    @property
    def chat_history(self) -> Any: ...


@dataclass(frozen=True, kw_only=True)
class AgentContext:
    """Everything a factory gets to build the agent of one scenario run (frozen: a factory
    reads it, it never changes what the next run gets).

    ``llm`` is the agent's model (a script, a cassette, or a live backend while recording);
    a multi-agent team gets one model per team agent in ``llms`` (by agent name; ``llm`` is
    then the root agent's). ``params`` are the scenario's ``agents.<type>.params``
    (copy them to change them: ``dict(context.params)``). ``images`` are the image blocks the
    scenario's turns send, in order (each turn's chat gets its own as ``image_docs=`` when the
    type takes images). ``state`` is what the caller of ``run_scenario(..., state=...)`` hands
    through, e.g. a pytest fixture's value. ``world`` is the scenario's world of this run
    (``world:``; None without one), the object its tools act on.
    """

    agent_type: str
    llm: LLM
    tools: tuple[BaseTool, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    llms: Mapping[str, LLM] = field(default_factory=dict)
    images: tuple[ImageBlock, ...] = ()
    scenario: Scenario | None = field(default=None, repr=False)
    state: Mapping[str, Any] = field(default_factory=dict)
    world: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # read-only views of private copies: a factory that mutates cannot reach the caller's
        object.__setattr__(self, "tools", tuple(self.tools))
        for name in ("params", "llms", "state"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))


AgentFactory = Callable[[AgentContext], ChatAgent]


class AgentTypeError(BadInputError):
    """An agent type cannot be used: its import ref fails, or it is not a factory."""


class UnknownAgentTypeError(AgentTypeError):
    """No agent type has this name; the message suggests the nearest and how to add one."""


@dataclass(frozen=True)
class AgentType:
    """An agent type's declaration: its factory plus what the harness must know about its
    agents. ``images=True`` if their ``chat``/``stream_chat`` take ``image_docs=[ImageBlock,
    ...]`` (every turn, an empty list on a turn without images); ``human=True`` if they take a
    turn's scripted answers to their input requests as ``human=[str, ...]`` (on turns with
    ``human:``; the workflow types); ``team=True`` if it runs a ``team:`` of agents, each with
    its own script or recording (the factory gets their LLMs as ``context.llms``). A scenario
    giving images, human answers or a team to a type without the capability is an error
    naming the field.

    ``trajectory`` renders its LLM script from a scenario's ``trajectory:``: a renderer, the
    import ref of one, or the name of a bundled wire format or agent type to render like
    (:func:`trajectory_renderer_for`). ``trace_handlers`` maps event classes of its own to
    how they go into traces: ``handler(turn: TurnBuilder, event)`` files what the trace needs
    into a step's or the turn's ``details`` (see the module docstring). ``workflow=True`` if
    its agents are workflows behind the harness's chat adapter
    (:class:`~agentkit.harness._families.workflow.WorkflowChatAgent`), whose runs can be
    checkpointed: only such types can be resumed, or resumed from (``resume_from:``)."""

    factory: AgentFactory
    images: bool = False
    team: bool = False
    origin: str = "register_agent_type"
    human: bool = False
    workflow: bool = field(default=False, kw_only=True)
    trajectory: TrajectoryRenderer | str | None = field(default=None, kw_only=True)
    trace_handlers: Mapping[type[BusEvent], TraceHandler] = field(
        default_factory=dict, kw_only=True, hash=False)

    def __post_init__(self) -> None:
        # a read-only copy: the registry's dispatch must not change behind its back
        object.__setattr__(self, "trace_handlers", MappingProxyType(dict(self.trace_handlers)))


@dataclass(frozen=True)
class _Lazy:
    """An agent type declared by an import ref, imported on first use."""

    load: Callable[[], object]
    ref: str
    origin: str
    images: bool = False
    human: bool = False
    trajectory: str | None = None


def _check_factory(factory: object, name: str, origin: str) -> None:
    """A factory takes one argument, the context; the old ``(llm, tools, params)`` shape and
    non-callables get an error saying how to write one."""
    if not callable(factory):
        raise AgentTypeError(f"agent type `{name}` ({origin}): {factory!r} is not callable; "
                             "give a factory `def factory(context: AgentContext) -> agent`")
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin or C callable: trust it
        return
    try:
        signature.bind(object())
    except TypeError:
        raise AgentTypeError(
            f"agent type `{name}` ({origin}): factory {getattr(factory, '__name__', factory)}"
            f"{signature} must take one argument, the AgentContext: "
            "`def factory(context): return MyAgent(llm=context.llm, tools=context.tools, "
            "**context.params)`") from None


def _check_declaration(name: str, kind: AgentType) -> None:
    """The factory, the trajectory (a name must exist) and the trace handlers of ``kind`` can
    be used; else an :class:`AgentTypeError` naming the type and the field."""
    _check_factory(kind.factory, name, kind.origin)
    if kind.trajectory is not None:
        trajectory_renderer_for(kind.trajectory, name, kind.origin)
    where = f"agent type `{name}` ({kind.origin}): trace_handlers"
    for event_type, handler in kind.trace_handlers.items():
        if not (isinstance(event_type, type) and issubclass(event_type, BusEvent)):
            raise AgentTypeError(f"{where}: {event_type!r} is not an event class (a subclass "
                                 "of agentkit.core.events.Event)")
        if event_type.__module__ == _CORE_EVENTS:
            raise AgentTypeError(f"{where}: {event_type.__name__} is a core event: the "
                                 "trace's steps, LLM calls and tool calls come from it; "
                                 "handle event classes of your own")
        if not callable(handler):
            raise AgentTypeError(f"{where}: the handler of {event_type.__name__} is "
                                 f"{handler!r}, not a function `handler(turn, event)`")


class AgentTypeRegistry(MutableMapping[str, AgentType]):
    """Agent types by name (see the module docstring for where names come from).

    Mapping access resolves: ``registry["x"]`` imports a lazily declared type and raises
    :class:`AgentTypeError` if that fails; ``"x" in registry`` and iteration never import
    (but the first use of the registry imports the built-in families).
    """

    def __init__(self, built_in: Mapping[str, str] | None = None) -> None:
        self._types: dict[str, AgentType | _Lazy] = {}
        self._installed: dict[str, AgentType | _Lazy] | None = None
        self._unloaded_built_in = dict(built_in or {})
        self._built_in: dict[str, AgentType] = {}
        self._handlers: dict[type, TraceHandler] | None = None
        self._by_class: dict[type, TraceHandler | None] = {}
        """:attr:`_handlers`' handler of each event class met (its nearest base's)."""
        self._dispatched: set[type] = set()

    def _entries(self) -> dict[str, AgentType | _Lazy]:
        if self._unloaded_built_in:
            self._load_built_in()
        if self._installed is None:
            self._installed = _entry_points()
        return {**self._types,
                **{name: e for name, e in self._installed.items() if name not in self._types}}

    def _load_built_in(self) -> None:
        """Import every built-in family's declaration, as a project's refs are imported."""
        unloaded, self._unloaded_built_in = self._unloaded_built_in, {}
        for name, ref in unloaded.items():
            kind = self._load(name, _Lazy(partial(resolve_ref, ref), ref, "built-in"))
            self._check_handlers(name, kind)
            self._built_in[name] = self._types[name] = kind
            self._dispatch(kind)

    # -- the mapping
    def __getitem__(self, name: str) -> AgentType:
        entry = self._entries()[name]
        if isinstance(entry, AgentType):
            return entry
        resolved = self._load(name, entry)
        self._check_handlers(name, resolved)
        if name in self._types:
            self._types[name] = resolved
        elif self._installed is not None:
            self._installed[name] = resolved
        self._dispatch(resolved)
        return resolved

    def __setitem__(self, name: str, value: AgentType) -> None:
        self._entries()
        if not isinstance(value, AgentType):
            raise TypeError("register a factory with register_agent_type(name, factory)")
        _check_declaration(name, value)
        self._check_handlers(name, value)
        self._types[name] = value
        self._dispatch(value)

    def __delitem__(self, name: str) -> None:
        self._entries()
        del self._types[name]
        self._handlers = None

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries())

    def __len__(self) -> int:
        return len(self._entries())

    def __contains__(self, name: object) -> bool:
        return name in self._entries()

    # -- declaring and resolving
    def declare(self, name: str, ref: str, origin: str, *, images: bool = False,
                human: bool = False, trajectory: str | None = None) -> None:
        """Declare ``name`` as the factory or :class:`AgentType` at import ref ``ref``
        (imported on first use); ``trajectory``, its trajectory renderer's import ref
        (imported when it renders) or the name of one to render like
        (:func:`trajectory_renderer_for`), in place of the one its AgentType declares."""
        self._entries()
        if trajectory is not None:
            trajectory_renderer_for(trajectory, name, origin)  # a name must exist
        self._types[name] = _Lazy(partial(resolve_ref, ref), ref, origin, images, human,
                                  trajectory)
        self._handlers = None

    def check(self, name: str) -> None:
        """Raise :class:`UnknownAgentTypeError` unless ``name`` is an agent type."""
        known = self._entries()
        if name in known:
            return
        close = difflib.get_close_matches(name, list(known), n=1)
        hint = f"; did you mean `{close[0]}`? " if close else " "
        raise UnknownAgentTypeError(
            f"unknown agent type `{name}`{hint}(known: {', '.join(sorted(known))}; add yours "
            "under [tool.agentkit.agent_types] in pyproject.toml)")

    def resolve(self, name: str) -> AgentType:
        """The agent type ``name``, imported if it was declared by a ref."""
        self.check(name)
        return self[name]

    def declared(self) -> Mapping[str, object]:
        """Every name with its entry as it stands (an AgentType, or the ref it is declared by),
        imports nothing: equal between two calls while no agent type was added, removed,
        replaced or imported (what a planned scenario's checks depend on, :mod:`._plan`)."""
        return self._entries()  # a dict of its own on every call

    def loaded(self) -> dict[str, AgentType]:
        """The agent types imported or registered so far, by name (imports nothing)."""
        return {name: entry for name, entry in self._entries().items()
                if isinstance(entry, AgentType)}

    @contextmanager
    def scoped(self) -> Iterator[AgentTypeRegistry]:
        """Registrations made inside (a project's table, a conftest's) are undone on exit,
        their renderers and trace handlers with them: an inner pytest session or one CLI
        call does not leak types into the next."""
        self._entries()
        saved = dict(self._types)
        self._installed = None  # packages installed since are seen inside
        self._handlers = None
        try:
            yield self
        finally:
            self._types = saved
            self._installed = None
            self._handlers = None

    # -- trajectory renderers
    def renderer(self, name: str) -> TrajectoryRenderer | None:
        """The trajectory renderer of agent type ``name``, if it has one. A type declared by a
        ref without a ``trajectory`` is not imported to find out: its renderer imports it when
        it renders, and says so if its AgentType declares none."""
        entry = self._entries().get(name)
        if isinstance(entry, _Lazy) and entry.trajectory is None:
            return _RendererOnImport(self, name)
        if entry is None or entry.trajectory is None:
            return None
        return trajectory_renderer_for(entry.trajectory, name, entry.origin)

    def renderable(self) -> list[str]:
        """Every agent type whose renderer is known without importing any, built-in first:
        what a trajectory scenario without ``agents:`` runs under."""
        return [name for name, entry in self._entries().items() if entry.trajectory is not None]

    def named_renderer(self, name: str) -> TrajectoryRenderer:
        """The renderer a name stands for: a wire format's
        (:data:`~agentkit.harness._families.WIRE_FORMATS`) or a built-in agent type's, as its
        family declares it (a project overriding the name does not change what it means
        here). Anything else is an :class:`UnknownTrajectoryFormatError` suggesting the
        nearest name."""
        self._entries()
        kind = self._built_in.get(WIRE_FORMATS.get(name, name))
        if kind is not None and kind.trajectory is not None:
            return trajectory_renderer_for(kind.trajectory, name, kind.origin)
        known = sorted({*WIRE_FORMATS, *(n for n, k in self._built_in.items()
                                         if k.trajectory is not None)})
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean `{close[0]}`? " if close else " "
        raise UnknownTrajectoryFormatError(
            f"unknown trajectory format `{name}`{hint}(give a wire format or a bundled agent "
            f"type to render like: {', '.join(known)}; or an import ref "
            "\"package.module:render\" of your own renderer)")

    # -- trace handlers
    def _loaded_items(self) -> Iterator[tuple[str, AgentType]]:
        """The loaded agent types in effect (imports nothing, never bootstraps)."""
        installed = self._installed or {}
        for name, entry in [*self._types.items(),
                            *((n, e) for n, e in installed.items() if n not in self._types)]:
            if isinstance(entry, AgentType):
                yield name, entry

    def _check_handlers(self, name: str, kind: AgentType) -> None:
        """No other agent type files one of ``kind``'s events with another handler."""
        for event_type, handler in kind.trace_handlers.items():
            for other, entry in self._loaded_items():
                if other != name and entry.trace_handlers.get(event_type, handler) is not handler:
                    raise AgentTypeError(
                        f"agent type `{name}` ({kind.origin}): trace_handlers: agent type "
                        f"`{other}` already files {event_type.__name__} into traces with "
                        "another handler (an event goes into traces one way, whichever agent "
                        "emits it); declare the same handler, or an event class of your own")

    def _dispatch(self, kind: AgentType) -> None:
        """Have the trace builder hand ``kind``'s event classes to :meth:`_file_event`."""
        for event_type in kind.trace_handlers:
            if event_type not in self._dispatched:
                trace_handler(event_type)(self._file_event)
                self._dispatched.add(event_type)
        self._handlers = None

    def _file_event(self, turn: TurnBuilder, event: Any) -> None:
        """Pass ``event`` to the handler an agent type in effect declares for it (for its
        class or the nearest base class); with none, the event is ignored."""
        if self._handlers is None:
            self._handlers = {event_type: handler for _, entry in self._loaded_items()
                              for event_type, handler in entry.trace_handlers.items()}
            self._by_class = {}
        kind = type(event)
        if kind in self._by_class:  # the MRO walked once per class (every workflow event)
            handler = self._by_class[kind]
        else:
            handler = self._by_class[kind] = next(
                (self._handlers[t] for t in kind.__mro__ if t in self._handlers), None)
        if handler is not None:
            handler(turn, event)

    @staticmethod
    def _load(name: str, entry: _Lazy) -> AgentType:
        try:
            target = entry.load()
        except Exception as exc:  # noqa: BLE001 (importing runs the user's module code)
            raise AgentTypeError(f"agent type `{name}` ({entry.origin}): cannot import "
                                 f"`{entry.ref}`: {type(exc).__name__}: {exc}") from None
        if isinstance(target, AgentType):
            kind = dataclasses.replace(
                target, images=target.images or entry.images, origin=entry.origin,
                human=target.human or entry.human,
                trajectory=entry.trajectory if entry.trajectory is not None
                else target.trajectory)
        else:
            _check_factory(target, name, entry.origin)
            kind = AgentType(target, images=entry.images,  # type: ignore[arg-type]
                             origin=entry.origin, human=entry.human,
                             trajectory=entry.trajectory)
        _check_declaration(name, kind)
        return kind


@dataclass(frozen=True)
class _LazyRenderer:
    """A trajectory renderer declared by an import ref, imported when it first renders."""

    name: str
    ref: str
    origin: str

    def __call__(self, context: RenderContext) -> list[Any]:
        try:
            render = resolve_ref(self.ref)
        except Exception as exc:  # noqa: BLE001 (importing runs the user's module code)
            raise TrajectoryError([(("agents", self.name), (
                f"cannot import the trajectory renderer `{self.ref}` ({self.origin}): "
                f"{type(exc).__name__}: {exc}"))]) from None
        return list(render(context))


@dataclass(frozen=True, eq=False)  # comparing the registry would import every type
class _RendererOnImport:
    """The renderer of a type declared by a ref alone: its AgentType's, known once imported."""

    registry: AgentTypeRegistry
    name: str

    def __call__(self, context: RenderContext) -> list[Any]:
        try:
            self.registry[self.name]
        except AgentTypeError as exc:
            raise TrajectoryError([(("agents", self.name), str(exc))]) from None
        renderer = self.registry.renderer(self.name)
        if renderer is None:
            raise TrajectoryError([(("agents", self.name), (
                f"agent type `{self.name}` has no trajectory renderer: give it a `script`, or "
                "declare one (`trajectory = ...` beside its ref, or AgentType(..., "
                "trajectory=...))"))])
        return renderer(context)


class UnknownTrajectoryFormatError(ValueError):
    """A renderer was named by a name that is neither a wire format nor a bundled agent type."""


def trajectory_renderer_for(trajectory: TrajectoryRenderer | str, name: str,
                            origin: str = "register_agent_type") -> TrajectoryRenderer:
    """The renderer agent type ``name`` declares: a renderer as is; an import ref
    (``"pkg.mod:render"``) imported when it first renders; any other string the name of a
    bundled wire format or agent type to render like (``"function_calling"``). An unknown
    name is an :class:`AgentTypeError` suggesting the nearest one."""
    if not isinstance(trajectory, str):
        return trajectory
    if ":" in trajectory:
        return _LazyRenderer(name, trajectory, origin)
    try:
        return named_renderer(trajectory)
    except UnknownTrajectoryFormatError as exc:
        raise AgentTypeError(f"agent type `{name}` ({origin}): trajectory: {exc}") from None


def named_renderer(name: str) -> TrajectoryRenderer:
    """The renderer of a bundled wire format or built-in agent type by name
    (:meth:`AgentTypeRegistry.named_renderer`)."""
    return AGENT_TYPES.named_renderer(name)


def _entry_points() -> dict[str, AgentType | _Lazy]:
    found: dict[str, AgentType | _Lazy] = {}
    for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(point, "dist", None)
        package = f" of {dist.name}" if dist is not None else ""
        found.setdefault(point.name, _Lazy(point.load, point.value,
                                           f"entry point `{point.name}`{package}"))
    return found


AGENT_TYPES = AgentTypeRegistry(BUILT_IN)
"""Every agent type by name: built-in, registered, declared in pyproject, installed."""


def register_agent_type(name: str, factory: AgentFactory | AgentType, *, images: bool = False,
                        team: bool = False, human: bool = False, workflow: bool = False,
                        trajectory: TrajectoryRenderer | str | None = None,
                        trace_handlers: Mapping[type[BusEvent], TraceHandler] | None = None,
                        ) -> None:
    """Make ``name`` usable under ``agents:`` in scenario files: ``factory(context)`` builds
    the agent. ``images=True`` if its chats take the turns' images as ``image_docs=``;
    ``human=True`` if they take a turn's ``human:`` answers as ``human=``; ``team=True`` if
    it runs a ``team:`` of agents; ``workflow=True`` if its agents are workflows behind the
    harness's chat adapter, which can resume a recorded run (see :class:`AgentType`);
    ``trajectory`` renders its LLM script from a scenario's ``trajectory:`` -- a renderer, or
    the name of a bundled wire format or agent type whose format it speaks
    (``trajectory="function_calling"``; :func:`trajectory_renderer_for`); ``trace_handlers``
    file its own bus events into traces (``{MyEvent: handler}``). ``factory`` may also be a
    whole :class:`AgentType` declaration (the keywords add to it)."""
    if isinstance(factory, AgentType):
        kind = dataclasses.replace(
            factory, images=factory.images or images, team=factory.team or team,
            human=factory.human or human, workflow=factory.workflow or workflow,
            trajectory=trajectory if trajectory is not None else factory.trajectory,
            trace_handlers={**factory.trace_handlers, **(trace_handlers or {})})
    else:
        kind = AgentType(factory, images=images, team=team, human=human, workflow=workflow,
                         trajectory=trajectory, trace_handlers=trace_handlers or {})
    AGENT_TYPES[name] = kind


def check_agent_type(name: str) -> None:
    """Raise :class:`UnknownAgentTypeError` unless ``name`` is an agent type (no import)."""
    AGENT_TYPES.check(name)


def resolve_agent_type(name: str) -> AgentType:
    """The agent type ``name``: its factory (imported if declared by a ref) and capabilities."""
    return AGENT_TYPES.resolve(name)


def build_agent(context: AgentContext) -> ChatAgent:
    """The agent of ``context.agent_type`` (:func:`resolve_agent_type`), built by its factory."""
    return resolve_agent_type(context.agent_type).factory(context)


def agent_type_names() -> list[str]:
    """Every agent type's name (sorted), without importing any."""
    return sorted(AGENT_TYPES)


def trajectory_renderer(agent_type: str) -> TrajectoryRenderer | None:
    """The renderer of ``agent_type``, if it has one (its :class:`AgentType`'s)."""
    return AGENT_TYPES.renderer(agent_type)


def renderable_agent_types() -> list[str]:
    """Every agent type with a renderer, built-in first: what a trajectory scenario without
    ``agents:`` runs under."""
    return AGENT_TYPES.renderable()
