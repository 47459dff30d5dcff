"""LLMCompiler rounds in traces: each step's plan (tasks, calls, times, outcomes, notes or
parse error) and the joiner's decision: the trace handlers the llm_compiler family declares,
in effect once the agent-type registry has loaded it (the agent is built through it)."""

from agentkit.core.sim import asleep
from agentkit.harness._agent_types import AgentContext, build_agent
from agentkit.instrumentation import collect_events
from agentkit.llms.mock import ScriptedLLM
from agentkit.tools import FunctionTool
from agentkit.trace._trace import IdNormalizer, Trace, build_turn


async def lookup(name: str) -> str:
    """Look a name up; takes 0.5 simulated seconds."""
    await asleep(0.5)
    return f"about {name}"


def fail(name: str) -> str:
    """Always fails."""
    raise RuntimeError("down")


TOOLS = [FunctionTool.from_defaults(async_fn=lookup), FunctionTool.from_defaults(fail)]


def _steps(script, **options):
    agent = build_agent(AgentContext(agent_type="llm_compiler", llm=ScriptedLLM(script),
                                     tools=tuple(TOOLS), params=options))
    with collect_events() as events:
        response = agent.chat("q")
    turn = build_turn("q", events, IdNormalizer(), response=str(response), error=None,
                      memory=agent.chat_history, wall_time=0.0, serial_time=0.0)
    return Trace(scenario="s", agent="llm_compiler", turns=[turn]).to_dict()["turns"][0]["steps"]


def test_a_step_shows_its_plan_with_calls_times_and_outcomes():
    plan = ('Thought: go\n1. lookup("a")\n2. fail("$1")\n3. lookup("$2")\n4. join()'
            '<END_OF_PLAN>\n5. lookup("late")')

    (step,) = _steps([plan, "Thought: done\nAction: Finish(ok)"])

    assert step["plan"] == {
        "round": 1,
        "tasks": [
            {"id": 1, "tool": "lookup", "args": ["a"], "deps": [], "thought": "go",
             "call": "call_1", "start": 0.0, "end": 0.5, "outcome": "ok"},
            {"id": 2, "tool": "fail", "args": ["$1"], "deps": [1], "call": "call_2",
             "start": 0.5, "end": 0.5, "outcome": "error"},
            {"id": 3, "tool": "lookup", "args": ["$2"], "deps": [2], "call": "call_3",
             "start": 0.5, "end": 0.5, "outcome": "not_run"},
            {"id": 4, "tool": "join", "args": [], "deps": [1, 2, 3]},
        ],
        "notes": ['line 6: `5. lookup("late")` comes after join() and was ignored'],
    }
    assert [c["id"] for c in step["tool_calls"]] == ["call_1", "call_2", "call_3"]
    assert step["joiner"] == {"decision": "finish", "thought": "done", "answer": "ok"}


def test_a_task_the_plan_rejected_shows_its_error():
    (step,) = _steps(["1. lookup(a)\n2. join()", "Action: Finish(ok)"])

    assert step["plan"]["tasks"][0]["error"].startswith("task 1 (line 1): argument 1 `a`")


def test_a_replan_and_a_forced_final_decision_are_shown_per_step():
    replan = "Thought: more\nAction: Replan(need b)"

    first, second = _steps(["1. join()", replan, "1. join()", replan], max_replans=1)

    assert first["joiner"] == {"decision": "replan", "thought": "more", "reason": "need b"}
    assert second["joiner"] == {"decision": "replan", "thought": "more", "reason": "need b",
                                "forced": True}
    assert second["plan"]["round"] == 2


def test_a_plan_that_could_not_be_parsed_shows_the_error_and_no_joiner():
    (step,) = _steps(["no plan here"], max_replans=0)

    assert step["plan"] == {"round": 1, "error": "the plan has no actions: expected numbered "
                                                 "lines like `1. tool(arguments)`, ending with "
                                                 "`N. join()`"}
    assert "joiner" not in step


def test_an_unreadable_joiner_output_shows_its_error():
    (step,) = _steps(["1. join()", "just 5"], max_replans=0)

    assert step["joiner"]["error"].startswith("the joiner's output has no `Action:` line")
    assert step["joiner"]["forced"] is True
