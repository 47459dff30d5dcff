"""Step resources: ``n: Annotated[T, Resource(factory, cache=True)]`` step parameters.

As in ``llama_index.core.workflow.resource`` (0.12.42): a step parameter annotated with
``Annotated[T, Resource(factory)]`` receives what ``factory()`` returns (awaited when the
factory is a coroutine function), called when the step runs. With ``cache=True`` (the
default) the value is made once and shared by every step of the workflow instance that asks
for the same factory (a ``ResourceManager`` per workflow, or the one passed as
``Workflow(resource_manager=...)``); ``cache=False`` calls the factory for every invocation.

Fixes over upstream: the cache is keyed by the factory itself, not its ``__qualname__`` (two
lambdas, or two factories of the same name in different modules, no longer share a value);
a cached value that is falsy (``0``, ``[]``) is kept instead of being made again on every
call; concurrent steps asking for a cached async resource share one factory call.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

__all__ = ["Resource", "ResourceDefinition", "ResourceManager"]

T = TypeVar("T")


class _Resource(Generic[T]):
    """A resource declaration: its factory and whether the value is cached."""

    def __init__(self, factory: Callable[[], T | Awaitable[T]], cache: bool) -> None:
        if not callable(factory):
            raise TypeError(f"Resource(factory) takes a callable, got {factory!r}")
        self._factory = factory
        self.name: str = getattr(factory, "__qualname__", repr(factory))
        self.cache = cache

    @property
    def factory(self) -> Callable[[], T | Awaitable[T]]:
        return self._factory

    async def call(self) -> T:
        """A fresh value from the factory."""
        value = self._factory()
        if inspect.isawaitable(value):
            return cast(T, await value)
        return value

    def __repr__(self) -> str:
        return f"Resource({self.name}, cache={self.cache})"


def Resource(factory: Callable[[], T | Awaitable[T]], cache: bool = True) -> _Resource[T]:
    """Declare a step resource: ``Annotated[T, Resource(factory, cache=True)]``."""
    return _Resource(factory, cache)


@dataclass(frozen=True)
class ResourceDefinition:
    """A step parameter that receives a resource."""

    name: str
    resource: _Resource[Any]


class ResourceManager:
    """The cached resource values of a workflow instance (see the module docstring)."""

    def __init__(self) -> None:
        self._values: dict[Callable[..., Any], tuple[str, Any]] = {}
        self._pending: dict[Callable[..., Any], asyncio.Future[Any]] = {}

    async def get(self, resource: _Resource[Any]) -> Any:
        """The value of ``resource``: cached, or made now."""
        if not resource.cache:
            return await resource.call()
        key = resource.factory
        if key in self._values:
            return self._values[key][1]
        pending = self._pending.get(key)
        if pending is not None:  # another step is making it: share that call
            return await pending
        pending = self._pending[key] = asyncio.ensure_future(resource.call())
        try:
            value = await pending
        finally:
            del self._pending[key]
        self._values[key] = (resource.name, value)
        return value

    def get_all(self) -> dict[str, Any]:
        """The cached values by their factory's ``__qualname__``."""
        return dict(self._values.values())
