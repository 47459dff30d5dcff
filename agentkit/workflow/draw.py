"""``draw_workflow``: a Mermaid flowchart of a workflow's steps and the events between them.

Upstream draws with pyvis into an HTML file; a Mermaid string needs no dependency, reads in
a Markdown file and renders in any page that loads Mermaid (the HTML report embeds it).
Event nodes (rounded) stand for events that cross the workflow's edge: the start event,
StopEvent, events for the caller (InputRequiredEvent) and from the caller
(HumanResponseEvent). Step nodes are boxes; an edge between two steps is labelled with the
event type that travels along it. Order follows the step definition order, so the text is
stable.
"""

from __future__ import annotations

import re

from agentkit.workflow.events import Event, HumanResponseEvent, InputRequiredEvent, StopEvent
from agentkit.workflow.graph import WorkflowGraph
from agentkit.workflow.workflow import Workflow

__all__ = ["draw_workflow"]


def draw_workflow(workflow: Workflow) -> str:
    """The Mermaid ``flowchart`` source for ``workflow``: drawn once per graph (a workflow
    class's, built once; a scenario run of a workflow agent draws it every time)."""
    graph = workflow.graph
    drawn = _drawn.get(id(graph))
    if drawn is None or drawn[0] is not graph:
        drawn = _drawn[id(graph)] = (graph, _draw(graph))
    return drawn[1]


_drawn: dict[int, tuple[WorkflowGraph, str]] = {}
"""Each graph drawn so far, by id (the graph kept, so its id is not reused)."""


def _draw(graph: WorkflowGraph) -> str:
    event_nodes: dict[str, str] = {}
    edges: list[str] = []

    def event_node(event_type: type[Event]) -> str:
        node = f"event_{_node_id(event_type.__qualname__)}"
        event_nodes.setdefault(node, f'    {node}(["{event_type.__name__}"]):::event')
        return node

    start = event_node(graph.start_event_type)
    edges += [f"    {start} --> step_{_node_id(s.name)}"
              for s in graph.consumers(graph.start_event_type)]
    for spec in graph.steps.values():
        for accepted in spec.accepts:
            if issubclass(accepted, (HumanResponseEvent, InputRequiredEvent)):
                edges.append(f"    {event_node(accepted)} --> step_{_node_id(spec.name)}")
    for spec in graph.steps.values():
        here = f"step_{_node_id(spec.name)}"
        for returned in spec.returns:
            if issubclass(returned, (StopEvent, InputRequiredEvent)):
                edges.append(f"    {here} --> {event_node(returned)}")
                continue
            edges += [f"    {here} -->|{returned.__name__}| step_{_node_id(target.name)}"
                      for target in graph.consumers(returned)]
    step_nodes = [f'    step_{_node_id(name)}["{name}"]:::step' for name in graph.steps]
    return "\n".join([
        "flowchart TD",
        *event_nodes.values(),
        *step_nodes,
        *edges,
        "    classDef step fill:#e8f0fe,stroke:#4a6fa5",
        "    classDef event fill:#fff4e0,stroke:#c08a2d",
    ]) + "\n"


def _node_id(name: str) -> str:
    return re.sub(r"\W", "_", name)
