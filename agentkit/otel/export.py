"""Export runs as spans: to an OTLP-JSON file and to an OTLP/HTTP endpoint.

:class:`OtelExport` collects the runs of a command -- every run
:func:`~agentkit.harness.run_case` judges while :meth:`OtelExport.observing` is active, and
plain tests' bus events -- and sends them when it closes: one file (runs in order of name,
so the file is the same however the runs were spread over processes) and one request to the
endpoint. A collector that is down or refuses costs one warning and at most the exporter's
timeout, never the run's result.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentkit.core.events import (
    AgentChatEndEvent,
    AgentChatStartEvent,
    Event,
    LLMCallEndEvent,
    ToolCallEndEvent,
)
from agentkit.core.files import atomic_write_text
from agentkit.core.secrets import Redactor
from agentkit.harness import observing_runs
from agentkit.otel import genai, otlp_json
from agentkit.otel.settings import stable_from_env
from agentkit.otel.spans import Evaluation, RunRecord, SpanBuilder
from agentkit.scenario._model_base import SlowRegexError
from agentkit.scenario.check import expectation_results
from agentkit.trace import IdNormalizer, Trace, TurnTrace, build_turn
from agentkit.verdict import Verdict

if TYPE_CHECKING:
    from agentkit.harness import ScenarioResult

__all__ = ["OtelExport", "record_of_result", "record_of_test", "DEFAULT_TIMEOUT"]

DEFAULT_TIMEOUT = 5.0
"""Seconds an export to an endpoint may take, retries included, unless
``OTEL_EXPORTER_OTLP_TRACES_TIMEOUT``/``OTEL_EXPORTER_OTLP_TIMEOUT`` say otherwise."""


def _shown_url(url: str) -> str:
    """``url`` as it may be printed: no user, password, query or fragment."""
    from agentkit.recording import public_url

    return public_url(url) or "<endpoint>"


# ---------------------------------------------------------------------------- runs
def record_of_result(result: ScenarioResult, verdict: Verdict) -> RunRecord:
    """A scenario run as an exported run: its trace, each expectation of the scenario (and
    the snapshot, and the verdict) as an evaluation."""
    scenario, agent_type = result.scenario, result.agent_type
    evaluations: list[Evaluation] = []
    try:
        for checked in expectation_results(result.trace, scenario.turns,
                                           scenario.expect_for(agent_type), result.judgements):
            evaluations.append(Evaluation(checked.name, "pass" if checked.passed else "fail",
                                          checked.passed, "\n".join(checked.problems)))
    except SlowRegexError as exc:
        evaluations.append(Evaluation("expectations", "error", False, str(exc)))
    if verdict.snapshot is not None:
        same = verdict.snapshot in ("same", "created", "updated")
        evaluations.append(Evaluation("snapshot", verdict.snapshot, same,
                                      "" if same else "\n".join(verdict.snapshot_problems())))
    evaluations.append(Evaluation("verdict", verdict.outcome, verdict.passed,
                                  "\n".join(verdict.lines())))
    attributes = {"agentkit.scenario": scenario.name, "agentkit.agent_type": agent_type}
    if scenario.path is not None:
        attributes["agentkit.scenario.file"] = Path(scenario.path).name
    spec = scenario.agents.get(agent_type)
    # what an import needs to run the agent again as it ran: its limits and forced tools,
    # and which tools answer directly
    if spec is not None and spec.params:
        attributes["agentkit.agent_params"] = genai.dumps(Redactor().data(spec.params))
    direct = sorted(t.metadata.name for t in result.tools if t.metadata.return_direct)
    if direct:
        attributes["agentkit.return_direct"] = genai.dumps(direct)
    return RunRecord(key=result.name, trace=result.trace, agent=agent_type,
                     evaluations=evaluations, team=spec is not None and spec.team is not None,
                     outcome=verdict.outcome, error=verdict.stopped_by, attributes=attributes,
                     sample=result.sample)


def record_of_test(nodeid: str, events: Sequence[Event], *, passed: bool,
                   failure: str = "") -> RunRecord | None:
    """A plain test as an exported run, from the bus events it emitted: each top-level agent
    chat is a turn (calls outside any chat make one more); None when it made no LLM or tool
    call. Times start at the test's first call."""
    parents = {e.span_id: e.parent_id for e in events if e.span_id is not None}
    chats = {e.span_id: e for e in events
             if isinstance(e, AgentChatStartEvent) and e.span_id is not None}

    def chat_of(span: str | None) -> str | None:
        found = None
        while span is not None:
            if span in chats:
                found = span  # the outermost chat wins: an agent used as a tool is inside
            span = parents.get(span)
        return found

    groups: dict[str | None, list[Event]] = {}
    for event in events:
        groups.setdefault(chat_of(event.span_id), []).append(event)
    if not any(isinstance(e, (LLMCallEndEvent, ToolCallEndEvent)) for e in events):
        return None
    ids = IdNormalizer()
    turns: list[TurnTrace] = []
    for key, group in groups.items():
        start = chats.get(key) if key is not None else None
        if start is None and not any(isinstance(e, (LLMCallEndEvent, ToolCallEndEvent))
                                     for e in group):
            continue
        end = next((e for e in group if isinstance(e, AgentChatEndEvent)
                    and e.span_id == key), None)
        latencies = [e.latency for e in group if isinstance(e, (LLMCallEndEvent,
                                                                ToolCallEndEvent))]
        began = (start.time if start is not None else
                 min(e.time - getattr(e, "latency", 0.0) for e in group))
        finished = max(e.time for e in group)
        response = None if end is None or end.response is None else str(end.response)
        turns.append(build_turn(start.user_msg if isinstance(start, AgentChatStartEvent) else "",
                                group, ids, response=response,
                                error=end.error if end is not None else None, memory=[],
                                wall_time=finished - began, serial_time=sum(latencies),
                                started=began))
    turns.sort(key=lambda t: t.started)
    _shift(turns, min(t.started for t in turns))
    trace = Trace(scenario=nodeid, agent="test", turns=turns)
    evaluation = Evaluation("test", "pass" if passed else "fail", passed, failure)
    return RunRecord(key=nodeid, trace=trace, agent="agent", evaluations=[evaluation],
                     outcome="pass" if passed else "fail", attributes={"agentkit.test": nodeid})


