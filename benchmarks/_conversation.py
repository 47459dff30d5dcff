"""The scripted conversations every benchmark runs, shared by the agentkit and LlamaIndex sides.

Plain Python only (no agentkit, no llama_index import), so both interpreters load the same
tool, the same user messages and the same model texts byte for byte.
"""

from __future__ import annotations

import gc
import hashlib
import json
import time
from collections.abc import Iterable

CITIES = ("Paris", "Lagos", "Lima", "Osaka", "Quito", "Perth", "Oslo", "Cairo", "Dhaka", "Turin")

TOOL_NAME = "lookup_population"

#: Rows of the throughput table: (key, label, agent kind, tool calls per chat).
SCENARIOS = (
    ("react_1", "ReAct, 1 tool call", "react", 1),
    ("react_10", "ReAct, 10 sequential tool calls", "react", 10),
    ("fc_1", "function calling, 1 tool call", "function_calling", 1),
)

#: The cost-per-step sweep: a ReAct chat with 16 tool calls, each timed from inside. The
#: step after tool call k (k = 1..15) is the CPU time from that call to the next one: the
#: observation stored, the prompt rendered with k actions in it, the model's reply parsed and
#: the next call made. It stays flat when a step does not cost more for the steps taken
#: before it. Timing the steps of one chat compares them milliseconds apart, so other jobs on
#: a shared machine fall on all of them alike (a difference of two chats' medians does not).
SWEEP = ("react_sweep", "ReAct, 16 sequential tool calls, each step timed", "react", 16)


