"""Workflow agents as upstream has them: pydantic models, built without an llm until one is
needed; agent workflows run stepwise, with checkpoints resumable with another model, and with
LlamaIndex 0.12's ``ctx.get/set`` in tools."""

from __future__ import annotations

import copy
import json

import pytest
from pydantic import ValidationError

from agentkit.agent.workflow import AgentWorkflow, FunctionAgent, ReActAgent
from agentkit.core.sim import now, run_sync
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.memory import ChatMemoryBuffer
from agentkit.workflow import (
    Checkpoint,
    Context,
    ContextSerdeError,
    WorkflowCheckpointer,
    WorkflowRuntimeError,
)
from agentkit.workflow.context import sealed

from .helpers import add


# ---------------------------------------------------------------------- pydantic models
def test_an_agents_settings_dump_like_a_pydantic_model() -> None:
    agent = FunctionAgent(name="adder", description="Adds.", tools=[add], llm=ScriptedLLM([]),
                          system_prompt="SYS")
    dumped = agent.model_dump(exclude={"llm", "tools", "state_prompt"})
    assert dumped == {"name": "adder", "description": "Adds.", "system_prompt": "SYS",
                      "tool_retriever": None, "can_handoff_to": None, "initial_state": {},
                      "streaming": True, "allow_parallel_tool_calls": True,
                      "initial_tool_choice": None, "scratchpad_key": "scratchpad"}


def test_an_agent_builds_its_workflow_half_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit.agent.workflow.loop import AgentLoop

    built: list[float | None] = []
    init = AgentLoop.__init__

    def counted(self: AgentLoop, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)  # type: ignore[arg-type]
        built.append(self.timeout)

    monkeypatch.setattr(AgentLoop, "__init__", counted)
    FunctionAgent(name="adder", tools=[add], llm=ScriptedLLM([]))
    assert built == [None]  # the defaults: model_post_init's build stands

    built.clear()
    agent = ReActAgent(tools=[add], llm=ScriptedLLM([]), timeout=30.0, num_concurrent_runs=2)
    assert built == [None, 30.0]  # other run options: built again with them
    assert agent.timeout == 30.0


def test_model_copy_with_an_update_gives_a_working_agent_of_its_own() -> None:
    agent = FunctionAgent(name="adder", tools=[add], llm=ScriptedLLM(["from the original"]))
    twin = agent.model_copy(update={"name": "twin", "llm": ScriptedLLM(["from the twin"])})

    async def main():
        handler = twin.run(user_msg="hi")
        running = (agent.is_done(), twin.is_done())
        return running, str(await handler), str(await agent.run(user_msg="hi"))

    assert run_sync(main()) == ((True, False), "from the twin", "from the original")
    assert (agent.name, twin.name, twin.tools == agent.tools) == ("adder", "twin", True)


def test_a_deep_copy_copies_the_settings() -> None:
    agent = ReActAgent(name="r", tools=[add], llm=ScriptedLLM([]), initial_state={"n": [1]})
    twin = copy.deepcopy(agent)
    twin.initial_state["n"].append(2)
    assert (agent.initial_state, twin.initial_state, type(twin.formatter).__name__) == (
        {"n": [1]}, {"n": [1, 2]}, "ReActChatFormatter")


def test_model_validate_builds_a_runnable_agent() -> None:
    agent = FunctionAgent.model_validate({"name": "v", "llm": ScriptedLLM(["validated"])})
    assert str(agent.run_sync(user_msg="hi")) == "validated"


def test_an_unknown_setting_is_an_error() -> None:
    with pytest.raises(ValidationError, match="temperature"):
        FunctionAgent(temperature=0.1)  # type: ignore[call-arg]


# ---------------------------------------------------------------------- no llm until needed
def test_a_team_whose_unused_agent_has_no_llm_runs() -> None:
    lead = FunctionAgent(name="lead", description="Leads.", llm=ScriptedLLM(["done"]),
                         can_handoff_to=[])
    spare = ReActAgent(name="spare", description="Never asked.")
    team = AgentWorkflow(agents=[lead, spare], root_agent="lead")
    assert str(team.run_sync(user_msg="go")) == "done"


def test_handing_off_to_an_agent_without_an_llm_names_it() -> None:
    lead = FunctionAgent(name="lead", description="Leads.",
                         llm=ScriptedLLM([tool_call("handoff", to_agent="spare", reason="r")]))
    spare = ReActAgent(name="spare", description="Never given a model.")
    team = AgentWorkflow(agents=[lead, spare], root_agent="lead")
    with pytest.raises(WorkflowRuntimeError,
                       match=r"^Error in step 'run_agent_step': ReActAgent 'spare' needs an llm"):
        team.run_sync(user_msg="go")


