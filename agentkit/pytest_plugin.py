"""The agentkit pytest plugin (entry point ``pytest11``).

* Scenario files (``*.yaml`` under a ``scenarios/`` folder of the project) are collected as test
  items, one per scenario × agent type (``scenarios/x.yaml::react``; its tags work with ``-k``).
  Each runs the scenario, checks its expectations and compares its trace with a syrupy
  snapshot (``scenarios/__snapshots__/<file stem>/<agent type>.json``); a changed trace fails
  with a step-aligned diff, and ``--snapshot-update`` accepts it.
* ``--record-mode`` (none | once | new_episodes | all | rewrite) records scenarios that have a
  ``recording:`` against a live model (``--agentkit-model``, ``--agentkit-base-url``) with
  :func:`agentkit.scenario.record.record_scenario`, as ``agentkit record`` does: cassette and
  recorded trace are written together, and only when the recording is good (a failed or
  unreplayable one writes nothing and fails the item). The result of a recording run is that
  of a replay of the fresh cassette, and a missing snapshot is created from it (no
  ``--snapshot-update`` needed): what every later offline run reproduces.
* Network guard: unless recording is asked for, or the test is marked ``live``, a test that
  opens a TCP connection (a live model) fails with a message saying how to record; local
  sockets (``AF_UNIX``, ``socketpair``) are not affected. A test marked
  ``agentkit_allow_loopback`` may connect to loopback addresses (127.0.0.0/8, ::1), e.g. to a
  local HTTP server it starts itself; every other host stays blocked.
* Teardown check: a strict ``ScriptedLLM`` created in a test that passed must have used its
  whole script (``@pytest.mark.agentkit_allow_unused_script`` opts out).
* Virtual time: ``@pytest.mark.agentkit_virtual_time`` (optionally ``(seed=N)``) runs the test
  inside :func:`agentkit.core.sim.simulation` (a fresh clock, seeded ids, virtual waits); an
  ``async def`` test then runs on a fresh virtual-time loop (:func:`agentkit.core.sim.run`),
  so concurrent simulated calls overlap as in the sync API. The plugin runs such a test
  itself, with or without pytest-asyncio (in any mode: an item pytest-asyncio prepared is
  run from its original coroutine function); its async fixtures, if any, stay on
  pytest-asyncio's own loop.
* Fixtures: ``scripted_llm`` (a ScriptedLLM factory), ``run_scenario`` (run a scenario file
  from a test, honouring ``--record-mode``), ``agentkit_record_mode``.
"""

from __future__ import annotations

import inspect
import ipaddress
import os
import socket
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import DiffMode

from agentkit.core.sim import run, simulation
from agentkit.llms.cassette import RECORD_MODES, CassetteError
from agentkit.llms.errors import LLMError
from agentkit.llms.mock import ScriptedLLM, track_scripts
from agentkit.scenario.loader import ScenarioError
from agentkit.scenario.model import Scenario
from agentkit.scenario.record import cassette_miss, record_scenario
from agentkit.scenario.runner import ScenarioResult, cassette_path, load
from agentkit.scenario.runner import run_scenario as _run_scenario
from agentkit.scenario.snapshot import TraceSnapshotExtension

__all__ = ["LiveModelBlockedError", "RecordingFailed", "ScenarioFile", "ScenarioItem",
           "ScenarioFailure"]

DEFAULT_RECORD_MODEL = "gpt-4o-mini"
_SKIPPED_FOLDERS = frozenset({"__snapshots__", "cassettes"})


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
    config.addinivalue_line("markers", "agentkit_allow_loopback: the network guard lets the "
                                       "test connect to loopback addresses (a local server)")
    config.addinivalue_line("markers", "agentkit_virtual_time(seed=0): run the test in an "
                                       "agentkit simulation; an async def test runs on a "
                                       "virtual-time loop, so simulated calls overlap")


