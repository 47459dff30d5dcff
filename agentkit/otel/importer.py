"""``agentkit import-trace``: an OTLP-JSON export turned into a scenario that replays offline.

From one trace (:func:`agentkit.otel.conversation.conversation`) it writes:

* ``NAME.yaml`` -- the user turns, the tools, drafted expectations (the answer, the tool-call
  trajectory; edit them to what must hold) and the agent type with a ``recording:``;
* ``NAME_tools.json`` beside it -- each tool's table of recorded calls (arguments -> output or
  error, latency), and ``NAME_tools.py``, the same text for every trace
  (:data:`~agentkit.tools.recorded.MODULE_TEXT`), which makes a
  :class:`~agentkit.tools.recorded.RecordedTool` of each: nothing of the trace is code;
* the cassette and the snapshot, recorded the way ``agentkit record`` records
  (:func:`agentkit.harness._record.record_scenario`), with the trace's model answers in the
  place of a live model: so the cassette holds the requests this agent type makes and the
  answers the traced model gave, and it is written only if the replay reproduces the run --
  the recorded tool calls, in order, and the answer.

The agent type is the one that made the run (agentkit's own exports), else the one that
speaks the trace's format: ``function_calling`` when the model called tools through the API,
``react`` when it wrote ``Action:`` lines; ``--agent`` chooses another.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentkit.core.files import FileWriteError, atomic_write_text
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse
from agentkit.llms.types import ToolSelection
from agentkit.otel.conversation import ImportedRun, TraceImportError, conversation
from agentkit.otel.otlp_json import read_spans
from agentkit.recording import dump_yaml
from agentkit.tools.recorded import MODULE_TEXT, attribute_names

__all__ = ["ImportResult", "import_trace", "read_run", "choose_agent_type"]

_REPLAYABLE = ("react", "function_calling", "llm_compiler", "coa", "function_agent",
               "react_agent")
"""agentkit's agent types an import can record under (one agent, an LLM of its own)."""


@dataclass
class ImportResult:
    """What :func:`import_trace` wrote, and why the recording was not kept if it was not."""

    scenario: Path
    tools_module: Path
    agent_type: str
    run: ImportedRun
    written: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def read_run(path: str | Path, trace_id: str | None = None) -> ImportedRun:
    """The conversation of the trace in an OTLP-JSON file (bad input: a
    :class:`~agentkit.otel.conversation.TraceImportError` or
    :class:`~agentkit.otel.otlp_json.OtlpError`)."""
    return conversation(read_spans(path), str(path), trace_id)


def choose_agent_type(run: ImportedRun, given: str | None = None) -> str:
    """``given``; else the agent type that made the run, if it can replay on its own; else by
    the model's format: tool calls -> ``function_calling``, ``Action:`` lines -> ``react``."""
    if given:
        return given
    if run.agent_type in _REPLAYABLE:
        return run.agent_type
    exchanges = [e for turn in run.turns for e in turn.exchanges]
    if any(e.tool_calls for e in exchanges):
        return "function_calling"
    if any(re.search(r"^\s*Action\s*:", e.content, re.MULTILINE) for e in exchanges):
        return "react"
    return "function_calling"


def _ms(seconds: float) -> float:
    """A traced duration in whole milliseconds, rounded up: the grid recorded latencies live
    on (:mod:`agentkit.recording`), so the recording and its replay keep the same times."""
    return math.ceil(round(seconds * 1000, 6)) / 1000


def _tables(run: ImportedRun) -> dict[str, list[dict[str, Any]]]:
    """Each tool's recorded calls (a tool the model asked for but never ran still exists)."""
    tables: dict[str, list[dict[str, Any]]] = {}
    for turn in run.turns:
        for record in sorted(turn.tools, key=lambda r: r.start):
            if run.tool_specs and record.name not in run.tool_specs:
                continue  # not a tool of the agent's: see below
            entry: dict[str, Any] = {"args": record.args}
            if record.error is not None:
                entry["error"] = record.error
            else:
                entry["output"] = record.output
            if record.latency:
                entry["latency"] = _ms(record.latency)
            tables.setdefault(record.name, []).append(entry)
    for turn in run.turns:
        for exchange in turn.exchanges:
            for name, _ in exchange.tool_calls:
                # a name the agent had no tool of (the trace lists its tools) stays unknown,
                # so the replay meets the same "no such tool" the run met
                if not run.tool_specs or name in run.tool_specs:
                    tables.setdefault(name, [])
    return tables


