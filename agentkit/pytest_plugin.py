"""The agentkit pytest plugin (entry point ``pytest11``). Installing agentkit changes nothing in
a project's other tests: everything here is opt-in, VCR-style.

* **Scenario files** are collected as test items, one per scenario × agent type
  (``scenarios/x.yaml::react``; its tags work with ``-k``), from the folders the project
  configures -- the ini option ``agentkit_scenarios``, else ``scenarios`` under
  ``[tool.agentkit]`` in pyproject.toml, else ``scenarios/`` at the rootdir -- and only YAML
  files that are agentkit's (:func:`agentkit.scenario.loader.is_scenario_file`): any other
  YAML file there is left alone. Each item runs the scenario, checks its expectations and
  compares its trace with a syrupy snapshot (``__snapshots__/<file stem>/<agent type>.json``
  beside the file); ``--snapshot-update`` accepts a change.
* **Agent types** the project declares in ``[tool.agentkit.agent_types]`` are available (as
  to the ``agentkit`` command: :mod:`agentkit.scenario.project`), and so are those of
  installed packages' ``agentkit.agent_types`` entry points and of ``register_agent_type``
  in a conftest.py.
* ``--record-mode`` (none | once | new_episodes | all | rewrite) records against a live model:
  the ``live_llm`` fixture (by default the OpenAI backend with ``--agentkit-model`` and
  ``--agentkit-base-url``; define your own ``live_llm`` fixture to record with another
  model). Scenario items with a ``recording:`` record with
  :func:`agentkit.scenario.record.record_scenario`, as ``agentkit record`` does: cassette and
  recorded trace written together, only when the recording is good, and a missing snapshot is
  created from it; the scenario's LLM judges record through the ``judge_llm`` fixture, its
  simulated user through ``live_llm``. A plain test takes its LLM from the ``agentkit_llm``
  fixture: its own cassette (see :mod:`agentkit._pytest.cassettes`), recorded through
  ``live_llm`` and written only if the test passes, replayed offline afterwards.
* **Network guard**: in a guarded test, opening a TCP connection (a live model, by accident)
  fails with a message saying how to record instead. Guarded are: every test with
  ``--block-network`` or the ini option ``agentkit_block_network = true``; scenario items;
  tests using ``agentkit_llm``, ``run_scenario``, ``scripted_llm`` or
  ``agentkit_record_mode``, or marked ``agentkit_cassette``. Never guarded: recording runs
  (``--record-mode`` other than none) and tests marked ``live``. ``--allowed-hosts`` (and the
  ini option ``agentkit_allowed_hosts``) lets guarded tests reach the hosts given (names,
  addresses, networks; ``localhost`` means every loopback address); a test marked
  ``agentkit_allow_loopback`` may reach loopback addresses (a local server it starts).
* Teardown check: a strict ``ScriptedLLM`` created in a test that passed must have used its
  whole script, and a replayed ``agentkit_llm`` cassette all its exchanges
  (``@pytest.mark.agentkit_allow_unused_script`` opts out).
* Virtual time: ``@pytest.mark.agentkit_virtual_time`` (optionally ``(seed=N)``) runs the test
  inside :func:`agentkit.core.sim.simulation` (a fresh clock, seeded ids, virtual waits); an
  ``async def`` test then runs on a fresh virtual-time loop (:func:`agentkit.core.sim.run`),
  so concurrent simulated calls overlap as in the sync API. The plugin runs such a test
  itself, with or without pytest-asyncio (in any mode: an item pytest-asyncio prepared is
  run from its original coroutine function); its async fixtures, if any, stay on
  pytest-asyncio's own loop.
"""

from __future__ import annotations

import argparse
import inspect
import os
import warnings
from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import DiffMode

from agentkit._pytest.cassettes import MARKER as CASSETTE_MARKER
from agentkit._pytest.cassettes import cassette_for
from agentkit._pytest.network import AllowedHosts, LiveModelBlockedError, block_network
from agentkit.core.errors import HarnessError
from agentkit.core.sim import run, simulation
from agentkit.harness import Case, CaseResult, run_case
from agentkit.llms.base import LLM
from agentkit.llms.cassette import RECORD_MODES, CassetteError, CassetteLLM
from agentkit.llms.mock import ScriptedLLM, track_scripts
from agentkit.scenario.layout import recording_files, records
from agentkit.scenario.loader import ScenarioError, is_scenario_file
from agentkit.scenario.model import Scenario
from agentkit.scenario.project import Project, ProjectError, activated, read_project
from agentkit.scenario.record import cassette_miss, record_scenario
from agentkit.scenario.roles import RoleModels
from agentkit.scenario.runner import ScenarioResult, execute_scenario, load
from agentkit.scenario.snapshot import TraceSnapshotExtension, Verbatim, stale_snapshot
from agentkit.scenario.trace import SampledTrace, Trace
from agentkit.verdict import Compared, SnapshotSession, judge

