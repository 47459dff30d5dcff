"""Agent types by name: the one registry and the one resolver every part of agentkit uses.

An agent type is a name (``react``, ``my_agent``) bound to a *factory*: a callable that gets
an :class:`AgentContext` (the run's LLM or LLMs, tools, params, images, state) and returns the
agent a scenario talks to. Names come from, in order of precedence:

1. :func:`register_agent_type` (e.g. in a ``conftest.py``) and the project's
   ``pyproject.toml`` table ``[tool.agentkit.agent_types]`` (``my_agent = "pkg.mod:factory"``,
   read by the pytest plugin and the ``agentkit`` command: :mod:`agentkit.scenario.project`);
2. the built-in types (:mod:`agentkit.scenario.agents`);
3. entry points of installed packages in the group ``agentkit.agent_types`` (the entry
   point's name is the agent type): an installed package never overrides a name the project
   defines.

Import refs (pyproject entries, entry points) are imported when the type is first used, not
when its name is listed: a broken one fails only the scenarios that use it, with an error
naming where it was declared. A ref may name a factory or an :class:`AgentType` (a factory
plus its capabilities: ``images``, ``team``). A pyproject entry may also give the type's
trajectory renderer (``{ref = ..., trajectory = ...}``): the import ref of its own (imported
when it first renders) or the name of a bundled wire format or agent type to render like
(``trajectory = "function_calling"``; :func:`trajectory_renderer_for`).

:func:`check_agent_type` (does the name exist?) and :func:`resolve_agent_type` (its factory,
imported) raise :class:`UnknownAgentTypeError` with the one message every caller shows.
"""

from __future__ import annotations

import difflib
import importlib.metadata
import inspect
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from agentkit.core.errors import BadInputError
from agentkit.llms.base import LLM
from agentkit.scenario.trajectory import (
    RenderContext,
    TrajectoryError,
    TrajectoryRenderer,
    register_trajectory_renderer,
    scoped_renderers,
)
from agentkit.scenario.trajectory_renderers import UnknownTrajectoryFormatError, named_renderer
from agentkit.scenario.world import resolve_ref
from agentkit.tools import BaseTool

if TYPE_CHECKING:
    from agentkit.llms.types import ImageBlock
    from agentkit.scenario.model import Scenario

__all__ = ["AgentContext", "AgentFactory", "AgentType", "AgentTypeError", "ChatAgent",
           "UnknownAgentTypeError", "AGENT_TYPES", "ENTRY_POINT_GROUP", "agent_type_names",
           "check_agent_type", "register_agent_type", "resolve_agent_type",
           "trajectory_renderer_for"]

