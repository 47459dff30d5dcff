"""The project's ``[tool.agentkit]`` table: scenario folders and agent types, with errors
naming the file, the line and the key."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkit.harness._agent_types import AGENT_TYPES, agent_type_names, resolve_agent_type
from agentkit.scenario import run_scenario
from agentkit.scenario.project import (
    AgentTypeRef,
    Project,
    ProjectError,
    activated,
    find_project,
    read_project,
)
from tests.fuzz import JSON

from .conftest import TRAJECTORY_SCENARIO


def _pyproject(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _error(tmp_path: Path, text: str) -> str:
    with pytest.raises(ProjectError) as info:
        read_project(_pyproject(tmp_path, text))
    return str(info.value)


def test_without_a_tool_agentkit_table_the_scenarios_folder_is_the_default(tmp_path):
    project = read_project(_pyproject(tmp_path, '[project]\nname = "x"\n'))

    assert project.scenarios == (tmp_path / "scenarios",) and project.agent_types == {}


def test_scenario_folders_are_relative_to_the_project_root(tmp_path):
    project = read_project(_pyproject(tmp_path, '[tool.agentkit]\nscenarios = ["a", "b/c"]\n'))

    assert project.scenarios == (tmp_path / "a", tmp_path / "b" / "c")


def test_one_scenario_folder_may_be_a_string(tmp_path):
    project = read_project(_pyproject(tmp_path, '[tool.agentkit]\nscenarios = "checks"\n'))

    assert project.scenarios == (tmp_path / "checks",)


def test_image_folders_are_relative_to_the_project_root(tmp_path):
    project = read_project(_pyproject(tmp_path, '[tool.agentkit]\n'
                                                'image_folders = ["assets", "/srv/images"]\n'))

    assert project.image_folders == (tmp_path / "assets", Path("/srv/images"))


def test_image_folders_that_are_not_folders_say_what_is_expected(tmp_path):
    assert _error(tmp_path, "[tool.agentkit]\nimage_folders = 3\n") == (
        f"{tmp_path / 'pyproject.toml'}:2: tool.agentkit.image_folders: expected a list of "
        "folders relative to the project root, e.g. [\"assets\"], got 3")


def test_agent_types_are_refs_or_inline_tables_with_images(tmp_path):
    path = _pyproject(tmp_path, '[tool.agentkit.agent_types]\nmine = "pkg.agents:build"\n'
                                'seeing = { ref = "pkg.agents:see", images = true }\n')

    project = read_project(path)

    assert project.agent_types == {
        "mine": AgentTypeRef("pkg.agents:build", f"{path}:2"),
        "seeing": AgentTypeRef("pkg.agents:see", f"{path}:3", images=True)}


def test_an_agent_type_may_take_human_answers(tmp_path):
    path = _pyproject(tmp_path, '[tool.agentkit.agent_types]\n'
                                'asking = { ref = "pkg.agents:ask", human = true }\n')

    assert read_project(path).agent_types["asking"] == AgentTypeRef(
        "pkg.agents:ask", f"{path}:2", human=True)


def test_an_unknown_key_suggests_the_closest_one(tmp_path):
    text = '[project]\nname = "x"\n\n[tool.agentkit]\nagent_type = {}\n'

    assert _error(tmp_path, text) == (f"{tmp_path / 'pyproject.toml'}:5: tool.agentkit."
                                      "agent_type: unknown key `agent_type`; did you mean "
                                      "`agent_types`?")


def test_scenarios_that_are_not_folders_say_what_is_expected(tmp_path):
    assert _error(tmp_path, "[tool.agentkit]\nscenarios = 3\n") == (
        f"{tmp_path / 'pyproject.toml'}:2: tool.agentkit.scenarios: expected a list of folders "
        "relative to the project root, e.g. [\"scenarios\"], got 3")


def test_a_ref_of_the_wrong_shape_shows_the_right_one(tmp_path):
    text = '[tool.agentkit.agent_types]\n\n"mine" = "pkg.agents.build"\n'

    assert _error(tmp_path, text) == (f"{tmp_path / 'pyproject.toml'}:3: tool.agentkit."
                                      "agent_types.mine: expected an import ref "
                                      "\"package.module:factory\", got 'pkg.agents.build'")


def test_an_inline_table_with_an_unknown_key_lists_the_keys_it_takes(tmp_path):
    text = '[tool.agentkit.agent_types]\nmine = { ref = "p.a:b", image = true }\n'

    assert _error(tmp_path, text) == (f"{tmp_path / 'pyproject.toml'}:2: tool.agentkit."
                                      "agent_types.mine: an inline table takes `ref` (the factory's "
                                      "import ref), `images` and `human` (true if its chats take "
                                      "the turns' images, their human answers) and `trajectory` "
                                      "(its trajectory renderer's import ref, or a bundled format's "
                                      "name); unknown key(s) image")


def test_agent_types_that_are_not_a_table_say_how_to_write_them(tmp_path):
    assert "expected a table of name = \"package.module:factory\"" in _error(
        tmp_path, '[tool.agentkit]\nagent_types = ["pkg.agents:build"]\n')


def test_invalid_toml_names_the_file_and_the_line(tmp_path):
    message = _error(tmp_path, '[tool.agentkit]\nscenarios = ["a"\nx = 1\n')

    assert message == (f"{tmp_path / 'pyproject.toml'}:3:1: invalid TOML: Unclosed array")


def test_the_project_is_the_nearest_pyproject_from_a_folder_up(tmp_path):
    _pyproject(tmp_path, '[tool.agentkit]\nscenarios = ["checks"]\n')
    below = tmp_path / "src" / "pkg"
    below.mkdir(parents=True)

    project = find_project(below)

    assert (project.root, project.scenarios) == (tmp_path, (tmp_path / "checks",))


def test_without_a_pyproject_the_folder_is_a_bare_project(tmp_path, monkeypatch):
    monkeypatch.setattr(Path, "is_file", lambda self: False)  # none above tmp_path either

    assert find_project(tmp_path) == Project.bare(tmp_path.resolve())


def test_an_activated_project_is_importable_and_its_agent_types_exist_until_it_ends(tmp_path):
    (tmp_path / "proj_agents_xyz.py").write_text(
        "from agentkit.agent import ReActAgent\n\n"
        "def build(context):\n    return ReActAgent.from_tools([], llm=context.llm)\n",
        encoding="utf-8")
    project = read_project(_pyproject(
        tmp_path, '[tool.agentkit.agent_types]\nproj = "proj_agents_xyz:build"\n'))

    try:
        with activated(project):
            assert str(tmp_path) in sys.path
            assert resolve_agent_type("proj").origin == f"{tmp_path / 'pyproject.toml'}:2"
    finally:
        sys.modules.pop("proj_agents_xyz", None)

    assert str(tmp_path) not in sys.path and "proj" not in agent_type_names()


# ----------------------------------------------------------------- any input
VALID = ('[project]\nname = "x"\n\n[tool.agentkit]\nscenarios = ["scenarios"]\n\n'
         '[tool.agentkit.agent_types]\nmine = "pkg.agents:build"\n')


def _toml(value: object) -> str:
    """A TOML value for JSON-like data (None has no TOML form: it makes the file invalid)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f'"{k}" = {_toml(v)}' for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'
    return repr(value)  # numbers: Python writes inf, nan and 1e+20 as TOML does