__all__ = ["LiveModelBlockedError", "RecordingFailed", "ScenarioFile", "ScenarioItem",
           "ScenarioFailure"]

DEFAULT_RECORD_MODEL = "gpt-4o-mini"
_NOT_SCENARIOS = frozenset({"__snapshots__", "cassettes"})
#: fixtures whose use turns the network guard on for the test
GUARDING_FIXTURES = ("agentkit_llm", "run_scenario", "scripted_llm", "agentkit_record_mode")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("agentkit", "agentkit scenarios, recordings and network guard")
    group.addoption("--record-mode", choices=RECORD_MODES, default="none",
                    help="how scenarios with a `recording:` and tests using `agentkit_llm` use "
                         "their cassette: none (replay only, the default), once, new_episodes, "
                         "all, rewrite. Anything but `none` talks to the live model of the "
                         "`live_llm` fixture.")
    group.addoption("--agentkit-model", default=None,
                    help="model the default `live_llm` records with (default: $AGENTKIT_MODEL "
                         "or gpt-4o-mini)")
    group.addoption("--agentkit-base-url", default=None,
                    help="OpenAI-compatible base URL the default `live_llm` records against "
                         "(default: $OPENAI_BASE_URL or OpenAI)")
    group.addoption("--samples", type=_samples_option, default=None, metavar="N",
                    help="with --record-mode: record N independent runs of each scenario with a "
                         "`recording:` into its cassette (sample i sampled with seed i, added to "
                         "the live model's own seed if it has one); replays always judge every "
                         "recorded sample")
    group.addoption("--agentkit-judge-model", default=None,
                    help="model the default `judge_llm` records LLM judges with when their "
                         "`judge:` names none (default: the `live_llm` model)")
    group.addoption("--block-network", action="store_true", default=False,
                    help="guard every test: opening a network connection fails (agentkit "
                         "guards scenario items and tests using its fixtures anyway)")
    group.addoption("--allowed-hosts", action="append", default=[], metavar="HOSTS",
                    help="comma-separated hosts guarded tests may connect to: names, "
                         "addresses, networks (10.0.0.0/8); `localhost` allows every loopback "
                         "address")
    group.addoption("--agentkit-otel-out", metavar="PATH", default=None,
                    help="write every scenario item's run, and every plain test's agent "
                         "calls, as OpenTelemetry spans (GenAI conventions) to PATH as "
                         "OTLP-JSON (needs pip install 'agentkit[otel]')")
    group.addoption("--agentkit-otlp-endpoint", metavar="URL", default=None,
                    help="send those spans to this OTLP/HTTP traces endpoint (one warning if "
                         "it cannot be reached)")
    group.addoption("--agentkit-otel-content", action="store_true", default=False,
                    help="also export message content, secrets redacted (default: "
                         "$OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)")
    parser.addini("agentkit_block_network", type="bool", default=False,
                  help="guard every test (as --block-network)")
    parser.addini("agentkit_allowed_hosts", type="args", default=[],
                  help="hosts guarded tests may connect to (as --allowed-hosts)")
    parser.addini("agentkit_scenarios", type="paths", default=[],
                  help="folders whose scenario files are collected (default: `scenarios` of "
                       "[tool.agentkit] in pyproject.toml, else scenarios/ at the rootdir)")


def _samples_option(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"give at least 1 sample, got {value}")
    return value


# ---------------------------------------------------------------- the project
_PROJECT = pytest.StashKey[Project]()
_ALLOWED = pytest.StashKey[AllowedHosts]()


