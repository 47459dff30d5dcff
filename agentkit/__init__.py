"""agentkit: LlamaIndex-shaped LLM agents with a deterministic, offline test harness."""

__version__ = "0.1.0"
