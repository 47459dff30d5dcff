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

from agentkit.bridge import BridgeContext, bridged
from examples.tool_loop_agent import ToolLoopAgent


def build(context: BridgeContext) -> ToolLoopAgent:
    """The agent over the bridge's client; the scenario's ``params`` go to its constructor."""
    return ToolLoopAgent(context.client, context.model, **context.params)


OPENAI_SDK_AGENT = bridged(build)
"""The ``openai_sdk_agent`` agent type: :class:`ToolLoopAgent` tested through the bridge."""