def _project_of(config: pytest.Config) -> Project:
    inipath = config.inipath
    pyproject = (inipath if inipath is not None and inipath.name == "pyproject.toml"
                 else config.rootpath / "pyproject.toml")
    if not pyproject.is_file():
        return Project.bare(config.rootpath)
    try:
        return read_project(pyproject)
    except ProjectError as exc:
        raise pytest.UsageError(str(exc)) from None


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> Generator[None, None, None]:
    # before conftest.py files load: their register_agent_type calls override the project's
    # table, and all of it is undone when the session ends (pytester runs sessions in-process)
    project = _project_of(early_config)
    stack = ExitStack()
    stack.enter_context(activated(project))
    early_config.add_cleanup(stack.close)
    early_config.stash[_PROJECT] = project
    return (yield)


def pytest_configure(config: pytest.Config) -> None:
    for line in (
            "live: the test talks to a live model (the network guard lets it)",
            "agentkit_allow_unused_script: do not fail the test when a strict ScriptedLLM or "
            "its agentkit_llm cassette has unused replies",
            "agentkit_allow_loopback: the network guard lets the test connect to loopback "
            "addresses (a local server)",
            f"{CASSETTE_MARKER}(path=None): guard the test's network; `path` names its "
            "agentkit_llm cassette (relative to the test file; default "
            "cassettes/<module>/<test>.yaml)",
            "agentkit_virtual_time(seed=0): run the test in an agentkit simulation; an async "
            "def test runs on a virtual-time loop, so simulated calls overlap"):
        config.addinivalue_line("markers", line)
    config.pluginmanager.register(_SnapshotGuard(config), "agentkit-snapshot-guard")
    config.pluginmanager.register(_DisagreementSummary(), "agentkit-judge-disagreements")
    _configure_otel(config)
    try:
        config.stash[_ALLOWED] = AllowedHosts.parse([*config.getini("agentkit_allowed_hosts"),
                                                     *config.getoption("allowed_hosts")])
    except ValueError as exc:
        raise pytest.UsageError(f"--allowed-hosts / agentkit_allowed_hosts: {exc}") from None


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
_GUARDED = pytest.StashKey[str]()  # why the test's network is guarded


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
        _add_section(report, "agentkit network guard",
                     _blocked(item, attempts, item.stash.get(_GUARDED, None)))
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
    mode: str = config.getoption("record_mode")
    return mode != "none"


def _guard_reason(request: pytest.FixtureRequest) -> str | None:
    """Why this test's network is guarded (None: it is not)."""
    item, config = request.node, request.config
    if _recording(config) or item.get_closest_marker("live"):
        return None
    if config.getoption("block_network"):
        return "--block-network"
    if config.getini("agentkit_block_network"):
        return "agentkit_block_network = true"
    if isinstance(item, ScenarioItem):
        return "a scenario"
    if item.get_closest_marker(CASSETTE_MARKER):
        return f"marked {CASSETTE_MARKER}"
    used = [name for name in GUARDING_FIXTURES if name in request.fixturenames]
    return f"it uses agentkit's `{used[0]}` fixture" if used else None


