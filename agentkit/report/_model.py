"""The comparison data: one row per scenario × agent type (× model, for an evaluation),
summaries, and its JSON form.

A row of a sampled case (a sampled recording, an evaluation) carries its statistics --
``samples``, ``pass_rate``, ``interval``, ``pass_at_k``, ``pass_all_k``, ``class`` and the
spread of each cost -- and its metrics are the means over its samples.

The JSON form is versioned (``"format": 2``; format 1, before samples and models, is still
read) and carries no timestamps, so the same runs give byte-identical files; it is read back
(validated, :mod:`agentkit.report._files`) to serve as a baseline or to be merged with other
shards.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)

import agentkit
from agentkit.core.errors import BadInputError, ErrorKind
from agentkit.core.yamlsafe import YamlLocations
from agentkit.eval._cases import CaseClass, SampleOutcome, gate_warning
from agentkit.report._timeline import Span
from agentkit.scenario._layout import file_safe
from agentkit.scenario._model import Thresholds

if TYPE_CHECKING:
    from agentkit.report._store import RunStore

__all__ = [
    "REPORT_FORMAT",
    "READ_REPORT_FORMATS",
    "METRICS",
    "SECONDS_METRICS",
    "Contender",
    "Metric",
    "ReportError",
    "Row",
    "JudgeVerdict",
    "SampleVerdict",
    "JudgeDisagreement",
    "RoleCost",
    "AgentSummary",
    "Compared",
    "CostSpread",
    "Comparison",
    "contender_label",
    "speedup",
    "trace_file",
]

REPORT_FORMAT: Final = 2
READ_REPORT_FORMATS: Final = (1, 2)


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
SECONDS_METRICS: frozenset[str] = frozenset(m.key for m in METRICS if m.kind == "seconds")
"""The metrics measured in (simulated) seconds, shown as times wherever a report shows them."""


def _round(value: float) -> float:
    return round(value, 6)


def speedup(serial: float, wall: float) -> float:
    """How much concurrency saved: serial time over wall time (1.0 when no time passed)."""
    return _round(serial / wall) if wall > 0 else 1.0


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Contender = tuple[str, str | None]
"""What a report compares: an agent type, and the model it ran with (None: its script or
recording, whatever model that was)."""

def _number(value: Any) -> Any:
    """One clear error for a count that is not a number (not one per member of the union)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"expected a number, got {value!r}")
    return value


Count = Annotated[int | float, BeforeValidator(_number)]
"""A count metric: a run's own (int) or the mean over a sampled case's samples (float)."""

_SAMPLED = ("samples", "passes", "infra_errors", "not_recorded", "pass_rate", "interval",
            "confidence", "min_pass_rate", "pass_at_k", "pass_all_k", "class_", "cost",
            "sample_outcomes")


class CostSpread(_Strict):
    """How one cost varied over a case's samples."""

    mean: float
    sd: float
    min: float
    max: float


class FailureCause(_Strict):
    """Whose failure a failed run is, where its trace shows it
    (:func:`agentkit.verdict.attribute`): ``agent``, ``simulated_user``, ``judge`` or
    ``infrastructure``, with the evidence."""

    cause: Literal["agent", "simulated_user", "judge", "infrastructure"]
    why: str

    def describe(self) -> str:
        return f"failure attributed to the {self.cause.replace('_', ' ')}: {self.why}"


class JudgeCalibrationNote(_Strict):
    """Whether the judges of a judged expectation are calibrated against people on its
    rubric (:func:`agentkit.quality.calibration_of`), and why in one line."""

    calibrated: bool
    why: str


class JudgeVerdict(_Strict):
    """One judged expectation of a run: where its rubric is, the LLM judges' verdict and the
    reason they gave; ``votes`` answers voted, ``split`` when they disagreed (within this
    run). In a sampled case, ``sample`` is the sample whose run it judged. ``calibration``:
    whether its judges agree with people's labels of the rubric (None: not looked up)."""

    at: str
    rubric: str
    verdict: Literal["pass", "fail", "error"]
    reason: str
    score: float | None = None
    votes: int = Field(default=1, ge=1)
    split: bool = False
    sample: int | None = Field(default=None, ge=0)
    calibration: JudgeCalibrationNote | None = None


