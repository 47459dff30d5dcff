"""Recording a scenario against a live model: the one function behind ``agentkit record`` and
the pytest plugin's ``--record-mode``.

:func:`record_scenario` runs the scenario's turns through a live backend with every exchange
kept in memory, replays the fresh cassette offline, and only when the recording is good --
the live run met its expectations, the replay used every exchange and reproduced the live
trace -- replaces the cassette and the scenario's snapshot of that agent type (the recorded
trace, :mod:`agentkit.scenario._layout`) together (:func:`agentkit.core.files.replace_together`),
so ``pytest`` and ``agentkit replay`` are green right after a good recording. Anything else
writes nothing: a good recording is never replaced by a failed one, and a recording killed
halfway leaves the old files as they were. A team records each agent with a ``recording:``
into its own cassette; all of them and the team's snapshot are replaced together.

Re-recording does not churn: an exchange recorded again with the same request and the same
answer keeps its old latency (a live model's timing differs on every call), and a cassette
whose exchanges all came back the same keeps its ``recorded_at`` -- so a re-record of an
unchanged conversation leaves every file byte for byte as it was, and a changed one shows only
what changed.

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
import shlex
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from agentkit.core.files import atomic_write_text, replace_together
from agentkit.core.secrets import Redactor
from agentkit.core.sim import real_time
from agentkit.core.textfiles import too_large_to_read
from agentkit.core.yamlsafe import parse_yaml
from agentkit.harness._mcp import has_mcp, mcp_cassette, mcp_servers
from agentkit.harness._roles import RoleModels
from agentkit.harness._runner import ScenarioResult, load, run_scenario
from agentkit.instrumentation import dispatcher
from agentkit.llms.base import LLM
from agentkit.recording import (
    Cassette,
    CassetteError,
    CassetteLLM,
    Exchange,
    RecordingLLM,
    RecordMode,
)
from agentkit.scenario._layout import (
    cassette_path,
    legacy_recorded_trace,
    recording_files,
    snapshot_path,
)
from agentkit.scenario._loader import ScenarioError
from agentkit.scenario._model import Scenario, judge_panel
from agentkit.tools.mcp import MCPRecording
from agentkit.trace._diff import diff_traces
from agentkit.verdict import cassette_miss

__all__ = ["Recording", "record_scenario", "cassette_miss", "rerecord_command"]


@dataclass
class Recording:
    """What :func:`record_scenario` did: the live run, the replay of what it recorded, whether
    the cassettes and the snapshot were written, and why not (``problems``). ``cassettes`` are
    the agent type's cassette, or a team's, one per agent with a ``recording`` (team order);
    ``snapshot`` is None for a scenario not loaded from a file."""

    cassettes: list[Path]
    snapshot: Path | None
    live: ScenarioResult | None = None
    replay: ScenarioResult | None = None
    written: bool = False
    recorded: int = 0
    problems: list[str] = field(default_factory=list)
    existing: bool = False
    """Mode ``once`` found every cassette recorded already: nothing was asked of the model."""

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def files(self) -> str:
        """The files it writes, for messages: ``a.yaml and __snapshots__/s/t.json``."""
        paths = [*map(str, self.cassettes), *([str(self.snapshot)] if self.snapshot else [])]
        return ", ".join(paths[:-1]) + f" and {paths[-1]}" if len(paths) > 1 else paths[0]


def recorded_with(scenario: Scenario, agent_type: str) -> dict[str, str]:
    """What ``agent_type`` was recorded with, read from its cassette's header, as a re-record
    must give it again: ``model``, ``base_url`` (the server), a sampled one's ``samples``,
    ``temperature`` and ``seed``, and ``judge_model``, the model its verdicts were recorded
    with when the scenario names none and it was not the agent's. Empty: nothing recorded."""
    spec = scenario.agents[agent_type]
    members = spec.recorded() or [None]
    header = _previous(cassette_path(scenario, agent_type, members[0]))
    if header is None:
        return {}
    found: dict[str, str] = {}
    if header.model != "unknown":
        found["model"] = header.model
    if header.base_url is not None:
        found["base_url"] = header.base_url
    if header.samples is not None:
        found["samples"] = str(header.samples)
        for key in ("temperature", "seed"):
            value = (header.sampling or {}).get(key)
            if value is not None:
                found[key] = f"{value:g}" if isinstance(value, float) else str(value)
    judges = {(e.key or {}).get("model") for e in header.exchanges if e.role == "judge"}
    named = any(judge.model is not None for judge in judge_panel(spec.judge or scenario.judge))
    if not named and len(judges) == 1 and header.model not in judges:
        found["judge_model"] = str(next(iter(judges)))
    return found