# ---------------------------------------------------------------- virtual time
def _virtual_time_seed(item: pytest.Item) -> int | str | None:
    """The marker's seed (None: the test is not marked)."""
    marker = item.get_closest_marker("agentkit_virtual_time")
    if marker is None:
        return None
    if marker.args[1:] or set(marker.kwargs) - {"seed"}:
        pytest.fail(f"{item.nodeid}: agentkit_virtual_time takes one argument, seed (e.g. "
                    "@pytest.mark.agentkit_virtual_time(seed=1))", pytrace=False)
    seed = marker.kwargs.get("seed", marker.args[0] if marker.args else 0)
    if not isinstance(seed, int | str):
        pytest.fail(f"{item.nodeid}: agentkit_virtual_time seed must be an int or a str, got "
                    f"{type(seed).__name__}", pytrace=False)
    return seed


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    seed = _virtual_time_seed(item)
    if seed is None:
        return (yield)
    with simulation(seed):
        return (yield)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    if pyfuncitem.get_closest_marker("agentkit_virtual_time") is None:
        return None
    # pytest-asyncio swaps in a sync wrapper of the test (functools.wraps): run the coroutine
    # function it wraps on our loop instead of its runner's
    test = inspect.unwrap(pyfuncitem.obj, stop=inspect.iscoroutinefunction)
    if not inspect.iscoroutinefunction(test):
        return None  # a sync test: pytest calls it, inside the simulation
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    run(test(**args))
    return True


# ---------------------------------------------------------------- reports for fixtures
_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()
_ATTEMPTS = pytest.StashKey[list[str]]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item,
                              call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    item.stash.setdefault(_REPORTS, {})[report.when] = report
    attempts = item.stash.get(_ATTEMPTS, [])
    if (report.when == "call" and report.failed and attempts and call.excinfo is not None
            and not call.excinfo.errisinstance(LiveModelBlockedError)):
        # the blocked connection surfaced as another error (an SDK's "connection failed"):
        # say why it failed and how to record
        _add_section(report, "agentkit network guard", _blocked(item.nodeid, attempts))
    return report


def _add_section(report: pytest.TestReport, title: str, text: str) -> None:
    if hasattr(report.longrepr, "addsection"):
        report.longrepr.addsection(title, text)  # type: ignore[union-attr]
    else:
        report.sections.append((title, text))


def _call_passed(item: pytest.Item) -> bool:
    """Whether the test body ran and passed (not failed, skipped or xfailed)."""
    report = item.stash.get(_REPORTS, {}).get("call")
    return report is not None and report.passed and not hasattr(report, "wasxfail")


# ---------------------------------------------------------------- network guard
def _recording(config: pytest.Config) -> bool:
    return config.getoption("record_mode") != "none"


def _blocked(test: str, targets: list[str]) -> str:
    return (f"{test} tried to connect to {', '.join(targets)}: agentkit blocks the network in "
            "tests so no test reaches a live model by accident. Record it once with "
            "--record-mode=once (then it replays offline), or mark the test @pytest.mark.live.")


def _is_loopback(address: Any) -> bool:
    host = address[0] if isinstance(address, tuple) and address else address
    try:
        return ipaddress.ip_address(str(host).split("%", 1)[0]).is_loopback
    except ValueError:
        return False


@contextmanager
def _block_network(test: str, attempts: list[str], *, allow_loopback: bool = False
                   ) -> Iterator[None]:
    original_connect = socket.socket.connect
    original_connect_ex = socket.socket.connect_ex

    def check(sock: socket.socket, address: Any) -> None:
        __tracebackhide__ = True
        if allow_loopback and _is_loopback(address):
            return
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            target = f"{address[0]}:{address[1]}" if isinstance(address, tuple) else str(address)
            attempts.append(target)
            raise LiveModelBlockedError(_blocked(test, [target]))

    def connect(sock: socket.socket, address: Any) -> None:
        __tracebackhide__ = True
        check(sock, address)
        original_connect(sock, address)

    def connect_ex(sock: socket.socket, address: Any) -> int:
        __tracebackhide__ = True
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
    attempts = request.node.stash[_ATTEMPTS] = []
    loopback = request.node.get_closest_marker("agentkit_allow_loopback") is not None
    with _block_network(request.node.nodeid, attempts, allow_loopback=loopback):
        yield
    if attempts and _call_passed(request.node):
        # the test swallowed the error; it still must not pass
        pytest.fail(_blocked(request.node.nodeid, attempts), pytrace=False)