def _read_or_located_error(path: Path) -> None:
    try:
        read_project(path)
    except ProjectError as exc:
        assert str(exc).startswith(f"{path}:") or str(exc).startswith(f"{path}: "), str(exc)


_SETTINGS = settings(max_examples=60, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])


@_SETTINGS
@given(key=st.sampled_from(["scenarios", "agent_types", "scenarioz"]), value=JSON)
def test_any_value_under_tool_agentkit_loads_or_is_an_error_naming_the_file(tmp_path, key, value):
    _read_or_located_error(_pyproject(tmp_path, f"[tool.agentkit]\n{key} = {_toml(value)}\n"))


@_SETTINGS
@given(name=st.text(alphabet="ab_-", min_size=1, max_size=4), value=JSON)
def test_any_agent_type_entry_loads_or_is_an_error_naming_the_file(tmp_path, name, value):
    _read_or_located_error(_pyproject(
        tmp_path, f'[tool.agentkit.agent_types]\n"{name}" = {_toml(value)}\n'))


@_SETTINGS
@given(at=st.integers(0, len(VALID)), text=st.text(max_size=12))
def test_text_spliced_into_a_pyproject_loads_or_is_an_error_naming_the_file(tmp_path, at, text):
    _read_or_located_error(_pyproject(tmp_path, VALID[:at] + text + VALID[at:]))