def _shift(turns: Sequence[TurnTrace], base: float) -> None:
    """Move every time of ``turns`` back by ``base`` (a plain test's clock may not start at
    zero)."""
    for turn in turns:
        turn.started -= base
        for step in turn.steps:
            for call in step.llm_calls:
                call.started -= base
            for tool in step.tool_calls:
                tool.started -= base


# ---------------------------------------------------------------------------- export
@dataclass(frozen=True)
class Sent:
    """What :meth:`OtelExport.close` did, one line each, for the command's output."""

    lines: tuple[str, ...]


class OtelExport:
    """The runs of one command, exported when it closes (module docstring).

    ``out``: the OTLP-JSON file; ``endpoint``: the OTLP/HTTP traces URL
    (:func:`resolve_endpoint`); ``content``: write message content, redacted; ``warn``: how
    to say, once, that the endpoint could not be reached."""

    def __init__(self, *, out: Path | None = None, endpoint: str | None = None,
                 content: bool = False, warn: Callable[[str], None] | None = None,
                 timeout: float | None = None, stable: bool | None = None) -> None:
        self.out = out
        self.endpoint = endpoint
        self.content = content
        self.stable = stable_from_env() if stable is None else stable
        """Byte-stable spans (:class:`~agentkit.otel.spans.SpanBuilder`); by default as
        ``AGENTKIT_OTEL_STABLE`` says."""
        self._built: list[Any] | None = None
        self.warn = warn or (lambda message: None)
        self.timeout = timeout
        self.records: list[RunRecord] = []
        self.extra: list[dict[str, Any]] = []
        """Spans already encoded elsewhere (pytest-xdist workers' files), added to the file."""
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        return self.out is not None or self.endpoint is not None

    def add(self, record: RunRecord | None) -> None:
        if record is not None:
            with self._lock:
                self.records.append(record)
                self._built = None

    def observe(self, result: ScenarioResult | None, verdict: Verdict) -> None:
        """A :data:`~agentkit.harness.RunObserver`: a run that could not start has no
        spans."""
        if result is not None:
            self.add(record_of_result(result, verdict))

    @contextmanager
    def observing(self) -> Iterator[OtelExport]:
        """Collect every run judged in the block (nothing when there is no target)."""
        if not self.active:
            yield self
            return
        with observing_runs(self.observe):
            yield self

    def spans(self) -> list[Any]:
        """The SDK spans of every run, runs in order of name (then of arrival); built once,
        so that the file and the endpoint get the same ids and times."""
        if self._built is None:
            builder = SpanBuilder(content=self.content, redactor=Redactor(), stable=self.stable)
            records = sorted(self.records, key=lambda r: (r.key, r.sample or 0))
            self._built = [span for record in records for span in builder.spans(record)]
        return self._built

    def encoded(self) -> dict[str, Any]:
        """The OTLP/JSON request of every run (with the ``extra`` ones merged in)."""
        request = otlp_json.encode(self.spans())
        for other in self.extra:
            request = _merge(request, other)
        return request

    def close(self) -> Sent:
        """Write the file and send to the endpoint; what was done, one line each."""
        lines: list[str] = []
        if not self.records and not self.extra:
            return Sent(())
        if self.out is not None:
            request = self.encoded()
            atomic_write_text(self.out, otlp_json.dumps(request))
            count = sum(len(ss["spans"]) for rs in request["resourceSpans"]
                        for ss in rs["scopeSpans"])
            lines.append(f"wrote {count} spans of {_runs(request)} runs to {self.out}")
        if self.endpoint is not None and self.records:
            sent = self._send(self.spans())
            if sent:
                lines.append(f"sent {len(self.records)} runs to {_shown_url(self.endpoint)}")
        return Sent(tuple(lines))

    def _send(self, spans: list[Any]) -> bool:
        """Send with the official OTLP/HTTP exporter; on failure warn once (its own log lines,
        which may repeat per retry, are kept back and the last one quoted)."""
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import SpanExportResult

        assert self.endpoint is not None
        timeout = self.timeout
        if timeout is None and not (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
                                    or os.environ.get("OTEL_EXPORTER_OTLP_TIMEOUT")):
            timeout = DEFAULT_TIMEOUT
        with _quiet_sdk_logs() as said:
            try:
                exporter = OTLPSpanExporter(endpoint=self.endpoint, timeout=timeout)
                result = exporter.export(spans)
                exporter.shutdown()  # type: ignore[no-untyped-call]
            except Exception as exc:  # noqa: BLE001 (a broken exporter must not fail the run)
                said.append(f"{type(exc).__name__}: {exc}")
                result = SpanExportResult.FAILURE
        if result == SpanExportResult.SUCCESS:
            return True
        self.warn(f"could not send the spans of {len(self.records)} runs to "
                  f"{_shown_url(self.endpoint)} ({_reason(said)}); the runs' results are not "
                  "affected")
        return False


