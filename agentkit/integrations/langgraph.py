"""LangGraph agents under the harness (``pip install 'agentkit[langgraph]'``): a compiled graph
-- LangChain's ``create_agent``, LangGraph's older ``create_react_agent`` or one of your own --
over langchain-openai's ``ChatOpenAI`` routed through the bridge.

A compiled graph holds its model, so a factory gives the user's graph builder the context's
``model`` -- a ``ChatOpenAI`` on the bridge's httpx clients -- and returns the graph
(``return build_support_graph(context.model)``); the graph's ``ToolNode``s run its own tools
of the scenario's tools' names as the scenario's (an ``awrap_tool_call`` interceptor). The
built-in type builds the graph over the scenario's tools instead (``context.tools``: LangChain
``StructuredTool`` objects with the scenario tools' own JSON schemas, running them through
agentkit)::

    @langgraph_agent
    def framework_over_the_scenario(context):
        return create_agent(context.model, context.tools, **context.params)

Agent type: ``langgraph`` (``langchain.agents.create_agent``, which LangGraph 1.0 recommends
over its deprecated ``create_react_agent``; ``params`` go to it). Each turn streams the
graph (``astream``) on ``{"messages": [...the conversation so far, the user message]}`` -- the
conversation is the graph's input, so no checkpointer is needed; a graph compiled with a
checkpointer gets one thread (``thread_id``) for all the turns of a scenario and only each
turn's new message, its state carried across turns by the checkpointer as in production.
Each model reply names its step's agent (the graph's ``name``), each node that ran is in the
turn's ``nodes`` (the state keys it wrote, the edge taken: ``stream_mode="tasks"``), and a
streamed turn streams the model's tokens (``stream_mode="messages"``). An ``interrupt()`` of
the graph is answered with the turn's next ``human:`` answer: the graph is resumed with
``Command(resume=<answer>)`` on its thread (the interrupted node going to ``__interrupt__``
and running again; a tool call that asked is one call). LangChain runs a tool
without its call's id, so each call is matched to the call the model asked for by name and
arguments
(:meth:`~agentkit.bridge.wire_trace.WireTrace.claim`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from agentkit.bridge.agent import BridgeContext
from agentkit.core.ids import new_id
from agentkit.harness import AgentType
from agentkit.integrations._framework import (
    Framework,
    FrameworkContext,
    HumanAnswers,
    Integration,
    Requirement,
    ScenarioTools,
    integration_type,
    load,
    note_node,
    note_step,
)
from agentkit.llms.types import ChatMessage, MessageRole
from agentkit.scenario._trajectory import TrajectoryRenderer
from agentkit.tools import BaseTool

__all__ = ["FRAMEWORK", "langgraph_agent", "LANGGRAPH"]

FRAMEWORK = Framework("LangGraph", "langgraph", (
    Requirement("langgraph", "langgraph", "1.2.24", "2"),
    Requirement("langchain-openai", "langchain_openai", "1.7.4", "2"),
    Requirement("langchain", "langchain.agents", "1.3.0", "2")))
"""What ``agentkit[langgraph]`` installs, and the versions it was tested with."""


def _model(bridge: BridgeContext) -> Any:
    return load("langchain_openai").ChatOpenAI(
        model=bridge.model, api_key=bridge.api_key, base_url=bridge.base_url,
        http_client=bridge.http_client, http_async_client=bridge.async_http_client,
        max_retries=0)


def _tool(tool: BaseTool, tools: ScenarioTools) -> Any:
    metadata = tool.metadata

    async def run(**arguments: Any) -> str:
        return (await tools.call(tool, arguments)).content

    return load("langchain_core.tools").StructuredTool(
        name=metadata.name, description=metadata.description,
        args_schema=metadata.get_parameters_dict(), coroutine=run,
        return_direct=metadata.return_direct)


def _tool_nodes(graph: Any) -> list[Any]:
    """The graph's ``ToolNode``s."""
    tool_node = load("langgraph.prebuilt").ToolNode
    return [node.bound for node in graph.nodes.values() if isinstance(node.bound, tool_node)]


def _tools(graph: Any) -> dict[str, Any] | None:
    """The tools of the graph's ``ToolNode``s by name."""
    if not isinstance(graph, load("langgraph.pregel").Pregel):
        return None
    return {name: tool for node in _tool_nodes(graph) for name, tool in
            node.tools_by_name.items()}


def _interrupted(error: BaseException) -> bool:
    """Whether a tool's call stopped at an ``interrupt()`` (to be run again on resuming)."""
    return isinstance(error, load("langgraph.errors").GraphInterrupt)


