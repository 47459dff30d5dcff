"""The workflow benchmark on llama-index-core 0.14's AgentWorkflow, run with *that* venv's python.

    PYTHON _llamaindex_workflow_side.py --runs N --rounds R --warmup W

Prints one JSON record per row of ``WORKFLOW_SCENARIOS`` (see ``_measure.emit``): the same
non-streaming FunctionAgent, tool and script as ``_agentkit_side.build_workflow_run``, each run
awaited on one event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import warnings
from collections.abc import Callable

from _conversation import (
    MAX_ITERATIONS,
    TOOL_NAME,
    WORKFLOW_SCENARIOS,
    answer,
    lookup_population,
    tool_call_arguments,
    user_message,
)
from _harness import throughput
from _measure import emit

warnings.simplefilter("ignore")

from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent  # noqa: E402
from llama_index.core.memory import ChatMemoryBuffer  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402

from _llamaindex_llm import ScriptedLLM, ToolSelection  # noqa: E402


def build_workflow_run(calls: int, tool: FunctionTool,
                       loop: asyncio.AbstractEventLoop) -> Callable[[int], tuple[str, list[str]]]:
    llm = ScriptedLLM(script=[
        [ToolSelection(tool_id=f"call_{i}", tool_name=TOOL_NAME, tool_kwargs=arguments)]
        for i, arguments in enumerate(tool_call_arguments(calls))] + [answer(calls)])
    workflow = AgentWorkflow(agents=[FunctionAgent(tools=[tool], llm=llm, streaming=False)])

    async def one(n: int, memory: ChatMemoryBuffer) -> str:
        return str(await workflow.run(user_msg=user_message(n), memory=memory,
                                      max_iterations=MAX_ITERATIONS))

    def run(n: int) -> tuple[str, list[str]]:
        llm.reset()
        memory = ChatMemoryBuffer.from_defaults(llm=llm)
        reply = loop.run_until_complete(one(n, memory))
        return reply, [m.content or "" for m in memory.get_all() if m.role == "tool"]
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args(argv)
    tool = FunctionTool.from_defaults(lookup_population)
    loop = asyncio.new_event_loop()
    for key, _label, calls in WORKFLOW_SCENARIOS:
        result = throughput(build_workflow_run(calls, tool, loop), lambda r: r, answer(calls),
                            calls, chats=args.runs, rounds=args.rounds, warmup=args.warmup)
        emit({"key": key, **result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
