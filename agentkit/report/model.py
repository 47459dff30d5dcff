"""The comparison data: one row per scenario × agent type, summaries, and its JSON form.

The JSON form is versioned (``"format": 1``) and carries no timestamps, so the same runs give
byte-identical files; it is read back (validated) to serve as a baseline.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

import agentkit
from agentkit.core.errors import BadInputError
from agentkit.core.textfiles import TextFileError, json_locations, parse_json, read_text
from agentkit.core.yamlsafe import YamlLocations
from agentkit.report.timeline import Span
from agentkit.scenario.diff import TraceError, check_trace
from agentkit.scenario.model import Thresholds

__all__ = [
    "REPORT_FORMAT",
    "METRICS",
    "Metric",
    "ReportError",
    "Row",
    "JudgeVerdict",
    "RoleCost",
    "AgentSummary",
    "Comparison",
    "load_comparison",
    "speedup",
    "trace_file",
]

REPORT_FORMAT: Final = 1


class ReportError(BadInputError):
    """A report or baseline file is malformed; the message names the file and the problem."""


@dataclass(frozen=True)
class Metric:
    """One measured quantity of a run: its row field, labels and how to show it."""

    key: str
    label: str
    short: str
    kind: Literal["count", "seconds", "ratio"]

    @property
    def higher_is_better(self) -> bool:
        return self.kind == "ratio"


METRICS: tuple[Metric, ...] = (
    Metric("steps", "Steps", "steps", "count"),
    Metric("llm_calls", "LLM calls", "LLM", "count"),
    Metric("tool_calls", "Tool calls", "tools", "count"),
    Metric("tool_errors", "Tool errors", "tool err", "count"),
    Metric("prompt_tokens", "Tokens in", "tok in", "count"),
    Metric("completion_tokens", "Tokens out", "tok out", "count"),
    Metric("wall_time", "Wall", "wall", "seconds"),
    Metric("serial_time", "Serial", "serial", "seconds"),
    Metric("critical_path", "Critical path", "crit", "seconds"),
    Metric("speedup", "Speedup", "speedup", "ratio"),
)
_SUMMED = tuple(m.key for m in METRICS if m.kind != "ratio")


def _round(value: float) -> float:
    return round(value, 6)


def speedup(serial: float, wall: float) -> float:
    """How much concurrency saved: serial time over wall time (1.0 when no time passed)."""
    return _round(serial / wall) if wall > 0 else 1.0


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class JudgeVerdict(_Strict):
    """One judged expectation of a run: where its rubric is, the LLM judges' verdict and the
    reason they gave; ``votes`` answers voted, ``split`` when they disagreed."""

    at: str
    rubric: str
    verdict: Literal["pass", "fail", "error"]
    reason: str
    score: float | None = None
    votes: int = Field(default=1, ge=1)
    split: bool = False


class RoleCost(_Strict):
    """The calls and tokens of one of the harness's roles in a run (an LLM judge, a simulated
    user): counted apart from the agent's."""

    llm_calls: int = Field(ge=0)
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)