#: :func:`recorded_with`'s settings as options of ``agentkit record`` and of pytest (which
#: takes no temperature or seed: a sampled case is drawn as its scenario says).
_OPTIONS = {"record": {"model": "--model", "base_url": "--base-url", "samples": "--samples",
                       "temperature": "--temperature", "seed": "--seed",
                       "judge_model": "--judge-model"},
            "serve": {"model": "--model", "base_url": "--base-url",
                      "temperature": "--temperature", "seed": "--seed"},
            "pytest": {"model": "--agentkit-model", "base_url": "--agentkit-base-url",
                       "samples": "--samples", "judge_model": "--agentkit-judge-model"}}


def rerecord_command(scenario: Scenario, agent_type: str, *,
                     pytest_node: str | None = None, command: str = "record") -> str:
    """The command that records ``agent_type`` again from scratch, against the model and
    server its cassette was recorded with (:func:`recorded_with`): ``agentkit record`` (or,
    ``command="serve"``, ``agentkit serve --mode rewrite`` for an agent in another process),
    or with ``pytest_node`` (the scenario item's node id) ``pytest --record-mode=rewrite``.
    Every face prints this one command, so what it prints runs as printed."""
    face = command if pytest_node is None else "pytest"
    options = _OPTIONS[face]
    given = [word for key, value in recorded_with(scenario, agent_type).items()
             if key in options for word in (options[key], value)]
    if pytest_node is None:
        return shlex.join(["agentkit", command, str(scenario.path or scenario.name), "--agent",
                           agent_type, "--mode", "rewrite", *given])
    node = f"'{pytest_node}'" if "'" not in pytest_node else shlex.quote(pytest_node)
    return f"{shlex.join(['pytest', '--record-mode=rewrite', *given])} {node}"


