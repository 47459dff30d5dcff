"""Images of scenario turns: checked when the scenario loads, sent as image blocks when it runs.

An image must be a file in the scenario's project (the folder of the nearest pyproject.toml
above the scenario file, else the scenario's own folder) or in a folder the project lists as
``image_folders``, after resolving ``..`` and symlinks: a scenario from elsewhere cannot make
``record`` send the model, or a trace describe, any other file of the machine.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentkit.llms.types import ImageBlock
from agentkit.scenario._model import Scenario, Turn
from agentkit.scenario._project import find_project

__all__ = ["image_problem", "image_folders", "turn_images"]


def _base(scenario: Scenario) -> Path:
    return Path(scenario.path).parent if scenario.path else Path.cwd()


def image_folders(scenario_file: Path) -> tuple[Path, ...]:
    """The folders the turn images of ``scenario_file`` may be in (symlinks resolved): its
    project's root, then the project's ``image_folders``
    (:class:`~agentkit.scenario.project.ProjectError` if its pyproject.toml is malformed)."""
    project = find_project(scenario_file.parent)
    return tuple(Path(os.path.realpath(folder))
                 for folder in (project.root, *project.image_folders))


def image_problem(scenario_file: Path, name: str,
                  folders: tuple[Path, ...] | None = None) -> str | None:
    """What is wrong with the turn image ``name`` of ``scenario_file`` (None if nothing);
    ``folders`` are where it may be (default: :func:`image_folders`)."""
    if "\0" in name:  # no file system takes it; os.path would raise
        return f"image path {name!r} holds a NUL character; write the file's path"
    path = scenario_file.parent / name
    folders = image_folders(scenario_file) if folders is None else folders
    real = Path(os.path.realpath(path))
    if not any(real.is_relative_to(folder) for folder in folders):
        return (f"image `{name}` is outside the project ({real} is not in "
                f"{' or '.join(map(str, folders))}); keep images in the project, or list their "
                "folder in `image_folders` under [tool.agentkit] in pyproject.toml")
    if not path.is_file():
        state = "is a directory" if path.is_dir() else "does not exist"
        return (f"no image file `{name}` ({path} {state}; image paths are relative to the "
                "scenario file)")
    try:
        with path.open("rb") as file:
            empty = not file.read(1)
    except OSError as exc:
        return f"cannot read image file `{name}` ({path}): {exc.strerror or exc}"
    if empty:
        return f"image file `{name}` ({path}) is empty (0 bytes)"
    mimetype = ImageBlock(path=path).image_mimetype or ""
    if not mimetype.startswith("image/"):
        return (f"`{name}` is not an image file by its name (type {mimetype or 'unknown'}); "
                "use .png, .jpg, .gif or .webp")
    return None


def turn_images(scenario: Scenario, turn: Turn) -> list[ImageBlock]:
    """The turn's images as blocks (read when a backend or a trace needs their bytes)."""
    return [ImageBlock(path=_base(scenario) / name) for name in turn.images]
