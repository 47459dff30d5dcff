"""The bridge: an OpenAI-compatible endpoint backed by the harness, so an agent that talks to
its model over the OpenAI API -- any framework, any language -- is tested with scenarios,
cassettes, snapshots and reports as agentkit's own agents are.

* :class:`Bridge` (:mod:`agentkit.bridge.endpoint`): ``/v1/chat/completions``,
  ``/v1/responses`` (:mod:`agentkit.bridge.responses_wire`), Anthropic's ``/v1/messages``
  (:mod:`agentkit.bridge.messages_wire`) and ``/v1/models`` answered by any agentkit LLM (a
  script, a cassette, a live model it proxies to while recording);
* :class:`BridgeTransport` / :func:`openai_clients` / :func:`httpx2_clients`
  (:mod:`agentkit.bridge.transport`): the bridge in-process, for httpx, ``openai`` and
  (httpx2) ``anthropic`` clients;
* :class:`LoopbackServer` (:mod:`agentkit.bridge.server`): the bridge on 127.0.0.1, behind
  ``agentkit serve`` (:class:`agentkit.bridge.serve.ServeSession`);
* :class:`WireTrace` (:mod:`agentkit.bridge.wire_trace`): the agent's trace from its exchanges;
* :func:`bridged` and :class:`BridgeContext` (:mod:`agentkit.bridge.agent`): the agent type of
  "my agent, through the bridge".
"""

from agentkit.bridge.agent import BridgeContext, BridgedAgent, BridgeFactory, bridged
from agentkit.bridge.endpoint import API_KEY, DEFAULT_BASE_URL, Bridge, HTTPAnswer
from agentkit.bridge.server import LoopbackServer, PortInUseError
from agentkit.bridge.transport import BridgeTransport, httpx2_clients, openai_clients
from agentkit.bridge.wire_trace import WireTrace, WireTurn

__all__ = ["Bridge", "HTTPAnswer", "DEFAULT_BASE_URL", "API_KEY", "BridgeTransport",
           "openai_clients", "httpx2_clients", "WireTrace", "WireTurn", "BridgeContext", "BridgeFactory",
           "BridgedAgent", "bridged", "LoopbackServer", "PortInUseError"]
