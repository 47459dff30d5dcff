"""draw_workflow: a Mermaid flowchart of the steps and the events between them."""

from agentkit.workflow import (
    Context,
    Event,
    HumanResponseEvent,
    InputRequiredEvent,
    StartEvent,
    StopEvent,
    Workflow,
    draw_workflow,
    step,
)


class Query(Event):
    pass


class Draft(Event):
    pass


class Review(Workflow):
    @step
    async def plan(self, ev: StartEvent) -> Query:
        return Query()

    @step
    async def write(self, ev: Query) -> Draft:
        return Draft()

    @step
    async def check(self, ev: Draft) -> Query | StopEvent:
        return StopEvent()


def test_a_workflow_is_drawn_as_a_mermaid_flowchart():
    assert draw_workflow(Review()) == "\n".join([
        "flowchart TD",
        '    event_StartEvent(["StartEvent"]):::event',
        '    event_StopEvent(["StopEvent"]):::event',
        '    step_plan["plan"]:::step',
        '    step_write["write"]:::step',
        '    step_check["check"]:::step',
        "    event_StartEvent --> step_plan",
        "    step_plan -->|Query| step_write",
        "    step_write -->|Draft| step_check",
        "    step_check -->|Query| step_write",
        "    step_check --> event_StopEvent",
        "    classDef step fill:#e8f0fe,stroke:#4a6fa5",
        "    classDef event fill:#fff4e0,stroke:#c08a2d",
    ]) + "\n"


class Branches(Workflow):
    @step
    async def split(self, ev: StartEvent) -> Query:
        return Query()

    @step
    async def left(self, ev: Query) -> StopEvent:
        return StopEvent()

    @step
    async def right(self, ev: Query) -> StopEvent:
        return StopEvent()


def test_an_event_delivered_to_two_steps_draws_an_edge_to_each():
    lines = draw_workflow(Branches()).splitlines()
    assert [line for line in lines if "-->|" in line] == [
        "    step_split -->|Query| step_left", "    step_split -->|Query| step_right"]


class Asks(Workflow):
    @step
    async def ask(self, ctx: Context, ev: StartEvent) -> InputRequiredEvent:
        return InputRequiredEvent()

    @step
    async def hear(self, ev: HumanResponseEvent) -> StopEvent:
        return StopEvent()


def test_events_to_and_from_the_caller_are_drawn_as_event_nodes():
    lines = draw_workflow(Asks()).splitlines()
    assert [line for line in lines if "-->" in line] == [
        "    event_StartEvent --> step_ask",
        "    event_HumanResponseEvent --> step_hear",
        "    step_ask --> event_InputRequiredEvent",
        "    step_hear --> event_StopEvent",
    ]


def test_drawing_twice_gives_the_same_text():
    assert draw_workflow(Review()) == draw_workflow(Review())
