"""``MultimodalReActAgent``: the runner over a :class:`MultimodalReActAgentWorker` whose chat
calls take the turn's images."""

from __future__ import annotations

from typing import Any

from agentkit.agent.react_multimodal.step import IMAGE_DOCS_KEY
from agentkit.agent.runner.base import AgentRunner

__all__ = ["MultimodalReActAgent"]


class MultimodalReActAgent(AgentRunner):
    """``agent.chat(q, image_docs=[ImageBlock(path="cat.png")])`` (also ``achat``,
    ``stream_chat``, ``astream_chat``): the images go on that turn's user message.

    A chat without ``image_docs`` adds no images (a follow-up question about images already
    in the conversation), unless ``init_task_state_kwargs`` supplies them. The step-wise way
    is LlamaIndex's: ``agent.create_task(q, extra_state={"image_docs": [...]})``; there a task
    without the key fails at its first step ("Image docs not found in task extra state.").
    Build one with ``MultimodalReActAgentWorker.from_tools(...).as_agent()``.
    """

    def _task_options(self, chat_kwargs: dict[str, Any]) -> dict[str, Any]:
        images = chat_kwargs.get(IMAGE_DOCS_KEY)
        if images is None and self.init_task_state_kwargs:
            return {}
        return {"extra_state": {IMAGE_DOCS_KEY: [] if images is None else images}}
