"""Step-aligned diffs of traces: which steps were inserted, dropped or changed, then the deep
diff inside each changed step -- instead of a wall of JSON.

Written for a person reading a failed test:

* a long or multi-line text (a system prompt, a tool description) is shown as a unified diff
  around the change (:mod:`agentkit.core.textdiff`), never as the first characters of both
  sides;
* a change already shown is not repeated: a step whose changes are all ones shown in an
  earlier step is folded into one line (``steps 2-3: same change as step 1``), e.g. a system
  prompt that every LLM call of the run sends;
* the trace's ``tools`` (name, description and schema of each tool, once per run) are
  compared by tool name and listed first, so a changed docstring is one readable change
  ahead of the prompt and token changes it causes.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentkit.core.errors import BadInputError
from agentkit.core.textdiff import changes, short
from agentkit.core.yamlsafe import MAX_DEPTH, YamlLocations

__all__ = ["diff_traces", "step_signature", "check_trace", "TraceError"]


class TraceError(BadInputError):
    """A trace file that is not an agentkit trace; the message says where and why."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Named(_Open):
    name: str | None = None


class _Response(_Open):
    content: str | None = None
    tool_calls: list[_Named] = Field(default_factory=list)


class _LLMCall(_Open):
    response: _Response | None = None


class _Step(_Open):
    is_last: bool | None = None
    llm_calls: list[_LLMCall] = Field(default_factory=list)
    tool_calls: list[_Named] = Field(default_factory=list)


class _Turn(_Open):
    steps: list[_Step] = Field(default_factory=list)


class _TraceShape(_Open):
    turns: list[_Turn]


def check_trace(data: Any, source: str, where: YamlLocations | None = None) -> dict[str, Any]:
    """``data`` if it has the shape of a trace (what :func:`diff_traces` reads), else a
    :class:`TraceError` naming ``source``, the line (from ``where``) and the field."""
    depth = _depth(data)
    if depth > MAX_DEPTH:
        raise TraceError(f"{source}:1: not an agentkit trace: nested {depth} levels deep")
    if not isinstance(data, dict):
        raise TraceError(f"{source}:1: not an agentkit trace (a JSON object with `turns`)")
    try:
        _TraceShape.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        line = where.line(loc) if where is not None else 1
        dotted = ".".join(str(p) for p in loc) or "(top level)"
        message = first["msg"]
        raise TraceError(f"{source}:{line}: {dotted}: {message}; not an agentkit trace "
                         f"(a snapshot or --trace-dir output)") from None
    return data


