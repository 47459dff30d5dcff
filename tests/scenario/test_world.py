"""The tool world: tools from import refs, simulated latency and failure schedules."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator

import pytest

from agentkit.core.sim import run_sync
from agentkit.harness._world import SimulatedTool, SimulatedToolError, build_tool, resolve_ref
from agentkit.llms.tool_calling import acall_tool
from agentkit.scenario import ScenarioError, run_scenario
from agentkit.scenario._model import ToolSpec
from agentkit.tools import FunctionTool

from .conftest import MINIMAL


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


ADD_TOOL = FunctionTool.from_defaults(add, name="adder", description="Adds.")
NOT_A_TOOL = {"add": add}


def _spec(ref: str = "mocks.tools:add", **fields) -> ToolSpec:
    return ToolSpec(ref=ref, **fields)


@pytest.fixture
def isolated_imports(tmp_path) -> Iterator[None]:
    """Undo what importing a scenario's own modules (in ``tmp_path``) adds to sys.path and
    sys.modules."""
    path = list(sys.path)
    yield
    sys.path[:] = path
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


# ----------------------------------------------------------------- latency and failures
def test_a_tool_call_takes_its_latency_on_the_virtual_clock(sim):
    tool = build_tool(_spec(latency=2.5))

    output = run_sync(tool.acall(a=2, b=3))

    assert output.content == "5"
    assert sim.clock.now() == 2.5


def test_latency_adds_up_over_sequential_calls(sim):
    tool = build_tool(_spec(latency=1.5))

    for _ in range(3):
        run_sync(tool.acall(a=1, b=1))

    assert sim.clock.now() == 4.5


def test_the_calls_in_the_failure_schedule_fail_and_the_others_run():
    tool = build_tool(_spec(failures=[1, 3]))

    results = []
    for _ in range(4):
        try:
            results.append(run_sync(tool.acall(a=1, b=1)).content)
        except SimulatedToolError:
            results.append("failed")

    assert results == ["failed", "2", "failed", "2"]


def test_a_scheduled_failure_says_which_call_of_which_tool_failed():
    tool = build_tool(_spec(failures=[1], error="service down"))

    with pytest.raises(SimulatedToolError) as info:
        run_sync(tool.acall(a=1, b=1))

    assert str(info.value) == "service down (call 1 of `add`)"


def test_a_scheduled_failure_still_takes_the_latency(sim):
    tool = build_tool(_spec(failures=[1], latency=1.0))

    with pytest.raises(SimulatedToolError):
        run_sync(tool.acall(a=1, b=1))

    assert sim.clock.now() == 1.0


def test_an_agent_sees_a_scheduled_failure_as_an_error_observation():
    tool = build_tool(_spec(failures=[1], error="service down"))

    output = run_sync(acall_tool(tool, {"a": 1, "b": 2}))

    assert output.is_error
    assert output.content == "Error: service down (call 1 of `add`)"


def test_the_sync_call_runs_the_simulated_call():
    tool = build_tool(_spec(failures=[2]))

    assert tool.call(a=4, b=5).content == "9"
    with pytest.raises(SimulatedToolError):
        tool.call(a=4, b=5)


# ----------------------------------------------------------------- metadata
def test_a_function_ref_becomes_a_tool_named_after_the_function():
    tool = build_tool(_spec())

    assert isinstance(tool, SimulatedTool)
    assert tool.metadata.name == "add"
    assert tool.metadata.description.startswith("add(a: int, b: int) -> int")


def test_the_spec_overrides_name_description_and_return_direct_of_a_function():
    tool = build_tool(_spec(name="plus", description="Adds numbers.", return_direct=True))

    assert (tool.metadata.name, tool.metadata.description, tool.metadata.return_direct) == (
        "plus", "Adds numbers.", True)
    assert run_sync(tool.acall(a=1, b=2)).tool_name == "plus"


def test_a_tool_ref_is_used_with_its_own_metadata():
    tool = build_tool(_spec(f"{__name__}:ADD_TOOL"))

    assert (tool.metadata.name, tool.metadata.description) == ("adder", "Adds.")
    assert run_sync(tool.acall(a=1, b=2)).content == "3"


def test_the_spec_overrides_the_metadata_of_a_tool_ref_and_its_outputs_carry_the_new_name():
    tool = build_tool(_spec(f"{__name__}:ADD_TOOL", name="sum", description="Sums.",
                            return_direct=True))

    assert (tool.metadata.name, tool.metadata.description, tool.metadata.return_direct) == (
        "sum", "Sums.", True)
    assert tool.metadata.fn_schema is ADD_TOOL.metadata.fn_schema
    assert run_sync(tool.acall(a=1, b=2)).tool_name == "sum"


def test_a_tool_class_ref_is_instantiated_as_a_factory():
    tool = build_tool(_spec(f"{__name__}:ConstantTool"))

    assert tool.metadata.name == "constant"
    assert run_sync(tool.acall()).content == "42"


def test_every_run_gets_its_own_tool_made_of_what_the_ref_names_now(monkeypatch):
    spec = _spec()
    first, again = build_tool(spec), build_tool(spec)
    assert first is not again and first.tool is not again.tool
    run_sync(first.acall(a=1, b=2))
    assert (first.calls, again.calls) == (1, 0)

    def subtract(a: int, b: int) -> int:
        """Subtract b from a."""
        return a - b

    import mocks.tools
    monkeypatch.setattr(mocks.tools, "add", subtract)  # the ref names another function now
    assert run_sync(build_tool(spec).acall(a=5, b=2)).content == "3"


def _stock(item: str, world: dict) -> int:
    """The stock of an item."""
    return world[item]


def test_a_tool_class_and_a_tool_taking_the_runs_world_are_made_for_each_run():
    made = _spec(f"{__name__}:ConstantTool")
    assert build_tool(made).tool is not build_tool(made).tool  # a class's instance may hold state

    stock = _spec(f"{__name__}:_stock")
    assert run_sync(build_tool(stock, world={"x": 1}).acall(item="x")).content == "1"
    assert run_sync(build_tool(stock, world={"x": 2}).acall(item="x")).content == "2"


class ConstantTool(FunctionTool):
    """A tool class a scenario can name; built with no arguments."""

    def __init__(self) -> None:
        def constant() -> int:
            """Always 42."""
            return 42

        base = FunctionTool.from_defaults(constant)
        super().__init__(base.fn, base.metadata)


# ----------------------------------------------------------------- refs
def test_a_ref_resolves_dotted_attributes():
    assert resolve_ref(f"{__name__}:ADD_TOOL.metadata.name") == "adder"


def test_a_ref_to_something_that_is_not_a_function_or_tool_is_a_clear_error():
    with pytest.raises(TypeError) as info:
        build_tool(_spec(f"{__name__}:NOT_A_TOOL"))

    assert str(info.value) == (f"`{__name__}:NOT_A_TOOL` is a dict, not a function, a tool or a "
                               "tool class")


def test_a_ref_to_a_missing_attribute_names_module_and_attribute():
    with pytest.raises(AttributeError, match=r"`mocks\.tools` has no attribute `nothing`"):
        resolve_ref("mocks.tools:nothing")


def test_a_ref_to_a_missing_module_raises_module_not_found(tmp_path):
    with pytest.raises(ModuleNotFoundError, match="no_such_module_xyz"):
        resolve_ref("no_such_module_xyz:thing", tmp_path)


def test_a_bad_ref_in_a_scenario_fails_the_run_naming_file_line_and_field(write_file):
    path = write_file("bad_ref.yaml", MINIMAL.replace("mocks.tools:add", "mocks.tools:_CAPITALS"))

    with pytest.raises(ScenarioError) as info:
        run_scenario(path)

    assert str(info.value) == (f"{path}:4: tools.0.ref: cannot use `mocks.tools:_CAPITALS`: "
                               "`mocks.tools:_CAPITALS` is a dict, not a function, a tool or a "
                               "tool class")


def test_a_module_that_fails_to_import_fails_the_run_with_a_scenario_error(write_file,
                                                                           isolated_imports):
    write_file("broken_tools_mod.py", "raise RuntimeError('broken at import')\n")
    path = write_file("s.yaml", MINIMAL.replace("mocks.tools:add", "broken_tools_mod:add"))

    with pytest.raises(ScenarioError, match=r"tools\.0\.ref: cannot use `broken_tools_mod:add`: "
                                            r"broken at import"):
        run_scenario(path)


def test_a_module_next_to_the_scenario_file_is_importable(write_file, isolated_imports):
    write_file("local_tools_mod.py", textwrap.dedent('''
        def add(a: int, b: int) -> int:
            """Add two integers (local copy)."""
            return a + b + 100
    '''))
    path = write_file("s.yaml", MINIMAL.replace("mocks.tools:add", "local_tools_mod:add")
                      .replace("2 + 3 = 5", "\"105\""))

    result = run_scenario(path)

    assert result.passed, result.problems
    assert [c.output for c in result.trace.tool_calls] == ["105"]


def test_the_scenario_folder_goes_last_on_sys_path_so_it_shadows_no_installed_module(
        write_file, isolated_imports, tmp_path, monkeypatch):
    installed = tmp_path / "site"
    (installed / "shadowed_helper_xyz.py").parent.mkdir()
    (installed / "shadowed_helper_xyz.py").write_text('WHO = "installed"\n')
    monkeypatch.syspath_prepend(str(installed))
    write_file("scenario/shadowed_helper_xyz.py", 'WHO = "the scenario folder"\n')
    write_file("scenario/own_tools_xyz.py", "def add(a: int, b: int) -> int:\n"
                                            "    return a + b\n")

    resolve_ref("own_tools_xyz:add", tmp_path / "scenario")

    assert sys.path[-1] == str(tmp_path / "scenario")
    assert importlib.import_module("shadowed_helper_xyz").WHO == "installed"


def test_a_package_in_a_folder_above_the_scenario_file_is_importable(write_file,
                                                                     isolated_imports):
    write_file("upper_pkg_xyz/__init__.py", "")
    write_file("upper_pkg_xyz/tools.py", "def add(a: int, b: int) -> int:\n    return a * b\n")
    path = write_file("deep/er/s.yaml", MINIMAL.replace("mocks.tools:add",
                                                        "upper_pkg_xyz.tools:add")
                      .replace("2 + 3 = 5", "\"6\""))

    result = run_scenario(path)

    assert [c.output for c in result.trace.tool_calls] == ["6"]
