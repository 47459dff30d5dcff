"""Reading the text files agentkit loads (scenarios, cassettes, traces, reports).

A problem is a :class:`TextFileError` whose message starts ``file:line:column:``:

* :func:`read_text` -- UTF-8 text of at most :data:`MAX_TEXT_BYTES` (``/dev/zero`` given as a
  trace is an error, not a read that never ends); other bytes are an error at their line;
* :func:`parse_json` -- JSON; nesting deeper than :data:`~agentkit.core.yamlsafe.MAX_DEPTH`
  is an error at its line before anything is built, as in YAML files, and so is an integer
  longer than Python converts (4,300 digits);
* :func:`loads_json` -- the same limits for JSON that is not a file (a server's answer):
  :class:`JsonLimitError`, never a ``RecursionError`` or a bare ``ValueError``;
* :func:`json_locations` -- the line of every field of a JSON document, for errors about its
  content (JSON is read as YAML for this: close enough for line numbers);
* :func:`too_large_to_read` -- for a writer: whether a text it is about to write would be
  refused by :func:`read_text`, so that nothing is written that agentkit cannot read back.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from agentkit.core.errors import BadInputError
from agentkit.core.yamlsafe import MAX_DEPTH, YamlError, YamlLocations, depth_error, parse_yaml

__all__ = ["TextFileError", "JsonLimitError", "read_text", "parse_json", "loads_json",
           "json_locations", "too_large_to_read", "MAX_TEXT_BYTES"]

#: The largest file :func:`read_text` reads (a cassette of a long conversation is a few MB).
MAX_TEXT_BYTES = 256 << 20


class TextFileError(BadInputError):
    """A file that cannot be read as what it should be; the message says where and why."""


class JsonLimitError(ValueError):
    """Valid JSON past what agentkit reads (too deep, an integer too long); ``line`` and
    ``column`` (1-based) say where, ``problem`` and ``fix`` what and what to do."""

    def __init__(self, problem: str, line: int, column: int, fix: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line
        self.column = column
        self.fix = fix


def read_text(path: str | Path) -> str:
    """The UTF-8 text of ``path`` (``OSError`` if it cannot be read at all)."""
    path = Path(path)
    with path.open("rb") as file:
        # as much as the file says it holds, then the rest up to the limit, if any (a read
        # of MAX_TEXT_BYTES sets aside a buffer that large: dearer than a small file's read)
        want = min(os.fstat(file.fileno()).st_size, MAX_TEXT_BYTES) + 1
        data = file.read(want)
        if len(data) == want <= MAX_TEXT_BYTES:  # larger than it said (/dev/zero says 0)
            data += file.read(MAX_TEXT_BYTES + 1 - want)
    if len(data) > MAX_TEXT_BYTES:
        raise TextFileError(f"{path}:1: larger than {MAX_TEXT_BYTES >> 20} MiB, the most "
                            "agentkit reads (is it the file you meant?)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise TextFileError(f"{path}:{line}:{column}: not UTF-8 text (byte "
                            f"0x{data[exc.start]:02x}); save the file as UTF-8") from None


def too_large_to_read(path: str | Path, text: str) -> str | None:
    """Why ``text`` must not be written to ``path`` (``None`` when it may): its UTF-8 bytes
    are more than :data:`MAX_TEXT_BYTES`, which :func:`read_text` refuses."""
    if len(text) * 4 <= MAX_TEXT_BYTES:  # at most 4 bytes a character: no need to encode
        return None
    size = len(text.encode("utf-8"))
    if size <= MAX_TEXT_BYTES:
        return None
    return (f"{path} would be {size / (1 << 20):,.1f} MiB, more than the "
            f"{MAX_TEXT_BYTES / (1 << 20):g} MiB agentkit reads back (MAX_TEXT_BYTES)")


def parse_json(path: str | Path, text: str) -> Any:
    """The JSON value of ``text`` (read from ``path``, for messages)."""
    try:
        return loads_json(text)
    except JsonLimitError as exc:
        raise TextFileError(f"{path}:{exc.line}:{exc.column}: {exc.problem}\n  fix: {exc.fix}"
                            ) from None
    except json.JSONDecodeError as exc:
        raise TextFileError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}"
                            ) from None


def loads_json(text: str, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)`` within agentkit's limits: nesting deeper than ``max_depth`` (found
    before anything is built: the decoder recurses) or an integer longer than Python converts
    is a :class:`JsonLimitError`; invalid JSON stays a ``json.JSONDecodeError``."""
    if text.count("[") + text.count("{") > max_depth:
        # loaded first (the C decoder stops deep nesting with a RecursionError), its depth
        # checked on the containers built; anything off takes the careful way below, which
        # finds the depth first, scanning every string of the text
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            pass
        else:
            if not _deeper_than(data, max_depth):
                return data
        _check_json_depth(text, max_depth)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError:  # only an integer past sys.get_int_max_str_digits() gets here
        raise _long_integer(text) from None


def _deeper_than(data: Any, max_depth: int) -> bool:
    """Whether loaded JSON nests lists and objects more than ``max_depth`` deep."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        items = value.values() if type(value) is dict else value if type(value) is list else ()
        for item in items:
            if type(item) is dict or type(item) is list:
                if depth >= max_depth:
                    return True
                stack.append((item, depth + 1))
    return False


#: A JSON string (skipped whole, brackets inside it included) or a bracket.
_JSON_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
#: A JSON string or an integer (digits with no fraction or exponent around them: a float).
_JSON_STRING_OR_INTEGER = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|(?<![\d.eE+-])-?\d+(?![\d.eE])')


def _at(text: str, start: int) -> tuple[int, int]:
    """The 1-based line and column of ``text[start]``."""
    return text.count("\n", 0, start) + 1, start - (text.rfind("\n", 0, start) + 1) + 1


def _check_json_depth(text: str, max_depth: int) -> None:
    if text.count("[") + text.count("{") <= max_depth:
        return
    depth = 0
    for match in _JSON_STRING_OR_BRACKET.finditer(text):
        bracket = match.group()
        if bracket in ("[", "{"):
            depth += 1
            if depth > max_depth:
                error = depth_error(None, limit=max_depth)
                raise JsonLimitError(error.problem, *_at(text, match.start()), error.fix or "")
        elif bracket in ("]", "}"):
            depth -= 1


def _long_integer(text: str) -> JsonLimitError:
    limit = sys.get_int_max_str_digits()
    for match in _JSON_STRING_OR_INTEGER.finditer(text):
        digits = len(match.group().lstrip("-"))
        if not match.group().startswith('"') and digits > limit:
            return JsonLimitError(
                f"an integer of {digits:,} digits, more than the {limit:,} agentkit reads",
                *_at(text, match.start()), fix="shorten it, or write it as a string")
    return JsonLimitError(f"an integer of more than {limit:,} digits, the most agentkit reads",
                          1, 1, fix="shorten it, or write it as a string")


def json_locations(text: str) -> YamlLocations:
    """Where each field of a JSON document is (no lines if it cannot be read as YAML)."""
    try:
        return parse_yaml(text)[1]
    except YamlError:
        return YamlLocations(None)
