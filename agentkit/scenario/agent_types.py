"""An old import path: these names moved to :mod:`agentkit.harness`
(``agentkit.harness._agent_types``), as agentkit.scenario is the file format only; importing them
from here keeps working."""

from agentkit.harness._agent_types import (
    AGENT_TYPES,
    ENTRY_POINT_GROUP,
    AgentContext,
    AgentFactory,
    AgentType,
    AgentTypeError,
    ChatAgent,
    UnknownAgentTypeError,
    UnknownTrajectoryFormatError,
    agent_type_names,
    build_agent,
    check_agent_type,
    named_renderer,
    register_agent_type,
    resolve_agent_type,
    trajectory_renderer_for,
)

__all__ = ["AGENT_TYPES", "ENTRY_POINT_GROUP", "agent_type_names", "AgentContext",
           "AgentFactory", "AgentType", "AgentTypeError", "build_agent", "ChatAgent",
           "check_agent_type", "named_renderer", "register_agent_type", "resolve_agent_type",
           "trajectory_renderer_for", "UnknownAgentTypeError", "UnknownTrajectoryFormatError"]
