"""Argument matchers of expected tool calls: ``{one_of: [...], optional: true, loose: true}``
says an argument may take any of several values (or be left out), as a function-calling
benchmark's possible answers do."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import Field, ValidationError

from agentkit.scenario._model_base import _Strict

__all__ = ["OneOf", "with_matchers", "args_match", "arg_matches", "differing", "has_matcher",
           "shown"]

_MATCHER_KEYS = ("one_of", "optional", "loose")
_LOOSE_DROPPED = re.compile(r"[ ,./\-_*^]")


class OneOf(_Strict):
    """The argument equals one of ``one_of``; ``optional``: it may also be left out; ``loose``:
    texts compare without case, spaces and ``,./-_*^`` (``'`` as ``"``). Numbers keep their
    JSON type (``true`` is no ``1``), except that an integer argument equals a float value at
    the argument's top level (as Python passes ``2`` for a ``float`` parameter). A value that
    is a mapping or a list may hold matchers itself."""

    one_of: list[Any] = Field(min_length=1)
    optional: bool = False
    loose: bool = False

    def matches(self, value: Any) -> bool:
        """Whether a given argument ``value`` is one of the values."""
        return any(_same(choice, value, self.loose, top=True) for choice in self.one_of)

    def plain(self) -> dict[str, Any]:
        """The matcher as written in a scenario file."""
        out: dict[str, Any] = {"one_of": [_plain(choice) for choice in self.one_of]}
        if self.optional:
            out["optional"] = True
        if self.loose:
            out["loose"] = True
        return out


def with_matchers(value: Any, where: str = "") -> Any:
    """``value`` (an argument's expected value) with each mapping that has a ``one_of`` key
    made a :class:`OneOf` -- a mapping of other keys beside it, or an empty ``one_of``, is a
    ValueError naming the argument."""
    if isinstance(value, Mapping):
        if "one_of" in value:
            extra = [str(key) for key in value if key not in _MATCHER_KEYS]
            if extra:
                raise ValueError(f"{where}: a `one_of` matcher takes `one_of`, `optional` and "
                                 f"`loose`, not {', '.join(f'`{k}`' for k in extra)} (a value "
                                 "that is itself such a mapping goes inside `one_of: [...]`)")
            choices = value["one_of"]
            if not isinstance(choices, list) or not choices:
                raise ValueError(f"{where}: `one_of` is a non-empty list of the values the "
                                 f"argument may take, got {choices!r}")
            try:
                return OneOf(one_of=[with_matchers(choice, f"{where}.one_of.{index}")
                                     for index, choice in enumerate(choices)],
                             optional=value.get("optional", False),
                             loose=value.get("loose", False))
            except ValidationError as exc:
                problem = exc.errors()[0]
                raise ValueError(f"{where}: `{'.'.join(map(str, problem['loc']))}`: "
                                 f"{problem['msg']}") from None
        return {key: with_matchers(item, f"{where}.{key}") for key, item in value.items()}
    if isinstance(value, list):
        return [with_matchers(item, f"{where}.{index}") for index, item in enumerate(value)]
    return value


def has_matcher(value: Any) -> bool:
    """Whether an expected value holds a :class:`OneOf` anywhere."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return False  # the usual argument, told without the ABC's isinstance
    if isinstance(value, OneOf):
        return True
    if isinstance(value, Mapping):
        return any(has_matcher(item) for item in value.values())
    if isinstance(value, list):
        return any(has_matcher(item) for item in value)
    return False


def _loose(text: str) -> str:
    return _LOOSE_DROPPED.sub("", text).lower().replace("'", '"')


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same(expected: Any, value: Any, loose: bool, top: bool = False) -> bool:
    """Whether ``value`` fits ``expected`` (a value that may hold matchers), types kept."""
    if isinstance(expected, OneOf):
        return any(_same(choice, value, loose or expected.loose, top)
                   for choice in expected.one_of)
    if isinstance(expected, bool) or expected is None:
        return value is expected
    if isinstance(expected, float):
        return (isinstance(value, float) or (top and _number(value))) and value == expected
    if isinstance(expected, int):
        return isinstance(value, int) and not isinstance(value, bool) and value == expected
    if isinstance(expected, str):
        return isinstance(value, str) and (_loose(value) == _loose(expected) if loose
                                           else value == expected)
    if isinstance(expected, list):
        return (isinstance(value, list) and len(value) == len(expected)
                and all(_same(e, v, loose) for e, v in zip(expected, value, strict=True)))
    if isinstance(expected, Mapping):
        return isinstance(value, Mapping) and _fields_match(expected, value, loose)
    return bool(expected == value)


def _fields_match(expected: Mapping[str, Any], value: Mapping[str, Any], loose: bool) -> bool:
    """No key beyond ``expected``'s; each of its keys given (or optional) and fitting."""
    if any(key not in expected for key in value):
        return False
    return all(_same(want, value[key], loose, top=True) if key in value
               else isinstance(want, OneOf) and want.optional
               for key, want in expected.items())


def arg_matches(expected: Any, value: Any) -> bool:
    """Whether an argument's given ``value`` fits its expected value: plain equality unless
    the expected value holds a matcher."""
    if not has_matcher(expected):
        return bool(expected == value)
    return _same(expected, value, loose=False, top=True)


def _absent_ok(expected: Any) -> bool:
    return isinstance(expected, OneOf) and expected.optional


def args_match(mode: str, expected: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    """Whether a call's ``actual`` arguments fit ``expected`` under ``args: mode`` (``exact``:
    no other argument; ``subset``: others allowed; ``ignore``). An optional matcher's argument
    may be left out."""
    if mode == "ignore":
        return True
    # loops, not any()/all() over generators: no frame resumed per argument
    if mode == "exact":
        for key in actual:
            if key not in expected:
                return False
    for key, want in expected.items():
        if not (arg_matches(want, actual[key]) if key in actual else _absent_ok(want)):
            return False
    return True


def differing(mode: str, expected: Mapping[str, Any], actual: Mapping[str, Any]) -> list[str]:
    """The names of the arguments that do not fit ``expected`` under ``args: mode``."""
    names = []
    for key in dict.fromkeys([*expected, *(actual if mode == "exact" else ())]):
        if key not in expected:
            names.append(key)
        elif key not in actual:
            if not _absent_ok(expected[key]):
                names.append(key)
        elif not arg_matches(expected[key], actual[key]):
            names.append(key)
    return names


def _plain(value: Any) -> Any:
    if isinstance(value, OneOf):
        return value.plain()
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def shown(value: Any) -> str:
    """JSON text of an expected value, matchers as written."""
    return json.dumps(_plain(value), sort_keys=True, default=str)
