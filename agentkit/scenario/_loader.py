"""Load scenario files; a malformed one gets an error naming the file, the line and the field."""

from __future__ import annotations

import difflib
import functools
import re
import types
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from agentkit.core.errors import BadInputError, one_line
from agentkit.core.textfiles import TextFileError, read_text
from agentkit.core.yamlsafe import YamlError, YamlLocations, parse_yaml
from agentkit.scenario._images import image_folders, image_problem
from agentkit.scenario._model import (
    ANSWER_TAGS,
    SCENARIO_FORMAT,
    SCRIPT_ITEM_TAGS,
    AgentSpec,
    ResumeFrom,
    Scenario,
    ToolCallSpec,
    given_agents,
)
from agentkit.scenario._project import ProjectError
from agentkit.scenario._trajectory import TrajectoryError, compile_trajectory

__all__ = ["ScenarioError", "load_scenario", "discover_scenarios", "is_scenario_file",
           "YamlLocations", "load_yaml", "located_error", "agent_lines"]


class ScenarioError(BadInputError):
    """A scenario (or cassette) file is malformed; the message says where and how to fix it."""


Path_ = tuple[str | int, ...]
_UNION_TAGS: dict[str, type[BaseModel] | None] = {**SCRIPT_ITEM_TAGS, **ANSWER_TAGS}
"""The tags of the discriminated unions, as pydantic puts them into error locations."""


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
        if _is_union(annotation):
            options = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(options) == 1:
                annotation = options[0]
                continue
        return annotation


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def _member(annotation: Any, part: str | int) -> Any:
    """The member of the union ``annotation`` that pydantic's location part ``part`` names
    (``bool``, ``TextMatch``, ``function-after[_one(), TextMatch]``), if it names one."""
    if not isinstance(part, str) or not _is_union(annotation):
        return None
    for option in typing.get_args(annotation):
        name = getattr(_unwrap(option), "__name__", None)
        if name is not None and (part == name or part.endswith(f", {name}]")):
            return option
    return None


def _walk(model: type[BaseModel], raw_loc: Path_) -> tuple[Path_, Any, int | None]:
    """Where a pydantic error is, as the user wrote it: the field path (pydantic's names of
    union members and validators left out), the type expected there, and the index in
    ``raw_loc`` of the union member it went into last (None if none)."""
    annotation: Any = model
    loc: list[str | int] = []
    member_at = None
    for index, part in enumerate(raw_loc):
        if isinstance(part, str) and part in _UNION_TAGS:
            annotation = _UNION_TAGS[part]
            continue
        annotation = _unwrap(annotation)
        option = _member(annotation, part)
        if option is not None:
            annotation, member_at = option, index
            continue
        if isinstance(part, str) and (part.startswith(("function-", "union["))
                                      or part == "[key]"):  # a mapping's key: its entry
            continue
        loc.append(part)
        if typing.get_origin(annotation) in (list, dict):
            args = typing.get_args(annotation)
            annotation = args[-1] if args else None
            continue
        fields = getattr(_model_in(annotation), "model_fields", {})
        annotation = fields[part].annotation if part in fields else None
    return tuple(loc), _unwrap(annotation), member_at


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
        fields = getattr(_model_in(_walk(model, raw_loc[:-1])[1]), "model_fields", {})
        known = [field.alias or field_name for field_name, field in fields.items()]
        close = difflib.get_close_matches(name, known, n=1)
        hint = (f"did you mean `{close[0]}`?" if close
                else f"known fields here: {', '.join(sorted(known))}")
        return f"unknown field `{name}`; {hint}"
    if kind == "missing":
        return f"required field `{loc[-1]}` is missing; add it"
    if kind == "literal_error":
        options = [str(o) for o in typing.get_args(_walk(model, raw_loc)[1])]
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


