"""A user's project as agentkit sees it: the ``[tool.agentkit]`` table of its pyproject.toml,
read alike by the pytest plugin (at the rootdir) and the ``agentkit`` command (the nearest
pyproject.toml from the current directory up).

```toml
[tool.agentkit]
scenarios = ["scenarios", "tests/agent_scenarios"]   # default: ["scenarios"]
image_folders = ["/srv/shared-images"]               # turn images may be here too

[tool.agentkit.agent_types]
my_agent = "my_project.agents:build_my_agent"       # a factory (or an AgentType)
seeing = { ref = "my_project.agents:build_seeing", images = true }
asking = { ref = "my_project.agents:build_asking", human = true }   # takes turns' `human:`
mine = { ref = "my_project.agents:build_mine", trajectory = "my_project.agents:render_mine" }
caller = { ref = "my_project.agents:build_caller", trajectory = "function_calling" }
```

``trajectory`` is the import ref of the type's own trajectory renderer, or the name of a
bundled wire format or agent type it renders like (``function_calling``, ``tool_calls``,
``react``...: :func:`agentkit.harness.named_renderer`; such a name is checked when the agent
types are declared, by :func:`agentkit.harness.activated`).

Paths are relative to the project root (the folder of pyproject.toml). A turn's ``images``
must be files in the project or in one of its ``image_folders`` (symlinks resolved), so a
scenario cannot send the model any file of the machine. :func:`agentkit.harness.activated`
puts the root on ``sys.path`` (as pytest's ``pythonpath = ["."]`` does) so the refs import,
and declares the agent types (imported on first use); both are undone when it ends.
A malformed table is a :class:`ProjectError` naming the file, the line and the key.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentkit.core.errors import BadInputError

__all__ = ["Project", "ProjectError", "AgentTypeRef", "find_project", "read_project",
           "DEFAULT_SCENARIOS"]

DEFAULT_SCENARIOS = "scenarios"
_TABLE = "tool.agentkit"
_KEYS = ("scenarios", "agent_types", "image_folders")
_REF = re.compile(r"[\w.]+:[\w.]+")


class ProjectError(BadInputError):
    """The ``[tool.agentkit]`` table is malformed; the message says where and how to fix it."""


@dataclass(frozen=True)
class AgentTypeRef:
    """An agent type the project declares: its import ref and where it is declared;
    ``trajectory``, its renderer's import ref or the name of a bundled format to render like
    (``trajectory_at``: where it is written, for the error naming one that does not exist)."""

    ref: str
    origin: str
    images: bool = False
    trajectory: str | None = None
    human: bool = False
    trajectory_at: str = field(default="", compare=False)


@dataclass(frozen=True)
class Project:
    """The project root, its pyproject.toml (None if there is none), its scenario folders,
    the agent types it declares and the folders besides the root that may hold turn images."""

    root: Path
    pyproject: Path | None = None
    scenarios: tuple[Path, ...] = ()
    agent_types: dict[str, AgentTypeRef] = field(default_factory=dict)
    image_folders: tuple[Path, ...] = ()

    @property
    def configured(self) -> bool:
        """Whether the scenario folders come from ``[tool.agentkit]``, not the default."""
        return self.scenarios != (self.root / DEFAULT_SCENARIOS,)

    @classmethod
    def bare(cls, root: Path) -> Project:
        """A folder without ``[tool.agentkit]``: the defaults."""
        return cls(root=root, scenarios=(root / DEFAULT_SCENARIOS,))


def find_project(start: Path) -> Project:
    """The project of ``start``: the nearest pyproject.toml in it or a folder above, read;
    without one, ``start`` with the defaults."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / "pyproject.toml").is_file():
            return read_project(folder / "pyproject.toml")
    return Project.bare(start)


