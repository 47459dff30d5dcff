"""One ReAct agent, many chats in a row: does time per chat stay flat as history grows?

    python benchmarks/bench_long_conversation.py [--chats 1000] [--block 100]
        [--delete-task-on-finish]
        [--llamaindex PATH_TO_PYTHON [--llamaindex-chats N] [--time-cap SECONDS]]

Every chat makes one tool call and answers with about 40 words, and the agent keeps its
default memory (token limit 75% of the scripted LLM's 3,900-token context window), so the
memory window starts dropping old messages within the first ~50 chats. Prints the mean time
per chat (process CPU time) of each block of chats and the process's resident memory (VmRSS)
from the first chat to the last. ``--llamaindex PY`` then runs the same conversation on
llama-index-core, whose memory re-tokenises the history for every message it drops, so its
time per chat grows with the conversation; ``--time-cap`` stops that side after a block's chat
once it has run that long. The agent's runner keeps every finished task, as LlamaIndex's does
(``get_completed_tasks``); ``--delete-task-on-finish`` drops each one, so the memory still
growing is the chat history alone.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
from pathlib import Path
from typing import Any, TextIO

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from _conversation import LONG_ANSWER  # noqa: E402
from _harness import Block, long_conversation  # noqa: E402
from _measure import rss_kib, side_records, table  # noqa: E402

#: "Flat": once the memory window is full, no block's mean time per chat is above this
#: multiple of the fastest such block's.
FLAT_TOLERANCE = 1.5


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=1000, help="chats in the conversation")
    parser.add_argument("--block", type=int, default=100, help="chats per reported block")
    parser.add_argument("--delete-task-on-finish", action="store_true",
                        help="the agentkit runner drops each finished task (default: keeps "
                             "them, as LlamaIndex's does)")
    parser.add_argument("--llamaindex", metavar="PYTHON",
                        help="python of a venv with llama-index-core: compare against it")
    parser.add_argument("--llamaindex-chats", type=int,
                        help="chats on the LlamaIndex side (default: --chats)")
    parser.add_argument("--time-cap", type=float, default=300.0,
                        help="seconds after which the LlamaIndex side stops (default 300)")
    args = parser.parse_args(argv)
    for name in ("chats", "block", "llamaindex_chats"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.llamaindex_chats is None:
        args.llamaindex_chats = args.chats
    return args


def run_agentkit(args: argparse.Namespace, out: TextIO) -> dict[str, Any]:
    from _agentkit_side import build_chat, build_tool, inspect
    from agentkit.core.sim import simulation

    with simulation(seed=0):
        chat = build_chat("react", 1, build_tool(), final_answer=LONG_ANSWER, keep_history=True,
                          delete_task_on_finish=args.delete_task_on_finish)
        start = rss_kib()
        print(f"agentkit: memory token limit {chat.agent.memory.token_limit}", file=out)
        blocks = []
        for block in long_conversation(chat, inspect, LONG_ANSWER, chat.agent.memory,
                                       chats=args.chats, block=args.block):
            _print_block("agentkit", block, out)
            blocks.append(block)
        tasks, messages = len(chat.agent.list_tasks()), len(chat.agent.memory.get_all())
    print(f"agentkit: kept {messages} messages of history and {tasks} finished tasks", file=out)
    return {"start_rss_kib": start, "end_rss_kib": rss_kib(), "blocks": blocks,
            "tasks_kept": tasks, "messages_kept": messages}


def run_llamaindex(args: argparse.Namespace, out: TextIO) -> dict[str, Any]:
    result: dict[str, Any] = {"blocks": []}
    for record in side_records(args.llamaindex, _HERE / "_llamaindex_side.py",
                               ["long", "--chats", str(args.llamaindex_chats), "--block",
                                str(args.block), "--time-cap", str(args.time_cap)]):
        if "last" in record:
            block = Block(**record)
            _print_block("llama-index", block, out)
            result["blocks"].append(block)
        else:
            if "token_limit" in record:
                print(f"llama-index: memory token limit {record['token_limit']}", file=out)
            result.update(record)
    return result


def _print_block(side: str, block: Block, out: TextIO) -> None:
    trim = f"  (memory trimming from chat {block.first_trim})" if block.first_trim else ""
    print(f"  {side}: chats {block.last - block.chats + 1}-{block.last}: "
          f"{block.mean_ms:.2f} ms/chat, RSS {block.rss_kib / 1024:.1f} MiB{trim}",
          file=out, flush=True)


def steady_blocks(blocks: list[Block]) -> list[Block]:
    """The blocks run entirely with a full memory window (after the first trim); all blocks
    when there are none such (a conversation too short to fill the window)."""
    trim = next((b.first_trim for b in blocks if b.first_trim), None)
    steady = [b for b in blocks if trim is not None and b.last - b.chats + 1 > trim]
    return steady or blocks


def spread(blocks: list[Block]) -> float:
    """Slowest over fastest mean time per chat of the steady blocks (a single block with a
    full garbage collection of the growing heap in it shows up here)."""
    means = [b.mean_ms for b in steady_blocks(blocks)]
    return max(means) / min(means)


def drift(blocks: list[Block]) -> float:
    """How much slower the end of the conversation is than its start, once the memory window
    is full: the median of the last third of the steady blocks over the median of the first
    third. Quadratic trimming (LlamaIndex) grows this without bound; linear keeps it near 1."""
    means = [b.mean_ms for b in steady_blocks(blocks)]
    third = max(1, len(means) // 3)
    return statistics.median(means[-third:]) / statistics.median(means[:third])


def _summary(side: str, run: dict[str, Any]) -> list[str]:
    blocks: list[Block] = run["blocks"]
    chats = blocks[-1].last if blocks else 0
    growth = run["end_rss_kib"] - run["start_rss_kib"]
    return [side, str(chats), f"{blocks[0].mean_ms:.2f}", f"{blocks[-1].mean_ms:.2f}",
            f"{drift(blocks):.2f}x", f"{spread(blocks):.2f}x", f"{run['start_rss_kib'] / 1024:.1f}",
            f"{run['end_rss_kib'] / 1024:.1f}", f"{growth / 1024:+.1f}",
            f"{growth / max(chats, 1):.1f}"]


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> dict[str, Any]:
    """Run, print progress and the summary to ``out``, and return the numbers."""
    args = parse_args(argv)
    print(f"long conversation: {args.chats} ReAct chats on one agent, 1 tool call and a "
          f"{len(LONG_ANSWER.split())}-word answer each; Python {platform.python_version()}",
          file=out, flush=True)
    runs = {"agentkit": run_agentkit(args, out)}
    if args.llamaindex:
        print(f"\nllama-index-core: {args.llamaindex_chats} chats, stopping after "
              f"{args.time_cap:.0f} s", file=out, flush=True)
        runs["llama-index"] = run_llamaindex(args, out)

    print("\n" + table([_summary(side, run) for side, run in runs.items()],
                       ["side", "chats", "first block ms/chat", "last block ms/chat",
                        "end/start drift", "slowest/fastest block", "RSS start MiB", "RSS end MiB",
                        "RSS growth MiB", "KiB/chat"]), file=out)
    if "llama-index" in runs:
        ours, theirs = runs["agentkit"]["blocks"], runs["llama-index"]["blocks"]
        rows = [[f"{a.last - a.chats + 1}-{a.last}", f"{a.mean_ms:.2f}", f"{b.mean_ms:.2f}",
                 f"{b.mean_ms / a.mean_ms:.1f}x", "yes" if a.digest == b.digest else "NO"]
                for a, b in zip(ours, theirs, strict=False) if (a.last, a.chats) == (b.last, b.chats)]
        print("\n" + table(rows, ["chats", "agentkit ms/chat", "llama-index ms/chat",
                                  "agentkit speed-up", "same transcript"]), file=out)
        reached = theirs[-1].last if theirs else 0
        if reached < args.llamaindex_chats:
            print(f"\nllama-index stopped at the time cap after chat {reached} of "
                  f"{args.llamaindex_chats}", file=out)
    ours = drift(runs["agentkit"]["blocks"])
    print(f"\ntarget: agentkit time per chat flat across {args.chats} chats (once the memory "
          f"window is full, the last third of the blocks within {FLAT_TOLERANCE}x of the "
          f"first third): {'met' if ours <= FLAT_TOLERANCE else 'MISSED'} ({ours:.2f}x)", file=out)
    return runs


def measured(runs: dict[str, Any]) -> list[Any]:
    """The run's figure for the targets table (``targets.py``)."""
    from _measure import Measured

    ours = drift(runs["agentkit"]["blocks"])
    chats = runs["agentkit"]["blocks"][-1].last
    return [Measured("long_conversation_flat", f"{ours:.2f}x end/start over {chats:,} chats",
                     ours <= FLAT_TOLERANCE)]


if __name__ == "__main__":
    from targets import publish

    publish(measured(main()))
