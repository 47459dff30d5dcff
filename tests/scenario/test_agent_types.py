"""Agent types by name: one registry, one resolver, factories that get a typed context.

Names come from register_agent_type, import refs (the project's pyproject table declares
them) and installed packages' ``agentkit.agent_types`` entry points."""

from __future__ import annotations

import dataclasses
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentkit.agent import FunctionCallingAgent
from agentkit.core.events import Event, LLMCallEndEvent, dispatcher
from agentkit.harness._agent_types import (
    AGENT_TYPES,
    AgentContext,
    AgentType,
    AgentTypeError,
    UnknownAgentTypeError,
    agent_type_names,
    check_agent_type,
    register_agent_type,
    resolve_agent_type,
)
from agentkit.llms.mock import ScriptedLLM
from agentkit.scenario import run_scenario
from agentkit.trace._trace import TurnBuilder
from tests.scenario_text import adding_scenario

from .conftest import MINIMAL, TRAJECTORY_SCENARIO

pytestmark = pytest.mark.usefixtures("restore_agent_types")


def _function_calling(context: AgentContext) -> Any:
    return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm,
                                           **context.params)


def _mine(write_file: Any, extra: str = "") -> Path:
    return write_file("mine.yaml", MINIMAL.replace("  function_calling:\n",
                                                   f"  mine:\n{extra}"))


# ----------------------------------------------------------------- the context
def test_a_factory_gets_the_runs_llm_tools_params_scenario_and_state(write_file):
    seen: list[AgentContext] = []

    def factory(context: AgentContext) -> Any:
        seen.append(context)
        return _function_calling(context)

    register_agent_type("mine", factory)
    path = _mine(write_file, "    params: {verbose: false}\n")

    result = run_scenario(path, state={"db": "fixture value"})

    [context] = seen
    assert result.passed, result.problems
    assert context.agent_type == "mine"
    assert isinstance(context.llm, ScriptedLLM)
    assert [tool.metadata.name for tool in context.tools] == ["add"]
    assert dict(context.params) == {"verbose": False}
    assert context.scenario is not None and context.scenario.name == "demo"
    assert dict(context.state) == {"db": "fixture value"}
    assert (dict(context.llms), context.images) == ({}, ())


def test_the_context_is_frozen_and_its_mappings_are_read_only_copies():
    params = {"verbose": True}
    context = AgentContext(agent_type="x", llm=ScriptedLLM([]), params=params)

    with pytest.raises(dataclasses.FrozenInstanceError):
        context.llm = ScriptedLLM([])  # type: ignore[misc]
    with pytest.raises(TypeError):
        context.params["verbose"] = False  # type: ignore[index]
    params["verbose"] = False
    assert context.params["verbose"] is True


def test_a_team_gets_one_llm_per_agent_name():
    writer, reviewer = ScriptedLLM([]), ScriptedLLM([])

    context = AgentContext(agent_type="team", llm=writer,
                           llms={"writer": writer, "reviewer": reviewer})

    assert context.llms["reviewer"] is reviewer and context.llm is writer


# ----------------------------------------------------------------- registering
def test_a_factory_of_the_old_three_argument_shape_is_refused_saying_how_to_write_one():
    with pytest.raises(AgentTypeError, match=r"agent type `old` \(register_agent_type\): "
                                             r"factory <lambda>\(llm, tools, params\) must take "
                                             r"one argument, the AgentContext"):
        register_agent_type("old", lambda llm, tools, params: None)


def test_something_that_is_not_callable_is_refused():
    with pytest.raises(AgentTypeError, match="'react' is not callable"):
        register_agent_type("bad", "react")  # type: ignore[arg-type]


def test_registrations_are_undone_when_a_scope_ends():
    with AGENT_TYPES.scoped():
        register_agent_type("mine", _function_calling)
        assert "mine" in agent_type_names()

    assert "mine" not in agent_type_names()


# ----------------------------------------------------------------- one resolver
def test_an_unknown_name_suggests_the_nearest_and_how_to_add_one():
    with pytest.raises(UnknownAgentTypeError) as info:
        check_agent_type("reakt")

    assert str(info.value) == (f"unknown agent type `reakt`; did you mean `react`? (known: "
                               f"{', '.join(agent_type_names())}; add yours under "
                               "[tool.agentkit.agent_types] in pyproject.toml)")


