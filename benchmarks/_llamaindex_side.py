"""The benchmark conversations on llama-index-core, run with *that* venv's python.

    PYTHON _llamaindex_side.py throughput --chats N --rounds R --warmup W
    PYTHON _llamaindex_side.py long --chats N --block B --time-cap S

Prints one JSON record per line (see ``_measure.emit``). The scripted LLM is a
``FunctionCallingLLM`` (``_llamaindex_llm``) in the style of LlamaIndex's ``MockLLM`` (its calls go through
``llm_chat_callback`` like a real backend's) that answers from the same script as agentkit's
``ScriptedLLM`` and is rewound before each chat.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

from _conversation import (
    LONG_ANSWER,
    MAX_ITERATIONS,
    SCENARIOS,
    SWEEP_EXTRA,
    TOOL_NAME,
    answer,
    lookup_population,
    react_script,
    tool_call_arguments,
)
from _harness import ScriptedChat, long_conversation, throughput
from _measure import emit, rss_kib

warnings.simplefilter("ignore")  # AgentRunner's deprecation notice, pydantic field warnings

from llama_index.core.agent import (  # noqa: E402
    AgentRunner,
    FunctionCallingAgentWorker,
    ReActAgentWorker,
)
from llama_index.core.tools import FunctionTool  # noqa: E402

from _llamaindex_llm import ScriptedLLM, ToolSelection  # noqa: E402


def build_chat(kind: str, calls: int, tool: FunctionTool, *, final_answer: str | None = None,
            keep_history: bool = False) -> ScriptedChat:
    """The same agent and one-chat script as ``_agentkit_side.build_chat``."""
    text = final_answer if final_answer is not None else answer(calls)
    if kind == "react":
        llm = ScriptedLLM(script=react_script(calls, text))
        worker: Any = ReActAgentWorker.from_tools([tool], llm=llm, max_iterations=MAX_ITERATIONS)
    elif kind == "function_calling":
        llm = ScriptedLLM(script=[
            [ToolSelection(tool_id=f"call_{i}", tool_name=TOOL_NAME, tool_kwargs=arguments)]
            for i, arguments in enumerate(tool_call_arguments(calls))] + [text])
        worker = FunctionCallingAgentWorker.from_tools([tool], llm=llm,
                                                       max_function_calls=MAX_ITERATIONS)
    else:
        raise ValueError(f"unknown agent kind {kind!r}")
    return ScriptedChat(AgentRunner(worker, llm=llm), llm, keep_history)


def inspect(response: Any) -> tuple[str, list[str]]:
    return response.response, [source.content for source in response.sources]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", choices=["throughput", "long"])
    parser.add_argument("--chats", type=int, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--block", type=int, default=100)
    parser.add_argument("--time-cap", type=float, default=None)
    args = parser.parse_args(argv)
    tool = FunctionTool.from_defaults(lookup_population)
    if args.mode == "throughput":
        for key, _label, kind, calls in SCENARIOS + SWEEP_EXTRA:
            result = throughput(build_chat(kind, calls, tool), inspect, answer(calls), calls,
                                chats=args.chats, rounds=args.rounds, warmup=args.warmup)
            emit({"key": key, **result})
        return 0
    chat = build_chat("react", 1, tool, final_answer=LONG_ANSWER, keep_history=True)
    emit({"start_rss_kib": rss_kib(), "token_limit": chat.agent.memory.token_limit})
    for block in long_conversation(chat, inspect, LONG_ANSWER, chat.agent.memory,
                                   chats=args.chats, block=args.block, time_cap=args.time_cap):
        emit(vars(block))
    emit({"end_rss_kib": rss_kib()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
