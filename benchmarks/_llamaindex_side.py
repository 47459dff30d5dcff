"""The benchmark conversations on llama-index-core, run with *that* venv's python.

    PYTHON _llamaindex_side.py throughput --chats N --warmup W   (then rounds on request)
    PYTHON _llamaindex_side.py long --chats N --block B --time-cap S
    PYTHON _llamaindex_side.py planning --runs N --warmup W

The planning mode needs ``llama-index-agent-llm-compiler`` and ``llama-index-packs-agents-coa``
too (setup_llamaindex.sh installs them); LlamaIndex has no virtual time, so its tools and its
model really sleep.

Prints one JSON record per line (see ``_measure.emit``). The scripted LLM is a
``FunctionCallingLLM`` (``_llamaindex_llm``) in the style of LlamaIndex's ``MockLLM`` (its calls go through
``llm_chat_callback`` like a real backend's) that answers from the same script as agentkit's
``ScriptedLLM`` and is rewound before each chat.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import warnings
from importlib import metadata
from typing import Any

from _conversation import (
    ARCHITECTURES,
    LLM_LATENCIES,
    LONG_ANSWER,
    MAX_ITERATIONS,
    PLANNING_QUESTION,
    SCENARIOS,
    SWEEP,
    TOOL_LATENCY,
    TOOL_NAME,
    answer,
    lookup_population,
    planning_script,
    react_script,
    tool_call_arguments,
)
from _harness import PlanningRun, ScriptedChat, Throughput, long_conversation, planning
from _measure import emit, rss_kib

warnings.simplefilter("ignore")  # AgentRunner's deprecation notice, pydantic field warnings

from llama_index.core.agent import (  # noqa: E402
    AgentRunner,
    FunctionCallingAgentWorker,
    ReActAgentWorker,
)
from llama_index.core.tools import FunctionTool  # noqa: E402

from _llamaindex_llm import ScriptedLLM, ToolSelection  # noqa: E402

PLANNING_PACKAGES = ("llama-index-core", "llama-index-agent-llm-compiler",
                     "llama-index-packs-agents-coa")


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


def build_planning_run(kind: str, llm_latency: float) -> PlanningRun:
    """The same architecture, script and latencies as ``_agentkit_side.build_planning_run``,
    on real sleeps: the agent's ``achat`` in a fresh event loop per run."""
    from llama_index.agent.llm_compiler import LLMCompilerAgentWorker
    from llama_index.packs.agents_coa import CoAAgentWorker

    looked_up: list[str] = []

    async def lookup(city: str) -> str:
        await asyncio.sleep(TOOL_LATENCY)
        looked_up.append(city)
        return lookup_population(city)

    tool = FunctionTool.from_defaults(async_fn=lookup, name=TOOL_NAME,
                                      description=lookup_population.__doc__)
    script = [[ToolSelection(tool_id=f"call_{i}", tool_name=TOOL_NAME, tool_kwargs=arguments)
               for i, arguments in enumerate(item)] if isinstance(item, list) else item
              for item in planning_script(kind)]
    llm = ScriptedLLM(script=script, latency=llm_latency)
    worker: Any
    if kind == "react":
        worker = ReActAgentWorker.from_tools([tool], llm=llm)
    elif kind == "function_calling":
        worker = FunctionCallingAgentWorker.from_tools([tool], llm=llm)
    elif kind == "llm_compiler":
        worker = LLMCompilerAgentWorker.from_tools([tool], llm=llm)
    else:
        worker = CoAAgentWorker.from_tools([tool], llm=llm)
    with warnings.catch_warnings():  # AgentRunner's deprecation notice, re-enabled upstream
        warnings.simplefilter("ignore")
        agent = AgentRunner(worker, llm=llm)

    def run() -> tuple[str, list[str], int, None, None]:
        agent.reset()
        llm.reset()
        looked_up.clear()
        response = asyncio.run(agent.achat(PLANNING_QUESTION))
        return str(response.response), sorted(looked_up), llm.position, None, None

    return run


def serve_rounds(scenarios: dict[str, Throughput]) -> None:
    """Answer the requests of ``_measure.side_session`` on stdin: ``{"round": key}`` times a
    round (``{"seconds": ...}``), ``{"steps": key}`` times a round's steps from inside
    (``{}``), ``{"result": key}`` gives the scenario's numbers."""
    for line in sys.stdin:
        request = json.loads(line)
        if "round" in request:
            emit({"seconds": scenarios[request["round"]].round()})
        elif "steps" in request:
            scenarios[request["steps"]].steps()
            emit({})
        else:
            emit(scenarios[request["result"]].result())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("mode", choices=["throughput", "long", "planning"])
    parser.add_argument("--chats", type=int, default=1)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--block", type=int, default=100)
    parser.add_argument("--time-cap", type=float, default=None)
    args = parser.parse_args(argv)
    if args.mode == "planning":
        emit({"versions": {name: metadata.version(name) for name in PLANNING_PACKAGES}})
        for llm_latency in LLM_LATENCIES:
            for kind, _label in ARCHITECTURES:
                emit(planning(build_planning_run(kind, llm_latency), kind, llm_latency,
                              runs=args.runs, warmup=args.warmup))
        return 0
    tool = FunctionTool.from_defaults(lookup_population)
    if args.mode == "throughput":
        serve_rounds({key: Throughput(build_chat(kind, calls, tool), inspect, answer(calls), calls,
                                      chats=args.chats, warmup=args.warmup)
                      for key, _label, kind, calls in (*SCENARIOS, SWEEP)})
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