def test_an_unknown_name_near_none_lists_the_known_ones_without_a_stray_semicolon():
    with pytest.raises(UnknownAgentTypeError) as info:
        check_agent_type("my_desk")

    assert str(info.value).startswith("unknown agent type `my_desk` (known: ")


def test_the_built_in_types_resolve_with_their_capabilities():
    assert resolve_agent_type("react_multimodal").images
    assert not resolve_agent_type("react").images
    assert resolve_agent_type("react").origin == "built-in"


# ----------------------------------------------------------------- import refs
@pytest.fixture
def agent_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module ``my_agents_<id>`` on sys.path with a factory ``build`` and AgentTypes:
    ``seeing`` (takes images), ``calling`` (renders like function_calling) and ``noting`` (files
    an event of its own into traces); its name is unique, so it is new to sys.modules."""
    name = f"my_agents_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent("""\
        from dataclasses import dataclass

        from agentkit.agent import FunctionCallingAgent
        from agentkit.core.events import Event, dispatcher
        from agentkit.harness._agent_types import AgentType

        def build(context):
            return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm)

        @dataclass(kw_only=True, slots=True)
        class Asked(Event):
            message: str

        def build_noting(context):
            agent = build(context)
            chat = agent.chat
            def noting_chat(message, *args, **kwargs):
                dispatcher.emit(Asked(message=message))
                return chat(message, *args, **kwargs)
            agent.chat = noting_chat
            return agent

        def note(turn, event):
            turn.details.setdefault("notes", []).append(event.message)

        seeing = AgentType(build, images=True)
        calling = AgentType(build, trajectory="function_calling")
        noting = AgentType(build_noting, trace_handlers={Asked: note})
        """), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_a_type_declared_by_ref_is_imported_on_first_use_not_when_listed(agent_module,
                                                                          write_file):
    AGENT_TYPES.declare("mine", f"{agent_module}:build", "pyproject.toml")

    check_agent_type("mine")
    assert agent_module not in sys.modules
    assert run_scenario(_mine(write_file)).passed
    assert agent_module in sys.modules


def test_a_ref_to_an_agent_type_keeps_its_image_capability(agent_module):
    AGENT_TYPES.declare("seeing", f"{agent_module}:seeing", "pyproject.toml")

    assert resolve_agent_type("seeing").images


def test_a_ref_that_cannot_be_imported_names_the_type_where_it_was_declared_and_the_ref():
    AGENT_TYPES.declare("mine", "no_such_package_xyz.agents:build",
                        "pyproject.toml [tool.agentkit.agent_types]")

    with pytest.raises(AgentTypeError) as info:
        resolve_agent_type("mine")

    assert str(info.value) == (
        "agent type `mine` (pyproject.toml [tool.agentkit.agent_types]): cannot import "
        "`no_such_package_xyz.agents:build`: ModuleNotFoundError: No module named "
        "'no_such_package_xyz'")


def test_a_scenario_whose_type_cannot_be_imported_is_a_scenario_error_at_its_line(write_file):
    from agentkit.scenario import ScenarioError

    AGENT_TYPES.declare("mine", "no_such_package_xyz.agents:build", "pyproject.toml")
    path = _mine(write_file)

    with pytest.raises(ScenarioError, match=rf"^{path}:9: agents.mine: agent type `mine` "
                                            r"\(pyproject.toml\): cannot import"):
        run_scenario(path)


# ----------------------------------------------------------------- entry points
@pytest.fixture
def installed_package(agent_module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A distribution `their-agents` on sys.path whose entry point `theirs` is
    ``<agent_module>:build`` (what `pip install` of a package declaring it leaves)."""
    info = tmp_path / "their_agents-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: their-agents\nVersion: 1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(
        f"[agentkit.agent_types]\ntheirs = {agent_module}:build\n", encoding="utf-8")
    with AGENT_TYPES.scoped():  # sees packages installed since
        yield agent_module