def test_an_agent_type_may_name_its_trajectory_renderer(tmp_path):
    path = _pyproject(tmp_path, '[tool.agentkit.agent_types]\n'
                                'mine = { ref = "p.a:build", trajectory = "p.a:render" }\n')

    assert read_project(path).agent_types["mine"] == AgentTypeRef(
        "p.a:build", f"{path}:2", trajectory="p.a:render")


def test_an_agent_type_may_render_like_a_bundled_agent_type_named_by_its_trajectory(tmp_path):
    path = _pyproject(tmp_path, '[tool.agentkit.agent_types]\n'
                                'mine = { ref = "p.a:build", trajectory = "function_calling" }\n')

    assert read_project(path).agent_types["mine"] == AgentTypeRef(
        "p.a:build", f"{path}:2", trajectory="function_calling")


def test_an_unknown_trajectory_name_suggests_the_nearest_at_its_line(tmp_path):
    text = ('[tool.agentkit.agent_types]\n'
            'mine = { ref = "p.a:build", trajectory = "function_caling" }\n')
    project = read_project(_pyproject(tmp_path, text))  # the name is the registry's to know

    with pytest.raises(ProjectError) as info, activated(project):
        pass
    assert "mine" not in AGENT_TYPES  # nothing was declared
    assert str(info.value).startswith(
        f"{tmp_path / 'pyproject.toml'}:2: tool.agentkit.agent_types.mine.trajectory: unknown "
        "trajectory format `function_caling`; did you mean `function_calling`? (give a wire "
        "format or a bundled agent type to render like: coa, function_agent, ")


def test_a_trajectory_that_is_neither_a_ref_nor_a_name_says_what_it_takes(tmp_path):
    text = '[tool.agentkit.agent_types]\nmine = { ref = "p.a:build", trajectory = 3 }\n'

    assert _error(tmp_path, text) == (f"{tmp_path / 'pyproject.toml'}:2: tool.agentkit."
                                      "agent_types.mine.trajectory: expected an import ref "
                                      "\"package.module:render\" or the name of a bundled "
                                      "format (e.g. \"function_calling\"), got 3")


def test_a_trajectory_renderer_ref_of_the_wrong_shape_shows_the_right_one(tmp_path):
    text = '[tool.agentkit.agent_types]\nmine = { ref = "p.a:build", trajectory = "p.a:" }\n'

    assert _error(tmp_path, text) == (f"{tmp_path / 'pyproject.toml'}:2: tool.agentkit."
                                      "agent_types.mine.trajectory: expected an import ref "
                                      "\"package.module:render\", got 'p.a:'")


def test_a_project_type_named_like_function_calling_runs_a_trajectory_scenario(tmp_path):
    (tmp_path / "proj_callers_xyz.py").write_text(
        "from agentkit.agent import FunctionCallingAgent\n\n"
        "def build(context):\n"
        "    return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm)\n",
        encoding="utf-8")
    (tmp_path / "adding.yaml").write_text(TRAJECTORY_SCENARIO, encoding="utf-8")
    project = read_project(_pyproject(
        tmp_path, '[tool.agentkit.agent_types]\n'
                  'mine = { ref = "proj_callers_xyz:build", trajectory = "function_calling" }\n'))

    try:
        with activated(project):
            result = run_scenario(tmp_path / "adding.yaml")
    finally:
        sys.modules.pop("proj_callers_xyz", None)

    assert (result.problems, result.trace.turns[0].response) == ([], "2 + 3 = 5")
    assert [c.name for c in result.trace.tool_calls] == ["add"]
