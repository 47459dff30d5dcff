"""LlamaIndex 0.12-style workflow code, unchanged but for its imports.

Written the way LlamaIndex 0.12's workflow documentation writes it: a custom workflow that
keeps its state with ``ctx.get/ctx.set``, a step with a retry policy, a stepwise driver loop,
and a checkpointed run resumed from its third step with another LLM. The only edits are the
imports: ``llama_index.core.workflow`` -> ``agentkit.workflow`` (same module layout:
``.retry_policy``, ``.checkpointer``) and ``llama_index.core.llms`` -> ``agentkit.llms``.
"""

from agentkit.llms import LLM
from agentkit.workflow import (
    Context,
    Event,
    StartEvent,
    StopEvent,
    Workflow,
    WorkflowCheckpointer,
    step,
)
from agentkit.workflow.retry_policy import ConstantDelayRetryPolicy


class TopicEvent(Event):
    topic: str


class JokeEvent(Event):
    joke: str


class CritiqueEvent(Event):
    joke: str
    critique: str


class JokeFlow(Workflow):
    def __init__(self, llm: LLM, **kwargs):
        super().__init__(**kwargs)
        self.llm = llm

    @step
    async def setup(self, ctx: Context, ev: StartEvent) -> TopicEvent:
        await ctx.set("topic", ev.topic)
        await ctx.set("num_llm_calls", 0)
        return TopicEvent(topic=ev.topic)

    @step
    async def generate_joke(self, ctx: Context, ev: TopicEvent) -> JokeEvent:
        response = await self.llm.acomplete(f"Write your best joke about {ev.topic}.")
        await ctx.set("num_llm_calls", await ctx.get("num_llm_calls") + 1)
        return JokeEvent(joke=str(response))

    @step(retry_policy=ConstantDelayRetryPolicy(delay=10, maximum_attempts=3))
    async def critique_joke(self, ctx: Context, ev: JokeEvent) -> CritiqueEvent:
        # a flaky reviewer: the first attempt of each run fails, the retry works
        failures = await ctx.get("reviewer_failures", default=0)
        if failures == 0:
            await ctx.set("reviewer_failures", failures + 1)
            raise ConnectionError("reviewer unavailable")
        response = await self.llm.acomplete(f"Give a thorough critique of: {ev.joke}")
        await ctx.set("num_llm_calls", await ctx.get("num_llm_calls") + 1)
        return CritiqueEvent(joke=ev.joke, critique=str(response))

    @step
    async def summarize(self, ctx: Context, ev: CritiqueEvent) -> StopEvent:
        response = await self.llm.acomplete(f"Summarize in one line: {ev.critique}")
        topic = await ctx.get("topic")
        calls = await ctx.get("num_llm_calls") + 1
        return StopEvent(result=f"[{topic}] {response} ({calls} LLM calls)")


async def run_once(llm: LLM) -> str:
    w = JokeFlow(llm=llm, timeout=60, verbose=False)
    result = await w.run(topic="pirates")
    return str(result)


async def run_stepwise(llm: LLM) -> tuple[str, list[str]]:
    w = JokeFlow(llm=llm, timeout=60, verbose=False)
    handler = w.run(stepwise=True, topic="pirates")
    seen = []
    while produced_events := await handler.run_step():
        for ev in produced_events:
            seen.append(type(ev).__name__)
            handler.ctx.send_event(ev)
    result = await handler
    return str(result), seen


async def run_checkpointed_then_resume(llm: LLM, other_llm: LLM) -> tuple[str, str, list[str]]:
    w = JokeFlow(llm=llm, timeout=60)
    w_ckptr = WorkflowCheckpointer(workflow=w)
    handler = w_ckptr.run(topic="pirates")
    first = await handler

    ckpts = w_ckptr.checkpoints[handler.run_id]
    steps = [ckpt.last_completed_step for ckpt in ckpts]
    third = ckpts[2]  # after critique_joke

    resumed_ckptr = WorkflowCheckpointer(workflow=JokeFlow(llm=other_llm, timeout=60))
    handler = resumed_ckptr.run_from(checkpoint=third)
    second = await handler
    return str(first), str(second), steps
