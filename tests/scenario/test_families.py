"""The built-in agent families: each a module of agentkit.harness._families declaring its
agent types as AgentType objects (factory, trajectory renderer, trace handlers), registered
by import ref the way a project's pyproject table registers its own."""

from __future__ import annotations

import dataclasses
import pkgutil

import pytest

from agentkit.agent.coa.events import ChainLevelEvent, ChainParsedEvent
from agentkit.agent.llm_compiler import JoinerDecisionEvent, PlanEvent, PlanTaskEvent
from agentkit.harness import _families as families
from agentkit.harness._agent_types import AGENT_TYPES, resolve_agent_type
from agentkit.harness._families.coa import render_coa
from agentkit.harness._families.function_calling import render_tool_calls
from agentkit.harness._families.llm_compiler import render_llm_compiler
from agentkit.harness._families.react import render_react
from agentkit.harness._families.workflow import HumanInputEvent
from agentkit.harness._world import resolve_ref

FAMILY_MODULES = [m.name for m in pkgutil.iter_modules(families.__path__)]


@pytest.mark.parametrize("name", list(families.BUILT_IN))
def test_a_built_in_type_is_its_familys_declaration_loaded_like_a_projects(name):
    declared = resolve_ref(families.BUILT_IN[name])

    assert resolve_agent_type(name) == dataclasses.replace(declared, origin="built-in")


@pytest.mark.parametrize("module", FAMILY_MODULES)
def test_every_family_module_declares_a_built_in_type(module):
    assert any(ref.split(":")[0] == f"{families.__name__}.{module}"
               for ref in families.BUILT_IN.values())


def test_the_built_in_types_are_listed_in_the_order_the_table_gives():
    assert [name for name, kind in AGENT_TYPES.loaded().items()
            if kind.origin == "built-in"] == list(families.BUILT_IN)


@pytest.mark.parametrize(("name", "renderer"), [
    ("react", render_react), ("function_calling", render_tool_calls),
    ("llm_compiler", render_llm_compiler), ("coa", render_coa),
    ("react_multimodal", render_react), ("function_agent", render_tool_calls),
    ("react_agent", render_react), ("agent_workflow", None)])
def test_a_family_declares_its_types_renderer(name, renderer):
    assert resolve_agent_type(name).trajectory is renderer


@pytest.mark.parametrize(("name", "events"), [
    ("react", set()), ("function_calling", set()), ("react_multimodal", set()),
    ("llm_compiler", {PlanEvent, PlanTaskEvent, JoinerDecisionEvent}),
    ("coa", {ChainParsedEvent, ChainLevelEvent})])
def test_a_family_declares_the_trace_handlers_of_the_events_it_emits(name, events):
    assert set(resolve_agent_type(name).trace_handlers) == events


def test_the_workflow_types_share_one_set_of_trace_handlers():
    handlers = [resolve_agent_type(name).trace_handlers
                for name in ("function_agent", "react_agent", "agent_workflow")]

    assert handlers[0] == handlers[1] == handlers[2]
    assert HumanInputEvent in handlers[0]


@pytest.mark.parametrize(("fmt", "agent_type"), [(fmt, agent_type) for fmt, agent_type
                                                 in families.WIRE_FORMATS.items()])
def test_a_wire_format_is_the_renderer_of_the_built_in_type_it_names(fmt, agent_type):
    from agentkit.harness._agent_types import named_renderer

    assert named_renderer(fmt) is resolve_agent_type(agent_type).trajectory


def test_a_built_in_name_to_render_like_keeps_its_meaning_when_a_project_reuses_the_name():
    from agentkit.harness._agent_types import register_agent_type

    with AGENT_TYPES.scoped():
        register_agent_type("function_calling", resolve_agent_type("react").factory)
        register_agent_type("caller", resolve_agent_type("react").factory,
                            trajectory="function_calling")

        assert resolve_agent_type("caller").trajectory == "function_calling"
        assert AGENT_TYPES.renderer("caller") is render_tool_calls