def test_an_installed_entry_point_is_an_agent_type_named_after_it(installed_package,
                                                                 write_file):
    path = write_file("theirs.yaml", MINIMAL.replace("  function_calling:\n", "  theirs:\n"))

    assert run_scenario(path).passed
    assert resolve_agent_type("theirs").origin == "entry point `theirs` of their-agents"


def test_a_name_the_project_defines_wins_over_an_installed_one(installed_package):
    register_agent_type("theirs", _function_calling)

    assert resolve_agent_type("theirs").factory is _function_calling


def test_registering_with_a_mapping_value_that_is_not_an_agent_type_says_how():
    with pytest.raises(TypeError, match="register_agent_type"):
        AGENT_TYPES["mine"] = _function_calling  # type: ignore[assignment]


def test_a_registered_agent_type_is_an_agent_type_record():
    register_agent_type("mine", _function_calling, images=True)

    assert AGENT_TYPES["mine"] == AgentType(_function_calling, images=True)


# ----------------------------------------------------------------- teams
TEAM = adding_scenario("team", """\
agents:
  {agent_type}:
    root: lead
    team:
      - name: lead
        description: Leads.
        script: ["5"]
      - name: helper
        description: Helps.
        script: ["unused"]
""")


@pytest.mark.agentkit_allow_unused_script  # the helper's reply is left unused on purpose
def test_a_team_type_gets_each_team_agents_llm_by_name_and_the_roots_as_llm(write_file):
    seen: list[AgentContext] = []

    def factory(context: AgentContext) -> Any:
        seen.append(context)
        return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm)

    register_agent_type("my_team", factory, team=True)
    path = write_file("team.yaml", TEAM.format(agent_type="my_team"))

    result = run_scenario(path)

    [context] = seen
    assert sorted(context.llms) == ["helper", "lead"]
    assert context.llm is context.llms["lead"]
    assert result.trace.turns[0].response == "5"
    assert result.problems == ["the script has 1 unused reply (the agent made 0 LLM calls)"]


def test_a_team_under_a_type_that_runs_one_agent_is_an_error_at_its_line(write_file):
    from agentkit.scenario import ScenarioError

    path = write_file("team.yaml", TEAM.format(agent_type="react"))

    with pytest.raises(ScenarioError) as info:
        run_scenario(path)

    assert str(info.value).startswith(f"{path}:11: agents.react.team: agent type `react` runs "
                                      "one agent, not a team; run the team under ")
    assert "agent_workflow" in str(info.value)


def test_a_team_type_without_a_team_says_to_declare_one(write_file):
    from agentkit.scenario import ScenarioError

    path = write_file("solo.yaml", MINIMAL.replace("  function_calling:\n",
                                                   "  agent_workflow:\n"))

    with pytest.raises(ScenarioError, match="agent type `agent_workflow` runs a team: declare "
                                            "`team:`"):
        run_scenario(path)


