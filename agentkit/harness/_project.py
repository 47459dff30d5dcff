"""A project's agent types in effect: :func:`activated` declares those its ``[tool.agentkit]``
table names (:mod:`agentkit.scenario._project` reads it) in the one registry."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from agentkit.harness._agent_types import (
    AGENT_TYPES,
    UnknownTrajectoryFormatError,
    named_renderer,
)
from agentkit.scenario._project import Project, ProjectError

__all__ = ["activated"]


@contextmanager
def activated(project: Project) -> Iterator[Project]:
    """Within: the project root is importable and its agent types are declared. A
    ``trajectory`` naming no bundled format or agent type is a :class:`ProjectError` at its
    line, raised before anything is declared."""
    for entry in project.agent_types.values():
        if entry.trajectory is not None and ":" not in entry.trajectory:
            try:
                named_renderer(entry.trajectory)
            except UnknownTrajectoryFormatError as exc:
                raise ProjectError(f"{entry.trajectory_at}: {exc}") from None
    root = str(project.root)
    added = root not in sys.path
    if added:
        sys.path.insert(0, root)
    try:
        with AGENT_TYPES.scoped():
            for name, entry in project.agent_types.items():
                AGENT_TYPES.declare(name, entry.ref, entry.origin, images=entry.images,
                                    human=entry.human, trajectory=entry.trajectory)
            yield project
    finally:
        if added and root in sys.path:
            sys.path.remove(root)