def _depth(value: Any) -> int:
    """How deeply ``value`` nests (without recursing, whatever its depth)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            break
        if isinstance(item, dict):
            stack += [(child, level + 1) for child in item.values()]
        elif isinstance(item, list):
            stack += [(child, level + 1) for child in item]
    return deepest

def step_signature(step: dict[str, Any]) -> tuple[Any, ...]:
    """What a step *did* (the tools it called, whether it ended the task), for alignment."""
    tools = tuple(c.get("name") for c in step.get("tool_calls", []))
    requested = tuple(
        tuple(t.get("name") for t in (c.get("response") or {}).get("tool_calls", []))
        for c in step.get("llm_calls", []))
    return tools, requested, step.get("is_last")


def _summary(step: dict[str, Any]) -> str:
    parts = []
    for call in step.get("llm_calls", []):
        response = call.get("response") or {}
        said = (response.get("content") or "").strip().replace("\n", " \\n ")
        if said:
            parts.append(f"llm: {short(said)}")
        if call.get("error"):
            parts.append(f"llm error: {call['error']}")
    for call in step.get("tool_calls", []):
        flag = " (error)" if call.get("is_error") else ""
        parts.append(f"tool: {call.get('name')}({short(call.get('args'))}) -> "
                     f"{short(call.get('output'))}{flag}")
    return "; ".join(parts) or "(no calls)"


@dataclass(frozen=True)
class _Change:
    """One difference (:class:`~agentkit.core.textdiff.Change`) and what identifies it for
    folding repeats: the same change at the same place of another step."""

    path: str
    lines: tuple[str, ...]
    key: tuple[Any, ...]

    def render(self, indent: str) -> list[str]:
        return [f"{indent}{line}" for line in self.lines]


def _changes(old: Any, new: Any, scope: str) -> list[_Change]:
    return [_Change(c.path, tuple(c.lines()),
                    (scope, c.kind, c.path, short(c.old, 10**9), short(c.new, 10**9)))
            for c in changes(old, new)]


@dataclass(frozen=True)
class _Where:
    """A place in the trace a change was first shown: a step of a turn, or a turn."""

    turn: int
    step: int | None = None

    def label(self, turn: int) -> str:
        inner = f"step {self.step}" if self.step is not None else ""
        if self.turn == turn and inner:
            return inner
        return f"turn {self.turn} {inner}".strip()


class _Folder:
    """Remembers which changes were shown where, so repeats are named instead of re-shown."""

    def __init__(self) -> None:
        self.shown: dict[tuple[Any, ...], _Where] = {}

    def split(self, changes: list[_Change], here: _Where
              ) -> tuple[list[_Change], list[tuple[_Change, _Where]]]:
        """The changes not shown before, and the repeats with where each was first shown."""
        fresh, repeats = [], []
        for change in changes:
            first = self.shown.get(change.key)
            if first is None:
                self.shown[change.key] = here
                fresh.append(change)
            else:
                repeats.append((change, first))
        return fresh, repeats


def _same_as(repeats: list[tuple[_Change, _Where]], turn: int) -> str:
    labels = list(dict.fromkeys(first.label(turn) for _, first in repeats))
    return f"same change{'s' if len(repeats) > 1 else ''} as {' and '.join(labels)}"


@dataclass
class _Fold:
    """Consecutive steps whose changes all repeat the same earlier ones."""

    first: int
    last: int
    note: str

    def line(self) -> str:
        steps = (f"step {self.first}" if self.first == self.last
                 else f"steps {self.first}-{self.last}")
        return f"    {steps}: {self.note}"


def _diff_steps(old: list[dict[str, Any]], new: list[dict[str, Any]], turn: int,
                folder: _Folder) -> list[str]:
    lines: list[str] = []
    fold: _Fold | None = None

    def flush() -> None:
        nonlocal fold
        if fold is not None:
            lines.append(fold.line())
            fold = None

    matcher = difflib.SequenceMatcher(a=[step_signature(s) for s in old],
                                      b=[step_signature(s) for s in new], autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        pairs = list(zip(range(a0, a1), range(b0, b1), strict=False)) if tag in ("equal", "replace") else []
        for i, j in pairs:
            changes = _changes(_without_index(old[i]), _without_index(new[j]), "step")
            if not changes:
                continue
            fresh, repeats = folder.split(changes, _Where(turn, i + 1))
            if not fresh and i == j:
                note = _same_as(repeats, turn)
                if fold is not None and fold.last == i and fold.note == note:
                    fold.last = i + 1
                else:
                    flush()
                    fold = _Fold(i + 1, i + 1, note)
                continue
            flush()
            label = f"step {i + 1}" if i == j else f"step {i + 1} (now step {j + 1})"
            lines.append(f"    {label}: changed")
            for change in fresh:
                lines.extend(change.render("      "))
            if repeats:
                paths = ", ".join(change.path for change, _ in repeats)
                lines.append(f"      {_same_as(repeats, turn)}: {paths}")
        flush()
        if tag in ("replace", "delete"):
            for i in range(a0 + len(pairs), a1):
                lines.append(f"    step {i + 1}: dropped  - {_summary(old[i])}")
        if tag in ("replace", "insert"):
            for j in range(b0 + len(pairs), b1):
                lines.append(f"    step {j + 1}: inserted + {_summary(new[j])}")
    return lines


def _without_index(step: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in step.items() if k != "index"}


def _by_name(header: dict[str, Any]) -> dict[str, Any]:
    """The trace header with its ``tools`` keyed by name (when names are unique), so a tool's
    change is named after the tool, not its position."""
    tools = header.get("tools")
    if isinstance(tools, list) and all(isinstance(t, dict) for t in tools):
        names = [t.get("name") for t in tools]
        if all(isinstance(n, str) for n in names) and len(set(names)) == len(names):
            header = {**header, "tools": {t["name"]: {k: v for k, v in t.items() if k != "name"}
                                          for t in tools}}
    return header


def _render(changes: list[_Change], indent: str) -> list[str]:
    return [line for change in changes for line in change.render(indent)]


def diff_traces(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Lines describing how trace ``new`` differs from ``old`` (empty when equal). Traces of
    two formats (written by different agentkit versions) differ in what they hold, not in
    what the agent did: that is the one line."""
    if old.get("format") != new.get("format"):
        return [f"trace format {old.get('format')} -> {new.get('format')}: the traces were "
                "written by different agentkit versions, which keep different things; write "
                "both with one agentkit to compare them step by step"]
    folder = _Folder()
    # the tools first: a changed description is the cause of the prompt and token changes
    lines = _render(_changes(_by_name({"tools": old.get("tools", [])}),
                             _by_name({"tools": new.get("tools", [])}), "trace"), "")
    old_turns, new_turns = old.get("turns", []), new.get("turns", [])
    for index in range(max(len(old_turns), len(new_turns))):
        if index >= len(old_turns):
            lines.append(f"turn {index + 1}: inserted + {short(new_turns[index].get('user'))}")
            continue
        if index >= len(new_turns):
            lines.append(f"turn {index + 1}: dropped - {short(old_turns[index].get('user'))}")
            continue
        before, after = old_turns[index], new_turns[index]
        turn_lines = _diff_steps(before.get("steps", []), after.get("steps", []), index + 1,
                                 folder)
        rest_old = {k: v for k, v in before.items() if k != "steps"}
        rest_new = {k: v for k, v in after.items() if k != "steps"}
        turn_lines += _render(_changes(rest_old, rest_new, "turn"), "    ")
        if turn_lines:
            lines.append(f"turn {index + 1} ({short(after.get('user'))}):")
            lines.extend(turn_lines)
    header_old = {k: v for k, v in old.items() if k not in ("turns", "tools")}
    header_new = {k: v for k, v in new.items() if k not in ("turns", "tools")}
    lines += _render(_changes(header_old, header_new, "trace"), "")
    return lines