def _tools_table_text(run: ImportedRun, source: str, scenario_file: str) -> str:
    """The JSON table the tools module reads (:mod:`agentkit.tools.recorded`): the trace is
    data here, never code."""
    tools = []
    for name, calls in _tables(run).items():
        spec = run.tool_specs.get(name, {})
        tools.append({"name": name, "description": str(spec.get("description") or ""),
                      "parameters": spec.get("parameters") or {}, "calls": calls})
    data = {"format": 1, "scenario": scenario_file, "source": source, "trace": run.trace_id,
            "tools": tools}
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def _scenario_data(run: ImportedRun, name: str, module: str, agent_type: str, source: str,
                   answers: bool) -> dict[str, Any]:
    tool_names = list(_tables(run))
    turns: list[dict[str, Any]] = []
    for turn in run.turns:
        item: dict[str, Any] = {"user": turn.user}
        if turn.exchanges and turn.exchanges[0].stream:
            item["stream"] = True
        if answers and len(run.turns) > 1 and turn.answer is not None:
            item["answer"] = {"equals": turn.answer}
        turns.append(item)
    calls = []
    for turn in run.turns:
        for record in sorted(turn.tools, key=lambda r: r.start):
            call: dict[str, Any] = {"name": record.name, "args": record.args}
            if record.error is not None:
                call["error"] = True
            calls.append(call)
    expect: dict[str, Any] = {}
    last, error = run.turns[-1].answer, run.turns[-1].error
    if error is not None:
        # the run ended on an error (an iteration limit, a tool that does not exist): its
        # replay must end on the same one
        expect["error"] = {"contains": error}
    elif answers and len(run.turns) == 1 and last is not None:
        expect["answer"] = {"equals": last}
    expect["tool_calls"] = {"match": "strict", "args": "exact", "calls": calls}
    llm_calls = sum(len(t.exchanges) for t in run.turns)
    data: dict[str, Any] = {
        "format": 1, "name": name,
        "description": (f"Imported by `agentkit import-trace` from {source} (trace "
                        f"{run.trace_id}: {run.name}; {llm_calls} LLM calls, {len(calls)} tool "
                        "calls). The expectations are drafts of what happened: edit them to "
                        "what must hold."),
        "tags": ["imported"],
        "tools": [_tool_entry(module, attribute, tool in run.return_direct)
                  for tool, attribute in zip(tool_names, attribute_names(tool_names),
                                             strict=True)],
        "turns": turns, "expect": expect,
        "agents": {agent_type: _agent_entry(run, name, agent_type)}}
    return data


def _tool_entry(module: str, attribute: str, direct: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"ref": f"{module}:{attribute}"}
    if direct:
        entry["return_direct"] = True
    return entry


def _agent_entry(run: ImportedRun, name: str, agent_type: str) -> dict[str, Any]:
    """The agent type's entry: its recording, and -- when it is the agent type that made the
    run -- the parameters it ran with (an iteration limit, a forced tool), without which the
    replay would ask the model more, or otherwise, than the run did."""
    entry: dict[str, Any] = {}
    if run.params and agent_type == run.agent_type:
        entry["params"] = dict(run.params)
    entry["recording"] = f"cassettes/{name}.{agent_type}.yaml"
    return entry


def _answers(run: ImportedRun) -> list[ScriptedResponse]:
    """The model's answers of the trace, in order, as the "live" model of the recording."""
    items: list[ScriptedResponse] = []
    for turn in run.turns:
        for exchange in turn.exchanges:
            calls = [ToolSelection(tool_id=f"call_{len(items)}_{i}", tool_name=name,
                                   tool_kwargs=args)
                     for i, (name, args) in enumerate(exchange.tool_calls)]
            items.append(ScriptedResponse(text=exchange.content, tool_calls=calls,
                                          usage=exchange.usage, latency=_ms(exchange.latency)))
    return items


def import_trace(source: str | Path, out: str | Path, *, agent_type: str | None = None,
                 trace_id: str | None = None, force: bool = False) -> ImportResult:
    """Write the scenario, its tools module, cassette and snapshot for the trace in ``source``
    (module docstring). An existing scenario file is kept unless ``force``."""
    from agentkit.harness import load, record_scenario
    from agentkit.scenario._loader import ScenarioError

    source, out = Path(source), Path(out)
    run = read_run(source, trace_id)
    chosen = choose_agent_type(run, agent_type)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", out.name.removesuffix(".yaml").removesuffix(".yml"))
    module = f"{attribute_names([name])[0]}_tools"
    tools_path = out.parent / f"{module}.py"
    table_path = tools_path.with_suffix(".json")
    if out.exists() and not force:
        raise TraceImportError(f"{out}: exists; give another --out, or --force to replace it "
                               "(and its tools module, cassette and snapshot)")
    result = ImportResult(scenario=out, tools_module=tools_path, agent_type=chosen, run=run)
    before = {path: path.read_text(encoding="utf-8") if path.is_file() else None
              for path in (table_path, tools_path, out)}
    try:
        atomic_write_text(table_path, _tools_table_text(run, source.name, out.name))
        atomic_write_text(tools_path, MODULE_TEXT)
        sys.modules.pop(module, None)  # a module of that name imported before is another's
        text = dump_yaml(_scenario_data(run, name, module, chosen, source.name, answers=True))
        atomic_write_text(out, text)
        result.written = [out, tools_path, table_path]
        scenario = load(out)
        recording = record_scenario(scenario, chosen, ScriptedLLM(_answers(run), name=run.model,
                                                                  strict=False), "rewrite")
    except ScenarioError as exc:
        raise TraceImportError(str(exc)) from None
    except FileWriteError:  # a full disk: no scenario is left without its cassette
        for path, old in before.items():
            with contextlib.suppress(OSError):
                if old is None:
                    path.unlink(missing_ok=True)
                else:
                    path.write_text(old, encoding="utf-8")
        raise
    if not recording.ok:
        result.problems = recording.problems
        return result
    result.written += [*recording.cassettes, *([recording.snapshot] if recording.snapshot else [])]
    return result
