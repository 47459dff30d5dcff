"""``isinstance`` against a runtime-checkable :class:`typing.Protocol`, its members listed
once: Python 3.11 lists a protocol's members again on every check (a scenario run makes a
few such checks per tool and model); 3.12 keeps them on the class."""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable
from typing import Any, TypeGuard, TypeVar

T = TypeVar("T")

__all__ = ["conforms"]


def conforms(obj: Any, protocol: Callable[..., T]) -> TypeGuard[T]:
    """What ``isinstance(obj, protocol)`` says for a runtime-checkable protocol: ``obj`` has
    every member, and a member that is callable on the protocol is not None on ``obj`` -- or
    its class derives from the protocol."""
    for name, method in _members(protocol):  # a loop, not all(): no generator per check
        if not hasattr(obj, name) or (method and getattr(obj, name) is None):
            return protocol in type(obj).__mro__
    return True


@functools.cache
def _members(protocol: Callable[..., Any]) -> tuple[tuple[str, bool], ...]:
    """The protocol's members as ``isinstance`` lists them, each with whether it is callable."""
    names = getattr(protocol, "__protocol_attrs__", None)
    if names is None:  # Python 3.11
        names = typing._get_protocol_attrs(protocol)  # type: ignore[attr-defined]
    return tuple((name, callable(getattr(protocol, name, None))) for name in sorted(names))