# ---------------------------------------------------------------- unused script check
@pytest.fixture(autouse=True)
def _agentkit_unused_script_check(request: pytest.FixtureRequest) -> Iterator[None]:
    with track_scripts() as scripts:
        yield
    if request.node.get_closest_marker("agentkit_allow_unused_script"):
        return
    if not _call_passed(request.node):
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
    """The ``--record-mode`` of this session (``none`` unless recording)."""
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


class RecordingFailed(Exception):
    """A ``--record-mode`` recording was not kept; the message says why."""


def _run(config: pytest.Config, scenario: Scenario | str | Path,
         agent_type: str | None = None) -> ScenarioResult:
    """Run one scenario × agent type; with a record mode, record it first (the same
    :func:`~agentkit.scenario.record.record_scenario` as ``agentkit record``: cassette and
    trace written together, only when the recording replays) and return the replay."""
    loaded = load(scenario)
    mode = config.getoption("record_mode")
    name = agent_type or (next(iter(loaded.agents)) if len(loaded.agents) == 1 else None)
    if mode != "none" and name in loaded.agents and loaded.agents[name].recording is not None:
        recording = record_scenario(loaded, name, _live_llm(config), mode)
        if not recording.ok:
            raise RecordingFailed("\n".join(recording.problems) + f"\n(nothing written: "
                                  f"{recording.cassette} and {recording.trace} are as they "
                                  "were)")
        assert recording.replay is not None
        return recording.replay
    return _run_scenario(loaded, agent_type)


@pytest.fixture
def run_scenario(request: pytest.FixtureRequest) -> Callable[..., ScenarioResult]:
    """``run_scenario(path, agent_type=None) -> ScenarioResult`` (honours --record-mode)."""

    def run(scenario: Scenario | str | Path, agent_type: str | None = None) -> ScenarioResult:
        return _run(request.config, scenario, agent_type)

    return run


# ---------------------------------------------------------------- scenario collection
def _is_scenario_file(file_path: Path, root: Path) -> bool:
    """A YAML file in a ``scenarios`` folder of the project (folders above the rootdir do not
    count: a checkout under ``~/scenarios/`` must not turn every YAML file into a scenario)."""
    if file_path.suffix not in (".yaml", ".yml"):
        return False
    try:
        folders = (root.name, *file_path.relative_to(root).parts[:-1])
    except ValueError:
        folders = file_path.parts[:-1]
    return "scenarios" in folders and not _SKIPPED_FOLDERS.intersection(folders)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if _is_scenario_file(file_path, parent.config.rootpath):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFailure(AssertionError):
    """A scenario item failed: unmet expectations and/or a changed trace."""


def _cannot_run(exc: Exception, scenario: Scenario, agent_type: str, nodeid: str) -> str:
    spec = scenario.agents[agent_type]
    if isinstance(exc, CassetteError) and spec.recording is not None:
        cassette = cassette_path(scenario, agent_type)
        if not cassette.exists():
            return (f"{scenario.path}: agents.{agent_type}.recording: no cassette at "
                    f"{cassette}; record it once with `pytest --record-mode=once {nodeid}` "
                    "(then it replays offline)")
    return str(exc)