# ----------------------------------------------------------------- trajectory renderers
@pytest.fixture
def renderer_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A module with a factory `build` and a renderer `render` (one tool call per reply)."""
    name = f"my_renderers_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent("""\
        from agentkit.agent import FunctionCallingAgent
        from agentkit.llms.mock import ScriptedResponse, tool_call

        def build(context):
            return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm)

        def render(context):
            outputs, answer = context.outputs, context.trajectory.answer
            calls = [context.deferred(lambda call=call: ScriptedResponse(tool_calls=[
                         tool_call(call.name, **call.arguments(outputs))]), call.refs)
                     for call in context.trajectory.calls]
            return [*calls, context.deferred(lambda: answer.render(outputs), answer.refs)]
        """), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_a_renderer_declared_by_ref_renders_the_types_trajectory_scenarios(renderer_module,
                                                                          write_file):
    AGENT_TYPES.declare("mine", f"{renderer_module}:build", "pyproject.toml",
                        trajectory=f"{renderer_module}:render")

    result = run_scenario(write_file("traj.yaml", TRAJECTORY_SCENARIO))

    assert result.passed, result.problems
    assert result.trace.turns[0].response == "2 + 3 = 5"


def test_a_declared_renderer_is_gone_when_the_scope_ends(renderer_module):
    from agentkit.harness import trajectory_renderer

    with AGENT_TYPES.scoped():
        AGENT_TYPES.declare("mine", f"{renderer_module}:build", "pyproject.toml",
                            trajectory=f"{renderer_module}:render")
        assert trajectory_renderer("mine") is not None

    assert trajectory_renderer("mine") is None


def test_a_renderer_that_cannot_be_imported_is_a_scenario_error_naming_its_ref(renderer_module,
                                                                               write_file):
    from agentkit.scenario import ScenarioError

    AGENT_TYPES.declare("mine", f"{renderer_module}:build", "pyproject.toml:3",
                        trajectory="no_such_renderers_xyz:render")
    path = write_file("traj.yaml", TRAJECTORY_SCENARIO)

    with pytest.raises(ScenarioError) as info:
        run_scenario(path)

    assert str(info.value) == (
        f"{path}:11: agents.mine: mine: cannot import the trajectory renderer "
        "`no_such_renderers_xyz:render` (pyproject.toml:3): ModuleNotFoundError: No module "
        "named 'no_such_renderers_xyz'")


def test_a_type_declared_by_ref_to_an_agent_type_renders_with_its_renderer(agent_module,
                                                                          write_file):
    AGENT_TYPES.declare("mine", f"{agent_module}:calling", "pyproject.toml")

    result = run_scenario(write_file("traj.yaml", TRAJECTORY_SCENARIO))

    assert result.passed, result.problems
    assert result.trace.turns[0].response == "2 + 3 = 5"


def test_listing_the_types_that_render_imports_no_type_declared_by_ref(agent_module):
    from agentkit.harness import renderable_agent_types

    AGENT_TYPES.declare("mine", f"{agent_module}:calling", "pyproject.toml")

    assert "mine" not in renderable_agent_types()
    assert agent_module not in sys.modules


def test_a_type_declared_by_ref_without_a_renderer_fails_its_trajectory_run_at_its_line(
        agent_module, write_file):
    from agentkit.scenario import ScenarioError

    AGENT_TYPES.declare("mine", f"{agent_module}:build", "pyproject.toml")
    path = write_file("traj.yaml", TRAJECTORY_SCENARIO)

    with pytest.raises(ScenarioError) as info:
        run_scenario(path)

    assert str(info.value) == (f"{path}:11: agents.mine: no `script` or `recording`, and agent "
                               "type `mine` has no trajectory renderer")


def _render_context() -> Any:
    """What a renderer gets for a trajectory that only answers "5"."""
    from agentkit.scenario._trajectory import RenderContext, TrajectoryStep, compile_trajectory
    from agentkit.scenario._trajectory_run import TrajectoryOutputs

    trajectory = compile_trajectory([TrajectoryStep(answer="5")])
    return RenderContext(agent_type="mine", trajectory=trajectory,
                         outputs=TrajectoryOutputs(trajectory))


def test_the_renderer_of_a_type_declared_by_ref_imports_it_when_it_renders(agent_module):
    from agentkit.harness import trajectory_renderer

    AGENT_TYPES.declare("mine", f"{agent_module}:calling", "pyproject.toml")
    renderer = trajectory_renderer("mine")

    assert renderer is not None and agent_module not in sys.modules
    assert renderer(_render_context()) == ["5"]
    assert agent_module in sys.modules


def test_rendering_for_a_type_declared_by_ref_without_a_renderer_says_how_to_give_one(
        agent_module):
    from agentkit.harness import trajectory_renderer
    from agentkit.scenario._trajectory import TrajectoryError

    AGENT_TYPES.declare("mine", f"{agent_module}:build", "pyproject.toml")
    renderer = trajectory_renderer("mine")
    assert renderer is not None

    with pytest.raises(TrajectoryError) as info:
        renderer(_render_context())

    assert info.value.problems == [(("agents", "mine"), (
        "agent type `mine` has no trajectory renderer: give it a `script`, or declare one "
        "(`trajectory = ...` beside its ref, or AgentType(..., trajectory=...))"))]


# ----------------------------------------------------------------- trace handlers
@dataclass(kw_only=True, slots=True)
class NoteEvent(Event):
    """A user's own bus event: the agent noted something."""

    text: str


