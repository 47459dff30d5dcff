"""The agentkit pytest plugin (entry point ``pytest11``).

* Scenario files (``*.yaml`` under a ``scenarios/`` folder) are collected as test items, one
  per scenario × agent type. Each runs the scenario, checks its expectations and compares its
  trace with a syrupy snapshot (``__snapshots__/<scenario>/<agent type>.json``); a changed
  trace fails with a step-aligned diff, and ``--snapshot-update`` accepts it.
* ``--record-mode`` (none | once | new_episodes | all | rewrite) records scenarios that have a
  ``recording:`` against a live model (``--agentkit-model``, ``--agentkit-base-url``).
* Network guard: unless recording is asked for, or the test is marked ``live``, a test that
  opens a network connection (a live model) fails with a message saying how to record.
* Teardown check: a strict ``ScriptedLLM`` created in a test that passed must have used its
  whole script (``@pytest.mark.agentkit_allow_unused_script`` opts out).
* Fixtures: ``scripted_llm`` (a ScriptedLLM factory), ``run_scenario`` (run a scenario file
  from a test, honouring ``--record-mode``), ``agentkit_record_mode``.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from agentkit.llms.cassette import RECORD_MODES
from agentkit.llms.mock import ScriptedLLM, track_scripts
from agentkit.scenario.agents import AGENT_TYPES
from agentkit.scenario.loader import ScenarioError, load_scenario
from agentkit.scenario.model import Scenario
from agentkit.scenario.runner import ScenarioResult
from agentkit.scenario.runner import run_scenario as _run_scenario
from agentkit.scenario.snapshot import TraceSnapshotExtension

__all__ = ["LiveModelBlockedError", "ScenarioFile", "ScenarioItem", "ScenarioFailure"]

DEFAULT_RECORD_MODEL = "gpt-4o-mini"


class LiveModelBlockedError(ConnectionError):
    """A test tried to reach the network (a live model) while it is blocked."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentkit", "agentkit scenarios and recordings")
    group.addoption("--record-mode", choices=RECORD_MODES, default="none",
                    help="how scenarios with a `recording:` use their cassette: none (replay "
                         "only, the default), once, new_episodes, all, rewrite. Anything but "
                         "`none` talks to a live model.")
    group.addoption("--agentkit-model", default=None,
                    help="model to record with (default: $AGENTKIT_MODEL or gpt-4o-mini)")
    group.addoption("--agentkit-base-url", default=None,
                    help="OpenAI-compatible base URL to record against (default: "
                         "$OPENAI_BASE_URL or OpenAI)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "live: the test talks to a live model (network allowed)")
    config.addinivalue_line("markers", "agentkit_allow_unused_script: do not fail the test "
                                       "when a strict ScriptedLLM has unused replies")


# ---------------------------------------------------------------- reports for fixtures
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    setattr(item, f"_agentkit_{report.when}_report", report)


def _failed_before_teardown(item: pytest.Item) -> bool:
    return any(getattr(getattr(item, f"_agentkit_{when}_report", None), "failed", False)
               for when in ("setup", "call"))


# ---------------------------------------------------------------- network guard
def _recording(config: pytest.Config) -> bool:
    return config.getoption("record_mode") != "none"


@contextmanager
def _block_network(test: str, attempts: list[str]) -> Iterator[None]:
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            target = f"{address[0]}:{address[1]}" if isinstance(address, tuple) else str(address)
            attempts.append(target)
            raise LiveModelBlockedError(
                f"{test} tried to connect to {target}: agentkit blocks the network in tests so "
                "no test reaches a live model by accident. Record it once with "
                "--record-mode=once (then it replays offline), or mark the test "
                "@pytest.mark.live.")

    def connect(sock: socket.socket, address: Any) -> None:
        check(sock, address)
        original_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        check(sock, address)
        return original_connect_ex(sock, address)

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    try:
        yield
    finally:
        socket.socket.connect = original_connect  # type: ignore[method-assign]
        socket.socket.connect_ex = original_connect_ex  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _agentkit_network_guard(request: pytest.FixtureRequest) -> Iterator[None]:
    if _recording(request.config) or request.node.get_closest_marker("live"):
        yield
        return
    attempts: list[str] = []
    with _block_network(request.node.nodeid, attempts):
        yield
    if attempts and not _failed_before_teardown(request.node):
        pytest.fail(f"{request.node.nodeid} tried to reach the network ({', '.join(attempts)}); "
                    "record with --record-mode=once or mark the test @pytest.mark.live",
                    pytrace=False)


# ---------------------------------------------------------------- unused script check
@pytest.fixture(autouse=True)
def _agentkit_unused_script_check(request: pytest.FixtureRequest) -> Iterator[None]:
    with track_scripts() as scripts:
        yield
    if request.node.get_closest_marker("agentkit_allow_unused_script"):
        return
    if _failed_before_teardown(request.node):
        return
    problems = []
    for llm in scripts:
        try:
            llm.assert_complete()
        except AssertionError as exc:
            problems.append(str(exc))
    if problems:
        pytest.fail("\n".join(problems) + "\n(strict=False or "
                    "@pytest.mark.agentkit_allow_unused_script allows unused replies)",
                    pytrace=False)


# ---------------------------------------------------------------- fixtures
@pytest.fixture
def agentkit_record_mode(request: pytest.FixtureRequest) -> str:
    return str(request.config.getoption("record_mode"))


@pytest.fixture
def scripted_llm() -> Callable[..., ScriptedLLM]:
    """``scripted_llm([...replies], **options)``: a ScriptedLLM checked at teardown."""
    return ScriptedLLM


def _live_llm(config: pytest.Config) -> Any:
    from agentkit.llms.openai import OpenAI

    model = (config.getoption("agentkit_model") or os.environ.get("AGENTKIT_MODEL")
             or DEFAULT_RECORD_MODEL)
    base_url = config.getoption("agentkit_base_url") or os.environ.get("OPENAI_BASE_URL")
    return OpenAI(model=model, base_url=base_url)


def _run(config: pytest.Config, scenario: Scenario | str | Path,
         agent_type: str | None = None) -> ScenarioResult:
    mode = config.getoption("record_mode")
    if mode != "none":
        loaded = scenario if isinstance(scenario, Scenario) else load_scenario(
            scenario, agent_types=AGENT_TYPES)
        name = agent_type or next(iter(loaded.agents))
        if loaded.agents[name].recording is not None:
            return _run_scenario(loaded, name, record=(_live_llm(config), mode))
        scenario = loaded
    return _run_scenario(scenario, agent_type)


@pytest.fixture
def run_scenario(request: pytest.FixtureRequest) -> Callable[..., ScenarioResult]:
    """``run_scenario(path, agent_type=None) -> ScenarioResult`` (honours --record-mode)."""

    def run(scenario: Scenario | str | Path, agent_type: str | None = None) -> ScenarioResult:
        return _run(request.config, scenario, agent_type)

    return run


# ---------------------------------------------------------------- scenario collection
def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if (file_path.suffix in (".yaml", ".yml") and "scenarios" in file_path.parts
            and "__snapshots__" not in file_path.parts and "cassettes" not in file_path.parts):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFailure(AssertionError):
    """A scenario item failed: unmet expectations and/or a changed trace."""


def _scenario_test(scenario: Scenario, agent_type: str) -> Callable[..., None]:
    def test(request: pytest.FixtureRequest, snapshot: Any) -> None:
        result = _run(request.config, scenario, agent_type)
        problems = [f"- {p}" for p in result.problems]
        trace_snapshot = snapshot.use_extension(TraceSnapshotExtension)
        if not trace_snapshot == result.trace:  # noqa: SIM201 - syrupy compares on ==
            problems.append("- the trace differs from its snapshot "
                            "(accept the change with --snapshot-update):")
            problems += [f"  {line}" for line in trace_snapshot.get_assert_diff()]
        if problems:
            raise ScenarioFailure(f"scenario {scenario.name} [{agent_type}] failed:\n"
                                  + "\n".join(problems))

    test.__module__ = "agentkit.scenarios"
    test.__name__ = agent_type
    test.__doc__ = scenario.description or None
    return test


class ScenarioFile(pytest.File):
    """A scenario file: one test per agent type it declares."""

    def collect(self) -> Iterator[pytest.Item]:
        try:
            scenario = load_scenario(self.path, agent_types=AGENT_TYPES)
        except ScenarioError as exc:
            raise self.CollectError(str(exc)) from None
        for agent_type in scenario.agents:
            item = ScenarioItem.from_parent(self, name=agent_type,
                                            callobj=_scenario_test(scenario, agent_type))
            item.extra_keyword_matches.update(scenario.tags)
            yield item

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, self.CollectError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class ScenarioItem(pytest.Function):
    """One scenario × agent type (a Function, so fixtures such as syrupy's work)."""

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> Any:
        if isinstance(excinfo.value, ScenarioFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario {self.path.stem} [{self.name}]"
