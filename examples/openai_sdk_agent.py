"""The plain openai-SDK agent of ``examples/tool_loop_agent.py``, declared as an agentkit agent
type: the whole integration is the four lines below.

:data:`OPENAI_SDK_AGENT` (registered in this repository's pyproject.toml as
``openai_sdk_agent``) is tested through the bridge: its factory gets a
:class:`~agentkit.bridge.BridgeContext` whose ``client`` is an ``openai.OpenAI`` routed
in-process to the scenario's model -- its script, its cassette, or the live model while
recording -- and the harness takes the trace from the wire. ``scenarios/
openai_sdk_trajectory.yaml`` checks its trajectory offline; ``scenarios/live/
live_openai_sdk.yaml`` replays a conversation recorded against a real local model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentkit.bridge import BridgeContext, bridged
from agentkit.tools import BaseTool
from examples.tool_loop_agent import ToolLoopAgent


def build(context: BridgeContext) -> ToolLoopAgent:
    """The agent over the bridge's client; the scenario's ``params`` go to its constructor.

    Its own tools (``population``, ``add``) know nothing of a scenario's ``world:``; in a
    scenario with one it offers the scenario's tools instead, as every agent type does: each
    called through agentkit, with the run's world bound in and left out of its schema."""
    params = dict(context.params)
    if context.agent.world is not None:
        params.setdefault("tools", {tool.metadata.name: _call(tool) for tool in context.tools})
        params.setdefault("schemas", [tool.metadata.to_openai_tool() for tool in context.tools])
    return ToolLoopAgent(context.client, context.model, **params)


def _call(tool: BaseTool) -> Callable[..., Any]:
    """``tool`` as the loop calls a tool: keyword arguments in, the output's text out."""
    return lambda **arguments: tool.call(**arguments).content


OPENAI_SDK_AGENT = bridged(build)
"""The ``openai_sdk_agent`` agent type: :class:`ToolLoopAgent` tested through the bridge."""
