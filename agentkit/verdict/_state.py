"""``expect.state``: the scenario world after the run (or a turn), as the trace recorded it --
values at paths, the whole world unchanged, a user's check function -- each failure naming
the path, what was expected, what was there, and what changed since the start."""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from agentkit.scenario._model_base import TextMatch
from agentkit.scenario._world_model import StateExpect, StateMatch, state_path
from agentkit.trace import MISSING, Trace, shown_value, value_at

__all__ = ["state_problems", "matches_state"]

_TEXT_MATCHES = ("equals", "contains", "regex")


def _holds(item: Any, wanted: Any) -> bool:
    """Whether ``item`` is ``wanted``, a mapping holding (at least) ``wanted``'s items."""
    if isinstance(wanted, dict) and isinstance(item, dict):
        return all(key in item and _holds(item[key], value) for key, value in wanted.items())
    return bool(item == wanted)


def _contains(value: Any, wanted: Any) -> bool:
    if isinstance(value, str):
        return isinstance(wanted, str) and wanted in value
    if isinstance(value, list):
        return any(_holds(item, wanted) for item in value)
    if isinstance(value, dict):
        return _holds(value, wanted) if isinstance(wanted, dict) else str(wanted) in value
    return False


def matches_state(match: StateMatch, value: Any, start: Any) -> bool:
    """Whether the value at a path (``start``: the same path at the start of the run) is as
    ``match`` says; a path the state does not have is :data:`~agentkit.trace.MISSING`."""
    given = match.model_fields_set
    if "unchanged" in given:
        return bool(value == start)
    if value is MISSING:
        return False
    if "equals" in given:
        return bool(value == match.equals)
    if "contains" in given:
        return _contains(value, match.contains)
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True,
                                                           ensure_ascii=False)
    return TextMatch(regex=match.regex).matches(text)


def _verdict_of(result: Any) -> list[str]:
    """What a user's check function returned, as problems (None or True: none)."""
    if result is None or result is True:
        return []
    if result is False:
        return ["it returned False"]
    if isinstance(result, str):
        return [result] if result else []
    if isinstance(result, (list, tuple)):
        return [str(item) for item in result]
    return [f"it returned {result!r} (return nothing when the state is right, else a problem "
            "text or a list of them)"]


CHECK_EXTRAS = ("start", "answer", "calls")
"""What a check function may ask for beside the state, by naming a parameter so: the state at
the start of the run, the answer of the turn the state is read after, and the run's tool calls
up to then (``{"name", "args", "output", "error"}`` each, in the order they started)."""


def _extras(check: Callable[..., Any], offered: Mapping[str, Any]) -> dict[str, Any]:
    """The extras ``check``'s signature names (a function taking ``**kwargs`` gets them all)."""
    try:
        parameters = inspect.signature(check).parameters
    except (TypeError, ValueError):  # a builtin without a signature: the state only
        return {}
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return dict(offered)
    return {name: value for name, value in offered.items() if name in parameters}


def _checked(check: Callable[..., Any], state: Any, offered: Mapping[str, Any]) -> list[str]:
    try:
        result = check(copy.deepcopy(state), **copy.deepcopy(_extras(check, offered)))
    except AssertionError as exc:
        return [str(exc) or "an assertion failed"]
    except Exception as exc:  # noqa: BLE001 (a user's function may raise anything)
        return [f"it raised {type(exc).__name__}: {exc}"]
    return _verdict_of(result)


def state_problems(trace: Trace, expect: StateExpect,
                   checks: Mapping[str, Callable[[Any], Any]]) -> list[str]:
    """How the world the trace recorded falls short of ``expect`` (empty: it holds); the
    last problem ends with what changed since the start of the run."""
    if trace.world is None or not trace.turns:
        return []  # no world was recorded (no turn ran: reported as such)
    number = expect.turn or len(trace.turns)
    if number > len(trace.turns):
        return []  # the run stopped before that turn: reported as such
    record = trace.turns[number - 1].world or {}
    state, changes = record.get("state"), list(record.get("changes", []))
    start = trace.world.get("start")
    label = f"state after turn {number}" if expect.turn else "state after the run"
    problems = []
    for path, match in expect.paths.items():
        parts = state_path(path)
        value = value_at(state, parts)
        if not matches_state(match, value, value_at(start, parts)):
            was = ("" if "unchanged" not in match.model_fields_set
                   else f" (at the start: {shown_value(value_at(start, parts), 200)})")
            problems.append(f"{label}: {path}: expected {match.describe()}, got "
                            f"{shown_value(value, 200)}{was}")
    if expect.unchanged and changes:
        problems.append(f"{label}: expected the world unchanged, and "
                        f"{len(changes)} place{' was' if len(changes) == 1 else 's were'} "
                        "changed")
    if expect.check is not None and expect.check in checks:
        turns = trace.turns[:number]
        offered = {"start": start, "answer": turns[-1].response,
                   "calls": [{"name": call.name, "args": call.args, "output": call.output,
                              "error": call.is_error}
                             for turn in turns for call in turn.tool_calls]}
        problems += [f"{label}: check {expect.check}: {text}"
                     for text in _checked(checks[expect.check], state, offered)]
    if problems:
        shown = "\n".join(f"    {line}" for line in changes) or "    (nothing)"
        problems[-1] += f"\n  what changed since the start of the run:\n{shown}"
    return problems
