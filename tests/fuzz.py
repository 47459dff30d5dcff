"""Hypothesis strategies for fuzzing agentkit's loaders: a valid document with parts of it
replaced by arbitrary values, deleted, or given unknown keys."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st

__all__ = ["JSON", "mutated"]

_SCALARS = (st.none() | st.booleans() | st.integers(-3, 10**12)
            | st.floats(allow_nan=True, allow_infinity=True)
            | st.text(alphabet="ab :-_\n{}[]'\"\\é\x85", max_size=8))
#: Any JSON-like value (YAML can hold the same), small.
JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(alphabet="abcxyz_", max_size=6), inner, max_size=3),
                    max_leaves=6)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    paths = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            paths += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            paths += _paths(item, (*prefix, index))
    return paths


def _parent(document: Any, path: tuple[Any, ...]) -> Any:
    for part in path[:-1]:
        document = document[part]
    return document


@st.composite
def mutated(draw: st.DrawFn, document: Any, max_changes: int = 3) -> Any:
    """``document`` after 1 to ``max_changes`` random changes: a part replaced by an arbitrary
    value, a part deleted, or an arbitrary key added to a mapping."""
    result = copy.deepcopy(document)
    for _ in range(draw(st.integers(1, max_changes))):
        path = draw(st.sampled_from(_paths(result)))
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        target = result
        if path:
            target = _parent(result, path)[path[-1]]
        if action == "add" and isinstance(target, dict):
            target[draw(st.text(alphabet="abcxyz_", min_size=1, max_size=6))] = draw(JSON)
        elif action == "delete" and path:
            parent = _parent(result, path)
            del parent[path[-1]]
        elif path:
            _parent(result, path)[path[-1]] = draw(JSON)
        else:
            result = draw(JSON)
    return result
