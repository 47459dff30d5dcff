"""How a changed value is shown to a person: where it changed, and the lines around the
change -- never the first hundred-odd characters of both sides.

Short one-line values read best side by side (``"add" -> "plus"``); anything longer -- a
system prompt, a tool description, a recorded request's message -- is shown as a unified diff
of its lines (a word changed in line 13 shows line 13 with a line of context either side), or,
for one long line, as excerpts around each changed stretch. :func:`changes` lists every
difference of two JSON-like values in document order (deepdiff finds them), each rendered so.
Used by trace diffs (:mod:`agentkit.scenario.diff`) and cassette misses
(:mod:`agentkit.llms.cassette`).
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["SHORT", "Change", "changes", "is_short", "short", "text_diff", "value_diff"]

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


_KINDS: dict[str, Literal["changed", "added", "removed"]] = {
    "values_changed": "changed", "type_changes": "changed",
    "dictionary_item_added": "added", "iterable_item_added": "added",
    "dictionary_item_removed": "removed", "iterable_item_removed": "removed"}


def _path(parts: list[Any]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(root)"


@dataclass(frozen=True)
class Change:
    """One difference between two values: what happened where (``messages[0].content``)."""

    kind: Literal["changed", "added", "removed"]
    path: str
    old: Any
    new: Any
    order: tuple[tuple[int, Any], ...]
    """Sort key: document order, list indexes numerically (``[2]`` before ``[10]``)."""

    def lines(self) -> list[str]:
        """``path: old -> new`` on one line when short, else ``path:`` and an indented diff."""
        if self.kind == "added":
            return [f"{self.path}: added {short(self.new)}"]
        if self.kind == "removed":
            return [f"{self.path}: removed {short(self.old)}"]
        if is_short(self.old) and is_short(self.new):
            return [f"{self.path}: {value_diff(self.old, self.new)[0]}"]
        return [f"{self.path}:", *(f"  {line}" for line in value_diff(self.old, self.new))]


def changes(old: Any, new: Any) -> list[Change]:
    """Every difference between JSON-like values ``old`` and ``new``, in document order."""
    from deepdiff import DeepDiff  # deferred: only a failing comparison pays for importing it

    diff = DeepDiff(old, new, view="tree", verbose_level=2)
    found = []
    for name, kind in _KINDS.items():
        for level in diff.get(name, []):
            parts = level.path(output_format="list")
            order = tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in parts)
            found.append(Change(kind, _path(parts), level.t1 if kind != "added" else None,
                                level.t2 if kind != "removed" else None, order))
    return sorted(found, key=lambda c: c.order)
