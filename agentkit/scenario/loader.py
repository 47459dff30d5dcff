"""Load scenario files; a malformed one gets an error naming the file, the line and the field."""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from agentkit.core.errors import BadInputError
from agentkit.core.textfiles import TextFileError, read_text
from agentkit.core.yamlsafe import YamlError, YamlLocations, parse_yaml
from agentkit.scenario.agent_types import UnknownAgentTypeError, check_agent_type
from agentkit.scenario.images import image_folders, image_problem
from agentkit.scenario.model import SCENARIO_FORMAT, SCRIPT_ITEM_TAGS, Scenario
from agentkit.scenario.project import ProjectError
from agentkit.scenario.trajectory import TrajectoryError, compile_trajectory, trajectory_renderer
from agentkit.scenario.world import SimulatedTool, build_tool

if TYPE_CHECKING:
    from agentkit.scenario.mcp import MCPWorld

__all__ = ["ScenarioError", "load_scenario", "discover_scenarios", "is_scenario_file",
           "YamlLocations", "load_yaml", "build_tools", "located_error"]


class ScenarioError(BadInputError):
    """A scenario (or cassette) file is malformed; the message says where and how to fix it."""


Path_ = tuple[str | int, ...]


def load_yaml(path: Path, text: str) -> tuple[Any, YamlLocations]:
    """Parse YAML text safely (:func:`agentkit.core.yamlsafe.parse_yaml`); a problem becomes a
    :class:`ScenarioError` with the line."""
    try:
        return parse_yaml(text)
    except YamlError as exc:
        fix = f"\n  fix: {exc.fix}" if exc.fix else ""
        raise ScenarioError(f"{path}{exc.where}: invalid YAML: {exc.problem}{fix}") from None


def _unwrap(annotation: Any) -> Any:
    """``X | None`` -> ``X`` (and ``Annotated[X, ...]`` -> ``X``)."""
    while True:
        if typing.get_origin(annotation) is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
            continue
        if typing.get_origin(annotation) in (typing.Union, types.UnionType):
            options = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(options) == 1:
                annotation = options[0]
                continue
        return annotation


def _annotation_at(model: type[BaseModel], path: Path_) -> Any:
    """The type expected at ``path`` (a pydantic error location) inside ``model``."""
    annotation: Any = model
    for part in path:
        if isinstance(part, str) and part in SCRIPT_ITEM_TAGS:
            annotation = SCRIPT_ITEM_TAGS[part]
            continue
        annotation = _unwrap(annotation)
        if typing.get_origin(annotation) in (list, dict):
            args = typing.get_args(annotation)
            annotation = args[-1] if args else None
            continue
        fields = getattr(_model_in(annotation), "model_fields", {})
        annotation = fields[part].annotation if part in fields else None
    return _unwrap(annotation)


def _field_names(model: type[BaseModel], path: Path_) -> list[str]:
    """The field names valid at ``path`` inside ``model`` (for "did you mean" hints)."""
    return list(getattr(_model_in(_annotation_at(model, path)), "model_fields", {}))