def record_scenario(scenario: Scenario | str | Path, agent_type: str,
                    live: LLM | Mapping[str, LLM], mode: RecordMode = "once", *,
                    listener: Any = None, state: Mapping[str, Any] | None = None,
                    roles: RoleModels | None = None) -> Recording:
    """Record ``agent_type``'s conversation of ``scenario`` through ``live`` (see the module
    docstring); ``listener`` gets every bus event of the live run (progress display);
    ``state`` reaches the agent type's factory (as in :func:`run_scenario`).

    The scenario's LLM judges and simulated user without a script are recorded into the same
    cassette (the first with a ``recording:``, for a team), through ``roles`` -- by default the
    agent's live model (a team's: its first agent's) plays them; a judge whose ``model`` the
    scenario names must be recorded with that model.

    A team (``agent_workflow``) records each of its agents with a ``recording:`` into its own
    cassette through ``live`` -- one model for all of them, as ``agentkit record --model`` and
    the plugin's ``live_llm`` give -- or through ``live[name]`` when ``live`` maps team agent
    names to models; agents with a ``script:`` keep it. The cassettes and the snapshot are
    replaced together.

    A scenario with MCP tools records their servers' ``tools/list`` and ``tools/call``
    exchanges into the agent type's own cassette (a team's: the team's), the servers started
    live for the run; an agent type whose model is scripted records only those (``live`` may
    then be an empty mapping: no model is asked).

    Mode ``once`` with every cassette there records nothing (``existing``): it only replays
    them; ``rewrite`` or ``new_episodes`` record over them."""
    scenario = load(scenario)
    members = scenario.agents[agent_type].recorded() if agent_type in scenario.agents else []
    mcp = has_mcp(scenario)
    if not members and not mcp:
        what = ("none of its team agents has a `recording:` (a cassette path) to record into"
                if agent_type in scenario.agents and scenario.agents[agent_type].team
                else "has no `recording:` (a cassette path) to record into")
        raise ScenarioError(f"{scenario.where('agents', agent_type)}: agents.{agent_type}: "
                            f"{what}")
    files = recording_files(scenario, agent_type)
    snapshot = snapshot_path(scenario, agent_type)
    cassettes = files[1:] if snapshot is not None else files
    models = {member: _live_model(scenario, agent_type, live, member) for member in members}
    outcome = Recording(cassettes=cassettes, snapshot=snapshot)
    if mode == "once" and all(path.exists() for path in cassettes):
        outcome.existing = True  # `once` records what is missing: nothing is
        outcome.replay = run_scenario(scenario, agent_type, state=state)
        if snapshot is not None and not snapshot.exists() and outcome.replay.passed:
            text = outcome.replay.trace.to_json()
            outcome.problems = _too_large([(snapshot, text)])
            if not outcome.problems:
                atomic_write_text(snapshot, text)
                outcome.written = True  # the snapshot a good recording comes with
        return outcome
    llm_paths = [cassette_path(scenario, agent_type, member) for member in members]
    old = {path: _previous(path) for path in cassettes}
    recorders = {member: RecordingLLM(models[member], path, mode, agent_type=agent_type,
                                      scenario=scenario.name, autosave=False)
                 for member, path in zip(members, llm_paths, strict=True)}
    # every cassette file of the recording; the MCP exchanges go into the agent type's own,
    # the same object as its model's recording when it has one
    by_path: dict[Path, Cassette] = {path: recorder.cassette
                                     for path, recorder in zip(llm_paths, recorders.values(),
                                                               strict=True)}
    mcp_path = mcp_cassette(scenario, agent_type) if mcp else None
    mcp_recording = None
    if mcp_path is not None:
        if mcp_path not in by_path:
            by_path[mcp_path] = _mcp_only_cassette(mcp_path, mode, agent_type, scenario.name)
        mcp_recording = MCPRecording(by_path[mcp_path], mode)
    if roles is None:
        default = live if isinstance(live, LLM) else next(iter(live.values()), None)
        roles = RoleModels(judge=default, user=default)
    with ExitStack() as stack:
        stack.enter_context(real_time())  # retry back-off against a live server really waits
        if listener is not None:
            stack.enter_context(dispatcher.listen(listener))
        outcome.live = _run_with(scenario, agent_type, recorders, state, roles, mcp_recording)
    for recorder in recorders.values():
        recorder.drop_unused_roles()
    outcome.recorded = sum(recorder.recorded for recorder in recorders.values())
    if mcp_recording is not None and mcp_recording.recorded:
        outcome.recorded += mcp_recording.recorded
        _stamp(mcp_recording.cassette, agent_type, scenario.name)
    unrecorded = [error for recorder in recorders.values() for error in recorder.unrecorded]
    if unrecorded:  # the model was never asked: nothing to replay or keep
        outcome.problems = [f"{_kind(unrecorded[0])}: {unrecorded[0]}"]
        return outcome
    # the live backends' secrets and those of the role models recorded through them
    secrets = {name: value for recorder in recorders.values()
               for name, value in recorder.secrets.items()}
    for server in mcp_servers(scenario).values():
        secrets.update(server.secrets())
    texts = {path: cassette.dumps(secrets=secrets) for path, cassette in by_path.items()}
    outcome.replay = _replay(scenario, agent_type, members, llm_paths, texts, state, mcp_path)
    redactor = Redactor(secrets=secrets)
    recorded_trace = outcome.live.trace.to_dict(redactor)
    # shown to the user (CI logs): a refused request's secret value must not be in the miss
    outcome.problems = [redactor.text(problem) for problem in
                        _problems(outcome.live, outcome.replay, recorded_trace,
                                  list(recorders.values()), mode)]
    if outcome.problems:
        return outcome
    # every cassette (a list, not any(): each one keeps what came back the same)
    kept = [_keep_unchanged(cassette, old.get(path)) for path, cassette in by_path.items()]
    # dumped again: an unchanged cassette keeps its recorded_at, a kept latency its value
    texts = {path: cassette.dumps(secrets=secrets) for path, cassette in by_path.items()}
    if any(kept):
        # old latencies kept: the snapshot is what the cassette that is written replays to
        outcome.replay = _replay(scenario, agent_type, members, llm_paths, texts, state,
                                 mcp_path)
        recorded_trace = outcome.replay.trace.to_dict(redactor)
    writes = [(path, texts[path]) for path in cassettes]
    if snapshot is not None:
        writes.insert(0, (snapshot, json.dumps(recorded_trace, indent=2, ensure_ascii=False)
                          + "\n"))
    outcome.problems = _too_large(writes)
    if outcome.problems:
        return outcome
    replace_together(writes)
    legacy = legacy_recorded_trace(scenario, agent_type)
    if legacy is not None:
        legacy.unlink()  # the old layout's copy of the trace: the snapshot holds it now
    outcome.written = True
    return outcome