class Row(_Strict):
    """One scenario under one agent type: passed, failed (with problems) or could not run.

    An ``error`` row has no metrics; its ``agent_type`` is None when the scenario file could
    not be loaded at all (so its agent types are unknown).
    """

    scenario: str
    agent_type: str | None
    status: Literal["pass", "fail", "error"]
    problems: list[str] = []
    steps: int | None = None
    llm_calls: int | None = None
    tool_calls: int | None = None
    tool_errors: int | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    wall_time: float | None = None
    serial_time: float | None = None
    critical_path: float | None = None
    speedup: float | None = None
    thresholds: Thresholds | None = None
    """The scenario's own cost-regression thresholds (None: the defaults)."""
    snapshot: Literal["same", "changed", "missing", "not_checked"] | None = None
    """How the trace compares with its committed snapshot (None: not compared;
    ``not_checked``: the run stopped on an error, so its snapshot was left as it is)."""
    snapshot_diff: list[str] = []
    """How the trace differs from its snapshot (step-aligned, snapshot -> now)."""
    judged: list[JudgeVerdict] = []
    """The LLM judges' verdicts on the run's judged expectations, with their reasons."""
    roles: dict[str, RoleCost] = {}
    """The calls and tokens of the harness's roles (``judge``, ``user``), apart from the
    metrics, which are the agent's."""
    snapshot_trace: dict[str, Any] | None = Field(default=None, exclude=True, repr=False)
    """The committed snapshot's trace when ``snapshot_diff`` is its diff with ``trace`` (for
    the page, which marks the changed words; not written to report.json)."""
    trace: dict[str, Any] | None = Field(default=None, exclude=True, repr=False)
    """The run's trace (kept beside report.json in ``traces/``, not in it)."""
    timeline: list[Span] | None = Field(default=None, exclude=True, repr=False)
    """The run's calls on simulated time (for the page; not written to report.json)."""

    @model_validator(mode="after")
    def _consistent(self) -> Row:
        missing = [m.key for m in METRICS if getattr(self, m.key) is None]
        if self.status == "error":
            if len(missing) != len(METRICS):
                raise ValueError("an `error` row has no metrics")
            if not self.problems:
                raise ValueError("an `error` row needs `problems` saying what went wrong")
        elif missing:
            raise ValueError(f"a `{self.status}` row needs {', '.join(missing)}")
        if self.status == "pass" and self.problems:
            raise ValueError("a `pass` row has no `problems`")
        if self.status == "fail" and not self.problems:
            raise ValueError("a `fail` row needs `problems` saying what failed")
        return self

    @property
    def key(self) -> str:
        """``scenario[agent type]`` (just ``scenario`` for a file that did not load)."""
        return self.scenario if self.agent_type is None else f"{self.scenario}[{self.agent_type}]"

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def has_metrics(self) -> bool:
        return self.status != "error"

    def metric(self, key: str) -> float | int | None:
        value: float | int | None = getattr(self, key)
        return value

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the metrics, then thresholds and snapshot only where there are any."""
        data = self.model_dump(exclude={"thresholds", "snapshot", "snapshot_diff", "judged",
                                        "roles"})
        if self.judged:
            data["judged"] = [verdict.model_dump(exclude_defaults=True)
                              for verdict in self.judged]
        if self.roles:
            data["roles"] = {role: cost.model_dump() for role, cost in self.roles.items()}
        if self.thresholds is not None:
            data["thresholds"] = self.thresholds.model_dump(exclude_none=True)
        if self.snapshot is not None:
            data["snapshot"] = self.snapshot
        if self.snapshot_diff:
            data["snapshot_diff"] = list(self.snapshot_diff)
        return data


def trace_file(row: Row) -> str:
    """Where a report folder keeps the trace of ``row``: ``traces/<scenario>.<agent>.json``
    (the names ``agentkit run --trace-dir`` uses)."""
    return f"traces/{row.scenario}.{row.agent_type}.json"


@dataclass(frozen=True)
class AgentSummary:
    """Per agent type: how many runs passed, metric totals and means over the runs that ran.

    The summary speedup is total serial time over total wall time.
    """

    agent_type: str
    runs: int
    passed: int
    failed: int
    errors: int
    total: dict[str, float | int]
    mean: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return {"agent_type": self.agent_type, "runs": self.runs, "passed": self.passed,
                "failed": self.failed, "errors": self.errors, "total": dict(self.total),
                "mean": dict(self.mean)}


def _summarize(agent_type: str, rows: list[Row]) -> AgentSummary:
    ran = [r for r in rows if r.has_metrics]
    total: dict[str, float | int] = {}
    for key in _SUMMED:
        value = sum(r.metric(key) or 0 for r in ran)
        total[key] = _round(value) if isinstance(value, float) else value
    total["speedup"] = speedup(float(total["serial_time"]), float(total["wall_time"]))
    mean = {key: _round(total[key] / len(ran)) if ran else 0.0 for key in _SUMMED}
    return AgentSummary(agent_type=agent_type, runs=len(rows),
                        passed=sum(r.status == "pass" for r in rows),
                        failed=sum(r.status == "fail" for r in rows),
                        errors=sum(r.status == "error" for r in rows), total=total, mean=mean)


class Comparison(_Strict):
    """Every scenario × agent type run of one report, in scenario-file then agent-type order."""

    format: Literal[1] = REPORT_FORMAT
    agentkit_version: str = agentkit.__version__
    agent_types: list[str]
    rows: list[Row]
    diagrams: dict[str, str] = {}
    """Mermaid flowcharts of the workflow agent types' workflows, by agent type."""

    @model_validator(mode="after")
    def _known_agent_types(self) -> Comparison:
        for index, row in enumerate(self.rows):
            if row.agent_type is not None and row.agent_type not in self.agent_types:
                raise ValueError(f"rows.{index}.agent_type: `{row.agent_type}` is not one of "
                                 f"agent_types ({', '.join(self.agent_types) or 'none'})")
        return self

    @property
    def passed(self) -> bool:
        """True when every row passed (no failures, no errors)."""
        return all(r.passed for r in self.rows)

    @property
    def failures(self) -> list[Row]:
        """Rows that failed or could not run."""
        return [r for r in self.rows if not r.passed]

    @property
    def scenarios(self) -> list[str]:
        """Scenario names in row order, each once."""
        return list(dict.fromkeys(r.scenario for r in self.rows))

    def row(self, scenario: str, agent_type: str | None) -> Row | None:
        return next((r for r in self.rows
                     if r.scenario == scenario and r.agent_type == agent_type), None)

    def summaries(self) -> list[AgentSummary]:
        """One summary per agent type of the report (load errors belong to no agent type)."""
        return [_summarize(name, [r for r in self.rows if r.agent_type == name])
                for name in self.agent_types]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form; ``summary`` is derived from the rows and recomputed when read back."""
        return {"format": self.format, "agentkit_version": self.agentkit_version,
                "agent_types": list(self.agent_types),
                "summary": [s.to_dict() for s in self.summaries()],
                "rows": [r.to_dict() for r in self.rows],
                **({"diagrams": dict(self.diagrams)} if self.diagrams else {})}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "report",
                  where: YamlLocations | None = None) -> Comparison:
        """Read the JSON form back; a malformed one raises :class:`ReportError` naming
        ``source`` (the file), the line (given ``where``) and the field that is wrong."""
        def at(*field: str | int) -> str:
            return f"{source}:{where.line(field)}" if where is not None else source

        if not isinstance(data, dict):
            raise ReportError(f"{at()}: not an agentkit report: expected a JSON object with "
                              f"`format: {REPORT_FORMAT}`, got {type(data).__name__}")
        if "format" not in data:
            raise ReportError(f"{at()}: not an agentkit report: no `format` field")
        if data["format"] != REPORT_FORMAT:
            raise ReportError(f"{at('format')}: report format {data['format']!r} is not "
                              f"supported (this agentkit reads format {REPORT_FORMAT})")
        fields = {k: v for k, v in data.items() if k not in ("summary", "baseline")}
        try:
            comparison = cls.model_validate(fields)
        except ValidationError as exc:
            raise ReportError(_describe(source, exc, where)) from None
        keys = [r.key for r in comparison.rows]
        duplicates = sorted({k for k in keys if keys.count(k) > 1})
        if duplicates:
            raise ReportError(f"{at('rows')}: rows: duplicate row {', '.join(duplicates)}")
        return comparison


def _describe(source: str, error: ValidationError, where: YamlLocations | None) -> str:
    lines = []
    for item in error.errors():
        message = item["msg"].removeprefix("Value error, ")
        loc = tuple(item["loc"])
        dotted = ".".join(str(p) for p in loc)
        if not dotted:
            dotted, _, message = message.partition(": ") if message.startswith("rows.") \
                else ("(top level)", "", message)
        if item["type"] == "extra_forbidden":
            message = "unknown field"
        elif item["type"] == "missing":
            message = "required field is missing"
        place = f"{source}:{where.line(loc)}" if where is not None else source
        lines.append(f"{place}: {dotted}: {message}")
    return "\n".join(lines)


def _read_json(path: Path, what: str) -> tuple[Any, str]:
    try:
        text = read_text(path)
        return parse_json(path, text), text
    except OSError as exc:
        raise ReportError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    except TextFileError as exc:
        raise ReportError(str(exc)) from None


def load_comparison(path: str | Path) -> Comparison:
    """Read a ``report.json`` (e.g. a baseline) and the traces beside it (``traces/``, where
    the report has them: a run without one is compared by its numbers only); errors name the
    file, line and field."""
    path = Path(path)
    data, text = _read_json(path, "report")
    try:
        comparison = Comparison.from_dict(data, source=str(path))
    except ReportError:  # again, with the lines of the fields
        comparison = Comparison.from_dict(data, source=str(path), where=json_locations(text))
    rows = []
    for row in comparison.rows:
        file = path.parent / trace_file(row)
        if row.has_metrics and file.is_file():
            trace_data, trace_text = _read_json(file, "trace")
            try:
                trace = check_trace(trace_data, str(file), json_locations(trace_text))
            except TraceError as exc:
                raise ReportError(str(exc)) from None
            row = row.model_copy(update={"trace": trace})
        rows.append(row)
    return comparison.model_copy(update={"rows": rows})
