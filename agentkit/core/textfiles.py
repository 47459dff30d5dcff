"""Reading the text files agentkit loads (scenarios, cassettes, traces, reports).

A problem is a :class:`TextFileError` whose message starts ``file:line:column:``:

* :func:`read_text` -- UTF-8 text of at most :data:`MAX_TEXT_BYTES` (``/dev/zero`` given as a
  trace is an error, not a read that never ends); other bytes are an error at their line;
* :func:`parse_json` -- JSON; nesting deeper than :data:`~agentkit.core.yamlsafe.MAX_DEPTH`
  is an error at its line before anything is built, as in YAML files;
* :func:`json_locations` -- the line of every field of a JSON document, for errors about its
  content (JSON is read as YAML for this: close enough for line numbers).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from agentkit.core.errors import BadInputError
from agentkit.core.yamlsafe import MAX_DEPTH, YamlError, YamlLocations, depth_error, parse_yaml

__all__ = ["TextFileError", "read_text", "parse_json", "json_locations", "MAX_TEXT_BYTES"]

#: The largest file :func:`read_text` reads (a cassette of a long conversation is a few MB).
MAX_TEXT_BYTES = 256 << 20


class TextFileError(BadInputError):
    """A file that cannot be read as what it should be; the message says where and why."""


def read_text(path: str | Path) -> str:
    """The UTF-8 text of ``path`` (``OSError`` if it cannot be read at all)."""
    path = Path(path)
    with path.open("rb") as file:
        data = file.read(MAX_TEXT_BYTES + 1)
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


def parse_json(path: str | Path, text: str) -> Any:
    """The JSON value of ``text`` (read from ``path``, for messages)."""
    _check_json_depth(path, text)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise TextFileError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}"
                            ) from None


#: A JSON string (skipped whole, brackets inside it included) or a bracket.
_JSON_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


def _check_json_depth(path: str | Path, text: str) -> None:
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for match in _JSON_STRING_OR_BRACKET.finditer(text):
        bracket = match.group()
        if bracket in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                start = match.start()
                line = text.count("\n", 0, start) + 1
                error = depth_error(line, start - (text.rfind("\n", 0, start) + 1) + 1)
                raise TextFileError(f"{path}{error.where}: {error.problem}\n  fix: {error.fix}")
        elif bracket in ("]", "}"):
            depth -= 1


def json_locations(text: str) -> YamlLocations:
    """Where each field of a JSON document is (no lines if it cannot be read as YAML)."""
    try:
        return parse_yaml(text)[1]
    except YamlError:
        return YamlLocations(None)
