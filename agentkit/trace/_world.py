"""A scenario world's state as a trace keeps it: plain JSON data with sorted keys (so a trace
stays byte-deterministic), the changes between two states as readable lines, and the value at
a dotted path (what ``expect.state`` reads)."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import types
from collections.abc import Mapping
from typing import Any

__all__ = ["MISSING", "state_data", "state_changes", "value_at", "shown_value"]

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()
"""What :func:`value_at` finds at a path the state does not have."""

_DEPTH = 64


def state_data(world: Any) -> Any:
    """``world`` as plain data: its ``agentkit_state()`` when it defines one (a database
    connection says what to record), else a pydantic model's dump, a dataclass's fields, a
    mapping's items (keys as text, sorted), a sequence's or set's items (a set sorted), an
    object's public attributes; any other value as text."""
    return _data(world, 0, set())


def _data(value: Any, depth: int, seen: set[int]) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if depth > _DEPTH or id(value) in seen:
        return "<cycle>"
    own = getattr(value, "agentkit_state", None)
    if callable(own) and not isinstance(value, type):
        return _data(own(), depth + 1, seen | {id(value)})
    if isinstance(value, enum.Enum):
        return _data(value.value, depth + 1, seen)
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, types.ModuleType):  # a reference to code, not state
        return f"<module {value.__name__}>"
    inner = seen | {id(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return _data(dump(mode="json"), depth + 1, inner)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _mapping({f.name: getattr(value, f.name) for f in dataclasses.fields(value)},
                        depth, inner)
    if isinstance(value, Mapping):
        return _mapping(value, depth, inner)
    if isinstance(value, (list, tuple)):
        return [_data(item, depth + 1, inner) for item in value]
    if isinstance(value, (set, frozenset)):
        items = [_data(item, depth + 1, inner) for item in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict) and not isinstance(value, type):
        return _mapping({k: v for k, v in attributes.items()
                         if not k.startswith("_") and not callable(v)}, depth, inner)
    return str(value)


def _mapping(items: Mapping[Any, Any], depth: int, seen: set[int]) -> dict[str, Any]:
    return {key: _data(items[original], depth + 1, seen)
            for key, original in sorted((str(k), k) for k in items)}


def shown_value(value: Any, limit: int | None = None) -> str:
    """A state value as one line of JSON (cut to ``limit`` characters)."""
    if value is MISSING:
        return "(none)"
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if limit is None or len(text) <= limit else text[:limit - 3] + "..."


def _path_text(path: tuple[str | int, ...]) -> str:
    return ".".join(map(str, path)) or "(the world)"


def state_changes(start: Any, end: Any) -> list[str]:
    """How state ``end`` differs from ``start``, a line per changed place (``ledger.1: added
    {...}``, ``seats.12A: "free" -> "held"``); empty when they are equal."""
    lines: list[str] = []
    _changes(start, end, (), lines)
    return lines


def _changes(old: Any, new: Any, path: tuple[str | int, ...], lines: list[str]) -> None:
    if old == new and type(old) is type(new):
        return
    where = _path_text(path)
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            if key not in new:
                lines.append(f"{_path_text((*path, key))}: removed {shown_value(old[key])}")
            elif key not in old:
                lines.append(f"{_path_text((*path, key))}: added {shown_value(new[key])}")
            else:
                _changes(old[key], new[key], (*path, key), lines)
        return
    if isinstance(old, list) and isinstance(new, list):
        shorter = min(len(old), len(new))
        if len(old) == len(new) or old[:shorter] == new[:shorter]:
            for index in range(shorter):
                _changes(old[index], new[index], (*path, index), lines)
            for index in range(shorter, len(new)):
                lines.append(f"{_path_text((*path, index))}: added {shown_value(new[index])}")
            for index in range(shorter, len(old)):
                lines.append(f"{_path_text((*path, index))}: removed "
                             f"{shown_value(old[index])}")
            return
    lines.append(f"{where}: {shown_value(old)} -> {shown_value(new)}")


def value_at(state: Any, path: tuple[str | int, ...]) -> Any:
    """The value at ``path`` in ``state`` (a key of a mapping -- a whole number too --, an
    index of a list), or :data:`MISSING`."""
    value = state
    for part in path:
        if isinstance(value, dict):
            key = str(part)
            if key not in value:
                return MISSING
            value = value[key]
        elif isinstance(value, list) and isinstance(part, int):
            if not -len(value) <= part < len(value):
                return MISSING
            value = value[part]
        else:
            return MISSING
    return value
