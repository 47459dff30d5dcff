"""The plan runs as a DAG on virtual time: each task starts the moment its last dependency
ends, so a plan's simulated wall time is its critical path (no polling rounds)."""

from agentkit.agent.llm_compiler import (
    LLMCompilerAgentWorker,
    PlanTaskEvent,
    parse_plan,
    run_plan,
)
from agentkit.core.sim import Stopwatch, asleep, run_sync
from agentkit.instrumentation import collect_events
from agentkit.llms.mock import ScriptedLLM
from agentkit.tools import FunctionTool, ToolRunner


async def fast(x: object = None) -> str:
    """Takes 0.1 simulated seconds."""
    await asleep(0.1)
    return "fast"


async def slow(x: object = None) -> str:
    """Takes 0.3 simulated seconds."""
    await asleep(0.3)
    return "slow"


async def combine(a: object, b: object) -> str:
    """Takes 0.1 simulated seconds."""
    await asleep(0.1)
    return "combined"


def broken(x: object = None) -> str:
    """Fails at once."""
    raise RuntimeError("broken")


RUNNER = ToolRunner([FunctionTool.from_defaults(async_fn=fast),
                     FunctionTool.from_defaults(async_fn=slow),
                     FunctionTool.from_defaults(async_fn=combine),
                     FunctionTool.from_defaults(broken)])


def _run(text: str) -> tuple[Stopwatch, dict[int, PlanTaskEvent]]:
    plan = parse_plan(text)
    watch = Stopwatch.start()
    with collect_events() as events:
        run_sync(run_plan(plan, RUNNER, {t.idx: f"c{t.idx}" for t in plan.actions}))
    return watch, {e.task_id: e for e in events if isinstance(e, PlanTaskEvent)}


def test_four_independent_tasks_take_the_time_of_one():
    watch, tasks = _run("1. fast()\n2. fast()\n3. fast()\n4. fast()\n5. join()")

    assert (watch.wall, watch.serial) == (0.1, 0.4)
    assert {(e.start, e.end) for e in tasks.values()} == {(0.0, 0.1)}


def test_a_chain_takes_the_sum_of_its_tasks():
    watch, tasks = _run('1. fast()\n2. slow("$1")\n3. fast("$2")\n4. join()')

    assert round(watch.wall, 9) == 0.5
    assert [(round(e.start, 9), round(e.end, 9)) for e in tasks.values()] == [
        (0.0, 0.1), (0.1, 0.4), (0.4, 0.5)]


def test_a_diamond_takes_its_critical_path_and_a_task_starts_when_its_last_input_ends():
    watch, tasks = _run('1. fast()\n2. slow("$1")\n3. fast("$1")\n4. combine("$2", "$3")\n'
                        '5. join()')

    assert round(watch.wall, 9) == 0.5  # 0.1 + 0.3 + 0.1, not 0.1 + 0.3 + 0.1 + 0.1
    assert round(watch.serial, 9) == 0.6
    assert round(tasks[3].end, 9) == 0.2
    assert round(tasks[4].start, 9) == round(tasks[2].end, 9) == 0.4


def test_independent_branches_do_not_wait_for_each_other():
    _, tasks = _run('1. slow()\n2. fast()\n3. fast("$2")\n4. fast("$1")\n5. join()')

    assert round(tasks[3].end, 9) == 0.2
    assert round(tasks[4].start, 9) == 0.3


def test_a_dependent_of_a_failed_task_ends_when_the_failure_is_known():
    _, tasks = _run('1. fast()\n2. broken("$1")\n3. slow("$2")\n4. join()')

    assert (tasks[2].outcome, tasks[3].outcome) == ("error", "not_run")
    assert round(tasks[3].start, 9) == round(tasks[3].end, 9) == 0.1


def test_a_task_the_plan_already_rejected_does_not_wait_for_its_inputs():
    _, tasks = _run('1. slow()\n2. nope("$1")\n3. fast("$1", x=1)\n4. join()')

    assert (tasks[2].outcome, tasks[2].end) == ("not_run", 0.0)
    assert (tasks[3].outcome, tasks[3].end) == ("not_run", 0.0)


def test_results_come_back_in_task_order_whatever_order_they_finish_in():
    plan = parse_plan("1. slow()\n2. fast()\n3. join()")

    results = run_sync(run_plan(plan, RUNNER, {1: "a", 2: "b"}))

    assert [(r.task.idx, r.output.content) for r in results] == [(1, "slow"), (2, "fast")]


def test_an_agent_over_four_independent_tools_takes_the_time_of_one():
    plan = "1. fast(1)\n2. fast(2)\n3. fast(3)\n4. fast(4)\n5. join()<END_OF_PLAN>"
    llm = ScriptedLLM([plan, "Action: Finish(done)"])
    agent = LLMCompilerAgentWorker.from_tools(RUNNER.tools, llm=llm).as_agent()
    watch = Stopwatch.start()

    agent.chat("q")

    assert (watch.wall, watch.serial) == (0.1, 0.4)
