"""Retry policies: a failing step runs again after the policy's delay (virtual seconds)."""

import pytest

from agentkit.core.sim import now
from agentkit.instrumentation import collect_events
from agentkit.workflow import (
    ConstantDelayRetryPolicy,
    Context,
    RetryPolicy,
    StartEvent,
    StopEvent,
    Workflow,
    WorkflowRuntimeError,
    WorkflowStepRetryEvent,
    WorkflowValidationError,
    step,
)


def _flaky(fails: int, policy, sync: bool = False) -> Workflow:
    """A workflow whose only step fails ``fails`` times, then answers its attempt number."""
    attempts = []

    class Flaky(Workflow):
        if sync:
            @step(retry_policy=policy)
            def begin(self, ev: StartEvent) -> StopEvent:
                attempts.append(now())
                if len(attempts) <= fails:
                    raise ConnectionError(f"down {len(attempts)}")
                return StopEvent(result=attempts)
        else:
            @step(retry_policy=policy)
            async def begin(self, ev: StartEvent) -> StopEvent:
                attempts.append(now())
                if len(attempts) <= fails:
                    raise ConnectionError(f"down {len(attempts)}")
                return StopEvent(result=attempts)

    return Flaky(timeout=None)


def test_a_failing_step_runs_again_after_the_constant_delay():
    assert _flaky(2, ConstantDelayRetryPolicy(delay=10, maximum_attempts=3)).run_sync() == [
        0.0, 10.0, 20.0]


def test_maximum_attempts_counts_retries_after_the_first_failure_as_upstream():
    with pytest.raises(WorkflowRuntimeError, match=r"^Error in step 'begin': down 4$"):
        _flaky(4, ConstantDelayRetryPolicy(delay=1, maximum_attempts=3)).run_sync()


def test_sync_steps_are_retried_too():
    assert _flaky(1, ConstantDelayRetryPolicy(delay=5, maximum_attempts=1),
                  sync=True).run_sync() == [0.0, 5.0]


def test_a_retry_delay_counts_against_the_workflow_timeout():
    workflow = _flaky(3, ConstantDelayRetryPolicy(delay=10, maximum_attempts=5))
    workflow.timeout = 15
    with pytest.raises(Exception, match=r"^Operation timed out after 15 seconds$"):
        workflow.run_sync()


def test_a_policy_of_ones_own_gets_elapsed_time_attempts_and_the_error():
    calls = []

    class Backoff:
        def next(self, elapsed_time: float, attempts: int, error: Exception) -> float | None:
            calls.append((elapsed_time, attempts, str(error)))
            return 2.0 ** attempts if attempts < 2 else None

    assert isinstance(Backoff(), RetryPolicy)
    with pytest.raises(WorkflowRuntimeError, match=r"down 3$"):
        _flaky(5, Backoff()).run_sync()
    assert calls == [(0.0, 0, "down 1"), (1.0, 1, "down 2"), (3.0, 2, "down 3")]


def test_a_policy_returning_something_that_is_not_seconds_ends_the_run_saying_so():
    class Broken:
        def next(self, elapsed_time, attempts, error):
            return "soon"

    with pytest.raises(WorkflowRuntimeError,
                       match=r"^The retry policy of step 'begin' \(.*\) returned 'soon'; next\(\) "
                             r"returns seconds to wait"):
        _flaky(1, Broken()).run_sync()


def test_something_that_is_not_a_policy_is_rejected_by_step():
    with pytest.raises(WorkflowValidationError, match=r"^@step\(retry_policy=3\): a retry policy "
                                                      r"has a method next"):
        step(retry_policy=3)  # type: ignore[arg-type]


@pytest.mark.parametrize("kwargs", [{"maximum_attempts": -1}, {"delay": -1},
                                    {"delay": float("nan")}, {"maximum_attempts": True}])
def test_a_constant_delay_policy_rejects_impossible_settings(kwargs):
    with pytest.raises(ValueError):
        ConstantDelayRetryPolicy(**kwargs)


def test_each_retry_is_reported_to_the_bus():
    with collect_events() as events:
        _flaky(2, ConstantDelayRetryPolicy(delay=3, maximum_attempts=3)).run_sync()
    retries = [(e.step, e.attempt, e.delay, e.error, e.time) for e in events
               if isinstance(e, WorkflowStepRetryEvent)]
    assert retries == [("begin", 1, 3, "ConnectionError: down 1", 0.0),
                       ("begin", 2, 3, "ConnectionError: down 2", 3.0)]


def test_a_retried_step_sees_the_store_it_changed_before_failing():
    class Counting(Workflow):
        @step(retry_policy=ConstantDelayRetryPolicy(delay=1, maximum_attempts=2))
        async def begin(self, ctx: Context, ev: StartEvent) -> StopEvent:
            tries = await ctx.get("tries", default=0) + 1
            await ctx.set("tries", tries)
            if tries < 2:
                raise ValueError("again")
            return StopEvent(result=tries)

    assert Counting().run_sync() == 2