def read_project(pyproject: Path) -> Project:
    """The project whose pyproject.toml is ``pyproject``."""
    try:
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProjectError(f"{pyproject}: cannot read: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r" \(at line (\d+), column (\d+)\)$", str(exc))
        where = f":{at[1]}:{at[2]}" if at else ""
        problem = str(exc)[:at.start()] if at else str(exc)
        raise ProjectError(f"{pyproject}{where}: invalid TOML: {problem}") from None
    root = pyproject.parent
    table = data.get("tool", {}).get("agentkit")
    if table is None:
        return Project(root=root, pyproject=pyproject, scenarios=(root / DEFAULT_SCENARIOS,))
    lines = _Lines(pyproject, text)
    if not isinstance(table, dict):
        raise ProjectError(f"{lines.at(None)}: {_TABLE}: expected a table ([tool.agentkit])")
    for key in table:
        if key not in _KEYS:
            close = difflib.get_close_matches(key, _KEYS, n=1)
            hint = f"did you mean `{close[0]}`?" if close else f"known keys: {', '.join(_KEYS)}"
            raise ProjectError(f"{lines.at(key)}: {_TABLE}.{key}: unknown key `{key}`; {hint}")
    return Project(root=root, pyproject=pyproject,
                   scenarios=_folders(table.get("scenarios", [DEFAULT_SCENARIOS]), root, lines,
                                      "scenarios", DEFAULT_SCENARIOS),
                   agent_types=_agent_types(table.get("agent_types", {}), lines),
                   image_folders=_folders(table.get("image_folders", []), root, lines,
                                          "image_folders", "assets"))


def _folders(value: Any, root: Path, lines: _Lines, key: str, example: str
             ) -> tuple[Path, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ProjectError(f"{lines.at(key)}: {_TABLE}.{key}: expected a list of folders "
                           f"relative to the project root, e.g. [\"{example}\"], got {value!r}")
    return tuple(root / v for v in value)


def _agent_types(value: Any, lines: _Lines) -> dict[str, AgentTypeRef]:
    if not isinstance(value, dict):
        raise ProjectError(f"{lines.at('agent_types')}: {_TABLE}.agent_types: expected a table "
                           "of name = \"package.module:factory\"")
    found = {}
    for name, entry in value.items():
        where = lines.at(name, table=f"{_TABLE}.agent_types")
        images, human, trajectory = False, False, None
        if isinstance(entry, dict):
            unknown = sorted(set(entry) - {"ref", "images", "human", "trajectory"})
            if unknown or not all(isinstance(entry.get(flag, False), bool)
                                  for flag in ("images", "human")):
                raise ProjectError(f"{where}: {_TABLE}.agent_types.{name}: an inline table "
                                   "takes `ref` (the factory's import ref), `images` and "
                                   "`human` (true if its chats take the turns' images, their "
                                   "human answers) and `trajectory` (its trajectory renderer's "
                                   "import ref, or a bundled format's name)"
                                   + (f"; unknown key(s) {', '.join(unknown)}"
                                      if unknown else ""))
            images, human = entry.get("images", False), entry.get("human", False)
            trajectory = _trajectory(entry.get("trajectory"),
                                     f"{where}: {_TABLE}.agent_types.{name}.trajectory")
            entry = entry.get("ref")
        ref = _ref(entry, f"{where}: {_TABLE}.agent_types.{name}", "factory")
        assert ref is not None
        found[name] = AgentTypeRef(ref, where, images, trajectory, human,
                                   trajectory_at=f"{where}: {_TABLE}.agent_types.{name}.trajectory")
    return found


def _trajectory(value: Any, where: str) -> str | None:
    """A renderer's import ref, or the name of a bundled one (whether that name exists is the
    registry's to say, when the agent type is declared: :func:`agentkit.harness.activated`)."""
    if value is None or (isinstance(value, str) and ":" in value):
        return _ref(value, where, "render", optional=True)
    if not isinstance(value, str):
        raise ProjectError(f"{where}: expected an import ref \"package.module:render\" or the "
                           f"name of a bundled format (e.g. \"function_calling\"), got {value!r}")
    return value


def _ref(value: Any, where: str, example: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not _REF.fullmatch(value):
        raise ProjectError(f"{where}: expected an import ref \"package.module:{example}\", "
                           f"got {value!r}")
    return value


class _Lines:
    """``file:line`` of a key of ``[tool.agentkit]`` (tomllib keeps no positions): the line
    declaring it inside its table, else the table's header, else line 1."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def at(self, key: str | None, table: str = _TABLE) -> str:
        header = re.compile(r"^\s*\[\s*" + re.escape(table).replace(r"\.", r"\s*\.\s*")
                            + r"\s*\]")
        key_line = re.compile(r"^\s*[\"']?" + re.escape(key or "") + r"[\"']?\s*[=.]")
        found, inside = 0, False
        for number, line in enumerate(self.lines, 1):
            if line.lstrip().startswith("["):
                inside = bool(header.match(line))
                if inside and not found:
                    found = number
            elif inside and key is not None and key_line.match(line):
                return f"{self.path}:{number}"
        return f"{self.path}:{found or 1}"