def _mcp_only_cassette(path: Path, mode: RecordMode, agent_type: str, scenario: str) -> Cassette:
    """The cassette of an agent type whose model is scripted: only MCP exchanges."""
    if path.exists() and mode != "rewrite":
        return Cassette.load(path)
    return Cassette(path=path, agent_type=agent_type, scenario=scenario)


def _stamp(cassette: Cassette, agent_type: str, scenario: str) -> None:
    """Whose recording it is, and when and with which agentkit it was made."""
    from datetime import UTC, datetime

    from agentkit import __version__

    cassette.agent_type = agent_type
    cassette.scenario = scenario
    cassette.agentkit_version = __version__
    cassette.recorded_at = datetime.now(UTC).replace(microsecond=0).isoformat()


def _previous(path: Path) -> Cassette | None:
    """The cassette a re-record replaces, if it is there and readable."""
    try:
        return Cassette.load(path) if path.exists() else None
    except CassetteError:
        return None


def _keep_unchanged(cassette: Cassette, old: Cassette | None) -> bool:
    """Give each re-recorded exchange that came back the same (same request, same answer) its
    old latency, and an unchanged cassette its old ``recorded_at``; whether a latency changed."""
    if old is None:
        return False
    before: dict[str, list[Exchange]] = {}
    for exchange in old.exchanges:
        before.setdefault(exchange.request_hash, []).append(exchange)
    for exchange in old.mcp_exchanges:
        before.setdefault(exchange.request_hash, []).append(exchange)
    changed = False
    for exchange in [*cassette.exchanges, *cassette.mcp_exchanges]:
        same = next((e for e in before.get(exchange.request_hash, [])
                     if e.response == exchange.response and e.error == exchange.error), None)
        if same is not None and same.latency != exchange.latency:
            exchange.latency = same.latency
            changed = True
    if [e.to_dict() for e in [*cassette.exchanges, *cassette.mcp_exchanges]] == [
            e.to_dict() for e in [*old.exchanges, *old.mcp_exchanges]]:
        cassette.recorded_at = old.recorded_at
        cassette.agentkit_version = old.agentkit_version
    return changed


def _replay(scenario: Scenario, agent_type: str, members: list[str | None],
            cassettes: list[Path], texts: Mapping[Path, str],
            state: Mapping[str, Any] | None, mcp_path: Path | None) -> ScenarioResult:
    """The scenario replayed from ``texts`` -- exactly what the cassette files will hold."""

    def fresh_cassette(path: Path) -> Cassette:
        data, where = parse_yaml(texts[path])
        return Cassette.from_dict(data, path, where)

    fresh: dict[str | None, LLM] = {member: CassetteLLM(fresh_cassette(path))
                                    for member, path in zip(members, cassettes, strict=True)}
    mcp = MCPRecording(fresh_cassette(mcp_path), "none") if mcp_path is not None else None
    return _run_with(scenario, agent_type, fresh, state, mcp=mcp)