def _model_in(annotation: Any) -> Any:
    """The pydantic model inside ``annotation`` (``X | None`` -> ``X``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


_EXPECTED = {
    "bool": "`true` or `false`", "int": "a whole number", "float": "a number",
    "string": "a string (quote it)", "list": "a list (`[a, b]` or one `- item` per line)",
    "dict": "a mapping (`key: value` lines)", "model": "a mapping (`key: value` lines)",
    "model_attributes": "a mapping (`key: value` lines)",
}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _problem(item: Any, model: type[BaseModel], raw_loc: Path_, loc: Path_) -> str:
    """What is wrong at one error location, with a hint how to fix it."""
    kind = item["type"]
    if kind == "extra_forbidden":
        name = str(loc[-1])
        known = _field_names(model, raw_loc[:-1])
        close = difflib.get_close_matches(name, known, n=1)
        hint = (f"did you mean `{close[0]}`?" if close
                else f"known fields here: {', '.join(sorted(known))}")
        return f"unknown field `{name}`; {hint}"
    if kind == "missing":
        return f"required field `{loc[-1]}` is missing; add it"
    if kind == "literal_error":
        options = [str(o) for o in typing.get_args(_annotation_at(model, raw_loc))]
        close = difflib.get_close_matches(str(item["input"]), options, n=1)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        return f"{_shown(item['input'])} is not one of {', '.join(options)}{hint}"
    base = kind.removesuffix("_type").removesuffix("_parsing")
    if base in _EXPECTED and kind.endswith(("_type", "_parsing")):
        return f"expected {_EXPECTED[base]}, got {_shown(item['input'])}"
    bound = _BOUNDS.get(kind)
    if bound is not None:
        limit = item["ctx"][bound[1]]
        shown = f"{limit:g}" if isinstance(limit, (int, float)) else limit
        return f"must be {bound[0]} {shown}, got {_shown(item['input'])}"
    if kind == "finite_number":
        return f"must be a finite number, got {_shown(item['input'])}"
    if kind == "too_short":
        return f"needs at least {item['ctx']['min_length']} entry; add one"
    message: str = item["msg"]
    return message.removeprefix("Value error, ")


_BOUNDS = {"greater_than_equal": (">=", "ge"), "greater_than": (">", "gt"),
           "less_than_equal": ("<=", "le"), "less_than": ("<", "lt")}


def format_validation_error(path: Path, error: ValidationError, where: YamlLocations,
                            model: type[BaseModel]) -> str:
    """One line per problem: ``file:line: field.path: what is wrong`` plus a fix."""
    lines = []
    seen: set[tuple[Path_, str]] = set()
    for item in error.errors():
        raw_loc = tuple(item["loc"])
        loc = tuple(p for p in raw_loc if not (isinstance(p, str) and (
            p in SCRIPT_ITEM_TAGS or p.startswith(("function-", "union[")))))
        dotted = ".".join(str(p) for p in loc) or "(top level)"
        message = _problem(item, model, raw_loc, loc)
        if item["type"] == "extra_forbidden":
            line = where.line(loc, key=True)
        elif item["type"] == "missing":
            line = where.line(loc[:-1])
        else:
            line = where.line(loc)
        if (loc, message) in seen:
            continue
        seen.add((loc, message))
        lines.append(f"{path}:{line}: {dotted}: {message}")
    return "\n".join(lines)


def load_scenario(path: str | Path, *, check_agent_types: bool = False) -> Scenario:
    """Read and validate one scenario file; with ``check_agent_types``, an agent type that
    does not exist (:func:`~agentkit.scenario.agent_types.check_agent_type`) is an error."""
    path = Path(path)
    try:
        text = read_text(path)
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read scenario file: {exc.strerror or exc}") from None
    except TextFileError as exc:
        raise ScenarioError(str(exc)) from None
    data, where = load_yaml(path, text)
    if where.duplicates:  # YAML keeps the last silently; a lost block is a bug to surface
        raise ScenarioError("\n".join(
            f"{path}:{line}: {'.'.join(map(str, key))}: duplicate key `{key[-1]}` (first at "
            f"line {first}); merge the two or remove one" for key, line, first in where.duplicates))
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}:1: a scenario file must be a mapping with `format: "
                            f"{SCENARIO_FORMAT}`, `name`, `turns` and `agents`")
    if "format" not in data:
        raise ScenarioError(f"{path}:1: missing `format: {SCENARIO_FORMAT}` (the scenario "
                            "format version); add it as the first line")
    data.setdefault("name", path.stem.removesuffix(".scenario"))
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(format_validation_error(path, exc, where, Scenario)) from None
    for name in scenario.agents if check_agent_types else ():
        try:
            check_agent_type(name)
        except UnknownAgentTypeError as exc:
            raise ScenarioError(f"{path}:{where.line(('agents', name), key=True)}: "
                                f"agents.{name}: {exc}") from None
    _check_images(scenario, path, where)
    scenario.path = str(path)
    scenario.set_locations(where.line)
    _check_mcp(scenario)
    _check_trajectory(scenario)
    return scenario


def _check_mcp(scenario: Scenario) -> None:
    """The MCP servers of the tool world are told apart by name (:mod:`agentkit.scenario.mcp`)."""
    from agentkit.scenario.mcp import mcp_problems

    problems = mcp_problems(scenario)
    if problems:
        raise located_error(scenario, problems)


def build_tools(scenario: Scenario, mcp: MCPWorld | None = None) -> list[SimulatedTool]:
    """The scenario's tool world; a tool that cannot be built is a :class:`ScenarioError`
    naming its ``ref``. MCP tools come from ``mcp``, the run's servers
    (:func:`agentkit.scenario.mcp.open_mcp`)."""
    search_from = Path(scenario.path).parent if scenario.path else None
    tools: list[SimulatedTool] = []
    for index, spec in enumerate(scenario.tools):
        if spec.mcp is not None:
            tools += _mcp_tools(scenario, index, mcp, tools)
            continue
        try:
            tools.append(build_tool(spec, search_from))
        except Exception as exc:  # noqa: BLE001 (an import ref runs arbitrary module code)
            raise ScenarioError(f"{scenario.where('tools', index, 'ref')}: tools.{index}.ref: "
                                f"cannot use `{spec.ref}`: {exc}") from None
    return tools


def _mcp_tools(scenario: Scenario, index: int, mcp: MCPWorld | None,
               built: list[SimulatedTool]) -> list[SimulatedTool]:
    """The MCP tools of ``tools[index]``, each with the entry's latency and failure schedule;
    a name another tool of the world has already is an error."""
    spec = scenario.tools[index]
    if mcp is None:
        raise ScenarioError(f"{scenario.where('tools', index, 'mcp')}: tools.{index}.mcp: an "
                            "MCP server's tools exist only in a run (run_scenario starts or "
                            "replays the servers)")
    taken = {tool.metadata.name for tool in built}
    tools = []
    for tool in mcp.tools(index, spec):
        if tool.metadata.name in taken:
            raise ScenarioError(f"{scenario.where('tools', index, 'mcp')}: tools.{index}.mcp: "
                                f"the MCP tool `{tool.metadata.name}` has the name of another "
                                "tool of the world; leave one out with `only:`, or rename it "
                                "(`only: [<tool>]` and `name:`)")
        taken.add(tool.metadata.name)
        tools.append(SimulatedTool(tool, latency=spec.latency, failures=spec.failures,
                                   error=spec.error))
    return tools


def _check_trajectory(scenario: Scenario) -> None:
    """Every agent type has a script, a recording, or a renderer for the scenario's
    trajectory; the trajectory fits one turn and names the scenario's tools correctly."""
    problems: list[tuple[tuple[str | int, ...], str]] = []
    for name, spec in scenario.agents.items():
        if spec.team is not None or spec.script is not None or spec.recording is not None:
            continue
        if scenario.trajectory is None:
            problems.append((("agents", name), "give each agent type exactly one of `script` "
                                               "or `recording` (or give the scenario a "
                                               "`trajectory:` to render its script from)"))
        elif trajectory_renderer(name) is None:
            problems.append((("agents", name), f"agent type `{name}` cannot render a trajectory "
                                               "(it has no renderer): give it a `script`, or "
                                               "register one with register_agent_type(..., "
                                               "trajectory=renderer)"))
    if scenario.trajectory is not None:
        if len(scenario.turns) != 1:
            problems.append((("trajectory",), f"a trajectory describes one turn, and this "
                                              f"scenario has {len(scenario.turns)}; give "
                                              "multi-turn scenarios a script per agent type"))
        try:
            # MCP tools are known only in a run (their names and schemas come from the
            # servers or the cassette): the world stage checks the trajectory against them
            compile_trajectory(scenario.trajectory,
                               None if _has_mcp(scenario) else build_tools(scenario))
        except TrajectoryError as exc:
            problems += exc.problems
    if problems:
        raise located_error(scenario, problems)


