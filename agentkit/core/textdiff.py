"""How a changed text is shown to a person: the lines around the change, never the first
hundred-odd characters of both sides.

Short one-line values read best side by side (``"add" -> "plus"``); anything longer -- a
system prompt, a tool description, a recorded request's message -- is shown as a unified diff
of its lines (a word changed in line 13 shows line 13 with a line of context either side), or,
for one long line, as excerpts around each changed stretch. Used by trace diffs
(:mod:`agentkit.scenario.diff`) and cassette misses (:mod:`agentkit.llms.cassette`).
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

__all__ = ["SHORT", "is_short", "short", "text_diff", "value_diff"]

SHORT = 80
"""Values up to this many characters (as JSON, on one line) are shown whole, side by side."""

_CONTEXT_CHARS = 40
_MAX_LINE = 200
_MAX_EXCERPTS = 6
_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")


def short(value: Any, limit: int = 160) -> str:
    """``value`` as one line of JSON, cut to ``limit`` characters (for summaries only)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_short(value: Any) -> bool:
    """Whether ``value`` fits on one line side by side with another (see :data:`SHORT`)."""
    if isinstance(value, str) and "\n" in value:
        return False
    return len(json.dumps(value, ensure_ascii=False, default=str)) <= SHORT


def _clip(line: str) -> str:
    """An unchanged context line, its middle elided if it is very long."""
    if len(line) <= _MAX_LINE:
        return line
    half = _MAX_LINE // 2 - 2
    return f"{line[:half]} … {line[-half:]}"


def _context(tokens: Any) -> list[str]:
    """Whole tokens from the start of ``tokens`` up to about :data:`_CONTEXT_CHARS`."""
    kept: list[str] = []
    size = 0
    for token in tokens:
        if size + len(token) > _CONTEXT_CHARS:
            break
        kept.append(token)
        size += len(token)
    return kept


def _excerpts(old: str, new: str) -> list[str]:
    """Old and new excerpts around each changed stretch of one long line."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    groups: list[list[tuple[str, int, int, int, int]]] = []
    for group in matcher.get_grouped_opcodes(0):
        changes = [op for op in group if op[0] != "equal"]
        if groups and len("".join(a[groups[-1][-1][2]:changes[0][1]])) <= 2 * _CONTEXT_CHARS:
            groups[-1].extend(changes)  # close changes share one excerpt
        else:
            groups.append(changes)
    lines: list[str] = []
    for changes in groups[:_MAX_EXCERPTS]:
        a0, a1 = changes[0][1], changes[-1][2]
        b0, b1 = changes[0][3], changes[-1][4]
        lead = "".join(reversed(_context(reversed(a[:a0]))))
        tail = "".join(_context(a[a1:]))
        lead = lead if len(lead) == len("".join(a[:a0])) else "…" + lead.lstrip()
        tail = tail if len(tail) == len("".join(a[a1:])) else tail.rstrip() + "…"
        lines.append(f"-{lead}{''.join(a[a0:a1])}{tail}")
        lines.append(f"+{lead}{''.join(b[b0:b1])}{tail}")
    if len(groups) > _MAX_EXCERPTS:
        lines.append(f" (and {len(groups) - _MAX_EXCERPTS} more changed stretches)")
    return lines


def text_diff(old: str, new: str, *, context: int = 1) -> list[str]:
    """Lines showing how text ``new`` differs from ``old``: a unified diff (``@@`` hunks,
    ``-``/``+``/`` `` lines, ``context`` unchanged lines around each change) for multi-line
    text, excerpts around each change for one long line."""
    old_lines, new_lines = old.split("\n"), new.split("\n")
    if len(old_lines) == 1 and len(new_lines) == 1:
        return _excerpts(old, new)
    lines = []
    for line in difflib.unified_diff(old_lines, new_lines, n=context, lineterm=""):
        if line.startswith(("--- ", "+++ ")):
            continue
        lines.append(line if line[:1] in "-+@" else _clip(line))
    return lines


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False,
                                                            default=str)


def value_diff(old: Any, new: Any) -> list[str]:
    """How value ``old`` became ``new``: one line ``old -> new`` when both are short, else
    :func:`text_diff` of their texts (strings as they are, anything else as indented JSON)."""
    if is_short(old) and is_short(new):
        return [f"{short(old)} -> {short(new)}"]
    if isinstance(old, str) != isinstance(new, str):
        return [f"{short(old)} -> {short(new)}"]
    return text_diff(_as_text(old), _as_text(new))
