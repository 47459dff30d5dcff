"""A run of agentkit as OpenTelemetry spans, built from its trace with the official SDK.

One OTel trace per run, its spans on the run's virtual time -- durations and overlaps as the
calls had them (agentkit's timeline) -- anchored so that the run ends when it was exported (for
a live run, at its real start), and ids unique to each export of each run and sample: a
backend's default time window shows the run, and a re-sent run is a trace of its own. Asked
for (``stable=True``, ``AGENTKIT_OTEL_STABLE=1``), the spans sit on a fixed epoch
(:data:`EPOCH_NS`) with ids derived from the run's name, the same byte for byte on every
machine (for snapshots of an export)::

    support[react]                         the run: one gen_ai.evaluation.result event per
      invoke_agent react                   expectation; a turn (invoke_workflow with an
        chat scripted                      invoke_agent per agent of a team, a new one at
        execute_tool lookup_order          each hand-off)
        plan (round 1)                     LLMCompiler's plan: its planner chat and its
          chat scripted                    tasks' tool calls; CoA's chain likewise
          execute_tool population

Spans are built from :class:`~agentkit.trace.Trace` (itself built from the bus
events), never from hooks in the agents. Message content (``gen_ai.input.messages``, tool
arguments and results, and the like) is written only when asked; whatever text is written
goes through the cassettes' redactor first. An LLM judge's verdict on a turn is a ``judge``
span at the turn's end (its verdict, reason and calls, and a ``gen_ai.evaluation.result``
event); a simulated user's messages are a ``simulated_user`` span at the turn's start.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace as otel_trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import SpanKind, Status, StatusCode

from agentkit.core.secrets import Redactor
from agentkit.otel import genai as g
from agentkit.trace import LLMCallTrace, StepTrace, ToolCallTrace, Trace, TurnTrace

__all__ = ["EPOCH_NS", "Evaluation", "RunRecord", "SpanBuilder"]

EPOCH_NS = 1_767_225_600 * 10**9
"""Virtual time 0 of every run: 2026-01-01T00:00:00Z (a fixed epoch keeps spans
deterministic; a backend showing "the last 7 days" needs its range widened to see them)."""

SCOPE = "agentkit"


@dataclass(frozen=True)
class Evaluation:
    """One ``gen_ai.evaluation.result``: an expectation (or the snapshot, or the verdict)."""

    name: str
    label: str
    passed: bool
    explanation: str = ""


@dataclass
class RunRecord:
    """What one exported run is: its name (``scenario[agent type]``, or a test's node id), its
    trace, how it was judged, and a few attributes of the root span."""

    key: str
    trace: Trace
    agent: str
    evaluations: list[Evaluation] = field(default_factory=list)
    team: bool = False
    outcome: str = "pass"
    error: str | None = None
    attributes: dict[str, str] = field(default_factory=dict)
    sample: int | None = None
    """The sample of a sampled case this run replayed (``agentkit.sample``)."""
    exported_ns: int = field(default_factory=time.time_ns)
    """When the run was handed to the export (wall clock): where its spans end, unless the
    export is stable."""


class _DerivedIds(IdGenerator):
    """Ids derived from the run's name and the span's place in it (the SDK's default ids are
    random; these make an export reproducible and keep two runs' ids apart)."""

    def __init__(self, nonce: str = "") -> None:
        self.nonce = nonce
        self.key = ""
        self.count = 0

    def start(self, key: str) -> None:
        self.key, self.count = f"{self.nonce}{key}", 0

    def _number(self, text: str, bits: int) -> int:
        value = int.from_bytes(hashlib.sha256(text.encode()).digest()[: bits // 8], "big")
        return value or 1  # zero is the invalid id

    def generate_trace_id(self) -> int:
        return self._number(f"trace/{self.key}", 128)

    def generate_span_id(self) -> int:
        self.count += 1
        return self._number(f"span/{self.key}/{self.count}", 64)


def _error_type(error: str) -> str:
    """``RateLimitError: ...`` -> ``RateLimitError`` (a low-cardinality ``error.type``)."""
    head = error.split(":", 1)[0].strip()
    return head if head.isidentifier() else "_OTHER"


@dataclass
class _Node:
    """A span to be: built once its children's times are known."""

    name: str
    kind: SpanKind
    start: float
    end: float
    attributes: dict[str, Any]
    children: list[_Node] = field(default_factory=list)
    events: list[tuple[str, dict[str, Any], float]] = field(default_factory=list)
    error: str | None = None
    error_attribute: bool = True


class SpanBuilder:
    """Turns runs into finished SDK spans (``ReadableSpan``), ready for any exporter.

    ``content`` writes message content (opt-in, as the conventions say); ``redactor`` takes
    secrets out of every text written (by default the cassettes' one: keys, bearer tokens,
    URL passwords and the values of this machine's secret environment variables);
    ``stable`` puts the spans on :data:`EPOCH_NS` with ids from the runs' names (module
    docstring)."""

    def __init__(self, *, content: bool = False, redactor: Redactor | None = None,
                 stable: bool = False) -> None:
        self.content = content
        self.redactor = redactor or Redactor()
        self.stable = stable
        self._anchor = EPOCH_NS
        self._ids = _DerivedIds("" if stable else os.urandom(8).hex() + "/")
        self._provider = TracerProvider(resource=Resource({"service.name": "agentkit"}),
                                        id_generator=self._ids)
        self._tracer = self._provider.get_tracer(SCOPE)
        self._seen: dict[str, int] = {}

    # ------------------------------------------------------------------ public
    def spans(self, record: RunRecord) -> list[ReadableSpan]:
        """The spans of one run, parents before children, siblings in order of start."""
        key = record.key if record.sample is None else f"{record.key}#sample{record.sample}"
        occurrence = self._seen.get(key, 0)
        self._seen[key] = occurrence + 1
        self._ids.start(key if not occurrence else f"{key}#{occurrence + 1}")
        root = self._run_node(record)
        self._anchor = EPOCH_NS if self.stable else record.exported_ns - round(root.end * 1e9)
        finished: list[ReadableSpan] = []
        self._emit(root, None, finished)
        return finished

    # ------------------------------------------------------------------ the tree
    def _ns(self, seconds: float) -> int:
        return self._anchor + round(seconds * 1e9)

    def _text(self, value: str) -> str:
        return self.redactor.text(value)

    def _json(self, value: Any) -> str:
        return g.dumps(self.redactor.data(value))

    def _run_node(self, record: RunRecord) -> _Node:
        trace = record.trace
        end = max((t.started + t.wall_time for t in trace.turns), default=0.0)
        start = min((t.started for t in trace.turns), default=0.0)
        attributes: dict[str, Any] = {"agentkit.run": record.key, "agentkit.outcome": record.outcome,
                                      g.CONVERSATION: record.key, g.OI_KIND: "CHAIN",
                                      **record.attributes}
        if record.sample is not None:
            attributes["agentkit.sample"] = record.sample
        root = _Node(record.key, SpanKind.INTERNAL, start, end, attributes, error=record.error,
                     error_attribute=False)
        for number, turn in enumerate(trace.turns, start=1):
            root.children.append(self._turn_node(record, number, turn))
        for evaluation in record.evaluations:
            event: dict[str, Any] = {g.EVALUATION_NAME: evaluation.name,
                                     g.EVALUATION_LABEL: evaluation.label,
                                     g.EVALUATION_VALUE: 1.0 if evaluation.passed else 0.0}
            if evaluation.explanation:
                event[g.EVALUATION_EXPLANATION] = self._text(evaluation.explanation)
            root.events.append((g.EVALUATION_EVENT, event, end))
        return root

    def _messages_in_out(self, turn: TurnTrace) -> dict[str, Any]:
        if not self.content:
            return {}
        data: dict[str, Any] = {g.INPUT_MESSAGES: self._json(g.genai_messages(
            [{"role": "user", "content": turn.user}])), g.OI_INPUT: self._text(turn.user)}
        if turn.response is not None:
            data[g.OUTPUT_MESSAGES] = self._json(g.genai_output({"content": turn.response}, "stop"))
            data[g.OI_OUTPUT] = self._text(turn.response)
        if turn.tools:
            data[g.TOOL_DEFINITIONS] = self._json(g.tool_definitions(turn.tools))
        return data

    def _turn_node(self, record: RunRecord, number: int, turn: TurnTrace) -> _Node:
        node = self._agents_node(record, number, turn)
        node.children = [*self._user_nodes(turn), *node.children, *self._judge_nodes(turn)]
        return node

    def _role_usage(self, turn: TurnTrace, role: str) -> dict[str, Any]:
        calls = [c for c in turn.role_calls if c.role == role]
        prompt = sum((c.usage or {}).get("prompt_tokens", 0) for c in calls)
        completion = sum((c.usage or {}).get("completion_tokens", 0) for c in calls)
        return {"agentkit.role.calls": len(calls), g.INPUT_TOKENS: prompt,
                g.OUTPUT_TOKENS: completion}

    def _user_nodes(self, turn: TurnTrace) -> list[_Node]:
        """The simulated user's message of this turn (its opening, or its model's calls), at
        the turn's start."""
        simulated = turn.details.get("simulated_user")
        if not isinstance(simulated, Mapping):
            return []
        attributes = {**self._role_usage(turn, "user"), "agentkit.role": "simulated_user",
                      "agentkit.simulated_user.by": str(simulated.get("by")), g.OI_KIND: "CHAIN"}
        if self.content:
            attributes[g.OI_OUTPUT] = self._text(turn.user)
        return [_Node("simulated_user", SpanKind.INTERNAL, turn.started, turn.started,
                      attributes)]

    def _judge_nodes(self, turn: TurnTrace) -> list[_Node]:
        """Each LLM judge's verdict filed into this turn, at the turn's end."""
        end = turn.started + turn.wall_time
        nodes = []
        judged = list(turn.details.get("judged") or ())
        for index, entry in enumerate(judged):
            at = str(entry.get("at"))
            verdict = str(entry.get("verdict"))
            attributes: dict[str, Any] = {"agentkit.role": "judge", "agentkit.judge.at": at,
                                          "agentkit.judge.verdict": verdict,
                                          g.OI_KIND: "EVALUATOR"}
            if index == 0:  # the turn's role calls are counted once, on its first judgement
                attributes.update(self._role_usage(turn, "judge"))
            if entry.get("judge"):
                attributes["agentkit.judge.model"] = str(entry["judge"])
            if entry.get("split"):
                attributes["agentkit.judge.split"] = True
            event: dict[str, Any] = {g.EVALUATION_NAME: at, g.EVALUATION_LABEL: verdict,
                                     g.EVALUATION_VALUE: 1.0 if verdict == "pass" else 0.0}
            reason = str(entry.get("error") or entry.get("reason") or "")
            if reason:
                attributes["agentkit.judge.reason"] = self._text(reason)
                event[g.EVALUATION_EXPLANATION] = self._text(reason)
            if isinstance(entry.get("score"), int | float):
                attributes["agentkit.judge.score"] = float(entry["score"])
            nodes.append(_Node(f"judge {at}", SpanKind.INTERNAL, end, end, attributes,
                               events=[(g.EVALUATION_EVENT, event, end)],
                               error=str(entry["error"]) if entry.get("error") else None,
                               error_attribute=False))
        return nodes

    def _agents_node(self, record: RunRecord, number: int, turn: TurnTrace) -> _Node:
        start, end = turn.started, turn.started + turn.wall_time
        segments = _segments(turn)
        agents = [name for name, _ in segments if name is not None]
        common = {g.PROVIDER: _provider(turn), g.CONVERSATION: record.key, "agentkit.turn": number}
        if not (record.team or len(set(agents)) > 1):
            name = agents[0] if agents else record.agent
            node = self._agent_node(name, start, end, {**common, **self._messages_in_out(turn)})
            for _, steps in segments:
                node.children += self._step_nodes(steps, turn)
            node.error = turn.error
            return node
        workflow = _Node(f"invoke_workflow {record.agent}", SpanKind.INTERNAL, start, end,
                         {g.OPERATION: "invoke_workflow", g.AGENT_NAME: record.agent,
                          "agentkit.turn": number, g.OI_KIND: "CHAIN",
                          **self._messages_in_out(turn)}, error=turn.error)
        handoffs = list(turn.details.get("handoffs", []))
        cursor = start
        for index, (member, steps) in enumerate(segments):
            children = self._step_nodes(steps, turn)
            last = index == len(segments) - 1
            stop = end if last else max([cursor, *(c.end for c in children)])
            attributes = dict(common)
            if index and handoffs:
                handoff = handoffs.pop(0)
                attributes.update({"agentkit.handoff.from": str(handoff.get("from")),
                                   "agentkit.handoff.reason": self._text(
                                       str(handoff.get("reason") or ""))})
            node = self._agent_node(member or record.agent, cursor, stop, attributes)
            node.children = children
            if last:
                node.error = turn.error
            workflow.children.append(node)
            cursor = stop
        return workflow

    def _agent_node(self, name: str, start: float, end: float,
                    attributes: Mapping[str, Any]) -> _Node:
        return _Node(f"invoke_agent {name}", SpanKind.INTERNAL, start, end,
                     {g.OPERATION: "invoke_agent", g.AGENT_NAME: name, **attributes,
                      g.OI_KIND: "AGENT"})

    def _step_nodes(self, steps: Sequence[StepTrace], turn: TurnTrace) -> list[_Node]:
        nodes: list[_Node] = []
        descriptions = {t.get("name"): t.get("description") for t in turn.tools}
        for step in steps:
            chats = [self._chat_node(call, step) for call in step.llm_calls]
            tools = [self._tool_node(call, step, descriptions) for call in step.tool_calls]
            group = self._group_node(step, chats, tools)
            nodes += [*chats, *tools] if group is None else [group, *chats, *tools]
        return sorted(nodes, key=lambda n: n.start)

    def _group_node(self, step: StepTrace, chats: list[_Node],
                    tools: list[_Node]) -> _Node | None:
        """LLMCompiler's plan or CoA's chain as a span of its own, holding the chat that wrote
        it and the tool calls that carried it out (taken out of ``chats`` and ``tools``)."""
        plan, chain = step.details.get("plan"), step.details.get("chain")
        if plan is None and chain is None:
            return None
        members = chats[:1]
        error: str | None = None
        if plan is not None:
            planned = {task.get("call") for task in plan.get("tasks", ())}
            members += [node for node, call in zip(tools, step.tool_calls, strict=True)
                        if call.id in planned]
            attributes: dict[str, Any] = {"agentkit.plan.round": plan.get("round", 1),
                                          "agentkit.plan.tasks": self._json(plan.get("tasks", []))}
            if plan.get("notes"):
                attributes["agentkit.plan.notes"] = self._json(plan["notes"])
            joiner = step.details.get("joiner")
            if isinstance(joiner, Mapping):
                attributes["agentkit.joiner.decision"] = str(joiner.get("decision"))
            name = f"plan (round {plan.get('round', 1)})"
            error = plan.get("error")
        else:
            members += tools
            attributes = {"agentkit.chain": self._json(chain)}
            if step.details.get("chain_levels"):
                attributes["agentkit.chain.levels"] = self._json(step.details["chain_levels"])
            name = "chain"
        for node in members:
            (chats if node in chats else tools).remove(node)
        start = min((n.start for n in members), default=0.0)
        end = max((n.end for n in members), default=start)
        attributes.update({"agentkit.step": step.index + 1, g.OI_KIND: "CHAIN"})
        return _Node(name, SpanKind.INTERNAL, start, end, attributes,
                     children=sorted(members, key=lambda n: n.start),
                     error=str(error) if error else None, error_attribute=False)

    def _chat_node(self, call: LLMCallTrace, step: StepTrace) -> _Node:
        model = call.model or "unknown"
        operation = "chat" if "chat" in call.kind else "text_completion"
        response = call.response or {}
        finish = "tool_calls" if response.get("tool_calls") else "stop"
        attributes: dict[str, Any] = {g.OPERATION: operation, g.PROVIDER: call.provider,
                                      g.REQUEST_MODEL: model, g.RESPONSE_MODEL: model,
                                      "agentkit.step": step.index + 1, g.OI_KIND: "LLM",
                                      g.OI_MODEL: model}
        if call.kind.startswith("stream"):
            attributes[g.REQUEST_STREAM] = True
        if call.error is None:
            attributes[g.FINISH_REASONS] = (finish,)
        if call.usage:
            prompt, completion = call.usage.get("prompt_tokens", 0), call.usage.get(
                "completion_tokens", 0)
            attributes.update({g.INPUT_TOKENS: prompt, g.OUTPUT_TOKENS: completion,
                               g.OI_PROMPT_TOKENS: prompt, g.OI_COMPLETION_TOKENS: completion,
                               g.OI_TOTAL_TOKENS: call.usage.get("total_tokens",
                                                                 prompt + completion)})
        if self.content:
            attributes[g.INPUT_MESSAGES] = self._json(g.genai_messages(call.messages))
            if call.response is not None:
                attributes[g.OUTPUT_MESSAGES] = self._json(g.genai_output(call.response, finish))
        return _Node(f"{operation} {model}", SpanKind.CLIENT, call.started,
                     call.started + call.latency, attributes, error=call.error)

    def _tool_node(self, call: ToolCallTrace, step: StepTrace,
                   descriptions: Mapping[Any, Any]) -> _Node:
        attributes: dict[str, Any] = {g.OPERATION: "execute_tool", g.TOOL_NAME: call.name,
                                      g.TOOL_TYPE: "function",
                                      "agentkit.step": step.index + 1, g.OI_KIND: "TOOL",
                                      g.OI_TOOL_NAME: call.name}
        if self.content:  # arguments and results are content, as messages are
            attributes[g.TOOL_ARGUMENTS] = self._json(call.args)
            if not call.is_error:
                attributes[g.TOOL_RESULT] = self._text(call.output)
        if call.id is not None:
            attributes[g.TOOL_CALL_ID] = call.id
        if descriptions.get(call.name):
            attributes[g.TOOL_DESCRIPTION] = str(descriptions[call.name])
        if call.agent is not None:
            attributes["agentkit.agent"] = call.agent
        return _Node(f"execute_tool {call.name}", SpanKind.INTERNAL, call.started, call.ended,
                     attributes, error=call.output if call.is_error else None)

    # ------------------------------------------------------------------ SDK spans
    def _emit(self, node: _Node, parent: otel_trace.Span | None,
              finished: list[ReadableSpan]) -> None:
        context = (otel_trace.set_span_in_context(parent) if parent is not None
                   else otel_context.Context())
        span = self._tracer.start_span(node.name, context=context, kind=node.kind,
                                       attributes=node.attributes, start_time=self._ns(node.start))
        for name, attributes, at in node.events:
            span.add_event(name, attributes, timestamp=self._ns(at))
        if node.error is not None:
            if node.error_attribute:
                span.set_attribute(g.ERROR_TYPE, _error_type(node.error))
            span.set_status(Status(StatusCode.ERROR, self._text(node.error)))
        assert isinstance(span, ReadableSpan)
        finished.append(span)
        for child in node.children:
            self._emit(child, span, finished)
        span.end(end_time=self._ns(max(node.end, node.start)))


def _segments(turn: TurnTrace) -> list[tuple[str | None, list[StepTrace]]]:
    """The turn's steps grouped by the agent that took them, in order: one group per agent
    in charge (a hand-off starts the next); runner agents name none (one group)."""
    groups: list[tuple[str | None, list[StepTrace]]] = []
    for step in turn.steps:
        agent = step.details.get("agent")
        name = str(agent) if agent is not None else None
        if groups and groups[-1][0] == name:
            groups[-1][1].append(step)
        else:
            groups.append((name, [step]))
    return groups or [(None, [])]


def _provider(turn: TurnTrace) -> str:
    """The provider of an agent's span: the one its turn's model calls went to (the first
    call's, when a turn mixed them), agentkit's own when it made none."""
    for step in turn.steps:
        for call in step.llm_calls:
            return call.provider
    return g.PROVIDER_NAME