class SampleVerdict(_Strict):
    """One sample's verdict on a judged expectation, with the judges' reason (``-``: that
    sample's run has no verdict there, e.g. it stopped before being judged)."""

    sample: int = Field(ge=0)
    verdict: Literal["pass", "fail", "error", "-"]
    reason: str = ""


class JudgeDisagreement(_Strict):
    """A judged expectation whose verdict differs between the samples of one case
    (:func:`agentkit.harness._llm_judge.disagreements`) -- not the split votes of one run's
    judges (:attr:`JudgeVerdict.split`): each sample's verdict and reason."""

    at: str
    rubric: str
    samples: list[SampleVerdict]

    def describe(self) -> str:
        """``the judges' verdict on expect.answer.judge differs between samples: pass in 1 of
        2 (sample 0 pass, sample 1 fail)``."""
        passes = sum(s.verdict == "pass" for s in self.samples)
        each = ", ".join(f"sample {s.sample} {s.verdict}" for s in self.samples)
        return (f"the judges' verdict on {self.at} differs between samples: pass in {passes} "
                f"of {len(self.samples)} ({each})")

    def lines(self, redact: Callable[[str], str]) -> list[str]:
        """The disagreement as the commands and the pytest summary print it: a header, then
        each sample's verdict and its (``redact``-ed) reason, one per line."""
        return [f"judges disagree between samples on {self.at} ({self.rubric!r}):", *(
            f"  sample {each.sample}: {each.verdict}"
            + (f" -- {redact(each.reason)}" if each.reason else "") for each in self.samples)]


class RoleCost(_Strict):
    """The calls and tokens of one of the harness's roles in a run (an LLM judge, a simulated
    user): counted apart from the agent's. A sampled case's are the means per sample, as its
    metrics are."""

    llm_calls: Count = Field(ge=0)
    prompt_tokens: Count = Field(ge=0)
    completion_tokens: Count = Field(ge=0)


