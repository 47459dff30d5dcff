"""The multimodal ReAct family: agent type ``react_multimodal``
(``MultimodalReActAgentWorker`` as an agent), which takes the turns' images.

It speaks ReAct, so a trajectory renders as :func:`~agentkit.harness._families.react.render_react`
does; the images travel as each chat's ``image_docs=``, not in the script. Its events are the
core ones: no trace handlers.
"""

from __future__ import annotations

from agentkit.agent import BaseAgent, MultimodalReActAgentWorker
from agentkit.harness._agent_types import AgentContext, AgentType
from agentkit.harness._families.react import render_react

__all__ = ["REACT_MULTIMODAL"]


def _build(context: AgentContext) -> BaseAgent:
    return MultimodalReActAgentWorker.from_tools(list(context.tools), multi_modal_llm=context.llm,
                                                 **context.params).as_agent()


REACT_MULTIMODAL = AgentType(_build, images=True, trajectory=render_react)
"""``react_multimodal``: ReAct with the turns' images on the first user message; ``params``
go to ``MultimodalReActAgentWorker.from_tools``."""
