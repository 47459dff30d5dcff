"""Where a scenario's files live on disk: the one place that knows the layout.

Beside a scenario file ``scenarios/shop.yaml``:

* ``scenarios/__snapshots__/shop/<agent type>.json`` -- the committed trace of each agent
  type (:func:`snapshot_path`): what every run is compared with (the pytest items through
  syrupy, ``agentkit run`` and ``agentkit report`` directly). For a recorded agent type it is
  also the recorded trace: ``agentkit record`` writes it with the cassette, and ``agentkit
  replay`` compares the replay with it -- one file, not a copy beside the cassette;
* ``scenarios/cassettes/shop.<agent type>.yaml`` -- the recording of an agent type without an
  explicit ``recording:`` path (:func:`cassette_path`); a team agent's
  ``...<agent type>.<agent>.yaml``;
* ``<dir>/shop.<agent type>.json`` -- a trace ``agentkit run --trace-dir <dir>`` writes
  (:func:`trace_file`);
* ``scenarios/cassettes/eval/shop.<agent type>.<model>.yaml`` -- the samples ``agentkit
  eval`` recorded of the agent type with that model (:func:`eval_cassette_path`; ``--cassettes
  DIR`` puts them into DIR instead).

Before agentkit 0.2 a recording kept its trace in ``<cassette>.trace.json`` beside the
cassette; :func:`legacy_recorded_trace` finds such a file so the commands can say it is no
longer read.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from agentkit.core.files import settle
from agentkit.scenario._model import AgentSpec, LLMSource, Scenario, run_memo

__all__ = ["SNAPSHOT_FOLDER", "CASSETTE_FOLDER", "EVAL_FOLDER", "snapshot_file", "snapshot_path",
           "scenario_folder",
           "llm_source", "cassette_path", "has_mcp", "records", "recording_files",
           "recording_paths", "trace_file",
           "legacy_recorded_trace", "eval_cassette_path", "file_safe"]

SNAPSHOT_FOLDER = "__snapshots__"
CASSETTE_FOLDER = "cassettes"
EVAL_FOLDER = "eval"


def snapshot_file(scenario_file: Path, agent_type: str) -> Path:
    """The snapshot of ``agent_type`` for the scenario file ``scenario_file``."""
    return scenario_file.parent / SNAPSHOT_FOLDER / scenario_file.stem / f"{agent_type}.json"


def snapshot_path(scenario: Scenario, agent_type: str) -> Path | None:
    """The snapshot of ``scenario`` × ``agent_type`` (None for a scenario that was not loaded
    from a file: it has nowhere to keep one)."""
    if not scenario.path:
        return None
    return _snapshot_of(scenario.path, agent_type)


@functools.lru_cache(maxsize=4096)
def _snapshot_of(scenario_path: str, agent_type: str) -> Path:
    """:func:`snapshot_file` of a scenario's path as written (remembered: every run asks)."""
    return snapshot_file(Path(scenario_path), agent_type)


@functools.lru_cache(maxsize=4096)
def scenario_folder(scenario_path: str) -> Path:
    """The folder of the scenario file at ``scenario_path`` (remembered: every run asks)."""
    return Path(scenario_path).parent


def _base(scenario: Scenario) -> Path:
    return scenario_folder(scenario.path) if scenario.path else Path.cwd()


def llm_source(spec: AgentSpec, member: str | None) -> LLMSource:
    if member is None:
        return spec
    return next(agent for agent in spec.team or () if agent.name == member)


def cassette_path(scenario: Scenario, agent_type: str, member: str | None = None) -> Path:
    """Where the agent type's recording (or its team agent ``member``'s) lives: its
    ``recording:`` path (relative to the scenario file), or
    ``cassettes/<scenario>.<agent type>[.<member>].yaml`` beside the file. Worked out once
    per scenario × agent type loaded from a file (:func:`run_memo`: every replay asks)."""
    if not scenario.path:  # beside the working folder, which may change between runs
        return _cassette_path(scenario, agent_type, member)
    paths: dict[str | None, Path] = run_memo(scenario, agent_type).setdefault("cassettes", {})
    found = paths.get(member)
    if found is None:
        found = paths[member] = _cassette_path(scenario, agent_type, member)
    return found


