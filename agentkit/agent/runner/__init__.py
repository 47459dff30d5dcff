from agentkit.agent.runner.base import AgentRunner, AgentState, TaskState
from agentkit.agent.runner.parallel import ParallelAgentRunner

__all__ = ["AgentRunner", "AgentState", "ParallelAgentRunner", "TaskState"]
