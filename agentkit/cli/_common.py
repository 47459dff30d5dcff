"""What every command shares: the exit codes, :class:`CLIError` (a usage or input problem),
the scenario files a command is given, output folders checked before any work."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INCOMPLETE", "CLIError", "shown",
           "scenario_paths", "load_scenario", "check_agent_types", "writable_folder", "writable_file",
           "tell"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INCOMPLETE = 0, 1, 2, 3


class CLIError(Exception):
    """A usage or input problem: printed as ``agentkit: error: ...``, exit code 2."""


def shown(path: Path) -> Path:
    """``path`` relative to the current directory when it is below it (as a user types it)."""
    cwd = Path.cwd()
    return path.relative_to(cwd) if path.is_relative_to(cwd) else path


def scenario_paths(args: argparse.Namespace) -> list[Path]:
    """The scenario files of the command's PATHS, else of the project's scenario folders."""
    from agentkit.scenario._loader import ScenarioError, discover_scenarios

    project = args.project
    given = [Path(p) for p in args.paths] or [shown(f) for f in project.scenarios]
    paths: list[Path] = []
    for item in given:
        if not args.paths and not item.exists():
            where = (f"`scenarios` under [tool.agentkit] in {project.pyproject}"
                     if project.configured else "the default")
            raise CLIError(f"{item}: no such scenario folder ({where}); give scenario files or "
                           "folders, or set `scenarios` under [tool.agentkit] in pyproject.toml")
        try:
            paths.extend(discover_scenarios(item))
        except ScenarioError as exc:
            raise CLIError(str(exc)) from None
    if not paths:
        raise CLIError(f"no scenario files under {', '.join(map(str, given))}")
    return paths


def load_scenario(path: Path) -> Any:
    """The scenario file at ``path``; a :class:`CLIError` saying where it is malformed."""
    from agentkit.harness import load
    from agentkit.scenario._loader import ScenarioError

    try:
        return load(path)
    except ScenarioError as exc:
        raise CLIError(str(exc)) from None


def check_agent_types(names: list[str] | None) -> None:
    from agentkit.harness import UnknownAgentTypeError, check_agent_type

    for name in names or []:
        try:
            check_agent_type(name)
        except UnknownAgentTypeError as exc:
            raise CLIError(f"--agents: {exc}") from None


def writable_folder(path: Path, option: str) -> None:
    """Fail before any work if ``path`` cannot be the output folder it is meant to be."""
    try:
        if path.exists() and not path.is_dir():
            raise CLIError(f"{option} {path}: is a file, not a folder; give a folder (it is "
                           "created if missing)")
        chain = (path, *path.parents)
        existing = next((p for p in chain if p.exists()), Path("."))
        longest = (os.pathconf(existing, "PC_NAME_MAX")
                   if existing.is_dir() and hasattr(os, "pathconf") else None)
    except OSError as exc:  # e.g. a name longer than the file system allows
        raise CLIError(f"{option} {path}: cannot be a folder: {exc.strerror or exc}") from None
    if not existing.is_dir():
        raise CLIError(f"{option} {path}: cannot write there ({existing} is not a writable "
                       "folder)")
    # Try rather than ask: access() says yes to root everywhere, also where the file system
    # then refuses (/proc, a read-only mount), and the run would crash only at its end.
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".agentkit-check-", dir=existing))
    except OSError as exc:
        raise CLIError(f"{option} {path}: cannot write there ({existing} refuses new folders: "
                       f"{exc.strerror or exc})") from None
    missing = chain[:chain.index(existing)] if existing in chain else chain
    if longest is not None and any(len(os.fsencode(p.name)) > longest for p in missing):
        raise CLIError(f"{option} {path}: cannot be a folder: File name too long (at most "
                       f"{longest} bytes per name)")


def writable_file(path: Path, option: str) -> None:
    """Fail before any work if ``path`` exists and is not a regular file: a file is written
    by replacing it (temp file + rename), which must never replace a folder or a device
    such as /dev/null."""
    if path.exists() and not path.is_file():
        raise CLIError(f"{option} {path}: is not a regular file; give the path of a file (it "
                       "is replaced whole)")


def tell(line: str) -> None:
    """``line`` on stderr, if anything still reads it (Ctrl-C also ends a ``| tee``)."""
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)