class CallTimes:
    """The CPU times of ``lookup_population``'s calls while recording (``start`` .. ``stop``);
    both sides' tools are that function, so both pay the same for the check.

    The garbage collector's pauses are left out: a collection runs where the count of new
    objects crosses gc's threshold, and a chat that allocates about as many objects as the
    threshold meets it at the same step every time, which then looks dearer than the others
    for a reason unrelated to the steps before it (seen: +63% on one step, the same Python
    calls as every other). Whole chats (the chats/s rows) include them."""

    def __init__(self) -> None:
        self.times: list[float] | None = None
        self._collecting = 0.0  # CPU seconds inside the collector since start()
        self._since = 0.0

    def start(self) -> None:
        self.times = []
        self._collecting = 0.0
        if self._collected not in gc.callbacks:
            gc.callbacks.append(self._collected)

    def stop(self) -> list[float]:
        if self._collected in gc.callbacks:
            gc.callbacks.remove(self._collected)
        times, self.times = self.times or [], None
        return times

    def now(self) -> float:
        """CPU time since start() without the collector's."""
        return time.process_time() - self._collecting

    def _collected(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._since = time.process_time()
        else:
            self._collecting += time.process_time() - self._since


CALL_TIMES = CallTimes()

#: Rows of the workflow table (bench_workflows.py): (key, label, tool calls per run). A run
#: is one ``AgentWorkflow`` run of a ``FunctionAgent``, one tool call per model reply.
WORKFLOW_SCENARIOS = (
    ("workflow_fc_1", "AgentWorkflow + FunctionAgent, 1 tool call", 1),
    ("workflow_fc_10", "AgentWorkflow + FunctionAgent, 10 tool calls", 10),
)

#: Enough for the 15-call chat on both stacks, which count reasoning steps (an action and
#: its observation are two: 31 there); both default to 10.
MAX_ITERATIONS = 40

#: The long conversation's answer: about 40 words, so memory trimming starts within ~50 chats.
LONG_ANSWER = (
    "Paris has about five million people according to the lookup tool, which counts one "
    "million residents per letter of the city name. The figure is a rough estimate, so check "
    "an official census before you rely on it for planning, budgeting or any published report."
)


def lookup_population(city: str) -> str:
    """Look up the population of a city."""
    if CALL_TIMES.times is not None:
        CALL_TIMES.times.append(CALL_TIMES.now())
    return f"{city} has {len(city)} million people."


def user_message(chat: int) -> str:
    return f"Question {chat}: how many people live in these cities?"


def action_text(call: int) -> str:
    """The ReAct model text of tool call ``call`` (0-based) of a chat."""
    city = CITIES[call % len(CITIES)]
    return (f"Thought: I need the population of {city}.\nAction: {TOOL_NAME}\n"
            f'Action Input: {{"city": "{city}"}}')


def answer(calls: int) -> str:
    if not calls:
        return "I can answer that without looking anything up."
    return "The populations are: " + "; ".join(
        lookup_population(CITIES[i % len(CITIES)]) for i in range(calls))


def react_script(calls: int, final_answer: str | None = None) -> list[str]:
    """The model texts of one ReAct chat: ``calls`` actions, then the answer."""
    text = final_answer if final_answer is not None else answer(calls)
    return [action_text(i) for i in range(calls)] + [
        f"Thought: I can answer without using any more tools.\nAnswer: {text}"]


def tool_call_arguments(calls: int) -> list[dict[str, str]]:
    """The function-calling model's tool-call arguments, one reply per call."""
    return [{"city": CITIES[i % len(CITIES)]} for i in range(calls)]


def transcript_digest(turns: Iterable[tuple[str, str, list[str]]]) -> str:
    """A short hash of (user message, answer, tool outputs) per chat: equal on both sides
    exactly when they held the same conversation."""
    digest = hashlib.sha256()
    for user, reply, observations in turns:
        digest.update(json.dumps([user, reply, observations]).encode())
    return digest.hexdigest()[:12]


# ---------------------------------------------------------------- the planning benchmark
# Four independent look-ups answered by ReAct, function calling, LLMCompiler and
# Chain-of-Abstraction from the same scripts on both stacks (``bench_planning.py``).

#: (key, label) of each architecture, ReAct first: it is the baseline of the ratios.
ARCHITECTURES = (
    ("react", "ReAct"),
    ("function_calling", "function calling"),
    ("llm_compiler", "LLMCompiler"),
    ("coa", "CoA"),
)
LOOKUPS = CITIES[:4]
TOOL_LATENCY = 0.1
LLM_LATENCIES = (0.0, 0.2)
PLANNING_QUESTION = "How many people live in " + ", ".join(LOOKUPS[:-1]) + f" and {LOOKUPS[-1]}?"
PLANNING_ANSWER = answer(len(LOOKUPS))


def planning_script(kind: str) -> list[str | list[dict[str, str]]]:
    """The model's replies to the planning question, one per LLM call: text, or (function
    calling) the list of tool-call arguments of one reply."""
    calls = tool_call_arguments(len(LOOKUPS))
    if kind == "react":
        return list(react_script(len(LOOKUPS), PLANNING_ANSWER))
    if kind == "function_calling":
        return [calls, PLANNING_ANSWER]
    if kind == "llm_compiler":
        plan = "\n".join(f'{n}. {TOOL_NAME}("{city}")' for n, city in enumerate(LOOKUPS, 1))
        return [f"Thought: The four look-ups are independent: run them at once.\n{plan}\n"
                f"Thought: Then answer with all four.\n{len(LOOKUPS) + 1}. join()<END_OF_PLAN>",
                f"Thought: I have all four populations.\nAction: Finish({PLANNING_ANSWER})"]
    if kind == "coa":
        funcs = [f'{city} [FUNC {TOOL_NAME}("{city}") = y{n}]' for n, city in
                 enumerate(LOOKUPS, 1)]
        return [f"The populations: {', '.join(funcs[:-1])} and {funcs[-1]}.", PLANNING_ANSWER]
    raise ValueError(f"unknown architecture {kind!r}: use one of "
                     f"{', '.join(key for key, _ in ARCHITECTURES)}")


def planning_levels(kind: str) -> list[list[str]]:
    """What depends on what in a run of ``kind``: levels of calls (``"llm"``/``"tool"``), each
    level starting when the one before has finished, the calls of a level independent.

    ReAct asks for one look-up per reply, so each waits for a model call and the next model
    call waits for it; the others get all four look-ups from one model call (the reply's tool
    calls, the plan, the chain) and answer in one more."""
    if kind == "react":
        return [*(level for _ in LOOKUPS for level in (["llm"], ["tool"])), ["llm"]]
    planning_script(kind)  # rejects an unknown kind
    return [["llm"], ["tool"] * len(LOOKUPS), ["llm"]]


def planning_times(kind: str, llm_latency: float) -> dict[str, float]:
    """The ideal run of ``kind``: serial time (every latency added up) and critical path (the
    longest chain of dependent calls: the wall time of a scheduler that never waits idle)."""
    latency = {"llm": llm_latency, "tool": TOOL_LATENCY}
    levels = planning_levels(kind)
    return {"serial": sum(latency[call] for level in levels for call in level),
            "critical_path": sum(max(latency[call] for call in level) for level in levels),
            "llm_calls": sum(level.count("llm") for level in levels),
            "tool_calls": sum(level.count("tool") for level in levels)}
