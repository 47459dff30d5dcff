"""Run an agent workflow through the harness's chat interface (``chat``, ``stream_chat``,
``chat_history``, ``memory``), like a runner agent.

One context serves every turn of a scenario, so the shared state and the current agent carry
over from turn to turn, as they would for a client that keeps its context. When the
workflow asks for input (an ``InputRequiredEvent``), the adapter does what a client pausing
for a human does: it saves the context (``to_dict``), cancels the run, restores the context
(``from_dict``), resumes, and sends the turn's next scripted answer as a
``HumanResponseEvent``. Each answer given is a ``HumanInputEvent`` on the bus, so traces show it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentkit.agent.types import AgentChatResponse, StreamingAgentChatResponse
from agentkit.agent.workflow import AgentInput, AgentOutput, AgentStream
from agentkit.core.events import Event as BusEvent
from agentkit.core.events import dispatcher
from agentkit.core.sim import run_sync
from agentkit.llms.types import ChatMessage
from agentkit.memory import BaseMemory, ChatMemoryBuffer
from agentkit.scenario.trace import TurnBuilder, trace_handler
from agentkit.workflow import Context, HumanResponseEvent, InputRequiredEvent, Workflow

__all__ = ["WorkflowChatAgent", "HumanInputEvent"]


@dataclass(kw_only=True, slots=True)
class HumanInputEvent(BusEvent):
    """The scripted human answered an input request of the workflow."""

    request: str
    response: str


@trace_handler(HumanInputEvent)
def _human(turn: TurnBuilder, event: HumanInputEvent) -> None:
    turn.details.setdefault("human", []).append({"request": event.request,
                                                 "response": event.response})


def _request_text(event: InputRequiredEvent) -> str:
    prefix = event.get("prefix")
    return str(prefix) if prefix is not None else str(event.to_dict())


class WorkflowChatAgent:
    """A workflow (an ``AgentWorkflow`` or a stand-alone workflow agent) as a chat agent;
    ``max_iterations`` goes to every run."""

    def __init__(self, workflow: Workflow, *, max_iterations: int | None = None) -> None:
        self.workflow = workflow
        self.max_iterations = max_iterations
        self.memory: BaseMemory = ChatMemoryBuffer.from_defaults()
        self._ctx = Context(workflow)

    @property
    def chat_history(self) -> list[ChatMessage]:
        return self.memory.get_all()

    def chat(self, message: str, *, human: Sequence[str] = ()) -> AgentChatResponse:
        """Run the workflow on ``message``; ``human`` answers its input requests in order."""
        output, _ = run_sync(self._arun(message, list(human)))
        return AgentChatResponse(response=str(output))

    def stream_chat(self, message: str, *, human: Sequence[str] = ()) -> StreamingAgentChatResponse:
        """The final answer as a stream: the last agent step's deltas when they spell it."""
        output, deltas = run_sync(self._arun(message, list(human)))
        answer = AgentChatResponse(response=str(output))
        spelled = "".join(deltas) == answer.response
        return StreamingAgentChatResponse.from_answer(answer, deltas if spelled else None)

    async def _arun(self, message: str, answers: list[str]) -> tuple[AgentOutput, list[str]]:
        handler = self.workflow.run(user_msg=message, ctx=self._ctx, memory=self.memory,
                                    max_iterations=self.max_iterations)
        deltas: list[str] = []
        while True:
            request = None
            async for event in handler.stream_events():
                if isinstance(event, AgentStream):
                    deltas.append(event.delta)
                elif isinstance(event, AgentInput):  # a new agent step: keep only its deltas
                    deltas = []
                elif isinstance(event, InputRequiredEvent):
                    request = event
                    break
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
            handler = self.workflow.run(ctx=self._ctx)
            dispatcher.emit(HumanInputEvent(request=_request_text(request), response=answer))
            handler.ctx.send_event(HumanResponseEvent(response=answer))
            deltas = []
        output: Any = await handler
        self.memory = await self._ctx.store.get("memory")
        if answers:
            raise RuntimeError(f"{len(answers)} scripted `human` answer(s) were never asked for")
        return output, deltas