ENTRY_POINT_GROUP = "agentkit.agent_types"


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
    through, e.g. a pytest fixture's value.
    """

    agent_type: str
    llm: LLM
    tools: tuple[BaseTool, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    llms: Mapping[str, LLM] = field(default_factory=dict)
    images: tuple[ImageBlock, ...] = ()
    scenario: Scenario | None = field(default=None, repr=False)
    state: Mapping[str, Any] = field(default_factory=dict)

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
    """A factory plus what the harness must know about its agents: ``images=True`` if their
    ``chat``/``stream_chat`` take ``image_docs=[ImageBlock, ...]`` (every turn, an empty list
    on a turn without images); ``human=True`` if they take a turn's scripted answers to their
    input requests as ``human=[str, ...]`` (on turns with ``human:``; the workflow types);
    ``team=True`` if it runs a ``team:`` of agents, each with its own script or recording (the
    factory gets their LLMs as ``context.llms``). A scenario giving images, human answers or
    a team to a type without the capability is an error naming the field."""

    factory: AgentFactory
    images: bool = False
    team: bool = False
    origin: str = "register_agent_type"
    human: bool = False


@dataclass(frozen=True)
class _Lazy:
    """An agent type declared by an import ref, imported on first use."""

    load: Callable[[], object]
    ref: str
    origin: str
    images: bool = False
    human: bool = False


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


class AgentTypeRegistry(MutableMapping[str, AgentType]):
    """Agent types by name (see the module docstring for where names come from).

    Mapping access resolves: ``registry["x"]`` imports a lazily declared type and raises
    :class:`AgentTypeError` if that fails; ``"x" in registry`` and iteration never import.
    """

    def __init__(self, bootstrap: Callable[[], None] | None = None) -> None:
        self._types: dict[str, AgentType | _Lazy] = {}
        self._installed: dict[str, AgentType | _Lazy] | None = None
        self._bootstrap = bootstrap

    def _entries(self) -> dict[str, AgentType | _Lazy]:
        if self._bootstrap is not None:
            bootstrap, self._bootstrap = self._bootstrap, None
            bootstrap()
        if self._installed is None:
            self._installed = _entry_points()
        return {**self._installed, **self._types}

    # -- the mapping
    def __getitem__(self, name: str) -> AgentType:
        entry = self._entries()[name]
        if isinstance(entry, AgentType):
            return entry
        resolved = self._load(name, entry)
        if name in self._types:
            self._types[name] = resolved
        elif self._installed is not None:
            self._installed[name] = resolved
        return resolved

    def __setitem__(self, name: str, value: AgentType) -> None:
        self._entries()
        if not isinstance(value, AgentType):
            raise TypeError("register a factory with register_agent_type(name, factory)")
        _check_factory(value.factory, name, value.origin)
        self._types[name] = value

    def __delitem__(self, name: str) -> None:
        self._entries()
        del self._types[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries())

    def __len__(self) -> int:
        return len(self._entries())

    def __contains__(self, name: object) -> bool:
        return name in self._entries()

    # -- declaring and resolving
    def declare(self, name: str, ref: str, origin: str, *, images: bool = False,
                human: bool = False, trajectory: str | None = None) -> None:
        """Declare ``name`` as the factory at import ref ``ref`` (imported on first use);
        ``trajectory``, its trajectory renderer's import ref (imported when it renders) or the
        name of one to render like (:func:`trajectory_renderer_for`)."""
        self._entries()
        renderer = (trajectory_renderer_for(trajectory, name, origin)
                    if trajectory is not None else None)
        self._types[name] = _Lazy(lambda: resolve_ref(ref), ref, origin, images, human)
        if renderer is not None:
            register_trajectory_renderer(name, renderer)

    def check(self, name: str) -> None:
        """Raise :class:`UnknownAgentTypeError` unless ``name`` is an agent type."""
        known = self._entries()
        if name in known:
            return
        close = difflib.get_close_matches(name, list(known), n=1)
        hint = f"did you mean `{close[0]}`? " if close else ""
        raise UnknownAgentTypeError(
            f"unknown agent type `{name}`; {hint}(known: {', '.join(sorted(known))}; add yours "
            "under [tool.agentkit.agent_types] in pyproject.toml)")

    def resolve(self, name: str) -> AgentType:
        """The agent type ``name``, imported if it was declared by a ref."""
        self.check(name)
        return self[name]

    def loaded(self) -> dict[str, AgentType]:
        """The agent types imported or registered so far, by name (imports nothing)."""
        return {name: entry for name, entry in self._entries().items()
                if isinstance(entry, AgentType)}

    @contextmanager
    def scoped(self) -> Iterator[AgentTypeRegistry]:
        """Registrations made inside (a project's table, a conftest's) are undone on exit:
        an inner pytest session or one CLI call does not leak types into the next."""
        self._entries()
        saved = dict(self._types)
        self._installed = None  # packages installed since are seen inside
        try:
            with scoped_renderers():
                yield self
        finally:
            self._types = saved
            self._installed = None

    @staticmethod
    def _load(name: str, entry: _Lazy) -> AgentType:
        try:
            target = entry.load()
        except Exception as exc:  # noqa: BLE001 (importing runs the user's module code)
            raise AgentTypeError(f"agent type `{name}` ({entry.origin}): cannot import "
                                 f"`{entry.ref}`: {type(exc).__name__}: {exc}") from None
        if isinstance(target, AgentType):
            return AgentType(target.factory, images=target.images or entry.images,
                             team=target.team, origin=entry.origin,
                             human=target.human or entry.human)
        _check_factory(target, name, entry.origin)
        return AgentType(target, images=entry.images,  # type: ignore[arg-type]
                         origin=entry.origin, human=entry.human)


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


def _entry_points() -> dict[str, AgentType | _Lazy]:
    found: dict[str, AgentType | _Lazy] = {}
    for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(point, "dist", None)
        package = f" of {dist.name}" if dist is not None else ""
        found.setdefault(point.name, _Lazy(point.load, point.value,
                                           f"entry point `{point.name}`{package}"))
    return found


def _builtins() -> None:
    import agentkit.scenario.agents  # noqa: F401  (registers the built-in types)


AGENT_TYPES = AgentTypeRegistry(bootstrap=_builtins)
"""Every agent type by name: built-in, registered, declared in pyproject, installed."""


def register_agent_type(name: str, factory: AgentFactory, *, images: bool = False,
                        team: bool = False, human: bool = False,
                        trajectory: TrajectoryRenderer | str | None = None) -> None:
    """Make ``name`` usable under ``agents:`` in scenario files: ``factory(context)`` builds
    the agent. ``images=True`` if its chats take the turns' images as ``image_docs=``;
    ``human=True`` if they take a turn's ``human:`` answers as ``human=``; ``team=True`` if
    it runs a ``team:`` of agents (see :class:`AgentType`); ``trajectory``
    renders its LLM script from a scenario's ``trajectory:`` -- a renderer
    (:func:`~agentkit.scenario.trajectory.register_trajectory_renderer`), or the name of a
    bundled wire format or agent type whose format it speaks (``trajectory="function_calling"``;
    :func:`trajectory_renderer_for`)."""
    renderer = (trajectory_renderer_for(trajectory, name) if trajectory is not None else None)
    AGENT_TYPES[name] = AgentType(factory, images=images, team=team, human=human)
    if renderer is not None:
        register_trajectory_renderer(name, renderer)


def check_agent_type(name: str) -> None:
    """Raise :class:`UnknownAgentTypeError` unless ``name`` is an agent type (no import)."""
    AGENT_TYPES.check(name)


def resolve_agent_type(name: str) -> AgentType:
    """The agent type ``name``: its factory (imported if declared by a ref) and capabilities."""
    return AGENT_TYPES.resolve(name)


def agent_type_names() -> list[str]:
    """Every agent type's name (sorted), without importing any."""
    return sorted(AGENT_TYPES)
