"""Recording a scenario against a live model: the one function behind ``agentkit record`` and
the pytest plugin's ``--record-mode``.

:func:`record_scenario` runs the scenario's turns through a live backend with every exchange
kept in memory, replays the fresh cassette offline, and only when the recording is good --
the live run met its expectations, the replay used every exchange and reproduced the live
trace -- replaces the cassette and its recorded trace (``<cassette>.trace.json``) together
(:func:`agentkit.core.files.replace_together`). Anything else writes nothing: a good
recording is never replaced by a failed one, and a recording killed halfway leaves the old
pair as it was. A team records each agent with a ``recording:`` into its own cassette; all of
them and the team's trace (``<scenario>.<agent type>.trace.json``) are replaced together.

A live backend that cannot be reached, or refuses the key, stops the recording with that
error at once (it is not recorded, and the OpenAI backend does not retry a refused
connection).

Secrets: the cassette, the trace and the problems reported are redacted alike (secret
environment values, the backend's configured secrets, keys, bearer tokens, URL passwords).
Replays hash requests without looking at the environment, so a recording whose *requests* held
a secret value -- e.g. a token typed into a user turn -- could never replay (in CI, without the
variable, the redacted request differs); such a recording is refused with a message naming the
variable.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentkit.core.files import replace_together
from agentkit.core.secrets import Redactor
from agentkit.core.sim import real_time
from agentkit.core.yamlsafe import parse_yaml
from agentkit.instrumentation import dispatcher
from agentkit.llms.base import LLM
from agentkit.llms.cassette import (
    Cassette,
    CassetteLLM,
    CassetteMissError,
    RecordingLLM,
    RecordMode,
)
from agentkit.scenario.diff import diff_traces
from agentkit.scenario.loader import ScenarioError
from agentkit.scenario.model import Scenario
from agentkit.scenario.runner import ScenarioResult, load, recording_files, run_scenario

__all__ = ["Recording", "record_scenario", "cassette_miss"]


@dataclass
class Recording:
    """What :func:`record_scenario` did: the live run, the replay of what it recorded, whether
    the cassettes and trace were written, and why not (``problems``). ``cassettes`` are the
    agent type's cassette, or a team's, one per agent with a ``recording`` (team order)."""

    cassettes: list[Path]
    trace: Path
    live: ScenarioResult | None = None
    replay: ScenarioResult | None = None
    written: bool = False
    recorded: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def files(self) -> str:
        """The files it writes, for messages: ``a.yaml and a.trace.json``."""
        paths = [*map(str, self.cassettes), str(self.trace)]
        return ", ".join(paths[:-1]) + f" and {paths[-1]}"


def cassette_miss(result: ScenarioResult) -> str | None:
    """The cassette-miss message a replayed run stopped on, if it did."""
    prefix = f"{CassetteMissError.__name__}: "
    for turn in result.trace.turns:
        if turn.error and turn.error.startswith(prefix):
            return str(turn.error).removeprefix(prefix)
    return None


def record_scenario(scenario: Scenario | str | Path, agent_type: str,
                    live: LLM | Mapping[str, LLM], mode: RecordMode = "once", *,
                    listener: Any = None, state: Mapping[str, Any] | None = None) -> Recording:
    """Record ``agent_type``'s conversation of ``scenario`` through ``live`` (see the module
    docstring); ``listener`` gets every bus event of the live run (progress display);
    ``state`` reaches the agent type's factory (as in :func:`run_scenario`).

    A team (``agent_workflow``) records each of its agents with a ``recording:`` into its own
    cassette through ``live`` -- one model for all of them, as ``agentkit record --model`` and
    the plugin's ``live_llm`` give -- or through ``live[name]`` when ``live`` maps team agent
    names to models; agents with a ``script:`` keep it. The cassettes and the trace are
    replaced together, so they live in one folder."""
    scenario = load(scenario)
    members = scenario.agents[agent_type].recorded() if agent_type in scenario.agents else []
    if not members:
        what = ("none of its team agents has a `recording:` (a cassette path) to record into"
                if agent_type in scenario.agents and scenario.agents[agent_type].team
                else "has no `recording:` (a cassette path) to record into")
        raise ScenarioError(f"{scenario.where('agents', agent_type)}: agents.{agent_type}: "
                            f"{what}")
    trace_path, *cassettes = recording_files(scenario, agent_type)
    _check_one_folder(scenario, agent_type, [trace_path, *cassettes])
    models = {member: _live_model(scenario, agent_type, live, member) for member in members}
    outcome = Recording(cassettes=cassettes, trace=trace_path)
    recorders = {member: RecordingLLM(models[member], path, mode, agent_type=agent_type,
                                      scenario=scenario.name, autosave=False)
                 for member, path in zip(members, cassettes, strict=True)}
    with ExitStack() as stack:
        stack.enter_context(real_time())  # retry back-off against a live server really waits
        if listener is not None:
            stack.enter_context(dispatcher.listen(listener))
        outcome.live = _run_with(scenario, agent_type, recorders, state)
    outcome.recorded = sum(recorder.recorded for recorder in recorders.values())
    unrecorded = [error for recorder in recorders.values() for error in recorder.unrecorded]
    if unrecorded:  # the model was never asked: nothing to replay or keep
        outcome.problems = [f"{_kind(unrecorded[0])}: {unrecorded[0]}"]
        return outcome
    texts = {member: recorder.cassette.dumps(secrets=models[member].secrets)
             for member, recorder in recorders.items()}
    fresh: dict[str | None, LLM] = {}
    for member, path in zip(members, cassettes, strict=True):
        data, where = parse_yaml(texts[member])  # replay exactly what the files will hold
        fresh[member] = CassetteLLM(Cassette.from_dict(data, path, where))
    outcome.replay = _run_with(scenario, agent_type, fresh, state)
    secrets = {name: value for model in models.values() for name, value in model.secrets.items()}
    redactor = Redactor(secrets=secrets)
    recorded_trace = outcome.live.trace.to_dict(redactor)
    # shown to the user (CI logs): a refused request's secret value must not be in the miss
    outcome.problems = [redactor.text(problem) for problem in
                        _problems(outcome.live, outcome.replay, recorded_trace,
                                  list(recorders.values()))]
    if outcome.problems or (outcome.recorded == 0 and trace_path.exists()):
        return outcome  # refused, or nothing new (mode `once` with a recording)
    replace_together([(trace_path, json.dumps(recorded_trace, indent=2, ensure_ascii=False)
                       + "\n"), *((path, texts[member])
                                  for member, path in zip(members, cassettes, strict=True))])
    outcome.written = True
    return outcome


def _run_with(scenario: Scenario, agent_type: str, models: Mapping[str | None, LLM],
              state: Mapping[str, Any] | None) -> ScenarioResult:
    """The scenario run with ``models`` (the agent type's own under ``None``, a team's agents'
    by name)."""
    team = {name: model for name, model in models.items() if name is not None}
    return run_scenario(scenario, agent_type, llm=models.get(None), llms=team, state=state)


def _live_model(scenario: Scenario, agent_type: str, live: LLM | Mapping[str, LLM],
                member: str | None) -> LLM:
    """The live model ``member`` records through."""
    if isinstance(live, LLM):
        return live
    if member is not None and member in live:
        return live[member]
    missing = "models by agent name are for a team" if member is None else (
        f"no live model for team agent `{member}` (given: {', '.join(live) or 'none'})")
    raise ScenarioError(f"{scenario.where('agents', agent_type)}: agents.{agent_type}: {missing};"
                        " give one LLM, or (a team) one for each agent it records")


def _check_one_folder(scenario: Scenario, agent_type: str, files: list[Path]) -> None:
    """The files a recording replaces together share a folder (one lock, one rename set)."""
    folders = sorted({str(path.parent) for path in files})
    if len(folders) > 1:
        raise ScenarioError(f"{scenario.where('agents', agent_type, 'team')}: agents.{agent_type}"
                            f".team: the team's recordings are written together, so they must be "
                            f"in one folder; they are in {', '.join(folders)}")


def _kind(error: BaseException) -> str:
    return type(error).__name__


def _problems(live: ScenarioResult, replay: ScenarioResult, recorded_trace: dict[str, Any],
              recorders: list[RecordingLLM]) -> list[str]:
    """Why this recording must not be kept (empty when it is good)."""
    problems = [f"the recorded run failed: {problem}" for problem in live.problems]
    miss = cassette_miss(replay)
    if miss is not None:
        hint = ""
        request_secrets = {name for recorder in recorders for name in recorder.request_secrets}
        if request_secrets:
            names = ", ".join(sorted(request_secrets))
            hint = (f" A request held the value of {names}, which is redacted from the "
                    "cassette, so the recording could never replay (replays do not read the "
                    "environment). Keep secret values out of the scenario's turns and "
                    "tools, or unset the variable while recording.")
        problems.append("the fresh recording does not replay (are the agent's requests "
                        f"deterministic?): {miss}{hint}")
        return problems
    hint = (" (mode `all` keeps recorded exchanges the run no longer makes; re-record with "
            "mode `rewrite` to drop them)" if recorders[0].mode == "all" else "")
    problems += [f"the fresh recording does not replay: {p}{hint}" for p in replay.problems
                 if p not in live.problems]
    differences = diff_traces(recorded_trace, replay.trace.to_dict())
    if differences:
        problems.append("replaying the fresh recording gives a different trace:\n"
                        + "\n".join(f"  {line}" for line in differences))
    return problems
