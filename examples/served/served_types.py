"""The agent types of support_agents.py's agents: ``agentkit serve`` serves their scenario's
model to the agents in their own processes; ``agentkit run`` runs the same agents in process,
their model routed to the bridge (the Agents SDK agent through agentkit's integration, on the
Responses API; the Anthropic one through ``httpx2_clients``)."""

from typing import Any

import support_agents

from agentkit.bridge import BridgeContext, bridged, httpx2_clients
from agentkit.integrations.openai_agents import openai_agents_agent


@openai_agents_agent
def sdk_agent(context: Any) -> Any:
    return support_agents.sdk_agent()


def _claude(context: BridgeContext) -> support_agents.ClaudeCalculator:
    import anthropic

    sync, _ = httpx2_clients(context.bridge)
    return support_agents.ClaudeCalculator(anthropic.Anthropic(
        base_url=context.base_url.removesuffix("/v1"), api_key="any", http_client=sync,
        max_retries=0))


claude_calculator = bridged(_claude)