def _reason(said: Sequence[str]) -> str:
    """Why the export failed, in a few words, from the SDK's log lines: the socket's error
    (``[Errno 111] Connection refused``) when there is one, else its first line."""
    if not said:
        return "the exporter gave no reason"
    for line in said:
        found = re.search(r"\[Errno -?\d+\] [^\"')]+", line)
        if found:
            return found.group(0).strip()
    return Redactor().text(said[0])[:200]


def _runs(request: Mapping[str, Any]) -> int:
    return len({span["traceId"] for rs in request["resourceSpans"] for ss in rs["scopeSpans"]
                for span in ss["spans"]})


def _merge(request: dict[str, Any], other: Mapping[str, Any]) -> dict[str, Any]:
    """``request`` with the spans of ``other`` added (its resources kept), then every
    resource's spans in order of run name (the root span's), so the file does not depend on
    which process ran what."""
    merged = list(request["resourceSpans"]) + list(other.get("resourceSpans", []))
    if not merged:
        return {"resourceSpans": []}
    first = merged[0]
    spans = [span for rs in merged for ss in rs["scopeSpans"] for span in ss["spans"]]
    roots = {span["traceId"]: span["name"] for span in spans if "parentSpanId" not in span}
    order = sorted(dict.fromkeys(span["traceId"] for span in spans),
                   key=lambda trace: roots.get(trace, ""))
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        by_trace.setdefault(span["traceId"], []).append(span)
    scope = first["scopeSpans"][0]["scope"]
    return {"resourceSpans": [{"resource": first["resource"], "scopeSpans": [
        {"scope": scope, "spans": [span for trace in order for span in by_trace[trace]]}]}]}


class _Said(logging.Handler):
    def __init__(self, said: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.said = said

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            self.said.append(record.getMessage())


@contextmanager
def _quiet_sdk_logs() -> Iterator[list[str]]:
    """The OpenTelemetry SDK's log lines while exporting, kept instead of printed."""
    logger = logging.getLogger("opentelemetry")
    said: list[str] = []
    handler = _Said(said)
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield said
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