def _run_with(scenario: Scenario, agent_type: str, models: Mapping[str | None, LLM],
              state: Mapping[str, Any] | None, roles: RoleModels | None = None,
              mcp: MCPRecording | None = None) -> ScenarioResult:
    """The scenario run with ``models`` (the agent type's own under ``None``, a team's agents'
    by name), ``roles`` (the live models of its judges and simulated user) and its MCP
    exchanges from ``mcp``."""
    team = {name: model for name, model in models.items() if name is not None}
    return run_scenario(scenario, agent_type, llm=models.get(None), llms=team, state=state,
                        roles=roles, mcp=mcp)


def _live_model(scenario: Scenario, agent_type: str, live: LLM | Mapping[str, LLM],
                member: str | None) -> LLM:
    """The live model ``member`` records through, under its limits (:func:`with_limits`)."""
    if isinstance(live, LLM):
        return with_limits(scenario, agent_type, live, member)
    if member is not None and member in live:
        return with_limits(scenario, agent_type, live[member], member)
    missing = "models by agent name are for a team" if member is None else (
        f"no live model for team agent `{member}` (given: {', '.join(live) or 'none'})")
    raise ScenarioError(f"{scenario.where('agents', agent_type)}: agents.{agent_type}: {missing};"
                        " give one LLM, or (a team) one for each agent it records")


def with_limits(scenario: Scenario, agent_type: str, live: LLM,
                member: str | None = None) -> LLM:
    """``live`` under the ``max_tokens`` and ``timeout`` that ``agent_type`` (its team agent
    ``member``, else the team's) gives its live model, or ``live`` itself when it gives none. A backend that
    cannot take them (none but the OpenAI backend can) is a :class:`ScenarioError` naming
    the field."""
    spec: Any = scenario.agents[agent_type]
    specs = [spec] if member is None else [
        next(agent for agent in spec.team or () if agent.name == member), spec]
    limits = {k: v for k in ("max_tokens", "timeout")
              if (v := next((getattr(s, k) for s in specs if getattr(s, k) is not None), None))
              is not None}
    if not limits:
        return live
    limit = getattr(live, "with_limits", None)
    if limit is None:
        field = next(iter(limits))
        path: tuple[str | int, ...] = ("agents", agent_type, field) if member is None else (
            "agents", agent_type, "team")
        where = f"agents.{agent_type}" + (f".team.{member}" if member is not None else "")
        raise ScenarioError(f"{scenario.where(*path)}: {where}.{field}: "
                            f"the live model {type(live).__name__} takes no `{field}` (the "
                            "OpenAI backend does)")
    return cast(LLM, limit(**limits))


def _too_large(writes: list[tuple[Path, str]]) -> list[str]:
    """Why files a recording is about to write must not be (empty when they may): one that
    ``agentkit replay`` would refuse to read (:func:`~agentkit.core.textfiles.read_text`)."""
    found = [problem for path, text in writes
             if (problem := too_large_to_read(path, text)) is not None]
    if not found:
        return []
    return [f"the recording is too large to keep: {'; '.join(found)}, so its replay could not "
            "read it; nothing was written. Record a shorter conversation (split the scenario's "
            "turns into several scenarios) or ask for shorter answers"]


def _kind(error: BaseException) -> str:
    return type(error).__name__


def _problems(live: ScenarioResult, replay: ScenarioResult, recorded_trace: dict[str, Any],
              recorders: list[RecordingLLM], mode: RecordMode) -> list[str]:
    """Why this recording must not be kept (empty when it is good)."""
    if live.verdict.stopped_by is not None:
        # the root cause alone, as every command reports a stopped run: the unmet expectations
        # and the replay that misses where the live run broke off would only repeat it
        return ["the recorded run failed: " + " ".join(live.verdict.lines())]
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
            "mode `rewrite` to drop them)" if mode == "all" else "")
    problems += [f"the fresh recording does not replay: {p}{hint}" for p in replay.problems
                 if p not in live.problems]
    differences = diff_traces(recorded_trace, replay.trace.to_dict())
    if differences:
        problems.append("replaying the fresh recording gives a different trace:\n"
                        + "\n".join(f"  {line}" for line in differences))
    return problems
