"""The agent loop: the workflow steps a stand-alone agent and an ``AgentWorkflow`` both run.

One run: ``init_run`` puts the user message in memory -> ``setup_agent`` adds the system
prompt and the state -> ``run_agent_step`` asks the current agent for one step (one LLM call)
-> ``parse_agent_output`` either finishes (no tool calls: StopEvent with the AgentOutput),
asks again (retry messages) or sends one ``ToolCall`` per call -> ``call_tool`` runs each
(through the core's ToolRunner, concurrently up to the step's workers) ->
``aggregate_tool_results`` collects them, lets the agent record them, applies a hand-off, stops
on a ``return_direct`` result (not a hand-off, not an error) or goes back to the agent.

The context store holds (upstream's keys): ``memory``, ``state`` (shared state, seeded from
``initial_state``), ``current_agent_name``, ``agents``, ``can_handoff_to``,
``handoff_output_prompt``, ``user_msg_str`` (the run's query), ``max_iterations``,
``num_iterations``, ``num_tool_calls``, ``current_tool_calls``, ``next_agent``; agents keep
their scratch (``scratchpad``, ``current_reasoning``) there too. ``context_store_schema()``
names the type of each, so a restored context (a paused run, a checkpoint) is checked
against them; ``ChatMemoryBuffer`` and the agents' ``context_types`` are restorable (a
memory of another class passed to ``run(memory=...)`` needs
``workflow.register_context_types(ThatMemory)``).

Fixes over LlamaIndex (SPEC §8): ``max_iterations`` counts agent outputs and only a step that
would need another one fails, so ``max_iterations=1`` allows a direct answer; the state prompt
is applied to a copy of the run's user message in every LLM input, never to the message in
memory; a failed run (an error, the timeout) leaves the memory as it was before the run; tool
results are recorded in the order the agent asked for them; a ``return_direct`` tool that
fails does not end the run and adds no answer to the scratchpad; ``max_iterations`` is taken
from every run (upstream kept the first run's value in a reused context).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal

from agentkit.agent.workflow.bus import (
    AgentHandoffEvent,
    WorkflowAgentInputEvent,
    WorkflowAgentOutputEvent,
)
from agentkit.agent.workflow.events import (
    AgentInput,
    AgentOutput,
    AgentSetup,
    AgentStream,
    AgentWorkflowStartEvent,
    ToolCall,
    ToolCallResult,
)
from agentkit.core.events import dispatcher
from agentkit.llms.prompts import PromptTemplate
from agentkit.llms.types import ChatMessage, MessageRole, TextBlock, ToolSelection
from agentkit.memory import BaseMemory, ChatMemoryBuffer
from agentkit.tools import BaseTool, ToolArgumentsError, ToolErrorWording, ToolRunner
from agentkit.workflow import Context, StopEvent, Workflow, WorkflowRuntimeError, step
from agentkit.workflow.handler import WorkflowHandler
from agentkit.workflow.runtime import CheckpointCallback
from agentkit.workflow.serialize import model_closure

if TYPE_CHECKING:
    from agentkit.agent.workflow.base_agent import BaseWorkflowAgent

__all__ = ["AgentLoop", "AGENT_STEP", "DEFAULT_MAX_ITERATIONS", "WORKFLOW_TOOL_ERRORS"]

DEFAULT_MAX_ITERATIONS = 20

_MAX_ITERATIONS = ("Max iterations of {n} reached! Either something went wrong, or you can "
                   "increase the max iterations with `.run(.., max_iterations=...)`")


class _WorkflowToolErrors(ToolErrorWording):
    """LlamaIndex's agent-workflow wording: the bare error text, no ``Error:`` prefix."""

    def unknown_tool(self, tool_name: str) -> str:
        return f"Tool {tool_name} not found. Please select a tool that is available."

    def bad_arguments(self, message: str) -> str:
        return message

    def failure(self, exc: Exception) -> str:
        if isinstance(exc, ToolArgumentsError) and exc.python_message:
            return exc.python_message
        return str(exc) or type(exc).__name__

    def raw_failure(self, exc: Exception) -> Any:
        return self.failure(exc)  # text, so a paused run's context can be saved