def _apply(tool_node: Any, tools: ScenarioTools) -> None:
    """Run the ``ToolNode``'s calls of the agent's own tools named in ``tools.own`` as the
    scenario's (its ``awrap_tool_call`` interceptor, inside any of the graph's own; a graph
    given again in a later run is wrapped afresh, not twice)."""
    theirs = tool_node._awrap_tool_call
    theirs = getattr(theirs, "agentkit_wrapped", theirs)

    async def scenario(request: Any, execute: Any) -> Any:
        call = request.tool_call
        if call["name"] not in tools.own:
            return await execute(request)
        return await tools.run_own(call["name"], dict(call["args"]), call.get("id"),
                                   lambda: execute(request), paused=_interrupted)

    async def wrapper(request: Any, execute: Any) -> Any:
        if theirs is None:
            return await scenario(request, execute)
        return await theirs(request, lambda inner: scenario(inner, execute))

    wrapper.agentkit_wrapped = theirs  # type: ignore[attr-defined]
    tool_node._awrap_tool_call = wrapper


END = "__end__"
"""Where a turn's last node went: the graph finished (LangGraph's ``END``)."""

INTERRUPT = "__interrupt__"
"""Where the nodes went that ran when the graph stopped at an ``interrupt()`` (the run goes
on from there when it is resumed: the interrupted node runs again)."""


def _writes(update: Any) -> list[dict[str, Any]]:
    """What a node wrote to the graph's state (an update of ``stream_mode="updates"``: a
    mapping, a list of them when it wrote several times, None when it wrote nothing)."""
    if isinstance(update, dict):
        return [update]
    if isinstance(update, list | tuple):
        return [each for each in update if isinstance(each, dict)]
    return []


class _Supersteps:
    """The graph's nodes that ran in one stream of a turn, superstep by superstep, from the
    events of ``stream_mode="tasks"`` (a superstep's tasks all start before any of them ends,
    so a start after an end begins the next superstep; an end says which node ran and what it
    wrote), filed into the turn's ``nodes`` with the edge taken."""

    def __init__(self) -> None:
        self.steps: list[list[tuple[str, list[str]]]] = []
        self._ended = True

    def task(self, event: dict[str, Any]) -> None:
        if "result" not in event:  # a task starts
            if self._ended:
                self.steps.append([])
                self._ended = False
            return
        self._ended = True
        if self.steps and not event["name"].startswith("__"):
            writes = _writes(event["result"])
            self.steps[-1].append((event["name"], sorted({key for w in writes for key in w})))

    def file(self, last: str | None) -> None:
        """File each node with where the run went after its superstep: the next superstep's
        nodes; after the last, ``last`` -- ``__end__`` when the graph finished,
        ``__interrupt__`` when it stopped at an ``interrupt()`` -- or nowhere when it raised."""
        ran = [step for step in self.steps if step]
        for index, step in enumerate(ran):
            if index + 1 < len(ran):
                to = sorted({node for node, _ in ran[index + 1]})
            else:
                to = [last] if last is not None else []
            for node, changed in step:
                note_node(node, changed, to)


def _thread(graph: Any) -> dict[str, Any] | None:
    """The run's config for a graph compiled with a checkpointer: one thread (a fresh
    ``thread_id`` from the run's seeded ids) for every turn of the scenario, as a production
    client keeps one per conversation; None for a graph without one."""
    saver = load("langgraph.checkpoint.base").BaseCheckpointSaver
    if not isinstance(getattr(graph, "checkpointer", None), saver):
        return None
    return {"configurable": {"thread_id": new_id("thread")}}


class _Stream:
    """What a turn's streams of the graph (its first run and each resume after an
    ``interrupt()``) tell: its last state, each model reply naming its step's agent, each node
    that ran, the streamed tokens of the last reply."""

    def __init__(self, name: str, bridge: BridgeContext, tokens: bool) -> None:
        self.name = name
        self.bridge = bridge
        self.modes = ["updates", "values", "tasks", *(["messages"] if tokens else [])]
        self.state: dict[str, Any] = {}
        self.streamed: list[str] = []
        self.reply: Any = None

    async def run(self, graph: Any, graph_input: Any, thread: dict[str, Any] | None) -> list[Any]:
        """Stream the graph on ``graph_input``; the ``interrupt()`` calls it stopped at."""
        lc = load("langchain_core.messages")
        nodes = _Supersteps()
        asked: list[Any] = []
        last: str | None = None
        try:
            async for mode, chunk in graph.astream(graph_input, thread, stream_mode=self.modes):
                if mode == "values":
                    self.state = chunk
                elif mode == "tasks":
                    nodes.task(chunk)
                elif mode == "updates":
                    asked.extend(chunk.get(INTERRUPT, ()))
                    for update in chunk.values():
                        for made in (m for write in _writes(update)
                                     for m in write.get("messages", [])):
                            if isinstance(made, lc.AIMessage):
                                note_step(self.bridge, self.name,
                                          [call["id"] for call in made.tool_calls])
                elif mode == "messages":
                    token, _ = chunk
                    if isinstance(token, lc.AIMessageChunk):
                        if token.id != self.reply:
                            self.reply, self.streamed = token.id, []
                        if isinstance(token.content, str) and token.content:
                            self.streamed.append(token.content)
            last = INTERRUPT if asked else END
        finally:
            nodes.file(last)
        return asked


