"""JSON encoding of what a paused run holds (store values, queued events) for ``Context.to_dict``.

A value is saved as JSON when it is JSON already; a pydantic model (events included) as its
class and its fields, each encoded the same way, so a model inside an ``Any`` field comes back
as that model; an object with ``to_dict()`` and a ``from_dict(data)`` classmethod (such as
``ChatMemoryBuffer``) through those; anything else pydantic can turn into JSON (datetimes,
UUIDs, paths) as that JSON, which a typed field converts back. Classes are named
``module:qualname`` and resolved first among the workflow's own event types (so event classes
defined inside a function restore), then by import.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_jsonable_python

from agentkit.workflow.errors import ContextSerdeError

__all__ = ["type_path", "encode", "decode", "TypeResolver"]

_TAG = "__agentkit__"

TypeResolver = Callable[[str, str], type]


def type_path(cls: type) -> str:
    """``module:qualname``, the name a class is saved under."""
    return f"{cls.__module__}:{cls.__qualname__}"


def encode(value: Any, where: str) -> Any:
    """``value`` as JSON-compatible data; ``where`` names it in errors."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [encode(item, f"{where}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict):
        return _encode_dict(value, where)
    if isinstance(value, BaseModel):
        extra = value.__pydantic_extra__ or {}
        return {_TAG: "model", "type": type_path(type(value)),
                "fields": {name: encode(getattr(value, name), f"{where}.{name}")
                           for name in type(value).model_fields},
                "extra": _encode_dict(extra, where)}
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict) and callable(getattr(type(value), "from_dict", None)):
        return {_TAG: "object", "type": type_path(type(value)),
                "data": encode(to_dict(), f"{where}.to_dict()")}
    try:
        return to_jsonable_python(value)
    except PydanticSerializationError:
        raise ContextSerdeError(
            f"cannot save {where}: a {type(value).__name__} is not JSON, a pydantic model or an "
            "object with to_dict()/from_dict()") from None


def _encode_dict(value: Mapping[Any, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        if not isinstance(key, str) or key == _TAG:
            raise ContextSerdeError(f"cannot save {where}: key {key!r} (keys must be strings "
                                    f"other than {_TAG!r})")
        out[key] = encode(item, f"{where}[{key!r}]")
    return out


def decode(data: Any, where: str, resolve: TypeResolver) -> Any:
    """The value :func:`encode` saved; ``resolve(path, where)`` finds classes."""
    if isinstance(data, list):
        return [decode(item, f"{where}[{i}]", resolve) for i, item in enumerate(data)]
    if not isinstance(data, dict):
        return data
    kind = data.get(_TAG)
    if kind is None:
        return {key: decode(item, f"{where}[{key!r}]", resolve) for key, item in data.items()}
    cls = resolve(_field(data, "type", where, str), where)
    if kind == "model":
        if not issubclass(cls, BaseModel):
            raise ContextSerdeError(f"cannot restore {where}: {type_path(cls)} is not a model")
        fields = _field(data, "fields", where, dict)
        extra = _field(data, "extra", where, dict)
        values = {**decode(fields, where, resolve), **decode(extra, where, resolve)}
        try:
            return cls.model_validate(values)
        except (ValueError, TypeError) as exc:
            raise ContextSerdeError(f"cannot restore {where} as {cls.__name__}: {exc}") from None
    if kind == "object":
        from_dict = getattr(cls, "from_dict", None)
        if not callable(from_dict):
            raise ContextSerdeError(f"cannot restore {where}: {type_path(cls)} has no from_dict")
        try:
            return from_dict(decode(data.get("data"), where, resolve))
        except Exception as exc:  # whatever the class's own loader rejects with
            raise ContextSerdeError(f"cannot restore {where} with {cls.__name__}.from_dict: "
                                    f"{exc}") from exc
    raise ContextSerdeError(f"cannot restore {where}: unknown kind {kind!r}")


def _field(data: dict[str, Any], key: str, where: str, kind: type) -> Any:
    value = data.get(key)
    if not isinstance(value, kind):
        raise ContextSerdeError(f"cannot restore {where}: `{key}` must be a {kind.__name__}, "
                                f"got {type(value).__name__}")
    return value


def import_type(path: str, where: str) -> type:
    """The class saved as ``module:qualname``."""
    module_name, _, qualname = path.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            target = getattr(target, part)
    except Exception:  # noqa: BLE001 (importing runs module code: any failure means "cannot import")
        raise ContextSerdeError(f"cannot restore {where}: class {path} cannot be imported") from None
    if not isinstance(target, type):
        raise ContextSerdeError(f"cannot restore {where}: {path} is not a class")
    return target
