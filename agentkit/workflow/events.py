"""Workflow events: pydantic models that also read like dicts.

An event's declared fields are typed and validated; any other keyword becomes an *extra*
(``Event(answer=42).answer``); a keyword naming a declared private attribute
(``_secret: int = PrivateAttr()``) sets it, as upstream. The dict interface is upstream's:
``keys()``, ``values()`` and ``items()`` are views of the extras, and ``len(ev)`` and
``iter(ev)`` cover the extras. Lookups are more lenient than upstream's: ``ev["k"]``,
``ev.get("k", default)`` and ``"k" in ev`` also find declared fields (upstream answers
KeyError / the default / False for them), so a value reads the same whether or not its
class declares it. An event is always truthy (an empty view must not make ``if ev:`` false).
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, ValuesView
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

__all__ = ["Event", "StartEvent", "StopEvent", "InputRequiredEvent", "HumanResponseEvent"]

_MISSING: Any = object()
_Dict = dict  # Event has a method named ``dict`` (upstream's), which shadows it in the class


class Event(BaseModel):
    """Base of every workflow event: typed fields plus free-form extras."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True, defer_build=True)

    if TYPE_CHECKING:
        # For type checkers: any keyword is an extra (pydantic's signature would reject it).
        # A subclass with declared fields gets the typed constructor of its fields instead,
        # and reads extras with ev["name"]; the events made for extras (StartEvent,
        # InputRequiredEvent, HumanResponseEvent) also read them as attributes.
        def __init__(self, **data: Any) -> None: ...
    else:
        def __init__(self, **data: Any) -> None:
            declared = type(self).__private_attributes__
            if not declared or declared.keys().isdisjoint(data):
                super().__init__(**data)
                return
            private = {key: data.pop(key) for key in declared.keys() & data.keys()}
            super().__init__(**data)
            for key, value in private.items():
                setattr(self, key, value)

    def _extras(self) -> _Dict[str, Any]:
        if self.__pydantic_extra__ is None:
            self.__pydantic_extra__ = {}
        return self.__pydantic_extra__

    def __getitem__(self, key: str) -> Any:
        if key in type(self).__pydantic_fields__:
            return getattr(self, key)
        extra = self.__pydantic_extra__ or {}
        if key in extra:
            return extra[key]
        raise KeyError(key)

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self, key, value)

    def get(self, key: str, default: Any = None) -> Any:
        """The field or extra ``key``, or ``default`` when the event has neither."""
        if type(self).__getitem__ is not Event.__getitem__:  # a subclass's own lookup
            try:
                return self[key]
            except KeyError:
                return default
        if key in type(self).__pydantic_fields__:  # __getitem__'s, without a KeyError to catch
            return getattr(self, key)
        extra = self.__pydantic_extra__
        return extra.get(key, default) if extra else default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (key in type(self).__pydantic_fields__
                                         or key in (self.__pydantic_extra__ or {}))

    def keys(self) -> KeysView[str]:
        """A view of the extras' names (declared fields are not in it, as upstream)."""
        return self._extras().keys()

    def values(self) -> ValuesView[Any]:
        """A view of the extras' values."""
        return self._extras().values()

    def items(self) -> ItemsView[str, Any]:
        """A view of the extras' ``(name, value)`` pairs."""
        return self._extras().items()

    def __len__(self) -> int:
        return len(self._extras())

    def __iter__(self) -> Iterator[str]:  # type: ignore[override]  # dict-like: iterate keys
        return iter(self._extras())

    def __bool__(self) -> bool:
        return True

    def dict(self, *args: Any, **kwargs: Any) -> _Dict[str, Any]:
        """The extras themselves, as upstream (its ``dict()`` is the event's dict of extras;
        declared fields are read as attributes or with ``model_dump()``)."""
        return self._extras()

    def to_dict(self) -> _Dict[str, Any]:
        """Declared fields, then extras, as a plain (shallow) dict."""
        return {**{name: getattr(self, name) for name in type(self).__pydantic_fields__},
                **self._extras()}


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
