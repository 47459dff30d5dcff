"""The LLMCompiler agent worker: plan a DAG of tool calls, run it, join, maybe replan."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentkit.agent.llm_compiler.events import JoinerDecisionEvent, PlanEvent
from agentkit.agent.llm_compiler.joiner import JoinerOutput, JoinerParseError, parse_joiner_output
from agentkit.agent.llm_compiler.plan import JOIN, PlanParseError, parse_plan
from agentkit.agent.llm_compiler.prompts import (
    JOINER_PROMPT,
    PLANNER_EXAMPLE_PROMPT,
    planner_system_prompt,
    planner_user_prompt,
)
from agentkit.agent.llm_compiler.scheduler import TaskResult, run_plan
from agentkit.agent.types import AgentChatResponse, Task, TaskStep, TaskStepOutput
from agentkit.agent.worker import AgentWorker
from agentkit.core.events import dispatcher
from agentkit.core.ids import new_id, new_uuid
from agentkit.instrumentation import CallbackManager
from agentkit.llms.base import LLM
from agentkit.llms.prompts import PromptTemplate
from agentkit.llms.tool_calling import ListedTools
from agentkit.llms.types import ChatMessage, MessageRole
from agentkit.tools import BaseTool, ObjectRetriever, ToolRunner

__all__ = ["LLMCompilerAgentWorker", "DEFAULT_MAX_REPLANS"]

DEFAULT_MAX_REPLANS = 3


@dataclass(frozen=True)
class _Round:
    """How a planner round ended: the decision (finish with ``answer``, or replan with
    ``answer`` as the reason) and the context the next round gets if it replans."""

    decision: JoinerOutput
    context: str


class LLMCompilerAgentWorker(AgentWorker):
    """LLMCompiler (Kim et al., ICML 2024): the planner writes a plan of tool calls with
    ``$N`` dependencies, the calls run as a DAG (each the moment its inputs are ready), and
    the joiner answers (``Action: Finish(...)``) or asks for a new plan
    (``Action: Replan(...)``), which sees the earlier rounds as ``Previous Plan``.

    Each step is one round: one planner chat (``[system, user "Question: ..."]``), the plan's
    tool calls, one joiner call (a completion for a non-chat LLM, one user message for a chat
    LLM). ``max_replans`` N allows at most N+1 rounds; the last round's joiner output is
    final whatever it says (a ``Replan(reason)`` there answers ``reason``).

    Bad input never crashes the task: a plan that cannot be parsed at all counts as a round
    that replans with the parse error as its context (in the last round the answer is
    ``Error: ...`` naming the problem); a bad task (unknown tool, non-literal or keyword
    arguments, a ``$N`` with no earlier task N) is an error observation for the joiner, and
    so is a raising tool; a task whose input failed is not run and gets an error observation
    saying which input failed. A joiner output that cannot be read counts as a replan (in the
    last round its raw text is the answer). Actions after ``join()`` are ignored, with a note
    in the plan (visible in traces).

    Memory after finalize: the user message and the answer text. ``run_step`` works inside a
    running event loop (the core's ``run_sync``); a later step's ``input`` is ignored (the
    rounds work on the task's input). Streaming (``stream_chat``) is the core's derived
    stream: the final answer as one chunk, after the last round.

    Fixes over LlamaIndex: ``Replan(...)`` replans; the answer is the balanced-parenthesis
    content; ``$N`` goes into the parsed arguments (no re-evaluation); unknown tools and
    failing tools are observations; memory stores the answer text (LlamaIndex stored None);
    ``replans`` counts once per round; no polling; zero tools works (a plan of ``join()``);
    ``from_tools`` passes ``max_replans`` and the other options on.
    """

    def __init__(self, tools: Sequence[BaseTool], llm: LLM,
                 callback_manager: CallbackManager | None = None, verbose: bool = False,
                 tool_retriever: ObjectRetriever[BaseTool] | None = None,
                 planner_example: str | None = None, stop: list[str] | None = None,
                 joiner_prompt: PromptTemplate | str | None = None,
                 max_replans: int = DEFAULT_MAX_REPLANS) -> None:
        if llm is None:
            raise ValueError(f"{type(self).__name__} needs an `llm`")
        if not isinstance(max_replans, int) or max_replans < 0:
            raise ValueError(f"max_replans must be an integer >= 0, got {max_replans!r}")
        reserved = [t.metadata.name for t in tools or () if t.metadata.name == JOIN]
        if reserved:
            raise ValueError("a tool is named `join`, which LLMCompiler plans reserve for "
                             "their last action; rename the tool")
        self._set_tools(tools, tool_retriever)
        self._llm = llm
        self.callback_manager = callback_manager or CallbackManager()
        self._verbose = verbose
        self.planner_example = PLANNER_EXAMPLE_PROMPT if planner_example is None else planner_example
        self.stop = list(stop) if stop else None
        self.joiner_prompt = _template(joiner_prompt or JOINER_PROMPT)
        self.max_replans = max_replans

    @classmethod
    def from_tools(cls, tools: Sequence[BaseTool] | None = None, llm: LLM | None = None,
                   max_replans: int = DEFAULT_MAX_REPLANS, planner_example: str | None = None,
                   stop: list[str] | None = None, verbose: bool = False,
                   callback_manager: CallbackManager | None = None,
                   tool_retriever: ObjectRetriever[BaseTool] | None = None,
                   joiner_prompt: PromptTemplate | str | None = None,
                   **kwargs: Any) -> LLMCompilerAgentWorker:
        """Build a worker (LlamaIndex's ``from_tools`` dropped everything but the tools and
        the LLM; every option here reaches the worker)."""
        if kwargs:
            raise TypeError(f"LLMCompilerAgentWorker.from_tools got unexpected arguments: "
                            f"{sorted(kwargs)}")
        return cls(tools=list(tools or []), llm=llm,  # type: ignore[arg-type]
                   callback_manager=callback_manager, verbose=verbose,
                   tool_retriever=tool_retriever, planner_example=planner_example, stop=stop,
                   joiner_prompt=joiner_prompt, max_replans=max_replans)

    @property
    def llm(self) -> LLM:
        return self._llm

    # ------------------------------------------------------------------ prompts
    def get_prompts(self) -> dict[str, Any]:
        return {"joiner_prompt": self.joiner_prompt}

    def update_prompts(self, prompts: dict[str, Any]) -> None:
        super().update_prompts(prompts)
        if "joiner_prompt" in prompts:
            self.joiner_prompt = _template(prompts["joiner_prompt"])

    def planner_messages(self, tools: Sequence[Any], question: str,
                         contexts: Sequence[str] = ()) -> list[ChatMessage]:
        """The planner's chat: the system prompt (the replan one once there are earlier
        rounds) and ``Question: ...`` with the earlier rounds."""
        system = planner_system_prompt(tools, is_replan=bool(contexts),
                                       example=self.planner_example)
        return [ChatMessage(role=MessageRole.SYSTEM, content=system),
                ChatMessage(role=MessageRole.USER, content=planner_user_prompt(question, contexts))]

    # ------------------------------------------------------------------ steps
    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        self._start_task(task)
        self._new_memory(task).put(ChatMessage(role=MessageRole.USER, content=task.input))
        return TaskStep(task_id=task.task_id, step_id=new_uuid(), input=task.input,
                        step_state={"contexts": []})

    async def arun_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        # one replan context per earlier round: their count is the replans so far
        contexts: list[str] = step.step_state["contexts"]
        is_final = len(contexts) >= self.max_replans
        runner = await self._atools_for(task.input)
        result = await self._round(task, runner, contexts, len(contexts) + 1, is_final)
        answer = result.decision.answer
        response = AgentChatResponse(response=answer, sources=list(self._sources(task)))
        if is_final or not result.decision.is_replan:
            self._new_memory(task).put(ChatMessage(role=MessageRole.ASSISTANT, content=answer))
            return self._step_output(step, response, is_done=True)
        return self._step_output(step, response, is_done=False,
                                 next_state={"contexts": [*contexts, result.context]})

    async def _round(self, task: Task, runner: ToolRunner, contexts: Sequence[str],
                     round_: int, is_final: bool) -> _Round:
        """Plan, run, join. A plan that cannot be parsed skips running and joining."""
        messages = self.planner_messages(runner.tools, task.input, contexts)
        kwargs = {"stop": self.stop} if self.stop else {}
        response = await self._llm.achat(
            messages, listed_tools=ListedTools.of("llm_compiler", runner.tools), **kwargs)
        text = response.message.content or ""
        if self._verbose:
            print(f"> Plan: {text}")
        try:
            plan = parse_plan(text)
        except PlanParseError as exc:
            dispatcher.emit(PlanEvent(round=round_, error=str(exc)))
            reason = f"the plan could not be used: {exc}"
            decision = JoinerOutput(thought="", answer=f"Error: {reason}" if is_final else reason,
                                    is_replan=True)
            return _Round(decision, f"{text.strip()}\n\nThought: This plan could not be run: "
                                    f"{exc}")
        call_ids = {t.idx: new_id("call") for t in plan.actions}
        dispatcher.emit(PlanEvent(round=round_, tasks=list(plan.tasks), call_ids=call_ids,
                                  notes=list(plan.notes)))
        results = await run_plan(plan, runner, call_ids, round=round_)
        self._sources(task).extend(r.output for r in results)
        decision = await self._ajoin(task.input, results, round_, is_final)
        return _Round(decision, _replan_context(results, decision))

    async def _ajoin(self, question: str, results: Sequence[TaskResult], round_: int,
                     is_final: bool) -> JoinerOutput:
        """Ask the joiner and read its decision (an unreadable one replans; in the last
        round its raw text is the answer)."""
        prompt = self.joiner_prompt.format(query_str=question,
                                           context_str=_scratchpad(results))
        if self._llm.metadata.is_chat_model:
            reply = await self._llm.achat([ChatMessage(role=MessageRole.USER, content=prompt)])
            text = reply.message.content or ""
        else:
            text = (await self._llm.acomplete(prompt)).text
        error = None
        try:
            decision = parse_joiner_output(text)
        except JoinerParseError as exc:
            error = str(exc)
            decision = JoinerOutput(thought="", answer=text.strip() if is_final else
                                    f"the joiner's answer could not be read: {exc}",
                                    is_replan=True)
        final = is_final or not decision.is_replan
        dispatcher.emit(JoinerDecisionEvent(
            round=round_, thought=decision.thought, answer=decision.answer,
            is_replan=decision.is_replan, final=final,
            forced=final and decision.is_replan, error=error))
        if self._verbose:
            print(f"> Thought: {decision.thought}\n> "
                  f"{'Answer' if final else 'Replan'}: {decision.answer}")
        return decision


def _template(prompt: PromptTemplate | str) -> PromptTemplate:
    return prompt if isinstance(prompt, PromptTemplate) else PromptTemplate(str(prompt))


def _scratchpad(results: Sequence[TaskResult]) -> str:
    """The joiner's view of a round: each task's thought, call and observation."""
    return "".join(result.transcript() for result in results).strip()


def _replan_context(results: Sequence[TaskResult], decision: JoinerOutput) -> str:
    """One ``Previous Plan`` for the next planner round: the numbered calls with their
    observations, then the joiner's thought and why it asked for a new plan."""
    tail = f"Thought: {decision.thought}\nAction: Replan({decision.answer})"
    return "\n".join([*(result.transcript(numbered=True) for result in results), tail])