def _snapshot_problems(snapshot: Any, trace: Any, root: Path, *, create: bool) -> list[str]:
    """What is wrong with ``trace`` against its snapshot; ``create`` writes a missing one
    (a recording run: its trace is what later runs must reproduce)."""
    trace_snapshot = snapshot.use_extension(TraceSnapshotExtension)
    trace_snapshot.update_new_snapshots_only = create
    if trace_snapshot == trace:
        return []
    if trace_snapshot.get_assert_diff(diff_mode=DiffMode.DISABLED):  # only "does not exist"
        location = Path(trace_snapshot.extension.get_location(
            test_location=trace_snapshot.test_location, index=0))
        if location.is_relative_to(root):
            location = location.relative_to(root)
        return [f"- no snapshot of this trace yet ({location}); create it with "
                "--snapshot-update"]
    return (["- the trace differs from its snapshot (accept the change with --snapshot-update):"]
            + [f"  {line}" for line in trace_snapshot.get_assert_diff()])


def _leave_snapshot(snapshot: Any, trace: Any) -> None:
    """Leave the snapshot as it is -- never written from a run that stopped on an error --
    while syrupy still counts it as used (else ``--snapshot-update`` would delete it)."""
    kept = snapshot.use_extension(TraceSnapshotExtension)
    kept.update_snapshots = False
    kept == trace  # noqa: B015  (the comparison registers the snapshot; its result is moot)


def _stopped(title: str, result: ScenarioResult, nodeid: str) -> str:
    """The root cause alone, briefly: the error the run stopped on and how to fix it; the
    expectations and the trace diff that follow from it would only bury it."""
    error = result.stopped_by or ""
    turn = next(i for i, t in enumerate(result.trace.turns, start=1) if t.error)
    lines = [f"{title} failed: the run stopped on an error in turn {turn}:", error]
    if cassette_miss(result) is not None:
        lines.append(f"to re-record: pytest --record-mode=rewrite '{nodeid}'")
    lines.append("(expectations and the snapshot are checked once the run gets through)")
    return "\n".join(lines)


def _scenario_test(scenario: Scenario, agent_type: str) -> Callable[..., None]:
    def test(request: pytest.FixtureRequest, snapshot: Any) -> None:
        title = f"scenario {scenario.name} [{agent_type}]"
        try:
            result = _run(request.config, scenario, agent_type)
        except RecordingFailed as exc:
            raise ScenarioFailure(f"{title} could not be recorded:\n{exc}") from None
        except (ScenarioError, CassetteError, LLMError) as exc:
            raise ScenarioFailure(f"{title} could not run:\n"
                                  f"{_cannot_run(exc, scenario, agent_type, request.node.nodeid)}"
                                  ) from None
        if result.stopped_by is not None:
            _leave_snapshot(snapshot, result.trace)
            raise ScenarioFailure(_stopped(title, result, request.node.nodeid))
        problems = [f"- {p}" for p in result.problems]
        problems += _snapshot_problems(snapshot, result.trace, request.config.rootpath,
                                       create=_recording(request.config))
        if problems:
            raise ScenarioFailure(f"{title} failed:\n" + "\n".join(problems))

    test.__module__ = "agentkit.scenarios"
    test.__name__ = agent_type
    test.__doc__ = scenario.description or None
    return test


class ScenarioFile(pytest.File):
    """A scenario file: one test per agent type it declares."""

    def collect(self) -> Iterator[pytest.Item]:
        try:
            scenario = load(self.path)
        except ScenarioError as exc:
            raise self.CollectError(str(exc)) from None
        for agent_type in scenario.agents:
            item = ScenarioItem.from_parent(self, name=agent_type,
                                            callobj=_scenario_test(scenario, agent_type))
            item.extra_keyword_matches.update(scenario.tags)
            yield item


class ScenarioItem(pytest.Function):
    """One scenario × agent type (a Function, so fixtures such as syrupy's work)."""

    def repr_failure(  # type: ignore[override]
            self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:
        if isinstance(excinfo.value, ScenarioFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"scenario {self.path.stem} [{self.name}]"
