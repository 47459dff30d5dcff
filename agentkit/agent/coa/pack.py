"""``CoAAgentPack``: a Chain-of-Abstraction agent in one object (LlamaIndex's pack shape)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentkit.agent.coa.step import CoAAgentWorker
from agentkit.agent.pack import BaseLlamaPack
from agentkit.agent.runner.base import AgentRunner
from agentkit.agent.types import AgentChatResponse
from agentkit.instrumentation import CallbackManager
from agentkit.llms.base import LLM
from agentkit.tools import BaseTool

__all__ = ["CoAAgentPack"]


class CoAAgentPack(BaseLlamaPack):
    """A :class:`CoAAgentWorker` over ``tools`` and ``llm`` inside an :class:`AgentRunner`;
    ``run(q)`` is ``agent.chat(q)``.

    ``agent_worker_kwargs`` go to :meth:`CoAAgentWorker.from_tools`, ``agent_runner_kwargs``
    to :class:`AgentRunner`. Difference from LlamaIndex: the worker is not verbose unless
    ``agent_worker_kwargs`` says ``verbose=True`` (LlamaIndex forced it on, and a ``verbose``
    of yours was a duplicate-argument error); ``llm`` is required (there is no global
    ``Settings.llm``).
    """

    def __init__(self, tools: Sequence[BaseTool], llm: LLM | None = None,
                 callback_manager: CallbackManager | None = None,
                 agent_worker_kwargs: dict[str, Any] | None = None,
                 agent_runner_kwargs: dict[str, Any] | None = None) -> None:
        if llm is None:
            raise ValueError("CoAAgentPack needs an `llm`")
        self.llm = llm
        self.callback_manager = callback_manager or CallbackManager()
        self.agent_worker = CoAAgentWorker.from_tools(
            tools=list(tools), llm=llm, callback_manager=self.callback_manager,
            **(agent_worker_kwargs or {}))
        self.agent = AgentRunner(self.agent_worker, callback_manager=self.callback_manager,
                                 **(agent_runner_kwargs or {}))

    def get_modules(self) -> dict[str, Any]:
        """The pack's parts: ``llm``, ``callback_manager``, ``agent_worker``, ``agent``."""
        return {"llm": self.llm, "callback_manager": self.callback_manager,
                "agent_worker": self.agent_worker, "agent": self.agent}

    def run(self, *args: Any, **kwargs: Any) -> AgentChatResponse:
        """Chat with the agent: ``run(q)`` is ``agent.chat(q)``."""
        return self.agent.chat(*args, **kwargs)