class Row(_Strict):
    """One scenario under one agent type (and ``model``, in an evaluation): passed, failed
    (with problems) or could not run.

    An ``error`` row has no metrics; its ``agent_type`` is None when the scenario file could
    not be loaded at all (so its agent types are unknown). A sampled case has its statistics
    (module docstring); an ``error`` row of one whose samples all hit infrastructure errors
    has ``class`` ``infra_error``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    scenario: str
    agent_type: str | None
    model: str | None = None
    tags: list[str] = []
    """The scenario's tags: the report counts passes per tag (``by_tag``)."""
    status: Literal["pass", "fail", "error"]
    problems: list[str] = []
    stopped: bool = False
    """A ``fail`` row whose run stopped on an error it did not expect (its problem says
    which): its expectations were not checked."""
    kind: ErrorKind | None = Field(default=None, exclude=True)
    """Whose problem stopped the run, or made it an ``error`` row (``input``: a malformed
    scenario, a factory that returned no agent; not written to report.json)."""
    steps: Count | None = None
    llm_calls: Count | None = None
    tool_calls: Count | None = None
    tool_errors: Count | None = None
    prompt_tokens: Count | None = None
    completion_tokens: Count | None = None
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
    """The LLM judges' verdicts on the run's judged expectations, with their reasons (a
    sampled case's: every sample's, in sample order)."""
    disagreements: list[JudgeDisagreement] = []
    """A sampled case's judged expectations whose verdict differs between its samples."""
    cause: FailureCause | None = None
    """A failed run's cause: the component its failure is attributed to, and why."""
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
    samples: int | None = None
    """Sampled cases: the samples with a result (infrastructure errors included)."""
    passes: int | None = None
    infra_errors: int | None = None
    not_recorded: int | None = None
    """Samples asked for but not recorded (a budget ran out): a partial result."""
    pass_rate: float | None = None
    interval: tuple[float, float] | None = None
    """The Wilson interval of ``pass_rate`` at ``confidence``."""
    confidence: float | None = None
    min_pass_rate: float | None = None
    pass_at_k: dict[str, float] | None = None
    pass_all_k: dict[str, float] | None = None
    class_: CaseClass | None = Field(default=None, alias="class")
    cost: dict[str, CostSpread] | None = None
    """Per cost (steps, llm_calls, tool_calls, tokens, wall_time, serial_time): its spread."""
    sample_outcomes: list[SampleOutcome] | None = None

    @model_validator(mode="before")
    @classmethod
    def _derived(cls, data: Any) -> Any:
        """``gate_warning`` and ``result`` in report.json follow from the other fields: read,
        not kept."""
        if isinstance(data, dict) and ("gate_warning" in data or "result" in data):
            return {key: value for key, value in data.items()
                    if key not in ("gate_warning", "result")}
        return data

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
    def uncalibrated(self) -> dict[str, str]:
        """The judged expectations whose judges are not calibrated: field -> why (once per
        field, whatever the samples)."""
        return {v.at: v.calibration.why for v in self.judged
                if v.calibration is not None and not v.calibration.calibrated}

    @property
    def key(self) -> str:
        """``scenario[agent type]``, ``scenario[agent type@model]`` in an evaluation (just
        ``scenario`` for a file that did not load)."""
        if self.agent_type is None:
            return self.scenario
        return f"{self.scenario}[{contender_label(self.contender, '@')}]"

    @property
    def contender(self) -> Contender:
        return (self.agent_type or "", self.model)

    @property
    def sampled(self) -> bool:
        return self.samples is not None

    @property
    def judged_runs(self) -> int:
        """The runs that say something about the agent: a sampled case's passes and failures,
        one for a run that ran, none for one that could not."""
        if self.samples is not None:
            return self.samples - (self.infra_errors or 0)
        return 1 if self.has_metrics else 0

    @property
    def gate_warning(self) -> str | None:
        """A sampled case's ``min_pass_rate`` that cannot fail at its sample count, said with
        the samples it needs (:func:`~agentkit.eval._cases.gate_warning`)."""
        if not self.sampled:
            return None
        return gate_warning(self.min_pass_rate, self.judged_runs, self.confidence or 0.95)

    @property
    def result(self) -> Literal["pass", "fail", "error", "undecided"]:
        """What the report calls the row: its status, except that a sampled case whose pass
        rate is under its ``min_pass_rate`` is not ``pass`` even when it meets the gate within
        noise: it is ``undecided`` (more samples would tell)."""
        if (self.status == "pass" and self.min_pass_rate is not None
                and self.pass_rate is not None and self.pass_rate < self.min_pass_rate):
            return "undecided"
        return self.status

    @property
    def succeeded(self) -> bool:
        """Passed, for the comparisons: a run that passed, or a sampled case whose result is
        ``pass`` with at least one sample passing (a ``stable_fail`` case measured under
        ``min_pass_rate: 0`` passes its gate, but not its scenario)."""
        return self.result == "pass" and not (self.sampled and self.class_ == "stable_fail")

    @property
    def passed_runs(self) -> int:
        """Of :attr:`judged`, how many passed."""
        if self.samples is not None:
            return self.passes or 0
        return 1 if self.passed else 0

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
        """The JSON form: the metrics, then thresholds, snapshot, model, the statistics of a
        sampled case, the judged expectations, a failure's cause and roles' costs only where
        there are any."""
        data = self.model_dump(exclude={"thresholds", "snapshot", "snapshot_diff", "model",
                                        "judged", "disagreements", "roles", "cause",
                                        "stopped", *_SAMPLED})
        if self.stopped:
            data["stopped"] = True
        if self.model is not None:
            data = {"scenario": self.scenario, "agent_type": self.agent_type,
                    "model": self.model, **data}
        sampled = self.model_dump(include=set(_SAMPLED), by_alias=True, exclude_none=True)
        if "interval" in sampled:
            sampled["interval"] = list(sampled["interval"])
        data.update({key: sampled[key] for key in (
            "samples", "passes", "infra_errors", "not_recorded", "pass_rate", "interval",
            "confidence", "min_pass_rate", "pass_at_k", "pass_all_k", "class", "cost",
            "sample_outcomes") if key in sampled})
        if self.gate_warning is not None:
            data["gate_warning"] = self.gate_warning
        if self.result != self.status:
            data["result"] = self.result
        if self.judged:
            data["judged"] = [verdict.model_dump(exclude_defaults=True)
                              for verdict in self.judged]
        if self.disagreements:
            data["disagreements"] = [d.model_dump() for d in self.disagreements]
        if self.cause is not None:
            data["cause"] = self.cause.model_dump()
        if self.roles:
            data["roles"] = {role: cost.model_dump() for role, cost in self.roles.items()}
        if self.thresholds is not None:
            data["thresholds"] = self.thresholds.model_dump(exclude_none=True)
        if self.snapshot is not None:
            data["snapshot"] = self.snapshot
        if self.snapshot_diff:
            data["snapshot_diff"] = list(self.snapshot_diff)
        return data