class _Run:
    """A compiled graph run turn by turn, the conversation its ``messages`` input, its
    ``ToolNode``s running its own tools as the scenario's."""

    def __init__(self, graph: Any, tools: ScenarioTools) -> None:
        self.graph = graph
        self.bridge = tools.bridge
        self.messages: list[Any] = []
        self.unsent: list[Any] = []  # a scenario's history, for a graph that keeps its own
        self.thread = _thread(graph)
        if tools.own:
            for tool_node in _tool_nodes(graph):
                _apply(tool_node, tools)

    async def arun(self, message: str, deltas: list[str] | None, human: HumanAnswers) -> str:
        lc = load("langchain_core.messages")
        said = lc.HumanMessage(content=message)
        graph_input: Any
        if self.thread is None:  # the conversation is the graph's input
            graph_input = {"messages": [*self.messages, said]}
        else:  # the graph's checkpointer holds the conversation: only the new message
            graph_input = {"messages": [*self.unsent, said]}
            self.unsent = []
        stream = _Stream(self.graph.name or "LangGraph", self.bridge, deltas is not None)
        while True:
            asked = await stream.run(self.graph, graph_input, self.thread)
            if not asked:
                break
            graph_input = self._resume(asked, human)
        self.messages = list(stream.state.get("messages", []))
        if deltas is not None:
            deltas.extend(stream.streamed)
        last = self.messages[-1] if self.messages else None
        return str(last.content) if last is not None else ""

    def _resume(self, asked: list[Any], human: HumanAnswers) -> Any:
        """How the graph goes on after the ``interrupt()`` calls ``asked``: each answered by the
        turn's next ``human:`` answer, given back as ``Command(resume=...)`` on the same
        thread (a map from each interrupt's id to its answer when several asked at once)."""
        if self.thread is None:
            raise RuntimeError(
                f"the graph interrupted the turn (interrupt({asked[0].value!r})) but has no "
                "checkpointer to resume it from: compile it with one (`checkpointer="
                "InMemorySaver()`), as LangGraph's interrupts need")
        answers = [human.answer(each.value, "LangGraph interrupt()") for each in asked]
        command = load("langgraph.types").Command
        if len(asked) == 1:
            return command(resume=answers[0])
        return command(resume={each.id: answer for each, answer in zip(asked, answers,
                                                                         strict=True)})

    def set_history(self, messages: Sequence[ChatMessage]) -> None:
        lc = load("langchain_core.messages")
        kinds = {MessageRole.ASSISTANT: lc.AIMessage, MessageRole.SYSTEM: lc.SystemMessage}
        self.messages = [kinds.get(m.role, lc.HumanMessage)(content=m.content or "")
                         for m in messages]
        self.unsent = list(self.messages)


INTEGRATION = Integration(FRAMEWORK, _model, _tool, _tools, _Run,
                          "a compiled LangGraph graph (create_agent(...), or "
                          "StateGraph(...).compile())", human=True)


def langgraph_agent(factory: Callable[[FrameworkContext], Any] | None = None, *,
                    trajectory: TrajectoryRenderer | str | None = "tool_calls") -> Any:
    """The agent type of the graph ``factory(context)`` returns (module docstring). Works as a
    decorator, with or without arguments."""
    if factory is None:
        return functools.partial(langgraph_agent, trajectory=trajectory)
    return integration_type(INTEGRATION, factory, trajectory=trajectory)


def _agent_graph(context: FrameworkContext) -> Any:
    return load("langchain.agents").create_agent(context.model, context.tools, **context.params)


LANGGRAPH: AgentType = langgraph_agent(_agent_graph)
"""``langgraph``: LangChain's ``create_agent`` (a LangGraph graph) over the scenario's tools."""
