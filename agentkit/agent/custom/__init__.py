from agentkit.agent.custom.pipeline import QueryPipelineAgentWorker
from agentkit.agent.custom.simple import CustomSimpleAgentWorker
from agentkit.agent.custom.simple_function import FnAgentWorker

__all__ = ["CustomSimpleAgentWorker", "FnAgentWorker", "QueryPipelineAgentWorker"]