WORKFLOW_TOOL_ERRORS = _WorkflowToolErrors()


class AgentLoop(Workflow):
    """The steps of an agent run (see the module docstring); subclasses say which agents
    take part: ``agents`` (by name), ``root_agent``, ``initial_state``, ``state_prompt``,
    ``handoff_output_prompt`` and, for teams, ``_handoff_tool(agent)``."""

    if TYPE_CHECKING:  # set by subclasses (fields of the pydantic agents: no annotations here)
        agents: dict[str, BaseWorkflowAgent]
        root_agent: str
        initial_state: dict[str, Any]
        state_prompt: PromptTemplate
        handoff_output_prompt: PromptTemplate

    # the default memory, and the stream's deltas (no step takes them, so none names them)
    context_types: ClassVar[tuple[type, ...]] = (ChatMemoryBuffer, AgentStream)

    def __init__(self, timeout: float | None = None, disable_validation: bool = False,
                 verbose: bool = False, num_concurrent_runs: int | None = None) -> None:
        super().__init__(timeout=timeout, disable_validation=disable_validation,
                         verbose=verbose, num_concurrent_runs=num_concurrent_runs)

    def _reset_runtime(self) -> None:
        super()._reset_runtime()
        self._runners: dict[str, tuple[Any, Any, ToolRunner]]
        vars(self)["_runners"] = {}  # (as Workflow sets its own: no __setattr__ per agent)

    # ------------------------------------------------------------------ saved contexts
    def restorable_types(self) -> dict[str, type]:
        """The loop's own, plus what each agent keeps in the store (``context_types``)."""
        types = super().restorable_types()
        for agent in self.agents.values():
            types.update(model_closure(agent.context_types))
        return types

    def context_store_schema(self) -> dict[str, Any]:
        """The loop's store keys (see the module docstring) and each agent's scratch."""
        names = tuple(self.agents)
        agent_name: Any = Literal[names]
        schema: dict[str, Any] = {
            "memory": BaseMemory, "memory_at_start": list[ChatMessage],
            "state": dict[str, Any], "current_agent_name": agent_name,
            "agents": list[str], "can_handoff_to": dict[str, list[str] | None],
            "handoff_output_prompt": str, "user_msg_str": str, "max_iterations": int,
            "num_iterations": int, "num_tool_calls": int,
            "current_tool_calls": list[ToolSelection], "pending_tool_ids": list[str],
            "next_agent": agent_name | None}
        for agent in self.agents.values():
            schema.update(agent.context_store_schema())
        return schema

    # ------------------------------------------------------------------ tools
    def _handoff_tool(self, agent: BaseWorkflowAgent) -> BaseTool | None:
        """The hand-off tool offered to ``agent`` (None: it cannot hand off)."""
        return None

    async def _runner(self, agent: BaseWorkflowAgent, query: str) -> ToolRunner:
        """A ToolRunner over the tools ``agent`` is offered for ``query`` (cached while its
        tools and the hand-off tool stay the same; a retriever picks them per call). The step
        that shows them to the model reports them (``offered()``), not every tool call."""
        handoff = self._handoff_tool(agent)
        if agent.tool_retriever is None:
            cached = self._runners.get(agent.name)
            if cached is not None and cached[0] is agent.tools and cached[1] is handoff:
                return cached[2]
        tools = await agent.get_tools(query)
        if handoff is not None:
            tools.append(handoff)
        runner = ToolRunner(tools, agent=agent.name, wording=WORKFLOW_TOOL_ERRORS)
        if agent.tool_retriever is None:
            self._runners[agent.name] = (agent.tools, handoff, runner)
        return runner

    # ------------------------------------------------------------------ running
    def run(self, user_msg: str | ChatMessage | None = None,  # type: ignore[override]
            chat_history: Sequence[ChatMessage] | None = None, memory: BaseMemory | None = None,
            ctx: Context | None = None, stepwise: bool = False,
            checkpoint_callback: CheckpointCallback | None = None,
            max_iterations: int | None = None,
            start_event: AgentWorkflowStartEvent | None = None,
            **kwargs: Any) -> WorkflowHandler:
        """Start a run (LlamaIndex's signature). With a context holding a paused run, resume
        it: no argument but ``stepwise`` and ``checkpoint_callback`` may be given then."""
        if ctx is not None and ctx.is_running:
            given = [name for name, value in (("user_msg", user_msg), ("chat_history", chat_history),
                                              ("memory", memory), ("max_iterations", max_iterations),
                                              ("start_event", start_event)) if value is not None]
            if given or kwargs:
                raise WorkflowRuntimeError(
                    f"This Context holds a paused run; resume it with run(ctx=ctx) alone (got "
                    f"{', '.join([*given, *kwargs])})")
            return super().run(ctx=ctx, stepwise=stepwise, checkpoint_callback=checkpoint_callback)
        if max_iterations is not None and (isinstance(max_iterations, bool) or not isinstance(
                max_iterations, int) or max_iterations < 1):
            raise ValueError(f"max_iterations must be an int >= 1, got {max_iterations!r}")
        if start_event is None:
            start_event = AgentWorkflowStartEvent(user_msg=user_msg, chat_history=chat_history,
                                                  memory=memory, max_iterations=max_iterations,
                                                  **kwargs)
        elif any(v is not None for v in (user_msg, chat_history, memory, max_iterations)) or kwargs:
            raise WorkflowRuntimeError("run() takes a start_event or the run's arguments, not both")
        return super().run(ctx=ctx, stepwise=stepwise, checkpoint_callback=checkpoint_callback,
                           start_event=start_event)

    async def _on_run_end(self, ctx: Context, error: BaseException | None) -> None:
        """A failed run puts back the memory it started with and drops the agents' scratch."""
        if error is None:
            return
        memory = await ctx.store.get("memory", default=None)
        before = await ctx.store.get("memory_at_start", default=None)
        if memory is not None and before is not None:
            memory.set(before)
        for agent in self.agents.values():
            await agent.discard_scratch(ctx)
        await ctx.store.set("current_tool_calls", [])

    def _init_context(self, ctx: Context, ev: AgentWorkflowStartEvent) -> BaseMemory:
        data = ctx.store.data
        memory: BaseMemory | None = data.get("memory")
        if memory is None:
            memory = ev.get("memory") or ChatMemoryBuffer.from_defaults(
                llm=self.agents[self.root_agent].llm)
            data["memory"] = memory
        data["memory_at_start"] = memory.get_all()
        data["agents"] = list(self.agents)
        data["can_handoff_to"] = {name: agent.can_handoff_to
                                  for name, agent in self.agents.items()}
        if data.get("state") is None:
            data["state"] = copy.deepcopy(self.initial_state)
        if data.get("current_agent_name") not in self.agents:
            data["current_agent_name"] = self.root_agent
        data["handoff_output_prompt"] = self.handoff_output_prompt.get_template()
        data["max_iterations"] = ev.get("max_iterations") or DEFAULT_MAX_ITERATIONS
        data["num_iterations"] = 0
        data["current_tool_calls"] = []
        data["next_agent"] = None
        return memory

    # ------------------------------------------------------------------ steps
    @step
    async def init_run(self, ctx: Context, ev: AgentWorkflowStartEvent) -> AgentInput:
        """Put the user message (or the given history) in memory; the current agent starts."""
        memory = self._init_context(ctx, ev)
        user_msg = ev.get("user_msg")
        chat_history: list[ChatMessage] = ev.get("chat_history") or []
        if isinstance(user_msg, str):
            user_msg = ChatMessage(role=MessageRole.USER, content=user_msg)
        if user_msg is None and all(m.role == MessageRole.SYSTEM for m in chat_history):
            raise ValueError("Must provide either user_msg or chat_history")
        if chat_history:
            await memory.aset(chat_history)
        if user_msg is not None:
            await memory.aput(user_msg)
            query = user_msg.content or ""
        else:
            users = [m for m in chat_history if m.role == MessageRole.USER]
            query = (users[-1].content or "") if users else ""
        data = ctx.store.data
        data["user_msg_str"] = query
        return AgentInput(input=await memory.aget(),
                          current_agent_name=ctx.store.read("current_agent_name"))

    @step
    async def setup_agent(self, ctx: Context, ev: AgentInput) -> AgentSetup:
        """The agent's system prompt first; the state (if any) in a copy of the user message."""
        agent = self.agents[ev.current_agent_name]
        llm_input = list(ev.input)
        data = ctx.store.data
        state = data.get("state")
        if state:
            llm_input = self._with_state(llm_input, state, data.get("user_msg_str", ""))
        if agent.system_prompt:
            llm_input.insert(0, ChatMessage(role=MessageRole.SYSTEM, content=agent.system_prompt))
        return AgentSetup(input=llm_input, current_agent_name=ev.current_agent_name)

    def _with_state(self, messages: list[ChatMessage], state: Any,
                    query: str) -> list[ChatMessage]:
        """``messages`` with the run's user message (the last user message holding the query)
        replaced by a copy whose last text block is the state prompt around it."""
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if message.role == MessageRole.USER and (message.content or "") == query:
                blocks = list(message.blocks)
                last = max(i for i, b in enumerate(blocks) if isinstance(b, TextBlock))
                text = blocks[last].text  # type: ignore[union-attr]
                blocks[last] = TextBlock(text=self.state_prompt.format(state=state, msg=text))
                messages[index] = message.model_copy(update={"blocks": blocks})
                break
        return messages

    @step
    async def run_agent_step(self, ctx: Context, ev: AgentSetup) -> AgentOutput:
        """One step of the current agent (one LLM call)."""
        agent = self.agents[ev.current_agent_name]
        data = ctx.store.data
        memory: BaseMemory = ctx.store.read("memory")
        runner = await self._runner(agent, data.get("user_msg_str", ""))
        runner.offered()
        dispatcher.emit(WorkflowAgentInputEvent(agent=agent.name, messages=ev.input))
        output = await agent.take_step(ctx, ev.input, runner.tools, memory)
        if ctx.stream_reads(AgentOutput):
            ctx.write_event_to_stream(output)
        return output

    @step
    async def parse_agent_output(self, ctx: Context,
                                 ev: AgentOutput) -> StopEvent | AgentInput | ToolCall | None:
        """Finish, retry, or send the tool calls."""
        dispatcher.emit(WorkflowAgentOutputEvent(agent=ev.current_agent_name, response=ev.response,
                                                 tool_calls=list(ev.tool_calls),
                                                 retry=bool(ev.retry_messages)))
        data = ctx.store.data
        count = data.get("num_iterations", 0) + 1
        data["num_iterations"] = count
        limit = data.get("max_iterations", DEFAULT_MAX_ITERATIONS)
        final = not ev.tool_calls and not ev.retry_messages
        if not final and count >= limit:
            raise WorkflowRuntimeError(_MAX_ITERATIONS.format(n=limit))
        memory: BaseMemory = ctx.store.read("memory")
        if ev.retry_messages:
            query = data.get("user_msg_str", "")
            return AgentInput(input=[*await memory.aget(),
                                     ChatMessage(role=MessageRole.USER, content=query),
                                     *ev.retry_messages],
                              current_agent_name=ev.current_agent_name)
        if final:
            output = await self.agents[ev.current_agent_name].finalize(ctx, ev, memory)
            output.tool_calls = [*data.get("current_tool_calls", [])]
            data["current_tool_calls"] = []
            return StopEvent(result=output)
        data["num_tool_calls"] = len(ev.tool_calls)
        data["pending_tool_ids"] = [call.tool_id for call in ev.tool_calls]
        for call in ev.tool_calls:
            extra = {"arguments_error": call.arguments_error} if call.arguments_error else {}
            ctx.send_event(ToolCall(tool_name=call.tool_name, tool_kwargs=call.tool_kwargs,
                                    tool_id=call.tool_id, **extra))
        return None

    @step
    async def call_tool(self, ctx: Context, ev: ToolCall) -> ToolCallResult:
        """Run one tool call for the current agent (tools with a ``ctx`` parameter get it)."""
        if ctx.stream_reads(ToolCall):
            ctx.write_event_to_stream(ToolCall(tool_name=ev.tool_name,
                                               tool_kwargs=ev.tool_kwargs, tool_id=ev.tool_id))
        data = ctx.store.data
        agent = self.agents[ctx.store.read("current_agent_name")]
        runner = await self._runner(agent, data.get("user_msg_str", ""))
        outcome = await runner.acall(ev.tool_name, ev.tool_kwargs, tool_id=ev.tool_id,
                                     arguments_error=ev.get("arguments_error"), context=ctx)
        tool = runner.get(ev.tool_name)
        result = ToolCallResult(tool_name=ev.tool_name, tool_kwargs=ev.tool_kwargs,
                                tool_id=ev.tool_id, tool_output=outcome.output,
                                return_direct=bool(tool is not None
                                                   and tool.metadata.return_direct))
        if ctx.stream_reads(ToolCallResult):
            ctx.write_event_to_stream(result)
        return result

    @step
    async def aggregate_tool_results(self, ctx: Context,
                                     ev: ToolCallResult) -> AgentInput | StopEvent | None:
        """Once every call of the step is in: record them, hand off, stop or go on."""
        data = ctx.store.data
        expected = data.get("num_tool_calls", 0)
        if expected == 0:
            raise ValueError("No tool calls found, cannot aggregate results.")
        collected = ctx.collect_events(ev, [ToolCallResult] * expected)
        if collected is None:
            return None
        order = {tool_id: i for i, tool_id in enumerate(data.get("pending_tool_ids", []))}
        results = sorted(collected, key=lambda r: order.get(r.tool_id, len(order)))
        memory: BaseMemory = ctx.store.read("memory")
        agent = self.agents[ctx.store.read("current_agent_name")]
        calls = data.get("current_tool_calls", [])
        calls.extend(ToolSelection(tool_id=r.tool_id, tool_name=r.tool_name,
                                   tool_kwargs=r.tool_kwargs) for r in results)
        data["current_tool_calls"] = calls
        await agent.handle_tool_call_results(ctx, results, memory)
        next_agent = data.get("next_agent")
        if next_agent:
            data["current_agent_name"] = next_agent
            data["next_agent"] = None
            handoff = next((r for r in results if r.direct and r.is_handoff), None)
            reason = handoff.tool_kwargs.get("reason", "") if handoff is not None else ""
            dispatcher.emit(AgentHandoffEvent(from_agent=agent.name, to_agent=next_agent,
                                              reason=str(reason)))
        direct = next((r for r in results if r.direct), None)
        if direct is not None:
            output = AgentOutput(
                response=ChatMessage(role=MessageRole.ASSISTANT,
                                     content=direct.tool_output.content or ""),
                tool_calls=list(calls), raw=direct.tool_output.raw_output,
                current_agent_name=agent.name)
            output = await agent.finalize(ctx, output, memory)  # a hand-off finalizes too
            if not direct.is_handoff:
                data["current_tool_calls"] = []
                return StopEvent(result=output)
        return AgentInput(input=await memory.aget(input=data.get("user_msg_str", "")),
                          current_agent_name=ctx.store.read("current_agent_name"))


AGENT_STEP: Final[str] = AgentLoop.run_agent_step.__name__
"""The workflow step in which the current agent takes its turn at the LLM, as step events and
checkpoints name it."""