def _cassette_path(scenario: Scenario, agent_type: str, member: str | None) -> Path:
    source = llm_source(scenario.agents[agent_type], member)
    if source.recording:
        return _base(scenario) / source.recording
    suffix = f".{member}" if member is not None else ""
    return _base(scenario) / CASSETTE_FOLDER / f"{scenario.name}.{agent_type}{suffix}.yaml"


def has_mcp(scenario: Scenario) -> bool:
    """Whether the scenario's tool world has MCP tools (their exchanges are recorded)."""
    return any(spec.mcp is not None for spec in scenario.tools)


def records(scenario: Scenario, agent_type: str) -> bool:
    """Whether the agent type has a recording: its model's (a team agent's), or -- in a
    scenario with MCP tools -- its MCP servers' exchanges, kept in its own cassette."""
    return bool(scenario.agents[agent_type].recorded()) or has_mcp(scenario)


def recording_files(scenario: Scenario, agent_type: str) -> list[Path]:
    """The files a recording of the agent type replaces together (:func:`recording_paths`),
    after finishing or undoing a replacement a crash interrupted
    (:func:`agentkit.core.files.settle`)."""
    files = recording_paths(scenario, agent_type)
    settle(files)
    return files


def recording_paths(scenario: Scenario, agent_type: str) -> list[Path]:
    """The files a recording of the agent type replaces together: its snapshot (the recorded
    trace; a scenario not loaded from a file keeps none), then its cassette -- a team's, one
    per agent with a ``recording`` (team order), and the team's own for its MCP exchanges."""
    members = scenario.agents[agent_type].recorded()
    cassettes = [cassette_path(scenario, agent_type, member) for member in members or [None]]
    if has_mcp(scenario) and cassette_path(scenario, agent_type) not in cassettes:
        cassettes.append(cassette_path(scenario, agent_type))
    snapshot = snapshot_path(scenario, agent_type)
    return ([snapshot] if snapshot is not None else []) + cassettes


def trace_file(folder: Path, scenario: Scenario, agent_type: str) -> Path:
    """The file ``agentkit run --trace-dir folder`` writes the run's trace to."""
    return folder / f"{scenario.name}.{agent_type}.json"


def file_safe(name: str) -> str:
    """``name`` (a model such as ``openai/gpt-4o``) as one file-name part: characters other
    than letters, digits, ``_``, ``-`` and ``.`` become ``-``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "-"


def eval_cassette_path(scenario: Scenario, agent_type: str, model: str,
                       folder: Path | None = None) -> Path:
    """Where ``agentkit eval`` keeps the samples of ``agent_type`` with ``model``:
    ``<folder>/<scenario>.<agent type>.<model>.yaml``, ``folder`` defaulting to
    ``cassettes/eval`` beside the scenario file."""
    base = folder if folder is not None else _base(scenario) / CASSETTE_FOLDER / EVAL_FOLDER
    return base / f"{scenario.name}.{agent_type}.{file_safe(model)}.yaml"


def legacy_recorded_trace(scenario: Scenario, agent_type: str) -> Path | None:
    """A recorded trace of the old layout (``<cassette>.trace.json``, or a team's
    ``<scenario>.<agent type>.trace.json``) if one is on disk."""
    members = scenario.agents[agent_type].recorded()
    if not members:
        return None
    first = cassette_path(scenario, agent_type, members[0])
    old = (first.with_name(first.name.removesuffix(".yaml") + ".trace.json") if members == [None]
           else first.with_name(f"{scenario.name}.{agent_type}.trace.json"))
    return old if old.is_file() else None
