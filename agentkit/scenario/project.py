"""An old import path: the project's settings are read by ``agentkit.scenario._project``, and
:func:`activated` (which declares its agent types in the registry) moved to
:mod:`agentkit.harness`; importing them from here keeps working."""

from agentkit.harness._project import activated
from agentkit.scenario._project import (
    DEFAULT_SCENARIOS,
    AgentTypeRef,
    Project,
    ProjectError,
    find_project,
    read_project,
)

__all__ = ["Project", "ProjectError", "AgentTypeRef", "find_project", "read_project",
           "activated", "DEFAULT_SCENARIOS"]
