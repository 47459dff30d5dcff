"""A wrongly wired workflow fails when it is built, with an error naming the step and event."""

import pytest

from agentkit.workflow import (
    Event,
    HumanResponseEvent,
    InputRequiredEvent,
    StartEvent,
    StopEvent,
    Workflow,
    WorkflowConfigurationError,
    WorkflowValidationError,
    step,
)


class Ping(Event):
    pass


class Pong(Event):
    pass


class Custom(StartEvent):
    topic: str = ""


def test_no_step_taking_start_event_is_rejected():
    class W(Workflow):
        @step
        async def only(self, ev: Ping) -> StopEvent: ...

    with pytest.raises(WorkflowConfigurationError,
                       match=r"^At least one Event of type StartEvent must be received by any "
                             r"step\. \(No step of W accepts StartEvent: .*steps: 'only'\)$"):
        W()


def test_a_workflow_without_steps_is_rejected():
    with pytest.raises(WorkflowValidationError,
                       match=r"^At least one Event of type StartEvent must be received"):
        Workflow()


def test_a_returned_event_no_step_accepts_is_rejected():
    class W(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> Ping | StopEvent: ...

    with pytest.raises(WorkflowValidationError,
                       match=r"^Step 'begin' returns Ping, but no step accepts Ping$"):
        W()


def test_an_accepted_event_no_step_returns_is_rejected():
    class W(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> StopEvent: ...

        @step
        async def orphan(self, ev: Pong) -> StopEvent: ...

    with pytest.raises(WorkflowValidationError,
                       match=r"^Step 'orphan' accepts Pong, but no step returns Pong: declare it "
                             r"in the return annotation"):
        W()


def test_no_step_returning_stop_event_is_rejected():
    class W(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> Ping: ...

        @step
        async def loop(self, ev: Ping) -> None: ...

    # upstream 0.12.42: WorkflowConfigurationError with this text, even without validation
    message = r"^At least one Event of type StopEvent must be returned by any step\. \(No step"
    with pytest.raises(WorkflowConfigurationError, match=message):
        W()
    with pytest.raises(WorkflowConfigurationError, match=message):
        W(disable_validation=True)


def test_a_stop_event_only_reachable_through_a_cycle_off_the_start_is_rejected():
    class W(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> None: ...

        @step
        async def ping(self, ev: Ping) -> Pong: ...

        @step
        async def pong(self, ev: Pong) -> Ping | StopEvent: ...

    with pytest.raises(WorkflowValidationError,
                       match=r"^No path from StartEvent to StopEvent: 'pong' return\(s\) StopEvent "
                             r"but no chain of events from StartEvent reaches it \(steps reached: "
                             r"'begin'\)$"):
        W()


def test_a_step_accepting_stop_event_is_rejected():
    class W(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> StopEvent: ...

        @step
        async def after(self, ev: StopEvent) -> None: ...

    with pytest.raises(WorkflowValidationError,
                       match=r"^Step 'after' accepts StopEvent: StopEvent ends the run"):
        W()


def test_two_different_start_event_types_are_rejected():
    class W(Workflow):
        @step
        async def plain(self, ev: StartEvent) -> StopEvent: ...

        @step
        async def custom(self, ev: Custom) -> StopEvent: ...

    with pytest.raises(WorkflowConfigurationError,
                       match=r"^Only one type of StartEvent is allowed per workflow, found 2: "
                             r"StartEvent in 'plain', Custom in 'custom'\."):
        W()


def test_two_different_stop_event_types_are_rejected():
    class Verdict(StopEvent):
        pass

    class W(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> Ping | StopEvent: ...

        @step
        async def judge(self, ev: Ping) -> Verdict: ...

    with pytest.raises(WorkflowConfigurationError,
                       match=r"^Only one type of StopEvent is allowed per workflow, found 2: "
                             r"StopEvent from 'begin', Verdict from 'judge'\."):
        W()


def test_a_step_on_a_free_function_needs_its_workflow():
    with pytest.raises(WorkflowValidationError,
                       match=r"^To decorate loose please pass a workflow class to the @step "
                             r"decorator\.$"):
        @step
        async def loose(ev: StartEvent) -> StopEvent: ...


def test_a_start_event_subclass_becomes_the_start_event_type():
    class W(Workflow):
        @step
        async def begin(self, ev: Custom) -> StopEvent: ...

    assert W().graph.start_event_type is Custom


def test_human_response_event_needs_no_producer():
    class W(Workflow):
        @step
        async def ask(self, ev: StartEvent) -> InputRequiredEvent: ...

        @step
        async def answer(self, ev: HumanResponseEvent) -> StopEvent: ...

    assert list(W().graph.steps) == ["ask", "answer"]


def test_a_stop_event_reached_only_through_a_human_response_is_valid():
    class W(Workflow):
        @step
        async def ask(self, ev: StartEvent) -> None: ...

        @step
        async def answer(self, ev: HumanResponseEvent) -> StopEvent: ...

    assert W().graph.start_event_type is StartEvent


def test_a_step_overridden_by_a_plain_method_is_no_longer_a_step():
    class Base(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> StopEvent: ...

        @step
        async def extra(self, ev: StartEvent) -> None: ...

    class Child(Base):
        async def extra(self, ev: StartEvent) -> None: ...

    assert list(Child().graph.steps) == ["begin"]


def test_subclass_steps_follow_the_inherited_ones():
    class Base(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> Ping: ...

    class Child(Base):
        @step
        async def end(self, ev: Ping) -> StopEvent: ...

    assert list(Child().graph.steps) == ["begin", "end"]


def test_adding_a_step_twice_under_one_name_is_rejected():
    class W(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> StopEvent: ...

    async def begin(ev: StartEvent) -> StopEvent: ...

    with pytest.raises(WorkflowValidationError,
                       match=r"^A step begin is already part of this workflow, please choose "
                             r"another name\. \(W has a step named 'begin'\.\)$"):
        step(workflow=W)(begin)


def test_adding_an_undecorated_function_is_rejected():
    class W(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> StopEvent: ...

    async def loose(ev: StartEvent) -> StopEvent: ...

    with pytest.raises(WorkflowValidationError,
                       match=r"^Step function loose is missing the `@step` decorator\.$"):
        W.add_step(loose)


def test_a_timeout_must_be_positive():
    class W(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> StopEvent: ...

    with pytest.raises(ValueError, match=r"^Workflow timeout must be > 0 seconds or None, got 0"):
        W(timeout=0)
