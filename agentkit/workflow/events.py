"""Workflow events: pydantic models that also read like dicts.

An event's declared fields are typed and validated; any other keyword becomes an *extra*
(``Event(answer=42).answer``). Both kinds are reachable as attributes and through the dict
interface: ``ev["answer"]``, ``ev.get("answer", default)``, ``"answer" in ev``, ``keys()``,
``items()``, ``len(ev)``. Upstream's dict interface covers the extras only; ours covers the
declared fields too, so a value reads the same whether or not its class declares it. An
event is always truthy (an empty dict view must not make ``if ev:`` false).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

__all__ = ["Event", "StartEvent", "StopEvent", "InputRequiredEvent", "HumanResponseEvent"]

_MISSING: Any = object()


class Event(BaseModel):
    """Base of every workflow event: typed fields plus free-form extras."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True, defer_build=True)

    if TYPE_CHECKING:
        # For type checkers: any keyword is an extra (pydantic's signature would reject it).
        # A subclass with declared fields gets the typed constructor of its fields instead,
        # and reads extras with ev["name"]; the events made for extras (StartEvent,
        # InputRequiredEvent, HumanResponseEvent) also read them as attributes.
        def __init__(self, **data: Any) -> None: ...

    def _names(self) -> list[str]:
        return [*type(self).model_fields, *(self.__pydantic_extra__ or {})]

    def __getitem__(self, key: str) -> Any:
        if key in type(self).model_fields:
            return getattr(self, key)
        extra = self.__pydantic_extra__ or {}
        if key in extra:
            return extra[key]
        raise KeyError(key)

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self, key, value)

    def get(self, key: str, default: Any = None) -> Any:
        """The field or extra ``key``, or ``default`` when the event has neither."""
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (key in type(self).model_fields
                                         or key in (self.__pydantic_extra__ or {}))

    def keys(self) -> list[str]:
        """Declared field names, then extras, in the order they were given."""
        return self._names()

    def values(self) -> list[Any]:
        return [self[k] for k in self._names()]

    def items(self) -> list[tuple[str, Any]]:
        return [(k, self[k]) for k in self._names()]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]  # dict-like: iterate keys
        return iter(self._names())

    def __bool__(self) -> bool:
        return True

    def to_dict(self) -> dict[str, Any]:
        """Fields and extras as a plain (shallow) dict."""
        return dict(self.items())


class StartEvent(Event):
    """The event a run begins with; ``Workflow.run(**kwargs)`` puts the keywords on it."""

    if TYPE_CHECKING:  # carries extras: any keyword, any attribute (see Event)
        def __init__(self, **data: Any) -> None: ...

        def __getattr__(self, name: str) -> Any: ...


class StopEvent(Event):
    """Ends a run. ``await handler`` gives ``result`` (or the event itself for a subclass)."""

    result: Any = None

    def __init__(self, result: Any = None, **data: Any) -> None:
        super().__init__(result=result, **data)


class InputRequiredEvent(Event):
    """Asks the caller for input: returned by a step (or passed to ``wait_for_event`` as its
    ``waiter_event``) it goes to the event stream, not to a step."""

    if TYPE_CHECKING:  # carries extras: any keyword, any attribute (see Event)
        def __init__(self, **data: Any) -> None: ...

        def __getattr__(self, name: str) -> Any: ...


class HumanResponseEvent(Event):
    """The caller's answer, sent with ``handler.ctx.send_event``; it comes from outside the
    workflow, so no step has to produce it."""

    if TYPE_CHECKING:  # carries extras: any keyword, any attribute (see Event)
        def __init__(self, **data: Any) -> None: ...

        def __getattr__(self, name: str) -> Any: ...