class NotingAgent:
    """A user's agent: it notes each message on the bus, then answers as function calling."""

    def __init__(self, context: AgentContext) -> None:
        self.inner = _function_calling(context)

    def chat(self, message: str, *args: Any, **kwargs: Any) -> Any:
        dispatcher.emit(NoteEvent(text=f"asked: {message}"))
        return self.inner.chat(message, *args, **kwargs)

    def stream_chat(self, message: str, *args: Any, **kwargs: Any) -> Any:
        dispatcher.emit(NoteEvent(text=f"asked: {message}"))
        return self.inner.stream_chat(message, *args, **kwargs)

    @property
    def chat_history(self) -> Any:
        return self.inner.chat_history


def _note(turn: TurnBuilder, event: NoteEvent) -> None:
    turn.details.setdefault("notes", []).append(event.text)


def test_a_users_agent_type_files_its_own_events_into_traces(write_file):
    register_agent_type("mine", NotingAgent, trace_handlers={NoteEvent: _note})

    result = run_scenario(_mine(write_file))

    assert result.passed, result.problems
    assert result.trace.to_dict()["turns"][0]["notes"] == ["asked: What is 2 + 3?"]


def test_an_agent_type_declaration_registers_as_it_is(write_file):
    register_agent_type("mine", AgentType(NotingAgent, trace_handlers={NoteEvent: _note}))

    assert "notes" in run_scenario(_mine(write_file)).trace.to_dict()["turns"][0]


def test_a_users_trace_handlers_are_gone_when_its_scope_ends(write_file):
    with AGENT_TYPES.scoped():
        register_agent_type("mine", NotingAgent, trace_handlers={NoteEvent: _note})
    register_agent_type("mine", NotingAgent)  # the same agent, declaring no handler

    assert "notes" not in run_scenario(_mine(write_file)).trace.to_dict()["turns"][0]


def test_a_type_declared_by_ref_files_its_events_once_imported(agent_module, write_file):
    AGENT_TYPES.declare("mine", f"{agent_module}:noting", "pyproject.toml")

    result = run_scenario(_mine(write_file))

    assert result.trace.to_dict()["turns"][0]["notes"] == ["What is 2 + 3?"]


def test_another_handler_for_an_event_a_built_in_family_files_is_refused():
    from agentkit.agent.llm_compiler import PlanEvent

    with pytest.raises(AgentTypeError) as info:
        register_agent_type("mine", _function_calling, trace_handlers={PlanEvent: _note})

    assert "mine" not in AGENT_TYPES
    assert str(info.value) == (
        "agent type `mine` (register_agent_type): trace_handlers: agent type `llm_compiler` "
        "already files PlanEvent into traces with another handler (an event goes into traces "
        "one way, whichever agent emits it); declare the same handler, or an event class of "
        "your own")


def test_a_type_may_declare_the_handlers_a_built_in_type_declares():
    register_agent_type("my_team", resolve_agent_type("agent_workflow"))

    assert (resolve_agent_type("my_team").trace_handlers
            == resolve_agent_type("agent_workflow").trace_handlers)


@pytest.mark.parametrize(("handlers", "problem"), [
    ({LLMCallEndEvent: _note}, "LLMCallEndEvent is a core event: the trace's steps, LLM calls "
                               "and tool calls come from it; handle event classes of your own"),
    ({dict: _note}, "<class 'dict'> is not an event class (a subclass of "
                    "agentkit.core.events.Event)"),
    ({NoteEvent: "notes"}, "the handler of NoteEvent is 'notes', not a function "
                           "`handler(turn, event)`"),
], ids=["core event", "not an event", "not a function"])
def test_unusable_trace_handlers_are_refused_naming_the_type(handlers, problem):
    with pytest.raises(AgentTypeError) as info:
        register_agent_type("mine", _function_calling, trace_handlers=handlers)

    assert str(info.value) == f"agent type `mine` (register_agent_type): trace_handlers: {problem}"