def contender_label(contender: Contender, joiner: str = " @ ") -> str:
    """``react``, or ``react @ gpt-4o-mini`` for an agent type with a model."""
    agent_type, model = contender
    return agent_type if model is None else f"{agent_type}{joiner}{model}"


def trace_file(row: Row) -> str:
    """Where a report folder keeps the trace of ``row``: ``traces/<scenario>.<agent>.json``
    (the names ``agentkit run --trace-dir`` uses), ``...<agent>.<model>.json`` in an
    evaluation; a sampled case's file holds every sample's trace."""
    model = f".{file_safe(row.model)}" if row.model is not None else ""
    return f"traces/{row.scenario}.{row.agent_type}{model}.json"


@dataclass(frozen=True)
class AgentSummary:
    """Per compared agent type (and model), over the scenarios every compared one ran
    (:meth:`Comparison.compared`): how many runs passed, the pooled pass rate of their runs
    and samples (``passes`` of ``judged``), metric totals and means over the runs that ran.

    The summary speedup is total serial time over total wall time.
    """

    agent_type: str
    runs: int
    passed: int
    failed: int
    errors: int
    total: dict[str, float | int]
    mean: dict[str, float]
    model: str | None = None
    passes: int = 0
    judged: int = 0
    undecided: int = 0
    """Sampled cases under their ``min_pass_rate`` within noise (:attr:`Row.result`): in
    neither ``passed`` nor ``failed``."""

    @property
    def contender(self) -> Contender:
        return (self.agent_type, self.model)

    @property
    def pass_rate(self) -> float | None:
        return self.passes / self.judged if self.judged else None

    def to_dict(self) -> dict[str, Any]:
        head: dict[str, Any] = {"agent_type": self.agent_type}
        if self.model is not None:
            head["model"] = self.model
        rate = ({"pass_rate": _round(self.passes / self.judged), "passes": self.passes,
                 "judged": self.judged} if self.judged else {})
        return {**head, "runs": self.runs, "passed": self.passed, "failed": self.failed,
                "errors": self.errors,
                **({"undecided": self.undecided} if self.undecided else {}),
                **rate, "total": dict(self.total),
                "mean": dict(self.mean)}


def _summarize(contender: Contender, rows: list[Row]) -> AgentSummary:
    ran = [r for r in rows if r.has_metrics]
    total: dict[str, float | int] = {}
    for key in _SUMMED:
        value = sum(r.metric(key) or 0 for r in ran)
        total[key] = _round(value) if isinstance(value, float) else value
    total["speedup"] = speedup(float(total["serial_time"]), float(total["wall_time"]))
    mean = {key: _round(total[key] / len(ran)) if ran else 0.0 for key in _SUMMED}
    return AgentSummary(agent_type=contender[0], model=contender[1], runs=len(rows),
                        passed=sum(r.result == "pass" for r in rows),
                        undecided=sum(r.result == "undecided" for r in rows),
                        failed=sum(r.status == "fail" for r in rows),
                        errors=sum(r.status == "error" for r in rows), total=total, mean=mean,
                        passes=sum(r.passed_runs for r in rows),
                        judged=sum(r.judged_runs for r in rows))


@dataclass(frozen=True)
class Compared:
    """What a report compares head to head: the agent types (and models) and the scenarios
    every one of them ran; those left out (they share no scenario with the rest) and why."""

    contenders: list[Contender]
    scenarios: list[str]
    left_out: list[tuple[Contender, str]]


RowKey = tuple[str, str | None, str | None]
"""A row's scenario, agent type and model: what :meth:`Comparison.row` looks it up by."""


