"""The agent-workflow family: agent types ``function_agent`` and ``react_agent`` (a one-agent
``AgentWorkflow``) and ``agent_workflow`` (a ``team:`` of agents with hand-offs), the chat
adapter that runs a workflow through the harness, and how workflow runs go into traces.

**The adapter** (:class:`WorkflowChatAgent`) gives a workflow the harness's chat interface
(``chat``, ``stream_chat``, ``chat_history``, ``memory``), like a runner agent. One context
serves every turn of a scenario, so the shared state and the current agent carry over from
turn to turn, as they would for a client that keeps its context. When the workflow asks for
input (an ``InputRequiredEvent``), the adapter does what a client pausing for a human does: it
saves the context (``to_dict``), cancels the run, restores the context (``from_dict``),
resumes, and sends the turn's next scripted answer as a ``HumanResponseEvent``. Each answer
given is a :class:`HumanInputEvent` on the bus, so traces show it (the turn's ``human``).

**Trajectories** render as the agent's LLM speaks: ``function_agent`` like
``function_calling`` (tool calls), ``react_agent`` like ``react`` (ReAct text). A team has one
script per agent, so ``agent_workflow`` renders none.

**Traces.** A trace step of a workflow run is one *agent step*: the agent's turn at the LLM
(its input, its LLM call, its output) plus the tool calls that output asked for. It opens at
the agent's input event (in the workflow's agent step, ``AGENT_STEP``, so the LLM call nests
under it), and the later workflow steps of the run (``parse_agent_output``, ``call_tool``,
``aggregate_tool_results``) belong to it until the next agent step opens. Each step says
``agent`` (who took it) and ``retry`` when its output was sent back to the agent; its
``input`` is the user message for the first step of a run, its ``output`` the agent's text
(a ``return_direct`` tool's output for the step that ended the run with one), and ``is_last``
marks the step the run stopped after. Per turn: ``agents`` (the agents in the order they took
over), ``handoffs`` (``from``, ``to``, ``reason``) and ``human`` (the scripted answers given);
the final output and the memory are the turn's core fields. A run that fails puts its error on
the step it failed in. Runner agents emit none of these events, so their traces do not change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentkit.agent.types import AgentChatResponse, StreamingAgentChatResponse
from agentkit.agent.workflow import (
    AGENT_STEP,
    AgentHandoffEvent,
    AgentInput,
    AgentOutput,
    AgentStream,
    AgentWorkflow,
    BaseWorkflowAgent,
    FunctionAgent,
    ToolCall,
    ToolCallResult,
    WorkflowAgentInputEvent,
    WorkflowAgentOutputEvent,
)
from agentkit.agent.workflow import ReActAgent as ReActWorkflowAgent
from agentkit.core.errors import HarnessError
from agentkit.core.events import Event as BusEvent
from agentkit.core.events import dispatcher
from agentkit.core.sim import run_sync
from agentkit.harness._agent_types import AgentContext, AgentFactory, AgentType
from agentkit.harness._families.function_calling import render_tool_calls
from agentkit.harness._families.react import render_react
from agentkit.llms.types import ChatMessage, MessageRole
from agentkit.memory import BaseMemory, ChatMemoryBuffer
from agentkit.scenario._loader import ScenarioError
from agentkit.trace._trace import StepTrace, TraceHandler, TurnBuilder
from agentkit.workflow import (
    Checkpoint,
    Context,
    ContextSerdeError,
    Event,
    HumanResponseEvent,
    InputRequiredEvent,
    Workflow,
    WorkflowHandler,
    WorkflowRunEndEvent,
    WorkflowRunStartEvent,
    WorkflowRuntimeError,
    WorkflowStepStartEvent,
)

__all__ = ["FUNCTION_AGENT", "REACT_AGENT", "AGENT_WORKFLOW", "WorkflowChatAgent",
           "HumanInputEvent", "file_human", "ResumedRunEvent"]


# ---------------------------------------------------------------------------- the adapter
@dataclass(kw_only=True, slots=True)
class HumanInputEvent(BusEvent):
    """The scripted human answered an input request of the workflow."""

    request: str
    response: str


def _request_text(event: InputRequiredEvent) -> str:
    prefix = event.get("prefix")
    return str(prefix) if prefix is not None else str(event.to_dict())


@dataclass(kw_only=True, slots=True)
class ResumedRunEvent(BusEvent):
    """A resumed agent type took over: ``step`` agent steps of agent type ``recording``'s
    recorded run were replayed, and the run goes on from its checkpoint there."""

    recording: str
    step: int


class WorkflowChatAgent:
    """A workflow (an ``AgentWorkflow`` or a stand-alone workflow agent) as a chat agent;
    ``max_iterations`` goes to every run."""

    def __init__(self, workflow: Workflow, *, max_iterations: int | None = None) -> None:
        self.workflow = workflow
        self.max_iterations = max_iterations
        self.memory: BaseMemory = ChatMemoryBuffer.from_defaults()
        self._ctx = Context(workflow)
        self._prefix: _Prefix | None = None

    @property
    def chat_history(self) -> list[ChatMessage]:
        return self.memory.get_all()

    def resume_after(self, recorded: WorkflowChatAgent, steps: int, recording: str) -> None:
        """Have ``recorded`` (the agent of a recorded run, replaying it) take this agent's
        turns through its first ``steps`` agent steps; this agent goes on from the checkpoint
        there (its workflow restores the recorded run's saved context and carries on)."""
        self._prefix = _Prefix(recorded, steps, steps, recording)

    def chat(self, message: str, *, human: Sequence[str] = ()) -> AgentChatResponse:
        """Run the workflow on ``message``; ``human`` answers its input requests in order."""
        output, _ = run_sync(self._arun(message, list(human), deltas=False))
        return AgentChatResponse(response=str(output))

    def stream_chat(self, message: str, *, human: Sequence[str] = ()) -> StreamingAgentChatResponse:
        """The final answer as a stream: the last agent step's deltas when they spell it."""
        output, deltas = run_sync(self._arun(message, list(human), deltas=True))
        answer = AgentChatResponse(response=str(output))
        spelled = "".join(deltas) == answer.response
        return StreamingAgentChatResponse.from_answer(answer, deltas if spelled else None)

    async def _arun(self, message: str, answers: list[str], *,
                    deltas: bool) -> tuple[Any, list[str]]:
        try:
            return await self._turn(message, answers, deltas)
        except WorkflowRuntimeError as exc:
            # the harness's own trouble inside a step (a cassette miss, a dead MCP server)
            # stops the turn as itself, with its kind, not as a failure of the agent's step
            if isinstance(exc.__cause__, HarnessError):
                raise exc.__cause__ from None
            raise

    async def _turn(self, message: str, answers: list[str],
                    deltas: bool) -> tuple[Any, list[str]]:
        """One turn: this agent's run, or (resuming) the recorded run's until the resume point
        and this agent's from its checkpoint."""
        prefix = self._prefix
        if prefix is not None and prefix.left == 0:  # the resume point ended the last turn
            self._prefix = None
            self._ctx = Context.from_dict(self.workflow, prefix.agent._ctx.to_dict())
            self.memory = await self._ctx.store.get("memory")
            prefix.announce()
        if self._prefix is None:
            handler = self.workflow.run(user_msg=message, ctx=self._ctx, memory=self.memory,
                                        max_iterations=self.max_iterations)
            return await self._drive(handler, answers, deltas)
        assert prefix is not None
        recorded = prefix.agent
        stop = _StopAfter(prefix.left)
        handler = recorded.workflow.run(user_msg=message, ctx=recorded._ctx,
                                        memory=recorded.memory,
                                        max_iterations=recorded.max_iterations,
                                        checkpoint_callback=stop.record)
        result = await recorded._drive(handler, answers, deltas, stop)
        if stop.checkpoint is None:  # the recorded turn ended before the resume point
            prefix.left -= stop.done
            self.memory = recorded.memory
            return result
        self._prefix = None
        prefix.announce()
        # through its saved form, as a checkpoint written to disk and resumed elsewhere: the
        # continuation holds nothing of the recorded run's objects
        try:
            checkpoint = Checkpoint.from_dict(self.workflow, stop.checkpoint.to_dict())
        except ContextSerdeError as exc:
            raise ContextSerdeError(
                f"the checkpoint after step {prefix.total} of the recorded run of "
                f"`{prefix.recording}` does not fit this agent type's workflow (it needs the "
                f"recorded run's agents, by name): {exc}") from None
        handler = self.workflow.run_from(checkpoint)
        self._ctx = handler.ctx
        return await self._drive(handler, answers, deltas)

    async def _drive(self, handler: WorkflowHandler, answers: list[str], streamed: bool,
                     stop: _StopAfter | None = None) -> tuple[Any, list[str]]:
        """Run ``handler``'s run to its end (answering input requests from ``answers``), or
        until ``stop`` takes its checkpoint (then the run is cancelled and the output None).
        The deltas of the last agent step are read when the turn is ``streamed``; a chat turn
        tells the run it reads none, so its agents build no ``AgentStream`` (one per chunk
        of every reply) for it. No turn reads the agents' outputs, tool calls and results
        (the trace has them from the bus), so none is written to the stream, where each
        write would wake this reader for nothing."""
        deltas: list[str] = []
        callback = stop.record if stop is not None else None
        unread = _UNREAD_STREAMED if streamed else _UNREAD_CHAT
        while True:
            handler.ctx.unread_in_stream = unread  # before the run's first step runs
            request = None
            async for event in handler.stream_events():
                kind = _KINDS.get(type(event)) or _kind(type(event))
                if kind is _DELTA:
                    deltas.append(event.delta)
                elif kind is _OTHER:
                    continue
                elif kind is _STEP:  # a new agent step: keep only its deltas
                    deltas = []
                elif kind is _REQUEST:
                    request = event
                    break
                else:
                    await handler.cancel_run()
                    return None, deltas
            if request is None:
                break
            if not answers:
                await handler.cancel_run()
                raise RuntimeError(f"the workflow asked for input ({_request_text(request)!r}) but "
                                   "the turn has no scripted `human` answer left")
            answer = answers.pop(0)
            saved = handler.ctx.to_dict()
            await handler.cancel_run()
            self._ctx = Context.from_dict(self.workflow, saved)
            handler = self.workflow.run(ctx=self._ctx, checkpoint_callback=callback)
            dispatcher.emit(HumanInputEvent(request=_request_text(request), response=answer))
            handler.ctx.send_event(HumanResponseEvent(response=answer))
            deltas = []
        output: Any = await handler
        self.memory = await self._ctx.store.get("memory")
        if answers:
            raise RuntimeError(f"{len(answers)} scripted `human` answer(s) were never asked for")
        return output, deltas


class _ResumePoint(Event):
    """Streamed by :class:`_StopAfter` when it has taken its checkpoint: the caller stops the
    run there."""


# The stream events :meth:`WorkflowChatAgent._drive` ignores (so the run need not write them):
# what the agents did reaches the trace from the bus; a chat turn reads no step's deltas either
_UNREAD_STREAMED: tuple[type, ...] = (AgentOutput, ToolCall, ToolCallResult)
_UNREAD_CHAT = (*_UNREAD_STREAMED, AgentInput, AgentStream)

# What :meth:`WorkflowChatAgent._drive` does with a streamed object, by its class (worked out
# once per class: a run streams dozens of events, most of them deltas)
_DELTA, _STEP, _REQUEST, _RESUME, _OTHER = "delta", "step", "request", "resume", "other"
_KINDS: dict[type, str] = {}


def _kind(cls: type) -> str:
    kind = next((kind for kind, base in ((_DELTA, AgentStream), (_STEP, AgentInput),
                                         (_REQUEST, InputRequiredEvent), (_RESUME, _ResumePoint))
                 if issubclass(cls, base)), _OTHER)
    return _KINDS.setdefault(cls, kind)


@dataclass
class _StopAfter:
    """A checkpoint callback that takes the checkpoint after ``steps`` agent steps (their tool
    calls done, the next agent step's input returned) and holds the run there."""

    steps: int
    done: int = 0
    checkpoint: Checkpoint | None = None

    async def record(self, run_id: str, last_completed_step: str | None,
                     input_ev: Event | None, output_ev: Event | None, ctx: Context) -> None:
        if last_completed_step == AGENT_STEP:
            self.done += 1
        if self.done < self.steps or not isinstance(output_ev, AgentInput):
            return
        self.checkpoint = Checkpoint(id_=f"{run_id}:resume", run_id=run_id,
                                     last_completed_step=last_completed_step,
                                     input_event=input_ev, output_event=output_ev,
                                     ctx_state=ctx.to_dict())
        ctx.write_event_to_stream(_ResumePoint())
        # the step's output is never delivered: the caller cancels the run while it waits
        await asyncio.get_running_loop().create_future()


@dataclass
class _Prefix:
    """The recorded run a resumed agent replays first: its agent, how many agent steps are
    replayed (``total``) and how many are still to come (``left``)."""

    agent: WorkflowChatAgent
    total: int
    left: int
    recording: str

    def announce(self) -> None:
        dispatcher.emit(ResumedRunEvent(recording=self.recording, step=self.total))


# ---------------------------------------------------------------------------- the factories
_WORKFLOW_PARAMS = ("initial_state", "state_prompt", "timeout")
_AGENT_KINDS: dict[str, type[BaseWorkflowAgent]] = {"function": FunctionAgent,
                                                    "react": ReActWorkflowAgent}


def _one_agent_workflow(kind: str) -> AgentFactory:
    """A one-agent AgentWorkflow behind the chat interface. ``max_iterations`` goes to each
    run, ``initial_state``/``state_prompt``/``timeout`` to the workflow, the rest to the
    agent."""
    def build(context: AgentContext) -> WorkflowChatAgent:
        params = dict(context.params)
        max_iterations = params.pop("max_iterations", None)
        workflow_params = {k: params.pop(k) for k in _WORKFLOW_PARAMS if k in params}
        agent = _AGENT_KINDS[kind](tools=list(context.tools), llm=context.llm, **params)
        return WorkflowChatAgent(AgentWorkflow(agents=[agent], **workflow_params),
                                 max_iterations=max_iterations)
    return build


def _agent_workflow(context: AgentContext) -> WorkflowChatAgent:
    """The multi-agent workflow of a ``team`` spec: each team agent with its own LLM
    (``context.llms``) and the scenario tools it names. ``params`` of the agent type work as
    for ``function_agent``."""
    scenario = context.scenario
    assert scenario is not None  # the harness always gives it

    def where(*field: str | int) -> str:
        return scenario.where("agents", context.agent_type, *field)

    spec = scenario.agents[context.agent_type]
    by_name = {tool.metadata.name: tool for tool in context.tools}
    agents: list[BaseWorkflowAgent] = []
    for index, member in enumerate(spec.team or ()):
        unknown = [n for n in member.tools or () if n not in by_name]
        if unknown:
            raise ScenarioError(
                f"{where('team', index, 'tools')}: agents.{context.agent_type}.team.{index}."
                f"tools: unknown tool(s) {', '.join(unknown)} (the scenario's tools: "
                f"{', '.join(by_name) or 'none'})")
        chosen = list(context.tools) if member.tools is None else [by_name[n]
                                                                   for n in member.tools]
        try:
            agents.append(_AGENT_KINDS[member.kind](
                name=member.name, description=member.description,
                system_prompt=member.system_prompt, tools=chosen,
                can_handoff_to=member.can_handoff_to, llm=context.llms[member.name],
                **member.params))
        except (TypeError, ValueError) as exc:
            raise ScenarioError(f"{where('team', index, 'params')}: agents.{context.agent_type}"
                                f".team.{index}.params: {exc}") from None
    params = dict(context.params)
    max_iterations = params.pop("max_iterations", None)
    workflow = AgentWorkflow(agents=agents, root_agent=spec.root, **params)
    return WorkflowChatAgent(workflow, max_iterations=max_iterations)


# ---------------------------------------------------------------------------- traces
_CURRENT = "agent_step"
_NEW_RUN = "agent_new_run"


def _current(turn: TurnBuilder) -> StepTrace | None:
    step: StepTrace | None = turn.state.get(_CURRENT)
    return step


def _run_start(turn: TurnBuilder, event: WorkflowRunStartEvent) -> None:
    if not event.resumed:
        turn.state[_NEW_RUN] = True


def _agent_input(turn: TurnBuilder, event: WorkflowAgentInputEvent) -> None:
    if event.span_id is None:
        return
    query = None
    if turn.state.pop(_NEW_RUN, False):
        users = [m for m in event.messages if m.role == MessageRole.USER]
        query = users[-1].content if users else None
    step = turn.new_step(event.span_id, query)
    step.details["agent"] = event.agent
    turn.state[_CURRENT] = step
    agents: list[str] = turn.details.setdefault("agents", [])
    if not agents or agents[-1] != event.agent:
        agents.append(event.agent)


def _workflow_step(turn: TurnBuilder, event: WorkflowStepStartEvent) -> None:
    """Later workflow steps (tool calls...) belong to the agent step that asked for them."""
    if event.step == AGENT_STEP or event.span_id is None:  # (every step of a run starts so)
        return
    step: StepTrace | None = turn.state.get(_CURRENT)  # _current's, without a call per step
    if step is not None:
        turn.steps[event.span_id] = step


def _agent_output(turn: TurnBuilder, event: WorkflowAgentOutputEvent) -> None:
    step = _current(turn)
    if step is None:
        return
    step.output = event.response.content if event.response is not None else None
    if event.retry:
        step.details["retry"] = True


def _handoff(turn: TurnBuilder, event: AgentHandoffEvent) -> None:
    turn.details.setdefault("handoffs", []).append(
        {"from": event.from_agent, "to": event.to_agent, "reason": event.reason})


def _run_end(turn: TurnBuilder, event: WorkflowRunEndEvent) -> None:
    step = _current(turn)
    if step is None:
        return
    if event.outcome == "stopped":
        step.is_last = True
        result: Any = event.result
        if isinstance(result, AgentOutput):
            step.output = result.response.content
    elif event.outcome in ("failed", "timed_out"):
        step.error = event.error


def file_human(turn: TurnBuilder, event: HumanInputEvent) -> None:
    """File a scripted human answer to an input request into the turn's ``human`` (each agent
    type that answers input requests -- the workflows', the frameworks' -- declares this
    handler)."""
    turn.details.setdefault("human", []).append({"request": event.request,
                                                 "response": event.response})


def _resumed(turn: TurnBuilder, event: ResumedRunEvent) -> None:
    """The turn in which a resumed agent type took over says from which recorded step."""
    turn.details["resumed"] = {"from": event.recording, "after_step": event.step}


_TRACE_HANDLERS: dict[type[BusEvent], TraceHandler] = {
    WorkflowRunStartEvent: _run_start, WorkflowAgentInputEvent: _agent_input,
    WorkflowStepStartEvent: _workflow_step, WorkflowAgentOutputEvent: _agent_output,
    AgentHandoffEvent: _handoff, WorkflowRunEndEvent: _run_end, HumanInputEvent: file_human,
    ResumedRunEvent: _resumed}
"""Shared by the family's agent types: an event goes into traces one way whoever emits it."""

FUNCTION_AGENT = AgentType(_one_agent_workflow("function"), human=True, workflow=True,
                           trajectory=render_tool_calls, trace_handlers=_TRACE_HANDLERS)
"""``function_agent``: a one-agent workflow around a ``FunctionAgent``."""

REACT_AGENT = AgentType(_one_agent_workflow("react"), human=True, workflow=True,
                        trajectory=render_react,
                        trace_handlers=_TRACE_HANDLERS)
"""``react_agent``: a one-agent workflow around the workflow ``ReActAgent``."""

AGENT_WORKFLOW = AgentType(_agent_workflow, team=True, human=True, workflow=True,
                           trace_handlers=_TRACE_HANDLERS)
"""``agent_workflow``: the multi-agent workflow of a scenario's ``team:`` and ``root:``."""
