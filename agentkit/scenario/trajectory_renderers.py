"""The bundled trajectory renderers: each agent type's LLM script in its own wire format.

* ReAct text (``react``, ``react_multimodal``, workflow ``react_agent``): one
  ``Thought / Action / Action Input`` reply per call, a parallel group's calls one after
  another (ReAct makes one call per step), then ``Thought / Answer``.
* Tool calls (``function_calling``, workflow ``function_agent``): one reply per step with all
  of a parallel group's calls as parallel tool calls, then the answer as text.
* LLMCompiler (``llm_compiler``): one plan with every call, ``$N`` for the references,
  ``join()`` last, then the joiner's ``Action: Finish(<answer>)``. Plans take positional
  arguments in schema order, so a call must give every parameter up to the last it gives.
* Chain-of-Abstraction (``coa``): one chain, a ``[FUNC name(args) = yN]`` per call (call N
  defines ``yN``; ``$N`` is written ``yN``), then the refine reply: the answer.

A reply that needs an earlier call's value (a ReAct action or tool call using ``$N``, an
answer using ``{$N}``) is rendered when the agent asks for it, from the run's actual outputs.
Thoughts not given are filled in for formats that need one (ReAct, the joiner).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from agentkit.agent.coa.chain import Ref as ChainRef
from agentkit.agent.coa.chain import format_call
from agentkit.agent.llm_compiler.prompts import END_OF_PLAN
from agentkit.agent.react.types import ActionReasoningStep, ResponseReasoningStep
from agentkit.llms.mock import ScriptedResponse, tool_call
from agentkit.scenario.trajectory import (
    Ref,
    RenderContext,
    TrajectoryCall,
    TrajectoryError,
    TrajectoryRenderer,
    map_refs,
    register_trajectory_renderer,
)

__all__ = ["render_react", "render_tool_calls", "render_llm_compiler", "render_coa"]

_ANSWER_THOUGHT = "I can answer without using any more tools."


def _answer(ctx: RenderContext) -> Any:
    """The final answer's text as a script item."""
    answer = ctx.trajectory.answer
    return ctx.deferred(lambda: answer.render(ctx.outputs), answer.refs)


def render_react(ctx: RenderContext) -> list[Any]:
    """ReAct text: an action per call, one after another, then the answer."""
    def action(call: TrajectoryCall) -> Callable[[], str]:
        return lambda: ActionReasoningStep(
            thought=call.thought or f"I need to use {call.name}.", action=call.name,
            action_input=call.arguments(ctx.outputs)).get_content()

    answer = ctx.trajectory.answer
    final = ctx.deferred(lambda: ResponseReasoningStep(
        thought=answer.thought or _ANSWER_THOUGHT, response=answer.render(ctx.outputs)
    ).get_content(), answer.refs)
    return [*(ctx.deferred(action(call), call.refs) for call in ctx.trajectory.calls), final]


def render_tool_calls(ctx: RenderContext) -> list[Any]:
    """Tool calls: one reply per step (a parallel group's calls together), then the answer."""
    def reply(group: Sequence[TrajectoryCall]) -> Callable[[], ScriptedResponse]:
        return lambda: ScriptedResponse(tool_calls=[tool_call(c.name, **c.arguments(ctx.outputs))
                                                    for c in group])

    return [*(ctx.deferred(reply(group), [r for c in group for r in c.refs])
              for group in ctx.trajectory.groups), _answer(ctx)]


def _positional(ctx: RenderContext, call: TrajectoryCall) -> list[Any] | None:
    """The call's arguments in schema order, when they are its first parameters (``None``
    when a parameter before the last one given is left out)."""
    order = ctx.parameters(call.name)
    given = [name for name in order if name in call.args]
    if given != order[:len(given)] or len(given) != len(call.args):
        return None
    return [call.args[name] for name in given]


def _plan_literal(value: Any) -> str:
    """A Python literal for a plan argument; ``$N`` bare."""
    if isinstance(value, Ref):
        return f"${value.number}"
    if isinstance(value, list):
        return "[" + ", ".join(map(_plan_literal, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_plan_literal(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _finish(ctx: RenderContext) -> Any:
    """The joiner's reply: ``Thought: ...`` and ``Action: Finish(<answer>)``."""
    answer = ctx.trajectory.answer
    thought = answer.thought or _ANSWER_THOUGHT

    def checked(text: str, shown: str | None = None) -> str:
        if not _balanced(text):
            raise TrajectoryError([(answer.loc, f"the answer {(shown or text)!r} has unbalanced "
                                                "parentheses: LLMCompiler's `Finish(...)` "
                                                "cannot carry it")])
        return text

    checked(answer.fixed_text, answer.text)  # the outputs' part is checked when known
    return ctx.deferred(lambda: f"Thought: {thought}\nAction: Finish("
                                f"{checked(answer.render(ctx.outputs))})", answer.refs)


def render_llm_compiler(ctx: RenderContext) -> list[Any]:
    """One plan of every call (``$N`` references, ``join()`` last), then ``Finish(answer)``."""
    calls = ctx.trajectory.calls
    lines = []
    for call in calls:
        args = _positional(ctx, call)
        if args is None:
            order = ", ".join(ctx.parameters(call.name))
            raise TrajectoryError([((*call.loc, "args"), f"llm_compiler plans pass arguments by "
                                                         f"position ({order}): give every "
                                                         "parameter up to the last one you give")])
        if call.thought:
            lines.append(f"Thought: {call.thought}")
        lines.append(f"{call.number}. {call.name}({', '.join(map(_plan_literal, args))})")
    lines.append(f"{len(calls) + 1}. join(){END_OF_PLAN}")
    return ["\n".join(lines), _finish(ctx)]


def render_coa(ctx: RenderContext) -> list[Any]:
    """A chain with a ``[FUNC ...]`` per call (call N defines ``yN``), then the answer; with
    no calls, the answer alone (a reply without ``[FUNC`` is CoA's direct answer)."""
    trajectory = ctx.trajectory
    if not trajectory.calls:
        if "[FUNC" in trajectory.answer.text:
            raise TrajectoryError([(trajectory.answer.loc, "coa reads `[FUNC` in a direct "
                                                           "answer as a call; reword it")])
        return [_answer(ctx)]
    lines = []
    for call in trajectory.calls:
        def chained(value: Any) -> Any:
            return map_refs(value, lambda ref: ChainRef(f"y{ref.number}"))
        args = _positional(ctx, call)
        text = (format_call(call.name, chained(args), f"y{call.number}") if args is not None
                else format_call(call.name, (), f"y{call.number}", chained(dict(call.args))))
        lines.append(f"{call.thought} {text}" if call.thought else text)
    return ["\n".join(lines), _answer(ctx)]


_BUNDLED: dict[str, TrajectoryRenderer] = {
    "react": render_react,
    "function_calling": render_tool_calls,
    "llm_compiler": render_llm_compiler,
    "coa": render_coa,
    "react_multimodal": render_react,
    "function_agent": render_tool_calls,
    "react_agent": render_react,
}
for _name, _renderer in _BUNDLED.items():
    register_trajectory_renderer(_name, _renderer)
