"""The world of one run: the state a scenario's tools act on (``world:``).

A factory's world (``world: {ref: ...}``) is built fresh for each run, from ``data``; state
the project keeps already (``world: {object: ...}``, a module-level object) is copied before
the run and put back after it, so the next run starts where this one did. Its state is read
as plain data (:func:`agentkit.trace.state_data`) before the agent is built -- a factory's
side effect is the agent's -- and after every turn, into the trace.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentkit.harness._world import NO_WORLD, resolve_ref
from agentkit.scenario._loader import ScenarioError
from agentkit.scenario._model import Expect, Scenario, WorldSpec
from agentkit.trace import state_changes, state_data

__all__ = ["RunWorld", "open_world", "state_checks", "StateCheck"]

StateCheck = Callable[[Any], Any]
"""A user's check of the world (``expect.state.check``): given its state as data, it returns
nothing (or True) when it holds, else a problem (a string), problems (a list of them) or
False; an ``AssertionError`` it raises is a problem too."""


@dataclass
class RunWorld:
    """The world of a run: the object the tools get (``value``), read through ``read`` (an
    object of the project's is looked up again: a run may have rebound its name), and its
    state at the start."""

    value: Any
    read: Callable[[], Any]
    start: Any = None

    def begin(self) -> dict[str, Any]:
        """Read the state the run starts from (before the agent is built): the trace's
        ``world``."""
        self.start = state_data(self.read())
        return {"start": self.start}

    def after_turn(self) -> dict[str, Any]:
        """The state now and its changes since the start: a turn's ``world`` in the trace."""
        state = state_data(self.read())
        return {"state": state, "changes": state_changes(self.start, state)}


def _search_from(scenario: Scenario) -> Path | None:
    return Path(scenario.path).parent if scenario.path else None


@contextmanager
def open_world(scenario: Scenario, given: Any = NO_WORLD) -> Iterator[RunWorld | None]:
    """The run's world (None for a scenario without ``world:``): ``given`` when a test passes
    its own (``run_scenario(..., world=...)``), else the factory's or the project's object,
    which is restored when the run ends, however it ends. A world that cannot be built is a
    :class:`ScenarioError` at its field."""
    spec = scenario.world
    if spec is None:
        if given is not NO_WORLD:
            raise ScenarioError(f"{scenario.where()}: world= is given, and scenario "
                                f"`{scenario.name}` declares no `world:` for it; add `world: "
                                "{ref: <your factory>}` to the scenario")
        yield None
        return
    if given is not NO_WORLD:
        yield RunWorld(given, lambda: given)
        return
    if spec.ref is not None:
        value = _built(scenario, spec)
        yield RunWorld(value, lambda: value)
        return
    ref = spec.source
    value = _resolved(scenario, ref)
    try:
        saved = copy.deepcopy(value)
    except Exception as exc:  # noqa: BLE001 (a user's object may refuse to be copied)
        raise ScenarioError(f"{scenario.where('world', 'object')}: world.object: `{ref}` "
                            f"cannot be copied to be restored after the run: "
                            f"{type(exc).__name__}: {exc}; give it an agentkit_state() or "
                            "use a factory (`ref:`) that builds a fresh world") from None
    try:
        yield RunWorld(value, lambda: _resolved(scenario, ref))
    finally:
        _restore(ref, value, saved)


def _built(scenario: Scenario, spec: WorldSpec) -> Any:
    factory = _resolved(scenario, spec.source, "ref")
    try:
        return factory(**copy.deepcopy(spec.data or {}))
    except Exception as exc:  # noqa: BLE001 (a user's factory may raise anything)
        raise ScenarioError(f"{scenario.where('world', 'ref')}: world.ref: the factory "
                            f"`{spec.source}` raised {type(exc).__name__}: {exc}"
                            + (" (called with `data` as keyword arguments)" if spec.data
                               else "")) from None


def _resolved(scenario: Scenario, ref: str, field: str = "object") -> Any:
    try:
        return resolve_ref(ref, _search_from(scenario))
    except Exception as exc:  # noqa: BLE001 (importing runs the module's code)
        raise ScenarioError(f"{scenario.where('world', field)}: world.{field}: cannot use "
                            f"`{ref}`: {exc}") from None


def _restore(ref: str, value: Any, saved: Any) -> None:
    """Put ``saved`` back into the project's object in place (whoever holds it sees it), and
    the object back under its name (a run may have rebound it: a counter, a text)."""
    if isinstance(value, dict):
        value.clear()
        value.update(saved)
    elif isinstance(value, list):
        value[:] = saved
    elif isinstance(value, set):
        value.clear()
        value.update(saved)
    elif isinstance(getattr(value, "__dict__", None), dict) and not isinstance(value, type):
        vars(value).clear()
        vars(value).update(vars(saved))
    module_name, _, attribute = ref.partition(":")
    owner: Any = importlib.import_module(module_name)
    *parents, name = attribute.split(".")
    for part in parents:
        owner = getattr(owner, part)
    setattr(owner, name, value)


def state_checks(scenario: Scenario, expect: Expect, place: tuple[str, ...]) -> dict[str, StateCheck]:
    """The user's check function of ``expect.state`` (by its ref), imported; one that cannot
    be is a :class:`ScenarioError` at ``place`` (where that ``expect`` is written)."""
    state = expect.state
    if state is None or state.check is None:
        return {}
    try:
        check = resolve_ref(state.check, _search_from(scenario))
    except Exception as exc:  # noqa: BLE001 (importing runs the module's code)
        raise ScenarioError(f"{scenario.where(*place, 'state', 'check')}: "
                            f"{'.'.join(place)}.state.check: cannot use `{state.check}`: "
                            f"{exc}") from None
    if not callable(check):
        raise ScenarioError(f"{scenario.where(*place, 'state', 'check')}: "
                            f"{'.'.join(place)}.state.check: `{state.check}` is a "
                            f"{type(check).__name__}, not a function of the world's state")
    return {state.check: check}
