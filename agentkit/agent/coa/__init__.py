"""Chain-of-Abstraction (``llama_index.packs.agents_coa`` shape): the model plans with
``[FUNC name(args) = yN]`` placeholders, the calls run level by level (each level
concurrently), and a refine call answers from the filled-in reasoning."""

from agentkit.agent.coa.chain import (
    Chain,
    ChainCall,
    ChainParseError,
    Ref,
    format_call,
    parse_chain,
    replace_placeholders,
)
from agentkit.agent.coa.events import ChainLevelEvent, ChainParsedEvent
from agentkit.agent.coa.pack import CoAAgentPack
from agentkit.agent.coa.prompts import REASONING_PROMPT_TEMPLATE, REFINE_REASONING_PROMPT_TEMPLATE
from agentkit.agent.coa.step import ChainOfAbstractionParser, ChainParser, CoAAgentWorker
from agentkit.agent.coa.stubs import function_stub, tool_stubs

__all__ = [
    "Chain",
    "ChainCall",
    "ChainLevelEvent",
    "ChainOfAbstractionParser",
    "ChainParseError",
    "ChainParsedEvent",
    "ChainParser",
    "CoAAgentPack",
    "CoAAgentWorker",
    "REASONING_PROMPT_TEMPLATE",
    "REFINE_REASONING_PROMPT_TEMPLATE",
    "Ref",
    "format_call",
    "function_stub",
    "parse_chain",
    "replace_placeholders",
    "tool_stubs",
]
