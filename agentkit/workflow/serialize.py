"""JSON encoding of what a run holds (store values, queued events) for ``Context.to_dict``.

A value is saved as JSON when it is JSON already; a pydantic model (events included) as its
class and its fields, each encoded the same way, so a model inside an ``Any`` field comes back
as that model; an object with ``to_dict()`` and a ``from_dict(data)`` classmethod (such as
``ChatMemoryBuffer``) through those; anything else pydantic can turn into JSON (datetimes,
UUIDs, paths) as that JSON, which a typed field converts back.

Classes are named ``module:qualname``. Restoring never imports anything: a saved class name
is looked up in the table of classes the workflow restores (its events, the models their
fields name, and the types it declares or a user registers, see
``Workflow.restorable_types``); any other name is an error naming where it is in the saved
data. Error locations are paths into the saved data, such as ``['store']['memory']['type']``.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_jsonable_python

from agentkit.workflow.errors import ContextSerdeError

__all__ = ["type_path", "encode", "decode", "at", "model_closure", "models_in"]

_TAG = "__agentkit__"
_MODEL_KEYS = frozenset({_TAG, "type", "fields", "extra"})
_OBJECT_KEYS = frozenset({_TAG, "type", "data"})


def type_path(cls: type) -> str:
    """``module:qualname``, the name a class is saved under."""
    return f"{cls.__module__}:{cls.__qualname__}"


def at(path: str, key: str | int) -> str:
    """``path`` one level down: ``['key']`` for a dict key, ``[i]`` for a list index."""
    return f"{path}[{key!r}]" if isinstance(key, str) else f"{path}[{key}]"


_closures: dict[tuple[type, ...], tuple[dict[str, type], list[tuple[type[BaseModel], Any]]]] = {}


def model_closure(roots: Iterable[type]) -> dict[str, type]:
    """``roots`` and every pydantic model their fields name (recursively), by ``type_path``.
    Worked out once per ``roots`` (each restore of a saved context asks again), again only
    when a model of it was rebuilt since (``model_rebuild``)."""
    key = tuple(roots)
    known = _closures.get(key)
    if known is not None and all(cls.__pydantic_fields__ is fields for cls, fields in known[1]):
        return dict(known[0])
    found: dict[str, type] = {}
    pending = list(key)
    while pending:
        cls = pending.pop()
        path = type_path(cls)
        if path in found:
            continue
        found[path] = cls
        if issubclass(cls, BaseModel):
            pending.extend(_field_models(cls))
    if len(_closures) >= 256:  # (a bound: tests build workflow classes by the hundred)
        _closures.clear()
    _closures[key] = (found, [(model, model.__pydantic_fields__) for model in found.values()
                              if issubclass(model, BaseModel)])
    return dict(found)


_field_models_of: dict[type, tuple[dict[str, Any], list[type]]] = {}


def _field_models(cls: type[BaseModel]) -> list[type]:
    """The models the fields of ``cls`` name, in field order: worked out once per class (a
    saved context's restore walks the same models every time), again only if the class's
    fields were rebuilt since (``model_rebuild``)."""
    fields = cls.__pydantic_fields__
    known = _field_models_of.get(cls)
    if known is not None and known[0] is fields:
        return known[1]
    models = [model for info in fields.values() for model in models_in(info.annotation)]
    _field_models_of[cls] = (fields, models)
    return models


def models_in(annotation: Any) -> list[type]:
    """The pydantic models a type annotation names (``list[ChatMessage] | None``...)."""
    try:
        return list(_models_in(annotation))
    except TypeError:  # an unhashable annotation: walked each time
        return list(_walk_models(annotation))


@functools.lru_cache(maxsize=1024)
def _models_in(annotation: Any) -> tuple[type, ...]:
    """:func:`models_in` once per annotation (a store schema's are walked on every restore)."""
    return _walk_models(annotation)


def _walk_models(annotation: Any) -> tuple[type, ...]:
    if inspect.isclass(annotation) and not isinstance(annotation, types.GenericAlias):
        return (annotation,) if issubclass(annotation, BaseModel) else ()
    return tuple(model for arg in typing.get_args(annotation) for model in models_in(arg))


# ---------------------------------------------------------------------- saving
def encode(value: Any, where: str) -> Any:
    """``value`` as JSON-compatible data; ``where`` names it in errors."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [encode(item, at(where, i)) for i, item in enumerate(value)]
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
        out[key] = encode(item, at(where, key))
    return out


# ---------------------------------------------------------------------- restoring
def _fail(path: str, problem: str) -> ContextSerdeError:
    return ContextSerdeError(f"Context.from_dict: at {path or 'the top'}: {problem}")


def decode(data: Any, path: str, restorable: Mapping[str, type]) -> Any:
    """The value :func:`encode` saved at ``path``; classes come from ``restorable`` only."""
    if isinstance(data, list):
        return [decode(item, at(path, i), restorable) for i, item in enumerate(data)]
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    if not isinstance(data, dict):
        raise _fail(path, f"a {type(data).__name__} is not saved data")
    kind = data.get(_TAG)
    if kind is None:
        return {key: decode(item, at(path, key), restorable) for key, item in data.items()}
    if kind == "model":
        return _decode_model(data, path, restorable)
    if kind == "object":
        return _decode_object(data, path, restorable)
    raise _fail(at(path, _TAG), f"unknown kind {kind!r} (expected 'model' or 'object')")


def _restorable_class(data: dict[str, Any], path: str, restorable: Mapping[str, type]) -> type:
    name = data.get("type")
    if not isinstance(name, str):
        raise _fail(at(path, "type"), f"must be a class name, got {type(name).__name__}")
    cls = restorable.get(name)
    if cls is None:
        raise _fail(at(path, "type"),
                    f"class {name} is not one this workflow restores (its events, the models "
                    "their fields name, and the types it declares; register another with "
                    "workflow.register_context_types(...)); nothing is imported from saved data")
    return cls


def _decode_model(data: dict[str, Any], path: str, restorable: Mapping[str, type]) -> Any:
    unknown = sorted(set(data) - _MODEL_KEYS)
    if unknown:
        raise _fail(path, f"unknown key(s) {', '.join(map(repr, unknown))} in a saved model")
    cls = _restorable_class(data, path, restorable)
    if not issubclass(cls, BaseModel):
        raise _fail(at(path, "type"), f"{type_path(cls)} is not a pydantic model")
    fields = _names(data, "fields", path)
    extra = _names(data, "extra", path)
    declared = cls.model_fields
    stray = sorted(set(fields) - set(declared))
    if stray:
        raise _fail(at(path, "fields"), f"{cls.__name__} has no field(s) "
                                        f"{', '.join(map(repr, stray))}")
    clash = sorted(set(extra) & set(declared))
    if clash:
        raise _fail(at(path, "extra"), f"{', '.join(map(repr, clash))} is a declared field of "
                                       f"{cls.__name__}, not an extra")
    if extra and cls.model_config.get("extra") != "allow":
        raise _fail(at(path, "extra"), f"{cls.__name__} takes no extra fields")
    values = {**decode(fields, at(path, "fields"), restorable),
              **decode(extra, at(path, "extra"), restorable)}
    try:
        return cls.model_validate(values)
    except (ValueError, TypeError) as exc:
        raise _fail(path, f"not a valid {cls.__name__}: {exc}") from None


def _decode_object(data: dict[str, Any], path: str, restorable: Mapping[str, type]) -> Any:
    unknown = sorted(set(data) - _OBJECT_KEYS)
    if unknown:
        raise _fail(path, f"unknown key(s) {', '.join(map(repr, unknown))} in a saved object")
    cls = _restorable_class(data, path, restorable)
    from_dict = getattr(cls, "from_dict", None)
    if not callable(from_dict):
        raise _fail(at(path, "type"), f"{type_path(cls)} has no from_dict")
    saved = decode(data.get("data"), at(path, "data"), restorable)
    try:
        return from_dict(saved)
    except Exception as exc:  # noqa: BLE001 (whatever the class's own loader rejects with)
        raise _fail(at(path, "data"), f"{cls.__name__}.from_dict rejected it: {exc}") from None


def _names(data: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    """A saved model's ``fields`` or ``extra``: names to saved values (itself no saved value)."""
    value = data.get(key)
    if not isinstance(value, dict):
        raise _fail(at(path, key), f"must be a dict, got {type(value).__name__}")
    if _TAG in value:
        raise _fail(at(path, key), f"must map field names to values, not be a saved "
                                   f"{value[_TAG]!r}")
    return value