# ---------------------------------------------------------------------- the 0.12 Context API
async def bump(ctx: Context) -> str:
    """Count a visit in the shared state (LlamaIndex 0.12's ctx.get/ctx.set)."""
    state = await ctx.get("state")
    state["visits"] += 1
    await ctx.set("state", state)
    return f"visits: {state['visits']}"


def test_a_tool_keeps_state_with_ctx_get_and_set() -> None:
    agent = FunctionAgent(tools=[bump], llm=ScriptedLLM([tool_call("bump"), "ok"]))
    team = AgentWorkflow(agents=[agent], initial_state={"visits": 0})

    async def main():
        handler = team.run(user_msg="visit")
        await handler
        return await handler.ctx.get("state"), await handler.ctx.store.get("state")

    assert run_sync(main()) == ({"visits": 1}, {"visits": 1})


# ---------------------------------------------------------------------- stepwise
def test_an_agent_workflow_runs_stepwise() -> None:
    agent = FunctionAgent(tools=[add], llm=ScriptedLLM([tool_call("add", a=1, b=2), "3"]))

    async def main():
        handler = agent.run(user_msg="1+2?", stepwise=True)
        produced_types = []
        while (produced := await handler.run_step()) is not None:
            produced_types.append([type(e).__name__ for e in produced])
            for event in produced:
                handler.ctx.send_event(event)
        return produced_types, str(await handler)

    assert run_sync(main()) == ([["AgentInput"], ["AgentSetup"], ["AgentOutput"], ["ToolCall"],
                                 ["ToolCallResult"], ["AgentInput"], ["AgentSetup"],
                                 ["AgentOutput"], ["StopEvent"]], "3")


# ---------------------------------------------------------------------- checkpoints
SCRIPT = [tool_call("add", a=2, b=3), "2 + 3 = 5"]


def _team(llm: ScriptedLLM) -> AgentWorkflow:
    return AgentWorkflow(agents=[FunctionAgent(name="calc", tools=[add], llm=llm)])


def _recorded() -> list[Checkpoint]:
    async def main():
        checkpointer = WorkflowCheckpointer(_team(ScriptedLLM(list(SCRIPT))))
        handler = checkpointer.run(user_msg="What is 2 + 3?")
        await handler
        return checkpointer.checkpoints[handler.run_id]

    return run_sync(main())


def test_an_agent_run_records_a_checkpoint_per_step() -> None:
    assert [c.last_completed_step for c in _recorded()] == [
        "init_run", "setup_agent", "run_agent_step", "parse_agent_output", "call_tool",
        "aggregate_tool_results", "setup_agent", "run_agent_step", "parse_agent_output"]


def test_a_recorded_agent_run_resumes_from_a_saved_checkpoint_with_another_model() -> None:
    saved = json.dumps(_recorded()[5].to_dict())  # after the tool result was recorded
    other = ScriptedLLM(["It is five."])

    async def main():
        team = _team(other)
        handler = team.run_from(Checkpoint.from_dict(team, json.loads(saved)))
        output = await handler
        memory: ChatMemoryBuffer = await handler.ctx.get("memory")
        return str(output), [(m.role.value, m.content) for m in memory.get_all()]

    answer, memory = run_sync(main())
    assert (answer, memory) == ("It is five.", [("user", "What is 2 + 3?"), ("assistant", ""),
                                                ("tool", "5"), ("assistant", "It is five.")])
    assert [m.role.value for m in other.requests[0].messages] == ["user", "assistant", "tool"]


def test_a_checkpoint_whose_memory_was_altered_never_reaches_the_model() -> None:
    saved = _recorded()[5].to_dict()
    history = saved["ctx_state"]["store"]["memory"]["data"]["chat_history"]
    history[0]["role"] = "system"  # a user message turned into a system one
    with pytest.raises(ContextSerdeError, match=r"at \['digest'\]: the saved checkpoint was "
                                                r"changed after it was saved"):
        Checkpoint.from_dict(_team(ScriptedLLM([])), saved)


def test_a_forged_current_agent_name_is_refused_by_the_stores_schema() -> None:
    state = _recorded()[5].ctx_state
    state = sealed({**{k: v for k, v in state.items() if k != "digest"},
                    "store": {**state["store"], "current_agent_name": "intruder"}})
    with pytest.raises(ContextSerdeError,
                       match=r"^Context.from_dict: at \['store'\]\['current_agent_name'\]: .+ "
                             r"\(the workflow keeps a typing.Literal\['calc'\] here\)$"):
        Context.from_dict(_team(ScriptedLLM([])), state)


def test_an_agent_workflow_takes_num_concurrent_runs() -> None:
    llm = ScriptedLLM(["a", "b"], latency=5)
    team = AgentWorkflow(agents=[FunctionAgent(llm=llm)], num_concurrent_runs=1)

    async def main():
        first, second = team.run(user_msg="1"), team.run(user_msg="2")
        await first
        finished_first = now()
        await second
        return finished_first, now()

    assert run_sync(main()) == (5.0, 10.0)