def _has_mcp(scenario: Scenario) -> bool:
    return any(spec.mcp is not None for spec in scenario.tools)


def located_error(scenario: Scenario,
                  problems: Iterable[tuple[tuple[str | int, ...], str]]) -> ScenarioError:
    """One error with a ``file:line: field: message`` line per ``(field path, message)``."""
    return ScenarioError("\n".join(f"{scenario.where(*loc)}: {'.'.join(map(str, loc))}: {message}"
                                   for loc, message in problems))


def _check_images(scenario: Scenario, path: Path, where: YamlLocations) -> None:
    """Every turn image is a readable image file in the project: a broken one is a load
    error, never a crash in the middle of a run."""
    if not any(turn.images for turn in scenario.turns):
        return
    try:
        folders = image_folders(path)
    except ProjectError as exc:
        raise ScenarioError(f"{path}: cannot tell where its images may be: {exc}") from None
    problems = [f"{path}:{where.line(('turns', index, 'images', number))}: "
                f"turns.{index}.images.{number}: {problem}"
                for index, turn in enumerate(scenario.turns)
                for number, name in enumerate(turn.images)
                if (problem := image_problem(path, name, folders)) is not None]
    if problems:
        raise ScenarioError("\n".join(problems))


_SNIFF_BYTES = 1 << 20
_TOP_LEVEL_KEY = re.compile(r"^(format|turns|agents)[ \t]*:", re.MULTILINE)
_NOT_SCENARIOS = frozenset({"__snapshots__", "cassettes"})


def is_scenario_file(path: Path) -> bool:
    """Whether a YAML file is agentkit's: its top level has ``format:`` and ``turns:`` or
    ``agents:`` (or both of those without ``format:``, which loading then reports missing).
    Any other YAML file -- a Kubernetes manifest, a CI config -- is not a scenario; a file
    that cannot be read counts as one, so loading it reports why."""
    if path.suffix not in (".yaml", ".yml"):
        return False
    try:
        with path.open("rb") as file:
            text = file.read(_SNIFF_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return True
    keys = set(_TOP_LEVEL_KEY.findall(text))
    return ("format" in keys and bool(keys & {"turns", "agents"})) or {"turns", "agents"} <= keys


def discover_scenarios(root: str | Path) -> list[Path]:
    """Scenario files under ``root`` (:func:`is_scenario_file`; cassettes and snapshots are
    not), sorted; a file is returned as is."""
    root = Path(root)
    try:
        if root.is_file():
            return [root]
        if not root.is_dir():
            raise ScenarioError(f"{root}: no such scenario file or directory")
    except OSError as exc:  # e.g. a name longer than the file system allows
        raise ScenarioError(f"{root}: cannot read: {exc.strerror or exc}") from None
    return sorted(p for p in root.rglob("*.y*ml")
                  if not _NOT_SCENARIOS.intersection(p.relative_to(root).parts)
                  and is_scenario_file(p))
