"""Recording a scenario against a live model: the one function behind ``agentkit record`` and
the pytest plugin's ``--record-mode``.

:func:`record_scenario` runs the scenario's turns through a live backend with every exchange
kept in memory, replays the fresh cassette offline, and only when the recording is good --
the live run met its expectations, the replay used every exchange and reproduced the live
trace -- replaces the cassette and its recorded trace (``<cassette>.trace.json``) together
(:func:`agentkit.core.files.replace_together`). Anything else writes nothing: a good
recording is never replaced by a failed one, and a recording killed halfway leaves the old
pair as it was.

A live backend that cannot be reached, or refuses the key, stops the recording with that
error at once (it is not recorded, and the OpenAI backend does not retry a refused
connection).

Secrets: the cassette and the trace are redacted alike (secret environment values, the
backend's configured secrets, keys, bearer tokens, URL passwords). Replays hash requests
without looking at the environment, so a recording whose *requests* held a secret value --
e.g. a token typed into a user turn -- could never replay (in CI, without the variable, the
redacted request differs); such a recording is refused with a message naming the variable.
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

__all__ = ["Recording", "record_scenario", "comparable", "cassette_miss"]


@dataclass
class Recording:
    """What :func:`record_scenario` did: the live run, the replay of what it recorded, whether
    the cassette and trace were written, and why not (``problems``)."""

    cassette: Path
    trace: Path
    live: ScenarioResult | None = None
    replay: ScenarioResult | None = None
    written: bool = False
    recorded: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def comparable(trace: dict[str, Any]) -> dict[str, Any]:
    """A trace as a recording's trace file holds it: what any text may hold (keys, bearer
    tokens, URL passwords) redacted, without looking at the environment."""
    redacted: dict[str, Any] = Redactor(environ={}).data(trace)
    return redacted


def cassette_miss(result: ScenarioResult) -> str | None:
    """The cassette-miss message a replayed run stopped on, if it did."""
    prefix = f"{CassetteMissError.__name__}: "
    for turn in result.trace.turns:
        if turn.error and turn.error.startswith(prefix):
            return str(turn.error).removeprefix(prefix)
    return None


def record_scenario(scenario: Scenario | str | Path, agent_type: str, live: LLM,
                    mode: RecordMode = "once", *, listener: Any = None,
                    state: Mapping[str, Any] | None = None) -> Recording:
    """Record ``agent_type``'s conversation of ``scenario`` through ``live`` (see the module
    docstring); ``listener`` gets every bus event of the live run (progress display);
    ``state`` reaches the agent type's factory (as in :func:`run_scenario`)."""
    scenario = load(scenario)
    if agent_type not in scenario.agents or scenario.agents[agent_type].recording is None:
        raise ScenarioError(f"{scenario.where('agents', agent_type)}: agents.{agent_type} has "
                            "no `recording:` (a cassette path) to record into")
    trace_path, cassette_path = recording_files(scenario, agent_type)
    outcome = Recording(cassette=cassette_path, trace=trace_path)
    recorder = RecordingLLM(live, cassette_path, mode, agent_type=agent_type,
                            scenario=scenario.name, autosave=False)
    with ExitStack() as stack:
        stack.enter_context(real_time())  # retry back-off against a live server really waits
        if listener is not None:
            stack.enter_context(dispatcher.listen(listener))
        outcome.live = run_scenario(scenario, agent_type, llm=recorder, state=state)
    outcome.recorded = recorder.recorded
    if recorder.unrecorded:  # the model was never asked: nothing to replay or keep
        outcome.problems = [f"{_kind(recorder.unrecorded[0])}: {recorder.unrecorded[0]}"]
        return outcome
    text = recorder.cassette.dumps(secrets=live.secrets)
    data, where = parse_yaml(text)  # replay exactly what the file will hold
    fresh = Cassette.from_dict(data, cassette_path, where)
    outcome.replay = run_scenario(scenario, agent_type, llm=CassetteLLM(fresh),
                                  state=state)
    recorded_trace = Redactor(secrets=live.secrets).data(outcome.live.trace.to_dict())
    outcome.problems = _problems(outcome.live, outcome.replay, recorded_trace, recorder)
    if outcome.problems or (recorder.recorded == 0 and trace_path.exists()):
        return outcome  # refused, or nothing new (mode `once` with a recording)
    replace_together([(trace_path, json.dumps(recorded_trace, indent=2, ensure_ascii=False)
                       + "\n"), (cassette_path, text)])
    outcome.written = True
    return outcome


def _kind(error: BaseException) -> str:
    return type(error).__name__


def _problems(live: ScenarioResult, replay: ScenarioResult, recorded_trace: dict[str, Any],
              recorder: RecordingLLM) -> list[str]:
    """Why this recording must not be kept (empty when it is good)."""
    problems = [f"the recorded run failed: {problem}" for problem in live.problems]
    miss = cassette_miss(replay)
    if miss is not None:
        hint = ""
        if recorder.request_secrets:
            names = ", ".join(sorted(recorder.request_secrets))
            hint = (f" A request held the value of {names}, which is redacted from the "
                    "cassette, so the recording could never replay (replays do not read the "
                    "environment). Keep secret values out of the scenario's turns and "
                    "tools, or unset the variable while recording.")
        problems.append("the fresh recording does not replay (are the agent's requests "
                        f"deterministic?): {miss}{hint}")
        return problems
    hint = (" (mode `all` keeps recorded exchanges the run no longer makes; re-record with "
            "mode `rewrite` to drop them)" if recorder.mode == "all" else "")
    problems += [f"the fresh recording does not replay: {p}{hint}" for p in replay.problems
                 if p not in live.problems]
    differences = diff_traces(recorded_trace, comparable(replay.trace.to_dict()))
    if differences:
        problems.append("replaying the fresh recording gives a different trace:\n"
                        + "\n".join(f"  {line}" for line in differences))
    return problems