class _Report:
    """The problems found in one scenario file, each ``file:line: field.path: what is wrong``:
    every check adds to it, and it is reported whole, in file order."""

    def __init__(self, path: Path, where: YamlLocations) -> None:
        self.path = path
        self.where = where
        self._found: list[tuple[int, str]] = []

    def note(self, line: int, message: str) -> None:
        """A problem of the file at ``line`` that no one field has."""
        self._found.append((line, one_line(f"{self.path}:{line}: {message}")))

    def at(self, line: int, loc: Path_, message: str) -> None:
        """A problem of the field ``loc`` at ``line``."""
        self.note(line, f"{'.'.join(map(str, loc)) or '(top level)'}: {message}")

    def add(self, loc: Path_, message: str, *, key: bool = False,
            line_of: Path_ | None = None) -> None:
        """A problem of the field ``loc``, at the line of its value (its key's with ``key``;
        ``line_of``'s when the field is written elsewhere, e.g. an agent type in a list)."""
        self.at(self.where.line(loc if line_of is None else line_of, key=key), loc, message)

    def invalid(self, error: ValidationError, model: type[BaseModel]) -> None:
        """Each problem pydantic found (once; a type mismatch with one member of a union is
        left out when another member got further: ``error: {contain: x}`` is a misspelt
        text match, not a wrong boolean)."""
        placed = []
        for item in error.errors():
            raw_loc = tuple(item["loc"])
            loc, _, member_at = _walk(model, raw_loc)
            branch = None if member_at is None else (raw_loc[:member_at], raw_loc[member_at])
            # a type mismatch with the member itself, not with something inside it
            shallow = (member_at is not None and item["type"].endswith("_type")
                       and len(_walk(model, raw_loc[:member_at + 1])[0]) == len(loc))
            placed.append((item, raw_loc, loc, branch, shallow))
        further = {branch for *_, branch, shallow in placed if branch is not None and not shallow}
        for item, raw_loc, loc, branch, shallow in placed:
            if shallow and branch is not None and any(
                    point == branch[0] and member != branch[1] for point, member in further):
                continue
            if item["type"] == "extra_forbidden":
                line = self.where.line(loc, key=True)
            elif item["type"] == "missing":
                line = self.where.line(loc[:-1])
            else:
                line = self.where.line(loc)
            self.at(line, loc, _problem(item, model, raw_loc, loc))

    def error(self) -> ScenarioError | None:
        """All problems, one line each, in file order (each once), or None if there are none."""
        lines = dict.fromkeys(text for _, text in sorted(self._found, key=lambda p: p[0]))
        return ScenarioError("\n".join(lines)) if lines else None


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate one scenario file, and nothing else: what needs the agent-type
    registry, the tools' code, MCP servers or recorded runs is checked when the scenario is
    planned (:func:`agentkit.harness.plan_scenario`, which every run does first). Every
    problem the file has is reported at once (:class:`ScenarioError`, one line each): what
    needs a valid part of the file runs on each part that is valid."""
    path = Path(path)
    try:
        text = read_text(path)
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read scenario file: {exc.strerror or exc}") from None
    except TextFileError as exc:
        raise ScenarioError(str(exc)) from None
    data, where = load_yaml(path, text)
    report = _Report(path, where)
    for key, line, first in where.duplicates:  # YAML keeps the last silently: surface it
        report.at(line, key, f"duplicate key `{key[-1]}` (first at line {first}); merge the "
                             "two or remove one")
    if not isinstance(data, dict):
        report.note(1, f"a scenario file must be a mapping with `format: {SCENARIO_FORMAT}`, "
                       "`name`, `turns` and `agents`")
        raise _raised(report)
    if "format" not in data:
        report.note(1, f"missing `format: {SCENARIO_FORMAT}` (the scenario format version); "
                       "add it as the first line")
        data = {"format": SCENARIO_FORMAT, **data}  # the rest is checked as this format
    data.setdefault("name", path.stem.removesuffix(".scenario"))
    scenario = None
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        report.invalid(exc, Scenario)
    _check_parts(data, report)
    if scenario is None or report.error() is not None:
        raise _raised(report)
    scenario.path = str(path)
    written = agent_lines(data)

    def line_of(field_path: Path_, *, key: bool = False) -> int:
        if len(field_path) >= 2 and field_path[0] == "agents" and field_path[1] in written:
            # an agent type named in a list: its item's line
            return where.line(written[str(field_path[1])] + field_path[2:], key=key)
        return where.line(field_path, key=key)

    scenario.set_locations(line_of)
    return scenario


def _raised(report: _Report) -> ScenarioError:
    error = report.error()
    assert error is not None, "a file that does not validate has a problem to report"
    return error


def located_error(scenario: Scenario,
                  problems: Iterable[tuple[tuple[str | int, ...], str]]) -> ScenarioError:
    """One error with a ``file:line: field: message`` line per ``(field path, message)``."""
    return ScenarioError("\n".join(f"{scenario.where(*loc)}: {'.'.join(map(str, loc))}: {message}"
                                   for loc, message in problems))


def agent_lines(data: dict[str, Any]) -> dict[str, Path_]:
    """Where each agent type named in a list (``agents: [react, coa]``) is written: its item."""
    given = data.get("agents")
    if not isinstance(given, list):
        return {}
    return {name: ("agents", index) for index, name in enumerate(given) if isinstance(name, str)}


# ---------------------------------------------------------------------------- checks by part
# These run whether or not the whole file validated, each on the parts it needs (the raw data,
# or a part validated on its own), so one pass finds every problem; a part pydantic rejected
# is skipped here (its problem is reported already).

@functools.cache
def _adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    field = model.model_fields[name]
    annotation: Any = field.annotation
    if field.metadata:  # constraints such as min_length
        annotation = typing.Annotated[(annotation, *field.metadata)]
    return TypeAdapter(annotation)


def _valid(model: type[BaseModel], name: str, value: Any) -> Any:
    """``value`` validated as the field ``name`` of ``model``, or None if it is not valid."""
    try:
        return _adapter(model, name).validate_python(value)
    except ValidationError:
        return None


def _check_parts(data: dict[str, Any], report: _Report) -> None:
    given = given_agents(data)
    agents = given if isinstance(given, dict) else {}
    _check_images(data.get("turns"), report)
    _check_trajectory(data, agents, report)
    _check_order(data, agents, report)
    _check_resume(agents, report)
    _check_world(data, agents, report)


def _agent_line(data: dict[str, Any], name: str) -> Path_:
    """Where the agent type ``name`` is written: its key, or its item in a list of names."""
    return agent_lines(data).get(name, ("agents", name))


def _check_images(turns: Any, report: _Report) -> None:
    """Every turn image is a readable image file in the project: a broken one is a load
    error, never a crash in the middle of a run."""
    images = [(("turns", index, "images", number), name)
              for index, turn in enumerate(turns if isinstance(turns, list) else ())
              if isinstance(turn, dict) and isinstance(turn.get("images"), list)
              for number, name in enumerate(turn["images"]) if isinstance(name, str)]
    if not images:
        return
    try:
        folders = image_folders(report.path)
    except ProjectError as exc:
        loc = images[0][0]
        report.add(loc[:-1], f"cannot tell where its images may be: {exc}", line_of=loc)
        return
    for loc, name in images:
        problem = image_problem(report.path, name, folders)
        if problem is not None:
            report.add(loc, problem)


def _check_trajectory(data: dict[str, Any], agents: dict[Any, Any], report: _Report) -> None:
    """Every agent type has a script or a recording, or the scenario a trajectory (whether
    the agent type can render it is planning's question); the trajectory fits one turn and
    its steps fit together (their tools are checked when it is planned)."""
    trajectory = data.get("trajectory")
    if trajectory is None:
        for name, spec in agents.items():
            if (isinstance(name, str) and isinstance(spec, dict)
                    and all(spec.get(k) is None for k in ("team", "script", "recording"))):
                report.add(("agents", name), "give each agent type exactly one of `script` or "
                                             "`recording` (or give the scenario a `trajectory:` "
                                             "to render its script from)",
                           line_of=_agent_line(data, name))
        return
    turns = data.get("turns")
    if data.get("user") is not None:
        report.add(("trajectory",), "a trajectory describes one turn of fixed input, and this "
                                    "scenario's turns come from a simulated `user:`; give each "
                                    "agent type a script (or a recording)")
    if isinstance(turns, list) and len(turns) > 1:
        report.add(("trajectory",), f"a trajectory describes one turn, and this scenario has "
                                    f"{len(turns)}; give multi-turn scenarios a script per "
                                    "agent type")
    steps = _valid(Scenario, "trajectory", trajectory)
    if steps is not None:
        try:
            compile_trajectory(steps)
        except TrajectoryError as exc:
            for loc, message in exc.problems:
                report.add(loc, message)


def _check_order(data: dict[str, Any], agents: dict[Any, Any], report: _Report) -> None:
    """``after:`` on an expected tool call names earlier entries of its ``calls`` list (the
    check of a run follows only those: a missing, its own or a later entry is a mistake)."""
    for place, expect in _expects(data, agents):
        tool_calls = expect.get("tool_calls") if isinstance(expect, dict) else None
        calls = tool_calls.get("calls") if isinstance(tool_calls, dict) else None
        if not isinstance(calls, list):
            continue
        for index, call in enumerate(calls):
            after = (_valid(ToolCallSpec, "after", call.get("after", []))
                     if isinstance(call, dict) else None)
            for position, number in enumerate(after or ()):
                problem = _after_problem(number, index + 1, len(calls))
                if problem is not None:
                    report.add((*place, "tool_calls", "calls", index, "after", position), problem)


def _after_problem(number: int, entry: int, count: int) -> str | None:
    """What is wrong with ``after: [number]`` on entry ``entry`` of ``count`` (None: nothing)."""
    can = ("it is the first entry, which follows none" if entry == 1
           else f"entry {entry} can only follow entry 1" if entry == 2
           else f"entry {entry} can only follow entries 1 to {entry - 1}")
    if not 1 <= number <= count:
        return (f"after: {number} names no entry of `calls` (entries are numbered from 1; "
                f"this list has {count})")
    if number == entry:
        return f"after: {number} is this entry itself ({can})"
    if number > entry:
        return (f"after: {number} is a later entry ({can}); list the calls that must happen "
                "first before the ones that follow them")
    return None


def _expects(data: dict[str, Any], agents: dict[Any, Any]) -> list[tuple[Path_, Any]]:
    """The scenario's ``expect`` and each agent type's, with their places (as written)."""
    return [(("expect",), data.get("expect"))] + [
        (("agents", name, "expect"), spec.get("expect")) for name, spec in agents.items()
        if isinstance(spec, dict)]


def _check_world(data: dict[str, Any], agents: dict[Any, Any], report: _Report) -> None:
    """``expect.state`` reads a declared ``world:`` after a turn the scenario has; a rule's
    ``tag`` is one some tool of the scenario is given (``tags:``)."""
    tools = data.get("tools")
    tags = sorted({tag for spec in (tools if isinstance(tools, list) else ())
                   if isinstance(spec, dict) and isinstance(spec.get("tags"), list)
                   for tag in spec["tags"] if isinstance(tag, str)})
    turns = data.get("turns")
    for place, expect in _expects(data, agents):
        if not isinstance(expect, dict):
            continue
        state = expect.get("state")
        if state is not None and data.get("world") is None:
            report.add((*place, "state"), "`state` is read from the scenario's world, and it "
                                          "declares none: add `world: {ref: ...}` (a factory) "
                                          "or `world: {object: ...}` (state your project "
                                          "keeps)", key=True)
        turn = state.get("turn") if isinstance(state, dict) else None
        if (isinstance(turn, int) and isinstance(turns, list) and data.get("user") is None
                and turn > len(turns)):
            report.add((*place, "state", "turn"), f"turn {turn}: this scenario has "
                                                  f"{len(turns)} turn"
                                                  f"{'' if len(turns) == 1 else 's'}")
        rules = expect.get("never")
        for index, rule in enumerate(rules if isinstance(rules, list) else ()):
            for loc, tag in _rule_tags(rule):
                if tag not in tags:
                    close = difflib.get_close_matches(tag, tags, n=1)
                    hint = (f"did you mean `{close[0]}`?" if close else
                            f"tags given: {', '.join(tags)}" if tags else
                            "no tool has `tags:`; give the tools it means `tags: [" + tag + "]`")
                    report.add((*place, "never", index, *loc), f"no tool of the scenario is "
                                                               f"tagged `{tag}`; {hint}")


def _rule_tags(rule: Any) -> list[tuple[Path_, str]]:
    """The ``tag`` of each call pattern of a rule (as written), with its place in the rule."""
    found: list[tuple[Path_, str]] = []
    if not isinstance(rule, dict):
        return found
    patterns: list[tuple[Path_, Any]] = [(("call",), rule.get("call"))]
    for when in ("before", "after"):
        event = rule.get(when)
        if isinstance(event, dict):
            patterns += [((when, kind), event.get(kind)) for kind in ("call", "result")]
    for loc, pattern in patterns:
        if isinstance(pattern, dict) and isinstance(pattern.get("tag"), str):
            found.append(((*loc, "tag"), pattern["tag"]))
    return found


def _recorded(spec: Any) -> bool:
    """Whether an agent type's settings (as written) give it a recording to resume."""
    if not isinstance(spec, dict):
        return False
    team = spec.get("team")
    members = team if isinstance(team, list) else []
    return spec.get("recording") is not None or any(
        isinstance(m, dict) and m.get("recording") is not None for m in members)


def _check_resume(agents: dict[Any, Any], report: _Report) -> None:
    """``resume_from:`` names another agent type of the scenario that has a recording (that
    both are workflow agent types, and the step one after which the recorded run went on, is
    planning's question: it needs the registry and the recorded trace)."""
    with_recording = sorted(str(n) for n, spec in agents.items() if _recorded(spec))
    for name, spec in agents.items():
        if not isinstance(name, str) or not isinstance(spec, dict):
            continue
        resume = _valid(AgentSpec, "resume_from", spec.get("resume_from"))
        if not isinstance(resume, ResumeFrom):
            continue
        place = ("agents", name, "resume_from")
        source = resume.recording
        if source == name:
            report.add((*place, "recording"), f"`{name}` cannot resume its own recorded run; "
                                              "name another agent type of this scenario")
            continue
        if source not in agents or not _recorded(agents[source]):
            known = ", ".join(n for n in with_recording if n != name) or "none"
            what = ("has no `recording:`" if source in agents
                    else "is not an agent type of this scenario")
            report.add((*place, "recording"), f"unknown recording `{source}`: it {what}; "
                                              f"agent types with a recording: {known}")


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