class _RowIndex:
    """A comparison's rows by :data:`RowKey` (the first row of each key), built on first use
    and again whenever the comparison's ``rows`` are another list (a copy made with other
    rows): derived from the rows, so never part of the comparison's equality."""

    __slots__ = ("by_key", "rows", "size")

    def __init__(self) -> None:
        self.rows: list[Row] | None = None
        self.size = 0
        self.by_key: dict[RowKey, Row] = {}

    def of(self, rows: list[Row]) -> dict[RowKey, Row]:
        if self.rows is not rows or self.size != len(rows):
            self.by_key = {}
            for row in rows:
                self.by_key.setdefault((row.scenario, row.agent_type, row.model), row)
            self.rows, self.size = rows, len(rows)
        return self.by_key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _RowIndex)

    __hash__ = None  # type: ignore[assignment]


class Comparison(_Strict):
    """Every scenario × agent type (× model) run of one report, in scenario-file, agent-type,
    then model order."""

    format: Literal[1, 2] = REPORT_FORMAT
    agentkit_version: str = agentkit.__version__
    agent_types: list[str]
    models: list[str] = []
    """The models of an evaluation, in order (empty: the rows ran their scripts/recordings)."""
    rows: list[Row]
    diagrams: dict[str, str] = {}
    """Mermaid flowcharts of the workflow agent types' workflows, by agent type."""
    shard: tuple[int, int] | None = None
    """``(i, n)``: this report holds shard i of n (``--shard i/n``); None: the whole run."""
    plan: list[str] = []
    """A shard's: the row keys of the whole run, in its order (what a merge puts back)."""
    coverage: dict[str, Any] | None = None
    """What the runs exercised (:meth:`agentkit.quality.Coverage.to_dict`; a merge of shards
    joins theirs; None: not measured, as in an evaluation)."""
    _runs: RunStore | None = PrivateAttr(default=None)
    _index: _RowIndex = PrivateAttr(default_factory=_RowIndex)

    @property
    def runs(self) -> RunStore | None:
        """Where the rows' traces and timelines are kept on disk (None: in the rows)."""
        return self._runs

    def keeping_runs(self, store: RunStore | None) -> Comparison:
        """This comparison, its rows' traces and timelines read from ``store`` where the
        rows keep none (:func:`~agentkit.report.run_comparison` with ``runs_folder``)."""
        self._runs = store
        return self

    def with_trace(self, row: Row) -> Row:
        """``row`` with its trace, timeline and snapshot trace, read back from :attr:`runs`
        if it keeps them there (one row at a time: the page's sections, the report folder's
        files)."""
        if self._runs is None or row.trace is not None:
            return row
        return row.model_copy(update={"trace": self._runs.trace(row),
                                      "timeline": self._runs.timeline(row),
                                      "snapshot_trace": self._runs.snapshot_trace(row)})

    @model_validator(mode="after")
    def _known_agent_types(self) -> Comparison:
        for index, row in enumerate(self.rows):
            if row.agent_type is not None and row.agent_type not in self.agent_types:
                raise ValueError(f"rows.{index}.agent_type: `{row.agent_type}` is not one of "
                                 f"agent_types ({', '.join(self.agent_types) or 'none'})")
            if row.model is not None and row.model not in self.models:
                raise ValueError(f"rows.{index}.model: `{row.model}` is not one of models "
                                 f"({', '.join(self.models) or 'none'})")
        return self

    def by_tag(self) -> list[tuple[str, dict[Contender, tuple[int, int]]]]:
        """Per tag of the scenarios, per contender: (runs passed, runs); the tags with runs
        that did not pass first (most of them first), then by name."""
        counts: dict[str, dict[Contender, tuple[int, int]]] = {}
        for row in self.rows:
            if row.agent_type is None:
                continue
            for tag in row.tags:
                passed, runs = counts.setdefault(tag, {}).get(row.contender, (0, 0))
                counts[tag][row.contender] = (passed + (row.result == "pass"), runs + 1)

        def order(tag: str) -> tuple[int, str]:
            return (-sum(runs - passed for passed, runs in counts[tag].values()), tag)

        return [(tag, counts[tag]) for tag in sorted(counts, key=order)]

    @property
    def contenders(self) -> list[Contender]:
        """Each agent type (× model) with a row, in agent-type then model order."""
        present = {r.contender for r in self.rows if r.agent_type is not None}
        models: list[str | None] = list(self.models) or [None]
        return [(agent_type, model) for agent_type in self.agent_types
                for model in models if (agent_type, model) in present]

    def compared(self) -> Compared:
        """The contenders compared head to head and the scenarios all of them ran.

        Totals over different scenario sets compare nothing, so the summary and the
        head-to-head table are over the scenarios every compared contender ran. When no
        scenario is shared by all, the contender that ran the fewest scenarios is left out
        (and named, with why) until some are."""
        ran: dict[Contender, dict[str, None]] = {c: {} for c in self.contenders}
        runs: dict[Contender, int] = dict.fromkeys(ran, 0)
        for row in self.rows:
            if row.agent_type is not None:
                ran[row.contender][row.scenario] = None
                runs[row.contender] += 1
        contenders = list(ran)
        left_out: list[tuple[Contender, str]] = []
        scenarios = self.scenarios
        while contenders:
            shared = [s for s in scenarios if all(s in ran[c] for c in contenders)]
            if shared or len(contenders) == 1:
                return Compared(contenders, shared, left_out)
            fewest = min(reversed(contenders), key=lambda c: runs[c])
            contenders.remove(fewest)
            count = runs[fewest]
            left_out.append((fewest, f"ran {count} scenario{'s' if count != 1 else ''}, none "
                                     "of them run by all the others"))
        return Compared([], [], left_out)

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

    def row(self, scenario: str, agent_type: str | None, model: str | None = None) -> Row | None:
        """The row of ``scenario`` under ``agent_type`` (and ``model``), if the comparison has
        one: looked up in an index of the rows built once, not by a scan of them."""
        return self._index.of(self.rows).get((scenario, agent_type, model))

    def summaries(self) -> list[AgentSummary]:
        """One summary per compared agent type (× model), over the scenarios all of them ran
        (:meth:`compared`; load errors belong to no agent type)."""
        compared = self.compared()
        shared = set(compared.scenarios)
        mine: dict[Contender, list[Row]] = {contender: [] for contender in compared.contenders}
        for row in self.rows:
            if row.agent_type is not None and row.scenario in shared and row.contender in mine:
                mine[row.contender].append(row)
        return [_summarize(contender, rows) for contender, rows in mine.items()]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form; ``summary`` and ``compared`` are derived from the rows and
        recomputed when read back."""
        return self.dict_around([r.to_dict() for r in self.rows])

    def dict_around(self, rows: Any) -> dict[str, Any]:
        """:meth:`to_dict` with ``rows`` standing for its rows (a report written a row at a
        time puts a placeholder there)."""
        compared = self.compared()
        return {"format": REPORT_FORMAT, "agentkit_version": self.agentkit_version,
                "agent_types": list(self.agent_types),
                **({"models": list(self.models)} if self.models else {}),
                "compared": {"scenarios": list(compared.scenarios),
                             "left_out": [{"agent_type": c[0],
                                           **({"model": c[1]} if c[1] is not None else {}),
                                           "reason": reason} for c, reason in compared.left_out]},
                "summary": [s.to_dict() for s in self.summaries()],
                "rows": rows,
                **({"diagrams": dict(self.diagrams)} if self.diagrams else {}),
                **({"shard": list(self.shard), "plan": list(self.plan)}
                   if self.shard is not None else {}),
                **({"coverage": self.coverage} if self.coverage is not None else {})}

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
        if data["format"] not in READ_REPORT_FORMATS:
            raise ReportError(f"{at('format')}: report format {data['format']!r} is not "
                              f"supported (this agentkit reads formats "
                              f"{' and '.join(map(str, READ_REPORT_FORMATS))})")
        fields = {k: v for k, v in data.items()
                  if k not in ("summary", "baseline", "compared", "head_to_head", "agentdojo")}
        try:
            comparison = cls.model_validate(fields)
        except ValidationError as exc:
            raise ReportError(_describe(source, exc, where)) from None
        keys = Counter(r.key for r in comparison.rows)
        duplicates = sorted(k for k, n in keys.items() if n > 1)
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
