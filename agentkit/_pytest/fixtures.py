"""The plugin's fixtures: ``agentkit_record_mode``, ``scripted_llm``, ``live_llm``,
``judge_llm``, ``agentkit_llm`` (a test's own cassette, VCR-style), ``run_scenario``, and the
autouse check that a strict ``ScriptedLLM`` of a passing test used its whole script; with a
record mode, :func:`record_first` records a scenario before it is run."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from agentkit._pytest.cassettes import cassette_for
from agentkit._pytest.options import shown_path
from agentkit._pytest.outcomes import call_passed
from agentkit.harness import (
    NO_WORLD,
    RoleModels,
    ScenarioResult,
    execute_scenario,
    load,
    record_scenario,
)
from agentkit.llms.base import LLM
from agentkit.llms.mock import ScriptedLLM, track_scripts
from agentkit.recording import CassetteError, CassetteLLM
from agentkit.scenario._layout import records
from agentkit.scenario._loader import ScenarioError
from agentkit.scenario._model import Scenario
from agentkit.verdict import judge

__all__ = ["agentkit_record_mode", "scripted_llm", "live_llm", "judge_llm", "agentkit_llm",
           "run_scenario", "RecordingFailed", "record_first", "kept"]


@pytest.fixture(autouse=True)
def _agentkit_unused_script_check(request: pytest.FixtureRequest) -> Iterator[None]:
    with track_scripts() as scripts:
        yield
    if request.node.get_closest_marker("agentkit_allow_unused_script"):
        return
    if not call_passed(request.node):
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
    from agentkit.llms.openai import DEFAULT_MODEL, OpenAI

    config = request.config
    model = (config.getoption("agentkit_model") or os.environ.get("AGENTKIT_MODEL")
             or DEFAULT_MODEL)
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
    shown = shown_path(path, request.config.rootpath)
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
        if (replay.unused and call_passed(item)
                and not item.get_closest_marker("agentkit_allow_unused_script")):
            pytest.fail(f"{shown}: {replay.unused} recorded exchange(s) were not replayed: the "
                        "test now makes fewer LLM calls than when it was recorded. Re-record "
                        f"with `pytest --record-mode=rewrite {item.nodeid}` "
                        "(@pytest.mark.agentkit_allow_unused_script allows it)", pytrace=False)
        return
    recorder = CassetteLLM(path, mode=mode, llm=request.getfixturevalue("live_llm"),
                           autosave=False, test=item.nodeid)
    yield recorder
    if call_passed(item):
        recorder.save()


class RecordingFailed(Exception):
    """A ``--record-mode`` recording was not kept; the message says why."""

    __module__ = "agentkit.pytest_plugin"  # where users import it from


def kept(recording: Any) -> None:
    """Raise :class:`RecordingFailed` when ``recording`` (a scenario's or its samples') was not
    kept: its problems, then the files that stayed as they were."""
    if not recording.ok:
        raise RecordingFailed("\n".join(recording.problems) + f"\n(nothing written: "
                              f"{recording.files} are as they were)")


def record_first(request: pytest.FixtureRequest, scenario: Scenario,
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
        kept(record_scenario(scenario, name, live, mode, state=state, roles=roles))


@pytest.fixture
def run_scenario(request: pytest.FixtureRequest) -> Callable[..., ScenarioResult]:
    """``run_scenario(path, agent_type=None, *, state=None, world=...) -> ScenarioResult``
    (honours --record-mode; ``state`` reaches the agent type's factory as ``context.state``;
    ``world`` is the scenario world the tools act on, instead of the one its ``world:``
    builds), judged once, without a snapshot: assert on its ``passed``, ``problems``,
    ``trace``. A relative ``path`` is from the rootdir (as pytest shows node ids), whatever the
    current folder."""

    def run(scenario: Scenario | str | Path, agent_type: str | None = None, *,
            state: Mapping[str, Any] | None = None, world: Any = NO_WORLD) -> ScenarioResult:
        if not isinstance(scenario, Scenario) and Path.cwd() != request.config.rootpath:
            scenario = request.config.rootpath / scenario  # an absolute path stays as it is
        loaded = load(scenario)
        record_first(request, loaded, agent_type, state)
        result = execute_scenario(loaded, agent_type, state=state, world=world)
        judge(result)
        return result

    return run
