"""Example values from JSON schemas: the arguments :class:`agentkit.llms.mock.SchemaLLM` calls
a tool with.

Deterministic (the same schema gives the same value, always) and valid for the schemas
pydantic writes for tool parameters:

* ``const`` and ``enum``: that value, the first of the enum;
* ``string``: the property's name (``"city"`` for ``city``, ``"text"`` where there is none),
  padded or cut to ``minLength``/``maxLength``; ``format`` ``date``, ``date-time``, ``time``,
  ``email``, ``uri``/``url``, ``uuid`` get a fixed value of that shape (``pattern`` is not
  followed);
* ``integer``: 1, ``number``: 1.5, each moved into ``minimum``/``maximum`` (exclusive bounds
  and ``multipleOf`` respected); ``boolean``: true; ``null``: null;
* ``array``: ``minItems`` items (at least one, unless ``maxItems`` is 0), from ``items`` or
  ``prefixItems``; ``object``: every property (required or not), or one ``"key"`` of
  ``additionalProperties``;
* ``anyOf``/``oneOf``: the first option that is not ``null``; ``allOf``: its schemas merged;
  ``$ref``: the definition in ``$defs``/``definitions``; a list ``type``: its first non-null
  type; no type at all: a string;
* a recursive model stops at its first repetition: an optional reference becomes ``null``,
  a list of them ``[]``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["example_arguments", "example_value"]

_FORMATS = {"date": "2024-01-01", "date-time": "2024-01-01T00:00:00Z", "time": "00:00:00",
            "email": "user@example.com", "uri": "https://example.com", "url": "https://example.com",
            "uuid": "00000000-0000-4000-8000-000000000000"}


def example_arguments(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """Arguments for a tool whose parameters schema (an ``object``) is ``parameters``: a value
    for every property."""
    value = example_value(parameters)
    return value if isinstance(value, dict) else {}


def example_value(schema: Mapping[str, Any], name: str | None = None, *,
                  root: Mapping[str, Any] | None = None,
                  expanding: frozenset[str] = frozenset()) -> Any:
    """A value valid for ``schema`` (see the module docstring); ``name`` is the property it is
    for, ``root`` the document holding the ``$defs`` that ``$ref`` s point into, ``expanding``
    the references being expanded around it (to stop recursion)."""
    root = schema if root is None else root
    ref = schema.get("$ref")
    if isinstance(ref, str):
        if ref in expanding:
            return None
        expanding = expanding | {ref}
    schema = _resolved(schema, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        usable = [o for o in options if _resolved(o, root).get("type") != "null"
                  and o.get("$ref") not in expanding]
        nulls = [o for o in options if _resolved(o, root).get("type") == "null"]
        chosen = (usable or nulls or options)[0]
        return example_value(chosen, name, root=root, expanding=expanding)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        return _object(schema, root, expanding)
    if kind == "array":
        return _array(schema, name, root, expanding)
    if kind == "integer":
        return int(_number(schema, 1, integer=True))
    if kind == "number":
        return _number(schema, 1.5, integer=False)
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(schema, name)


def _resolved(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """``schema`` with its ``$ref`` followed and its ``allOf`` merged."""
    seen: set[str] = set()
    while isinstance(schema.get("$ref"), str) and schema["$ref"] not in seen:
        ref = schema["$ref"]
        seen.add(ref)
        target: Any = root
        for part in ref.removeprefix("#/").split("/") if ref.startswith("#/") else ():
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        schema = {**{k: v for k, v in schema.items() if k != "$ref"},
                  **(target if isinstance(target, Mapping) else {})}
    if schema.get("allOf"):
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            for key, value in _resolved(part, root).items():
                if key == "properties":
                    merged["properties"] = {**merged.get("properties", {}), **value}
                else:
                    merged.setdefault(key, value)
        schema = merged
    return schema


def _object(schema: Mapping[str, Any], root: Mapping[str, Any],
            expanding: frozenset[str]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    if properties:
        return {key: example_value(spec, key, root=root, expanding=expanding)
                for key, spec in properties.items()}
    extra = schema.get("additionalProperties")
    if isinstance(extra, Mapping):
        return {"key": example_value(extra, "key", root=root, expanding=expanding)}
    return {}


def _array(schema: Mapping[str, Any], name: str | None, root: Mapping[str, Any],
           expanding: frozenset[str]) -> list[Any]:
    prefix = schema.get("prefixItems")
    if prefix:
        return [example_value(item, name, root=root, expanding=expanding) for item in prefix]
    items = schema.get("items")
    item_schema = items if isinstance(items, Mapping) else {}
    if item_schema.get("$ref") in expanding:
        return []
    count = max(int(schema.get("minItems", 1)), 1)
    if schema.get("maxItems") is not None:
        count = min(count, int(schema["maxItems"]))
    return [example_value(item_schema, name, root=root, expanding=expanding)
            for _ in range(count)]


def _number(schema: Mapping[str, Any], base: float, *, integer: bool) -> float:
    step = 1 if integer else 0.5
    value = base
    low, high = schema.get("minimum"), schema.get("maximum")
    if schema.get("exclusiveMinimum") is not None:
        low = schema["exclusiveMinimum"] + step
    if schema.get("exclusiveMaximum") is not None:
        high = schema["exclusiveMaximum"] - step
    if low is not None and value < low:
        value = math.ceil(low) if integer else low
    if high is not None and value > high:
        value = math.floor(high) if integer else high
    multiple = schema.get("multipleOf")
    if multiple:
        value = math.ceil(value / multiple) * multiple
        if high is not None and value > high:
            value -= multiple
    return value


def _string(schema: Mapping[str, Any], name: str | None) -> str:
    text = _FORMATS.get(str(schema.get("format")), name or "text")
    low, high = schema.get("minLength"), schema.get("maxLength")
    if low is not None and len(text) < low:
        text = text + "x" * (int(low) - len(text))
    if high is not None and len(text) > high:
        text = text[:int(high)]
    return text
