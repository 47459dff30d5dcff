"""Images of scenario turns: checked when the scenario loads, sent as image blocks when it runs."""

from __future__ import annotations

from pathlib import Path

from agentkit.llms.types import ImageBlock
from agentkit.scenario.model import Scenario, Turn

__all__ = ["image_problem", "turn_images"]


def _base(scenario: Scenario) -> Path:
    return Path(scenario.path).parent if scenario.path else Path.cwd()


def image_problem(scenario_file: Path, name: str) -> str | None:
    """What is wrong with the turn image ``name`` of ``scenario_file`` (None if nothing)."""
    path = scenario_file.parent / name
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