def _shown(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def _blocked(item: pytest.Item, targets: list[str], reason: str | None = None) -> str:
    """The guard's message: what was blocked and why, then how to record instead and how to
    allow the connection, one line each."""
    why = f" ({reason})" if reason else ""
    lines = [f"{item.nodeid} tried to connect to {', '.join(targets)}: agentkit blocks the "
             f"network in this test{why} so that no test reaches a live model by accident."]
    if isinstance(item, ScenarioItem):
        lines.append(f"- to record the scenario's model once and replay it offline: "
                     f"`pytest --record-mode=once {item.nodeid}`")
    else:
        cassette = _shown(cassette_for(item), item.config.rootpath)
        lines.append("- to record the model once and replay it offline: take the LLM from the "
                     "`agentkit_llm` fixture (it records through your `live_llm` fixture) and "
                     f"run `pytest --record-mode=once {item.nodeid}` (writes {cassette})")
    host = targets[0].rsplit(":", 1)[0].strip("[]")
    lines.append(f"- to let the test reach {host}: pass --allowed-hosts={host}, or mark it "
                 "@pytest.mark.live")
    return "\n".join(lines)


@pytest.fixture(autouse=True)
def _agentkit_network_guard(request: pytest.FixtureRequest) -> Iterator[None]:
    reason = _guard_reason(request)
    if reason is None:
        yield
        return
    item = request.node
    attempts = item.stash[_ATTEMPTS] = []
    item.stash[_GUARDED] = reason
    allowed = request.config.stash[_ALLOWED]
    if item.get_closest_marker("agentkit_allow_loopback"):
        allowed = allowed.with_loopback()

    def refuse(host: str, target: str) -> str:
        attempts.append(target)
        return _blocked(item, [target], reason)

    with block_network(allowed, refuse):
        yield
    if attempts and _call_passed(item):
        # the test swallowed the error; it still must not pass
        pytest.fail(_blocked(item, attempts, reason), pytrace=False)


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


@pytest.fixture
def live_llm(request: pytest.FixtureRequest) -> LLM:
    """The live model recordings go through (only requested with ``--record-mode``): the
    OpenAI backend with ``--agentkit-model`` ($AGENTKIT_MODEL, gpt-4o-mini) at
    ``--agentkit-base-url`` ($OPENAI_BASE_URL, OpenAI). Define a ``live_llm`` fixture in your
    conftest.py to record with your own model."""
    from agentkit.llms.openai import OpenAI

    config = request.config
    model = (config.getoption("agentkit_model") or os.environ.get("AGENTKIT_MODEL")
             or DEFAULT_RECORD_MODEL)
    base_url = config.getoption("agentkit_base_url") or os.environ.get("OPENAI_BASE_URL")
    return OpenAI(model=model, base_url=base_url)


@pytest.fixture
def judge_llm(request: pytest.FixtureRequest) -> Callable[[str | None], LLM]:
    """The live model a scenario's LLM judges record through (only with ``--record-mode``),
    as a function of the model the scenario's ``judge:`` names (None: it names none): that
    model, else ``--agentkit-judge-model``, at ``--agentkit-base-url``, else the ``live_llm``
    model itself. Define a ``judge_llm`` fixture returning an LLM (or such a function) to
    judge with your own model."""
    from agentkit.llms.openai import OpenAI

    config = request.config
    option = config.getoption("agentkit_judge_model")

    def judge(named: str | None) -> LLM:
        if named is not None and option is not None and named != option:
            raise ScenarioError(f"the scenario's judge names model `{named}`, and "
                                f"--agentkit-judge-model says `{option}`: drop the option or "
                                "change the scenario (verdicts are keyed by the judge's model)")
        model = named or option
        if model is None:
            live: LLM = request.getfixturevalue("live_llm")
            return live
        base_url = config.getoption("agentkit_base_url") or os.environ.get("OPENAI_BASE_URL")
        return OpenAI(model=model, base_url=base_url)

    return judge


@pytest.fixture
def agentkit_llm(request: pytest.FixtureRequest) -> Iterator[CassetteLLM]:
    """This test's LLM, VCR-style: its own cassette (``cassettes/<module>/<test>.yaml`` beside
    the test file), replayed offline. With ``--record-mode`` it records through the
    ``live_llm`` fixture and writes the cassette (atomically) only if the test passes: a
    failed test leaves the previous cassette as it was."""
    item = request.node
    path = cassette_for(item)
    shown = _shown(path, request.config.rootpath)
    mode = request.config.getoption("record_mode")
    if mode == "none":
        if not path.exists():
            pytest.fail(f"{item.nodeid}: no cassette at {shown} yet; record it once with "
                        f"`pytest --record-mode=once {item.nodeid}` (agentkit_llm records "
                        "through your `live_llm` fixture); then the test replays offline",
                        pytrace=False)
        try:
            replay = CassetteLLM(path)
        except CassetteError as exc:
            pytest.fail(str(exc), pytrace=False)
        yield replay
        if (replay.unused and _call_passed(item)
                and not item.get_closest_marker("agentkit_allow_unused_script")):
            pytest.fail(f"{shown}: {replay.unused} recorded exchange(s) were not replayed: the "
                        "test now makes fewer LLM calls than when it was recorded. Re-record "
                        f"with `pytest --record-mode=rewrite {item.nodeid}` "
                        "(@pytest.mark.agentkit_allow_unused_script allows it)", pytrace=False)
        return
    recorder = CassetteLLM(path, mode=mode, llm=request.getfixturevalue("live_llm"),
                           autosave=False, test=item.nodeid)
    yield recorder
    if _call_passed(item):
        recorder.save()


class RecordingFailed(Exception):
    """A ``--record-mode`` recording was not kept; the message says why."""


def _record_first(request: pytest.FixtureRequest, scenario: Scenario,
                  agent_type: str | None, state: Mapping[str, Any] | None) -> None:
    """With a record mode, record one scenario × agent type first (the same
    :func:`~agentkit.scenario.record.record_scenario` as ``agentkit record``: cassette and
    snapshot written together, only when the recording replays); the run is its replay."""
    mode = request.config.getoption("record_mode")
    name = agent_type or (next(iter(scenario.agents)) if len(scenario.agents) == 1 else None)
    if mode != "none" and name in scenario.agents and records(scenario, name):
        live: Any = {}  # a scripted model with MCP tools: only the servers are recorded
        roles = None
        if scenario.agents[name].recorded():
            live = request.getfixturevalue("live_llm")
            roles = RoleModels(judge=request.getfixturevalue("judge_llm"), user=live)
        recording = record_scenario(scenario, name, live, mode, state=state, roles=roles)
        if not recording.ok:
            raise RecordingFailed("\n".join(recording.problems) + f"\n(nothing written: "
                                  f"{recording.files} are as they were)")


@pytest.fixture
def run_scenario(request: pytest.FixtureRequest) -> Callable[..., ScenarioResult]:
    """``run_scenario(path, agent_type=None, *, state=None) -> ScenarioResult`` (honours
    --record-mode; ``state`` reaches the agent type's factory as ``context.state``), judged
    once, without a snapshot."""

    def run(scenario: Scenario | str | Path, agent_type: str | None = None, *,
            state: Mapping[str, Any] | None = None) -> ScenarioResult:
        loaded = load(scenario)
        _record_first(request, loaded, agent_type, state)
        result = execute_scenario(loaded, agent_type, state=state)
        judge(result)
        return result

    return run


# ---------------------------------------------------------------- scenario collection
def _scenario_folders(config: pytest.Config) -> list[Path]:
    configured = config.getini("agentkit_scenarios")
    return list(configured) if configured else list(config.stash[_PROJECT].scenarios)


def _in_scenario_folder(file_path: Path, folders: list[Path]) -> bool:
    for folder in folders:
        if file_path.is_relative_to(folder):
            return not _NOT_SCENARIOS.intersection(file_path.relative_to(folder).parts)
    return False


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if (file_path.suffix in (".yaml", ".yml")
            and _in_scenario_folder(file_path, _scenario_folders(parent.config))
            and is_scenario_file(file_path)):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFailure(AssertionError):
    """A scenario item failed: unmet expectations and/or a changed trace."""


class _SyrupySnapshots(SnapshotSession):
    """The scenario items' :class:`~agentkit.verdict.SnapshotSession`: syrupy's ``snapshot``
    fixture with the trace extension, so ``--snapshot-update`` accepts a change and syrupy
    counts every snapshot it compared or kept as used, once per item."""

    def __init__(self, snapshot: Any, root: Path, item: pytest.Item, *, create: bool) -> None:
        super().__init__("check")
        self.snapshot = snapshot
        self.root = root
        self.item = item
        self.create = create  # a recording run creates a missing snapshot from its trace

    def _handled(self, how: str) -> None:
        # read by the controller (also under xdist, where user_properties travel with reports)
        self.item.user_properties.append((SNAPSHOT_PROPERTY, how))

    def _compare(self, trace: Trace | SampledTrace, path: Path) -> Compared:
        self._handled("compared")
        trace_snapshot = self.snapshot.use_extension(TraceSnapshotExtension)
        trace_snapshot.update_new_snapshots_only = self.create
        if trace_snapshot == trace:
            return "same", [], None
        if trace_snapshot.get_assert_diff(diff_mode=DiffMode.DISABLED):  # only "does not exist"
            return "missing", [], None
        location = Path(trace_snapshot.extension.get_location(
            test_location=trace_snapshot.test_location, index=0))
        stale = stale_snapshot(location)
        if stale is not None:  # an upgrade changed what traces hold: its diff would be noise
            return "stale", [f"{_shown(location, self.root)}: {stale}"], None
        return "changed", list(trace_snapshot.get_assert_diff()), None

    def _keep(self, path: Path) -> None:
        """Count the stored snapshot as used, comparing it with its own text: never written,
        never reported unused, never deleted by ``--snapshot-update``."""
        self._handled("kept")
        if not path.is_file():
            return
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return  # unreadable: the session's cleanup is off for it (see pytest_sessionfinish)
        kept = self.snapshot.use_extension(TraceSnapshotExtension)
        kept.update_snapshots = False
        kept == Verbatim(text)  # noqa: B015  (registers the snapshot; equal by construction)

    def update_hint(self) -> str:
        return "--snapshot-update"


def _record_hint(scenario: Scenario, agent_type: str, nodeid: str) -> str | None:
    """For a run that could not start without its cassette: how to record it."""
    spec = scenario.agents[agent_type]
    if not records(scenario, agent_type):
        return None
    missing = [p for p in recording_files(scenario, agent_type)[1:] if not p.exists()]
    if not missing:
        return None
    field = ("tools" if not spec.recorded() else "recording" if spec.team is None else "team")
    return (f"{scenario.path}: agents.{agent_type}.{field}: no cassette at "
            f"{', '.join(map(str, missing))}; record it once with "
            f"`pytest --record-mode=once {nodeid}` (then it replays offline)")


def _scenario_test(scenario: Scenario, agent_type: str) -> Callable[..., None]:
    def test(request: pytest.FixtureRequest, snapshot: Any) -> None:
        title = f"scenario {scenario.name} [{agent_type}]"
        snapshots = _SyrupySnapshots(snapshot, request.config.rootpath, request.node,
                                     create=_recording(request.config))
        sampled = _sampled(request, scenario, agent_type)
        record = (_record_samples if sampled else _record_first)
        case = Case(scenario, agent_type, samples=sampled,
                    prepare=lambda: record(request, scenario, agent_type, None))
        try:
            judged = run_case(case, snapshots)
        except RecordingFailed as exc:
            raise ScenarioFailure(f"{title} could not be recorded:\n{exc}") from None
        except HarnessError as exc:  # recording samples could not start
            raise ScenarioFailure(f"{title} could not run:\n{exc}") from None
        if judged.sampled:
            _note_samples(request.node, judged)
            _warn_of_a_weak_gate(title, judged)
        failure = _failure(title, judged, request)
        if failure is not None:
            raise ScenarioFailure(failure)

    test.__module__ = "agentkit.scenarios"
    test.__name__ = agent_type
    test.__doc__ = scenario.description or None
    return test


def _failure(title: str, case: CaseResult, request: pytest.FixtureRequest) -> str | None:
    """Why the item fails (None: it passes): one header, then what the verdict says -- the
    root cause alone when the run stopped, a sampled case's statistics."""
    verdict, nodeid = case.verdict, request.node.nodeid
    if verdict.passed:
        return None
    if case.sampled:
        header = (f"{title} could not run:" if verdict.outcome == "error"
                  else f"{title} failed on its samples ({case.stats.describe()}):")
        body = verdict.lines() if verdict.stopped_by is None else [verdict.stopped_by]
        return "\n".join([header, *body])
    if verdict.outcome == "error":
        hint = (_record_hint(case.scenario, case.agent_type, nodeid)
                if verdict.stopped_by is not None and not _recording(request.config) else None)
        return f"{title} could not run:\n{hint or verdict.stopped_by}"
    lines = verdict.lines()
    if verdict.stopped_by is not None:
        assert case.result is not None
        if cassette_miss(case.result) is not None:
            lines.append(f"to re-record: pytest --record-mode=rewrite '{nodeid}'")
        lines.append("(expectations and the snapshot are checked once the run gets through)")
        return f"{title} failed: " + "\n".join(lines)
    return f"{title} failed:\n" + "\n".join(lines)


def _sampled(request: pytest.FixtureRequest, scenario: Scenario, agent_type: str) -> bool:
    """Whether the item records (``--samples``) or replays a sampled recording."""
    from agentkit.harness import sample_count

    spec = scenario.agents[agent_type]
    if spec.team is not None or spec.recording is None:
        return False
    if _recording(request.config) and request.config.getoption("samples") is not None:
        return True
    return sample_count(scenario, agent_type) is not None


def _record_samples(request: pytest.FixtureRequest, scenario: Scenario, agent_type: str,
                    state: Mapping[str, Any] | None) -> None:
    """With ``--record-mode`` and ``--samples N``, record the item's N samples first, through
    the ``live_llm`` fixture with seed ``seed + i`` for sample i (its judges through
    ``judge_llm``, its simulated user through ``live_llm``, with the same seed); the item then
    replays and judges all of them."""
    from agentkit.eval.samples import Seeded, record_samples

    mode = request.config.getoption("record_mode")
    samples = request.config.getoption("samples")
    if mode == "none" or samples is None:
        return
    live = request.getfixturevalue("live_llm")
    judge = request.getfixturevalue("judge_llm")
    base = int((getattr(live, "additional_kwargs", None) or {}).get("seed") or 0)

    def cast(index: int) -> RoleModels:
        # sample i's judges and simulated user draw with its seed, like its agent
        def judged_by(named: str | None) -> LLM:
            model = RoleModels(judge=judge).live("judge", named)
            assert model is not None
            return Seeded(model, base + index)

        return RoleModels(judge=judged_by, user=Seeded(live, base + index))

    recording = record_samples(
        scenario, agent_type, lambda index: Seeded(live, base + index), samples, mode,
        sampling={"temperature": getattr(live, "temperature", None), "seed": base},
        roles=cast, state=state)
    if not recording.ok:
        raise RecordingFailed("\n".join(recording.problems) + f"\n(nothing written: "
                              f"{recording.files} are as they were)")


def _warn_of_a_weak_gate(title: str, case: CaseResult) -> None:
    """A ``min_pass_rate`` the item's sample count cannot fail on its interval, as a warning
    naming the samples needed (pytest's warnings summary shows it)."""
    from agentkit.eval.cases import GateWarning, gate_warning

    weak = gate_warning(case.scenario.min_pass_rate, case.stats.judged, case.stats.confidence)
    if weak is not None:
        warnings.warn(f"{title}: {weak}", GateWarning, stacklevel=1)


def _note_samples(item: pytest.Item, case: CaseResult) -> None:
    """A sampled item's statistics and judges' disagreements, as ``user_properties`` (they
    travel with the reports under xdist)."""
    item.user_properties += [("agentkit_samples", case.stats.samples),
                             ("agentkit_pass_rate", case.stats.pass_rate),
                             ("agentkit_class", case.stats.case_class)]
    _note_disagreements(item, case)


#: ``item.user_properties`` entry of a sampled item whose judges disagree between samples:
#: the lines the terminal summary prints (they travel with the reports under xdist)
DISAGREEMENT_PROPERTY = "agentkit_judges_disagree"


def _note_disagreements(item: pytest.Item, sampled: Any) -> None:
    """Files the judged expectations whose verdict differs between the item's samples (the
    report's marks), for :class:`_DisagreementSummary` -- a passing item prints nothing."""
    from agentkit.core.secrets import Redactor
    from agentkit.report.compare import sampled_verdicts

    found = sampled_verdicts(sampled)[1]
    if found:
        redact = Redactor().text
        item.user_properties.append(
            (DISAGREEMENT_PROPERTY, [line for each in found for line in each.lines(redact)]))


class _DisagreementSummary:
    """The terminal summary's section of sampled items whose judges disagree between samples
    (runs where the reports arrive: the controller, under xdist)."""

    def __init__(self) -> None:
        self.found: list[tuple[str, list[str]]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.found += [(report.nodeid, [str(line) for line in lines])
                           for name, lines in report.user_properties
                           if name == DISAGREEMENT_PROPERTY and isinstance(lines, list)]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.found:
            terminalreporter.section("agentkit: judges disagree between samples")
            for nodeid, lines in self.found:
                terminalreporter.write_line(nodeid)
                for line in lines:
                    terminalreporter.write_line(f"  {line}")


# ---------------------------------------------------------------- snapshots are never lost
#: ``item.user_properties`` entry of a scenario item whose snapshot was compared or kept
SNAPSHOT_PROPERTY = "agentkit_snapshot"


def _is_scenario_node(nodeid: str) -> bool:
    return nodeid.split("::", 1)[0].endswith((".yaml", ".yml"))


class _SnapshotGuard:
    """Keeps syrupy from deleting a scenario's snapshot that only looks unused: when a
    scenario file could not be collected, an item stopped before its snapshot could be
    checked (or kept), or the session was cut short (Ctrl-C, ``-x``), unused-snapshot
    detection is off for the session (as ``--snapshot-disable-unused``) and the terminal
    summary says why. Runs where the reports arrive (the controller, under xdist)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.reasons: list[str] = []

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed and _is_scenario_node(report.nodeid):
            self.reasons.append(f"{report.nodeid} could not be collected")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if (report.failed and report.when in ("setup", "call") and "::" in report.nodeid
                and _is_scenario_node(report.nodeid)
                and not any(name == SNAPSHOT_PROPERTY for name, _ in report.user_properties)):
            self.reasons.append(f"{report.nodeid} failed before its snapshot was checked")

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session,
                             exitstatus: int) -> Generator[None, None, None]:
        # a wrapper: this runs before syrupy's own sessionfinish looks for unused snapshots
        if exitstatus == pytest.ExitCode.INTERRUPTED or session.shouldstop or session.shouldfail:
            self.reasons.append("the session was stopped before every test ran")
        if self.reasons and hasattr(self.config.option, "disable_unused_snapshots"):
            self.config.option.disable_unused_snapshots = True
        return (yield)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.reasons:
            more = f" and {len(self.reasons) - 1} more" if len(self.reasons) > 1 else ""
            terminalreporter.write_line(
                "agentkit: unused-snapshot cleanup is off for this session, so no snapshot is "
                f"deleted ({self.reasons[0]}{more})")


class ScenarioFile(pytest.File):
    """A scenario file: one test per agent type it declares."""

    def collect(self) -> Iterator[pytest.Item]:
        try:
            scenario = load(self.path)
        except ScenarioError as exc:
            raise self.CollectError(str(exc)) from None
        except HarnessError as exc:
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


# ---------------------------------------------------------------- OpenTelemetry export
#: ``workeroutput`` keys a pytest-xdist worker hands the controller its spans and warnings in
_OTEL_SPANS, _OTEL_WARNINGS = "agentkit_otel_spans", "agentkit_otel_warnings"


def _configure_otel(config: pytest.Config) -> None:
    out, endpoint_option = (config.getoption("agentkit_otel_out"),
                            config.getoption("agentkit_otlp_endpoint"))
    if out is None and endpoint_option is None:
        return
    from agentkit.otel import OtelMissingError, require_sdk
    from agentkit.otel.export import OtelExport
    from agentkit.otel.settings import content_from_env, resolve_endpoint

    try:
        require_sdk("--agentkit-otel-out" if out is not None else "--agentkit-otlp-endpoint")
    except OtelMissingError as exc:
        raise pytest.UsageError(str(exc)) from None
    path = Path(out) if out is not None else None
    if path is not None and path.is_dir():
        raise pytest.UsageError(f"--agentkit-otel-out {out}: is a folder; give a file name")
    warnings: list[str] = []
    export = OtelExport(out=path, endpoint=resolve_endpoint(endpoint_option, {}),
                        content=config.getoption("agentkit_otel_content") or content_from_env(),
                        warn=warnings.append)
    config.pluginmanager.register(_OtelSession(config, export, warnings), "agentkit-otel")


class _OtelSession:
    """Exports the session's runs: scenario items through the judgement's observers, plain
    tests from the bus events of their call. Under pytest-xdist each worker builds its spans
    and sends them to the endpoint; the controller writes the one file."""

    def __init__(self, config: pytest.Config, export: Any, warnings: list[str]) -> None:
        self.config = config
        self.export = export
        self.warnings = warnings
        self.stack = ExitStack()
        self.worker = hasattr(config, "workerinput")
        self.lines: list[str] = []

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.stack.enter_context(self.export.observing())

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        if isinstance(item, ScenarioItem):
            return (yield)
        from agentkit.instrumentation import collect_events

        with collect_events() as events:
            try:
                return (yield)
            finally:
                item.stash[_TEST_EVENTS] = list(events)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item,
                                  call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
        report = yield
        events = item.stash.get(_TEST_EVENTS, None)
        if report.when == "call" and events:
            from agentkit.otel.export import record_of_test

            failure = "" if report.passed else report.longreprtext.splitlines()[-1:]
            self.export.add(record_of_test(item.nodeid, events, passed=report.passed,
                                           failure="".join(failure)))
        return report

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {})
        if output.get(_OTEL_SPANS):
            self.export.extra.append(output[_OTEL_SPANS])
        self.warnings += output.get(_OTEL_WARNINGS, [])

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.stack.close()
        if self.worker:
            output = self.config.workeroutput  # type: ignore[attr-defined]
            if self.export.out is not None and self.export.records:
                output[_OTEL_SPANS] = self.export.encoded()
            out, self.export.out = self.export.out, None  # the controller writes the file
            self.lines = list(self.export.close().lines)
            self.export.out = out
            output[_OTEL_WARNINGS] = list(self.warnings)
            return
        self.lines = list(self.export.close().lines)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        for line in self.lines:
            terminalreporter.write_line(f"agentkit: {line}")
        for warning in dict.fromkeys(self.warnings):
            terminalreporter.write_line(f"agentkit: warning: {warning}", yellow=True)


_TEST_EVENTS = pytest.StashKey[list[Any]]()

